"""Pure functions: identifier parsing, text normalization, contract shapes from upstream bodies."""
