"""A region scan's answer: progress while its tables build, then e per δ and the choice.

Every box is ranked as ``POST /v1/absolute-ranks`` ranks on its table; ``e`` is the geometric
mean difference of the ranks (Jing & Liu Eq. 29, :mod:`app.domain.delta_regions`), compared as
``log10 e``; the δ with the largest ``e`` is chosen (ties: the larger δ).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import numpy as np

from app.config import Settings
from app.domain import absrank
from app.domain import delta_regions as regionscan
from app.domain.errors import DomainError
from app.domain.functions import BenchmarkFunction
from app.errors import InvalidInput, NotFound
from app.services import tables
from app.services._region_scan_common import (
    DEFAULT_FOLLOW_UP_LOG2N,
    DEFAULT_GRID_NOTE,
    DEFAULT_LOG2N,
    PAPER_TAIL_NOTE,
    SCALE_NOTE,
    SEPARATING_RULE,
    SM,
    TIE_RULE,
    location,
)
from app.services.eta import build_eta
from app.services.functions import find_function
from app.services.provenance import provenance
from app.services.regions import rank_context
from app.services.serialize import jsonable
from app.services.table_cache import TableCaches

# ---------------------------------------------------------------------------------------------
# progress


def table_views(sm: SM, table_ids: list[str]) -> list[tables.TableView | None]:
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


def building(
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
    out: dict[str, Any] = jsonable({k: tail.get(k) for k in keys})
    return out


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


def answer(
    sm: SM, settings: Settings, scan_id: str, payload: dict[str, Any], *, cache: TableCaches
) -> dict[str, Any]:
    """The full answer of a scan whose tables are all ready (loaded through ``cache``, the
    application's table caches)."""
    fn = find_function(payload["function_id"])
    names = [a for a, _ in payload["values"]]
    values = [float(v) for _, v in payload["values"]]
    sent = np.asarray(values, dtype=np.float64)
    errors = payload["values_are"] == "error"
    # errors are ranked as the gaps themselves: f* + e would round them to ulp(f*)/2
    t = sent  # in the units of values_are
    budget = payload["budget"] or 1
    loaded = [tables.load_table_data(sm, table_id, cache=cache) for table_id in payload["tables"]]
    views: list[tables.TableView | None] = [view for view, _ in loaded]
    body = building(scan_id, payload, views, settings, "ready")
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
    out: dict[str, Any] = jsonable(body)
    return out
