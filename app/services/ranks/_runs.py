"""``runs_by_algorithm``: each algorithm's aggregate and every run ranked alone."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from app.domain import absrank, aggregates, notices
from app.domain.cost import NO_CONTROL, Cancelled, DeadlineExceeded, WorkControl
from app.domain.errors import DomainError
from app.domain.functions import BenchmarkFunction
from app.errors import (
    AppError,
)
from app.schemas.ranks import RankRequest
from app.services.errors import domain_errors_as_problems
from app.services.ranks._sources import Source, value_offset
from app.services.ranks._values import numerical, provisional, rank_items, request_curve
from app.services.ranks._warnings import (
    RankWarning,
    WarnedRanks,
    anchor_warnings,
    listed,
    resolution_warnings,
    runs_below_minimum_warnings,
)


def _sorted_pick(x: list[float], k: int) -> float:
    """The ``k``-th smallest (1-based)."""
    return sorted(x)[k - 1]


def _mean(x: list[float]) -> float:
    total = math.fsum(x)  # correctly rounded: the same mean in any order
    return total / len(x) if math.isfinite(total) else math.fsum(v / len(x) for v in x)


def _median(x: list[float]) -> float:
    s, r = sorted(x), len(x)
    return s[r // 2] if r % 2 else 0.5 * s[r // 2 - 1] + 0.5 * s[r // 2]


#: The aggregate value of one algorithm's runs, as the service computes it.
AGGREGATE_VALUE: dict[str, Callable[[list[float]], float]] = {
    "best": min,
    "worst": max,
    "median": _median,
    "lower-median": lambda x: _sorted_pick(x, (len(x) + 1) // 2),
    "mean": _mean,
}


@contextmanager
def _naming_algorithm(name: str) -> Iterator[None]:
    """Domain errors of one algorithm's rank name ``runs_by_algorithm.<name>`` for ``runs``."""
    try:
        with domain_errors_as_problems():
            yield
    except AppError as exc:
        if exc.field in ("runs", "values"):
            exc.field = f"runs_by_algorithm.{name}"
        raise


def _algorithm_transform(res: absrank.RankResult) -> dict[str, object]:
    """The transform of one algorithm's rank, with its numerical block (one value) unwrapped."""
    out = res.tail.transform.as_json()
    block = res.tail.aggregate
    if block is not None:
        out["aggregate_method"] = block.as_json(index=0)
    return out


def _aggregate_of(runs: list[float], req: RankRequest) -> tuple[str, float]:
    """The aggregate of one algorithm's runs and its value."""
    aggregate = (req.aggregate or "best") if len(runs) > 1 else "best"
    return aggregate, float(AGGREGATE_VALUE[aggregate](runs))


def _batched_numerical(
    runs_by_algorithm: dict[str, list[float]],
    curve: absrank.V1Curve,
    req: RankRequest,
    offset: float,
    control: WorkControl = NO_CONTROL,
) -> dict[str, absrank.RankResult]:
    """The ranks of every mean or even median, one batch per ``r`` (one convolution chain per
    grid level for all of them: :func:`app.domain.aggregates.aggregate_ranks_each`), bit for
    bit each algorithm's own :func:`_rank_algorithm`. A batch that raises is left to the
    algorithms' own calls, which raise the same error for the first algorithm, named; a
    batch stopped by ``control`` (deadline, cancel) stops the request."""
    groups: dict[tuple[str, int], list[tuple[str, float]]] = {}
    for name, runs in runs_by_algorithm.items():
        aggregate, value = _aggregate_of(runs, req)
        if numerical(aggregate, len(runs)):
            groups.setdefault((aggregate, len(runs)), []).append((name, value))
    out: dict[str, absrank.RankResult] = {}
    for (aggregate, r), members in groups.items():
        if len(members) < 2:
            continue
        values = np.array([v for _, v in members])
        try:
            each = aggregates.aggregate_ranks_each(
                values if req.values_are == "error" else values + offset,
                curve,
                budget=req.budget,
                runs=r,
                aggregate=aggregate,
                values_are=req.values_are,
                control=control,
            )
        except (DeadlineExceeded, Cancelled):
            raise
        except DomainError:
            continue
        out |= {name: res for (name, _), res in zip(members, each, strict=True)}
    return out


def _rank_algorithm(
    name: str,
    runs: list[float],
    curve: absrank.V1Curve,
    req: RankRequest,
    offset: float,
    res: absrank.RankResult | None = None,
    control: WorkControl = NO_CONTROL,
) -> tuple[dict[str, Any], list[notices.Warning]]:
    """The rank of one algorithm's aggregate (``runs = len(runs)``) and its domain warnings
    (about ``values[0]``, the aggregate: :func:`_for_algorithms` names the algorithm); ``res``:
    that rank, computed in a batch (:func:`_batched_numerical`); ``control``: checked by the
    aggregate's convolutions or quadrature."""
    r = len(runs)
    aggregate, value = _aggregate_of(runs, req)
    if res is None:
        with _naming_algorithm(name):
            res = absrank.ranks_from_curve(
                np.array([value if req.values_are == "error" else value + offset]),
                curve,
                budget=req.budget,
                runs=r,
                aggregate=aggregate,
                values_are=req.values_are,
                control=control,
            )
    item = rank_items([value], res)[0]
    entry = {"algorithm": name, "runs": r, "aggregate": aggregate} | item
    entry["transform"] = _algorithm_transform(res)
    return entry, list(res.warnings)


def _for_algorithms(warning: RankWarning, names: list[str]) -> str:
    """A domain warning that several algorithms' aggregates got, once: it points at the first
    algorithm and counts and lists the others (at most 10 names)."""
    text = warning.located(lambda _: f"runs_by_algorithm.{names[0]}")
    if len(names) == 1:
        return text
    return f"{text} (the same for {len(names)} algorithms: {listed(names)})"


def rank_runs(
    fn: BenchmarkFunction,
    source: Source,
    ctx: absrank.RankContext,
    req: RankRequest,
    runs_by_algorithm: dict[str, list[float]],
    *,
    control: WorkControl = NO_CONTROL,
) -> WarnedRanks:
    """``runs_by_algorithm``: each algorithm's aggregate, and each run alone (``control``:
    checked between and within the aggregates' convolutions, as the ``values`` path does)."""
    offset = value_offset(fn, req)
    names = list(runs_by_algorithm)
    flat = [x for name in names for x in runs_by_algorithm[name]]
    with domain_errors_as_problems():
        curve = request_curve(fn, source, ctx, req)
        sent = np.asarray(flat, dtype=np.float64)
        single = absrank.ranks_from_curve(
            sent if req.values_are == "error" else sent + offset,
            curve,
            budget=req.budget,
            values_are=req.values_are,
        )
    deep = provisional(source, fn, req, sent)
    per_run = rank_items(flat, single, deep)
    warnings = [RankWarning.of(w) for w in single.warnings]
    algorithms: list[dict[str, Any]] = []
    # a domain warning's text -> the warning and the algorithms that got it
    by_warning: dict[str, tuple[notices.Warning, list[str]]] = {}
    with domain_errors_as_problems():
        batched = _batched_numerical(runs_by_algorithm, curve, req, offset, control)
    start = 0
    for name in names:
        runs = runs_by_algorithm[name]
        control.check()
        entry, extra = _rank_algorithm(name, runs, curve, req, offset, batched.get(name), control)
        entry["per_run"] = per_run[start : start + len(runs)]
        if deep is not None and _aggregate_awaits(entry, deep[start : start + len(runs)]):
            entry["interval"] |= {"log10_lo": None, "v_lo": 0.0}
            entry["provisional"] = True
        start += len(runs)
        algorithms.append(entry)
        for w in extra:
            by_warning.setdefault(w.message, (w, []))[1].append(name)
    for w, got in by_warning.values():
        warning = RankWarning.of(w)
        said = {x.message for x in warnings}
        if warning.index is None and warning.message in said:
            continue  # about the curve, not a value: the per-run ranking said it already
        text = _for_algorithms(warning, got)
        if text not in said:
            warnings.append(RankWarning(text, code=w.code))
    tail = single.tail.curve_json()
    body: dict[str, Any] = {
        "function_id": fn.id,
        "source": source.description,
        "budget": req.budget,
        "runs": None,
        "aggregate": req.aggregate or "best",
        "results": [],
        "algorithms": algorithms,
        "tail": tail,
    }
    return WarnedRanks(
        body,
        warnings
        + anchor_warnings(req, single.tail)
        + runs_below_minimum_warnings(
            fn, runs_by_algorithm, offset, errors=req.values_are == "error"
        )
        + resolution_warnings(req, fn, [v for runs in runs_by_algorithm.values() for v in runs]),
    )


def _aggregate_awaits(entry: dict[str, Any], runs_deep: np.ndarray) -> bool:
    """Whether an algorithm's aggregate rank awaits the ladder: its value is one of the deep
    runs (an order statistic), or some run is deep and the aggregate is a mean or an even
    median (whose rank integrates ``v1`` below the value)."""
    if not runs_deep.any():
        return False
    return bool(numerical(entry["aggregate"], entry["runs"])) or any(
        item["value"] == entry["value"] and item.get("provisional") for item in entry["per_run"]
    )
