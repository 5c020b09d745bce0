"""Logging for the daemon and the CLI: one journald-friendly line per event, secrets redacted.

Lines look like ``2026-12-01T04:37:12.345Z INFO syncd.passes.sync event=sync watch=3 requests=2 ...`` (the
time in UTC, ISO 8601 with milliseconds, level, logger, then the message, which by convention is
``event=<name>`` followed by ``key=value`` pairs). When stderr is connected to the journal
(``$JOURNAL_STREAM`` names stderr's device and inode, as systemd sets it), each line starts with the
syslog priority prefix (``<6>`` for INFO, ...) instead of a time, so ``journalctl -p warning``
filters by level; the journal adds its own timestamps.

Redaction (:class:`RedactingFilter`), applied to every record: every secret of the settings (each
``SecretStr``: the Zenodo token, the endpoint's bearer token), wherever it appears, becomes ``***``;
``access_token=...`` and ``Authorization: Bearer ...`` values likewise; every ``mailto`` address
(Crossref's, DataCite's) is shown only partly (``c***@example.org``). The same redaction applies to the log
events sent to MCP clients (:func:`redact`, used by :mod:`syncd.server.notify`).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import time
from typing import IO, Any

from pydantic import BaseModel, SecretStr

__all__ = ["MAILTO_FIELD", "RedactingFilter", "mask_email", "redact", "secrets_of", "setup_logging"]

_PRIORITY = {logging.DEBUG: 7, logging.INFO: 6, logging.WARNING: 4, logging.ERROR: 3, logging.CRITICAL: 2}
_PATTERNS = (
    (re.compile(r"(access_token=)[^&\s'\"]+", re.IGNORECASE), r"\1***"),
    (re.compile(r"(Bearer\s+)[A-Za-z0-9._~+/=-]+", re.IGNORECASE), r"\1***"),
    (re.compile(r"(token=)[^&\s'\"]+", re.IGNORECASE), r"\1***"),
)


def mask_email(addr: str | None) -> str:
    """``ci@example.org`` -> ``c***@example.org``; None -> ``-``."""
    if not addr:
        return "-"
    local, at, domain = addr.partition("@")
    if not at:
        return addr[:1] + "***"
    return f"{local[:1]}***@{domain}"


class RedactingFilter(logging.Filter):
    """Rewrite each record's message with secrets removed (see the module docstring)."""

    def __init__(self, secrets: list[str] | None = None, emails: list[str] | None = None) -> None:
        super().__init__()
        self.secrets = [s for s in (secrets or []) if s]
        self.emails = [e for e in (emails or []) if e]

    def redact(self, text: str) -> str:
        """``text`` with every known secret and secret-looking value masked."""
        for secret in self.secrets:
            text = text.replace(secret, "***")
        for email in self.emails:
            text = text.replace(email, mask_email(email))
        for pattern, repl in _PATTERNS:
            text = pattern.sub(repl, text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        """Freeze the formatted message, redacted (always keeps the record)."""
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: log it as is rather than lose the line
            message = str(record.msg)
        record.msg = self.redact(message)
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = self.redact(logging.Formatter().formatException(record.exc_info))
        return True


_ACTIVE = RedactingFilter()
"""The filter of the handler :func:`setup_logging` installed last (the patterns alone before that)."""


def redact(record: logging.LogRecord) -> str:
    """The message of ``record`` as the stderr line shows it: formatted, secrets masked.

    For other destinations of syncd's log events (``notifications/message`` to MCP clients that
    asked with ``logging/setLevel``); the record itself is not modified.
    """
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: send it as is rather than lose the event
        message = str(record.msg)
    return _ACTIVE.redact(message)


class _Formatter(logging.Formatter):
    """``<time> LEVEL logger message``; on the journal ``<priority>LEVEL logger message`` (no time)."""

    def __init__(self, journal: bool) -> None:
        super().__init__(
            "%(levelname)s %(name)s %(message)s"
            if journal
            else "%(asctime)s %(levelname)s %(name)s %(message)s"
        )
        self.journal = journal

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        """The record's time in UTC: ``2026-12-01T04:37:12.345Z``."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        return f"{stamp}.{int(record.msecs):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        if self.journal:
            prio = _PRIORITY.get(record.levelno, 6)
            return "\n".join(f"<{prio}>{part}" for part in line.splitlines())
        return line


def _on_journal(stream: IO[str]) -> bool:
    value = os.environ.get("JOURNAL_STREAM")
    if not value or ":" not in value:
        return False
    try:
        st = os.fstat(stream.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    dev, _, ino = value.partition(":")
    return f"{st.st_dev}" == dev and f"{st.st_ino}" == ino


MAILTO_FIELD = "mailto"
"""The settings field name of a contact address an upstream is sent (masked in logs, never secret)."""


def secrets_of(settings: BaseModel) -> tuple[list[str], list[str]]:
    """``(secrets, emails)`` the settings hold, found by what their fields are, not by section name.

    Every :class:`~pydantic.SecretStr` value set anywhere in ``settings`` (tokens: each is declared
    secret by its type) and every :data:`MAILTO_FIELD` address, walking nested settings models.
    """
    secrets: list[str] = []
    emails: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if isinstance(value, SecretStr):
            secrets.append(value.get_secret_value())
        elif isinstance(value, BaseModel):
            more, addresses = secrets_of(value)
            secrets += more
            emails += addresses
        elif name == MAILTO_FIELD and isinstance(value, str) and value:
            emails.append(value)
    return secrets, emails


def setup_logging(level: str, settings: Any = None, stream: IO[str] | None = None) -> logging.Handler:
    """Configure the root logger: one handler on ``stream`` (stderr) with redaction; returns it.

    ``settings`` supplies the secrets to redact and the addresses to mask (:func:`secrets_of`).
    """
    stream = stream or sys.stderr
    secrets, emails = secrets_of(settings) if isinstance(settings, BaseModel) else ([], [])
    global _ACTIVE
    _ACTIVE = RedactingFilter(secrets, emails)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(_Formatter(_on_journal(stream)))
    handler.addFilter(_ACTIVE)
    root = logging.getLogger()
    for old in list(root.handlers):
        if getattr(old, "_syncd", False):
            root.removeHandler(old)
    handler._syncd = True  # type: ignore[attr-defined]
    root.addHandler(handler)
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
    # stderr keeps this level even when a logger below is lowered (an MCP client's logging/setLevel)
    handler.setLevel(root.level)
    for noisy in ("httpx", "httpcore", "apscheduler.executors.default", "apscheduler.scheduler"):
        logging.getLogger(noisy).setLevel(max(logging.WARNING, root.level))
    return handler
