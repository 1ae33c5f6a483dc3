"""API fixtures: the real app on a migrated SQLite file, with tables built inline."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.support import migrate, pg_admin_url, pg_databases, require_postgres
from workers.inline import InlineDispatcher


def api_settings(tmp_path: Path, **overrides: object) -> Settings:
    """Small, fast settings for API tests."""
    fields: dict[str, object] = {
        "environment": "test",
        "database_url": f"sqlite:///{tmp_path / 'api.db'}",
        "queue_url": "memory://",
        "table_default_log2n": 12,
        "table_max_log2n": 16,
        "table_chunk_log2": 10,
        "table_k_exact": 512,
        "table_n_knots": 1024,
        "max_rank_values": 1000,
        "max_evaluate_points": 100,
        "max_request_bytes": 256 * 1024,
        "max_sample_size": 2000,
        "max_algorithms": 50,
        "max_problems": 500,
        "max_matrix_cells": 5000,
    }
    fields.update(overrides)
    return Settings(**fields)  # type: ignore[arg-type]


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return api_settings(tmp_path)


@pytest.fixture
def dispatcher(settings: Settings) -> InlineDispatcher:
    return InlineDispatcher(settings)


def app_client(
    settings: Settings, dispatcher: InlineDispatcher | None = None
) -> Iterator[TestClient]:
    """A client of the real app on ``settings`` (migrated), tables built inline."""
    migrate(settings.database_url)
    dispatcher = dispatcher or InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        yield c


@pytest.fixture
def client(settings: Settings, dispatcher: InlineDispatcher) -> Iterator[TestClient]:
    yield from app_client(settings, dispatcher)


def api_app(tmp_path: Path, **overrides: object) -> FastAPI:
    """The app on :func:`api_settings` with ``overrides``, its database migrated, tables built
    inline (for tests that need their own settings)."""
    settings = api_settings(tmp_path, **overrides)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    return app


#: The databases of tests that run on both (``@pytest.fixture(params=BACKENDS)``).
BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(scope="session")
def pg_url_factory() -> Iterator[Callable[[], str]]:
    """Fresh PostgreSQL databases (dropped at the end); skip when the server is down."""
    admin = pg_admin_url()
    require_postgres(admin)
    with pg_databases(admin) as create:
        yield create
