"""The uncapped pieces of a Zenodo record body, read from either shape (RDM or legacy).

:func:`_rdm_parts` and :func:`_legacy_parts` build one :class:`RecordParts` from a body; the shapes
and their fields are described in :mod:`syncd.zenodo.views`, which caps them into the view.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from syncd.normalize.html_text import html_to_text
from syncd.zenodo.contracts import (
    AccessInfo,
    AdditionalDescription,
    Affiliation,
    Community,
    FileEntry,
    FundingEntry,
    Person,
    RecordStats,
    RelatedIdentifier,
    ResourceType,
    RightsEntry,
    UsageCounts,
    VersionsInfo,
)
from syncd.zenodo.views_fields import _b, _d, _i, _l, _line, _recid, _s, download_url, i18n, identifier_of

ADDITIONAL_DESCRIPTION_TEXT_CAP = 1_000
"""Characters of each additional description's text shown."""
_ZENODO_DOI_PREFIX = "10.5281/"
_LEGACY_NEW_PLATFORM_KEYS = ("recid", "status", "state", "submitted", "modified", "doi_url")
_LEGACY_ACCESS_STATUS = {
    "open": "open",
    "embargoed": "embargoed",
    "restricted": "restricted",
    "closed": "restricted",
}


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
