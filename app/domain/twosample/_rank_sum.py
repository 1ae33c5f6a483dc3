"""The Wilcoxon rank-sum / Mann–Whitney U test, exact with ties (midrank permutation law)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.domain.ranking import midranks, tie_sizes
from app.domain.stattools import (
    lattice_p,
    log10_of,
    normal_log10_p,
    normal_p,
)
from app.domain.twosample._common import choose, size_fits, two_sample_test_iv


@dataclass(frozen=True)
class RankSumResult:
    """Wilcoxon rank-sum / Mann–Whitney U test of ``x`` against ``y`` [1]_.

    Attributes
    ----------
    statistic : float
        ``U_x = R_x − n_x(n_x + 1)/2`` = #pairs with ``x > y`` + ½ #tied pairs; small ``U_x``
        means ``x`` tends to be smaller (better under minimization).
    p_value : float
        In ``[0, 1]``, never NaN; 1 when degenerate, except with ``method="asymptotic",
        tie_correction=False`` (scipy's ``ranksums``), whose ``z = 0`` gives 1 two-sided and 1/2
        one-sided.
    log10_p_value : float
        ``log10 p_value``, finite: an exact p-value is at least ``1/C(n_x + n_y, min(n_x,
        n_y))``, which the ``exact_max_cells`` limit keeps far above the float range; the normal
        tail's comes from ``log Φ``.
    method : {"exact", "asymptotic"}
        Null distribution actually used.
    method_reason : str
        Why that method was used.
    alternative : {"two-sided", "less", "greater"}
        ``"less"``: ``x`` tends to be smaller than ``y``; p = ``P(U <= U_x)``.
    n_x, n_y : int
        Sample sizes.
    rank_sum_x : float
        ``R_x``, sum of the pooled midranks of ``x``.
    a12 : float
        Vargha–Delaney ``A12 = U_x / (n_x n_y)`` = ``P(X > Y) + ½ P(X = Y)``; below 1/2 means
        ``x`` tends to be better under minimization.
    z : float or None
        Standardized statistic of the normal approximation (tie- and continuity-corrected);
        ``None`` for the exact method.
    continuity : bool
        Whether the continuity correction of 1/2 was applied (asymptotic method only).
    rtol, atol : float
        Tie tolerance used for the midranks.
    degenerate : bool
        True when every pooled value is tied.
    reason : str or None
        Why the result is degenerate.
    tie_correction : bool
        Whether the normal approximation's variance was corrected for ties (asymptotic method
        only); False with ``tie_correction=False``, scipy's ``ranksums`` [6]_.
    """

    statistic: float
    p_value: float
    log10_p_value: float
    method: str
    method_reason: str
    alternative: str
    n_x: int
    n_y: int
    rank_sum_x: float
    a12: float
    z: float | None
    continuity: bool
    rtol: float
    atol: float
    degenerate: bool
    reason: str | None
    tie_correction: bool = True


@dataclass(frozen=True)
class _Ranked:
    """Pooled midrank scores (``2·rank``, integers; ``x`` first) and the observed ``2U_x``."""

    scores: np.ndarray
    n_x: int
    n_y: int
    k_obs: int  # 2 U_x, an integer in [0, 2 n_x n_y]
    ties: np.ndarray  # tie-group sizes of the pooled sample
    tie_correction: bool = True  # asymptotic variance corrected for ties


def rank_sum_pmf(scores: np.ndarray, m: int) -> np.ndarray:
    """Law of the score sum of a uniformly random ``m``-subset of ``scores`` (integers >= 0).

    Returns
    -------
    ndarray, shape (s_max + 1,)
        ``pmf[s] = P(Σ_{i ∈ S} scores_i = s)`` for ``S`` uniform over the ``C(n, m)`` subsets;
        ``s_max`` is the sum of the ``m`` largest scores.

    Notes
    -----
    Dynamic programming over (items, chosen count, score sum) [2]_ with probabilities: item
    ``i + 1`` joins the subset with probability ``(m − j)/(n − i)`` given ``j`` chosen among the
    first ``i`` (sequential hypergeometric sampling), so no entry overflows.
    """
    s = np.sort(scores.astype(np.int64))
    n = s.size
    s_max = int(s[n - m :].sum())
    f = np.zeros((m + 1, s_max + 1))
    f[0, 0] = 1.0
    j = np.arange(m + 1)
    top = 0
    for i, v in enumerate(s.tolist()):
        p_in = np.minimum((m - j) / (n - i), 1.0)
        lim = min(top, s_max - v)  # sums beyond s_max cannot complete a subset of size m
        moved = f[:-1, : lim + 1] * p_in[:-1, None]
        f[:, : top + 1] *= (1.0 - p_in)[:, None]
        f[1:, v : v + lim + 1] += moved
        top = min(top + v, s_max)
    out: NDArray[np.float64] = f[m]
    return out


def _rank_sum_exact(r: _Ranked, alternative: str, continuity: bool) -> tuple[float, float | None]:
    n_x, n_y = r.n_x, r.n_y
    big = n_x * n_y
    m = min(n_x, n_y)  # build the law for the smaller sample: less work
    sub_pmf = rank_sum_pmf(r.scores, m)
    pmf = np.zeros(2 * big + 1)
    offset = m * (m + 1)  # 2 R_min: the smallest possible 2·rank sum of m items without ties
    part = sub_pmf[offset : offset + 2 * big + 1]
    pmf[: part.size] = part
    if m != n_x:  # we built the law of 2U_y; 2U_x = 2 n_x n_y − 2U_y
        pmf = pmf[::-1]
    return lattice_p(pmf, r.k_obs, 2 * big, alternative), None


def _rank_sum_asymptotic(
    r: _Ranked, alternative: str, continuity: bool
) -> tuple[float, float | None]:
    # Normal approximation with tie correction, as scipy.stats.mannwhitneyu [1]_.
    n_x, n_y = r.n_x, r.n_y
    n = n_x + n_y
    # without tie correction (scipy.stats.ranksums [6]_): Var = n_x n_y (n + 1)/12
    t = r.ties.astype(np.float64) if r.tie_correction else np.ones(1)
    tie_term = float(np.sum(t**3 - t))
    sd = math.sqrt(n_x * n_y / 12.0 * ((n + 1) - tie_term / (n * (n - 1))))
    dev = r.k_obs / 2.0 - n_x * n_y / 2.0
    return normal_p(dev, sd, 0.5 if continuity else 0.0, alternative)


_RANK_SUM_METHODS: dict[str, Callable[[_Ranked, str, bool], tuple[float, float | None]]] = {
    "exact": _rank_sum_exact,
    "asymptotic": _rank_sum_asymptotic,
}


def rank_sum(
    x: ArrayLike,
    y: ArrayLike,
    *,
    alternative: str = "two-sided",
    method: str = "auto",
    rtol: float = 0.0,
    atol: float = 0.0,
    exact_max_cells: float = 5e7,
    continuity: bool = True,
    tie_correction: bool = True,
) -> RankSumResult:
    """Wilcoxon rank-sum / Mann–Whitney U test, exact with ties when feasible [1]_, [2]_.

    Parameters
    ----------
    x : array_like, shape (n_x,)
        Runs of algorithm A (``±inf`` allowed, NaN refused).
    y : array_like, shape (n_y,)
        Runs of algorithm B.
    alternative : {"two-sided", "less", "greater"}, optional
        ``"less"``: ``x`` tends to be smaller (better under minimization), p = ``P(U <= U_x)``.
    method : {"auto", "exact", "asymptotic"}, optional
        ``"auto"`` is exact when the dynamic programme has at most ``exact_max_cells`` cells.
    rtol, atol : float, optional
        Tie tolerance for the pooled midranks (:mod:`app.domain.ranking`).
    exact_max_cells : float, optional
        Work limit ``n · (m + 1) · (S_max + 1)`` of the exact method, ``m = min(n_x, n_y)`` and
        ``S_max`` twice the largest rank sum of ``m`` items. The default admits 50 vs 50.
    continuity : bool, optional
        Continuity correction of 1/2 in the normal approximation (default True, as scipy).
    tie_correction : bool, optional
        Tie correction of the normal approximation's variance (default True, as scipy's
        ``mannwhitneyu``). ``method="asymptotic", continuity=False, tie_correction=False`` is
        scipy's ``ranksums`` [6]_ (the value Omran et al. print [7]_).

    Returns
    -------
    RankSumResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Empty, non-1-D or NaN sample (field ``"x"``/``"y"``), bad option (field named).
    app.domain.errors.NotApplicable
        ``method="exact"`` beyond ``exact_max_cells``.

    Notes
    -----
    The exact law of ``U_x`` is the permutation distribution of the midrank sum of ``x`` over all
    ``C(n, n_x)`` splits of the pooled sample, so it is exact with ties (scipy's ``"exact"``
    assumes no ties). The two-sided p-value is

    .. math:: p = P(|U − n_x n_y/2| >= |U_x − n_x n_y/2|),

    which is the scipy value ``min(1, 2·min tail)`` when there are no ties (the law is then
    symmetric) and never exceeds 1.

    Examples
    --------
    >>> res = rank_sum([1, 2, 3], [4, 5, 6], alternative="less")
    >>> res.statistic, round(res.p_value, 4), res.method
    (0.0, 0.05, 'exact')
    """
    xa, ya = two_sample_test_iv(
        x, y, alternative, method, rtol, atol, (exact_max_cells, "exact_max_cells")
    )
    pooled = np.concatenate([xa, ya])
    scores = np.rint(2.0 * midranks(pooled, rtol=rtol, atol=atol)).astype(np.int64)
    n_x, n_y = xa.size, ya.size
    r = _Ranked(
        scores=scores,
        n_x=n_x,
        n_y=n_y,
        k_obs=int(scores[:n_x].sum()) - n_x * (n_x + 1),
        ties=tie_sizes(pooled, rtol=rtol, atol=atol),
        tie_correction=bool(tie_correction),
    )
    u = r.k_obs / 2.0
    make = partial(
        RankSumResult,
        statistic=u,
        alternative=alternative,
        n_x=n_x,
        n_y=n_y,
        rank_sum_x=float(scores[:n_x].sum()) / 2.0,
        a12=r.k_obs / (2.0 * n_x * n_y),
        continuity=False,  # set below: only an asymptotic p uses the correction
        rtol=float(rtol),
        atol=float(atol),
    )
    untied_normal = method == "asymptotic" and not tie_correction
    if r.ties.size == 1 and not untied_normal:
        return make(
            p_value=1.0,
            log10_p_value=0.0,
            method="exact",
            method_reason="all values tied: the null distribution is a single point",
            z=None,
            degenerate=True,
            reason=f"all {n_x + n_y} pooled values are tied; nothing left to test",
            tie_correction=False,
        )
    m = min(n_x, n_y)
    cost = float(n_x + n_y) * (m + 1) * (np.sort(scores)[-m:].sum() + 1)
    fits, size = size_fits("cells", cost, float(exact_max_cells))
    used, why = choose(method, fits, size, "rank-sum distribution")
    p, z = _RANK_SUM_METHODS[used](r, alternative, bool(continuity))
    # every value tied: the uncorrected variance n_x n_y (n + 1)/12 stays positive, z = 0 (scipy)
    all_tied = r.ties.size == 1
    return make(
        p_value=p,
        log10_p_value=log10_of(p) if z is None else normal_log10_p(z, alternative),
        method=used,
        method_reason=why,
        z=None if z is None else float(z),
        degenerate=all_tied,
        reason=(
            f"all {n_x + n_y} pooled values are tied; the normal approximation without tie "
            "correction (scipy.stats.ranksums) still gives z = 0, so p is its value at z = 0, "
            "not the exact conditional p = 1"
            if all_tied
            else None
        ),
        tie_correction=bool(tie_correction) and used == "asymptotic",
        continuity=bool(continuity) and used == "asymptotic",
    )
