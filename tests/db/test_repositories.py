"""TableRepository on SQLite and PostgreSQL: conditional updates decide who wins."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from sqlalchemy.exc import IntegrityError, InvalidRequestError
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Table
from app.repositories import ChunkKey, TableRepository, as_utc

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


def _finish(repo: TableRepository, table_id: str, index: int, worker: str = "h:1") -> bool:
    values = np.arange(4, dtype="<f8") + index
    return repo.finish_chunk(
        table_id,
        index,
        values=values.tobytes(),
        low_index=np.arange(2, dtype="<i8").tobytes(),
        low_x=np.zeros((2, 2), dtype="<f8").tobytes(),
        cpu_seconds=0.5,
        worker=worker,
        now=T0 + timedelta(seconds=index + 1),
    )


def test_add_get_and_unique_spec_hash(sm: SM, make_table: Callable[..., Table]) -> None:
    table = _seed(sm, make_table)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        got = repo.get(table.id)
        assert got is not None
        assert got.spec == table.spec
        assert as_utc(got.created_at) == table.created_at
        assert repo.get_by_spec_hash(table.spec_hash) is not None
        assert repo.get("tmissing") is None
        with pytest.raises(InvalidRequestError):
            _ = got.chunks  # lazy="raise"
        with pytest.raises(InvalidRequestError):
            _ = got.data  # deferred with raiseload
    with pytest.raises(IntegrityError), session_scope(sm) as s:
        TableRepository(s).add(make_table(id="tother", spec_hash=table.spec_hash))


def test_claim_lease_and_attempts(sm: SM, make_table: Callable[..., Table]) -> None:
    table = _seed(sm, make_table)
    lease = T0 + timedelta(seconds=10)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.claim_chunk(table.id, 0, now=T0, lease_until=lease, worker="a")
        # a live lease blocks a second claim (a duplicate message is skipped) ...
        assert not repo.claim_chunk(table.id, 0, now=T0, lease_until=lease, worker="b")
        # ... an expired one does not
        later = lease + timedelta(seconds=1)
        assert repo.claim_chunk(table.id, 0, now=later, lease_until=later, worker="b")
        chunk = repo.get_chunk(table.id, 0)
        assert chunk is not None
        assert chunk.attempts == 2
        assert chunk.worker == "b"
        assert as_utc(chunk.lease_until) == later


def test_finish_chunk_once_then_merge_claim(sm: SM, make_table: Callable[..., Table]) -> None:
    table = _seed(sm, make_table)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert _finish(repo, table.id, 0)
        assert not _finish(repo, table.id, 0, worker="dup")  # idempotent: first write wins
        assert not repo.all_chunks_done(table.id)
        assert not repo.claim_merge(table.id, now=T0, lease_until=T0)  # chunks missing
        for i in range(1, table.n_chunks):
            assert _finish(repo, table.id, i)
        assert repo.all_chunks_done(table.id)
        assert repo.pending_chunk_indices(table.id) == []
    with session_scope(sm) as s:
        repo = TableRepository(s)
        lease = T0 + timedelta(seconds=30)
        assert repo.claim_merge(table.id, now=T0, lease_until=lease)
        assert not repo.claim_merge(table.id, now=T0, lease_until=lease)  # held
        # the merger died: after its lease, someone else may claim it
        assert repo.claim_merge(table.id, now=lease + timedelta(seconds=1), lease_until=lease)
        blobs = list(repo.iter_chunk_blobs(table.id))
        assert [b.index for b in blobs] == [0, 1, 2, 3]
        assert np.frombuffer(blobs[2].values, "<f8").tolist() == [2.0, 3.0, 4.0, 5.0]
        chunk0 = repo.get_chunk(table.id, 0)
        assert chunk0 is not None
        assert chunk0.worker == "h:1"


def test_finish_merge_clears_blobs(sm: SM, make_table: Callable[..., Table]) -> None:
    table = _seed(sm, make_table)
    payload = bytes(range(256)) * 8192  # 2 MiB, exercises large blobs on both backends
    with session_scope(sm) as s:
        repo = TableRepository(s)
        for i in range(table.n_chunks):
            _finish(repo, table.id, i)
        assert repo.claim_merge(table.id, now=T0, lease_until=T0 + timedelta(seconds=5))
        assert repo.finish_merge(
            table.id,
            data=payload,
            data_sha256="ab" * 32,
            max_interp_error=1e-4,
            summary={"y_1": 0.0},
            provenance={"n": 64},
            now=T0,
        )
        repo.clear_chunk_blobs(table.id)
        # a second merger finds the table ready and changes nothing
        assert not repo.finish_merge(
            table.id,
            data=b"",
            data_sha256="",
            max_interp_error=0.0,
            summary={},
            provenance={},
            now=T0,
        )
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.get_data(table.id) == payload
        got = repo.get(table.id, with_data=True)
        assert got is not None
        assert got.status == "ready"
        assert got.data == payload
        assert got.merge_lease_until is None
        assert list(repo.iter_chunk_blobs(table.id)) == []


def test_progress_and_workers(sm: SM, make_table: Callable[..., Table]) -> None:
    a = _seed(sm, make_table)
    b = _seed(sm, make_table)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        repo.claim_chunk(a.id, 0, now=T0, lease_until=T0, worker="x:1")
        _finish(repo, a.id, 0, worker="x:1")
        _finish(repo, a.id, 1, worker="y:2")
    with session_scope(sm) as s:
        repo = TableRepository(s)
        progress = repo.chunk_progress([a.id, b.id, "tnone"])
        assert (progress[a.id].done, progress[a.id].total) == (2, 4)
        assert (progress[b.id].done, progress[b.id].total) == (0, 4)
        assert (progress["tnone"].done, progress["tnone"].total) == (0, 0)
        assert progress[a.id].cpu_seconds == pytest.approx(1.0)
        assert progress[a.id].first_started == T0
        assert progress[a.id].last_finished == T0 + timedelta(seconds=2)
        assert repo.chunk_workers(a.id) == ("x:1", "y:2")


def test_list_count_filters(sm: SM, make_table: Callable[..., Table]) -> None:
    old = _seed(sm, make_table, created_at=T0)
    new = _seed(sm, make_table, created_at=T0 + timedelta(hours=1), function_id="bbob/f1/i1/d2")
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert [t.id for t in repo.list()] == [new.id, old.id]
        assert [t.id for t in repo.list(function_id="bbob/f1/i1/d2")] == [new.id]
        assert [t.id for t in repo.list(limit=1, offset=1)] == [old.id]
        assert repo.count() == 2
        assert repo.count(status="ready") == 0
        assert repo.mark_failed(old.id, "boom", now=T0)
        assert not repo.mark_failed(old.id, "again", now=T0)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert [t.id for t in repo.list(status="failed")] == [old.id]
        failed = repo.get(old.id)
        assert failed is not None
        assert failed.error == "boom"
        assert repo.reset_failed(old.id)
        assert not repo.reset_failed(old.id)
        assert repo.delete(new.id)
        assert repo.count() == 1


def test_redispatch_queries(sm: SM, make_table: Callable[..., Table]) -> None:
    table = _seed(sm, make_table)
    now = T0 + timedelta(minutes=10)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        repo.claim_chunk(table.id, 0, now=T0, lease_until=T0 + timedelta(seconds=5), worker="w")
        repo.claim_chunk(table.id, 1, now=now, lease_until=now + timedelta(seconds=5), worker="w")
        _finish(repo, table.id, 2)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        # chunk 0 lease expired, chunk 1 leased and alive, 2 done, 3 dispatched long ago
        keys = repo.chunks_to_redispatch(now=now, lost_before=now - timedelta(seconds=60))
        assert keys == [ChunkKey(table.id, 0, "expired"), ChunkKey(table.id, 3, "lost")]
        assert repo.chunks_to_redispatch(now=now, lost_before=T0) == [
            ChunkKey(table.id, 0, "expired")
        ]
        repo.mark_dispatched(keys, now=now)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.chunks_to_redispatch(now=now, lost_before=now - timedelta(seconds=60)) == []
        assert repo.tables_to_merge(now=now) == []
        for i in (0, 1, 3):
            _finish(repo, table.id, i)
        assert repo.tables_to_merge(now=now) == [table.id]  # all done, still building
        repo.claim_merge(table.id, now=now, lease_until=now + timedelta(seconds=5))
        assert repo.tables_to_merge(now=now) == []
        assert repo.tables_to_merge(now=now + timedelta(seconds=6)) == [table.id]
        # failed tables are never re-dispatched
        repo.mark_failed(table.id, "x", now=now)
        assert repo.tables_to_merge(now=now + timedelta(seconds=6)) == []


def test_delete_cascades_to_chunks(sm: SM, make_table: Callable[..., Table]) -> None:
    table = _seed(sm, make_table)
    with session_scope(sm) as s:
        assert TableRepository(s).delete(table.id)
    with session_scope(sm) as s:
        repo = TableRepository(s)
        assert repo.chunk_progress([table.id])[table.id].total == 0
