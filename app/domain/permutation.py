"""Two-sample permutation test on the runs of two algorithms (SPEC §5; Omran et al. [1]).

``x`` holds the ``n_A`` final results of algorithm A on one problem, ``y`` the ``n_B`` results of
algorithm B. The observed signed difference is ``s = stat(x) − stat(y)`` with ``stat`` the median
(default) or the mean. Under the null hypothesis every split of the pooled sample into a group of
``n_A`` ("A") and a group of ``n_B`` ("B") is equally likely; there are ``C(n_A + n_B, n_A)`` of
them. The p-value is the share of splits whose statistic ``s_i`` is at least as extreme as ``s``:

* ``alternative="two-sided"``: ``|s_i| >= |s|`` (the paper's ``d = |median_A − median_B|``);
* ``"greater"``: ``s_i >= s``; ``"less"``: ``s_i <= s``.

Ties of the statistic. ``s_i`` counts as ``>= s`` when

.. math::

    s_i \\ge s - \\bigl(\\mathrm{rtol}\\cdot\\max(|s|, |s_i|) + \\mathrm{atol}\\bigr),
    \\qquad \\mathrm{atol} = 16\\,n\\,\\varepsilon \\max_i |z_i|,

where ``z`` is the pooled sample, ``n = n_A + n_B`` and ``ε`` the float64 machine epsilon.
``atol`` is the float-noise floor of a difference of means of ``n`` values of that magnitude, so
that, e.g., the means of ``(0.1, 0.3, 0.5)`` and ``(0.2, 0.4, 0.6)`` tie with those of the same
values split differently, and an observed difference of ``0`` (one-sided) is not split by noise.

Methods (``method=``):

* ``"exact"``, median statistic: the null distribution is **counted**, not enumerated [2]_. In the
  sorted pooled sample a split is a choice of the ``n_A`` positions of A. A group's median is the
  value at its middle order statistic (odd size) or the mean of the values at its two middle order
  statistics (even size); between the two middle members of a group there are only members of the
  other group. A *configuration* fixes the pooled positions of A's and B's middle order
  statistics; each such mark also fixes how many A's lie before it, so the number of A's in every
  gap between consecutive marks is forced and the number of splits with that configuration is a
  product of binomial coefficients over the gaps. The p-value sums these counts (float64) over the
  configurations whose statistic is extreme, vectorised over all pairs of A- and B-configurations:
  ``(n_B + 1)`` (odd ``n_A``) or ``(n_B + 1)(n_B + 2)/2`` (even ``n_A``) configurations for A, and
  symmetrically for B. Exact when ``n_A + n_B <=`` :data:`MEDIAN_EXACT_MAX_N` and the number of
  configuration pairs is at most :data:`MEDIAN_EXACT_MAX_CONFIGURATIONS` (this holds for every
  ``n_A + n_B <= 200``; for two odd sizes it holds up to the size limit).
* ``"exact"``, mean statistic: all splits are enumerated while ``C(n_A + n_B, n_A) <=
  exact_max_splits``. The subset sums of the smaller group are built meet-in-the-middle (subset
  sums of each half of the pooled sample, combined block by block), so memory stays bounded.
* ``"monte_carlo"``: ``n_resamples`` uniformly random splits (selection sampling [4]_, vectorised
  over batches) from ``np.random.default_rng(seed)``; ``p = (c + 1)/(N + 1)`` where ``c`` counts the
  extreme splits (as ``scipy.stats.permutation_test`` does [3]_; never 0). The paper's own
  convention ``c/(N + 1)`` is returned as ``p_value_paper``.
* ``"auto"``: exact when feasible as above, else Monte Carlo.

References
----------
.. [1] M. G. H. Omran, M. Clerc, F. Ghaddar, A. Aldabagh, O. Tawfik. Permutation Tests for
       Metaheuristic Algorithms. Mathematics 10(13):2219 (2022). doi:10.3390/math10132219
.. [2] H. A. David, H. N. Nagaraja. Order Statistics, 3rd ed., Wiley (2003): the joint law of
       order statistics of a sample drawn without replacement (counting over gaps).
.. [3] scipy.stats.permutation_test (``adjustment = 0 if exact_test else 1``); B. Phipson,
       G. K. Smyth. Permutation P-values should never be zero. Stat. Appl. Genet. Mol. Biol. 9
       (2010).
.. [4] D. E. Knuth. The Art of Computer Programming, Vol. 2, §3.4.2, Algorithm S (selection
       sampling technique).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.stattools import choice, log10_clip, log10_int_ratio, sample

__all__ = [
    "ALTERNATIVES",
    "EXACT_MAX_SPLITS_LIMIT",
    "MAX_RESAMPLES",
    "MEDIAN_EXACT_MAX_CONFIGURATIONS",
    "MEDIAN_EXACT_MAX_N",
    "METHODS",
    "STATISTICS",
    "PermutationResult",
    "permutation_test",
]

#: Largest ``n_A + n_B`` for the exact median count (binomial counts stay finite in float64).
MEDIAN_EXACT_MAX_N = 1000
#: Largest number of (A-configuration, B-configuration) pairs the exact median count visits.
MEDIAN_EXACT_MAX_CONFIGURATIONS = 30_000_000
#: Default upper bound of ``n_resamples`` (the ``max_resamples`` argument).
MAX_RESAMPLES = 10_000_000
#: Hard upper bound of ``exact_max_splits`` (enumeration runs at about 5e7 splits per second).
EXACT_MAX_SPLITS_LIMIT = 1_000_000_000
ALTERNATIVES = ("two-sided", "greater", "less")
STATISTICS = ("median", "mean")
METHODS = ("auto", "exact", "monte_carlo")

_EXACT_BLOCK = 1 << 17  # elements per vectorised block of the exact counts
_MC_BATCH = 1 << 15  # random splits per Monte Carlo batch (fixed: results depend on it)
_NOISE_ULPS = 16.0
# alternative -> the oriented statistic of a signed difference (larger = more extreme)
_ORIENT: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "two-sided": np.abs,
    "greater": np.positive,
    "less": np.negative,
}


@dataclass(frozen=True)
class PermutationResult:
    """Outcome of :func:`permutation_test`.

    Attributes
    ----------
    statistic : float
        Observed test statistic ``d``: ``|s|`` for ``"two-sided"``, ``s`` for ``"greater"`` and
        ``"less"``.
    observed_difference : float
        ``s = stat(x) − stat(y)``, in the units of the data.
    statistic_name : str
        ``"median"`` or ``"mean"``.
    alternative : str
        ``"two-sided"``, ``"greater"`` or ``"less"``.
    method : str
        ``"exact"`` or ``"monte_carlo"`` (what was run; ``"auto"`` is resolved).
    p_value : float
        Exact: (number of extreme splits) / ``n_splits`` (for the median, divided by the counted
        total, so that a p of 1 is exactly 1). Monte Carlo: ``(c + 1)/(N + 1)``. In ``[0, 1]``.
    p_value_paper : float or None
        Monte Carlo only: ``c/(N + 1)``, the convention of [1] (may be 0).
    log10_p_value : float
        ``log10 p_value``, finite: exact integers (mean), float counts (median; both are
        normal floats) or ``log10((c + 1)/(N + 1))``.
    log10_p_value_paper : float or None
        Monte Carlo only: ``log10(c/(N + 1))``; ``−inf`` (JSON ``"-Infinity"``) when ``c = 0``,
        where this convention's estimate is exactly 0.
    standard_error : float or None
        Monte Carlo only: ``sqrt(p (1 − p) / N)``.
    n_resamples : int or None
        Monte Carlo only: ``N``, the number of random splits.
    n_splits : int or None
        ``C(n_A + n_B, n_A)``, the number of distinct splits, exact while below ``2^53`` (what
        JSON clients read exactly); ``None`` above, see ``log10_n_splits``.
    log10_n_splits : float
        ``log10 C(n_A + n_B, n_A)``.
    n_extreme : float
        Extreme splits (a count; exact below ``2^53``): enumerated (mean), sampled (``c``), or
        counted by configurations in float64 (median).
    seed : int or None
        Monte Carlo only: the seed of ``np.random.default_rng``.
    rtol : float
        Relative tolerance of the comparisons of statistics.
    degenerate : bool
        True when the pooled sample is constant: every split gives the same statistic, ``p = 1``.
    reason : str or None
        Why the result is degenerate.
    notes : tuple of str
        Remarks for the reader (method fallback, equal medians).
    """

    statistic: float
    observed_difference: float
    statistic_name: str
    alternative: str
    method: str
    p_value: float
    p_value_paper: float | None
    log10_p_value: float
    log10_p_value_paper: float | None
    standard_error: float | None
    n_resamples: int | None
    n_splits: int | None
    log10_n_splits: float
    n_extreme: float
    seed: int | None
    rtol: float
    degenerate: bool
    reason: str | None
    notes: tuple[str, ...] = ()


_OVERFLOW_GUARD = 2.0**1000


@dataclass(frozen=True)
class _Problem:
    """Validated inputs; ``pooled`` is sorted (positions of the exact count and Monte Carlo)."""

    pooled: np.ndarray
    n_a: int
    n_b: int
    statistic: str
    alternative: str
    observed: float
    rtol: float
    atol: float
    exponent: int = 0  # values were divided by 2**exponent (exact) so that sums cannot overflow

    @property
    def n(self) -> int:
        return self.n_a + self.n_b

    def oriented(self, s: np.ndarray | float) -> np.ndarray:
        """Map signed differences to the oriented statistic (larger = more extreme)."""
        return _ORIENT[self.alternative](np.asarray(s, dtype=np.float64))

    def extreme(self, s: np.ndarray) -> np.ndarray:
        """Boolean mask of the differences ``s`` at least as extreme as the observed one."""
        t = self.oriented(s)
        d = float(self.oriented(self.observed))
        tol = self.rtol * np.maximum(abs(d), np.abs(t)) + self.atol
        return t >= d - tol


# --------------------------------------------------------------------------------------------
# Exact median: counting configurations of the middle order statistics
# --------------------------------------------------------------------------------------------


def _median_configuration_count(n_g: int, n_o: int) -> int:
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
        return table[(length + 1) * width + np.clip(a_count, -1, n + 1) + 1]

    counts = gap(pos[0], alpha[0])
    for t in range(len(keys) - 1):
        counts = counts * gap(pos[t + 1] - pos[t] - 1, alpha[t + 1] - alpha[t] - is_a[t])
    return counts * gap(n - 1 - pos[-1], n_a - alpha[-1] - is_a[-1])


def _median_exact_count(
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
    rows = max(1, _EXACT_BLOCK // med_b.size)
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


def _mean_exact_count(
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
        rows = max(1, _EXACT_BLOCK // hi.size)
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
    need = np.full(size, n_a, dtype=dtype)
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
    if len(positions) == 1:
        return v[positions[0]]
    return (v[positions[0]] + v[positions[1]]) / 2


def _mc_median_null(prob: _Problem, rng: np.random.Generator, size: int) -> np.ndarray:
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
    return _median_of(prob.pooled, pos_a) - _median_of(prob.pooled, pos_b)


def _mc_mean_null(prob: _Problem, rng: np.random.Generator, size: int) -> np.ndarray:
    """``size`` differences of means of random splits (the sum of A accumulated per position)."""
    v = prob.pooled
    total = float(v.sum())
    sum_a = np.zeros(size)
    for j, take, _need in _selection_steps(rng, prob.n, prob.n_a, size):
        sum_a += v[j] * take  # elementwise, not a BLAS product: no thread start-up per batch
    return sum_a / prob.n_a - (total - sum_a) / prob.n_b


_MC_NULLS: dict[str, Callable[[_Problem, np.random.Generator, int], np.ndarray]] = {
    "median": _mc_median_null,
    "mean": _mc_mean_null,
}


# --------------------------------------------------------------------------------------------
# Methods
# --------------------------------------------------------------------------------------------


def _observed(x: np.ndarray, y: np.ndarray, statistic: str) -> float:
    if statistic == "median":
        return float(np.median(x) - np.median(y))
    return float(np.mean(x) - np.mean(y))


def _count_text(count: int) -> str:
    """A count for messages: exact below 10^15, else ``~10^e`` (huge ints cannot be printed)."""
    if count < 10**15:
        return str(count)
    return f"~10^{_log10_int(count):.1f}"


def _log10_int(count: int) -> float:
    """``log10`` of a positive int of any size."""
    shift = max(count.bit_length() - 60, 0)
    return math.log10(count >> shift) + shift * math.log10(2.0)


def _exact_infeasible(statistic: str, n_a: int, n_b: int, exact_max_splits: int) -> str | None:
    """Why the exact method is not run (``None`` when it is feasible)."""
    n = n_a + n_b
    if statistic == "mean":
        splits = math.comb(n, n_a)
        if splits > exact_max_splits:
            return (
                f"C({n}, {n_a}) = {_count_text(splits)} splits exceed exact_max_splits = "
                f"{exact_max_splits}"
            )
        return None
    if n > MEDIAN_EXACT_MAX_N:
        return f"n_A + n_B = {n} exceeds {MEDIAN_EXACT_MAX_N} for the exact median count"
    pairs = _median_configuration_count(n_a, n_b) * _median_configuration_count(n_b, n_a)
    if pairs > MEDIAN_EXACT_MAX_CONFIGURATIONS:
        return (
            f"{pairs} configuration pairs of the middle order statistics exceed "
            f"{MEDIAN_EXACT_MAX_CONFIGURATIONS} for the exact median count"
        )
    return None


@dataclass(frozen=True)
class _Outcome:
    p_value: float
    log10_p_value: float
    n_extreme: int | float
    p_value_paper: float | None = None
    log10_p_value_paper: float | None = None
    standard_error: float | None = None
    n_resamples: int | None = None
    seed: int | None = None


def _run_exact(prob: _Problem, n_resamples: int, seed: int) -> _Outcome:
    if prob.statistic == "median":
        selected, counted = _median_exact_count(prob.pooled, prob.n_a, prob.n_b, prob.extreme)
        return _Outcome(
            p_value=min(max(selected / counted, 0.0), 1.0),
            log10_p_value=log10_clip(math.log10(selected) - math.log10(counted))
            if selected > 0
            else -math.inf,
            n_extreme=selected,
        )
    count = _mean_exact_count(prob.pooled, prob.n_a, prob.n_b, prob.extreme)
    splits = math.comb(prob.n, prob.n_a)
    return _Outcome(
        p_value=count / splits, log10_p_value=log10_int_ratio(count, splits), n_extreme=count
    )


def _run_monte_carlo(prob: _Problem, n_resamples: int, seed: int) -> _Outcome:
    rng = np.random.default_rng(seed)
    null = _MC_NULLS[prob.statistic]
    count = 0
    for start in range(0, n_resamples, _MC_BATCH):
        size = min(_MC_BATCH, n_resamples - start)
        count += int(np.count_nonzero(prob.extreme(null(prob, rng, size))))
    # See References [3]: a Monte Carlo p-value counts the observed split too
    p = min((count + 1) / (n_resamples + 1), 1.0)
    return _Outcome(
        p_value=p,
        log10_p_value=log10_int_ratio(min(count + 1, n_resamples + 1), n_resamples + 1),
        n_extreme=count,
        p_value_paper=count / (n_resamples + 1),
        log10_p_value_paper=log10_int_ratio(count, n_resamples + 1),
        standard_error=math.sqrt(p * (1.0 - p) / n_resamples),
        n_resamples=n_resamples,
        seed=seed,
    )


_METHODS: dict[str, Callable[[_Problem, int, int], _Outcome]] = {
    "exact": _run_exact,
    "monte_carlo": _run_monte_carlo,
}


# --------------------------------------------------------------------------------------------
# Input validation and the public function
# --------------------------------------------------------------------------------------------


def _sample_iv(values: ArrayLike, field: str) -> np.ndarray:
    a = sample(values, field)
    if not np.isfinite(a).all():  # the statistics are means and medians of values
        raise InvalidInput(f"{field} contains infinite values", field=field)
    return a


def _int_iv(value: object, field: str, lo: int, hi: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidInput(f"{field} must be an integer, got {value!r}", field=field)
    v = int(value)
    if v < lo or (hi is not None and v > hi):
        bounds = f">= {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise InvalidInput(f"{field} must be {bounds}, got {v}", field=field)
    return v


def _permutation_test_iv(
    x: ArrayLike,
    y: ArrayLike,
    statistic: object,
    alternative: object,
    method: object,
    rtol: object,
) -> _Problem:
    xa, ya = _sample_iv(x, "x"), _sample_iv(y, "y")
    stat = choice(statistic, STATISTICS, "statistic")
    alt = choice(alternative, ALTERNATIVES, "alternative")
    choice(method, METHODS, "method")
    if not isinstance(rtol, numbers.Real) or not (0.0 <= float(rtol) < 1.0):
        raise InvalidInput(f"rtol must be a number in [0, 1), got {rtol!r}", field="rtol")
    pooled = np.sort(np.concatenate((xa, ya)))
    scale = float(np.max(np.abs(pooled)))
    # p is invariant under positive scaling: divide by a power of two (exact) when sums of the
    # values could overflow, and report the observed difference in the original units
    exponent = math.frexp(scale)[1] if scale * pooled.size > _OVERFLOW_GUARD else 0
    if exponent:
        xa, ya, pooled = (np.ldexp(a, -exponent) for a in (xa, ya, pooled))
        scale = float(np.max(np.abs(pooled)))
    return _Problem(
        pooled=pooled,
        n_a=xa.size,
        n_b=ya.size,
        statistic=stat,
        alternative=alt,
        observed=_observed(xa, ya, stat),
        rtol=float(rtol),
        atol=_NOISE_ULPS * pooled.size * float(np.finfo(np.float64).eps) * scale,
        exponent=exponent,
    )


def _choose_method(prob: _Problem, method: str, exact_max_splits: int) -> tuple[str, list[str]]:
    why = _exact_infeasible(prob.statistic, prob.n_a, prob.n_b, exact_max_splits)
    if method == "exact" and why is not None:
        raise NotApplicable(f"the exact test is infeasible: {why}", field="method")
    if method == "auto":
        method = "exact" if why is None else "monte_carlo"
        if why is not None:
            return method, [f"exact test infeasible ({why}): Monte Carlo used"]
    return method, []


def permutation_test(
    x: ArrayLike,
    y: ArrayLike,
    *,
    statistic: str = "median",
    alternative: str = "two-sided",
    method: str = "auto",
    n_resamples: int = 100_000,
    seed: int = 0,
    rtol: float = 1e-9,
    exact_max_splits: int = 1_000_000,
    max_resamples: int = MAX_RESAMPLES,
) -> PermutationResult:
    """Permutation test of the difference of medians (or means) of two algorithms' runs [1]_.

    Parameters
    ----------
    x : array_like, shape (n_A,)
        Final results of the runs of algorithm A (finite reals).
    y : array_like, shape (n_B,)
        Final results of the runs of algorithm B.
    statistic : {"median", "mean"}, optional
        ``stat`` in ``s = stat(x) − stat(y)``. [1]_ recommends the mean when the medians coincide.
    alternative : {"two-sided", "greater", "less"}, optional
        ``|s_i| >= |s|``, ``s_i >= s`` or ``s_i <= s`` counts a split as extreme.
    method : {"auto", "exact", "monte_carlo"}, optional
        See the module docstring; ``"exact"`` raises when infeasible, ``"auto"`` falls back to
        Monte Carlo.
    n_resamples : int, optional
        Monte Carlo: number of random splits ``N``, ``1 <= N <= max_resamples``.
    seed : int, optional
        Monte Carlo: seed (``>= 0``) of ``np.random.default_rng``; recorded in the result. The
        stream is consumed in fixed batches, so equal inputs and seeds give equal results.
    rtol : float, optional
        Relative tolerance of the comparisons of statistics, in ``[0, 1)``.
    exact_max_splits : int, optional
        Mean statistic: enumerate all splits only when ``C(n_A + n_B, n_A)`` is at most this;
        at most :data:`EXACT_MAX_SPLITS_LIMIT`.
    max_resamples : int, optional
        Upper bound of ``n_resamples``.

    Returns
    -------
    PermutationResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Empty, non-1-D or non-finite ``x``/``y``; unknown ``statistic``/``alternative``/
        ``method``; ``n_resamples`` out of range; bad ``seed``, ``rtol``, ``exact_max_splits``;
        ``method="exact"`` when infeasible (``field="method"``).

    Examples
    --------
    The two-student example of [1]_ (final marks against pre-test marks):

    >>> r = permutation_test([76, 72], [70, 75], statistic="mean", alternative="greater")
    >>> r.statistic, r.n_extreme, r.n_splits, r.method
    (1.5, 2.0, 6, 'exact')
    >>> permutation_test([76, 72], [70, 75], statistic="mean").p_value  # 4/6
    0.6666666666666666
    """
    prob = _permutation_test_iv(x, y, statistic, alternative, method, rtol)
    max_resamples = _int_iv(max_resamples, "max_resamples", 1)
    n_resamples = _int_iv(n_resamples, "n_resamples", 1, max_resamples)
    seed = _int_iv(seed, "seed", 0)
    exact_max_splits = _int_iv(exact_max_splits, "exact_max_splits", 1, EXACT_MAX_SPLITS_LIMIT)
    chosen, notes = _choose_method(prob, method, exact_max_splits)
    out = _METHODS[chosen](prob, n_resamples, seed)
    degenerate = bool(prob.pooled[0] == prob.pooled[-1])
    if prob.statistic == "median" and abs(prob.observed) <= prob.atol:
        notes.append(
            "the observed medians are equal: Omran et al. recommend the mean statistic "
            "(statistic='mean') to compare these samples"
        )
    with np.errstate(over="ignore"):  # a difference beyond the float range is ±inf
        observed = float(np.ldexp(prob.observed, prob.exponent))
    splits = math.comb(prob.n, prob.n_a)
    return PermutationResult(
        statistic=abs(observed) if prob.alternative == "two-sided" else observed,
        observed_difference=observed,
        statistic_name=prob.statistic,
        alternative=prob.alternative,
        method=chosen,
        p_value=out.p_value,
        p_value_paper=out.p_value_paper,
        log10_p_value=out.log10_p_value,
        log10_p_value_paper=out.log10_p_value_paper,
        standard_error=out.standard_error,
        n_resamples=out.n_resamples,
        n_splits=splits if splits < 2**53 else None,
        log10_n_splits=_log10_int(splits),
        n_extreme=float(out.n_extreme),
        seed=out.seed,
        rtol=prob.rtol,
        degenerate=degenerate,
        reason="all pooled values are equal: every split gives the same statistic"
        if degenerate
        else None,
        notes=tuple(notes),
    )
