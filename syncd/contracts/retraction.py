"""Pydantic models of a retraction verdict as the tools and ``syncd check --json`` give it.

The JSON is :meth:`syncd.retractions.verdict.Verdict.as_dict` with times as ISO 8601 UTC. Used by
``crossref_get_works`` (each item's optional ``retraction``) and the check report.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "RetractionBasis",
    "RetractionSignal",
    "RetractionVerdict",
    "RetractionWatchVersion",
    "UpdatesQuery",
]

Level = Literal["retracted", "expression_of_concern", "corrected", "reinstated"]


class _Model(BaseModel):
    """Base of the models here: unknown keys refused; built on first use (``defer_build``)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class RetractionWatchVersion(_Model):
    """The imported Retraction Watch version a verdict rests on."""

    sha256: str = Field(description="SHA-256 of the retraction_watch.csv file imported (hex).")
    rows: int = Field(description="Rows in that file.")
    importedAt: str = Field(description="When it was imported (ISO 8601 UTC).")
    source: str = Field(description="The path or URL it was read from.")
    commit: str | None = Field(None, description="Git commit of the checkout it came from, when one.")


class RetractionSignal(_Model):
    """One piece of evidence for a verdict."""

    source: str = Field(
        description="crossref:retraction-watch or crossref:publisher (an updatedBy entry), crossref:notice "
        "(a stored notice whose update-to names the work), crossref:updates-query (a notice the reverse "
        "query filter=updates:{doi} found), retraction-watch-data (a row of the imported "
        "Retraction Watch file), title (a RETRACTED:/WITHDRAWN:/Expression of Concern: title prefix)."
    )
    type: str = Field(description="Update type or Retraction Watch nature, e.g. retraction, erratum.")
    level: Level = Field(description="The severity this signal supports.")
    noticeDoi: str | None = Field(None, description="DOI of the notice (retraction, correction...).")
    date: str | None = Field(None, description="Date of the notice (ISO 8601, possibly year or year-month).")
    recordId: str | None = Field(None, description="Retraction Watch record id.")
    lifted: bool | None = Field(None, description="True: a later reinstatement lifted this retraction.")


class UpdatesQuery(_Model):
    """The reverse query ``/works?filter=updates:{doi}`` (Crossref's notices naming the work)."""

    state: str = Field(
        description="asked: answered now or from its stored page within ttl.search; stored: a stored "
        "page read without asking; otherwise the reason it could not be asked (upstream_unavailable, "
        "rate_limited...)."
    )
    notices: int = Field(description="Notices found whose update-to names the work.")
    total: int | None = Field(None, description="Crossref's total-results for the query.")
    validatedAt: str | None = Field(
        None, description="When the page used was last confirmed upstream (ISO 8601 UTC)."
    )


class RetractionBasis(_Model):
    """The data a verdict rests on and how old it is."""

    crossref: Literal["seen", "not_found", "unseen", "not_asked"] = Field(
        description="seen: the Crossref record was read; not_found: Crossref holds none; unseen: it "
        "could not be read now (upstream down, budget spent); not_asked: no DOI to ask."
    )
    crossrefValidatedAt: str | None = Field(
        None, description="When the Crossref record used was last confirmed upstream (ISO 8601 UTC)."
    )
    retractionWatch: RetractionWatchVersion | None = Field(
        None, description="The Retraction Watch version consulted; absent when none was imported."
    )
    updatesQuery: UpdatesQuery | None = Field(
        None,
        description="The reverse query, when it was consulted (the work's updatedBy and the Retraction "
        "Watch data said nothing, and the check asked for it or its page was stored).",
    )
    agencyRecord: str | None = Field(
        None, description="Another agency's DOI: '<agency>: seen|not_found|unseen' (its record there)."
    )


class RetractionVerdict(_Model):
    """One verdict from every signal: Crossref updatedBy, stored notices, Retraction Watch, title."""

    severity: Literal[
        "retracted", "expression_of_concern", "corrected", "reinstated", "none_found", "unknown"
    ] = Field(
        description="The most severe level the signals support (a reinstatement lifts the retractions "
        "before it); none_found: the record was seen and no signal found; unknown: no record could "
        "be seen (see reason) - never read it as clean."
    )
    signals: list[RetractionSignal] = Field(description="The evidence, each with its source.")
    reason: str | None = Field(None, description="Why the verdict is unknown.")
    replaced: bool | None = Field(
        None, description="True: retracted and replaced under the same DOI (the record is now the notice)."
    )
    restsOn: RetractionBasis = Field(description="The data the verdict rests on.")
    notes: list[str] | None = Field(None, description="Remarks for people (e.g. this record is a notice).")
