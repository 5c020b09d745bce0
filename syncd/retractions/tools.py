"""``syncd_cited_by``: the stored works whose reference lists cite a DOI (the mirror's reference index).

Answered from the store only (:func:`syncd.retractions.citations.cited_by_answer`), always with the
coverage: Crossref's public API has no cited-by list, so the answer covers the works stored here
with deposited reference lists. Cut to fit by :mod:`syncd.tools.fit` (``works``, continued with a
higher ``limit``; :func:`resume_works`).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from syncd.contracts.common import WithCache
from syncd.normalize.doi import parse_doi
from syncd.retractions.citations import cited_by_lookup
from syncd.road.policy import iso, read_now
from syncd.road.services import Services
from syncd.tools.errors import error_result
from syncd.tools.fit import Cut, Fit, plain
from syncd.tools.params import ToolArgs, ToolSpec

__all__ = ["TOOLS", "CitedByArgs", "CitedByView", "cited_by_tool", "render_cited_by", "resume_works"]


class CitedByArgs(ToolArgs):
    """``syncd_cited_by`` input."""

    doi: str = Field(
        min_length=1,
        max_length=2048,
        description="The cited work's DOI (any form: 10.x/..., doi:, https://doi.org/...).",
    )
    limit: int = Field(50, ge=1, le=500, description="Most citing works listed (1-500).")


class _Model(BaseModel):
    """Base of the models here: unknown keys refused; built on first use (``defer_build``)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)


class CitingWork(_Model):
    """A stored work whose reference list cites the DOI."""

    doi: str = Field(description="The citing work's DOI.")
    title: str | None = Field(None, description="Its title, as stored.")
    selfCitation: bool | None = Field(
        None, description="True when it is the cited work itself (its own DOI in its reference list)."
    )


class Coverage(_Model):
    """What the answer covers."""

    indexedWorks: int = Field(description="Stored works with an indexed reference list (DOIs cited).")
    storedWorks: int = Field(description="Crossref works stored in the mirror.")
    rebuiltAt: str | None = Field(None, description="When the whole store was last indexed (ISO 8601).")
    note: str = Field(description="What the count means (Crossref's public API has no cited-by).")
    notice: str | None = Field(None, description="Works the index may not cover yet, and the fix.")


class CitedByView(WithCache):
    """``syncd_cited_by`` output: the stored works citing the DOI, with the coverage."""

    model_config = ConfigDict(extra="forbid")

    doi: str | None = Field(None, description="The cited DOI (lower-cased).")
    total: int | None = Field(None, description="Stored works citing it.")
    returned: int | None = Field(None, description="Works listed.")
    works: list[CitingWork] | None = Field(None, description="The citing works, by DOI.")
    coverage: Coverage | None = Field(None, description="What the answer covers.")
    notice: str | None = Field(None, description="Guidance: what was cut and the call that continues.")


def render_cited_by(data: dict[str, Any]) -> str:
    """Text of a syncd_cited_by answer: the count, one line per work, the coverage."""
    cov = data["coverage"]
    lines = [
        f"# Stored works citing {data['doi']}: {data['total']}",
        *(
            f"- {w.get('title') or '(untitled)'} | doi:{w['doi']}"
            + (" | self-citation" if w.get("selfCitation") else "")
            for w in data["works"]
        ),
        f"Among {cov['indexedWorks']} stored works with deposited reference lists ({cov['storedWorks']} "
        "Crossref works stored); Crossref's public API has no cited-by.",
    ]
    if cov.get("notice"):
        lines.append(cov["notice"])
    if data.get("notice"):
        lines.append(f"Notice: {data['notice']}")
    return "\n".join(lines)


def resume_works(data: dict[str, Any], args: Mapping[str, Any], kept: int, total: int) -> str:
    """Continuation of a cut ``works`` list: the works kept, and how to see the others."""
    data["returned"] = kept
    return (
        f"Showing {kept} of {data.get('total', total)} citing works; the list is cut to fit: call again "
        f"with limit={kept} for a page that fits"
    )


def cited_by_tool(services: Services, doi: str, limit: int = 50) -> CallToolResult:
    """List the works stored in this mirror whose reference lists cite a DOI (offline, no request).

    Crossref's public API has no cited-by list: this answers from the deposited reference lists of
    the works syncd holds, so coverage says how many stored works have an indexed reference list.
    Use it to ask "which of our works cite this retracted paper". Errors: invalid_parameter (not a
    DOI), store_unavailable.
    """
    try:
        answer = cited_by_lookup(services, parse_doi(doi).key, limit)
        data = answer.as_dict(iso)
        now = time.time()
        data["cache"] = read_now(now).as_dict(now)
    except Exception as exc:
        return error_result(exc)
    return CallToolResult(
        content=[TextContent(type="text", text=render_cited_by(data))], structured_content=data
    )


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "syncd_cited_by",
        "List the stored works that cite a DOI",
        CitedByArgs,
        CitedByView,
        cited_by_tool,
        ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False),
        Fit((Cut("works", resume_works),), plain(render_cited_by)),
    ),
)
"""The reference-index tool (read-only, answered from the store)."""
