r"""Upstream text made valid Unicode once, at the edge, before it is hashed, stored or indexed.

JSON may escape a lone UTF-16 surrogate (``"Bad \ud835 title"``, seen in real Crossref exports);
Python decodes it to a ``str`` that cannot be encoded as UTF-8, so hashing, storing or indexing it
fails. :func:`valid_unicode` replaces every unpaired surrogate with U+FFFD (REPLACEMENT CHARACTER), in
values and in keys, and counts the repairs. Paired surrogates are combined by the JSON decoder and
never reach it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REPLACEMENT", "has_escaped_surrogate", "valid_unicode"]

REPLACEMENT = "\ufffd"
_SURROGATE = re.compile("[\ud800-\udfff]")
_ESCAPED_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def has_escaped_surrogate(body: bytes) -> bool:
    r"""True when a JSON body holds a ``\uD800``-``\uDFFF`` escape (paired or not): worth a walk."""
    return _ESCAPED_SURROGATE.search(body) is not None


def _fix(text: str) -> tuple[str, int]:
    return _SURROGATE.subn(REPLACEMENT, text)


def valid_unicode(value: Any) -> tuple[Any, int]:
    """``value`` (parsed JSON) with every unpaired surrogate replaced by U+FFFD, and the repair count.

    Strings, dict keys, lists and nested objects are walked; other values are returned as they are.
    The input is not modified when nothing needs repair (the same object comes back, count 0).
    """
    if isinstance(value, str):
        return _fix(value) if _SURROGATE.search(value) else (value, 0)
    if isinstance(value, list):
        total, out = 0, []
        for item in value:
            fixed, n = valid_unicode(item)
            out.append(fixed)
            total += n
        return (out, total) if total else (value, 0)
    if isinstance(value, dict):
        total, fixed_dict = 0, {}
        for key, item in value.items():
            new_key, nk = valid_unicode(key) if isinstance(key, str) else (key, 0)
            fixed, n = valid_unicode(item)
            fixed_dict[new_key] = fixed
            total += nk + n
        return (fixed_dict, total) if total else (value, 0)
    return value, 0
