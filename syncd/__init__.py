"""syncd: an offline-capable cache of Crossref works and Zenodo records behind local-first MCP tools."""

__version__ = "0.1.0"
