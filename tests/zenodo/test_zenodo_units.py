"""Pure pieces of the Zenodo tools: preview decoding, cursor checks, kept-preview LRU, q composition."""

from __future__ import annotations

import pytest

from syncd.errors import InvalidInput
from syncd.store.blobs import blob_usage, get_blob, put_blob
from syncd.store.repo import Store
from syncd.zenodo.params_cursor import CursorState, decode_cursor, encode_cursor
from syncd.zenodo.views_citation import resolve_style
from syncd.zenodo.views_lists import decode_excerpt, expand_date, preview_mode, sniff_is_text


def test_excerpt_cut_after_last_newline_and_bom_dropped() -> None:
    """More to come: cut after the last LF; a BOM at offset 0 is dropped but its bytes are counted."""
    text, kept, bad = decode_excerpt(b"\xef\xbb\xbfa,b\r\nc,d\r\ne,", 0, more=True)
    assert (text, kept, bad) == ("a,b\r\nc,d\r\n", 13, 0)


def test_excerpt_cut_at_complete_utf8_and_nul_is_binary() -> None:
    """Without a LF, a split multi-byte character is left for the next excerpt; a NUL means not text."""
    text, kept, _ = decode_excerpt("naïve é".encode()[:-1], 0, more=True)
    assert (text, kept) == ("naïve ", 7)
    assert decode_excerpt(b"ab\x00cd", 0, more=False) == (None, 0, 0)
    assert decode_excerpt(b"\xff ok", 4, more=False) == ("\ufffd ok", 4, 1)


def test_preview_modes() -> None:
    """Text by MIME or extension, sniff for extensionless octet-stream, else binary."""
    assert preview_mode("data.csv", None) == "text"
    assert preview_mode("x.bin", "application/json") == "text"
    assert preview_mode("LICENSE", "application/octet-stream") == "sniff"
    assert preview_mode("shape.tif", "image/tiff") == "binary"
    assert sniff_is_text(b"MIT License\n") and not sniff_is_text(b"\xff\xfe\x00")


def test_tampered_cursor_is_refused() -> None:
    """A cursor whose payload was edited fails its checksum: invalid_cursor."""
    good = encode_cursor(CursorState("7391177", "abcd", "description", None, 4000))
    assert decode_cursor(good).offset == 4000
    import base64

    raw = base64.urlsafe_b64decode(good + "=" * (-len(good) % 4)).replace(b"4000", b"9000")
    forged = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    with pytest.raises(InvalidInput) as err:
        decode_cursor(forged)
    assert err.value.reason == "invalid_cursor"


def test_style_names_fold_loosely() -> None:
    """Case, spaces, hyphens and underscores are ignored; aliases map to the canonical style."""
    assert resolve_style("BibTeX") == "bibtex"
    assert resolve_style("CSL JSON") == "csl-json"
    assert resolve_style("Modern_Language-Association") == "modern-language-association"
    assert resolve_style("MLA") == "modern-language-association"


def test_partial_dates_expand() -> None:
    """from: first day, to: last day (leap years too); impossible dates refused."""
    assert expand_date("2024-02", end=True, name="to") == "2024-02-29"
    assert expand_date("2021", end=False, name="from") == "2021-01-01"
    with pytest.raises(InvalidInput):
        expand_date("2021-02-30", end=False, name="from")


def test_kept_previews_lru_eviction(store: Store) -> None:
    """Under a 1,000-byte total, the least recently read preview goes first."""
    put_blob(store, "zenodo_preview", "a", b"a" * 400, "text/csv", 1000, now=1.0)
    put_blob(store, "zenodo_preview", "b", b"b" * 400, "text/csv", 1000, now=2.0)
    assert get_blob(store, "zenodo_preview", "a", now=3.0) is not None  # a is now the most recent
    evicted = put_blob(store, "zenodo_preview", "c", b"c" * 400, "text/csv", 1000, now=4.0)
    assert evicted == 1
    assert get_blob(store, "zenodo_preview", "b") is None
    assert blob_usage(store, "zenodo_preview") == (2, 800)
    assert put_blob(store, "zenodo_preview", "huge", b"x" * 2000, None, 1000) == 0
    assert get_blob(store, "zenodo_preview", "huge") is None


def test_search_facets_from_rdm_and_legacy_aggregations() -> None:
    """Facets come from Zenodo's aggregations in both shapes, capped as the anchor (10 types x 5 subtypes)."""
    from syncd.zenodo.views_lists import search_facets
    from tests.conftest import corpus_json

    rdm = search_facets(corpus_json("zenodo/search/records_q-climate_size-2_sort-bestmatch_new-api.json"))
    assert rdm is not None
    assert rdm.resource_type[0].id == "publication" and rdm.resource_type[0].count == 68559
    assert rdm.resource_type[0].subtypes is not None and len(rdm.resource_type[0].subtypes) == 5
    assert rdm.resource_type[0].subtypes[0].label == "Journal article"
    assert [b.id for b in rdm.access_status] == ["open", "restricted", "embargoed"]
    assert rdm.file_type[0].id == "pdf" and len(rdm.file_type) <= 10
    assert rdm.subject[0].label == "Biodiversity"
    years = [y.year for y in rdm.publication_year]
    assert years == sorted(years, reverse=True) and len(years) <= 10
    legacy = search_facets(corpus_json("zenodo/search/records_title_size-2_page-1.json"))
    assert legacy is not None and legacy.access_status
