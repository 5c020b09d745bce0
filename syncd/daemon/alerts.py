"""Alerts for watched entries: a warning line per retraction, withdrawal, expression of concern or deletion.

The daemon runs :func:`run_pass` every ``changes.poll_s`` seconds (leader only). A pass reads the change
feed past its cursor (``sync_state`` row ``alerts``, ``checkpoint = {"change_id": N}``), so changes
recorded by any process (the daemon's sweep and sync, ``syncd mcp``, ``syncd cache refresh``) alert
once, also across restarts. The first pass on a store starts the cursor at the newest change: the
history before it is not alerted.

For each watched change (:func:`syncd.store.changes.watched_clause`) and each of its types in
:data:`syncd.normalize.changes.ALERT_TYPES`, one line at WARNING::

    event=alert type=retraction kind=crossref_work doi=10.1016/s0140-6736(20)31180-6 \
notice=10.1016/s0140-6736(20)31324-6,10.1016/s0140-6736(20)31174-0 change=12 title='RETRACTED: ...'

and, for each watched work whose reference list cites a work with such a change (retraction,
withdrawal, expression of concern; the reference index, :mod:`syncd.store.references`)::

    event=alert type=cites_retracted kind=crossref_work doi=<watched work> cited=<cited DOI> \
cited_type=retraction notice=<notice DOIs> change=12 title='<the watched work's title>'

so ``journalctl -u syncd -p warning`` is the lab's retraction feed (``notice`` names the notice DOIs of
an update, ``reason`` the removal reason of a deleted record). With ``alerts.command`` set, the
command runs once per line with the alert as JSON on stdin (:func:`alert_document`), no shell, killed
after ``alerts.timeout_s`` and, on Linux, when the daemon ends (:func:`syncd.proc.pre_exec_die_with_parent`);
a failure is logged and never stops the pass.
"""

from __future__ import annotations

import json
import logging
import shlex
import subprocess
from typing import TYPE_CHECKING, Any

from syncd.normalize.changes import ALERT_TYPES
from syncd.proc import pre_exec_die_with_parent
from syncd.registry import SERIES_DOI_PREFIXES
from syncd.road.policy import iso
from syncd.store.changes import StoredChange, latest_change_id, list_changes
from syncd.store.references import citing_among
from syncd.store.repo import Store
from syncd.store.watches import get_sync_state, list_watches, save_sync_state

if TYPE_CHECKING:
    from syncd.config import Settings

__all__ = [
    "CITED_TYPES",
    "CITES_RETRACTED",
    "CURSOR",
    "PASS_LIMIT",
    "alert_document",
    "alerts_of",
    "run_command",
    "run_pass",
]

log = logging.getLogger("syncd.alerts")

CURSOR = "alerts"
"""Name of the ``sync_state`` row holding the id of the last change the alerts have looked at."""
PASS_LIMIT = 500
"""Most alerting changes handled by one pass (the rest wait for the next)."""
CITES_RETRACTED = "cites_retracted"
"""Alert type: a watched work cites a work that was just retracted, withdrawn or put under concern."""
CITED_TYPES = ("retraction", "withdrawal", "expression_of_concern")
"""Change types of a cited work that raise a ``cites_retracted`` alert for the watched works citing it."""


def alerts_of(change: StoredChange) -> list[str]:
    """The alert types of ``change``, in :data:`~syncd.normalize.changes.ALERT_TYPES` order."""
    return [t for t in ALERT_TYPES if t in change.types]


def _items(change: StoredChange, alert: str) -> list[dict[str, Any]]:
    return [i for i in change.summary.get("items") or [] if isinstance(i, dict) and i.get("type") == alert]


def alert_document(change: StoredChange, alert: str) -> dict[str, Any]:
    """The JSON an alert command reads on stdin.

    ``{"event": "alert", "type", "change_id", "kind", "key", "doi", "title", "detected_at" (ISO 8601
    UTC), "items" (the summary items of this type: notice ``doi``, ``source``, ``updated``, or the
    tombstone's ``removal_reason``...), "types" (every type of the change)}``.
    """
    return {
        "event": "alert",
        "type": alert,
        "change_id": change.id,
        "kind": change.kind,
        "key": change.key,
        "doi": change.doi,
        "title": change.summary.get("title"),
        "detected_at": iso(change.detected_at),
        "items": _items(change, alert),
        "types": list(change.types),
    }


def run_command(command: str | list[str], document: dict[str, Any], timeout_s: float) -> bool:
    """Run ``command`` with ``document`` as JSON on stdin; True when it exited 0 within ``timeout_s``.

    A string is split like a shell command line (:func:`shlex.split`), no shell runs it. Every failure
    (not found, non-zero exit, timeout: the process is killed) is logged at WARNING, never raised.
    """
    argv = shlex.split(command) if isinstance(command, str) else list(command)
    if not argv:
        return False
    try:
        done = subprocess.run(
            argv,
            input=json.dumps(document, ensure_ascii=False),
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
            preexec_fn=pre_exec_die_with_parent(),  # only prctl in the child: see syncd.proc
        )
    except subprocess.TimeoutExpired:
        log.warning("event=alert_command_failed cause=timeout timeout_s=%g command=%s", timeout_s, argv[0])
        return False
    except (OSError, ValueError) as exc:
        log.warning("event=alert_command_failed cause=%s command=%s", exc.__class__.__name__, argv[0])
        return False
    if done.returncode != 0:
        log.warning(
            "event=alert_command_failed cause=exit status=%d command=%s stderr=%r",
            done.returncode,
            argv[0],
            (done.stderr or "").strip()[:200],
        )
        return False
    return True


def _line(change: StoredChange, alert: str) -> None:
    items = _items(change, alert)
    if alert == "deleted":
        reasons = ",".join(sorted({str(i["removal_reason"]) for i in items if i.get("removal_reason")}))
        detail = f"reason={reasons or '-'}"
    else:
        dois = [str(i["doi"]) for i in items if i.get("doi")]
        detail = "notice=" + (",".join(dict.fromkeys(dois)) or "-")
    log.warning(
        "event=alert type=%s kind=%s doi=%s %s change=%d title=%r",
        alert,
        change.kind,
        change.doi or change.key,
        detail,
        change.id,
        str(change.summary.get("title") or "")[:200],
    )


def run_pass(store: Store, settings: Settings) -> int:
    """Alert the watched changes recorded since the last pass; returns the number of alert lines.

    Advances the cursor past every change looked at (watched or not). The first pass on a store only
    sets the cursor to the newest change.

    Raises:
        StoreError: the store cannot be read or the cursor written (the next pass retries).
    """
    latest = latest_change_id(store)
    state = get_sync_state(store, CURSOR)
    checkpoint = state.checkpoint if state is not None else None
    if not checkpoint or not isinstance(checkpoint.get("change_id"), int):
        save_sync_state(store, CURSOR, checkpoint={"change_id": latest})
        return 0
    cursor = int(checkpoint["change_id"])
    if latest <= cursor:
        return 0
    changes = [
        c
        for c in list_changes(
            store,
            after_id=cursor,
            types=ALERT_TYPES,
            watched_only=True,
            series_prefixes=SERIES_DOI_PREFIXES,
            limit=PASS_LIMIT,
        )
        if c.id <= latest
    ]
    lines = 0
    for change in changes:
        for alert in alerts_of(change):
            _line(change, alert)
            lines += 1
            if settings.alerts.command:
                run_command(settings.alerts.command, alert_document(change, alert), settings.alerts.timeout_s)
    done = changes[-1].id if len(changes) >= PASS_LIMIT else latest
    lines += _cited_alerts(store, settings, cursor, done)
    save_sync_state(store, CURSOR, checkpoint={"change_id": done})
    return lines


def _cited_alerts(store: Store, settings: Settings, cursor: int, done: int) -> int:
    """``cites_retracted`` alerts for the changes in ``(cursor, done]``; returns the alert lines.

    One per watched work citing a work whose change is a retraction, withdrawal or expression of
    concern (the reference index, :mod:`syncd.store.references`).
    """
    watched = {str(w.spec.get("doi") or "").lower() for w in list_watches(store, "doi")} - {""}
    if not watched:
        return 0
    changes = [
        c
        for c in list_changes(store, after_id=cursor, types=CITED_TYPES, limit=PASS_LIMIT)
        if c.id <= done and c.doi
    ]
    if not changes:
        return 0
    with store.read() as conn:
        citing = citing_among(conn, [c.doi or "" for c in changes])
    lines = 0
    for change in changes:
        works = [w for w in citing if w.cited == change.doi and (w.doi or w.key).lower() in watched]
        kinds = [t for t in CITED_TYPES if t in change.types]
        for work in works:
            if (work.doi or work.key).lower() == change.doi:
                continue
            notices = ",".join(dict.fromkeys(str(i["doi"]) for i in _items(change, kinds[0]) if i.get("doi")))
            log.warning(
                "event=alert type=%s kind=%s doi=%s cited=%s cited_type=%s notice=%s change=%d title=%r",
                CITES_RETRACTED,
                work.kind,
                work.doi or work.key,
                change.doi,
                kinds[0],
                notices or "-",
                change.id,
                str(work.title or "")[:200],
            )
            lines += 1
            if settings.alerts.command:
                document = {
                    **alert_document(change, kinds[0]),
                    "type": CITES_RETRACTED,
                    "citing": {"doi": work.doi or work.key, "title": work.title, "kind": work.kind},
                    "cited": change.doi,
                    "cited_type": kinds[0],
                }
                run_command(settings.alerts.command, document, settings.alerts.timeout_s)
    return lines
