"""Exact arithmetic on float64 values as integers, for orders that rounding or overflow would break.

Every finite float64 is an integer multiple of ``2^-1074`` (the smallest subnormal), so
``x = U(x) · 2^-1074`` with an integer ``U(x)`` of at most 2,099 bits. Sums, differences and
integer multiples of such values are exact in these units (Python integers do not overflow), and
so are their comparisons. The rank tests use this where a float difference could overflow
(``1.7e308 − (−1.7e308)``), underflow, or round two different differences to one value:

- paired differences ``x − y`` (Wilcoxon, sign test): sign and magnitude order exactly;
- aligned values ``x_ij − mean_i`` (Friedman aligned ranks): ordered by ``k U_ij − Σ_j U_ij``;
- problem ranges ``max − min`` (Quade's weights).

A correctly rounded float of an exact value is obtained by one integer division
(:func:`to_float`), which Python rounds correctly (IEEE 754 round-half-even).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["INFINITE_UNITS", "UNIT_EXPONENT", "midranks_exact", "to_float", "units"]

#: ``x = units(x) · 2^-UNIT_EXPONENT`` for every finite float64.
UNIT_EXPONENT = 1074
#: Stand-in for ``+inf`` in units: larger than any difference of two finite floats (< 2^2100).
INFINITE_UNITS = 1 << 2200


def units(values: np.ndarray) -> list[int]:
    """Exact integer ``U(x) = x · 2^1074`` of each value (``±inf`` → ``±INFINITE_UNITS``).

    Parameters
    ----------
    values : ndarray of float64, any shape (flattened in C order); NaN must be refused before.

    Returns
    -------
    list of int
        One exact integer per value.

    Examples
    --------
    >>> units(np.array([5e-324, -1.0, 0.0])) == [1, -(1 << 1074), 0]
    True
    """
    a = np.asarray(values, dtype=np.float64).ravel()
    finite = np.isfinite(a)
    mantissa, exponent = np.frexp(np.where(finite, a, 0.0))  # a = m · 2^e, 0.5 <= |m| < 1
    m53 = np.ldexp(mantissa, 53).astype(np.int64).tolist()  # exact: 53 significant bits
    shift = (exponent.astype(np.int64) - 53 + UNIT_EXPONENT).tolist()
    out = [m << s if s >= 0 else m >> -s for m, s in zip(m53, shift, strict=True)]  # exact
    for i in np.flatnonzero(~finite).tolist():
        out[i] = INFINITE_UNITS if a[i] > 0 else -INFINITE_UNITS
    return out


def to_float(numerator: int, denominator: int = 1) -> float:
    """Correctly rounded ``numerator · 2^-1074 / denominator``; ``OverflowError`` beyond float64."""
    return numerator / (denominator << UNIT_EXPONENT)


def midranks_exact(keys: Sequence[int]) -> np.ndarray:
    """Midranks (1 = smallest, ties averaged) of exact integer keys.

    Examples
    --------
    >>> midranks_exact([3, 1, 3, 2]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    order = sorted(range(len(keys)), key=keys.__getitem__)
    ranks = np.empty(len(keys))
    start = 0
    while start < len(order):
        stop = start + 1
        while stop < len(order) and keys[order[stop]] == keys[order[start]]:
            stop += 1
        ranks[order[start:stop]] = (start + stop + 1) / 2.0  # mean of ranks start+1 .. stop
        start = stop
    return ranks
