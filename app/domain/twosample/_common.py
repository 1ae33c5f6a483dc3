"""Shared pieces of the two-sample tests: alternatives, methods, input checks and the
exact-or-asymptotic choice."""

from __future__ import annotations

from fractions import Fraction
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.ranking import check_tolerances
from app.domain.stattools import (
    choice,
    sample,
)

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


def two_samples_iv(
    x: ArrayLike, y: ArrayLike, rtol: float, atol: float
) -> tuple[np.ndarray, np.ndarray]:
    xa, ya = sample(x, "x"), sample(y, "y")
    check_tolerances(rtol, atol)
    return xa, ya


def two_sample_test_iv(
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
    return two_samples_iv(x, y, rtol, atol)


class MethodChoice(NamedTuple):
    """The method a test runs and why (unpacks as ``method, reason``).

    Attributes
    ----------
    method : {"exact", "asymptotic"}
    reason : str
        ``"auto: cells=3.8e+07 <= limit 5e+07"``, ``"asymptotic requested"``, ...
    """

    method: str
    reason: str


class SizeCheck(NamedTuple):
    """Whether the exact method fits its limit (unpacks as ``fits, size``).

    Attributes
    ----------
    fits : bool
    size : str
        The cost against its limit, for messages (``"cells=3.8e+07 <= limit 5e+07"``).
    """

    fits: bool
    size: str


def choose(method: str, fits: bool, size: str, test: str) -> MethodChoice:
    """Method actually used and why; ``method="exact"`` beyond the limit is refused.

    ``size`` describes the problem size against its limit, e.g. ``"cells=3.8e+07 <= 5e+07"``.
    """
    if method == "asymptotic":
        return MethodChoice("asymptotic", "asymptotic requested")
    if method == "exact" and not fits:
        raise NotApplicable(
            f"exact {test} requested but {size} (beyond the exact limit); use method='auto' or "
            "'asymptotic'",
            field="method",
        )
    prefix = "exact requested" if method == "exact" else "auto"
    return MethodChoice("exact" if fits else "asymptotic", f"{prefix}: {size}")


def size_fits(what: str, cost: float, limit: float) -> SizeCheck:
    """``cost <= limit`` and the sentence that says it."""
    fits = cost <= limit
    return SizeCheck(fits, f"{what}={cost:.4g} {'<=' if fits else '>'} limit {limit:.4g}")


# --------------------------------------------------------------------------- rank-sum
