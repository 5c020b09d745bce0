"""Build the kept sample databases: one small SQLite store per Alembic revision, holding real entries.

Run from the repository root (it overwrites ``tests/sample_data/store-<revision>.db``)::

    python -m tests.sample_data.make_samples [REVISION...]

Nothing is checked out: for each revision of ``migrations/versions/`` a fresh SQLite file is upgraded
to exactly that revision with Alembic (``alembic.command.upgrade(cfg, "<revision>")``), then rows are
inserted with plain SQL written for that revision's schema (never through the ORM models, which
follow head):

* every revision: two Crossref works from the recorded corpus (``tests/corpus/crossref/work/``:
  10.1101/598821 and 10.1002/jor.1100150407), the Zenodo record 5244404 as recorded on 2024-01-14
  (``tests/corpus/zenodo/record-history/``, revision 4, ETag ``W/"4"``) with its ``concepts`` row, and a
  ``validations`` row for each (validators, ``checks``/``changes`` counters, a recorded error);
* from 0004 (``previous_bodies``): the record's legacy-platform body of 2023-09-10 kept as ``previous``;
* from 0007 (``changes``): the change-feed row of that replacement, summarized by the record kind's
  own summary (``syncd.zenodo`` rules);
* from 0014 (``entries.summary``; from 0015 ``entry_lines``): each work's list line, as its kind writes it;
* bodies are the upstream text as received; from 0008 on they are stored as that revision writes
  them (a zstd frame without dictionary, :mod:`syncd.store.codec`).

Titles, search text and content hashes are computed by the kinds' own content builders, as a lookup
would have stored them. The upgrade test (``tests/store/test_migrations_samples.py``) upgrades a copy
of each file to head and checks what survived.
"""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zstandard
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine

from syncd.crossref.lookups import work_content
from syncd.store.codec import LEVEL
from syncd.store.rows import EntryContent
from syncd.store.rules import Side
from syncd.zenodo.lookups_fetch import record_content

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CORPUS = ROOT / "tests" / "corpus"
MIGRATIONS = ROOT / "migrations"

FETCHED_AT = 1_780_000_000.0
"""When the sample's entries were stored (epoch seconds, 2026-05-28)."""
REPLACED_AT = FETCHED_AT + 86_400.0
"""When the Zenodo record's body was replaced by its 2024-01-14 answer (epoch seconds)."""
WORKS = ("10.1101/598821", "10.1002/jor.1100150407")
RECORD_NOW = "records-5244404__2024-01-14"
RECORD_BEFORE = "records-5244404__2023-09-10_legacy"


@dataclass(frozen=True)
class Row:
    """One sample entry: what was stored, its validators and counters, and its raw body text."""

    content: EntryContent
    validated_at: float
    checks: int
    changes: int
    last_error: str | None = None


def revisions() -> list[str]:
    """Every revision id of ``migrations/versions/``, oldest first (from each file's ``revision =``)."""
    found = []
    for path in sorted((MIGRATIONS / "versions").glob("[0-9]*.py")):
        match = re.search(r'^revision\s*=\s*"([^"]+)"', path.read_text(encoding="utf-8"), re.MULTILINE)
        if match:
            found.append(match.group(1))
    return found


def _text(rel: str) -> str:
    return (CORPUS / rel).read_text(encoding="utf-8")


def _etag(rel: str) -> str | None:
    headers = json.loads(_text(rel.replace(".json", ".headers.json")))["headers"]
    return headers.get("etag")


def sample_rows() -> list[Row]:
    """The sample's entries, built by the kinds' own content builders from the recorded bodies."""
    rows = []
    for i, doi in enumerate(WORKS):
        raw = _text(f"crossref/work/{doi.replace('/', '_')}.json")
        content = work_content(doi.lower(), json.loads(raw)["message"], raw)
        rows.append(Row(content, FETCHED_AT + 3600 * (i + 1), checks=2 + i, changes=1))
    rel = f"zenodo/record-history/{RECORD_NOW}.json"
    raw = _text(rel)
    record = record_content(json.loads(raw), raw, etag=_etag(rel))
    rows.append(Row(record, REPLACED_AT, checks=5, changes=2, last_error="rate_limited"))
    return rows


def previous_body() -> tuple[str, str | None]:
    """The record's body before the replacement (the legacy platform's, 2023-09-10) and its content hash."""
    raw = _text(f"zenodo/record-history/{RECORD_BEFORE}.json")
    return raw, record_content(json.loads(raw), raw).content_hash


def _stored(text: str | None, revision: str) -> str | bytes | None:
    """A body as ``revision`` stores it: the text before 0008, a zstd frame (no dictionary) after."""
    if text is None or revision < "0008":
        return text
    cctx = zstandard.ZstdCompressor(
        level=LEVEL, write_checksum=True, write_content_size=True, write_dict_id=True
    )
    return cctx.compress(text.encode("utf-8"))


def _insert(db: sqlite3.Connection, revision: str) -> None:
    """The sample rows, in SQL for ``revision``'s schema."""
    ids = {}
    for entry_id, row in enumerate(sample_rows(), start=1):
        c = row.content
        ids[c.kind] = entry_id
        db.execute(
            "INSERT INTO entries (id, kind, key, status, body, content_hash, upstream_version, doi, "
            "concept_key, title, search_text, fetched_at, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                entry_id, c.kind, c.key, c.status, _stored(c.body, revision), c.content_hash,
                c.upstream_version, c.doi, c.concept_key, c.title, c.search_text, row.validated_at,
                FETCHED_AT,
            ),
        )  # fmt: skip
        db.execute(
            "INSERT INTO validations (entry_id, validated_at, etag, last_modified, checks, changes, "
            "last_error, last_error_at, volatile) VALUES (?,?,?,?,?,?,?,?,?)",
            (
                entry_id, row.validated_at, c.etag, c.last_modified, row.checks, row.changes, row.last_error,
                row.validated_at + 60 if row.last_error else None, c.volatile,
            ),
        )  # fmt: skip
        if revision >= "0015" and c.summary is not None:
            db.execute("INSERT INTO entry_lines (entry_id, line) VALUES (?,?)", (entry_id, c.summary))
        elif revision >= "0014" and c.summary is not None:
            db.execute("UPDATE entries SET summary = ? WHERE id = ?", (c.summary, entry_id))
        if c.concept_key:
            db.execute(
                "INSERT INTO concepts (concept_recid, latest_recid, validated_at) VALUES (?,?,?)",
                (c.concept_key, c.key, row.validated_at),
            )
    record_id = ids["zenodo_record"]
    old_body, old_hash = previous_body()
    if revision >= "0004":
        db.execute(
            "INSERT INTO previous_bodies (entry_id, role, status, body, content_hash, fetched_at, kept_at, "
            "reason) VALUES (?,?,?,?,?,?,?,?)",
            (
                record_id,
                "previous",
                "ok",
                _stored(old_body, revision),
                old_hash,
                FETCHED_AT,
                REPLACED_AT,
                None,
            ),
        )
    if revision >= "0007":
        _insert_change(db, record_id, old_body)


def _insert_change(db: sqlite3.Connection, entry_id: int, old_body: str) -> None:
    """The change-feed row of the record's replacement, as :mod:`syncd.store.changelog` writes it."""
    record = next(r.content for r in sample_rows() if r.content.kind == "zenodo_record")
    summary: Any = record.rules.summarize(Side("ok", old_body), Side("ok", record.body))  # type: ignore[misc]
    db.execute(
        "INSERT INTO changes (entry_id, kind, key, doi, series, detected_at, types, summary) "
        "VALUES (?,?,?,?,?,?,?,?)",
        (
            entry_id, record.kind, record.key, summary.doi.lower() if summary.doi else None, summary.series,
            REPLACED_AT, ",".join(summary.types),
            json.dumps(summary.as_dict(), ensure_ascii=False, separators=(",", ":")),
        ),
    )  # fmt: skip


def make(revision: str, path: Path) -> None:
    """Write the sample store of ``revision`` to ``path`` (replaced when it exists)."""
    path.unlink(missing_ok=True)
    with sqlite3.connect(path) as empty:  # small pages keep the file small (one page per table and index)
        empty.execute("PRAGMA page_size=1024")
        empty.execute("VACUUM")
    engine = create_engine(f"sqlite:///{path}")
    cfg = Config()
    cfg.set_main_option("script_location", str(MIGRATIONS))
    cfg.attributes["configure_logger"] = False
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, revision)
    engine.dispose()
    db = sqlite3.connect(path)
    try:
        with db:
            _insert(db, revision)
        db.execute("VACUUM")
    finally:
        db.close()


def main(only: list[str] | None = None) -> None:
    """Write ``store-<revision>.db`` for every revision (or those of ``only``) into this directory."""
    for revision in only or revisions():
        target = HERE / f"store-{revision}.db"
        make(revision, target)
        print(f"{target.relative_to(ROOT)}: {target.stat().st_size:,} bytes")


if __name__ == "__main__":
    main(sys.argv[1:] or None)
