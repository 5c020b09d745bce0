"""Where the recorded upstream corpus lives: ``tests/corpus/`` in the repository.

The corpus is the recorded Crossref, Zenodo and doi.org answers the tests, the fake upstream
(:mod:`tests.fakeupstream`) and the benchmarks replay; ``tests/corpus/SOURCES.md`` says where each file
was recorded and ``tests/corpus/index.json`` lists them. Every reader takes the path from here.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["CORPUS"]

CORPUS: Path = Path(__file__).resolve().parent / "corpus"
"""The recorded corpus directory (absolute): ``crossref/``, ``zenodo/``, ``index.json``, ``SOURCES.md``."""
