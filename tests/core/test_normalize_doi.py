"""DOI input parsing: real-user-cases conventions 1-2 and cases BC-01, BC-03, BC-04, BC-05, BC-07, BC-08."""

from __future__ import annotations

import json
import urllib.parse

import pytest

from syncd.errors import InvalidInput
from syncd.normalize.doi import ParsedDOI, doi_path_segment, is_zenodo_doi, parse_doi
from tests.corpus_path import CORPUS

WORKS = sorted(
    p for p in (CORPUS / "crossref" / "work").glob("*.json") if not p.name.endswith(".headers.json")
)


def _corpus_dois() -> list[str]:
    return [json.loads(p.read_text(encoding="utf-8"))["message"]["DOI"] for p in WORKS]


# --- BC-01: SICI DOIs --------------------------------------------------------------------------------

SICI = "10.1175/1520-0477(1996)077<0935:WOTWSM>2.0.CO;2"
SICI_KEY = "10.1175/1520-0477(1996)077<0935:wotwsm>2.0.co;2"
SICI_TARGET = "10.1175/1520-0477%281996%29077%3C0935%3AWOTWSM%3E2.0.CO%3B2"


def test_sici_doi_keeps_every_character_and_encodes_the_path() -> None:
    """BC-01: a raw SICI DOI keeps ``< > ; ( ) :`` in its key and goes out with ``%3C %3E %3B``."""
    parsed = parse_doi(SICI)
    assert parsed == ParsedDOI(doi=SICI, key=SICI_KEY, input_form="bare")
    assert doi_path_segment(parsed.doi) == SICI_TARGET


def test_fully_encoded_bare_doi_is_decoded_once() -> None:
    """BC-01/convention 1: ``10.1175%2F...`` (no literal ``/``) decodes once to the same key."""
    parsed = parse_doi(SICI_TARGET.replace("/", "%2F", 1))
    assert parsed.key == SICI_KEY
    assert parsed.doi == SICI
    assert parsed.input_form == "percent_encoded"


def test_raw_encoded_and_mixed_case_forms_share_one_key() -> None:
    """BC-01/BC-05: raw, encoded URL, lower-case and ``doi:`` forms all land on one cache key."""
    forms = [
        SICI,
        SICI.lower(),
        "https://doi.org/" + SICI_TARGET,
        "http://dx.doi.org/" + SICI,
        "doi:" + SICI,
        SICI_TARGET.replace("/", "%2F", 1),
    ]
    assert {parse_doi(f).key for f in forms} == {SICI_KEY}


def test_square_bracket_doi_goes_out_with_5b_5d() -> None:
    """BC-01: the ESA bracket DOI keeps ``[ ]`` in the key and is sent as ``%5B``/``%5D``."""
    parsed = parse_doi("10.1890/0012-9615(1999)069[0569:EDILSA]2.0.CO;2")
    assert parsed.key == "10.1890/0012-9615(1999)069[0569:edilsa]2.0.co;2"
    assert doi_path_segment(parsed.doi) == "10.1890/0012-9615%281999%29069%5B0569%3AEDILSA%5D2.0.CO%3B2"


def test_every_corpus_doi_round_trips_to_its_crossref_key() -> None:
    """Crossref's own ``message.DOI`` of every recorded work (incl. ``10.1890/...[2832:tiopma]2.0.co;2``
    and ``10.1111/(issn)1442-9993``) parses to itself, also upper-cased and as an encoded doi.org URL.
    """
    dois = _corpus_dois()
    assert "10.1890/0012-9658(2006)87[2832:tiopma]2.0.co;2" in dois
    for doi in dois:
        assert parse_doi(doi).key == doi
        assert parse_doi(doi.upper()).key == doi
        assert parse_doi("https://doi.org/" + doi_path_segment(doi)).key == doi


# --- BC-03: no truncation at '<', sentence punctuation -----------------------------------------------


def test_sici_doi_is_not_truncated_at_angle_bracket() -> None:
    """BC-03: the whole argument is the DOI; nothing after ``<`` is cut off."""
    parsed = parse_doi("10.1002/(SICI)1096-9861(19960129)365:1<113::AID-CNE9>3.0.CO;2-6")
    assert parsed.key == "10.1002/(sici)1096-9861(19960129)365:1<113::aid-cne9>3.0.co;2-6"
    assert doi_path_segment(parsed.doi).endswith("365%3A1%3C113%3A%3AAID-CNE9%3E3.0.CO%3B2-6")


def test_one_trailing_sentence_period_is_stripped() -> None:
    """BC-03: ``...3.0.co;2-z.`` (sentence period) gives the key ending ``3.0.co;2-z``."""
    parsed = parse_doi("10.1002/(sici)1096-9861(19971020)387:2<167::aid-cne1>3.0.co;2-z.")
    assert parsed.key == "10.1002/(sici)1096-9861(19971020)387:2<167::aid-cne1>3.0.co;2-z"
    assert parse_doi("10.1002/(sici)1097-0258(19970515)16:9<981::aid-sim510>3.0.co;2-n,").key.endswith(
        "3.0.co;2-n"
    )


# --- BC-04: over- and under-trimming ------------------------------------------------------------------


def test_balanced_closing_parenthesis_belongs_to_the_doi() -> None:
    """BC-04: ``10.3319/TAO.2009.05.25.02(IWNOP)`` keeps its ``)``; target ``...02%28IWNOP%29``."""
    parsed = parse_doi("10.3319/TAO.2009.05.25.02(IWNOP)")
    assert parsed.key == "10.3319/tao.2009.05.25.02(iwnop)"
    assert doi_path_segment(parsed.doi) == "10.3319/TAO.2009.05.25.02%28IWNOP%29"


def test_unbalanced_trailing_closer_is_stripped() -> None:
    """BC-04: a ``)`` or ``]`` that closes nothing in the suffix (prose wrapping) is dropped, once."""
    assert parse_doi("10.1016/S0099-1333(02)00284-7)").key == "10.1016/s0099-1333(02)00284-7"
    assert parse_doi("10.3319/TAO.2009.05.25.02(IWNOP)).").key == "10.3319/tao.2009.05.25.02(iwnop)"
    assert parse_doi("10.1093/analys/anw053]").key == "10.1093/analys/anw053"


def test_doi_org_url_path_is_the_whole_doi() -> None:
    """BC-04: in a doi.org URL every path segment is DOI (``/anw053`` kept); the query is dropped."""
    assert parse_doi("https://doi.org/10.1093/analys/anw053").key == "10.1093/analys/anw053"
    assert parse_doi("https://doi.org/10.1093/analys/anw053?via=ihub").key == "10.1093/analys/anw053"
    assert parse_doi("https://doi.org/10.1093/analys/anw053").input_form == "url"


def test_encoded_doi_org_url_is_decoded_exactly_once() -> None:
    """BC-04: the Scholia URL decodes to the SICI key; ``%253C`` decodes to ``%3C``, not ``<``."""
    parsed = parse_doi("https://doi.org/10.1002/1097-0142(195103)4:2%3C387::AID-CNCR2820040229%3E3.0.CO;2-Y")
    assert parsed.key == "10.1002/1097-0142(195103)4:2<387::aid-cncr2820040229>3.0.co;2-y"
    assert parse_doi("https://doi.org/10.1002/x%253Cy").doi == "10.1002/x%3Cy"


@pytest.mark.parametrize(
    "url",
    [
        "http://onlinelibrary.wiley.com/doi/10.1111/nous.12244/abstract",
        "https://www.frontiersin.org/articles/10.3389/fgene.2017.00147/full",
    ],
)
def test_publisher_urls_are_refused(url: str) -> None:
    """BC-04: a publisher landing page is not a DOI; it is refused before any request."""
    with pytest.raises(InvalidInput) as err:
        parse_doi(url)
    assert err.value.reason == "invalid_parameter"
    assert "publisher" in err.value.message


# --- BC-05: case ---------------------------------------------------------------------------------------


def test_key_lowercases_ascii_only_and_doi_keeps_case() -> None:
    """BC-05: ``f7txY`` and ``f7txy`` share a key; the DOI sent upstream keeps the caller's case."""
    upper, lower = parse_doi("10.31219/osf.io/f7txY"), parse_doi("10.31219/osf.io/f7txy")
    assert upper.key == lower.key == "10.31219/osf.io/f7txy"
    assert upper.doi == "10.31219/osf.io/f7txY"
    assert parse_doi("10.1016/S0099-1333(02)00284-7").key == "10.1016/s0099-1333(02)00284-7"


def test_non_ascii_letters_are_not_lowercased_but_are_nfc() -> None:
    """Convention 1: only ASCII letters fold; ``Ä`` stays, and a decomposed ``A+U+0308`` becomes ``Ä``."""
    assert parse_doi("10.1000/ÄBC").key == "10.1000/Äbc"
    assert parse_doi("10.1000/A\u0308BC").key == "10.1000/Äbc"


# --- wrappers and invisible characters --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "form"),
    [
        ("10.1038/nature12373", "bare"),
        ("doi:10.1038/nature12373", "doi_prefix"),
        ("DOI: 10.1038/nature12373", "doi_prefix"),
        ("DOI 10.1038/nature12373", "doi_prefix"),
        ("info:doi/10.1038/nature12373", "doi_prefix"),
        ("https://doi.org/10.1038/nature12373", "url"),
        ("http://dx.doi.org/10.1038/nature12373", "url"),
        ("https://www.doi.org/10.1038/nature12373", "url"),
        ("\u200b 10.1038/nature12373\ufeff\u00a0", "bare"),
    ],
)
def test_wrappers_and_invisible_characters_are_stripped(raw: str, form: str) -> None:
    """Convention 1: every accepted wrapper and invisible character yields the bare DOI."""
    parsed = parse_doi(raw)
    assert parsed.doi == "10.1038/nature12373"
    assert parsed.input_form == form


def test_hash_and_semicolon_are_kept_and_encoded() -> None:
    """Convention 2: ``#`` is part of a bare DOI and goes out as ``%23``; ``/`` stays literal."""
    parsed = parse_doi("10.1000/a#b;c")
    assert parsed.key == "10.1000/a#b;c"
    assert doi_path_segment(parsed.doi) == "10.1000/a%23b%3Bc"


# --- BC-07: non-DOIs are refused before any request -----------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "THISISNOTAREALDOI",
        "",
        "   ",
        "10.123/abc",
        "10.1038/",
        "10.1038/nature 12373",
        "11.1038/nature12373",
        "10.١٢٣٤/abc",
        "https://doi.org/10.1000/a%00b",
        "10.1000/" + "x" * 1000,
    ],
)
def test_non_dois_are_refused_with_invalid_parameter(raw: str) -> None:
    r"""BC-07: input that is not ``^10\.[0-9]{4,9}/\S+$`` after cleaning (or is over 1000 chars, or
    carries a control character) raises ``InvalidInput(reason="invalid_parameter")``.
    """
    with pytest.raises(InvalidInput) as err:
        parse_doi(raw)
    assert err.value.reason == "invalid_parameter"
    assert "Not a DOI" in err.value.message


def test_non_string_input_is_refused() -> None:
    """A non-string argument (``None``, a number) is refused the same way, never a TypeError."""
    for raw in (None, 10.1038):
        with pytest.raises(InvalidInput):
            parse_doi(raw)  # type: ignore[arg-type]


# --- BC-08: Zenodo DOIs ----------------------------------------------------------------------------------


def test_zenodo_doi_yields_its_record_id() -> None:
    """BC-08: ``10.5281/zenodo.13225792`` (any case, any wrapper) short-circuits to record 13225792."""
    assert is_zenodo_doi(parse_doi("10.5281/zenodo.13225792").key) == "13225792"
    assert is_zenodo_doi(parse_doi("https://doi.org/10.5281/ZENODO.13225792").key) == "13225792"


def test_other_agencies_and_near_misses_are_not_zenodo() -> None:
    """BC-08: the mEDRA DOI and non-numeric Zenodo-like suffixes are not Zenodo record DOIs."""
    assert is_zenodo_doi(parse_doi("10.4435/BSPI.2012.23").key) is None
    assert is_zenodo_doi("10.5281/zenodo.abc") is None
    assert is_zenodo_doi("10.5281/zenodo.123/files") is None


def test_path_segment_is_urllib_quote_with_slash_safe() -> None:
    """Convention 2: the path segment equals ``urllib.parse.quote(doi, safe="/")`` for every corpus DOI."""
    for doi in _corpus_dois():
        assert doi_path_segment(doi) == urllib.parse.quote(doi, safe="/")
        assert urllib.parse.unquote(doi_path_segment(doi)) == doi
