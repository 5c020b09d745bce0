"""The daemon's scheduled read of the Retraction Watch data (setting ``retractions.source``).

:func:`fetch_when_due` runs from the daemon every :data:`CHECK_S` seconds (leader only) and reads the
source at most once per ``retractions.interval_s`` (a day at least), whatever the number of
restarts: when it last tried is kept in the store (``sync_state`` row :data:`STATE`,
``checkpoint = {"attempted_at", "etag", "last_modified", "sha256", "error"}``). An https source is
downloaded with ``If-None-Match`` / ``If-Modified-Since`` from the last answer (a 304 reads
nothing), under the network settings (proxy, CA), at most ``retractions.max_bytes``; a path is read
as ``syncd retractions import`` reads it. Either way an unchanged file (same SHA-256) is not parsed
again. A failed read (network, HTTP status, too big, not the export, store) is logged at WARNING
(``event=retractions_fetch_failed``) and the last good version stays the one verdicts rest on.

A file the import guard refuses (cut, damaged, row-less, or removing more than
``retractions.max_removed_share`` of the rows; :class:`~syncd.retractions.csvfile.RefusedFile`) is
*held back*: logged at WARNING (``event=retractions_held_back``), the version held kept, and the
refusal kept in the state's checkpoint (``held_back = {"refusal", "detail", "sha256", "at"}``) until a
good file is imported; :func:`held_back` reads it for ``/healthz`` and ``/status``. The refused
file's validators are not kept, so the next read downloads it again.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import TYPE_CHECKING, Any

import httpx

from syncd import __version__
from syncd.errors import MalformedResponse, StoreError, SyncdError, UpstreamUnavailable
from syncd.retractions.csvfile import RefusedFile
from syncd.retractions.feed import flush_pending
from syncd.retractions.importer import ImportReport, import_bytes, import_path
from syncd.retractions.names import CHECK_S
from syncd.retractions.settings import SECTION
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.store.watches import get_sync_state, save_sync_state
from syncd.upstream.network import client_options, masked

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = [
    "CHECK_S",
    "STATE",
    "FetchOutcome",
    "HeldBack",
    "daemon_pass",
    "fetch_when_due",
    "held_back",
    "scheduled_pass",
]

log = logging.getLogger("syncd.retractions")

STATE = "retractions"
"""Name of the ``sync_state`` row holding when the source was last read and its validators."""

FetchOutcome = ImportReport | str | None
"""What one call did: the import, ``"not_modified"`` (HTTP 304), an error reason, or None (not due).

A file refused by the import guard gives ``"held_back:<refusal>"`` (``held_back:shrink``, ...).
"""
HeldBack = dict[str, Any]
"""A refused file: ``{"refusal": str, "detail": str, "sha256": str | None, "at": epoch s}``."""


def held_back(store: Store) -> HeldBack | None:
    """The last file the daemon's read refused and why, while no good file came after it; else None.

    Raises:
        StoreError: the store cannot be read.
    """
    state = get_sync_state(store, STATE)
    found = (state.checkpoint or {}).get("held_back") if state is not None else None
    return dict(found) if isinstance(found, dict) else None


def _download(
    settings: Settings, url: str, checkpoint: dict[str, Any], transport: httpx.BaseTransport | None
) -> tuple[bytes | None, dict[str, Any]]:
    """The body at ``url`` (None on a 304) and its validators.

    Raises:
        httpx.HTTPError: the request failed; UpstreamUnavailable: an HTTP status other than 200 and
            304; MalformedResponse: a body over ``retractions.max_bytes``.
    """
    cfg = SECTION.of(settings)
    headers = {"User-Agent": f"syncd/{__version__} (retraction-watch import)"}
    if checkpoint.get("etag"):
        headers["If-None-Match"] = checkpoint["etag"]
    if checkpoint.get("last_modified"):
        headers["If-Modified-Since"] = checkpoint["last_modified"]
    options: dict[str, Any] = client_options(settings.network, url)
    if transport is not None:  # the test seam: no proxy, the given transport
        options = {"transport": transport}
    with (
        httpx.Client(timeout=cfg.timeout_s, follow_redirects=True, **options) as client,
        client.stream("GET", url, headers=headers) as response,
    ):
        if response.status_code == 304:
            return None, {}
        if response.status_code != 200:
            raise UpstreamUnavailable(f"{masked(url)} answered HTTP {response.status_code}")
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > cfg.max_bytes:
                raise MalformedResponse(f"larger than retractions.max_bytes ({cfg.max_bytes} bytes)")
            chunks.append(chunk)
        validators = {
            "etag": response.headers.get("etag"),
            "last_modified": response.headers.get("last-modified"),
        }
    return b"".join(chunks), validators


def fetch_when_due(
    store: Store, settings: Settings, now: float | None = None, transport: httpx.BaseTransport | None = None
) -> FetchOutcome:
    """Read ``retractions.source`` when due (see the module docstring); never raises for the source.

    ``transport``: the HTTP transport to use instead of the network's (tests: ``httpx.MockTransport``).

    Raises:
        StoreError: the store cannot be read or the state written (the next check retries).
    """
    source = SECTION.of(settings).source
    if not source:
        return None
    now = time.time() if now is None else now
    state = get_sync_state(store, STATE)
    checkpoint = dict(state.checkpoint or {}) if state is not None else {}
    attempted = checkpoint.get("attempted_at")
    if isinstance(attempted, (int, float)) and now - attempted < SECTION.of(settings).interval_s:
        return None
    outcome: FetchOutcome
    guard = SECTION.of(settings).max_removed_share
    data: bytes | None = None
    try:
        if source.startswith(("https://", "http://")):
            data, validators = _download(settings, source, checkpoint, transport)
            if data is None:
                outcome = "not_modified"
            else:
                outcome = import_bytes(store, data, source, None, now, max_removed_share=guard)
                checkpoint.update(validators, sha256=hashlib.sha256(data).hexdigest())
                checkpoint["held_back"] = None
        else:
            outcome = import_path(store, source, now, max_removed_share=guard)
            checkpoint["sha256"] = outcome.dataset.sha256
            checkpoint["held_back"] = None
        checkpoint["error"] = None
    except RefusedFile as exc:
        log.warning(
            "event=retractions_held_back source=%s refusal=%s detail=%r (the version held is kept)",
            masked(source),
            exc.refusal,
            exc.message[:300],
        )
        digest = hashlib.sha256(data).hexdigest() if data is not None else None
        checkpoint["held_back"] = {"refusal": exc.refusal, "detail": exc.message, "sha256": digest, "at": now}
        checkpoint["error"] = f"held_back:{exc.refusal}"
        outcome = checkpoint["error"]
    except (httpx.HTTPError, OSError, SyncdError) as exc:
        reason = exc.reason if isinstance(exc, SyncdError) else "upstream_unavailable"
        log.warning(
            "event=retractions_fetch_failed source=%s reason=%s detail=%r (the last good version is kept)",
            masked(source),
            reason,
            str(exc)[:200],
        )
        checkpoint["error"] = reason
        outcome = str(reason)
    checkpoint["attempted_at"] = now
    if checkpoint["error"] is None:
        save_sync_state(store, STATE, checkpoint=checkpoint, last_success_at=now, now=now)
    else:
        save_sync_state(store, STATE, checkpoint=checkpoint, now=now)
    return outcome


def scheduled_pass(store: Store, settings: Settings) -> None:
    """The daemon's job: :func:`fetch_when_due`, skipped while the store cannot be written (logged)."""
    if store.write_problem() is not None:
        return
    try:
        flush_pending(store, time.time())
        fetch_when_due(store, settings)
    except StoreError as exc:
        log.info("event=retractions_skipped reason=%s", exc.reason)


def daemon_pass(svc: Services) -> None:
    """The slice's daemon job (:class:`~syncd.slice.Job`): :func:`scheduled_pass` when a source is set."""
    if SECTION.of(svc.settings).source:
        scheduled_pass(svc.store, svc.settings)
