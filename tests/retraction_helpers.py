"""Shared by the Retraction Watch tests: the sample file, a store holding corpus works."""

from __future__ import annotations

import json
from pathlib import Path

from syncd.crossref.lookups import work_content
from syncd.store.repo import Store
from tests.corpus_path import CORPUS

__all__ = ["SAMPLE", "sample_bytes", "store_work", "work_file"]

SAMPLE: Path = CORPUS / "retraction-watch" / "retraction_watch.sample.csv"
"""The Retraction Watch sample in the export's format (tests/corpus/SOURCES.md)."""


def sample_bytes() -> bytes:
    """The sample file's bytes."""
    return SAMPLE.read_bytes()


def work_file(doi: str) -> Path:
    """The recorded ``/works/{doi}`` body of ``doi`` (corpus file naming: ``/`` and ``()`` to ``_``)."""
    name = doi.lower().replace("/", "_").replace("(", "_").replace(")", "_")
    return CORPUS / "crossref" / "work" / f"{name}.json"


def store_work(store: Store, doi: str, now: float | None = None) -> None:
    """Store the recorded Crossref work ``doi`` as a fetch would."""
    raw = work_file(doi).read_text(encoding="utf-8")
    message = json.loads(raw)["message"]
    store.put_content(work_content(message["DOI"].lower(), message, raw), now=now)
