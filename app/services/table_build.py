"""The worker side of table building: chunks, merge, recovery (see :mod:`app.services.tables`).

:func:`run_chunk` leases a chunk, evaluates it (:func:`compute_chunk`, the maths in
:mod:`app.domain.tablebuild`), stores it once; the chunk that completes the set merges
(:func:`merge`); :func:`redispatch` (periodic, :mod:`app.services.table_redispatch`, re-exported
here) re-enqueues what the queue lost. Every step is
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
from typing import Any

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
    ChunkSpec,
    Combined,
    SampleSummary,
    TaskSpan,
    combine_chunks,
    noise_normals,
    summarize,
)
from app.errors import ServiceUnavailable
from app.models.tables import Table
from app.repositories.tables import ChunkBlobs, ChunkWrite, OpenChunk, TableRepository, as_utc
from app.services._table_specs import SM, Dispatcher, spec_versions, utc_now
from app.services.ladders import kept_provenance
from app.services.table_redispatch import Redispatched, redispatch, send

__all__ = [
    "NOISE_BLOCK",
    "NOISE_STREAM",
    "SUMMARY_LEVELS",
    "BuiltTable",
    "ChunkSpec",
    "Combined",
    "Redispatched",
    "SampleSummary",
    "TaskCosts",
    "TaskSpan",
    "combine_chunks",
    "compute_chunk",
    "compute_chunks",
    "compute_table_data",
    "merge",
    "noise_normals",
    "redispatch",
    "run_chunk",
    "run_span",
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
    """The chunks a task leased, and what it hands on."""

    spec: ChunkSpec
    function_id: str
    indices: tuple[int, ...]
    completes: bool  # it holds every chunk not done yet: it may merge with no blob written
    rest: TaskSpan | None  # the claimable chunks of its span after its own, for another task


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


def _task_size(
    repo: TableRepository,
    function_id: str,
    chunk_size: int,
    task_seconds: float,
    share: int,
    pending: int,
    costs: TaskCosts,
) -> int:
    """Chunks a task takes (:func:`task_chunks` at the function's known cost; with ``share``
    workers, at most ``1/(2·share)`` of the ``pending`` chunks: those no task holds yet, as in
    guided self-scheduling — counting the chunks leased to other tasks would leave a worker's
    last task up to twice too long while the others have nothing left to take)."""
    if task_seconds <= 0:
        return 1
    known = costs.seconds_per_point
    cost = known.get(function_id)
    if cost is None:
        cost = repo.seconds_per_point(function_id)
        if cost is not None:
            known[function_id] = cost
    size = task_chunks(task_seconds, cost, chunk_size)
    if share > 1:
        # the last tasks get smaller, so that the workers finish together
        size = min(size, max(1, -(-pending // (2 * share))))
    return size


#: Reads of the open chunks a claim makes when other workers take them first.
_CLAIM_TRIES = 3


def _unclaimed(span: TaskSpan, open_chunks: Sequence[OpenChunk], stop: int) -> Refusal:
    """Why a task claimed nothing of its span: every chunk of it is done, or leased."""
    where = f"{span.table_id}/{span.first}" + (f"-{stop - 1}" if stop - span.first > 1 else "")
    if any(span.first <= c.index < stop for c in open_chunks):
        # a live lease is the usual duplicate: found by a read, with no write lock
        return _skipped("skipped-leased", f"chunks {where} are leased")
    return _skipped("skipped-done", f"chunks {where} are done")


def _claim(
    sm: SM,
    settings: Settings,
    span: TaskSpan,
    worker: str,
    task_seconds: float,
    share: int,
    costs: TaskCosts,
) -> _Claimed | Refusal:
    """Lease the first claimable chunks of ``span`` (one; for a cheap function, about
    ``task_seconds`` of work, at most ``1/(2·share)`` of the chunks left); a :class:`Refusal`
    whose ``code`` is :func:`run_span`'s outcome."""
    now = utc_now()
    table_id = span.table_id
    with session_scope(sm) as session:
        repo = TableRepository(session)
        table = repo.get(table_id)
        if table is None:
            return _skipped("unknown", f"no table {table_id}")
        if table.status != "building":
            return _skipped(f"skipped-{table.status}", f"table {table_id} is {table.status}")
        n_chunks, chunk_size = int(table.n_chunks), int(table.chunk_size)
        stop = span.stop(n_chunks)
        if span.first >= stop:
            return _skipped("unknown", f"table {table_id} has no chunk {span.first}")
        lease = now + timedelta(seconds=settings.chunk_lease_seconds)
        size: int | None = None
        for _ in range(_CLAIM_TRIES):
            open_chunks = repo.open_chunks(table_id)
            free = [
                c.index for c in open_chunks if span.first <= c.index < stop and c.claimable(now)
            ]
            if not free:
                return _unclaimed(span, open_chunks, stop)
            if size is None:
                size = _task_size(
                    repo,
                    table.function_id,
                    chunk_size,
                    task_seconds,
                    share,
                    sum(1 for c in open_chunks if c.claimable(now)),
                    costs,
                )
            tried = free[:size]
            got = repo.claim_chunks(table_id, tried, now=now, lease_until=lease, worker=worker)
            if got:
                break
            # another worker claimed them between the read and the UPDATE: read again (the
            # chunks after them must not wait for a re-dispatch)
        else:
            return _unclaimed(span, open_chunks, stop)
        if table.started_at is None:
            repo.mark_started(table_id, now=now)
        # what follows the chunks tried (those lost to a race are the winner's)
        rest = span.after(tried[-1], n_chunks) if free[-1] > tried[-1] else None
        completes = task_seconds > 0 and {c.index for c in open_chunks} <= set(got)
        return _Claimed(
            ChunkSpec.of(table.spec, chunk_size=chunk_size),
            str(table.function_id),
            tuple(got),
            completes,
            rest,
        )


def _fail(sm: SM, table_id: str, error: str, *, chunks: Iterable[int] = ()) -> None:
    logger.error("table %s failed: %s", table_id, error)
    with session_scope(sm) as session:
        repo = TableRepository(session)
        repo.mark_failed(table_id, error, now=utc_now())
        repo.release_chunks(table_id, chunks)


def compute_chunk(
    spec: Mapping[str, Any] | ChunkSpec, index: int, chunk_size: int
) -> sampling.ChunkResult:
    """Evaluate chunk ``index`` (of ``chunk_size`` points) of the table of ``spec``.

    The maths is :func:`app.domain.tablebuild.compute_chunk`; this resolves the function.

    Raises
    ------
    app.domain.errors.DomainError
        Unknown function (the spec was validated when the table was made).
    """
    function_id, region, seed, k_exact = _evaluation(spec)
    return tablebuild.compute_chunk(
        get_function(function_id),
        region,
        seed=seed,
        k_exact=k_exact,
        index=index,
        chunk_size=chunk_size,
    )


def _evaluation(spec: Mapping[str, Any] | ChunkSpec) -> tuple[str, Mapping[str, Any], int, int]:
    """Function id, region, seed and ``k_exact`` of a spec (only these four need be in it)."""
    if isinstance(spec, ChunkSpec):
        return spec.function_id, spec.region, spec.seed, spec.k_exact
    k_exact = int(spec["representation"]["k_exact"])
    return str(spec["function_id"]), spec["region"], int(spec["seed"]), k_exact


def compute_chunks(
    spec: Mapping[str, Any] | ChunkSpec, first: int, count: int, chunk_size: int
) -> Iterator[sampling.ChunkResult]:
    """Evaluate chunks ``first … first + count − 1`` of the table of ``spec``, in order.

    Each equals :func:`compute_chunk` of that chunk byte for byte; one Sobol engine serves
    them all (:func:`app.domain.tablebuild.compute_chunks`). A single chunk goes through
    :func:`compute_chunk`.
    """
    if count == 1:
        yield compute_chunk(spec, first, chunk_size)
        return
    function_id, region, seed, k_exact = _evaluation(spec)
    yield from tablebuild.compute_chunks(
        get_function(function_id),
        region,
        seed=seed,
        k_exact=k_exact,
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
    size = claimed.spec.chunk_size
    # an intersected level's points outside the domain carry +inf (never evaluated)
    allowed = np.isposinf(values) if claimed.spec.intersected else False
    if values.shape != (size,) or not np.all(np.isfinite(values) | allowed):
        return f"chunk {index}: expected {size} finite values"
    return ChunkWrite(
        index,
        values.tobytes(),
        np.ascontiguousarray(result.low_index, dtype="<i8").tobytes(),
        np.ascontiguousarray(result.low_x, dtype="<f8").tobytes(),
        cpu,
    )


def _compute(claimed: _Claimed) -> list[ChunkWrite] | str:
    """Evaluate the claimed chunks (each run of consecutive ones from one Sobol engine), or
    say why the table fails."""
    writes: list[ChunkWrite] = []
    size = claimed.spec.chunk_size
    for first, count in _runs(claimed.indices):
        j = first
        t0 = time.process_time()
        try:
            for result in compute_chunks(claimed.spec, first, count, size):
                checked = _checked(result, claimed, j, time.process_time() - t0)
                if isinstance(checked, str):
                    return checked
                writes.append(checked)
                j += 1
                t0 = time.process_time()
        except Exception as exc:
            return f"chunk {j}: {type(exc).__name__}: {exc}"
    return writes


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
    """:func:`run_span` of chunk ``index`` and, with ``task_seconds > 0``, the next chunks of the
    table (the one-chunk message, ``(table_id, index)``, of earlier versions)."""
    span = TaskSpan(table_id, index, None if task_seconds > 0 else 1)
    return run_span(sm, settings, span, task_seconds=task_seconds, share=share, costs=costs)


def run_span(
    sm: SM,
    settings: Settings,
    span: TaskSpan,
    *,
    task_seconds: float = 0.0,
    share: int = 1,
    costs: TaskCosts | None = None,
    dispatcher: Dispatcher | None = None,
) -> str:
    """Build the first claimable chunks of ``span``; merge the table if they completed it.

    Idempotent and safe to run concurrently or twice: a ready/failed table or a finished chunk
    is skipped, a chunk leased by a live worker is skipped, and a result is written only if
    its chunk is not done yet.

    The task claims one chunk, or with ``task_seconds > 0`` (the workers pass
    ``settings.table_task_seconds``) as many as take about that long at the function's measured
    cost per point, and evaluates them from one Sobol engine: a cheap function's table is built
    in a few tasks instead of one per chunk. The chunks stay the unit of storage, so the
    table's chunking, progress and bytes do not change. The claimable chunks of the span after
    its own are handed on to ``dispatcher`` as one new span, before this task computes, so that
    another worker starts on them at once (a table is queued as one span).

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
        ``chunk_lease_seconds`` bounds how long a claim blocks other workers.
    span : TaskSpan
        The chunks this task may take (:class:`app.domain.tablebuild.TaskSpan`).
    task_seconds : float, default 0
        Target work of this task (``0``: one chunk).
    share : int, default 1
        Workers expected to share the table (the consumer's processes): with more than one, a
        task takes at most ``1/(2·share)`` of the chunks left, so the last tasks are short and
        the workers finish together.
    costs : TaskCosts, optional
        The worker process's measured costs per point (updated with this task's); default:
        read from the database.
    dispatcher : Dispatcher, optional
        Receives the rest of the span; without one, the rest waits for other messages (or
        for :func:`redispatch`).

    Returns
    -------
    str
        What happened: ``"done"`` (written), ``"merged"`` (written and merged the table),
        ``"duplicate"`` (computed but another worker wrote first), ``"skipped-done"``,
        ``"skipped-leased"``, ``"skipped-<table status>"``, ``"unknown"`` or ``"failed"``.
    """
    worker = _worker_label()
    table_id = span.table_id
    costs = costs if costs is not None else TaskCosts()
    claimed = _claim(sm, settings, span, worker, task_seconds, share, costs)
    if isinstance(claimed, Refusal):
        logger.debug("chunks %s/%d+: %s", table_id, span.first, claimed.code)
        return claimed.code
    if claimed.rest is not None and dispatcher is not None:
        try:
            send(sm, dispatcher, [claimed.rest])
        except ServiceUnavailable as exc:  # the rest waits for the re-dispatcher; build ours
            logger.warning("chunks %s/%d+: not handed on: %s", table_id, span.first, exc)
    versions = spec_versions()
    if versions != dict(claimed.spec.versions):
        _fail(
            sm,
            table_id,
            f"worker {worker} has library versions {versions}, but the table spec was "
            f"made with {dict(claimed.spec.versions)}; workers must run the same versions "
            "(chunks would not be bit-identical)",
            chunks=claimed.indices,
        )
        return "failed"
    writes = _compute(claimed)
    if isinstance(writes, str):
        _fail(sm, table_id, writes, chunks=claimed.indices)
        return "failed"
    points = len(writes) * claimed.spec.chunk_size
    costs.seconds_per_point[claimed.function_id] = sum(w.cpu_seconds for w in writes) / points
    if claimed.completes or (task_seconds > 0 and _only_ours_open(sm, table_id, claimed.indices)):
        # the last task of the table: merge from its results in memory, write no blob of them
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


def _only_ours_open(sm: SM, table_id: str, ours: Iterable[int]) -> bool:
    """Whether every chunk of the table not done yet is one of ``ours`` (the other workers'
    are all stored)."""
    with session_scope(sm) as session:
        open_chunks = TableRepository(session).open_chunks(table_id)
    return {c.index for c in open_chunks} <= set(ours)


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
    job = ChunkSpec.of(spec, chunk_size=size)
    blobs = []
    for index in range(sampling.chunk_plan(n, size)):
        r = compute_chunk(job, index, size)
        blobs.append(
            ChunkBlobs(
                index,
                np.ascontiguousarray(r.values, dtype="<f8").tobytes(),
                np.ascontiguousarray(r.low_index, dtype="<i8").tobytes(),
                np.ascontiguousarray(r.low_x, dtype="<f8").tobytes(),
            )
        )
    data = _build(job, blobs).data
    return absrank.encode_table_data(data)


def _build(job: ChunkSpec, chunks: Iterable[ChunkBlobs]) -> BuiltTable:
    return tablebuild.build_table(
        chunks,
        n=job.n,
        chunk_size=job.chunk_size,
        dim=job.dim,
        k_exact=job.k_exact,
        n_knots=job.n_knots,
        intersected=job.intersected,
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
    table: Table,
    chunks: Iterable[ChunkBlobs],
    *,
    cpu_seconds: float,
    workers: Iterable[str],
    t0: float,
    cpu0: float,
) -> _Merged:
    """Build, encode and describe a table from all its chunks (``table``: its ORM row)."""
    spec, n, chunk_size = dict(table.spec), int(table.n), int(table.chunk_size)
    job = ChunkSpec.of(spec, chunk_size=chunk_size)
    created, started = as_utc(table.created_at), as_utc(table.started_at)
    built = _build(job, chunks)
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
    if job.intersected:
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
    and provenance and marks the table ready in one transaction, then clears the chunk blobs
    (:func:`redispatch` clears those of a merger that died in between).
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
        _drop_chunk_blobs(sm, table_id)
        logger.info("table %s ready (%d samples, %d chunks)", table_id, table.n, table.n_chunks)
    return stored


def _drop_chunk_blobs(sm: SM, table_id: str) -> None:
    """Clear the chunk blobs of a table just made ready, once it is visible as ready (on SQLite
    the UPDATE frees every overflow page of the blobs: ~0.1 s for a 2^22 table). If the worker
    dies first, :func:`redispatch` clears them."""
    with session_scope(sm) as session:
        TableRepository(session).clear_chunk_blobs(table_id, stored_only=True)


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
    _drop_chunk_blobs(sm, table_id)
    logger.info("table %s ready (%d samples, %d chunks)", table_id, table.n, table.n_chunks)
    return True
