"""Exact median permutation count: splits counted as lattice paths, in exact integers.

A split of the sorted pooled sample ``v`` is a monotone lattice path from ``(0, 0)`` to
``(n_A, n_B)``: the ``j``-th pooled value is an A-step (``x += 1``) or a B-step (``y += 1``).
A group ``g`` of size ``n_g`` has ``k_g = (n_g − 1) // 2`` members before its lower middle order
statistic. Its *structure* is the stretch of the path from its lower to its upper middle
member: one g-step (odd ``n_g``), or a g-step, a run of steps of the other group, and a g-step
(even ``n_g``; the g-steps are members ``k_g + 1`` and ``k_g + 2``). A *configuration* of g is
``(p1, p2)``: the numbers of other-group members before its lower and upper middle member
(``p1 = p2`` for odd ``n_g``); it fixes the group's median, ``v[k_g + p1]`` or
``(v[k_g + p1] + v[k_g + 1 + p2]) / 2`` (the same float expressions as before issue 15).

In coordinates (own axis of g, other axis) the structure enters at ``E = (k_g, p1)`` and leaves
at ``X = (k_g + w_g, p2)``, ``w_g = 1`` (odd) or ``2`` (even). The number of paths between two
points is ``P(dx, dy) = C(dx + dy, dx)`` (0 when a step is negative). For a pair of an
A-configuration and a B-configuration, the two structures are sub-walks of the same path, and
either one ends before the other begins (*disjoint*), or they share steps (*merged*): by the
letters of the sub-walks (``g``, or ``g o…o g``) a shared stretch is either

* a structure lying inside the other group's run (``m1``: a group's middle step(s) at height
  ``k_o + 1``, inside the run of an even other group), or
* the end of an even group's run being the beginning of the other even group's structure
  (``m3``: the last run step of f is the lower middle step of s, and f's upper middle step is
  the first step of s's run).

Counts, with f the structure met first (both orders are summed):

* disjoint: ``P(0 → E_f) · P(X_f → E_s) · P(X_s → N)``;
* m1 (f inside s's run): ``P(0 → E_s) · P(X_s → N)``;
* m3 (f's run ends into s): ``P(0 → E_f) · P(X_s → N)``.

The merged cases are ``O(n²)`` pairs, evaluated one by one. The disjoint sum
``Σ F(p1_f) · M(p2_f, p1_s) · G(p2_s) · [extreme]`` is ``O(n³)``: the predicate ``extreme(m_A −
m_B)`` is monotone in the float difference (rounding is monotone), so for a fixed f-configuration
the extreme s-medians are a prefix and/or a suffix of the sorted distinct s-medians, found by a
vectorised binary search evaluating exactly the predicate the configuration-pair counter
evaluated; within a row of s-configurations (fixed ``p1_s``, increasing ``p2_s``) the medians
are sorted, so the extreme ones are again a prefix and a suffix, summed by prefix sums of
``G``. Counts are Python integers (numpy object arrays): exact at any size.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Extreme = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class _Group:
    """The configurations of one group's middle order statistics, in rows of equal ``p1``."""

    n: int  # size of the group
    n_other: int
    k: int  # members before the lower middle
    w: int  # own-axis length of the structure: 1 (odd) or 2 (even)
    is_a: bool
    p1: NDArray[np.int64]
    p2: NDArray[np.int64]
    median: NDArray[np.float64]
    starts: NDArray[np.int64]  # configurations with p1 = q are starts[q]:starts[q + 1]

    @property
    def even(self) -> bool:
        return self.w == 2


def _group(v: np.ndarray, n_g: int, n_o: int, *, is_a: bool) -> _Group:
    k = (n_g - 1) // 2
    q = np.arange(n_o + 1, dtype=np.int64)
    if n_g % 2:
        p1, p2 = q, q
        starts = np.arange(n_o + 2, dtype=np.int64)
        median = v[k + p1]
    else:
        reps = n_o + 1 - q
        starts = np.concatenate(([0], np.cumsum(reps))).astype(np.int64)
        p1 = np.repeat(q, reps)
        p2 = np.arange(p1.size, dtype=np.int64) - starts[p1] + p1
        median = (v[k + p1] + v[k + 1 + p2]) / 2
    return _Group(n_g, n_o, k, 2 - n_g % 2, is_a, p1, p2, median, starts)


def _path_table(n_x: int, n_y: int) -> np.ndarray:
    """``T[dx + 1, dy + 1] = C(dx + dy, dx)`` as Python ints; row and column 0 hold 0."""
    table = np.zeros((n_x + 2, n_y + 2), dtype=object)
    row = np.ones(n_y + 1, dtype=object)
    table[1, 1:] = row
    for i in range(2, n_x + 2):
        row = np.cumsum(row)  # C(i + j, i) = sum over j' <= j of C(i − 1 + j', i − 1)
        table[i, 1:] = row
    return table


def _paths(table: np.ndarray, dx: np.ndarray | int, dy: np.ndarray | int) -> np.ndarray:
    """``P(dx, dy)``, 0 where a difference is negative (the table is padded by one)."""
    out: np.ndarray = table[np.maximum(np.asarray(dx) + 1, 0), np.maximum(np.asarray(dy) + 1, 0)]
    return out


def _first_true(
    lo: np.ndarray, hi: np.ndarray, test: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """Smallest ``i`` in ``[lo, hi)`` with ``test(i)`` (``hi`` if none); ``test`` monotone."""
    lo, hi = lo.copy(), hi.copy()
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        t = test(np.where(active, mid, 0))
        lo = np.where(active & ~t, mid + 1, lo)
        hi = np.where(active & t, mid, hi)


class _Pairs:
    """The predicate on (f-median, s-median) pairs, oriented as ``m_A − m_B``."""

    def __init__(self, f: _Group, extreme: Extreme, alternative: str) -> None:
        self.f_is_a = f.is_a
        self.extreme = extreme
        # direction of D = m_A − m_B along increasing s-medians: decreasing when f is A
        sign = {"greater": 1, "less": -1, "two-sided": 0}[alternative] * (1 if f.is_a else -1)
        self.kind = {1: "prefix", -1: "suffix", 0: "both"}[sign]

    def diff(self, m_f: np.ndarray, m_s: np.ndarray) -> np.ndarray:
        out: np.ndarray = m_f - m_s if self.f_is_a else m_s - m_f
        return out

    def mask(self, m_f: np.ndarray, m_s: np.ndarray) -> np.ndarray:
        return self.extreme(self.diff(m_f, m_s))

    def cuts(self, m_f: np.ndarray, sorted_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(c1, c2)``: the s-medians ``sorted_s[i]`` extreme with ``m_f`` are ``i < c1`` and
        ``i >= c2`` (``c1 <= c2``), by the predicate itself (monotone on each side)."""
        size = sorted_s.size
        if self.kind == "prefix":
            z = np.full(m_f.size, size, dtype=np.int64)
        elif self.kind == "suffix":
            z = np.zeros(m_f.size, dtype=np.int64)
        else:  # |D| decreases up to the s-medians equal to m_f, then increases
            z = np.searchsorted(sorted_s, m_f, side="right").astype(np.int64)
        zero = np.zeros_like(z)
        c1 = _first_true(zero, z, lambda i: ~self.mask(m_f, sorted_s[i]))
        c2 = _first_true(z, np.full_like(z, size), lambda i: self.mask(m_f, sorted_s[i]))
        return c1, c2


def _disjoint(f: _Group, s: _Group, table: np.ndarray, pairs: _Pairs) -> int:
    """Extreme splits whose f-structure ends before the s-structure begins."""
    sel = np.flatnonzero(f.p2 <= s.k)  # else P(X_f -> E_s) = 0
    q_lo = f.k + f.w  # the s-rows (p1_s) with P(X_f -> E_s) > 0
    if sel.size == 0 or q_lo > f.n:
        return 0
    m_f, p1_f, p2_f = f.median[sel], f.p1[sel], f.p2[sel]
    sorted_s = np.unique(s.median)
    rank = np.searchsorted(sorted_s, s.median)
    c1, c2 = pairs.cuts(m_f, sorted_s)
    g = _paths(table, f.n - s.p2, s.n - s.k - s.w)  # P(X_s -> N) of every s-configuration
    acc = np.zeros(sel.size, dtype=object)
    for q in range(q_lo, f.n + 1):
        row = slice(s.starts[q], s.starts[q + 1])
        ranks = rank[row]
        prefix = np.concatenate(([0], np.cumsum(g[row]))).astype(object)
        u = np.searchsorted(ranks, c1, side="left")
        w = np.searchsorted(ranks, c2, side="left")
        picked = prefix[u] + (prefix[-1] - prefix[w])
        acc += _paths(table, q - q_lo, s.k - p2_f) * picked  # P(X_f -> E_s)
    return int(np.sum(_paths(table, f.k, p1_f) * acc))  # P(0 -> E_f)


def _inside(f: _Group, s: _Group, table: np.ndarray, pairs: _Pairs) -> int:
    """m1: the f-structure lies inside the run of an even s."""
    if not s.even:
        return 0
    i_f = np.flatnonzero((f.p1 == s.k + 1) & (f.p2 == s.k + 1))
    i_s = np.flatnonzero((s.p1 <= f.k) & (s.p2 >= f.k + f.w))
    if i_f.size == 0 or i_s.size == 0:
        return 0
    m_f = np.repeat(f.median[i_f], i_s.size)
    i_s = np.tile(i_s, i_f.size)
    mask = pairs.mask(m_f, s.median[i_s])
    i_s = i_s[mask]
    counts = _paths(table, s.p1[i_s], s.k) * _paths(table, f.n - s.p2[i_s], s.n - s.k - 2)
    return int(np.sum(counts))


def _overlap(f: _Group, s: _Group, table: np.ndarray, pairs: _Pairs) -> int:
    """m3: both even, f's run ends with s's lower middle step (whose run begins with f's upper
    middle step)."""
    if not (f.even and s.even):
        return 0
    i_f = np.flatnonzero((f.p2 == s.k + 1) & (f.p1 <= s.k))
    i_s = np.flatnonzero((s.p1 == f.k + 1) & (s.p2 >= f.k + 2))
    if i_f.size == 0 or i_s.size == 0:
        return 0
    i_f, i_s = np.repeat(i_f, i_s.size), np.tile(i_s, i_f.size)
    mask = pairs.mask(f.median[i_f], s.median[i_s])
    i_f, i_s = i_f[mask], i_s[mask]
    counts = _paths(table, f.k, f.p1[i_f]) * _paths(table, f.n - s.p2[i_s], s.n - s.k - 2)
    return int(np.sum(counts))


def median_exact_count(
    v: np.ndarray, n_a: int, n_b: int, extreme: Extreme, alternative: str
) -> int:
    """Number of splits (an exact int) whose difference of medians ``extreme`` selects.

    Parameters
    ----------
    v : ndarray, shape (n_a + n_b,)
        Sorted pooled sample.
    n_a, n_b : int
        Group sizes (A is the first sample).
    extreme : callable
        Maps an array of differences ``median_A − median_B`` to a boolean mask; it must be
        monotone as the alternative says: an upper set of the difference (``"greater"``), a
        lower set (``"less"``) or an upper set of its absolute value (``"two-sided"``).
    alternative : str
        ``"two-sided"``, ``"greater"`` or ``"less"``.

    Returns
    -------
    int
        The count; ``C(n_a + n_b, n_a)`` when every split is selected.
    """
    a = _group(v, n_a, n_b, is_a=True)
    b = _group(v, n_b, n_a, is_a=False)
    table = _path_table(n_a, n_b)
    total = 0
    for f, s, t in ((a, b, table), (b, a, table.T)):
        pairs = _Pairs(f, extreme, alternative)
        total += _disjoint(f, s, t, pairs) + _inside(f, s, t, pairs) + _overlap(f, s, t, pairs)
    return total


def median_work(n_a: int, n_b: int) -> int:
    """Terms of the disjoint sums (f-configurations times s-rows), the cost of the count."""

    def one(n_f: int, n_s: int) -> int:
        k_f, k_s = (n_f - 1) // 2, (n_s - 1) // 2
        rows = n_f + 1 - (k_f + 2 - n_f % 2)
        # configurations with p2 <= k_s: k_s + 1 (odd), (k_s + 1)(k_s + 2)/2 (even)
        configs = k_s + 1 if n_f % 2 else (k_s + 1) * (k_s + 2) // 2
        return max(rows, 0) * configs

    return one(n_a, n_b) + one(n_b, n_a)


__all__ = ["median_exact_count", "median_work"]
