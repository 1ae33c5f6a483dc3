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
  products), each result truncated to ``[0, L]``. For ``r <= 4`` (``_mean.DIRECT_RUNS``) by
  direct convolution (``numpy.convolve``): every entry is a sum of non-negative products, so a
  tiny probability keeps its relative accuracy. For more runs by FFT (:mod:`._fft`), whose
  error is relative to the largest entry: the chain runs on the exponentially tilted masses
  ``m_j e^{θj}`` (``θ <= 0`` puts one tilted run's mean at ``(n − r/2)/r`` cells, so the tilted
  sum is centred on the reads; tilting commutes with convolution and the reads untilt it), and
  a rigorous bound on every entry's rounding (Higham's FFT error bound, propagated through the
  chain) widens the bracket's ends and is added to the error estimate; a chain whose bound
  exceeds ``1e-6`` in ``ln`` of a read is convolved directly. Without an atom the lattices are
  shared by the request's values (:mod:`._lattice`): cells of width ``h = 2^{e−1}/n`` for
  ``L ∈ [2^{e−1}, 2^e)`` (``L/h`` between ``n`` and ``2n``, not a whole number), one chain per
  octave ``e``, tilt bin, curve and grid level, read at every value (the bounds at ``⌊L/h⌋ − r``
  and ``⌊L/h⌋`` cells, the midpoint's CDF interpolated at ``L/h − r/2`` by a cubic in ``ln``); a
  value's lattice depends on the value alone, so its answer is the same in any request. With an
  atom every value keeps its own grid of ``n`` cells on ``[0, L]`` (below), and each FFT of a grid
  level transforms every value's and curve's chain at once.
  Vectors are rescaled to a maximum of 1 after every product and the scale is carried in log
  space, so nothing underflows. Three placements of each cell's mass give

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
half-width is ``≈ r²β/(2n)`` (0.3 for ``r = 25``, ``β = 5``). (Per-value grids; the shared
lattices have ``L/h ∈ [n, 2n)`` cells: ``r = 25`` 7e-8 to 2e-7 in ``log10 v`` at ``d = 10``, and
``r = 51`` up to 2.7e-6 where its ``E`` stops the refinement on the first level.) Median against
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

Layout: :mod:`._common` (constants, helpers, per-value estimates), :mod:`._mean`, :mod:`._median`,
:mod:`._info` (the answer's ``aggregate`` block).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from app.domain import absrank, notices, validation
from app.domain.aggregates._common import (
    LN10,
    MAX_MEAN_RUNS,
    MEAN_GRID,
    MEAN_TARGET,
    MEDIAN_GRID,
    MEDIAN_TARGET,
    METHODS,
    POWER_REL_TOL,
    WARN_ERROR,
    Inputs,
    Value,
)
from app.domain.aggregates._info import (
    AggregateInfo,
    aggregate_info,
    int_option,
    numerical_error_warning,
    statistic,
)
from app.domain.aggregates._mean import mean_values
from app.domain.aggregates._median import median_values
from app.domain.cost import NO_CONTROL, WorkControl
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
    "aggregate_ranks_each",
    "numerical_error_warning",
]


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------

_STATISTICS: dict[str, Callable[[Inputs, np.ndarray], list[Value]]] = {
    "mean": mean_values,
    "median": median_values,
}


def aggregate_ranks(
    t: np.ndarray,
    curve: V1Curve,
    *,
    budget: int,
    runs: int,
    aggregate: str,
    values_are: str = "f",
    control: WorkControl = NO_CONTROL,
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
    control : WorkControl, optional
        Checked between grid refinements and batches of values (:mod:`app.domain.cost`):
        raises there when the work must stop; the numbers never depend on it.

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
    values, budget, runs, kind = _checked(t, budget, runs, aggregate)
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
    est = _estimates(uniq, curve, kind, budget, runs, values_are, control)
    return _result(values, inverse, est, curve, kind, budget, runs, aggregate)


def aggregate_ranks_each(
    t: np.ndarray,
    curve: V1Curve,
    *,
    budget: int,
    runs: int,
    aggregate: str,
    values_are: str = "f",
    control: WorkControl = NO_CONTROL,
) -> list[absrank.RankResult]:
    """:func:`aggregate_ranks` of each value alone, bit for bit, computed together.

    ``[aggregate_ranks(t[i:i+1], ...) for i]`` with one batch of convolutions or integrals for
    all values (each value's numbers do not depend on the others': every chain and quadrature is
    row-wise). For a mean or an even median only (``ValueError`` otherwise); the same errors.
    """
    values, budget, runs, kind = _checked(t, budget, runs, aggregate)
    if kind is None:
        raise ValueError(f"{aggregate!r} of {runs} runs is an order statistic")
    if curve.f_opt is None:  # the same error as aggregate_ranks
        return [aggregate_ranks(values[:1], curve, budget=budget, runs=runs, aggregate=aggregate)]
    uniq, inverse = np.unique(values, return_inverse=True)
    est = _estimates(uniq, curve, kind, budget, runs, values_are, control)
    one = np.zeros(1, dtype=inverse.dtype)
    return [
        _result(
            values[i : i + 1], one, [est[int(inverse[i])]], curve, kind, budget, runs, aggregate
        )
        for i in range(values.size)
    ]


def _checked(
    t: np.ndarray, budget: int, runs: int, aggregate: str
) -> tuple[np.ndarray, int, int, str | None]:
    """The values as a 1-d float array (finite), budget and runs as ints, and the statistic's
    kind (None for an order statistic), or the request's error."""
    values = np.atleast_1d(np.asarray(t, dtype=np.float64))
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise InvalidInput(
            "values must be a one-dimensional array of finite numbers", field="values"
        )
    budget, runs = int_option(budget, "budget"), int_option(runs, "runs")
    return values, budget, runs, statistic(aggregate, runs)


def _estimates(
    uniq: np.ndarray,
    curve: V1Curve,
    kind: str,
    budget: int,
    runs: int,
    values_are: str,
    control: WorkControl = NO_CONTROL,
) -> list[Value]:
    gaps = validation.check_values_are(values_are)
    assert curve.f_opt is not None
    f_star = float(curve.f_opt)
    inp = Inputs(curve, 0.0 if gaps else f_star, budget, runs, gaps, f_star, control)
    return _STATISTICS[kind](inp, uniq)


def _result(
    values: np.ndarray,
    inverse: np.ndarray,
    est: list[Value],
    curve: V1Curve,
    kind: str,
    budget: int,
    runs: int,
    aggregate: str,
) -> absrank.RankResult:
    """The answer for ``values`` from the estimates of their distinct values."""
    ln_v, ln_lo, ln_hi = (
        np.array([getattr(est[i], name) for i in inverse.tolist()], dtype=np.float64)
        for name in ("ln_v", "ln_lo", "ln_hi")
    )
    method = np.array([est[i].method for i in inverse.tolist()], dtype=object)
    method[np.isneginf(ln_v)] = "at-or-below-minimum"
    info = absrank.RankTail(
        curve.info,
        absrank.Transform(budget, runs, aggregate, None),
        aggregate_info(kind, est, inverse, runs),
    )
    warnings = absrank.curve_warnings(curve)
    noisy = [i for i in range(values.size) if est[int(inverse[i])].error > WARN_ERROR]
    if noisy:
        threshold = WARN_ERROR / LN10
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
