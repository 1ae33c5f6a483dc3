"""Two independent samples: rank-sum (Mann–Whitney U), two-sample KS and Vargha–Delaney A12.

``x`` holds the runs of algorithm A and ``y`` those of algorithm B on one problem.
Values are *minimized*; ``alternative="less"`` is the hypothesis that ``x`` tends to be smaller
(better) than ``y``, ``"greater"`` the reverse. ``±inf`` is allowed (for example runtimes of runs
that never hit the target) and NaN refused.

Ties are decided once by :func:`app.domain.ranking.tie_labels` with the declared ``rtol``/``atol``
(default exact equality). The exact tests are *conditional on the tie structure* of the pooled
sample: under H0 all ``C(n, n_x)`` ways of labelling the sorted pooled values as ``x`` or ``y`` are
equally likely, and the exact p-value is the share of labellings whose statistic is at least as
extreme as the observed one. Statistics are compared as integers (twice the ``U`` statistic; the
KS distance times ``n_x n_y``), so float noise cannot split a tie. Tail probabilities are sums of
positive terms taken directly on the tail (never ``1 − cdf``).

Degenerate but valid data (every pooled value tied) give p = 1 with ``degenerate=True`` and a
reason: never an error, never NaN. The one exception is the rank-sum normal approximation without
tie correction (scipy's ``ranksums``), whose variance does not vanish under ties: it gives
``z = 0`` and its own p (1 two-sided, 1/2 one-sided), still flagged degenerate.

References
----------
.. [1] H. B. Mann, D. R. Whitney. On a test of whether one of two random variables is
       stochastically larger than the other. Ann. Math. Statist. 18, 1947.
.. [2] B. Streitberg, J. Röhmel. Exact distributions for permutation and rank tests: an
       introduction to some recently published algorithms. Statistical Software Newsletter 12,
       1986 (exact rank-sum distribution with ties by counting over (items, count, score sum)).
.. [3] G. Schröer, D. Trenkler. Exact and randomization distributions of Kolmogorov–Smirnov tests
       for two or three samples. Computational Statistics & Data Analysis 20, 1995 (ties: the
       constraint is checked only at the ends of tie blocks).
.. [4] J. L. Hodges. The significance probability of the Smirnov two-sample test. Arkiv för
       Matematik 3, 1958 (one-sided asymptotic approximation, as in scipy).
.. [5] A. Vargha, H. D. Delaney. A critique and improvement of the CL common language effect size
       statistics of McGraw and Wong. J. Educ. Behav. Stat. 25(2), 2000.
.. [6] SciPy, ``scipy.stats.ranksums``: the rank-sum statistic's normal approximation with
       variance ``n_x n_y (n + 1)/12``, no tie and no continuity correction.
.. [7] M. G. H. Omran et al. Permutation Tests for Metaheuristic Algorithms. Mathematics
       10(13):2219, 2022 (rank-sum p-values as scipy's ``ranksums`` prints them).
.. [8] SciPy, ``scipy.stats.ks_2samp(method="exact")``: the exact law of the statistic for
       samples without ties, used whatever the ties.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.ranking import check_tolerances, midranks, tie_labels, tie_sizes
from app.domain.stattools import (
    choice,
    clip_p,
    is_normal_p,
    lattice_p,
    log10_clip,
    log10_of,
    normal_log10_p,
    normal_p,
    sample,
)

__all__ = [
    "A12_THRESHOLDS",
    "ALTERNATIVES",
    "KS_EXACT_MAX_N",
    "KS_TIES",
    "METHODS",
    "A12Result",
    "KSResult",
    "RankSumResult",
    "ks_2samp",
    "rank_sum",
    "vargha_delaney_a12",
]

ALTERNATIVES = ("two-sided", "less", "greater")
METHODS = ("auto", "exact", "asymptotic")
#: Vargha–Delaney [5]_ thresholds on ``max(A12, 1 − A12)``: small, medium, large.
A12_THRESHOLDS = (
    ("small", Fraction(56, 100)),
    ("medium", Fraction(64, 100)),
    ("large", Fraction(71, 100)),
)
#: The exact KS walks the pooled sample one value at a time: at most this many values.
KS_EXACT_MAX_N = 20_000


# --------------------------------------------------------------------------- shared helpers


def _positive_limit(value: float, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise InvalidInput(f"{field} must be a number >= 0, got {value!r}", field=field)
    if not (value >= 0):  # also refuses NaN
        raise InvalidInput(f"{field} must be >= 0, got {value!r}", field=field)
    return float(value)


def _two_samples_iv(
    x: ArrayLike, y: ArrayLike, rtol: float, atol: float
) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = sample(x, "x"), sample(y, "y")
    check_tolerances(rtol, atol)
    return xa, ya


def _two_sample_test_iv(
    x: ArrayLike,
    y: ArrayLike,
    alternative: str,
    method: str,
    rtol: float,
    atol: float,
    limit: tuple[float, str],
) -> tuple[np.ndarray, np.ndarray]:
    """Validate the options shared by rank-sum and KS; ``limit`` is (value, field name)."""
    choice(alternative, ALTERNATIVES, "alternative")
    choice(method, METHODS, "method")
    _positive_limit(*limit)
    return _two_samples_iv(x, y, rtol, atol)


def _choose(method: str, fits: bool, size: str, test: str) -> tuple[str, str]:
    """Method actually used and why; ``method="exact"`` beyond the limit is refused.

    ``size`` describes the problem size against its limit, e.g. ``"cells=3.8e+07 <= 5e+07"``.
    """
    if method == "asymptotic":
        return "asymptotic", "asymptotic requested"
    if method == "exact" and not fits:
        raise NotApplicable(
            f"exact {test} requested but {size} (beyond the exact limit); use method='auto' or "
            "'asymptotic'",
            field="method",
        )
    prefix = "exact requested" if method == "exact" else "auto"
    return ("exact" if fits else "asymptotic"), f"{prefix}: {size}"


def _size(what: str, cost: float, limit: float) -> tuple[bool, str]:
    fits = cost <= limit
    return fits, f"{what}={cost:.4g} {'<=' if fits else '>'} limit {limit:.4g}"


# --------------------------------------------------------------------------- rank-sum


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


def _rank_sum_pmf(scores: np.ndarray, m: int) -> np.ndarray:
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
    return f[m]


def _rank_sum_exact(r: _Ranked, alternative: str, continuity: bool) -> tuple[float, float | None]:
    n_x, n_y = r.n_x, r.n_y
    big = n_x * n_y
    m = min(n_x, n_y)  # build the law for the smaller sample: less work
    sub_pmf = _rank_sum_pmf(r.scores, m)
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
    xa, ya = _two_sample_test_iv(
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
    common = {
        "statistic": u,
        "alternative": alternative,
        "n_x": n_x,
        "n_y": n_y,
        "rank_sum_x": float(scores[:n_x].sum()) / 2.0,
        "a12": r.k_obs / (2.0 * n_x * n_y),
        "continuity": False,  # set below: only an asymptotic p uses the correction
        "rtol": float(rtol),
        "atol": float(atol),
    }
    untied_normal = method == "asymptotic" and not tie_correction
    if r.ties.size == 1 and not untied_normal:
        return RankSumResult(
            p_value=1.0,
            log10_p_value=0.0,
            method="exact",
            method_reason="all values tied: the null distribution is a single point",
            z=None,
            degenerate=True,
            reason=f"all {n_x + n_y} pooled values are tied; nothing left to test",
            tie_correction=False,
            **common,
        )
    m = min(n_x, n_y)
    cost = float(n_x + n_y) * (m + 1) * (np.sort(scores)[-m:].sum() + 1)
    fits, size = _size("cells", cost, float(exact_max_cells))
    used, why = _choose(method, fits, size, "rank-sum distribution")
    p, z = _RANK_SUM_METHODS[used](r, alternative, bool(continuity))
    # every value tied: the uncorrected variance n_x n_y (n + 1)/12 stays positive, z = 0 (scipy)
    all_tied = r.ties.size == 1
    return RankSumResult(
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
        **(common | {"continuity": bool(continuity) and used == "asymptotic"}),
    )


# --------------------------------------------------------------------------- KS


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
class _KSPath:
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


def _ks_exact(path: _KSPath, alternative: str) -> float:
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


def _ks_exact_log10(path: _KSPath, alternative: str) -> float:
    """``log10`` of :func:`_ks_exact` by the same walk on log masses (``logaddexp``).

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
    xa, ya = _two_sample_test_iv(
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
    common = {
        "statistic": d,
        "d_plus": dp_num / (n_x * n_y),
        "d_minus": dm_num / (n_x * n_y),
        "alternative": alternative,
        "n_x": n_x,
        "n_y": n_y,
        "rtol": float(rtol),
        "atol": float(atol),
        "ties": ties,
    }
    if group_n.size == 1:
        return KSResult(
            p_value=1.0,
            log10_p_value=0.0,
            method="exact",
            method_reason="all values tied: the null distribution is a single point",
            degenerate=True,
            reason=f"all {n} pooled values are tied; nothing left to test",
            **common,
        )
    fits, size = _size("lattice points", float(n_x + 1) * (n_y + 1), float(exact_max_paths))
    if n > KS_EXACT_MAX_N:
        fits, size = False, f"n_x + n_y = {n} > KS_EXACT_MAX_N = {KS_EXACT_MAX_N}"
    used, why = _choose(method, fits, size, "KS test")
    ignored = used == "exact" and ties == "ignore" and group_n.size < n
    if used == "exact":
        is_end = np.zeros(n + 1, dtype=bool)
        is_end[k_end] = True
        if ties == "ignore":  # every position ends a block: the law of untied samples [8]_
            is_end[:] = True
            why += "; ties ignored in the null law (scipy's exact convention)"
        ks_path = _KSPath(is_end=is_end, n_x=n_x, n_y=n_y, d_num=d_num)
        p = _ks_exact(ks_path, alternative)
        log_p = log10_of(p) if is_normal_p(p) else _ks_exact_log10(ks_path, alternative)
    else:
        p = _ks_asymptotic(d, n_x, n_y, alternative)
        log_p = _ks_asymptotic_log10(p, d, n_x, n_y, alternative)
        why += "; scipy's asymptotic formula (no tie correction)"
    return KSResult(
        p_value=p,
        log10_p_value=log_p,
        method=used,
        method_reason=why,
        degenerate=False,
        reason=None,
        ties_ignored=ignored,
        **common,
    )


# --------------------------------------------------------------------------- A12


@dataclass(frozen=True)
class A12Result:
    """Vargha–Delaney effect size ``A12`` of ``x`` against ``y`` [5]_.

    Attributes
    ----------
    a12 : float
        ``P(X > Y) + ½ P(X = Y)`` over all ``n_x n_y`` pairs. Under MINIMIZATION, ``A12 < 0.5``
        means ``x`` (algorithm A) tends to be better (smaller); ``A12 > 0.5`` means ``y`` does.
    magnitude : {"negligible", "small", "medium", "large"}
        From ``max(A12, 1 − A12)`` with thresholds 0.56, 0.64, 0.71 [5]_.
    better : {"x", "y"} or None
        The sample that tends to be smaller (better), None when ``A12 = 0.5`` exactly.
    interpretation : str
        One sentence saying the above.
    n_x, n_y : int
        Sample sizes.
    rtol, atol : float
        Tie tolerance ("equal" pairs count ½).
    """

    a12: float
    magnitude: str
    better: str | None
    interpretation: str
    n_x: int
    n_y: int
    rtol: float
    atol: float


def _a12_magnitude(k: int, big: int) -> str:
    """Magnitude of ``A12 = k / (2·big)`` compared exactly (rationals) with the thresholds."""
    share = Fraction(max(k, 2 * big - k), 2 * big)
    label = "negligible"
    for name, threshold in A12_THRESHOLDS:
        if share >= threshold:
            label = name
    return label


def _vargha_delaney_a12_iv(
    x: ArrayLike, y: ArrayLike, rtol: float, atol: float
) -> tuple[np.ndarray, np.ndarray]:
    return _two_samples_iv(x, y, rtol, atol)


def vargha_delaney_a12(
    x: ArrayLike, y: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0
) -> A12Result:
    """Vargha–Delaney ``A12``: probability that a run of A is larger than one of B [5]_.

    Parameters
    ----------
    x : array_like, shape (n_x,)
        Runs of algorithm A (``±inf`` allowed, NaN refused).
    y : array_like, shape (n_y,)
        Runs of algorithm B.
    rtol, atol : float, optional
        Tie tolerance (:mod:`app.domain.ranking`); tied pairs count ½.

    Returns
    -------
    A12Result

    Raises
    ------
    app.domain.errors.InvalidInput
        Empty, non-1-D or NaN sample, bad tolerance.

    Notes
    -----
    .. math:: A_{12} = P(X > Y) + \\tfrac12 P(X = Y) = \\frac{R_x/n_x − (n_x + 1)/2}{n_y},

    with ``R_x`` the sum of the pooled midranks of ``x``. Under minimization ``A12 < 0.5`` means
    ``x`` tends to be better (smaller).

    Examples
    --------
    >>> res = vargha_delaney_a12([1, 2, 3], [2, 4, 6])
    >>> round(res.a12, 4), res.magnitude, res.better
    (0.1667, 'large', 'x')
    """
    xa, ya = _vargha_delaney_a12_iv(x, y, rtol, atol)
    n_x, n_y = xa.size, ya.size
    big = n_x * n_y
    scores = np.rint(2.0 * midranks(np.concatenate([xa, ya]), rtol=rtol, atol=atol))
    k = int(scores[:n_x].sum()) - n_x * (n_x + 1)  # 2 U_x = 2·big·A12
    a12 = k / (2.0 * big)
    magnitude = _a12_magnitude(k, big)
    better = None if k == big else ("x" if k < big else "y")
    if better is None:
        text = "neither sample tends to be smaller: A12 = 0.5"
    else:
        text = (
            f"{better} ({'A' if better == 'x' else 'B'}) tends to be smaller, i.e. better under "
            f"minimization: A12 = {a12:.4g} ({magnitude} effect)"
        )
    return A12Result(
        a12=a12,
        magnitude=magnitude,
        better=better,
        interpretation=text,
        n_x=n_x,
        n_y=n_y,
        rtol=float(rtol),
        atol=float(atol),
    )
