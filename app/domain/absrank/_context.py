"""What rank evaluation needs besides the table, and what it returns (options checked here)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from app.domain import notices
from app.domain.curves import (
    AnalyticInfo,
    CurveDescription,
    CurveInfo,
    info_json,
)
from app.domain.errors import InvalidInput
from app.domain.validation import positive_int as _positive_int

if TYPE_CHECKING:
    from app.domain.aggregates import AggregateInfo


TAIL_MODES = ("auto", "paper", "linear", "power")
METHODS = (
    "interpolated",
    "tail-power",
    "tail-linear",
    "tail-paper",
    "analytic",
    "atom",
    "upper-tail",
)
NOT_AN_ORDER_STATISTIC = 0
"""Order ``k`` of aggregates that are no order statistic (mean of r > 1, median of even r)."""
AGGREGATES = ("best", "worst", "median", "lower-median", "order", "mean")
MIN_ANCHOR = 25
"""Smallest anchor order statistic of the power tail (see ``_valid_anchor``)."""
FIT_P_MIN = 0.01
"""Smallest KS p-value at which the samples below the anchor are taken to follow the power law."""
#: A lowest-sample point farther from ``x*`` than this share of the distance to the region
#: boundary (on that side, in some coordinate) means the sublevel set is clipped by the box.
CLIP_SHARE = 0.9


@dataclass(frozen=True, eq=False)
class RankContext:
    """Everything rank evaluation needs besides the table.

    Attributes
    ----------
    f_opt : float or None
        Known minimum ``f*`` (units of ``f``).
    f_max : float or None
        Known maximum of ``f`` over the region.
    atom : float
        Registered probability mass at ``f*`` (plateau), 0.0 if none.
    beta : float or None
        Registered tail exponent (``v1(t) ~ C (t − f*)^β``); None = unknown (estimated).
    beta_derivation : str
        Why ``beta`` has its value (echoed in results).
    x_opt : ndarray, shape (d,) or None
        Known minimiser.
    region_lower, region_upper : ndarray, shape (d,)
        The table's sampling region.
    domain_volume_fraction : float
        ``Leb(region ∩ Ω)/Leb(Ω)``; ranks are relative to the region and are *not* rescaled by it
        (echoed in ``RankResult.tail``; a nested-region caller multiplies by it, SPEC §3.4).
    points_known : bool
        Whether the table stores the points of its lowest samples. ``False`` for a table built
        from values alone (a user's samples): the power tail's clipping check cannot be made,
        so it is skipped and the validity record says so; the power-law fit tests still apply.
    no_plateau : bool
        Whether ``f`` is known to have no plateau at ``f*`` (registered atom 0): then
        ``v1(f*) = 0`` in every region, even where stored samples round to ``f*`` (a deep
        nested level's ``f = g + f*`` in float64). ``False`` (unknown; a box of a function
        with a plateau, whose own samples at ``f*`` are counted): only ``t < f*`` is 0.
    """

    f_opt: float | None
    f_max: float | None
    atom: float
    beta: float | None
    beta_derivation: str
    x_opt: np.ndarray | None
    region_lower: np.ndarray
    region_upper: np.ndarray
    domain_volume_fraction: float = 1.0
    points_known: bool = True
    no_plateau: bool = False


@dataclass(frozen=True, eq=False)
class RankResult:
    """Absolute ranks of ``n`` query values.

    Attributes
    ----------
    log10_v : ndarray, shape (n,)
        Authoritative ``log10`` of the rank (``-inf`` only where ``v`` is exactly 0).
    v : ndarray, shape (n,)
        ``10**log10_v``; may underflow to 0.0.
    method : ndarray of str, shape (n,)
        One of :data:`METHODS` per value (how ``v1`` was obtained).
    log10_lo, log10_hi : ndarray, shape (n,)
        ``log10`` of the interval ends at the requested confidence.
    tail : RankTail
        The models used (the curve's description: tail mode, ``beta`` and its source/standard
        error, anchor ``k`` and value, validity check, upper tail) and the transform.
    warnings : list of notices.Warning
        Fallbacks taken (e.g. power tail refused, paper tail used because ``f*`` is unknown),
        each with a stable ``code``.
    """

    log10_v: np.ndarray
    v: np.ndarray
    method: np.ndarray
    log10_lo: np.ndarray
    log10_hi: np.ndarray
    tail: RankTail
    warnings: list[notices.Warning] = field(default_factory=list)


@dataclass(frozen=True)
class Transform:
    """How ``v1`` became the rank: best of ``budget`` evaluations, aggregated over ``runs``.

    Attributes
    ----------
    budget : int
        ``c``, evaluations per run (Eq. 19).
    runs : int
        ``r``, runs per aggregate value.
    aggregate : str
        One of :data:`AGGREGATES`.
    order : int or None
        The order statistic ``k`` (1 = best run); ``None`` (:func:`app.domain.aggregates.
        aggregate_ranks`) or 0 (:data:`NOT_AN_ORDER_STATISTIC`) for a mean or an even median.
    """

    budget: int
    runs: int
    aggregate: str
    order: int | None

    def as_json(self) -> dict[str, object]:
        """``{"budget", "runs", "aggregate", "order"}``."""
        return {
            "budget": self.budget,
            "runs": self.runs,
            "aggregate": self.aggregate,
            "order": self.order,
        }


@dataclass(frozen=True)
class RankTail:
    """The models behind a :class:`RankResult` (its ``tail`` block in the answer).

    Attributes
    ----------
    curve : CurveDescription
        The curve's description (``V1Curve.info``).
    transform : Transform
        Budget, runs, aggregate and order statistic.
    aggregate : AggregateInfo or None
        The numerical method of a mean or an even median (:mod:`app.domain.aggregates`).
    """

    curve: CurveDescription
    transform: Transform
    aggregate: AggregateInfo | None = None

    @property
    def anchor_k(self) -> int | None:
        """The power tail's anchor ``k`` (``None`` without a power tail)."""
        if isinstance(self.curve, CurveInfo):
            return None if self.curve.power is None else self.curve.power.k
        if isinstance(self.curve, AnalyticInfo):
            return None
        k = info_json(self.curve).get("k")  # a nested ladder's: its deepest level's anchor
        return k if isinstance(k, int) else None

    @property
    def requested_k(self) -> int | None:
        """The anchor asked for after the table's cap (``None``: not recorded)."""
        if isinstance(self.curve, CurveInfo) and self.curve.power is not None:
            return self.curve.power.requested_k
        return None

    def curve_json(self) -> dict[str, object]:
        """The curve's JSON block alone (what ``runs_by_algorithm`` answers as ``tail``)."""
        return info_json(self.curve)

    def as_json(self) -> dict[str, object]:
        """The whole ``tail`` block: the curve's, then ``transform`` and ``aggregate``."""
        out = info_json(self.curve)
        out["transform"] = self.transform.as_json()
        if self.aggregate is not None:
            out["aggregate"] = self.aggregate.as_json()
        return out


def _k_best(runs: int, order: int | None) -> int:
    return 1


def _k_worst(runs: int, order: int | None) -> int:
    return runs


def _k_median(runs: int, order: int | None) -> int:
    # even r: the mean of the two middle order statistics, not an order statistic
    return (runs + 1) // 2 if runs % 2 else NOT_AN_ORDER_STATISTIC


def _k_lower_median(runs: int, order: int | None) -> int:
    return (runs + 1) // 2


def _k_order(runs: int, order: int | None) -> int:
    if order is None:
        raise InvalidInput("aggregate='order' needs order (1 = best run)", field="order")
    k = _positive_int(order, "order")
    if k > runs:
        raise InvalidInput(f"order must be <= runs ({runs}), got {k}", field="order")
    return k


def _k_mean(runs: int, order: int | None) -> int:
    return 1 if runs == 1 else NOT_AN_ORDER_STATISTIC


_AGGREGATES: dict[str, Callable[[int, int | None], int]] = {
    "best": _k_best,
    "worst": _k_worst,
    "median": _k_median,
    "lower-median": _k_lower_median,
    "order": _k_order,
    "mean": _k_mean,
}


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


def check_context(ctx: RankContext) -> None:
    if not isinstance(ctx, RankContext):
        raise InvalidInput("ctx must be a RankContext", field="ctx")
    if not (0.0 <= ctx.atom < 1.0):
        raise InvalidInput(f"atom must be in [0, 1), got {ctx.atom}", field="atom")
    if ctx.atom > 0 and ctx.f_opt is None:
        raise InvalidInput("a registered atom needs a known f*", field="atom")
    if ctx.beta is not None and not (math.isfinite(ctx.beta) and ctx.beta > 0):
        raise InvalidInput(f"beta must be finite and > 0, got {ctx.beta}", field="beta")
    for name in ("f_opt", "f_max"):
        val = getattr(ctx, name)
        if val is not None and not math.isfinite(val):
            raise InvalidInput(f"{name} must be finite", field=name)
    if ctx.f_opt is not None and ctx.f_max is not None and ctx.f_max < ctx.f_opt:
        raise InvalidInput("f_max must be >= f_opt", field="f_max")


def check_transform(budget: int, runs: int, aggregate: str, order: int | None) -> int:
    """Validate the budget/runs options; return the order statistic ``k``."""
    _positive_int(budget, "budget")
    runs = _positive_int(runs, "runs")
    if aggregate not in _AGGREGATES:
        raise InvalidInput(f"aggregate must be one of {sorted(_AGGREGATES)}", field="aggregate")
    if order is not None and aggregate != "order":
        raise InvalidInput("order is only used with aggregate='order'", field="order")
    return _AGGREGATES[aggregate](runs, order)
