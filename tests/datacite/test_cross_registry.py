"""Cross-registry answers: ``crossref_get_works`` items and ``syncd check`` entries of DataCite DOIs carry
the DataCite record (title, type, year, state, its own cache block) instead of "another agency"; the
Crossref slice reaches the DataCite slice only through ``services.agencies`` (the composition root).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.tools_batch import get_works_tool
from syncd.registry import AGENCIES
from syncd.road.services import Services
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.fakeupstream import FakeUpstream

ARXIV = "10.48550/arXiv.1902.02534"
ZENODO = "10.5281/zenodo.48440"
DRYAD = "10.5061/dryad.8515"
CROSSREF = "10.1101/598821"
NOWHERE = "10.5061/dryad.doesnotexist"


def test_get_works_answers_datacite_dois_from_the_datacite_slice(cache: Services, fake: FakeUpstream) -> None:
    """arXiv, Zenodo and Dryad DOIs (doi_not_found at Crossref, agency DataCite) carry DataCite's record:
    the arXiv preprint's title, Preprint, 2019, findable; the Zenodo DOI with its record id and the
    pointer to zenodo_get_record; the Dryad dataset with its IsCitedBy of a Crossref work; a DataCite
    DOI DataCite does not hold carries DataCite's own miss. One DataCite batch request for the four
    (plus doi.org for the one it left out), each summary's cache block saying upstream; the same call
    again asks DataCite nothing and every block says store.
    """
    assert set(cache.agencies) == set(AGENCIES) == {"datacite"}
    res = get_works_tool(cache, [ARXIV, ZENODO, DRYAD, CROSSREF, NOWHERE])
    items = {i["input"]: i for i in res.structured_content["items"]}  # type: ignore[index]
    arxiv = items[ARXIV]["agencyRecord"]
    assert arxiv["title"].startswith("Crowdsourcing open citations with CROCI")
    assert (arxiv["agency"], arxiv["found"], arxiv["resourceTypeGeneral"], arxiv["publicationYear"]) == (
        "DataCite", True, "Preprint", 2019,
    )  # fmt: skip
    assert (arxiv["state"], arxiv["repositoryId"], arxiv["cache"]["source"]) == (
        "findable",
        "arxiv.content",
        "upstream",
    )
    zenodo = items[ZENODO]["agencyRecord"]
    assert zenodo["zenodoRecordId"] == "48440" and "zenodo_get_record" in zenodo["notice"]
    dryad = items[DRYAD]["agencyRecord"]
    assert (dryad["title"], dryad["resourceTypeGeneral"], dryad["publicationYear"]) == (
        "Data from: A new malaria agent in African hominids.", "Dataset", 2011,
    )  # fmt: skip
    assert dryad["relatedDois"] == [{"relationType": "IsCitedBy", "doi": "10.1371/journal.ppat.1000446"}]
    assert items[DRYAD]["retraction"]["restsOn"]["agencyRecord"] == "DataCite: seen"
    assert items[CROSSREF]["found"] is True and "agencyRecord" not in items[CROSSREF]
    assert items[NOWHERE]["agencyRecord"] == {
        "agency": "DataCite",
        "found": False,
        "doi": NOWHERE,
        "missReason": "not_public",
        "cache": items[NOWHERE]["agencyRecord"]["cache"],
    }
    text = res.content[0].text  # type: ignore[union-attr]
    assert (
        "registered with DataCite: Data from: A new malaria agent in African hominids. | Dataset | 2011"
        in text
    )
    assert fake.count("/dois", service="datacite") == 1
    fake.reset_log()
    again = get_works_tool(cache, [ARXIV, ZENODO, DRYAD, NOWHERE])
    assert fake.count(service="datacite") == 0 and fake.count(service="doi") == 0
    cached = {i["input"]: i["agencyRecord"]["cache"]["source"] for i in again.structured_content["items"]}  # type: ignore[index]
    assert set(cached.values()) == {"store"}


def test_syncd_check_resolves_arxiv_zenodo_dryad_and_crossref_dois(
    env: Settings,  # noqa: F811
    fake: FakeUpstream,
    tmp_path: Path,
) -> None:
    """A DOI list with arXiv, Zenodo, Dryad and Crossref DOIs: all four ``ok`` (the DataCite ones with
    DataCite's title in the row); a DataCite DOI DataCite holds no public record of is ``not_found``
    (reported), not "other agency". The three DataCite DOIs' verdicts are none_found: their records
    were seen (only the DOI nowhere is unknown).
    """
    refs = tmp_path / "refs.txt"
    refs.write_text("\n".join([ARXIV, ZENODO, DRYAD, CROSSREF, NOWHERE]) + "\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["check", str(refs), "--json", "--allow-unknown"], obj={})
    assert res.exit_code == 0, res.output
    report: dict[str, Any] = json.loads(res.stdout)
    assert (report["counts"]["ok"], report["counts"]["not_found"], report["counts"]["other_agency"]) == (
        4,
        1,
        0,
    )
    assert [(r["status"], r["doi"]) for r in report["reported"]] == [("not_found", NOWHERE)]
    assert report["otherAgency"] == []
    # DataCite's records were seen: verdict none_found (not unknown); only the DOI nowhere is unknown
    assert report["severities"] == {"none_found": 4, "unknown": 1}, report["severities"]


def test_cache_commands_reach_datacite_records(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """``--kind datacite``: ``cache get`` fetches the arXiv preprint's DataCite record (its title, 2019,
    Preprint) and stores it; ``cache show`` and ``cache ls --kind datacite`` then read it from the store with
    no request; a DOI DataCite holds no public record of is a not-found exit with DataCite's reason. (Before,
    ``ls`` listed DataCite entries that ``show`` called not cached and ``--kind datacite`` was refused;
    the text answer's first line was ``(untitled)``.)
    """
    got = CliRunner().invoke(cli, ["cache", "get", "--kind", "datacite", ARXIV, "--json"], obj={})
    assert got.exit_code == 0, got.output
    record = json.loads(got.stdout)
    assert record["kind"] == "datacite_work" and record["key"] == ARXIV.lower()
    assert record["titles"][0]["title"].startswith("Crowdsourcing open citations with CROCI")
    assert (record["publicationYear"], record["resourceTypeGeneral"]) == (2019, "Preprint")
    assert record["cache"]["source"] == "upstream"
    text = CliRunner().invoke(cli, ["cache", "get", "--kind", "datacite", ARXIV], obj={})
    assert text.exit_code == 0, text.output
    assert text.stdout.startswith("Crowdsourcing open citations with CROCI"), text.stdout
    fake.reset_log()
    shown = CliRunner().invoke(cli, ["cache", "show", "--kind", "datacite", ARXIV, "--json"], obj={})
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["kind"] == "datacite_work"
    listed = CliRunner().invoke(cli, ["cache", "ls", "--kind", "datacite", "--json"], obj={})
    assert listed.exit_code == 0, listed.output
    assert [(r["kind"], r["key"]) for r in json.loads(listed.stdout)] == [("datacite_work", ARXIV.lower())]
    assert fake.count() == 0
    missing = CliRunner().invoke(cli, ["cache", "get", "--kind", "datacite", NOWHERE], obj={})
    assert missing.exit_code == 1, missing.output
    assert "not_public" in missing.output, missing.output
