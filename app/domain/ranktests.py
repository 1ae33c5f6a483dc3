"""Rank tests across problems: Friedman, Iman–Davenport, aligned ranks, Quade, post-hoc
comparisons with critical differences and cliques, and Bradley–Terry strengths.

Every statistic takes a matrix ``values`` of shape ``(n_problems, k_algorithms)`` (one row per
problem, the block; one column per algorithm) under **minimization**: within each problem the
smallest value gets rank 1 (best), ties get midranks. Ties are decided by
:func:`app.domain.ranking.rank_rows` with the caller's ``rtol``/``atol``, the one tie rule of
absrank. NaN is refused (the caller applies its declared missing-value policy first); ``±inf``
ranks like any other value in the rank-only statistics.

Degenerate but valid data (every problem ties all algorithms, perfect concordance, a win graph
that is not strongly connected) returns the documented value with ``degenerate=True`` and a
``reason``: never an error, never NaN. p-values are clipped to ``[0, 1]``; each has a
``log10_`` companion computed in log space (χ² and F tails by scipy's log-space integration
below the float range, the normal tail by ``log Φ``, the studentized range by a log-space
quadrature, the adjustments on ``log10 p``), finite whenever the p-value is positive.

Exact arithmetic
----------------
Midranks are multiples of 1/2, so with ``a_ij = 2 r_ij − (k + 1)`` (an integer) the Friedman
statistic with tie correction is [5]_

.. math:: χ^2_F = (k − 1) \\frac{\\sum_j (\\sum_i a_{ij})^2}{\\sum_{ij} a_{ij}^2},
          \\qquad F_{ID} = \\frac{(N − 1) χ^2_F}{N (k − 1) − χ^2_F}
          = \\frac{(N − 1) S}{N Q − S},

with ``S = Σ_j (Σ_i a_ij)²`` and ``Q = Σ_ij a_ij²`` computed in Python integers. This is the
textbook ``χ² / (1 − Σ(t³ − t)/(N k (k² − 1)))`` [1]_ [5]_, and perfect concordance (``N Q = S``)
and all-tied data (``Q = 0``) are detected exactly rather than through a rounded difference.

Post-hoc tests
--------------
All compare average Friedman ranks through ``z_ij = (R_i − R_j) / sqrt(k (k + 1) / (6 N))``
[1]_ [2]_. Nemenyi's p-values are tail probabilities of the studentized range with infinitely
many degrees of freedom, i.e. of the range of ``k`` iid standard normals, computed by
:func:`studentized_range_sf` (a vectorized quadrature of the range distribution [16]_ that never
forms ``1 − cdf``). A pair is **significant when its adjusted p-value is < alpha** (so a p-value
of exactly 0 is significant). Cliques are computed from that same significance matrix.

References
----------
.. [1] J. Demšar (2006). Statistical comparisons of classifiers over multiple data sets.
       JMLR 7, 1–30.
.. [2] S. García, F. Herrera (2008). An extension on "Statistical comparisons of classifiers
       over multiple data sets" for all pairwise comparisons. JMLR 9, 2677–2694.
.. [3] S. García, A. Fernández, J. Luengo, F. Herrera (2010). Advanced nonparametric tests for
       multiple comparisons in the design of experiments in computational intelligence and
       data mining: experimental analysis of power. Information Sciences 180, 2044–2064.
.. [4] R. L. Iman, J. M. Davenport (1980). Approximations of the critical region of the
       Friedman statistic. Communications in Statistics – Theory and Methods 9, 571–595.
.. [5] W. J. Conover (1999). Practical Nonparametric Statistics, 3rd ed., Wiley: the Friedman
       test with ties and the Quade test (§5.8).
.. [6] D. Quade (1979). Using weighted rankings in the analysis of complete blocks with
       additive block effects. JASA 74, 680–683.
.. [7] J. L. Hodges, E. L. Lehmann (1962). Rank methods for combination of independent
       experiments in analysis of variance. Ann. Math. Statist. 33, 482–497.
.. [8] S. Holm (1979). A simple sequentially rejective multiple test procedure. Scand. J.
       Statist. 6, 65–70.
.. [9] Y. Hochberg (1988). A sharper Bonferroni procedure for multiple tests of significance.
       Biometrika 75, 800–802.
.. [10] G. Hommel (1988). A stagewise rejective multiple test procedure based on a modified
        Bonferroni test. Biometrika 75, 383–386.
.. [11] H. Finner (1993). On a monotonicity problem in step-down multiple test procedures.
        JASA 88, 920–923.
.. [12] J. D. Li (2008). A two-step rejection procedure for testing multiple hypotheses.
        J. Statist. Plann. Inference 138, 1521–1527.
.. [13] J. P. Shaffer (1986). Modified sequentially rejective multiple test procedures.
        JASA 81, 826–831.
.. [14] M. E. J. Newman (2023). Efficient computation of rankings from pairwise comparisons.
        JMLR 24, 1–25.
.. [15] E. Zermelo (1929). Die Berechnung der Turnier-Ergebnisse als ein Maximumproblem der
        Wahrscheinlichkeitsrechnung. Math. Z. 29, 436–460; L. R. Ford Jr. (1957). Solution of a
        ranking problem from binary comparisons. Amer. Math. Monthly 64, 28–33.
.. [16] H. A. David, H. N. Nagaraja (2003). Order Statistics, 3rd ed., Wiley: the distribution
        of the sample range, ``P(W <= w) = k ∫ f(x) [F(x + w) − F(x)]^{k−1} dx``.
.. [17] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking
        Optimization Algorithms (arXiv:2409.04479), Table I: the critical difference with the
        normal quantile at ``1 − α/(2k)`` (``cd_convention="jing-liu"``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import lru_cache, partial

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special, stats
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from statsmodels.stats.multitest import multipletests

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.exactfloat import midranks_exact, to_float, units
from app.domain.ranking import check_tolerances, midranks, rank_rows
from app.domain.stattools import LOG10_TINY, clip_p, is_normal_p, log10_clip, log10_of

__all__ = [
    "CD_CONVENTIONS",
    "POSTHOC_METHODS",
    "AdjustedPValues",
    "AlignedRanksResult",
    "BradleyTerryResult",
    "FriedmanResult",
    "LowPowerWarning",
    "PairComparison",
    "PosthocResult",
    "QuadeResult",
    "adjusted_family",
    "adjusted_log10_pvalues",
    "adjusted_pvalues",
    "bonferroni_dunn",
    "bradley_terry",
    "chi2_log10_sf",
    "critical_difference",
    "f_log10_sf",
    "friedman",
    "friedman_aligned_ranks",
    "low_power_warning",
    "nemenyi",
    "pairwise_wins",
    "posthoc",
    "quade",
    "rank_cliques",
    "rank_matrix",
    "shaffer_true_hypotheses",
    "studentized_range_isf",
    "studentized_range_log10_sf",
    "studentized_range_sf",
]

_SQRT2 = math.sqrt(2.0)
_LN10 = math.log(10.0)


def _frozen(a: ArrayLike) -> np.ndarray:
    """A read-only float copy (results are immutable)."""
    out = np.array(a, dtype=np.float64)
    out.setflags(write=False)
    return out


@lru_cache(maxsize=8)
def _log_space_family(name: str) -> Callable[..., object]:
    """scipy's new-infrastructure distribution class of ``scipy.stats.<name>`` (cached)."""
    return stats.make_distribution(getattr(stats, name))  # type: ignore[no-any-return]


def _log10_sf(name: str, x: float, sf: float, **params: float) -> float:
    """``log10 P(X > x)`` given the float ``sf``: its own log while it is a normal float, else
    scipy's ``logccdf`` (log-space quadrature of ``logpdf``; tests: within 1e-12 relative of
    mpmath down to p ≈ 1e-8900)."""
    if is_normal_p(sf):
        return log10_of(sf)
    if math.isinf(x):
        return -math.inf
    with np.errstate(divide="ignore", under="ignore"):  # its log(ccdf) try underflows first
        log_sf = float(_log_space_family(name)(**params).logccdf(x))  # type: ignore[operator]
    return log10_clip(log_sf / _LN10)


def chi2_log10_sf(x: float, df: int, sf: float | None = None) -> float:
    """``log10 P(χ²_df > x)`` without underflow (``sf``: the float value if already known).

    Examples
    --------
    >>> round(chi2_log10_sf(4500.0, 9), 6)  # 10 algorithms × 500 problems, perfect concordance
    -966.494914
    """
    p = float(stats.chi2.sf(x, df)) if sf is None else sf
    return _log10_sf("chi2", x, p, df=df)


def f_log10_sf(x: float, dfn: int, dfd: int, sf: float | None = None) -> float:
    """``log10 P(F_{dfn, dfd} > x)`` without underflow (``sf``: the float value if known)."""
    p = float(stats.f.sf(x, dfn, dfd)) if sf is None else sf
    return _log10_sf("f", x, p, dfn=dfn, dfd=dfd)


# ------------------------------------------------------------------------------ validation


def _matrix_iv(values: ArrayLike, *, min_problems: int) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(
            "values must be a rectangular numeric matrix (problems × algorithms)", field="values"
        ) from None
    if a.ndim != 2:
        raise InvalidInput(
            f"values must be a 2-D matrix (problems × algorithms), got shape {a.shape}",
            field="values",
        )
    n, k = a.shape
    if k < 2:
        raise InvalidInput(
            f"at least 2 algorithms (columns) are needed, got {k}", field="algorithms"
        )
    if n < min_problems:
        raise InvalidInput(
            f"at least {min_problems} problems (rows) are needed, got {n}", field="problems"
        )
    if np.isnan(a).any():
        raise InvalidInput(
            "values contains NaN; declare a missing-value policy instead of sending NaN",
            field="values",
        )
    return a


def _finite_matrix_iv(values: ArrayLike, test: str) -> np.ndarray:
    """Matrix for the tests that use value differences (aligned ranks, Quade ranges)."""
    a = _matrix_iv(values, min_problems=2)
    if not np.isfinite(a).all():
        raise NotApplicable(
            f"{test} uses differences of values, which are undefined for ±inf; use the "
            "Friedman test (ranks only) or replace infinite values by a declared policy",
            field="values",
        )
    # No scaling of the matrix: one power of two for all problems flushed the small problems'
    # values to ties (issue 13). Alignments and ranges are exact in integer units instead.
    return a


def rank_matrix(
    values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Within-problem midranks and the average rank of each algorithm.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, smaller is better; ``±inf`` allowed, NaN refused.
    rtol, atol : float, optional
        Tie tolerance of :func:`app.domain.ranking.tie_labels` (default exact equality).

    Returns
    -------
    ranks : ndarray, shape (n_problems, k_algorithms)
        Rank 1 = smallest value; each row sums to ``k (k + 1) / 2``.
    average_ranks : ndarray, shape (k_algorithms,)
        Column means of ``ranks``.

    Raises
    ------
    app.domain.errors.InvalidInput
        Not 2-D (``values``), fewer than 2 algorithms (``algorithms``), no problem
        (``problems``), NaN (``values``), or a bad tolerance (``rtol``/``atol``).

    Examples
    --------
    >>> ranks, average = rank_matrix([[3.0, 1.0, 2.0], [1.0, 1.0, 5.0]])
    >>> average.tolist()
    [2.25, 1.25, 2.5]
    """
    a = _matrix_iv(values, min_problems=1)
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    return ranks, ranks.mean(axis=0)


# ------------------------------------------------------------------------------ omnibus tests


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class FriedmanResult:
    """Friedman χ² (tie-corrected) and the Iman–Davenport F.

    Attributes
    ----------
    statistic : float
        Friedman ``χ²_F`` with tie correction (0 when every problem ties all algorithms).
    p_value : float
        ``P(χ²_{k−1} >= statistic)``.
    log10_p_value : float
        ``log10`` of ``p_value`` without underflow (finite: the χ² tail is positive).
    df : int
        ``k − 1``.
    iman_davenport_statistic : float
        ``F = (N − 1) χ² / (N (k − 1) − χ²)``; ``+inf`` under perfect concordance.
    iman_davenport_p_value : float
        ``P(F_{df} >= F)``; 0 under perfect concordance.
    log10_iman_davenport_p_value : float
        ``log10`` of ``iman_davenport_p_value`` without underflow; ``−inf`` only under perfect
        concordance, where ``F = +inf`` makes the F approximation's p exactly 0.
    iman_davenport_df : tuple of int
        ``(k − 1, (k − 1)(N − 1))``.
    average_ranks : ndarray, shape (k_algorithms,)
        Average within-problem rank of each algorithm (1 = best).
    tie_correction : float
        ``1 − Σ(t³ − t) / (N k (k² − 1))`` in ``[0, 1]`` (1 without ties).
    n_problems, n_algorithms : int
        ``N`` and ``k``.
    method : str
        ``"asymptotic"`` (χ² and F approximations).
    degenerate : bool
        True when every problem ties all algorithms or the rankings agree perfectly.
    reason : str or None
        Why the result is degenerate.
    """

    statistic: float
    p_value: float
    log10_p_value: float
    df: int
    iman_davenport_statistic: float
    iman_davenport_p_value: float
    log10_iman_davenport_p_value: float
    iman_davenport_df: tuple[int, int]
    average_ranks: np.ndarray
    tie_correction: float
    n_problems: int
    n_algorithms: int
    method: str
    degenerate: bool
    reason: str | None


def _centred_twice(ranks: np.ndarray) -> np.ndarray:
    """``2 r − (k + 1)`` as exact integers (midranks are multiples of 1/2)."""
    k = ranks.shape[1]
    return np.rint(2.0 * ranks).astype(np.int64) - (k + 1)


def _friedman_sums(ranks: np.ndarray) -> tuple[int, int]:
    """``S = Σ_j (Σ_i a_ij)²`` and ``Q = Σ_ij a_ij²`` for ``a = 2r − (k + 1)``, exactly."""
    a = _centred_twice(ranks)
    s = sum(c * c for c in a.sum(axis=0).tolist())
    q = sum((a * a).sum(axis=1).tolist())
    return s, q


def friedman(values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0) -> FriedmanResult:
    """Friedman's test with tie correction, and the Iman–Davenport F.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, smaller is better; ``±inf`` allowed, NaN refused; ``N >= 2``, ``k >= 2``.
    rtol, atol : float, optional
        Tie tolerance (:mod:`app.domain.ranking`), default exact equality.

    Returns
    -------
    FriedmanResult

    Raises
    ------
    app.domain.errors.InvalidInput
        See :func:`rank_matrix`; fewer than 2 problems (``problems``).

    Notes
    -----
    .. math:: χ^2_F = \\frac{12 N}{k (k + 1)} \\Big[\\sum_j R_j^2 − \\frac{k (k + 1)^2}{4}\\Big]
              \\Big/ \\Big(1 − \\frac{\\sum (t^3 − t)}{N k (k^2 − 1)}\\Big)

    with ``R_j`` the average ranks and ``t`` the sizes of the tie groups within problems [1]_
    [5]_, compared to ``χ²_{k−1}``; Iman and Davenport's ``F`` [4]_ is compared to
    ``F_{k−1, (k−1)(N−1)}``. Both are computed from exact integers (module docstring).
    Perfect concordance (every problem ranks the algorithms identically) makes the denominator
    of ``F`` zero: ``F = +inf``, its p-value 0, ``degenerate``. When every problem ties all
    algorithms, ``χ² = 0/0`` is reported as 0 with p-value 1 (nothing to test), ``degenerate``.

    Examples
    --------
    >>> base = [-5.2, -6.0, -2.1, -1.7, -6.4]
    >>> res = friedman([[v + 0.01 * j for v in base] for j in range(10)])
    >>> res.statistic, f"{res.p_value:.4g}", res.iman_davenport_statistic, res.degenerate
    (40.0, '4.328e-08', inf, True)
    """
    a = _matrix_iv(values, min_problems=2)
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    n, k = ranks.shape
    s, q = _friedman_sums(ranks)
    df1, df2 = k - 1, (k - 1) * (n - 1)
    reason = None
    if q == 0:
        chi2, p, f, p_f, log_p, log_p_f = 0.0, 1.0, 0.0, 1.0, 0.0, 0.0
        reason = (
            "every problem ties all algorithms: no ranking information "
            "(χ² = 0/0 reported as 0, p = 1; F = 0, p = 1)"
        )
    else:
        chi2 = (k - 1) * s / q
        p = clip_p(stats.chi2.sf(chi2, df1))
        log_p = chi2_log10_sf(chi2, df1, p)
        denominator = n * q - s  # = (N(k − 1) − χ²) · Q / (k − 1), exactly
        if denominator == 0:
            f, p_f, log_p_f = math.inf, 0.0, -math.inf
            reason = (
                "perfect concordance: every problem ranks the algorithms identically, so the "
                "Iman–Davenport denominator N(k − 1) − χ² is 0 (F = +inf, p = 0)"
            )
        else:
            f = (n - 1) * s / denominator
            p_f = clip_p(stats.f.sf(f, df1, df2))
            log_p_f = f_log10_sf(f, df1, df2, p_f)
    return FriedmanResult(
        statistic=chi2,
        p_value=p,
        log10_p_value=log_p,
        df=df1,
        iman_davenport_statistic=f,
        iman_davenport_p_value=p_f,
        log10_iman_davenport_p_value=log_p_f,
        iman_davenport_df=(df1, df2),
        average_ranks=_frozen(ranks.mean(axis=0)),
        tie_correction=3 * q / (n * k * (k * k - 1)),
        n_problems=n,
        n_algorithms=k,
        method="asymptotic",
        degenerate=reason is not None,
        reason=reason,
    )


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class AlignedRanksResult:
    """Friedman aligned-ranks test (Hodges–Lehmann alignment).

    Attributes
    ----------
    statistic : float
        ``T`` of García et al. [3]_ (0 when degenerate).
    p_value : float
        ``P(χ²_{k−1} >= T)``.
    log10_p_value : float
        ``log10`` of ``p_value`` without underflow (finite).
    df : int
        ``k − 1``.
    average_ranks : ndarray, shape (k_algorithms,)
        Average aligned rank of each algorithm, in ``[1, k N]`` (small = good).
    n_problems, n_algorithms : int
        ``N`` and ``k``.
    method : str
        ``"asymptotic"``.
    degenerate : bool
        True when every problem ties all its aligned values.
    reason : str or None
        Why the result is degenerate.
    """

    statistic: float
    p_value: float
    log10_p_value: float
    df: int
    average_ranks: np.ndarray
    n_problems: int
    n_algorithms: int
    method: str
    degenerate: bool
    reason: str | None


def friedman_aligned_ranks(
    values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0
) -> AlignedRanksResult:
    """Friedman aligned-ranks test [7]_ in the form of García et al. [3]_.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Finite metric values, smaller is better; ``N >= 2``, ``k >= 2``.
    rtol, atol : float, optional
        Tie tolerance applied to the **aligned** values (default exact equality). Alignment
        subtracts a row mean, which can break exact ties by rounding; declare ``atol`` if that
        matters.

    Returns
    -------
    AlignedRanksResult

    Raises
    ------
    app.domain.errors.InvalidInput
        As :func:`friedman`.
    app.domain.errors.NotApplicable
        ``±inf`` in ``values`` (differences are undefined).

    Notes
    -----
    Each value is aligned by subtracting the mean of its problem; the ``k N`` aligned values
    are ranked together (midranks, 1 = smallest). With ``R̂_j`` the rank total of algorithm
    ``j`` and ``R̂_i`` that of problem ``i`` [3]_,

    .. math:: T = \\frac{(k − 1) \\big[\\sum_j \\hat R_j^2 − (k N^2/4)(k N + 1)^2\\big]}
                       {\\sum_{ij} \\hat r_{ij}^2 − \\frac{1}{k} \\sum_i \\hat R_i^2}

    (without ties ``Σ r̂² = kN(kN + 1)(2kN + 1)/6``, García's printed form; with ties the sum
    of the squared midranks keeps the variance exact), compared to ``χ²_{k−1}``. If every
    problem ties all of its aligned values the denominator is 0: ``T = 0``, p = 1, degenerate.
    """
    a = _finite_matrix_iv(values, "the aligned-ranks test")
    n, k = a.shape
    r = _aligned_ranks(a, rtol, atol)
    average = _frozen(r.mean(axis=0))
    if bool(np.all(r == r[:, :1])):
        reason = "every problem ties all of its aligned values: nothing to test (T = 0, p = 1)"
        return AlignedRanksResult(0.0, 1.0, 0.0, k - 1, average, n, k, "asymptotic", True, reason)
    total = n * k
    numerator = (k - 1) * float(np.sum((r.sum(axis=0) - n * (total + 1) / 2.0) ** 2))
    denominator = float(np.sum((r - r.sum(axis=1, keepdims=True) / k) ** 2))
    statistic = numerator / denominator
    p = clip_p(stats.chi2.sf(statistic, k - 1))
    log_p = chi2_log10_sf(statistic, k - 1, p)
    return AlignedRanksResult(statistic, p, log_p, k - 1, average, n, k, "asymptotic", False, None)


def _aligned_ranks(a: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Ranks of ``a_ij − mean_i`` among all ``N k`` values, ordered exactly.

    ``k (a_ij − mean_i) = k U_ij − Σ_j U_ij`` in the integer units of
    :mod:`app.domain.exactfloat`: no rounding, overflow or underflow, whatever the magnitudes of
    the problems. A tie tolerance is applied to the correctly rounded aligned values.
    """
    check_tolerances(rtol, atol)
    n, k = a.shape
    u = units(a)
    keys = []
    for i in range(n):
        row = u[i * k : (i + 1) * k]
        total = sum(row)
        keys.extend(k * v - total for v in row)
    if rtol == 0.0 and atol == 0.0:
        return midranks_exact(keys).reshape(n, k)
    try:
        aligned = [to_float(key, k) for key in keys]
    except OverflowError:
        raise NotApplicable(
            "aligned values beyond the float range cannot be compared with a tolerance; "
            "send rtol = atol = 0 (exact comparison)",
            field="values",
        ) from None
    return midranks(aligned, rtol=rtol, atol=atol, field="values").reshape(n, k)


def _range_ranks(a: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Midranks of the problems' ranges ``max − min``, exact (Quade's weights ``Q_i``)."""
    check_tolerances(rtol, atol)
    hi = units(a.max(axis=1))
    lo = units(a.min(axis=1))
    ranges = [h - m for h, m in zip(hi, lo, strict=True)]
    if rtol == 0.0 and atol == 0.0:
        return midranks_exact(ranges)
    try:
        rounded = [to_float(r) for r in ranges]
    except OverflowError:
        raise NotApplicable(
            "ranges beyond the float range cannot be compared with a tolerance; "
            "send rtol = atol = 0 (exact comparison)",
            field="values",
        ) from None
    return midranks(rounded, rtol=rtol, atol=atol, field="values")


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class QuadeResult:
    """Quade's test: problem-weighted ranks.

    Attributes
    ----------
    statistic : float
        ``F = (N − 1) B / (A − B)``; ``+inf`` when ``A = B > 0``, 0 when ``A = 0``.
    p_value : float
        ``P(F_{df} >= F)``.
    log10_p_value : float
        ``log10`` of ``p_value`` without underflow; ``−inf`` only when ``A = B`` (``F = +inf``,
        p exactly 0 under the F approximation).
    df : tuple of int
        ``(k − 1, (k − 1)(N − 1))``.
    average_ranks : ndarray, shape (k_algorithms,)
        Quade-weighted average ranks ``Σ_i Q_i r_ij / Σ_i Q_i`` (1 = best) [3]_.
    problem_weights : ndarray, shape (n_problems,)
        ``Q_i``: the midrank of problem ``i``'s range ``max − min`` among the problems.
    n_problems, n_algorithms : int
        ``N`` and ``k``.
    method : str
        ``"asymptotic"``.
    degenerate : bool
        True when ``A = 0`` (every problem ties all algorithms) or ``A = B`` (identical
        rankings and equal problem weights).
    reason : str or None
        Why the result is degenerate.
    """

    statistic: float
    p_value: float
    log10_p_value: float
    df: tuple[int, int]
    average_ranks: np.ndarray
    problem_weights: np.ndarray
    n_problems: int
    n_algorithms: int
    method: str
    degenerate: bool
    reason: str | None


def quade(values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0) -> QuadeResult:
    """Quade's test [6]_ [5]_ (R's ``quade.test``).

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Finite metric values, smaller is better; ``N >= 2``, ``k >= 2``.
    rtol, atol : float, optional
        Tie tolerance, used both within problems and to rank the problems' ranges.

    Returns
    -------
    QuadeResult

    Raises
    ------
    app.domain.errors.InvalidInput
        As :func:`friedman`.
    app.domain.errors.NotApplicable
        ``±inf`` in ``values`` (ranges are undefined).

    Notes
    -----
    With within-problem midranks ``r_ij``, problem weights ``Q_i`` (midranks of the ranges),
    ``S_ij = Q_i (r_ij − (k + 1)/2)``, ``A = Σ_ij S_ij²`` and ``B = Σ_j (Σ_i S_ij)² / N``,

    .. math:: F = \\frac{(N − 1) B}{A − B} \\sim F_{k − 1, (k − 1)(N − 1)}.

    Everything is computed in exact integers (``4 S_ij`` is an integer). ``A = B > 0``
    (every problem ranks the algorithms identically **and** all ranges tie, so that all weights
    are equal; with unequal weights ``A > B``) is reported as ``F = +inf``, p = 0,
    degenerate, following Conover's advice to treat it as in the critical region [5]_;
    ``A = 0`` (every problem ties all algorithms) as ``F = 0``, p = 1, degenerate.

    Examples
    --------
    >>> x = [[5, 4, 7, 10, 12], [1, 3, 1, 0, 2], [16, 12, 22, 22, 35], [5, 4, 3, 5, 4],
    ...      [10, 9, 7, 13, 10], [19, 18, 28, 37, 58], [10, 7, 6, 8, 7]]
    >>> res = quade(x)  # R: quade.test(x): Quade F = 3.8293, num df = 4, denom df = 24
    >>> f"{res.statistic:.4f}", res.df, f"{res.p_value:.4f}"
    ('3.8293', (4, 24), '0.0152')
    """
    a = _finite_matrix_iv(values, "Quade's test")
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    n, k = ranks.shape
    weights = _range_ranks(a, rtol, atol)
    s4 = np.rint(2.0 * weights).astype(np.int64)[:, None] * _centred_twice(ranks)  # 4 S_ij
    a16 = sum((s4 * s4).sum(axis=1).tolist())  # 16 A
    b16n = sum(c * c for c in s4.sum(axis=0).tolist())  # 16 N B
    df = (k - 1, (k - 1) * (n - 1))
    average = _frozen((weights[:, None] * ranks).sum(axis=0) / weights.sum())
    weights = _frozen(weights)
    if a16 == 0:
        reason = "every problem ties all algorithms: nothing to test (F = 0, p = 1)"
        return QuadeResult(0.0, 1.0, 0.0, df, average, weights, n, k, "asymptotic", True, reason)
    denominator = n * a16 - b16n  # 16 N (A − B)
    if denominator == 0:
        reason = (
            "A = B: every problem ranks the algorithms identically and all ranges tie, so the "
            "denominator A − B is 0 (F = +inf, p = 0)"
        )
        return QuadeResult(
            math.inf, 0.0, -math.inf, df, average, weights, n, k, "asymptotic", True, reason
        )
    f = (n - 1) * b16n / denominator
    p = clip_p(stats.f.sf(f, *df))
    log_p = f_log10_sf(f, *df, sf=p)
    return QuadeResult(f, p, log_p, df, average, weights, n, k, "asymptotic", False, None)


# ------------------------------------------------------------------ studentized range, df = ∞

_RANGE_NEGLIGIBLE = 40.0  # e^-40 ≈ 4e-18: a weight below this is dropped from the integral
_RANGE_TAIL_MARGIN = 6.5  # the tail integrand ~ exp(-(z + q/2)²): margin gives e^-42
_RANGE_STEP = 0.35  # trapezoid step / (1 / sqrt(2 ln k)); 0.45 loses 1e-11 at k = 10^4
_RANGE_CHUNK = 1024  # q values per vectorized block (bounds the temporaries)
_RANGE_TINY = 1e-300  # SF values surely below this are returned as 0


@lru_cache(maxsize=512)
def _range_rule(k: int) -> tuple[float, float, float]:
    """``(step, lower, upper)`` of the trapezoid rule for the range of ``k`` normals.

    The integrand's weight is the density of the minimum of ``k`` normals, whose width shrinks
    like ``1 / sqrt(2 ln k)``; the step is :data:`_RANGE_STEP` of that (at most 0.25), for
    which the trapezoid rule (geometrically convergent for these smooth, rapidly decaying
    integrands) agreed with a 2,000 times finer grid to ``4e-15`` relative for ``2 <= k <=
    10^4`` when this was tuned. ``lower`` and ``upper`` are where the weight falls below
    ``e^-40``.
    """
    log_k = math.log(k)
    step = min(0.25, _RANGE_STEP / math.sqrt(2.0 * log_k))
    lower = -math.sqrt(2.0 * (log_k + _RANGE_NEGLIGIBLE))
    z = np.linspace(lower, 40.0, 16001)
    log_weight = log_k - 0.5 * z * z - 0.5 * math.log(2 * math.pi) + (k - 1) * special.log_ndtr(-z)
    upper = float(z[np.flatnonzero(log_weight > -_RANGE_NEGLIGIBLE)[-1]]) + 0.25
    return step, lower, upper


@dataclass(frozen=True, eq=False)  # holds arrays
class _RangeGrid:
    """Trapezoid nodes ``z``, their log weights (density of the minimum of ``k`` normals, halved
    at both ends) and the step, shared by the q values of one block."""

    z: np.ndarray
    log_weight: np.ndarray
    step: float


def _range_grid(q: np.ndarray, k: int) -> _RangeGrid:
    step, lower, upper = _range_rule(k)
    lo = min(lower, -0.5 * float(q.max()) - _RANGE_TAIL_MARGIN)
    n_nodes = math.ceil((upper - lo) / step) + 1
    z = np.linspace(lo, upper, n_nodes)
    log_weight = math.log(k) - 0.5 * math.log(2 * math.pi) - 0.5 * z * z
    log_weight += (k - 1) * special.log_ndtr(-z)
    log_weight[[0, -1]] += math.log(0.5)  # trapezoid end weights
    return _RangeGrid(z, log_weight, (upper - lo) / (n_nodes - 1))


def _range_sf_block(q: np.ndarray, k: int) -> np.ndarray:
    """SF of the range of ``k`` iid N(0, 1) at positive finite ``q`` (1-D), by quadrature.

    ``P(W > q) = k ∫ φ(z) Φc(z)^{k−1} [1 − (1 − Φc(z + q)/Φc(z))^{k−1}] dz`` — the density of
    the minimum ``z`` times the probability that some other value exceeds ``z + q`` [16]_. The
    bracket is ``−expm1((k − 1) log1p(−ratio))``, accurate in both tails; nothing is
    subtracted from 1. All ``q`` share one grid (sort them so that a block spans little).
    """
    grid = _range_grid(q, k)
    z, weight = grid.z, np.exp(grid.log_weight)
    ratio = special.ndtr(-(z[None, :] + q[:, None]))
    ratio /= special.ndtr(-z)
    with np.errstate(divide="ignore"):  # ratio == 1 where z + q and z both sit far left
        others = np.log1p(-ratio, out=ratio)
    others *= k - 1
    others = -np.expm1(others, out=others)
    return grid.step * (others @ weight)


def _range_log_sf_block(q: np.ndarray, k: int) -> np.ndarray:
    """Natural log of :func:`_range_sf_block`, for ``q`` whose SF is below the float range.

    The same trapezoid rule, summed by log-sum-exp: ``log weight`` plus the log of the bracket,
    ``log(−expm1((k − 1) log1p(−ratio)))``, which is ``log(k − 1) + log ratio`` (relative error
    ``k · ratio``) once ``ratio = Φc(z + q)/Φc(z)`` itself underflows. The grid reaches
    ``−q/2 − 6.5``, past the peak of the integrand at ``z ≈ −q/2``.
    """
    grid = _range_grid(q, k)
    z = grid.z
    log_ratio = special.log_ndtr(-(z[None, :] + q[:, None])) - special.log_ndtr(-z)[None, :]
    with np.errstate(divide="ignore", under="ignore"):
        bracket = -np.expm1((k - 1) * np.log1p(-np.exp(log_ratio)))
        log_bracket = np.where(log_ratio < -700.0, math.log(k - 1) + log_ratio, np.log(bracket))
    return math.log(grid.step) + special.logsumexp(log_bracket + grid.log_weight, axis=1)


def _k_iv(k: object, field: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise InvalidInput(f"{field} must be an integer >= 2, got {k!r}", field=field)
    return int(k)


def studentized_range_sf(q: ArrayLike, k: int) -> np.ndarray:
    """Survival function of the studentized range with infinite degrees of freedom.

    Parameters
    ----------
    q : array_like
        Range values (any shape); ``q <= 0`` gives 1, ``+inf`` gives 0; NaN refused.
    k : int
        Number of means, ``k >= 2``.

    Returns
    -------
    ndarray, same shape as ``q``
        ``P(max − min of k iid N(0, 1) > q)``, equal to
        ``scipy.stats.studentized_range.sf(q, k, np.inf)`` but vectorized, and accurate in the
        far tail: relative error about ``1e-14`` (``erfc(q/2)`` for ``k = 2``, an independent
        double quadrature for ``k > 2``), while scipy's ``1 − cdf`` keeps only ~1e-16 absolute
        accuracy. Values below ``1e-300`` (``C(k, 2) erfc(q/2) < 1e-300``) are returned as 0.

    Raises
    ------
    app.domain.errors.InvalidInput
        NaN in ``q`` (``q``), or ``k`` not an integer ``>= 2`` (``k``).

    Examples
    --------
    >>> round(float(studentized_range_sf(3.314493, 3)), 6)  # q_0.05(3, ∞) = 3.3145
    0.05
    """
    k = _k_iv(k)
    qa = np.asarray(q, dtype=np.float64)
    if np.isnan(qa).any():
        raise InvalidInput("q contains NaN", field="q")
    flat = qa.ravel()
    out = np.where(flat > 0, 0.0, 1.0)
    # SF <= C(k, 2) P(|Z1 − Z2| > q) = C(k, 2) erfc(q/2): skip what is surely below 1e-300
    with np.errstate(over="ignore", invalid="ignore"):
        bound = 0.5 * k * (k - 1) * special.erfc(0.5 * flat)
    inner = np.flatnonzero((flat > 0) & (bound >= _RANGE_TINY))
    inner = inner[np.argsort(flat[inner], kind="stable")]  # similar q share a block's grid
    for start in range(0, inner.size, _RANGE_CHUNK):
        idx = inner[start : start + _RANGE_CHUNK]
        out[idx] = _range_sf_block(flat[idx], k)
    return np.clip(out, 0.0, 1.0).reshape(qa.shape)


def studentized_range_log10_sf(q: ArrayLike, k: int, sf: ArrayLike | None = None) -> np.ndarray:
    """``log10`` of :func:`studentized_range_sf`, finite below the float range.

    Parameters
    ----------
    q : array_like
        Range values; ``q <= 0`` gives 0, ``+inf`` gives ``−inf``; NaN refused.
    k : int
        Number of means, ``k >= 2``.
    sf : array_like, optional
        ``studentized_range_sf(q, k)`` if already computed.

    Returns
    -------
    ndarray, same shape as ``q``
        ``log10 sf`` where the SF is a normal float; below, the log-space quadrature
        (:func:`_range_log_sf_block`): ``log10 erfc(q/2)`` for ``k = 2`` to about 1e-12
        relative at ``q = 100`` (``p ≈ 10^-1090``).

    Examples
    --------
    >>> round(float(studentized_range_log10_sf(100.0, 2)), 4)  # log10 erfc(50)
    -1087.6838
    """
    k = _k_iv(k)
    qa = np.asarray(q, dtype=np.float64)
    p = studentized_range_sf(qa, k) if sf is None else np.asarray(sf, dtype=np.float64)
    flat_q, flat_p = qa.ravel(), p.ravel()
    with np.errstate(divide="ignore"):
        out = np.minimum(np.log10(flat_p), 0.0)
    low = np.flatnonzero(~(out >= LOG10_TINY) & np.isfinite(flat_q))
    low = low[np.argsort(flat_q[low], kind="stable")]
    for start in range(0, low.size, _RANGE_CHUNK):
        idx = low[start : start + _RANGE_CHUNK]
        out[idx] = _range_log_sf_block(flat_q[idx], k) / _LN10
    return np.minimum(out, 0.0).reshape(qa.shape)


def studentized_range_isf(p: float, k: int) -> float:
    """Inverse of :func:`studentized_range_sf`: the upper ``p`` quantile ``q`` (df = ∞).

    Parameters
    ----------
    p : float
        Upper tail probability in ``(0, 1)``.
    k : int
        Number of means, ``k >= 2``.

    Returns
    -------
    float
        ``q`` with ``studentized_range_sf(q, k) = p`` (to about 1e-12 in ``q``). Divided by
        ``√2`` this is Demšar's ``q_α`` [1]_ (2.728 for ``k = 5``, ``α = 0.05``).

    Raises
    ------
    app.domain.errors.InvalidInput
        ``p`` outside ``(0, 1)`` (``alpha``), bad ``k`` (``k``).

    Examples
    --------
    >>> round(studentized_range_isf(0.05, 5) / 2 ** 0.5, 3)
    2.728
    """
    k = _k_iv(k)
    if not (isinstance(p, int | float | np.floating) and 0.0 < p < 1.0):
        raise InvalidInput(f"alpha must be in (0, 1), got {p!r}", field="alpha")

    def excess(x: float) -> float:
        return float(_range_sf_block(np.array([x]), k)[0]) - p

    hi = 8.0
    while excess(hi) >= 0.0:
        hi *= 2.0
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps))


# --------------------------------------------------------------------- multiple comparisons


def _statsmodels_adjust(p: np.ndarray, name: str) -> np.ndarray:
    return np.asarray(multipletests(p, method=name)[1], dtype=np.float64)


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm [8]_: ``p'_(i) = max_{j <= i} min(1, (m − j + 1) p_(j))``.

    Computed here rather than by statsmodels, whose Holm branch runs ``gc.collect()`` on every
    call (about 40 ms in a test process, more in a large server heap); tests compare the two.
    """
    m = p.size
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    return out


def _bonferroni(p: np.ndarray) -> np.ndarray:
    return np.minimum(1.0, p.size * p)


def _finner(p: np.ndarray) -> np.ndarray:
    """``p'_(i) = max_{j <= i} 1 − (1 − p_(j))^{m/j}`` [11]_ (step-down, monotone)."""
    m = p.size
    order = np.argsort(p, kind="stable")
    j = np.arange(1, m + 1)
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf gives exactly 1
        adj = -np.expm1((m / j) * np.log1p(-p[order]))
    out = np.empty(m)
    out[order] = np.maximum.accumulate(adj)
    return out


def _li(p: np.ndarray) -> np.ndarray:
    """Li's two-step procedure [12]_: ``p'_i = p_i / (p_i + 1 − p_(m))``, ``p'_(m) = p_(m)``.

    With ``p_(m) = 1`` this is 1 for every ``p_i > 0`` and 0 for ``p_i = 0`` (Li's second step
    rejects ``p_i <= α (1 − p_(m)) / (1 − α) = 0`` only).
    """
    largest = float(p.max())
    denominator = p + (1.0 - largest)
    out = np.divide(p, denominator, out=np.zeros_like(p), where=denominator > 0)
    out[p == largest] = largest
    return out


@lru_cache(maxsize=64)
def shaffer_true_hypotheses(k: int) -> tuple[int, ...]:
    """``S(k)``: the possible numbers of true hypotheses among all pairwise equalities of k means.

    Parameters
    ----------
    k : int
        Number of algorithms, ``k >= 0``.

    Returns
    -------
    tuple of int
        Sorted ``S(k) = ∪_{j=1..k} {C(j, 2) + x : x ∈ S(k − j)}``, ``S(0) = S(1) = {0}``
        (Shaffer [13]_; García & Herrera [2]_): the true equalities are those inside the blocks
        of a partition of the ``k`` means.

    Examples
    --------
    >>> shaffer_true_hypotheses(4)
    (0, 1, 2, 3, 6)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidInput(f"k must be an integer >= 0, got {k!r}", field="k")
    masks = [1, 1]  # bit s set <=> s ∈ S(i)
    for i in range(2, k + 1):
        mask = 0
        for j in range(1, i + 1):
            mask |= masks[i - j] << (j * (j - 1) // 2)
        masks.append(mask)
    mask = masks[k]
    return tuple(s for s in range(mask.bit_length()) if mask >> s & 1)


def _n_algorithms_of_pairs(m: int) -> int:
    k = (1 + math.isqrt(1 + 8 * m)) // 2
    if k * (k - 1) // 2 != m or k < 2:
        raise InvalidInput(
            f"shaffer adjusts all k(k − 1)/2 pairwise comparisons; {m} is not such a count",
            field="p",
        )
    return k


def _shaffer(p: np.ndarray) -> np.ndarray:
    """Static Shaffer [13]_ [2]_: ``p'_(i) = max_{j <= i} min(1, t_j p_(j))``.

    ``t_j`` is the largest number of hypotheses that can still be true once ``j − 1`` are false:
    the largest element of ``S(k)`` that is ``<= m − j + 1``.
    """
    m = p.size
    t = _shaffer_multipliers(m)  # for m − j + 1 remaining hypotheses, j = 1..m
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.maximum.accumulate(np.minimum(1.0, t * p[order]))
    return out


def _shaffer_multipliers(m: int) -> np.ndarray:
    """``t_j`` of :func:`_shaffer` for ``j = 1..m``."""
    possible = np.array(shaffer_true_hypotheses(_n_algorithms_of_pairs(m)))
    remaining = m - np.arange(m)
    return possible[np.searchsorted(possible, remaining, side="right") - 1]


# Log-space adjustments: every procedure is a min/max of constant multiples of raw p's (Finner,
# Li: of smooth functions of them), so it runs on ``log10 p`` unchanged and never underflows.


def _log_step_down(lp: np.ndarray, multipliers: np.ndarray) -> np.ndarray:
    """``max_{j <= i} min(0, log10 c_j + lp_(j))`` in the input order (Holm, Shaffer)."""
    order = np.argsort(lp, kind="stable")
    out = np.empty(lp.size)
    out[order] = np.maximum.accumulate(np.minimum(0.0, np.log10(multipliers) + lp[order]))
    return out


def _log_holm(lp: np.ndarray) -> np.ndarray:
    return _log_step_down(lp, lp.size - np.arange(lp.size, dtype=np.float64))


def _log_shaffer(lp: np.ndarray) -> np.ndarray:
    return _log_step_down(lp, _shaffer_multipliers(lp.size).astype(np.float64))


def _log_bonferroni(lp: np.ndarray) -> np.ndarray:
    return np.minimum(0.0, math.log10(lp.size) + lp)


def _log_hochberg(lp: np.ndarray) -> np.ndarray:
    """Step-up [9]_: ``p'_(i) = min_{j >= i} min(1, (m − j + 1) p_(j))``."""
    m = lp.size
    order = np.argsort(lp, kind="stable")
    raw = np.log10(m - np.arange(m, dtype=np.float64)) + lp[order]
    out = np.empty(m)
    out[order] = np.minimum(0.0, np.minimum.accumulate(raw[::-1])[::-1])
    return out


def _log_hommel(lp: np.ndarray) -> np.ndarray:
    """Hommel [10]_ as R's ``p.adjust(method="hommel")``, on ``log10 p`` (Hochberg for m = 2)."""
    n = lp.size
    if n <= 2:
        return _log_hochberg(lp)
    order = np.argsort(lp, kind="stable")
    p = lp[order]
    log_i = np.log10(np.arange(1, n + 1, dtype=np.float64))
    q = np.full(n, float(np.min(math.log10(n) + p - log_i)))
    pa = q.copy()
    for m in range(n - 1, 1, -1):
        log_m = math.log10(m)
        q1 = float(np.min(log_m + p[n - m + 1 :] - log_i[1:m]))
        q[: n - m + 1] = np.minimum(log_m + p[: n - m + 1], q1)
        q[n - m + 1 :] = q[n - m]
        pa = np.maximum(pa, q)
    out = np.empty(n)
    out[order] = np.minimum(0.0, np.maximum(pa, p))
    return out


def _log10_one_minus_power(lp: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``log10(1 − (1 − p)^c)`` for ``p = 10^lp``, ``c >= 1``: ``log10(c p)`` once ``p``
    underflows (relative error ``c p / 2``)."""
    ln_p = lp * _LN10
    with np.errstate(divide="ignore", under="ignore"):  # log1p(−1) = −inf gives exactly 1
        direct = np.log10(-np.expm1(c * np.log1p(-np.exp(ln_p))))
    return np.where(ln_p < -700.0, np.log10(c) + lp, direct)


def _log_finner(lp: np.ndarray) -> np.ndarray:
    m = lp.size
    order = np.argsort(lp, kind="stable")
    adj = _log10_one_minus_power(lp[order], m / np.arange(1, m + 1, dtype=np.float64))
    out = np.empty(m)
    out[order] = np.maximum.accumulate(adj)
    return out


def _log_li(lp: np.ndarray) -> np.ndarray:
    """Li [12]_ on logs: ``log10 p_i − log10(p_i + 1 − p_(m))`` by ``logaddexp``."""
    largest = float(lp.max())
    with np.errstate(divide="ignore"):  # p_(m) = 1: log1p(−1) = −inf, the ratio is 1
        log_gap = math.log1p(-(10.0**largest)) if largest < 0.0 else -math.inf
    out = lp - np.logaddexp(lp * _LN10, log_gap) / _LN10
    out[lp == largest] = largest
    return out


_LOG_ADJUSTMENTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "bonferroni": _log_bonferroni,
    "holm": _log_holm,
    "hochberg": _log_hochberg,
    "hommel": _log_hommel,
    "finner": _log_finner,
    "li": _log_li,
    "shaffer": _log_shaffer,
}


_ADJUSTMENTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "bonferroni": _bonferroni,
    "holm": _holm,
    "hochberg": partial(_statsmodels_adjust, name="simes-hochberg"),
    "hommel": partial(_statsmodels_adjust, name="hommel"),
    "finner": _finner,
    "li": _li,
    "shaffer": _shaffer,
}


def adjusted_pvalues(p: ArrayLike, *, method: str) -> np.ndarray:
    """Adjust a family of p-values for multiple testing.

    Parameters
    ----------
    p : array_like, shape (m,)
        Raw p-values in ``[0, 1]``.
    method : {"bonferroni", "holm", "hochberg", "hommel", "finner", "li", "shaffer"}
        Hochberg [9]_ and Hommel [10]_ come from statsmodels' ``multipletests``
        (``"simes-hochberg"``, ``"hommel"``); Holm [8]_, Finner [11]_, Li [12]_ and static
        Shaffer [13]_ are computed here. ``"shaffer"`` needs the family of all
        ``k(k − 1)/2`` pairwise comparisons of ``k`` algorithms (``m`` must be such a count).

    Returns
    -------
    ndarray, shape (m,)
        Adjusted p-values, in the input order, ``>= p`` and ``<= 1``; for the step-wise
        procedures they are non-decreasing in the order of the raw p-values.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``p`` not 1-D or outside ``[0, 1]`` (``p``); unknown ``method`` (``method``).

    Examples
    --------
    >>> adjusted_pvalues([0.01, 0.04, 0.03, 0.50], method="holm").tolist()
    [0.04, 0.09, 0.09, 0.5]
    """
    return _run_adjustment(p, method, _ADJUSTMENTS, low=0.0, high=1.0, what="p-values")


def _run_adjustment(
    values: ArrayLike,
    method: str,
    procedures: dict[str, Callable[[np.ndarray], np.ndarray]],
    *,
    low: float,
    high: float,
    what: str,
) -> np.ndarray:
    """Validate a family (1-D, in ``[low, high]``, no NaN), adjust it, clip to ``[raw, high]``."""
    adjust = procedures.get(method) if isinstance(method, str) else None
    if adjust is None:
        raise InvalidInput(
            f"unknown adjustment {method!r}; choose one of {sorted(procedures)}",
            field="method",
        )
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1:
        raise InvalidInput(f"p must be one-dimensional, got shape {a.shape}", field="p")
    if not np.all((a >= low) & (a <= high)):  # also refuses NaN
        raise InvalidInput(f"{what} must lie in [{low:g}, {high:g}]", field="p")
    if a.size == 0:
        return a.copy()
    return np.clip(adjust(a), a, high)


def adjusted_log10_pvalues(log10_p: ArrayLike, *, method: str) -> np.ndarray:
    """:func:`adjusted_pvalues` in log space: ``log10`` of the adjusted p-values.

    Parameters
    ----------
    log10_p : array_like, shape (m,)
        ``log10`` of the raw p-values, in ``[−inf, 0]`` (finite whenever the p-value is
        positive, however small).
    method : str
        As :func:`adjusted_pvalues`; the same procedure run on logarithms (products by
        constants become sums; Finner's ``1 − (1 − p)^{m/j}`` and Li's ratio are taken through
        ``log1p``/``expm1`` and ``logaddexp``), so nothing underflows.

    Returns
    -------
    ndarray, shape (m,)
        ``log10`` of the adjusted p-values, ``>= log10_p`` and ``<= 0``; equal to ``log10`` of
        :func:`adjusted_pvalues` wherever that does not underflow.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``log10_p`` not 1-D, positive or NaN (``p``); unknown ``method`` (``method``).

    Examples
    --------
    >>> adjusted_log10_pvalues([-2000.0, -3.0, -1.0], method="holm").round(6).tolist()
    [-1999.522879, -2.69897, -1.0]
    """
    return _run_adjustment(
        log10_p, method, _LOG_ADJUSTMENTS, low=-math.inf, high=0.0, what="log10 p-values"
    )


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class AdjustedPValues:
    """Adjusted p-values of a family and their ``log10``.

    Attributes
    ----------
    p : ndarray, shape (m,)
        :func:`adjusted_pvalues`, except that a 0 whose logarithm lies in the float range is
        taken from the logarithm (Li with ``p_(m) = 1`` and a raw p that underflowed: the
        float procedure sees ``p = 0``, the log-space one knows it was positive).
    log10_p : ndarray, shape (m,)
        :func:`adjusted_log10_pvalues`.
    """

    p: np.ndarray
    log10_p: np.ndarray


def adjusted_family(p: ArrayLike, log10_p: ArrayLike, *, method: str) -> AdjustedPValues:
    """Adjust a family both ways: the p-values and, in log space, their logarithms.

    Parameters
    ----------
    p : array_like, shape (m,)
        Raw p-values in ``[0, 1]``.
    log10_p : array_like, shape (m,)
        Their ``log10``, computed without underflow.
    method : str
        As :func:`adjusted_pvalues`.

    Returns
    -------
    AdjustedPValues
    """
    logs = adjusted_log10_pvalues(log10_p, method=method)
    adjusted = adjusted_pvalues(p, method=method)
    adjusted = np.where((adjusted == 0.0) & (logs >= LOG10_TINY), 10.0**logs, adjusted)
    return AdjustedPValues(_frozen(adjusted), _frozen(logs))


# -------------------------------------------------------------------------------- post-hoc


@dataclass(frozen=True, slots=True)
class PairComparison:
    """One post-hoc comparison of two algorithms' average ranks.

    Attributes
    ----------
    i, j : int
        Algorithm indices: ``i < j`` for all pairs; ``i`` = the control for vs-control.
    rank_difference : float
        ``R_i − R_j`` (negative: ``i`` ranks better).
    z : float
        ``(R_i − R_j) / sqrt(k (k + 1) / (6 N))``.
    p_value : float
        Unadjusted two-sided normal p-value ``2 Φ(−|z|)``.
    p_adjusted : float
        The procedure's adjusted p-value (Nemenyi: studentized range with df = ∞).
    log10_p_value, log10_p_adjusted : float
        ``log10`` of ``p_value`` and ``p_adjusted`` without underflow (``log Φ``; the
        studentized range's log-space quadrature; :func:`adjusted_log10_pvalues`): finite.
    significant : bool
        ``p_adjusted < alpha``.
    """

    i: int
    j: int
    rank_difference: float
    z: float
    p_value: float
    p_adjusted: float
    log10_p_value: float
    log10_p_adjusted: float
    significant: bool


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class PosthocResult:
    """Post-hoc comparisons of average Friedman ranks.

    Attributes
    ----------
    procedure : str
        The post-hoc procedure (a key of :data:`POSTHOC_METHODS`).
    comparison : str
        ``"all-pairs"`` or ``"vs-control"``.
    alpha : float
        Family-wise level; a pair is significant when ``p_adjusted < alpha``.
    control : int or None
        The control's index (vs-control), else None.
    average_ranks : ndarray, shape (k_algorithms,)
        Average Friedman ranks (1 = best).
    n_problems, n_algorithms : int
        ``N`` and ``k``.
    critical_difference : float or None
        Nemenyi's or Bonferroni–Dunn's ``CD = critical_value · sqrt(k (k + 1) / (6 N))``;
        None for the step-wise procedures.
    critical_value : float or None
        Nemenyi: ``q_α / √2`` (Demšar's ``q_α``, the studentized-range quantile with df = ∞
        divided by √2); Bonferroni–Dunn: the normal quantile at ``1 − α / (2 (k − 1))``;
        either under ``cd_convention="jing-liu"``: the normal quantile at ``1 − α / (2k)``.
    pairs : tuple of PairComparison
        All pairs ``(i, j)``, ``i < j``, in lexicographic order; or ``(control, j)`` for every
        other ``j`` in increasing order.
    p_matrix : ndarray, shape (k_algorithms, k_algorithms) or None
        All pairs: symmetric adjusted p-values, 1 on the diagonal. None for vs-control.
    p_vs_control : ndarray, shape (k_algorithms,) or None
        vs-control: adjusted p-value of each algorithm against the control (1 for the control).
        None for all pairs.
    log10_p_matrix, log10_p_vs_control : ndarray or None
        ``log10`` of ``p_matrix`` and ``p_vs_control`` without underflow (0 on the diagonal
        and for the control).
    cliques : tuple of tuple of int
        Groups of algorithms not significantly different, from the ``significant`` flags only
        (:func:`rank_cliques`); vs-control: the control with every algorithm not significantly
        different from it, if any. Members are listed by increasing average rank.
    method : str
        ``"asymptotic"`` (normal or studentized-range approximation of rank differences).
    degenerate : bool
        True when every problem ties all algorithms (all p-values 1).
    reason : str or None
        Why the result is degenerate.
    cd_convention : {"standard", "jing-liu"}
        The critical value's convention (:data:`CD_CONVENTIONS`); ``"jing-liu"`` also sets
        ``p_adjusted = min(1, k · p_value)``, the p-value that convention's CD tests, so the
        ``significant`` flags and the cliques agree with the reported CD.
    """

    procedure: str
    comparison: str
    alpha: float
    control: int | None
    average_ranks: np.ndarray
    n_problems: int
    n_algorithms: int
    critical_difference: float | None
    critical_value: float | None
    pairs: tuple[PairComparison, ...]
    p_matrix: np.ndarray | None
    p_vs_control: np.ndarray | None
    log10_p_matrix: np.ndarray | None
    log10_p_vs_control: np.ndarray | None
    cliques: tuple[tuple[int, ...], ...]
    method: str
    degenerate: bool
    reason: str | None
    cd_convention: str = "standard"
    low_power: LowPowerWarning | None = None


@dataclass(frozen=True)
class LowPowerWarning:
    """Too few problems for the rank tests to find differences: the rule and its numbers.

    The rule (docs/METHODS.md, "Too few problems"): warn when the critical difference of
    average ranks exceeds half the largest possible difference, ``CD > (k − 1) / 2``, so only
    pairs of algorithms at least half the rank range apart could be found significant. The CD
    is the standard one (Demšar [1]_): Nemenyi's ``q_α/√2 · sqrt(k (k + 1) / (6 N))`` for all
    pairs, Bonferroni–Dunn's for a control, whatever procedure was asked (step-wise
    procedures are somewhat more powerful; the rule screens the design, N and k at α).

    Attributes
    ----------
    n_problems, n_algorithms : int
        ``N`` and ``k``.
    alpha : float
        The family-wise level.
    comparison : str
        ``"all-pairs"`` (Nemenyi's CD) or ``"vs-control"`` (Bonferroni–Dunn's).
    critical_difference : float
        The CD at this ``N``.
    threshold : float
        ``(k − 1) / 2``.
    n_needed : int
        The smallest ``N`` with ``CD ≤ (k − 1) / 2`` (``CD ∝ 1/√N``).
    chi2_rough : bool
        Not ``N > 10 and k > 5``: outside Demšar's rule of thumb for Friedman's χ²
        approximation [1]_ (Iman–Davenport's ``F`` is the better read there [4]_).
    message : str
        The warning in words, naming all of the above.
    """

    n_problems: int
    n_algorithms: int
    alpha: float
    comparison: str
    critical_difference: float
    threshold: float
    n_needed: int
    chi2_rough: bool
    message: str
    kind: str = "low-power"


def low_power_warning(
    n_problems: int,
    n_algorithms: int,
    alpha: float,
    comparison: str = "all-pairs",
    cd_convention: str = "standard",
) -> LowPowerWarning | None:
    """The :class:`LowPowerWarning` of ``N`` problems and ``k`` algorithms, or None (the CD of
    ``cd_convention``: the standard Nemenyi/Bonferroni–Dunn one, or Jing & Liu's).

    Examples
    --------
    >>> w = low_power_warning(3, 11, 0.05)
    >>> round(w.critical_difference, 2), w.threshold, w.n_needed
    (8.72, 5.0, 10)
    >>> low_power_warning(10, 11, 0.05) is None
    True
    """
    n, k = int(n_problems), int(n_algorithms)
    if k < 2 or n < 1:
        return None
    if cd_convention == "jing-liu":
        critical = _jing_liu_critical(alpha, k)
    elif comparison == "all-pairs":
        critical = _nemenyi_critical(alpha, k)
    else:
        critical = _bonferroni_dunn_critical(alpha, k)
    unit = critical * math.sqrt(k * (k + 1) / 6.0)  # CD = unit / √N
    cd = unit / math.sqrt(n)
    threshold = (k - 1) / 2.0
    if cd <= threshold:
        return None
    n_needed = max(1, math.ceil((unit / threshold) ** 2))
    while unit / math.sqrt(n_needed) > threshold:  # guard the ceiling against rounding
        n_needed += 1
    while n_needed > 1 and unit / math.sqrt(n_needed - 1) <= threshold:
        n_needed -= 1
    name = (
        "Jing & Liu (Table I)"
        if cd_convention == "jing-liu"
        else "Nemenyi"
        if comparison == "all-pairs"
        else "Bonferroni–Dunn"
    )
    message = (
        f"too few problems for the rank tests: N = {n} problems, k = {k} algorithms, "
        f"alpha = {alpha:g}: the {name} critical difference CD = {cd:.3g} exceeds (k − 1)/2 = "
        f"{threshold:g}, so only algorithms whose average ranks differ by more than half the "
        f"largest possible difference can be found different, and the cliques say little; "
        f"N >= {n_needed} problems are needed for CD <= (k − 1)/2"
    )
    chi2_rough = not (n > 10 and k > 5)
    if chi2_rough:
        message += (
            "; Friedman's chi-square approximation is rough here (Demšar 2006's rule of thumb: "
            "N > 10 and k > 5), read Iman–Davenport's F"
        )
    return LowPowerWarning(
        n_problems=n,
        n_algorithms=k,
        alpha=float(alpha),
        comparison=comparison,
        critical_difference=cd,
        threshold=threshold,
        n_needed=n_needed,
        chi2_rough=chi2_rough,
        message=message,
    )


def _nemenyi_critical(alpha: float, k: int) -> float:
    return studentized_range_isf(alpha, k) / _SQRT2


def _upper_normal_quantile(p: float) -> float:
    # z with Φ(−z) = p, i.e. scipy.stats.norm.isf(p): −Φ⁻¹(p) keeps full precision where
    # Φ⁻¹(1 − p) rounds 1 − p to 1 (p < 1.1e-16 gives ∞; p = 1e-10 loses the 9th digit)
    return float(-special.ndtri(p))


def _bonferroni_dunn_critical(alpha: float, k: int) -> float:
    return _upper_normal_quantile(alpha / (2.0 * (k - 1)))


def _nemenyi_adjust(
    z_abs: np.ndarray, p: np.ndarray, log10_p: np.ndarray, k: int
) -> AdjustedPValues:
    # sums of midranks are exact, so equal |z| are bitwise equal: evaluate each once
    unique, inverse = np.unique(z_abs, return_inverse=True)
    q = unique * _SQRT2
    sf = studentized_range_sf(q, k)
    return AdjustedPValues(sf[inverse], studentized_range_log10_sf(q, k, sf)[inverse])


def _family_adjust(
    z_abs: np.ndarray, p: np.ndarray, log10_p: np.ndarray, k: int, *, name: str
) -> AdjustedPValues:
    return adjusted_family(p, log10_p, method=name)


@dataclass(frozen=True)
class _Procedure:
    comparisons: frozenset[str]  # allowed: "all-pairs", "vs-control"
    # (|z|, raw p, log10 raw p, k) -> adjusted p-values and their logs
    adjust: Callable[[np.ndarray, np.ndarray, np.ndarray, int], AdjustedPValues]
    critical: Callable[[float, int], float] | None  # (alpha, k) -> critical value on |z|


def _jing_liu_critical(alpha: float, k: int) -> float:
    # Jing & Liu's Table I [17]_: the normal quantile at 1 − α/(2k), k the number of algorithms
    return _upper_normal_quantile(alpha / (2.0 * k))


def _jing_liu_adjust(
    z_abs: np.ndarray, p: np.ndarray, log10_p: np.ndarray, k: int
) -> AdjustedPValues:
    # min(1, k·p) < α  ⇔  2Φ(−|z|) < α/k  ⇔  |z| > z_{1 − α/(2k)}: significant iff |ΔR| > CD
    return AdjustedPValues(np.minimum(1.0, k * p), np.minimum(0.0, log10_p + math.log10(k)))


_ALL = frozenset({"all-pairs"})
_CONTROL = frozenset({"vs-control"})
_EITHER = _ALL | _CONTROL
POSTHOC_METHODS: dict[str, _Procedure] = {
    "nemenyi": _Procedure(_ALL, _nemenyi_adjust, _nemenyi_critical),
    "bonferroni-dunn": _Procedure(
        _CONTROL, partial(_family_adjust, name="bonferroni"), _bonferroni_dunn_critical
    ),
    "holm": _Procedure(_EITHER, partial(_family_adjust, name="holm"), None),
    "hochberg": _Procedure(_EITHER, partial(_family_adjust, name="hochberg"), None),
    "hommel": _Procedure(_EITHER, partial(_family_adjust, name="hommel"), None),
    "finner": _Procedure(_EITHER, partial(_family_adjust, name="finner"), None),
    "li": _Procedure(_CONTROL, partial(_family_adjust, name="li"), None),
    "shaffer": _Procedure(_ALL, partial(_family_adjust, name="shaffer"), None),
}
"""Post-hoc procedures by name, with the comparisons each allows."""

CD_CONVENTIONS: dict[str, _Procedure | None] = {
    "standard": None,  # each procedure's own critical value and adjustment
    "jing-liu": _Procedure(_EITHER, _jing_liu_adjust, _jing_liu_critical),
}
"""Critical-value conventions of the procedures with a CD (nemenyi, bonferroni-dunn):
``"standard"`` keeps each procedure's own (Demšar [1]_); ``"jing-liu"`` is the normal quantile at
``1 − α/(2k)`` of Jing & Liu's Table I [17]_, with the adjusted p-values it implies."""


def _convention_iv(procedure: _Procedure, method: str, cd_convention: object) -> _Procedure:
    if not isinstance(cd_convention, str) or cd_convention not in CD_CONVENTIONS:
        raise InvalidInput(
            f"unknown cd_convention {cd_convention!r}; choose one of {sorted(CD_CONVENTIONS)}",
            field="cd_convention",
        )
    convention = CD_CONVENTIONS[cd_convention]
    if convention is None:
        return procedure
    if procedure.critical is None:
        raise InvalidInput(
            f"cd_convention {cd_convention!r} changes a critical difference; {method} has none "
            "(use nemenyi or bonferroni-dunn, or cd_convention='standard')",
            field="cd_convention",
        )
    return replace(procedure, critical=convention.critical, adjust=convention.adjust)


def _comparison_iv(method: str, procedure: _Procedure, control: object, k: int) -> str:
    if control is None:
        if "all-pairs" not in procedure.comparisons:
            raise InvalidInput(
                f"{method} compares against a control: give control", field="control"
            )
        return "all-pairs"
    if "vs-control" not in procedure.comparisons:
        raise InvalidInput(
            f"{method} compares all pairs; omit control (or use holm, hochberg, hommel, finner, "
            "li or bonferroni-dunn against a control)",
            field="control",
        )
    if isinstance(control, bool) or not isinstance(control, int | np.integer):
        raise InvalidInput(f"control must be an algorithm index, got {control!r}", field="control")
    if not 0 <= control < k:
        raise InvalidInput(f"control must be in [0, {k - 1}], got {control}", field="control")
    return "vs-control"


def _posthoc_iv(
    values: ArrayLike,
    method: str,
    alpha: float,
    control: object,
    rtol: float,
    atol: float,
    cd_convention: object = "standard",
) -> tuple[_Procedure, str, np.ndarray]:
    procedure = POSTHOC_METHODS.get(method) if isinstance(method, str) else None
    if procedure is None:
        raise InvalidInput(
            f"unknown post-hoc method {method!r}; choose one of {sorted(POSTHOC_METHODS)}",
            field="method",
        )
    if not (isinstance(alpha, int | float | np.floating) and 0.0 < alpha < 1.0):
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha!r}", field="alpha")
    procedure = _convention_iv(procedure, method, cd_convention)
    a = _matrix_iv(values, min_problems=1)
    comparison = _comparison_iv(method, procedure, control, a.shape[1])
    return procedure, comparison, rank_rows(a, rtol=rtol, atol=atol)


def rank_cliques(significant: ArrayLike, average_ranks: ArrayLike) -> tuple[tuple[int, ...], ...]:
    """Groups of algorithms not significantly different (the bars of a CD diagram [1]_).

    Parameters
    ----------
    significant : array_like of bool, shape (k, k)
        Symmetric: ``significant[i, j]`` when the pair differs significantly.
    average_ranks : array_like, shape (k,)
        Orders the algorithms (ties by index).

    Returns
    -------
    tuple of tuple of int
        With the algorithms sorted by average rank, every maximal run of consecutive
        algorithms in which no pair is significant, of size ``>= 2``, in order of their first
        member; each run lists its members in rank order. A run contained in another is
        dropped.

    Examples
    --------
    >>> sig = [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    >>> rank_cliques(sig, [1.0, 2.0, 3.0])
    ((0, 1), (1, 2))
    """
    sig = np.asarray(significant, dtype=bool)
    order = np.argsort(np.asarray(average_ranks, dtype=np.float64), kind="stable")
    s = sig[np.ix_(order, order)]
    k = order.size
    cliques: list[tuple[int, ...]] = []
    end = 0  # exclusive end of the run starting at `start`; never decreases with `start`
    previous_end = 0
    for start in range(k):
        end = max(end, start + 1)
        while end < k and not s[end, start:end].any():
            end += 1
        if end > previous_end and end - start >= 2:
            cliques.append(tuple(int(x) for x in order[start:end]))
        previous_end = max(previous_end, end)
    return tuple(cliques)


def _pair_indices(comparison: str, k: int, control: int | None) -> tuple[np.ndarray, np.ndarray]:
    if comparison == "all-pairs":
        return np.triu_indices(k, 1)
    others = np.array([j for j in range(k) if j != control], dtype=np.intp)
    return np.full(others.size, control, dtype=np.intp), others


def _pair_tuple(columns: tuple[np.ndarray, ...]) -> tuple[PairComparison, ...]:
    """PairComparison rows from the columns ``(i, j, diff, z, p, p_adj, log p, log p_adj,
    significant)``."""
    return tuple(PairComparison(*row) for row in zip(*(c.tolist() for c in columns), strict=True))


def _control_clique(
    control: int, others: np.ndarray, sig: np.ndarray, average: np.ndarray
) -> tuple[tuple[int, ...], ...]:
    group = np.concatenate(([control], others[~sig]))
    if group.size < 2:
        return ()
    group = group[np.argsort(average[group], kind="stable")]
    return (tuple(int(x) for x in group),)


def posthoc(
    values: ArrayLike,
    *,
    method: str = "nemenyi",
    alpha: float = 0.05,
    control: int | None = None,
    rtol: float = 0.0,
    atol: float = 0.0,
    cd_convention: str = "standard",
) -> PosthocResult:
    """Post-hoc comparisons of average Friedman ranks, all pairs or against a control.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, smaller is better; ``±inf`` allowed, NaN refused.
    method : str, optional
        One of :data:`POSTHOC_METHODS`:

        * ``"nemenyi"`` — all pairs, single step, studentized range (df = ∞) [1]_;
        * ``"shaffer"`` — all pairs, static Shaffer [13]_ [2]_;
        * ``"bonferroni-dunn"`` and ``"li"`` — against ``control`` only [1]_ [12]_;
        * ``"holm"``, ``"hochberg"``, ``"hommel"``, ``"finner"`` — all pairs, or against
          ``control`` when it is given [2]_.
    alpha : float, optional
        Family-wise level in ``(0, 1)``; ``significant = p_adjusted < alpha``.
    control : int or None, optional
        Index of the control algorithm (required by bonferroni-dunn and li, refused by
        nemenyi and shaffer).
    rtol, atol : float, optional
        Tie tolerance (:mod:`app.domain.ranking`).
    cd_convention : {"standard", "jing-liu"}, optional
        ``"jing-liu"`` (nemenyi and bonferroni-dunn only): the critical value is the normal
        quantile at ``1 − α/(2k)`` (Jing & Liu, Table I [17]_) and ``p_adjusted = min(1, k p)``,
        so that significance, cliques and CD agree. The default keeps Demšar's [1]_.

    Returns
    -------
    PosthocResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Bad matrix (see :func:`rank_matrix`), unknown ``method``, ``alpha`` outside
        ``(0, 1)``, ``control`` missing, unexpected or out of range (``control``), or an
        unknown ``cd_convention``, or one given to a procedure without a CD.

    Notes
    -----
    ``z_ij = (R_i − R_j) / sqrt(k (k + 1) / (6 N))`` for average ranks ``R`` [1]_; the
    unadjusted p-value is ``2 Φ(−|z|)``. The family is the ``k (k − 1)/2`` pairs or the
    ``k − 1`` comparisons with the control. Nemenyi's adjusted p-value is
    ``P(Q_{k,∞} >= √2 |z|)`` (scikit-posthocs' ``posthoc_nemenyi_friedman``), so a pair is
    significant iff ``|R_i − R_j| > CD`` (up to rounding at the boundary): the cliques and the
    critical difference tell the same story. Bonferroni–Dunn multiplies by ``k − 1``.

    Examples
    --------
    >>> base = [-5.2, -6.0, -2.1, -1.7, -6.4]
    >>> res = posthoc([[v + 0.01 * j for v in base] for j in range(10)], method="nemenyi")
    >>> round(res.critical_difference, 3), res.cliques
    (1.929, ((4, 1), (1, 0), (0, 2), (2, 3)))
    """
    procedure, comparison, ranks = _posthoc_iv(
        values, method, alpha, control, rtol, atol, cd_convention
    )
    n, k = ranks.shape
    ctrl = None if control is None else int(control)
    i, j = _pair_indices(comparison, k, ctrl)
    sums = ranks.sum(axis=0)  # exact multiples of 1/2
    se = math.sqrt(k * (k + 1) / (6.0 * n))
    diff = (sums[i] - sums[j]) / n
    z = diff / se
    z_abs = np.abs(z)
    p = np.minimum(1.0, 2.0 * special.ndtr(-z_abs))
    log_p = np.minimum(0.0, (math.log(2.0) + special.log_ndtr(-z_abs)) / _LN10)
    adjusted = procedure.adjust(z_abs, p, log_p, k)
    log_adj = np.minimum(adjusted.log10_p, 0.0)
    p_adj = np.clip(adjusted.p, 0.0, 1.0)
    sig = p_adj < alpha
    critical = None if procedure.critical is None else procedure.critical(alpha, k)
    cd = None if critical is None else critical * se
    average = ranks.mean(axis=0)
    if comparison == "all-pairs":
        p_matrix, log_matrix = np.ones((k, k)), np.zeros((k, k))
        p_matrix[i, j] = p_matrix[j, i] = p_adj
        log_matrix[i, j] = log_matrix[j, i] = log_adj
        sig_matrix = np.zeros((k, k), dtype=bool)
        sig_matrix[i, j] = sig_matrix[j, i] = sig
        cliques, p_control, log_control = rank_cliques(sig_matrix, average), None, None
    else:
        p_control, log_control = np.ones(k), np.zeros(k)
        p_control[j] = p_adj
        log_control[j] = log_adj
        cliques = _control_clique(int(control), j, sig, average)
        p_matrix = log_matrix = None
    tied = bool(np.all(ranks == (k + 1) / 2.0))
    reason = "every problem ties all algorithms: no differences to test (all p = 1)"
    return PosthocResult(
        procedure=method,
        comparison=comparison,
        alpha=float(alpha),
        control=ctrl,
        average_ranks=_frozen(average),
        n_problems=n,
        n_algorithms=k,
        critical_difference=cd,
        critical_value=critical,
        pairs=_pair_tuple((i, j, diff, z, p, p_adj, log_p, log_adj, sig)),
        p_matrix=None if p_matrix is None else _frozen(p_matrix),
        p_vs_control=None if p_control is None else _frozen(p_control),
        log10_p_matrix=None if log_matrix is None else _frozen(log_matrix),
        log10_p_vs_control=None if log_control is None else _frozen(log_control),
        cliques=cliques,
        method="asymptotic",
        degenerate=tied,
        reason=reason if tied else None,
        cd_convention=cd_convention,
        low_power=low_power_warning(n, k, float(alpha), comparison, cd_convention),
    )


def nemenyi(
    values: ArrayLike, *, alpha: float = 0.05, rtol: float = 0.0, atol: float = 0.0
) -> PosthocResult:
    """Nemenyi all-pairs test with critical difference and cliques (:func:`posthoc`).

    ``CD = q_α sqrt(k (k + 1) / (6 N))`` with ``q_α`` the upper-α studentized-range quantile
    (df = ∞) divided by √2 [1]_: 1.929 for ``k = 5``, ``N = 10``, ``α = 0.05``.
    """
    return posthoc(values, method="nemenyi", alpha=alpha, rtol=rtol, atol=atol)


def bonferroni_dunn(
    values: ArrayLike,
    *,
    control: int,
    alpha: float = 0.05,
    rtol: float = 0.0,
    atol: float = 0.0,
) -> PosthocResult:
    """Bonferroni–Dunn test against ``control`` (:func:`posthoc`).

    ``CD = z_{1 − α/(2(k − 1))} sqrt(k (k + 1) / (6 N))`` [1]_; adjusted p-values are
    ``min(1, (k − 1) · 2 Φ(−|z|))``.
    """
    return posthoc(
        values, method="bonferroni-dunn", alpha=alpha, control=control, rtol=rtol, atol=atol
    )


_CD_METHODS: dict[str, Callable[[float, int], float]] = {
    "nemenyi": _nemenyi_critical,
    "bonferroni-dunn": _bonferroni_dunn_critical,
}


def critical_difference(
    n_algorithms: int,
    n_problems: int,
    *,
    alpha: float = 0.05,
    method: str = "nemenyi",
    cd_convention: str = "standard",
) -> float:
    """Critical difference of average ranks (Nemenyi or Bonferroni–Dunn) [1]_.

    Parameters
    ----------
    n_algorithms, n_problems : int
        ``k >= 2`` and ``N >= 1``.
    alpha : float, optional
        Level in ``(0, 1)``.
    method : {"nemenyi", "bonferroni-dunn"}, optional
        Which critical value.
    cd_convention : {"standard", "jing-liu"}, optional
        ``"jing-liu"``: the normal quantile at ``1 − α/(2k)`` for either method (Jing & Liu,
        Table I [17]_; :data:`CD_CONVENTIONS`).

    Returns
    -------
    float
        ``critical_value · sqrt(k (k + 1) / (6 N))``.

    Examples
    --------
    >>> round(critical_difference(5, 10), 3)
    1.929
    >>> round(critical_difference(5, 10, cd_convention="jing-liu"), 3)
    1.821
    """
    critical = _CD_METHODS.get(method) if isinstance(method, str) else None
    if critical is None:
        raise InvalidInput(
            f"unknown method {method!r}; choose one of {sorted(_CD_METHODS)}", field="method"
        )
    procedure = _convention_iv(
        _Procedure(_EITHER, partial(_family_adjust, name="bonferroni"), critical),
        method,
        cd_convention,
    )
    critical = procedure.critical
    assert critical is not None
    if not (isinstance(alpha, int | float | np.floating) and 0.0 < alpha < 1.0):
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha!r}", field="alpha")
    k = _k_iv(n_algorithms, field="algorithms")
    if isinstance(n_problems, bool) or not isinstance(n_problems, int) or n_problems < 1:
        raise InvalidInput(
            f"n_problems must be an integer >= 1, got {n_problems!r}", field="problems"
        )
    return critical(alpha, k) * math.sqrt(k * (k + 1) / (6.0 * n_problems))


# ---------------------------------------------------------------------------- Bradley–Terry


def pairwise_wins(values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0) -> np.ndarray:
    """Pairwise wins over problems: ``W[i, j]`` = problems where ``i`` beats ``j``.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, smaller is better; ``±inf`` allowed, NaN refused.
    rtol, atol : float, optional
        Tie tolerance (:mod:`app.domain.ranking`).

    Returns
    -------
    ndarray, shape (k_algorithms, k_algorithms)
        ``W[i, j]`` = number of problems where ``i`` has the smaller value, plus 1/2 per tie;
        ``W[i, j] + W[j, i] = N`` off the diagonal, 0 on the diagonal.

    Examples
    --------
    >>> pairwise_wins([[1.0, 2.0, 2.0], [3.0, 1.0, 2.0]]).tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.5], [1.0, 0.5, 0.0]]
    """
    a = _matrix_iv(values, min_problems=1)
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    n, k = ranks.shape
    wins = np.zeros((k, k))
    step = max(1, 2_000_000 // (k * k))
    for start in range(0, n, step):
        r = ranks[start : start + step]
        wins += (r[:, :, None] < r[:, None, :]).sum(axis=0)
        wins += 0.5 * (r[:, :, None] == r[:, None, :]).sum(axis=0)
    np.fill_diagonal(wins, 0.0)
    return wins


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class BradleyTerryResult:
    """Bradley–Terry strengths from pairwise wins.

    Attributes
    ----------
    strengths : ndarray, shape (k_algorithms,)
        ``θ``: the finite positive strengths have geometric mean 1; ``+inf`` above the fitted
        component, 0 below it (see :func:`bradley_terry`).
    probabilities : ndarray, shape (k_algorithms, k_algorithms)
        ``P(i ≻ j)``: ``θ_i / (θ_i + θ_j)`` within a component (each component fitted on its
        own comparisons), 1 or 0 between components by their dominance order, 0.5 on the
        diagonal. ``P[i, j] + P[j, i] = 1``.
    components : tuple of tuple of int
        Strongly connected components of the win graph (``i → j`` when ``W[i, j] > 0``),
        strongest first: each one beat every later one and never lost to one of them.
    iterations : int
        Newman iterations of the longest component fit.
    converged : bool
        Every component fit met ``tol`` within ``max_iter`` iterations.
    iteration : str
        ``"newman"``.
    zermelo_max_relative_difference : float
        Max ``|θ_newman − θ_zermelo| / θ_newman`` over the fitted components, Zermelo's
        classic iteration [15]_ run as an independent check (0 when nothing was fitted).
    degenerate : bool
        True when the win graph is not strongly connected (no finite maximum-likelihood
        estimate exists).
    reason : str or None
        What was done about it.
    """

    strengths: np.ndarray
    probabilities: np.ndarray
    components: tuple[tuple[int, ...], ...]
    iterations: int
    converged: bool
    iteration: str
    zermelo_max_relative_difference: float
    degenerate: bool
    reason: str | None


def _bradley_terry_iv(wins: ArrayLike, tol: float, max_iter: int) -> np.ndarray:
    try:
        w = np.array(wins, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput("wins must be a square numeric matrix", field="wins") from None
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise InvalidInput(f"wins must be a square matrix, got shape {w.shape}", field="wins")
    if w.shape[0] < 2:
        raise InvalidInput("at least 2 algorithms are needed", field="algorithms")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise InvalidInput("wins must be finite and >= 0", field="wins")
    if not (isinstance(tol, int | float | np.floating) and math.isfinite(tol) and tol > 0):
        raise InvalidInput(f"tol must be a finite number > 0, got {tol!r}", field="tol")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise InvalidInput(f"max_iter must be an integer >= 1, got {max_iter!r}", field="max_iter")
    np.fill_diagonal(w, 0.0)
    return w


def _geometric_normalize(pi: np.ndarray) -> np.ndarray:
    return pi / np.exp(np.mean(np.log(pi)))


def _newman(w: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, int, bool]:
    """Newman's iteration [14]_ on a strongly connected win matrix (geometric mean 1).

    Updated in place, one algorithm at a time: the simultaneous update can oscillate (with two
    algorithms it only swaps their values). One iteration is one sweep over all algorithms.
    """
    k = w.shape[0]
    pi = np.ones(k)
    wt = w.T
    for it in range(1, max_iter + 1):
        previous = pi.copy()
        for i in range(k):
            inv = 1.0 / (pi[i] + pi)
            pi[i] = np.dot(w[i], pi * inv) / np.dot(wt[i], inv)
        pi = _geometric_normalize(pi)
        if np.max(np.abs(pi - previous) / pi) < tol:
            return pi, it, True
    return pi, max_iter, False


def _zermelo(w: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Zermelo's MM iteration [15]_: ``π_i ← W_i / Σ_j n_ij / (π_i + π_j)``."""
    games = w + w.T
    won = w.sum(axis=1)
    pi = np.ones(w.shape[0])
    for _ in range(max_iter):
        new = _geometric_normalize(won / (games / (pi[:, None] + pi[None, :])).sum(axis=1))
        if np.max(np.abs(new - pi) / new) < tol:
            return new
        pi = new
    return pi


def _dominance_order(w: np.ndarray) -> list[np.ndarray]:
    """Strongly connected components of the win graph, strongest first.

    Raises NotApplicable unless the condensation is a total order (it always is when every pair
    was compared, as with :func:`pairwise_wins`).
    """
    n_comp, labels = connected_components(csr_matrix(w > 0), directed=True, connection="strong")
    beats = np.zeros((n_comp, n_comp), dtype=np.int64)
    rows, cols = np.nonzero(w > 0)
    beats[labels[rows], labels[cols]] = 1
    np.fill_diagonal(beats, 0)
    indegree = beats.sum(axis=0)
    alive = np.ones(n_comp, dtype=bool)
    order: list[np.ndarray] = []
    for _ in range(n_comp):
        sources = np.flatnonzero(alive & (indegree == 0))
        if sources.size != 1:
            raise NotApplicable(
                "the pairwise comparisons do not order the algorithms' groups: some groups "
                "were never compared, directly or through others, so their strengths are not "
                "on a common scale",
                field="wins",
            )
        c = int(sources[0])
        alive[c] = False
        indegree -= beats[c]
        order.append(np.flatnonzero(labels == c))
    return order


def _reference(order: list[np.ndarray]) -> int | None:
    """The component given finite strengths: the largest (first if tied), except a singleton
    that never loses (top) or never wins (bottom)."""
    m = len(order)
    candidates = [c for c in range(m) if not (m > 1 and order[c].size == 1 and c in (0, m - 1))]
    if not candidates:
        return None
    return max(candidates, key=lambda c: (order[c].size, -c))


def _degenerate_reason(order: list[np.ndarray], ref: int | None) -> str:
    m = len(order)
    parts = [
        f"the win graph is not strongly connected: {m} groups ordered by dominance "
        f"{[c.tolist() for c in order]}, each beating every later one without a loss to it, "
        "so no finite maximum-likelihood strengths exist"
    ]
    if order[0].size == 1:
        parts.append(f"algorithm {int(order[0][0])} never loses (strength +inf)")
    if order[-1].size == 1:
        parts.append(f"algorithm {int(order[-1][0])} never wins (strength 0)")
    if ref is None:
        parts.append("no finite strengths")
    else:
        parts.append(
            f"strengths are fitted within {order[ref].tolist()}; groups above it get +inf, "
            "groups below it 0; probabilities between groups are 1/0 by the order and within a "
            "group come from that group's own fit"
        )
    return "; ".join(parts)


def bradley_terry(
    wins: ArrayLike, *, tol: float = 1e-10, max_iter: int = 100_000
) -> BradleyTerryResult:
    """Bradley–Terry strengths by Newman's iteration, with Zermelo's as a check.

    Parameters
    ----------
    wins : array_like, shape (k, k)
        ``W[i, j]`` = (possibly fractional) wins of ``i`` over ``j``, finite and ``>= 0``
        (e.g. :func:`pairwise_wins`); the diagonal is ignored.
    tol : float, optional
        Stop when no strength changes by more than ``tol`` (relative) in an iteration.
    max_iter : int, optional
        Iteration cap per component (Newman, and separately the Zermelo check).

    Returns
    -------
    BradleyTerryResult

    Raises
    ------
    app.domain.errors.InvalidInput
        ``wins`` not square, negative or non-finite; bad ``tol``/``max_iter``.
    app.domain.errors.NotApplicable
        The comparisons do not order the strongly connected groups (possible only when some
        pairs were never compared): strengths of unrelated groups have no common scale.

    Notes
    -----
    ``P(i ≻ j) = θ_i / (θ_i + θ_j)``; the maximum-likelihood ``θ`` solves Newman's fixed point
    [14]_

    .. math:: θ_i ← \\frac{\\sum_j w_{ij} θ_j / (θ_i + θ_j)}{\\sum_j w_{ji} / (θ_i + θ_j)},

    renormalized to geometric mean 1 each step. A finite maximum exists iff the directed graph
    with an edge ``i → j`` whenever ``W[i, j] > 0`` is strongly connected (Ford [15]_). If it is
    not, its strongly connected components are totally ordered (when every pair was compared):
    every member of an earlier group beat (or tied) someone of each later group and nobody of
    a later group ever beat anyone of an earlier one, and the likelihood grows without bound
    as the groups move apart. The supremum is approached with ``P = 1`` from earlier to later
    groups and each group at its own within-group fit; that is what ``probabilities`` reports.
    ``strengths`` compresses it to one scale: one **reference** group keeps finite strengths
    (the largest group, the strongest among equally large ones, but never a single algorithm
    that never loses or never wins), groups above it get ``+inf`` and groups below it 0. So an
    algorithm that never wins has strength 0 and one that never loses ``+inf``. With two
    algorithms and a strict winner there is no finite strength at all.

    Examples
    --------
    >>> res = bradley_terry([[0, 2, 3], [1, 0, 3], [0, 0, 0]])  # algorithm 2 never wins
    >>> res.strengths.round(3).tolist(), res.components, res.degenerate
    ([1.414, 0.707, 0.0], ((0, 1), (2,)), True)
    """
    w = _bradley_terry_iv(wins, tol, max_iter)
    k = w.shape[0]
    order = _dominance_order(w)
    component = np.empty(k, dtype=np.intp)
    fitted = np.ones(k)
    iterations, converged, zermelo_diff = 0, True, 0.0
    for c, members in enumerate(order):
        component[members] = c
        if members.size < 2:
            continue
        sub = w[np.ix_(members, members)]
        pi, its, ok = _newman(sub, tol, max_iter)
        fitted[members] = pi
        iterations, converged = max(iterations, its), converged and ok
        check = _zermelo(sub, tol, max_iter)
        zermelo_diff = max(zermelo_diff, float(np.max(np.abs(pi - check) / pi)))
    ref = _reference(order)
    position = ref if ref is not None else 0.5  # no reference: the top group only is above
    strengths = np.where(component < position, math.inf, 0.0)
    if ref is not None:
        strengths[order[ref]] = fitted[order[ref]]
    same = component[:, None] == component[None, :]
    within = fitted[:, None] / (fitted[:, None] + fitted[None, :])
    probabilities = np.where(same, within, (component[:, None] < component[None, :]) * 1.0)
    np.fill_diagonal(probabilities, 0.5)
    degenerate = len(order) > 1
    return BradleyTerryResult(
        strengths=_frozen(strengths),
        probabilities=_frozen(probabilities),
        components=tuple(tuple(int(x) for x in c) for c in order),
        iterations=iterations,
        converged=converged,
        iteration="newman",
        zermelo_max_relative_difference=zermelo_diff,
        degenerate=degenerate,
        reason=_degenerate_reason(order, ref) if degenerate else None,
    )
