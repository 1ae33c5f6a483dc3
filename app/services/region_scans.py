"""Use cases of ``/v1/region-scans``: the δ scan of Jing & Liu §V, as a job.

A scan ranks the compared algorithms on one cheap box table ``[x* − δ, x* + δ] ∩ Ω`` per δ of
a grid, measures how well each box spreads their ranks by the geometric mean difference ``e``
(Eq. 29, :mod:`app.domain.delta_regions`), chooses the δ with the largest ``e``, and names the
full-size table at that δ (its ``POST /v1/tables`` body and the id it will have).

Flow: :func:`create` validates every δ through :func:`app.services.tables.table_spec` (nothing
is created on a bad request), queues the tables with :func:`app.services.tables.request_table`
and stores the scan under an id derived from the normalized request (which names the tables).
:func:`get` reports progress from the tables (the database is the source of truth) until all
are ready; the first reader after that computes the answer, stores it once, and every later
read returns the stored answer (identical bytes). A failed table makes the scan ``failed``;
posting the same request again re-queues the failed tables.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from app.config import Settings
from app.db import session_scope
from app.domain import delta_regions as regionscan
from app.domain.functions import BenchmarkFunction
from app.errors import InvalidInput, NotFound
from app.repositories.region_scans import RegionScanRepository
from app.schemas.region_scans import DeltaGrid, RegionScanCreate
from app.services import costs, tables
from app.services._region_scan_answers import answer, building, table_views
from app.services._region_scan_common import (
    DEFAULT_FOLLOW_UP_LOG2N,
    DEFAULT_GRID_NOTE,
    DEFAULT_LOG2N,
    METHOD,
    PAPER_TAIL_NOTE,
    SCALE_NOTE,
    SEPARATING_RULE,
    SM,
    TIE_RULE,
    location,
    scan_id_for,
)
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.provenance import canonical_sha256
from app.services.table_cache import TableCaches

__all__ = [
    "DEFAULT_FOLLOW_UP_LOG2N",
    "DEFAULT_GRID_NOTE",
    "DEFAULT_LOG2N",
    "METHOD",
    "PAPER_TAIL_NOTE",
    "SCALE_NOTE",
    "SEPARATING_RULE",
    "TIE_RULE",
    "create",
    "get",
    "location",
    "scan_id_for",
]


# ---------------------------------------------------------------------------------------------
# the request


@dataclass(frozen=True)
class _Plan:
    """A validated request: what is hashed and stored, and the tables it needs."""

    payload: dict[str, Any]
    digest: str
    scan_id: str


def _function(body: RegionScanCreate) -> BenchmarkFunction:
    fn = find_function(body.function_id)
    if fn.x_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known minimiser x*, so boxes [x* - δ, x* + δ] are undefined",
            field="function_id",
        )
    if body.values_are == "error" and fn.f_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known f*, so errors cannot be ranked", field="values_are"
        )
    return fn


def _values(body: RegionScanCreate, settings: Settings) -> list[list[Any]]:
    """``[[name, value], ...]`` in the order given; names unique."""
    if isinstance(body.values, dict):
        pairs: list[list[Any]] = [[name, float(v)] for name, v in body.values.items()]
    else:
        pairs = [[item.algorithm, float(item.value)] for item in body.values]
        seen: set[str] = set()
        for i, (name, _) in enumerate(pairs):
            if name in seen:
                raise InvalidInput(
                    f"algorithm {name!r} is given twice; send one value per algorithm",
                    field=f"values.{i}.algorithm",
                )
            seen.add(name)
    if len(pairs) > settings.max_algorithms:
        raise InvalidInput(f"at most {settings.max_algorithms} algorithms per scan", field="values")
    return pairs


def _grid(
    body: RegionScanCreate, fn: BenchmarkFunction, settings: Settings
) -> tuple[list[float], dict[str, Any], list[str]]:
    """The δ values (given order), the grid's description and the field of each δ."""
    limit = settings.max_region_scan_deltas
    given = body.deltas
    if given is None:
        count = min(regionscan.DEFAULT_GRID_COUNT, limit)
        if count < 2:
            raise InvalidInput(
                f"this deployment allows {limit} δ per scan, fewer than the default grid needs; "
                "give deltas explicitly",
                field="deltas",
            )
        with domain_errors_as_problems("function_id"):
            deltas = regionscan.default_grid(fn.lower, fn.upper, count=count).tolist()
        grid = {
            "kind": "default",
            "count": count,
            "half_width": float(np.max(fn.upper - fn.lower)) / 2.0,
            "from": regionscan.DEFAULT_GRID_LOW,
            "to": regionscan.DEFAULT_GRID_HIGH,
        }
        return deltas, grid, ["deltas"] * len(deltas)
    if isinstance(given, DeltaGrid):
        if given.count > limit:
            raise InvalidInput(
                f"at most {limit} δ values per scan (max_region_scan_deltas)", field="deltas.count"
            )
        with domain_errors_as_problems("deltas"):
            deltas = regionscan.geometric_grid(given.min, given.max, given.count).tolist()
        grid = {"kind": "geometric", "min": given.min, "max": given.max, "count": given.count}
        return deltas, grid, ["deltas"] * len(deltas)
    if len(given) > limit:
        raise InvalidInput(
            f"{len(given)} δ values; at most {limit} per scan (max_region_scan_deltas)",
            field="deltas",
        )
    seen: dict[float, int] = {}
    for i, d in enumerate(given):
        if d in seen:
            raise InvalidInput(
                f"δ = {d!r} is given twice (deltas.{seen[d]} and deltas.{i})", field=f"deltas.{i}"
            )
        seen[d] = i
    return [float(d) for d in given], {"kind": "list"}, [f"deltas.{i}" for i in range(len(given))]


def _log2n(value: int | None, default: int, settings: Settings, field: str) -> tuple[int, bool]:
    """The log2n to use, and whether the default was capped by ``table_max_log2n``."""
    top = settings.table_max_log2n
    if value is None:
        return min(default, top), default > top
    if not tables.MIN_LOG2N <= value <= top:
        raise InvalidInput(f"{field} must be between {tables.MIN_LOG2N} and {top}", field=field)
    return value, False


def _table_ids(
    settings: Settings,
    fn: BenchmarkFunction,
    deltas: list[float],
    fields: list[str],
    *,
    log2n: int,
    seed: int,
) -> tuple[list[str], list[dict[str, Any]]]:
    """The table id and region of every δ, each validated by ``table_spec`` (no side effect)."""
    ids, regions = [], []
    for delta, field in zip(deltas, fields, strict=True):
        try:
            spec = tables.table_spec(
                settings, function_id=fn.id, delta=delta, log2n=log2n, seed=seed
            )
        except InvalidInput as exc:
            if exc.field != "delta":
                raise
            raise InvalidInput(f"δ = {delta!r}: {exc.detail}", field=field) from exc
        ids.append(tables.table_id_for(tables.spec_hash(spec)))
        regions.append(spec["region"])
    return ids, regions


def _method(tail: str) -> dict[str, Any]:
    """The ``method`` of a scan with this ``tail``: :data:`METHOD` itself for the default."""
    return METHOD if tail == METHOD["tail"] else {**METHOD, "tail": tail}


def _volume_fraction(fn: BenchmarkFunction, region: dict[str, Any]) -> float:
    """Leb(box ∩ Ω) / Leb(Ω)."""
    width = np.asarray(region["upper"]) - np.asarray(region["lower"])
    return float(np.prod(width / (fn.upper - fn.lower)))


def _plan(settings: Settings, body: RegionScanCreate) -> _Plan:
    fn = _function(body)
    values = _values(body, settings)
    deltas, grid, fields = _grid(body, fn, settings)
    log2n, log2n_capped = _log2n(body.log2n, DEFAULT_LOG2N, settings, "log2n")
    follow, follow_capped = _log2n(
        body.follow_up_log2n, DEFAULT_FOLLOW_UP_LOG2N, settings, "follow_up_log2n"
    )
    # the δ tables are queued by the scan (the follow-up is a table request it answers with)
    chunks = len(deltas) * 2 ** max(0, log2n - settings.table_chunk_log2)
    costs.region_scan_chunks(chunks, settings, field="log2n" if body.log2n else "deltas")
    ids, regions = _table_ids(settings, fn, deltas, fields, log2n=log2n, seed=body.seed)
    order = sorted(range(len(deltas)), key=lambda i: deltas[i])
    payload = {
        "function_id": fn.id,
        "values": values,
        "values_are": body.values_are,
        "budget": body.budget,
        "grid": grid,
        "deltas": [deltas[i] for i in order],
        "tables": [ids[i] for i in order],
        "regions": [regions[i] for i in order],
        "volume_fractions": [_volume_fraction(fn, regions[i]) for i in order],
        "log2n": log2n,
        "follow_up_log2n": follow,
        "log2n_capped": log2n_capped,
        "follow_up_capped": follow_capped,
        "seed": body.seed,
        "method": _method(body.tail),
    }
    digest = canonical_sha256(payload)
    return _Plan(payload, digest, scan_id_for(digest))


# ---------------------------------------------------------------------------------------------
# use cases


def _refresh(sm: SM, settings: Settings, scan_id: str, cache: TableCaches) -> dict[str, Any]:
    """The scan as it is now: stored answer, computed answer, or progress."""
    with session_scope(sm) as session:
        scan = RegionScanRepository(session).get(scan_id)
        if scan is None:
            raise NotFound(f"no region scan with id {scan_id[:40]!r}", field="scan_id")
        if scan.status == "ready" and scan.result is not None:
            return scan.result
        payload = dict(scan.request)
    views = table_views(sm, payload["tables"])
    if all(v is not None and v.ready for v in views):
        result = answer(sm, settings, scan_id, payload, cache=cache)
        with session_scope(sm) as session:
            repo = RegionScanRepository(session)
            repo.finish(scan_id, result)
            stored = repo.get(scan_id)
            assert stored is not None
            assert stored.result is not None
            return stored.result  # the first answer stored, whoever computed it
    failed = [
        (d, t, "missing" if v is None else v.error)
        for d, t, v in zip(payload["deltas"], payload["tables"], views, strict=True)
        if v is None or v.status == "failed"
    ]
    status = "failed" if failed else "building"
    error = "; ".join(f"δ = {d:g} (table {t}): {e}" for d, t, e in failed[:5]) if failed else None
    with session_scope(sm) as session:
        RegionScanRepository(session).set_status(scan_id, status, error=error)
    return building(scan_id, payload, views, settings, status)


def create(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    body: RegionScanCreate,
    *,
    cache: TableCaches,
    charge: tables.ChunkCharge | None = None,
) -> dict[str, Any]:
    """Queue one cheap table per δ and store the scan; identical requests share one scan.

    Parameters
    ----------
    sm, settings, dispatcher
        Database, configuration and task queue (the caller may queue builds).
    body : RegionScanCreate
    cache : TableCaches
        The application's table caches (``app.state.table_caches``).
    charge : callable, optional
        Charged the chunks of the scan's tables that do not exist yet, all at once before
        any is queued (``charge`` of :func:`app.services.tables.request_table`): a refused
        scan queues nothing.

    Returns
    -------
    dict
        The body of :class:`app.schemas.region_scans.RegionScanRead`: ``status`` ``ready``
        (with the answer) when every table is already built, else ``building`` or ``failed``.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        A function without ``x*``; duplicate algorithm names, too many algorithms; a δ whose
        box degenerates, duplicate δ, too many δ; ``log2n`` or ``follow_up_log2n`` out of
        range; errors for a function without ``f*``. The field is named.
    """
    plan = _plan(settings, body)
    payload = plan.payload
    with session_scope(sm) as session:
        stored = RegionScanRepository(session).get(plan.scan_id)
        if stored is not None and stored.status == "ready" and stored.result is not None:
            return stored.result
    if charge is not None:
        n = 1 << int(payload["log2n"])
        charge(tables.unstored_chunks(sm, settings, [(t, n) for t in payload["tables"]]))
    # queue the tables first (idempotent; failed ones are reset): a scan row never names a
    # table that was not requested
    for delta, table_id in zip(payload["deltas"], payload["tables"], strict=True):
        with domain_errors_as_problems():
            view, _ = tables.request_table(
                sm,
                settings,
                dispatcher,
                function_id=payload["function_id"],
                delta=delta,
                log2n=payload["log2n"],
                seed=payload["seed"],
                cache=cache,
            )
        assert view.id == table_id
    with session_scope(sm) as session:
        RegionScanRepository(session).add(
            scan_id=plan.scan_id,
            request_sha256=plan.digest,
            function_id=payload["function_id"],
            request=payload,
            table_ids=list(payload["tables"]),
        )
    return _refresh(sm, settings, plan.scan_id, cache)


def get(sm: SM, settings: Settings, scan_id: str, *, cache: TableCaches) -> dict[str, Any]:
    """A scan: progress while its tables build, then (computed once, stored) the answer.

    ``cache`` is the application's table caches (``app.state.table_caches``).

    Raises
    ------
    app.errors.NotFound
        No scan has this id.
    """
    return _refresh(sm, settings, scan_id, cache)
