"""Issue 17 §4: a queue that does not answer leaves no half state, on SQLite and PostgreSQL.

The queues are real: a huey ``RedisHuey`` on a port nothing listens on, and a ``SqliteHuey``
whose file a second connection holds with ``BEGIN EXCLUSIVE``. The database locked past its
timeout is a real lock too (SQLite ``BEGIN EXCLUSIVE``, PostgreSQL ``LOCK TABLE``).
"""

from __future__ import annotations

import socket
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from huey import Huey
from sqlalchemy import create_engine, select, text
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import engine_for, make_sessionmaker, session_scope, unavailable_reason
from app.domain.tablebuild import TaskSpan
from app.errors import QueueUnavailable
from app.models import TableChunk
from app.services import tables as svc
from app.services.table_cache import TableCaches
from workers.app import make_huey
from workers.tasks import HueyDispatcher

pytestmark = pytest.mark.db

SM = sessionmaker[Session]
FUNCTION = "classic/sphere/d3"


def unused_port() -> int:
    """A local TCP port nothing listens on (bound once, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _settings(tmp_path: Path, queue_url: str) -> Settings:
    return Settings(
        environment="test",
        database_url=f"sqlite:///{tmp_path / 'unused.db'}",
        queue_url=queue_url,
        queue_timeout_seconds=0.5,
        table_default_log2n=12,
        table_max_log2n=14,
        table_chunk_log2=9,
        table_k_exact=128,
        table_n_knots=256,
        chunk_lease_seconds=300.0,
    )


@dataclass
class DeadQueue:
    settings: Settings
    huey: Huey


@pytest.fixture
def locked_queue(tmp_path: Path) -> Iterator[DeadQueue]:
    """A SQLite queue file another connection holds with ``BEGIN EXCLUSIVE``."""
    settings = _settings(tmp_path, f"sqlite:///{tmp_path / 'queue.db'}")
    huey = make_huey(settings)  # creates the file and its tables (as the API does at start)
    holder = sqlite3.connect(tmp_path / "queue.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield DeadQueue(settings, huey)
    finally:
        holder.rollback()
        holder.close()


@pytest.fixture(params=["redis-dead-port", "sqlite-locked"])
def dead_queue(request: pytest.FixtureRequest, tmp_path: Path) -> DeadQueue:
    if request.param == "redis-dead-port":
        settings = _settings(tmp_path, f"redis://127.0.0.1:{unused_port()}/0")
        return DeadQueue(settings, make_huey(settings))
    queue: DeadQueue = request.getfixturevalue("locked_queue")
    return queue


class Recorder:
    def __init__(self) -> None:
        self.spans: list[TaskSpan] = []
        self.merges: list[str] = []

    def enqueue_span(self, span: TaskSpan) -> None:
        self.spans.append(span)

    def enqueue_merge(self, table_id: str) -> None:
        self.merges.append(table_id)


def _dispatched(sm: SM, table_id: str) -> list[datetime | None]:
    with session_scope(sm) as s:
        stmt = select(TableChunk.dispatched_at).where(TableChunk.table_id == table_id)
        return list(s.execute(stmt).scalars())


def test_a_queue_that_does_not_answer_leaves_the_chunks_not_dispatched(
    sm: SM, dead_queue: DeadQueue
) -> None:
    settings = dead_queue.settings
    dispatcher = HueyDispatcher(dead_queue.huey, retry_after=7)
    cache = TableCaches.from_settings(settings)
    with pytest.raises(QueueUnavailable) as info:
        svc.request_table(sm, settings, dispatcher, function_id=FUNCTION, cache=cache)
    assert info.value.status == 503
    assert info.value.headers["Retry-After"] == "7"
    assert info.value.extra["dependency"] == "queue"
    # the table exists (the database is the truth), but none of its chunks is marked sent
    (view,) = svc.list_tables(sm, function_id=FUNCTION)[0]
    assert view.status == "building"
    assert _dispatched(sm, view.id) == [None] * view.n_chunks
    # the next re-dispatch sends them at once, without waiting a lease
    rec = Recorder()
    counts = svc.redispatch(sm, settings, rec, now=datetime.now(UTC))
    assert counts["chunks_lost"] == view.n_chunks
    assert [(s.first, s.count) for s in rec.spans] == [(0, view.n_chunks)]
    assert None not in _dispatched(sm, view.id)


def test_a_redispatch_the_queue_refuses_is_sent_again_at_the_next_run(
    sm: SM, dead_queue: DeadQueue
) -> None:
    settings = dead_queue.settings
    cache = TableCaches.from_settings(settings)
    view, _ = svc.request_table(sm, settings, Recorder(), function_id=FUNCTION, cache=cache)
    with session_scope(sm) as s:  # as if its message was lost
        s.execute(text("UPDATE table_chunks SET dispatched_at = NULL"))
    dispatcher = HueyDispatcher(dead_queue.huey, retry_after=7)
    with pytest.raises(QueueUnavailable):
        svc.redispatch(sm, settings, dispatcher, now=datetime.now(UTC))
    assert _dispatched(sm, view.id) == [None] * view.n_chunks
    rec = Recorder()
    assert svc.redispatch(sm, settings, rec)["chunks_lost"] == view.n_chunks


def test_a_dead_queue_answers_its_ping_with_an_error(dead_queue: DeadQueue) -> None:
    dispatcher = HueyDispatcher(dead_queue.huey, retry_after=7)
    with pytest.raises(QueueUnavailable):
        dispatcher.ping()
    # a locked SQLite queue still reads (WAL): only its write lock is held
    locked = dead_queue.settings.queue_url.startswith("sqlite")
    assert dispatcher.pending_count() == (0 if locked else None)


def test_a_database_locked_past_its_timeout_is_unavailable(
    backend: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    url = request.getfixturevalue(f"{'sqlite' if backend == 'sqlite' else 'pg'}_migrated_url")
    settings = Settings(
        environment="test",
        database_url=url,
        queue_url="memory://",
        database_busy_timeout_seconds=0.3,
        table_default_log2n=12,
        table_chunk_log2=9,
    )
    holder_engine = engine_for(settings)
    engine = engine_for(settings)
    try:
        with holder_engine.connect() as holder:
            if backend == "sqlite":
                holder.exec_driver_sql("BEGIN EXCLUSIVE")
            else:
                holder.exec_driver_sql("BEGIN")
                holder.exec_driver_sql("LOCK TABLE tables IN ACCESS EXCLUSIVE MODE")
            cache = TableCaches.from_settings(settings)
            with pytest.raises(OperationalError) as info:
                svc.request_table(
                    make_sessionmaker(engine),
                    settings,
                    Recorder(),
                    function_id=FUNCTION,
                    cache=cache,
                )
            holder.rollback()
        reason = unavailable_reason(info.value)
        assert reason is not None
        assert ("locked" if backend == "sqlite" else "LockNotAvailable") in reason
    finally:
        engine.dispose()
        holder_engine.dispose()


def test_other_database_errors_are_not_unavailable(sm: SM) -> None:
    with pytest.raises(DBAPIError) as info, session_scope(sm) as s:
        s.execute(text("SELECT * FROM no_such_table"))
    assert unavailable_reason(info.value) is None


def test_an_exhausted_pool_is_unavailable(tmp_path: Path) -> None:
    engine = create_engine(
        f"sqlite:///{tmp_path / 'pool.db'}", pool_size=1, max_overflow=0, pool_timeout=0.1
    )
    try:
        with engine.connect(), pytest.raises(PoolTimeout) as info, engine.connect():
            pass
        reason = unavailable_reason(info.value)
        assert reason is not None
        assert reason.startswith("TimeoutError: QueuePool limit")
    finally:
        engine.dispose()
