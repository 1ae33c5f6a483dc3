"""The huey application: storage from the queue URL, task registration, inline mode."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from huey import MemoryHuey, RedisHuey, SqliteHuey

from app.config import Settings
from workers import app as worker_app
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
    assert {"workers.tasks.build_chunk", "workers.tasks.merge_table"} <= names
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
    def run(self) -> None:
        pass


def test_consumer_polls_an_idle_queue_every_fiftieth_of_a_second(
    monkeypatch: pytest.MonkeyPatch, make_settings: Callable[..., Settings], tmp_path: Path
):
    instance = worker_app.make_huey(make_settings(queue_url=f"sqlite:///{tmp_path / 'q.db'}"))
    options: list[dict] = []

    def create_consumer(**kw: object) -> _FakeConsumer:
        options.append(kw)
        return _FakeConsumer()

    monkeypatch.setattr(instance, "create_consumer", create_consumer)
    monkeypatch.setattr(worker_app, "huey", instance)
    worker_app.run_consumer(2)
    worker_app.run_consumer(1, max_delay=1.0)
    instance.storage.close()
    assert options[0]["workers"] == 2
    assert options[0]["worker_type"] == "process"
    assert (options[0]["initial_delay"], options[0]["max_delay"]) == (0.02, 0.02)
    assert options[1]["max_delay"] == 1.0  # callers may still override it
