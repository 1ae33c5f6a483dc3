"""Multi-chunk claims and one-statement chunk writes on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy import select, text, update
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Table, TableChunk
from app.repositories import TableRepository
from app.repositories.tables import ChunkBlobs, ChunkWrite

pytestmark = pytest.mark.db

SM = sessionmaker[Session]
T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def _seed(sm: SM, make_table: Callable[..., Table], **overrides: object) -> Table:
    table = make_table(**overrides)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        repo.add(table)
        repo.add_chunks(table.id, table.n_chunks, dispatched_at=T0)
    return table


def _write(index: int, tag: float = 0.0) -> ChunkWrite:
    return ChunkWrite(
        index,
        (np.arange(16, dtype="<f8") + index + tag).tobytes(),
        np.arange(2, dtype="<i8").tobytes(),
        np.full((2, 2), index + tag, dtype="<f8").tobytes(),
        0.25 * (index + 1),
    )


def _rows(sm: SM, table_id: str) -> list[tuple[int, str, int, str | None, float | None]]:
    with session_scope(sm) as s:
        stmt = (
            select(
                TableChunk.index,
                TableChunk.status,
                TableChunk.attempts,
                TableChunk.worker,
                TableChunk.cpu_seconds,
            )
            .where(TableChunk.table_id == table_id)
            .order_by(TableChunk.index)
        )
        return [tuple(r) for r in s.execute(stmt)]  # type: ignore[misc]


def test_finish_chunks_writes_each_row_once_in_one_statement(
    sm: SM, make_table: Callable[..., Table]
) -> None:
    table = _seed(sm, make_table, n_chunks=6)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.finish_chunks(table.id, [_write(1), _write(2), _write(4)], worker="a", now=T0)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        # a redelivered batch: the done rows are left as they are, the new one is written
        later = T0 + timedelta(seconds=5)
        assert repo.finish_chunks(
            table.id, [_write(2, 9.0), _write(3, 9.0)], worker="b", now=later
        ) == [3]
        assert repo.finish_chunks(table.id, [_write(1, 9.0)], worker="b", now=later) == []
        assert repo.finish_chunks(table.id, [], worker="b", now=later) == []
        blobs = {b.index: b for b in repo.iter_chunk_blobs(table.id)}
    assert sorted(blobs) == [1, 2, 3, 4]
    for index, tag in ((1, 0.0), (2, 0.0), (3, 9.0), (4, 0.0)):
        w = _write(index, tag)
        assert blobs[index] == ChunkBlobs(index, w.values, w.low_index, w.low_x)
    rows = _rows(sm, table.id)
    assert [(r[0], r[1], r[3]) for r in rows] == [
        (0, "pending", None),
        (1, "done", "a"),
        (2, "done", "a"),
        (3, "done", "b"),
        (4, "done", "a"),
        (5, "pending", None),
    ]
    assert [r[4] for r in rows] == [None, 0.5, 0.75, 1.0, 1.25, None]  # each row its own CPU


def test_claim_chunks_takes_only_free_pending_chunks(
    sm: SM, make_table: Callable[..., Table]
) -> None:
    table = _seed(sm, make_table, n_chunks=8)
    lease = T0 + timedelta(seconds=30)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.claim_chunk(table.id, 3, now=T0, lease_until=lease, worker="other")
        assert repo.finish_chunks(table.id, [_write(4)], worker="other", now=T0) == [4]
    with session_scope(sm) as s:
        repo = TableRepository(s)
        # 2 is free, 3 is leased by another worker, 4 is done, 5 is free
        got = repo.claim_chunks(table.id, [5, 2, 3, 4, 1], now=T0, lease_until=lease, worker="me")
        assert got == [1, 2, 5]
        assert repo.claim_chunks(table.id, [], now=T0, lease_until=lease, worker="me") == []
        assert repo.claim_chunks(table.id, [1], now=T0, lease_until=lease, worker="x") == []
        # once the other worker's lease expired, its chunk may be claimed
        after = lease + timedelta(seconds=1)
        assert repo.claim_chunks(
            table.id, [3], now=after, lease_until=after + timedelta(seconds=30), worker="me"
        ) == [3]
        open_chunks = repo.open_chunks(table.id)
    rows = _rows(sm, table.id)
    assert [(r[0], r[2], r[3]) for r in rows] == [
        (0, 0, None),
        (1, 1, "me"),
        (2, 1, "me"),
        (3, 2, "me"),
        (4, 0, "other"),
        (5, 1, "me"),
        (6, 0, None),
        (7, 0, None),
    ]
    # every chunk not done, ascending, with its lease (UTC on SQLite too)
    assert [c.index for c in open_chunks] == [0, 1, 2, 3, 5, 6, 7]
    leases = {c.index: c.lease_until for c in open_chunks}
    assert leases[0] is None
    assert leases[1] == lease
    assert leases[3] == lease + timedelta(seconds=31)
    assert [c.claimable(after) for c in open_chunks] == [True, True, True, False, True, True, True]


def test_seconds_per_point_of_finished_chunks(sm: SM, make_table: Callable[..., Table]) -> None:
    table = _seed(sm, make_table, function_id="classic/ellipsoid/d2")
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.seconds_per_point("classic/ellipsoid/d2") is None
        repo.finish_chunks(table.id, [_write(0), _write(1)], worker="a", now=T0)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        # (0.25 + 0.5) CPU seconds over 2 chunks of 16 points
        assert repo.seconds_per_point("classic/ellipsoid/d2") == pytest.approx(0.75 / 32)
        assert repo.seconds_per_point("classic/ellipsoid/d2", limit=1) in (
            pytest.approx(0.25 / 16),
            pytest.approx(0.5 / 16),
        )
        assert repo.seconds_per_point("classic/sphere/d2") is None


def test_progress_reads_no_chunk_row_on_sqlite(sm: SM, make_table: Callable[..., Table]) -> None:
    """A table's progress and workers come from the covering index: on SQLite the columns after
    the blobs of a chunk row are read by walking the blobs' overflow pages."""
    table = _seed(sm, make_table)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.finish_chunks(table.id, [_write(1)], worker="w:1", now=T0) == [1]
        progress = repo.chunk_progress([table.id])[table.id]
        assert (progress.done, progress.total, progress.cpu_seconds) == (1, 4, 0.5)
        assert progress.last_finished == T0
        assert repo.chunk_workers(table.id) == ("w:1",)
        if s.get_bind().dialect.name != "sqlite":
            return
        plans = []
        for stmt in (repo.progress_statement([table.id]), repo.workers_statement(table.id)):
            compiled = stmt.compile(s.get_bind(), compile_kwargs={"literal_binds": True})
            plans.append(s.execute(text(f"EXPLAIN QUERY PLAN {compiled}")).all())
    for plan in plans:
        details = " ".join(str(row[-1]) for row in plan)
        assert "USING COVERING INDEX ix_table_chunks_progress" in details, details


def test_blobs_left_on_a_ready_table_are_cleared(sm: SM, make_table: Callable[..., Table]) -> None:
    ready = _seed(sm, make_table)
    building = _seed(sm, make_table)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        for table in (ready, building):
            assert repo.finish_chunks(table.id, [_write(0), _write(2)], worker="w", now=T0)
        s.execute(update(Table).where(Table.id == ready.id).values(status="ready"))
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.clear_ready_chunk_blobs() == 2
        assert list(repo.iter_chunk_blobs(ready.id)) == []
        assert [b.index for b in repo.iter_chunk_blobs(building.id)] == [0, 2]
        assert repo.clear_ready_chunk_blobs() == 0
