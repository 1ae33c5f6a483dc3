r"""Aggregates over runs that are no order statistic: the mean of r runs, the median of an even r.

Each run ``i = 1..r`` spends ``c`` evaluations and reports ``Z_i``, the best value it found; the
``Z_i`` are independent with the best-of-``c`` CDF ``v_c(t) = 1 − (1 − v1(t))^c`` (Jing & Liu
Eq. 19), where ``v1`` is a :class:`~app.domain.curves.V1Curve`. The experiment reports one
aggregate ``A(Z_1, …, Z_r)`` and its absolute rank is ``v(t) = P(A <= t)``. Order
statistics (best, worst, odd median, lower median) are exact binomial sums in
:func:`app.domain.absrank.ranks_from_curve`; this module computes the two aggregates that are not:

**Mean of r runs.** With the lower support ``f*`` known, ``W = Z − f* >= 0`` and

.. math:: P(\bar Z \le t) = P(W_1 + \dots + W_r \le L), \qquad L = r (t - f^*),

which only involves the law of ``W`` on ``[0, L]``.

* ``"mean-power"``: where ``v_c(f* + w) = C_c w^β`` on all of ``[0, L]``, the ``r``-fold
  convolution of the density ``C_c β w^{β−1}`` is exact [1]_ (Dirichlet integral):

  .. math:: P(\bar Z \le t) = \frac{(C_c\, Γ(β + 1))^r\, L^{rβ}}{Γ(rβ + 1)}
            = \frac{(v_c(f^* + L)\, Γ(β + 1))^r}{Γ(rβ + 1)},

  evaluated in log space (``lgamma``), so ranks such as ``1e-5000`` are finite in ``log10``.
  Used when the curve's lower tail is a power law (``curve.power``) below ``power.limit``
  ``> f* + L`` and ``c·v1`` is the best-of-``c`` CDF to relative accuracy
  :data:`POWER_REL_TOL` over the whole range: ``c·v1·(1 − (c − 1) v1/2) <= v_c <= c·v1``
  (Bonferroni), hence ``(1 − ε)^r P_G <= P <= P_G`` with ``ε = (c − 1) v1(f* + L)/2`` and
  ``P_G`` the formula with ``C_c = c·C``; the power path requires ``r ε <= POWER_REL_TOL``, returns
  ``P_G (1 − ε)^{r/2}`` and widens the lower interval end by ``(1 − ε)^r``.
* ``"mean-convolution"``: elsewhere, the cell masses ``m_j = v_c(f* + (j+1)h) − v_c(f* + jh)``,
  ``h = L/n``, of a uniform grid of ``n`` cells on ``[0, L]`` (plus an atom ``v_c(f*)`` at 0) are
  convolved ``r − 1`` times (repeated squaring: ``⌊log2 r⌋`` squarings and ``popcount(r) − 1``
  products), each result truncated to ``[0, L]``. Direct (``numpy.convolve``), not FFT,
  convolution: every entry is a sum of non-negative products, so a tiny probability keeps its
  relative accuracy (an FFT's error is relative to the largest entry). Vectors are rescaled to
  a maximum of 1 after every product and the scale is carried in log space, so nothing
  underflows. Three placements of each cell's mass give

  - a rigorous upper bound (mass at the cell's left end: ``W`` rounded down),
  - a rigorous lower bound (mass at the right end: ``W`` rounded up),
  - a midpoint estimate (mass at the centre, the CDF of the lattice sum read with a continuity
    correction), second order in ``h``, improved by Richardson extrapolation
    ``R_n = M_n + (M_n − M_{n/2})/3`` (``M`` = ``ln`` of the midpoint estimate on ``n`` and on
    ``n/2`` merged cells).

  Without an atom the three placements differ by a shift of every run by ``h/2`` or ``h``, so
  one chain of convolutions gives all three (read at ``L``, ``L − rh/2`` and ``L − rh``). The
  estimated numerical error is ``E = |R_n − R_{n/2}|`` (``≈ 15|R_n − ln P|`` when the error is
  ``O(h^4)``, ``>= |R_n − ln P|`` whenever it decays at least like ``h``). The grid starts at
  :data:`MEAN_GRID` ``[0]`` cells (at least ``16 r``) and is doubled up to ``MEAN_GRID[1]``
  while ``E`` exceeds :data:`MEAN_TARGET`. The rigorous bracket's relative width is about
  ``r²β/n`` in a power-law tail and ``r^{3/2}/n`` in the bulk, far wider than ``E`` for large
  ``r``: it is reported, and bounds the interval, but the point is ``R_n``.
* ``"mean-exact"``: ``t = f*`` (``P = v_c(f*)^r``, all runs on the plateau), or no probability in
  ``(t, f* + L]`` (then every finite ``W_i`` is ``<= t − f*`` and ``P = v_c(t)^r``).

The normal approximation is never used. ``f*`` unknown (the paper's lower tail, positive to
``−∞``) raises :class:`~app.domain.errors.NotApplicable`.

**Median of an even r** (``k = r/2``): ``M = (Z_(k) + Z_(k+1))/2``. With ``F = v_c`` and the joint
density of two consecutive order statistics [2]_,

.. math:: P(M \le t) = \frac{r!}{(k-1)!\,(r-k)!} \int_{x \le t} F(x)^{k-1}
          \left[(1 - F(x))^{r-k} - (1 - F(2t - x))^{r-k}\right] dF(x),

which we evaluate in the equivalent form (split at ``Z_(k+1) <= t``; ``x`` is the largest of the
``k`` runs at or below ``t``, ``y = Z_(k+1)`` the smallest of the ``r − k`` above it)

.. math:: P(M \le t) = P(\mathrm{Bin}(r, F(t)) \ge k + 1)
          + \binom{r}{k} \int_{[f^*, t]} g(x)\, d\left[F(x)^k\right],
          \qquad g(x) = (1 - F(t))^{r-k} - (1 - F(2t - x))^{r-k},

which is also valid with an atom of ``F`` at ``f*`` (``d[F^k]`` carries it; ``F^{k−1} dF`` does
not). ``g`` is computed without cancellation as ``(1 − F(t))^{r−k}·(1 − (1 − q)^{r−k})`` with
``q = (F(2t − x) − F(t))/(1 − F(t))`` (the best-of-``(r − k)`` transform of ``q``, in log space).
The Stieltjes integral uses nodes ``x = f* + (t − f*)·u``, ``u = 1/(1 + e^{−z})`` with ``z``
uniform on ``[−40, 40]`` (geometric in ``x − f*`` near ``f*`` and in ``t − x`` near ``t``, where
``d[F^k]`` concentrates for large ``kβ``), plus ``u = 0`` and ``u = 1``. ``g`` is non-increasing and
``F^k`` non-decreasing, so ``Σ g(x_{i+1}) ΔH_i`` and ``Σ g(x_i) ΔH_i`` bracket the integral
rigorously; the point is the trapezoid (their mean) with the same Richardson extrapolation and
error estimate ``E`` as the mean (``"median-integral"``; ``"median-exact"`` at ``t = f*``:
``P = P(Bin(r, v_c(f*)) >= k + 1)``).

**Intervals.** ``v`` is non-decreasing in every run's CDF (both aggregates are non-decreasing
functions of the runs, so a larger ``v_c`` is stochastically smaller, e.g. Shaked &
Shanthikumar), so the curve's interval ends ``ln_lo``/``ln_hi`` give the interval ends. Each end
is the same computation on that curve, widened by its numerical error ``E`` and never wider than
the rigorous bracket (lower bracket of the low curve, upper bracket of the high curve). The
mean is never below the rigorous bound ``v_c(t)^r`` (all runs at or below ``t``), and a numerical
estimate with ``ln v > −1e-12`` is reported as ``v = 1``: its sums are accurate to about
``n·eps``, and rounding noise there would make ``v`` non-monotone in ``t``.

Accuracy (measured; tests/unit/domain/test_aggregates.py). Forced convolution against the exact
form on the unclipped sphere (``c = 1``, ``β = 5``): ``|Δ ln v| <= 1.6e-11, 3.7e-10, 1.3e-6`` for
``r = 2, 4, 25`` (``n = 2048``) and ``3e-6`` for ``r = 51`` (``n = 4096``), down to
``v = 1e-2500``; each below its error estimate ``E`` and inside the rigorous bracket, whose
half-width is ``≈ r²β/(2n)`` (0.3 for ``r = 25``, ``β = 5``). Median against
``scipy.integrate.quad`` of David & Nagaraja's integral (2-D sphere, clipped and unclipped,
``c = 1, 10``, ``r = 2, 4, 10``): ``|Δ log10 v| <= 1.1e-7``. Against Monte Carlo from the same
table: within 3 standard errors. On tables (piecewise-linear ``v1``, kinks at the knots) ``E``
is larger, ``1e-5`` to ``1e-2`` in ``ln v``; the grid is refined until ``E`` is at most 1% of
the width of the statistical interval (and at most ``1e-2``) or the largest grid is reached.
Cost per value: mean 2-15 ms (``r <= 25``), 20-85 ms (``r = 51``); median about 1 ms plus
``2(n + 1)`` evaluations of the curve (6-10 ms for the analytic 10-D sphere).

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking Optimization
       Algorithms (``v_f`` of ``r`` runs; the mean by ``r − 1`` numerical convolutions).
.. [2] H. A. David, H. N. Nagaraja. Order Statistics, 3rd ed., Wiley (2003), §2.2 (joint density
       of two order statistics) and §2.1 (``P(Z_(k) <= t)`` as a binomial tail).
.. [3] M. Shaked, J. G. Shanthikumar. Stochastic Orders, Springer (2007), Thm. 1.A.3 (sums and
       increasing functions of independent variables preserve the usual stochastic order).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy import special

from app.domain import absrank, notices, validation
from app.domain.curves import V1Curve
from app.domain.errors import InvalidInput, NotApplicable

__all__ = [
    "MAX_MEAN_RUNS",
    "MEAN_GRID",
    "MEAN_TARGET",
    "MEDIAN_GRID",
    "MEDIAN_TARGET",
    "METHODS",
    "POWER_REL_TOL",
    "AggregateInfo",
    "aggregate_ranks",
    "numerical_error_warning",
]

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
_MEDIAN_ZMAX = 40.0  # nodes u = expit(z), z in [-40, 40]: u and 1 - u reach 4e-18
_ROUNDING = 1e-12  # floor of every error estimate (relative to max(1, |ln v|)): rounding
_NEAR_ONE = 1e-12  # numerical estimates with ln v > -1e-12 are reported as v = 1
_MEDIAN_BATCH = 64  # values per vectorised quadrature (memory: 6 (n + 1) floats per value)
_WARN_ERROR = 1e-2  # warn when E (ln) stays above this after the largest grid
_POWER_CHECK = (1e-2, 1e-4)  # the interval ends are checked to be power laws at these L-fractions
_NEG_INF = -math.inf

METHODS = ("mean-power", "mean-convolution", "mean-exact", "median-integral", "median-exact")
"""``method`` of every value this module returns (``at-or-below-minimum`` where ``v = 0``)."""


# --------------------------------------------------------------------------------------------
# Log-space helpers
# --------------------------------------------------------------------------------------------


def _ln1m_exp(x: np.ndarray) -> np.ndarray:
    """``ln(1 − e^x)`` for ``x <= 0`` without cancellation (``-inf`` at ``x = 0``)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(x > -math.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def _ln_diff(ln_hi: np.ndarray, ln_lo: np.ndarray) -> np.ndarray:
    """``ln(e^{ln_hi} − e^{ln_lo})`` for ``ln_hi >= ln_lo``; ``-inf`` where equal or reversed."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out = ln_hi + np.log(-np.expm1(ln_lo - ln_hi))
    return np.where(np.isnan(out) | (ln_lo >= ln_hi), _NEG_INF, out)


def _ln_sum(terms: np.ndarray, axis: int = -1) -> np.ndarray:
    """``ln Σ e^{terms}`` along ``axis`` (``-inf`` for an all ``-inf`` slice)."""
    top = np.max(terms, axis=axis, keepdims=True)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", under="ignore"):
        total = np.log(np.sum(np.exp(terms - safe), axis=axis, keepdims=True)) + safe
    out = np.where(np.isneginf(top), _NEG_INF, total)
    return np.squeeze(out, axis=axis)


def _ln(x: float) -> float:
    return math.log(x) if x > 0 else _NEG_INF


def _best_of_c(ln_v1: np.ndarray, budget: int) -> np.ndarray:
    """``ln v_c`` of ``ln v1`` (Eq. 19), ``-inf`` kept."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore", under="ignore"):
        return absrank.ln_best_of_c(np.asarray(ln_v1, dtype=np.float64), budget)


def _evaluate(inp: _Inputs, x: np.ndarray) -> np.ndarray:
    """``ln v_c`` of the point, low and high curves at ``x`` (in ``inp``'s units: values of
    ``f``, or gaps ``t − f*``): shape ``(3,) + x.shape``."""
    flat = np.asarray(x, dtype=np.float64).ravel()
    curve = inp.curve
    ln_v, ln_lo, ln_hi, _ = curve.evaluate_errors(flat) if inp.gaps else curve.evaluate(flat)
    stacked = np.stack([ln_v, np.minimum(ln_lo, ln_v), np.maximum(ln_hi, ln_v)])
    return _best_of_c(stacked, inp.budget).reshape((3, *np.shape(x)))


# --------------------------------------------------------------------------------------------
# Per-value estimates
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Numeric:
    """``ln v`` on one curve: the estimate, its numerical error and a rigorous bracket."""

    point: float
    error: float
    lower: float
    upper: float

    @classmethod
    def exact(cls, ln_v: float) -> _Numeric:
        return cls(ln_v, 0.0, ln_v, ln_v)

    def at_least(self, bound: float) -> _Numeric:
        """The same estimate raised to a rigorous lower bound (e.g. ``v >= v_c(t)^r``)."""
        if not bound > self.lower:
            return self
        return _Numeric(max(self.point, bound), self.error, bound, max(self.upper, bound))

    @classmethod
    def from_levels(
        cls, levels: tuple[float, float, float], lower: float, upper: float
    ) -> _Numeric:
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
        return cls(point, max(error, _ROUNDING * max(1.0, abs(point))), lower, upper)


@dataclass(frozen=True)
class _Value:
    """``ln v`` of one aggregate value, its interval and numerical diagnostics."""

    ln_v: float
    ln_lo: float
    ln_hi: float
    method: str
    cells: int = 0
    error: float = 0.0  # estimated numerical error of ln_v
    bracket: tuple[float, float] = (_NEG_INF, _NEG_INF)  # rigorous numerical bracket of ln_v

    @classmethod
    def zero(cls) -> _Value:
        """``v = 0`` exactly (``t`` below ``f*``)."""
        return cls(_NEG_INF, _NEG_INF, _NEG_INF, "at-or-below-minimum")

    @classmethod
    def combine(cls, ests: list[_Numeric], method: str, cells: int) -> _Value:
        """Point, low and high estimates: each interval end is widened by its numerical error
        and kept within the rigorous bracket (lower end of the low curve, upper of the high)."""
        point, lo, hi = ests
        low_end = min(max(lo.lower, lo.point - lo.error), point.point)
        high_end = max(min(hi.upper, hi.point + hi.error, 0.0), point.point)
        return cls(
            point.point, low_end, high_end, method, cells, point.error, (point.lower, point.upper)
        )


@dataclass(frozen=True)
class _Inputs:
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


# --------------------------------------------------------------------------------------------
# Mean of r runs
# --------------------------------------------------------------------------------------------


def _fold(mass: np.ndarray, runs: int, size: int) -> tuple[np.ndarray, float]:
    """``runs``-fold direct convolution of ``mass``, truncated to its first ``size`` entries.

    Repeated squaring; after every product the vector is scaled to a maximum of 1 and the
    scale kept in log space: the true result is ``vector · exp(ln_scale)`` (``-inf`` when
    nothing is left below the truncation, e.g. every run is above ``L/2`` and ``r = 2``).
    """
    result: np.ndarray | None = None
    ln_result = 0.0
    base = mass[:size].copy()
    ln_base = 0.0
    remaining = runs
    while True:
        if remaining & 1:
            if result is None:
                result, ln_result = base.copy(), ln_base
            else:
                result, ln_top = _rescaled(np.convolve(result, base)[:size])
                ln_result += ln_base + ln_top
        remaining >>= 1
        if not remaining:
            break
        base, ln_top = _rescaled(np.convolve(base, base)[:size])
        ln_base = 2.0 * ln_base + ln_top
    assert result is not None
    return result, ln_result


def _rescaled(vec: np.ndarray) -> tuple[np.ndarray, float]:
    """``vec`` divided by its maximum, and ``ln`` of that maximum (``-inf`` if all zero)."""
    top = float(vec.max())
    return (vec / top, math.log(top)) if top > 0 else (vec, _NEG_INF)


@dataclass(frozen=True)
class _Masses:
    """The law of ``W = Z − f*`` on ``n`` cells of width ``h = L/n``, scaled.

    ``cells[j]·exp(ln_scale) = P(jh < W <= (j+1)h)`` and ``atom·exp(ln_scale) = P(W = 0)``.
    """

    cells: np.ndarray
    atom: float
    ln_scale: float

    @classmethod
    def from_cdf(cls, ln_f: np.ndarray) -> _Masses:
        """From ``ln v_c`` at the ``n + 1`` grid nodes ``f* + jh``."""
        ln_cells = _ln_diff(ln_f[1:], ln_f[:-1])
        scale = max(float(np.max(ln_cells)), float(ln_f[0]))
        if not math.isfinite(scale):
            return cls(np.zeros(ln_cells.size), 0.0, _NEG_INF)
        with np.errstate(under="ignore"):
            return cls(np.exp(ln_cells - scale), math.exp(float(ln_f[0]) - scale), scale)

    def halved(self) -> _Masses:
        """The same law on ``n/2`` cells (neighbours merged)."""
        return _Masses(self.cells[0::2] + self.cells[1::2], self.atom, self.ln_scale)


def _lattice_sums(masses: _Masses, runs: int) -> tuple[list[float], list[float]]:
    """``P(ΣW <= L)`` with every cell's mass at its right end, centre and left end.

    Returns the three sums of scaled lattice probabilities and their ``ln`` scales.
    """
    n = masses.cells.size
    if masses.atom == 0.0:
        # one chain (cells at their left ends): the midpoints and right ends shift every run by
        # h/2 and h, i.e. the lattice sum by r/2 and r cells
        vec, ln_fold = _fold(masses.cells, runs, n + 1)
        cum = np.concatenate(([0.0], np.cumsum(vec)))  # cum[j] = sum of vec[:j]
        lower = cum[n - runs + 1] if n >= runs else 0.0
        j = n - runs // 2
        # odd r: L is a cell boundary of the midpoint lattice; even r: its centre (half mass)
        mid = cum[n - (runs - 1) // 2] if runs % 2 else cum[j] + 0.5 * vec[j]
        return [lower, mid, cum[n + 1]], [ln_fold] * 3
    # an atom at 0 is not shifted: three chains, the midpoints on a lattice of half cells
    left = masses.cells.copy()
    left[0] += masses.atom
    right = np.concatenate(([masses.atom], masses.cells))
    halves = np.zeros(2 * n)
    halves[0] = masses.atom
    halves[1::2] = masses.cells
    v_left, ln_left = _fold(left, runs, n + 1)
    v_right, ln_right = _fold(right, runs, n + 1)
    v_half, ln_half = _fold(halves, runs, 2 * n + 1)
    mid = float(np.sum(v_half[: 2 * n])) + 0.5 * float(v_half[2 * n])
    return [float(np.sum(v_right)), mid, float(np.sum(v_left))], [ln_right, ln_half, ln_left]


def _mean_reads(masses: _Masses, runs: int) -> tuple[float, float, float]:
    """``ln P(ΣW <= L)``: rigorous lower bound, midpoint estimate, rigorous upper bound."""
    if not math.isfinite(masses.ln_scale):
        return _NEG_INF, _NEG_INF, _NEG_INF
    sums, scales = _lattice_sums(masses, runs)
    lower, mid, upper = (
        _ln(float(s)) + ln + runs * masses.ln_scale for s, ln in zip(sums, scales, strict=True)
    )
    return lower, mid, upper


def _mean_numeric(ln_f: np.ndarray, runs: int) -> _Numeric:
    """Convolution estimate of ``ln P(mean <= t)`` from ``ln v_c`` at the grid nodes."""
    masses = _Masses.from_cdf(ln_f)
    lower, mid, upper = _mean_reads(masses, runs)
    half = masses.halved()
    levels = (mid, _mean_reads(half, runs)[1], _mean_reads(half.halved(), runs)[1])
    return _Numeric.from_levels(levels, lower, upper)


def _power_ends(inp: _Inputs, span: float) -> list[tuple[float, float]] | None:
    """``(ln v1(f* + L), β)`` of the point, low and high curves when each is a power law of
    ``t − f*`` on ``[f*, f* + L]``; ``None`` otherwise.

    The point must lie in ``curve.power``'s range. The interval ends are fitted through
    ``f* + L`` and ``f* + 1e-4 L`` and checked at ``f* + 1e-2 L`` (a table's power tail and the
    analytic forms give exact power laws there).
    """
    power = inp.curve.power
    if power is None or inp.curve.atom > 0 or power.f_opt != inp.f_star:
        return None
    limit = power.limit - inp.f_star if inp.gaps else power.limit  # in the values' units
    if not inp.origin + span < limit:
        return None
    x = inp.origin + span * np.array([1.0, *_POWER_CHECK])
    # the offsets the curve sees (x − f* is exact near f*, Sterbenz): no rounding amplification
    with np.errstate(divide="ignore"):
        ln_ratio = np.log((x - inp.origin) / (x[0] - inp.origin))
    curve = inp.curve
    # gaps (errors) are evaluated as gaps: curve.evaluate would read them as values of f
    ln_v, ln_lo, ln_hi, _ = curve.evaluate_errors(x) if inp.gaps else curve.evaluate(x)
    out: list[tuple[float, float]] = []
    for which, ln in enumerate((ln_v, ln_lo, ln_hi)):
        if which > 0 and np.isneginf(ln[0]):
            out.append((_NEG_INF, 1.0))  # this end is 0 on the whole range
            continue
        beta = power.beta if which == 0 else float(ln[-1] - ln[0]) / float(ln_ratio[-1])
        with np.errstate(invalid="ignore"):
            off = np.abs(ln - (ln[0] + beta * ln_ratio))
        if not (beta > 0 and np.all(off <= 1e-9 * max(1.0, abs(float(ln[0]))))):
            return None
        out.append((float(ln[0]), beta))
    return out


def _mean_power(inp: _Inputs, t: float) -> _Value | None:
    """``mean-power`` (module docstring), or ``None`` where it does not apply."""
    r, c = inp.runs, inp.budget
    ends = _power_ends(inp, r * (t - inp.origin))
    if ends is None:
        return None
    # c·v1·(1 − ε) <= v_c <= c·v1 on [f*, f* + L], ε = (c − 1)·v1(f* + L)/2
    eps = [(c - 1) * math.exp(ln) / 2.0 for ln, _ in ends]
    if r * max(eps) > POWER_REL_TOL:
        return None
    with np.errstate(invalid="ignore"):
        ln_g = [
            r * (math.log(c) + ln + math.lgamma(beta + 1.0)) - math.lgamma(r * beta + 1.0)
            for ln, beta in ends
        ]
    low_g = [g + r * math.log1p(-e) for g, e in zip(ln_g, eps, strict=True)]
    mid, half_width = 0.5 * (ln_g[0] + low_g[0]), 0.5 * (ln_g[0] - low_g[0])
    point = _Numeric(mid, half_width + _ROUNDING * max(1.0, abs(mid)), low_g[0], ln_g[0])
    lo, hi = _Numeric.exact(low_g[1]), _Numeric.exact(ln_g[2])
    return _Value.combine([point, lo, hi], "mean-power", 0)


def _tolerance(ests: list[_Numeric], target: float) -> float:
    """Numerical error target: ``target``, or 1% of the width of the interval when that is larger
    (a table's sampling uncertainty), at most ``1e-2`` (all in ``ln v``)."""
    hi, lo = float(ests[2].point), float(ests[1].point)
    if not (math.isfinite(hi) and math.isfinite(lo)):
        return 1e-2
    return min(max(target, 0.01 * (hi - lo)), 1e-2)


def _mean_convolution(inp: _Inputs, t: float) -> _Value:
    """``mean-convolution`` (``mean-exact`` where ``(t, f* + L]`` carries no probability).

    The grid starts at ``max(MEAN_GRID[0], 16 r)`` cells and is doubled (old nodes reused) while
    the largest error estimate exceeds :func:`_tolerance`, up to ``max(MEAN_GRID[1], 16 r)``.
    """
    r = inp.runs
    span = r * (t - inp.origin)
    ln_at = _evaluate(inp, np.array([t, inp.origin + span]))
    saturated = ln_at[:, 0] >= ln_at[:, 1]  # v_c(t) = v_c(f* + L): P = v_c(t)^r
    exact = [_Numeric.exact(r * float(ln_at[k, 0])) for k in range(3)]
    if np.all(saturated):
        return _Value.combine(exact, "mean-exact", 0)
    if r > MAX_MEAN_RUNS:
        raise NotApplicable(
            f"the mean of {r} runs is computed by convolution only up to {MAX_MEAN_RUNS} runs; "
            f"the value {t!r} lies outside the power-law tail, where the exact form holds for "
            "any r",
            field="runs",
        )
    n = MEAN_GRID[0]
    while n < 16 * r:
        n *= 2
    ln_f = _evaluate(inp, inp.origin + span * (np.arange(n + 1) / n))
    while True:
        # P(mean <= t) >= P(every run <= t) = v_c(t)^r: exact where v_c(t) rounds to 1
        ests = [
            exact[k] if saturated[k] else _mean_numeric(ln_f[k], r).at_least(exact[k].point)
            for k in range(3)
        ]
        done = max(e.error for e in ests) <= _tolerance(ests, MEAN_TARGET)
        if done or n >= max(MEAN_GRID[1], 16 * r):
            break
        n *= 2
        finer = np.empty((3, n + 1))
        finer[:, 0::2] = ln_f  # j/n == 2j/(2n) exactly: the old nodes are reused
        odd = inp.origin + span * (np.arange(1, n, 2) / n)
        finer[:, 1::2] = _evaluate(inp, odd)
        ln_f = finer
    return _Value.combine(ests, "mean-exact" if saturated[0] else "mean-convolution", n)


def _mean_values(inp: _Inputs, t: np.ndarray) -> list[_Value]:
    """``P(mean of r runs <= t)`` for each ``t`` (module docstring)."""
    out: list[_Value] = []
    for value in t.tolist():
        if value < inp.origin:
            out.append(_Value.zero())
        elif value == inp.origin:  # all runs on the plateau (0 without an atom)
            ln_atom = _evaluate(inp, np.array([value]))[:, 0]
            exact = [_Numeric.exact(inp.runs * float(x)) for x in ln_atom]
            out.append(_Value.combine(exact, "mean-exact", 0))
        else:
            power = _mean_power(inp, value)
            out.append(power if power is not None else _mean_convolution(inp, value))
    return out


# --------------------------------------------------------------------------------------------
# Median of an even number of runs
# --------------------------------------------------------------------------------------------


def _median_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``u`` and ``1 − u`` at the ``n + 1`` quadrature nodes, ``u = expit(z)``, ``z`` uniform."""
    z = _MEDIAN_ZMAX * (2.0 * np.arange(n + 1) / n - 1.0)
    u, v = special.expit(z), special.expit(-z)
    u[0], v[0], u[-1], v[-1] = 0.0, 1.0, 1.0, 0.0
    return u, v


def _median_sums(
    ln_fx: np.ndarray, ln_ft: np.ndarray, ln_fy: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ln ∫ g d[F^k]`` over ``[f*, t]``: rigorous lower bound, trapezoid, rigorous upper bound.

    ``ln_fx``, ``ln_fy``: ``ln F`` at ``x_i`` and at ``2t − x_i``, shape ``(m, n + 1)``;
    ``ln_ft``: ``ln F(t)``, shape ``(m, 1)`` with ``F(t) < 1``.
    """
    ln_h = k * ln_fx
    ln_dh = _ln_diff(ln_h[:, 1:], ln_h[:, :-1])
    ln_1mt = _ln1m_exp(ln_ft)
    with np.errstate(invalid="ignore"):
        ln_q = np.minimum(_ln_diff(ln_fy, ln_ft) - ln_1mt, 0.0)
    # g = (1 − F(t))^k (1 − (1 − q)^k) with r − k = k, the second factor a best-of-k transform
    ln_g = k * ln_1mt + _best_of_c(ln_q, k)
    ln_g = np.where(np.isneginf(ln_q), _NEG_INF, ln_g)
    atom = ln_h[:, 0] + ln_g[:, 0]  # F(f*)^k g(f*): the plateau's mass
    with np.errstate(invalid="ignore"):
        ln_mean = np.logaddexp(ln_g[:, :-1], ln_g[:, 1:]) - math.log(2.0)
    lower = np.logaddexp(_ln_sum(ln_g[:, 1:] + ln_dh), atom)
    trapezoid = np.logaddexp(_ln_sum(ln_mean + ln_dh), atom)
    upper = np.logaddexp(_ln_sum(ln_g[:, :-1] + ln_dh), atom)
    return lower, trapezoid, upper


def _median_curve(ln_f: np.ndarray, ln_ft: np.ndarray, runs: int) -> list[_Numeric]:
    """``ln P(M <= t)`` on one curve for ``m`` values, from ``ln F`` at the nodes.

    ``ln_f``: shape ``(m, 2(n + 1))``, ``ln F`` at the ``x`` nodes then at the ``2t − x`` nodes;
    ``ln_ft``: ``ln F(t)``, shape ``(m,)``. ``F(t) = 1`` gives ``P = 1`` exactly.
    """
    k = runs // 2
    n1 = ln_f.shape[1] // 2
    ln_comb = math.lgamma(runs + 1.0) - 2.0 * math.lgamma(k + 1.0)
    ln_b = absrank.log10_order_statistic_cdf(ln_ft / LN10, runs, k + 1) * LN10
    ft = ln_ft[:, None]
    with np.errstate(all="ignore"):  # rows with F(t) = 1 are replaced below
        levels = [
            [
                np.logaddexp(ln_b, ln_comb + x)
                for x in _median_sums(ln_f[:, :n1][:, ::s], ft, ln_f[:, n1:][:, ::s], k)
            ]
            for s in (1, 2, 4)
        ]
    return [
        _Numeric.exact(0.0)
        if ln_ft[i] == 0.0
        else _Numeric.from_levels(
            (float(levels[0][1][i]), float(levels[1][1][i]), float(levels[2][1][i])),
            float(levels[0][0][i]),
            float(levels[0][2][i]),
        )
        for i in range(ln_ft.size)
    ]


def _median_level(inp: _Inputs, t: np.ndarray, ln_ft: np.ndarray, n: int) -> list[list[_Numeric]]:
    """Quadrature with ``n`` cells for values ``t > f*``: per curve, per value."""
    u, v = _median_nodes(n)
    gap = (t - inp.origin)[:, None]
    x = inp.origin + gap * u
    x[:, -1] = t
    y = t[:, None] + gap * v
    ln_f = _evaluate(inp, np.concatenate((x, y), axis=1))
    return [_median_curve(ln_f[w], ln_ft[w], inp.runs) for w in range(3)]


def _median_values(inp: _Inputs, t: np.ndarray) -> list[_Value]:
    """``P(median of an even r runs <= t)`` for each ``t`` (module docstring)."""
    r, k = inp.runs, inp.runs // 2
    ln_ft = _evaluate(inp, np.maximum(t, inp.origin))  # (3, m)
    out: dict[int, _Value] = {}
    for i in np.flatnonzero(t <= inp.origin).tolist():
        if t[i] < inp.origin:
            out[i] = _Value.zero()
        else:  # both middle runs on the plateau: P(Bin(r, v_c(f*)) >= k + 1)
            ln_b = absrank.log10_order_statistic_cdf(ln_ft[:, i] / LN10, r, k + 1) * LN10
            out[i] = _Value.combine([_Numeric.exact(float(x)) for x in ln_b], "median-exact", 0)
    todo = np.flatnonzero(t > inp.origin)
    n = MEDIAN_GRID[0]
    while todo.size:
        keep: list[int] = []
        for start in range(0, todo.size, _MEDIAN_BATCH):
            batch = todo[start : start + _MEDIAN_BATCH]
            ests = _median_level(inp, t[batch], ln_ft[:, batch], n)
            for j, i in enumerate(batch.tolist()):
                three = [e[j] for e in ests]
                done = max(e.error for e in three) <= _tolerance(three, MEDIAN_TARGET)
                if done or n >= MEDIAN_GRID[1]:
                    out[i] = _Value.combine(three, "median-integral", n)
                else:
                    keep.append(i)
        todo = np.array(keep, dtype=np.int64)
        n *= 2
    return [out[i] for i in range(t.size)]


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------

_STATISTICS: dict[str, Callable[[_Inputs, np.ndarray], list[_Value]]] = {
    "mean": _mean_values,
    "median": _median_values,
}

_DESCRIPTIONS = {
    "mean": {
        "definition": "v = P((Z_1 + ... + Z_r)/r <= t) = P(W_1 + ... + W_r <= r (t - f*)), "
        "W = Z - f*, Z with CDF v_c = 1 - (1 - v1)^c",
        "mean-power": "(C_c Gamma(beta+1))^r (r (t - f*))^(r beta) / Gamma(r beta + 1), "
        "exact where v_c = C_c (t - f*)^beta on [f*, f* + r (t - f*)]",
        "mean-convolution": "r - 1 direct convolutions (repeated squaring) of the cell masses "
        "of W on a uniform grid over [0, r (t - f*)]; cell masses at left/right ends bound v "
        "rigorously, midpoints + Richardson extrapolation give the point",
        "mean-exact": "t = f* (all runs on the plateau, v = v_c(f*)^r) or no probability "
        "between t and f* + r (t - f*) (v = v_c(t)^r)",
        "normal_approximation": "never used",
    },
    "median": {
        "definition": "v = P((Z_(k) + Z_(k+1))/2 <= t), k = r/2, Z with CDF F = v_c "
        "= 1 - (1 - v1)^c",
        "median-integral": "P(Bin(r, F(t)) >= k+1) + C(r, k) * integral over [f*, t] of "
        "[(1 - F(t))^k - (1 - F(2t - x))^k] d[F(x)^k] (joint density of two order "
        "statistics, David & Nagaraja 2.2), trapezoid on nodes geometric near f* and near t, "
        "Richardson extrapolation; g non-increasing, so left/right sums bound it rigorously",
        "median-exact": "t = f*: P(Bin(r, v_c(f*)) >= k + 1)",
    },
}


def _finite(values: list[float]) -> list[float | None]:
    return [x / LN10 if math.isfinite(x) else None for x in values]


@dataclass(frozen=True)
class AggregateInfo:
    """The numerical method of a mean or an even median: ``RankResult.tail.aggregate``.

    Attributes
    ----------
    statistic : {"mean", "median"}
    definition : str
        What ``v`` is, as a formula.
    methods : Mapping of str to str
        Each method used (``mean-power``, ``median-integral``, ...) and what it computes.
    normal_approximation : str or None
        ``"never used"`` for the mean (``None``: the median, which leaves the key out).
    grid : Mapping of str to JSON
        The grid's first and largest size, its target error and method limits.
    cells : tuple of int, shape (n,)
        Cells of the final grid per value (0 where exact).
    numerical_error_log10 : tuple of float or None, shape (n,)
        Estimated numerical error of ``log10 v`` per value.
    max_numerical_error_log10 : float or None
        Their maximum.
    bracket_log10 : tuple of (float or None, float or None), shape (n,)
        Rigorous numerical bracket of ``log10 v`` per value.
    error_estimate : str
        How the error and the bracket are obtained.
    """

    statistic: str
    definition: str
    methods: Mapping[str, str]
    normal_approximation: str | None
    grid: Mapping[str, object]
    cells: tuple[int, ...]
    numerical_error_log10: tuple[float | None, ...]
    max_numerical_error_log10: float | None
    bracket_log10: tuple[tuple[float | None, ...], ...]
    error_estimate: str

    def as_json(self, index: int | None = None) -> dict[str, object]:
        """The JSON block; with ``index``, the per-value entries of that value alone."""

        def per(x: tuple[object, ...]) -> object:
            if index is not None:
                item = x[index]
                return list(item) if isinstance(item, tuple) else item
            return [list(v) if isinstance(v, tuple) else v for v in x]

        out: dict[str, object] = {
            "statistic": self.statistic,
            "definition": self.definition,
            "methods": dict(self.methods),
        }
        if self.normal_approximation is not None:
            out["normal_approximation"] = self.normal_approximation
        out |= {
            "grid": dict(self.grid),
            "cells": per(self.cells),
            "numerical_error_log10": per(self.numerical_error_log10),
            "max_numerical_error_log10": self.max_numerical_error_log10,
            "bracket_log10": per(self.bracket_log10),
            "error_estimate": self.error_estimate,
        }
        return out


def numerical_error_warning(count: int, threshold_log10: float, first: str) -> str:
    """The text of the ``"numerical-error"`` warning, naming the first value ``first``."""
    return (
        f"{count} value(s) have a numerical error above {threshold_log10:.3g} in "
        f"log10 v even on the largest grid (first: {first}); see "
        "tail.aggregate.numerical_error_log10 (the interval includes it)"
    )


def _info(kind: str, est: list[_Value], inverse: np.ndarray) -> AggregateInfo:
    """The ``aggregate`` block of ``RankResult.tail`` (per-value lists in input order)."""
    per = [est[i] for i in inverse.tolist()]
    used = sorted({e.method for e in per} & set(METHODS))
    errors = _finite([e.error for e in per])
    grid: dict[str, object] = (
        {
            "start_cells": MEAN_GRID[0],
            "max_cells": MEAN_GRID[1],
            "target_ln": MEAN_TARGET,
            "power_rel_tol": POWER_REL_TOL,
            "max_convolution_runs": MAX_MEAN_RUNS,
        }
        if kind == "mean"
        else {
            "start_cells": MEDIAN_GRID[0],
            "max_cells": MEDIAN_GRID[1],
            "target_ln": MEDIAN_TARGET,
            "nodes": "x = f* + (t - f*) expit(z), z uniform on [-40, 40]",
        }
    )
    desc = _DESCRIPTIONS[kind]
    return AggregateInfo(
        statistic=kind,
        definition=desc["definition"],
        methods={m: desc[m] for m in used},
        normal_approximation=desc["normal_approximation"] if kind == "mean" else None,
        grid=grid,
        cells=tuple(e.cells for e in per),
        numerical_error_log10=tuple(errors),
        max_numerical_error_log10=_finite([max((e.error for e in per), default=0.0)])[0],
        bracket_log10=tuple(tuple(_finite(list(e.bracket))) for e in per),
        error_estimate="numerical_error_log10: |R_n - R_n/2| of the Richardson-extrapolated "
        "estimates on n and n/2 cells (convolution, integral), half the Bonferroni range "
        "r (c - 1) v1/2 (mean-power with c > 1), else rounding; bracket_log10 is rigorous for the "
        "curve as given; each interval end is its curve's estimate widened by its error, never "
        "beyond the rigorous bracket",
    )


def _statistic(aggregate: str, runs: int) -> str | None:
    """``"mean"``/``"median"`` when the aggregate is no order statistic, else ``None``."""
    if aggregate == "mean" and runs > 1:
        return "mean"
    if aggregate == "median" and runs % 2 == 0:
        return "median"
    return None


def _int_option(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < 1:
        raise InvalidInput(f"{name} must be an integer >= 1, got {value!r}", field=name)
    return int(value)


def aggregate_ranks(
    t: np.ndarray,
    curve: V1Curve,
    *,
    budget: int,
    runs: int,
    aggregate: str,
    values_are: str = "f",
) -> absrank.RankResult:
    r"""Absolute ranks of the mean of ``r`` runs or the median of an even ``r``.

    Parameters
    ----------
    t : array_like, shape (n,)
        Aggregate values (units of ``f``): the mean, or the median, of ``r`` best-of-``c``
        values; finite.
    curve : V1Curve
        ``v1`` of one evaluation; its lower support ``f_opt`` must be known.
    budget : int
        ``c``, evaluations per run (best of ``c``: ``v_c = 1 − (1 − v1)^c``, Jing & Liu Eq. 19).
    runs : int
        ``r``, runs aggregated into each value.
    aggregate : {"mean", "median"}
        ``"mean"``: arithmetic mean of the ``r`` runs; ``"median"``: for even ``r`` the mean of
        the two middle order statistics. Order statistics (``r = 1``, an odd median, best,
        worst, lower-median, order) are passed to
        :func:`app.domain.absrank.ranks_from_curve` (exact binomial sums).
    values_are : {"f", "error"}, optional
        ``"error"``: ``t`` holds the aggregates of errors ``Z − f*`` (the mean of the errors, the
        median of the errors), and every node of the convolution and of the median's quadrature
        is an exact gap ``w`` evaluated by :meth:`V1Curve.evaluate_errors`, never ``f* + w``.

    Returns
    -------
    RankResult
        ``log10_v`` (finite down to ``1e-5000`` and beyond; ``-inf`` only where ``v = 0``),
        ``v``, ``method`` per value (``"mean-power"``, ``"mean-convolution"``, ``"mean-exact"``,
        ``"median-integral"``, ``"median-exact"``, or ``"at-or-below-minimum"``), the interval
        from the curve's interval ends widened by the numerical error, ``tail`` = the curve's
        description plus ``transform`` and ``aggregate`` (method, grid, per-value numerical
        error estimate and rigorous bracket, both as ``log10``), and the curve's warnings.

    Raises
    ------
    InvalidInput
        Non-finite ``t`` (``field="values"``) or invalid options.
    NotApplicable
        ``f*`` unknown (``field="aggregate"``); a mean of more than :data:`MAX_MEAN_RUNS` runs
        outside the power-law tail (``field="runs"``).

    Notes
    -----
    The methods, their error bounds and sources are in the module docstring. Everything is
    deterministic.

    Examples
    --------
    Two runs on ``v1(t) = t`` on ``[0, 1]`` (a linear tail with ``f* = 0``): the mean of two
    uniforms is at most ``t <= 1/2`` with probability ``2t²``.

    >>> import numpy as np
    >>> from app.domain.curves import PowerLaw, V1Curve
    >>> def evaluate(x):
    ...     ln = np.log(np.clip(x, 0.0, 1.0))
    ...     return ln, ln, ln, np.full(x.shape, "analytic", dtype=object)
    >>> with np.errstate(divide="ignore"):
    ...     curve = V1Curve(evaluate, {}, [], 0.0, PowerLaw(0.0, 0.0, 1.0, 1.0))
    ...     res = aggregate_ranks(np.array([0.25]), curve, budget=1, runs=2, aggregate="mean")
    >>> round(float(res.v[0]), 12), res.method[0]
    (0.125, 'mean-power')
    """
    values = np.atleast_1d(np.asarray(t, dtype=np.float64))
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise InvalidInput(
            "values must be a one-dimensional array of finite numbers", field="values"
        )
    budget, runs = _int_option(budget, "budget"), _int_option(runs, "runs")
    kind = _statistic(aggregate, runs)
    if kind is None:
        return absrank.ranks_from_curve(
            values, curve, budget=budget, runs=runs, aggregate=aggregate, values_are=values_are
        )
    if curve.f_opt is None:
        raise NotApplicable(
            f"the {kind} of {runs} runs needs the lower end f* of the support of f: the "
            "paper's lower tail exp(t - y_1)/(N+1) is positive down to -inf (use tail='power' "
            "or 'linear' on a function with a known f*)",
            field="aggregate",
        )
    uniq, inverse = np.unique(values, return_inverse=True)
    gaps = validation.check_values_are(values_are)
    f_star = float(curve.f_opt)
    inp = _Inputs(curve, 0.0 if gaps else f_star, budget, runs, gaps, f_star)
    est = _STATISTICS[kind](inp, uniq)
    ln_v, ln_lo, ln_hi = (
        np.array([getattr(est[i], name) for i in inverse.tolist()], dtype=np.float64)
        for name in ("ln_v", "ln_lo", "ln_hi")
    )
    method = np.array([est[i].method for i in inverse.tolist()], dtype=object)
    method[np.isneginf(ln_v)] = "at-or-below-minimum"
    info = absrank.RankTail(
        curve.info,
        absrank.Transform(budget, runs, aggregate, None),
        _info(kind, est, inverse),
    )
    warnings = absrank.curve_warnings(curve)
    noisy = [i for i in range(values.size) if est[int(inverse[i])].error > _WARN_ERROR]
    if noisy:
        threshold = _WARN_ERROR / LN10
        warnings.append(
            notices.Warning(
                "numerical-error",
                numerical_error_warning(len(noisy), threshold, f"values[{noisy[0]}]"),
                {"count": len(noisy), "index": noisy[0], "threshold_log10": threshold},
                field="values",
            )
        )
    with np.errstate(under="ignore"):
        v = np.exp(ln_v)
    return absrank.RankResult(
        log10_v=ln_v / LN10,
        v=v,
        method=method,
        log10_lo=np.minimum(ln_lo, ln_v) / LN10,
        log10_hi=np.maximum(ln_hi, ln_v) / LN10,
        tail=info,
        warnings=warnings,
    )
