"""The one list of slices syncd is composed of, and what a slice declares of its settings.

:data:`SLICE_PACKAGES` names every slice package once. The settings (:mod:`syncd.config`) compose their
sections from each package's ``settings.py`` (its :class:`SliceSettings`, ``SETTINGS``) and its
``pools.py`` (a ``budget.<pool>`` table per pool, a ``budget.<setting>`` per concurrency group); the
composition root (:mod:`syncd.registry`) reads each package's ``slice.py`` (its
:class:`~syncd.slice.Slice`). Adding an upstream is its folder and one entry here.

This module imports nothing of syncd but the lazy loader, so the settings can be composed before any
slice module that reads them is imported (a slice's ``settings.py`` and ``pools.py`` import only
pydantic, :mod:`syncd.budget.pools` and this module at run time).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from syncd.lazy import load

__all__ = ["SLICE_PACKAGES", "Section", "SliceSettings", "TtlField", "slice_module"]

SLICE_PACKAGES: tuple[str, ...] = (
    "syncd.crossref",
    "syncd.zenodo",
    "syncd.doiorg",
    "syncd.datacite",
    "syncd.retractions",
)
"""Every slice package, in the order of DESIGN.md's budget table (the order of pools, clients, checks).

Read once, when :mod:`syncd.config` and :mod:`syncd.registry` are first imported: a process composing
syncd of other slices (the toy slice's test, an embedding application) sets this before that, and
never after (the settings and tables already built would not follow)."""

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class TtlField:
    """One ``ttl.<name>`` lifetime a slice declares: its default (seconds) and description."""

    default_s: float
    description: str


@dataclass(frozen=True)
class Section(Generic[M]):
    """One settings table a slice adds: ``[name]`` in TOML, ``SYNCD_NAME__*`` in the environment.

    Declared once in the slice's ``settings.py`` (``SECTION = Section("crossref", CrossrefSettings)``);
    the slice reads its values with :meth:`of`.
    """

    name: str
    model: type[M]

    def of(self, settings: BaseModel) -> M:
        """The ``[name]`` table of ``settings``, typed as the slice's model.

        Raises:
            TypeError: ``settings`` holds no such table (settings composed without the slice).
        """
        value = getattr(settings, self.name, None)
        if not isinstance(value, self.model):
            raise TypeError(f"the settings hold no [{self.name}] section of {self.model.__name__}")
        return value


@dataclass(frozen=True)
class SliceSettings:
    """The settings one slice adds to :class:`~syncd.config.Settings` (TOML keys and ``SYNCD_*`` names).

    Attributes:
        sections: its top-level tables (:class:`Section`): ``Section("crossref", CrossrefSettings)`` is
            ``[crossref]`` and ``SYNCD_CROSSREF__*``.
        ttls: ``ttl.<name>`` lifetimes of the slice's kinds (``ttl.crossref_work``).
        watch: ``watch.<name>`` entries of the config file's watch lists, name -> ``(type, default
            factory, description)`` (``watch.zenodo_communities``: ``(list[str], list, "...")``).
        tool_set: the slice serves MCP tools: its package's last name is an ``mcp.slices`` choice
            (the architecture test holds it equal to its :class:`~syncd.slice.Slice` having tools).
    """

    sections: tuple[Section[Any], ...] = ()
    ttls: Mapping[str, TtlField] = field(default_factory=dict)
    watch: Mapping[str, tuple[Any, Callable[[], Any], str]] = field(default_factory=dict)
    tool_set: bool = False


def slice_module(importer: str, package: str, role: str) -> ModuleType | None:
    """The module ``<package>.<role>`` of a slice (``settings``, ``pools``, ``slice``), or None.

    ``importer``: the module asking (as :data:`syncd.lazy.LAZY` declares it: the settings read a
    slice's ``settings`` and ``pools``, the registry its ``slice``). None when the slice has no such
    module.

    Raises:
        ImportError: the module exists but cannot be imported.
        LookupError: :data:`syncd.lazy.LAZY` does not declare the module for ``importer``.
    """
    try:
        return load(importer, f"{package}.{role}")
    except ModuleNotFoundError as exc:
        if exc.name == f"{package}.{role}":
            return None
        raise
