"""ISSN (ISO 3297): its form and check digit, and the canonical ``NNNN-NNNX`` key (pure)."""

from __future__ import annotations

import re

from syncd.errors import InvalidInput

__all__ = ["CHECK_DIGIT_HINT", "ISSN_RE", "issn_check_digit", "issn_key"]

ISSN_RE = re.compile(r"^\d{4}-?\d{3}[\dX]$", re.IGNORECASE)
"""An ISSN as written: eight characters, the hyphen optional, the check character ``X`` in any case."""

CHECK_DIGIT_HINT = "Check the ISSN for a typo; the last character is a check digit over the first seven."
"""The hint of a refusal for a wrong check digit."""


def issn_check_digit(first_seven: str) -> str:
    """The ISSN check character of seven digits (ISO 3297: weights 8..2, modulus 11; 10 is ``X``).

    ``issn_check_digit("1932620")`` is ``"3"`` (PLOS ONE, 1932-6203).
    """
    total = sum(int(d) * w for d, w in zip(first_seven, range(8, 1, -1), strict=True))
    check = (11 - total % 11) % 11
    return "X" if check == 10 else str(check)


def issn_key(value: str) -> str:
    """Canonical ISSN ``NNNN-NNNX`` (upper-case X), its check digit verified.

    Raises:
        InvalidInput: ``invalid_parameter`` when ``value`` is not an ISSN, or its check digit is wrong
            (a mistyped ISSN; refused before any request).
    """
    v = value.strip()
    if not ISSN_RE.match(v):
        raise InvalidInput(
            f"{value!r} is not an ISSN (NNNN-NNNX)",
            reason="invalid_parameter",
            hint="Pass an ISSN such as 1932-6203.",
        )
    v = v.replace("-", "").upper()
    expected = issn_check_digit(v[:7])
    if v[7] != expected:
        raise InvalidInput(
            f"{value!r} is not a valid ISSN: its check digit should be {expected}",
            reason="invalid_parameter",
            hint=CHECK_DIGIT_HINT,
            expectedCheckDigit=expected,
        )
    return f"{v[:4]}-{v[4:]}"
