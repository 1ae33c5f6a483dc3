"""Exact counts of extreme splits of the mean (subset sums) and the Monte Carlo null draws (the
exact median count is in ``_median``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from numpy.typing import NDArray

from app.domain.permutation._problem import EXACT_BLOCK, Problem

# --------------------------------------------------------------------------------------------


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
