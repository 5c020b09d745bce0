"""How each client identifies itself (the daemon's start-up line): declared by its slice, masked."""

from __future__ import annotations

from pydantic import SecretStr

from syncd.config import Settings
from syncd.registry import IDENTITIES


def _identities(**values: object) -> list[tuple[str, str, str | None]]:
    settings = Settings(database_url="sqlite:///unused.db", **values)  # type: ignore[arg-type]
    return [(i.client, i.how, i.hint) for i in (identify(settings) for identify in IDENTITIES)]


def test_each_client_says_how_it_identifies_itself_masked() -> None:
    """With crossref.mailto and a Zenodo token: Crossref and DataCite (falling back to Crossref's
    address) send ``mailto:c***@example.org``, Zenodo a token (never shown); no hint.
    """
    assert _identities(crossref={"mailto": "ci@example.org"}, zenodo={"token": SecretStr("zt-secret")}) == [
        ("crossref", "mailto:c***@example.org", None),
        ("zenodo", "token", None),
        ("datacite", "mailto:c***@example.org", None),
    ]


def test_an_anonymous_client_carries_the_hint_of_what_to_set() -> None:
    """Nothing set: Crossref and DataCite go anonymous, each with the setting that raises its limits;
    Zenodo is a guest; DataCite's own mailto is used when only it is set.
    """
    none = _identities()
    assert [(c, how) for c, how, _ in none] == [
        ("crossref", "anonymous"),
        ("zenodo", "guest"),
        ("datacite", "anonymous"),
    ]
    hints = {c: hint for c, _, hint in none}
    assert hints["crossref"] == "set crossref.mailto to use the polite pool (higher limits)"
    assert (
        hints["datacite"] is not None and "datacite.mailto" in hints["datacite"] and hints["zenodo"] is None
    )
    assert _identities(datacite={"mailto": "data@lab.example"})[2] == (
        "datacite",
        "mailto:d***@lab.example",
        None,
    )
