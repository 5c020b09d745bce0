"""``crossref_get_works``: up to 100 DOIs in one call, each answered local-first with its update flags.

The lookup is :func:`syncd.crossref.lookups_batch.get_works` (stored works answered from the store,
the rest fetched 50 per ``filter=doi:`` list request); this module shapes its items
(:func:`item_data`, shared with ``syncd check``), tallies them and renders the compact text block.
Each item carries its own ``cache`` block; a miss or an input that is not a DOI is that item's
``reason``, never the call's error. The answer is cut to ``answer_max_chars`` by
:mod:`syncd.tools.fit` (``items``, continued by ``offset``; :func:`resume_items`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations

from syncd.contracts.common import WithCache
from syncd.crossref.args import GetWorksArgs
from syncd.crossref.contracts_lists import GetWorksView, SummaryAuthor
from syncd.crossref.lookups import line_of
from syncd.crossref.lookups_batch import WorkItem, get_works
from syncd.crossref.views import work_view
from syncd.crossref.views_flags import update_flags
from syncd.crossref.views_lines import AUTHOR_TOTAL, item_fields
from syncd.road.policy import UNREACHABLE_REASON, iso, unstored_sentence
from syncd.road.services import Judged, Services
from syncd.tools.errors import client_message, error_result
from syncd.tools.fit import Cut, Fit, plain
from syncd.tools.params import ToolSpec

__all__ = [
    "SHOWN_AUTHORS",
    "TOOLS",
    "GetWorksResult",
    "counts_of",
    "get_works_tool",
    "item_data",
    "render_works",
    "resume_items",
]

SHOWN_AUTHORS = 3
"""Authors named per item (``authorCount`` gives the total; crossref_get_work pages them)."""


class GetWorksResult(GetWorksView, WithCache):
    """``crossref_get_works`` output: the items (each with its own ``cache``); no top-level ``cache``."""


def _found_data(item: WorkItem) -> dict[str, Any]:
    """A found item's fields (all of them list-line fields).

    From the work's stored list line when it carries one (:func:`~syncd.crossref.lookups.line_of`; its
    authors cut at 500 with the full count), else from its parsed body.
    """
    assert item.lookup is not None
    message = line_of(item.lookup.entry)
    view = work_view(item_fields(message), offset=0, limit=SHOWN_AUTHORS)
    total = message.get(AUTHOR_TOTAL)
    author_count = total if isinstance(total, int) and total > (view.authorCount or 0) else view.authorCount
    flags = update_flags(view.doi, view.updatedBy, view.updateTo)
    data: dict[str, Any] = {
        "input": item.input,
        "doi": view.doi,
        "found": True,
        "title": view.title,
        "type": view.type,
        "authors": [
            SummaryAuthor(given=a.given, family=a.family, name=a.name).model_dump(exclude_none=True)
            for a in view.authors or []
        ]
        or None,
        "authorCount": author_count,
        "published": view.published.model_dump(exclude_none=True) if view.published else None,
        "containerTitle": view.containerTitle,
        "publisher": view.publisher,
        "flags": flags or None,
        "updatedBy": [u.model_dump(mode="json", exclude_none=True) for u in view.updatedBy or []] or None,
        "updateTo": [u.model_dump(mode="json", exclude_none=True) for u in view.updateTo or []] or None,
        "notice": view.notice.split("\n", 1)[0] if view.updatedBy and view.notice else None,
        "cache": item.lookup.provenance.as_dict(),
    }
    return {k: v for k, v in data.items() if v is not None}


def item_data(item: WorkItem, verdict: Judged | None = None) -> dict[str, Any]:
    """One ``WorksItem`` (JSON form, absent fields dropped) for a batch item: found, miss or error.

    ``verdict``: its retraction verdict (:data:`syncd.road.services.Verdicts`), given as ``retraction``.
    """
    data = _item_data(item)
    if verdict is not None:
        data["retraction"] = verdict.as_dict(iso)
        record = item.agency_record
        if record is not None:  # what the verdict rests on: that agency's record too
            seen = "seen" if record.get("found") else "not_found" if record.get("missReason") else "unseen"
            data["retraction"]["restsOn"]["agencyRecord"] = f"{record.get('agency')}: {seen}"
    return data


def _item_data(item: WorkItem) -> dict[str, Any]:
    if item.lookup is not None:
        return _found_data(item)
    exc = item.error
    assert exc is not None
    cache = item.miss_provenance.as_dict() if item.miss_provenance is not None else exc.data.get("cache")
    data: dict[str, Any] = {
        "input": item.input,
        "doi": item.parsed.doi if item.parsed is not None else None,
        "found": False,
        "reason": exc.reason,
        "message": client_message(exc),
        "hint": exc.hint,
        "registrationAgency": exc.data.get("registrationAgency"),
        "zenodoRecordId": exc.data.get("zenodoRecordId"),
        "retryAfterS": exc.data.get("retry_after_s"),
        "cache": cache if isinstance(cache, dict) else None,
        "agencyRecord": item.agency_record,
    }
    return {k: v for k, v in data.items() if v is not None}


def counts_of(items: list[dict[str, Any]]) -> dict[str, int]:
    """The ``WorksCounts`` of item dicts (:func:`item_data`).

    An item counts at a level when Crossref's ``updatedBy`` flags it so, or when its retraction verdict
    (``retraction.severity``) is that level: a retraction only the Retraction Watch data knows counts
    as retracted, so the header never says ``retracted 0`` above an item judged retracted.
    """
    flags = [_levels(i) for i in items]
    reasons = [i.get("reason") for i in items if not i["found"]]
    return {
        "found": sum(1 for i in items if i["found"]),
        "notFound": reasons.count("doi_not_found"),
        "invalid": reasons.count("invalid_parameter"),
        "failed": sum(1 for r in reasons if r not in ("doi_not_found", "invalid_parameter")),
        "retracted": sum("retracted" in f for f in flags),
        "corrected": sum("corrected" in f for f in flags),
        "expressionOfConcern": sum("expression_of_concern" in f for f in flags),
    }


def _levels(item: dict[str, Any]) -> set[str]:
    """An item's levels: its ``flags``, and its verdict's severity when it is a counted level."""
    levels = set(item.get("flags") or ())
    severity = (item.get("retraction") or {}).get("severity")
    if severity in ("retracted", "corrected", "expression_of_concern"):
        levels.add(str(severity))
    return levels


def _item_line(item: dict[str, Any]) -> str:
    if not item["found"]:
        agency = item.get("registrationAgency")
        record = item.get("agencyRecord") or {}
        note = ""
        if record.get("found"):
            keys = ("resourceTypeGeneral", "publicationYear", "state")
            shown = [str(record.get("title") or "(untitled)")]
            shown += [str(record[k]) for k in keys if record.get(k)]
            note = f" (registered with {agency}: " + " | ".join(shown)
            note += f" [{(record.get('cache') or {}).get('source')}])"
        elif record.get("missReason"):
            note = f" (registered with {agency}; {agency} holds no public record: {record['missReason']})"
        elif agency and agency.lower() != "crossref":
            note = f" (registered with {agency}, not Crossref)"
        elif agency:
            note = " (a Crossref prefix: mistyped, or not yet indexed)"
        return f"- {item['reason']}: {item['input']}{note}" + _verdict_text(item)
    bits = [item.get("title") or "(untitled)", f"doi:{item['doi']}"]
    year = (item.get("published") or {}).get("year")
    if year:
        bits.append(str(year))
    if item.get("containerTitle"):
        bits.append(item["containerTitle"])
    flags = ", ".join(f.upper().replace("_", " ") for f in item.get("flags") or [])
    source = (item.get("cache") or {}).get("source")
    line = "- " + (f"[{flags}] " if flags else "") + " | ".join(bits) + (f" [{source}]" if source else "")
    return line + _verdict_text(item)


def _verdict_text(item: dict[str, Any]) -> str:
    """`` verdict: <severity> (<sources>)``, or the unknown's reason; empty without a verdict."""
    v = item.get("retraction")
    if not v:
        return ""
    if v["severity"] == "unknown":
        return f" verdict: unknown ({v.get('reason')})"
    sources = sorted({s["source"] for s in v["signals"] if s["level"] == v["severity"]})
    return f" verdict: {v['severity']}" + (f" ({', '.join(sources)})" if sources else "")


def render_works(data: dict[str, Any]) -> str:
    """Text of a crossref_get_works answer: tallies, one line per item, continuation, notice."""
    c = data["counts"]
    lines = [
        f"# Crossref works: {data['requested']} DOIs",
        f"found {c['found']}, not found {c['notFound']}, invalid {c['invalid']}, failed {c['failed']}; "
        f"retracted {c['retracted']}, corrected {c['corrected']}, "
        f"expression of concern {c['expressionOfConcern']}",
    ]
    rw = data.get("retractionWatch")
    lines.append(
        f"Retraction Watch version {rw['sha256'][:12]} ({rw['rows']} rows, imported {rw['importedAt']})"
        if rw
        else "No Retraction Watch data imported: verdicts rest on Crossref's records alone."
    )
    lines += [_item_line(i) for i in data["items"]]
    if data.get("nextOffset") is not None:
        lines.append(f"nextOffset: {data['nextOffset']}")
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    return "\n".join(lines)


def resume_items(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    """Continuation of a cut ``items`` list (:class:`syncd.tools.fit.Cut`): ``nextOffset`` = offset + kept."""
    start = int(args.get("offset") or 0)
    data.update(nextOffset=start + kept, returned=kept)
    return (
        f"Showing DOIs {start + 1}-{start + kept} of {data.get('requested', total)}; call again with the "
        f"same dois and offset={start + kept} for the rest (already stored: no new upstream request)"
    )


def _retry_notice(items: list[dict[str, Any]]) -> str:
    """The sentence naming the DOIs upstream could not answer now and how to retry them."""
    reasons = sorted({i["reason"] for i in items if not i["found"]} - {"doi_not_found", "invalid_parameter"})
    failed = sum(1 for i in items if not i["found"] and i["reason"] in reasons)
    return (
        f"{failed} DOIs could not be looked up now ({', '.join(reasons)}); the others are stored, so the "
        "same call later asks upstream for those only."
    )


def get_works_tool(services: Services, dois: list[str], offset: int = 0) -> CallToolResult:
    """Resolve up to 100 DOIs to their Crossref records in one call, from the local store first.

    Checks a reference list: each DOI (any form crossref_get_work takes) gets one item, in the order
    given, with title, first authors, date, container, flags (retracted, corrected,
    expression_of_concern from updatedBy), the updates themselves and its own cache block. DOIs not
    stored (or stale) are fetched 50 per Crossref list request, so 100 DOIs cost at most 2 requests.
    A DOI Crossref does not hold is an item with reason doi_not_found naming the registration agency;
    for a DataCite DOI (arXiv, Zenodo, Dryad...) agencyRecord gives DataCite's title, type, year and
    state with its own cache block. An input that is not a DOI is an item with reason
    invalid_parameter; an upstream
    failure is the reason of the items it left unanswered (stored copies are answered stale). Only an
    empty list or more than 100 DOIs refuse the call. counts tallies every DOI given; an answer cut to
    fit continues with offset=nextOffset (from the store). Errors: invalid_arguments.
    """
    try:
        answer = get_works(services, dois)
        # with the lab database unreachable, the Retraction Watch rows it holds cannot be read
        give = None if answer.unreachable else services.verdicts
        verdicts = [None] * len(answer.items) if give is None else list(give(services, answer.items))
        items = [item_data(i, v) for i, v in zip(answer.items, verdicts, strict=True)]
    except Exception as exc:
        return error_result(exc)
    shown = items[offset:]
    data: dict[str, Any] = {
        "requested": len(items),
        "offset": offset,
        "returned": len(shown),
        "counts": counts_of(items),
        "listRequests": answer.list_requests,
        "items": shown,
    }
    notices = []
    if offset >= len(items):
        notices.append(
            f"offset={offset} is past the end of the list ({len(items)} DOIs); use an offset from 0 to "
            f"{len(items) - 1}."
        )
    if data["counts"]["failed"]:
        notices.append(_retry_notice(items))
    if answer.unreachable:
        notices.append(
            f"{unstored_sentence(UNREACHABLE_REASON)} No retraction verdicts this time: the Retraction "
            "Watch data is kept there."
        )
    if notices:
        data["notice"] = " ".join(notices)
    dataset = next((v.dataset for v in verdicts if v is not None and v.dataset is not None), None)
    if dataset is not None:
        version = {"sha256": dataset.sha256, "rows": dataset.rows, "importedAt": iso(dataset.imported_at)}
        data["retractionWatch"] = {**version, "source": dataset.source}
        if dataset.commit:
            data["retractionWatch"]["commit"] = dataset.commit
    return CallToolResult(
        content=[TextContent(type="text", text=render_works(data))], structured_content=data
    )


# openWorldHint: a work, member or prefix not stored (or stale) is asked of Crossref (api.crossref.org)
_GET = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=True)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "crossref_get_works",
        "Get many Crossref works by DOI (check a reference list)",
        GetWorksArgs,
        GetWorksResult,
        get_works_tool,
        _GET,
        fit=Fit((Cut("items", resume_items),), plain(render_works)),
    ),
)
"""The batch tool (read-only, idempotent, like crossref_get_work)."""
