"""syncd benchmarks: ``python -m benchmarks`` (or ``python benchmarks/run.py``) writes BENCHMARKS.md.

Benchmarks are not tests: nothing here runs under pytest, and nothing in ``tests/`` times anything.
"""
