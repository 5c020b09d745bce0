"""One retraction verdict from every signal: Crossref updated-by, stored notices, RW rows, title."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from syncd.crossref.views import work_view
from syncd.retractions.csvfile import RetractionWatchRow, parse_bytes
from syncd.retractions.facts import CrossrefFacts
from syncd.retractions.importer import import_path
from syncd.retractions.lookups import Seen, crossref_facts, verdicts_for
from syncd.retractions.storage import latest_dataset
from syncd.retractions.verdict import Verdict, verdict
from syncd.store.repo import Store
from tests.retraction_helpers import SAMPLE, sample_bytes, store_work, work_file

LANCET = "10.1016/s0140-6736(20)31180-6"
LANCET_NOTICE = "10.1016/s0140-6736(20)31324-6"
IEEE = "10.1109/icetce.2011.5774727"
APSUSC = "10.1016/j.apsusc.2007.01.131"
ROWS = parse_bytes(sample_bytes()).rows


def facts(doi: str) -> CrossrefFacts:
    message = json.loads(work_file(doi).read_text(encoding="utf-8"))["message"]
    return crossref_facts(work_view(message), 1_790_000_000.0)


def rows_of(doi: str | None = None, pmid: str | None = None) -> list[RetractionWatchRow]:
    return [r for r in ROWS if (doi and r.original_doi == doi) or (pmid and r.original_pmid == pmid)]


def of(v: Verdict, level: str) -> set[tuple[str, str | None]]:
    return {(s.source, s.record_id) for s in v.signals if s.level == level and not s.lifted}


@pytest.fixture
def store(tmp_path: Path) -> Store:
    s = Store.open(f"sqlite:///{tmp_path / 'store.db'}")
    yield s  # type: ignore[misc]
    s.close()


def test_the_lancet_paper_is_retracted_by_three_signals_with_its_concern_and_correction() -> None:
    """Crossref's RW entry, the Retraction Watch row, the RETRACTED: title; EoC and correction listed."""
    v = verdict(doi=LANCET, crossref=facts(LANCET), rw_rows=rows_of(LANCET))
    assert v.severity == "retracted" and v.crossref == "seen" and not v.replaced
    assert of(v, "retracted") == {
        ("crossref:retraction-watch", "23529"),
        ("retraction-watch-data", "23529"),
        ("title", None),
    }
    assert of(v, "expression_of_concern") == {
        ("crossref:retraction-watch", "23527"),
        ("retraction-watch-data", "23527"),
    }
    assert ("retraction-watch-data", "23528") in of(v, "corrected")
    notice = next(s for s in v.signals if s.source == "retraction-watch-data" and s.level == "retracted")
    assert (notice.notice_doi, notice.date) == (LANCET_NOTICE, "2020-06-05")
    assert v.crossref_validated_at == 1_790_000_000.0


def test_the_lancet_retraction_notice_is_a_notice_not_a_retracted_work() -> None:
    """The notice 10.1016/s0140-6736(20)31324-6 lists the paper both ways: it is not itself retracted."""
    v = verdict(doi=LANCET_NOTICE, crossref=facts(LANCET_NOTICE))
    assert v.severity == "none_found" and v.signals == ()
    assert any(LANCET in n for n in v.notes)


def test_the_ieee_notice_replaces_its_paper_under_the_same_doi() -> None:
    """IEEE's "Notice of Retraction" 10.1109/icetce.2011.5774727: retracted, replaced, title signal too."""
    v = verdict(doi=IEEE, crossref=facts(IEEE), rw_rows=rows_of(IEEE))
    assert v.severity == "retracted" and v.replaced
    assert of(v, "retracted") == {
        ("crossref:retraction-watch", "25991"),
        ("retraction-watch-data", "25991"),
        ("title", None),
    }


def test_an_erratum_deposited_with_the_retraction_notice_is_never_a_correction() -> None:
    """10.1016/j.apsusc.2007.01.131: retraction and erratum under one notice DOI: retracted, no correction."""
    v = verdict(doi=APSUSC, crossref=facts(APSUSC), rw_rows=rows_of(APSUSC))
    assert v.severity == "retracted" and of(v, "corrected") == set()


@pytest.mark.parametrize(
    ("doi", "severity"),
    [
        ("10.1371/journal.pone.0033693", "corrected"),  # a PLOS correction (publisher)
        ("10.1103/physrevd.109.023023", "corrected"),  # a correction recorded in place
        ("10.1103/physrevd.97.012001", "corrected"),  # update-to naming itself, type "corrected"
        ("10.1371/journal.ppat.1008184", "none_found"),  # a new version is no correction
    ],
)
def test_errata_and_corrections_are_corrected_never_retracted(doi: str, severity: str) -> None:
    """Errata, corrections and new versions of recorded works never read as a retraction."""
    v = verdict(doi=doi, crossref=facts(doi))
    assert v.severity == severity and of(v, "retracted") == set()


def test_a_doi_known_only_to_retraction_watch_is_flagged_without_a_crossref_record() -> None:
    """10.5555/rw-only-1: Crossref holds no record, the Retraction Watch row retracts it."""
    v = verdict(
        doi="10.5555/rw-only-1", crossref_missing="doi_not_found", rw_rows=rows_of("10.5555/rw-only-1")
    )
    assert v.severity == "retracted" and v.crossref == "not_found"
    assert of(v, "retracted") == {("retraction-watch-data", "999000001")}


def test_a_reinstated_work_is_reinstated() -> None:
    """The Reinstatement row 999000002: severity reinstated."""
    v = verdict(
        doi="10.5555/rw-reinstated-1",
        crossref_missing="doi_not_found",
        rw_rows=rows_of("10.5555/rw-reinstated-1"),
    )
    assert v.severity == "reinstated" and of(v, "reinstated") == {("retraction-watch-data", "999000002")}


def test_a_reinstatement_lifts_the_retraction_before_it_but_not_one_after() -> None:
    """A retraction dated before the reinstatement is lifted (listed, ``lifted``); one after it stands."""
    [reinstated] = rows_of("10.5555/rw-reinstated-1")
    before = RetractionWatchRow(
        "1", "retraction", reinstated.original_doi, None, "10.5555/n", None, "2023-10-02", None, None
    )
    v = verdict(doi=reinstated.original_doi, crossref_missing="doi_not_found", rw_rows=[before, reinstated])
    assert v.severity == "reinstated" and [s.lifted for s in v.signals if s.level == "retracted"] == [True]
    after = RetractionWatchRow(
        "2", "retraction", reinstated.original_doi, None, "10.5555/m", None, "2025-02-01", None, None
    )
    assert (
        verdict(
            doi=reinstated.original_doi, rw_rows=[reinstated, after], crossref_missing="doi_not_found"
        ).severity
        == "retracted"
    )


def test_a_pubmed_only_row_is_found_by_its_pubmed_id() -> None:
    """The row without a DOI (999000003) retracts PubMed id 30500001."""
    v = verdict(doi=None, pmid="30500001", rw_rows=rows_of(pmid="30500001"))
    assert v.severity == "retracted" and v.crossref == "not_asked"


@pytest.mark.parametrize(
    ("title", "severity"),
    [
        ("WITHDRAWN: A paper", "retracted"),
        ("Retracted article: A paper", "retracted"),
        ("Notice of Retraction: World-class city", "retracted"),
        ("Expression of Concern: A paper", "expression_of_concern"),
        ("Retracted memories in older adults", "none_found"),
    ],
)
def test_the_title_prefix_is_a_signal(title: str, severity: str) -> None:
    """A work with no update deposited is flagged by its title prefix alone (a first word is not one)."""
    assert verdict(doi="10.5555/t", crossref=CrossrefFacts("10.5555/t", title)).severity == severity


@pytest.mark.parametrize("missing", ["upstream_unavailable", "budget_exhausted"])
def test_upstream_down_and_nothing_stored_is_unknown_never_clean(missing: str) -> None:
    """No record could be read and Retraction Watch has no row: unknown, with the reason."""
    v = verdict(doi="10.5555/nothing", crossref_missing=missing)
    assert v.severity == "unknown" and missing in (v.reason or "") and v.crossref == "unseen"


def test_not_at_crossref_and_not_in_retraction_watch_is_unknown(store: Store) -> None:
    """A DOI Crossref does not hold and no RW row names: unknown, naming the version consulted."""
    import_path(store, SAMPLE)
    [v] = verdicts_for(store, [Seen("10.5555/absent", missing="doi_not_found")])
    assert v.severity == "unknown" and v.reason == "not at Crossref and not in Retraction Watch"
    assert v.dataset is not None and v.dataset.rows == 9


def test_verdicts_from_the_store_add_the_stored_notice_and_name_the_version(store: Store) -> None:
    """With the notice stored, its update-to naming the Lancet paper is one more signal; version named."""
    store_work(store, LANCET)
    store_work(store, LANCET_NOTICE)
    import_path(store, SAMPLE)
    view = work_view(json.loads(work_file(LANCET).read_text(encoding="utf-8"))["message"])
    [v, pm] = verdicts_for(store, [Seen(LANCET, view, 1_790_000_000.0), Seen(None, pmid="30500001")])
    assert ("crossref:notice", "23529") in of(v, "retracted")
    assert v.dataset == latest_dataset(store)
    data = v.as_dict()
    assert data["severity"] == "retracted" and data["restsOn"]["retractionWatch"]["rows"] == 9
    assert pm.severity == "retracted"
