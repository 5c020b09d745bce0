"""The CLI in pipes and with typos (issue 24 item 6).

Before: piped tables wrapped at 80 columns and cut DOIs in two (``syncd cache ls | grep DOI`` found
nothing); ``changes --type retracted`` printed an empty table and exited 0; ``watch add crossref
--orcid not-an-orcid`` was accepted; ``watch add doi --file`` refused a whole file for one bad line
without naming it; ``cache refresh`` reported 0 requests after sending 2. CliRunner's stdout is not a
terminal, as in a pipe. Works are the corpus's Raptor genomes and Lancet hydroxychloroquine papers.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import click
from click.testing import CliRunner

from syncd.cli import COMMANDS, cli
from syncd.config import Settings
from syncd.lazy import load
from tests.cli.test_cli import env, run  # noqa: F401  (fixture: SYNCD_* pointing at the fake and a temp DB)
from tests.core.test_read_only import ro_cli  # noqa: F401  (fixture: the store copied read-only)
from tests.fakeupstream import FakeUpstream
from tests.store.test_changes import LANCET, TITLE

RAPTOR = "10.1101/598821"
RAPTOR_TITLE = "Raptor genomes reveal evolutionary signatures of predatory and nocturnal lifestyles"
LANCET_TITLE = f"RETRACTED: {TITLE}"


def _fetch_both() -> None:
    for doi in (RAPTOR, LANCET):
        assert run("cache", "get", doi, "--json").exit_code == 0


def test_piped_cache_ls_is_one_tab_separated_line_per_entry(env: Settings) -> None:  # noqa: F811
    """Piped, `cache ls` prints a header and one line per entry, tab-separated, nothing cut: grepping
    the Lancet DOI finds its one line with the whole 131-character title.
    """
    _fetch_both()
    res = run("cache", "ls")
    assert res.exit_code == 0
    lines = res.stdout.splitlines()
    assert lines[0].split("\t") == ["kind", "key", "status", "title", "validated_at", "stale"]
    assert len(lines) == 3
    found = [line for line in lines if LANCET in line]  # `syncd cache ls | grep DOI`
    assert len(found) == 1
    cells = found[0].split("\t")
    assert cells[:4] == ["crossref_work", LANCET, "ok", LANCET_TITLE]
    assert len(LANCET_TITLE) > 80
    assert all(len(line.split("\t")) == 6 for line in lines)


def test_format_option_gives_csv_json_and_a_table(env: Settings) -> None:  # noqa: F811
    """--format csv quotes the comma in the Lancet title (csv reads it back whole); --format json is
    --json; --format table draws the rich table even when piped.
    """
    _fetch_both()
    rows = list(csv.reader(io.StringIO(run("cache", "ls", "--format", "csv").stdout)))
    assert rows[0] == ["kind", "key", "status", "title", "validated_at", "stale"]
    assert {r[1]: r[3] for r in rows[1:]} == {RAPTOR: RAPTOR_TITLE, LANCET: LANCET_TITLE}
    as_json = json.loads(run("cache", "ls", "--format", "json").stdout)
    plain = json.loads(run("cache", "ls", "--json").stdout)
    assert [{**r, "age_s": 0} for r in as_json] == [{**r, "age_s": 0} for r in plain]
    assert {r["key"] for r in as_json} == {RAPTOR, LANCET}
    table = run("cache", "ls", "--format", "table").stdout
    assert "┃" in table and "\t" not in table
    stats = run("cache", "stats").stdout.splitlines()
    assert "crossref_work\tok\t2\t2\t0" in stats
    assert any(line.startswith("crossref_single\t") for line in stats)


def test_unknown_values_exit_2_naming_the_nearest(env: Settings) -> None:  # noqa: F811
    """`changes --type retracted` exits 2 naming `retraction`; `cache ls --kind crosref` names
    `crossref`; both in syncd's `error: invalid_parameter:` form on stderr, nothing on stdout.
    """
    res = CliRunner().invoke(cli, ["changes", "--type", "retracted"], obj={})
    assert res.exit_code == 2
    assert res.stdout == ""
    assert res.stderr.startswith("error: invalid_parameter: Invalid value for '--type': unknown change type")
    assert "did you mean 'retraction'?" in res.stderr
    kind = CliRunner().invoke(cli, ["cache", "ls", "--kind", "crosref"], obj={})
    assert kind.exit_code == 2 and "did you mean 'crossref'?" in kind.stderr
    assert kind.stderr.startswith("error: invalid_parameter:")
    fmt = CliRunner().invoke(cli, ["cache", "ls", "--format", "tvs"], obj={})
    assert fmt.exit_code == 2 and "did you mean 'tsv'?" in fmt.stderr
    ok = CliRunner().invoke(cli, ["changes", "--type", "retraction,erratum", "--json"], obj={})
    assert (ok.exit_code, json.loads(ok.stdout)) == (0, [])


def test_watch_add_checks_orcid_issn_and_ror(env: Settings) -> None:  # noqa: F811
    """A bad ORCID iD (shape or check character), ISSN check digit or ROR checksum is refused with
    exit 2 and nothing added; a valid iD given as an orcid.org URL is stored canonical.
    """
    cases = {
        ("--orcid", "not-an-orcid"): "'not-an-orcid' is not an ORCID iD",
        ("--orcid", "0000-0002-1825-0098"): "its check character should be 7",
        ("--issn", "1932-6204"): "its check digit should be 3",
        ("--filter", "ror-id:02mhbdp95"): "its checksum should be 94",
    }
    for args, message in cases.items():
        res = CliRunner().invoke(cli, ["watch", "add", "crossref", *args], obj={})
        assert res.exit_code == 2, args
        assert res.stderr.startswith("error: invalid_identifier: "), res.stderr
        assert message in res.stderr
    assert json.loads(run("watch", "ls", "--json").stdout) == []
    good = run("watch", "add", "crossref", "--orcid", "https://orcid.org/0000-0002-1825-0097", "--json")
    assert good.exit_code == 0
    assert json.loads(run("watch", "ls", "--json").stdout)[0]["spec"]["filter"] == "orcid:0000-0002-1825-0097"


def test_a_doi_file_names_every_bad_line(env: Settings, tmp_path: Path) -> None:  # noqa: F811
    """Two bad lines of five: both named with their line numbers, nothing added, exit 2; with
    --skip-invalid the three good DOIs are added and the two bad lines reported as skipped.
    """
    path = tmp_path / "dois.txt"
    path.write_text(
        f"{RAPTOR}\nnot a doi\n# a comment\n{LANCET}\n10.1000\nhttps://doi.org/10.1038/nature12373\n"
    )
    res = CliRunner().invoke(cli, ["watch", "add", "doi", "--file", str(path)], obj={})
    assert res.exit_code == 2
    errors = res.stderr.splitlines()
    assert errors[0].startswith(f"error: invalid_identifier: {path}:2: Not a DOI: 'not a doi'")
    assert errors[1].startswith(f"error: invalid_identifier: {path}:5: Not a DOI: '10.1000'")
    assert errors[2] == (
        "error: invalid_identifier: 2 of 5 DOIs are invalid, nothing added; --skip-invalid adds the other 3"
    )
    assert json.loads(run("watch", "ls", "--json").stdout) == []
    skipped = CliRunner().invoke(
        cli, ["watch", "add", "doi", "--file", str(path), "--skip-invalid", "--json"], obj={}
    )
    assert skipped.exit_code == 0
    assert [r["watch"] for r in json.loads(skipped.stdout)] == [RAPTOR, LANCET, "10.1038/nature12373"]
    assert skipped.stderr.splitlines()[0].startswith(f"skipped: {path}:2: Not a DOI")


def test_refresh_prints_the_requests_it_sent(env: Settings, fake: FakeUpstream) -> None:  # noqa: F811
    """`cache refresh` of two DOIs not yet stored fetches both: "2 requests", as the fake counted
    (before: "0 requests"); the JSON says the same.
    """
    res = run("cache", "refresh", RAPTOR, LANCET)
    assert res.exit_code == 0, res.output
    assert fake.count(service="crossref") == 2
    assert res.stdout == "checked 0: 0 unchanged, 0 changed, 0 failed; fetched 2; 2 requests\n"
    fake.reset_log()
    again = json.loads(run("cache", "refresh", RAPTOR, "--json").stdout)
    assert again["requests"] == fake.count(service="crossref") == 1


def test_watch_add_on_a_read_only_store_says_so_in_one_line(ro_cli: Path) -> None:  # noqa: F811
    """A read-only user's `watch add` is one `error: store_read_only:` line naming the fix, exit 3
    (before: the driver's error with its SQL statement and parameters).
    """
    res = CliRunner().invoke(cli, ["watch", "add", "doi", RAPTOR], obj={})
    assert res.exit_code == 3
    assert res.stderr.startswith("error: store_read_only: the store is read-only for this user; ")
    assert "usermod -aG syncd" in res.stderr
    assert "[SQL" not in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_no_command_declares_an_option_twice() -> None:
    """Every command's option names are unique (`check` has its own --format, so its output format is
    --output): a shared option bundle never shadows a command's own option.
    """
    seen = 0

    def walk(command: click.Command) -> None:
        nonlocal seen
        names = [opt for p in command.params for opt in getattr(p, "opts", [])]
        assert len(names) == len(set(names)), (command.name, sorted(n for n in names if names.count(n) > 1))
        seen += 1
        for sub in getattr(command, "commands", {}).values():
            walk(sub)

    for spec in COMMANDS.values():
        walk(getattr(load("syncd.cli", spec.module), spec.attribute))
    assert seen > 20
