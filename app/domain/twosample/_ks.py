"""The two-sample Kolmogorov–Smirnov test: exact (conditional on ties, or ignoring them) or
asymptotic."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from app.domain.ranking import tie_labels
from app.domain.stattools import (
    choice,
    clip_p,
    is_normal_p,
    log10_clip,
    log10_of,
)
from app.domain.twosample._common import KS_EXACT_MAX_N, choose, size_fits, two_sample_test_iv


@dataclass(frozen=True)
class KSResult:
    """Two-sample Kolmogorov–Smirnov test of ``x`` against ``y``.

    Attributes
    ----------
    statistic : float
        ``D`` for two-sided (``max(d_plus, d_minus)``), ``d_plus`` for ``"less"``, ``d_minus``
        for ``"greater"``.
    d_plus : float
        ``max_t (F_x(t) − F_y(t))`` >= 0 (scipy's ``D+``): large when ``x`` tends to be smaller.
    d_minus : float
        ``max_t (F_y(t) − F_x(t))`` >= 0 (scipy's ``D−``): large when ``x`` tends to be larger.
    p_value : float
        ``P(D >= d_obs)`` under H0, in ``[0, 1]``, never NaN.
    log10_p_value : float
        ``log10 p_value``, finite: below the float range the exact lattice walk is repeated in
        log space, and the asymptotic two-sided tail is ``2 P(D_n^+ >= d)`` (Smirnov's
        finite-``n`` formula, by log-sum-exp), which is exact for ``d >= 1/2`` and off by a
        relative ``P(D_n^- >= d) < 1e-300`` below; at ``d = 1``, where that formula is 0, the
        permutation value ``2 / C(n_x + n_y, n_x)``.
    method : {"exact", "asymptotic"}
        Null distribution actually used; the exact one is conditional on the ties [3]_.
    method_reason : str
        Why that method was used.
    alternative : {"two-sided", "less", "greater"}
        ``"less"``: ``x`` tends to be smaller (``F_x > F_y`` somewhere); this is scipy's
        ``alternative="greater"``. ``"greater"`` is scipy's ``"less"``.
    n_x, n_y : int
        Sample sizes.
    rtol, atol : float
        Tie tolerance of the pooled sample.
    degenerate : bool
        True when every pooled value is tied.
    reason : str or None
        Why the result is degenerate.
    ties : {"conditional", "ignore"}
        The exact null law's treatment of ties (the ``ties`` option).
    ties_ignored : bool
        True when the exact p-value was computed as if the pooled values were distinct
        (``ties="ignore"``, scipy's exact method [8]_) although the pooled sample has ties: it
        is then not the exact p-value of the test (the conditional one is).
    """

    statistic: float
    d_plus: float
    d_minus: float
    p_value: float
    log10_p_value: float
    method: str
    method_reason: str
    alternative: str
    n_x: int
    n_y: int
    rtol: float
    atol: float
    degenerate: bool
    reason: str | None
    ties: str = "conditional"
    ties_ignored: bool = False


KS_TIES = ("conditional", "ignore")
"""The exact KS null law: conditional on the ties [3]_, or as if there were none (scipy [8]_)."""


@dataclass(frozen=True)
class KSPath:
    """Tie-block ends of the pooled sample and the observed distance, in units of 1/(n_x n_y)."""

    is_end: np.ndarray  # bool, shape (n + 1,): position k (values placed) ends a tie block
    n_x: int
    n_y: int
    d_num: int  # observed statistic × n_x n_y


_KS_GAPS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "less": np.positive,
    "greater": np.negative,
    "two-sided": np.abs,
}
"""``n_x n_y (F_x − F_y)`` → the distance each alternative compares with ``d``."""


def ks_exact(path: KSPath, alternative: str) -> float:
    """Share of the ``C(n, n_x)`` labellings whose statistic reaches ``d_num`` [3]_.

    Walks the pooled positions; ``mass[i]`` is the probability that the first ``k`` labels hold
    ``i`` x's and the path has not yet reached the rejection region at a tie-block end. Mass that
    reaches it is absorbed into the p-value (a direct sum, no complement).
    """
    n_x, n_y, d = path.n_x, path.n_y, path.d_num
    n = n_x + n_y
    i = np.arange(n_x + 1)
    mass = np.zeros(n_x + 1)
    mass[0] = 1.0
    p = 0.0
    for k in range(n):
        p_x = np.minimum((n_x - i) / (n - k), 1.0)
        moved = mass[:-1] * p_x[:-1]
        mass *= 1.0 - p_x
        mass[1:] += moved
        if path.is_end[k + 1]:
            # n_x n_y (F_x − F_y) at (i, j = k + 1 − i), as the alternative compares it
            hit = _KS_GAPS[alternative](i * n_y - (k + 1 - i) * n_x) >= d
            p += float(mass[hit].sum())
            mass[hit] = 0.0
    return clip_p(p)


def ks_exact_log10(path: KSPath, alternative: str) -> float:
    """``log10`` of :func:`ks_exact` by the same walk on log masses (``logaddexp``).

    The move probabilities are ratios of counts, ``(n_x − i)/(n − k)`` and ``(n_y − j)/(n − k)``,
    so their logarithms are slices of one table of ``log t`` (``−inf`` for ``t <= 0``).
    """
    n_x, n_y, d = path.n_x, path.n_y, path.d_num
    n = n_x + n_y
    with np.errstate(divide="ignore"):  # log 0 = −inf: impossible moves
        log_t = np.log(np.maximum(np.arange(-n, n + 1, dtype=np.float64), 0.0))  # log_t[n + t]
    log_x_left = log_t[n + n_x : n - 1 : -1]  # log(n_x − i), i = 0..n_x
    i_n = np.arange(n_x + 1) * n  # n_x n_y (F_x − F_y) = i n − (k + 1) n_x at j = k + 1 − i
    log_mass = np.full(n_x + 1, -np.inf)
    log_mass[0] = 0.0
    log_p = -math.inf
    for k in range(n):
        log_total = log_t[n + n - k]
        moved = log_mass[:-1] + log_x_left[:-1]  # i → i + 1 with probability (n_x − i)/(n − k)
        log_mass += log_t[n + n_y - k : n + n_y - k + n_x + 1]  # (n_y − j)/(n − k): j stays
        np.logaddexp(log_mass[1:], moved, out=log_mass[1:])
        log_mass -= log_total
        if path.is_end[k + 1]:
            hit = _KS_GAPS[alternative](i_n - (k + 1) * n_x) >= d
            if hit.any():
                top = float(log_mass[hit].max())
                if top > -math.inf:
                    absorbed = top + math.log(float(np.exp(log_mass[hit] - top).sum()))
                    log_p = float(np.logaddexp(log_p, absorbed))
                log_mass[hit] = -np.inf
    return log10_clip(log_p / math.log(10.0))


def _smirnov_log10_sf(n: int, d: float) -> float:
    """``log10 P(D_n^+ >= d)`` of the one-sample statistic, ``0 < d <= 1`` (Smirnov;
    Birnbaum–Tingey): ``d Σ_{j <= n(1 − d)} C(n, j) (1 − d − j/n)^{n−j} (d + j/n)^{j−1}``,
    every term positive, summed by log-sum-exp."""
    j = np.arange(math.floor(n * (1.0 - d)) + 1, dtype=np.float64)
    rest = 1.0 - d - j / n
    keep = rest > 0.0
    j, rest = j[keep], rest[keep]
    log_terms = (
        special.gammaln(n + 1.0)
        - special.gammaln(j + 1.0)
        - special.gammaln(n - j + 1.0)
        + (n - j) * np.log(rest)
        + (j - 1.0) * np.log(d + j / n)
    )
    if d >= 1.0 or log_terms.size == 0:
        return log10_clip(n * math.log10(1.0 - d)) if d < 1.0 else -math.inf
    return log10_clip((math.log(d) + float(special.logsumexp(log_terms))) / math.log(10.0))


def _ks_asymptotic_log10(p: float, d: float, n_x: int, n_y: int, alternative: str) -> float:
    """``log10`` of :func:`_ks_asymptotic` (given as ``p``) without underflow."""
    if is_normal_p(p):
        return log10_of(p)
    m, n = sorted([float(n_x), float(n_y)], reverse=True)
    en = m * n / (m + n)
    if alternative == "two-sided" and d >= 1.0:
        # kstwo gives exactly 0 at D = 1; the best honest value is the permutation one,
        # 2 / C(n_x + n_y, n_x) (ties ignored, as the asymptotic formula ignores them)
        log_comb = special.gammaln(n_x + n_y + 1.0) - special.gammaln(n_x + 1.0)
        log_comb -= special.gammaln(n_y + 1.0)
        return log10_clip(math.log10(2.0) - float(log_comb) / math.log(10.0))
    if alternative == "two-sided":
        return log10_clip(math.log10(2.0) + _smirnov_log10_sf(round(en), d))
    z = math.sqrt(en) * d
    exponent = -2 * z**2 - 2 * z * (m + 2 * n) / math.sqrt(m * n * (m + n)) / 3.0
    return log10_clip(exponent / math.log(10.0))


def _ks_asymptotic(d: float, n_x: int, n_y: int, alternative: str) -> float:
    # scipy.stats.ks_2samp's asymptotic branch (no tie correction).
    m, n = sorted([float(n_x), float(n_y)], reverse=True)
    en = m * n / (m + n)
    if alternative == "two-sided":
        return clip_p(stats.kstwo.sf(d, round(en)))
    z = math.sqrt(en) * d
    return clip_p(math.exp(-2 * z**2 - 2 * z * (m + 2 * n) / math.sqrt(m * n * (m + n)) / 3.0))


def ks_2samp(
    x: ArrayLike,
    y: ArrayLike,
    *,
    alternative: str = "two-sided",
    method: str = "auto",
    rtol: float = 0.0,
    atol: float = 0.0,
    exact_max_paths: float = 1e7,
    ties: str = "conditional",
) -> KSResult:
    """Two-sample Kolmogorov–Smirnov test, exact with ties when feasible [3]_.

    Parameters
    ----------
    x : array_like, shape (n_x,)
        Runs of algorithm A (``±inf`` allowed, NaN refused).
    y : array_like, shape (n_y,)
        Runs of algorithm B.
    alternative : {"two-sided", "less", "greater"}, optional
        ``"less"``: ``x`` tends to be smaller, statistic ``d_plus`` (scipy's ``"greater"``);
        ``"greater"``: statistic ``d_minus`` (scipy's ``"less"``).
    method : {"auto", "exact", "asymptotic"}, optional
        ``"auto"`` is exact when the lattice has at most ``exact_max_paths`` points and
        ``n_x + n_y <= KS_EXACT_MAX_N``.
    rtol, atol : float, optional
        Tie tolerance of the pooled sample (:mod:`app.domain.ranking`).
    exact_max_paths : float, optional
        Limit on the lattice size ``(n_x + 1)(n_y + 1)`` of the exact method.
    ties : {"conditional", "ignore"}, optional
        ``"conditional"`` (default): the exact null law is conditional on the tie blocks [3]_.
        ``"ignore"``: the statistic is the same, but its exact law treats the pooled values as
        distinct (the constraint checked at every lattice point), as scipy's
        ``ks_2samp(method="exact")`` [8]_; with ties this is not the exact p-value, and
        ``ties_ignored`` says so.

    Returns
    -------
    KSResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Empty, non-1-D or NaN sample (field ``"x"``/``"y"``), bad option (field named).
    app.domain.errors.NotApplicable
        ``method="exact"`` beyond the limits.

    Notes
    -----
    The ECDFs are compared at the ends of the tie blocks of the pooled sorted sample. The exact
    p-value counts the lattice paths from ``(0, 0)`` to ``(n_x, n_y)`` (one step per pooled value,
    right for ``x``, up for ``y``) that reach ``|i/n_x − j/n_y| >= D`` at some tie-block end [3]_,
    divided by ``C(n, n_x)``: the p-value of the permutation test conditional on the ties. Without
    ties it equals scipy's exact p-value. The asymptotic method is scipy's (``kstwo`` with
    ``round(n_x n_y/(n_x + n_y))`` for two-sided, Hodges [4]_ for one-sided), which ignores ties.

    Examples
    --------
    >>> res = ks_2samp([1, 2], [3, 4, 5, 6])
    >>> res.statistic, round(res.p_value * 15, 10)
    (1.0, 2.0)
    """
    xa, ya = two_sample_test_iv(
        x, y, alternative, method, rtol, atol, (exact_max_paths, "exact_max_paths")
    )
    choice(ties, KS_TIES, "ties")
    n_x, n_y = xa.size, ya.size
    n = n_x + n_y
    order, labels = tie_labels(np.concatenate([xa, ya]), rtol=rtol, atol=atol)
    in_x = (order < n_x).astype(np.int64)
    group_x = np.bincount(labels, weights=in_x).astype(np.int64)
    group_n = np.bincount(labels)
    i_end, k_end = np.cumsum(group_x), np.cumsum(group_n)
    gap = i_end * n_y - (k_end - i_end) * n_x  # n_x n_y (F_x − F_y) at the block ends
    dp_num, dm_num = max(int(gap.max()), 0), max(int(-gap.min()), 0)
    d_num = {"two-sided": max(dp_num, dm_num), "less": dp_num, "greater": dm_num}[alternative]
    d = d_num / (n_x * n_y)
    make = partial(
        KSResult,
        statistic=d,
        d_plus=dp_num / (n_x * n_y),
        d_minus=dm_num / (n_x * n_y),
        alternative=alternative,
        n_x=n_x,
        n_y=n_y,
        rtol=float(rtol),
        atol=float(atol),
        ties=ties,
    )
    if group_n.size == 1:
        return make(
            p_value=1.0,
            log10_p_value=0.0,
            method="exact",
            method_reason="all values tied: the null distribution is a single point",
            degenerate=True,
            reason=f"all {n} pooled values are tied; nothing left to test",
        )
    fits, size = size_fits("lattice points", float(n_x + 1) * (n_y + 1), float(exact_max_paths))
    if n > KS_EXACT_MAX_N:
        fits, size = False, f"n_x + n_y = {n} > KS_EXACT_MAX_N = {KS_EXACT_MAX_N}"
    used, why = choose(method, fits, size, "KS test")
    ignored = used == "exact" and ties == "ignore" and group_n.size < n
    if used == "exact":
        is_end = np.zeros(n + 1, dtype=bool)
        is_end[k_end] = True
        if ties == "ignore":  # every position ends a block: the law of untied samples [8]_
            is_end[:] = True
            why += "; ties ignored in the null law (scipy's exact convention)"
        ks_path = KSPath(is_end=is_end, n_x=n_x, n_y=n_y, d_num=d_num)
        p = ks_exact(ks_path, alternative)
        log_p = log10_of(p) if is_normal_p(p) else ks_exact_log10(ks_path, alternative)
    else:
        p = _ks_asymptotic(d, n_x, n_y, alternative)
        log_p = _ks_asymptotic_log10(p, d, n_x, n_y, alternative)
        why += "; scipy's asymptotic formula (no tie correction)"
    return make(
        p_value=p,
        log10_p_value=log_p,
        method=used,
        method_reason=why,
        degenerate=False,
        reason=None,
        ties_ignored=ignored,
    )
