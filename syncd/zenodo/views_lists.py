"""Pure builders for the Zenodo list tools (anchors.md §1b).

Search query composition, hits, versions, vocabularies, file manifests and the text-preview rules.

Nothing here does I/O; every function reads upstream JSON (either record shape) or tool inputs.
"""

from __future__ import annotations

import calendar
import re
from typing import Any

from syncd.errors import InvalidInput
from syncd.zenodo.contracts_lists import (
    FacetBucket,
    FileListEntry,
    HitAccess,
    HitCreator,
    SearchFacets,
    SearchHit,
    VersionEntry,
    YearBucket,
)
from syncd.zenodo.views import i18n, identifier_of, record_parts, record_url

__all__ = [
    "RESOURCE_TYPES",
    "RESOURCE_TYPE_IDS",
    "SORTS",
    "ResourceTypeTable",
    "compose_query",
    "expand_date",
    "fold",
    "is_listable",
    "preview_mode",
    "resource_type_table",
    "resource_types_from",
    "search_facets",
    "search_hit",
    "snippet",
    "version_entry",
    "vocabulary_entry",
]

SORTS = ("bestmatch", "newest", "oldest", "mostviewed", "mostdownloaded", "updated-desc", "updated-asc")
"""Sorts ``zenodo_search_records`` accepts (Zenodo's own names)."""
ACCESS_STATUSES = ("open", "restricted", "embargoed", "metadata-only")

# Zenodo's resource-type vocabulary (``GET /api/vocabularies/resourcetypes``): ``(id, label, parent)``,
# in Zenodo's order (by id). The ids and labels that the recorded search aggregations carry
# (tests/corpus/zenodo/search/*: ``aggregations.resource_type`` buckets and their ``inner`` subtypes)
# agree with this table, e.g. ``publication-section`` is "Book chapter" and ``publication-other``
# "Other"; the other entries are the 43 ids the Zenodo MCP contract lists (anchors.md). When Zenodo
# is reachable the vocabulary is fetched and stored (``zenodo_vocab``) and takes precedence
# (:func:`resource_types_from`).
RESOURCE_TYPES: tuple[tuple[str, str, str | None], ...] = (
    ("dataset", "Dataset", None),
    ("event", "Event", None),
    ("image", "Image", None),
    ("image-diagram", "Diagram", "image"),
    ("image-drawing", "Drawing", "image"),
    ("image-figure", "Figure", "image"),
    ("image-other", "Other", "image"),
    ("image-photo", "Photo", "image"),
    ("image-plot", "Plot", "image"),
    ("lesson", "Lesson", None),
    ("model", "Model", None),
    ("other", "Other", None),
    ("physicalobject", "Physical object", None),
    ("poster", "Poster", None),
    ("presentation", "Presentation", None),
    ("publication", "Publication", None),
    ("publication-annotationcollection", "Annotation collection", "publication"),
    ("publication-article", "Journal article", "publication"),
    ("publication-book", "Book", "publication"),
    ("publication-conferencepaper", "Conference paper", "publication"),
    ("publication-conferenceproceeding", "Conference proceeding", "publication"),
    ("publication-datamanagementplan", "Output management plan", "publication"),
    ("publication-datapaper", "Data paper", "publication"),
    ("publication-deliverable", "Project deliverable", "publication"),
    ("publication-dissertation", "Thesis", "publication"),
    ("publication-journal", "Journal", "publication"),
    ("publication-milestone", "Project milestone", "publication"),
    ("publication-other", "Other", "publication"),
    ("publication-patent", "Patent", "publication"),
    ("publication-peerreview", "Peer review", "publication"),
    ("publication-preprint", "Preprint", "publication"),
    ("publication-proposal", "Proposal", "publication"),
    ("publication-report", "Report", "publication"),
    ("publication-section", "Book chapter", "publication"),
    ("publication-softwaredocumentation", "Software documentation", "publication"),
    ("publication-standard", "Standard", "publication"),
    ("publication-taxonomictreatment", "Taxonomic treatment", "publication"),
    ("publication-technicalnote", "Technical note", "publication"),
    ("publication-workingpaper", "Working paper", "publication"),
    ("software", "Software", None),
    ("software-computationalnotebook", "Computational notebook", "software"),
    ("video", "Video/Audio", None),
    ("workflow", "Workflow", None),
)
"""The 43 resource types as ``(id, label, parent type or None)``, in Zenodo's order (by id)."""

ResourceTypeTable = dict[str, tuple[str, str | None, str]]
"""id -> ``(type, subtype or None, label)``: ``type`` is the id itself for a top-level type."""


def resource_type_table(
    entries: tuple[tuple[str, str, str | None], ...] | list[tuple[str, str, str | None]],
) -> ResourceTypeTable:
    """The lookup table of ``(id, label, parent)`` entries (order kept)."""
    return {rid: (parent or rid, rid if parent else None, label) for rid, label, parent in entries}


RESOURCE_TYPE_IDS: ResourceTypeTable = resource_type_table(RESOURCE_TYPES)


def resource_types_from(body: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    """``(id, label, parent)`` entries of a ``/api/vocabularies/resourcetypes`` page, sorted by id.

    An entry's parent is ``props.type`` when that differs from its id; its label the English title.
    Entries without an id are skipped.
    """
    hits = (body.get("hits") or {}).get("hits") if isinstance(body.get("hits"), dict) else None
    out: list[tuple[str, str, str | None]] = []
    for hit in hits or []:
        rid = hit.get("id") if isinstance(hit, dict) else None
        if not isinstance(rid, str) or not rid:
            continue
        props = hit.get("props") if isinstance(hit.get("props"), dict) else {}
        kind = props.get("type") if isinstance(props.get("type"), str) else None
        label = i18n(hit.get("title")) or rid
        out.append((rid, label, kind if kind and kind != rid else None))
    return sorted(out)


_TEXT_MIMES = {
    "application/json",
    "application/ld+json",
    "application/geo+json",
    "application/xml",
    "application/x-yaml",
    "application/yaml",
    "application/x-ipynb+json",
    "application/x-tex",
    "application/x-sh",
    "application/javascript",
}
_TEXT_EXTS = set(
    [
        "txt",
        "md",
        "markdown",
        "csv",
        "tsv",
        "json",
        "jsonl",
        "ndjson",
        "geojson",
        "yaml",
        "yml",
        "xml",
        "cff",
        "bib",
        "ris",
        "rst",
        "tex",
        "py",
        "r",
        "rmd",
        "ipynb",
        "sh",
        "bash",
        "sql",
        "toml",
        "ini",
        "cfg",
        "conf",
        "html",
        "htm",
        "css",
        "js",
        "ts",
        "c",
        "h",
        "cpp",
        "hpp",
        "java",
        "go",
        "rs",
        "rb",
        "pl",
        "php",
        "m",
        "jl",
        "scala",
        "kt",
        "swift",
        "log",
        "nt",
        "ttl",
        "owl",
        "rdf",
    ]
)


def fold(value: str) -> str:
    """Case and separators (space, ``_``, ``-``) removed: the loose match of enum inputs."""
    return re.sub(r"[\s_\-]+", "", value.strip().lower())


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def expand_date(value: str, *, end: bool, name: str) -> str:
    """``YYYY``/``YYYY-MM``/``YYYY-MM-DD`` -> a full date (from: first day, to: last day).

    Raises:
        InvalidInput: ``invalid_parameter`` for anything else or an impossible calendar date.
    """
    match = re.fullmatch(r"(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?", value.strip())
    if not match:
        raise InvalidInput(f"{name} must be YYYY, YYYY-MM or YYYY-MM-DD", reason="invalid_parameter")
    year = int(match.group(1))
    month = int(match.group(2)) if match.group(2) else (12 if end else 1)
    if not 1 <= month <= 12:
        raise InvalidInput(f"{name} has no month {month}", reason="invalid_parameter")
    last = calendar.monthrange(year, month)[1]
    day = int(match.group(3)) if match.group(3) else (last if end else 1)
    if not 1 <= day <= last:
        raise InvalidInput(f"{name} is not a calendar date", reason="invalid_parameter")
    return f"{year:04d}-{month:02d}-{day:02d}"


def compose_query(
    query: str | None,
    *,
    resource_types: list[str] | None = None,
    funder: str | None = None,
    award: str | None = None,
    creator_orcid: str | None = None,
    file_types: list[str] | None = None,
    license: str | None = None,
    access_status: str | None = None,
    published_from: str | None = None,
    published_to: str | None = None,
    types_table: ResourceTypeTable | None = None,
) -> str | None:
    r"""Zenodo's ``q``: the user query (parenthesised when filters exist) AND-joined with filters.

    ``types_table``: the resource-type vocabulary the ids were validated against (default the
    built-in one).

    Filters (values quoted, ``\\`` and ``"`` escaped): ``metadata.funding.funder.id``,
    ``metadata.funding.award.id`` (``<ror>::<n>``) or ``.number``, the creators' ORCID,
    ``metadata.rights.id``, resource types OR-ed (``metadata.resource_type.props.type`` for a
    top-level type, ``metadata.resource_type.id`` for a subtype), file types OR-ed
    (``files.types``), ``access.status``, ``metadata.publication_date:[from TO to]`` (``*`` open).
    """
    clauses: list[str] = []
    if funder:
        clauses.append(f"metadata.funding.funder.id:{_quote(funder)}")
    if award:
        field = "id" if "::" in award else "number"
        clauses.append(f"metadata.funding.award.{field}:{_quote(award)}")
    if creator_orcid:
        clauses.append(f"metadata.creators.person_or_org.identifiers.identifier:{_quote(creator_orcid)}")
    if license:
        clauses.append(f"metadata.rights.id:{_quote(license)}")
    if resource_types:
        ors = []
        for rid in resource_types:
            kind, sub, _ = (types_table or RESOURCE_TYPE_IDS)[rid]
            ors.append(
                f"metadata.resource_type.id:{_quote(rid)}"
                if sub
                else f"metadata.resource_type.props.type:{_quote(kind)}"
            )
        clauses.append(ors[0] if len(ors) == 1 else "(" + " OR ".join(ors) + ")")
    if file_types:
        ors = [f"files.types:{_quote(t)}" for t in file_types]
        clauses.append(ors[0] if len(ors) == 1 else "(" + " OR ".join(ors) + ")")
    if access_status:
        clauses.append(f"access.status:{_quote(access_status)}")
    if published_from or published_to:
        clauses.append(f"metadata.publication_date:[{published_from or '*'} TO {published_to or '*'}]")
    user = (query or "").strip()
    if not clauses:
        return user or None
    head = [f"({user})"] if user else []
    return " AND ".join(head + clauses)


def snippet(text: str | None, limit: int = 280) -> str | None:
    """First ``limit`` characters, cut at a word boundary past 60% of the way, then ``…``."""
    if not text:
        return None
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[:limit]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _first_license_ids(body: dict[str, Any], rights: list[Any]) -> list[str]:
    return [r.id for r in rights if getattr(r, "id", None)]


def search_hit(body: dict[str, Any]) -> SearchHit:
    """A search hit (either record shape) as ``zenodo_search_records`` shows it.

    ``views``/``downloads`` are all-versions unique counts; ``file_count``/``total_bytes`` are
    absent when files are restricted.
    """
    parts, description = record_parts(body)
    access = parts.access
    restricted = access is not None and (access.files == "restricted" or access.embargo_active)
    stats = parts.stats.all_versions if parts.stats else None
    creators = parts.creators or []
    return SearchHit(
        recid=parts.recid,
        doi=parts.doi,
        doi_provider=parts.doi_provider,
        concept_recid=parts.concept_recid,
        concept_doi=parts.concept_doi,
        title=parts.title,
        publication_date=parts.publication_date,
        resource_type=parts.resource_type,
        version=parts.version,
        is_latest=parts.versions.is_latest if parts.versions else None,
        version_index=parts.versions.index if parts.versions else None,
        creators=[HitCreator(name=c.name, orcid=c.orcid) for c in creators[:5]],
        creator_count=len(creators),
        license_ids=_first_license_ids(body, parts.rights or []),
        access=HitAccess(
            status=access.status if access else "unknown",
            files=access.files if access else None,
            embargo_until=access.embargo_until if access else None,
        ),
        communities=[c.slug for c in (parts.communities or [])[:5]],
        file_count=None if restricted else parts.files_count,
        total_bytes=None if restricted else parts.files_total_bytes,
        views=stats.views if stats else None,
        downloads=stats.downloads if stats else None,
        description_snippet=snippet(description),
        zenodo_url=record_url(parts.recid),
    )


def version_entry(body: dict[str, Any]) -> VersionEntry:
    """One version of a ``/versions`` page; counts are this version's unique views and downloads."""
    parts, _ = record_parts(body)
    stats = parts.stats.this_version if parts.stats else None
    return VersionEntry(
        recid=parts.recid,
        doi=parts.doi,
        version=parts.version,
        title=parts.title,
        publication_date=parts.publication_date,
        index=parts.versions.index if parts.versions else None,
        is_latest=parts.versions.is_latest if parts.versions else None,
        file_count=parts.files_count,
        total_bytes=parts.files_total_bytes,
        views=stats.views if stats else None,
        downloads=stats.downloads if stats else None,
    )


def vocabulary_entry(vocabulary: str, hit: dict[str, Any]) -> dict[str, Any]:
    """One upstream vocabulary hit -> ``{filter_param, filter_value, label, ...extras}`` (nulls dropped)."""
    out: dict[str, Any]
    if vocabulary == "communities":
        meta = hit.get("metadata") or {}
        out = {
            "filter_param": "community",
            "filter_value": hit.get("slug") or hit.get("id"),
            "label": meta.get("title") or hit.get("slug"),
            "slug": hit.get("slug"),
            "uuid": hit.get("id"),
            "community_type": (meta.get("type") or {}).get("id"),
            "website": meta.get("website"),
            "organizations": [o.get("name") for o in meta.get("organizations") or [] if o.get("name")],
        }
    elif vocabulary == "funders":
        out = {
            "filter_param": "funder",
            "filter_value": hit.get("id"),
            "label": hit.get("name") or i18n(hit.get("title")),
            "ror_id": hit.get("id"),
            "funder_doi": identifier_of(hit.get("identifiers"), "doi"),
            "acronym": hit.get("acronym"),
            "country": hit.get("country"),
            "country_name": hit.get("country_name"),
        }
    elif vocabulary == "awards":
        funder = hit.get("funder") or {}
        out = {
            "filter_param": "award",
            "filter_value": hit.get("id"),
            "label": i18n(hit.get("title")) or hit.get("number"),
            "number": hit.get("number"),
            "acronym": hit.get("acronym"),
            "title": i18n(hit.get("title")),
            "program": hit.get("program"),
            "funder_id": funder.get("id"),
            "funder_name": funder.get("name"),
            "award_doi": identifier_of(hit.get("identifiers"), "doi"),
            "award_url": identifier_of(hit.get("identifiers"), "url"),
            "start_date": hit.get("start_date"),
            "end_date": hit.get("end_date"),
        }
    else:  # licenses
        props = hit.get("props") or {}
        osi = props.get("osi_approved")
        out = {
            "filter_param": "license",
            "filter_value": hit.get("id"),
            "label": i18n(hit.get("title")) or hit.get("id"),
            "url": props.get("url"),
            "osi_approved": (osi == "y") if isinstance(osi, str) and osi else None,
            "tags": hit.get("tags") or [],
        }
    return {k: v for k, v in out.items() if v not in (None, "")}


def is_listable(key: str, mimetype: str | None) -> bool:
    """A ZIP, by ``.zip`` extension or ``application/zip``."""
    return key.lower().endswith(".zip") or (mimetype or "").lower() == "application/zip"


def preview_mode(key: str, mimetype: str | None) -> str:
    """``text`` (text MIME or extension), ``sniff`` (extensionless octet-stream) or ``binary``."""
    mime = (mimetype or "").split(";")[0].strip().lower()
    name = key.rsplit("/", 1)[-1]
    ext = name.rsplit(".", 1)[1].lower() if "." in name.lstrip(".") else ""
    if mime.startswith("text/") or mime in _TEXT_MIMES or ext in _TEXT_EXTS:
        return "text"
    if not ext and mime in ("", "application/octet-stream"):
        return "sniff"
    return "binary"


def file_entry(entry: Any) -> FileListEntry:
    """A manifest entry (contract :class:`FileEntry`) with ``previewable`` and ``listable``."""
    return FileListEntry(
        key=entry.key,
        size=entry.size,
        mimetype=entry.mimetype,
        md5=entry.md5,
        download_url=entry.download_url,
        previewable=preview_mode(entry.key, entry.mimetype) != "binary",
        listable=is_listable(entry.key, entry.mimetype),
    )


def _complete_utf8_end(data: bytes) -> int:
    """Length of ``data`` without a trailing incomplete UTF-8 sequence."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # continuation byte: keep looking for the lead
            continue
        if byte & 0x80 == 0:
            return len(data)
        need = 2 if byte & 0xE0 == 0xC0 else 3 if byte & 0xF0 == 0xE0 else 4 if byte & 0xF8 == 0xF0 else 1
        return len(data) if back >= need else len(data) - back
    return len(data)


def decode_excerpt(data: bytes, offset: int, more: bool) -> tuple[str | None, int, int]:
    r"""Decode a byte excerpt: ``(text or None when not text, bytes kept, replacement chars)``.

    A NUL byte makes it not text. When ``more`` bytes follow, the excerpt is cut after its last
    ``\\n``, else at its last complete UTF-8 sequence. A BOM at offset 0 is dropped from the text
    (its bytes count as kept). Decoding is lenient; U+FFFD produced are counted.
    """
    if b"\x00" in data:
        return None, 0, 0
    kept = data
    if more:
        newline = data.rfind(b"\n")
        kept = data[: newline + 1] if newline >= 0 else data[: _complete_utf8_end(data)]
    body = kept[3:] if offset == 0 and kept.startswith(b"\xef\xbb\xbf") else kept
    text = body.decode("utf-8", errors="replace")
    return text, len(kept), text.count("\ufffd")


def sniff_is_text(data: bytes) -> bool:
    """The first 4 KB decode strictly as UTF-8 (a cut trailing sequence allowed) and hold no NUL."""
    head = data[:4096]
    if b"\x00" in head:
        return False
    try:
        head[: _complete_utf8_end(head)].decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _buckets(agg: Any) -> list[dict[str, Any]]:
    buckets = agg.get("buckets") if isinstance(agg, dict) else None
    return [b for b in buckets or [] if isinstance(b, dict) and b.get("key") is not None]


def _bucket(b: dict[str, Any]) -> FacetBucket:
    label = b.get("label")
    return FacetBucket(
        id=str(b["key"]), label=str(label) if label else None, count=int(b.get("doc_count") or 0)
    )


def search_facets(body: dict[str, Any]) -> SearchFacets | None:
    """Facets of a ``/api/records`` answer from its ``aggregations`` (RDM or legacy names), or None.

    RDM names: ``resource_type`` (with ``inner`` subtypes), ``access_status``, ``file_type``,
    ``subject``, ``publication_date`` (years); legacy names: ``type`` (``subtype``), ``access_right``,
    ``file_type``, ``keywords``. Caps as the anchor: 10 types with 5 subtypes each, 10 file types,
    10 subjects, the 10 most recent years.
    """
    aggs = body.get("aggregations") if isinstance(body, dict) else None
    if not isinstance(aggs, dict) or not aggs:
        return None
    types: list[FacetBucket] = []
    for b in _buckets(aggs.get("resource_type") or aggs.get("type"))[:10]:
        inner = b.get("inner") if isinstance(b.get("inner"), dict) else b.get("subtype")
        subtypes = [_bucket(s) for s in _buckets(inner)[:5]]
        types.append(_bucket(b).model_copy(update={"subtypes": subtypes or None}))
    years = sorted(
        (YearBucket(year=str(b["key"])[:4], count=int(b.get("doc_count") or 0))
         for b in _buckets(aggs.get("publication_date"))),
        key=lambda y: y.year,
        reverse=True,
    )[:10]  # fmt: skip
    return SearchFacets(
        resource_type=types,
        access_status=[_bucket(b) for b in _buckets(aggs.get("access_status") or aggs.get("access_right"))],
        file_type=[_bucket(b) for b in _buckets(aggs.get("file_type"))[:10]],
        subject=[_bucket(b) for b in _buckets(aggs.get("subject") or aggs.get("keywords"))[:10]],
        publication_year=years,
    )
