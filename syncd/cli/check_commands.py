"""``syncd check FILE``: which references of a bibliography are retracted, corrected or do not resolve.

The file is BibTeX, RIS, CSL-JSON or a plain list of DOIs (:mod:`syncd.bibliography`). Every DOI is
resolved by :func:`syncd.crossref.lookups_batch.get_works`, the lookup behind the
``crossref_get_works`` tool: stored works from the store, the rest 50 per Crossref list request.
Each entry with a DOI gets one status:

=========================  ===========================================================  ========
status                     meaning                                                      reported
=========================  ===========================================================  ========
``retracted``              updatedBy names a retraction (withdrawal, removal)           yes
``expression_of_concern``  updatedBy names an expression of concern                     yes
``corrected``              updatedBy names a correction (erratum, corrigendum, ...)     yes
``not_found``              Crossref holds no record and no other agency registered it   yes
``invalid_doi``            the DOI text is not a DOI                                    yes
``unchecked``              upstream could not be asked and nothing is stored            yes
``other_agency``           registered with another agency (DataCite, mEDRA...)          counted
``ok``                     found, no update recorded                                    counted
=========================  ===========================================================  ========

Entries without a DOI are counted as skipped. Exit code: 1 when any entry is retracted, else 3 when
any is ``unchecked``, else 0 (2 for a file that cannot be read).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from syncd import watch as watch_mod
from syncd.bibliography import FORMATS, Bibliography, Reference, read_bibliography
from syncd.cli.choices import NearChoice
from syncd.cli.common import EXIT_FAILURE, emit, handle_errors, json_option, print_rows, session
from syncd.crossref.lookups_batch import get_works
from syncd.crossref.tools_batch import item_data

__all__ = ["EXIT_RETRACTED", "REPORTED", "check", "entry_status"]

EXIT_RETRACTED = 1
"""Exit code of ``syncd check`` when any entry is retracted."""

REPORTED = ("retracted", "expression_of_concern", "corrected", "not_found", "invalid_doi", "unchecked")
"""Statuses printed, in this order (the rest are counted only)."""


def entry_status(item: dict[str, Any]) -> str:
    """The status of one resolved entry (a ``WorksItem`` dict, as ``item_data`` builds it)."""
    if item["found"]:
        flags = item.get("flags") or []
        return next((f for f in ("retracted", "expression_of_concern", "corrected") if f in flags), "ok")
    reason = item.get("reason")
    if reason == "invalid_parameter":
        return "invalid_doi"
    if reason == "doi_not_found":
        agency = item.get("registrationAgency")
        return "other_agency" if agency and agency.lower() != "crossref" else "not_found"
    return "unchecked"


def _row(ref: Reference, item: dict[str, Any], status: str) -> dict[str, Any]:
    updates = "; ".join(f"{u['type']} {u['doi']}" for u in item.get("updatedBy") or [])
    return {
        "position": ref.position,
        "label": ref.label,
        "status": status,
        "doi": item.get("doi") or ref.doi,
        "title": item.get("title") or ref.title,
        "detail": updates or item.get("message"),
        "item": item,
    }


def _report(
    path: str, bib: Bibliography, items: list[dict[str, Any]], refs: list[Reference]
) -> dict[str, Any]:
    statuses = [entry_status(i) for i in items]
    rows = [_row(r, i, s) for r, i, s in zip(refs, items, statuses, strict=True)]
    order = {s: n for n, s in enumerate(REPORTED)}
    reported = sorted(
        (r for r in rows if r["status"] in order), key=lambda r: (order[r["status"]], r["position"])
    )
    counts = {s: statuses.count(s) for s in (*REPORTED, "other_agency", "ok")}
    return {
        "file": path,
        "format": bib.format,
        "entries": len(bib.references),
        "withDoi": len(refs),
        "skipped": len(bib.references) - len(refs),
        "unparsed": bib.unparsed,
        "counts": counts,
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


def _print_report(report: dict[str, Any]) -> None:
    print_rows(
        report["reported"],
        ["position", "label", "status", "doi", "title", "detail"],
        title=f"{Path(report['file']).name}: {len(report['reported'])} of {report['withDoi']} DOIs flagged",
    )
    c = report["counts"]
    click.echo(
        f"{report['entries']} entries ({report['format']}): {report['withDoi']} with a DOI, "
        f"{report['skipped']} without (skipped), {report['unparsed']} unreadable blocks; "
        f"ok {c['ok']}, retracted {c['retracted']}, expression of concern {c['expression_of_concern']}, "
        f"corrected {c['corrected']}, not found {c['not_found']}, invalid {c['invalid_doi']}, "
        f"unchecked {c['unchecked']}, other agency {c['other_agency']}"
    )
    for other in report["otherAgency"]:
        click.echo(f"  #{other['position']} {other['doi']}: registered with {other['registrationAgency']}")
    req = report["requests"]
    click.echo(f"upstream: {req['listRequests']} list requests, {req['singleFetches']} single lookups")
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
@json_option(flag="--output")
@click.pass_context
@handle_errors
def check(ctx: click.Context, file: str, fmt: str | None, add_watches: bool, as_json: bool) -> None:
    """Check a bibliography: print its retracted, corrected and unresolvable references.

    FILE is BibTeX (.bib), RIS (.ris), CSL-JSON (.json) or a list of DOIs, one per line. Every
    DOI is resolved as crossref_get_works resolves it (stored works from the store, the rest 50 per
    Crossref request). Prints the entries retracted, with an expression of concern, corrected, not
    found, or whose DOI is malformed; entries without a DOI are counted as skipped. --watch adds
    every DOI Crossref holds to the watch list, so the daemon keeps them fresh and later changes
    reach the change feed. Exit 1 when any entry is retracted, else 3 when some could not be
    checked (upstream unreachable, nothing stored), else 0.
    """
    bib = read_bibliography(file, fmt)  # type: ignore[arg-type]
    refs = [r for r in bib.references if r.doi]
    with session(ctx) as svc:
        answer = get_works(svc, [r.doi or "" for r in refs])
        items = [item_data(i) for i in answer.items]
        report = _report(file, bib, items, refs)
        report["requests"] = {"listRequests": answer.list_requests, "singleFetches": answer.single_fetches}
        if add_watches:
            found = list(dict.fromkeys(i["doi"].lower() for i in items if i["found"]))
            label = f"check:{Path(file).name}"
            added = [watch_mod.add(svc.store, "doi", s, label) for s in watch_mod.doi_specs(found)]
            report["watched"] = len(added)
            report["watchedNew"] = sum(1 for _, created in added if created)
    emit(report, as_json, lambda: _print_report(report))
    if report["counts"]["retracted"]:
        sys.exit(EXIT_RETRACTED)
    if report["counts"]["unchecked"]:
        sys.exit(EXIT_FAILURE)
