"""``values``: every value one aggregate of ``runs`` runs; the answer's items and limits."""

from __future__ import annotations

from typing import Any

import numpy as np

from app.config import Settings
from app.domain import absrank
from app.domain.cost import NO_CONTROL, WorkControl
from app.domain.functions import BenchmarkFunction
from app.errors import (
    InvalidInput,
)
from app.schemas.ranks import RankRequest
from app.services.errors import domain_errors_as_problems
from app.services.ranks._columns import RankColumns
from app.services.ranks._sources import Source, above_minimum, value_offset
from app.services.ranks._warnings import (
    RankWarning,
    WarnedRanks,
    anchor_warnings,
    below_minimum_warnings,
    resolution_warnings,
)
from app.services.table_cache import TableCaches


def rank_items(
    values: list[float], res: absrank.RankResult, provisional: np.ndarray | None = None
) -> list[dict[str, Any]]:
    """One ``RankItem`` per value; ``provisional`` (a mask) marks the ranks that await the
    ladder: their interval has no lower end, and they say ``provisional: true``
    (:class:`RankColumns`, whose :meth:`~RankColumns.json` writes them without the dicts)."""
    return RankColumns.of(values, res, provisional).items()


def provisional(
    source: Source, fn: BenchmarkFunction, req: RankRequest, sent: np.ndarray
) -> np.ndarray | None:
    """Which values sent await the ladder: those in ``(f*, y_1)`` (``None``: none do); an error
    is above ``f*`` when it is positive (``f* + e`` may round to ``f*``)."""
    if source.provisional_below is None:
        return None
    t = sent + value_offset(fn, req)
    out_: np.ndarray = (t < source.provisional_below) & above_minimum(fn, req, sent)
    return out_


#: A value sent as ``f`` whose gap ``t − f*`` is resolved more coarsely than this (relative)
#: by float64 (half an ulp of ``t``) is flagged: fewer than 6 significant digits of the gap.


def numerical(aggregate: str, runs: int) -> bool:
    """Whether the rank of an aggregate of ``runs`` runs needs a convolution or an integral."""
    return runs > 1 and (aggregate == "mean" or (aggregate == "median" and runs % 2 == 0))


def check_limits(req: RankRequest, settings: Settings) -> None:
    """Request sizes (``settings.max_rank_values``, ``max_algorithms``), before any work."""
    if req.values is not None:
        if len(req.values) > settings.max_rank_values:
            raise InvalidInput(
                f"at most {settings.max_rank_values} values per request", field="values"
            )
        if numerical(req.aggregate or "best", req.runs):
            distinct = len(set(req.values))
            if distinct > settings.max_numerical_aggregates:
                raise InvalidInput(
                    f"at most {settings.max_numerical_aggregates} distinct values per request with "
                    f"aggregate={req.aggregate!r} over {req.runs} runs (each is a convolution or "
                    f"an integral); got {distinct}",
                    field="values",
                )
        return
    runs = req.runs_by_algorithm
    assert runs is not None
    total = sum(len(v) for v in runs.values())
    if total > settings.max_rank_values:
        raise InvalidInput(
            f"at most {settings.max_rank_values} run values per request (all algorithms "
            f"together); got {total}",
            field="runs_by_algorithm",
        )
    if len(runs) > settings.max_algorithms:
        raise InvalidInput(
            f"at most {settings.max_algorithms} algorithms per request; got {len(runs)}",
            field="runs_by_algorithm",
        )
    costly = sum(numerical(req.aggregate or "best", len(v)) for v in runs.values())
    if costly > settings.max_numerical_aggregates:
        raise InvalidInput(
            f"at most {settings.max_numerical_aggregates} algorithms per request with "
            f"aggregate={req.aggregate!r} over more than one run; got {costly}",
            field="runs_by_algorithm",
        )


def rank_value_list(
    fn: BenchmarkFunction,
    source: Source,
    ctx: absrank.RankContext,
    req: RankRequest,
    cache: TableCaches | None = None,
    values: np.ndarray | None = None,
    *,
    control: WorkControl = NO_CONTROL,
) -> WarnedRanks:
    """``values``: every value is one aggregate of ``req.runs`` runs (``cache``: the
    application's, where the curve of a stored table is kept; ``values``: ``req.values`` as
    float64, if the caller has them)."""
    assert req.values is not None
    sent = np.asarray(req.values if values is None else values, dtype=np.float64)
    t = sent + value_offset(fn, req) if req.values_are == "error" else sent
    aggregate = req.aggregate or "best"
    with domain_errors_as_problems():
        curve = request_curve(fn, source, ctx, req, cache)
        # errors are ranked as the gaps t − f* themselves (f* + e would round their digits away)
        res = _ranks_in_order(
            sent if req.values_are == "error" else t,
            curve,
            sort=not numerical(aggregate, req.runs),
            budget=req.budget,
            runs=req.runs,
            aggregate=aggregate,
            order=req.order,
            values_are=req.values_are,
            control=control,
        )
    body: dict[str, Any] = {
        "function_id": fn.id,
        "source": source.description,
        "budget": req.budget,
        "runs": req.runs,
        "aggregate": aggregate,
        "results": RankColumns.of(
            req.values, res, provisional(source, fn, req, sent), value64=sent
        ),
        "algorithms": None,
        "tail": res.tail.as_json(),
    }
    return WarnedRanks(
        body,
        [RankWarning.of(w) for w in res.warnings]
        + anchor_warnings(req, res.tail)
        + below_minimum_warnings(req, fn, t)
        + resolution_warnings(req, fn, sent),
    )


def _ranks_in_order(
    x: np.ndarray, curve: absrank.V1Curve, *, sort: bool, **options: Any
) -> absrank.RankResult:
    """:func:`app.domain.absrank.ranks_from_curve` of ``x``, computed on ``x`` sorted when
    ``sort`` and put back in the order sent: the lookups over the curve's knots
    (``searchsorted``, ``interp``) then walk memory in order (~2.5x faster at 10^5 values). The
    rank of an order statistic is a function of its own value alone, so the result is the same
    (a mean or an even median is left as it is: ``sort=False``), whatever the order of equal
    values: numpy's default sort (not a stable one, ~half its time at 10^3 values)."""
    if not sort or x.size < 2:
        return absrank.ranks_from_curve(x, curve, **options)
    order = np.argsort(x)
    res = absrank.ranks_from_curve(x[order], curve, **options)

    def back(sorted_: np.ndarray) -> np.ndarray:  # entry i of the sorted values to order[i]
        out = np.empty_like(sorted_)
        out[order] = sorted_
        return out

    return absrank.RankResult(
        back(res.log10_v),
        back(res.v),
        back(res.method),
        back(res.log10_lo),
        back(res.log10_hi),
        res.tail,
        res.warnings,
    )


def request_curve(
    fn: BenchmarkFunction,
    source: Source,
    ctx: absrank.RankContext,
    req: RankRequest,
    cache: TableCaches | None = None,
) -> absrank.V1Curve:
    """``v1`` of the request's table, ladder or analytic form (the input of every aggregate).

    A stored table's curve (its tail models: the anchor's choice and fit, most of a small
    request's work) is a function of the table's data, the region and the tail options: with
    ``cache`` it is kept in ``cache.published`` under that content.
    """
    if source.curve is not None:
        return source.curve
    data = source.data
    if data is None:
        assert fn.analytic is not None
        return absrank.analytic_curve(fn.analytic, ctx)

    def make() -> absrank.V1Curve:
        assert data is not None
        return absrank.table_curve(
            data, ctx, tail=req.tail, k_anchor=req.tail_k, confidence=req.confidence
        )

    sha = source.description.get("data_sha256")
    if cache is None or source.kind != "table" or not isinstance(sha, str):
        return make()
    key = (
        "rank-v1-curve",
        sha,
        source.description.get("table_id"),
        fn.id,
        source.lower.tobytes(),
        source.upper.tobytes(),
        source.whole_domain,
        req.tail,
        req.tail_k,
        req.confidence,
    )
    curve: absrank.V1Curve = cache.published.get_or_make(key, make)
    return curve
