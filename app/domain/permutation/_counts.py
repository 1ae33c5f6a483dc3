"""Exact counts of extreme splits (median by the middle order statistics, mean by subset
sums) and the Monte Carlo null draws."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from app.domain.permutation._problem import EXACT_BLOCK, Problem

# --------------------------------------------------------------------------------------------


def median_configuration_count(n_g: int, n_o: int) -> int:
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


def median_exact_count(
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


# --------------------------------------------------------------------------------------------
# Exact mean: enumeration of subset sums (meet in the middle)
# --------------------------------------------------------------------------------------------


def _subset_sums(values: np.ndarray, k_max: int) -> list[np.ndarray]:
    """``sums[j]``: the sums of all ``C(len(values), j)`` subsets of size ``j``, ``j <= k_max``.

    Divide and conquer: the sums of the two halves are combined by outer sums, so the cost is
    proportional to the output (times the depth), with no quadratic re-copying.
    """
    if values.size <= 1:
        return [np.zeros(1), values.astype(np.float64)][: k_max + 1]
    mid = values.size // 2
    left, right = _subset_sums(values[:mid], k_max), _subset_sums(values[mid:], k_max)
    out = []
    for j in range(min(k_max, values.size) + 1):
        parts = [
            (left[i][:, None] + right[j - i][None, :]).ravel()
            for i in range(max(0, j - len(right) + 1), min(j, len(left) - 1) + 1)
        ]
        out.append(np.concatenate(parts))
    return out


def mean_exact_count(
    z: np.ndarray, n_a: int, n_b: int, extreme: Callable[[np.ndarray], np.ndarray]
) -> int:
    """Number of splits (exact) whose mean difference ``extreme`` selects (all enumerated)."""
    n = n_a + n_b
    total = float(z.sum())
    g = min(n_a, n_b)  # enumerate subsets of the smaller group
    half = n // 2
    left, right = _subset_sums(z[:half], g), _subset_sums(z[half:], g)
    count = 0
    for j in range(max(0, g - (n - half)), min(g, half) + 1):
        lo, hi = left[j], right[g - j]
        rows = max(1, EXACT_BLOCK // hi.size)
        for i0 in range(0, lo.size, rows):
            sums = lo[i0 : i0 + rows, None] + hi[None, :]
            sum_a = sums if g == n_a else total - sums
            count += int(np.count_nonzero(extreme(sum_a / n_a - (total - sum_a) / n_b)))
    return count


# --------------------------------------------------------------------------------------------
# Monte Carlo: selection sampling of random splits over sorted positions
# --------------------------------------------------------------------------------------------


def _selection_steps(
    rng: np.random.Generator, n: int, n_a: int, size: int
) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Draw ``size`` uniform random splits, one pooled position at a time (Algorithm S [4]_).

    Yields ``(j, take, need)`` for ``j = 0..n-1``: ``take[r]`` is True when position ``j`` goes to
    A in split ``r``, ``need[r]`` the number of A's still to place after position ``j``. Position
    ``j`` joins A with probability ``need / (n − j)``, drawn exactly with bounded integers.
    """
    dtype = np.int16 if n < np.iinfo(np.int16).max else np.int32
    need: NDArray[np.signedinteger[Any]] = np.full(size, n_a, dtype=dtype)
    take = np.empty(size, dtype=bool)
    for j in range(n):
        np.less(rng.integers(0, n - j, size=size, dtype=dtype), need, out=take)
        need -= take
        yield j, take, need


def _middle_orders(n_g: int) -> tuple[int, ...]:
    """1-based order(s) of a group's middle order statistic(s)."""
    k = (n_g + 1) // 2
    return (k,) if n_g % 2 else (k, k + 1)


def _median_of(v: np.ndarray, positions: list[np.ndarray]) -> np.ndarray:
    out: NDArray[np.float64]
    if len(positions) == 1:
        out = v[positions[0]]
    else:
        out = (v[positions[0]] + v[positions[1]]) / 2
    return out


def _mc_median_null(prob: Problem, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` differences of medians of random splits, from the positions of their middles.

    A group's ``t``-th smallest member sits at the pooled position equal to the number of
    positions ``j`` where fewer than ``t`` group members have been placed up to ``j``.
    """
    n_a = prob.n_a
    orders_a, orders_b = _middle_orders(n_a), _middle_orders(prob.n_b)
    pos_a = [np.zeros(size, dtype=np.int32) for _ in orders_a]
    pos_b = [np.zeros(size, dtype=np.int32) for _ in orders_b]
    for j, _take, need in _selection_steps(rng, prob.n, n_a, size):
        # A's so far: n_a − need;  B's so far: j + 1 − (n_a − need)
        for t, p in zip(orders_a, pos_a, strict=True):
            p += need > n_a - t
        for t, p in zip(orders_b, pos_b, strict=True):
            p += need < t + n_a - j - 1
    out: NDArray[np.float64] = _median_of(prob.pooled, pos_a) - _median_of(prob.pooled, pos_b)
    return out


def _mc_mean_null(prob: Problem, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` differences of means of random splits (the sum of A accumulated per position)."""
    v = prob.pooled
    total = float(v.sum())
    sum_a = np.zeros(size)
    for j, take, _need in _selection_steps(rng, prob.n, prob.n_a, size):
        sum_a += v[j] * take  # elementwise, not a BLAS product: no thread start-up per batch
    return sum_a / prob.n_a - (total - sum_a) / prob.n_b


MC_NULLS: dict[str, Callable[[Problem, np.random.Generator, int], np.ndarray]] = {
    "median": _mc_median_null,
    "mean": _mc_mean_null,
}


# --------------------------------------------------------------------------------------------
# Methods
