"""All SQL of the ``tables`` aggregate. No commits here: the caller owns the transaction.

Every state change that can race (claiming a chunk, writing its result, claiming or finishing a
merge, failing a table) is a single conditional ``UPDATE`` whose row count says whether this caller
won, so the database — not the queue — decides what is done.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    LargeBinary,
    and_,
    case,
    delete,
    exists,
    func,
    insert,
    literal,
    or_,
    select,
    update,
)
from sqlalchemy.engine import CursorResult
from sqlalchemy.orm import Session, undefer
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import Case

from app.domain.tablebuild import TaskSpan
from app.models.tables import Table, TableChunk


def as_utc(value: datetime | None) -> datetime | None:
    """Return ``value`` as an aware UTC datetime (SQLite hands back naive UTC datetimes).

    Parameters
    ----------
    value : datetime or None
        A datetime read from the database.

    Returns
    -------
    datetime or None
        The same instant with ``tzinfo=UTC``; ``None`` stays ``None``.
    """
    if value is None:
        return None
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


@dataclass(frozen=True)
class ChunkProgress:
    """Counts and timing of one table's chunks.

    Attributes
    ----------
    done, total : int
        Finished chunks and all chunks.
    first_started : datetime or None
        Earliest claim of any chunk (UTC).
    last_finished : datetime or None
        Latest chunk completion (UTC).
    cpu_seconds : float
        Sum of the finished chunks' CPU time, seconds.
    workers : tuple of str
        Distinct ``worker`` labels of the finished chunks, sorted.
    """

    done: int
    total: int
    first_started: datetime | None = None
    last_finished: datetime | None = None
    cpu_seconds: float = 0.0
    workers: tuple[str, ...] = ()


@dataclass(frozen=True)
class ChunkBlobs:
    """The stored result of one finished chunk (little-endian blobs, see ``TableChunk``)."""

    index: int
    values: bytes
    low_index: bytes
    low_x: bytes


@dataclass(frozen=True)
class ChunkWrite:
    """One computed chunk to store (:meth:`TableRepository.finish_chunks`)."""

    index: int
    values: bytes
    low_index: bytes
    low_x: bytes
    cpu_seconds: float


@dataclass(frozen=True)
class OpenChunk:
    """A chunk not done yet and its lease (UTC; ``None``: nobody holds it)."""

    index: int
    lease_until: datetime | None

    def claimable(self, now: datetime) -> bool:
        """Whether a worker may claim it at ``now`` (no live lease)."""
        return self.lease_until is None or self.lease_until < now


@dataclass(frozen=True)
class ChunkKey:
    """A chunk to re-dispatch and why (``"expired"`` lease or ``"lost"`` message)."""

    table_id: str
    index: int
    reason: str


@dataclass(frozen=True)
class ChunkPace:
    """Chunks finished in a period: how many, their CPU-seconds, the workers that did them."""

    chunks: int
    cpu_seconds: float
    workers: int


def _rowcount(result: Any) -> int:
    assert isinstance(result, CursorResult)
    return int(result.rowcount)


class TableRepository:
    """Queries and conditional updates on ``tables`` and ``table_chunks``.

    Parameters
    ----------
    session : Session
        The caller's session; this class flushes but never commits.
    """

    def __init__(self, session: Session) -> None:
        self.session = session

    # ------------------------------------------------------------------ tables
    def get(self, table_id: str, *, with_data: bool = False) -> Table | None:
        """Return the table with this id, or ``None``; ``with_data`` also loads the blob."""
        stmt = select(Table).where(Table.id == table_id)
        if with_data:
            stmt = stmt.options(undefer(Table.data))
        return self.session.execute(stmt).scalar_one_or_none()

    def get_by_spec_hash(self, spec_hash: str) -> Table | None:
        """Return the table whose spec hashes to ``spec_hash``, or ``None``."""
        stmt = select(Table).where(Table.spec_hash == spec_hash)
        return self.session.execute(stmt).scalar_one_or_none()

    def get_data(self, table_id: str) -> bytes | None:
        """Return only the encoded data of a table (``None`` if absent or not merged)."""
        stmt = select(Table.data).where(Table.id == table_id)
        return self.session.execute(stmt).scalar_one_or_none()

    def add(self, table: Table) -> None:
        """Add a new table and flush (raises ``IntegrityError`` on a duplicate spec)."""
        self.session.add(table)
        self.session.flush()

    def add_chunks(self, table_id: str, n_chunks: int, *, dispatched_at: datetime) -> None:
        """Insert ``n_chunks`` pending chunk rows ``0 .. n_chunks-1`` for a table."""
        rows = [
            {
                "table_id": table_id,
                "index": i,
                "status": "pending",
                "attempts": 0,
                "dispatched_at": dispatched_at,
            }
            for i in range(n_chunks)
        ]
        if rows:
            self.session.execute(insert(TableChunk), rows)

    def _filters(self, function_id: str | None, status: str | None) -> list[Any]:
        filters: list[Any] = []
        if function_id is not None:
            filters.append(Table.function_id == function_id)
        if status is not None:
            filters.append(Table.status == status)
        return filters

    def list(
        self,
        *,
        function_id: str | None = None,
        status: str | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> Sequence[Table]:
        """Return tables, newest first, optionally filtered by function and status."""
        stmt = (
            select(Table)
            .where(*self._filters(function_id, status))
            .order_by(Table.created_at.desc(), Table.id)
            .limit(limit)
            .offset(offset)
        )
        return self.session.execute(stmt).scalars().all()

    def count(self, *, function_id: str | None = None, status: str | None = None) -> int:
        """Return how many tables match the filters of :meth:`list`."""
        stmt = select(func.count()).select_from(Table).where(*self._filters(function_id, status))
        return int(self.session.execute(stmt).scalar_one())

    def mark_started(self, table_id: str, *, now: datetime) -> None:
        """Record the first chunk claim of a table (no-op once set)."""
        self.session.execute(
            update(Table)
            .where(Table.id == table_id, Table.started_at.is_(None))
            .values(started_at=now)
        )

    def mark_failed(self, table_id: str, error: str, *, now: datetime) -> bool:
        """Fail a table that is still building or merging; return whether it changed."""
        result = self.session.execute(
            update(Table)
            .where(Table.id == table_id, Table.status.in_(("building", "merging")))
            .values(status="failed", error=error, finished_at=now, merge_lease_until=None)
        )
        return _rowcount(result) == 1

    def reset_failed(self, table_id: str) -> bool:
        """Put a failed table back to ``building``; finished chunks are kept, leases dropped."""
        result = self.session.execute(
            update(Table)
            .where(Table.id == table_id, Table.status == "failed")
            .values(status="building", error=None, finished_at=None, merge_lease_until=None)
        )
        if _rowcount(result) != 1:
            return False
        self.session.execute(
            update(TableChunk)
            .where(TableChunk.table_id == table_id, TableChunk.status == "pending")
            .values(lease_until=None)
        )
        return True

    def delete(self, table_id: str) -> bool:
        """Delete a table and (by cascade) its chunks; return whether it existed."""
        self.session.execute(delete(TableChunk).where(TableChunk.table_id == table_id))
        result = self.session.execute(delete(Table).where(Table.id == table_id))
        return _rowcount(result) == 1

    # ------------------------------------------------------------------ chunks
    def chunk_progress(self, table_ids: Iterable[str]) -> dict[str, ChunkProgress]:
        """Return :class:`ChunkProgress` for each of ``table_ids`` in one grouped query."""
        ids = list(table_ids)
        if not ids:
            return {}
        out = {i: ChunkProgress(done=0, total=0) for i in ids}
        for table_id, total, done, first, last, cpu in self.session.execute(
            self.progress_statement(ids)
        ):
            out[table_id] = ChunkProgress(
                done=int(done),
                total=int(total),
                first_started=as_utc(first),
                last_finished=as_utc(last),
                cpu_seconds=float(cpu),
            )
        return out

    @staticmethod
    def progress_statement(table_ids: Sequence[str]) -> Select[Any]:
        """The query of :meth:`chunk_progress` (it reads only the columns of the covering
        index ``ix_table_chunks_progress``, never a chunk row and its blobs)."""
        is_done = TableChunk.status == "done"
        return (
            select(
                TableChunk.table_id,
                func.count(),
                func.coalesce(func.sum(case((is_done, 1), else_=0)), 0),
                func.min(TableChunk.started_at),
                func.max(TableChunk.finished_at),
                func.coalesce(func.sum(TableChunk.cpu_seconds), 0.0),
            )
            .where(TableChunk.table_id.in_(table_ids))
            .group_by(TableChunk.table_id)
        )

    @staticmethod
    def workers_statement(table_id: str) -> Select[Any]:
        """The query of :meth:`chunk_workers` (covered by ``ix_table_chunks_progress``)."""
        return (
            select(TableChunk.worker)
            .where(
                TableChunk.table_id == table_id,
                TableChunk.status == "done",
                TableChunk.worker.is_not(None),
            )
            .distinct()
            .order_by(TableChunk.worker)
        )

    def chunk_workers(self, table_id: str) -> tuple[str, ...]:
        """Return the distinct worker labels that finished chunks of a table, sorted."""
        return tuple(
            str(w) for w in self.session.execute(self.workers_statement(table_id)).scalars()
        )

    def get_chunk(self, table_id: str, index: int) -> TableChunk | None:
        """Return one chunk row (blobs stay unloaded), or ``None``."""
        stmt = select(TableChunk).where(TableChunk.table_id == table_id, TableChunk.index == index)
        return self.session.execute(stmt).scalar_one_or_none()

    def claim_chunk(
        self, table_id: str, index: int, *, now: datetime, lease_until: datetime, worker: str
    ) -> bool:
        """Lease a pending chunk that nobody holds a live lease on; return whether we got it.

        Each successful claim increments ``attempts``.
        """
        result = self.session.execute(
            update(TableChunk)
            .where(
                TableChunk.table_id == table_id,
                TableChunk.index == index,
                TableChunk.status == "pending",
                or_(TableChunk.lease_until.is_(None), TableChunk.lease_until < now),
            )
            .values(
                lease_until=lease_until,
                attempts=TableChunk.attempts + 1,
                worker=worker,
                started_at=now,
            )
        )
        return _rowcount(result) == 1

    def open_chunks(self, table_id: str) -> builtins.list[OpenChunk]:
        """The chunks of a table not done yet, with their leases, ascending (one query)."""
        stmt = (
            select(TableChunk.index, TableChunk.lease_until)
            .where(TableChunk.table_id == table_id, TableChunk.status != "done")
            .order_by(TableChunk.index)
        )
        return [OpenChunk(int(i), as_utc(lease)) for i, lease in self.session.execute(stmt)]

    def claim_chunks(
        self,
        table_id: str,
        indices: Iterable[int],
        *,
        now: datetime,
        lease_until: datetime,
        worker: str,
    ) -> builtins.list[int]:
        """Lease the claimable chunks among ``indices`` in one statement.

        Claimable as in :meth:`claim_chunk` (pending, no live lease); each claimed chunk's
        ``attempts`` is incremented. Returns the indices claimed, ascending.
        """
        wanted = sorted(set(indices))
        if not wanted:
            return []
        stmt = (
            update(TableChunk)
            .where(
                TableChunk.table_id == table_id,
                TableChunk.index.in_(wanted),
                TableChunk.status == "pending",
                or_(TableChunk.lease_until.is_(None), TableChunk.lease_until < now),
            )
            .values(
                lease_until=lease_until,
                attempts=TableChunk.attempts + 1,
                worker=worker,
                started_at=now,
            )
            .returning(TableChunk.index)
            .execution_options(synchronize_session=False)
        )
        return sorted(int(i) for i in self.session.execute(stmt).scalars())

    def finish_chunks(
        self,
        table_id: str,
        chunks: Sequence[ChunkWrite],
        *,
        worker: str,
        now: datetime,
        store_blobs: bool = True,
    ) -> builtins.list[int]:
        """Store computed chunks in one ``UPDATE``, each unless it is done already.

        The blobs and CPU seconds of the chunks are bound per row (``CASE index WHEN ...``), so
        one statement writes them all; a chunk another worker finished first is left as it is.
        ``store_blobs=False`` marks them done without their blobs (the caller stores the merged
        table in the same transaction).

        Returns
        -------
        list of int
            The indices this call wrote, ascending.
        """
        if not chunks:
            return []

        def per_chunk(values: Sequence[float | bytes], binary: bool = False) -> Case[Any]:
            type_ = LargeBinary() if binary else None
            whens = {c.index: literal(v, type_) for c, v in zip(chunks, values, strict=True)}
            return case(whens, value=TableChunk.index)

        stmt = (
            update(TableChunk)
            .where(
                TableChunk.table_id == table_id,
                TableChunk.index.in_([c.index for c in chunks]),
                TableChunk.status != "done",
            )
            .values(
                status="done",
                cpu_seconds=per_chunk([c.cpu_seconds for c in chunks]),
                worker=worker,
                finished_at=now,
                lease_until=None,
            )
            .returning(TableChunk.index)
            .execution_options(synchronize_session=False)
        )
        if store_blobs:
            stmt = stmt.values(
                values=per_chunk([c.values for c in chunks], binary=True),
                low_index=per_chunk([c.low_index for c in chunks], binary=True),
                low_x=per_chunk([c.low_x for c in chunks], binary=True),
            )
        return sorted(int(i) for i in self.session.execute(stmt).scalars())

    def seconds_per_point(self, function_id: str, *, limit: int = 256) -> float | None:
        """Mean CPU seconds per Sobol point of the latest finished chunks of a function.

        From up to ``limit`` chunks (most recently finished first) of its tables; ``None``
        when none has finished.
        """
        recent = (
            select(TableChunk.cpu_seconds.label("cpu"), Table.chunk_size.label("size"))
            .join(Table, Table.id == TableChunk.table_id)
            .where(
                Table.function_id == function_id,
                TableChunk.status == "done",
                TableChunk.cpu_seconds.is_not(None),
            )
            .order_by(TableChunk.finished_at.desc())
            .limit(limit)
            .subquery()
        )
        cpu, points = self.session.execute(
            select(func.sum(recent.c.cpu), func.sum(recent.c.size))
        ).one()
        if cpu is None or not points:
            return None
        return float(cpu) / float(points)

    def release_chunk(self, table_id: str, index: int) -> None:
        """Drop the lease of a pending chunk (so the next message may claim it at once)."""
        self.release_chunks(table_id, [index])

    def release_chunks(self, table_id: str, indices: Iterable[int]) -> None:
        """Drop the leases of pending chunks (:meth:`release_chunk` of each, one statement)."""
        self.session.execute(
            update(TableChunk)
            .where(
                TableChunk.table_id == table_id,
                TableChunk.index.in_(list(indices)),
                TableChunk.status == "pending",
            )
            .values(lease_until=None)
        )

    def finish_chunk(
        self,
        table_id: str,
        index: int,
        *,
        values: bytes,
        low_index: bytes,
        low_x: bytes,
        cpu_seconds: float,
        worker: str,
        now: datetime,
    ) -> bool:
        """Store a chunk's result unless it is already done; return whether this call wrote it."""
        result = self.session.execute(
            update(TableChunk)
            .where(
                TableChunk.table_id == table_id,
                TableChunk.index == index,
                TableChunk.status != "done",
            )
            .values(
                status="done",
                values=values,
                low_index=low_index,
                low_x=low_x,
                cpu_seconds=cpu_seconds,
                worker=worker,
                finished_at=now,
                lease_until=None,
            )
        )
        return _rowcount(result) == 1

    def all_chunks_done(self, table_id: str) -> bool:
        """Return whether no chunk of the table is still pending."""
        stmt = select(~exists().where(TableChunk.table_id == table_id, TableChunk.status != "done"))
        return bool(self.session.execute(stmt).scalar_one())

    def pending_chunk_indices(self, table_id: str) -> builtins.list[int]:
        """Return the indices of the chunks not yet done, ascending."""
        stmt = (
            select(TableChunk.index)
            .where(TableChunk.table_id == table_id, TableChunk.status != "done")
            .order_by(TableChunk.index)
        )
        return list(self.session.execute(stmt).scalars())

    def iter_chunk_blobs(self, table_id: str) -> Iterator[ChunkBlobs]:
        """Yield the finished chunks' blobs in index (= Sobol) order (none once merged)."""
        stmt = (
            select(TableChunk.index, TableChunk.values, TableChunk.low_index, TableChunk.low_x)
            .where(
                TableChunk.table_id == table_id,
                TableChunk.status == "done",
                TableChunk.values.is_not(None),
            )
            .order_by(TableChunk.index)
            .execution_options(yield_per=16)
        )
        for index, values, low_index, low_x in self.session.execute(stmt):
            # a done chunk keeps all three blobs until the merge clears them together
            assert values is not None
            assert low_index is not None
            assert low_x is not None
            yield ChunkBlobs(int(index), bytes(values), bytes(low_index), bytes(low_x))

    def clear_chunk_blobs(self, table_id: str, *, stored_only: bool = False) -> None:
        """Drop the chunk blobs of a merged table (the merged data replaces them);
        ``stored_only`` touches only the rows that hold blobs."""
        stmt = update(TableChunk).where(TableChunk.table_id == table_id)
        if stored_only:
            stmt = stmt.where(TableChunk.values.is_not(None))
        self.session.execute(stmt.values(values=None, low_index=None, low_x=None))

    def clear_ready_chunk_blobs(self) -> int:
        """Drop the chunk blobs left on ready tables (a merger died before it cleared them);
        return how many chunk rows were cleared."""
        ready = select(Table.id).where(Table.status == "ready")
        result = self.session.execute(
            update(TableChunk)
            .where(TableChunk.table_id.in_(ready), TableChunk.values.is_not(None))
            .values(values=None, low_index=None, low_x=None)
            .execution_options(synchronize_session=False)
        )
        return _rowcount(result)

    # ------------------------------------------------------------------ merge
    def claim_merge(self, table_id: str, *, now: datetime, lease_until: datetime) -> bool:
        """Move a table to ``merging`` if we may merge it; return whether we won.

        We may if it is ``building`` with every chunk done, or ``merging`` under an expired
        lease (the previous merger died).
        """
        all_done = ~exists().where(TableChunk.table_id == table_id, TableChunk.status != "done")
        result = self.session.execute(
            update(Table)
            .where(
                Table.id == table_id,
                or_(
                    and_(Table.status == "building", all_done),
                    and_(
                        Table.status == "merging",
                        or_(Table.merge_lease_until.is_(None), Table.merge_lease_until < now),
                    ),
                ),
            )
            .values(status="merging", merge_lease_until=lease_until)
        )
        return _rowcount(result) == 1

    def finish_merge(
        self,
        table_id: str,
        *,
        data: bytes,
        data_sha256: str,
        max_interp_error: float,
        summary: dict[str, Any],
        provenance: dict[str, Any],
        now: datetime,
    ) -> bool:
        """Store the merged data and mark the table ready, if it is still ``merging``."""
        return self._store_ready(
            table_id,
            "merging",
            data=data,
            data_sha256=data_sha256,
            max_interp_error=max_interp_error,
            summary=summary,
            provenance=provenance,
            now=now,
        )

    def finish_built(
        self,
        table_id: str,
        *,
        data: bytes,
        data_sha256: str,
        max_interp_error: float,
        summary: dict[str, Any],
        provenance: dict[str, Any],
        now: datetime,
    ) -> bool:
        """Store the data of a table merged by the task that finished its last chunks (in the
        same transaction) and mark it ready, if it is still ``building``."""
        return self._store_ready(
            table_id,
            "building",
            data=data,
            data_sha256=data_sha256,
            max_interp_error=max_interp_error,
            summary=summary,
            provenance=provenance,
            now=now,
        )

    def _store_ready(
        self,
        table_id: str,
        from_status: str,
        *,
        data: bytes,
        data_sha256: str,
        max_interp_error: float,
        summary: dict[str, Any],
        provenance: dict[str, Any],
        now: datetime,
    ) -> bool:
        """Store a table's data and mark it ready if its status is still ``from_status``."""
        result = self.session.execute(
            update(Table)
            .where(Table.id == table_id, Table.status == from_status)
            .values(
                status="ready",
                data=data,
                data_sha256=data_sha256,
                max_interp_error=max_interp_error,
                summary=summary,
                provenance=provenance,
                finished_at=now,
                merge_lease_until=None,
                error=None,
            )
        )
        return _rowcount(result) == 1

    # ------------------------------------------------------------------ re-dispatch
    def chunks_to_redispatch(
        self, *, now: datetime, lost_before: datetime
    ) -> builtins.list[ChunkKey]:
        """Return pending chunks of building tables whose work was lost.

        ``"expired"``: claimed, but the lease ran out (the worker died or is too slow).
        ``"lost"``: never claimed since it was last dispatched before ``lost_before``
        (the message was lost, e.g. with the queue).
        """
        expired = and_(TableChunk.lease_until.is_not(None), TableChunk.lease_until < now)
        lost = and_(
            TableChunk.lease_until.is_(None),
            or_(TableChunk.dispatched_at.is_(None), TableChunk.dispatched_at < lost_before),
        )
        stmt = (
            select(TableChunk.table_id, TableChunk.index, TableChunk.lease_until)
            .join(Table, Table.id == TableChunk.table_id)
            .where(Table.status == "building", TableChunk.status == "pending", or_(expired, lost))
            .order_by(Table.created_at, TableChunk.table_id, TableChunk.index)
        )
        return [
            ChunkKey(t, int(i), "lost" if lease is None else "expired")
            for t, i, lease in self.session.execute(stmt)
        ]

    def chunk_pace(self, *, since: datetime) -> ChunkPace:
        """Chunks finished at or after ``since`` (any table), their CPU-seconds and their
        distinct worker labels (one per worker process)."""
        stmt = select(
            func.count(),
            func.coalesce(func.sum(TableChunk.cpu_seconds), 0.0),
            func.count(TableChunk.worker.distinct()),
        ).where(TableChunk.status == "done", TableChunk.finished_at >= since)
        chunks, cpu, workers = self.session.execute(stmt).one()
        return ChunkPace(int(chunks), float(cpu or 0.0), int(workers))

    def queued_chunk_count(self, *, dispatched_since: datetime) -> int:
        """Pending, unclaimed chunks of building tables dispatched at or after
        ``dispatched_since``: their messages are in the queue as far as the database knows."""
        stmt = (
            select(func.count())
            .select_from(TableChunk)
            .join(Table, Table.id == TableChunk.table_id)
            .where(
                Table.status == "building",
                TableChunk.status == "pending",
                TableChunk.lease_until.is_(None),
                TableChunk.dispatched_at >= dispatched_since,
            )
        )
        return int(self.session.execute(stmt).scalar_one())

    def mark_dispatched(self, keys: Iterable[ChunkKey], *, now: datetime) -> None:
        """Record a (re-)dispatch: clear the expired lease and stamp ``dispatched_at``."""
        for key in keys:
            self.session.execute(
                update(TableChunk)
                .where(
                    TableChunk.table_id == key.table_id,
                    TableChunk.index == key.index,
                    TableChunk.status == "pending",
                )
                .values(dispatched_at=now, lease_until=None)
            )

    def mark_undispatched(self, spans: Iterable[TaskSpan]) -> None:
        """Record that the messages of ``spans`` were never queued (the queue refused them):
        their pending, unclaimed chunks get no ``dispatched_at``, so the next
        :meth:`chunks_to_redispatch` returns them as ``"lost"`` at once, not a lease later."""
        for span in spans:
            where = [
                TableChunk.table_id == span.table_id,
                TableChunk.index >= span.first,
                TableChunk.status == "pending",
                TableChunk.lease_until.is_(None),
            ]
            if span.count is not None:
                where.append(TableChunk.index < span.first + span.count)
            self.session.execute(update(TableChunk).where(*where).values(dispatched_at=None))

    def tables_to_merge(self, *, now: datetime) -> builtins.list[str]:
        """Return tables whose merge should be (re-)enqueued.

        Building tables with every chunk done (the chunk that completed the set died before
        merging) and merging tables whose merge lease expired.
        """
        pending = exists().where(TableChunk.table_id == Table.id, TableChunk.status != "done")
        stmt = (
            select(Table.id)
            .where(
                or_(
                    and_(Table.status == "building", ~pending),
                    and_(
                        Table.status == "merging",
                        or_(Table.merge_lease_until.is_(None), Table.merge_lease_until < now),
                    ),
                )
            )
            .order_by(Table.created_at, Table.id)
        )
        return list(self.session.execute(stmt).scalars())
