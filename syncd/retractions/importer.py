"""Import ``retraction_watch.csv`` from a file, a directory (a git checkout) or bytes fetched elsewhere.

An import hashes the file first: when its SHA-256 is the newest stored version's, nothing is parsed
or written (``unchanged``). Otherwise the file is parsed (:mod:`syncd.retractions.csvfile`; rows
whose raw cells hash to the stored ``row_hash`` are not parsed) and stored as the new version
(:func:`syncd.retractions.storage.apply_version`; read again when another import stored a version
meanwhile, at most :data:`ATTEMPTS` times). A directory is read at
``<dir>/retraction_watch.csv``; when it is a git checkout its ``HEAD`` commit is recorded with the
version (read from ``.git`` without running git).

The guard: a version that would remove more than ``max_removed_share`` of the rows held (the
setting ``retractions.max_removed_share``, 2 % by default) is refused whole
(:class:`~syncd.retractions.csvfile.RefusedFile`, refusal ``shrink``, nothing written) unless
``accept_shrink`` is given; a cut, damaged or row-less file is refused by the parse already. A
bad download therefore never replaces the good version the verdicts rest on.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syncd.errors import InvalidInput, StoreError
from syncd.retractions.csvfile import ParsedFile, RefusedFile, parse_bytes
from syncd.retractions.feed import flush_pending
from syncd.retractions.names import CSV_NAME, MAX_REMOVED_SHARE
from syncd.retractions.storage import Dataset, apply_version, latest_dataset, stored_hashes
from syncd.store.repo import Store

__all__ = [
    "ATTEMPTS",
    "MAX_REMOVED_SHARE",
    "ImportReport",
    "check_shrink",
    "git_head",
    "import_bytes",
    "import_path",
    "resolve_file",
]

log = logging.getLogger("syncd.retractions")

ATTEMPTS = 3
"""Reads of the stored hashes per import when other imports keep storing versions meanwhile."""


@dataclass(frozen=True)
class ImportReport:
    """Outcome of one import: the version now newest, whether the file was new, what it recorded.

    ``unchanged`` True: the file's SHA-256 equals the newest version's (nothing parsed, nothing
    written; ``dataset`` is that version). ``changes``: change-feed rows written; ``pending``:
    changes of watched DOIs not stored yet, kept for later (:mod:`syncd.retractions.feed`);
    ``flushed``: earlier pending changes written now; ``replaced_bytes``: bytes read as
    Windows-1252 (not UTF-8); ``seconds``: wall time of the import.
    """

    dataset: Dataset
    unchanged: bool
    changes: int = 0
    replaced_bytes: int = 0
    seconds: float = 0.0
    pending: int = 0
    flushed: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON form: the fields above in camelCase (``replacedBytes``), ``seconds`` rounded to ms."""
        return {
            "dataset": self.dataset.as_dict(),
            "unchanged": self.unchanged,
            "changes": self.changes,
            "pending": self.pending,
            "flushed": self.flushed,
            "replacedBytes": self.replaced_bytes,
            "seconds": round(self.seconds, 3),
        }


def git_head(directory: Path) -> str | None:
    """The commit ``HEAD`` names in the git checkout ``directory`` (loose or packed ref), else None."""
    git = directory / ".git"
    try:
        head = (git / "HEAD").read_text(encoding="ascii").strip()
        if not head.startswith("ref: "):
            return head if len(head) >= 40 else None
        ref = head[5:].strip()
        loose = git / ref
        if loose.is_file():
            return loose.read_text(encoding="ascii").strip() or None
        for line in (git / "packed-refs").read_text(encoding="ascii").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref:
                return parts[0]
    except (OSError, UnicodeDecodeError):
        return None
    return None


def resolve_file(path: str | Path) -> tuple[Path, str | None]:
    """The CSV file ``path`` names (itself, or ``<dir>/retraction_watch.csv``) and its git commit.

    Raises:
        InvalidInput: reason ``invalid_parameter``: no such file.
    """
    p = Path(path).expanduser()
    commit = None
    if p.is_dir():
        commit = git_head(p)
        p = p / CSV_NAME
    if not p.is_file():
        raise InvalidInput(f"no Retraction Watch file at {p}", reason="invalid_parameter")
    return p, commit


def check_shrink(parsed: ParsedFile, known: dict[str, str], max_removed_share: float) -> None:
    """Refuse a version removing more than ``max_removed_share`` (0..1) of the ``known`` rows held.

    Raises:
        RefusedFile: refusal ``shrink``; the message gives the rows held, kept and removed.
    """
    if not known:
        return
    present = set(parsed.unchanged) | set(parsed.hashes)
    removed = sum(1 for record_id in known if record_id not in present)
    if removed > max_removed_share * len(known):
        raise RefusedFile(
            f"the new file would remove {removed} of the {len(known)} rows held "
            f"({removed / len(known):.1%}, more than retractions.max_removed_share "
            f"{max_removed_share:.1%}; the file holds {parsed.total} rows): refused as a cut or "
            "wrong file, the version held is kept; import it with --accept-shrink if it is right",
            "shrink",
            removed=removed,
            held=len(known),
        )


def import_bytes(
    store: Store,
    data: bytes,
    source: str,
    commit: str | None = None,
    now: float | None = None,
    *,
    max_removed_share: float = MAX_REMOVED_SHARE,
    accept_shrink: bool = False,
) -> ImportReport:
    """Import the file's bytes ``data`` read from ``source`` (a path or URL) as the newest version.

    ``max_removed_share``: share (0..1) of the rows held the version may remove unless
    ``accept_shrink`` (see the module docstring).

    Raises:
        InvalidInput: not the Retraction Watch export (nothing written).
        RefusedFile: the file is cut, damaged, holds no rows, or would remove too many rows
            (nothing written).
        StoreError: the database failed, or concurrent imports won :data:`ATTEMPTS` times (nothing
            written).
    """
    started = time.monotonic()
    now = time.time() if now is None else now
    digest = hashlib.sha256(data).hexdigest()
    flushed = flush_pending(store, now)
    latest = latest_dataset(store)
    if latest is not None and latest.sha256 == digest:
        log.info("event=retractions_unchanged sha256=%s source=%s", digest[:12], source)
        return ImportReport(latest, True, seconds=time.monotonic() - started, flushed=flushed)
    for _ in range(ATTEMPTS):
        based_on, known = stored_hashes(store)
        parsed = parse_bytes(data, known)
        if not accept_shrink:
            check_shrink(parsed, known, max_removed_share)
        applied = apply_version(
            store,
            parsed,
            based_on=based_on,
            known=known,
            sha256=digest,
            source=source,
            commit=commit,
            now=now,
        )
        if applied is not None:
            break
    else:
        raise StoreError(f"other Retraction Watch imports kept storing versions; {source} not stored")
    dataset, changes, pending = applied
    seconds = time.monotonic() - started
    log.info(
        "event=retractions_imported sha256=%s rows=%d added=%d changed=%d removed=%d changes=%d seconds=%.1f",
        digest[:12],
        dataset.rows,
        dataset.added,
        dataset.changed,
        dataset.removed,
        changes,
        seconds,
    )
    return ImportReport(dataset, False, changes, parsed.replaced_bytes, seconds, pending, flushed)


def import_path(
    store: Store,
    path: str | Path,
    now: float | None = None,
    *,
    max_removed_share: float = MAX_REMOVED_SHARE,
    accept_shrink: bool = False,
) -> ImportReport:
    """Import the file at ``path`` (a file, or a directory holding ``retraction_watch.csv``).

    ``max_removed_share`` and ``accept_shrink``: the guard of :func:`import_bytes`.

    Raises:
        InvalidInput: no such file, or not the export.
        RefusedFile: the file is refused by the guard (nothing written).
        StoreError: the database failed.
    """
    file, commit = resolve_file(path)
    try:
        data = file.read_bytes()
    except OSError as exc:
        raise InvalidInput(f"cannot read {file}: {exc}", reason="invalid_parameter") from exc
    return import_bytes(
        store,
        data,
        str(file.resolve()),
        commit,
        now,
        max_removed_share=max_removed_share,
        accept_shrink=accept_shrink,
    )
