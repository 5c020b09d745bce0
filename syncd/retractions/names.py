"""Names shared by the Retraction Watch modules: natures, severities, sources, the file name."""

from __future__ import annotations

from typing import Final, Literal

__all__ = [
    "CHECK_S",
    "CSV_NAME",
    "MAX_REMOVED_SHARE",
    "NATURES",
    "SEVERITIES",
    "SOURCE_CROSSREF_PUBLISHER",
    "SOURCE_CROSSREF_RW",
    "SOURCE_NOTICE",
    "SOURCE_REVERSE",
    "SOURCE_RW_DATA",
    "SOURCE_TITLE",
    "Severity",
]

CSV_NAME: Final = "retraction_watch.csv"
"""The file's name in Crossref's ``retraction-watch-data`` repository (read from a directory)."""
CHECK_S: Final = 3600.0
"""Seconds between two checks whether the Retraction Watch source is due (the daemon's job interval)."""
MAX_REMOVED_SHARE: Final = 0.02
"""Default share (0..1) of the rows held a new version may remove (``retractions.max_removed_share``)."""

NATURES: Final[dict[str, str]] = {
    "retraction": "retraction",
    "correction": "correction",
    "expression of concern": "expression_of_concern",
    "reinstatement": "reinstatement",
}
"""``RetractionNature`` as written (lower-cased) -> the nature stored (Crossref's update-type spelling)."""

Severity = Literal["retracted", "expression_of_concern", "corrected", "reinstated", "none_found", "unknown"]
SEVERITIES: Final[tuple[Severity, ...]] = (
    "retracted",
    "expression_of_concern",
    "corrected",
    "reinstated",
    "none_found",
    "unknown",
)
"""Verdict severities, most severe first (``unknown``: no record could be seen)."""

SOURCE_CROSSREF_RW: Final = "crossref:retraction-watch"
"""Signal source: an ``updated-by`` entry of the Crossref record asserted by Retraction Watch."""
SOURCE_CROSSREF_PUBLISHER: Final = "crossref:publisher"
"""Signal source: an ``updated-by`` entry of the Crossref record asserted by the publisher."""
SOURCE_NOTICE: Final = "crossref:notice"
"""Signal source: a stored notice record whose ``update-to`` names the work."""
SOURCE_REVERSE: Final = "crossref:updates-query"
"""Signal source: a notice found by the reverse query ``/works?filter=updates:{doi}``."""
SOURCE_RW_DATA: Final = "retraction-watch-data"
"""Signal source: a row of the imported Retraction Watch CSV."""
SOURCE_TITLE: Final = "title"
"""Signal source: the work's title starts with a retraction or concern prefix."""
