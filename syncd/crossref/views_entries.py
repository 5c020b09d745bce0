"""The deposited entries of a Crossref work message, read tolerantly into the contract's models.

Pure readers used by :mod:`syncd.crossref.views` (``crossref_get_work``) and
:mod:`syncd.crossref.views_lists`: each takes whatever upstream sent and returns a model, a list or
None, never raising on an odd shape (contributors, affiliations, date parts, updates, relations,
funders, licences, links, clinical trials, assertions, events, institutions). Decisions on what is
relayed as deposited are listed in :mod:`syncd.crossref.views`.
"""

from __future__ import annotations

from typing import Any

from syncd.crossref.contracts import (
    Affiliation,
    Assertion,
    ClinicalTrial,
    Contributor,
    Event,
    Funder,
    Institution,
    License,
    Link,
    PublishedDate,
    Relation,
    Update,
)
from syncd.normalize.text import jats_to_text, normalize_text

__all__ = ["parse_date_parts"]

_ROR_TYPE = "ror"


# --------------------------------------------------------------------------------------------------
# Small readers: tolerate anything upstream sends, return None instead of raising
# --------------------------------------------------------------------------------------------------


def _str(value: Any) -> str | None:
    if isinstance(value, str) and value.strip():
        return value
    return None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _text(value: Any) -> str | None:
    s = _str(value)
    return (normalize_text(s) or None) if s is not None else None


def _markup(value: Any) -> str | None:
    s = _str(value)
    return (jats_to_text(s, paragraphs=False) or None) if s is not None else None


def _first_markup(*lists: Any) -> str | None:
    """First non-empty markup-normalized string among the first elements of the given lists."""
    for values in lists:
        for value in _list(values)[:1]:
            text = _markup(value)
            if text:
                return text
    return None


def _strings(value: Any) -> list[str] | None:
    out = [v for v in _list(value) if _str(v) is not None]
    return out or None


def _ids_of_type(entry: dict[str, Any], id_type: str) -> list[str]:
    return [
        i["id"]
        for i in _list(entry.get("id"))
        if isinstance(i, dict) and str(i.get("id-type", "")).lower() == id_type and _str(i.get("id"))
    ]


# --------------------------------------------------------------------------------------------------
# Dates
# --------------------------------------------------------------------------------------------------


def parse_date_parts(value: Any) -> PublishedDate | None:
    """Read a Crossref date object (``{"date-parts": [[Y, M, D]], ...}``) into a :class:`PublishedDate`.

    Reading stops at the first null (or non-integer, or out-of-range) component, so
    ``[[2020, null, 5]]`` gives ``{year: 2020}`` and ``[[null]]`` gives ``None`` (names no date).

    Args:
        value: a date object such as ``message["published-print"]``.

    Returns:
        The date, or ``None`` when the object names no year.
    """
    parts = _list(_dict(value).get("date-parts"))
    first = _list(parts[0]) if parts else []
    read: list[int] = []
    for component, (low, high) in zip(first, ((1, 9999), (1, 12), (1, 31)), strict=False):
        number = _int(component)
        if number is None or not low <= number <= high:
            break
        read.append(number)
    if not read:
        return None
    return PublishedDate(
        year=read[0], month=read[1] if len(read) > 1 else None, day=read[2] if len(read) > 2 else None
    )


_DATE_CHAIN = ("published", "published-print", "published-online", "issued")


def _published(message: dict[str, Any]) -> PublishedDate | None:
    for key in _DATE_CHAIN:
        date = parse_date_parts(message.get(key))
        if date is not None:
            return date
    return None


# --------------------------------------------------------------------------------------------------
# Entries
# --------------------------------------------------------------------------------------------------


def _orcid(value: Any) -> str | None:
    raw = _str(value)
    return raw.strip() if raw is not None else None


def _affiliation(entry: Any) -> Affiliation | None:
    entry = _dict(entry)
    name = _text(entry.get("name"))
    rors = _ids_of_type(entry, _ROR_TYPE)
    if name is None and not rors:
        return None
    return Affiliation(name=name, ror=rors[0] if rors else None)


def _contributor(entry: Any) -> Contributor:
    entry = _dict(entry)
    affiliations = [a for a in (_affiliation(x) for x in _list(entry.get("affiliation"))) if a is not None]
    return Contributor(
        given=_text(entry.get("given")),
        family=_text(entry.get("family")),
        name=_text(entry.get("name")),
        orcid=_orcid(entry.get("ORCID")),
        affiliation=affiliations or None,
        sequence=_str(entry.get("sequence")),
    )


def _updates(value: Any) -> list[Update] | None:
    out: list[Update] = []
    for entry in _list(value):
        entry = _dict(entry)
        doi, kind = _str(entry.get("DOI")), _str(entry.get("type"))
        if doi is None or kind is None:
            continue
        record = entry.get("record-id")
        out.append(
            Update(
                doi=doi,
                type=kind,
                source=_str(entry.get("source")),
                recordId=str(record) if _str(record) or _int(record) is not None else None,
                updated=parse_date_parts(entry.get("updated")),
            )
        )
    return out or None


def _relations(value: Any) -> list[Relation] | None:
    groups: dict[tuple[str, str | None, str | None], Relation] = {}
    for rel_type, entries in _dict(value).items():
        for entry in _list(entries):
            entry = _dict(entry)
            rel_id = _str(entry.get("id"))
            if rel_id is None:
                continue
            key = (rel_type, _str(entry.get("id-type")), _str(entry.get("asserted-by")))
            group = groups.get(key)
            if group is None:
                group = groups[key] = Relation(type=key[0], idType=key[1], assertedBy=key[2], ids=[])
            group.ids.append(rel_id)
    return list(groups.values()) or None


def _funder(entry: Any) -> Funder | None:
    entry = _dict(entry)
    dois = _ids_of_type(entry, "doi")
    rors = _ids_of_type(entry, _ROR_TYPE)
    funder = Funder(
        name=_text(entry.get("name")),
        doi=_str(entry.get("DOI")) or (dois[0] if dois else None),
        ror=rors[0] if rors else None,
        award=[a.strip() for a in _strings(entry.get("award")) or []] or None,
    )
    if funder.name is None and funder.doi is None and funder.ror is None and funder.award is None:
        return None
    return funder


def _license(entry: Any) -> License | None:
    entry = _dict(entry)
    url = _str(entry.get("URL"))
    if url is None:
        return None
    return License(
        url=url,
        contentVersion=_str(entry.get("content-version")),
        delayInDays=_int(entry.get("delay-in-days")),
    )


def _link(entry: Any) -> Link | None:
    entry = _dict(entry)
    url = _str(entry.get("URL"))
    if url is None:
        return None
    return Link(
        url=url,
        contentType=_str(entry.get("content-type")),
        intendedApplication=_str(entry.get("intended-application")),
    )


def _locator(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return _str(value)


def _titles(value: Any) -> list[str] | None:
    """``container-title[]`` markup-normalized, deposited order, blanks dropped."""
    out = [t for t in (jats_to_text(x, paragraphs=False) for x in _list(value) if isinstance(x, str)) if t]
    return out or None


def _trials(value: Any) -> list[ClinicalTrial] | None:
    """``clinical-trial-number[]`` -> ``{number, registry?, type?}``."""
    out = [
        ClinicalTrial(
            number=str(t["clinical-trial-number"]), registry=_str(t.get("registry")), type=_str(t.get("type"))
        )
        for t in _list(value)
        if isinstance(t, dict) and _str(t.get("clinical-trial-number"))
    ]
    return out or None


def _assertions(value: Any) -> list[Assertion] | None:
    """``assertion[]`` whole, in order; ``value`` text-normalized; ``url`` dropped when it repeats value."""
    out: list[Assertion] = []
    for a in _list(value):
        if not isinstance(a, dict):
            continue
        group = _dict(a.get("group"))
        text_value = _text(a.get("value")) if a.get("value") is not None else None
        url = _str(a.get("URL"))
        out.append(
            Assertion(
                name=_str(a.get("name")),
                label=_text(a.get("label")),
                value=text_value,
                url=url if url and url != text_value else None,
                groupName=_str(group.get("name")),
                groupLabel=_text(group.get("label")),
            )
        )
    return out or None


def _event(value: Any) -> Event | None:
    """``event`` -> ``{name, acronym, location, start, end}``; None when nothing is deposited."""
    if not isinstance(value, dict):
        return None
    event = Event(
        name=_text(value.get("name")),
        acronym=_text(value.get("acronym")),
        location=_text(value.get("location")),
        start=parse_date_parts(value.get("start")),
        end=parse_date_parts(value.get("end")),
    )
    return event if event.model_dump(exclude_none=True) else None


def _institutions(value: Any) -> list[Institution] | None:
    """``institution[]`` -> ``{name?, ror?, place?, department?, acronym?}`` (ROR-only keeps ``ror``)."""
    out: list[Institution] = []
    for i in _list(value):
        if not isinstance(i, dict):
            continue
        ror = next(
            (
                _str(x.get("id"))
                for x in _list(i.get("id"))
                if isinstance(x, dict) and x.get("id-type") == "ROR"
            ),
            None,
        )
        inst = Institution(
            name=_text(i.get("name")),
            ror=ror,
            place=_strings(i.get("place")),
            department=_strings(i.get("department")),
            acronym=_strings(i.get("acronym")),
        )
        if inst.model_dump(exclude_none=True):
            out.append(inst)
    return out or None
