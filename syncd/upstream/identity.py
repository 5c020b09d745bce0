"""Is a "not found" really the service's own? Telling a real 404 from a wrong base URL.

A mistyped ``crossref.base_url`` or ``zenodo.base_url`` reaches some other web server (or another
mount of the right one), whose 404 would otherwise be read as "this DOI / record does not exist",
stored as a miss and answered as fresh. Each service's own 404 has a known shape:

- Crossref: the plain text ``Resource not found.`` (sometimes labelled ``application/json``), or a
  JSON ``{"status": "failed", "message-type": ...}`` object (a bad cursor).
- Zenodo (InvenioRDM): a JSON object ``{"status": 404, "message": "..."}``, or trimmed by a proxy or a
  recording to ``{"status": 404}``: a JSON object whose ``status`` equals the HTTP status (issue 25
  item 5). An HTML or plain-text 404 is never Zenodo's own.

Anything else is :class:`~syncd.errors.UpstreamUnavailable` with a hint naming the base-URL setting,
and nothing is stored.
"""

from __future__ import annotations

import json
from typing import Any

from syncd.errors import UpstreamUnavailable

__all__ = ["CROSSREF_404_TEXT", "foreign_not_found", "is_crossref_not_found", "is_zenodo_not_found"]

CROSSREF_404_TEXT = "Resource not found."


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def is_crossref_not_found(text: str) -> bool:
    """True when a 404 body is Crossref's own (plain ``Resource not found.`` or a failed-status JSON)."""
    if text.strip() == CROSSREF_404_TEXT:
        return True
    body = _json(text)
    return isinstance(body, dict) and body.get("status") == "failed" and "message-type" in body


def is_zenodo_not_found(text: str) -> bool:
    """True when a 404 body is Zenodo's own: a JSON object whose ``status`` is 404.

    ``{"status": 404, "message": "PID does not exist."}`` and the trimmed ``{"status": 404}`` are;
    an HTML page, plain text, a JSON list or a ``message`` that is not a string are not.
    """
    body = _json(text)
    if not isinstance(body, dict) or body.get("status") != 404 or isinstance(body.get("status"), bool):
        return False
    return isinstance(body.get("message", ""), str)


def foreign_not_found(service: str, setting: str, base_url: str, text: str) -> UpstreamUnavailable:
    """The error for a 404 that is not ``service``'s own: its base URL is probably wrong.

    Args:
        service: ``crossref`` or ``zenodo``.
        setting: the setting to check, e.g. ``crossref.base_url``.
        base_url: its current value.
        text: the 404 body (only its first 60 characters go into the message, control characters dropped).
    """
    sample = "".join(ch for ch in text.strip()[:60] if ch.isprintable())
    return UpstreamUnavailable(
        f"{service} answered 404 with a body that is not {service}'s own ({sample!r}) from {base_url}",
        hint=f"{setting} may be wrong ({base_url}); nothing was stored as a miss.",
    )
