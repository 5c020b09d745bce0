"""Output contract of ``syncd_list_changes``: the change feed, newest first, with a continuation."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from syncd.contracts.common import WithCache

__all__ = ["ChangeEntry", "ChangesView"]


class ChangeEntry(BaseModel):
    """One change found in a stored entry."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: int = Field(description="Change id (increasing in detection order).")
    kind: str = Field(description="Stored kind: crossref_work, zenodo_record or doi_ra (a DOI prefix).")
    key: str = Field(description="The entry's key: the lower-cased DOI, the Zenodo record id, or the prefix.")
    doi: str | None = Field(None, description="The entry's DOI (lower-cased), when it has one.")
    title: str | None = Field(None, description="The entry's title as stored now.")
    detected_at: str = Field(description="When syncd found the change (ISO 8601 UTC).")
    types: list[str] = Field(
        description="What changed: an update type that appeared in updatedBy (retraction, correction, "
        "erratum, expression_of_concern, withdrawal, ...), update_removed, title, authors, date, "
        "superseded, new_version, deleted, restricted, reinstated, found, agency_changed, metadata."
    )
    summary: str = Field(description="The change in one line.")
    items: list[dict[str, Any]] = Field(
        description="One object per change type: updates carry the notice doi, source, recordId and "
        "updated date; title/date carry from and to; deleted the tombstone's removal_reason."
    )
    watched: bool = Field(description="True when the entry is on the DOI watch list.")


class ChangesView(WithCache):
    """``syncd_list_changes`` output: changes newest first, answered from the store only."""

    changes: list[ChangeEntry] | None = Field(None, description="Changes on this page, newest first.")
    count: int | None = Field(None, description="Changes on this page.")
    since: str | None = Field(None, description="Start of the window searched (ISO 8601 UTC).")
    nextCursor: str | None = Field(
        None, description="Pass back as cursor for the next (older) page; absent on the last page."
    )
    notice: str | None = Field(None, description="Why the page is empty, or how to read on.")
