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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
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
from app.repositories.tables import ChunkBlobs, TableRepository, as_utc
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
    "combine_chunks",
    "compute_chunk",
    "compute_table_data",
    "merge",
    "noise_normals",
    "redispatch",
    "run_chunk",
    "summarize",
]

logger = logging.getLogger(__name__)


def _worker_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# ---------------------------------------------------------------------------- building


@dataclass(frozen=True)
class _Claimed:
    spec: dict[str, Any]
    n: int
    chunk_size: int


def _skipped(code: str, message: str) -> Refusal:
    return Refusal(code, message, field="table_id")


def _claim(
    sm: SM, settings: Settings, table_id: str, index: int, worker: str
) -> _Claimed | Refusal:
    """Lease chunk ``index``; a :class:`Refusal` whose ``code`` is :func:`run_chunk`'s outcome."""
    now = utc_now()
    with session_scope(sm) as session:
        repo = TableRepository(session)
        table = repo.get(table_id)
        if table is None:
            return _skipped("unknown", f"no table {table_id}")
        if table.status != "building":
            return _skipped(f"skipped-{table.status}", f"table {table_id} is {table.status}")
        chunk = repo.get_chunk(table_id, index)
        if chunk is None:
            return _skipped("unknown", f"table {table_id} has no chunk {index}")
        if chunk.status == "done":
            return _skipped("skipped-done", f"chunk {table_id}/{index} is done")
        lease = now + timedelta(seconds=settings.chunk_lease_seconds)
        if not repo.claim_chunk(table_id, index, now=now, lease_until=lease, worker=worker):
            return _skipped("skipped-leased", f"chunk {table_id}/{index} is leased")
        repo.mark_started(table_id, now=now)
        return _Claimed(dict(table.spec), int(table.n), int(table.chunk_size))


def _fail(sm: SM, table_id: str, error: str, *, chunk: int | None = None) -> None:
    logger.error("table %s failed: %s", table_id, error)
    with session_scope(sm) as session:
        repo = TableRepository(session)
        repo.mark_failed(table_id, error, now=utc_now())
        if chunk is not None:
            repo.release_chunk(table_id, chunk)


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


def run_chunk(sm: SM, settings: Settings, table_id: str, index: int) -> str:
    """Build chunk ``index`` of a table; merge the table if this chunk completed it.

    Idempotent and safe to run concurrently or twice: a ready/failed table or a finished chunk
    is skipped, a chunk leased by a live worker is skipped, and the result is written only if
    the chunk is not done yet.

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
        ``chunk_lease_seconds`` bounds how long a claim blocks other workers.
    table_id : str
    index : int
        Chunk number: Sobol indices ``[index·B, (index+1)·B)``.

    Returns
    -------
    str
        What happened: ``"done"`` (written), ``"merged"`` (written and merged the table),
        ``"duplicate"`` (computed but another worker wrote first), ``"skipped-done"``,
        ``"skipped-leased"``, ``"skipped-<table status>"``, ``"unknown"`` or ``"failed"``.
    """
    worker = _worker_label()
    claimed = _claim(sm, settings, table_id, index, worker)
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
            chunk=index,
        )
        return "failed"
    t0 = time.process_time()
    try:
        result = compute_chunk(claimed.spec, index, claimed.chunk_size)
    except Exception as exc:
        _fail(sm, table_id, f"chunk {index}: {type(exc).__name__}: {exc}", chunk=index)
        return "failed"
    cpu = time.process_time() - t0
    values = np.ascontiguousarray(result.values, dtype="<f8")
    # an intersected level's points outside the domain carry +inf (never evaluated)
    allowed = np.isposinf(values) if region_intersected(claimed.spec["region"]) else False
    if values.shape != (claimed.chunk_size,) or not np.all(np.isfinite(values) | allowed):
        _fail(
            sm, table_id, f"chunk {index}: expected {claimed.chunk_size} finite values", chunk=index
        )
        return "failed"
    with session_scope(sm) as session:
        repo = TableRepository(session)
        wrote = repo.finish_chunk(
            table_id,
            index,
            values=values.tobytes(),
            low_index=np.ascontiguousarray(result.low_index, dtype="<i8").tobytes(),
            low_x=np.ascontiguousarray(result.low_x, dtype="<f8").tobytes(),
            cpu_seconds=cpu,
            worker=worker,
            now=utc_now(),
        )
        complete = repo.all_chunks_done(table_id)
    if not wrote:
        return "duplicate"
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
    data, _ = _build(spec, blobs, n=n, chunk_size=size)
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
        spec, n, chunk_size = dict(table.spec), int(table.n), int(table.chunk_size)
        digest, n_chunks = table.spec_hash, int(table.n_chunks)
        created, started = as_utc(table.created_at), as_utc(table.started_at)
    t0, cpu0 = time.perf_counter(), time.process_time()
    try:
        with session_scope(sm) as session:
            repo = TableRepository(session)
            data, values = _build(spec, repo.iter_chunk_blobs(table_id), n=n, chunk_size=chunk_size)
            progress = repo.chunk_progress([table_id])[table_id]
            workers = repo.chunk_workers(table_id)
        blob = absrank.encode_table_data(data)
        summary = summarize(values).as_json()
    except Exception as exc:
        with session_scope(sm) as session:
            current = TableRepository(session).get(table_id)
        if current is not None and current.status == "ready":
            return False  # a concurrent merger won and dropped the chunk blobs under us
        _fail(sm, table_id, f"merge: {type(exc).__name__}: {exc}")
        return False
    del values
    finished = utc_now()
    provenance = {
        "spec_hash": digest,
        "function_id": spec["function_id"],
        "region": spec["region"],
        "n": n,
        "seed": spec["seed"],
        "sampler": spec["sampler"],
        "sobol_seed_keyword": sampling.SOBOL_SEED_KEYWORD,
        "versions": spec["versions"],
        "representation": spec["representation"],
        "chunk_size": chunk_size,
        "n_chunks": n_chunks,
        "n_knots": int(np.asarray(data.values).size),
        "build": {
            "created_at": created.isoformat() if created else None,
            "started_at": started.isoformat() if started else None,
            "finished_at": finished.isoformat(),
            "wall_seconds": (finished - (started or created or finished)).total_seconds(),
            "chunk_cpu_seconds": progress.cpu_seconds,
            "merge_seconds": time.perf_counter() - t0,
            "merge_cpu_seconds": time.process_time() - cpu0,
        },
        "workers": sorted({w.rsplit(":", 1)[0] for w in workers}),
        "merged_by": socket.gethostname(),
    }
    if region_intersected(spec["region"]):
        provenance["kept"] = kept_provenance(n, int(data.n))
    with session_scope(sm) as session:
        repo = TableRepository(session)
        stored = repo.finish_merge(
            table_id,
            data=blob,
            data_sha256=hashlib.sha256(blob).hexdigest(),
            max_interp_error=float(data.max_interp_error),
            summary=summary,
            provenance=provenance,
            now=finished,
        )
        if stored:
            repo.clear_chunk_blobs(table_id)
    if stored:
        logger.info("table %s ready (%d samples, %d chunks)", table_id, n, n_chunks)
    return stored


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
