"""Zenodo search tools: ``zenodo_search_records`` and ``zenodo_lookup_vocabulary``, local-first.

Each calls one answer of :mod:`syncd.zenodo.queries_search` and renders it (offline, the local
mirror's full-text index answers a search, ``local: true`` and a notice).
"""

from __future__ import annotations

from mcp.types import CallToolResult

from syncd.road.services import Services
from syncd.tools.errors import error_result
from syncd.zenodo import queries_search
from syncd.zenodo.args import SearchRecordsArgs
from syncd.zenodo.tools_render import RENAME, VOCAB_RENAME, tool_result


def search_records(services: Services, args: SearchRecordsArgs) -> CallToolResult:
    """Search Zenodo records, local-first; offline, from the local mirror's full-text index.

    Filters are composed into Zenodo's ``q`` (so totals agree with them): resource_type (ids such as
    dataset, software, publication-article, checked against Zenodo's resource-type vocabulary as stored
    by zenodo_lookup_vocabulary, else the built-in table), community (slug, UUID or URL; checked),
    funder (ROR id or URL, or a Crossref Funder DOI in any form, resolved to the ROR id Zenodo indexes
    through its funders vocabulary; a name is refused with candidates), award (<ror>::<number>, a grant
    number, or an award DOI/URL such as CORDIS 10.3030/<n>, resolved to Zenodo's award id through its
    awards vocabulary), creator_orcid, file_type, license, access_status, published_from/published_to
    (YYYY, YYYY-MM or YYYY-MM-DD; partial dates expanded). Up to 25 hits per page; page x size may not
    pass 10,000. Pages are cached by their canonical parameters (``ttl.search``) and their records
    stored. When Zenodo cannot be used, the answer comes from the full-text index over stored records
    (title, creators, description, keywords) with ``local: true`` and a notice; a funder whose ROR id is
    known offline is applied to the stored records' funding, and the notice names each filter that could
    not be applied. Errors: query_is_identifier, query_syntax, invalid_parameter, invalid_date_range,
    result_window_exceeded, unknown_community, unknown_funder, rate_limited (only when nothing local can
    answer).
    """
    try:
        data, title = queries_search.search_answer(services, args)
    except Exception as exc:
        return error_result(exc, {**RENAME, "upstream_unavailable": "query_failed"})
    return tool_result(data, title)


def lookup_vocabulary(
    services: Services,
    vocabulary: str,
    query: str | None = None,
    funder: str | None = None,
    page: int = 1,
    size: int = 10,
) -> CallToolResult:
    """Look up the ids that zenodo_search_records filters take.

    Vocabularies: communities, funders, awards, licenses or resource_types (singular forms and
    grant/grants accepted).

    Each entry names the search parameter it feeds (filter_param) and the value to pass
    (filter_value), with a label and per-vocabulary details (slug/uuid; ROR, Funder DOI, country;
    award number, acronym, funder, dates; license URL, OSI approval; resource type parent and
    search value). A funders query that is a ROR id or Funder DOI, or an awards query that is an
    award id, award DOI or URL, answers that one entry. Pages and the funders/awards they list are
    stored (``ttl.entity``). resource_types is Zenodo's vocabulary in Zenodo's order (by id), fetched
    and stored when Zenodo is reachable, else the built-in table of its 43 entries. Errors:
    invalid_parameter, funder_only_for_awards, unknown_funder (a funder name: with candidates),
    result_window_exceeded, rate_limited, upstream_unavailable.
    """
    try:
        data, title = queries_search.vocabulary_answer(services, vocabulary, query, funder, page, size)
    except Exception as exc:
        return error_result(exc, VOCAB_RENAME)
    return tool_result(data, title)
