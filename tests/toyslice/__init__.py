"""A toy upstream slice defined in the test tree: one kind, one searchable field, one setting, one pool,
one MCP tool. It plugs into syncd by one line (``syncd.slices.SLICE_PACKAGES``), with no file under
``syncd/`` changed (``tests/core/test_toy_slice.py``).

Its upstream serves notes at ``GET {toy.base_url}/notes/{id}``: ``{"id", "title", "text"}``.
"""
