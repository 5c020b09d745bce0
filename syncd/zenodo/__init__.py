"""The Zenodo slice: its stored kinds (names, store rules, hooks)."""
