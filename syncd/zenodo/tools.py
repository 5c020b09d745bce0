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
:mod:`~syncd.zenodo.tools_render`. The bodies fetch through :mod:`syncd.zenodo.lookups` and
:mod:`syncd.zenodo.lookups_files` and build their answers with the pure views of
:mod:`syncd.zenodo.views_files` and :mod:`syncd.zenodo.views_pages`.
"""

from __future__ import annotations

from mcp.types import ToolAnnotations

from syncd.contracts.common import WithCache
from syncd.tools.params import (
    GetRecordArgs,
    ListFilesArgs,
    ListVersionsArgs,
    LookupVocabularyArgs,
    ReadFileArgs,
    SearchRecordsArgs,
    ToolSpec,
)
from syncd.zenodo.contracts import (
    GetRecordView,
    ListFilesView,
    ListVersionsView,
    LookupVocabularyView,
    ReadFileView,
    SearchRecordsView,
)
from syncd.zenodo.tools_files import list_files, read_file
from syncd.zenodo.tools_records import get_record, list_versions
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


class GetRecordResult(GetRecordView, WithCache):
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


# ------------------------------------------------------------------------------- the tools, declared once

_ANNOTATIONS = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "zenodo_get_record", "Get a Zenodo record", GetRecordArgs, GetRecordResult, get_record, _ANNOTATIONS
    ),
    ToolSpec(
        "zenodo_search_records",
        "Search Zenodo records",
        SearchRecordsArgs,
        SearchRecordsResult,
        search_records,
        _ANNOTATIONS,
    ),
    ToolSpec(
        "zenodo_list_versions",
        "List a Zenodo record's versions",
        ListVersionsArgs,
        ListVersionsResult,
        list_versions,
        _ANNOTATIONS,
    ),
    ToolSpec(
        "zenodo_list_files",
        "List a Zenodo record's files",
        ListFilesArgs,
        ListFilesResult,
        list_files,
        _ANNOTATIONS,
    ),
    ToolSpec(
        "zenodo_read_file",
        "Read a text preview of a Zenodo file",
        ReadFileArgs,
        ReadFileResult,
        read_file,
        _ANNOTATIONS,
    ),
    ToolSpec(
        "zenodo_lookup_vocabulary",
        "Look up Zenodo filter ids",
        LookupVocabularyArgs,
        LookupVocabularyResult,
        lookup_vocabulary,
        _ANNOTATIONS,
    ),
)
"""The six Zenodo tools (input models in :mod:`syncd.tools.params`)."""
