"""``syncd check``'s status of a DOI the answering slice (Crossref's batch) does not hold."""

from __future__ import annotations

from syncd.cli.check_commands import entry_status
from syncd.crossref.lookups_batch import AGENCY


def _miss(agency: str | None, record: dict[str, object] | None = None) -> dict[str, object]:
    """A ``crossref_get_works`` item for a DOI Crossref does not hold, doi.org naming ``agency``."""
    return {"found": False, "reason": "doi_not_found", "registrationAgency": agency, "agencyRecord": record}


def test_a_miss_at_the_answering_agency_is_not_found_and_elsewhere_other_agency() -> None:
    """doi.org says Crossref (the slice answering the check; any case): not_found; mEDRA (no slice
    answers it): other_agency; DataCite with its record found: ok; with DataCite's does_not_exist: not_found.
    """
    assert AGENCY == "Crossref"
    assert entry_status(_miss("Crossref")) == "not_found"
    assert entry_status(_miss("crossref")) == "not_found"
    assert entry_status(_miss(None)) == "not_found"
    assert entry_status(_miss("mEDRA")) == "other_agency"
    assert entry_status(_miss("DataCite", {"agency": "DataCite", "found": True})) == "ok"
    assert entry_status(_miss("DataCite", {"found": False, "missReason": "does_not_exist"})) == "not_found"
