"""Shared parts of the aggregates: constants, log-space helpers and per-value estimates."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.domain import absrank
from app.domain.cost import NO_CONTROL, WorkControl
from app.domain.curves import V1Curve

LN10 = math.log(10.0)
POWER_REL_TOL = 1e-6
"""Largest ``r·ε`` of mean-power; ``ε`` = relative error of ``c·v1`` as ``v_c``."""
MEAN_GRID = (2048, 8192)
"""Cells of the convolution grid: first and largest (doubled while ``E > MEAN_TARGET``)."""
MEAN_TARGET = 1e-4
"""Target of the estimated numerical error ``E`` of ``ln v`` (mean)."""
MAX_MEAN_RUNS = 256
"""Largest ``r`` of mean-convolution (its grid needs ``n >> r`` cells; mean-power has no limit)."""
MEDIAN_GRID = (1024, 8192)
"""Cells of the median's quadrature: first and largest (doubled while ``E > MEDIAN_TARGET``)."""
MEDIAN_TARGET = 1e-6
"""Target of the estimated numerical error ``E`` of ``ln v`` (median)."""
MEDIAN_ZMAX = 40.0  # nodes u = expit(z), z in [-40, 40]: u and 1 - u reach 4e-18
ROUNDING = 1e-12  # floor of every error estimate (relative to max(1, |ln v|)): rounding
_NEAR_ONE = 1e-12  # numerical estimates with ln v > -1e-12 are reported as v = 1
MEDIAN_BATCH = 64  # values per vectorised quadrature (memory: 6 (n + 1) floats per value)
WARN_ERROR = 1e-2  # warn when E (ln) stays above this after the largest grid
POWER_CHECK = (1e-2, 1e-4)  # the interval ends are checked to be power laws at these L-fractions
NEG_INF = -math.inf

METHODS = ("mean-power", "mean-convolution", "mean-exact", "median-integral", "median-exact")
"""``method`` of every value this module returns (``at-or-below-minimum`` where ``v = 0``)."""


# --------------------------------------------------------------------------------------------
# Log-space helpers
# --------------------------------------------------------------------------------------------


def ln1m_exp(x: np.ndarray) -> np.ndarray:
    """``ln(1 − e^x)`` for ``x <= 0`` without cancellation (``-inf`` at ``x = 0``)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out_: np.ndarray = np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))
        return out_


def ln_diff(ln_hi: np.ndarray, ln_lo: np.ndarray) -> np.ndarray:
    """``ln(e^{ln_hi} − e^{ln_lo})`` for ``ln_hi >= ln_lo``; ``-inf`` where equal or reversed."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = ln_hi + np.log(-np.expm1(ln_lo - ln_hi))
    return np.where(np.isnan(out) | (ln_lo >= ln_hi), NEG_INF, out)


def ln_sum(terms: np.ndarray, axis: int = -1) -> np.ndarray:
    """``ln Σ e^{terms}`` along ``axis`` (``-inf`` for an all ``-inf`` slice)."""
    top = np.max(terms, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", under="ignore"):
        total = np.log(np.sum(np.exp(terms - safe), axis=axis, keepdims=True)) + safe
    out = np.where(np.isneginf(top), NEG_INF, total)
    return np.squeeze(out, axis=axis)


def ln_or_neg_inf(x: float) -> float:
    return math.log(x) if x > 0 else NEG_INF


def best_of_c(ln_v1: np.ndarray, budget: int) -> np.ndarray:
    """``ln v_c`` of ``ln v1`` (Eq. 19), ``-inf`` kept."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return absrank.ln_best_of_c(np.asarray(ln_v1, dtype=np.float64), budget)


def evaluate(inp: Inputs, x: np.ndarray) -> np.ndarray:
    """``ln v_c`` of the point, low and high curves at ``x`` (in ``inp``'s units: values of
    ``f``, or gaps ``t − f*``): shape ``(3,) + x.shape``."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    curve = inp.curve
    ln_v, ln_lo, ln_hi, _ = curve.evaluate_errors(flat) if inp.gaps else curve.evaluate(flat)
    stacked = np.stack([ln_v, np.minimum(ln_lo, ln_v), np.maximum(ln_hi, ln_v)])
    return best_of_c(stacked, inp.budget).reshape((3, *np.shape(x)))


# --------------------------------------------------------------------------------------------
# Per-value estimates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Numeric:
    """``ln v`` on one curve: the estimate, its numerical error and a rigorous bracket."""

    point: float
    error: float
    lower: float
    upper: float

    @classmethod
    def exact(cls, ln_v: float) -> Numeric:
        return cls(ln_v, 0.0, ln_v, ln_v)

    def at_least(self, bound: float) -> Numeric:
        """The same estimate raised to a rigorous lower bound (e.g. ``v >= v_c(t)^r``)."""
        if not bound > self.lower:
            return self
        return Numeric(max(self.point, bound), self.error, bound, max(self.upper, bound))

    @classmethod
    def from_levels(cls, levels: tuple[float, float, float], lower: float, upper: float) -> Numeric:
        """Richardson extrapolation of second-order estimates on ``n``, ``n/2``, ``n/4`` cells.

        ``R_n = M_n + (M_n − M_{n/2})/3``; the error estimate is ``|R_n − R_{n/2}|``. The point
        is kept inside the rigorous bracket ``[lower, upper]`` and at or below 0.
        """
        fine, half, quarter = levels
        if not math.isfinite(fine):
            return cls(min(fine, upper), 0.0, lower, upper)
        rich = fine + (fine - half) / 3.0 if math.isfinite(half) else fine
        rich_half = half + (half - quarter) / 3.0 if math.isfinite(quarter) else half
        error = abs(rich - rich_half)
        if not math.isfinite(error):
            error = abs(upper - lower) if math.isfinite(lower) else math.inf
        # v within 1e-12 of 1 is 1: the sums behind it are accurate to about n·eps, and rounding
        # noise there would make v non-monotone in t
        rich, upper = (0.0 if x > -_NEAR_ONE else x for x in (rich, upper))
        point = min(max(rich, lower), upper, 0.0)
        return cls(point, max(error, ROUNDING * max(1.0, abs(point))), lower, upper)


@dataclass(frozen=True)
class Value:
    """``ln v`` of one aggregate value, its interval and numerical diagnostics."""

    ln_v: float
    ln_lo: float
    ln_hi: float
    method: str
    cells: int = 0
    error: float = 0.0  # estimated numerical error of ln_v
    bracket: tuple[float, float] = (NEG_INF, NEG_INF)  # rigorous numerical bracket of ln_v

    @classmethod
    def zero(cls) -> Value:
        """``v = 0`` exactly (``t`` below ``f*``)."""
        return cls(NEG_INF, NEG_INF, NEG_INF, "at-or-below-minimum")

    @classmethod
    def combine(cls, ests: list[Numeric], method: str, cells: int) -> Value:
        """Point, low and high estimates: each interval end is widened by its numerical error
        and kept within the rigorous bracket (lower end of the low curve, upper of the high)."""
        point, lo, hi = ests
        low_end = min(max(lo.lower, lo.point - lo.error), point.point)
        high_end = max(min(hi.upper, hi.point + hi.error, 0.0), point.point)
        return cls(
            point.point, low_end, high_end, method, cells, point.error, (point.lower, point.upper)
        )


@dataclass(frozen=True)
class Inputs:
    """One aggregate's curve and options, and the units of its values.

    ``origin`` is where ``v1`` starts, in the units of the values: ``f*`` for values of ``f``,
    0 for gaps ``t − f*`` (errors), so that every node ``origin + w`` is the exact gap ``w`` when
    the values are errors (``f* + w`` would round it by up to ``ulp(f*)/2``).
    """

    curve: V1Curve
    origin: float
    budget: int
    runs: int
    gaps: bool = False
    f_star: float = 0.0  # f* itself (units of f)
    control: WorkControl = NO_CONTROL
    """Checked between grid refinements and batches (a request's deadline, its client gone)."""


def tolerance(ests: list[Numeric], target: float) -> float:
    """Numerical error target: ``target``, or 1% of the width of the interval when that is larger
    (a table's sampling uncertainty), at most ``1e-2`` (all in ``ln v``)."""
    hi, lo = float(ests[2].point), float(ests[1].point)
    if not (math.isfinite(hi) and math.isfinite(lo)):
        return 1e-2
    return min(max(target, 0.01 * (hi - lo)), 1e-2)
