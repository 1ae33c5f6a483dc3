"""Database fixtures: a migrated SQLite file and a throwaway PostgreSQL database per session.

PostgreSQL comes from ``ABSRANK_TEST_POSTGRES_URL`` (an admin URL; default
``postgresql+psycopg://postgres@127.0.0.1:5432/postgres``). Each session creates databases named
``absrank_test_<random>`` and drops them at the end. If the server is unreachable the PostgreSQL
tests fail when ``CI`` is set and are skipped otherwise.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.db import make_engine, make_sessionmaker
from app.models import Comparison, Table, TableChunk
from tests.support import alembic_config, pg_databases, require_postgres
from tests.support import pg_admin_url as support_pg_admin_url


@pytest.fixture(scope="session")
def make_alembic_config() -> Callable[[str], Config]:
    """Return :func:`alembic_config` (test modules cannot import conftest)."""
    return alembic_config


@pytest.fixture(scope="session")
def pg_admin_url() -> str:
    """The admin URL of the test PostgreSQL server (fail in CI, skip locally if down)."""
    url = support_pg_admin_url()
    require_postgres(url)
    return url


@pytest.fixture(scope="session")
def pg_database_factory(pg_admin_url: str) -> Iterator[Callable[[], str]]:
    """Create fresh PostgreSQL databases on demand; all are dropped at the end of the session."""
    with pg_databases(pg_admin_url) as create:
        yield create


@pytest.fixture(scope="session")
def sqlite_migrated_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'absrank.db'}"
    command.upgrade(alembic_config(url), "head")
    return url


@pytest.fixture(scope="session")
def pg_migrated_url(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    command.upgrade(alembic_config(url), "head")
    return url


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def engine(backend: str, request: pytest.FixtureRequest) -> Iterator[Engine]:
    """An engine on a migrated database of ``backend``; rows are deleted after each test."""
    url = request.getfixturevalue(f"{'sqlite' if backend == 'sqlite' else 'pg'}_migrated_url")
    eng = make_engine(url)
    try:
        yield eng
    finally:
        with eng.begin() as conn:
            conn.execute(delete(TableChunk))
            conn.execute(delete(Table))
            conn.execute(delete(Comparison))
        eng.dispose()


@pytest.fixture
def sm(engine: Engine) -> sessionmaker[Session]:
    return make_sessionmaker(engine)


@pytest.fixture
def make_table() -> Callable[..., Table]:
    """Build (not add) a ``Table`` row with harmless defaults."""

    def build(**overrides: Any) -> Table:
        table_id = overrides.pop("id", "t" + secrets.token_hex(12)[:23])
        fields: dict[str, Any] = {
            "id": table_id,
            "spec_hash": table_id[1:] + "0" * 41,
            "function_id": "classic/sphere/d2",
            "spec": {"function_id": "classic/sphere/d2", "n": 64},
            "n": 64,
            "seed": 0,
            "chunk_size": 16,
            "n_chunks": 4,
            "status": "building",
            "created_at": datetime.now(UTC),
        }
        fields.update(overrides)
        return Table(**fields)

    return build
