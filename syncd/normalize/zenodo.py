"""Zenodo record bodies → the ``zenodo_get_record`` view, store keys, tombstones, change hashing.

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

Surprise from the corpus, handled in :func:`_legacy_stats`: the two legacy generations swap the
meaning of the flat stats. Before the migration ``version_*`` counted **all versions** and the bare
names this version (record 5244404 in Sep 2023: ``unique_downloads`` 1,448, ``version_unique_downloads``
75,927); after it the bare names count all versions and ``version_*`` this version (Jan 2024: 78,096
and 1,556). Both figures keep growing consistently under that reading.
"""

from __future__ import annotations

import copy
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import quote

from syncd.contracts.zenodo import (
    AccessInfo,
    AdditionalDescription,
    Affiliation,
    Community,
    FileEntry,
    FilesInfo,
    FundingEntry,
    Person,
    RecordStats,
    RelatedIdentifier,
    ResourceType,
    RightsEntry,
    Tombstone,
    UsageCounts,
    VersionsInfo,
    ZenodoRecord,
)
from syncd.errors import MalformedResponse
from syncd.normalize.html_text import html_to_text

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
ADDITIONAL_DESCRIPTION_TEXT_CAP = 1_000
"""Characters of each additional description's text shown."""
PEOPLE_CAP = 25
"""Creators and contributors shown (each list)."""
LIST_CAP = 50
"""Keywords, funding entries and related identifiers shown (each list)."""
COMMUNITIES_CAP = 25
"""Communities shown."""
FILES_CAP = 25
"""File entries shown."""

Shape = Literal["rdm", "legacy"]

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
_ZENODO_DOI_PREFIX = "10.5281/"
# encodeURIComponent's unreserved set, so keys encode as the anchor's download_url does.
_KEY_SAFE = "!*'()"
_LEGACY_NEW_PLATFORM_KEYS = ("recid", "status", "state", "submitted", "modified", "doi_url")
_LEGACY_ACCESS_STATUS = {
    "open": "open",
    "embargoed": "embargoed",
    "restricted": "restricted",
    "closed": "restricted",
}


# --------------------------------------------------------------------------------------------
# Small tolerant readers: upstream JSON may hold null or the wrong type anywhere.


def _d(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _line(value: Any) -> str | None:
    """A display string (title) without control characters; otherwise verbatim (anchor 3.6)."""
    text = _s(value)
    if text is None:
        return None
    cleaned = _CONTROL.sub("", text).strip()
    return cleaned or None


def _s(value: Any) -> str | None:
    """A non-empty string (ints, e.g. legacy ids, are turned into strings), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and value.strip():
        return value
    return None


def _i(value: Any) -> int | None:
    """An integral number (legacy stats are floats such as ``201.0``), else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _b(value: Any) -> bool | None:
    return value if isinstance(value, bool) else None


def i18n(value: Any) -> str | None:
    """English value of an RDM multilingual map (``{"en": ..., "de": ...}``), else the first one."""
    if isinstance(value, str):
        return _s(value)
    mapping = _d(value)
    english = _s(mapping.get("en"))
    if english:
        return english
    return next((text for text in map(_s, mapping.values()) if text), None)


def _lower_doi(value: Any) -> str | None:
    doi = _s(value)
    return doi.strip().translate(_ASCII_LOWER) if doi else None


def identifier_of(identifiers: Any, scheme: str) -> str | None:
    """The first non-empty ``identifier`` of ``scheme`` (any case) in an RDM ``identifiers`` list."""
    for entry in _l(identifiers):
        entry = _d(entry)
        if str(entry.get("scheme") or "").lower() == scheme:
            found = _s(entry.get("identifier"))
            if found:
                return found
    return None


def detect_shape(body: dict[str, Any]) -> Shape:
    """Tell the RDM shape from the legacy one.

    Args:
        body: a record GET body (or a search hit).

    Returns:
        ``"rdm"`` when the body carries any of ``pids``, ``parent``, ``revision_id`` or a ``files``
        object; ``"legacy"`` otherwise (``conceptrecid``, ``files`` list, ``revision``).
    """
    if any(key in body for key in ("pids", "parent", "revision_id")) or isinstance(body.get("files"), dict):
        return "rdm"
    return "legacy"


def record_url(recid: str) -> str:
    """The record landing page, ``https://zenodo.org/records/{recid}``."""
    return f"https://zenodo.org/records/{recid}"


def download_url(recid: str, key: str) -> str:
    """The public download URL of a top-level file, each ``/``-separated key segment encoded.

    Args:
        recid: the record id.
        key: the file key, e.g. ``scikit-learn/scikit-learn-1.9.1.zip``.

    Returns:
        ``https://zenodo.org/api/records/{recid}/files/{encoded key}/content``.
    """
    encoded = "/".join(quote(segment, safe=_KEY_SAFE) for segment in key.split("/"))
    return f"https://zenodo.org/api/records/{recid}/files/{encoded}/content"


def _recid(body: dict[str, Any]) -> str:
    recid = _s(body.get("id")) or _s(body.get("recid"))
    if not recid:
        raise MalformedResponse("Zenodo record body has no id.", reason="malformed_response")
    return recid


# --------------------------------------------------------------------------------------------
# People, files and the other lists, as full (uncapped) lists.


def _rdm_person(raw: Any, *, with_role: bool) -> Person:
    entry = _d(raw)
    p = _d(entry.get("person_or_org"))
    given, family = _s(p.get("given_name")), _s(p.get("family_name"))
    name = _s(p.get("name")) or " ".join(x for x in (given, family) if x) or ""
    affiliations = []
    for aff in map(_d, _l(entry.get("affiliations"))):
        aff_name = _s(aff.get("name"))
        ror = _s(aff.get("id")) or identifier_of(aff.get("identifiers"), "ror")
        if aff_name or ror:
            affiliations.append(Affiliation(name=aff_name, ror=ror))
    role = None
    if with_role:
        role_raw = entry.get("role")
        role = i18n(_d(role_raw).get("title")) or _s(_d(role_raw).get("id")) or _s(role_raw)
    return Person(
        name=name,
        type=_s(p.get("type")),
        orcid=identifier_of(p.get("identifiers"), "orcid"),
        role=role,
        affiliations=affiliations,
    )


def _legacy_person(raw: Any, *, with_role: bool) -> Person:
    entry = _d(raw)
    affiliation = _s(entry.get("affiliation"))
    return Person(
        name=_s(entry.get("name")) or "",
        orcid=_s(entry.get("orcid")),
        role=_s(entry.get("type")) if with_role else None,
        affiliations=[Affiliation(name=affiliation)] if affiliation else [],
    )


def _md5(checksum: Any) -> str | None:
    """The hex of an ``md5:<hex>`` checksum; any other algorithm (or none) gives no md5."""
    value = _s(checksum)
    if value and value.startswith("md5:") and len(value) > 4:
        return value[4:]
    return None


def _file_entry(recid: str, raw: dict[str, Any], fallback_key: str | None) -> FileEntry | None:
    key = _s(raw.get("key")) or _s(raw.get("filename")) or fallback_key
    if not key:
        return None
    size = _i(raw.get("size"))
    return FileEntry(
        key=key,
        size=size if size is not None else _i(raw.get("filesize")),
        mimetype=_s(raw.get("mimetype")),
        md5=_md5(raw.get("checksum")),
        download_url=download_url(recid, key),
    )


def _rdm_files(recid: str, files: dict[str, Any]) -> list[FileEntry]:
    """Entries in ``files.order`` when non-empty (then any unlisted ones), else upstream order."""
    entries = files.get("entries")
    out: list[FileEntry] = []
    if isinstance(entries, list):
        for raw in map(_d, entries):
            entry = _file_entry(recid, raw, None)
            if entry:
                out.append(entry)
        return out
    mapping = _d(entries)
    order = [k for k in _l(files.get("order")) if isinstance(k, str) and k in mapping]
    seen = set(order)
    keys = order + [k for k in mapping if k not in seen] if order else list(mapping)
    for map_key in keys:
        entry = _file_entry(recid, _d(mapping.get(map_key)), map_key)
        if entry:
            out.append(entry)
    return out


def _usage(block: Any, views_key: str, downloads_key: str) -> UsageCounts:
    data = _d(block)
    return UsageCounts(views=_i(data.get(views_key)), downloads=_i(data.get(downloads_key)))


def _legacy_stats(body: dict[str, Any]) -> RecordStats | None:
    """Unique counts from the flat legacy ``stats``; see the module docstring for the swap."""
    stats = body.get("stats")
    if not isinstance(stats, dict) or not stats:
        return None
    plain = UsageCounts(views=_i(stats.get("unique_views")), downloads=_i(stats.get("unique_downloads")))
    versioned = UsageCounts(
        views=_i(stats.get("version_unique_views")), downloads=_i(stats.get("version_unique_downloads"))
    )
    owners = _l(body.get("owners"))
    if any(key in body for key in _LEGACY_NEW_PLATFORM_KEYS) or (owners and isinstance(owners[0], dict)):
        return RecordStats(this_version=versioned, all_versions=plain)
    return RecordStats(this_version=plain, all_versions=versioned)


def _additional(type_label: str | None, html: Any) -> AdditionalDescription | None:
    """One additional description with its **full** text (:func:`cap_additional` cuts it for display)."""
    text = html_to_text(html) if isinstance(html, str) else ""
    if not text:
        return None
    return AdditionalDescription(
        type=type_label,
        text=text,
        length=len(text),
        truncated=len(text) > ADDITIONAL_DESCRIPTION_TEXT_CAP,
    )


def cap_additional(entry: AdditionalDescription) -> AdditionalDescription:
    """``entry`` with its text cut at 1,000 characters (``length``/``truncated`` describe the full text)."""
    if len(entry.text) <= ADDITIONAL_DESCRIPTION_TEXT_CAP:
        return entry
    return entry.model_copy(update={"text": entry.text[:ADDITIONAL_DESCRIPTION_TEXT_CAP]})


def _strings(values: Iterable[Any]) -> list[str]:
    return [text for text in map(_s, values) if text]


@dataclass
class _Parts:
    """The shape-independent, uncapped pieces of a record view."""

    recid: str
    concept_recid: str | None = None
    doi: str | None = None
    doi_provider: str | None = None
    concept_doi: str | None = None
    oai_id: str | None = None
    title: str = ""
    publication_date: str | None = None
    version: str | None = None
    publisher: str | None = None
    resource_type: ResourceType | None = None
    description_html: Any = None
    additional: list[AdditionalDescription] | None = None
    creators: list[Person] | None = None
    contributors: list[Person] | None = None
    keywords: list[str] | None = None
    rights: list[RightsEntry] | None = None
    access: AccessInfo | None = None
    funding: list[FundingEntry] | None = None
    related: list[RelatedIdentifier] | None = None
    code_repository: str | None = None
    communities: list[Community] | None = None
    versions: VersionsInfo | None = None
    stats: RecordStats | None = None
    files_enabled: bool = False
    files_count: int | None = None
    files_total_bytes: int | None = None
    files: list[FileEntry] | None = None
    revision: int | None = None


def _rdm_funding(m: dict[str, Any]) -> list[FundingEntry]:
    """``metadata.funding[]`` of an RDM body."""
    funding = []
    for raw in map(_d, _l(m.get("funding"))):
        funder, award = _d(raw.get("funder")), _d(raw.get("award"))
        funding.append(
            FundingEntry(
                funder_id=_s(funder.get("id")),
                funder_name=_s(funder.get("name")),
                award_id=_s(award.get("id")),
                award_number=_s(award.get("number")),
                award_acronym=_s(award.get("acronym")),
                award_title=i18n(award.get("title")),
                award_program=_s(award.get("program")),
                award_doi=identifier_of(award.get("identifiers"), "doi"),
                award_url=identifier_of(award.get("identifiers"), "url"),
            )
        )
    return funding


def _rdm_related(m: dict[str, Any]) -> list[RelatedIdentifier]:
    """``metadata.related_identifiers[]`` of an RDM body (entries without an identifier dropped)."""
    related = []
    for raw in map(_d, _l(m.get("related_identifiers"))):
        identifier = _s(raw.get("identifier"))
        if identifier:
            related.append(
                RelatedIdentifier(
                    identifier=identifier,
                    scheme=_s(raw.get("scheme")),
                    relation=_s(_d(raw.get("relation_type")).get("id")),
                    resource_type=_s(_d(raw.get("resource_type")).get("id")),
                )
            )
    return related


def _rdm_additional(m: dict[str, Any]) -> list[AdditionalDescription]:
    """``metadata.additional_descriptions[]`` of an RDM body, labelled by their type."""
    additional = []
    for raw in map(_d, _l(m.get("additional_descriptions"))):
        dtype = _d(raw.get("type"))
        entry = _additional(i18n(dtype.get("title")) or _s(dtype.get("id")), raw.get("description"))
        if entry:
            additional.append(entry)
    return additional


def _rdm_communities(parent: dict[str, Any]) -> list[Community]:
    """``parent.communities.entries[]`` of an RDM body (slug and title)."""
    communities = []
    for raw in map(_d, _l(_d(parent.get("communities")).get("entries"))):
        slug = _s(raw.get("slug"))
        if slug:
            communities.append(Community(slug=slug, title=_s(_d(raw.get("metadata")).get("title"))))
    return communities


def _rdm_access(access: dict[str, Any]) -> AccessInfo:
    """``access`` of an RDM body; embargo until/reason only while the embargo is active."""
    embargo = _d(access.get("embargo"))
    embargo_active = embargo.get("active") is True
    return AccessInfo(
        status=_s(access.get("status")) or "unknown",
        record=_s(access.get("record")),
        files=_s(access.get("files")),
        embargo_active=embargo_active,
        embargo_until=_s(embargo.get("until")) if embargo_active else None,
        embargo_reason=_s(embargo.get("reason")) if embargo_active else None,
    )


def _rdm_stats(stats: Any) -> RecordStats | None:
    """``stats`` of an RDM body: unique views and downloads of this version and of all versions."""
    if not (isinstance(stats, dict) and stats):
        return None
    return RecordStats(
        this_version=_usage(stats.get("this_version"), "unique_views", "unique_downloads"),
        all_versions=_usage(stats.get("all_versions"), "unique_views", "unique_downloads"),
    )


def _rdm_resource_type(m: dict[str, Any]) -> ResourceType | None:
    resource_type = _d(m.get("resource_type"))
    rt_id = _s(resource_type.get("id"))
    return ResourceType(id=rt_id, title=i18n(resource_type.get("title"))) if rt_id else None


def _rdm_parts(body: dict[str, Any]) -> _Parts:
    recid = _recid(body)
    m = _d(body.get("metadata"))
    parent = _d(body.get("parent"))
    pids = _d(body.get("pids"))
    files = _d(body.get("files"))
    versions = _d(body.get("versions"))
    code_repo = _d(body.get("custom_fields")).get("code:codeRepository")
    return _Parts(
        recid=recid,
        concept_recid=_s(parent.get("id")),
        doi=_s(_d(pids.get("doi")).get("identifier")),
        doi_provider=_s(_d(pids.get("doi")).get("provider")),
        concept_doi=_s(_d(_d(parent.get("pids")).get("doi")).get("identifier")),
        oai_id=_s(_d(pids.get("oai")).get("identifier")),
        title=_line(m.get("title")) or "",
        publication_date=_s(m.get("publication_date")),
        version=_s(m.get("version")),
        publisher=_s(m.get("publisher")),
        resource_type=_rdm_resource_type(m),
        description_html=m.get("description"),
        additional=_rdm_additional(m),
        creators=[_rdm_person(c, with_role=False) for c in _l(m.get("creators"))],
        contributors=[_rdm_person(c, with_role=True) for c in _l(m.get("contributors"))],
        keywords=_strings(_d(s).get("subject") for s in _l(m.get("subjects"))),
        rights=[
            RightsEntry(
                id=_s(r.get("id")),
                title=i18n(r.get("title")) or _s(r.get("id")) or "",
                url=_s(_d(r.get("props")).get("url")) or _s(r.get("link")),
            )
            for r in map(_d, _l(m.get("rights")))
        ],
        access=_rdm_access(_d(body.get("access"))),
        funding=_rdm_funding(m),
        related=_rdm_related(m),
        code_repository=_s(code_repo) if isinstance(code_repo, str) else None,
        communities=_rdm_communities(parent),
        versions=VersionsInfo(index=_i(versions.get("index")), is_latest=_b(versions.get("is_latest"))),
        stats=_rdm_stats(body.get("stats")),
        files_enabled=files.get("enabled") is True,
        files_count=_i(files.get("count")),
        files_total_bytes=_i(files.get("total_bytes")),
        files=_rdm_files(recid, files),
        revision=_i(body.get("revision_id")),
    )


def _legacy_version(body: dict[str, Any], recid: str) -> tuple[VersionsInfo, str | None]:
    """``(versions, concept recid from relations)`` from ``metadata.relations.version[0]``."""
    relation = _d(next(iter(_l(_d(_d(body.get("metadata")).get("relations")).get("version"))), None))
    if not relation:
        return VersionsInfo(), None
    index = _i(relation.get("index"))
    is_latest = _b(relation.get("is_last"))
    latest = _s(_d(relation.get("last_child")).get("pid_value"))
    return (
        VersionsInfo(
            index=index + 1 if index is not None else None,  # legacy index is 0-based
            is_latest=is_latest,
            latest_recid=latest if is_latest is False and latest and latest != recid else None,
        ),
        _s(_d(relation.get("parent")).get("pid_value")),
    )


def _legacy_funding(m: dict[str, Any]) -> list[FundingEntry]:
    """``metadata.grants[]`` of a legacy body (funder and award ids from ``internal_id``)."""
    funding = []
    for raw in map(_d, _l(m.get("grants"))):
        internal_id = _s(raw.get("internal_id"))
        funder = _d(raw.get("funder"))
        funding.append(
            FundingEntry(
                funder_id=internal_id.split("::", 1)[0] if internal_id and "::" in internal_id else None,
                funder_name=_s(funder.get("name")),
                award_id=internal_id if internal_id and "::" in internal_id else None,
                award_number=_s(raw.get("code")),
                award_acronym=_s(raw.get("acronym")),
                award_title=i18n(raw.get("title")),
                award_program=_s(raw.get("program")),
                award_url=_s(raw.get("url")),
            )
        )
    return funding


def _legacy_related(m: dict[str, Any]) -> list[RelatedIdentifier]:
    """``metadata.related_identifiers[]`` of a legacy body (relation lower-cased to the RDM id)."""
    related = []
    for raw in map(_d, _l(m.get("related_identifiers"))):
        identifier = _s(raw.get("identifier"))
        if identifier:
            relation = _s(raw.get("relation"))
            related.append(
                RelatedIdentifier(
                    identifier=identifier,
                    scheme=_s(raw.get("scheme")),
                    relation=relation.lower() if relation else None,  # isSupplementTo → RDM id
                    resource_type=_s(raw.get("resource_type")),
                )
            )
    return related


def _legacy_files(
    body: dict[str, Any], recid: str, access_right: str | None
) -> tuple[list[FileEntry], int | None, int | None]:
    """``(entries, count, total bytes)`` of a legacy body's ``files[]``.

    Restricted and embargoed legacy records list no files (``"files": []`` or no key): the manifest
    is hidden, not empty, so count and total bytes stay None as the contract says.
    """
    files_raw = body.get("files")
    files_list = [_d(f) for f in files_raw] if isinstance(files_raw, list) else None
    entries = [e for e in (_file_entry(recid, f, None) for f in files_list or []) if e]
    sizes = [e.size for e in entries]
    manifest_known = files_list is not None and (bool(entries) or access_right in (None, "open"))
    count = len(entries) if manifest_known else None
    total = (
        sum(s for s in sizes if s is not None)
        if manifest_known and all(s is not None for s in sizes)
        else None
    )
    return entries, count, total


def _legacy_access(m: dict[str, Any], access_right: str | None) -> AccessInfo:
    """``access_right`` (+ ``embargo_date`` while embargoed) of a legacy body as RDM-style access."""
    embargoed = access_right == "embargoed"
    return AccessInfo(
        status=_LEGACY_ACCESS_STATUS.get(access_right or "", access_right or "unknown"),
        files=(
            ("public" if access_right == "open" else "restricted")
            if access_right in _LEGACY_ACCESS_STATUS
            else None
        ),
        embargo_active=embargoed,
        embargo_until=_s(m.get("embargo_date")) if embargoed else None,
    )


def _legacy_resource_type(m: dict[str, Any]) -> ResourceType | None:
    resource_type = _d(m.get("resource_type"))
    rt_type, rt_subtype = _s(resource_type.get("type")), _s(resource_type.get("subtype"))
    if not rt_type:
        return None
    return ResourceType(
        id=f"{rt_type}-{rt_subtype}" if rt_subtype else rt_type, title=_s(resource_type.get("title"))
    )


def _legacy_parts(body: dict[str, Any]) -> _Parts:
    recid = _recid(body)
    m = _d(body.get("metadata"))
    access_right = _s(m.get("access_right"))
    versions, relation_concept = _legacy_version(body, recid)
    doi = _s(body.get("doi")) or _s(m.get("doi"))
    license_raw = m.get("license")
    license_id = _s(_d(license_raw).get("id")) if isinstance(license_raw, dict) else _s(license_raw)
    additional = [
        entry
        for entry in (_additional("Notes", m.get("notes")), _additional("Methods", m.get("method")))
        if entry
    ]
    entries, files_count, files_total_bytes = _legacy_files(body, recid, access_right)
    code_repo = _d(m.get("custom")).get("code:codeRepository")
    return _Parts(
        recid=recid,
        concept_recid=_s(body.get("conceptrecid")) or relation_concept,
        doi=doi,
        doi_provider=(
            ("datacite" if doi.lower().startswith(_ZENODO_DOI_PREFIX) else "external") if doi else None
        ),
        concept_doi=_s(body.get("conceptdoi")),
        title=_line(m.get("title")) or _line(body.get("title")) or "",
        publication_date=_s(m.get("publication_date")),
        version=_s(m.get("version")),
        resource_type=_legacy_resource_type(m),
        description_html=m.get("description"),
        additional=additional,
        creators=[_legacy_person(c, with_role=False) for c in _l(m.get("creators"))],
        contributors=[_legacy_person(c, with_role=True) for c in _l(m.get("contributors"))],
        keywords=_strings(_l(m.get("keywords"))) + _strings(_d(s).get("term") for s in _l(m.get("subjects"))),
        rights=[RightsEntry(id=license_id.lower(), title=license_id)] if license_id else [],
        access=_legacy_access(m, access_right),
        funding=_legacy_funding(m),
        related=_legacy_related(m),
        code_repository=_s(code_repo) if isinstance(code_repo, str) else None,
        communities=[
            Community(slug=slug) for slug in (_s(_d(c).get("id")) for c in _l(m.get("communities"))) if slug
        ],
        versions=versions,
        stats=_legacy_stats(body),
        files_enabled=bool(entries) or access_right in ("embargoed", "restricted", "closed"),
        files_count=files_count,
        files_total_bytes=files_total_bytes,
        files=entries,
        revision=_i(body.get("revision")),
    )


RecordParts = _Parts
"""The uncapped, shape-independent pieces of a record (see :func:`record_parts`)."""


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
        The capped :class:`~syncd.contracts.zenodo.ZenodoRecord`.

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
        citation_text?}``; an empty :class:`~syncd.contracts.zenodo.Tombstone` for an unreadable body.
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


def miss_guidance(kind: str, recid_or_doi: str, tombstone: Tombstone | None = None) -> str:
    """The ``guidance`` string of a ``found: false`` answer (anchor wording).

    Args:
        kind: the ``miss_kind``: ``not_found``, ``deleted``, ``restricted`` or ``not_on_zenodo``.
        recid_or_doi: the record id, or for ``not_on_zenodo`` the DOI.
        tombstone: for ``deleted``, the tombstone whose date (first 10 characters) and reason are
            quoted.

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
        return (
            f"Record {recid_or_doi} exists but its metadata is restricted to authorized users and cannot "
            "be read anonymously."
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
