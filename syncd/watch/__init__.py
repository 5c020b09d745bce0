"""Watch lists and the passes over them: the lists, the walker machinery, cursors, identifiers."""
