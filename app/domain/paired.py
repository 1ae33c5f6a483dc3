"""Paired tests on differences ``d = x − y``: Wilcoxon signed-rank and the sign test.

Conventions (shared with :mod:`app.domain.twosample`): values are *minimized*, so a negative
difference means ``x`` was better on that block. ``alternative="less"`` is the hypothesis that
``x`` tends to be smaller (better) than ``y``, ``"greater"`` the reverse, ``"two-sided"`` either.

A difference is *zero* (a tie) when ``|d| <= zero_tol``, an absolute tolerance declared by the
caller (default 0: only exact equality). Two equal values, including two equal infinities, give a
zero difference. NaN is refused: the service applies its declared missing-value policy first.

Exact null distributions are conditional on the observed absolute differences (Wilcoxon) or on the
number of non-tied pairs (sign test): under H0 every non-zero difference is positive or negative
with probability 1/2, independently. Midranks are multiples of 1/2, so the Wilcoxon statistic is
handled in units of 1/2 (integers): comparisons of statistics are exact and float noise cannot
split a tie. Tail probabilities are sums of point probabilities taken directly on the tail (never
``1 − cdf``), so a p-value such as ``2/2^55`` is returned as such and not rounded to 0.

When nothing is left to test (every difference is zero), the p-value is 1 and the result is flagged
``degenerate`` with a reason: never an error, never NaN.

References
----------
.. [1] F. Wilcoxon. Individual comparisons by ranking methods. Biometrics Bulletin 1(6), 1945.
.. [2] J. W. Pratt. Remarks on zeros and ties in the Wilcoxon signed rank procedures. JASA 54,
       1959 (rank the zeros with the others, then drop them).
.. [3] W. J. Conover. On methods of handling ties in the Wilcoxon signed-rank test. JASA 68, 1973
       (the "zero-split" method).
.. [4] E. E. Cureton. The normal approximation to the signed-rank sampling distribution when zero
       differences are present. JASA 62, 1967.
.. [5] W. J. Dixon, A. M. Mood. The statistical sign test. JASA 41, 1946.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.exactfloat import INFINITE_UNITS, midranks_exact, units
from app.domain.stattools import (
    binomial_half_log10_cdf,
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
    "ALTERNATIVES",
    "METHODS",
    "WILCOXON_EXACT_MAX_N",
    "ZERO_METHODS",
    "SignTestResult",
    "WilcoxonResult",
    "sign_test",
    "wilcoxon_signed_rank",
]

ALTERNATIVES = ("two-sided", "less", "greater")
METHODS = ("auto", "exact", "asymptotic")
ZERO_METHODS = ("pratt", "wilcox", "zsplit")
#: Hard cap on ``exact_max_n``: point probabilities ``2^-n`` stay normal floats up to n = 1000.
WILCOXON_EXACT_MAX_N = 1000
_FINITE_LIMIT = 1 << 2100  # above |x − y| · 2^1074 for any finite x, y (< 2^1025 · 2^1074)


# --------------------------------------------------------------------------- shared validation


@dataclass(frozen=True)
class _Differences:
    """Exact signs and magnitudes of ``d = x − y``, in the integer units of ``exactfloat``.

    ``x − y`` in floats overflows (``1.7e308 − (−1.7e308)``) and rounds; a common scaling to
    avoid the overflow flushes subnormal differences to 0 (issue 13). Exact integers keep both:
    ``magnitude[i] = |x_i − y_i| · 2^1074`` (``INFINITE_UNITS`` for an infinite difference; two
    infinite differences tie, as two equal infinities do in floats).
    """

    sign: np.ndarray  # int8, shape (n,): −1, 0 or +1
    magnitude: list[int]

    @property
    def size(self) -> int:
        return int(self.sign.size)


def _differences(x: ArrayLike, y: ArrayLike | None) -> _Differences:
    """``d = x − y`` (or ``x`` itself) exactly; equal values (also equal infinities) give 0."""
    xa = sample(x, "x")
    if y is None:
        return _Differences(np.sign(xa).astype(np.int8), [abs(v) for v in units(xa)])
    ya = sample(y, "y")
    if ya.shape != xa.shape:
        raise InvalidInput(
            f"x and y must have the same length (paired), got {xa.size} and {ya.size}", field="y"
        )
    sign = np.sign(np.where(xa == ya, 0.0, np.where(xa > ya, 1.0, -1.0))).astype(np.int8)
    ux, uy = units(xa), units(ya)
    # A finite difference is below 2^2100 units; one with an infinite side is at least that.
    magnitude = [
        0 if s == 0 else abs(a - b) if abs(a - b) < _FINITE_LIMIT else INFINITE_UNITS
        for a, b, s in zip(ux, uy, sign.tolist(), strict=True)
    ]
    return _Differences(sign, magnitude)


def _zero_tol(zero_tol: float) -> float:
    try:
        tol = float(zero_tol)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("zero_tol must be a number", field="zero_tol") from exc
    if not (math.isfinite(tol) and tol >= 0.0):
        raise InvalidInput(f"zero_tol must be finite and >= 0, got {zero_tol!r}", field="zero_tol")
    return tol


# --------------------------------------------------------------------------- Wilcoxon


@dataclass(frozen=True)
class WilcoxonResult:
    """Wilcoxon signed-rank test of ``d = x − y``.

    Attributes
    ----------
    statistic : float
        ``W+``: sum of the (mid)ranks of ``|d|`` over the positive differences, plus half the ranks
        of the zeros for ``zero_method="zsplit"``. Large ``W+`` means ``x`` tends to be larger
        (worse under minimization).
    p_value : float
        In ``[0, 1]``, never NaN; 1 when degenerate.
    log10_p_value : float
        ``log10 p_value``, finite: exact p-values are at least ``2^-n`` (normal floats for
        ``n <= WILCOXON_EXACT_MAX_N``), the normal tail's comes from ``log Φ``.
    method : {"exact", "asymptotic"}
        Null distribution actually used.
    method_reason : str
        Why that method was used.
    alternative : {"two-sided", "less", "greater"}
        ``"less"``: ``x`` tends to be smaller (better) than ``y``.
    zero_method : {"pratt", "wilcox", "zsplit"}
        Treatment of zero differences (module docstring, [2]_, [3]_).
    zero_tol : float
        A difference is zero when ``|d| <= zero_tol``.
    n : int
        Number of pairs.
    n_zeros : int
        Number of zero differences.
    n_effective : int
        Number of non-zero differences (the sample size of the test).
    z : float or None
        Standardized statistic used for the normal approximation (with the declared continuity
        correction); ``None`` for the exact method.
    continuity : bool
        Whether a continuity correction of 1/2 was applied (asymptotic method only).
    degenerate : bool
        True when nothing is left to test (``n_effective == 0``).
    reason : str or None
        Why the result is degenerate.
    """

    statistic: float
    p_value: float
    log10_p_value: float
    method: str
    method_reason: str
    alternative: str
    zero_method: str
    zero_tol: float
    n: int
    n_zeros: int
    n_effective: int
    z: float | None
    continuity: bool
    degenerate: bool
    reason: str | None


@dataclass(frozen=True)
class _SignedRanks:
    """Integer scores ``2·rank`` of the non-zero differences and the observed statistic."""

    scores: np.ndarray  # int64, shape (n_effective,): 2 × midrank of |d_i|, d_i != 0
    t_obs: int  # sum of the scores of the positive differences
    shift: float  # W+ − t_obs/2: half the zero ranks for zsplit, else 0


def _signed_ranks(d: _Differences, zero_method: str, zero_tol: float) -> _SignedRanks:
    tol = units(np.array([zero_tol]))[0]  # exact: |d| <= zero_tol compared in integers
    zero = np.array([m <= tol for m in d.magnitude], dtype=bool)
    keys = [0 if z else m for m, z in zip(d.magnitude, zero.tolist(), strict=True)]
    if zero_method == "wilcox":
        ranks = np.zeros(d.size)
        ranks[~zero] = midranks_exact(
            [m for m, z in zip(keys, zero.tolist(), strict=True) if not z]
        )
    else:  # pratt, zsplit: the zeros take the lowest ranks, tied among themselves
        ranks = midranks_exact(keys)
    scores_all = np.rint(2.0 * ranks).astype(np.int64)
    shift = float(scores_all[zero].sum()) / 4.0 if zero_method == "zsplit" else 0.0
    return _SignedRanks(
        scores=scores_all[~zero], t_obs=int(scores_all[~zero & (d.sign > 0)].sum()), shift=shift
    )


def signed_rank_pmf(scores: np.ndarray) -> np.ndarray:
    """Null distribution of ``T = Σ_i s_i B_i``, ``B_i`` iid Bernoulli(1/2), ``s_i`` integers >= 1.

    Returns
    -------
    ndarray, shape (Σ s_i + 1,)
        ``pmf[k] = P(T = k)``.

    Notes
    -----
    Dynamic programming over the scores on the number of sign patterns with ``T = k``, kept as
    floats (at most ``2^n``, finite for ``n <= WILCOXON_EXACT_MAX_N``; counts below ``2^53`` are
    exact, so a tail of ``2^-n`` comes out exactly). Only ``k <= Σ s_i / 2`` is computed: the law is
    symmetric (``B_i ↔ 1 − B_i``) and the lower half depends on the lower half only. The counts are
    scaled by ``2^-n`` at the end.
    """
    s = np.sort(np.asarray(scores, dtype=np.int64))  # ascending: the active range grows slowly
    total = int(s.sum())
    half = total // 2
    counts = np.zeros(half + 1)
    counts[0] = 1.0
    top = 0
    for step in s.tolist():
        new_top = min(top + step, half)
        if step <= new_top:  # numpy copies overlapping operands: the right side is the old row
            counts[step : new_top + 1] += counts[: new_top + 1 - step]
        top = new_top
    pmf = np.empty(total + 1)
    pmf[: half + 1] = counts
    pmf[half + 1 :] = counts[total - np.arange(half + 1, total + 1)]
    out: NDArray[np.float64] = pmf * np.ldexp(1.0, -int(s.size))
    return out


def _wilcoxon_exact(
    sr: _SignedRanks, alternative: str, continuity: bool
) -> tuple[float, float | None]:
    pmf = signed_rank_pmf(sr.scores)
    return lattice_p(pmf, sr.t_obs, int(sr.scores.sum()), alternative), None


def _wilcoxon_asymptotic(
    sr: _SignedRanks, alternative: str, continuity: bool
) -> tuple[float, float | None]:
    # Exact moments of T = Σ r_i B_i: E = Σ r_i / 2, Var = Σ r_i² / 4 (r_i = s_i / 2). They
    # contain the tie correction and, for pratt, Cureton's zero correction [4].
    s = sr.scores.astype(np.float64)
    dev = (sr.t_obs - s.sum() / 2.0) / 2.0
    sd = math.sqrt(float(np.sum(s * s))) / 4.0
    return normal_p(dev, sd, 0.5 if continuity else 0.0, alternative)


_WILCOXON_METHODS: dict[str, Callable[[_SignedRanks, str, bool], tuple[float, float | None]]] = {
    "exact": _wilcoxon_exact,
    "asymptotic": _wilcoxon_asymptotic,
}


def _wilcoxon_choose_method(method: str, n_eff: int, exact_max_n: int) -> tuple[str, str]:
    if method == "asymptotic":
        return "asymptotic", "asymptotic requested"
    fits = n_eff <= exact_max_n
    if method == "exact" and not fits:
        raise NotApplicable(
            f"exact Wilcoxon distribution requested for n_effective={n_eff} nonzero "
            f"differences, beyond the exact limit of {exact_max_n}; use method='auto' or "
            "'asymptotic'",
            field="method",
        )
    if method == "exact":
        return "exact", f"exact requested (n_effective={n_eff} <= exact_max_n={exact_max_n})"
    if fits:
        return "exact", f"auto: n_effective={n_eff} <= exact_max_n={exact_max_n}"
    return "asymptotic", f"auto: n_effective={n_eff} > exact_max_n={exact_max_n}"


def _wilcoxon_signed_rank_iv(
    x: ArrayLike,
    y: ArrayLike | None,
    zero_method: str,
    zero_tol: float,
    alternative: str,
    method: str,
    exact_max_n: int,
) -> tuple[_Differences, float]:
    choice(zero_method, ZERO_METHODS, "zero_method")
    choice(alternative, ALTERNATIVES, "alternative")
    choice(method, METHODS, "method")
    if (
        isinstance(exact_max_n, bool)
        or not isinstance(exact_max_n, int | np.integer)
        or not 0 <= exact_max_n <= WILCOXON_EXACT_MAX_N
    ):
        raise InvalidInput(
            f"exact_max_n must be an integer in [0, {WILCOXON_EXACT_MAX_N}], got {exact_max_n!r}",
            field="exact_max_n",
        )
    return _differences(x, y), _zero_tol(zero_tol)


def wilcoxon_signed_rank(
    x: ArrayLike,
    y: ArrayLike | None = None,
    *,
    zero_method: str = "pratt",
    zero_tol: float = 0.0,
    alternative: str = "two-sided",
    method: str = "auto",
    exact_max_n: int = 400,
    continuity: bool = False,
) -> WilcoxonResult:
    """Wilcoxon signed-rank test of the paired differences ``d = x − y`` [1]_.

    Parameters
    ----------
    x : array_like, shape (n,)
        Values of algorithm A per block (problem), or the differences themselves if ``y`` is
        None. ``±inf`` allowed, NaN refused.
    y : array_like, shape (n,), optional
        Values of algorithm B on the same blocks.
    zero_method : {"pratt", "wilcox", "zsplit"}, optional
        ``"pratt"`` (default): rank the zeros with the others, then drop them [2]_;
        ``"wilcox"``: drop the zeros before ranking [1]_; ``"zsplit"``: rank the zeros and give
        half of their ranks to each side [3]_.
    zero_tol : float, optional
        Absolute tolerance: ``|d| <= zero_tol`` is a zero difference. Default 0.
    alternative : {"two-sided", "less", "greater"}, optional
        ``"less"``: ``x`` tends to be smaller (better under minimization) than ``y``.
    method : {"auto", "exact", "asymptotic"}, optional
        ``"auto"`` uses the exact distribution when ``n_effective <= exact_max_n``.
    exact_max_n : int, optional
        Largest ``n_effective`` for the exact distribution (at most
        :data:`WILCOXON_EXACT_MAX_N`); n = 400 takes about 0.02 s, n = 1000 about 0.5 s.
    continuity : bool, optional
        Continuity correction of 1/2 in the normal approximation (default False, as scipy).

    Returns
    -------
    WilcoxonResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Empty, non-1-D or NaN input; ``x`` and ``y`` of different lengths (field ``"y"``); an
        unknown option (field named).
    app.domain.errors.NotApplicable
        ``method="exact"`` with ``n_effective > exact_max_n``.

    Notes
    -----
    ``W+ = c + T/2`` with ``T = Σ s_i B_i`` over the non-zero differences, ``s_i = 2 r_i``
    (``r_i`` the midrank of ``|d_i|``, ``c`` half the zero ranks under zsplit, else 0); exact:
    the law of ``T`` under H0 (``B_i`` iid Bernoulli(1/2)) by dynamic programming, two-sided

    .. math:: p = P(|T − E T| >= |t − E T|);

    normal: the exact conditional moments (tie and Cureton's zero correction [4]_). Details and
    where scipy differs: docs/METHODS.md, "Per-test decisions", the Wilcoxon signed-rank item.

    Examples
    --------
    >>> res = wilcoxon_signed_rank([1.0, 2.0, 3.0, 4.0, 5.0], [0.0, 0.0, 0.0, 0.0, 0.0])
    >>> res.statistic, res.p_value, res.method
    (15.0, 0.0625, 'exact')
    """
    d, tol = _wilcoxon_signed_rank_iv(x, y, zero_method, zero_tol, alternative, method, exact_max_n)
    sr = _signed_ranks(d, zero_method, tol)
    n_eff = int(sr.scores.size)
    make = partial(
        WilcoxonResult,
        alternative=alternative,
        zero_method=zero_method,
        zero_tol=tol,
        n=int(d.size),
        n_zeros=int(d.size - n_eff),
        n_effective=n_eff,
        continuity=False,  # set below: only an asymptotic p uses the correction
    )
    if n_eff == 0:
        return make(
            statistic=sr.shift,
            p_value=1.0,
            log10_p_value=0.0,
            method="exact",
            method_reason="no non-zero difference: the null distribution is a single point",
            z=None,
            degenerate=True,
            reason=f"all {d.size} differences are zero (|d| <= zero_tol); nothing left to test",
        )
    used, why = _wilcoxon_choose_method(method, n_eff, int(exact_max_n))
    p, z = _WILCOXON_METHODS[used](sr, alternative, bool(continuity))
    return make(
        statistic=sr.shift + sr.t_obs / 2.0,
        p_value=p,
        log10_p_value=log10_of(p) if z is None else normal_log10_p(z, alternative),
        method=used,
        method_reason=why,
        z=None if z is None else float(z),
        degenerate=False,
        reason=None,
        continuity=bool(continuity) and used == "asymptotic",
    )


# --------------------------------------------------------------------------- sign test


@dataclass(frozen=True)
class SignTestResult:
    """Sign test of ``d = x − y`` [5]_.

    Attributes
    ----------
    statistic : int
        ``n_greater``, the number of positive differences (``x`` worse under minimization).
    p_value : float
        Exact binomial p-value in ``[0, 1]``; 1 when degenerate.
    log10_p_value : float
        ``log10 p_value``, finite: below the float range a log-sum-exp of the binomial point
        probabilities (:func:`app.domain.stattools.binomial_half_log10_cdf`).
    method : {"exact"}
        Always the exact Binomial(``n_effective``, 1/2) distribution.
    method_reason : str
        Why that method was used.
    alternative : {"two-sided", "less", "greater"}
        ``"less"``: ``x`` tends to be smaller (better) than ``y``.
    zero_tol : float
        A pair is tied when ``|d| <= zero_tol``; ties are dropped.
    n : int
        Number of pairs.
    n_less : int
        Pairs with ``x < y`` beyond the tolerance (``x`` better).
    n_greater : int
        Pairs with ``x > y`` beyond the tolerance (``y`` better).
    n_ties : int
        Dropped pairs.
    n_effective : int
        ``n_less + n_greater``.
    degenerate : bool
        True when every pair is tied.
    reason : str or None
        Why the result is degenerate.
    """

    statistic: int
    p_value: float
    log10_p_value: float
    method: str
    method_reason: str
    alternative: str
    zero_tol: float
    n: int
    n_less: int
    n_greater: int
    n_ties: int
    n_effective: int
    degenerate: bool
    reason: str | None


def _binomial_half_p(k: int, n: int, alternative: str) -> float:
    """Tail of Binomial(n, 1/2) at ``k``, summed on the tail side (scipy's cdf/sf are tails)."""
    if alternative == "less":
        return clip_p(stats.binom.cdf(k, n, 0.5))
    if alternative == "greater":
        return clip_p(stats.binom.sf(k - 1, n, 0.5))  # P(K >= k) = P(K > k − 1)
    # For p = 1/2 the pmf is symmetric, so {pmf <= pmf(k)} = {|2K − n| >= |2k − n|}.
    dev = abs(2 * k - n)
    if dev == 0:
        return 1.0
    lo, hi = (n - dev) // 2, (n + dev + 1) // 2
    return clip_p(stats.binom.cdf(lo, n, 0.5) + stats.binom.sf(hi - 1, n, 0.5))


def _binomial_half_log10_p(p: float, k: int, n: int, alternative: str) -> float:
    """``log10`` of :func:`_binomial_half_p` (given as ``p``); log space below the float range."""
    if is_normal_p(p):
        return log10_of(p)
    if alternative == "less":
        return binomial_half_log10_cdf(k, n)
    if alternative == "greater":
        return binomial_half_log10_cdf(n - k, n)  # P(K >= k) = P(K <= n − k) for p = 1/2
    lo = (n - abs(2 * k - n)) // 2  # the two tails are mirror images
    return log10_clip(math.log10(2.0) + binomial_half_log10_cdf(lo, n))


def _sign_test_iv(
    x: ArrayLike, y: ArrayLike | None, zero_tol: float, alternative: str
) -> tuple[_Differences, float]:
    choice(alternative, ALTERNATIVES, "alternative")
    return _differences(x, y), _zero_tol(zero_tol)


def sign_test(
    x: ArrayLike,
    y: ArrayLike | None = None,
    *,
    zero_tol: float = 0.0,
    alternative: str = "two-sided",
) -> SignTestResult:
    """Exact sign test of the paired differences ``d = x − y`` [5]_.

    Parameters
    ----------
    x : array_like, shape (n,)
        Values of algorithm A per block, or the differences if ``y`` is None (NaN refused).
    y : array_like, shape (n,), optional
        Values of algorithm B on the same blocks.
    zero_tol : float, optional
        Absolute tolerance: pairs with ``|d| <= zero_tol`` are ties, dropped and counted.
    alternative : {"two-sided", "less", "greater"}, optional
        ``"less"``: ``x`` tends to be smaller (better under minimization) than ``y``.

    Returns
    -------
    SignTestResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Empty, non-1-D or NaN input, ragged ``x``/``y`` (field ``"y"``), bad options.

    Notes
    -----
    With ``K ~ Binomial(n_effective, 1/2)`` the number of positive differences: ``"less"`` gives
    ``P(K <= n_greater)``, ``"greater"`` ``P(K >= n_greater)``, and two-sided the sum of the point
    probabilities not larger than that of the observation, which for ``p = 1/2`` is
    ``P(|2K − n| >= |2 n_greater − n|)`` (``= min(1, 2·min tail)``, as scipy.stats.binomtest).

    Examples
    --------
    >>> sign_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 6]).p_value
    0.0625
    """
    d, tol = _sign_test_iv(x, y, zero_tol, alternative)
    tol_units = units(np.array([tol]))[0]
    beyond = np.array([m > tol_units for m in d.magnitude], dtype=bool)
    n_less = int(np.count_nonzero(beyond & (d.sign < 0)))
    n_greater = int(np.count_nonzero(beyond & (d.sign > 0)))
    n_eff = n_less + n_greater
    degenerate = n_eff == 0
    p = 1.0 if degenerate else _binomial_half_p(n_greater, n_eff, alternative)
    return SignTestResult(
        statistic=n_greater,
        p_value=p,
        log10_p_value=0.0
        if degenerate
        else _binomial_half_log10_p(p, n_greater, n_eff, alternative),
        method="exact",
        method_reason=f"exact Binomial({n_eff}, 1/2) tail",
        alternative=alternative,
        zero_tol=tol,
        n=int(d.size),
        n_less=n_less,
        n_greater=n_greater,
        n_ties=int(d.size - n_eff),
        n_effective=n_eff,
        degenerate=degenerate,
        reason=(
            f"all {d.size} pairs are tied (|d| <= zero_tol); nothing left to test"
            if degenerate
            else None
        ),
    )
