"""Use cases of ``/v1/region-scans``: the δ scan of Jing & Liu §V, as a job.

A scan ranks the compared algorithms on one cheap box table ``[x* − δ, x* + δ] ∩ Ω`` per δ of
a grid, measures how well each box spreads their ranks by the geometric mean difference ``e``
(Eq. 29, :mod:`app.domain.regionscan`), chooses the δ with the largest ``e``, and names the
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

import math
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain import absrank
from app.domain import delta_regions as regionscan  # renamed from app.domain.regionscan
from app.domain.errors import DomainError
from app.domain.functions import BenchmarkFunction
from app.errors import InvalidInput, NotFound
from app.repositories.region_scans import RegionScanRepository
from app.schemas.region_scans import DeltaGrid, RegionScanCreate
from app.services import tables
from app.services.errors import domain_errors_as_problems
from app.services.eta import build_eta
from app.services.functions import find_function
from app.services.provenance import canonical_sha256, provenance
from app.services.regions import rank_context
from app.services.serialize import jsonable

SM = sessionmaker[Session]

#: ``N = 2^15`` cheap tables and a ``2^20`` follow-up, as in Jing & Liu §V.
DEFAULT_LOG2N = 15
DEFAULT_FOLLOW_UP_LOG2N = 20
#: How ranks are computed on each box; part of a scan's identity (bump ``version`` whenever the
#: computation of the answer changes). A request's ``tail`` other than the default replaces
#: ``tail`` in its copy (:func:`_method`), so default scans keep their hash and id.
METHOD = {
    "version": 1,
    "tail": "auto",
    "tail_k": 100,
    "distinct": "ranks are distinct when their log10 v differ (exact floating-point comparison)",
}
TIE_RULE = (
    "the δ with the largest e (compared as log10 e) is chosen; of equal e, the larger δ (its box "
    "clips fewer sublevel sets and leaves fewer values above its largest sample)"
)
SEPARATING_RULE = (
    "the same rule among the δ whose ranks keep every distinct metric value apart (as many "
    "distinct ranks as distinct values)"
)
SCALE_NOTE = (
    "ranks from different regions are different scales: on each δ, v is the probability that a "
    "uniform point of THAT box [x* - δ, x* + δ] ∩ domain does at least as well, not a point of "
    "the domain; compare e across δ, never the ranks themselves"
)
PAPER_TAIL_NOTE = (
    "tail='paper': Eq. 28 exactly as published (Jing & Liu, Table V): v = exp(t - y_1)/(N+1) "
    "below each box's lowest sample y_1 and 1 - exp(-ln(N+1) t/y_N) above its largest y_N; "
    "these tails are not scale-invariant (multiply f by 1000 and they change) and are positive "
    "below f*, where the true v is 0"
)
DEFAULT_GRID_NOTE = (
    f"default δ grid: geometric from {regionscan.DEFAULT_GRID_LOW:g} to "
    f"{regionscan.DEFAULT_GRID_HIGH:g} x the domain's largest half-width "
    f"({regionscan.DEFAULT_GRID_COUNT} values, fewer when max_region_scan_deltas is smaller)"
)


def scan_id_for(request_sha256: str) -> str:
    """Stable id of a scan: ``r`` + the first 23 hex digits of its request hash."""
    return "r" + request_sha256[:23]


def location(scan_id: str) -> str:
    """URL path of a scan."""
    return f"/v1/region-scans/{scan_id}"


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
        pairs = [[name, float(v)] for name, v in body.values.items()]
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
# progress


def _views(sm: SM, table_ids: list[str]) -> list[tables.TableView | None]:
    out: list[tables.TableView | None] = []
    for table_id in table_ids:
        try:
            out.append(tables.get_table(sm, table_id))
        except NotFound:
            out.append(None)
    return out


def _progress(
    views: list[tables.TableView | None], n_chunks: list[int], now: datetime | None = None
) -> tuple[dict[str, Any], float | None]:
    """Tables and chunks done, and the ETA of the tables still building (eta.build_eta)."""
    ready = sum(1 for v in views if v is not None and v.ready)
    done = sum(0 if v is None else v.progress["done"] for v in views)
    total = sum(n_chunks)
    progress = {
        "tables": {"ready": ready, "total": len(views)},
        "chunks": {"done": done, "total": total, "fraction": done / total if total else 1.0},
    }
    clocks = [tables.build_clock(v) for v in views if v is not None]
    return progress, build_eta(clocks, now or datetime.now(UTC))


def _table_entry(
    delta: float,
    table_id: str,
    region: dict[str, Any],
    fraction: float,
    view: tables.TableView | None,
    n: int,
) -> dict[str, Any]:
    chunks = {"done": 0, "total": n, "fraction": 0.0} if view is None else view.progress
    return {
        "delta": delta,
        "table_id": table_id,
        "location": tables.table_location(table_id),
        "status": "missing" if view is None else view.status,
        "progress": chunks,
        "eta_seconds": None if view is None else view.eta_seconds,
        "error": (
            "the table no longer exists; post the scan again to re-queue it"
            if view is None
            else view.error
        ),
        "region": region,
        "volume_fraction": fraction,
        "ranks": None,
        "distinct_ranks": None,
        "distinct_v": None,
        "distinct_log10_v": None,
        "e": None,
        "log10_e": None,
        "computable": None,
        "reason": None,
        "tail": None,
        "warnings": [],
    }


def _head(scan_id: str, payload: dict[str, Any], status: str) -> dict[str, Any]:
    budget = payload["budget"]
    return {
        "id": scan_id,
        "location": location(scan_id),
        "status": status,
        "function_id": payload["function_id"],
        "algorithms": [{"algorithm": a, "value": v} for a, v in payload["values"]],
        "values_are": payload["values_are"],
        "budget": budget,
        "rank_of": "v1 (one evaluation)" if budget is None else f"v_c with c = {budget} (Eq. 19)",
        "grid": {**payload["grid"], "deltas": payload["deltas"]},
        "log2n": payload["log2n"],
        "follow_up_log2n": payload["follow_up_log2n"],
        "seed": payload["seed"],
        "tail": payload["method"]["tail"],
    }


def _notes(payload: dict[str, Any], *, failed: bool) -> list[str]:
    notes = [SCALE_NOTE]
    if payload["method"]["tail"] == "paper":
        notes.append(PAPER_TAIL_NOTE)
    grid = payload["grid"]
    if grid["kind"] == "default":
        deltas = payload["deltas"]
        notes.append(
            f"{DEFAULT_GRID_NOTE}: {len(deltas)} values from {deltas[0]:g} to {deltas[-1]:g} "
            f"(half-width {grid['half_width']:g})"
        )
    for key, capped, what, default in (
        ("log2n", "log2n_capped", "the cheap tables", DEFAULT_LOG2N),
        ("follow_up_log2n", "follow_up_capped", "the follow-up table", DEFAULT_FOLLOW_UP_LOG2N),
    ):
        if payload[capped]:
            notes.append(
                f"{what}: the default log2n {default} is above this deployment's "
                f"table_max_log2n, so it is capped at {payload[key]}"
            )
    if failed:
        notes.append("post the same request again to re-queue the failed tables")
    return notes


def _chunk_counts(payload: dict[str, Any], settings: Settings) -> list[int]:
    n = 2 ** int(payload["log2n"])
    return [n // tables.chunk_size_for(settings, n)] * len(payload["tables"])


def _building(
    scan_id: str,
    payload: dict[str, Any],
    views: list[tables.TableView | None],
    settings: Settings,
    status: str,
) -> dict[str, Any]:
    counts = [
        c if v is None else v.n_chunks
        for v, c in zip(views, _chunk_counts(payload, settings), strict=True)
    ]
    progress, eta = _progress(views, counts)
    if status == "failed":
        eta = None  # a failed table makes no progress until it is requested again
    entries = [
        _table_entry(d, t, r, f, v, c)
        for d, t, r, f, v, c in zip(
            payload["deltas"],
            payload["tables"],
            payload["regions"],
            payload["volume_fractions"],
            views,
            counts,
            strict=True,
        )
    ]
    errors = [
        {"delta": e["delta"], "table_id": e["table_id"], "error": e["error"]}
        for e in entries
        if e["status"] in ("failed", "missing")
    ]
    return {
        **_head(scan_id, payload, status),
        "progress": progress,
        "eta_seconds": eta,
        "errors": errors,
        "deltas": entries,
        "chosen": None,
        "chosen_separating": None,
        "follow_up": None,
        "notes": _notes(payload, failed=bool(errors)),
        "warnings": [],
        "provenance": provenance(
            payload,
            region_scan_id=scan_id,
            tables=[
                {"delta": d, "table_id": t}
                for d, t in zip(payload["deltas"], payload["tables"], strict=True)
            ],
            method=payload["method"],
        ),
    }


# ---------------------------------------------------------------------------------------------
# the answer


def _log10_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _tail_summary(tail: dict[str, Any]) -> dict[str, Any]:
    keys = ("mode", "lower", "upper", "beta", "beta_source", "k", "n", "max_interp_error")
    return jsonable({k: tail.get(k) for k in keys})


def _rank_box(
    fn: BenchmarkFunction,
    data: absrank.TableData,
    entry: dict[str, Any],
    names: list[str],
    values: list[float],
    t: np.ndarray,
    budget: int,
    method: dict[str, Any],
    values_are: str = "f",
) -> float | None:
    """Fill ``entry`` with the ranks on its box and their spread; return ``log10 e``.

    ``t``: the values in the units of ``values_are`` (errors are ranked as the gaps themselves).
    """
    region = entry["region"]
    lower = np.asarray(region["lower"], dtype=np.float64)
    upper = np.asarray(region["upper"], dtype=np.float64)
    ctx = rank_context(fn, lower, upper, whole_domain=False)
    try:
        curve = absrank.table_curve(
            data, ctx, tail=str(method["tail"]), k_anchor=int(method["tail_k"])
        )
        res = absrank.ranks_from_curve(t, curve, budget=budget, values_are=values_are)
    except DomainError as exc:
        entry |= {"computable": False, "reason": f"no ranks on this box: {exc}"}
        return None
    spread = regionscan.geometric_mean_difference(res.log10_v)
    distinct = spread.log10_v.tolist()
    _, first = np.unique(res.log10_v, return_index=True)  # same order as spread.log10_v
    entry |= {
        "ranks": [
            {
                "algorithm": name,
                "value": value,
                "v": float(v),
                "log10_v": _log10_or_none(float(lv)),
                "method": str(m),
            }
            for name, value, v, lv, m in zip(
                names, values, res.v.tolist(), res.log10_v.tolist(), res.method, strict=True
            )
        ],
        "distinct_ranks": spread.k,
        "distinct_v": res.v[first].tolist(),
        "distinct_log10_v": [_log10_or_none(x) for x in distinct],
        "e": spread.e,
        "log10_e": spread.log10_e,
        "computable": spread.computable,
        "reason": spread.reason,
        "tail": _tail_summary(res.tail.as_json()),
        "warnings": [w.message for w in res.warnings],
    }
    return spread.log10_e


def _follow_up(
    settings: Settings, fn: BenchmarkFunction, payload: dict[str, Any], delta: float
) -> dict[str, Any]:
    body = {
        "function_id": fn.id,
        "delta": delta,
        "log2n": payload["follow_up_log2n"],
        "seed": payload["seed"],
    }
    spec = tables.table_spec(settings, **body)
    table_id = tables.table_id_for(tables.spec_hash(spec))
    return {
        "table_request": body,
        "table_id": table_id,
        "location": tables.table_location(table_id),
        "log2n_capped": payload["follow_up_capped"],
        "how": "POST /v1/tables with table_request as the body (with an X-API-Key header when "
        "the deployment configures keys); it is not queued by the scan",
    }


def _choice(deltas: list[float], log10_e: list[float | None], rule: str) -> dict[str, Any] | None:
    choice = regionscan.choose_delta(deltas, log10_e)
    if choice is None:
        return None
    return {
        "delta": choice.delta,
        "index": choice.index,
        "e": 10.0**choice.log10_e,
        "log10_e": choice.log10_e,
        "rule": rule,
    }


def _choose(
    body: dict[str, Any], payload: dict[str, Any], log10_e: list[float | None], n_distinct: int
) -> None:
    """Set ``chosen`` (largest e) and ``chosen_separating`` (largest e among the δ whose ranks
    keep every distinct value apart), with warnings when they differ or do not exist."""
    deltas = payload["deltas"]
    entries = body["deltas"]
    body["chosen"] = _choice(deltas, log10_e, TIE_RULE)
    separating = [
        le if e["distinct_ranks"] == n_distinct else None
        for le, e in zip(log10_e, entries, strict=True)
    ]
    body["chosen_separating"] = _choice(deltas, separating, SEPARATING_RULE)
    chosen = body["chosen"]
    if chosen is None:
        body["warnings"].append(
            "no δ gives at least 2 distinct ranks, so none can be chosen: widen the grid (a "
            "larger box separates poor algorithms, a smaller one good ones)"
        )
        return
    k = entries[chosen["index"]]["distinct_ranks"]
    if k < n_distinct:
        alt = body["chosen_separating"]
        body["warnings"].append(
            f"at the chosen δ = {chosen['delta']:g} the {n_distinct} distinct values get only "
            f"{k} distinct ranks (e.g. values above the box's largest sample all get "
            "v = N/(N+1)); e counts distinct ranks only (Eq. 29), so a box that merges "
            "algorithms can win. "
            + (
                f"The largest e that keeps every value apart is at δ = {alt['delta']:g} "
                "(chosen_separating)"
                if alt is not None
                else "No δ of the grid keeps every value apart"
            )
        )


def _below_minimum(
    fn: BenchmarkFunction,
    names: list[str],
    t: np.ndarray,
    tail: str,
    minimum: float | None = None,
) -> list[str]:
    """``t`` below ``minimum`` (default ``f*``; 0 for errors: their own sign, not ``f* + e``)."""
    if fn.f_opt is None:
        return []
    lowest = fn.f_opt if minimum is None else minimum
    below = [n for n, x in zip(names, t.tolist(), strict=True) if x < lowest]
    if not below:
        return []
    head = f"{len(below)} value(s) lie below f* = {fn.f_opt!r} (first: algorithm {below[0]!r}): "
    if tail == "paper":
        return [
            head + "no point of any box reaches them, yet tail='paper' gives them "
            "exp(t - y_1)/(N+1) > 0 as published, where the true v is 0"
        ]
    return [head + "no point of any box reaches them, so their v is 0 on every δ"]


def _answer(sm: SM, settings: Settings, scan_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """The full answer of a scan whose tables are all ready."""
    fn = find_function(payload["function_id"])
    names = [a for a, _ in payload["values"]]
    values = [float(v) for _, v in payload["values"]]
    sent = np.asarray(values, dtype=np.float64)
    errors = payload["values_are"] == "error"
    # errors are ranked as the gaps themselves: f* + e would round them to ulp(f*)/2
    t = sent  # in the units of values_are
    budget = payload["budget"] or 1
    loaded = [tables.load_table_data(sm, table_id) for table_id in payload["tables"]]
    views: list[tables.TableView | None] = [view for view, _ in loaded]
    body = _building(scan_id, payload, views, settings, "ready")
    log10_e = [
        _rank_box(
            fn, data, entry, names, values, t, budget, payload["method"], payload["values_are"]
        )
        for entry, (_, data) in zip(body["deltas"], loaded, strict=True)
    ]
    _choose(body, payload, log10_e, n_distinct=int(np.unique(t).size))
    choice = body["chosen"]
    if choice is not None:
        try:
            body["follow_up"] = _follow_up(settings, fn, payload, choice["delta"])
        except (InvalidInput, NotFound) as exc:  # the deployment's limits changed since
            body["warnings"].append(f"no follow-up table: {exc.detail}")
    body["warnings"] += _below_minimum(
        fn, names, t, str(payload["method"]["tail"]), 0.0 if errors else None
    )
    body["provenance"] = provenance(
        payload,
        region_scan_id=scan_id,
        tables=[
            {
                "delta": delta,
                "table_id": view.id,
                "data_sha256": view.data_sha256,
                "n": view.n,
                "region": view.spec["region"],
            }
            for delta, (view, _) in zip(payload["deltas"], loaded, strict=True)
        ],
        method=payload["method"],
    )
    return jsonable(body)


# ---------------------------------------------------------------------------------------------
# use cases


def _refresh(sm: SM, settings: Settings, scan_id: str) -> dict[str, Any]:
    """The scan as it is now: stored answer, computed answer, or progress."""
    with session_scope(sm) as session:
        scan = RegionScanRepository(session).get(scan_id)
        if scan is None:
            raise NotFound(f"no region scan with id {scan_id[:40]!r}", field="scan_id")
        if scan.status == "ready" and scan.result is not None:
            return scan.result
        payload = dict(scan.request)
    views = _views(sm, payload["tables"])
    if all(v is not None and v.ready for v in views):
        result = _answer(sm, settings, scan_id, payload)
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
    return _building(scan_id, payload, views, settings, status)


def create(sm: SM, settings: Settings, dispatcher: Any, body: RegionScanCreate) -> dict[str, Any]:
    """Queue one cheap table per δ and store the scan; identical requests share one scan.

    Parameters
    ----------
    sm, settings, dispatcher
        Database, configuration and task queue (the caller may queue builds).
    body : RegionScanCreate

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
    return _refresh(sm, settings, plan.scan_id)


def get(sm: SM, settings: Settings, scan_id: str) -> dict[str, Any]:
    """A scan: progress while its tables build, then (computed once, stored) the answer.

    Raises
    ------
    app.errors.NotFound
        No scan has this id.
    """
    return _refresh(sm, settings, scan_id)
