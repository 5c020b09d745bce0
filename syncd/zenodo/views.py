"""Zenodo record bodies → the ``zenodo_get_record`` view, store keys, tombstones, change hashing.

The tolerant JSON readers live in :mod:`syncd.zenodo.views_fields`, the per-shape readers that
build the uncapped :class:`RecordParts` in :mod:`syncd.zenodo.views_parts`; this module caps
them into the view and keeps the public names.

Zenodo answers a record GET in two JSON shapes (DESIGN.md, "Upstream paths"); every function here
reads both and tells them apart by their keys (:func:`detect_shape`):

* **RDM** (``Accept: application/vnd.inveniordm.v1+json``, the shape the contract is built on):
  ``id`` (str), ``revision_id``, ``parent{id, pids.doi, communities.entries[]}``,
  ``pids{doi{identifier, provider}, oai}``, ``versions{index, is_latest}``,
  ``access{record, files, status, embargo{active, until, reason}}``,
  ``metadata.creators[].person_or_org``, ``metadata.subjects``, ``metadata.rights``,
  ``metadata.funding``, ``custom_fields``, ``files{enabled, order, count, total_bytes, entries{key:
  {...}}}``, ``stats{this_version, all_versions}{unique_views, unique_downloads, ...}``.
* **legacy** (``Accept: application/json``): ``id`` (int), ``conceptrecid``, ``doi``, ``conceptdoi``,
  ``revision``, ``metadata{access_right, embargo_date, creators[{name, affiliation, orcid}],
  keywords, license{id}, grants, communities[{id}], notes, method, resource_type{type, subtype,
  title}, relations.version[{index (0-based), is_last, parent, last_child}]}``, ``files[{key, size,
  checksum, links}]`` and flat ``stats``. It comes in two generations: the pre-October-2023 platform
  (``*_legacy-2022``/``-2023`` files) and the InvenioRDM platform's legacy-compatible serializer
  (adds ``recid``, ``status``, ``state``, ``submitted``, ``modified``, ``doi_url``).

Surprise from the corpus, handled in ``zenodo_parts._legacy_stats``: the two legacy generations swap the
meaning of the flat stats. Before the migration ``version_*`` counted **all versions** and the bare
names this version (record 5244404 in Sep 2023: ``unique_downloads`` 1,448, ``version_unique_downloads``
75,927); after it the bare names count all versions and ``version_*`` this version (Jan 2024: 78,096
and 1,556). Both figures keep growing consistently under that reading.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from syncd.errors import MalformedResponse
from syncd.normalize.html_text import html_to_text
from syncd.zenodo.contracts import (
    AccessInfo,
    FilesInfo,
    Tombstone,
    VersionsInfo,
    ZenodoRecord,
)
from syncd.zenodo.views_fields import (
    _b,
    _d,
    _i,
    _lower_doi,
    _recid,
    _s,
    detect_shape,
    download_url,
    i18n,
    identifier_of,
    record_url,
)
from syncd.zenodo.views_parts import (
    ADDITIONAL_DESCRIPTION_TEXT_CAP,
    RecordParts,
    _legacy_parts,
    _legacy_version,
    _Parts,
    _rdm_parts,
    cap_additional,
)

__all__ = [
    "ADDITIONAL_DESCRIPTIONS_CAP",
    "ADDITIONAL_DESCRIPTION_TEXT_CAP",
    "COMMUNITIES_CAP",
    "DESCRIPTION_CAP",
    "FILES_CAP",
    "LIST_CAP",
    "PEOPLE_CAP",
    "RecordKeys",
    "RecordParts",
    "cap_additional",
    "content_hash_projection",
    "detect_shape",
    "download_url",
    "i18n",
    "identifier_of",
    "miss_guidance",
    "record_keys",
    "record_parts",
    "record_url",
    "record_view",
    "tombstone_view",
]

DESCRIPTION_CAP = 4_000
"""Characters of ``description`` shown."""
ADDITIONAL_DESCRIPTIONS_CAP = 5
"""Additional descriptions shown."""
PEOPLE_CAP = 25
"""Creators and contributors shown (each list)."""
LIST_CAP = 50
"""Keywords, funding entries and related identifiers shown (each list)."""
COMMUNITIES_CAP = 25
"""Communities shown."""
FILES_CAP = 25
"""File entries shown."""


def record_parts(body: dict[str, Any]) -> tuple[_Parts, str]:
    """The full, uncapped pieces of a record body of either shape, and its full description text.

    Used where the display caps of :func:`record_view` must be undone: continuation windows,
    citations, the file manifest. Additional descriptions carry their full text here.

    Raises:
        MalformedResponse: the body is not an object or has no record id.
    """
    if not isinstance(body, dict):
        raise MalformedResponse("Zenodo record body is not a JSON object.", reason="malformed_response")
    parts = _rdm_parts(body) if detect_shape(body) == "rdm" else _legacy_parts(body)
    description = html_to_text(parts.description_html) if isinstance(parts.description_html, str) else ""
    return parts, description


def _capped_lists(parts: _Parts) -> dict[str, Any]:
    """The list fields of a record view cut at their display caps, each with its total count."""
    additional = parts.additional or []
    creators = parts.creators or []
    contributors = parts.contributors or []
    keywords = parts.keywords or []
    funding = parts.funding or []
    related = parts.related or []
    communities = parts.communities or []
    return {
        "additional_descriptions": [cap_additional(a) for a in additional[:ADDITIONAL_DESCRIPTIONS_CAP]],
        "additional_description_count": len(additional),
        "creators": creators[:PEOPLE_CAP],
        "creator_count": len(creators),
        "contributors": contributors[:PEOPLE_CAP],
        "contributor_count": len(contributors),
        "keywords": keywords[:LIST_CAP],
        "keyword_count": len(keywords),
        "funding": funding[:LIST_CAP],
        "funding_count": len(funding),
        "related_identifiers": related[:LIST_CAP],
        "related_identifier_count": len(related),
        "communities": communities[:COMMUNITIES_CAP],
        "community_count": len(communities),
    }


def record_view(body: dict[str, Any]) -> ZenodoRecord:
    """Build the ``record`` of a ``zenodo_get_record`` answer from a record body of either shape.

    Display caps (the tool layer adds ``continuations`` for the cut fields): description 4,000
    characters (``description_truncated``, ``description_length``); at most 5 additional
    descriptions of 1,000 characters each (``length``, ``truncated``); creators and contributors 25;
    keywords, funding and related identifiers 50; communities 25; files 25 (``files.order`` first
    when non-empty, else upstream order). Totals are reported in the ``*_count`` fields.

    Upstream sources (RDM / legacy): ``recid`` ``id``; ``concept_recid`` ``parent.id`` /
    ``conceptrecid``; ``doi`` ``pids.doi.identifier`` / ``doi``; ``doi_provider``
    ``pids.doi.provider`` / inferred from the 10.5281 prefix; ``description`` HTML → text
    (:func:`~syncd.normalize.html_text.html_to_text`); ``keywords`` ``subjects[].subject`` /
    ``keywords`` + ``subjects[].term``; ``rights`` ``rights[]`` / ``license.id``; ``access``
    ``access`` / ``access_right`` + ``embargo_date``; ``funding`` ``funding[]`` / ``grants[]``;
    ``versions`` ``versions`` / ``relations.version[0]`` (0-based index made 1-based;
    ``latest_recid`` from ``last_child`` when not the latest); ``stats`` unique counts;
    ``files[].md5`` from an ``md5:``-prefixed ``checksum`` only; ``download_url``
    ``https://zenodo.org/api/records/{recid}/files/{encoded key}/content``; ``revision``
    ``revision_id`` / ``revision``; ``zenodo_url`` ``https://zenodo.org/records/{recid}``.
    The RDM body never names the latest version: ``versions.latest_recid`` is left to the caller.

    Args:
        body: the decoded JSON of ``GET /api/records/{id}`` (RDM or legacy shape).

    Returns:
        The capped :class:`~syncd.zenodo.contracts.ZenodoRecord`.

    Raises:
        MalformedResponse: the body is not an object or has no record id.
    """
    parts, description = record_parts(body)
    shown_files = (parts.files or [])[:FILES_CAP]
    return ZenodoRecord(
        recid=parts.recid,
        concept_recid=parts.concept_recid,
        doi=parts.doi,
        doi_provider=parts.doi_provider,
        concept_doi=parts.concept_doi,
        oai_id=parts.oai_id,
        title=parts.title,
        publication_date=parts.publication_date,
        version=parts.version,
        publisher=parts.publisher,
        resource_type=parts.resource_type,
        description=description[:DESCRIPTION_CAP] if description else None,
        description_truncated=len(description) > DESCRIPTION_CAP if description else None,
        description_length=len(description) if description else None,
        **_capped_lists(parts),
        rights=parts.rights or [],
        access=parts.access or AccessInfo(status="unknown", embargo_active=False),
        code_repository=parts.code_repository,
        versions=parts.versions or VersionsInfo(),
        stats=parts.stats,
        files=FilesInfo(
            enabled=parts.files_enabled,
            count=parts.files_count,
            total_bytes=parts.files_total_bytes,
            shown=len(shown_files),
            entries=shown_files,
        ),
        revision=parts.revision,
        zenodo_url=record_url(parts.recid),
    )


# --------------------------------------------------------------------------------------------
# Store keys


@dataclass(frozen=True)
class RecordKeys:
    """The identifiers the store indexes a record body under.

    Attributes:
        recid: record id of this version (RDM ``id``; legacy ``id``/``recid``).
        concept_recid: concept record id (RDM ``parent.id``; legacy ``conceptrecid`` or
            ``relations.version[0].parent.pid_value``).
        doi: this version's DOI, ASCII-lowercased (RDM ``pids.doi.identifier``; legacy ``doi``).
        concept_doi: the concept DOI, ASCII-lowercased (RDM ``parent.pids.doi.identifier``; legacy
            ``conceptdoi``).
        revision: record revision (RDM ``revision_id``; legacy ``revision``), the ETag's number.
        is_latest: whether this is the newest version (RDM ``versions.is_latest``; legacy
            ``relations.version[0].is_last``).
        latest_recid: the newest version's recid when this one is not it and the body says so
            (legacy ``relations.version[0].last_child``; never in RDM bodies).
    """

    recid: str
    concept_recid: str | None
    doi: str | None
    concept_doi: str | None
    revision: int | None
    is_latest: bool | None
    latest_recid: str | None


def record_keys(body: dict[str, Any]) -> RecordKeys:
    """Extract the store's index keys from a record body of either shape.

    Args:
        body: the decoded JSON of a record GET (or a search hit).

    Returns:
        The :class:`RecordKeys`.

    Raises:
        MalformedResponse: the body is not an object or has no record id.
    """
    if not isinstance(body, dict):
        raise MalformedResponse("Zenodo record body is not a JSON object.", reason="malformed_response")
    recid = _recid(body)
    if detect_shape(body) == "rdm":
        parent = _d(body.get("parent"))
        return RecordKeys(
            recid=recid,
            concept_recid=_s(parent.get("id")),
            doi=_lower_doi(_d(_d(body.get("pids")).get("doi")).get("identifier")),
            concept_doi=_lower_doi(_d(_d(parent.get("pids")).get("doi")).get("identifier")),
            revision=_i(body.get("revision_id")),
            is_latest=_b(_d(body.get("versions")).get("is_latest")),
            latest_recid=None,
        )
    versions, relation_concept = _legacy_version(body, recid)
    metadata = _d(body.get("metadata"))
    return RecordKeys(
        recid=recid,
        concept_recid=_s(body.get("conceptrecid")) or relation_concept,
        doi=_lower_doi(body.get("doi")) or _lower_doi(metadata.get("doi")),
        concept_doi=_lower_doi(body.get("conceptdoi")),
        revision=_i(body.get("revision")),
        is_latest=versions.is_latest,
        latest_recid=versions.latest_recid,
    )


# --------------------------------------------------------------------------------------------
# Misses


def tombstone_view(body: dict[str, Any] | None) -> Tombstone:
    """Normalize the body of a 410 answer to the contract's tombstone.

    The body is ``{"status": 410, "message": "Record deleted", "tombstone": {note, removed_by,
    removal_date, citation_text, is_visible, removal_reason{id}, deletion_policy?}}``. A body that
    is the tombstone object itself is read the same way.

    Args:
        body: the decoded 410 body, or ``None`` when it could not be read.

    Returns:
        ``{removal_date?, removal_reason? (the reason id), note? (omitted when empty),
        citation_text?}``; an empty :class:`~syncd.zenodo.contracts.Tombstone` for an unreadable body.
    """
    data = _d(body)
    tomb = _d(data.get("tombstone")) if "tombstone" in data else data
    reason = tomb.get("removal_reason")
    return Tombstone(
        removal_date=_s(tomb.get("removal_date")),
        removal_reason=_s(_d(reason).get("id")) if isinstance(reason, dict) else _s(reason),
        note=_s(tomb.get("note")),
        citation_text=_s(tomb.get("citation_text")),
    )


def miss_guidance(
    kind: str, recid_or_doi: str, tombstone: Tombstone | None = None, *, token: bool = False
) -> str:
    """The ``guidance`` string of a ``found: false`` answer (anchor wording).

    Args:
        kind: the ``miss_kind``: ``not_found``, ``deleted``, ``restricted`` or ``not_on_zenodo``.
        recid_or_doi: the record id, or for ``not_on_zenodo`` the DOI.
        tombstone: for ``deleted``, the tombstone whose date (first 10 characters) and reason are
            quoted.
        token: for ``restricted``, whether a Zenodo token is configured (``zenodo.token``): without
            one, the guidance names the setting and the call to repeat with it (the contract: a token
            lets reads see restricted records its account may read); with one, that account has no
            access.

    Returns:
        One sentence or two telling the caller what to do next.

    Raises:
        ValueError: ``kind`` is not one of the four miss kinds.
    """
    if kind == "not_found":
        return (
            f"No Zenodo record has id {recid_or_doi}; it may never have existed. Search by title with "
            f'zenodo_search_records, or by query doi:"10.5281/zenodo.{recid_or_doi}" with all_versions true.'
        )
    if kind == "deleted":
        date = tombstone.removal_date[:10] if tombstone and tombstone.removal_date else "an unrecorded date"
        reason = tombstone.removal_reason if tombstone and tombstone.removal_reason else "not given"
        return (
            f"Record {recid_or_doi} was removed from Zenodo on {date} (reason: {reason}); only its "
            "tombstone citation remains. Find a replacement or another version by title with "
            "zenodo_search_records."
        )
    if kind == "restricted":
        if token:
            return (
                f"Record {recid_or_doi} exists but its metadata is restricted to authorized users, and the "
                "account of the configured Zenodo token is not one of them. Ask the owner for access, or "
                "find a public deposit with zenodo_search_records."
            )
        return (
            f"Record {recid_or_doi} exists but its metadata is restricted to authorized users and cannot "
            "be read anonymously. With the Zenodo token of an account that may read it (setting "
            f'zenodo.token, SYNCD_ZENODO__TOKEN), call zenodo_get_record with {{"id": "{recid_or_doi}"}} '
            "again; otherwise find a public deposit with zenodo_search_records."
        )
    if kind == "not_on_zenodo":
        return (
            f"DOI {recid_or_doi} is not registered to a Zenodo record. It resolves elsewhere at "
            f"https://doi.org/{recid_or_doi}; to find a related deposit, search by title with "
            "zenodo_search_records."
        )
    raise ValueError(f"unknown miss kind: {kind!r}")


# --------------------------------------------------------------------------------------------
# Change detection


def _drop_links(node: Any) -> Any:
    """A copy of ``node`` without any ``links`` key, at any depth (iterative, no recursion limit)."""
    root = copy.deepcopy(node)
    stack = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            item.pop("links", None)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return root


def content_hash_projection(body: dict[str, Any]) -> dict[str, Any]:
    """The part of a record body whose change means "the record changed" (hashed by the store).

    Volatile, left out (they move without the record being edited):

    * top-level ``stats``: usage counters, different on nearly every fetch;
    * every ``links`` object at any depth (record, files, communities, legacy grants): URLs the
      serializer derives from ids. Zenodo adds and fixes them without a new revision: between
      2024-09 and 2026-07 record 5244404 (``W/"7"`` throughout) gained ``preview_html``,
      ``request_deletion``, ``file_modification``, ``quota_increase`` and had ``parent_doi``
      corrected, and 3871094's file link went from a raw space to ``%20``;
    * top-level keys whose value is empty (``{}``, ``[]``, ``""``, ``null``), treated as absent:
      the serializer started emitting ``"swh": {}`` in 2025 for a record that had no ``swh`` key;
    * in RDM ``parent.communities.entries[]``, everything but ``id``, ``slug`` and
      ``metadata.title``: those entries embed the whole community record, whose edits are not edits
      of this record.

    Kept, as real change: all ``metadata``, ``files`` (keys, sizes, checksums, order), ``access``,
    ids/DOIs, ``revision``/``revision_id`` and the ``updated``/``modified`` stamps. A revision bump is
    a real upstream edit (the view reports ``revision`` and cursors are bound to it) even when the
    serialized metadata looks the same, and a change of serialization shape (the October-2023
    migration: new file order, lower-cased license ids, ``recid``/``status``/``state`` keys) must
    replace the stored body.

    Args:
        body: a record body of either shape (not modified).

    Returns:
        A new dict to hash, e.g. ``sha256(json.dumps(proj, sort_keys=True, separators=(",", ":")))``.
    """
    projected = _drop_links({k: v for k, v in body.items() if k != "stats"}) if isinstance(body, dict) else {}
    projected = {k: v for k, v in projected.items() if v not in ({}, [], "", None)}
    parent = projected.get("parent")
    if isinstance(parent, dict) and isinstance(parent.get("communities"), dict):
        communities = parent["communities"]
        entries = communities.get("entries")
        if isinstance(entries, list):
            communities["entries"] = [
                {
                    "id": _d(e).get("id"),
                    "slug": _d(e).get("slug"),
                    "title": _d(_d(e).get("metadata")).get("title"),
                }
                for e in entries
            ]
    return projected
