"""The worker side of table building: chunks, merge, recovery (see :mod:`app.services.tables`).

:func:`run_chunk` leases a chunk, evaluates it (:func:`compute_chunk`, the maths in
:mod:`app.domain.tablebuild`), stores it once; the chunk that completes the set merges
(:func:`merge`); :func:`redispatch` (periodic) re-enqueues what the queue lost. Every step is
decided by a conditional ``UPDATE`` (:mod:`app.repositories.tables`), so a killed worker or a
lost message delays a table but never loses or duplicates a chunk.
"""

from __future__ import annotations

import hashlib
import logging
import os
import socket
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypedDict

import numpy as np

from app.config import Settings
from app.db import session_scope
from app.domain import absrank, sampling, tablebuild
from app.domain.functions import get_function
from app.domain.notices import Refusal
from app.domain.tablebuild import (
    NOISE_BLOCK,
    NOISE_STREAM,
    SUMMARY_LEVELS,
    BuiltTable,
    Combined,
    SampleSummary,
    combine_chunks,
    noise_normals,
    region_intersected,
    summarize,
)
from app.repositories.tables import ChunkBlobs, ChunkWrite, ClaimState, TableRepository, as_utc
from app.services._table_specs import SM, Dispatcher, spec_versions, utc_now
from app.services.ladders import kept_provenance

__all__ = [
    "NOISE_BLOCK",
    "NOISE_STREAM",
    "SUMMARY_LEVELS",
    "BuiltTable",
    "Combined",
    "Redispatched",
    "SampleSummary",
    "TaskCosts",
    "combine_chunks",
    "compute_chunk",
    "compute_chunks",
    "compute_table_data",
    "merge",
    "noise_normals",
    "redispatch",
    "run_chunk",
    "summarize",
    "task_chunks",
]

logger = logging.getLogger(__name__)


def _worker_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# ---------------------------------------------------------------------------- building


#: Most chunks one task claims (bounds a task's lease, memory and the work a killed worker
#: delays).
MAX_TASK_CHUNKS = 256


@dataclass
class TaskCosts:
    """CPU seconds per Sobol point of each function, as one worker process measured them (or
    read them from the finished chunks of earlier tables): they size the tasks of cheap
    functions. A worker process keeps one (:func:`workers.app.worker_costs`); a task given
    none reads the cost from the database.

    Attributes
    ----------
    seconds_per_point : dict of str to float
        By function id.
    """

    seconds_per_point: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class _Claimed:
    spec: dict[str, Any]
    n: int
    chunk_size: int
    function_id: str
    indices: tuple[int, ...]
    completes: bool


def _skipped(code: str, message: str) -> Refusal:
    return Refusal(code, message, field="table_id")


def task_chunks(task_seconds: float, seconds_per_point: float | None, chunk_size: int) -> int:
    """How many chunks one task should claim to do about ``task_seconds`` of work.

    Parameters
    ----------
    task_seconds : float
        Target work per task; ``0`` claims one chunk per task.
    seconds_per_point : float or None
        Measured cost of one point; ``None`` (unknown yet) claims one chunk, whose cost then
        sizes the next tasks.
    chunk_size : int
        ``B``.

    Returns
    -------
    int
        Between 1 and :data:`MAX_TASK_CHUNKS`.
    """
    if task_seconds <= 0 or seconds_per_point is None:
        return 1
    per_chunk = max(seconds_per_point * chunk_size, 1e-9)
    return max(1, min(MAX_TASK_CHUNKS, int(task_seconds / per_chunk)))


def _span(
    repo: TableRepository,
    state: ClaimState,
    task_seconds: float,
    share: int,
    pending: int,
    costs: TaskCosts,
) -> int:
    """Chunks a task takes (:func:`task_chunks` at the function's known cost; with ``share``
    workers, at most ``1/(2·share)`` of the ``pending`` chunks)."""
    known = costs.seconds_per_point
    cost = known.get(state.function_id)
    if cost is None:
        cost = repo.seconds_per_point(state.function_id)
        if cost is not None:
            known[state.function_id] = cost
    span = task_chunks(task_seconds, cost, state.chunk_size)
    if share > 1:
        # the last tasks get smaller, so that the workers finish together
        span = min(span, max(1, -(-pending // (2 * share))))
    return span


def _claim(
    sm: SM,
    settings: Settings,
    table_id: str,
    index: int,
    worker: str,
    task_seconds: float,
    share: int,
    costs: TaskCosts,
) -> _Claimed | Refusal:
    """Lease chunk ``index`` (and, for a cheap function, the next pending ones: about
    ``task_seconds`` of work in all, at most ``1/(2·share)`` of the chunks left); a
    :class:`Refusal` whose ``code`` is :func:`run_chunk`'s outcome."""
    now = utc_now()
    with session_scope(sm) as session:
        repo = TableRepository(session)
        state = repo.claim_state(table_id, index)
        if state is None:
            return _skipped("unknown", f"no table {table_id}")
        if state.status != "building":
            return _skipped(f"skipped-{state.status}", f"table {table_id} is {state.status}")
        if state.chunk_status is None:
            return _skipped("unknown", f"table {table_id} has no chunk {index}")
        if state.chunk_status == "done":
            return _skipped("skipped-done", f"chunk {table_id}/{index} is done")
        lease_until = state.chunk_lease_until
        if lease_until is not None and lease_until >= now:
            # read first: a live lease is the usual duplicate, and needs no write lock
            return _skipped("skipped-leased", f"chunk {table_id}/{index} is leased")
        lease = now + timedelta(seconds=settings.chunk_lease_seconds)
        if not repo.claim_chunk(table_id, index, now=now, lease_until=lease, worker=worker):
            return _skipped("skipped-leased", f"chunk {table_id}/{index} is leased")
        indices, completes = [index], False
        if task_seconds > 0:
            pending = repo.pending_chunk_indices(table_id)
            span = _span(repo, state, task_seconds, share, len(pending), costs)
            if span > 1 and index + 1 < state.n_chunks:
                indices += repo.claim_following(
                    table_id, index, span - 1, now=now, lease_until=lease, worker=worker
                )
            # this task holds every chunk not done yet: it may merge with no blob written
            completes = set(pending) <= set(indices)
        if not state.started:
            repo.mark_started(table_id, now=now)
        return _Claimed(
            state.spec, state.n, state.chunk_size, state.function_id, tuple(indices), completes
        )


def _fail(sm: SM, table_id: str, error: str, *, chunks: Iterable[int] = ()) -> None:
    logger.error("table %s failed: %s", table_id, error)
    with session_scope(sm) as session:
        repo = TableRepository(session)
        repo.mark_failed(table_id, error, now=utc_now())
        repo.release_chunks(table_id, chunks)


def compute_chunk(spec: Mapping[str, Any], index: int, chunk_size: int) -> sampling.ChunkResult:
    """Evaluate chunk ``index`` of the table of ``spec``.

    The maths is :func:`app.domain.tablebuild.compute_chunk`; this resolves the function.

    Raises
    ------
    app.domain.errors.DomainError
        Unknown function (the spec was validated when the table was made).
    """
    return tablebuild.compute_chunk(
        get_function(spec["function_id"]),
        spec["region"],
        seed=int(spec["seed"]),
        k_exact=int(spec["representation"]["k_exact"]),
        index=index,
        chunk_size=chunk_size,
    )


def compute_chunks(
    spec: Mapping[str, Any], first: int, count: int, chunk_size: int
) -> Iterator[sampling.ChunkResult]:
    """Evaluate chunks ``first … first + count − 1`` of the table of ``spec``, in order.

    Each equals :func:`compute_chunk` of that chunk byte for byte; one Sobol engine serves
    them all (:func:`app.domain.tablebuild.compute_chunks`). A single chunk goes through
    :func:`compute_chunk`.
    """
    if count == 1:
        yield compute_chunk(spec, first, chunk_size)
        return
    yield from tablebuild.compute_chunks(
        get_function(spec["function_id"]),
        spec["region"],
        seed=int(spec["seed"]),
        k_exact=int(spec["representation"]["k_exact"]),
        first=first,
        count=count,
        chunk_size=chunk_size,
    )


def _runs(indices: Iterable[int]) -> list[tuple[int, int]]:
    """``(first, count)`` of each run of consecutive indices (ascending input)."""
    runs: list[tuple[int, int]] = []
    for i in indices:
        if runs and runs[-1][0] + runs[-1][1] == i:
            runs[-1] = (runs[-1][0], runs[-1][1] + 1)
        else:
            runs.append((i, 1))
    return runs


def _checked(
    result: sampling.ChunkResult, claimed: _Claimed, index: int, cpu: float
) -> ChunkWrite | str:
    """The blobs of a computed chunk, or why it is refused."""
    values = np.ascontiguousarray(result.values, dtype="<f8")
    # an intersected level's points outside the domain carry +inf (never evaluated)
    allowed = np.isposinf(values) if region_intersected(claimed.spec["region"]) else False
    if values.shape != (claimed.chunk_size,) or not np.all(np.isfinite(values) | allowed):
        return f"chunk {index}: expected {claimed.chunk_size} finite values"
    return ChunkWrite(
        index,
        values.tobytes(),
        np.ascontiguousarray(result.low_index, dtype="<i8").tobytes(),
        np.ascontiguousarray(result.low_x, dtype="<f8").tobytes(),
        cpu,
    )


def run_chunk(
    sm: SM,
    settings: Settings,
    table_id: str,
    index: int,
    *,
    task_seconds: float = 0.0,
    share: int = 1,
    costs: TaskCosts | None = None,
) -> str:
    """Build chunk ``index`` of a table; merge the table if this chunk completed it.

    Idempotent and safe to run concurrently or twice: a ready/failed table or a finished chunk
    is skipped, a chunk leased by a live worker is skipped, and the result is written only if
    the chunk is not done yet.

    With ``task_seconds > 0`` (the workers pass ``settings.table_task_seconds``) the task also
    claims the next pending chunks, as many as take about that long at the function's measured
    cost per point, and evaluates them from one Sobol engine: a cheap function's table is built
    in a few tasks instead of one per chunk. The chunks stay the unit of storage, so the
    table's chunking, progress and bytes do not change; the messages of the chunks taken along
    find them leased or done and are skipped.

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
        ``chunk_lease_seconds`` bounds how long a claim blocks other workers.
    table_id : str
    index : int
        Chunk number: Sobol indices ``[index·B, (index+1)·B)``.
    task_seconds : float, default 0
        Target work of this task (``0``: chunk ``index`` only).
    share : int, default 1
        Workers expected to share the table (the consumer's processes): with more than one, a
        task takes at most ``1/(2·share)`` of the chunks left, so the last tasks are short and
        the workers finish together.
    costs : TaskCosts, optional
        The worker process's measured costs per point (updated with this task's); default:
        read from the database.

    Returns
    -------
    str
        What happened: ``"done"`` (written), ``"merged"`` (written and merged the table),
        ``"duplicate"`` (computed but another worker wrote first), ``"skipped-done"``,
        ``"skipped-leased"``, ``"skipped-<table status>"``, ``"unknown"`` or ``"failed"``.
    """
    worker = _worker_label()
    costs = costs if costs is not None else TaskCosts()
    claimed = _claim(sm, settings, table_id, index, worker, task_seconds, share, costs)
    if isinstance(claimed, Refusal):
        logger.debug("chunk %s/%d: %s", table_id, index, claimed.code)
        return claimed.code
    versions = spec_versions()
    if versions != claimed.spec["versions"]:
        _fail(
            sm,
            table_id,
            f"worker {worker} has library versions {versions}, but the table spec was "
            f"made with {claimed.spec['versions']}; workers must run the same versions "
            "(chunks would not be bit-identical)",
            chunks=claimed.indices,
        )
        return "failed"
    writes: list[ChunkWrite] = []
    for first, count in _runs(claimed.indices):
        j = first
        t0 = time.process_time()
        try:
            for result in compute_chunks(claimed.spec, first, count, claimed.chunk_size):
                cpu = time.process_time() - t0
                checked = _checked(result, claimed, j, cpu)
                if isinstance(checked, str):
                    _fail(sm, table_id, checked, chunks=claimed.indices)
                    return "failed"
                writes.append(checked)
                j += 1
                t0 = time.process_time()
        except Exception as exc:
            _fail(sm, table_id, f"chunk {j}: {type(exc).__name__}: {exc}", chunks=claimed.indices)
            return "failed"
    points = len(writes) * claimed.chunk_size
    costs.seconds_per_point[claimed.function_id] = sum(w.cpu_seconds for w in writes) / points
    if claimed.completes:
        finished = _finish_table(sm, table_id, writes, worker=worker)
        if finished is None:
            return "failed"
        if finished:
            return "merged"
    with session_scope(sm) as session:
        wrote = TableRepository(session).finish_chunks(
            table_id, writes, worker=worker, now=utc_now()
        )
    if not wrote:
        return "duplicate"
    # a new transaction sees every chunk committed so far, also those of workers that
    # finished at the same time as this one
    with session_scope(sm) as session:
        complete = TableRepository(session).all_chunks_done(table_id)
    if complete and merge(sm, settings, table_id):
        return "merged"
    return "done"


# ---------------------------------------------------------------------------- merging


def compute_table_data(spec: Mapping[str, Any], *, chunk_size: int | None = None) -> bytes:
    """Build a table in this process, without a database, and return its encoded bytes.

    Uses the same chunk evaluation and merge as the workers, so for any ``chunk_size`` the
    bytes equal those a distributed build stores (the reference for tests and benchmarks).

    Parameters
    ----------
    spec : dict
        A spec from :func:`table_spec`.
    chunk_size : int, optional
        Sobol points per chunk (a power of two dividing ``N``); default one chunk of ``N``.

    Returns
    -------
    bytes
        ``encode_table_data(build_table_data(...))``.
    """
    n = int(spec["n"])
    size = n if chunk_size is None else chunk_size
    blobs = []
    for index in range(sampling.chunk_plan(n, size)):
        r = compute_chunk(spec, index, size)
        blobs.append(
            ChunkBlobs(
                index,
                np.ascontiguousarray(r.values, dtype="<f8").tobytes(),
                np.ascontiguousarray(r.low_index, dtype="<i8").tobytes(),
                np.ascontiguousarray(r.low_x, dtype="<f8").tobytes(),
            )
        )
    data = _build(spec, blobs, n=n, chunk_size=size).data
    return absrank.encode_table_data(data)


def _build(
    spec: Mapping[str, Any], chunks: Iterable[ChunkBlobs], *, n: int, chunk_size: int
) -> BuiltTable:
    rep = spec["representation"]
    return tablebuild.build_table(
        chunks,
        n=n,
        chunk_size=chunk_size,
        dim=len(spec["region"]["lower"]),
        k_exact=int(rep["k_exact"]),
        n_knots=int(rep["n_knots"]),
        intersected=region_intersected(spec["region"]),
    )


@dataclass(frozen=True)
class _Merged:
    """What a merge stores on the table row."""

    data: bytes
    data_sha256: str
    max_interp_error: float
    summary: dict[str, Any]
    provenance: dict[str, Any]
    finished: datetime


def _merged(
    table: Any,
    chunks: Iterable[ChunkBlobs],
    *,
    cpu_seconds: float,
    workers: Iterable[str],
    t0: float,
    cpu0: float,
) -> _Merged:
    """Build, encode and describe a table from all its chunks (``table``: its ORM row)."""
    spec, n, chunk_size = dict(table.spec), int(table.n), int(table.chunk_size)
    created, started = as_utc(table.created_at), as_utc(table.started_at)
    built = _build(spec, chunks, n=n, chunk_size=chunk_size)
    data = built.data
    blob = absrank.encode_table_data(data)
    summary = summarize(built.values, sorted_values=built.sorted_values).as_json()
    del built
    finished = utc_now()
    provenance = {
        "spec_hash": table.spec_hash,
        "function_id": spec["function_id"],
        "region": spec["region"],
        "n": n,
        "seed": spec["seed"],
        "sampler": spec["sampler"],
        "sobol_seed_keyword": sampling.SOBOL_SEED_KEYWORD,
        "versions": spec["versions"],
        "representation": spec["representation"],
        "chunk_size": chunk_size,
        "n_chunks": int(table.n_chunks),
        "n_knots": int(np.asarray(data.values).size),
        "build": {
            "created_at": created.isoformat() if created else None,
            "started_at": started.isoformat() if started else None,
            "finished_at": finished.isoformat(),
            "wall_seconds": (finished - (started or created or finished)).total_seconds(),
            "chunk_cpu_seconds": cpu_seconds,
            "merge_seconds": time.perf_counter() - t0,
            "merge_cpu_seconds": time.process_time() - cpu0,
        },
        "workers": sorted({w.rsplit(":", 1)[0] for w in workers}),
        "merged_by": socket.gethostname(),
    }
    if region_intersected(spec["region"]):
        provenance["kept"] = kept_provenance(n, int(data.n))
    return _Merged(
        blob,
        hashlib.sha256(blob).hexdigest(),
        float(data.max_interp_error),
        summary,
        provenance,
        finished,
    )


def merge(sm: SM, settings: Settings, table_id: str) -> bool:
    """Merge a table whose chunks are all done; return whether this call made it ready.

    Claims the merge first (``building -> merging`` when every chunk is done, or a
    ``merging`` table whose merge lease expired), so concurrent callers merge once. Loads the
    chunks in index order, builds and encodes the table data, stores data, SHA-256, summary
    and provenance, marks the table ready and clears the chunk blobs in one transaction.
    Idempotent: a ready table, or one with chunks still pending, is left alone.

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
        ``chunk_lease_seconds`` is also the merge lease.
    table_id : str

    Returns
    -------
    bool
        ``True`` if this call stored the data.
    """
    now = utc_now()
    with session_scope(sm) as session:
        repo = TableRepository(session)
        lease = now + timedelta(seconds=settings.chunk_lease_seconds)
        if not repo.claim_merge(table_id, now=now, lease_until=lease):
            return False
        table = repo.get(table_id)
        assert table is not None
    t0, cpu0 = time.perf_counter(), time.process_time()
    try:
        with session_scope(sm) as session:
            repo = TableRepository(session)
            progress = repo.chunk_progress([table_id])[table_id]
            merged = _merged(
                table,
                repo.iter_chunk_blobs(table_id),
                cpu_seconds=progress.cpu_seconds,
                workers=repo.chunk_workers(table_id),
                t0=t0,
                cpu0=cpu0,
            )
    except Exception as exc:
        with session_scope(sm) as session:
            current = TableRepository(session).get(table_id)
        if current is not None and current.status == "ready":
            return False  # a concurrent merger won and dropped the chunk blobs under us
        _fail(sm, table_id, f"merge: {type(exc).__name__}: {exc}")
        return False
    with session_scope(sm) as session:
        repo = TableRepository(session)
        stored = repo.finish_merge(
            table_id,
            data=merged.data,
            data_sha256=merged.data_sha256,
            max_interp_error=merged.max_interp_error,
            summary=merged.summary,
            provenance=merged.provenance,
            now=merged.finished,
        )
        if stored:
            repo.clear_chunk_blobs(table_id)
    if stored:
        logger.info("table %s ready (%d samples, %d chunks)", table_id, table.n, table.n_chunks)
    return stored


def _finish_table(
    sm: SM, table_id: str, writes: Sequence[ChunkWrite], *, worker: str
) -> bool | None:
    """Store the last chunks of a table and the merged table in one transaction.

    For a task that holds every chunk not yet done (a cheap function's table is often one
    task): the table is merged from this task's results in memory and the other chunks' stored
    blobs, then one transaction marks this task's chunks done (their blobs are never written:
    the table data replaces them, as a merge would clear them), stores the table as ready and
    clears the other chunks' blobs. If any of this task's chunks was finished by someone else
    meanwhile, or the table is no longer building, the transaction is rolled back and nothing
    is written.

    Returns
    -------
    bool or None
        ``True``: stored and ready. ``False``: rolled back (store the chunks as usual).
        ``None``: the merge itself failed (the table was failed).
    """
    t0, cpu0 = time.perf_counter(), time.process_time()
    ours = {w.index for w in writes}
    try:
        with session_scope(sm) as session:
            repo = TableRepository(session)
            table = repo.get(table_id)
            if table is None or table.status != "building":
                return False
            others = [b for b in repo.iter_chunk_blobs(table_id) if b.index not in ours]
            if len(others) + len(ours) != int(table.n_chunks):
                return False  # a chunk is neither ours nor done
            progress = repo.chunk_progress([table_id])[table_id]
            mine = [ChunkBlobs(w.index, w.values, w.low_index, w.low_x) for w in writes]
            merged = _merged(
                table,
                sorted([*others, *mine], key=lambda b: b.index),
                cpu_seconds=progress.cpu_seconds + sum(w.cpu_seconds for w in writes),
                workers=[*repo.chunk_workers(table_id), worker],
                t0=t0,
                cpu0=cpu0,
            )
    except Exception as exc:
        _fail(sm, table_id, f"merge: {type(exc).__name__}: {exc}", chunks=ours)
        return None
    with session_scope(sm) as session:
        repo = TableRepository(session)
        wrote = repo.finish_chunks(
            table_id, writes, worker=worker, now=merged.finished, store_blobs=False
        )
        stored = len(wrote) == len(writes) and repo.finish_built(
            table_id,
            data=merged.data,
            data_sha256=merged.data_sha256,
            max_interp_error=merged.max_interp_error,
            summary=merged.summary,
            provenance=merged.provenance,
            now=merged.finished,
        )
        if not stored:
            session.rollback()
            return False
        repo.clear_chunk_blobs(table_id, stored_only=True)
    logger.info("table %s ready (%d samples, %d chunks)", table_id, table.n, table.n_chunks)
    return True


# ---------------------------------------------------------------------------- recovery


class Redispatched(TypedDict):
    """What :func:`redispatch` re-enqueued (a JSON-ready count: tasks and the CLI print it).

    Attributes
    ----------
    chunks_expired : int
        Chunks whose lease expired.
    chunks_lost : int
        Chunks never claimed since they were dispatched more than one lease ago.
    merges : int
        Tables whose merge was queued.
    """

    chunks_expired: int
    chunks_lost: int
    merges: int


def redispatch(
    sm: SM, settings: Settings, dispatcher: Dispatcher, *, now: datetime | None = None
) -> Redispatched:
    """Re-enqueue work the queue lost; the periodic task calls this every minute.

    * chunks of building tables whose lease expired (the worker died or overran the lease);
    * chunks never claimed since they were last dispatched more than one lease ago (a lost
      message; each such chunk is re-sent at most once per lease period);
    * merges: building tables with every chunk done, merging tables whose merge lease expired.

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
        ``chunk_lease_seconds``.
    dispatcher : Dispatcher
    now : datetime, optional
        Current UTC time (tests pass one).

    Returns
    -------
    Redispatched
        Counts of chunks re-sent (expired leases, lost messages) and of merges.
    """
    now = now or utc_now()
    lease = timedelta(seconds=settings.chunk_lease_seconds)
    with session_scope(sm) as session:
        repo = TableRepository(session)
        keys = repo.chunks_to_redispatch(now=now, lost_before=now - lease)
        repo.mark_dispatched(keys, now=now)
        merges = repo.tables_to_merge(now=now)
    for key in keys:
        dispatcher.enqueue_chunk(key.table_id, key.index)
    for table_id in merges:
        dispatcher.enqueue_merge(table_id)
    counts = Redispatched(
        chunks_expired=sum(k.reason == "expired" for k in keys),
        chunks_lost=sum(k.reason == "lost" for k in keys),
        merges=len(merges),
    )
    if keys or merges:
        logger.info("redispatch: %s", counts)
    return counts
