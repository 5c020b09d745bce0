"""The shared base of every MCP tool: :class:`ToolArgs` (input models) and :class:`ToolSpec` (one tool).

Each tool is declared once, next to its slice: its input model in the slice's ``args`` module
(:mod:`syncd.crossref.args`, :mod:`syncd.zenodo.args`; the change feed's in :mod:`syncd.server.changes`),
and its :class:`ToolSpec` (name, title, input and output models, body, annotations and size-budget
cuts) in the slice's ``tools`` module. One :class:`ToolArgs` model per tool is the single declaration
of the tool's parameters: the
``inputSchema`` clients see is generated from it (:meth:`ToolArgs.input_schema`), and it validates
every call before the tool body runs. Crossref's own parameter names (``query.author``,
``select``, ``facet``, ...) are accepted through pydantic's ``validation_alias``/``AliasChoices``.

Arguments are repaired before validation, as the contracts say (``../shared/spec/anchors.md``,
"Arguments are repaired before validation"): a numeric string becomes a number where a number is
expected, a number becomes a string where a string is expected (``zenodo_get_record id=5244404``),
``null`` at an optional key means absent, ``"true"``/``"false"`` become booleans, and a list or
object sent as JSON text is parsed. A value still of the wrong type, out of its bounds, not among
the declared names, or not of the declared form is refused by :meth:`ToolSpec.parse` with
``data.reason = "invalid_arguments"``, answered as a tool error (``isError: true``, SEP-1303).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from mcp.types import CallToolResult, ToolAnnotations
from pydantic import AliasChoices, BaseModel, ConfigDict, ValidationError, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema

from syncd.tools.errors import invalid_arguments
from syncd.tools.fit import Fit

__all__ = ["ToolArgs", "ToolSpec", "split_names", "strip_text"]

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

    model_config = ConfigDict(strict=True, extra="ignore", populate_by_name=True, defer_build=True)

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


def strip_text(value: Any) -> Any:
    """A string without surrounding white space (a ``BeforeValidator``); any other value unchanged."""
    return value.strip() if isinstance(value, str) else value


def split_names(value: Any) -> Any:
    """Crossref's ``select=a,b`` form: a comma-separated string becomes a list of names."""
    if isinstance(value, str) and not value.strip().startswith("["):
        return [v.strip() for v in value.split(",") if v.strip()]
    return value


# ------------------------------------------------------------------------------------------ the spec


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """One MCP tool: name, title, input model, output model, body, annotations and size-budget cuts.

    A spec is one declared object: equal only to itself and hashed by identity (a tool set is a key of
    the server's catalogue cache).

    ``fit`` says how the tool's answers are cut to the answer budget (its lists, in the order tried,
    and its text renderer; :func:`syncd.tools.fit.fit_answer`); ``clamps`` names arguments lowered
    before the call to fit the budget (``name -> limit(budget)``, :func:`syncd.tools.fit.clamp_arguments`).
    ``body`` is called as ``body(deps, **arguments)`` (or ``body(deps, arguments)`` when
    ``pass_dict``, ``body(deps, args)`` with the validated input model itself when ``pass_args``),
    where ``deps`` is the object the server's lifespan yields, passed through unopened, and
    ``arguments`` are the validated values by parameter name. The description is the body's
    docstring.
    """

    name: str
    title: str
    args: type[ToolArgs]
    output: type[BaseModel]
    body: Callable[..., CallToolResult]
    annotations: ToolAnnotations
    fit: Fit
    pass_dict: bool = False
    pass_args: bool = False
    clamps: Mapping[str, Callable[[int], int]] = dataclasses.field(default_factory=dict)

    @property
    def description(self) -> str:
        """The tool description clients see (the body's docstring)."""
        return inspect.cleandoc(self.body.__doc__ or "")

    def parse(self, arguments: Mapping[str, Any] | None) -> ToolArgs:
        """The validated, repaired arguments of one call.

        Raises:
            InvalidInput: ``reason`` ``invalid_arguments`` with ``data.fields`` when an argument is
                of the wrong type, out of bounds, not a declared name or not of the declared form
                (the server answers it as a tool error, ``isError: true``, SEP-1303).
        """
        try:
            return self.args.model_validate(dict(arguments or {}))
        except ValidationError as exc:
            raise invalid_arguments(self.name, exc) from None

    def run(self, deps: Any, args: ToolArgs) -> CallToolResult:
        """Call the body with ``deps`` and the validated arguments."""
        if self.pass_args:
            return self.body(deps, args)
        values = args.arguments()
        return self.body(deps, values) if self.pass_dict else self.body(deps, **values)
