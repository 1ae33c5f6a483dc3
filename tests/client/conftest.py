"""Client fixtures: the real app on a migrated SQLite file (tables built inline), reached
through ``absrank_client.Client(http=TestClient(app))`` — no mocks.

``settings``, ``dispatcher`` and ``http`` are the API tests' fixtures (``http`` is their
``client``: FastAPI's TestClient, an ``httpx.Client`` wired to the app).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from absrank_client import Client, cli
from fastapi.testclient import TestClient

from tests.api.conftest import InlineDispatcher, dispatcher, settings
from tests.api.conftest import client as http

__all__ = ["cli_app", "client", "dispatcher", "http", "release", "settings"]


def release(dispatcher: InlineDispatcher) -> None:
    """Let the held table builds run: every chunk queued while ``hold`` was set, now."""
    dispatcher.hold = False
    held, dispatcher.chunks = dispatcher.chunks, []
    for table_id, index in held:
        dispatcher.enqueue_chunk(table_id, index)


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
