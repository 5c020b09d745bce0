"""The Crossref tools' input models: one :class:`~syncd.tools.params.ToolArgs` per tool.

Each model is the single declaration of its tool's parameters (the ``inputSchema`` clients see and
the validation of every call); Crossref's own parameter names (``query.author``, ``select``,
``facet``, ...) are accepted through pydantic's ``validation_alias``/``AliasChoices``. Contract:
``../shared/spec/anchors.md`` §1a (names, bounds and defaults of the Crossref MCP server's tools).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AliasChoices, BeforeValidator, Field

from syncd.crossref.contracts_lists import SELECT_FIELDS, SORT_FIELDS
from syncd.crossref.params import ISSN_RE
from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi
from syncd.tools.params import ToolArgs, split_names, strip_text

__all__ = [
    "DOI_DESCRIPTION",
    "GetMemberArgs",
    "GetPrefixArgs",
    "GetReferencesArgs",
    "GetWorkArgs",
    "GetWorksArgs",
    "SearchFundersArgs",
    "SearchJournalsArgs",
    "SearchWorksArgs",
]

DOI_DESCRIPTION = (
    "The DOI to resolve: bare (10.1038/nphys1170), with a doi: prefix, or as a https://doi.org/ or "
    "dx.doi.org URL; any case. SICI DOIs with <>;()[]# are kept whole."
)


def _doi(value: str) -> str:
    """Refuse a value that is not a DOI in any accepted form (the body cleans it again)."""
    try:
        parse_doi(value)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None
    return value


def _facet_pairs(value: Any) -> Any:
    """Crossref's ``facet=name:*,name:10`` form: a string becomes ``{name: "*" | count}``."""
    if isinstance(value, str) and not value.strip().startswith("{"):
        pairs: dict[str, Any] = {}
        for part in (p.strip() for p in value.split(",")):
            if part:
                name, _, count = part.partition(":")
                pairs[name.strip()] = int(count) if count.strip().isdigit() else (count.strip() or "*")
        return pairs
    return value


DoiParam = Annotated[
    str, Field(min_length=1, max_length=1000, description=DOI_DESCRIPTION), AfterValidator(_doi)
]
Sort = Literal[(*SORT_FIELDS, "")]  # type: ignore[valid-type]
SelectName = Literal[SELECT_FIELDS]  # type: ignore[valid-type]
WORKS_CURSOR = '"*" starts an uncapped works walk; pass nextWorksCursor back.'


class GetWorkArgs(ToolArgs):
    """``crossref_get_work`` input."""

    doi: DoiParam
    offset: int = Field(0, ge=0, description="Authors to skip (pages the author list only).")
    limit: int = Field(25, ge=1, le=500, description="Authors per page (1-500).")


def _doi_list(value: Any) -> Any:
    """A list sent as one string (not JSON): DOIs separated by whitespace (a DOI holds none)."""
    if isinstance(value, str) and not value.strip().startswith("["):
        return value.split()
    return value


class GetWorksArgs(ToolArgs):
    """``crossref_get_works`` input (a DOI that is not one is an item's reason, not a refusal)."""

    dois: Annotated[list[str], BeforeValidator(_doi_list)] = Field(
        min_length=1,
        max_length=100,
        description="1-100 DOIs, each in any form crossref_get_work takes (bare, doi:, doi.org URL, any "
        "case). A string of DOIs separated by spaces or newlines is accepted too.",
    )
    offset: int = Field(
        0, ge=0, description="Skip this many DOIs of the list (continues an answer cut to fit; nextOffset)."
    )


def _alias(name: str, crossref: str) -> AliasChoices:
    return AliasChoices(name, crossref)


class SearchWorksArgs(ToolArgs):
    """``crossref_search_works`` input; Crossref's own names are accepted as aliases."""

    query: str | None = Field(None, description='Free-text query, e.g. "CRISPR gene editing".')
    queryBibliographic: str | None = Field(
        None,
        validation_alias=_alias("queryBibliographic", "query.bibliographic"),
        description="Whole-citation match to resolve a reference to its DOI (alias query.bibliographic).",
    )
    queryTitle: str | None = Field(
        None,
        validation_alias=_alias("queryTitle", "query.title"),
        description="Match against work titles only (alias query.title).",
    )
    queryAuthor: str | None = Field(
        None,
        validation_alias=_alias("queryAuthor", "query.author"),
        description="Match against author names only (alias query.author).",
    )
    queryContainerTitle: str | None = Field(
        None,
        validation_alias=_alias("queryContainerTitle", "query.container-title"),
        description="Match against the journal/book title only (alias query.container-title).",
    )
    filter: dict[str, str] | None = Field(
        None,
        description='Crossref filters, hyphenated keys, string values: {"type": "journal-article", '
        '"from-pub-date": "2023-01-01", "has-abstract": "true"}.',
    )
    fields: Annotated[list[SelectName] | None, BeforeValidator(split_names)] = Field(
        None,
        validation_alias=_alias("fields", "select"),
        description="Crossref select names to return (DOI always included); alias select (comma-separated).",
    )
    rows: int = Field(
        20, ge=0, le=100, description="Works per page (0-100, default 20; 0 = counts and facets only)."
    )
    authorLimit: int = Field(25, ge=1, le=500, description="Authors kept per work (1-500, default 25).")
    offset: int = Field(0, ge=0, description="Zero-based offset (offset + rows <= 10,000); not with cursor.")
    cursor: str | None = Field(None, description='"*" starts a cursor walk; then pass nextCursor back.')
    sort: Annotated[Sort | None, BeforeValidator(strip_text)] = Field(None, description="Sort field.")
    order: Annotated[Literal["asc", "desc", ""] | None, BeforeValidator(strip_text)] = Field(
        None, description="asc or desc."
    )
    facets: Annotated[dict[str, str | int] | None, BeforeValidator(_facet_pairs)] = Field(
        None,
        validation_alias=_alias("facets", "facet"),
        description='Facet name -> "*" or a number of values, e.g. {"type-name": "*"} (alias facet).',
    )


class GetReferencesArgs(ToolArgs):
    """``crossref_get_references`` input."""

    doi: DoiParam
    offset: int = Field(0, ge=0, description="References to skip.")
    limit: int = Field(100, ge=1, le=500, description="References per page (1-500, default 100).")


class SearchJournalsArgs(ToolArgs):
    """``crossref_search_journals`` input."""

    query: str | None = Field(None, description="Journal title search.")
    issn: Annotated[str | None, BeforeValidator(strip_text)] = Field(
        None,
        pattern=ISSN_RE.pattern.replace("[\\dX]", "[\\dXx]"),
        description="Exact ISSN lookup (NNNN-NNNX); supersedes query; offset is ignored.",
    )
    include_works: bool = Field(False, description="Also return a page of the journal's works.")
    rows: int = Field(
        10, ge=1, le=100, description="Journals per page, or works per page with include_works (1-100)."
    )
    offset: int = Field(0, ge=0, description="Title-search offset (offset + rows <= 100,000).")
    works_offset: int = Field(0, ge=0, description="Works-list offset (works_offset + rows <= 10,000).")
    works_cursor: str | None = Field(None, description=WORKS_CURSOR)


class SearchFundersArgs(ToolArgs):
    """``crossref_search_funders`` input."""

    query: str | None = Field(None, description="Funder name search.")
    funder_doi: str | None = Field(
        None, description="Registry id (100000001) or funder DOI (10.13039/100000001, doi:, doi.org URL)."
    )
    include_works: bool = Field(False, description="Also return a page of funded works.")
    rows: int = Field(
        10, ge=1, le=100, description="Funders per page, or works per page with include_works (1-100)."
    )
    offset: int = Field(0, ge=0, description="Name-search offset (offset + rows <= 100,000).")
    works_offset: int = Field(0, ge=0, description="Works-list offset (works_offset + rows <= 10,000).")
    works_cursor: str | None = Field(None, description=WORKS_CURSOR)


class GetMemberArgs(ToolArgs):
    """``crossref_get_member`` input."""

    member_id: int = Field(ge=1, description="Crossref member id, e.g. 98 (Hindawi), 297 (Springer).")


class GetPrefixArgs(ToolArgs):
    """``crossref_get_prefix`` input."""

    prefix: Annotated[str, BeforeValidator(strip_text)] = Field(
        pattern=r"^10\.\d+$", description="DOI prefix such as 10.1038 (no /suffix)."
    )
