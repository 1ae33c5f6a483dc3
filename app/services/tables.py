"""Use cases of v_f tables: request, inspect, build chunk by chunk, merge, recover.

The database is the source of truth for progress; the queue only carries hints. Every step is
idempotent and decided by a conditional ``UPDATE`` (see ``app.repositories.tables``):

* :func:`request_table` creates the table and one row per chunk, commits, then enqueues the chunks.
* :func:`run_chunk` leases a chunk, evaluates its Sobol points, stores the result once
  (``UPDATE ... WHERE status <> 'done'``); the chunk that completes the set merges.
* :func:`merge` claims ``building -> merging`` with a lease, builds and stores the table data,
  marks it ready and drops the chunk blobs in one transaction.
* :func:`redispatch` (periodic) re-enqueues chunks whose lease expired or whose message was lost,
  and merges that nobody finished.

So a killed worker or a lost message delays a table but never loses or duplicates a chunk, and any
chunking (any number of workers, any chunk size) gives the same bytes.

Services own their unit of work here (``session_scope``) because a build step is several
transactions with computation in between; enqueueing always happens after the commit.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import os
import socket
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

import numpy as np
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain import absrank, nested, sampling
from app.domain.functions import BenchmarkFunction, get_function
from app.errors import Conflict, InvalidInput, NotFound, TableNotReady
from app.models.tables import TABLE_STATUSES, Table
from app.repositories.tables import ChunkBlobs, ChunkProgress, TableRepository, as_utc
from app.services.errors import domain_errors_as_problems
from app.services.eta import BuildClock, build_eta
from app.services.provenance import canonical_sha256, library_versions

logger = logging.getLogger(__name__)

#: Version of the stored representation (``app.domain.absrank.TableData`` encoding). Part of the
#: spec hash: bump it whenever ``build_table_data``/``encode_table_data`` change their bytes.
REPRESENTATION_VERSION = 1
#: Smallest table: 2^4 samples.
MIN_LOG2N = 4
#: ``v`` levels at which the summary reports quantiles ``t`` with ``v1(t) >= v``.
SUMMARY_LEVELS = (1e-3, 0.01, 0.1, 0.5, 0.9)
#: What ``summary.quantiles`` are (``summary.quantiles_are`` of every table read): order
#: statistics of the samples, not the inverse of the published curve.
SUMMARY_QUANTILES_ARE = (
    "sample order statistics: t = y_(r), the r-th smallest sample, r = ceil(v (N + 1)) clamped "
    "to [1, N] (so y_1 for every v <= 1/(N + 1)); not the inverse of the published curve v1 "
    "(Eq. 28 interpolated between the samples, with its tails below y_1 and above y_N), which "
    "GET /v1/tables/{table_id}/quantiles gives"
)
#: Distributions whose versions enter the spec (they decide the sampled values).
SPEC_PACKAGES = {"numpy": "numpy", "scipy": "scipy", "cocoex": "coco-experiment"}
MAX_SEED = 2**63 - 1
MAX_LIST_LIMIT = 1000

SM = sessionmaker[Session]


class Dispatcher(Protocol):
    """Where services send work; implemented by ``workers.tasks.HueyDispatcher``."""

    def enqueue_chunk(self, table_id: str, index: int) -> None:
        """Queue chunk ``index`` of a table."""

    def enqueue_merge(self, table_id: str) -> None:
        """Queue the merge of a table."""


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


# ---------------------------------------------------------------------------- spec


def table_location(table_id: str) -> str:
    """Return the URL path of a table."""
    return f"/v1/tables/{table_id}"


def spec_versions() -> dict[str, str]:
    """Versions of the libraries that determine a table's sampled values.

    Returns
    -------
    dict
        ``{"numpy": ..., "scipy": ..., "cocoex": ...}`` from ``importlib.metadata``.
    """
    installed = library_versions()
    return {key: installed.get(dist, "absent") for key, dist in SPEC_PACKAGES.items()}


def sampler_description() -> str:
    """How the Sobol engine is seeded (``seed=`` and ``rng=`` give different points)."""
    return f"scipy.stats.qmc.Sobol(scramble=True, {sampling.SOBOL_SEED_KEYWORD}=seed)"


def table_spec(
    settings: Settings,
    *,
    function_id: str,
    delta: float | Sequence[float] | None = None,
    log2n: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Validate a table request and return its normalized spec.

    Parameters
    ----------
    settings : Settings
        Supplies the default and maximum ``log2n`` and the representation parameters.
    function_id : str
        A registered function, e.g. ``"bbob/f15/i1/d10"``.
    delta : float or sequence of float, optional
        Half-width of the box ``[x* - δ, x* + δ]`` clipped to the domain: one number (the cube
        ``[x* - δ, x* + δ]^d``, spec unchanged) or ``d`` positive numbers ``δ_i`` (the box
        ``Π_i [x*_i - δ_i, x*_i + δ_i]``, recorded as a list); ``None`` samples the whole
        domain.
    log2n : int, optional
        ``N = 2^log2n`` samples; default ``settings.table_default_log2n``.
    seed : int, default 0
        Sobol scrambling seed, ``0 <= seed < 2^63``.

    Returns
    -------
    dict
        JSON-ready spec: ``function_id``, ``region`` (``kind``, ``delta`` for boxes, resolved
        ``lower``/``upper``), ``n``, ``seed``, ``sampler``, ``versions``, ``representation``.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        Bad ``delta`` (also one whose clipped box is narrower than ``1e-9`` x the domain's
        width in some coordinate), ``log2n`` or ``seed``, or a box around an unknown
        minimiser. ``field`` is ``"delta"``, or ``"delta.i"`` for coordinate ``i`` of a list
        (the list's length is ``"delta"``).
    """
    with domain_errors_as_problems("function_id"):
        fn = get_function(function_id)
    log2n = settings.table_default_log2n if log2n is None else log2n
    if isinstance(log2n, bool) or not isinstance(log2n, int):
        raise InvalidInput("log2n must be an integer", field="log2n")
    if not MIN_LOG2N <= log2n <= settings.table_max_log2n:
        raise InvalidInput(
            f"log2n must be between {MIN_LOG2N} and {settings.table_max_log2n}", field="log2n"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise InvalidInput("seed must be an integer in [0, 2^63 - 1]", field="seed")
    region: dict[str, Any]
    if delta is None:
        region = {"kind": "domain", "lower": _floats(fn.lower), "upper": _floats(fn.upper)}
    else:
        region = _box_region(fn, delta)
    spec: dict[str, Any] = {
        "function_id": fn.id,
        "region": region,
        "n": 2**log2n,
        "seed": int(seed),
        "sampler": sampler_description(),
        "versions": spec_versions(),
        "representation": {
            "version": REPRESENTATION_VERSION,
            "k_exact": settings.table_k_exact,
            "n_knots": settings.table_n_knots,
        },
    }
    if fn.noisy:
        spec["noise"] = (
            "one N(0, 1) per point: Sobol index i takes draw i mod B of numpy.random.default_rng("
            f"SeedSequence([{NOISE_STREAM:#x}, seed, i // B])), B = {NOISE_BLOCK}"
        )
    return spec


def _box_delta(fn: BenchmarkFunction, delta: object) -> float | list[float]:
    """``delta`` as a float or a list of ``d`` floats, each finite and > 0."""
    if isinstance(delta, bool):
        raise InvalidInput("delta must be a finite number > 0 or a list of them", field="delta")
    if isinstance(delta, int | float | np.number):
        value = float(delta)
        if not math.isfinite(value) or value <= 0:
            raise InvalidInput("delta must be a finite number > 0", field="delta")
        return value
    if not isinstance(delta, Sequence | np.ndarray) or isinstance(delta, str):
        raise InvalidInput("delta must be a finite number > 0 or a list of them", field="delta")
    values = list(delta)
    if len(values) != fn.dim:
        raise InvalidInput(
            f"delta must be one number or {fn.dim} numbers (one per coordinate of {fn.id}), "
            f"got {len(values)}",
            field="delta",
        )
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float | np.number):
            raise InvalidInput(f"delta.{i} must be a number, got {v!r}", field=f"delta.{i}")
        value = float(v)
        if not math.isfinite(value) or value <= 0:
            raise InvalidInput(f"delta.{i} must be a finite number > 0", field=f"delta.{i}")
        out.append(value)
    return out


def _box_region(fn: BenchmarkFunction, delta: object) -> dict[str, Any]:
    """The region ``{"kind": "box", "delta", "lower", "upper"}`` of a (per-coordinate) box."""
    half = _box_delta(fn, delta)
    per_coordinate = isinstance(half, list)
    if fn.x_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known minimiser x*, so a box region [x*-δ, x*+δ] is undefined",
            field="delta",
        )
    with domain_errors_as_problems("delta"):
        lower, upper = sampling.region_box(fn.lower, fn.upper, fn.x_opt, half)
    # a side under 1e-9 of the domain's collapses the Sobol points onto a few floats
    # (or onto x* itself, where every sample is f*): the table would be degenerate
    domain_width = fn.upper - fn.lower
    thin = np.flatnonzero(upper - lower < 1e-9 * domain_width)
    if thin.size:
        i = int(thin[0])
        if per_coordinate:
            assert isinstance(half, list)
            raise InvalidInput(
                f"delta.{i} = {half[i]:g} is too small: the box clipped to the domain is "
                f"{upper[i] - lower[i]:g} wide in coordinate {i}, less than 1e-9 x the domain's "
                f"width {domain_width[i]:g} there, so the table would be degenerate; use "
                f"delta.{i} >= {1e-9 * float(domain_width[i]):g}",
                field=f"delta.{i}",
            )
        raise InvalidInput(
            f"delta = {half:g} is too small: the box [x* - delta, x* + delta] clipped to "
            f"the domain is {upper[i] - lower[i]:g} wide in coordinate {i}, less than "
            f"1e-9 x the domain's width {domain_width[i]:g} there, so the table would be "
            f"degenerate; use delta >= {1e-9 * float(domain_width.max()):g}",
            field="delta",
        )
    return {"kind": "box", "delta": half, "lower": _floats(lower), "upper": _floats(upper)}


def spec_hash(spec: Mapping[str, Any]) -> str:
    """Return the SHA-256 (hex) of the canonical JSON of a spec."""
    return canonical_sha256(spec)


def table_id_for(spec_sha256: str) -> str:
    """Return the table id of a spec hash: ``"t"`` + its first 23 hex digits (24 characters)."""
    return "t" + spec_sha256[:23]


def chunk_size_for(settings: Settings, n: int) -> int:
    """Return ``B = min(2^settings.table_chunk_log2, n)``."""
    return min(2**settings.table_chunk_log2, n)


def _floats(a: Iterable[Any]) -> list[float]:
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def _now() -> datetime:
    return datetime.now(UTC)


def _worker_label() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


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
        eta_seconds=_eta(table, progress, now or _now()),
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


def request_table(
    sm: SM,
    settings: Settings,
    dispatcher: Dispatcher,
    *,
    function_id: str,
    delta: float | Sequence[float] | None = None,
    log2n: int | None = None,
    seed: int = 0,
) -> tuple[TableView, bool]:
    """Return the table for a spec, creating it and queueing its chunks if it is new.

    Asking twice for the same spec (same hash) returns the same table. A failed table is
    reset to ``building`` and its unfinished chunks are queued again.

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
    dispatcher : Dispatcher
        Receives ``enqueue_chunk`` calls after the commit.
    function_id, delta, log2n, seed
        See :func:`table_spec`.

    Returns
    -------
    view : TableView
    created : bool
        ``True`` if this call created the table.

    Raises
    ------
    app.errors.NotFound, app.errors.InvalidInput
        From :func:`table_spec`.
    """
    spec = table_spec(settings, function_id=function_id, delta=delta, log2n=log2n, seed=seed)
    return _request_spec(sm, settings, dispatcher, spec)


def _request_spec(
    sm: SM, settings: Settings, dispatcher: Dispatcher, spec: dict[str, Any]
) -> tuple[TableView, bool]:
    """:func:`request_table` for an already validated spec (a ladder level's carries its shape)."""
    digest = spec_hash(spec)
    table_id = table_id_for(digest)
    _MISSING.pop(_cache_key(sm, table_id), None)
    now = _now()
    to_enqueue: list[int] = []
    merge_needed = False
    try:
        with session_scope(sm) as session:
            repo = TableRepository(session)
            existing = repo.get(table_id)
            if existing is None:
                n = int(spec["n"])
                chunk_size = chunk_size_for(settings, n)
                n_chunks = sampling.chunk_plan(n, chunk_size)
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
                to_enqueue = list(range(n_chunks))
                created = True
            else:
                if existing.spec_hash != digest:  # pragma: no cover - 92-bit prefix collision
                    raise Conflict(f"table id {table_id} is taken by another spec")
                created = False
                if existing.status == "failed" and repo.reset_failed(table_id):
                    to_enqueue = repo.pending_chunk_indices(table_id)
                    merge_needed = not to_enqueue
                    logger.info("table %s: reset after failure (%s)", table_id, existing.error)
            view = _load_view(repo, table_id)
    except IntegrityError:
        # a concurrent request created the same table first: return it
        with session_scope(sm) as session:
            return _load_view(TableRepository(session), table_id), False
    for index in to_enqueue:
        dispatcher.enqueue_chunk(table_id, index)
    if merge_needed:
        dispatcher.enqueue_merge(table_id)
    return view, created


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
) -> tuple[list[TableView], int]:
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
    items : list of TableView
    total : int

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
    now = _now()
    with session_scope(sm) as session:
        repo = TableRepository(session)
        tables = repo.list(function_id=function_id, status=status, limit=limit, offset=offset)
        total = repo.count(function_id=function_id, status=status)
        progress = repo.chunk_progress(t.id for t in tables)
        return [_view(t, progress[t.id], now) for t in tables], total


class _ReadyCache:
    """Ready tables (view and decoded data) per database and id: a ready table never changes.

    Keyed by the database URL too, so two databases in one process (tests, tools) never share
    an entry.
    """

    def __init__(self, maxsize: int = 32) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[tuple[str, str], tuple[TableView, absrank.TableData]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def get(self, key: tuple[str, str]) -> tuple[TableView, absrank.TableData] | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def put(self, key: tuple[str, str], value: tuple[TableView, absrank.TableData]) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()


def _cache_key(sm: SM, table_id: str) -> tuple[str, str]:
    bind = sm.kw.get("bind")
    return (str(getattr(bind, "url", id(sm))), table_id)


def cached_ready_table(sm: SM, table_id: str) -> tuple[TableView, absrank.TableData] | None:
    """The ready table ``table_id`` if this process already loaded it (no SQL), else None."""
    return _READY_CACHE.get(_cache_key(sm, table_id))


_READY_CACHE = _ReadyCache()

MISSING_TTL_SECONDS = 5.0
"""How long this process takes a table it found missing to stay missing (``regions='auto'`` looks
for a ladder on every rank request); a table requested in this process is forgotten at once."""
_MISSING: dict[tuple[str, str], float] = {}
_CACHE_MAX = 4096
"""Entries of the small per-process caches below before they are cleared."""


def recently_missing(sm: SM, table_id: str) -> bool:
    """Whether this process found ``table_id`` missing less than ``MISSING_TTL_SECONDS`` ago."""
    until = _MISSING.get(_cache_key(sm, table_id))
    return until is not None and until > time.monotonic()


def remember_missing(sm: SM, table_id: str) -> None:
    """Note that ``table_id`` does not exist (saves the SQL of the next few lookups)."""
    if len(_MISSING) >= _CACHE_MAX:
        _MISSING.clear()
    _MISSING[_cache_key(sm, table_id)] = time.monotonic() + MISSING_TTL_SECONDS


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


def load_table_data(sm: SM, table_id: str) -> tuple[TableView, absrank.TableData]:
    """Return a ready table and its decoded data (cached per process: ready tables never change).

    Raises
    ------
    app.errors.NotFound
        Unknown id.
    app.errors.TableNotReady
        The table is building, merging or failed (409, with ``Location`` and progress).
    """
    key = _cache_key(sm, table_id)
    cached = _READY_CACHE.get(key)
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
    _READY_CACHE.put(key, (view, data))
    return view, data


# ---------------------------------------------------------------------------- ladders


def _ladder_function(function_id: str) -> BenchmarkFunction:
    """The function of a ladder request; refuse those without ``f*``/``x*`` or with an atom."""
    with domain_errors_as_problems("function_id"):
        fn = get_function(function_id)
    if fn.x_opt is None or fn.f_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known minimiser x* and minimum f*: a ladder of nested boxes around "
            "x* is undefined",
            field="function_id",
        )
    if fn.local.atom > 0:
        raise InvalidInput(
            f"{fn.id} has a plateau at f* (atom {fn.local.atom:g}): its registered mass gives v1 "
            "near f*, nested regions serve a continuous lower tail",
            field="function_id",
        )
    return fn


def ladder_degree(fn: BenchmarkFunction) -> float | None:
    """``p = d/β`` of the registered local structure, ``None`` (so 2) when ``β`` is unknown."""
    beta = fn.local.beta
    return fn.dim / beta if beta is not None and beta > 0 else None


@functools.lru_cache(maxsize=256)
def ladder_shape_of(fn: BenchmarkFunction) -> nested.LadderShape:
    """The box shape of ``fn``'s ladders (:func:`app.domain.nested.ladder_shape`), cached.

    Computed from ``fn`` alone (about ``2d²·140`` evaluations near ``x*``; 0.01-0.4 s in
    10-D, 1-2 s for BBOB functions in 40-D), once per function and process. A noisy function's
    shape is that of its noise-free part (the noise only scales ``f − f*``).
    """
    with domain_errors_as_problems("function_id"):
        return nested.ladder_shape(
            fn.evaluate_noise_free, fn.x_opt, fn.f_opt, fn.lower, fn.upper, degree=ladder_degree(fn)
        )


@functools.lru_cache(maxsize=256)
def _cached_plan(
    fn: BenchmarkFunction,
    shape: nested.LadderShape,
    factor: float,
    max_levels: int,
    min_log10_volume: float,
) -> nested.LadderPlan:
    with domain_errors_as_problems("function_id"):
        return nested.plan_ladder(
            fn.lower,
            fn.upper,
            fn.x_opt,
            factor=factor,
            max_levels=max_levels,
            min_log10_volume=min_log10_volume,
            shape=np.asarray(shape),
            orientation=shape.orientation,
            intersect=True,
        )


def ladder_plan(
    settings: Settings, function_id: str
) -> tuple[BenchmarkFunction, nested.LadderShape, nested.LadderPlan]:
    """The function, box shape and boxes of its ladder under ``settings``.

    Parameters
    ----------
    settings : Settings
        ``nested_factor``, ``nested_levels`` (the cap) and ``nested_min_log10_volume``.
    function_id : str
        A registered function with known ``x*`` and ``f*`` and no atom at ``f*``.

    Returns
    -------
    fn : BenchmarkFunction
    shape : LadderShape
        From :func:`ladder_shape_of` (the cube, with its reason, when the fit fails).
    plan : LadderPlan
        :func:`app.domain.nested.plan_ladder`: ``R_0 = Ω`` and ``L`` boxes
        ``[x* − h_j, x* + h_j] ∩ Ω``, ``h_{j,i} = min(R, σ_j·a_i)``,
        ``σ_j = σ_0/nested_factor^j``, up to the volume target, the cap or the thinness limit.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        No ``x*``/``f*`` or an atom (``field="function_id"``).
    """
    fn = _ladder_function(function_id)
    shape = ladder_shape_of(fn)
    plan = _cached_plan(
        fn,
        shape,
        float(settings.nested_factor),
        int(settings.nested_levels),
        float(settings.nested_min_log10_volume),
    )
    return fn, shape, plan


def ladder_specs(
    settings: Settings, function_id: str, *, log2n: int | None = None, seed: int = 0
) -> list[dict[str, Any]]:
    """Validate a ladder request and return the specs of its tables.

    Parameters
    ----------
    settings : Settings
        ``nested_factor``, ``nested_levels``, ``nested_min_log10_volume`` (:func:`ladder_plan`)
        and everything :func:`table_spec` uses.
    function_id : str
        A registered function with known ``x*`` and ``f*`` and no atom at ``f*``.
    log2n : int, optional
        ``N = 2^log2n`` samples per level; default ``settings.table_default_log2n``.
    seed : int, default 0
        Sobol seed of every level.

    Returns
    -------
    list of dict
        ``L + 1`` specs from :func:`table_spec`: level 0 is the whole domain (the default
        table's spec, and hash, when ``log2n`` and ``seed`` are the defaults); level ``j >= 1``
        is the per-coordinate box ``delta = h_j`` (:func:`ladder_plan`) whose region also
        records ``ladder = {"sigma": σ_j, "shape": {...}}`` (method, model, half-widths ``a``,
        degree, fit residual, fallback reason), so the hash changes with the shape; or an
        oriented box (``kind="oriented"``), with ``intersect="domain"`` when it leaves the
        domain (the level is ``B ∩ Ω``: its table keeps only the points inside the domain,
        :func:`app.domain.sampling.evaluate_intersected_chunk`). Every level's box is known
        before any table is built: the levels build in parallel.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        No ``x*``/``f*`` or an atom (``field="function_id"``); bad ``log2n``/``seed``.
    """
    fn, shape, plan = ladder_plan(settings, function_id)
    specs = [table_spec(settings, function_id=fn.id, log2n=log2n, seed=seed)]
    for box in plan.boxes[1:]:
        assert box.half_widths is not None
        if box.axes is not None:
            spec = table_spec(settings, function_id=fn.id, log2n=log2n, seed=seed)
            spec["region"] = _oriented_region(fn, box)
        else:
            spec = table_spec(
                settings, function_id=fn.id, delta=_floats(box.half_widths), log2n=log2n, seed=seed
            )
        spec["region"]["ladder"] = {"sigma": float(box.delta or 0.0), "shape": shape.spec()}
        specs.append(spec)
    return specs


def _oriented_region(fn: BenchmarkFunction, box: nested.LadderBox) -> dict[str, Any]:
    """The region ``{"kind": "oriented", ...}`` of an oriented ladder box (inside the domain).

    ``center`` is ``x*``, ``axes`` the rows ``Q[:, k]`` (the box's axes, rounded by
    :func:`app.domain.nested.ladder_shape`), ``half_widths`` the ``h_k`` along them; the points
    are ``center + ((2U − 1)·h) @ Qᵀ`` (:func:`app.domain.sampling.oriented_box_points`), and
    ``lower``/``upper`` is the box's axis-aligned bounding box. An intersected level
    (:attr:`app.domain.nested.LadderBox.intersect`) adds ``"intersect": "domain"`` (the region
    is the box ∩ the domain: points outside the domain are drawn but never evaluated; the
    measured share kept is in the table's provenance, ``kept``) and its bounding box is clipped
    to the domain.
    """
    assert box.axes is not None
    assert box.half_widths is not None
    assert fn.x_opt is not None
    region: dict[str, Any] = {
        "kind": "oriented",
        "center": _floats(fn.x_opt),
        "axes": [_floats(col) for col in np.asarray(box.axes).T],
        "half_widths": _floats(box.half_widths),
        "lower": _floats(box.lower),
        "upper": _floats(box.upper),
    }
    if box.intersect:
        region["intersect"] = "domain"
    return region


def region_intersected(region: Mapping[str, Any]) -> bool:
    """Whether a spec region is an oriented box intersected with the domain (``B ∩ Ω``)."""
    return region.get("kind") == "oriented" and region.get("intersect") == "domain"


def kept_provenance(n_box: int, n_kept: int) -> dict[str, Any]:
    """The measured share of an intersected level's box kept inside the domain (provenance)."""
    lo, hi = nested.kept_share_interval(n_box, n_kept, 0.95)
    return {
        "n_box": n_box,
        "n_kept": n_kept,
        "share": n_kept / n_box,
        "share_interval_95": [lo, hi],
        "method": "share of the table's n_box scrambled Sobol points of the oriented box inside "
        "the domain (f evaluated only there), Clopper-Pearson 95% interval; the ranks combine "
        "it with the level's own interval (Bonferroni, app.domain.nested.nested_curve)",
    }


def oriented_geometry(region: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(center, Q, h)`` of an ``"oriented"`` spec region (``Q`` with the axes as columns)."""
    center = np.asarray(region["center"], dtype=np.float64)
    axes = np.asarray(region["axes"], dtype=np.float64).T
    half = np.asarray(region["half_widths"], dtype=np.float64)
    return center, axes, half


def region_ln_volume_fraction(fn: BenchmarkFunction, region: Mapping[str, Any]) -> float:
    """``ln(Leb(region)/Leb(Ω))`` of a spec region: a box, the domain or an oriented box.

    For an intersected region (``B ∩ Ω``) this is the box ``B``'s (capped at 0); the share of
    ``B`` inside ``Ω`` is measured by its table (:func:`kept_provenance`).
    """
    if region.get("kind") == "domain":  # also a user table's, whose domain is not known
        return 0.0
    if region.get("kind") == "oriented":
        _, axes, half = oriented_geometry(region)
        ln_det = float(np.linalg.slogdet(axes)[1])
        ln = float(np.sum(np.log(2.0 * half)) + ln_det - np.sum(np.log(fn.upper - fn.lower)))
        return min(ln, 0.0)
    return nested.ln_volume_fraction(
        fn.lower, fn.upper, np.asarray(region["lower"]), np.asarray(region["upper"])
    )


def ladder_table_ids(
    settings: Settings, function_id: str, *, log2n: int | None = None, seed: int = 0
) -> list[str]:
    """Return the table ids of a ladder, level 0 first (see :func:`ladder_specs`).

    Cached per function and the settings that decide the specs: ``regions='auto'`` asks for
    them on every rank request, and hashing some twenty specs costs milliseconds.
    """
    _, shape, _ = ladder_plan(settings, function_id)  # validates; cached per function
    key = (
        function_id,
        shape,
        log2n,
        seed,
        *(getattr(settings, name) for name in _LADDER_SETTINGS),
    )
    ids = _LADDER_IDS.get(key)
    if ids is None:
        specs = ladder_specs(settings, function_id, log2n=log2n, seed=seed)
        ids = tuple(table_id_for(spec_hash(spec)) for spec in specs)
        if len(_LADDER_IDS) >= _CACHE_MAX:
            _LADDER_IDS.clear()
        _LADDER_IDS[key] = ids
    return list(ids)


_LADDER_SETTINGS = (
    "table_default_log2n",
    "table_max_log2n",
    "table_k_exact",
    "table_n_knots",
    "nested_factor",
    "nested_levels",
    "nested_min_log10_volume",
)
"""The settings a ladder's specs depend on (with the function, ``log2n`` and ``seed``)."""
_LADDER_IDS: dict[tuple[Any, ...], tuple[str, ...]] = {}


def request_ladder(
    sm: SM,
    settings: Settings,
    dispatcher: Dispatcher,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
) -> list[TableView]:
    """Return the tables of a ladder of nested regions, queueing the missing ones.

    Every level is validated before any table is created; each level is then requested like
    any table (idempotent: an existing table is returned, a failed one retried), and all of
    them are queued at once.

    Parameters
    ----------
    sm, settings, dispatcher
        As in :func:`request_table`.
    function_id, log2n, seed
        As in :func:`ladder_specs`.

    Returns
    -------
    list of TableView
        ``L + 1`` views, level 0 (the domain) first.

    Raises
    ------
    app.errors.NotFound, app.errors.InvalidInput
        From :func:`ladder_specs`.
    """
    specs = ladder_specs(settings, function_id, log2n=log2n, seed=seed)
    return [_request_spec(sm, settings, dispatcher, spec)[0] for spec in specs]


def describe_ladder(
    settings: Settings, views: Sequence[TableView], *, now: datetime | None = None
) -> dict[str, Any]:
    """Return the status, progress, shape and levels of a ladder (the body of ``LadderRead``).

    Parameters
    ----------
    settings : Settings
        The ladder settings (echoed, with why the ladder has ``L`` levels).
    views : sequence of TableView
        The ladder's tables, level 0 first (:func:`request_ladder`).

    Returns
    -------
    dict
        ``function_id``, ``status`` (``ready`` when every level is, ``failed`` if one failed,
        else ``building``), ``progress`` (chunks over all levels), ``eta_seconds``
        (:func:`build_eta` over the levels; ``now`` is its clock), ``n``, ``seed``,
        ``nested_factor``, ``nested_levels`` (``L``, boxes below the domain),
        ``nested_levels_cap``, ``nested_min_log10_volume``, ``stop`` and ``stop_detail`` (why
        ``L``: ``volume``, ``levels`` or ``thin``), ``deepest_log10_volume_fraction``, ``shape``
        (:meth:`app.domain.nested.LadderShape.describe`: half-widths ``a``, degree, model, fit
        residual, fallback reason, probes, condition, fill share) and one entry per level:
        ``level``, ``kind`` (``domain``, ``box`` or ``oriented``: a box along the fitted form's
        axes, used for rotated forms where it fits in the domain), ``delta`` (``None`` for the
        domain, else the ``d`` half-widths ``h_j``, along the box's own axes when oriented),
        ``sigma``, ``log10_volume_fraction``, ``id``, ``location``, ``status``, ``progress``.
    """
    fn, shape, plan = ladder_plan(settings, views[0].function_id)
    levels = []
    for level, view in enumerate(views):
        region = view.spec["region"]
        ln_fraction = region_ln_volume_fraction(fn, region)
        oriented = region["kind"] == "oriented"
        levels.append(
            {
                "level": level,
                "kind": "oriented ∩ domain" if region_intersected(region) else region["kind"],
                "delta": region["half_widths"] if oriented else region.get("delta"),
                "sigma": region.get("ladder", {}).get("sigma"),
                "log10_volume_fraction": ln_fraction / math.log(10.0),
                "id": view.id,
                "location": view.location,
                "status": view.status,
                "progress": view.progress,
            }
        )
    statuses = {view.status for view in views}
    status = "ready" if statuses == {"ready"} else "failed" if "failed" in statuses else "building"
    done = sum(view.progress["done"] for view in views)
    total = sum(view.progress["total"] for view in views)
    return {
        "function_id": fn.id,
        "ladder": True,
        "status": status,
        "nested_factor": settings.nested_factor,
        "nested_levels": len(views) - 1,
        "nested_levels_cap": settings.nested_levels,
        "nested_min_log10_volume": settings.nested_min_log10_volume,
        "stop": plan.stop,
        "stop_detail": plan.stop_detail,
        "deepest_log10_volume_fraction": levels[-1]["log10_volume_fraction"],
        "shape": shape.describe(),
        "n": views[0].n,
        "seed": views[0].seed,
        "progress": {"done": done, "total": total, "fraction": done / total if total else 1.0},
        "eta_seconds": build_eta([build_clock(v) for v in views], now or _now()),
        "levels": levels,
    }


def ready_ladder(
    sm: SM, settings: Settings, function_id: str, *, log2n: int | None = None, seed: int = 0
) -> list[tuple[TableView, absrank.TableData]] | None:
    """Return every level's view and data when the whole ladder is ready, else ``None``.

    Ready tables come from the per-process cache when loaded before (no SQL, as
    :func:`cached_ready_table`); the others are loaded once and cached.

    Parameters
    ----------
    sm, settings
        Database and configuration.
    function_id, log2n, seed
        As in :func:`ladder_specs`.

    Returns
    -------
    list of (TableView, TableData) or None
        Level 0 first; ``None`` if some level is missing, building, merging or failed.

    Raises
    ------
    app.errors.NotFound, app.errors.InvalidInput
        From :func:`ladder_specs`.
    """
    out = []
    for table_id in ladder_table_ids(settings, function_id, log2n=log2n, seed=seed):
        ready = cached_ready_table(sm, table_id)
        if ready is None:
            try:
                ready = load_table_data(sm, table_id)
            except (NotFound, TableNotReady):
                return None
        out.append(ready)
    return out


# ---------------------------------------------------------------------------- building


@dataclass(frozen=True)
class _Claimed:
    spec: dict[str, Any]
    n: int
    chunk_size: int


def _claim(sm: SM, settings: Settings, table_id: str, index: int, worker: str) -> _Claimed | str:
    now = _now()
    with session_scope(sm) as session:
        repo = TableRepository(session)
        table = repo.get(table_id)
        if table is None:
            return "unknown"
        if table.status != "building":
            return f"skipped-{table.status}"
        chunk = repo.get_chunk(table_id, index)
        if chunk is None:
            return "unknown"
        if chunk.status == "done":
            return "skipped-done"
        lease = now + timedelta(seconds=settings.chunk_lease_seconds)
        if not repo.claim_chunk(table_id, index, now=now, lease_until=lease, worker=worker):
            return "skipped-leased"
        repo.mark_started(table_id, now=now)
        return _Claimed(dict(table.spec), int(table.n), int(table.chunk_size))


def _fail(sm: SM, table_id: str, error: str, *, chunk: int | None = None) -> None:
    logger.error("table %s failed: %s", table_id, error)
    with session_scope(sm) as session:
        repo = TableRepository(session)
        repo.mark_failed(table_id, error, now=_now())
        if chunk is not None:
            repo.release_chunk(table_id, chunk)


def _compute_chunk(spec: Mapping[str, Any], index: int, chunk_size: int) -> sampling.ChunkResult:
    fn = get_function(spec["function_id"])
    lower = np.asarray(spec["region"]["lower"], dtype=np.float64)
    upper = np.asarray(spec["region"]["upper"], dtype=np.float64)
    k_low = min(int(spec["representation"]["k_exact"]), chunk_size)
    seed = int(spec["seed"])
    f = fn.evaluate
    if fn.noisy:
        # one N(0, 1) per point from per-index blocks: any worker, any chunk size, same table
        normals = noise_normals(seed, index * chunk_size, chunk_size)
        f = functools.partial(fn.evaluate_with_normals, normals=normals)
    if region_intersected(spec["region"]):  # an oriented box ∩ the domain
        center, axes, half = oriented_geometry(spec["region"])
        if fn.noisy:

            def kept_f(X: np.ndarray, mask: np.ndarray) -> np.ndarray:
                return fn.evaluate_with_normals(X, normals=normals[mask])

        else:

            def kept_f(X: np.ndarray, mask: np.ndarray) -> np.ndarray:
                return fn.evaluate(X)

        return sampling.evaluate_intersected_chunk(
            kept_f, center, axes, half, fn.lower, fn.upper, seed, index, chunk_size, k_low
        )
    if spec["region"]["kind"] == "oriented":  # a ladder box along the local form's axes
        center, axes, half = oriented_geometry(spec["region"])
        return sampling.evaluate_oriented_chunk(
            f, center, axes, half, fn.lower, fn.upper, seed, index, chunk_size, k_low
        )
    return sampling.evaluate_chunk(f, lower, upper, seed, index, chunk_size, k_low)


NOISE_STREAM = 0x6E6F697365  # "noise": keeps the noise stream apart from any other use of a seed
NOISE_BLOCK = 1024
"""Sobol indices per noise stream: points ``[b·B, (b+1)·B)`` take their normals from stream b."""


def noise_normals(table_seed: int, start: int, size: int) -> np.ndarray:
    """The standard normals of Sobol indices ``[start, start + size)`` of a noisy table.

    Index ``i`` takes draw ``i mod B`` of ``default_rng(SeedSequence([NOISE_STREAM, table_seed,
    i // B]))``, ``B = NOISE_BLOCK``: derived from the table seed and the index only, so a point's
    noise does not depend on the chunk size, on which worker computes it or when.

    Returns
    -------
    ndarray, shape (size,)
    """
    first, last = start // NOISE_BLOCK, (start + size - 1) // NOISE_BLOCK
    blocks = [
        np.random.default_rng(
            np.random.SeedSequence([NOISE_STREAM, int(table_seed), b])
        ).standard_normal(NOISE_BLOCK)
        for b in range(first, last + 1)
    ]
    offset = start - first * NOISE_BLOCK
    return np.concatenate(blocks)[offset : offset + size]


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
    if isinstance(claimed, str):
        logger.debug("chunk %s/%d: %s", table_id, index, claimed)
        return claimed
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
        result = _compute_chunk(claimed.spec, index, claimed.chunk_size)
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
            now=_now(),
        )
        complete = repo.all_chunks_done(table_id)
    if not wrote:
        return "duplicate"
    if complete and merge(sm, settings, table_id):
        return "merged"
    return "done"


# ---------------------------------------------------------------------------- merging


def combine_chunks(
    chunks: Iterable[ChunkBlobs], *, n: int, chunk_size: int, dim: int, k: int
) -> tuple[np.ndarray, np.ndarray]:
    """Assemble stored chunk results into all values (Sobol order) and the k lowest points.

    Decodes the blobs, checks that every chunk is present exactly once with the right size, and
    joins them with :func:`app.domain.sampling.merge_chunk_results`.

    Parameters
    ----------
    chunks : iterable of ChunkBlobs
        Every chunk exactly once, any order.
    n, chunk_size, dim : int
        Table size ``N``, chunk size ``B`` and dimension ``d``.
    k : int
        Number of lowest samples whose points are kept, ``<= N``.

    Returns
    -------
    values : ndarray, shape (N,)
        Function values in Sobol index order.
    low_x : ndarray, shape (k, d)
        Points of the ``k`` lowest values, ordered by (value, Sobol index).

    Raises
    ------
    ValueError
        A chunk is missing, repeated or has the wrong size.
    """
    n_chunks = n // chunk_size
    results: list[sampling.ChunkResult | None] = [None] * n_chunks
    for chunk in chunks:
        if not 0 <= chunk.index < n_chunks or results[chunk.index] is not None:
            raise ValueError(f"chunk {chunk.index} is out of range or repeated")
        values = np.frombuffer(chunk.values, dtype="<f8")
        low_index = np.frombuffer(chunk.low_index, dtype="<i8")
        if values.shape != (chunk_size,) or np.any((low_index < 0) | (low_index >= chunk_size)):
            raise ValueError(f"chunk {chunk.index} has a wrong size")
        low_x = np.frombuffer(chunk.low_x, dtype="<f8").reshape(low_index.size, dim)
        results[chunk.index] = sampling.ChunkResult(values, low_index, low_x)
    missing = [i for i, r in enumerate(results) if r is None]
    if missing:
        raise ValueError(f"chunks missing: {missing[:10]}")
    complete = [r for r in results if r is not None]
    # every global k-lowest sample is among its own chunk's k lowest; ties follow Sobol order
    values, low_x, _ = sampling.merge_chunk_results(complete, k)
    return values, np.ascontiguousarray(low_x)


def summarize(values: np.ndarray) -> dict[str, Any]:
    """Return ``y_1``, ``y_N`` and order statistics of a table's samples.

    For each level ``v`` in :data:`SUMMARY_LEVELS` the quantile is the smallest sample ``t``
    with ``#{y_i <= t} / (N + 1) >= v`` (``y_1`` when none is; ``y_N`` when ``v > N/(N + 1)``):
    an order statistic, not the inverse of the published curve
    (:func:`app.services.table_publish.table_quantiles`); reads label it so
    (:data:`SUMMARY_QUANTILES_ARE`).
    """
    n = values.size
    ranks = [min(max(math.ceil(v * (n + 1)), 1), n) for v in SUMMARY_LEVELS]
    kth = sorted({0, n - 1, *(r - 1 for r in ranks)})
    part = np.partition(values, kth)
    return {
        "y_1": float(part[0]),
        "y_N": float(part[n - 1]),
        "quantiles": [
            {"v": v, "t": float(part[r - 1])} for v, r in zip(SUMMARY_LEVELS, ranks, strict=True)
        ],
    }


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
        r = _compute_chunk(spec, index, size)
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
) -> tuple[absrank.TableData, np.ndarray]:
    rep = spec["representation"]
    k_exact = int(rep["k_exact"])
    values, low_x = combine_chunks(
        chunks,
        n=n,
        chunk_size=chunk_size,
        dim=len(spec["region"]["lower"]),
        k=min(k_exact, n),
    )
    if region_intersected(spec["region"]):
        # B ∩ Ω: the table is over the kept points (Eq. 28 counts among them); the +inf of the
        # points outside Ω sort last, so the first min(k, M) lowest are the kept ones
        keep = np.isfinite(values)
        values = values[keep]
        if values.size == 0:
            raise ValueError("no Sobol point of the oriented box lies inside the domain")
        low_x = np.ascontiguousarray(low_x[: min(low_x.shape[0], values.size)])
    data = absrank.build_table_data(values, low_x, k_exact=k_exact, n_knots=int(rep["n_knots"]))
    return data, values


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
    now = _now()
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
        summary = summarize(values)
    except Exception as exc:
        with session_scope(sm) as session:
            current = TableRepository(session).get(table_id)
        if current is not None and current.status == "ready":
            return False  # a concurrent merger won and dropped the chunk blobs under us
        _fail(sm, table_id, f"merge: {type(exc).__name__}: {exc}")
        return False
    del values
    finished = _now()
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


def redispatch(
    sm: SM, settings: Settings, dispatcher: Dispatcher, *, now: datetime | None = None
) -> dict[str, int]:
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
    dict
        ``{"chunks_expired": int, "chunks_lost": int, "merges": int}``.
    """
    now = now or _now()
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
    counts = {
        "chunks_expired": sum(k.reason == "expired" for k in keys),
        "chunks_lost": sum(k.reason == "lost" for k in keys),
        "merges": len(merges),
    }
    if keys or merges:
        logger.info("redispatch: %s", counts)
    return counts
