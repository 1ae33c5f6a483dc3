"""Omnibus rank tests on a (problems, algorithms) matrix: Friedman, Iman–Davenport, aligned
ranks and Quade."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from app.domain.errors import NotApplicable
from app.domain.exactfloat import midranks_exact, to_float, units
from app.domain.ranking import check_tolerances, midranks, rank_rows
from app.domain.ranktests._common import (
    chi2_log10_sf,
    f_log10_sf,
    finite_matrix_iv,
    frozen,
    matrix_iv,
)
from app.domain.stattools import clip_p


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
    out: NDArray[np.int64] = np.rint(2.0 * ranks).astype(np.int64) - (k + 1)
    return out


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
    a = matrix_iv(values, min_problems=2)
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
        average_ranks=frozen(ranks.mean(axis=0)),
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
    a = finite_matrix_iv(values, "the aligned-ranks test")
    n, k = a.shape
    r = _aligned_ranks(a, rtol, atol)
    average = frozen(r.mean(axis=0))
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
    keys: list[int] = []
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
    a = finite_matrix_iv(values, "Quade's test")
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    n, k = ranks.shape
    weights = _range_ranks(a, rtol, atol)
    s4 = np.rint(2.0 * weights).astype(np.int64)[:, None] * _centred_twice(ranks)  # 4 S_ij
    a16 = sum((s4 * s4).sum(axis=1).tolist())  # 16 A
    b16n = sum(c * c for c in s4.sum(axis=0).tolist())  # 16 N B
    df = (k - 1, (k - 1) * (n - 1))
    average = frozen((weights[:, None] * ranks).sum(axis=0) / weights.sum())
    weights = frozen(weights)
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
