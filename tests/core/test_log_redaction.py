"""The log redaction takes its secrets and addresses from what the settings' fields are (no section names)."""

from __future__ import annotations

import io
import logging

from pydantic import SecretStr

from syncd.config import Settings
from syncd.logsetup import secrets_of, setup_logging

ZENODO_TOKEN = "zt-0123456789abcdef"
BEARER = "endpoint-bearer-4242"


def _settings() -> Settings:
    return Settings(
        database_url="sqlite:///unused.db",
        crossref={"mailto": "ci@example.org"},
        datacite={"mailto": "data@lab.example"},
        zenodo={"token": ZENODO_TOKEN},
        http={"token": BEARER},
    )


def test_every_secret_and_mailto_of_the_settings_is_found() -> None:
    """Both SecretStr values (the Zenodo token, the endpoint's bearer token) are secrets and both
    mailto addresses (Crossref's, DataCite's) are addresses; unset ones add nothing.
    """
    secrets, emails = secrets_of(_settings())
    assert sorted(secrets) == sorted([ZENODO_TOKEN, BEARER])
    assert sorted(emails) == ["ci@example.org", "data@lab.example"]
    assert secrets_of(Settings(database_url="sqlite:///unused.db")) == ([], [])
    assert isinstance(_settings().zenodo.token, SecretStr)


def test_log_lines_mask_the_datacite_mailto_and_the_bearer_token() -> None:
    """A line holding the DataCite contact and the bearer token shows ``d***@lab.example`` and ``***``
    (before, only the Crossref mailto and the Zenodo token were known to the filter).
    """
    buf = io.StringIO()
    handler = setup_logging("INFO", _settings(), stream=buf)
    try:
        logging.getLogger("syncd.test").info("event=x contact=%s auth=%s", "data@lab.example", BEARER)
    finally:
        logging.getLogger().removeHandler(handler)
    line = buf.getvalue().strip().split(" ", 1)[1]
    assert line == "INFO syncd.test event=x contact=d***@lab.example auth=***"
