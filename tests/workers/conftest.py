"""Worker fixtures: a migrated SQLite database per test, small-table settings, dispatchers."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from huey import Huey
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

# the process-wide huey (workers.app.huey) is built from the settings at import time: keep it
# in memory rather than creating var/queue.db (tests build their own queues explicitly)
os.environ.setdefault("ABSRANK_QUEUE_URL", "memory://")

from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.domain.tablebuild import TaskSpan
from tests.support import migrate
from workers.app import configure, make_huey, reset


def small_settings(tmp_path: Path, **overrides: object) -> Settings:
    """Settings for fast builds in ``tmp_path`` (every field that matters is explicit)."""
    fields: dict[str, object] = {
        "environment": "test",
        "database_url": f"sqlite:///{tmp_path / 'absrank.db'}",
        "queue_url": "memory://",
        "queue_name": "absrank-test",
        "table_default_log2n": 12,
        "table_max_log2n": 16,
        "table_chunk_log2": 10,
        "table_k_exact": 256,
        "table_n_knots": 512,
        "chunk_lease_seconds": 2.0,
    }
    fields.update(overrides)
    return Settings(**fields)  # type: ignore[arg-type]


class RecordingDispatcher:
    """A fake dispatcher that records what would be enqueued (and runs nothing)."""

    def __init__(self) -> None:
        self.spans: list[TaskSpan] = []
        self.chunks: list[tuple[str, int]] = []  # the spans' chunks, one by one
        self.merges: list[str] = []

    def enqueue_span(self, span: TaskSpan) -> None:
        assert span.count is not None  # the services queue spans of a known length
        self.spans.append(span)
        self.chunks.extend((span.table_id, i) for i in range(span.first, span.first + span.count))

    def enqueue_merge(self, table_id: str) -> None:
        self.merges.append(table_id)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return small_settings(tmp_path)


@pytest.fixture
def engine(settings: Settings) -> Iterator[Engine]:
    migrate(settings.database_url)
    eng = make_engine(settings.database_url)
    yield eng
    eng.dispose()


@pytest.fixture
def sm(engine: Engine) -> sessionmaker[Session]:
    return make_sessionmaker(engine)


@pytest.fixture
def recorder() -> RecordingDispatcher:
    return RecordingDispatcher()


@pytest.fixture
def inline_huey(settings: Settings, sm: sessionmaker[Session]) -> Iterator[Huey]:
    """A ``memory://`` huey (tasks run inline) whose tasks use this test's database."""
    configure(settings=settings, sessionmaker=sm)
    instance = make_huey(settings)
    try:
        yield instance
    finally:
        reset()


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., Settings]:
    """``small_settings`` bound to this test's ``tmp_path``."""
    return functools.partial(small_settings, tmp_path)


@pytest.fixture
def migrate_db() -> Callable[[str], None]:
    """Return :func:`migrate` (test modules cannot import conftest)."""
    return migrate


@pytest.fixture
def make_recorder() -> Callable[[], RecordingDispatcher]:
    return RecordingDispatcher
