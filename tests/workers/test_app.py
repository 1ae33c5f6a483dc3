"""The huey application: storage from the queue URL, task registration, inline mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

import pytest
from huey import MemoryHuey, RedisHuey, SqliteHuey
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain.tablebuild import TaskSpan
from app.models import TableChunk
from app.repositories import TableRepository
from app.services import tables as svc
from app.services.table_cache import TableCaches
from workers import app as worker_app
from workers import tasks
from workers.tasks import HueyDispatcher


def test_queue_url_picks_the_storage(make_settings: Callable[..., Settings], tmp_path: Path):
    memory = worker_app.make_huey(make_settings(queue_url="memory://"))
    assert isinstance(memory, MemoryHuey)
    assert memory.immediate
    sqlite = worker_app.make_huey(make_settings(queue_url=f"sqlite:///{tmp_path / 'q' / 'q.db'}"))
    assert isinstance(sqlite, SqliteHuey)
    assert (tmp_path / "q" / "q.db").exists()
    sqlite.storage.close()
    redis = worker_app.make_huey(make_settings(queue_url="redis://127.0.0.1:6379/3"))
    assert isinstance(redis, RedisHuey)  # connects lazily
    redis.storage.conn.connection_pool.disconnect()
    with pytest.raises(ValueError, match="unsupported queue_url"):
        worker_app.make_huey(make_settings(queue_url="amqp://x"))


def test_tasks_are_registered_under_stable_names(make_settings: Callable[..., Settings]):
    instance = worker_app.make_huey(make_settings(queue_url="memory://"))
    HueyDispatcher(instance)
    names = set(instance._registry._registry)
    expected = {
        "workers.tasks.build_span",
        "workers.tasks.build_chunk",
        "workers.tasks.merge_table",
    }
    assert expected <= names
    default = set(worker_app.huey._registry._registry)
    assert "workers.tasks.redispatch_tables" in default


def test_consumer_refuses_inline_mode(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(worker_app, "huey", MemoryHuey("x", immediate=True))
    with pytest.raises(RuntimeError, match="inline"):
        worker_app.run_consumer(1)


def test_configure_and_reset(settings: Settings):
    worker_app.configure(settings=settings)
    try:
        assert worker_app.worker_settings() is settings
        sm = worker_app.get_sessionmaker()
        assert worker_app.get_sessionmaker() is sm
        assert str(sm.kw["bind"].url) == settings.database_url
    finally:
        worker_app.reset()
    assert worker_app.worker_settings() is not settings


def test_a_worker_makes_its_caches_with_its_sessionmaker(settings: Settings):
    from app.services import table_cache

    worker_app.configure(settings=settings)
    try:
        caches = worker_app.worker_caches()
        assert worker_app.worker_caches() is caches
        assert caches.tables.ready.maxsize == settings.table_ready_cache_size
        assert caches.ladders.ids.maxsize == settings.ladder_ids_cache_size
    finally:
        worker_app.reset()
    given = table_cache.AppCaches.from_settings(settings)
    worker_app.configure(settings=settings, caches=given)
    try:
        assert worker_app.worker_caches() is given  # an embedded worker may share an app's
    finally:
        worker_app.reset()


def test_a_worker_process_keeps_its_measured_costs(settings: Settings) -> None:
    worker_app.configure(settings=settings)
    try:
        costs = worker_app.worker_costs()
        costs.seconds_per_point["f"] = 1.0
        assert worker_app.worker_costs() is costs
        assert worker_app.consumer_workers() == 1  # no consumer in this process
    finally:
        worker_app.reset()
    worker_app.configure(settings=settings)
    try:
        assert worker_app.worker_costs().seconds_per_point == {}  # reset forgets them
    finally:
        worker_app.reset()


def test_worker_sqlite_connections_are_wal_with_synchronous_normal(settings: Settings):
    worker_app.configure(settings=settings)
    try:
        engine = worker_app.get_sessionmaker().kw["bind"]
        with engine.connect() as conn:
            driver = conn.connection.dbapi_connection
            assert driver.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            assert driver.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
            assert driver.execute("PRAGMA foreign_keys").fetchone()[0] == 1
            # a chunk task's commit does not checkpoint; the worker does once a table is ready
            autocheckpoint = driver.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
            assert autocheckpoint == worker_app.WORKER_WAL_AUTOCHECKPOINT
            conn.exec_driver_sql("CREATE TABLE t (x BLOB)")
            conn.exec_driver_sql("INSERT INTO t VALUES (zeroblob(1000000))")
            conn.commit()
        main_file = Path(engine.url.database)
        before = main_file.stat().st_size
        assert before < 1_000_000  # the blob is in the WAL only
        worker_app.checkpoint()
        assert main_file.stat().st_size >= before + 1_000_000  # copied into the database
    finally:
        worker_app.reset()


class _FakeConsumer:
    options: ClassVar[list[dict]] = []

    def __init__(self, huey: object, **kw: object) -> None:
        self.options.append(kw)

    def run(self) -> None:
        pass


def test_consumer_polls_an_idle_queue_every_fiftieth_of_a_second(
    monkeypatch: pytest.MonkeyPatch, make_settings: Callable[..., Settings], tmp_path: Path
):
    settings = make_settings(queue_url=f"sqlite:///{tmp_path / 'q.db'}")
    instance = worker_app.make_huey(settings)
    monkeypatch.setattr(worker_app.lifecycle, "WatchedConsumer", _FakeConsumer)
    monkeypatch.setattr(worker_app, "huey", instance)
    monkeypatch.setattr(worker_app, "worker_settings", lambda: settings)
    options = _FakeConsumer.options = []
    worker_app.run_consumer(2)
    worker_app.run_consumer(1, max_delay=1.0, parent=1)
    instance.storage.close()
    assert options[0]["workers"] == 2
    assert options[0]["worker_type"] == "process"
    assert (options[0]["initial_delay"], options[0]["max_delay"]) == (0.02, 0.02)
    assert options[1]["max_delay"] == 1.0  # callers may still override it
    # SIGTERM is the graceful signal, bounded by the setting; a parent is watched
    assert (options[0]["graceful_signal"], options[0]["shutdown_timeout"]) == (
        "TERM",
        settings.worker_shutdown_seconds,
    )
    assert options[0]["watch"] is None
    assert options[1]["watch"] == worker_app.lifecycle.ParentWatch(1)


def test_a_message_of_the_one_chunk_format_still_builds(
    settings: Settings, sm: sessionmaker[Session]
) -> None:
    """``build_chunk(table_id, index)``, queued by an earlier API: its task takes the chunks from
    ``index`` on and hands the rest on as spans (run inline by ``memory://``)."""
    worker_app.configure(settings=settings, sessionmaker=sm)
    try:
        view, _ = svc.request_table(
            sm,
            settings,
            _Nowhere(),
            function_id="classic/sphere/d5",
            log2n=14,
            cache=TableCaches.from_settings(settings),
        )
        assert tasks._build_chunk(view.id, 0) in {"done", "merged"}
        ready = svc.get_table(sm, view.id)
        assert ready.status == "ready"
        with session_scope(sm) as s:
            attempts = [c.attempts for c in s.query(TableChunk).filter_by(table_id=view.id)]
            blob = TableRepository(s).get_data(view.id)
        assert attempts == [1] * view.n_chunks
        assert blob == svc.compute_table_data(ready.spec)
    finally:
        worker_app.reset()


class _Nowhere:
    def enqueue_span(self, span: TaskSpan) -> None:
        pass

    def enqueue_merge(self, table_id: str) -> None:
        pass


def test_queue_errors_are_logged_once_per_interval() -> None:
    """A queue that is down: huey's error at every poll is logged once per interval."""
    import logging

    from workers.app import QueueErrorThrottle

    now = [0.0]
    throttle = QueueErrorThrottle(interval=30.0, clock=lambda: now[0])

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("huey.consumer.Worker-1", logging.ERROR, "", 0, msg, (), None)

    assert throttle.filter(record("Error reading from queue"))
    kept = []
    for _ in range(100):
        now[0] += 0.02
        kept.append(throttle.filter(record("Error reading from queue")))
    assert not any(kept)
    assert throttle.filter(record("something else"))
    now[0] += 30
    later = record("Error reading from queue")
    assert throttle.filter(later)
    assert "100 more left out" in later.getMessage()
