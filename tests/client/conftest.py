"""Client fixtures: the real app on a migrated SQLite file (tables built inline), reached
through ``absrank_client.Client(http=TestClient(app))`` — no mocks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from absrank_client import Client, cli
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.services import tables as table_service
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate


class Dispatcher(InlineDispatcher):
    """The API tests' inline dispatcher, plus ``release()``: run every chunk held so far."""

    def release(self) -> None:
        self.hold = False
        held, self.chunks = self.chunks, []
        for table_id, index in held:
            self.enqueue_chunk(table_id, index)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return api_settings(tmp_path)


@pytest.fixture
def dispatcher(settings: Settings) -> Dispatcher:
    return Dispatcher(settings)


@pytest.fixture
def http(settings: Settings, dispatcher: Dispatcher) -> Iterator[TestClient]:
    migrate(settings.database_url)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        yield c


@pytest.fixture
def client(http: TestClient) -> Iterator[Client]:
    with Client(http=http, poll_interval=0.01, poll_max=0.05, wait_timeout=30) as c:
        yield c


@pytest.fixture
def cli_app(http: TestClient, monkeypatch: pytest.MonkeyPatch) -> object:
    """The CLI with its Client wired to the real app (the factory is the CLI's injection point)."""

    def factory(url: str | None, api_key: str | None, timeout: float) -> Client:
        return Client(url, api_key, http=http, timeout=timeout, poll_interval=0.01, poll_max=0.05)

    monkeypatch.setattr(cli, "client_factory", factory)
    return cli.app


def held_table_chunks(dispatcher: Dispatcher) -> int:
    """How many chunk tasks the dispatcher holds (to check a wait really waited)."""
    return len(dispatcher.chunks)


__all__ = ["Dispatcher", "held_table_chunks", "table_service"]
