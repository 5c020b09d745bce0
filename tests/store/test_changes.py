"""The change feed (issue 16 parts 1, 2): the pure summary, the store's rows, pruning, ``syncd changes``.

Bodies are real corpus records: the Lancet hydroxychloroquine paper 10.1016/s0140-6736(20)31180-6
(retracted, its notices 31324-6 by Retraction Watch and 31174-0 by the publisher), Zenodo record
22931068 (version 28 of series 22884306, no longer the latest) and the spam tombstone of 22705918.
The "before" side of a retraction is the corpus body with its retraction entries taken out and the
``RETRACTED:`` title prefix removed, as Crossref served it before the retraction was deposited.
"""

from __future__ import annotations

import copy
import json
import logging
import time
from typing import Any

import pytest
from click.testing import CliRunner, Result
from sqlalchemy import delete

from syncd.cli import cli
from syncd.config import Settings
from syncd.crossref.lookups import work_content
from syncd.daemon.jobs import alerts_pass, sweep_pass
from syncd.normalize.changes import describe, since_epoch, since_stored_notice
from syncd.registry import KINDS, open_services
from syncd.store.changes import changes_of_entry, latest_change_id, list_changes, prune_changes
from syncd.store.models import Entry
from syncd.store.repo import EntryContent, Store
from syncd.store.rules import ChangeSummary, Side
from syncd.store.watches import add_watch
from syncd.zenodo.lookups_fetch import record_content
from syncd.zenodo.views_changes import new_version
from tests.cli.test_cli import env  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.conftest import corpus_json, make_settings
from tests.fakeupstream import FakeUpstream

pytestmark = pytest.mark.both_backends

LANCET = "10.1016/s0140-6736(20)31180-6"
LANCET_FILE = "crossref/work/10.1016_s0140-6736_20_31180-6.json"
RW_NOTICE = "10.1016/s0140-6736(20)31324-6"
PUBLISHER_NOTICE = "10.1016/s0140-6736(20)31174-0"
TITLE = (
    "Hydroxychloroquine or chloroquine with or without a macrolide for treatment of COVID-19: a "
    "multinational registry analysis"
)
DAY = 86_400.0


def summarize(kind: str, old: Side, new: Side) -> ChangeSummary | None:
    """The change summary the store records for ``kind`` (its rules' ``summarize``; None when it has none)."""
    rule = KINDS[kind].rules.summarize
    return rule(old, new) if rule is not None else None


def lancet_bodies() -> tuple[dict[str, Any], dict[str, Any]]:
    """(before the retraction, as recorded now) bodies of the Lancet paper."""
    now = corpus_json(LANCET_FILE)
    before = copy.deepcopy(now)
    message = before["message"]
    message["updated-by"] = [u for u in message["updated-by"] if u["type"] != "retraction"]
    message["title"] = [message["title"][0].removeprefix("RETRACTED: ")]
    return before, now


def store_work(store: Store, body: dict[str, Any], now: float) -> Any:
    """Store a work body as the lookups do (raw JSON text kept); returns ``(entry, changed)``."""
    return store.put_content(work_content(LANCET, body["message"], json.dumps(body)), now=now)


# --------------------------------------------------------------------------------------- the summary


def test_a_deposited_retraction_is_summarized_with_its_notices_and_the_title_change() -> None:
    """Before -> now of the Lancet paper: two retraction items (RW 31324-6, publisher 31174-0), the title."""
    before, now = lancet_bodies()
    summary = summarize("crossref_work", Side("ok", json.dumps(before)), Side("ok", json.dumps(now)))
    assert summary is not None
    assert summary.types == ("retraction", "title")
    assert summary.doi == LANCET
    retractions = [i for i in summary.items if i["type"] == "retraction"]
    assert retractions == [
        {
            "type": "retraction",
            "doi": RW_NOTICE,
            "source": "retraction-watch",
            "recordId": "23529",
            "updated": "2020-06-05",
        },
        {"type": "retraction", "doi": PUBLISHER_NOTICE, "source": "publisher", "updated": "2020-05-22"},
    ]
    title = next(i for i in summary.items if i["type"] == "title")
    assert (title["from"], title["to"]) == (TITLE, f"RETRACTED: {TITLE}")
    assert describe(summary.as_dict()).startswith(
        f"retraction {RW_NOTICE} (retraction-watch); retraction {PUBLISHER_NOTICE} (publisher); title: "
    )


def test_a_withdrawn_update_entry_is_update_removed() -> None:
    """The reverse replacement (entries gone from updatedBy) names each as update_removed with its type."""
    before, now = lancet_bodies()
    summary = summarize("crossref_work", Side("ok", json.dumps(now)), Side("ok", json.dumps(before)))
    assert summary is not None and summary.types == ("update_removed", "title")
    assert [(i["update_type"], i["doi"]) for i in summary.items if i["type"] == "update_removed"] == [
        ("retraction", RW_NOTICE),
        ("retraction", PUBLISHER_NOTICE),
    ]


def test_authors_and_date_changes_are_named_and_other_fields_listed() -> None:
    """Dropping the first author and moving the date (2020-05 -> 2020-06-01) gives authors and date items."""
    before = corpus_json(LANCET_FILE)
    after = copy.deepcopy(before)
    gone = after["message"]["author"].pop(0)
    after["message"]["published"] = {"date-parts": [[2020, 6, 1]]}
    after["message"]["volume"] = "999"
    summary = summarize("crossref_work", Side("ok", json.dumps(before)), Side("ok", json.dumps(after)))
    assert summary is not None and summary.types == ("authors", "date", "metadata")
    authors, date, meta = summary.items
    assert authors == {
        "type": "authors",
        "from_count": len(before["message"]["author"]),
        "to_count": len(after["message"]["author"]),
        "removed": [f"{gone['given']} {gone['family']}"],
    }
    assert date == {"type": "date", "from": "2020-05", "to": "2020-06-01"}
    assert meta == {"type": "metadata", "fields": ["volume"]}


def test_zenodo_version_superseded_deleted_and_new_version() -> None:
    """22931068: is_latest true -> false is superseded, a 410 spam tombstone deleted; new_version rules."""
    now = corpus_json("zenodo/record/records-22931068_restricted.json")
    before = copy.deepcopy(now)
    before["versions"]["is_latest"] = True
    summary = summarize("zenodo_record", Side("ok", json.dumps(before)), Side("ok", json.dumps(now)))
    assert summary is not None and summary.types == ("superseded",)
    assert summary.series == "22884306"
    tomb = json.dumps(corpus_json("zenodo/error/records-22705918_410_tombstone.json"))
    deleted = summarize("zenodo_record", Side("ok", json.dumps(now)), Side("gone", tomb))
    assert deleted is not None and deleted.items == (
        {
            "type": "deleted",
            "removal_reason": "spam",
            "removal_date": "2026-09-11T10:30:41.939980+00:00",
            "note": "User was blocked",
        },
    )
    back = summarize("zenodo_record", Side("gone", tomb), Side("ok", json.dumps(now)))
    assert back is not None and back.types == ("reinstated",)
    assert new_version(json.dumps(now), ["22884307"]) is None  # not the latest: no news
    series_2021 = corpus_json("zenodo/record/records-5244404.json")  # created 2021-08-24T13:07:25Z
    assert new_version(json.dumps(series_2021), ["5244403"], held_since=1_629_810_000.0) is not None
    assert (
        new_version(json.dumps(series_2021), ["5244403"], held_since=time.time()) is None
    )  # only stored now
    fresh = new_version(json.dumps(before), ["22884307"])
    assert (
        fresh is not None
        and fresh.items[0]["type"] == "new_version"
        and fresh.items[0]["recid"] == "22931068"
    )


def test_agency_change_and_kinds_not_recorded() -> None:
    """A doi_ra answer naming another agency is agency_changed; search pages are never summarized."""
    crossref, datacite = '[{"DOI": "10.5555", "RA": "Crossref"}]', '[{"DOI": "10.5555", "RA": "DataCite"}]'
    summary = summarize("doi_ra", Side("ok", crossref), Side("ok", datacite))
    assert summary is not None and summary.items == (
        {"type": "agency_changed", "from": "Crossref", "to": "DataCite"},
    )
    assert summarize("doi_ra", Side("ok", crossref), Side("ok", crossref)) is None
    assert summarize("crossref_search", Side("ok", "{}"), Side("ok", '{"a": 1}')) is None


def test_since_parses_durations_and_dates() -> None:
    """7d counts back from now, an ISO date is UTC midnight; anything else is invalid_parameter."""
    assert since_epoch("7d", 1_000_000.0) == 1_000_000.0 - 7 * DAY
    assert since_epoch("2026-11-01", 0) == 1_793_491_200.0
    with pytest.raises(Exception) as err:
        since_epoch("last week", 0)
    assert getattr(err.value, "reason", None) == "invalid_parameter"


def test_since_stored_notice_names_each_update() -> None:
    """The get_work notice lists the corrective updates found, with source and day; others give None."""
    item = {"type": "retraction", "doi": RW_NOTICE, "source": "retraction-watch"}
    assert since_stored_notice([("2026-12-01T03:00:00Z", {"items": [item]})]) == (
        "Retracted or corrected since syncd first stored this work: retraction (notice "
        f"{RW_NOTICE}, retraction-watch), found 2026-12-01."
    )
    assert since_stored_notice([("2026-12-01T03:00:00Z", {"items": [{"type": "title"}]})]) is None


# ----------------------------------------------------------------------------------- the store's rows


def test_a_replaced_body_writes_one_row_an_unchanged_one_none(store: Store) -> None:
    """Storing the same body twice records nothing; the retracted body then records exactly one row."""
    before, now = lancet_bodies()
    t0 = time.time() - 10 * DAY
    entry, _ = store_work(store, before, t0)
    _, changed = store_work(store, before, t0 + DAY)
    assert changed is False and latest_change_id(store) == 0 and store.changes_recorded == 0
    _, changed = store_work(store, now, t0 + 2 * DAY)
    assert changed is True and store.changes_recorded == 1
    rows = changes_of_entry(store, entry.id)
    assert [(r.kind, r.key, r.doi, r.types, r.detected_at) for r in rows] == [
        ("crossref_work", LANCET, LANCET, ("retraction", "title"), t0 + 2 * DAY)
    ]
    assert rows[0].summary["title"] == f"RETRACTED: {TITLE}"


def test_filters_types_kinds_watched_and_paging(store: Store) -> None:
    """list_changes filters by type, kind, window and the DOI watch list; before_id pages newest first."""
    before, now = lancet_bodies()
    t0 = time.time() - 10 * DAY
    store_work(store, before, t0)
    store_work(store, now, t0 + DAY)  # retraction, title
    store_work(store, before, t0 + 2 * DAY)  # update_removed, title
    assert [c.types for c in list_changes(store)] == [("update_removed", "title"), ("retraction", "title")]
    assert [c.types[0] for c in list_changes(store, types=["retraction"])] == ["retraction"]
    assert list_changes(store, types=["expression_of_concern"]) == []
    assert list_changes(store, kinds=["zenodo_record"]) == []
    assert len(list_changes(store, since=t0 + 1.5 * DAY)) == 1
    assert list_changes(store, watched_only=True) == []
    add_watch(store, "doi", {"doi": LANCET})
    newest = list_changes(store, watched_only=True, limit=1)
    assert len(newest) == 1 and len(list_changes(store, watched_only=True, before_id=newest[0].id)) == 1


def test_a_new_zenodo_version_of_a_held_series_is_recorded(store: Store) -> None:
    """Record 22931068 stored after another version of series 22884306 records new_version (marked latest)."""
    body = corpus_json("zenodo/record/records-22931068_restricted.json")
    older = copy.deepcopy(body)
    older["id"], older["versions"] = "22884307", {"is_latest": False, "index": 27}
    store.put_content(record_content(older, json.dumps(older)))
    assert latest_change_id(store) == 0
    body["versions"]["is_latest"] = True
    entry, _ = store.put_content(record_content(body, json.dumps(body)))
    (row,) = changes_of_entry(store, entry.id)
    assert row.types == ("new_version",) and row.series == "22884306"
    assert row.summary["items"][0]["older"] == ["22884307"]


def test_changes_are_pruned_by_age_and_with_their_entry(store: Store) -> None:
    """prune_changes drops rows older than keep_s; evicting the entry drops the rest (ON DELETE CASCADE)."""
    before, now = lancet_bodies()
    t0 = time.time() - 100 * DAY
    entry, _ = store_work(store, before, t0)
    store_work(store, now, t0 + DAY)  # 99 days old
    store_work(store, before, time.time() - DAY)  # 1 day old
    assert prune_changes(store, keep_s=30 * DAY) == 1
    assert [c.types[0] for c in list_changes(store)] == ["update_removed"]
    with store.write() as conn:
        conn.execute(delete(Entry).where(Entry.id == entry.id))
    assert list_changes(store) == []


def test_a_not_found_answer_records_nothing(store: Store) -> None:
    """A 404 over a stored work keeps the body (index lag) and records no change."""
    before, _ = lancet_bodies()
    store_work(store, before, time.time() - DAY)
    store.put_content(EntryContent("crossref_work", LANCET, "not_found", None, None, doi=LANCET))
    assert latest_change_id(store) == 0


# ------------------------------------------------------------------------------------------ the CLI


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args), obj={}, catch_exceptions=False)


def test_cli_changes_table_json_and_filters(env: Settings) -> None:  # noqa: F811
    """`syncd changes` prints one table line per change; --json, --type, --watched and --since filter."""
    store = Store.open(env.database_url)
    try:
        before, now = lancet_bodies()
        store_work(store, before, time.time() - 10 * DAY)
        store_work(store, now, time.time() - 2 * DAY)
    finally:
        store.close()
    rows = json.loads(run("changes", "--json").stdout)
    assert [(r["key"], r["types"], r["watched"]) for r in rows] == [(LANCET, ["retraction", "title"], "")]
    assert rows[0]["items"][0]["doi"] == RW_NOTICE
    assert json.loads(run("changes", "--json", "--since", "1d").stdout) == []
    assert json.loads(run("changes", "--json", "--type", "deleted,expression_of_concern").stdout) == []
    assert len(json.loads(run("changes", "--json", "--type", "erratum,retraction").stdout)) == 1
    assert json.loads(run("changes", "--json", "--watched").stdout) == []
    assert run("watch", "add", "doi", LANCET).exit_code == 0
    assert json.loads(run("changes", "--json", "--watched").stdout)[0]["watched"] == "yes"
    table = run("changes")
    assert table.exit_code == 0 and "retraction," in table.stdout and "10.1016/" in table.stdout
    bad = CliRunner().invoke(cli, ["changes", "--since", "last week"], obj={})
    assert bad.exit_code == 2 and "invalid_parameter" in bad.stderr


def test_the_daemon_sweep_prunes_old_changes_and_its_alert_pass_alerts(
    fake: FakeUpstream, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The daemon's sweep pass drops changes past changes.keep_s; its alert pass alerts watched ones."""
    caplog.set_level(logging.INFO)
    settings = make_settings(fake, db_url, changes={"keep_s": 30 * DAY})
    store = Store.open(db_url)
    svc = open_services(settings, store)
    try:
        add_watch(store, "doi", {"doi": LANCET})
        assert alerts_pass(svc) == 0  # starts the cursor
        before, now = lancet_bodies()
        store_work(store, before, time.time() - 100 * DAY)
        store_work(store, now, time.time() - 99 * DAY)  # past keep_s
        store_work(store, before, time.time() - 9 * DAY)
        store_work(store, now, time.time() - 8 * DAY)
        assert alerts_pass(svc) == 2  # both retractions found since the cursor, the old one too
        sweep_pass(svc, 10)
    finally:
        svc.close()
        store.close()
    assert "event=changes_pruned changes=1" in caplog.text


def test_type_filters_match_whole_types_only(store: Store) -> None:
    """A type filter is a whole comma-separated type: LIKE wildcards in it match nothing."""
    before, now = lancet_bodies()
    store_work(store, before, time.time() - 2 * DAY)
    store_work(store, now, time.time() - DAY)
    assert [c.types for c in list_changes(store, types=["retraction"])] == [("retraction", "title")]
    assert list_changes(store, types=["%"]) == []
    assert list_changes(store, types=["retractio_"]) == []
    assert list_changes(store, types=["retract"]) == []


def test_a_replacement_with_the_same_view_records_nothing() -> None:
    """A work stored from a search page (no reference list) stored whole, and a tombstone again: no change."""
    whole = corpus_json(LANCET_FILE)
    item = {k: v for k, v in whole["message"].items() if k != "reference"}
    partial = {"status": "ok", "message-type": "work-list-item", "message": item}
    assert "reference" in whole["message"]
    assert summarize("crossref_work", Side("ok", json.dumps(partial)), Side("ok", json.dumps(whole))) is None
    tomb = json.dumps(corpus_json("zenodo/error/records-22705918_410_tombstone.json"))
    again = tomb.replace("User was blocked", "Spam")
    assert summarize("zenodo_record", Side("gone", tomb), Side("gone", again)) is None
