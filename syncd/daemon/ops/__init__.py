"""Operator visibility of the daemon: ``/healthz``, ``/metrics`` (Prometheus) and ``/status`` (HTML).

:mod:`~syncd.daemon.ops.activity` records what the daemon's own jobs did (sweeps, walks, alerts,
answers by source); :mod:`~syncd.daemon.ops.facts` reads what the store and the shared budget hold;
:mod:`~syncd.daemon.ops.health`, :mod:`~syncd.daemon.ops.metrics` and
:mod:`~syncd.daemon.ops.status_page` turn both into an answer; :mod:`~syncd.daemon.ops.routes` serves
them beside ``/mcp`` under the same bearer-token and Host rules.
"""
