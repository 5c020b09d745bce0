"""Lookups through the local-first road, one module per upstream (and its tool-level queries).

Each lookup takes what it needs passed in (the :class:`~syncd.services.Services` bundle, or a client
and the store), asks the runner for the policy's plan, fetches when the plan says so, and stores.
"""
