"""Pure views of DataCite bodies: the stored document, the ``datacite_get_work`` found arm, index fields.

A DataCite record arrives in two shapes (``../shared/spec/datacite.md`` §7.2): ``GET /dois/{doi}``
answers ``{"data": {...}, "included": [client]}`` and ``GET /dois?query=doi:"..."`` answers the same
record as ``data[0]`` of a list. :func:`stored_body` makes both the one stored form, and
:func:`document` flattens it for readers: ``attributes`` at the top level (the volatile counters
``citationCount``, ``viewCount``, ... laid over it in place), plus ``id``, ``relationships`` and the
included ``client``. :func:`work_view` maps a document to the contract's found arm (every string
trimmed, blank means absent, every list key present except ``contentUrls``, caps with their totals).
"""

from __future__ import annotations

import re
from typing import Any

from syncd.datacite.params import doi_url, orcid_checked

__all__ = [
    "CAPS",
    "COUNT_FIELDS",
    "VOLATILE_FIELDS",
    "as_list",
    "as_object",
    "client_of",
    "content_hash_projection",
    "document",
    "first_title",
    "publication_year",
    "search_fields",
    "stored_body",
    "work_view",
]

COUNT_FIELDS = (
    "citationCount",
    "referenceCount",
    "versionCount",
    "versionOfCount",
    "partCount",
    "partOfCount",
    "viewCount",
    "downloadCount",
)
"""The record's counters (``attributes.*``), reported as ``counts`` (missing -> 0)."""

VOLATILE_FIELDS = (*COUNT_FIELDS, "viewsOverTime", "downloadsOverTime", "citationsOverTime")
"""Fields refreshed in place without counting as a change (usage and citation counters)."""

_LEFT_OUT = frozenset({*VOLATILE_FIELDS, "xml", "updated"})
"""Left out of the content hash: the counters, the base64 XML copy, the index's own update stamp."""

CAPS = {
    "creators": 100,
    "contributors": 100,
    "subjects": 100,
    "fundingReferences": 100,
    "geoLocations": 50,
    "relatedIdentifiers": 100,
    "relatedItems": 25,
}
"""Most entries of each list shown (the full count is always reported, ``truncatedLists``)."""

_DIGITS = re.compile(r"^\d+$")


def as_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else ``{}`` (a field DataCite may send as null or a string)."""
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a JSON array, else ``[]``."""
    return value if isinstance(value, list) else []


_d, _l = as_object, as_list


def _s(value: Any) -> str | None:
    """A trimmed string, or None for a blank, absent or non-string value."""
    if isinstance(value, str):
        value = value.strip()
        return value or None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return None


def _put(out: dict[str, Any], key: str, value: Any) -> None:
    if value is not None and value != [] and value != {}:
        out[key] = value


def stored_body(data: dict[str, Any], included: list[Any] | None) -> dict[str, Any]:
    """The stored form of one record: ``{"data": <record>, "included": [<its client>]}``.

    ``data`` is the record object of either endpoint; only the included client the record names
    (``relationships.client.data.id``) is kept. ``attributes.xml`` (the base64 DataCite XML copy the
    single-record endpoint adds) is dropped: nothing reads it, and the two endpoints' bodies of one
    record then differ only where the record does.
    """
    attributes = {k: v for k, v in _d(data.get("attributes")).items() if k != "xml"}
    data = {**data, "attributes": attributes}
    client_id = _d(_d(_d(data.get("relationships")).get("client")).get("data")).get("id")
    clients = [
        c
        for c in _l(included)
        if isinstance(c, dict) and c.get("type") == "clients" and c.get("id") == client_id
    ]
    return {"data": data, "included": clients[:1]}


def document(body: Any) -> dict[str, Any] | None:
    """The flattened record of a stored body (attributes at the top; ``id``, ``relationships``, ``client``).

    None for a body that is not an object with a ``data`` object (the guard's checked object).
    """
    if not isinstance(body, dict):
        return None
    data = body.get("data")
    if isinstance(data, list):
        data = data[0] if data else {}
    if not isinstance(data, dict):
        return {}
    out = dict(_d(data.get("attributes")))
    out["id"] = data.get("id")
    out["relationships"] = _d(data.get("relationships"))
    included = [c for c in _l(body.get("included")) if isinstance(c, dict) and c.get("type") == "clients"]
    if included:
        out["client"] = included[0]
    return out


def content_hash_projection(body: Any) -> Any:
    """What the content hash covers: the attributes without counters, XML copy and ``updated`` stamp.

    DataCite sends no usable validators (no Last-Modified, no 304, no ETag since June 2026): whether
    a record changed is this hash. The included client's name and provider count too.
    """
    doc = document(body)
    if not doc:
        return None
    client = _d(doc.get("client"))
    return {
        "attributes": {k: v for k, v in doc.items() if k not in _LEFT_OUT and k not in ("client", "id")},
        "client": {"id": client.get("id"), "name": _d(client.get("attributes")).get("name")},
    }


def client_of(doc: dict[str, Any]) -> dict[str, Any] | None:
    """``{repositoryId, name?, providerId?}`` of the record's client (None when it has none).

    ``providerId`` comes from the client's ``provider`` relationship, never from the id's prefix.
    """
    rel = _d(_d(doc.get("relationships")).get("client")).get("data")
    repository_id = _s(_d(rel).get("id")) or _s(_d(doc.get("client")).get("id"))
    if repository_id is None:
        return None
    client = _d(doc.get("client"))
    out: dict[str, Any] = {"repositoryId": repository_id}
    if client.get("id") == repository_id:
        _put(out, "name", _s(_d(client.get("attributes")).get("name")))
        provider = _d(_d(_d(client.get("relationships")).get("provider")).get("data")).get("id")
        _put(out, "providerId", _s(provider))
    return out


def publication_year(value: Any) -> int | None:
    """``publicationYear`` as an integer: an int or a string of decimal digits (``n.d.``, ``1e3``: None)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _DIGITS.match(value.strip()):
        return int(value.strip())
    return None


def _titles(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for t in _l(doc.get("titles")):
        title = _s(_d(t).get("title"))
        if title is None:
            continue
        item: dict[str, Any] = {"title": title}
        _put(item, "titleType", _s(t.get("titleType")))
        _put(item, "lang", _s(t.get("lang")))
        out.append(item)
    return out


def first_title(doc: dict[str, Any]) -> str | None:
    """The main title as deposited (the first non-blank one), or None."""
    titles = _titles(doc)
    return titles[0]["title"] if titles else None


def _affiliations(value: Any) -> list[dict[str, Any]]:
    out = []
    for a in _l(value):
        if isinstance(a, str):
            if _s(a):
                out.append({"name": _s(a)})
            continue
        name = _s(_d(a).get("name"))
        if name is None:
            continue
        item: dict[str, Any] = {"name": name}
        if str(a.get("affiliationIdentifierScheme", "")).upper() == "ROR":
            _put(item, "rorId", _ror(a.get("affiliationIdentifier")))
        out.append(item)
    return out


def _ror(value: Any) -> str | None:
    text = _s(value)
    if text is None:
        return None
    return text.rstrip("/").rsplit("/", 1)[-1].lower()


def _person(p: Any, contributor: bool) -> dict[str, Any] | None:
    p = _d(p)
    given, family = _s(p.get("givenName")), _s(p.get("familyName"))
    name = _s(p.get("name")) or (" ".join(x for x in (given, family) if x) or None)
    if name is None:
        return None
    item: dict[str, Any] = {"name": name}
    _put(item, "nameType", _s(p.get("nameType")))
    _put(item, "givenName", given)
    _put(item, "familyName", family)
    if contributor:
        _put(item, "contributorType", _s(p.get("contributorType")))
    others = []
    for ident in _l(p.get("nameIdentifiers")):
        value, scheme = _s(_d(ident).get("nameIdentifier")), _s(_d(ident).get("nameIdentifierScheme"))
        if value is None:
            continue
        orcid = orcid_checked(value) if (scheme or "").upper() == "ORCID" else None
        if orcid is not None and "orcid" not in item:
            item["orcid"] = orcid
            continue
        other: dict[str, Any] = {"identifier": value}
        _put(other, "scheme", scheme)
        others.append(other)
    item["otherIdentifiers"] = others
    item["affiliations"] = _affiliations(p.get("affiliation"))
    return item


def _people(doc: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return [x for p in _l(doc.get(key)) if (x := _person(p, key == "contributors")) is not None]


def _pick(entries: Any, fields: dict[str, str], required: tuple[str, ...]) -> list[dict[str, Any]]:
    """Entries of a list as ``{out name: trimmed value}``; those lacking a ``required`` output dropped."""
    out = []
    for e in _l(entries):
        item: dict[str, Any] = {}
        for name, source in fields.items():
            _put(item, name, _s(_d(e).get(source)))
        if all(r in item for r in required) and item:
            out.append(item)
    return out


def _publisher(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        return {"name": value.strip()} if value.strip() else None
    name = _s(_d(value).get("name"))
    if name is None:
        return None
    out: dict[str, Any] = {"name": name}
    if str(_d(value).get("publisherIdentifierScheme", "")).upper() == "ROR":
        _put(out, "rorId", _ror(value.get("publisherIdentifier")))
    return out


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value).strip()) if _s(value) else None
    except ValueError:
        return None


def _geo(entries: Any) -> list[dict[str, Any]]:
    out = []
    for g in _l(entries):
        g = _d(g)
        item: dict[str, Any] = {}
        _put(item, "place", _s(g.get("geoLocationPlace")))
        point = _d(g.get("geoLocationPoint"))
        lat, lon = _number(point.get("pointLatitude")), _number(point.get("pointLongitude"))
        if lat is not None and lon is not None:
            item["point"] = {"latitude": lat, "longitude": lon}
        box = _d(g.get("geoLocationBox"))
        sides = {
            k: _number(box.get(f"{k}BoundLongitude" if k in ("west", "east") else f"{k}BoundLatitude"))
            for k in ("west", "east", "south", "north")
        }
        if all(v is not None for v in sides.values()):
            item["box"] = sides
        if item:
            out.append(item)
    return out


def _related_items(entries: Any) -> list[dict[str, Any]]:
    out = []
    for e in _l(entries):
        e = _d(e)
        relation = _s(e.get("relationType"))
        if relation is None:
            continue
        item: dict[str, Any] = {"relationType": relation}
        _put(item, "relatedItemType", _s(e.get("relatedItemType")))
        ident = _d(e.get("relatedItemIdentifier"))
        _put(item, "identifier", _s(ident.get("relatedItemIdentifier")))
        _put(item, "identifierType", _s(ident.get("relatedItemIdentifierType")))
        titles = [_s(_d(t).get("title")) for t in _l(e.get("titles"))]
        _put(item, "title", next((t for t in titles if t), None))
        out.append(item)
    return out


def _strings(value: Any) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [s for v in items if (s := _s(v)) is not None]


def _lists(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Every list of the found arm, uncapped, in the contract's field order."""
    return {
        "titles": _titles(doc),
        "creators": _people(doc, "creators"),
        "contributors": _people(doc, "contributors"),
        "dates": _pick(
            doc.get("dates"),
            {"date": "date", "dateType": "dateType", "dateInformation": "dateInformation"},
            ("date", "dateType"),
        ),
        "subjects": _pick(
            doc.get("subjects"),
            {"subject": "subject", "scheme": "subjectScheme", "classificationCode": "classificationCode"},
            ("subject",),
        ),
        "descriptions": _pick(
            doc.get("descriptions"),
            {"description": "description", "descriptionType": "descriptionType", "lang": "lang"},
            ("description",),
        ),
        "fundingReferences": _pick(
            doc.get("fundingReferences"),
            {
                "funderName": "funderName",
                "funderIdentifier": "funderIdentifier",
                "funderIdentifierType": "funderIdentifierType",
                "awardNumber": "awardNumber",
                "awardTitle": "awardTitle",
                "awardUri": "awardUri",
            },
            ("funderName",),
        ),
        "geoLocations": _geo(doc.get("geoLocations")),
        "rights": _pick(
            doc.get("rightsList"),
            {"rights": "rights", "rightsUri": "rightsUri", "rightsIdentifier": "rightsIdentifier"},
            (),
        ),
        "alternateIdentifiers": _alternates(doc),
        "relatedIdentifiers": _pick(
            doc.get("relatedIdentifiers"),
            {
                "relationType": "relationType",
                "relatedIdentifier": "relatedIdentifier",
                "relatedIdentifierType": "relatedIdentifierType",
                "resourceTypeGeneral": "resourceTypeGeneral",
            },
            ("relationType", "relatedIdentifier"),
        ),
        "relatedItems": _related_items(doc.get("relatedItems")),
    }


def _alternates(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """``identifiers`` (list endpoint) or ``alternateIdentifiers`` (single-record endpoint)."""
    source = doc.get("identifiers")
    if not _l(source):
        source = [
            {"identifier": a.get("alternateIdentifier"), "identifierType": a.get("alternateIdentifierType")}
            for a in _l(doc.get("alternateIdentifiers"))
            if isinstance(a, dict)
        ]
    return _pick(source, {"identifier": "identifier", "identifierType": "identifierType"}, ("identifier",))


def work_view(doc: dict[str, Any], doi: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The found arm of ``datacite_get_work`` for the flattened record ``doc`` and its truncated lists.

    Returns ``(record, truncated)``: ``record`` holds the contract's fields (``found: true``, ``doi``
    lower-case, every list key, caps applied); ``truncated`` is ``[{field, shown, total}]`` for each
    list a cap bound, in field order (empty when none).
    """
    types = _d(doc.get("types"))
    out: dict[str, Any] = {"found": True, "doi": doi, "doiUrl": doi_url(doi)}
    _put(out, "landingUrl", _s(doc.get("url")))
    _put(out, "contentUrls", _strings(doc.get("contentUrl")))
    lists = _lists(doc)
    truncated: list[dict[str, Any]] = []
    counts: dict[str, int] = {}
    for entry in lists["relatedIdentifiers"]:
        counts[entry["relationType"]] = counts.get(entry["relationType"], 0) + 1
    for name, items in lists.items():
        cap = CAPS.get(name)
        if cap is not None and len(items) > cap:
            truncated.append({"field": name, "shown": cap, "total": len(items)})
            items = items[:cap]
        out[name] = items
    _put(out, "publisher", _publisher(doc.get("publisher")))
    _put(out, "publicationYear", publication_year(doc.get("publicationYear")))
    _put(out, "resourceTypeGeneral", _s(types.get("resourceTypeGeneral")))
    _put(out, "resourceType", _s(types.get("resourceType")))
    _put(out, "version", _s(doc.get("version")))
    _put(out, "language", _s(doc.get("language")))
    out["metadataLicense"] = "CC0-1.0"
    out["sizes"] = _strings(doc.get("sizes"))
    out["formats"] = _strings(doc.get("formats"))
    out["relatedIdentifierCounts"] = counts
    out["counts"] = {k: int(v) if isinstance(v := doc.get(k), int) else 0 for k in COUNT_FIELDS}
    _put(out, "repository", client_of(doc))
    for key in ("registered", "created", "updated", "schemaVersion"):
        _put(out, key, _s(doc.get(key)))
    _put(out, "state", _s(doc.get("state")))
    return out, truncated


def search_fields(doc: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(title, search_text)`` of a record for the store's full-text index.

    Title: the main title. Search text: the other titles, creator names, subjects, publisher, the
    first description, resource type and publication year.
    """
    titles = [t["title"] for t in _titles(doc)]
    names = [str(p.get("name")) for p in _l(doc.get("creators")) if isinstance(p, dict) and p.get("name")]
    subjects = [
        str(s.get("subject")) for s in _l(doc.get("subjects")) if isinstance(s, dict) and s.get("subject")
    ]
    publisher = _publisher(doc.get("publisher"))
    descriptions = _pick(doc.get("descriptions"), {"description": "description"}, ("description",))
    types = _d(doc.get("types"))
    parts = [
        *titles[1:],
        " ".join(names[:200]),
        " ".join(subjects[:100]),
        publisher["name"] if publisher else None,
        descriptions[0]["description"][:4000] if descriptions else None,
        _s(types.get("resourceTypeGeneral")),
        _s(doc.get("publicationYear")),
    ]
    text = " ".join(p for p in parts if p)
    return (titles[0] if titles else None), (text or None)
