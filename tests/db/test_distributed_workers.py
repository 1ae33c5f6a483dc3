"""Distributed mode for real: PostgreSQL holds the tables, Redis carries the huey queue, and two
independent worker processes (standing in for two machines) build one table together — with the
bytes of a one-shot in-process build."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.repositories.tables import TableRepository
from app.services import tables as svc
from app.services.table_cache import TableCaches
from tests.support import migrate, process_group
from workers.app import make_huey
from workers.tasks import HueyDispatcher

REDIS_URL = os.environ.get("ABSRANK_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def redis_url() -> str:
    try:
        redis.Redis.from_url(REDIS_URL, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"Redis not reachable at {REDIS_URL}: {exc}")
        pytest.skip(f"Redis not reachable at {REDIS_URL}: {exc}")
    return REDIS_URL


def _worker(env: dict[str, str], log: Path) -> contextlib.AbstractContextManager[Any]:
    cmd = [sys.executable, "-m", "app.cli", "worker", "--workers", "1"]
    return process_group(cmd, env=env, log=log, stop_signal=signal.SIGTERM)


def _wait_started(log: Path, deadline: float) -> None:
    while "Huey consumer started" not in (log.read_text(errors="replace") if log.exists() else ""):
        assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
        time.sleep(0.2)


@pytest.mark.slow
@pytest.mark.postgres
def test_two_workers_share_postgres_and_redis(
    pg_database_factory: Callable[[], str], redis_url: str, tmp_path: Path
) -> None:
    db_url = pg_database_factory()
    migrate(db_url)
    settings = Settings(
        environment="test",
        database_url=db_url,
        queue_url=redis_url,
        queue_name=f"absrank-test-{secrets.token_hex(4)}",
        table_max_log2n=20,
        table_chunk_log2=14,
        table_k_exact=1024,
        table_n_knots=4096,
    )
    env = dict(os.environ) | {
        "ABSRANK_DATABASE_URL": db_url,
        "ABSRANK_QUEUE_URL": redis_url,
        "ABSRANK_QUEUE_NAME": settings.queue_name,
        "ABSRANK_TABLE_MAX_LOG2N": "20",
        "ABSRANK_TABLE_CHUNK_LOG2": "14",
        "ABSRANK_TABLE_K_EXACT": "1024",
        "ABSRANK_TABLE_N_KNOTS": "4096",
    }
    queue = make_huey(settings)
    engine = make_engine(db_url)
    sm: sessionmaker[Session] = make_sessionmaker(engine)
    logs = [tmp_path / "worker-a.log", tmp_path / "worker-b.log"]
    try:
        with _worker(env, logs[0]), _worker(env, logs[1]):
            deadline = time.monotonic() + 60
            for log in logs:
                _wait_started(log, deadline)
            view, created = svc.request_table(
                sm,
                settings,
                HueyDispatcher(queue),
                function_id="bbob/f15/i1/d10",
                log2n=20,
                cache=TableCaches.from_settings(settings),
            )
            assert created
            assert view.n_chunks == 64
            deadline = time.monotonic() + 180
            while svc.get_table(sm, view.id).status != "ready":
                assert time.monotonic() < deadline, svc.get_table(sm, view.id)
                time.sleep(0.3)
        ready = svc.get_table(sm, view.id)
        with sm() as session:
            repo = TableRepository(session)
            data = repo.get_data(view.id)
            workers = set(repo.chunk_workers(view.id))
        assert data == svc.compute_table_data(ready.spec)
        assert len(workers) == 2, workers  # both "machines" built chunks
    finally:
        queue.storage.flush_all()
        engine.dispose()
