"""Pure views of a DataCite ``/dois`` search page: its rows, facets and description snippets.

A row (``works[]``) is built from a record of the page (or a stored work, offline) and the included
client: the first 5 creator names with the count, licences from ``rightsList[].rightsIdentifier``,
counts only when reported (0 stays 0, ``null`` is absent), and ``descriptionSnippet``: the first
non-blank Abstract, else the first description, cut at 300 UTF-16 units (never inside a surrogate
pair), right-trimmed, ending with ``…``.
"""

from __future__ import annotations

from typing import Any

from syncd.datacite.views import as_list, as_object, client_of, document, first_title, publication_year

__all__ = ["FACETS", "facets", "row", "rows", "snippet"]

SNIPPET_UNITS = 300
"""Most UTF-16 code units of a description snippet."""

FACETS = {
    "resourceTypes": "resourceTypes",
    "publicationYears": "published",
    "repositories": "clients",
    "providers": "providers",
    "affiliations": "affiliations",
    "fieldsOfScience": "fieldsOfScience",
    "licenses": "licenses",
}
"""Output facet -> ``meta`` key of the page."""


def _units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def snippet(text: str) -> str:
    """``text`` within :data:`SNIPPET_UNITS` UTF-16 units (cut at a character, ``…`` added when cut)."""
    text = text.strip()
    if _units(text) <= SNIPPET_UNITS:
        return text
    out, used = [], 0
    for ch in text:
        width = 2 if ord(ch) > 0xFFFF else 1
        if used + width > SNIPPET_UNITS:
            break
        out.append(ch)
        used += width
    return "".join(out).rstrip() + "…"


def _description(doc: dict[str, Any]) -> str | None:
    items = [d for d in doc.get("descriptions") or [] if isinstance(d, dict)]
    pairs = [(d.get("descriptionType"), d.get("description")) for d in items]
    texts = [(t, x.strip()) for t, x in pairs if isinstance(x, str) and x.strip()]
    for kind, text in texts:
        if kind == "Abstract":
            return snippet(text)
    return snippet(texts[0][1]) if texts else None


def row(doc: dict[str, Any]) -> dict[str, Any]:
    """One ``works[]`` row of the flattened record ``doc`` (:func:`~syncd.datacite.views.document`)."""
    names = [c.get("name") for c in doc.get("creators") or [] if isinstance(c, dict)]
    names = [n.strip() for n in names if isinstance(n, str) and n.strip()]
    types = as_object(doc.get("types"))
    publisher = doc.get("publisher")
    publisher_name = publisher.get("name") if isinstance(publisher, dict) else publisher
    out: dict[str, Any] = {
        "doi": str(doc.get("doi") or doc.get("id") or "").lower(),
        "creators": names[:5],
        "creatorCount": len(names),
        "licenses": [
            str(r["rightsIdentifier"])
            for r in doc.get("rightsList") or []
            if isinstance(r, dict) and r.get("rightsIdentifier")
        ],
    }
    optional = {
        "title": first_title(doc),
        "publicationYear": publication_year(doc.get("publicationYear")),
        "resourceTypeGeneral": types.get("resourceTypeGeneral"),
        "resourceType": types.get("resourceType"),
        "publisher": publisher_name.strip()
        if isinstance(publisher_name, str) and publisher_name.strip()
        else None,
        "version": doc.get("version")
        if isinstance(doc.get("version"), str) and doc["version"].strip()
        else None,
        "created": doc.get("created"),
        "landingUrl": doc.get("url"),
        "descriptionSnippet": _description(doc),
    }
    for key in ("citationCount", "viewCount", "downloadCount", "versionCount"):
        value = doc.get(key)
        optional[key] = value if isinstance(value, int) and not isinstance(value, bool) else None
    client = client_of(doc) or {}
    optional["repositoryId"] = client.get("repositoryId")
    optional["repositoryName"] = client.get("name")
    optional["providerId"] = client.get("providerId")
    out.update({k: v for k, v in optional.items() if v is not None and v != ""})
    return out


def rows(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of a ``/dois`` page body (records with their included clients)."""
    included = as_list(body.get("included"))
    out = []
    for record in body.get("data") or []:
        if not isinstance(record, dict):
            continue
        client_id = ((record.get("relationships") or {}).get("client") or {}).get("data") or {}
        clients = [c for c in included if isinstance(c, dict) and c.get("id") == client_id.get("id")]
        doc = document({"data": record, "included": clients[:1]}) or {}
        if doc.get("doi") or doc.get("id"):
            out.append(row(doc))
    return out


def facets(meta: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The page's facets, ``[{id, title (id when missing), count}]`` each, ``[]`` when empty."""
    out: dict[str, list[dict[str, Any]]] = {}
    for name, key in FACETS.items():
        items = as_list(meta.get(key))
        out[name] = [
            {
                "id": str(f.get("id")),
                "title": str(f.get("title") or f.get("id")),
                "count": int(f.get("count") or 0),
            }
            for f in items
            if isinstance(f, dict) and f.get("id") is not None
        ]
    return out
