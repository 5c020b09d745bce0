"""Identifiers a watch names, checked before anything is stored: ORCID iD, ISSN, ROR id, DOI, member.

Pure functions, each returning the canonical form or raising :class:`~syncd.errors.InvalidInput`
(reason ``invalid_identifier``) with a message that says what is wrong (the check digit that was
expected, the shape that was not met):

* ORCID iD (``0000-0002-1825-0097``, bare or an ``orcid.org`` URL): ISO 7064 MOD 11-2 check character.
* ISSN (``1932-6203``): ISO 3297 check digit (:func:`syncd.normalize.issn.issn_key`).
* ROR id (``02mhbdp94``, bare or a ``ror.org`` URL): ``0`` + 6 Crockford base32 characters + a
  2-digit ISO 7064 MOD 97-10 checksum.
* DOI: :func:`syncd.normalize.doi.parse_doi` (its key, ASCII-lowercased).
* Crossref member id: a positive integer.
"""

from __future__ import annotations

import re

from syncd.errors import InvalidInput, SyncdError
from syncd.normalize.doi import parse_doi
from syncd.normalize.issn import issn_key

__all__ = [
    "check_doi",
    "check_issn",
    "check_member",
    "check_orcid",
    "check_ror",
    "orcid_check_char",
    "ror_checksum",
]

REASON = "invalid_identifier"
_ORCID = re.compile(r"^\d{4}-\d{4}-\d{4}-\d{3}[\dX]$")
_ORCID_URL = re.compile(r"^(?:https?://)?(?:www\.)?orcid\.org/", re.IGNORECASE)
_ROR = re.compile(r"^0[0-9a-hjkmnp-tv-z]{6}\d{2}$")
_ROR_URL = re.compile(r"^(?:https?://)?(?:www\.)?ror\.org/", re.IGNORECASE)
_CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz"


def _bad(message: str, hint: str) -> InvalidInput:
    return InvalidInput(message, reason=REASON, hint=hint)


def orcid_check_char(first_fifteen: str) -> str:
    """The ORCID check character of 15 digits (ISO 7064 MOD 11-2; 10 is ``X``)."""
    total = 0
    for ch in first_fifteen:
        total = (total + int(ch)) * 2
    check = (12 - total % 11) % 11
    return "X" if check == 10 else str(check)


def check_orcid(value: str) -> str:
    """``0000-0002-1825-0097`` from a bare iD or an orcid.org URL, its check character verified.

    Raises:
        InvalidInput: ``invalid_identifier``: not 16 digits in groups of four, or a wrong check character.
    """
    v = _ORCID_URL.sub("", value.strip()).strip("/").upper()
    if not _ORCID.match(v):
        raise _bad(
            f"{value!r} is not an ORCID iD (NNNN-NNNN-NNNN-NNNX)", "Pass an iD such as 0000-0002-1825-0097."
        )
    digits = v.replace("-", "")
    expected = orcid_check_char(digits[:15])
    if digits[15] != expected:
        raise _bad(
            f"{value!r} is not a valid ORCID iD: its check character should be {expected}",
            "Check the iD for a typo; the last character is a check digit over the first fifteen.",
        )
    return v


def check_issn(value: str) -> str:
    """``1932-6203``, its check digit verified.

    Raises:
        InvalidInput: ``invalid_identifier``: not ``NNNN-NNNX``, or a wrong check digit.
    """
    try:
        return issn_key(value)
    except SyncdError as exc:
        raise _bad(exc.message, exc.hint or "Pass an ISSN such as 1932-6203.") from None


def ror_checksum(first_seven: str) -> str:
    """The two checksum digits of a ROR id's first 7 characters (ISO 7064 MOD 97-10 of their base32 value)."""
    number = 0
    for ch in first_seven:
        number = number * 32 + _CROCKFORD.index(ch)
    return f"{98 - (number * 100) % 97:02d}"


def check_ror(value: str) -> str:
    """``02mhbdp94`` from a bare ROR id or a ror.org URL, its checksum verified.

    Raises:
        InvalidInput: ``invalid_identifier``: not ``0`` + 6 base32 characters + 2 digits, or a wrong checksum.
    """
    v = _ROR_URL.sub("", value.strip()).strip("/").lower()
    if not _ROR.match(v):
        raise _bad(
            f"{value!r} is not a ROR id (0 + 6 letters or digits + 2 digits)", "Pass an id such as 02mhbdp94."
        )
    expected = ror_checksum(v[:7])
    if v[7:] != expected:
        raise _bad(
            f"{value!r} is not a valid ROR id: its checksum should be {expected}",
            "Check the id for a typo; its last two digits are a checksum over the rest.",
        )
    return v


def check_doi(value: str) -> str:
    """The DOI's key (ASCII-lowercased), as :func:`syncd.normalize.doi.parse_doi` reads it.

    Raises:
        InvalidInput: ``invalid_identifier``: not a DOI (the parser's reason in the message).
    """
    try:
        return parse_doi(value).key
    except SyncdError as exc:
        raise _bad(exc.message, "A DOI starts with 10. and has a / (e.g. 10.1101/598821).") from None


def check_member(value: str) -> str:
    """A Crossref member id (digits).

    Raises:
        InvalidInput: ``invalid_identifier``: not a positive integer.
    """
    v = value.strip()
    if not v.isdigit() or int(v) == 0:
        raise _bad(f"{value!r} is not a Crossref member id (a number)", "Pass a member id such as 78.")
    return str(int(v))
