"""Tolerant readers of Zenodo JSON and the record-level basics both body shapes share.

Null or wrongly typed values anywhere read as None/empty; ``detect_shape`` tells an RDM body from a
legacy one; ``record_url`` and ``download_url`` build zenodo.org links. Used by
:mod:`syncd.zenodo.views_parts` and :mod:`syncd.zenodo.views`.
"""

from __future__ import annotations

import re
import string
from typing import Any, Literal
from urllib.parse import quote

from syncd.errors import MalformedResponse

Shape = Literal["rdm", "legacy"]

_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
# encodeURIComponent's unreserved set, so keys encode as the anchor's download_url does.
_KEY_SAFE = "!*'()"


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
