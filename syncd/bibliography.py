r"""Reference lists read from a file: BibTeX, RIS, CSL-JSON or a plain list of DOIs.

``syncd check FILE`` reads one of these and resolves every DOI it names. Parsing is left to
well-kept libraries: `bibtexparser <https://pypi.org/project/bibtexparser/>`_ 2.x
(``bibtexparser.parse_string``; a block it cannot read is counted in :attr:`Bibliography.unparsed`,
the rest is kept) and `rispy <https://pypi.org/project/rispy/>`_ (``rispy.loads``); CSL-JSON is plain
JSON (a list of CSL items, or one item); a plain list is one DOI per line (its first word; blank
lines and ``#`` comments skipped, as ``syncd watch add doi --file`` reads them).

Where the DOI comes from, per format: BibTeX ``doi`` (any case), else a ``url`` that is a doi.org
URL; RIS ``DO``, else a doi.org ``UR``; CSL-JSON ``DOI``, else a doi.org ``URL``. An entry with none
has ``doi`` None. The DOI text is kept as written but for BibTeX's TeX escapes, which are decoded to
the DOI a reader of the typeset reference sees (dblp writes ``10.1145/3290605.3300\_233``,
``rw{\_}only``, ``{{10.1109/...}}``; :func:`tex_decoded`): it is parsed later, with the tools' DOI
parser, so a malformed one is reported, not dropped.

A RIS file whose last record lacks its closing ``ER  -`` tag (as hand-edited files and some exports
end) has that record read all the same.

The PubMed id (PMID), per format: BibTeX ``pmid``, else ``eprint`` when ``eprinttype`` is
``pubmed`` (biblatex); RIS ``PM``, else ``AN`` (accession number) when it is written ``PMID: n``, when
the record's database (``DB``/``DP``) is PubMed or MEDLINE, or when it is bare digits and no database
is named (another database's accession number is not a PMID); CSL-JSON ``PMID``. A PMID is digits
(``PMID:`` prefix dropped); anything else is None. ``syncd check`` matches it to the Retraction
Watch rows' ``OriginalPaperPubMedID``.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import bibtexparser
import rispy

from syncd.errors import InvalidInput

__all__ = [
    "FORMATS",
    "Bibliography",
    "Format",
    "Reference",
    "detect_format",
    "parse_pmid",
    "parse_text",
    "read_bibliography",
    "tex_decoded",
]

Format = Literal["bibtex", "ris", "csl-json", "dois"]
FORMATS: tuple[Format, ...] = ("bibtex", "ris", "csl-json", "dois")
"""The formats ``syncd check`` reads (``--format``)."""

_SUFFIXES: dict[str, Format] = {
    ".bib": "bibtex",
    ".bibtex": "bibtex",
    ".ris": "ris",
    ".json": "csl-json",
    ".csl": "csl-json",
    ".txt": "dois",
}
_DOI_URL = re.compile(r"^\s*(?:https?://)?(?:dx\.|www\.)?doi\.org/", re.IGNORECASE)
_BIBTEX_ENTRY = re.compile(r"^\s*@\s*[A-Za-z]+\s*[{(]", re.MULTILINE)
_RIS_TAG = re.compile(r"^TY  - ", re.MULTILINE)
_PMID = re.compile(r"^\s*(?:pmid\s*:?\s*)?(\d{1,9})\s*$", re.IGNORECASE)
_PMID_LABELLED = re.compile(r"^\s*pmid\s*:?\s*\d", re.IGNORECASE)
_PUBMED_DATABASES = ("pubmed", "medline", "nlm")
_TEX_UNDERSCORE = re.compile(r"\\(?:textunderscore|string_)(?:\{\}|\s)?")
_TEX_ESCAPED = re.compile(r"\\([_%&#$~{}])")
_RIS_END = re.compile(r"^ER  -", re.MULTILINE)


@dataclass(frozen=True)
class Reference:
    """One entry of a reference list.

    ``position`` is 1-based in file order; ``label`` the entry's own name (BibTeX key, CSL ``id``,
    RIS ``ID``; None when it has none); ``title`` as written; ``doi`` the DOI text as written (None:
    the entry names no DOI); ``pmid`` its PubMed id (digits; None: none named).
    """

    position: int
    label: str | None
    title: str | None
    doi: str | None
    pmid: str | None = None


@dataclass
class Bibliography:
    """A parsed reference list: its ``format``, its ``references``, and blocks it could not read."""

    format: Format
    references: list[Reference] = field(default_factory=list)
    unparsed: int = 0


def detect_format(path: str | Path, text: str) -> Format:
    """The format of ``text`` read from ``path``: by suffix, else by content.

    Content: a JSON array or object is CSL-JSON, an ``@type{`` line BibTeX, a ``TY  -`` line RIS,
    anything else a list of DOIs.
    """
    by_suffix = _SUFFIXES.get(Path(path).suffix.lower())
    if by_suffix is not None:
        return by_suffix
    head = text.lstrip()[:1]
    if head in ("[", "{"):
        return "csl-json"
    if _BIBTEX_ENTRY.search(text):
        return "bibtex"
    if _RIS_TAG.search(text):
        return "ris"
    return "dois"


def _doi_url(value: Any) -> str | None:
    """``value`` when it is a doi.org URL (the DOI parser unwraps it), else None."""
    if isinstance(value, str) and _DOI_URL.match(value):
        return value.strip()
    return None


def tex_decoded(value: str | None) -> str | None:
    r"""A BibTeX field holding an identifier (a DOI, a URL), its TeX escapes decoded; None stays None.

    ``\_``, ``{\_}``, ``\textunderscore{}``, ``\%``, ``\&``, ``\#`` become the character; the
    grouping braces (``{{10.1109/X}}``, ``rw{\_}only``) go. ``10.1145/3290605.3300\_233`` (as dblp
    writes it) is ``10.1145/3290605.3300_233``.
    """
    if value is None:
        return None
    text = _TEX_UNDERSCORE.sub("_", value)
    text = _TEX_ESCAPED.sub(lambda m: "\x00" + m.group(1), text)  # an escaped brace is kept below
    text = "".join(ch for i, ch in enumerate(text) if ch not in "{}" or (i and text[i - 1] == "\x00"))
    return text.replace("\x00", "").strip() or None


def _text(value: Any) -> str | None:
    if isinstance(value, list):
        value = value[0] if value else None
    if value is None:
        return None
    text = " ".join(str(value).split())
    return text or None


def parse_pmid(value: Any) -> str | None:
    """A PubMed id cell (``30500001``, ``PMID: 30500001``) as its digits; None for anything else or ``0``."""
    text = _text(value)
    m = _PMID.match(text) if text else None
    return m.group(1).lstrip("0") or None if m else None


def _bibtex_pmid(fields: dict[str, Any]) -> str | None:
    if fields.get("pmid") is not None:
        return parse_pmid(fields.get("pmid"))
    if (_text(fields.get("eprinttype")) or "").lower() == "pubmed":
        return parse_pmid(fields.get("eprint"))
    return None


def _ris_pmid(entry: dict[str, Any]) -> str | None:
    unknown = entry.get("unknown_tag") or {}
    if isinstance(unknown, dict) and unknown.get("PM"):
        return parse_pmid(unknown["PM"])
    accession = _text(entry.get("accession_number"))
    if not accession:
        return None
    database = " ".join(_text(entry.get(k)) or "" for k in ("name_of_database", "database_provider")).lower()
    if _PMID_LABELLED.match(accession) or any(d in database for d in _PUBMED_DATABASES):
        return parse_pmid(accession)
    if not database.strip() and accession.isdigit():  # a bare number, no other database named
        return parse_pmid(accession)
    return None


def _bibtex(text: str) -> Bibliography:
    logging.getLogger("bibtexparser").setLevel(logging.ERROR)  # a block it cannot read is counted instead
    library = bibtexparser.parse_string(text)
    out = Bibliography("bibtex", unparsed=len(library.failed_blocks))
    for n, entry in enumerate(library.entries, 1):
        fields = {k.lower(): v.value for k, v in entry.fields_dict.items()}
        doi = tex_decoded(_text(fields.get("doi"))) or _doi_url(tex_decoded(_text(fields.get("url"))))
        title = _text(fields.get("title"))
        out.references.append(
            Reference(
                n,
                entry.key,
                title.replace("{", "").replace("}", "") if title else None,
                doi,
                _bibtex_pmid(fields),
            )
        )
    return out


def _closed(text: str) -> str:
    """RIS ``text`` with an ``ER  -`` closing its last record when the file ends without one."""
    starts = [m.start() for m in _RIS_TAG.finditer(text)]
    ends = [m.start() for m in _RIS_END.finditer(text)]
    if starts and (not ends or ends[-1] < starts[-1]):
        return text.rstrip("\r\n") + "\nER  - \n"
    return text


def _ris(text: str) -> Bibliography:
    try:
        entries = rispy.loads(_closed(text))
    except Exception as exc:  # rispy raises plain IOError/ValueError subclasses on a broken file
        raise InvalidInput(f"cannot read the RIS file: {exc}", reason="invalid_parameter") from exc
    out = Bibliography("ris")
    for n, entry in enumerate(entries, 1):
        urls = entry.get("urls") or []
        doi = _text(entry.get("doi")) or next((u for u in map(_doi_url, urls) if u), None)
        title = _text(entry.get("title") or entry.get("primary_title"))
        out.references.append(Reference(n, _text(entry.get("id")), title, doi, _ris_pmid(entry)))
    return out


def _csl_json(text: str) -> Bibliography:
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"not CSL-JSON: {exc}", reason="invalid_parameter") from exc
    items = [data] if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InvalidInput("CSL-JSON is a list of items (or one item)", reason="invalid_parameter")
    out = Bibliography("csl-json")
    for n, item in enumerate(items, 1):
        if not isinstance(item, dict):
            out.unparsed += 1
            continue
        doi = _text(item.get("DOI") or item.get("doi")) or _doi_url(item.get("URL"))
        pmid = parse_pmid(item.get("PMID") or item.get("pmid"))
        out.references.append(Reference(n, _text(item.get("id")), _text(item.get("title")), doi, pmid))
    return out


def _dois(text: str) -> Bibliography:
    out = Bibliography("dois")
    for line in text.splitlines():
        words = line.split("#", 1)[0].split()
        if words:
            out.references.append(Reference(len(out.references) + 1, None, None, words[0]))
    return out


def parse_text(text: str, fmt: Format) -> Bibliography:
    """The references of ``text`` in format ``fmt``.

    Raises:
        InvalidInput: a CSL-JSON or RIS file that cannot be read at all (reason ``invalid_parameter``).
    """
    if fmt == "bibtex":
        return _bibtex(text)
    if fmt == "ris":
        return _ris(text)
    if fmt == "csl-json":
        return _csl_json(text)
    return _dois(text)


def read_bibliography(path: str | Path, fmt: Format | None = None) -> Bibliography:
    """Read and parse the reference list at ``path`` (``fmt`` None: :func:`detect_format`).

    Raises:
        InvalidInput: the file cannot be read, is not UTF-8, is unreadable as its format, or holds
            text of which not one reference could be read (e.g. a CSL-JSON file read as RIS).
    """
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {exc}", reason="invalid_parameter") from exc
    fmt = fmt or detect_format(path, text)
    bib = parse_text(text, fmt)
    if not bib.references and text.strip():
        raise InvalidInput(
            f"{path}: not one reference could be read as {fmt}; is it another format "
            "(--format bibtex, ris, csl-json or dois)?",
            reason="invalid_parameter",
        )
    return bib
