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
  sorted pooled sample a split is a monotone lattice path (A-steps and B-steps). A group's median
  is the value at its middle order statistic (odd size) or the mean of the values at its two
  middle order statistics (even size); between the two middle members of a group there are only
  members of the other group. A *configuration* of a group fixes how many members of the other
  group precede its middle member(s), hence its median; the splits through an A- and a
  B-configuration are paths through two fixed stretches of the lattice, a product of binomial
  coefficients. The count sums these products over the extreme pairs in exact integers: pairs
  whose stretches share steps are ``O(n^2)`` and summed one by one; for stretches one after the
  other the predicate is monotone in the other group's median, so the extreme partners of each
  configuration are a prefix and a suffix of the sorted medians (found by binary search with the
  predicate itself), summed by prefix sums: ``O(n^3)`` terms in all (see ``_median``). The
  p-value is ``count / C(n_A + n_B, n_A)``, correctly rounded. Exact when ``n_A + n_B <=``
  :data:`MEDIAN_EXACT_MAX_N` and the number of terms is at most :data:`MEDIAN_EXACT_MAX_WORK`
  (about 430 vs 430 for two even groups; 200 vs 200 takes about 0.3 s).
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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from app.domain import notices
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.permutation._counts import MC_NULLS, mean_exact_count
from app.domain.permutation._median import median_exact_count, median_work
from app.domain.permutation._problem import (
    ALTERNATIVES,
    EXACT_MAX_SPLITS_LIMIT,
    MAX_RESAMPLES,
    MC_BATCH,
    MEDIAN_EXACT_MAX_N,
    MEDIAN_EXACT_MAX_WORK,
    METHODS,
    NOISE_ULPS,
    OVERFLOW_GUARD,
    STATISTICS,
    PermutationResult,
    Problem,
)
from app.domain.stattools import choice, log10_int_ratio, sample

__all__ = [
    "ALTERNATIVES",
    "EXACT_MAX_SPLITS_LIMIT",
    "MAX_RESAMPLES",
    "MEDIAN_EXACT_MAX_N",
    "MEDIAN_EXACT_MAX_WORK",
    "METHODS",
    "STATISTICS",
    "PermutationResult",
    "permutation_test",
]


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


def _exact_infeasible(
    statistic: str, n_a: int, n_b: int, exact_max_splits: int
) -> notices.Refusal | None:
    """Why the exact method is not run (``None`` when it is feasible)."""
    n = n_a + n_b
    if statistic == "mean":
        splits = math.comb(n, n_a)
        if splits > exact_max_splits:
            return notices.Refusal(
                "exact-splits-exceeded",
                f"C({n}, {n_a}) = {_count_text(splits)} splits exceed exact_max_splits = "
                f"{exact_max_splits}",
                field="method",
            )
        return None
    if n > MEDIAN_EXACT_MAX_N:
        return notices.Refusal(
            "exact-median-n-exceeded",
            f"n_A + n_B = {n} exceeds {MEDIAN_EXACT_MAX_N} for the exact median count",
            field="method",
        )
    work = median_work(n_a, n_b)
    if work > MEDIAN_EXACT_MAX_WORK:
        return notices.Refusal(
            "exact-median-work-exceeded",
            f"the exact median count of {n_a} vs {n_b} needs {work} terms, more than "
            f"{MEDIAN_EXACT_MAX_WORK}",
            field="method",
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


def _run_exact(prob: Problem, n_resamples: int, seed: int) -> _Outcome:
    if prob.statistic == "median":
        selected = median_exact_count(
            prob.pooled, prob.n_a, prob.n_b, prob.extreme, prob.alternative
        )
        splits = math.comb(prob.n, prob.n_a)
        return _Outcome(
            p_value=selected / splits,  # int true division: correctly rounded
            log10_p_value=log10_int_ratio(selected, splits),
            n_extreme=selected,
        )
    count = mean_exact_count(prob.pooled, prob.n_a, prob.n_b, prob.extreme)
    splits = math.comb(prob.n, prob.n_a)
    return _Outcome(
        p_value=count / splits, log10_p_value=log10_int_ratio(count, splits), n_extreme=count
    )


def _run_monte_carlo(prob: Problem, n_resamples: int, seed: int) -> _Outcome:
    rng = np.random.default_rng(seed)
    null = MC_NULLS[prob.statistic]
    count = 0
    for start in range(0, n_resamples, MC_BATCH):
        size = min(MC_BATCH, n_resamples - start)
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


_METHODS: dict[str, Callable[[Problem, int, int], _Outcome]] = {
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
) -> Problem:
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
    exponent = math.frexp(scale)[1] if scale * pooled.size > OVERFLOW_GUARD else 0
    if exponent:
        xa, ya, pooled = (np.ldexp(a, -exponent) for a in (xa, ya, pooled))
        scale = float(np.max(np.abs(pooled)))
    return Problem(
        pooled=pooled,
        n_a=xa.size,
        n_b=ya.size,
        statistic=stat,
        alternative=alt,
        observed=_observed(xa, ya, stat),
        rtol=float(rtol),
        atol=NOISE_ULPS * pooled.size * float(np.finfo(np.float64).eps) * scale,
        exponent=exponent,
    )


def _choose_method(
    prob: Problem, method: str, exact_max_splits: int
) -> tuple[str, list[notices.Warning]]:
    """The method run and, when ``auto`` fell back to Monte Carlo, the warning saying why."""
    why = _exact_infeasible(prob.statistic, prob.n_a, prob.n_b, exact_max_splits)
    if method == "exact" and why is not None:
        raise NotApplicable(f"the exact test is infeasible: {why.message}", field="method")
    if method == "auto":
        method = "exact" if why is None else "monte_carlo"
        if why is not None:
            return method, [
                notices.Warning(
                    "exact-infeasible",
                    f"exact test infeasible ({why.message}): Monte Carlo used",
                    {"refusal": why.code},
                    field="method",
                )
            ]
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
            notices.Warning(
                "equal-medians",
                "the observed medians are equal: Omran et al. recommend the mean statistic "
                "(statistic='mean') to compare these samples",
                field="statistic",
            )
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
