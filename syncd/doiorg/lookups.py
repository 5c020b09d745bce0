"""doi.org lookups through the local-first path: the registration agency (RA) of a DOI prefix.

One kind, ``doi_ra``: doi.org's ``/ra/{prefix}`` answer, keyed by the DOI prefix (``10.5281``), body
the raw doi.org JSON. The Crossref slice asks it to say which agency holds a DOI Crossref does not
know, the Zenodo slice to name where a DOI no Zenodo record holds can be read; both import this
module, never each other.
"""

from __future__ import annotations

from syncd.doiorg.client import DoiClient
from syncd.doiorg.kinds import RA
from syncd.road.local_first import local_first
from syncd.road.services import Services
from syncd.store.content import content_hash
from syncd.store.repo import Store, StoredEntry
from syncd.upstream.http import Deadline, current_deadline

__all__ = ["RA", "fetch_ra", "registration_agency"]


def fetch_ra(doi: DoiClient, store: Store, prefix: str, deadline: Deadline) -> StoredEntry:
    """Ask doi.org ``/ra/{prefix}`` now and store the answer (``ok`` with the agency, else ``not_found``).

    Raises:
        MalformedResponse: doi.org's body is not the documented list shape (nothing written).
        UpstreamError, BudgetExhausted: doi.org could not be used; nothing was written.
    """
    answer = doi.ra(prefix, deadline)
    if answer.status == "ok":
        content = RA.content(
            prefix, "ok", answer.text, content_hash({"ra": answer.agency}), title=answer.agency
        )
    else:
        content = RA.content(prefix, "not_found", None, None)
    stored, _ = store.put_content(content)
    return stored


def registration_agency(svc: Services, prefix: str, deadline: Deadline | None = None) -> str | None:
    """The registration agency of a DOI prefix, local-first (doi.org ``/ra/{prefix}``, field ``RA``).

    The agency doi.org names for DOI ``prefix`` (``Crossref``, ``DataCite``, ``mEDRA``...), or None
    when no agency registered it. Local-first: one doi.org request per prefix per ``ttl.entity``
    (seconds).

    Raises:
        UpstreamError, BudgetExhausted: nothing stored and doi.org could not be used.
    """
    deadline = deadline or current_deadline(svc.settings.deadline_s)
    stored, _ = local_first(
        svc.runner,
        RA,
        prefix,
        lambda: fetch_ra(svc.upstreams.doi, svc.store, prefix, deadline),
        deadline=deadline,
    )
    return stored.title if stored.status == "ok" else None
