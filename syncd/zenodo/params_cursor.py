"""``zenodo_get_record`` continuations: which fields a record answer cut, cursors, and the windows.

A cursor is opaque to clients: URL-safe base64 of a compact JSON
``{"r": recid, "h": binding, "f": field, "i": index?, "o": offset}`` plus a short checksum. It is
bound to the record id and to the stored content of that record (``h`` = the first 16 hex digits
of the entry's content hash, which covers the revision): a cursor for another record, one that
does not decode, or one issued before the record changed is refused with ``invalid_cursor``.

Window sizes (seed): text windows 8,000 characters (the description, or one additional
description's text with ``index``); list windows the field's display page: additional descriptions
5, creators/contributors 25, keywords/funding/related identifiers 50, communities 25.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from syncd.errors import InvalidInput
from syncd.zenodo.contracts import Continuation, RecordWindow
from syncd.zenodo.views import (
    ADDITIONAL_DESCRIPTION_TEXT_CAP,
    ADDITIONAL_DESCRIPTIONS_CAP,
    COMMUNITIES_CAP,
    DESCRIPTION_CAP,
    LIST_CAP,
    PEOPLE_CAP,
    RecordParts,
    cap_additional,
)

__all__ = [
    "TEXT_WINDOW",
    "CursorState",
    "continuations_for_record",
    "decode_cursor",
    "encode_cursor",
    "window_for",
]

TEXT_WINDOW = 8_000
"""Characters in a text window."""
PAGE = {
    "additional_descriptions": ADDITIONAL_DESCRIPTIONS_CAP,
    "creators": PEOPLE_CAP,
    "contributors": PEOPLE_CAP,
    "keywords": LIST_CAP,
    "funding": LIST_CAP,
    "related_identifiers": LIST_CAP,
    "communities": COMMUNITIES_CAP,
}
"""Entries in a list window, per field (the record's display cap)."""
_LISTS = {
    "additional_descriptions": "additional",
    "creators": "creators",
    "contributors": "contributors",
    "keywords": "keywords",
    "funding": "funding",
    "related_identifiers": "related",
    "communities": "communities",
}
_SALT = b"syncd-zenodo-cursor-v1"


@dataclass(frozen=True)
class CursorState:
    """A decoded cursor: record id, content binding, field, additional-description index, offset."""

    recid: str
    binding: str
    field: str
    index: int | None
    offset: int


def _sum(payload: bytes) -> str:
    return hashlib.sha256(_SALT + payload).hexdigest()[:10]


def encode_cursor(state: CursorState) -> str:
    """The opaque cursor string for ``state``."""
    data: dict[str, Any] = {"r": state.recid, "h": state.binding, "f": state.field, "o": state.offset}
    if state.index is not None:
        data["i"] = state.index
    payload = json.dumps(data, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(payload + b"." + _sum(payload).encode()).decode().rstrip("=")


def _invalid(message: str) -> InvalidInput:
    return InvalidInput(
        message,
        reason="invalid_cursor",
        hint="Call zenodo_get_record without cursor to get the record and fresh continuations.",
    )


MAX_POSITION = 2**31 - 1
"""Largest offset or index a cursor may hold (a forged one beyond it is invalid_cursor)."""


def _position(value: Any) -> int:
    """A cursor offset or index: a JSON integer in ``[0, MAX_POSITION]``.

    Raises:
        ValueError: anything else (a float such as ``1e400``, a bool, a string, out of bounds).
    """
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_POSITION:
        raise ValueError("cursor position out of bounds")
    return value


def decode_cursor(cursor: str) -> CursorState:
    """Decode and check a cursor string.

    Raises:
        InvalidInput: ``reason="invalid_cursor"`` when it is not a cursor this tool issued.
    """
    try:
        raw = base64.urlsafe_b64decode(cursor.strip() + "=" * (-len(cursor.strip()) % 4))
        payload, _, check = raw.rpartition(b".")
        if not payload or _sum(payload).encode() != check:
            raise ValueError("checksum")
        data = json.loads(payload)
        state = CursorState(
            recid=str(data["r"]),
            binding=str(data["h"]),
            field=str(data["f"]),
            index=_position(data["i"]) if "i" in data else None,
            offset=_position(data["o"]),
        )
    except (ValueError, KeyError, TypeError, OverflowError, binascii.Error) as exc:
        raise _invalid("cursor is not one zenodo_get_record returned") from exc
    if state.field != "description" and state.field not in PAGE:
        raise _invalid("cursor is not one zenodo_get_record returned")
    return state


def _cont(
    recid: str, binding: str, field: str, unit: str, shown: int, total: int, index: int | None = None
) -> Continuation:
    cursor = encode_cursor(CursorState(recid, binding, field, index, shown))
    return Continuation(
        field=field, unit=unit, index=index, shown=shown, total=total, id=recid, cursor=cursor
    )  # type: ignore[arg-type]


def _text_cuts(recid: str, binding: str, entries: list[Any], start: int) -> list[Continuation]:
    """Continuations for additional descriptions (absolute positions from ``start``) whose text was cut."""
    return [
        _cont(
            recid,
            binding,
            "additional_descriptions",
            "characters",
            ADDITIONAL_DESCRIPTION_TEXT_CAP,
            e.length,
            start + n,
        )
        for n, e in enumerate(entries)
        if e.length > ADDITIONAL_DESCRIPTION_TEXT_CAP
    ]


def continuations_for_record(parts: RecordParts, description: str, binding: str) -> list[Continuation]:
    """Every field a full record answer cut, in record order, each with its cursor.

    Args:
        parts: the uncapped record pieces (:func:`syncd.zenodo.views.record_parts`).
        description: the full plain-text description.
        binding: the content binding the cursors carry (see the module docstring).
    """
    recid = parts.recid
    out: list[Continuation] = []
    if len(description) > DESCRIPTION_CAP:
        out.append(_cont(recid, binding, "description", "characters", DESCRIPTION_CAP, len(description)))
    additional = parts.additional or []
    out.extend(_text_cuts(recid, binding, additional[:ADDITIONAL_DESCRIPTIONS_CAP], 0))
    for field, attr in _LISTS.items():
        items = getattr(parts, attr) or []
        if len(items) > PAGE[field]:
            out.append(_cont(recid, binding, field, "entries", PAGE[field], len(items)))
    return out


def window_for(
    state: CursorState, parts: RecordParts, description: str, binding: str
) -> tuple[RecordWindow, list[Continuation], int]:
    """The window a cursor asks for: ``(window, continuations, cap)``.

    Raises:
        InvalidInput: ``reason="invalid_cursor"`` when the cursor belongs to another record, the record
            changed since it was issued, or its position is past the field's end.
    """
    if state.recid != parts.recid:
        raise _invalid(f"cursor belongs to record {state.recid}, not {parts.recid}; pass its id with it")
    if state.binding != binding:
        raise _invalid(f"record {parts.recid} was edited after this cursor was issued")
    recid = parts.recid
    conts: list[Continuation] = []
    if state.field == "description" or state.index is not None:
        if state.field == "description":
            text = description
        else:
            additional = parts.additional or []
            if state.index is None or state.index >= len(additional):
                raise _invalid("cursor points past the additional descriptions")
            text = additional[state.index].text
        if state.offset >= len(text):
            raise _invalid("cursor points past the end of the text")
        chunk = text[state.offset : state.offset + TEXT_WINDOW]
        end = state.offset + len(chunk)
        window = RecordWindow(
            field=state.field,  # type: ignore[arg-type]
            unit="characters",
            index=state.index,
            offset=state.offset,
            shown=len(chunk),
            total=len(text),
            text=chunk,
        )
        if end < len(text):
            conts.append(_cont(recid, binding, state.field, "characters", end, len(text), state.index))
        return window, conts, TEXT_WINDOW
    items = getattr(parts, _LISTS[state.field]) or []
    page = PAGE[state.field]
    if state.offset >= len(items):
        raise _invalid("cursor points past the end of the list")
    chunk = items[state.offset : state.offset + page]
    end = state.offset + len(chunk)
    values: dict[str, Any] = {}
    if state.field == "additional_descriptions":
        values["additional_descriptions"] = [cap_additional(a) for a in chunk]
        conts.extend(_text_cuts(recid, binding, chunk, state.offset))
    else:
        values[state.field] = chunk
    window = RecordWindow(
        field=state.field,  # type: ignore[arg-type]
        unit="entries",
        offset=state.offset,
        shown=len(chunk),
        total=len(items),
        **values,
    )
    if end < len(items):
        conts.append(_cont(recid, binding, state.field, "entries", end, len(items)))
    return window, conts, page
