"""The CLI's one session context manager: it builds the Services bundle and always closes it and the store."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from syncd.cli.common import session
from syncd.config import Settings
from syncd.road.services import Services
from syncd.store.repo import Store


def _ctx(tmp_path: Path) -> click.Context:
    ctx = click.Context(click.Command("t"), obj={})
    ctx.obj["settings"] = Settings(database_url=f"sqlite:///{tmp_path / 'cli.db'}")
    return ctx


def test_session_yields_services_over_the_configured_store(tmp_path: Path) -> None:
    """The session's bundle reads the configured database and carries all three upstream clients."""
    with session(_ctx(tmp_path)) as svc:
        assert isinstance(svc, Services)
        assert svc.store.get("crossref_work", "10.1/none") is None
        assert svc.upstreams.doi is not None and svc.runner is not None


def test_session_closes_clients_and_store_even_on_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A command that fails inside the session still closes the upstream clients, then the store."""
    closed: list[str] = []
    real_services_close, real_store_close = Services.close, Store.close

    def services_close(self: Services) -> None:
        closed.append("services")
        real_services_close(self)

    def store_close(self: Store) -> None:
        closed.append("store")
        real_store_close(self)

    monkeypatch.setattr(Services, "close", services_close)
    monkeypatch.setattr(Store, "close", store_close)
    with pytest.raises(RuntimeError, match="boom"), session(_ctx(tmp_path)):
        raise RuntimeError("boom")
    assert closed == ["services", "store"]
