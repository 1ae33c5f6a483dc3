"""The exact median count as it was before issue 15 (the test oracle of the new counter).

Frozen copy of ``app/domain/permutation/_counts.py``'s configuration-pair counter: every pair of
an A- and a B-configuration of the middle order statistics is visited (``O(n^4)`` pairs for two
even groups), the splits of each pair are a product of binomials over the gaps, summed in
float64. Exact while every partial sum stays below ``2^53``; kept here unchanged so the new
counter (``app.domain.permutation._median``) can be compared with it on random inputs.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray

EXACT_BLOCK = 1 << 17


def reference_median_configuration_count(n_g: int, n_o: int) -> int:
    """Number of pooled-position configurations of the middle order statistics of a group."""
    return n_o + 1 if n_g % 2 else (n_o + 1) * (n_o + 2) // 2


def _median_marks(
    v: np.ndarray, n_g: int, n_o: int, *, group_is_a: bool
) -> tuple[list[np.ndarray], np.ndarray]:
    """Configurations of one group's middle order statistics and the group median of each.

    Parameters
    ----------
    v : ndarray, shape (n,)
        Sorted pooled sample.
    n_g, n_o : int
        Size of the group and of the other group.
    group_is_a : bool
        Whether the group is A (whose members the counts ``alpha`` below count).

    Returns
    -------
    keys : list of 1 or 2 ndarrays of int64, shape (m,)
        The marks of each configuration, in increasing position, packed as
        ``position << 32 | alpha << 1 | is_a`` with ``alpha`` the number of A's before the mark.
    median : ndarray, shape (m,)
        The group's median in each configuration.
    """
    k = (n_g - 1) // 2  # members of the group before its (lower) middle order statistic
    others = np.arange(n_o + 1, dtype=np.int64)  # members of the other group before it
    lo = k + others
    if n_g % 2:
        marks = [(lo, k)]
        median = v[lo]
    else:
        # between the two middle members only members of the other group: g of them
        reps = n_o + 1 - others
        lo = np.repeat(lo, reps)
        g = np.arange(lo.size, dtype=np.int64) - np.repeat(np.cumsum(reps) - reps, reps)
        hi = lo + 1 + g
        marks = [(lo, k), (hi, k + 1)]
        median = (v[lo] + v[hi]) / 2
    keys = []
    for pos, before in marks:
        alpha = before if group_is_a else pos - before
        keys.append((pos << 32) | (alpha << 1) | int(group_is_a))
    return keys, median


def _merge_marks(a: list[np.ndarray], b: list[np.ndarray]) -> list[np.ndarray]:
    """Merge two sorted lists (length 1 or 2) of broadcastable key arrays (a sorting network)."""
    if len(a) < len(b):
        a, b = b, a
    if len(b) == 1 and len(a) == 1:
        return [np.minimum(a[0], b[0]), np.maximum(a[0], b[0])]
    if len(b) == 1:
        c = b[0]
        lo, mid = np.minimum(a[0], c), np.maximum(a[0], c)
        return [lo, np.minimum(mid, a[1]), np.maximum(mid, a[1])]
    lo0, hi0 = np.minimum(a[0], b[0]), np.maximum(a[0], b[0])
    lo1, hi1 = np.minimum(a[1], b[1]), np.maximum(a[1], b[1])
    return [lo0, np.minimum(hi0, lo1), np.maximum(hi0, lo1), hi1]


def _binomial_table(n: int) -> np.ndarray:
    """Flattened, padded float64 Pascal table: ``C(m, j)`` at ``(m + 1)·(n + 3) + j + 1``.

    Row ``m = −1`` and columns ``j = −1``, ``j > m`` (up to ``n + 1``) hold 0, so an impossible
    gap (coincident marks, a negative or too large count of A's) contributes a factor 0.
    """
    width = n + 3
    table = np.zeros((n + 1, width))
    row = np.ones(1)
    for m in range(n):
        table[m + 1, 1 : m + 2] = row
        row = np.concatenate(([1.0], row[:-1] + row[1:], [1.0]))
    return table.ravel()


def _configuration_counts(
    keys: list[np.ndarray], n: int, n_a: int, table: np.ndarray
) -> np.ndarray:
    """Number of splits with the given sorted marks: a product of binomials over the gaps."""
    width = n + 3
    pos = [k >> 32 for k in keys]
    alpha = [(k >> 1) & 0x7FFFFFFF for k in keys]
    is_a = [k & 1 for k in keys]

    def gap(length: np.ndarray, a_count: np.ndarray) -> np.ndarray:
        out: NDArray[np.float64] = table[(length + 1) * width + np.clip(a_count, -1, n + 1) + 1]
        return out

    counts = gap(pos[0], alpha[0])
    for t in range(len(keys) - 1):
        counts = counts * gap(pos[t + 1] - pos[t] - 1, alpha[t + 1] - alpha[t] - is_a[t])
    out: NDArray[np.float64] = counts * gap(n - 1 - pos[-1], n_a - alpha[-1] - is_a[-1])
    return out


def reference_median_exact_count(
    v: np.ndarray, n_a: int, n_b: int, extreme: Callable[[np.ndarray], np.ndarray]
) -> tuple[float, float]:
    """Number of splits (float64) whose median difference ``extreme`` selects, and of all.

    Parameters
    ----------
    v : ndarray, shape (n_a + n_b,)
        Sorted pooled sample.
    n_a, n_b : int
        Group sizes.
    extreme : callable
        Maps an array of differences ``median_A − median_B`` to a boolean mask.

    Returns
    -------
    selected : float
        Sum of the counts of the selected configurations.
    total : float
        Sum of the counts of all configurations: ``C(n_a + n_b, n_a)`` up to rounding. The
        p-value is ``selected / total`` (exactly 1 when every split is selected).
    """
    n = n_a + n_b
    table = _binomial_table(n)
    keys_a, med_a = _median_marks(v, n_a, n_b, group_is_a=True)
    keys_b, med_b = _median_marks(v, n_b, n_a, group_is_a=False)
    keys_b = [k[None, :] for k in keys_b]
    rows = max(1, EXACT_BLOCK // med_b.size)
    selected = total = 0.0
    for i0 in range(0, med_a.size, rows):
        block = slice(i0, i0 + rows)
        merged = _merge_marks([k[block, None] for k in keys_a], keys_b)
        counts = _configuration_counts(merged, n, n_a, table)
        mask = extreme(med_a[block, None] - med_b[None, :])
        selected += float(np.sum(counts, where=mask))
        total += float(np.sum(counts))
    return selected, total
