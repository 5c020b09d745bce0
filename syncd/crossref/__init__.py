"""The Crossref slice: its stored kinds (names, store rules, hooks)."""
