"""One Zenodo record asked for and stored: the ``zenodo_record`` kind, its stored form, misses, tombstones.

Records are stored as entries of kind ``zenodo_record`` (key: the record id; body: the raw record
JSON, either shape); misses as ``not_found`` / ``gone`` (the tombstone JSON) / ``restricted``;
concept record id -> latest version in the ``concepts`` table. A deleted record keeps its last good
body beside the tombstone (:func:`last_known`); when a newer version is learnt, older stored versions
stop claiming to be the latest (:func:`supersede_older`). The local-first lookups that use these are
in :mod:`syncd.zenodo.lookups`.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

from syncd.errors import MalformedResponse, NotFound
from syncd.store.content import content_hash, document, volatile_json
from syncd.store.repo import EntryContent, Store, StoredEntry
from syncd.upstream.http import Deadline
from syncd.zenodo import views as zenodo_norm
from syncd.zenodo.client import ZenodoClient
from syncd.zenodo.kinds import RECORD, latest_version, stored_record
from syncd.zenodo.names import ZENODO_RECORD

__all__ = [
    "LAST_KNOWN",
    "RECORD",
    "LastKnown",
    "conditional_etag",
    "fetch_record",
    "keep_last_known",
    "last_known",
    "latest_version",
    "load_record",
    "miss_error",
    "record_arrived",
    "record_content",
    "refetch_record",
    "stored_record",
    "supersede_older",
]

log = logging.getLogger("syncd.zenodo.lookups")


def load_record(rec: dict[str, Any], raw: str | None) -> EntryContent:
    """A ``zenodo_record`` line of ``syncd cache export``: the record (either JSON shape), tombstone or miss.

    Raises:
        MalformedResponse: an ``ok`` line without a record body, or a key that is not a record id.
    """
    status, body = str(rec.get("status", "ok")), rec.get("body")
    if status == "ok":
        if not isinstance(body, dict):
            raise MalformedResponse("zenodo record without a body")
        return record_content(body, raw, rec.get("etag"), rec.get("last_modified"))
    key = str(rec.get("key", ""))
    if not key.isdigit():
        raise MalformedResponse(f"bad Zenodo record id {key!r}")
    gone = raw if status == "gone" else None
    return RECORD.content(key, status, gone, content_hash(gone) if gone else None)


def record_arrived(store: Store, rec: dict[str, Any], when: float) -> None:
    """After an imported ``ok`` record: note it as its concept's latest version when it says it is."""
    body = rec.get("body")
    if rec.get("status", "ok") != "ok" or not isinstance(body, dict):
        return
    keys = zenodo_norm.record_keys(body)
    if keys.concept_recid and keys.is_latest:
        store.set_concept(keys.concept_recid, keys.recid, now=when)


def record_content(
    body: dict[str, Any],
    raw: str | None,
    etag: str | None = None,
    last_modified: str | None = None,
) -> EntryContent:
    """Build the stored form of a Zenodo record ``body`` (either JSON shape; raw text kept)."""
    keys = zenodo_norm.record_keys(body)
    view = zenodo_norm.record_view(body)
    names = " ".join(c.name for c in (view.creators or []) if c.name)
    search_text = " ".join(filter(None, (names, view.description, " ".join(view.keywords or []), view.doi)))
    return RECORD.content(
        key=keys.recid,
        status="ok",
        body=raw if raw is not None else json.dumps(body),
        content_hash=content_hash(zenodo_norm.content_hash_projection(body)),
        upstream_version=str(keys.revision) if keys.revision is not None else None,
        doi=keys.doi,
        concept_key=keys.concept_recid,
        title=view.title,
        search_text=search_text or None,
        etag=etag,
        last_modified=last_modified,
        volatile=volatile_json({"stats": body["stats"]} if "stats" in body else {}),
    )


def fetch_record(
    zenodo: ZenodoClient,
    store: Store,
    recid: str,
    entry: StoredEntry | None,
    deadline: Deadline,
    *,
    unconditional_every: int = 0,
) -> tuple[StoredEntry, str]:
    """Ask Zenodo for record ``recid`` now and store the answer; returns ``(entry, resolved_from)``.

    ``resolved_from`` is ``concept_to_latest`` when ``recid`` was a concept id that Zenodo redirected
    to its latest version (the mapping is stored), else ``version``. The request is conditional on
    the stored ETag except every ``unconditional_every``-th revalidation (:func:`conditional_etag`).
    Whenever a latest version is learnt, older stored versions stop claiming to be the latest
    (:func:`supersede_older`).

    Raises:
        UpstreamError, BudgetExhausted: upstream could not be used; nothing was written.
    """
    answer = zenodo.get_record(recid, deadline, etag=conditional_etag(entry, unconditional_every))
    if answer.status == "not_modified" and entry is not None:
        store.mark_validated(entry.id, etag=answer.etag, last_modified=answer.last_modified)
        return store.get_by_id(entry.id) or entry, "version"
    if answer.status != "ok" or answer.body is None:
        body = answer.text if answer.status == "gone" else None
        held = entry if entry is not None else store.get(ZENODO_RECORD, recid)
        if answer.status == "gone" and held is not None and held.status == "ok":
            keep_last_known(store, held)
        content = RECORD.content(  # a tombstone keeps the title and DOI it was known by
            recid,
            answer.status,
            body,
            content_hash(body) if body else None,
            doi=held.doi if held is not None and answer.status == "gone" else None,
            concept_key=held.concept_key if held is not None and answer.status == "gone" else None,
            title=held.title if held is not None and answer.status == "gone" else None,
        )
        stored, _ = store.put_content(content)
        return stored, "version"
    keys = zenodo_norm.record_keys(answer.body)
    content = record_content(answer.body, answer.text, answer.etag, answer.last_modified)
    stored, changed = store.put_content(content)
    log.debug("event=stored kind=zenodo_record key=%s changed=%s", keys.recid, changed)
    via = "version"
    if keys.recid != recid:
        # asked for a concept record id: Zenodo redirected to its latest version
        store.set_concept(recid, keys.recid)
        supersede_older(store, recid, keys.recid)
        via = "concept_to_latest"
    elif keys.concept_recid and keys.is_latest:
        store.set_concept(keys.concept_recid, keys.recid)
        supersede_older(store, keys.concept_recid, keys.recid)
    return stored, via


def refetch_record(
    zenodo: ZenodoClient,
    store: Store,
    entry: StoredEntry,
    deadline: Deadline,
    *,
    unconditional_every: int = 0,
) -> StoredEntry:
    """Ask Zenodo again for the stored record ``entry`` (conditionally but every Nth) and store the answer."""
    stored, _ = fetch_record(
        zenodo, store, entry.key, entry, deadline, unconditional_every=unconditional_every
    )
    return stored


def conditional_etag(entry: StoredEntry | None, every: int) -> str | None:
    """The ETag to send with a record revalidation, or None for an unconditional GET.

    Zenodo's ETag is the record's revision (``W/"4"``): it does not move when a newer version of the
    series is published, so ``versions.is_latest`` could stay stale forever behind 304s. Every
    ``every``-th check (``zenodo.unconditional_every``; 1: always unconditional; 0: always
    conditional) is sent without ``If-None-Match``.
    """
    if entry is None or not entry.etag:
        return None
    if every >= 1 and entry.checks > 0 and entry.checks % every == 0:
        return None
    return entry.etag


_MISSES = {
    "not_found": ("record_not_found", "no Zenodo record has this id"),
    "gone": ("record_deleted", "the record was deleted (a tombstone is stored)"),
    "restricted": ("record_restricted", "the record's metadata is restricted"),
}


def miss_error(entry: StoredEntry, label: str) -> NotFound:
    """The declared error for a stored record miss (``not_found``, ``gone``, ``restricted``) of ``label``."""
    reason, what = _MISSES.get(entry.status, ("record_not_found", entry.status))
    return NotFound(f"{label}: {what}", reason=reason)


def _not_latest(body: dict[str, Any], latest_recid: str) -> dict[str, Any]:
    """Top-level keys laid over a stored version's body so it says it is not the latest (either shape)."""
    if isinstance(body.get("versions"), dict):
        return {"versions": {**body["versions"], "is_latest": False}}
    held = body.get("metadata")
    metadata: dict[str, Any] = held if isinstance(held, dict) else {}
    related = metadata.get("relations")
    relations: dict[str, Any] = related if isinstance(related, dict) else {}
    chain = relations.get("version")
    if isinstance(chain, list) and chain and isinstance(chain[0], dict):
        first = {**chain[0], "is_last": False, "last_child": {"pid_type": "recid", "pid_value": latest_recid}}
        return {"metadata": {**metadata, "relations": {**relations, "version": [first, *chain[1:]]}}}
    return {}


def supersede_older(store: Store, concept_recid: str, latest_recid: str) -> int:
    """Stored versions of ``concept_recid`` other than ``latest_recid`` stop claiming ``is_latest: true``.

    Their stored body is left as Zenodo sent it; the correction is laid over it through the entry's
    volatile fields (read by :func:`syncd.store.content.document`) and the stored ETag is dropped so
    the next revalidation is unconditional. Returns how many versions were corrected.
    """
    corrected = 0
    for entry_id in store.series_ids(ZENODO_RECORD, concept_recid, besides=latest_recid):
        entry = store.get_by_id(entry_id)
        if entry is None:
            continue
        body = document(entry)
        try:
            claims = zenodo_norm.record_keys(body).is_latest
        except (MalformedResponse, ValueError, KeyError, TypeError):
            continue
        overlay = _not_latest(body, latest_recid) if claims else {}
        if not overlay:
            continue
        volatile = {**json.loads(entry.volatile or "{}"), **overlay}
        store.overlay_volatile(entry_id, volatile_json(volatile))
        corrected += 1
        log.info("event=superseded recid=%s concept=%s latest=%s", entry.key, concept_recid, latest_recid)
    return corrected


LAST_KNOWN = "last_known"
"""``previous_bodies.role`` of the last good body of a record Zenodo later deleted (kept as long as the
tombstone, never pruned by ``store.keep_previous_s``)."""


@dataclass(frozen=True)
class LastKnown:
    """The last good body stored of a record now deleted: ``body`` (parsed), ``fetched_at`` (epoch s)."""

    body: dict[str, Any]
    fetched_at: float


def keep_last_known(store: Store, held: StoredEntry) -> None:
    """Keep ``held``'s good body beside the tombstone about to replace it (role :data:`LAST_KNOWN`)."""
    store.keep_body(held, LAST_KNOWN, "gone")
    log.info("event=last_known_kept recid=%s title=%r", held.key, held.title)


def last_known(store: Store, entry: StoredEntry) -> LastKnown | None:
    """The last good metadata of the deleted record ``entry``, or None when syncd never held it.

    The kept :data:`LAST_KNOWN` body, else the newest replaced ``ok`` body still kept.
    """
    kept = [b for b in store.previous_bodies(entry.id) if b["status"] == "ok" and b["body"]]
    kept.sort(key=lambda b: b["role"] != LAST_KNOWN)  # stable: the last-known row first, then newest
    for row in kept:
        try:
            body = json.loads(row["body"])
        except ValueError:
            continue
        if isinstance(body, dict):
            return LastKnown(body, float(row["fetched_at"]))
    return None
