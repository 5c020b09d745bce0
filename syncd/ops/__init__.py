"""Operator visibility of the daemon: ``/healthz``, ``/metrics`` (Prometheus) and ``/status`` (HTML).

:mod:`~syncd.ops.activity` records what the daemon's own jobs did (sweeps, walks, alerts, answers by
source); :mod:`~syncd.ops.facts` reads what the store and the shared budget hold; :mod:`~syncd.ops.health`,
:mod:`~syncd.ops.metrics` and :mod:`~syncd.ops.status_page` turn both into an answer; :mod:`~syncd.ops.routes`
serves them beside ``/mcp`` under the same bearer-token and Host rules.
"""
