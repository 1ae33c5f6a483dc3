"""Fair comparison of optimization algorithms run on different machines.

A researcher compares a new algorithm B, run on machine M2, with published results of algorithm A
obtained on machine M1 [1]_. Two questions are answered here:

* **Equivalent runtime.** How long should B run on M2 to match A's budget ``t1`` on M1? The runtime
  model ``t ∝ (α − s)`` in the PassMark single-thread score ``s`` gives the unbiased estimate
  ``t1·(α − s2)/(α − s1)``; multiplying it by ``γ <= 1`` shortens it so that it is *longer* than the
  true equivalent runtime with probability ``p_γ`` only (calibration table of [1]_).
* **Corrected sign test.** With ``n`` paired results, the one-sided sign test of "B is better than
  A" is corrected for the chance ``p_γ`` that each equivalent runtime was over-estimated (which
  would favour B).

Only "B is better than A" can be concluded: a non-rejection is not evidence for A, nor for the two
algorithms performing alike.

References
----------
.. [1] E. Arza, J. Ceberio, E. Irurozki, A. Pérez. On the fair comparison of optimization
       algorithms in different machines. Annals of Applied Statistics 18(3), 2024.
       arXiv:2305.07345.
.. [2] W. J. Dixon, A. M. Mood. The statistical sign test. JASA 41, 1946.
"""

from __future__ import annotations

import math
import numbers
import operator
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from app.domain.errors import InvalidInput
from app.domain.machines_table import CALIBRATION_TABLE
from app.domain.stattools import (
    binomial_half_log10_cdf,
    binomial_log_pmf,
    clip_p,
    is_normal_p,
    log10_clip,
    log10_int_ratio,
    log10_of,
    sample,
)

__all__ = [
    "ALPHA",
    "CALIBRATION_RANGE",
    "EXACT_MAX_N",
    "GAMMA_RANGE",
    "P_GAMMA_RANGE",
    "CrossMachineSignResult",
    "EquivalentRuntimeResult",
    "GammaTable",
    "corrected_sign_test",
    "equivalent_runtime",
    "gamma_from_p",
    "gamma_table",
    "p_from_gamma",
]

#: ``α`` of the runtime model ``t ∝ (α − s)``, from the fit ``t ≈ −0.62280 s + 2008`` of [1]_.
ALPHA = 3223.49
#: PassMark single-thread scores of the 8 calibration machines of [1]_ (min, max).
CALIBRATION_RANGE = (539.0, 2185.0)
#: Largest ``n`` for which the corrected p-value is computed in rational arithmetic.
EXACT_MAX_N = 500

_GAMMA = np.array([row[0] for row in CALIBRATION_TABLE])
_P_GAMMA = np.array([row[1] for row in CALIBRATION_TABLE])
_GAMMA.flags.writeable = False
_P_GAMMA.flags.writeable = False

#: Valid ``p_γ`` for the runtime estimate: ``[p_γ of the last table row, 0.5]``.
P_GAMMA_RANGE = (float(_P_GAMMA[-1]), float(_P_GAMMA[0]))
#: Valid ``γ``: ``[γ of the last table row, 1]``.
GAMMA_RANGE = (float(_GAMMA[-1]), float(_GAMMA[0]))


# --------------------------------------------------------------------------- calibration table


class GammaTable(NamedTuple):
    """The calibration table of [1]_, as :func:`gamma_table` returns it.

    Attributes
    ----------
    gamma : ndarray, shape (150,)
        Multiplicative correction of the unbiased equivalent runtime, from 1 down to 0.5
        (strictly decreasing). Read-only.
    p_gamma : ndarray, shape (150,)
        Probability that the corrected estimate is longer than the true equivalent runtime, from
        0.5 down to ``P_GAMMA_RANGE[0]`` (non-increasing). Read-only.
    """

    gamma: np.ndarray
    p_gamma: np.ndarray


def gamma_table() -> GammaTable:
    """The embedded calibration table of [1]_: ``(gamma, p_gamma)``, see :class:`GammaTable`."""
    return GammaTable(_GAMMA, _P_GAMMA)


def _real(value: object, field: str) -> float:
    """``value`` as a finite float, else ``InvalidInput`` naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidInput(f"{field} must be a number, got {value!r}", field=field)
    x = float(value)
    if not math.isfinite(x):
        raise InvalidInput(f"{field} must be finite, got {value!r}", field=field)
    return x


def _p_gamma_iv(p_gamma: object) -> float:
    p = _real(p_gamma, "p_gamma")
    lo, hi = P_GAMMA_RANGE
    if not lo <= p <= hi:
        raise InvalidInput(
            f"p_gamma must be in [{lo!r}, {hi!r}] (range of the calibration table), got {p!r}",
            field="p_gamma",
        )
    return p


def gamma_from_p(p_gamma: float) -> float:
    """Correction ``γ`` for a tolerated over-estimation probability ``p_γ`` ([1]_'s table).

    Parameters
    ----------
    p_gamma : float
        Tolerated probability that the equivalent runtime is longer than the true one, in
        ``P_GAMMA_RANGE`` (inclusive).

    Returns
    -------
    float
        ``γ`` in ``GAMMA_RANGE``; 1 for ``p_γ = 0.5``.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``p_gamma`` not a finite number in ``P_GAMMA_RANGE`` (field ``"p_gamma"``).

    Notes
    -----
    The reference rule of the table: take the first row ``i`` with ``p >= p_γ[i]``; if ``i = 0``,
    ``γ = 1``; otherwise ``w1 = |p_γ[i−1] − p|``, ``w2 = |p_γ[i] − p|``, both divided by
    ``w1 + w2``, and ``γ = γ[i−1]·(1 − w1) + γ[i]·(1 − w2)``: linear interpolation in ``p``. On a
    flat stretch of ``p_γ`` the first row of the stretch wins.

    Examples
    --------
    >>> gamma_from_p(0.5)
    1.0
    >>> round(gamma_from_p(0.1), 6)
    0.717338
    """
    p = _p_gamma_iv(p_gamma)
    i = int(np.argmax(p >= _P_GAMMA))  # exists: p >= p_gamma[-1]
    if i == 0:
        return 1.0
    w1 = abs(float(_P_GAMMA[i - 1]) - p)
    w2 = abs(float(_P_GAMMA[i]) - p)
    total = w1 + w2  # > 0: p < p_gamma[i-1] since i is the first row with p >= p_gamma[i]
    w1, w2 = w1 / total, w2 / total
    return float(_GAMMA[i - 1]) * (1.0 - w1) + float(_GAMMA[i]) * (1.0 - w2)


def p_from_gamma(gamma: float) -> float:
    """Over-estimation probability ``p_γ`` of a correction ``γ``: the inverse of `gamma_from_p`.

    Parameters
    ----------
    gamma : float
        Correction in ``GAMMA_RANGE`` (inclusive).

    Returns
    -------
    float
        ``p_γ`` by linear interpolation of the table's ``p_γ`` on ``γ``.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``gamma`` not a finite number in ``GAMMA_RANGE`` (field ``"gamma"``).

    Notes
    -----
    ``p_from_gamma(gamma_from_p(p)) == p`` up to rounding for every valid ``p``. The reverse round
    trip holds only where ``p_γ`` is strictly decreasing: on the table's 5 flat stretches of
    ``p_γ`` several ``γ`` share one ``p_γ``, and `gamma_from_p` returns the largest of them.
    """
    g = _real(gamma, "gamma")
    lo, hi = GAMMA_RANGE
    if not lo <= g <= hi:
        raise InvalidInput(f"gamma must be in [{lo!r}, {hi!r}], got {g!r}", field="gamma")
    return float(np.interp(g, _GAMMA[::-1], _P_GAMMA[::-1]))


# --------------------------------------------------------------------------- equivalent runtime


@dataclass(frozen=True)
class EquivalentRuntimeResult:
    """Equivalent runtime on machine M2 of a runtime measured on machine M1.

    Attributes
    ----------
    t2 : float or ndarray, shape (n_runtimes,)
        ``t̂2 = γ·t1·(α − s2)/(α − s1)``, same units and shape as ``t1``.
    gamma : float
        Correction ``γ = gamma_from_p(p_gamma)``, in ``GAMMA_RANGE``.
    p_gamma : float
        Probability that ``t̂2`` is longer than the true equivalent runtime.
    alpha : float
        ``α`` of the runtime model (`ALPHA`).
    ratio : float
        ``(α − s2)/(α − s1)``: the unbiased speed ratio (``t̂2/t1`` for ``γ = 1``).
    s1, s2 : float
        PassMark single-thread scores of M1 and M2.
    warnings : tuple of str
        One message per score outside `CALIBRATION_RANGE` (extrapolation of the model).
    """

    t2: float | np.ndarray
    gamma: float
    p_gamma: float
    alpha: float
    ratio: float
    s1: float
    s2: float
    warnings: tuple[str, ...]


def _score_iv(score: object, field: str) -> float:
    s = _real(score, field)
    if not 0.0 < s < ALPHA:
        raise InvalidInput(
            f"{field} must be in (0, {ALPHA}) (the runtime model needs s < alpha), got {s!r}",
            field=field,
        )
    return s


def _runtimes_iv(t1: ArrayLike) -> np.ndarray:
    if np.ndim(t1) == 0:
        t = np.asarray([_real(t1, "t1")])
    else:
        t = sample(t1, "t1")
    bad = np.flatnonzero(~(np.isfinite(t) & (t > 0.0)))
    if bad.size:
        where = "t1" if np.ndim(t1) == 0 else f"t1[{bad[0]}]"
        raise InvalidInput(
            f"{where} must be finite and > 0, got {float(t[bad[0]])!r}",
            field="t1" if np.ndim(t1) == 0 else f"t1.{bad[0]}",
        )
    return t


def _equivalent_runtime_iv(
    t1: ArrayLike, s1: float, s2: float, p_gamma: float
) -> tuple[np.ndarray, float, float, float]:
    return _runtimes_iv(t1), _score_iv(s1, "s1"), _score_iv(s2, "s2"), _p_gamma_iv(p_gamma)


def equivalent_runtime(
    t1: ArrayLike, s1: float, s2: float, *, p_gamma: float = 0.5
) -> EquivalentRuntimeResult:
    r"""Runtime on machine M2 equivalent to the runtime ``t1`` on machine M1 ([1]_).

    Parameters
    ----------
    t1 : float or array_like, shape (n_runtimes,)
        Runtime(s) on M1, any time unit, each finite and > 0.
    s1, s2 : float
        PassMark single-thread scores of M1 and M2, in ``(0, ALPHA)``.
    p_gamma : float, optional
        Tolerated probability that the estimate is longer than the true equivalent runtime, in
        ``P_GAMMA_RANGE``. The default 0.5 gives ``γ = 1``, the unbiased estimate.

    Returns
    -------
    EquivalentRuntimeResult
        ``t2`` is a float for a scalar ``t1``, else an array of the same shape.

    Raises
    ------
    app.domain.errors.InvalidInput
        A runtime not finite and > 0 (field ``"t1"``, the message names the index), a score
        outside ``(0, ALPHA)`` (``"s1"``/``"s2"``), ``p_gamma`` outside ``P_GAMMA_RANGE``.

    Notes
    -----
    Runtime model of [1]_: ``t ∝ (α − s)``, fitted on 8 machines with scores in
    `CALIBRATION_RANGE`; scores outside it are accepted with a warning (extrapolation).

    .. math::

        \hat t_2 = \gamma \, t_1 \, \frac{\alpha - s_2}{\alpha - s_1}

    Examples
    --------
    >>> res = equivalent_runtime(15.0, 1540, 1643, p_gamma=0.1)
    >>> round(res.t2, 6)
    10.101738
    """
    t, s1f, s2f, p = _equivalent_runtime_iv(t1, s1, s2, p_gamma)
    gamma = gamma_from_p(p)
    ratio = (ALPHA - s2f) / (ALPHA - s1f)
    with np.errstate(over="ignore", under="ignore"):
        t2 = gamma * t * ratio  # [1]_: t̂2 = γ·t1·(α − s2)/(α − s1)
    bad = np.flatnonzero(~(np.isfinite(t2) & (t2 > 0.0)))
    if bad.size:
        where = "t1" if np.ndim(t1) == 0 else f"t1.{bad[0]}"
        raise InvalidInput(
            f"the equivalent runtime of {where} = {float(t[bad[0]])!r} is outside the float "
            "range (overflow or underflow); use a coarser time unit",
            field=where,
        )
    lo, hi = CALIBRATION_RANGE
    warnings = tuple(
        f"{name} = {s!r} is outside the calibration range [{lo:g}, {hi:g}] of the runtime "
        "model: the equivalent runtime is extrapolated"
        for name, s in (("s1", s1f), ("s2", s2f))
        if not lo <= s <= hi
    )
    return EquivalentRuntimeResult(
        t2=float(t2[0]) if np.ndim(t1) == 0 else t2,
        gamma=gamma,
        p_gamma=p,
        alpha=ALPHA,
        ratio=ratio,
        s1=s1f,
        s2=s2f,
        warnings=warnings,
    )


# --------------------------------------------------------------------------- corrected sign test

DECISION_BETTER = "B is significantly better than A"
DECISION_NONE = "no evidence that B is better"
CAVEAT = (
    "One-sided test: only 'B better than A' can be concluded; not rejecting says nothing about A "
    "outperforming B or about the two performing alike."
)


@dataclass(frozen=True)
class CrossMachineSignResult:
    """One-sided sign test of "B is better than A", corrected for over-estimated runtimes.

    Attributes
    ----------
    n : int
        Number of non-tied pairs (the sample size of the test).
    k : int
        Number of pairs where A is better (``a_i < b_i``, minimization). Small ``k`` favours B.
    n_ties : int
        Number of tied pairs removed (0 when ``n`` and ``k`` were given directly).
    p_value : float
        Plain sign-test p-value ``P(Bin(n, 1/2) <= k)`` [2]_; 1 when degenerate.
    p_value_corrected : float
        ``p̂_c = P(Y − X <= k)``, ``Y ~ Bin(n, 1/2)``, ``X ~ Bin(n, p_γ)`` independent [1]_;
        ``>= p_value``; 1 when degenerate.
    log10_p_value, log10_p_value_corrected : float
        ``log10`` of ``p_value`` and ``p_value_corrected``, finite: from the exact integers and
        fractions for ``n <= EXACT_MAX_N``, by log-sum-exp of binomial point probabilities
        beyond.
    p_gamma : float
        Probability that each equivalent runtime was longer than the true one.
    alpha : float
        Significance level.
    decision : str
        ``"B is significantly better than A"`` if ``p_value_corrected < alpha``, else
        ``"no evidence that B is better"``.
    caveat : str
        What a non-rejection does not mean.
    degenerate : bool
        True when every pair is a tie (``n = 0``).
    reason : str or None
        Why the result is degenerate.
    method : str
        ``"exact"``: the exact null distribution (rational arithmetic for ``n <= EXACT_MAX_N``,
        floating point beyond).
    """

    n: int
    k: int
    n_ties: int
    p_value: float
    p_value_corrected: float
    log10_p_value: float
    log10_p_value_corrected: float
    p_gamma: float
    alpha: float
    decision: str
    caveat: str
    degenerate: bool
    reason: str | None
    method: str


def _count_iv(value: object, field: str) -> int:
    if isinstance(value, bool):
        raise InvalidInput(f"{field} must be an integer, got {value!r}", field=field)
    try:
        return operator.index(value)  # type: ignore[arg-type]  # any object: TypeError is the check
    except TypeError as exc:
        raise InvalidInput(f"{field} must be an integer, got {value!r}", field=field) from exc


def _pairs_counts(a: ArrayLike, b: ArrayLike, rtol: float) -> tuple[int, int, int]:
    """``(n, k, n_ties)`` from paired results (minimization)."""
    aa = sample(a, "a")
    bb = sample(b, "b")
    if aa.shape != bb.shape:
        raise InvalidInput(
            f"a and b must have the same length (paired), got {aa.size} and {bb.size}", field="b"
        )
    finite = np.isfinite(aa) & np.isfinite(bb)
    with np.errstate(invalid="ignore"):
        # halved so that |a − b| cannot overflow; a tie needs finite values unless a == b
        close = np.abs(aa / 2.0 - bb / 2.0) <= (rtol / 2.0) * np.maximum(np.abs(aa), np.abs(bb))
    tie = (aa == bb) | (finite & close)
    n_ties = int(tie.sum())
    k = int((aa[~tie] < bb[~tie]).sum())
    return aa.size - n_ties, k, n_ties


def _corrected_sign_test_iv(
    a: ArrayLike | None,
    b: ArrayLike | None,
    n: object,
    k: object,
    p_gamma: object,
    rtol: object,
    alpha: object,
) -> tuple[int, int, int, Fraction, float]:
    """``(n, k, n_ties, p_gamma, alpha)``, validated."""
    p = _real(p_gamma, "p_gamma")
    if not 0.0 < p <= 0.5:
        raise InvalidInput(f"p_gamma must be in (0, 0.5], got {p!r}", field="p_gamma")
    p_exact = Fraction(p_gamma) if isinstance(p_gamma, Fraction) else Fraction(p)
    alpha_f = _real(alpha, "alpha")
    if not 0.0 < alpha_f < 1.0:
        raise InvalidInput(f"alpha must be in (0, 1), got {alpha_f!r}", field="alpha")
    tol = _real(rtol, "rtol")
    if tol < 0.0:
        raise InvalidInput(f"rtol must be >= 0, got {tol!r}", field="rtol")
    if a is not None or b is not None:
        if a is None or b is None:
            field = "a" if a is None else "b"
            raise InvalidInput("give both a and b (paired results)", field=field)
        if n is not None or k is not None:
            raise InvalidInput("give either a and b, or n and k, not both", field="n")
        return (*_pairs_counts(a, b, tol), p_exact, alpha_f)
    if n is None or k is None:
        raise InvalidInput("give either a and b, or n and k", field="n" if n is None else "k")
    ni, ki = _count_iv(n, "n"), _count_iv(k, "k")
    if ni < 1:
        raise InvalidInput(f"n must be >= 1, got {ni}", field="n")
    if not 0 <= ki <= ni:
        raise InvalidInput(f"k must be in [0, n] = [0, {ni}], got {ki}", field="k")
    return ni, ki, 0, p_exact, alpha_f


def _binomial_counts(n: int) -> tuple[list[int], list[int]]:
    """``C(n, y)`` and ``S(y) = Σ_{j<=y} C(n, j)`` for ``y = 0..n``, exact integers."""
    coef, cum = [0] * (n + 1), [0] * (n + 1)
    c, s = 1, 0
    for y in range(n + 1):
        coef[y] = c
        s += c
        cum[y] = s
        c = c * (n - y) // (y + 1)
    return coef, cum


def _corrected_p_exact(n: int, k: int, p_gamma: Fraction) -> Fraction:
    r"""``P(Y − X <= k)`` in rational arithmetic.

    .. math::

        \hat p_c = \frac{\sum_x C(n,x)\, a^x (d-a)^{n-x}\, S(\min(k+x, n))}{d^n\, 2^n},
        \quad p_\gamma = a/d,

    with ``S(y) = Σ_{j<=y} C(n, j)``, summed by Horner's rule in ``a`` and ``d − a`` [1]_.
    """
    coef, cum = _binomial_counts(n)
    a, d = p_gamma.numerator, p_gamma.denominator
    q = d - a
    acc, a_pow = 0, 1
    for x in range(n + 1):
        acc = acc * q + coef[x] * cum[min(k + x, n)] * a_pow
        a_pow *= a
    return Fraction(acc, d**n << n)


def _corrected_p_float(n: int, k: int, p_gamma: float) -> float:
    """``P(Y − X <= k) = Σ_x P(X = x)·P(Y <= k + x)`` in floating point, in O(n) memory.

    ``P(Y <= y)`` is scipy's binomial cdf (the regularized incomplete beta function, accurate in
    the lower tail), ``P(X = x)`` scipy's binomial pmf; the sum of positive terms uses
    ``math.fsum``. No ``1 − cdf`` anywhere: small tails keep their relative accuracy.
    """
    x = np.arange(n + 1)
    cdf_y = stats.binom.cdf(np.minimum(k + x, n), n, 0.5)
    pmf_x = stats.binom.pmf(x, n, p_gamma)
    return math.fsum((pmf_x * cdf_y).tolist())


def _corrected_log10_float(n: int, k: int, p_gamma: float) -> float:
    """``log10 P(Y − X <= k)`` by log-sum-exp: ``log P(X = x)`` plus ``log P(Y <= k + x)``,
    the latter a running ``logaddexp`` of the Binomial(n, 1/2) point terms (nothing underflows).
    """
    log_cdf_y = np.logaddexp.accumulate(binomial_log_pmf(n, 0.5))
    x = np.arange(n + 1)
    terms = binomial_log_pmf(n, p_gamma) + log_cdf_y[np.minimum(k + x, n)]
    return log10_clip(float(special.logsumexp(terms)) / math.log(10.0))


@dataclass(frozen=True)
class _PValue:
    """A p-value and its ``log10`` (computed without underflow)."""

    p: float
    log10_p: float


def _corrected_p(n: int, k: int, p_gamma: Fraction) -> _PValue:
    if k >= n:
        return _PValue(1.0, 0.0)
    if n <= EXACT_MAX_N:
        exact = _corrected_p_exact(n, k, p_gamma)
        return _PValue(clip_p(float(exact)), log10_int_ratio(exact.numerator, exact.denominator))
    p = clip_p(_corrected_p_float(n, k, float(p_gamma)))
    return _PValue(
        p, log10_of(p) if is_normal_p(p) else _corrected_log10_float(n, k, float(p_gamma))
    )


def _plain_p(n: int, k: int) -> _PValue:
    """``P(Bin(n, 1/2) <= k)`` [2]_: correctly rounded from exact integers up to
    ``EXACT_MAX_N``, scipy's binomial cdf above (exact integers cost O(n²) bits)."""
    if k >= n:
        return _PValue(1.0, 0.0)
    if n > EXACT_MAX_N:
        p = clip_p(float(stats.binom.cdf(k, n, 0.5)))
        return _PValue(p, log10_of(p) if is_normal_p(p) else binomial_half_log10_cdf(k, n))
    _, cum = _binomial_counts(n)
    return _PValue(clip_p(cum[k] / (1 << n)), log10_int_ratio(cum[k], 1 << n))


def corrected_sign_test(
    a: ArrayLike | None = None,
    b: ArrayLike | None = None,
    *,
    n: int | None = None,
    k: int | None = None,
    p_gamma: float,
    rtol: float = 0.0,
    alpha: float = 0.05,
) -> CrossMachineSignResult:
    r"""One-sided sign test of "B is better than A" across machines, corrected for ``p_γ`` ([1]_).

    Parameters
    ----------
    a : array_like, shape (n_instances,), optional
        Published results of algorithm A on machine M1 (minimization: smaller is better).
    b : array_like, shape (n_instances,), optional
        Results of algorithm B on machine M2, run for the equivalent runtimes
        (`equivalent_runtime`), paired with ``a``.
    n, k : int, optional
        Instead of ``a`` and ``b``: number of non-tied pairs (``n >= 1``) and number of them where
        A is better (``0 <= k <= n``).
    p_gamma : float
        Probability that each equivalent runtime was longer than the true one, in ``(0, 0.5]``
        (usually the value given to `equivalent_runtime`). A float is used exactly
        (``Fraction(p_gamma)``); a ``Fraction`` is accepted too.
    rtol : float, optional
        Pairs with ``|a_i − b_i| <= rtol·max(|a_i|, |b_i|)`` are ties and are removed; equal values
        (also equal infinities) are always ties. Default 0: exact equality only.
    alpha : float, optional
        Significance level in ``(0, 1)``.

    Returns
    -------
    CrossMachineSignResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Inconsistent inputs (``a``/``b`` and ``n``/``k`` mixed or missing, lengths differ, NaN),
        ``n``/``k`` out of range, ``p_gamma``, ``rtol`` or ``alpha`` out of range; the field is
        named.

    Notes
    -----
    With ``k = #{a_i < b_i}`` over the ``n`` non-tied pairs, the plain p-value is
    ``P(Bin(n, 1/2) <= k)`` [2]_; the corrected p-value of [1]_ is

    .. math::

        \hat p_c(k) = \sum_{v=0}^{n} \binom{n}{v} 2^{-n}
            \Bigl[1 - \sum_{l=0}^{v-k-1} \binom{n}{l} p_\gamma^l (1-p_\gamma)^{n-l}\Bigr]
            = P(Y - X \le k),

    ``Y ~ Bin(n, 1/2)``, ``X ~ Bin(n, p_γ)`` independent; exact in rational arithmetic for
    ``n <= EXACT_MAX_N``. Its properties and the floating-point path: docs/METHODS.md, "Fair
    comparison across machines".

    Examples
    --------
    >>> res = corrected_sign_test(n=20, k=3, p_gamma=0.1)
    >>> round(res.p_value, 7), round(res.p_value_corrected, 9)
    (0.0012884, 0.043596)
    >>> res.decision
    'B is significantly better than A'
    """
    nn, kk, n_ties, p_exact, alpha_f = _corrected_sign_test_iv(a, b, n, k, p_gamma, rtol, alpha)
    if nn == 0:
        plain = corrected = _PValue(1.0, 0.0)
        reason: str | None = (
            f"all {n_ties} pairs are ties (|a_i − b_i| <= rtol·max(|a_i|, |b_i|)); nothing is "
            "left to test"
        )
    else:
        plain = _plain_p(nn, kk)
        corr = _corrected_p(nn, kk, p_exact)
        corrected = _PValue(  # p̂_c >= p; guards rounding
            max(corr.p, plain.p), max(corr.log10_p, plain.log10_p)
        )
        reason = None
    return CrossMachineSignResult(
        n=nn,
        k=kk,
        n_ties=n_ties,
        p_value=plain.p,
        p_value_corrected=corrected.p,
        log10_p_value=plain.log10_p,
        log10_p_value_corrected=corrected.log10_p,
        p_gamma=float(p_exact),
        alpha=alpha_f,
        decision=DECISION_BETTER if corrected.p < alpha_f else DECISION_NONE,
        caveat=CAVEAT,
        degenerate=nn == 0,
        reason=reason,
        method="exact",
    )
