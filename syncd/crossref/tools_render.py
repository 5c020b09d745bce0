"""The compact text blocks of the Crossref tools' answers (never the structured JSON again).

One renderer per tool answer (``render_work``, ``render_search_works``, ...), each ending with the
one-line ``cache`` summary (:func:`cache_line`); the size budget renders a cut answer again with the
same function (each tool's :class:`~syncd.tools.fit.Fit`).
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "cache_line",
    "render_funders",
    "render_journals",
    "render_member",
    "render_prefix",
    "render_references",
    "render_search_works",
    "render_work",
]


def render_work(data: dict[str, Any]) -> str:
    """Compact Markdown for a work answer (never the structured JSON again).

    Title, DOI, type, container, date, notice, this page of authors, editors, updates, counts,
    abstract and the cache line.
    """
    lines = [f"# {data.get('title') or '(untitled)'}", f"DOI: {data['doi']}"]
    for label, key in (("Type", "type"), ("Container", "containerTitle"), ("Publisher", "publisher")):
        if data.get(key):
            lines.append(f"{label}: {data[key]}")
    if data.get("published"):
        p = data["published"]
        parts = [f"{p['year']:04d}"] + [f"{p[k]:02d}" for k in ("month", "day") if p.get(k)]
        lines.append("Published: " + "-".join(parts))
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    authors = data.get("authors") or []
    if authors:
        names = [_name(a) for a in authors]
        lines.append(f"Authors ({data.get('authorCount', len(authors))}): " + "; ".join(names))
    for label, key in (("Editors", "editors"),):
        if data.get(key):
            lines.append(f"{label}: " + "; ".join(_name(a) for a in data[key]))
    for u in data.get("updatedBy") or []:
        lines.append(f"Updated by: {u.get('type')} doi:{u.get('doi')} ({u.get('source')})")
    for u in data.get("updateTo") or []:
        lines.append(f"Update to: {u.get('type')} doi:{u.get('doi')} ({u.get('source')})")
    counts = [
        f"{label} {data[key]}"
        for label, key in (("cited by", "isReferencedByCount"), ("references", "referencesCount"))
        if data.get(key) is not None
    ]
    if counts:
        lines.append("Counts: " + ", ".join(counts))
    if data.get("abstract"):
        lines.append("")
        lines.append(data["abstract"])
    lines += ["", cache_line(data)]
    return "\n".join(line for line in lines if line is not None)


def _name(a: dict[str, Any]) -> str:
    return " ".join(filter(None, (a.get("given"), a.get("family")))) or a.get("name") or "?"


def cache_line(data: dict[str, Any]) -> str | None:
    """The one-line provenance summary of an answer's ``cache`` block (None without one)."""
    c = data.get("cache") or {}
    if not c:
        return None
    flag = f", upstream_error={c['upstream_error']}" if c.get("upstream_error") else ""
    return f"[cache: {c['source']}, validated {c['validated_at']}, stale={c['stale']}{flag}]"


def _text(title: str, lines: list[str], data: dict[str, Any]) -> str:
    """A compact text block: heading, one line per item, the notice, the cache line (no JSON)."""
    text = [f"# {title}", *lines]
    if data.get("notice"):
        text.append(f"Notice: {data['notice']}")
    line = cache_line(data)
    if line:
        text += ["", line]
    return "\n".join(text)


def render_search_works(data: dict[str, Any]) -> str:
    """Text of a crossref_search_works answer: counts, one line per work, continuation, notice."""
    lines = [f"{data['returned']} of {data['totalResults']} results"]
    lines += [_work_line(w) for w in data["works"]]
    if data.get("nextOffset") is not None:
        lines.append(f"nextOffset: {data['nextOffset']}")
    if data.get("nextCursor"):
        lines.append(f"nextCursor: {data['nextCursor']}")
    return _text("Crossref works", lines, data)


def render_references(data: dict[str, Any]) -> str:
    """Text of a crossref_get_references answer: range, one line per reference, notice."""
    lines = [
        f"DOI: {data['doi']}",
        f"References {data['offset'] + 1}-{data['offset'] + len(data['references'])} "
        f"of {data['referenceCount']}",
    ]
    for r in data["references"]:
        lines.append(
            "- "
            + (r.get("unstructured") or r.get("articleTitle") or r.get("volumeTitle") or "")
            + (f" doi:{r['doi']}" if r.get("doi") else "")
            + (f" ISSN {r['issn']}" if r.get("issn") else "")
        )
    if data.get("nextOffset") is not None:
        lines.append(f"nextOffset: {data['nextOffset']}")
    return _text("Crossref references", lines, data)


def _works_lines(data: dict[str, Any], key: str) -> list[str]:
    lines = [_work_line(w) for w in data.get(key) or []]
    for label in ("nextWorksOffset", "nextWorksCursor"):
        if data.get(label) is not None:
            lines.append(f"{label}: {data[label]}")
    return lines


def render_journals(data: dict[str, Any]) -> str:
    """Text of a crossref_search_journals answer: one line per journal, then its works."""
    lines = [f"{data['journalCount']} of {data['journalsTotal']} journals"]
    for j in data["journals"]:
        lines.append(
            f"- {j.get('title')} | ISSN {', '.join(j.get('issn') or [])} | {j.get('publisher') or ''}"
        )
    if data.get("nextOffset") is not None:
        lines.append(f"nextOffset: {data['nextOffset']}")
    return _text("Crossref journals", lines + _works_lines(data, "recentWorks"), data)


def render_funders(data: dict[str, Any]) -> str:
    """Text of a crossref_search_funders answer: one line per funder, then its funded works."""
    lines = [f"{data['funderCount']} of {data['fundersTotal']} funders"]
    for f in data["funders"]:
        lines.append(f"- {f.get('name')} | id {f.get('id')} | {f.get('country') or ''}")
    if data.get("nextOffset") is not None:
        lines.append(f"nextOffset: {data['nextOffset']}")
    return _text("Crossref funders", lines + _works_lines(data, "fundedWorks"), data)


def render_member(data: dict[str, Any]) -> str:
    """Text of a crossref_get_member answer: names, prefixes, coverage per category."""
    lines = [
        f"Member {data['id']}: {data.get('primaryName')}",
        f"Prefixes: {', '.join(data.get('prefixes') or [])}",
    ]
    for cov in data.get("coverage") or []:
        lines.append(
            f"- {cov['category']}: current {_pct(cov.get('current'))}, backfile {_pct(cov.get('backfile'))}"
        )
    return _text("Crossref member", lines, data)


def render_prefix(data: dict[str, Any]) -> str:
    """Text of a crossref_get_prefix answer."""
    return _text(
        f"Prefix {data['prefix']}", [f"Owner: {data.get('ownerName')} (member {data.get('memberId')})"], data
    )


def _work_line(w: dict[str, Any]) -> str:
    year = (w.get("published") or {}).get("year")
    bits = [w.get("title") or "(untitled)", f"doi:{w['doi']}"]
    authors = w.get("authors") or []
    if authors:
        names = "; ".join(_name(a) for a in authors[:3])
        more = max(w.get("authorCount") or len(authors), len(authors)) - min(3, len(authors))
        bits.append(names + (f" +{more} more" if more > 0 else ""))
    if year:
        bits.append(str(year))
    if w.get("containerTitle"):
        bits.append(w["containerTitle"])
    if w.get("updatedBy"):
        bits.append("UPDATED: " + ", ".join(u["type"] for u in w["updatedBy"]))
    return "- " + " | ".join(bits)


def _pct(value: float | None) -> str:
    if value is None:
        return "-"
    pct = value * 100
    if pct == 0 or pct >= 10:
        return f"{pct:.0f}%"
    if pct >= 1:
        return f"{pct:.1f}%"
    return f"{pct:.2g}%"
