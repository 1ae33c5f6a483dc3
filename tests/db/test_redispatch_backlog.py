"""Issue 17 §6: the re-dispatcher re-sends at most the chunks the workers can work within the
next lease, less what is queued (on SQLite and PostgreSQL)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain.tablebuild import Backlog, TaskSpan
from app.models import Table, TableChunk
from app.repositories import TableRepository
from app.services import tables as svc

pytestmark = pytest.mark.db

SM = sessionmaker[Session]
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
LEASE = 300.0


class Recorder:
    def __init__(self, pending: int | None = None) -> None:
        self.chunks: list[int] = []
        self.pending = pending

    def enqueue_span(self, span: TaskSpan) -> None:
        assert span.count is not None
        self.chunks.extend(range(span.first, span.first + span.count))

    def enqueue_merge(self, table_id: str) -> None:
        pass

    def pending_count(self) -> int | None:
        return self.pending


def _settings(tmp_path: Path, **overrides: object) -> Settings:
    fields: dict[str, object] = {
        "environment": "test",
        "database_url": f"sqlite:///{tmp_path / 'unused.db'}",
        "queue_url": "memory://",
        "chunk_lease_seconds": LEASE,
    }
    fields.update(overrides)
    return Settings(**fields)  # type: ignore[arg-type]


def _seed(
    sm: SM,
    make_table: Callable[..., Table],
    *,
    lost: int,
    done_by: tuple[str, ...] = ("h:1", "h:2"),
    cpu_seconds: float = 30.0,
) -> str:
    """A building table of ``lost`` chunks whose messages were lost an hour ago, and a ready
    table whose chunks ``done_by`` finished within the last lease, ``cpu_seconds`` each."""
    building = make_table(n_chunks=lost, created_at=NOW - timedelta(hours=2))
    ready = make_table(n_chunks=len(done_by), status="ready", created_at=NOW - timedelta(hours=3))
    with session_scope(sm) as s:
        repo = TableRepository(s)
        repo.add(building)
        repo.add_chunks(building.id, lost, dispatched_at=NOW - timedelta(hours=1))
        repo.add(ready)
        repo.add_chunks(ready.id, len(done_by), dispatched_at=NOW - timedelta(minutes=3))
        for index, worker in enumerate(done_by):
            s.execute(
                update(TableChunk)
                .where(TableChunk.table_id == ready.id, TableChunk.index == index)
                .values(
                    status="done",
                    worker=worker,
                    cpu_seconds=cpu_seconds,
                    finished_at=NOW - timedelta(minutes=1),
                )
            )
    return building.id


def test_the_budget_is_the_work_of_one_lease_less_the_queue() -> None:
    # an independent count: 2 workers × 300 s / 30 s = 20 chunks in one lease
    assert Backlog(workers=2, seconds_per_chunk=30.0, queued=0).budget(300.0) == 20
    assert Backlog(workers=2, seconds_per_chunk=30.0, queued=15).budget(300.0) == 5
    assert Backlog(workers=2, seconds_per_chunk=30.0, queued=64).budget(300.0) == 0
    # a chunk longer than the lease: one per worker, if nothing waits
    assert Backlog(workers=3, seconds_per_chunk=900.0, queued=0).budget(300.0) == 3
    assert Backlog(workers=3, seconds_per_chunk=900.0, queued=1).budget(300.0) == 2


def test_lost_chunks_are_resent_as_the_workers_can_take_them(
    sm: SM, make_table: Callable[..., Table], tmp_path: Path
) -> None:
    table_id = _seed(sm, make_table, lost=64)
    settings = _settings(tmp_path)
    first = Recorder()
    # workers seen in the last lease: 2, at 30 s a chunk: 20 chunks, the oldest first
    assert svc.redispatch(sm, settings, first, now=NOW)["chunks_lost"] == 20
    assert first.chunks == list(range(20))
    # a minute later those 20 are still queued: nothing more is sent on top of them
    later = Recorder()
    assert svc.redispatch(sm, settings, later, now=NOW + timedelta(minutes=1))["chunks_lost"] == 0
    assert later.chunks == []
    # once they are claimed, the next 20 go
    with session_scope(sm) as s:
        s.execute(
            update(TableChunk)
            .where(TableChunk.table_id == table_id, TableChunk.index < 20)
            .values(status="done", finished_at=NOW + timedelta(minutes=1), cpu_seconds=30.0)
        )
    after = Recorder()
    assert svc.redispatch(sm, settings, after, now=NOW + timedelta(minutes=2))["chunks_lost"] == 20
    assert after.chunks == list(range(20, 40))


def test_the_queue_length_and_the_workers_setting_bound_the_resend(
    sm: SM, make_table: Callable[..., Table], tmp_path: Path
) -> None:
    _seed(sm, make_table, lost=64)
    # 4 workers set: 40 chunks a lease; the queue holds 25 messages the database does not know
    settings = _settings(tmp_path, redispatch_workers=4)
    rec = Recorder(pending=25)
    assert svc.redispatch(sm, settings, rec, now=NOW)["chunks_lost"] == 15
    assert rec.chunks == list(range(15))


def test_without_a_measured_pace_the_task_target_is_the_pace(
    sm: SM, make_table: Callable[..., Table], tmp_path: Path
) -> None:
    _seed(sm, make_table, lost=64, done_by=())
    # one worker assumed, table_task_seconds = 10 a chunk: 30 chunks a lease
    settings = _settings(tmp_path, table_task_seconds=10.0)
    assert svc.redispatch(sm, settings, Recorder(), now=NOW)["chunks_lost"] == 30
