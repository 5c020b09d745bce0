"""The reverse query: Crossref's notices whose ``update-to`` names a work, ``/works?filter=updates:{doi}``.

Some retractions show only as a notice record pointing at the work (its own record carries no
``updated-by``): the reverse query finds them. It is a Crossref list request, so it is asked
local-first like any list page (:func:`syncd.crossref.lookups.list_page`: a ``crossref_search``
entry keyed by route and parameters, ``ttl.search``, budget pool ``crossref_list``); the notices it
lists are also stored as partial works. :func:`stored_reverse` reads a stored page without asking
(any age); :func:`ask_reverse` asks for the works given (the verdict asks only for works whose
``updated-by`` and Retraction Watch rows say nothing, :func:`syncd.retractions.verdict.needs_reverse`).
Once upstream cannot be used (down, budget spent), the remaining works are answered from their
stored pages only, so one failure costs one request, not one per work.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from syncd.crossref.lookups import list_page, message_of, search_key
from syncd.crossref.names import CROSSREF_SEARCH
from syncd.crossref.params_filter import filter_safe
from syncd.errors import BudgetExhausted, UpstreamError, UpstreamRejected
from syncd.retractions.facts import NoticeFact, ReverseFacts, update_fact
from syncd.road.services import Services
from syncd.store.repo import Store
from syncd.upstream.http import Deadline, current_deadline

__all__ = [
    "NOT_FILTER_SAFE",
    "ROUTE",
    "ROWS",
    "ask_reverse",
    "notices_in",
    "reverse_params",
    "stored_reverse",
]

log = logging.getLogger("syncd.retractions")

ROUTE = "/works"
"""The route of the reverse query."""
NOT_FILTER_SAFE = "not_filter_safe"
"""State of a work whose DOI cannot be written in ``filter=updates:`` (not asked)."""
ROWS = 50
"""Notices asked per work (``rows``); a work with more is read for the first ones (``total`` says)."""


def reverse_params(doi: str) -> dict[str, str]:
    """The query parameters of the reverse query for ``doi`` (lower-cased): ``filter``, ``rows``."""
    return {"filter": f"updates:{doi.lower()}", "rows": str(ROWS)}


def notices_in(doi: str, message: dict[str, Any], validated_at: float | None) -> list[NoticeFact]:
    """The ``update-to`` entries naming ``doi`` of the items of a reverse-query page ``message``.

    An item that is the work itself (an update recorded in place) is left out: its own record says it.
    """
    own = doi.lower()
    out = []
    for item in message.get("items") or []:
        if not isinstance(item, dict) or not isinstance(item.get("DOI"), str):
            continue
        notice = item["DOI"].lower()
        if notice == own:
            continue
        for raw in item.get("update-to") or []:
            fact = update_fact(raw) if isinstance(raw, dict) else None
            if fact is not None and fact.doi == own:
                out.append(NoticeFact(notice, fact, validated_at))
    return out


def _facts(
    doi: str, state: str, message: dict[str, Any], validated_at: float | None, requested: bool = False
) -> ReverseFacts:
    total = message.get("total-results")
    return ReverseFacts(
        state,
        tuple(notices_in(doi, message, validated_at)),
        total if isinstance(total, int) else None,
        validated_at,
        requested,
    )


def stored_reverse(store: Store, doi: str) -> ReverseFacts | None:
    """The stored reverse-query page of ``doi`` (state ``stored``, any age), None when none is stored."""
    entry = store.get(CROSSREF_SEARCH, search_key(ROUTE, reverse_params(doi)))
    if entry is None or entry.status != "ok":
        return None
    return _facts(doi, "stored", message_of(entry), entry.validated_at)


def ask_reverse(
    svc: Services, dois: Sequence[str], deadline: Deadline | None = None
) -> dict[str, ReverseFacts]:
    """The reverse query of each of ``dois`` (lower-cased keys), local-first within the budget.

    A fresh stored page answers without a request; a stale or missing one is asked. A DOI that cannot
    go into a filter (:func:`~syncd.crossref.params_filter.filter_safe`: a comma, a colon...) is not
    asked (state :data:`NOT_FILTER_SAFE`); one whose filter Crossref refuses carries the reason.
    After the first other failure (``upstream_unavailable``, ``rate_limited``, ``request_timeout``...),
    the rest are answered from their stored pages (``stored``) or carry that reason. Never raises
    for upstream failures.

    Raises:
        StoreError: the store cannot be read.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    out: dict[str, ReverseFacts] = {}
    failed: str | None = None
    for doi in dict.fromkeys(d.lower() for d in dois):
        if not filter_safe(doi):
            out[doi] = ReverseFacts(NOT_FILTER_SAFE)
            continue
        if failed is not None:
            out[doi] = stored_reverse(svc.store, doi) or ReverseFacts(failed)
            continue
        try:
            page = list_page(svc, ROUTE, reverse_params(doi), deadline)
        except UpstreamRejected as exc:  # this DOI's filter refused: the others may still be asked
            out[doi] = ReverseFacts(exc.reason, requested=True)
            continue
        except (UpstreamError, BudgetExhausted) as exc:
            failed = exc.reason
            log.info("event=reverse_query_failed doi=%s reason=%s", doi, failed)
            held = stored_reverse(svc.store, doi) or ReverseFacts(failed)
            out[doi] = replace(held, requested=isinstance(exc, UpstreamError))
            continue
        state = "asked" if not page.provenance.stale else "stored"
        requested = page.provenance.source == "upstream" or page.provenance.upstream_error is not None
        out[doi] = _facts(doi, state, page.message, page.provenance.validated_at, requested)
    return out
