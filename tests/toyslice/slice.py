"""The toy slice: its kind (``toy_note``, searchable by its text), client, local-first lookup and SLICE."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from syncd.kinds import Kind, KindHooks
from syncd.road.local_first import Answer, local_first
from syncd.road.services import Services
from syncd.slice import Slice
from syncd.store.content import content_hash
from syncd.store.repo import StoredEntry
from syncd.upstream.http import Deadline, UpstreamHTTP, current_deadline
from tests.toyslice import pools
from tests.toyslice.settings import SECTION

if TYPE_CHECKING:
    import httpx

    from syncd.budget.buckets import Budget
    from syncd.config import Settings

__all__ = ["NOTE", "SLICE", "ToyClient", "fetch_note", "get_note"]


class ToyClient:
    """The toy upstream's client (pool ``toy_notes``)."""

    def __init__(
        self, settings: Settings, budget: Budget, transport: httpx.BaseTransport | None = None
    ) -> None:
        section = SECTION.of(settings)
        self.http = UpstreamHTTP(
            "toy",
            section.base_url,
            budget,
            headers={"X-Toy-Signature": section.signature, "Accept": "application/json"},
            transport=transport,
            network=settings.network,
        )

    def close(self) -> None:
        """Close connections."""
        self.http.close()

    def note(self, note_id: str, deadline: Deadline) -> tuple[str, dict[str, Any]]:
        """``GET /notes/{id}``: the body text and its JSON."""
        resp = self.http.get("toy_notes", f"/notes/{note_id}", deadline=deadline)
        return resp.text, resp.json


def fetch_note(svc: Services, key: str, deadline: Deadline) -> StoredEntry:
    """Ask the toy upstream for note ``key`` now and store it (title and text searchable)."""
    text, body = svc.upstreams.toy.note(key, deadline)
    content = NOTE.content(key, "ok", text, content_hash(body), title=body["title"], search_text=body["text"])
    stored, _ = svc.store.put_content(content)
    return stored


def get_note(svc: Services, key: str) -> Answer:
    """Note ``key``, local-first: from the store while fresh (``ttl.toy_note``), else from upstream."""
    deadline = current_deadline(svc.settings.deadline_s)
    return local_first(svc.runner, NOTE, key, lambda: fetch_note(svc, key, deadline), deadline=deadline)


def _refetch(svc: Services, entry: StoredEntry, deadline: Deadline) -> StoredEntry:
    return fetch_note(svc, entry.key, deadline)


NOTE = Kind("toy_note", "toy_note", pools.TOY.name, hooks=KindHooks(refetch=_refetch))
"""A toy note: ``GET /notes/{id}`` (``ttl.toy_note``, pool ``toy_notes``), refetched by the sweep."""

SLICE = Slice(
    name="toyslice",
    kinds=(NOTE,),
    clients={"toy": ToyClient},
    pools=pools.POOLS,
    tools=("tests.toyslice.tools",),
)
"""The toy slice as the composition root sees it."""


def note_data(stored: StoredEntry) -> dict[str, Any]:
    """The stored note's fields."""
    body = json.loads(stored.body or "{}")
    return {"id": stored.key, "title": body.get("title"), "text": body.get("text")}
