"""Upstream HTTP clients (Crossref, Zenodo), all budgeted through one GET path."""
