"""The Retraction Watch slice as the composition root sees it (:class:`~syncd.slice.Slice`).

It stores no entry kind of its own (its versions and rows are tables of their own) and sends no
request through the budget: what it declares here is its MCP tool, ``syncd_cited_by`` over the
reference index, and the daemon's read of the Retraction Watch source
(:func:`syncd.retractions.fetch.daemon_pass`, checked every :data:`~syncd.retractions.fetch.CHECK_S`).
"""

from __future__ import annotations

from syncd.retractions.names import CHECK_S
from syncd.slice import Job, Slice

__all__ = ["SLICE"]

SLICE = Slice(
    name="retractions",
    tools=("syncd.retractions.tools",),
    jobs=(Job("retractions", "syncd.retractions.fetch", CHECK_S),),
    verdicts="syncd.retractions.verdicts",
)
"""``syncd_cited_by``: the stored works whose reference lists cite a DOI."""
