"""``syncd check FILE``: which references of a bibliography are retracted, corrected or do not resolve.

The file is BibTeX, RIS, CSL-JSON or a plain list of DOIs (:mod:`syncd.bibliography`). Every DOI is
resolved by :func:`syncd.crossref.lookups_batch.get_works`, the lookup behind the
``crossref_get_works`` tool: stored works from the store, the rest 50 per Crossref list request.
Each entry gets the retraction verdict ``crossref_get_works`` gives
(:func:`syncd.retractions.verdicts.work_verdicts`: Crossref updatedBy, stored notices, the imported
Retraction Watch data, the title) and one status:

=========================  ===========================================================  ========
status                     meaning                                                      reported
=========================  ===========================================================  ========
``retracted``              the verdict is retracted (withdrawal, removal)               yes
``expression_of_concern``  the verdict is an expression of concern                      yes
``corrected``              the verdict is corrected (erratum, corrigendum, ...)         yes
``reinstated``             a reinstatement lifted its retraction                        yes
``not_found``              no record at Crossref nor at the agency that registered it   yes
``invalid_doi``            the DOI text is not a DOI                                    yes
``unchecked``              upstream could not be asked and nothing is stored            yes
``no_doi``                 no DOI: a PubMed id only, or nothing to look up              yes
``other_agency``           registered with another agency (DataCite, mEDRA...)          counted
``ok``                     found, no signal                                             counted
=========================  ===========================================================  =
Exit code (``--fail-on``, default ``retracted``): 1 when any entry is at or above the level
(``retracted``; ``concern``: retracted or expression of concern; ``corrected``: those or corrected;
``never``: never 1), else 3 when any verdict is ``unknown`` (not with ``--allow-unknown``), else 0;
2 for a file that cannot be read. The report names the Retraction Watch version and the oldest
Crossref record it relied on. ``--cited`` adds, per entry held in the store, the works its reference
list cites whose verdict is retracted or an expression of concern (:mod:`syncd.retractions.citations`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import click

from syncd.bibliography import FORMATS, Bibliography, Reference, read_bibliography
from syncd.cli.choices import NearChoice
from syncd.cli.common import (
    EXIT_FAILURE,
    emit,
    handle_errors,
    json_option,
    output_format,
    print_rows,
    session,
    text_cell,
)
from syncd.crossref.lookups_batch import AGENCY as ANSWERING_AGENCY
from syncd.crossref.lookups_batch import get_works
from syncd.crossref.tools_batch import item_data
from syncd.passes import watches as watch_mod
from syncd.retractions.citations import COVERAGE_NOTE, cited_problems
from syncd.retractions.lookups import Seen, verdicts_for
from syncd.retractions.verdict import Verdict
from syncd.retractions.verdicts import work_verdicts
from syncd.road.policy import iso
from syncd.store.repo import Store

__all__ = [
    "EXIT_RETRACTED",
    "FAIL_ON",
    "REPORTED",
    "REPORT_COLUMNS",
    "check",
    "entry_status",
    "exit_code",
    "junit_report",
    "markdown_report",
]

EXIT_RETRACTED = 1
"""Exit code of ``syncd check`` when any entry is at or above the ``--fail-on`` level."""

REPORTED = (
    "retracted",
    "expression_of_concern",
    "corrected",
    "reinstated",
    "not_found",
    "invalid_doi",
    "unchecked",
    "no_doi",
)
"""Statuses printed, in this order (the rest are counted only)."""
NO_DOI = "no_doi"
"""The status (and item ``reason``) of an entry that names no DOI."""
FLAGGED = ("retracted", "expression_of_concern", "corrected", "reinstated")
"""Verdict severities that are an entry's status."""
FAIL_ON: dict[str, tuple[str, ...]] = {
    "retracted": ("retracted",),
    "concern": ("retracted", "expression_of_concern"),
    "corrected": ("retracted", "expression_of_concern", "corrected"),
    "never": (),
}
"""``--fail-on`` level -> the severities that exit 1."""


def entry_status(item: dict[str, Any]) -> str:
    """The status of one resolved entry (a ``WorksItem`` dict, as ``item_data`` builds it)."""
    severity = (item.get("retraction") or {}).get("severity")
    if severity in FLAGGED:
        return str(severity)
    if item["found"]:
        return "ok"
    reason = item.get("reason")
    if reason == NO_DOI:
        return NO_DOI
    if reason == "invalid_parameter":
        return "invalid_doi"
    if reason == "doi_not_found":
        record = item.get("agencyRecord") or {}
        if record.get("found"):
            return "ok"  # resolved at its own agency (DataCite): title, type, year, state in the item
        if record.get("missReason") in ("does_not_exist", "not_public"):
            return "not_found"  # not found at that agency either
        agency = item.get("registrationAgency")  # the answering slice's own agency: its DOI is not found
        return "other_agency" if agency and agency.lower() != ANSWERING_AGENCY.lower() else "not_found"
    return "unchecked"


def exit_code(severities: list[str | None], fail_on: str, allow_unknown: bool) -> int:
    """The exit code of a check whose entries have verdicts ``severities`` (None: no verdict)."""
    if any(s in FAIL_ON[fail_on] for s in severities):
        return EXIT_RETRACTED
    if not allow_unknown and "unknown" in severities:
        return EXIT_FAILURE
    return 0


def _detail(item: dict[str, Any]) -> str | None:
    """The detail cell of an entry: its verdict's signals, and why Crossref's record was not read."""
    verdict = item.get("retraction") or {}
    if verdict.get("severity") == "unknown":
        return f"unknown: {verdict.get('reason')}"
    shown = [s for s in verdict.get("signals") or [] if not s.get("lifted")]
    if shown:
        signals = "; ".join(
            f"{s['type']} {s.get('noticeDoi') or ''} ({s['source']})".replace("  ", " ") for s in shown
        )
        unread = item.get("reason") if not item.get("found") and item.get("doi") else None
        if unread and unread not in ("doi_not_found", "invalid_parameter"):
            return f"{signals}; Crossref's record not read ({unread})"
        return signals
    updates = "; ".join(f"{u['type']} {u['doi']}" for u in item.get("updatedBy") or [])
    return updates or item.get("message")


def _row(ref: Reference, item: dict[str, Any], status: str) -> dict[str, Any]:
    verdict = item.get("retraction") or {}
    return {
        "position": ref.position,
        "label": ref.label,
        "status": status,
        "severity": verdict.get("severity"),
        "doi": item.get("doi") or ref.doi,
        "pmid": ref.pmid,
        "title": item.get("title") or (item.get("agencyRecord") or {}).get("title") or ref.title,
        "detail": _detail(item),
        "reason": verdict.get("reason"),
        "signals": verdict.get("signals") or [],
        "item": item,
    }


def _cited(store: Store, dois: list[str]) -> dict[str, Any]:
    """``--cited``: per stored entry, the works it cites that are retracted or concerned; the coverage."""
    problems, indexed = cited_problems(store, dois)
    return {
        "entriesWithReferences": indexed,
        "entriesHeld": len(problems),
        "note": COVERAGE_NOTE,
        "works": [
            {
                "doi": citing,
                "cites": [
                    {"doi": p.cited, "severity": p.verdict.severity, "signals": p.signals} for p in found
                ],
            }
            for citing, found in problems.items()
            if found
        ],
    }


def _basis(verdicts: list[Verdict | None]) -> dict[str, Any]:
    """The Retraction Watch version and the oldest Crossref record the verdicts rest on."""
    dataset = next((v.dataset for v in verdicts if v is not None and v.dataset is not None), None)
    dated = [(v.crossref_validated_at, v.doi) for v in verdicts if v is not None and v.crossref_validated_at]
    oldest = min(dated, key=lambda d: d[0]) if dated else None
    rw = None
    if dataset is not None:
        rw = {
            "sha256": dataset.sha256,
            "rows": dataset.rows,
            "importedAt": iso(dataset.imported_at),
            "source": dataset.source,
            "commit": dataset.commit,
        }
    return {
        "retractionWatch": rw,
        "oldestRecord": {"doi": oldest[1], "validatedAt": iso(oldest[0])} if oldest else None,
    }


def _no_doi_item(ref: Reference, verdict: Verdict) -> dict[str, Any]:
    """The item of an entry without a DOI: its PubMed id (if any) and its verdict."""
    message = (
        f"no DOI; PubMed id {ref.pmid} matched against the Retraction Watch data"
        if ref.pmid
        else "the entry names no DOI and no PubMed id"
    )
    data = {"input": None, "pmid": ref.pmid, "found": False, "reason": NO_DOI, "message": message}
    return {**{k: v for k, v in data.items() if v is not None}, "retraction": verdict.as_dict(iso)}


def _nothing_to_look_up(item: dict[str, Any]) -> bool:
    """Whether the entry names neither a DOI nor a PubMed id (a book, a web page).

    Such an entry is listed with verdict unknown but not counted in the exit code: nothing could be asked.
    """
    return item.get("reason") == NO_DOI and not item.get("pmid")


def _updates_query(verdicts: list[Verdict | None]) -> dict[str, Any]:
    """``--deep``'s reverse query: works consulted, pages read, requests sent, works it could not ask."""
    reverse = [v.reverse for v in verdicts if v is not None and v.reverse is not None]
    return {
        "works": len(reverse),
        "answered": sum(1 for r in reverse if r.answered),
        "requests": sum(1 for r in reverse if r.requested),
        "notices": sum(len(r.notices) for r in reverse),
        "failed": sorted({r.state for r in reverse if not r.answered}),
    }


def _report(
    path: str, bib: Bibliography, items: list[dict[str, Any]], refs: list[Reference]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The report of a check (the ``--json`` document) and every entry's row, in file order."""
    statuses = [entry_status(i) for i in items]
    rows = [_row(r, i, s) for r, i, s in zip(refs, items, statuses, strict=True)]
    for row, item in zip(rows, items, strict=True):
        if _nothing_to_look_up(item):
            row["severity"] = "skipped"  # a book: nothing to look up, never an unknown
    order = {s: n for n, s in enumerate(REPORTED)}
    reported = sorted(
        (r for r in rows if r["status"] in order), key=lambda r: (order[r["status"]], r["position"])
    )
    counts = {s: statuses.count(s) for s in (*REPORTED, "other_agency", "ok")}
    severities = [r["severity"] for r in rows]
    report = {
        "file": path,
        "format": bib.format,
        "entries": len(bib.references),
        "withDoi": sum(1 for r in refs if r.doi),
        "withPmid": sum(1 for r in refs if r.pmid),
        "pmidOnly": sum(1 for r in refs if r.pmid and not r.doi),
        "skipped": sum(1 for r in refs if not r.doi and not r.pmid),
        "unparsed": bib.unparsed,
        "counts": counts,
        "severities": {s: severities.count(s) for s in dict.fromkeys(x for x in severities if x)},
        "reported": reported,
        "otherAgency": [
            {
                "position": r["position"],
                "doi": r["doi"],
                "registrationAgency": r["item"].get("registrationAgency"),
            }
            for r in rows
            if r["status"] == "other_agency"
        ],
    }
    return report, rows


REPORT_COLUMNS = ("position", "label", "status", "severity", "doi", "title", "detail")
"""The columns of a check's table, CSV, TSV and markdown report, in order."""


def _markdown_cell(value: object) -> str:
    """A markdown table cell: :func:`~syncd.cli.common.text_cell`, pipes escaped, one line."""
    return " ".join(text_cell(value).replace("|", "\\|").split())


def markdown_report(report: dict[str, Any]) -> str:
    """The check as markdown for a pull-request comment: a heading, the summary line, the listed entries."""
    c = report["counts"]
    lines = [
        f"### Bibliography check: `{Path(report['file']).name}`",
        "",
        f"{report['entries']} entries ({report['format']}): {report['withDoi']} with a DOI, "
        f"{report['skipped']} skipped (no DOI, no PubMed id); ok {c['ok']}, retracted {c['retracted']}, "
        f"expression of concern {c['expression_of_concern']}, corrected {c['corrected']}, "
        f"not found {c['not_found']}, invalid {c['invalid_doi']}, unchecked {c['unchecked']}.",
        "",
    ]
    if not report["reported"]:
        return (
            "\n".join([*lines, "No entry is retracted, concerned, corrected, missing or unchecked."]) + "\n"
        )
    lines += ["| " + " | ".join(REPORT_COLUMNS) + " |", "|" + "---|" * len(REPORT_COLUMNS)]
    lines += [
        "| " + " | ".join(_markdown_cell(row.get(col)) for col in REPORT_COLUMNS) + " |"
        for row in report["reported"]
    ]
    return "\n".join(lines) + "\n"


def junit_report(
    report: dict[str, Any], rows: list[dict[str, Any]], fail_on: str, allow_unknown: bool
) -> str:
    """The check as JUnit XML: one test case per reference, so a CI system lists each citation.

    An entry at or above ``fail_on`` is a ``failure`` (its severity and signals as the message), one
    whose verdict is unknown an ``error`` (a ``skipped`` with ``allow_unknown``), a book with nothing
    to look up ``skipped``; the rest pass. Written with the standard library's ElementTree.
    """
    suite = ElementTree.Element("testsuite", name=f"syncd check {Path(report['file']).name}")
    failures = errors = skipped = 0
    for row in rows:
        name = row.get("label") or f"entry {row['position']}"
        case = ElementTree.SubElement(
            suite,
            "testcase",
            classname="syncd.check",
            name=text_cell(f"{name} {row.get('doi') or ''}".strip()),
        )
        severity = row.get("severity")
        detail = text_cell(row.get("detail") or row.get("reason") or "")
        if severity in FAIL_ON[fail_on]:
            failures += 1
            ElementTree.SubElement(case, "failure", message=f"{severity}: {detail}", type=str(severity))
        elif severity == "skipped" or (severity == "unknown" and allow_unknown):
            skipped += 1
            ElementTree.SubElement(case, "skipped", message=detail)
        elif severity == "unknown":
            errors += 1
            ElementTree.SubElement(case, "error", message=f"unknown: {detail}", type="unknown")
    suite.set("tests", str(len(rows)))
    suite.set("failures", str(failures))
    suite.set("errors", str(errors))
    suite.set("skipped", str(skipped))
    return ElementTree.tostring(suite, encoding="unicode", xml_declaration=True) + "\n"


def _print_report(report: dict[str, Any]) -> None:
    print_rows(
        report["reported"],
        list(REPORT_COLUMNS),
        title=f"{Path(report['file']).name}: {len(report['reported'])} of {report['entries']} entries listed",
    )
    c = report["counts"]
    click.echo(
        f"{report['entries']} entries ({report['format']}): {report['withDoi']} with a DOI, "
        f"{report['pmidOnly']} with a PubMed id only, {report['skipped']} with neither (skipped), "
        f"{report['unparsed']} unreadable blocks; "
        f"ok {c['ok']}, retracted {c['retracted']}, expression of concern {c['expression_of_concern']}, "
        f"corrected {c['corrected']}, reinstated {c['reinstated']}, not found {c['not_found']}, "
        f"invalid {c['invalid_doi']}, unchecked {c['unchecked']}, other agency {c['other_agency']}, "
        f"no DOI {c['no_doi']}"
    )
    rw = report["basis"]["retractionWatch"]
    click.echo(
        f"Retraction Watch version {rw['sha256'][:12]} ({rw['rows']} rows, imported {rw['importedAt']})"
        if rw
        else "no Retraction Watch data imported (syncd retractions import): verdicts rest on Crossref alone"
    )
    oldest = report["basis"]["oldestRecord"]
    if oldest:
        click.echo(f"oldest Crossref record relied on: {oldest['doi']}, validated {oldest['validatedAt']}")
    cited = report.get("cited")
    if cited is not None:
        click.echo(
            f"--cited: {cited['entriesWithReferences']} of {cited['entriesHeld']} stored entries have "
            "indexed reference lists; Crossref's public API has no cited-by"
        )
        for work in cited["works"]:
            for c in work["cites"]:
                click.echo(f"  {work['doi']} cites {c['doi']}: {c['severity']}")
    unknown = report["severities"].get("unknown", 0)
    if unknown:
        noun = "entry" if unknown == 1 else "entries"
        click.echo(f"{unknown} {noun} could not be checked (verdict unknown): never read them as clean")
    for other in report["otherAgency"]:
        click.echo(f"  #{other['position']} {other['doi']}: registered with {other['registrationAgency']}")
    req = report["requests"]
    click.echo(f"upstream: {req['listRequests']} list requests, {req['singleFetches']} single lookups")
    deep = report.get("updatesQuery")
    if deep is not None:
        failed = f"; could not ask: {', '.join(deep['failed'])}" if deep["failed"] else ""
        click.echo(
            f"--deep: reverse query (filter=updates:) for {deep['works']} works, {deep['requests']} "
            f"requests, {deep['notices']} notices found{failed}"
        )
    if report.get("watched") is not None:
        click.echo(f"watching {report['watched']} DOIs (new: {report['watchedNew']})")


@click.command("check")
@click.argument("file", type=click.Path(dir_okay=False, exists=True))
@click.option(
    "--format",
    "fmt",
    type=NearChoice(FORMATS, "format"),
    default=None,
    help="bibtex, ris, csl-json or dois (one per line). Default: from the suffix, else the content.",
)
@click.option("--watch", "add_watches", is_flag=True, help="Add the DOIs found to the watch list.")
@click.option(
    "--fail-on",
    type=click.Choice(tuple(FAIL_ON)),
    default="retracted",
    show_default=True,
    help="Exit 1 when an entry is at or above this level (concern: retracted or expression of concern).",
)
@click.option(
    "--deep",
    is_flag=True,
    help="Also ask Crossref's reverse query (filter=updates:DOI) for works nothing else flags "
    "(one list request each, within the budget).",
)
@click.option("--allow-unknown", is_flag=True, help="Exit 0, not 3, when some entries could not be checked.")
@click.option(
    "--cited",
    is_flag=True,
    help="Also list, for each entry held in the store, the works it cites that are retracted or concerned.",
)
@json_option(
    flag="--output",
    reports=("markdown", "junit"),
    help_more="markdown (a pull-request comment) or junit (JUnit XML, one test case per reference).",
)
@click.pass_context
@handle_errors
def check(
    ctx: click.Context,
    file: str,
    fmt: str | None,
    add_watches: bool,
    fail_on: str,
    allow_unknown: bool,
    deep: bool,
    cited: bool,
    as_json: bool,
) -> None:
    """Check a bibliography: print its retracted, corrected and unresolvable references.

    FILE is BibTeX (.bib), RIS (.ris), CSL-JSON (.json) or a list of DOIs, one per line. Every
    DOI is resolved as crossref_get_works resolves it (stored works from the store, the rest 50 per
    Crossref request). Prints the entries retracted, with an expression of concern, corrected, not
    found, or whose DOI is malformed; entries without a DOI are counted as skipped. --watch adds
    every DOI Crossref holds to the watch list, so the daemon keeps them fresh and later changes
    reach the change feed. Each entry gets a retraction verdict from every signal (Crossref,
    stored notices, the imported Retraction Watch data, the title); the report names the Retraction
    Watch version and the oldest record relied on. Exit 1 when an entry is at or above --fail-on
    (default retracted), else 3 when a verdict is unknown (upstream unreachable, nothing stored, not
    at Crossref and not in Retraction Watch) unless --allow-unknown, else 0. --cited also lists, for
    each entry held in the store, the works its reference list cites that are retracted or under an
    expression of concern (from the store and the Retraction Watch data; no request). Entries
    without a DOI are matched by PubMed id (BibTeX pmid, RIS PM or a PubMed AN, CSL-JSON PMID) to
    the Retraction Watch data; one with neither (a book) is skipped: listed and counted, never a
    reason for exit 3. --deep also asks Crossref's reverse query (filter=updates:DOI: notices
    pointing at the work) for works nothing else flags. Ctrl-C exits 130.
    """
    bib = read_bibliography(file, fmt)  # type: ignore[arg-type]
    refs = [r for r in bib.references if r.doi]
    others = [r for r in bib.references if not r.doi]
    with session(ctx) as svc:
        answer = get_works(svc, [r.doi or "" for r in refs])
        verdicts = work_verdicts(svc, answer.items, pmids=[r.pmid for r in refs], deep=deep)
        items = [item_data(i, v) for i, v in zip(answer.items, verdicts, strict=True)]
        by_pmid = verdicts_for(svc.store, [Seen(None, pmid=r.pmid) for r in others])
        items += [_no_doi_item(r, v) for r, v in zip(others, by_pmid, strict=True)]
        report, rows = _report(file, bib, items, refs + others)
        report["basis"] = _basis([*verdicts, *by_pmid])
        if deep:
            report["updatesQuery"] = _updates_query(verdicts)
        if cited:
            report["cited"] = _cited(svc.store, [i["doi"] for i in items if i["found"]])
        report["requests"] = {"listRequests": answer.list_requests, "singleFetches": answer.single_fetches}
        if add_watches:
            found = list(dict.fromkeys(i["doi"].lower() for i in items if i["found"]))
            label = f"check:{Path(file).name}"
            added = [watch_mod.add(svc.store, "doi", s, label) for s in watch_mod.doi_specs(found)]
            report["watched"] = len(added)
            report["watchedNew"] = sum(1 for _, created in added if created)
    fmt = output_format()
    if fmt == "markdown":
        click.echo(markdown_report(report), nl=False)
    elif fmt == "junit":
        click.echo(junit_report(report, rows, fail_on, allow_unknown), nl=False)
    else:
        emit(report, as_json, lambda: _print_report(report))
    judged = [i for i in items if not _nothing_to_look_up(i)]
    code = exit_code([(i.get("retraction") or {}).get("severity") for i in judged], fail_on, allow_unknown)
    if code:
        sys.exit(code)
