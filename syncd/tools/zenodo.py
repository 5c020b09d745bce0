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
"""

from __future__ import annotations

import json
import re
import time
from typing import Any
from urllib.parse import quote

from mcp.types import CallToolResult, TextContent, ToolAnnotations

from syncd import policy
from syncd.contracts.common import WithCache
from syncd.contracts.zenodo import (
    GetRecordView,
    ListFilesView,
    ListVersionsView,
    LookupVocabularyView,
    ReadFileView,
    SearchRecordsView,
)
from syncd.errors import (
    BudgetExhausted,
    InvalidInput,
    NotFound,
    UpstreamError,
    UpstreamRejected,
)
from syncd.kinds import (
    ZENODO_CONTAINER,
    ZENODO_ENTITY,
    ZENODO_SEARCH,
    ZENODO_VERSIONS,
    ZENODO_VOCAB,
)
from syncd.lookups import zenodo as lookups_zenodo
from syncd.normalize import zenodo_lists as lists
from syncd.normalize import zenodo_params
from syncd.normalize.zenodo import (
    download_url,
    miss_guidance,
    record_parts,
    record_url,
    record_view,
    tombstone_view,
)
from syncd.normalize.zenodo_citation import render_citation, resolve_style
from syncd.normalize.zenodo_cursor import continuations_for_record, decode_cursor, window_for
from syncd.normalize.zenodo_id import RecordRef, parse_record_ref
from syncd.normalize.zenodo_params import WINDOW_LIMIT, blank, window_check
from syncd.policy import Provenance
from syncd.services import Services
from syncd.store.content import document
from syncd.store.repo import StoredEntry
from syncd.tools.errors import error_result
from syncd.tools.params import (
    GetRecordArgs,
    ListFilesArgs,
    ListVersionsArgs,
    LookupVocabularyArgs,
    ReadFileArgs,
    SearchRecordsArgs,
    ToolSpec,
)
from syncd.upstream.zenodo import LEGACY_JSON

__all__ = [
    "TOOLS",
    "GetRecordResult",
    "get_record",
    "list_files",
    "list_versions",
    "lookup_vocabulary",
    "read_file",
    "render_record",
    "search_records",
]

# Upstream reasons as zenodo_get_record declares them.
RENAME = {
    "upstream_unavailable": "record_unavailable",
    "request_timeout": "record_unavailable",
    "malformed_response": "record_unavailable",
}
VOCAB_RENAME = {"request_timeout": "upstream_unavailable", "malformed_response": "upstream_unavailable"}
"""zenodo_lookup_vocabulary declares one reason for an unusable Zenodo (it fetches no record)."""
FILE_CAP = 25


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


def render_record(data: dict[str, Any]) -> str:
    """Markdown text for a record answer (the structured content stays the source of truth)."""
    lines: list[str] = []
    record = data.get("record")
    if record:
        title = (record.get("title") or "(untitled)").replace("<", "&lt;").replace(">", "&gt;")
        lines.append(f"# {title}")
        lines.append(f"Record {record['recid']}" + (f", DOI {record['doi']}" if record.get("doi") else ""))
        creators = record.get("creators") or []
        if creators:
            lines.append(
                f"Creators ({record.get('creator_count', len(creators))}): "
                + "; ".join(c.get("name", "?") for c in creators)
            )
        if record.get("description"):
            lines.append("")
            lines.append("Depositor-supplied text (untrusted):")
            lines.extend("> " + line for line in record["description"].splitlines())
    elif data.get("window"):
        win = data["window"]
        label = win["field"] + (f"[{win['index']}]" if win.get("index") is not None else "")
        lines.append(
            f"# {label}: {win['unit']} {win['offset']}-{win['offset'] + win['shown']} of {win['total']}"
        )
        if win.get("text"):
            lines.append("Depositor-supplied text (untrusted):")
            lines.extend("> " + line for line in win["text"].splitlines())
    else:
        lines.append(f"Not found ({data.get('miss_kind')}): {data.get('guidance', '')}")
        known = data.get("last_known")
        if known:
            title = (known["record"].get("title") or "(untitled)").replace("<", "&lt;").replace(">", "&gt;")
            lines.append(f"Last known metadata (stored {known['stored_at']}, not current): {title}")
    if data.get("citation"):
        lines.append(f"Citation ({data.get('citation_style')}):")
        lines.append(data["citation"])
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    cache = data.get("cache") or {}
    if cache:
        flag = f", upstream_error={cache['upstream_error']}" if cache.get("upstream_error") else ""
        lines.append(
            f"[cache: {cache['source']}, validated {cache['validated_at']}, stale={cache['stale']}{flag}]"
        )
    lines.append("")
    lines.append("```json")
    slim = {k: v for k, v in data.items() if k not in ("record", "window", "citation")}
    if record:
        slim["record"] = {k: v for k, v in record.items() if k != "description"}
    lines.append(json.dumps(slim, ensure_ascii=False))
    lines.append("```")
    return "\n".join(lines)


def _miss(kind: str, input_kind: str, ident: str, tombstone_body: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"found": False, "input_kind": input_kind, "miss_kind": kind}
    tomb = None
    if kind == "deleted":
        try:
            parsed = json.loads(tombstone_body) if tombstone_body else None
        except ValueError:
            parsed = None
        tomb = tombstone_view(parsed if isinstance(parsed, dict) else None)
        data["tombstone"] = tomb.model_dump(mode="json", exclude_none=True)
    data["guidance"] = miss_guidance(kind, ident, tomb)
    return data


def _last_known(known: lookups_zenodo.LastKnown) -> dict[str, Any]:
    """The ``last_known`` block of a deleted record's miss: its last stored metadata, marked as such."""
    stored_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(known.fetched_at))
    return {
        "note": "Zenodo has deleted this record (see tombstone); this is the last metadata syncd stored "
        f"of it, fetched {stored_at}, kept for reference only: it is not current.",
        "stored_at": stored_at,
        "record": record_view(known.body).model_dump(mode="json", exclude_none=True),
    }


FILE_RENAME = {**RENAME, "not_found": "record_not_found"}
"""The file tools: a missing record is an error, a failed ZIP listing is archive_unavailable."""


def _result(data: dict[str, Any], title: str) -> CallToolResult:
    """A successful tool result: short markdown text plus the structured content."""
    lines = [f"# {title}"]
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    cache = data.get("cache") or {}
    if cache:
        flag = f", upstream_error={cache['upstream_error']}" if cache.get("upstream_error") else ""
        lines.append(
            f"[cache: {cache['source']}, validated {cache['validated_at']}, stale={cache['stale']}{flag}]"
        )
    lines += [
        "",
        "```json",
        json.dumps({k: v for k, v in data.items() if k != "text"}, ensure_ascii=False),
        "```",
    ]
    if data.get("text"):
        fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", data["text"])), default=0) + 1)
        lines += [
            f"Untrusted file content from Zenodo record {data.get('recid')}:",
            fence,
            data["text"],
            fence,
        ]
    return CallToolResult(content=[TextContent(type="text", text="\n".join(lines))], structured_content=data)


# ---------------------------------------------------------------------------------------- get_record


def get_record(
    cache: Services,
    id: str,
    cursor: str | None = None,
    citation_style: str | None = None,
) -> CallToolResult:
    """Resolve one Zenodo deposit and return its full metadata, from the local store first.

    Accepts a record id, a Zenodo DOI, a concept DOI or concept record id (resolves to the latest
    version), another DOI deposited on Zenodo, or a zenodo.org / doi.org URL. Returns description,
    creators with ORCIDs and affiliations, license, access and embargo, funding, related
    identifiers, communities, version position, usage counts and the first 25 files; long fields
    are cut at display caps with their totals. Every cut except the file list (paged with
    zenodo_list_files) is listed in continuations with a cursor and the record id it is bound to;
    passing both back returns the next window of that field (8,000 characters of text, or the next
    page of entries) in place of the record. Optionally includes a formatted citation (bibtex,
    csl-json, apa, chicago-author-date, harvard-cite-them-right, ieee, modern-language-association,
    nature), rendered locally. A miss returns found: false with guidance (and the removal tombstone
    for a deleted record). ``cache`` says where the answer came from and how fresh it is. Errors:
    invalid_identifier, invalid_cursor, invalid_parameter, record_unavailable, rate_limited.
    """
    try:
        style = resolve_style(citation_style) if blank(citation_style) else None
        state = decode_cursor(cursor) if blank(cursor) else None
        ref = parse_record_ref(id)
        try:
            lookup = lookups_zenodo.get_record(cache, ref)
        except NotFound as exc:
            if exc.reason != "not_on_zenodo":
                raise
            data = _miss("not_on_zenodo", ref.input_kind, ref.doi or id)
        else:
            entry = lookup.entry
            if entry.status == "ok":
                body = document(entry)
                binding = (entry.content_hash or "")[:16]
                parts, description = record_parts(body)
                data = {
                    "found": True,
                    "input_kind": ref.input_kind,
                    "resolved_from": lookup.resolved_from or "version",
                }
                if state is not None:
                    window, conts, cap = window_for(state, parts, description, binding)
                    data["window"] = window.model_dump(mode="json", exclude_none=True)
                    data["shown"], data["cap"], data["truncated"] = window.shown, cap, bool(conts)
                    if conts:
                        data["continuations"] = [c.model_dump(mode="json", exclude_none=True) for c in conts]
                else:
                    _record_answer(data, body, parts, description, binding)
                fallback = lookups_zenodo.concept_fallback_note(cache.store, ref, entry)
                if fallback is not None:  # the concept route missed: the latest live version, said so
                    data["notice"] = " ".join(filter(None, [data.get("notice"), fallback]))
                if style is not None:
                    data["citation"] = render_citation(body, style)
                    data["citation_style"] = style
            else:
                kind = {"gone": "deleted", "not_found": "not_found", "restricted": "restricted"}[entry.status]
                data = _miss(kind, ref.input_kind, entry.key, entry.body)
                known = lookups_zenodo.last_known(cache.store, entry) if entry.status == "gone" else None
                if known is not None:
                    data["last_known"] = _last_known(known)
            data["cache"] = lookup.provenance.as_dict()
    except Exception as exc:
        return error_result(exc, RENAME)
    return CallToolResult(
        content=[TextContent(type="text", text=render_record(data))], structured_content=data
    )


def _record_answer(
    data: dict[str, Any], body: dict[str, Any], parts: Any, description: str, binding: str
) -> None:
    view = record_view(body)
    record = view.model_dump(mode="json", exclude_none=True)
    data["record"] = record
    files = record.get("files") or {}
    total = files.get("count")
    shown = files.get("shown", len(files.get("entries") or []))
    conts = continuations_for_record(parts, description, binding)
    data["shown"], data["cap"] = shown, FILE_CAP
    data["truncated"] = bool((total is not None and total > shown) or conts)
    if conts:
        data["continuations"] = [c.model_dump(mode="json", exclude_none=True) for c in conts]
    access = record.get("access") or {}
    if access.get("files") in ("restricted",) or access.get("embargo_active"):
        until = access.get("embargo_until")
        data["notice"] = (
            f"Files are embargoed until {until}; metadata only."
            if access.get("embargo_active") and until
            else "Files are restricted; metadata only."
        )
    elif total is not None and total > shown:
        data["notice"] = f"Showing {shown} of {total} files; page the rest with zenodo_list_files."


# ------------------------------------------------------------------------------------ search_records

_ROR = re.compile(r"^0[a-z0-9]{6}\d{2}$")
_COMMUNITY = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


def _community_uuid(cache: Services, raw: str) -> str:
    slug = re.sub(r"^(?:https?://)?(?:www\.)?zenodo\.org/communities/", "", raw.strip()).strip("/")
    if not _COMMUNITY.match(slug):
        raise InvalidInput(
            f"community {raw!r} is not a slug, UUID or community URL", reason="invalid_parameter"
        )
    for candidate in dict.fromkeys((slug, slug.lower())):
        page = lookups_zenodo.get_page(
            cache, ZENODO_ENTITY, f"/communities/{quote(candidate)}", {}, accept=LEGACY_JSON
        )
        if page.body and page.body.get("id"):
            return str(page.body["id"])
    raise InvalidInput(
        f"no Zenodo community {raw!r}",
        reason="unknown_community",
        hint="Find the slug with zenodo_lookup_vocabulary vocabulary=communities.",
    )


def _funder_ror(cache: Services, raw: str) -> str:
    value = raw.strip()
    ror = re.sub(r"^(?:https?://)?(?:www\.)?ror\.org/", "", value, flags=re.IGNORECASE).lower()
    if _ROR.match(ror):
        page = lookups_zenodo.get_page(cache, ZENODO_ENTITY, f"/funders/{ror}", {}, accept=LEGACY_JSON)
        if page.body and page.body.get("id"):
            return str(page.body["id"])
    else:
        doi = re.sub(r"^(?:doi:|https?://(?:dx\.)?doi\.org/)", "", value, flags=re.IGNORECASE).lower()
        if not doi.startswith("10.13039/"):
            raise InvalidInput(
                f"funder {raw!r} is not a ROR id, ROR URL or Crossref Funder DOI", reason="invalid_parameter"
            )
        page = lookups_zenodo.get_page(
            cache,
            ZENODO_VOCAB,
            "/funders",
            {"q": f"identifiers.identifier:{doi}", "size": "1"},
            accept=LEGACY_JSON,
        )
        hits = ((page.body or {}).get("hits") or {}).get("hits") or []
        if hits and hits[0].get("id"):
            return str(hits[0]["id"])
    raise InvalidInput(
        f"no Zenodo funder {raw!r}",
        reason="unknown_funder",
        hint="Find the funder with zenodo_lookup_vocabulary vocabulary=funders "
        "(names are never auto-picked).",
    )


def _total(body: dict[str, Any]) -> int:
    total = (body.get("hits") or {}).get("total", 0)
    if isinstance(total, dict):
        total = total.get("value", 0)
    return int(total) if isinstance(total, int | float) else 0


def search_records(
    cache: Services,
    query: str | None = None,
    resource_type: str | list[str] | None = None,
    community: str | None = None,
    funder: str | None = None,
    award: str | None = None,
    creator_orcid: str | None = None,
    file_type: str | list[str] | None = None,
    license: str | None = None,
    access_status: str | None = None,
    published_from: str | None = None,
    published_to: str | None = None,
    all_versions: bool = False,
    sort: str | None = None,
    page: int = 1,
    size: int = 10,
) -> CallToolResult:
    """Search Zenodo records, local-first; offline, from the local mirror's full-text index.

    Filters are composed into Zenodo's ``q`` (so totals agree with them): resource_type (ids such as
    dataset, software, publication-article), community (slug, UUID or URL; checked), funder (ROR id
    or Funder DOI; checked), award (<ror>::<number> or a number), creator_orcid, file_type,
    license, access_status, published_from/published_to (YYYY, YYYY-MM or YYYY-MM-DD; partial dates
    expanded). Up to 25 hits per page; page x size may not pass 10,000. Pages are cached by their
    canonical parameters (``ttl.search``) and their records stored. When Zenodo cannot be used, the
    answer comes from the full-text index over stored records (title, creators, description,
    keywords) with ``local: true`` and a notice. Errors: query_is_identifier, query_syntax,
    invalid_parameter, invalid_date_range, result_window_exceeded, unknown_community,
    unknown_funder, rate_limited (only when nothing local can answer).
    """
    try:
        req = zenodo_params.search_request(
            query, resource_type, file_type, license, access_status, published_from, published_to,
            creator_orcid, award, sort, page, size,
        )  # fmt: skip
        query, types, ftypes, lic, access = req.query, req.types, req.file_types, req.license, req.access
        pf, pt, orcid, sort_value, award_value = (
            req.published_from, req.published_to, req.orcid, req.sort, req.award
        )  # fmt: skip
        try:
            funder_id = _funder_ror(cache, funder) if blank(funder) else None
            q = lists.compose_query(
                query,
                resource_types=types,
                funder=funder_id,
                award=award_value,
                creator_orcid=orcid,
                file_types=ftypes,
                license=lic,
                access_status=access,
                published_from=pf,
                published_to=pt,
            )
            params = {"sort": sort_value, "page": str(page), "size": str(size)}
            if q:
                params["q"] = q
            if all_versions:
                params["all_versions"] = "true"
            if blank(community):
                params["communities"] = _community_uuid(cache, community or "")
            found = lookups_zenodo.get_page(cache, ZENODO_SEARCH, "/records", params)
        except (UpstreamError, BudgetExhausted) as exc:
            if isinstance(exc, UpstreamRejected):
                raise
            data = _local_search(
                cache, exc, query, types, lic, access, pf, pt, all_versions, sort_value, page, size
            )
            return _result(data, f"Zenodo search (local mirror): {query or 'all stored records'}")
        body = found.body or {}
        raw_hits = (body.get("hits") or {}).get("hits") or []
        hits = [
            lists.search_hit(h).model_dump(mode="json", exclude_none=True)
            for h in raw_hits
            if isinstance(h, dict)
        ]
        total = _total(body)
        data = _page_fields(total, page, size, hits, "hits")
        data.update(appliedSort=sort_value, allVersions=bool(all_versions))
        facets = lists.search_facets(body)
        if facets is not None:
            data["facets"] = facets.model_dump(mode="json", exclude_none=True)
        if q:
            data["effectiveQuery"] = q
        data["notice"] = _search_notice(total, page, size, len(hits), q)
        if not data["notice"]:
            del data["notice"]
        data["cache"] = found.provenance.as_dict()
    except Exception as exc:
        return error_result(exc, {**RENAME, "upstream_unavailable": "query_failed"})
    return _result(data, f"Zenodo search: {q or 'all records'}")


def _page_fields(total: int, page: int, size: int, items: list[Any], name: str) -> dict[str, Any]:
    reachable = min(total, WINDOW_LIMIT)
    has_more = page * size < reachable
    data: dict[str, Any] = {
        "total": total,
        "reachable": reachable,
        "page": page,
        "size": size,
        "has_more": has_more,
    }
    if has_more:
        data["next_page"] = page + 1
    data[name] = items
    data.update(truncated=has_more, shown=len(items), cap=size, totalCount=total)
    return data


def _search_notice(total: int, page: int, size: int, shown: int, q: str | None) -> str | None:
    if total == 0:
        return (
            "No record matched. Drop narrowing filters, loosen AND/quotes, widen dates, or set all_versions; "
            "check filter ids with zenodo_lookup_vocabulary."
        )
    if shown == 0:
        return f"Page {page} is past the last page ({-(-min(total, WINDOW_LIMIT) // size)})."
    notes = []
    if total > WINDOW_LIMIT:
        notes.append(f"Only the first 10,000 of {total} hits are reachable; narrow the query.")
    if page * size < min(total, WINDOW_LIMIT):
        notes.append(f"Showing {shown} of {total}; call again with page {page + 1}.")
    return " ".join(notes) or None


def _local_search(
    cache: Services,
    exc: UpstreamError | BudgetExhausted,
    query: str | None,
    types: list[str],
    lic: str | None,
    access: str | None,
    pf: str | None,
    pt: str | None,
    all_versions: bool,
    sort_value: str,
    page: int,
    size: int,
) -> dict[str, Any]:
    """The offline answer: stored records from the full-text index, filtered locally, paged."""
    matched: list[tuple[StoredEntry, dict[str, Any]]] = []
    for entry in lookups_zenodo.local_search(cache.store, query or ""):
        try:
            body = document(entry)
            hit = lists.search_hit(body)
        except Exception:  # a stored body that does not normalize is skipped
            continue
        if not all_versions and hit.is_latest is False:
            continue
        rid = hit.resource_type.id if hit.resource_type else ""
        if types and not any(rid == t or rid.startswith(t + "-") for t in types):
            continue
        if lic and lic not in hit.license_ids:
            continue
        if access and hit.access.status != access:
            continue
        date = hit.publication_date or ""
        if (pf and date[:10] < pf) or (pt and date[:10] > pt):
            continue
        matched.append((entry, hit.model_dump(mode="json", exclude_none=True)))
    if sort_value in ("newest", "oldest"):
        matched.sort(key=lambda m: m[1].get("publication_date") or "", reverse=sort_value == "newest")
    window = matched[(page - 1) * size : page * size]
    data = _page_fields(len(matched), page, size, [h for _, h in window], "hits")
    data.update(appliedSort=sort_value, allVersions=bool(all_versions), local=True)
    data["notice"] = (
        f"Zenodo could not be used ({exc.reason}); these are {len(matched)} matching records from "
        "syncd's local mirror (full-text index over stored titles, creators, descriptions and "
        "keywords), not Zenodo's search. "
        "Community, funder, award, ORCID and file-type filters are not applied offline."
    )
    now = time.time()
    validated = min((e.validated_at for e, _ in window), default=now)
    fetched = min((e.fetched_at for e, _ in window), default=now)
    data["cache"] = Provenance("store-stale", fetched, validated, True, exc.reason).as_dict(now)
    return data


# ------------------------------------------------------------------------------------- list_versions


def _resolve_ok(cache: Services, ref: RecordRef) -> tuple[StoredEntry, Any]:
    """The stored record for ``ref`` or NotFound (record_not_found / record_deleted) for the file tools."""
    lookup = lookups_zenodo.get_record(cache, ref)
    entry = lookup.entry
    if entry.status == "gone":
        raise NotFound(f"record {entry.key} was deleted from Zenodo", reason="record_deleted")
    if entry.status != "ok":
        raise NotFound(f"no readable Zenodo record {entry.key} ({entry.status})", reason="record_not_found")
    return entry, lookup


def list_versions(cache: Services, id: str, page: int = 1, size: int = 25) -> CallToolResult:
    """List every version of a Zenodo record's series, newest first, from the local store first.

    ``id`` takes any form zenodo_get_record takes (a concept id lists its series). Returns the
    concept id and DOI, total versions, the latest version's id and one page (size 1-25) of versions
    with their DOIs, labels, dates, file counts and this version's unique views/downloads. Version
    pages are cached (``ttl.search``) and their records stored; the concept -> latest mapping is
    refreshed from them. A miss returns found: false with guidance (tombstone for a deleted
    record). Errors: invalid_identifier, invalid_parameter, result_window_exceeded, record_unavailable,
    rate_limited.
    """
    try:
        ref = parse_record_ref(id)
        window_check(page, size)
        params = {"page": str(page), "size": str(size), "sort": "version"}
        recid = ref.recid
        concept = cache.store.concept_latest(recid) if recid else None
        target = concept[0] if concept else recid
        listing = None
        if target is not None:
            listing = lookups_zenodo.get_page(cache, ZENODO_VERSIONS, f"/records/{target}/versions", params)
        if listing is None or listing.body is None or _total(listing.body) == 0:
            try:
                lookup = lookups_zenodo.get_record(cache, ref)
            except NotFound as exc:
                if exc.reason != "not_on_zenodo":
                    raise
                data = _miss("not_on_zenodo", ref.input_kind, ref.doi or id)
                data.update(_page_fields(0, page, size, [], "versions"))
                for k in ("total", "reachable"):
                    data.pop(k)
                return _result(data, f"Versions of {id}: not on Zenodo")
            entry = lookup.entry
            if entry.status != "ok":
                kind = {"gone": "deleted", "not_found": "not_found", "restricted": "restricted"}[entry.status]
                data = _miss(kind, ref.input_kind, entry.key, entry.body)
                data.update(_page_fields(0, page, size, [], "versions"))
                for k in ("total", "reachable"):
                    data.pop(k)
                data["cache"] = lookup.provenance.as_dict()
                return _result(data, f"Versions of {id}: {kind}")
            if entry.key != target or listing is None or listing.body is None:
                listing = lookups_zenodo.get_page(
                    cache, ZENODO_VERSIONS, f"/records/{entry.key}/versions", params
                )
        body = listing.body or {}
        raw = [h for h in (body.get("hits") or {}).get("hits") or [] if isinstance(h, dict)]
        versions = [lists.version_entry(h) for h in raw]
        total = _total(body)
        data = {"found": True, "input_kind": ref.input_kind}
        if raw:
            parts, _ = record_parts(raw[0])
            if parts.concept_recid:
                data["concept_recid"] = parts.concept_recid
            if parts.concept_doi:
                data["concept_doi"] = parts.concept_doi
        data["total_versions"] = total
        latest = next((v.recid for v in versions if v.is_latest), None)
        if latest is None and page == 1 and versions:
            latest = versions[0].recid
        if latest is None and data.get("concept_recid"):
            known = cache.store.concept_latest(str(data["concept_recid"]))
            latest = known[0] if known else None
        if latest:
            data["latest_recid"] = latest
        paged = _page_fields(
            total, page, size, [v.model_dump(mode="json", exclude_none=True) for v in versions], "versions"
        )
        paged.pop("total")
        paged.pop("reachable")
        data.update(paged)
        if not versions and total:
            data["notice"] = f"Page {page} is past the last page ({-(-total // size)})."
        elif data["has_more"]:
            data["notice"] = f"Showing {len(versions)} of {total} versions; call again with page {page + 1}."
        data["cache"] = listing.provenance.as_dict()
    except Exception as exc:
        return error_result(exc, RENAME)
    return _result(data, f"Versions of {id}")


# ---------------------------------------------------------------------------------------- list_files


def _file_by_key(cache: Services, parts: Any, key: str) -> Any:
    """The file ``key`` of the record, from its body or else from Zenodo's files endpoint.

    The endpoint (stored) is read only when the body lists fewer files than it counts; raises
    ``file_not_found`` when neither lists ``key``.
    """
    found = next((f for f in parts.files or [] if f.key == key), None)
    if found is None and parts.files_count is not None and parts.files_count > len(parts.files or []):
        listed = lookups_zenodo.record_files(cache, parts.recid).files
        found = next((f for f in listed if f.key == key), None)
    if found is None:
        raise NotFound(
            f"record {parts.recid} has no file {key!r}",
            reason="file_not_found",
            hint="List the exact keys with zenodo_list_files.",
        )
    return found


def _container(cache: Services, recid: str, key: str) -> Any:
    path = download_url(recid, key).split("/api", 1)[1].removesuffix("/content") + "/container"
    try:
        page = lookups_zenodo.get_page(cache, ZENODO_CONTAINER, path, {}, accept=LEGACY_JSON)
    except UpstreamError as exc:
        if exc.reason in ("rate_limited",):
            raise
        raise UpstreamError(
            f"Zenodo could not list the archive {key!r} ({exc.reason}); "
            f"download it from {download_url(recid, key)}",
            reason="archive_unavailable",
        ) from exc
    if page.body is None:
        raise NotFound(f"Zenodo has no listing of {key!r}", reason="file_not_found")
    return page


def _manifest(
    cache: Services, parts: Any, provenance: Provenance, data: dict[str, Any], notes: list[str]
) -> tuple[list[Any], Provenance]:
    """The record's files, completed from Zenodo's files endpoint when the body lists fewer than it counts.

    Sets ``listed_from`` and, when files stay unlisted, ``unlisted``, ``files_list_url`` and a notice,
    so the totals never contradict ``file_count``.
    """
    files = list(parts.files or [])
    count = parts.files_count
    if count is None or len(files) >= count:
        return files, provenance
    listing = lookups_zenodo.record_files(cache, parts.recid)
    if len(listing.files) > len(files):
        files = listing.files
        data["listed_from"] = "files_endpoint"
        provenance = policy.merged(provenance, listing.provenance)
    else:
        data["listed_from"] = "record"
    if len(files) < count:
        missing = count - len(files)
        url = lookups_zenodo.files_url(parts.recid)
        data.update(unlisted=missing, files_list_url=url)
        why = f" (the files endpoint could not be read: {listing.error})" if listing.error else ""
        notes.append(
            f"{missing:,} of the record's {count:,} files are not listed here{why}: Zenodo's record answer "
            f"lists {len(parts.files or []):,}. The full list is at {url}."
        )
    return files, provenance


def list_files(
    cache: Services,
    id: str,
    archive_key: str | None = None,
    key_contains: str | None = None,
    offset: int = 0,
    limit: int = 50,
) -> CallToolResult:
    """List a Zenodo record's files (the full manifest, paged locally) or the members of one ZIP.

    The manifest comes from the stored record (no extra request); each entry says whether
    zenodo_read_file can preview it (previewable) and whether it is a ZIP (listable). With
    archive_key (the exact key of a .zip), lists the archive's members from Zenodo's container
    listing (cached, capped upstream at 1,000 nodes). key_contains filters keys case-insensitively
    before paging (offset, limit 1-200). Errors: invalid_identifier, invalid_parameter, record_not_found,
    record_deleted, file_not_found, not_an_archive, archive_unavailable, record_unavailable,
    rate_limited.
    """
    try:
        ref = parse_record_ref(id)
        entry, lookup = _resolve_ok(cache, ref)
        parts, _ = record_parts(document(entry))
        access = parts.access
        needle = (blank(key_contains) or "").lower()
        data: dict[str, Any] = {
            "recid": parts.recid,
            "kind": "archive" if blank(archive_key) else "manifest",
            "access_status": access.status if access else "unknown",
        }
        if access and access.files:
            data["files_access"] = access.files
        if access and access.embargo_until:
            data["embargo_until"] = access.embargo_until
        data["files_enabled"] = parts.files_enabled
        if needle:
            data["key_contains"] = key_contains
        notes: list[str] = []
        provenance = lookup.provenance
        if blank(archive_key):
            key = blank(archive_key) or ""
            file = _file_by_key(cache, parts, key)
            if not lists.is_listable(file.key, file.mimetype):
                raise InvalidInput(f"{key!r} is not a ZIP archive", reason="not_an_archive")
            page = _container(cache, parts.recid, key)
            provenance = page.provenance
            listing = page.body or {}
            members_all = [m for m in listing.get("entries") or [] if isinstance(m, dict) and m.get("key")]
            matched = [m for m in members_all if needle in str(m["key"]).lower()]
            window = matched[offset : offset + limit]
            data["archive"] = {
                "key": key,
                **({"size": file.size} if file.size is not None else {}),
                "download_url": file.download_url,
                "listed_members": len(members_all),
                "upstream_truncated": bool(listing.get("truncated")),
                "directory_count": len(listing.get("directories") or []),
            }
            data["members"] = [
                {
                    k: v
                    for k, v in {
                        "path": m["key"],
                        "size": m.get("size"),
                        "compressed_size": m.get("compressed_size"),
                        "mimetype": m.get("mimetype"),
                        "previewable": lists.preview_mode(str(m["key"]), m.get("mimetype")) != "binary",
                    }.items()
                    if v is not None
                }
                for m in window
            ]
            if listing.get("truncated"):
                notes.append(
                    "Zenodo lists at most 1,000 entries of an archive; read a member by its path directly "
                    "with zenodo_read_file archive_member."
                )
        else:
            if parts.files_count is not None:
                data["file_count"] = parts.files_count
            if parts.files_total_bytes is not None:
                data["total_bytes"] = parts.files_total_bytes
            files, provenance = _manifest(cache, parts, provenance, data, notes)
            matched = [f for f in files if needle in f.key.lower()]
            window = matched[offset : offset + limit]
            data["entries"] = [lists.file_entry(f).model_dump(mode="json", exclude_none=True) for f in window]
            if access and (access.files == "restricted" or access.embargo_active):
                notes.append(
                    f"Files are embargoed until {access.embargo_until}; only their names may be listed."
                    if access.embargo_active and access.embargo_until
                    else "Files are restricted; their content cannot be read anonymously."
                )
            elif not parts.files_enabled:
                notes.append("This is a metadata-only deposit: it has no files.")
        has_more = offset + len(window) < len(matched)
        data.update(offset=offset, limit=limit, matched=len(matched), has_more=has_more)
        if has_more:
            data["next_offset"] = offset + len(window)
            notes.append(
                f"Showing {len(window)} of {len(matched)}; call again with offset {offset + len(window)}."
            )
        if needle and not matched:
            notes.append(f"No key contains {key_contains!r}.")
        elif matched and offset >= len(matched):
            notes.append(f"offset {offset} is past the last entry ({len(matched)}).")
        truncated = has_more or bool(data.get("unlisted"))  # files Zenodo did not list are missing too
        data.update(truncated=truncated, shown=len(window), cap=limit, totalCount=len(matched))
        if notes:
            data["notice"] = " ".join(notes)
        data["cache"] = provenance.as_dict()
    except Exception as exc:
        return error_result(exc, FILE_RENAME)
    return _result(data, f"Files of record {data['recid']}")


# ------------------------------------------------------------------------------------------ read_file


def read_file(
    cache: Services,
    id: str,
    key: str,
    archive_member: str | None = None,
    offset_bytes: int = 0,
    max_bytes: int = 16_384,
) -> CallToolResult:
    """Read a text preview of one file of a Zenodo record (or of one member of a ZIP), by byte range.

    Text files (text/* and structured MIME types, ~45 text extensions, extensionless files that
    decode as UTF-8) are returned as text; binaries are refused without being read (not_text). The
    excerpt ends at the last line break (or complete UTF-8 character) when more follows;
    next_offset continues it. Previews read once are kept locally (up to
    ``zenodo.preview_bytes_per_file`` bytes per file, ``zenodo.preview_total_bytes`` in total, least
    recently read evicted) and serve offline. Errors: invalid_identifier, invalid_parameter, record_not_found,
    record_deleted, file_not_found, not_an_archive, member_not_found, member_offset_unsupported,
    offset_out_of_range, archive_unavailable, record_unavailable, rate_limited.
    """
    try:
        ref = parse_record_ref(id)
        entry, lookup = _resolve_ok(cache, ref)
        parts, _ = record_parts(document(entry))
        file = _file_by_key(cache, parts, key)
        member = blank(archive_member)
        access = parts.access
        data: dict[str, Any] = {"recid": parts.recid, "key": key}
        if member:
            data["archive_member"] = member
        rights = [{k: v for k, v in {"id": r.id, "title": r.title}.items() if v} for r in parts.rights or []]
        base = {
            "rights": rights,
            "record_url": record_url(parts.recid),
            "download_url": file.download_url,
        }
        if access and access.files:
            base["files_access"] = access.files
        size, mimetype, md5 = file.size, file.mimetype, file.md5
        path = file.download_url.split("/api", 1)[1]
        if member:
            if offset_bytes:
                raise InvalidInput(
                    "offset_bytes must be 0 with archive_member", reason="member_offset_unsupported"
                )
            if not lists.is_listable(file.key, file.mimetype):
                raise InvalidInput(f"{key!r} is not a ZIP archive", reason="not_an_archive")
            listing = _container(cache, parts.recid, key).body or {}
            found = next((m for m in listing.get("entries") or [] if m.get("key") == member), None)
            if found is None and not listing.get("truncated"):
                raise NotFound(f"{key!r} has no member {member!r}", reason="member_not_found")
            size = found.get("size") if found else None
            mimetype = found.get("mimetype") if found else None
            md5 = None
            path = (
                path.removesuffix("/content")
                + "/container/"
                + "/".join(quote(s, safe="") for s in member.split("/"))
            )
        if md5:
            data["md5"] = md5
        if mimetype:
            data["mimetype"] = mimetype
        if size is not None:
            data["file_size"] = size
        provenance = lookup.provenance
        mode = lists.preview_mode(member or key, mimetype)
        restricted = access is not None and (access.files == "restricted" or access.embargo_active)
        status, notice, text, kept, replacement = "text", None, None, 0, 0
        if restricted:
            status, notice = (
                "restricted",
                "File access is restricted or embargoed; its content cannot be read.",
            )
        elif mode == "binary":
            status, notice = (
                "not_text",
                f"{member or key} is not a text file ({mimetype or 'unknown type'}); download it.",
            )
        elif size == 0:
            status, notice = "empty", "The file is empty."
        elif size is not None and offset_bytes >= size:
            raise InvalidInput(
                f"offset_bytes {offset_bytes} is at or past the file size {size}",
                reason="offset_out_of_range",
            )
        if status == "text":
            blob_key = lookups_zenodo.preview_key(parts.recid, key, file.md5, member)
            try:
                raw, total, source, upstream_error = lookups_zenodo.read_preview(
                    cache,
                    parts.recid,
                    path,
                    blob_key,
                    offset=offset_bytes,
                    length=max_bytes,
                    file_size=size,
                    ranged=not member,
                )
            except NotFound as exc:
                if exc.reason != "restricted":
                    raise
                raw, total, source, upstream_error = b"", size, "upstream", None
                status, notice = "restricted", "Zenodo refused the file (HTTP 403)."
            if status == "text":
                if total is not None and "file_size" not in data:
                    data["file_size"] = total
                end = offset_bytes + len(raw)
                more = end < total if total is not None else len(raw) >= max_bytes
                if mode == "sniff" and offset_bytes == 0 and not lists.sniff_is_text(raw):
                    status, notice = (
                        "not_text",
                        "The file has no text extension and does not decode as UTF-8.",
                    )
                else:
                    text, kept, replacement = lists.decode_excerpt(raw, offset_bytes, more)
                    if text is None:
                        status, notice = "not_text", "The file holds NUL bytes: it is binary."
                    elif not raw:
                        status = "empty"
                provenance = policy.of_bytes(provenance, source, upstream_error, time.time())
                if source != "upstream" and upstream_error:
                    notice = (
                        f"Served from the locally kept preview; Zenodo could not be used ({upstream_error})."
                    )
                if status == "text" and more:
                    hint = (
                        f"The member is {total} bytes; pass max_bytes {min(total, 65_536)} or download it."
                        if member and total
                        else f"More follows; call again with offset_bytes {offset_bytes + kept}."
                    )
                    notice = f"{notice} {hint}" if notice else hint
        data["status"] = status
        if text is not None and status == "text":
            data["text"] = text
        data["offset_bytes"] = offset_bytes
        data["bytes_returned"] = kept
        has_more = (
            status == "text"
            and kept > 0
            and (data.get("file_size") is not None and offset_bytes + kept < data["file_size"])
        )
        if has_more and not member:
            data["next_offset"] = offset_bytes + kept
        data["has_more"] = bool(has_more)
        data["replacement_chars"] = replacement
        data.update(base)
        if notice:
            data["notice"] = notice
        data["cache"] = provenance.as_dict()
    except Exception as exc:
        return error_result(exc, FILE_RENAME)
    return _result(data, f"{key}{' :: ' + member if member else ''} (record {data['recid']})")


# ----------------------------------------------------------------------------------- lookup_vocabulary

_VOCABS = {
    "communities": "communities",
    "community": "communities",
    "funders": "funders",
    "funder": "funders",
    "awards": "awards",
    "award": "awards",
    "grants": "awards",
    "grant": "awards",
    "licenses": "licenses",
    "license": "licenses",
    "licences": "licenses",
    "licence": "licenses",
    "resourcetypes": "resource_types",
    "resourcetype": "resource_types",
}
_VOCAB_PATHS = {
    "communities": "/communities",
    "funders": "/funders",
    "awards": "/awards",
    "licenses": "/vocabularies/licenses",
}
_ESCAPE = re.compile(r"([\\/:\[\]{}()^~!?])")


def lookup_vocabulary(
    cache: Services,
    vocabulary: str,
    query: str | None = None,
    funder: str | None = None,
    page: int = 1,
    size: int = 10,
) -> CallToolResult:
    """Look up the ids that zenodo_search_records filters take.

    Vocabularies: communities, funders, awards, licenses or resource_types (singular forms and
    grant/grants accepted).

    Each entry names the search parameter it feeds (filter_param) and the value to pass
    (filter_value), with a label and per-vocabulary details (slug/uuid; ROR, Funder DOI, country;
    award number, acronym, funder, dates; license URL, OSI approval; resource type parent and
    search value). Pages are cached (``ttl.entity``); resource_types is a static table and makes no
    request. Errors: invalid_parameter, funder_only_for_awards, unknown_funder,
    result_window_exceeded, rate_limited, upstream_unavailable.
    """
    try:
        vocab = _VOCABS.get(lists.fold(vocabulary))
        if vocab is None:
            raise InvalidInput(
                "vocabulary must be communities, funders, awards, licenses or resource_types",
                reason="invalid_parameter",
            )
        query = blank(query)
        if blank(funder) and vocab != "awards":
            raise InvalidInput("funder narrows awards only", reason="funder_only_for_awards")
        window_check(page, size)
        data: dict[str, Any] = {"vocabulary": vocab}
        if query:
            data["query"] = query
        if vocab == "resource_types":
            tokens = [lists.fold(t) for t in re.findall(r"\w+", query or "")]
            rows = []
            for rid, (kind, sub, label) in lists.RESOURCE_TYPE_IDS.items():
                hay = {lists.fold(x) for x in re.findall(r"\w+", f"{rid} {label} {kind} {sub or ''}")}
                if all(any(t in h for h in hay) for t in tokens):
                    row = {"filter_param": "resource_type", "filter_value": rid, "label": label}
                    if sub:
                        row["parent_type"] = kind
                    row["search_value"] = f"{kind}::{rid}"
                    rows.append(row)
            total, entries = len(rows), rows[(page - 1) * size : page * size]
            now = time.time()
            provenance = Provenance("store", now, now, stale=False).as_dict(now)
        else:
            params = {"page": str(page), "size": str(size)}
            if query:
                params["q"] = _ESCAPE.sub(r"\\\1", query)
            if blank(funder):
                params["funders"] = _funder_ror(cache, funder or "")
            found = lookups_zenodo.get_page(
                cache, ZENODO_VOCAB, _VOCAB_PATHS[vocab], params, accept=LEGACY_JSON
            )
            body = found.body or {}
            hits = [h for h in (body.get("hits") or {}).get("hits") or [] if isinstance(h, dict)]
            total = _total(body)
            entries = [lists.vocabulary_entry(vocab, h) for h in hits]
            provenance = found.provenance.as_dict()
        paged = _page_fields(total, page, size, entries, "entries")
        paged.pop("reachable")
        data.update(paged)
        if total == 0:
            data["notice"] = {
                "communities": "No community matched; try a shorter name or its zenodo.org slug.",
                "funders": "No funder matched; try the acronym, another spelling, or the ROR id.",
                "awards": "No award matched; try the grant number or acronym, or narrow by funder.",
                "licenses": "No license matched; try the SPDX id (cc-by-4.0, mit).",
                "resource_types": "No resource type matched; omit query to list all 43.",
            }[vocab]
        elif vocab == "funders" and total > 1 and query:
            data["notice"] = "Several funders share names across countries; check country before filtering."
        if data["has_more"]:
            more = f"Showing {len(entries)} of {total}; call again with page {page + 1}."
            data["notice"] = f"{data['notice']} {more}" if data.get("notice") else more
        data["cache"] = provenance
    except Exception as exc:
        return error_result(exc, VOCAB_RENAME)
    return _result(data, f"Zenodo {data.get('vocabulary', vocabulary)}: {query or 'browse'}")


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
