"""Watch lists: what the daemon keeps mirrored, and how each watch is described.

Kinds and their ``spec`` (stored as canonical JSON in ``watches``):

* ``doi``: ``{"doi": "<lowercased DOI>"}``: one work (Crossref) or record (Zenodo DOI).
* every kind of :data:`syncd.registry.WATCH_TYPES` (each slice's query and community watches, their
  specs built and described in the slice's ``walk_specs.py``).

Watches come from ``syncd watch add`` and from the ``[watch]`` table of the config file
(:func:`apply_config`, run by the daemon at start and by ``syncd watch sync``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from syncd.errors import InvalidInput
from syncd.identifiers import check_doi
from syncd.normalize.doi import parse_doi
from syncd.passes.sync import DOI_WATCH
from syncd.registry import WATCH_TYPES
from syncd.store.repo import Store
from syncd.store.watches import StoredWatch, add_watch

__all__ = [
    "KINDS",
    "BadLine",
    "add",
    "apply_config",
    "check_doi_lines",
    "describe",
    "doi_specs",
    "read_doi_file",
    "read_doi_lines",
]

KINDS = (DOI_WATCH, *WATCH_TYPES)
"""Every watch kind: ``doi`` and those of :data:`syncd.registry.WATCH_TYPES`."""


def doi_specs(values: Iterable[str]) -> list[dict[str, Any]]:
    """Specs of DOI watches (each DOI validated and lowercased); raises InvalidInput on a bad DOI."""
    return [{"doi": parse_doi(v).key} for v in values if v.strip()]


@dataclass(frozen=True)
class BadLine:
    """A DOI that was refused: where it came from (``dois.txt:3``, ``argument 2``), its text, why."""

    where: str
    text: str
    message: str


def read_doi_lines(path: str | Path) -> list[tuple[int, str]]:
    """``(line number, DOI text)`` of a text file: one DOI per line; blank lines and ``#`` comments skipped.

    Raises:
        InvalidInput: the file cannot be read or is not UTF-8 text (``invalid_parameter``).
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read DOI file {path}: {exc}", reason="invalid_parameter") from exc
    return [(n, ln.split("#", 1)[0].strip()) for n, ln in enumerate(lines, 1) if ln.split("#", 1)[0].strip()]


def read_doi_file(path: str | Path) -> list[str]:
    """DOIs from a text file: one per line; blank lines and ``#`` comments skipped."""
    return [text for _, text in read_doi_lines(path)]


def check_doi_lines(lines: Iterable[tuple[str, str]]) -> tuple[list[dict[str, Any]], list[BadLine]]:
    """The DOI watch specs of the good ``(where, text)`` lines and every bad one (never raises for one)."""
    specs: list[dict[str, Any]] = []
    bad: list[BadLine] = []
    for where, text in lines:
        try:
            specs.append({"doi": check_doi(text)})
        except InvalidInput as exc:
            bad.append(BadLine(where, text, exc.message))
    return specs, bad


def add(store: Store, kind: str, spec: dict[str, Any], label: str | None = None) -> tuple[StoredWatch, bool]:
    """Add one watch (idempotent); returns ``(watch, created)``."""
    if kind not in KINDS:
        raise InvalidInput(f"unknown watch kind {kind!r}", reason="invalid_parameter")
    return add_watch(store, kind, spec, label)


def describe(watch: StoredWatch) -> str:
    """One-line human description of a watch (a DOI watch's DOI, else its watch type's description)."""
    if watch.kind == DOI_WATCH:
        return str(watch.spec["doi"])
    watch_type = WATCH_TYPES.get(watch.kind)
    if watch_type is None:  # a kind this version does not know (a newer syncd added it): its spec
        return " ".join(f"{k}={v}" for k, v in watch.spec.items() if v)
    return watch_type.describe(watch.spec)


def apply_config(store: Store, config: Any) -> list[StoredWatch]:
    """Add the watches listed in the settings' ``watch`` table (label ``config``); returns them all.

    Config watches are only ever added: removing one from the file leaves the row (remove it with
    ``syncd watch rm``), so a typo in the file never drops a mirrored set.
    """
    out: list[StoredWatch] = []
    if config is None:
        return out
    dois = list(config.dois)
    for path in config.doi_files:
        dois.extend(read_doi_file(path))
    for spec in doi_specs(dois):
        out.append(add(store, DOI_WATCH, spec, "config")[0])
    for watch_type in WATCH_TYPES.values():
        for spec in watch_type.from_config(config):
            out.append(add(store, watch_type.kind, spec, "config")[0])
    return out
