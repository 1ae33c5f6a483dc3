"""Table use cases: request a table, read it (views, lists) and load a ready table's data.

Ready tables never change: their decoded data is kept in the application's
:class:`app.services.table_cache.TableCaches`, passed as ``cache=`` (without it, the transitional
registry keyed by the sessionmaker). Public names are re-exported by :mod:`app.services.tables`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy.exc import IntegrityError

from app.config import Settings
from app.db import session_scope
from app.domain import absrank, sampling
from app.domain.tablebuild import TaskSpan, spans_of
from app.errors import Conflict, InvalidInput, NotFound, TableNotReady
from app.models.tables import TABLE_STATUSES, Table
from app.repositories.tables import ChunkProgress, TableRepository, as_utc
from app.services._table_specs import (
    MAX_LIST_LIMIT,
    SM,
    SUMMARY_QUANTILES_ARE,
    Dispatcher,
    chunk_size_for,
    spec_hash,
    table_id_for,
    table_location,
    table_spec,
    utc_now,
)
from app.services.eta import BuildClock, build_eta
from app.services.table_cache import TableCaches
from app.services.table_redispatch import send

logger = logging.getLogger(__name__)

ChunkCharge = Callable[[int], None]
"""Called with the chunks a request is about to queue, before anything is stored; raises to
refuse them (the API's quota of queued chunks, ``app.api.quotas.chunk_charge``)."""


@dataclass(frozen=True)
class TableView:
    """What clients see of a table (no blobs).

    Attributes
    ----------
    id : str
        ``"t"`` + 23 hex digits of ``spec_hash``.
    spec_hash : str
        SHA-256 of the canonical JSON of ``spec``.
    function_id : str
    status : str
        ``building`` | ``merging`` | ``ready`` | ``failed``.
    spec : dict
        The normalized spec (function, region with its box, n, seed, sampler, versions,
        representation).
    n, seed : int
        Number of Sobol samples ``N = 2^m`` and the scrambling seed.
    chunk_size, n_chunks : int
        Sobol points per chunk ``B`` and ``N / B`` (not part of the spec: chunking never
        changes the bytes).
    chunks_done : int
        Chunks finished so far.
    eta_seconds : float or None
        Estimated seconds until every chunk is done (:func:`build_eta`); ``None`` before
        the first chunk finishes and once the table is ready or failed, ``0.0`` while merging.
    first_chunk_started : datetime or None
        UTC: earliest claim of any of its chunks (the start of :func:`build_eta`'s window).
    error : str or None
        Why the table failed.
    created_at, started_at, finished_at : datetime or None
        UTC: request, first chunk claim, ready/failed.
    data_sha256 : str or None
        SHA-256 of the encoded table data once ready.
    max_interp_error : float or None
        Bound on the interpolation error of the stored representation.
    summary : dict or None
        ``y_1``, ``y_N``, sample order statistics ``t`` at a few levels ``v`` (``quantiles``)
        and what they are (``quantiles_are``, :data:`SUMMARY_QUANTILES_ARE`).
    provenance : dict or None
        Versions, seed, N, region, sampler, build wall/CPU time, workers.
    """

    id: str
    spec_hash: str
    function_id: str
    status: str
    spec: dict[str, Any]
    n: int
    seed: int
    chunk_size: int
    n_chunks: int
    chunks_done: int
    eta_seconds: float | None
    first_chunk_started: datetime | None
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    data_sha256: str | None
    max_interp_error: float | None
    summary: dict[str, Any] | None
    provenance: dict[str, Any] | None

    @property
    def location(self) -> str:
        """The table's URL path, ``/v1/tables/{id}``."""
        return table_location(self.id)

    @property
    def ready(self) -> bool:
        """Whether the table data can be used."""
        return self.status == "ready"

    @property
    def progress(self) -> dict[str, Any]:
        """``{"done", "total", "fraction"}`` of chunks (a ready table is complete)."""
        done = self.n_chunks if self.status == "ready" else self.chunks_done
        total = self.n_chunks
        return {"done": done, "total": total, "fraction": done / total if total else 1.0}


# ---------------------------------------------------------------------------- views


def build_clock(view: TableView) -> BuildClock:
    """The :class:`BuildClock` of a table view."""
    return BuildClock(
        view.status, view.chunks_done, view.n_chunks, view.created_at, view.first_chunk_started
    )


def _eta(table: Table, progress: ChunkProgress, now: datetime) -> float | None:
    created = as_utc(table.created_at)
    assert created is not None
    clock = BuildClock(table.status, progress.done, progress.total, created, progress.first_started)
    return build_eta([clock], now)


def _view(table: Table, progress: ChunkProgress, now: datetime | None = None) -> TableView:
    created = as_utc(table.created_at)
    assert created is not None
    return TableView(
        id=table.id,
        spec_hash=table.spec_hash,
        function_id=table.function_id,
        status=table.status,
        spec=dict(table.spec),
        n=int(table.n),
        seed=int(table.seed),
        chunk_size=int(table.chunk_size),
        n_chunks=int(table.n_chunks),
        chunks_done=progress.done,
        eta_seconds=_eta(table, progress, now or utc_now()),
        first_chunk_started=progress.first_started,
        error=table.error,
        created_at=created,
        started_at=as_utc(table.started_at),
        finished_at=as_utc(table.finished_at),
        data_sha256=table.data_sha256,
        max_interp_error=table.max_interp_error,
        summary=None if table.summary is None else _labelled(table.summary),
        provenance=table.provenance,
    )


def _labelled(summary: dict[str, Any]) -> dict[str, Any]:
    """A stored summary with what its quantiles are (:data:`SUMMARY_QUANTILES_ARE`)."""
    return dict(summary) | {"quantiles_are": SUMMARY_QUANTILES_ARE}


def _load_view(repo: TableRepository, table_id: str) -> TableView:
    table = repo.get(table_id)
    if table is None:
        raise NotFound(f"no table with id {table_id!r}", field="table_id")
    return _view(table, repo.chunk_progress([table_id])[table_id])


# ---------------------------------------------------------------------------- requests


class Requested(NamedTuple):
    """A requested table.

    Attributes
    ----------
    view : TableView
    created : bool
        Whether this request created it.
    """

    view: TableView
    created: bool


class TablePage(NamedTuple):
    """A page of tables.

    Attributes
    ----------
    items : list of TableView
        Newest first.
    total : int
        Tables matching the filters, over all pages.
    """

    items: list[TableView]
    total: int


def request_table(
    sm: SM,
    settings: Settings,
    dispatcher: Dispatcher,
    *,
    function_id: str,
    delta: float | Sequence[float] | None = None,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    charge: ChunkCharge | None = None,
) -> Requested:
    """Return the table for a spec, creating it and queueing its chunks if it is new.

    Asking twice for the same spec (same hash) returns the same table. A failed table is
    reset to ``building`` and its unfinished chunks are queued again.

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
    dispatcher : Dispatcher
        Receives ``enqueue_span`` calls after the commit (a new table: one span of all its
        chunks).
    function_id, delta, log2n, seed
        See :func:`table_spec`.

    cache : TableCaches
        The application's (``app.state.table_caches``, a worker's): the table is no longer
        missing there.
    charge : callable, optional
        Called with the number of chunks before a new table (or a failed one's unfinished
        chunks) is stored; what it raises refuses the request, storing nothing.

    Returns
    -------
    Requested
        ``(view, created)``: ``created`` is ``True`` if this call created the table.

    Raises
    ------
    app.errors.NotFound, app.errors.InvalidInput
        From :func:`table_spec`.
    """
    spec = table_spec(settings, function_id=function_id, delta=delta, log2n=log2n, seed=seed)
    return request_spec(sm, settings, dispatcher, spec, cache=cache, charge=charge)


def unstored_chunks(sm: SM, settings: Settings, tables: Sequence[tuple[str, int]]) -> int:
    """The chunks the tables ``(table_id, n)`` that are not stored yet would queue: what a
    request queueing several tables at once is charged (:data:`ChunkCharge`) before any."""
    with session_scope(sm) as session:
        repo = TableRepository(session)
        return sum(
            sampling.chunk_plan(n, chunk_size_for(settings, n))
            for table_id, n in tables
            if repo.get(table_id) is None
        )


def request_spec(
    sm: SM,
    settings: Settings,
    dispatcher: Dispatcher,
    spec: dict[str, Any],
    *,
    cache: TableCaches,
    charge: ChunkCharge | None = None,
) -> Requested:
    """:func:`request_table` for an already validated spec (a ladder level's carries its shape)."""
    digest = spec_hash(spec)
    table_id = table_id_for(digest)
    cache.missing.discard(table_id)
    now = utc_now()
    to_enqueue: list[TaskSpan] = []
    merge_needed = False
    try:
        with session_scope(sm) as session:
            repo = TableRepository(session)
            existing = repo.get(table_id)
            if existing is None:
                n = int(spec["n"])
                chunk_size = chunk_size_for(settings, n)
                n_chunks = sampling.chunk_plan(n, chunk_size)
                if charge is not None:
                    charge(n_chunks)
                repo.add(
                    Table(
                        id=table_id,
                        spec_hash=digest,
                        function_id=spec["function_id"],
                        spec=spec,
                        n=n,
                        seed=int(spec["seed"]),
                        chunk_size=chunk_size,
                        n_chunks=n_chunks,
                        status="building",
                        created_at=now,
                    )
                )
                repo.add_chunks(table_id, n_chunks, dispatched_at=now)
                # one message: its task hands on what it does not take (run_span)
                to_enqueue = [TaskSpan(table_id, 0, n_chunks)]
                created = True
            else:
                if existing.spec_hash != digest:  # pragma: no cover - 92-bit prefix collision
                    raise Conflict(f"table id {table_id} is taken by another spec")
                created = False
                if existing.status == "failed" and charge is not None:
                    charge(len(repo.pending_chunk_indices(table_id)))
                if existing.status == "failed" and repo.reset_failed(table_id):
                    to_enqueue = spans_of(table_id, repo.pending_chunk_indices(table_id))
                    merge_needed = not to_enqueue
                    logger.info("table %s: reset after failure (%s)", table_id, existing.error)
            view = _load_view(repo, table_id)
    except IntegrityError:
        # a concurrent request created the same table first: return it
        with session_scope(sm) as session:
            return Requested(_load_view(TableRepository(session), table_id), False)
    # after the commit (a worker must find the table); a refused message leaves its chunks
    # marked not dispatched for the re-dispatcher, and the request is answered 503
    send(sm, dispatcher, to_enqueue, [table_id] if merge_needed else [])
    return Requested(view, created)


def get_table(sm: SM, table_id: str) -> TableView:
    """Return a table's status, progress, ETA, summary, provenance and spec.

    Raises
    ------
    app.errors.NotFound
        Unknown id.
    """
    with session_scope(sm) as session:
        return _load_view(TableRepository(session), table_id)


def list_tables(
    sm: SM,
    *,
    function_id: str | None = None,
    status: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> TablePage:
    """Return a page of tables (newest first) and the total number matching the filters.

    Parameters
    ----------
    function_id : str, optional
        Only tables of this function.
    status : str, optional
        Only tables in this status (``building``, ``merging``, ``ready``, ``failed``).
    limit : int, default 100
        Page size, 1 to 1000.
    offset : int, default 0

    Returns
    -------
    TablePage
        ``(items, total)``.

    Raises
    ------
    app.errors.InvalidInput
        Unknown status or out-of-range paging.
    """
    if status is not None and status not in TABLE_STATUSES:
        raise InvalidInput(f"status must be one of {', '.join(TABLE_STATUSES)}", field="status")
    if not 1 <= limit <= MAX_LIST_LIMIT:
        raise InvalidInput(f"limit must be between 1 and {MAX_LIST_LIMIT}", field="limit")
    if offset < 0:
        raise InvalidInput("offset must be >= 0", field="offset")
    now = utc_now()
    with session_scope(sm) as session:
        repo = TableRepository(session)
        tables = repo.list(function_id=function_id, status=status, limit=limit, offset=offset)
        total = repo.count(function_id=function_id, status=status)
        progress = repo.chunk_progress(t.id for t in tables)
        return TablePage([_view(t, progress[t.id], now) for t in tables], total)


class ReadyTable(NamedTuple):
    """A ready table: what clients see of it and its decoded data.

    Attributes
    ----------
    view : TableView
    data : TableData
        :func:`app.domain.absrank.decode_table_data` of the stored blob.
    """

    view: TableView
    data: absrank.TableData


def cached_ready_table(sm: SM, table_id: str, *, cache: TableCaches) -> ReadyTable | None:
    """The ready table ``table_id`` if this application already loaded it (no SQL), else None.

    ``cache`` is the application's (``app.state.table_caches``, a worker's).
    """
    return cache.ready.get(table_id)


def recently_missing(sm: SM, table_id: str, *, cache: TableCaches) -> bool:
    """Whether ``table_id`` was found missing less than ``table_missing_ttl_seconds`` ago."""
    return cache.missing.has(table_id)


def remember_missing(sm: SM, table_id: str, *, cache: TableCaches) -> None:
    """Note that ``table_id`` does not exist (saves the SQL of the next few lookups)."""
    cache.missing.add(table_id)


def not_ready_error(view: TableView) -> TableNotReady:
    """Return the 409 problem for a table that cannot be used yet (or failed).

    The problem carries the table's ``Location`` header and, in ``extra``, its id, status,
    progress, ETA and error.
    """
    if view.status == "failed":
        detail = f"table {view.id} failed: {view.error}; request it again to retry"
    else:
        p = view.progress
        detail = f"table {view.id} is {view.status} ({p['done']}/{p['total']} chunks done)"
    return TableNotReady(
        detail,
        field="table_id",
        extra={
            "table_id": view.id,
            "table_status": view.status,
            "location": view.location,
            "progress": view.progress,
            "eta_seconds": view.eta_seconds,
            "error": view.error,
        },
        headers={"Location": view.location},
    )


def load_table_data(sm: SM, table_id: str, *, cache: TableCaches) -> ReadyTable:
    """Return a ready table and its decoded data (cached: ready tables never change).

    ``cache`` is the application's (``app.state.table_caches``, a worker's).

    Raises
    ------
    app.errors.NotFound
        Unknown id.
    app.errors.TableNotReady
        The table is building, merging or failed (409, with ``Location`` and progress).
    """
    cached = cache.ready.get(table_id)
    if cached is not None:
        return cached
    with session_scope(sm) as session:
        repo = TableRepository(session)
        view = _load_view(repo, table_id)
        if not view.ready or view.data_sha256 is None:
            raise not_ready_error(view)
        blob = repo.get_data(table_id)
    assert blob is not None
    data = absrank.decode_table_data(blob)
    ready = ReadyTable(view, data)
    cache.ready.put(table_id, ready)
    return ready
