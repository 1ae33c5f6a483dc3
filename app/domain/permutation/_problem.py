"""The permutation test's limits, its result and the validated problem (pooled, sorted sample)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from app.domain import notices

#: Largest ``n_A + n_B`` for the exact median count (the counts, exact ints, stay below the
#: float range when the p-value and ``n_extreme`` are reported).
MEDIAN_EXACT_MAX_N = 1000
#: Largest number of terms of the exact median count's ``O(n^3)`` sums (``median_work``):
#: 10^7 is about 430 vs 430 (two even groups), a few seconds; every size the configuration-pair
#: counter before issue 15 accepted (at most 3·10^7 pairs) needs at most 3.9·10^6.
MEDIAN_EXACT_MAX_WORK = 10_000_000
#: Default upper bound of ``n_resamples`` (the ``max_resamples`` argument).
MAX_RESAMPLES = 10_000_000
#: Hard upper bound of ``exact_max_splits`` (enumeration runs at about 5e7 splits per second).
EXACT_MAX_SPLITS_LIMIT = 1_000_000_000
ALTERNATIVES = ("two-sided", "greater", "less")
STATISTICS = ("median", "mean")
METHODS = ("auto", "exact", "monte_carlo")

EXACT_BLOCK = 1 << 17  # elements per vectorised block of the exact counts
MC_BATCH = 1 << 15  # random splits per Monte Carlo batch (fixed: results depend on it)
NOISE_ULPS = 16.0
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
        Exact: (number of extreme splits) / ``n_splits``, both exact integers, correctly
        rounded. Monte Carlo: ``(c + 1)/(N + 1)``. In ``[0, 1]``.
    p_value_paper : float or None
        Monte Carlo only: ``c/(N + 1)``, the convention of [1] (may be 0).
    log10_p_value : float
        ``log10 p_value``, finite: of the ratio of exact integers (exact methods) or
        ``log10((c + 1)/(N + 1))``.
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
        counted exactly by configurations of the middle order statistics (median).
    seed : int or None
        Monte Carlo only: the seed of ``np.random.default_rng``.
    rtol : float
        Relative tolerance of the comparisons of statistics.
    degenerate : bool
        True when the pooled sample is constant: every split gives the same statistic, ``p = 1``.
    reason : str or None
        Why the result is degenerate.
    notes : tuple of app.domain.notices.Warning
        Remarks for the reader: ``exact-infeasible`` (auto fell back to Monte Carlo),
        ``equal-medians`` (the median statistic is 0: the mean is recommended).
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
    notes: tuple[notices.Warning, ...] = ()


OVERFLOW_GUARD = 2.0**1000


@dataclass(frozen=True)
class Problem:
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
        out: NDArray[np.bool_] = t >= d - tol
        return out


# --------------------------------------------------------------------------------------------
# Exact median: counting configurations of the middle order statistics
