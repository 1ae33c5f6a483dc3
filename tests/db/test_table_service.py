"""The table services on SQLite and PostgreSQL: one merge under concurrency, recovery."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain.tablebuild import TaskSpan
from app.models import TableChunk
from app.repositories import TableRepository
from app.services import table_build
from app.services import tables as svc
from app.services.table_cache import TableCaches

pytestmark = pytest.mark.db

SM = sessionmaker[Session]
FUNCTION = "classic/sphere/d3"


class Recorder:
    def __init__(self) -> None:
        self.chunks: list[tuple[str, int]] = []
        self.merges: list[str] = []

    def enqueue_span(self, span: TaskSpan) -> None:
        assert span.count is not None
        self.chunks.extend((span.table_id, i) for i in range(span.first, span.first + span.count))

    def enqueue_merge(self, table_id: str) -> None:
        self.merges.append(table_id)


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings(
        environment="test",
        database_url=f"sqlite:///{tmp_path / 'unused.db'}",
        queue_url="memory://",
        table_default_log2n=12,
        table_max_log2n=14,
        table_chunk_log2=9,
        table_k_exact=128,
        table_n_knots=256,
        chunk_lease_seconds=2.0,
    )


def test_build_recover_and_read(sm: SM, settings: Settings) -> None:
    rec = Recorder()
    view, created = svc.request_table(
        sm, settings, rec, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    assert created
    assert view.n_chunks == 8
    lost = rec.chunks.pop()
    assert {svc.run_chunk(sm, settings, t, i) for t, i in rec.chunks} == {"done"}
    assert svc.run_chunk(sm, settings, view.id, 0) == "skipped-done"
    later = datetime.now(UTC) + timedelta(seconds=3)
    again = Recorder()
    assert svc.redispatch(sm, settings, again, now=later)["chunks_lost"] == 1
    assert again.chunks == [lost]
    assert svc.run_chunk(sm, settings, *lost) == "merged"
    ready, data = svc.load_table_data(sm, view.id, cache=TableCaches.from_settings(settings))
    assert ready.status == "ready"
    assert data.n == 4096
    with session_scope(sm) as s:
        blob = TableRepository(s).get_data(view.id)
    assert blob == svc.compute_table_data(ready.spec)
    items, total = svc.list_tables(sm, function_id=FUNCTION, status="ready")
    assert total == 1
    assert items[0].id == view.id


def test_concurrent_mergers_merge_once(sm: SM, settings: Settings) -> None:
    rec = Recorder()
    view, _ = svc.request_table(
        sm, settings, rec, function_id=FUNCTION, log2n=11, cache=TableCaches.from_settings(settings)
    )
    with session_scope(sm) as s:
        repo = TableRepository(s)
        for index in range(view.n_chunks):
            r = svc.compute_chunk(view.spec, index, view.chunk_size)
            repo.finish_chunk(
                view.id,
                index,
                values=r.values.astype("<f8").tobytes(),
                low_index=r.low_index.astype("<i8").tobytes(),
                low_x=r.low_x.astype("<f8").tobytes(),
                cpu_seconds=0.0,
                worker="w:1",
                now=datetime.now(UTC),
            )
    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(lambda _: svc.merge(sm, settings, view.id), range(6)))
    assert results.count(True) == 1
    assert svc.get_table(sm, view.id).status == "ready"


def test_concurrent_requests_create_one_table(sm: SM, settings: Settings) -> None:
    rec = Recorder()

    def request(_: int) -> tuple[str, bool]:
        view, created = svc.request_table(
            sm,
            settings,
            rec,
            function_id=FUNCTION,
            seed=7,
            cache=TableCaches.from_settings(settings),
        )
        return view.id, created

    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(request, range(4)))
    assert len({table_id for table_id, _ in results}) == 1
    assert [created for _, created in results].count(True) == 1
    assert len(rec.chunks) == 8


@pytest.mark.parametrize("cost", [1e-9, 2e-5])  # every chunk in one task; a few per task
def test_concurrent_workers_taking_chunks_along_build_the_table_once(
    sm: SM, settings: Settings, cost: float
) -> None:
    """Six threads run every chunk message, each taking the next chunks along (the last one
    stores its chunks with the merged table): each chunk is claimed once, the table is the
    one-shot build's bytes."""
    rec = Recorder()
    view, _ = svc.request_table(
        sm, settings, rec, function_id=FUNCTION, log2n=13, cache=TableCaches.from_settings(settings)
    )
    assert view.n_chunks == 16

    def run(key: tuple[str, int]) -> str:
        costs = table_build.TaskCosts({FUNCTION: cost})  # each thread a worker process of its own
        return svc.run_chunk(sm, settings, *key, task_seconds=0.01, share=2, costs=costs)

    with ThreadPoolExecutor(max_workers=6) as pool:
        outcomes = list(pool.map(run, rec.chunks))
    assert outcomes.count("merged") == 1
    assert "failed" not in outcomes
    ready = svc.get_table(sm, view.id)
    assert ready.status == "ready"
    with session_scope(sm) as s:
        repo = TableRepository(s)
        blob = repo.get_data(view.id)
        assert list(repo.iter_chunk_blobs(view.id)) == []  # none left behind
    assert blob == svc.compute_table_data(view.spec)
    with session_scope(sm) as s:
        attempts = [c.attempts for c in s.query(TableChunk).filter_by(table_id=view.id)]
    assert attempts == [1] * 16
