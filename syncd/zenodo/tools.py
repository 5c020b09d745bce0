"""Zenodo MCP tools, local-first: the six tools of the Zenodo anchor server.

``zenodo_get_record``, ``zenodo_search_records``, ``zenodo_list_versions``, ``zenodo_list_files``,
``zenodo_read_file``, ``zenodo_lookup_vocabulary``. Contracts: ``../shared/seeds/zenodo_get_record.txt``
and ``../shared/spec/anchors.md`` §1b (names, inputs, output fields, caps and ``reason`` codes), plus
the ``cache`` provenance block. ``zenodo_get_record`` and ``zenodo_list_versions`` answer misses
(unknown id, deleted record with its tombstone, restricted, DOI not on Zenodo) with
``found: false``; the file tools raise ``record_not_found`` / ``record_deleted``.

Offline behaviour: every page is a stored entry served local-first; a search Zenodo cannot answer
is answered from the full-text index over stored records (``local: true`` and a notice); file
previews read once are kept in the ``blobs`` table and serve offline; citations are rendered
locally from the stored record.

This module declares the six tools once (result models and :data:`TOOLS`); the bodies live by
concern: :mod:`~syncd.zenodo.tools_records` (get_record, list_versions),
:mod:`~syncd.zenodo.tools_files` (list_files, read_file), :mod:`~syncd.zenodo.tools_search`
(search_records, lookup_vocabulary), with the shared answer text in
:mod:`~syncd.zenodo.tools_render`. Each body parses its arguments, calls one answer of
:mod:`syncd.zenodo.queries`, :mod:`~syncd.zenodo.queries_files` or :mod:`~syncd.zenodo.queries_search`
(which fetch through :mod:`syncd.zenodo.lookups` and :mod:`syncd.zenodo.lookups_files` and assemble
the contracts with the pure views of :mod:`syncd.zenodo.views_files` and
:mod:`syncd.zenodo.views_pages`) and renders it. Each tool's input model is in
:mod:`syncd.zenodo.args`, its size-budget cuts on its spec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.types import ToolAnnotations

from syncd.contracts.common import Normalized, WithCache
from syncd.tools.fit import Cut, Fit, page_items
from syncd.tools.params import ToolSpec
from syncd.zenodo.args import (
    GetRecordArgs,
    ListFilesArgs,
    ListVersionsArgs,
    LookupVocabularyArgs,
    ReadFileArgs,
    SearchRecordsArgs,
)
from syncd.zenodo.contracts import GetRecordView
from syncd.zenodo.contracts_lists import (
    ListFilesView,
    ListVersionsView,
    LookupVocabularyView,
    ReadFileView,
    SearchRecordsView,
)
from syncd.zenodo.tools_files import list_files, read_file
from syncd.zenodo.tools_records import get_record, list_versions
from syncd.zenodo.tools_render import render_page, render_record
from syncd.zenodo.tools_search import lookup_vocabulary, search_records

__all__ = [
    "TOOLS",
    "GetRecordResult",
    "ListFilesResult",
    "ListVersionsResult",
    "LookupVocabularyResult",
    "ReadFileResult",
    "SearchRecordsResult",
    "get_record",
    "list_files",
    "list_versions",
    "lookup_vocabulary",
    "read_file",
    "search_records",
]


class GetRecordResult(GetRecordView, Normalized, WithCache):
    """``zenodo_get_record`` output: the contract's fields plus ``cache`` provenance."""


class SearchRecordsResult(SearchRecordsView, WithCache):
    """``zenodo_search_records`` output plus ``cache`` provenance."""


class ListVersionsResult(ListVersionsView, WithCache):
    """``zenodo_list_versions`` output plus ``cache`` provenance."""


class ListFilesResult(ListFilesView, WithCache):
    """``zenodo_list_files`` output plus ``cache`` provenance."""


class ReadFileResult(ReadFileView, WithCache):
    """``zenodo_read_file`` output plus ``cache`` provenance (of the bytes shown)."""


class LookupVocabularyResult(LookupVocabularyView, WithCache):
    """``zenodo_lookup_vocabulary`` output plus ``cache`` provenance."""


# -------------------------------------------------------------------------------- size-budget cuts


def _files(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    start = int(args.get("offset") or 0)
    data.update(next_offset=start + kept, has_more=True, truncated=True, shown=kept)
    return f"Showing {kept} of {data.get('matched', total)}; call again with offset {start + kept}"


def _record_files(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    files = (data.get("record") or {}).get("files") or {}
    files["shown"] = kept
    data.update(truncated=True, shown=kept)
    return f"Showing {kept} of {files.get('count', total)} files; page the rest with zenodo_list_files"


def _record(data: dict[str, Any], _heading: str) -> str:
    return render_record(data)


def _read_file_max_bytes(budget: int) -> int:
    """The most ``max_bytes`` under ``budget``: at most a quarter of it (256 at least).

    ``zenodo_read_file`` shows its excerpt in the text block and in ``text`` (JSON escaping can
    double it).
    """
    return max(256, budget // 4)


# ------------------------------------------------------------------------------- the tools, declared once

_ANNOTATIONS = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "zenodo_get_record",
        "Get a Zenodo record",
        GetRecordArgs,
        GetRecordResult,
        get_record,
        _ANNOTATIONS,
        fit=Fit((Cut("record.files.entries", _record_files),), _record),
    ),
    ToolSpec(
        "zenodo_search_records",
        "Search Zenodo records",
        SearchRecordsArgs,
        SearchRecordsResult,
        search_records,
        _ANNOTATIONS,
        fit=Fit((Cut("hits", page_items("hits")),), render_page),
        pass_args=True,
    ),
    ToolSpec(
        "zenodo_list_versions",
        "List a Zenodo record's versions",
        ListVersionsArgs,
        ListVersionsResult,
        list_versions,
        _ANNOTATIONS,
        fit=Fit((Cut("versions", page_items("versions")),), render_page),
    ),
    ToolSpec(
        "zenodo_list_files",
        "List a Zenodo record's files",
        ListFilesArgs,
        ListFilesResult,
        list_files,
        _ANNOTATIONS,
        fit=Fit((Cut("entries", _files), Cut("members", _files)), render_page),
    ),
    ToolSpec(
        "zenodo_read_file",
        "Read a text preview of a Zenodo file",
        ReadFileArgs,
        ReadFileResult,
        read_file,
        _ANNOTATIONS,
        fit=Fit((), render_page),
        clamps={"max_bytes": _read_file_max_bytes},
    ),
    ToolSpec(
        "zenodo_lookup_vocabulary",
        "Look up Zenodo filter ids",
        LookupVocabularyArgs,
        LookupVocabularyResult,
        lookup_vocabulary,
        _ANNOTATIONS,
        fit=Fit((Cut("entries", page_items("entries")),), render_page),
    ),
)
"""The six Zenodo tools (input models in :mod:`syncd.zenodo.args`)."""
