"""MCP resources as syncd declares them: one :class:`ResourceSpec` per resource or URI template.

A spec is served by :mod:`syncd.server.app` (``resources/list``, ``resources/templates/list``,
``resources/read``); its ``read`` is called on a worker thread as ``read(deps)`` for a fixed URI,
``read(deps, **variables)`` for an RFC 6570 template (variables as
:class:`mcp.shared.uri_template.UriTemplate` extracts them). A ``read`` that raises
:class:`~syncd.errors.NotFound` makes the URI unknown (JSON-RPC -32602, as for a URI no spec
matches); any other :class:`~syncd.errors.SyncdError` is answered with its declared reason.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp.shared.uri_template import UriTemplate
from mcp.types import Resource, ResourceTemplate

__all__ = ["ResourceSpec"]


@dataclass(frozen=True)
class ResourceSpec:
    """One resource (``uri``) or resource template (``uri`` holding ``{...}`` expressions).

    Attributes:
        uri: the fixed URI, or the RFC 6570 template (``skill://{+path}``).
        name, title, description, mime_type: what ``resources/list`` (or ``templates/list``) shows.
        read: ``read(deps, **variables) -> str``, the text content of one read.
        subscribable: whether ``resources/subscribe`` accepts the URI (a fixed URI only).
    """

    uri: str
    name: str
    title: str
    description: str
    mime_type: str
    read: Callable[..., str]
    subscribable: bool = False
    template: UriTemplate | None = field(default=None, init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if UriTemplate.is_template(self.uri):
            object.__setattr__(self, "template", UriTemplate.parse(self.uri))

    def match(self, uri: str) -> dict[str, Any] | None:
        """The variables ``uri`` gives this spec's template (``{}`` for its fixed URI), None if no match."""
        if self.template is None:
            return {} if uri == self.uri else None
        return self.template.match(uri)

    def listed(self) -> Resource | ResourceTemplate:
        """The entry of ``resources/list`` (a fixed URI) or ``resources/templates/list`` (a template)."""
        if self.template is None:
            return Resource(
                uri=self.uri,
                name=self.name,
                title=self.title,
                description=self.description,
                mime_type=self.mime_type,
            )
        return ResourceTemplate(
            uri_template=self.uri,
            name=self.name,
            title=self.title,
            description=self.description,
            mime_type=self.mime_type,
        )
