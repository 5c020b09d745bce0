"""Each MCP tool declared once: its input model, its output model, its body and its annotations.

One :class:`ToolArgs` model per tool is the single declaration of the tool's parameters: the
``inputSchema`` clients see is generated from it (:meth:`ToolArgs.input_schema`), and it validates
every call before the tool body runs. Crossref's own parameter names (``query.author``,
``select``, ``facet``, ...) are accepted through pydantic's ``validation_alias``/``AliasChoices``.

Arguments are repaired before validation, as the contracts say (``../shared/spec/anchors.md``,
"Arguments are repaired before validation"): a numeric string becomes a number where a number is
expected, a number becomes a string where a string is expected (``zenodo_get_record id=5244404``),
``null`` at an optional key means absent, ``"true"``/``"false"`` become booleans, and a list or
object sent as JSON text is parsed. A value still of the wrong type, out of its bounds, not among
the declared names, or not of the declared form is refused by :meth:`ToolSpec.parse` with the
JSON-RPC invalid-params error ``-32602`` and ``data.reason = "invalid_arguments"``.
"""

from __future__ import annotations

import inspect
import json
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import (
    AfterValidator,
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    model_validator,
)
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from syncd.crossref.contracts import SELECT_FIELDS, SORT_FIELDS
from syncd.crossref.params import ISSN_RE
from syncd.errors import InvalidInput
from syncd.normalize.doi import parse_doi
from syncd.tools.errors import invalid_arguments

__all__ = [
    "CITATION_DESCRIPTION",
    "CURSOR_DESCRIPTION",
    "DOI_DESCRIPTION",
    "ID_DESCRIPTION",
    "GetMemberArgs",
    "GetPrefixArgs",
    "GetRecordArgs",
    "GetReferencesArgs",
    "GetWorkArgs",
    "GetWorksArgs",
    "ListChangesArgs",
    "ListFilesArgs",
    "ListVersionsArgs",
    "LookupVocabularyArgs",
    "ReadFileArgs",
    "SearchFundersArgs",
    "SearchJournalsArgs",
    "SearchRecordsArgs",
    "SearchWorksArgs",
    "ToolArgs",
    "ToolSpec",
]

DOI_DESCRIPTION = (
    "The DOI to resolve: bare (10.1038/nphys1170), with a doi: prefix, or as a https://doi.org/ or "
    "dx.doi.org URL; any case. SICI DOIs with <>;()[]# are kept whole."
)
ID_DESCRIPTION = (
    "The deposit to resolve: a record id (22705923), a Zenodo DOI (10.5281/zenodo.22705923, doi: prefix "
    "and any case accepted), a concept DOI or concept record id (resolves to the latest version), another "
    "DOI registered to a Zenodo record, or a zenodo.org/records or doi.org URL."
)
CURSOR_DESCRIPTION = (
    "A continuations[].cursor from an earlier zenodo_get_record response, passed unchanged with that "
    "continuation's id as id. Returns that field's next window (8,000 characters of text, or the next page "
    "of entries) as window, in place of record. Omit to get the record."
)
CITATION_DESCRIPTION = (
    "Include a formatted citation of the resolved version: bibtex, csl-json, or a text style (apa, "
    "chicago-author-date, harvard-cite-them-right, ieee, modern-language-association, nature). Case, spaces, "
    "hyphens, and underscores are ignored when matching (BibTeX, APA, CSL JSON). Omit for none. Rendered "
    "locally from the stored record, so it works offline."
)

_INTEGER = re.compile(r"^[+-]?\d{1,18}$")


# ------------------------------------------------------------------------------------------- repair


def _kinds(annotation: Any) -> set[Any]:
    """The plain types an annotation admits (``Annotated``/unions/``Literal`` unwrapped)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _kinds(get_args(annotation)[0])
    if origin is Union or origin is types.UnionType:
        return set().union(*(_kinds(a) for a in get_args(annotation)))
    if origin is Literal:
        return {type(v) for v in get_args(annotation)}
    if origin is not None:
        return {origin}
    return {annotation}


def _item_annotation(annotation: Any, container: type) -> Any:
    """The item (list) or value (dict) annotation of ``container`` inside ``annotation``, else None."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _item_annotation(get_args(annotation)[0], container)
    if origin is Union or origin is types.UnionType:
        for arm in get_args(annotation):
            found = _item_annotation(arm, container)
            if found is not None:
                return found
        return None
    if origin is container:
        args = get_args(annotation)
        return args[-1] if args else Any
    return None


def _repair(value: Any, annotation: Any) -> Any:
    """``value`` converted where the contracts repair it; anything else is returned unchanged."""
    kinds = _kinds(annotation)
    if isinstance(value, str):
        text = value.strip()
        if int in kinds and str not in kinds and _INTEGER.match(text):
            return int(text)
        if bool in kinds and str not in kinds and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if (list in kinds or dict in kinds) and str not in kinds and text[:1] in ("[", "{"):
            try:
                parsed = json.loads(text)
            except ValueError:
                return value
            value = parsed
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        if str in kinds and int not in kinds:
            return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
        if int in kinds and isinstance(value, float) and value.is_integer():
            return int(value)
        return value
    if isinstance(value, list) and list in kinds:
        item = _item_annotation(annotation, list)
        return [_repair(v, item) for v in value] if item is not None else value
    if isinstance(value, dict) and dict in kinds:
        item = _item_annotation(annotation, dict)
        return {k: _repair_value(v, item) for k, v in value.items()} if item is not None else value
    return value


def _repair_value(value: Any, annotation: Any) -> Any:
    """A dict value: as :func:`_repair`, and a boolean becomes "true"/"false" where only strings go."""
    kinds = _kinds(annotation)
    if isinstance(value, bool) and str in kinds and bool not in kinds:
        return "true" if value else "false"
    return _repair(value, annotation)


class ToolArgs(BaseModel):
    """Base of every tool's input model: strict types after the contracts' argument repair.

    Unknown keys are ignored (as the SDK did before). Subclasses declare the tool's parameters as
    fields; ``description=`` texts and bounds become the tool's ``inputSchema``.
    """

    model_config = ConfigDict(strict=True, extra="ignore", populate_by_name=True)

    @classmethod
    def _input_keys(cls) -> dict[str, str]:
        """Every accepted input key (name and aliases) -> field name."""
        keys: dict[str, str] = {}
        for name, field in cls.model_fields.items():
            keys[name] = name
            alias = field.validation_alias
            if isinstance(alias, AliasChoices):
                keys.update({str(a): name for a in alias.choices if isinstance(a, str)})
            elif isinstance(alias, str):
                keys[alias] = name
        return keys

    @model_validator(mode="before")
    @classmethod
    def _repair_arguments(cls, data: Any) -> Any:
        if not isinstance(data, Mapping):
            return data
        keys = cls._input_keys()
        repaired: dict[str, Any] = {}
        for key, value in data.items():
            name = keys.get(key)
            if name is None:
                continue
            field = cls.model_fields[name]
            if value is None and not field.is_required():
                continue
            repaired[key] = _repair(value, field.annotation)
        return repaired

    @classmethod
    def input_schema(cls) -> dict[str, Any]:
        """The tool's ``inputSchema``: the model's JSON schema, optional fields without a null arm.

        The model's docstring is not repeated (the tool's description says what the tool does), and
        pydantic's generated titles (the class name, each field's name title-cased) are left out.
        """
        schema = cls.model_json_schema(schema_generator=_InputSchema)
        schema.pop("description", None)
        schema.pop("title", None)
        return schema

    def arguments(self) -> dict[str, Any]:
        """The validated arguments by parameter name (defaults filled in)."""
        return {name: getattr(self, name) for name in type(self).model_fields}


class _InputSchema(GenerateJsonSchema):
    """Input schemas as clients expect them: ``null`` is accepted (= absent) but not advertised.

    No generated field titles either (``"title": "Doi"`` says nothing the name does not).
    """

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        out = super().default_schema(schema)
        if out.get("default", ...) is None:
            out.pop("default")
        return out


# ------------------------------------------------------------------------------------------- checks


def _strip(value: Any) -> Any:
    return value.strip() if isinstance(value, str) else value


def _doi(value: str) -> str:
    """Refuse a value that is not a DOI in any accepted form (the body cleans it again)."""
    try:
        parse_doi(value)
    except InvalidInput as exc:
        raise ValueError(exc.message) from None
    return value


def _split_names(value: Any) -> Any:
    """Crossref's ``select=a,b`` form: a comma-separated string becomes a list of names."""
    if isinstance(value, str) and not value.strip().startswith("["):
        return [v.strip() for v in value.split(",") if v.strip()]
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
RecordId = Annotated[str, Field(min_length=1, max_length=500, description=ID_DESCRIPTION)]
Sort = Literal[(*SORT_FIELDS, "")]  # type: ignore[valid-type]
SelectName = Literal[SELECT_FIELDS]  # type: ignore[valid-type]
WORKS_CURSOR = '"*" starts an uncapped works walk; pass nextWorksCursor back.'


# ------------------------------------------------------------------------------------------ crossref


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
    fields: Annotated[list[SelectName] | None, BeforeValidator(_split_names)] = Field(
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
    sort: Annotated[Sort | None, BeforeValidator(_strip)] = Field(None, description="Sort field.")
    order: Annotated[Literal["asc", "desc", ""] | None, BeforeValidator(_strip)] = Field(
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
    issn: Annotated[str | None, BeforeValidator(_strip)] = Field(
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

    prefix: Annotated[str, BeforeValidator(_strip)] = Field(
        pattern=r"^10\.\d+$", description="DOI prefix such as 10.1038 (no /suffix)."
    )


# -------------------------------------------------------------------------------------------- zenodo


class GetRecordArgs(ToolArgs):
    """``zenodo_get_record`` input."""

    id: RecordId
    cursor: str | None = Field(None, max_length=500, description=CURSOR_DESCRIPTION)
    citation_style: str | None = Field(None, max_length=64, description=CITATION_DESCRIPTION)


class SearchRecordsArgs(ToolArgs):
    """``zenodo_search_records`` input."""

    query: str | None = Field(
        None,
        max_length=1000,
        description="Search terms (OR-ed unless joined by AND; quote phrases; field syntax such as "
        'metadata.title:"..." works). Omit to browse.',
    )
    resource_type: str | list[str] | None = Field(
        None, description="Resource type ids (dataset, software, publication-article, ...); up to 10."
    )
    community: str | None = Field(None, max_length=200, description="Community slug, UUID or URL.")
    funder: str | None = Field(
        None,
        max_length=200,
        description="Funder ROR id, ROR URL or Crossref Funder DOI (10.13039/..., doi:, doi.org URL); "
        "a name is refused with candidates.",
    )
    award: str | None = Field(
        None,
        max_length=200,
        description="Award id <ror>::<number>, an award DOI or URL (CORDIS 10.3030/<n>), or a grant number.",
    )
    creator_orcid: str | None = Field(None, max_length=100, description="A creator's ORCID iD.")
    file_type: str | list[str] | None = Field(None, description="File extensions (csv, pdf, ...); up to 10.")
    license: str | None = Field(None, max_length=64, description="License id (cc-by-4.0, mit).")
    access_status: str | None = Field(
        None, max_length=32, description="open, restricted, embargoed or metadata-only."
    )
    published_from: str | None = Field(None, max_length=10, description="YYYY, YYYY-MM or YYYY-MM-DD.")
    published_to: str | None = Field(None, max_length=10, description="YYYY, YYYY-MM or YYYY-MM-DD.")
    all_versions: bool = Field(False, description="Search every version, not only the latest.")
    sort: str | None = Field(
        None,
        max_length=32,
        description="bestmatch (default with a query), newest (default without), oldest, mostviewed, "
        "mostdownloaded, updated-desc, updated-asc.",
    )
    page: int = Field(1, ge=1, description="Page (1-based); page x size <= 10,000.")
    size: int = Field(10, ge=1, le=25, description="Hits per page (1-25).")


class ListVersionsArgs(ToolArgs):
    """``zenodo_list_versions`` input."""

    id: RecordId
    page: int = Field(1, ge=1, description="Page (1-based); page x size <= 10,000.")
    size: int = Field(25, ge=1, le=25, description="Versions per page (1-25).")


class ListFilesArgs(ToolArgs):
    """``zenodo_list_files`` input."""

    id: RecordId
    archive_key: str | None = Field(
        None, max_length=1000, description="Exact key of a .zip file: list its members."
    )
    key_contains: str | None = Field(
        None, max_length=200, description="Case-insensitive substring filter on keys."
    )
    offset: int = Field(0, ge=0, description="Entries to skip.")
    limit: int = Field(50, ge=1, le=200, description="Most entries returned (1-200).")


class ReadFileArgs(ToolArgs):
    """``zenodo_read_file`` input."""

    id: RecordId
    key: str = Field(min_length=1, max_length=1000, description="Exact file key.")
    archive_member: str | None = Field(
        None, max_length=1000, description="Path of a member inside the ZIP named by key."
    )
    offset_bytes: int = Field(0, ge=0, description="Byte offset to start at (0 with archive_member).")
    max_bytes: int = Field(16_384, ge=256, le=65_536, description="Most bytes read (256-65,536).")


class LookupVocabularyArgs(ToolArgs):
    """``zenodo_lookup_vocabulary`` input."""

    vocabulary: str = Field(
        min_length=1,
        max_length=32,
        description="communities, funders, awards, licenses or resource_types (singular and "
        "grant/grants accepted).",
    )
    query: str | None = Field(
        None,
        max_length=200,
        description="Search terms; omit to browse. A ROR id or Funder DOI (funders), or an award id, "
        "DOI or URL (awards), answers that one entry.",
    )
    funder: str | None = Field(
        None, max_length=200, description="Awards only: funder ROR id, ROR URL or Funder DOI."
    )
    page: int = Field(1, ge=1, description="Page (1-based); page x size <= 10,000.")
    size: int = Field(10, ge=1, le=25, description="Entries per page (1-25).")


# ------------------------------------------------------------------------------------------- changes


class ListChangesArgs(ToolArgs):
    """``syncd_list_changes`` input."""

    since: str = Field(
        "7d",
        min_length=1,
        max_length=40,
        description="Window start: a duration back from now (7d, 12h, 30m, 2w) or an ISO date/time in UTC "
        "(2026-11-01). Default 7d.",
    )
    types: Annotated[
        list[Annotated[str, Field(min_length=1, max_length=40)]] | None, BeforeValidator(_split_names)
    ] = Field(
        None,
        max_length=20,
        description='Only changes of these types, e.g. ["retraction", "expression_of_concern"] or '
        '"retraction,correction" (update types: retraction, correction, erratum, withdrawal, '
        "expression_of_concern, ...; also title, authors, date, superseded, new_version, deleted, "
        "restricted, agency_changed, metadata).",
    )
    kind: Literal["crossref", "zenodo", "agency", "all"] = Field(
        "all", description="Only Crossref works, Zenodo records or registration agencies (DOI prefixes)."
    )
    watched_only: bool = Field(False, description="Only entries on the DOI watch list.")
    limit: int = Field(50, ge=1, le=200, description="Changes per page (1-200).")
    cursor: str | None = Field(
        None, max_length=40, description="The nextCursor of the previous page (same filters)."
    )


# ------------------------------------------------------------------------------------------ the spec


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: name, title, input model, output model, body and annotations.

    ``body`` is called as ``body(deps, **arguments)`` (or ``body(deps, arguments)`` when
    ``pass_dict``), where ``deps`` is the object the server's lifespan yields, passed through
    unopened, and ``arguments`` are the validated values by parameter name. The description is
    the body's docstring.
    """

    name: str
    title: str
    args: type[ToolArgs]
    output: type[BaseModel]
    body: Callable[..., CallToolResult]
    annotations: ToolAnnotations
    pass_dict: bool = False

    @property
    def description(self) -> str:
        """The tool description clients see (the body's docstring)."""
        return inspect.cleandoc(self.body.__doc__ or "")

    def parse(self, arguments: Mapping[str, Any] | None) -> ToolArgs:
        """The validated, repaired arguments of one call.

        Raises:
            MCPError: code -32602 with ``data.reason = "invalid_arguments"`` and ``data.fields``
                when an argument is of the wrong type, out of bounds, not a declared name or not
                of the declared form.
        """
        try:
            return self.args.model_validate(dict(arguments or {}))
        except ValidationError as exc:
            raise invalid_arguments(self.name, exc) from None

    def run(self, deps: Any, args: ToolArgs) -> CallToolResult:
        """Call the body with ``deps`` and the validated arguments."""
        values = args.arguments()
        return self.body(deps, values) if self.pass_dict else self.body(deps, **values)
