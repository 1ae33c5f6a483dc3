"""Small helpers shared by the statistical tests: validation, clipping, lattice tails, normal tails.

One copy of each, so every test validates choices and samples, clips p-values and sums tails the
same way.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import special  # ndtr only: scipy.stats costs ~0.7 s to import

from app.domain.errors import InvalidInput

__all__ = ["choice", "clip_p", "lattice_p", "normal_p", "sample"]


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


def normal_p(dev: float, sd: float, cc: float, alternative: str) -> tuple[float, float]:
    """p-value and z of an approximately normal statistic ``mean + dev`` with sd ``sd``.

    ``cc`` is the continuity correction (0 for none).
    """
    if alternative == "greater":
        z = (dev - cc) / sd
        return clip_p(special.ndtr(-z)), z
    if alternative == "less":
        z = (dev + cc) / sd
        return clip_p(special.ndtr(z)), z
    z = math.copysign(max(abs(dev) - cc, 0.0), dev) / sd
    return clip_p(2.0 * special.ndtr(-abs(z))), z
