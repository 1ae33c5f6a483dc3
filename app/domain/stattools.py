"""Small helpers shared by the statistical tests: validation, clipping, lattice tails, normal tails.

One copy of each, so every test validates choices and samples, clips p-values and sums tails the
same way.

Logarithms of p-values
----------------------
Every p-value field ``p_*`` of a result has a companion ``log10_p_*`` computed without
underflow (docs/METHODS.md, "p-values and their logarithms"). The helpers here give it: the
float's own logarithm where the float is a normal number (:func:`log10_of`, relative accuracy
kept), and log-space tails below (:func:`normal_log10_p`, :func:`binomial_half_log10_cdf`,
:func:`log10_int_ratio`). ``log10_clip`` is the log-space counterpart of :func:`clip_p`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special  # ndtr only: scipy.stats costs ~0.7 s to import

from app.domain.errors import InvalidInput

__all__ = [
    "LOG10_TINY",
    "NormalP",
    "binomial_half_log10_cdf",
    "binomial_log_pmf",
    "choice",
    "clip_p",
    "is_normal_p",
    "lattice_p",
    "log10_clip",
    "log10_int_ratio",
    "log10_of",
    "normal_log10_p",
    "normal_p",
    "sample",
]

LOG10_TINY = math.log10(float(np.finfo(np.float64).tiny))
"""``log10`` of the smallest normal float (about −307.65): below it a float p-value has lost
relative accuracy (subnormal) or underflowed to 0, and its logarithm comes from log space."""

_LN10 = math.log(10.0)


def choice(value: object, choices: tuple[str, ...], field: str) -> str:
    """``value`` if it is one of ``choices``.

    Raises
    ------
    app.domain.errors.InvalidInput
        Otherwise, naming ``field``.
    """
    if not isinstance(value, str) or value not in choices:
        raise InvalidInput(f"{field} must be one of {list(choices)}, got {value!r}", field=field)
    return value


def sample(values: ArrayLike, field: str) -> np.ndarray:
    """A 1-D float array, non-empty, without NaN (``±inf`` allowed).

    Raises
    ------
    app.domain.errors.InvalidInput
        Not numbers, not 1-D, empty, or NaN present; naming ``field``.
    """
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{field} must be an array of numbers", field=field) from exc
    if a.ndim != 1:
        raise InvalidInput(f"{field} must be one-dimensional, got shape {a.shape}", field=field)
    if a.size == 0:
        raise InvalidInput(f"{field} is empty", field=field)
    if np.isnan(a).any():
        raise InvalidInput(
            f"{field} contains NaN; declare a missing-value policy instead of sending NaN",
            field=field,
        )
    return a


def clip_p(p: float) -> float:
    """``p`` clipped to [0, 1] as a Python float."""
    return float(min(1.0, max(0.0, p)))


def lattice_p(pmf: np.ndarray, k_obs: int, center2: int, alternative: str) -> float:
    """Tail probability of a distribution on the integer grid ``k = 0 .. pmf.size − 1``.

    ``"less"``: ``P(K <= k_obs)``; ``"greater"``: ``P(K >= k_obs)``; ``"two-sided"``:
    ``P(|2K − center2| >= |2 k_obs − center2|)`` where ``center2`` is twice the centre. Every
    comparison is between integers; tails are summed directly (never ``1 − cdf``).
    """
    if alternative == "less":
        return clip_p(pmf[: k_obs + 1].sum())
    if alternative == "greater":
        return clip_p(pmf[k_obs:].sum())
    dev = abs(2 * k_obs - center2)
    if dev == 0:
        return 1.0
    lo = (center2 - dev) // 2  # 2k <= center2 − dev
    hi = -((-(center2 + dev)) // 2)  # 2k >= center2 + dev
    lower = pmf[: lo + 1].sum() if lo >= 0 else 0.0
    upper = pmf[hi:].sum() if hi < pmf.size else 0.0
    return clip_p(lower + upper)


class NormalP(NamedTuple):
    """A normal approximation's p-value and z (unpacks as ``p, z``).

    Attributes
    ----------
    p : float
        The p-value, clipped to [0, 1].
    z : float
        The standardized statistic (continuity-corrected).
    """

    p: float
    z: float


def normal_p(dev: float, sd: float, cc: float, alternative: str) -> NormalP:
    """p-value and z of an approximately normal statistic ``mean + dev`` with sd ``sd``.

    ``cc`` is the continuity correction (0 for none).
    """
    if alternative == "greater":
        z = (dev - cc) / sd
        return NormalP(clip_p(special.ndtr(-z)), z)
    if alternative == "less":
        z = (dev + cc) / sd
        return NormalP(clip_p(special.ndtr(z)), z)
    z = math.copysign(max(abs(dev) - cc, 0.0), dev) / sd
    return NormalP(clip_p(2.0 * special.ndtr(-abs(z))), z)


def log10_clip(log10_p: float) -> float:
    """``log10_p`` clipped to ``[−inf, 0]`` as a Python float (:func:`clip_p` in log space)."""
    return float(min(0.0, log10_p))


def is_normal_p(p: float) -> bool:
    """Whether the float ``p`` is positive and normal (``log10 p >= LOG10_TINY``), so that
    ``log10(p)`` of the float itself is its logarithm; else callers compute it in log space."""
    return p > 0.0 and math.log10(p) >= LOG10_TINY


def log10_of(p: float) -> float:
    """``log10 p`` of a float p-value in ``[0, 1]``; ``−inf`` for 0.

    Callers use it only where ``p`` is a normal float (``log10 p >= LOG10_TINY``) or exactly 0
    by definition (a documented degenerate case), and take the log-space value otherwise.
    """
    return log10_clip(math.log10(p)) if p > 0.0 else -math.inf


def log10_int_ratio(numerator: int, denominator: int) -> float:
    """``log10(numerator / denominator)`` of exact positive integers, clipped to ``<= 0``.

    Exact-rational p-values (counts over ``C(n, m)``, ``Fraction`` results) keep their
    logarithm however small the ratio: ``math.log10`` takes ints of any size.
    """
    if numerator <= 0:
        return -math.inf
    ratio = numerator / denominator  # int true division: correctly rounded, 0.0 on underflow
    if is_normal_p(ratio):
        return log10_of(ratio)
    return log10_clip(math.log10(numerator) - math.log10(denominator))


def normal_log10_p(z: float, alternative: str) -> float:
    """``log10`` of the p-value :func:`normal_p` returned with this ``z``, from ``log Φ``.

    ``special.log_ndtr`` is accurate far into the tail (``z = −10^4`` gives ``−5·10^7``), so
    the logarithm never underflows where ``Φ`` does.
    """
    if alternative == "greater":
        log_p = special.log_ndtr(-z)
    elif alternative == "less":
        log_p = special.log_ndtr(z)
    else:
        log_p = math.log(2.0) + special.log_ndtr(-abs(z))
    return log10_clip(float(log_p) / _LN10)


def binomial_log_pmf(n: int, p: float) -> np.ndarray:
    """Natural log of the Binomial(n, p) point probabilities ``k = 0 .. n``, ``0 < p < 1``.

    From ``gammaln`` (absolute error about ``n log n · 1e-16``: ``1e-10`` at ``n = 10^5``), so
    point probabilities far below the float range keep their logarithm.
    """
    k = np.arange(n + 1, dtype=np.float64)
    log_comb = special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)
    out: NDArray[np.float64] = log_comb + k * math.log(p) + (n - k) * math.log1p(-p)
    return out


def binomial_half_log10_cdf(k: int, n: int) -> float:
    """``log10 P(K <= k)`` for ``K ~ Binomial(n, 1/2)``, by log-sum-exp of the point terms."""
    if k >= n:
        return 0.0
    if k < 0:
        return -math.inf
    log_pmf = binomial_log_pmf(n, 0.5)[: k + 1]
    return log10_clip(float(special.logsumexp(log_pmf)) / _LN10)
