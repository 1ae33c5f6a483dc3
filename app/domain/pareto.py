"""Pareto-optimal ranking of multi-objective optimizers from per-run indicator scores.

Each run of each algorithm on one problem is scored on several quality indicators (HV, IGD, ...).
The runs of all algorithms are sorted into non-dominated levels (NSGA-II fronts) in indicator space,
each algorithm gets a count of runs per level, and four rules turn the (problem-summed) count matrix
into a ranking of the algorithms [1]_.

Dominance is unchanged by any strictly increasing transform of an indicator, so a larger-is-better
indicator is simply negated (equivalent to the reciprocals of positive values used in [1]_).

Known weakness, surfaced by :func:`specialists`: a run that is strictly best on a single indicator
is never dominated, so it lands on level 1 whatever its other indicators are.

References
----------
.. [1] Ibrahim, A., Bidgoli, A. A., Rahnamayan, S., Deb, K. (2024). "A Novel Pareto-optimal
   Ranking Method for Comparing Multi-objective Optimization Algorithms". arXiv:2411.17999.
.. [2] Deb, K., Pratap, A., Agarwal, S., Meyarivan, T. (2002). "A fast and elitist
   multiobjective genetic algorithm: NSGA-II". IEEE Trans. Evol. Comput. 6(2), 182-197.
.. [3] Kang et al., the ε-dominance variant of Pareto ranking, as summarized in the absrank
   specification (SPEC §7; full citation not verified here): a run dominates another when it is
   better on more indicators than worse and has a smaller norm of its normalized indicator
   vector.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import moocore
import numpy as np
import numpy.typing as npt
from numpy.typing import ArrayLike

from app.domain.errors import InvalidInput
from app.domain.ranking import midranks
from app.domain.stattools import choice

__all__ = [
    "DOMINANCE",
    "RULES",
    "LevelCounts",
    "RankingResult",
    "level_counts",
    "nondominated_levels",
    "rank_algorithms",
    "specialists",
    "sum_counts",
]

DOMINANCE = ("pareto", "epsilon")
RULES = ("olympic", "linear", "exponential", "adaptive", "average")

FloatArray = npt.NDArray[np.float64]
"""Scores, rule scores and ranks (also the fronts of :mod:`app.domain.indicators`)."""
IntArray = npt.NDArray[np.int64]
"""Levels and count matrices."""

# relative tolerance under which two float rule scores count as tied (absorbs summation rounding)
_SCORE_RTOL = 1e-12


def _scores_iv(scores: ArrayLike, maximize: Sequence[bool] | None) -> FloatArray:
    try:
        f = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("scores must be a 2-D array of numbers", field="scores") from exc
    if f.ndim != 2 or f.shape[0] == 0 or f.shape[1] == 0:
        raise InvalidInput(
            f"scores must have shape (n_runs, n_indicators) with both >= 1, got {f.shape}",
            field="scores",
        )
    if not np.isfinite(f).all():
        raise InvalidInput("scores must be finite (no NaN or inf)", field="scores")
    if maximize is None:
        return f
    if isinstance(maximize, str | bytes) or len(maximize) != f.shape[1]:
        raise InvalidInput(
            f"maximize must hold one bool per indicator ({f.shape[1]})", field="maximize"
        )
    if not all(isinstance(m, bool | np.bool_) for m in maximize):
        raise InvalidInput("maximize must hold booleans", field="maximize")
    sign = np.where(np.asarray(maximize, dtype=bool), -1.0, 1.0)
    return f * sign


def _pareto_levels(f: FloatArray) -> IntArray:
    # moocore ranks are 0-based and give duplicated points the same rank
    return np.asarray(moocore.pareto_rank(f), dtype=np.int64) + 1


def _epsilon_levels(f: FloatArray) -> IntArray:
    span = f.max(axis=0) - f.min(axis=0)
    norm_f = np.divide(f - f.min(axis=0), span, out=np.zeros_like(f), where=span > 0)
    norm = np.sqrt((norm_f**2).sum(axis=1))
    better = np.zeros((f.shape[0], f.shape[0]), dtype=np.int64)
    worse = np.zeros_like(better)
    for j in range(f.shape[1]):
        better += f[:, None, j] < f[None, :, j]
        worse += f[:, None, j] > f[None, :, j]
    # dom[i, k]: run i ε-dominates run k [3]_; acyclic because the norm strictly decreases
    dom = (better > worse) & (norm[:, None] < norm[None, :])
    levels = np.zeros(f.shape[0], dtype=np.int64)
    remaining = np.ones(f.shape[0], dtype=bool)
    level = 0
    while remaining.any():
        level += 1
        front = remaining & ~dom[remaining].any(axis=0)
        levels[front] = level
        remaining &= ~front
    return levels


_LEVELS = {"pareto": _pareto_levels, "epsilon": _epsilon_levels}


def nondominated_levels(
    scores: ArrayLike, *, maximize: Sequence[bool] | None = None, dominance: str = "pareto"
) -> IntArray:
    """Non-dominated sorting of runs into levels 1, 2, ... (NSGA-II fronts [2]_).

    Level 1 holds the runs no other run dominates; level ``l`` the runs not dominated once
    levels ``1 .. l−1`` are removed. Run ``y`` dominates ``x`` when ``y`` is no worse on every
    indicator and strictly better on at least one, so **equal vectors never dominate each other
    and share a level**.

    Parameters
    ----------
    scores : array_like, shape (n_runs, n_indicators)
        Indicator values of every run (all algorithms of one problem stacked); finite.
    maximize : sequence of bool, shape (n_indicators,), optional
        ``True`` for a larger-is-better indicator (it is negated). Default: minimize all.
    dominance : {"pareto", "epsilon"}, optional
        ``"pareto"`` (default): plain Pareto dominance. ``"epsilon"``: the variant of [3]_, in
        which run ``y`` dominates ``x`` when ``y`` is strictly better than ``x`` on more indicators
        than it is strictly worse, **and** ``‖ỹ‖₂ < ‖x̃‖₂``, where ``x̃`` is the run's indicator
        vector min–max normalized per indicator over the runs given (this problem); a constant
        indicator normalizes to 0. Pareto dominance implies ε-dominance, so ε level 1 is a subset
        of Pareto level 1; equal vectors still share a level. Runs in O(n_runs² · n_indicators).

    Returns
    -------
    ndarray of int, shape (n_runs,)
        ``levels[i]`` is the 1-based level of run ``i``.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``scores`` not 2-D, empty or non-finite; ``maximize`` of the wrong length or not booleans;
        unknown ``dominance``.

    Notes
    -----
    Pareto levels are ``moocore.pareto_rank`` (0-based ranks, duplicates share a rank) plus one;
    ε levels are peeled from the full n × n dominance matrix.

    Examples
    --------
    >>> nondominated_levels([[0.5], [0.6], [0.3], [0.1], [0.0], [0.9]]).tolist()
    [4, 5, 3, 2, 1, 6]
    >>> nondominated_levels([[1, 2], [2, 1], [1, 2], [2, 2]]).tolist()
    [1, 1, 1, 2]

    A specialist (best on one indicator only) is on level 1 under Pareto dominance, not under ε:

    >>> nondominated_levels([[0, 9, 9], [1, 1, 1]]).tolist()
    [1, 1]
    >>> nondominated_levels([[0, 9, 9], [1, 1, 1]], dominance="epsilon").tolist()
    [2, 1]
    """
    method = choice(dominance, DOMINANCE, "dominance")
    f = _scores_iv(scores, maximize)
    return _LEVELS[method](f)


def specialists(
    scores: ArrayLike, *, maximize: Sequence[bool] | None = None
) -> npt.NDArray[np.bool_]:
    """Level-1 runs that owe their level to being best on a single indicator.

    ``special[i, j]`` is ``True`` when run ``i``

    1. is on level 1 of ``scores``,
    2. attains the best (after orientation: smallest) value of indicator ``j``, and
    3. is dominated by some other run once indicator ``j`` is removed.

    Such a run is non-dominated only because of indicator ``j`` — the weakness of plain Pareto
    ranking noted in the module docstring. With one indicator nothing is a specialist.

    Parameters
    ----------
    scores : array_like, shape (n_runs, n_indicators)
        As :func:`nondominated_levels`.
    maximize : sequence of bool, shape (n_indicators,), optional
        As :func:`nondominated_levels`.

    Returns
    -------
    ndarray of bool, shape (n_runs, n_indicators)

    Raises
    ------
    app.domain.errors.InvalidInput
        As :func:`nondominated_levels`.

    Examples
    --------
    Runs 0 and 1 are each best on one indicator only; run 2 is balanced and not best anywhere:

    >>> specialists([[0.0, 9.0], [9.0, 0.0], [1.0, 1.0]]).tolist()
    [[True, False], [False, True], [False, False]]
    """
    f = _scores_iv(scores, maximize)
    n, m = f.shape
    out = np.zeros((n, m), dtype=bool)
    if m < 2:
        return out
    first = moocore.pareto_rank(f) == 0
    for j in range(m):
        best_j = f[:, j] == f[:, j].min()
        without_j = moocore.pareto_rank(np.delete(f, j, axis=1)) > 0
        out[:, j] = first & best_j & without_j
    return out


def _level_counts_iv(levels: ArrayLike, algorithms: Sequence[Hashable]) -> IntArray:
    lv = np.asarray(levels)
    if lv.ndim != 1 or lv.size == 0 or not np.issubdtype(lv.dtype, np.integer) or lv.min() < 1:
        raise InvalidInput("levels must be a non-empty 1-D array of integers >= 1", field="levels")
    if isinstance(algorithms, str | bytes) or len(algorithms) != lv.size:
        raise InvalidInput(
            f"algorithms must give one label per run ({lv.size})", field="algorithms"
        )
    return lv.astype(np.int64)


class LevelCounts(NamedTuple):
    """What :func:`level_counts` returns.

    Attributes
    ----------
    counts : ndarray of int, shape (k_algorithms, L)
        ``counts[a, l − 1]`` = runs of algorithm ``a`` on level ``l``; ``L = max(levels)``.
    names : list
        Algorithm labels in order of first appearance; row ``a`` of ``counts`` is ``names[a]``.
    """

    counts: IntArray
    names: list[Hashable]


def level_counts(levels: ArrayLike, algorithms: Sequence[Hashable]) -> LevelCounts:
    """Count matrix: runs of each algorithm on each level of one problem.

    Parameters
    ----------
    levels : array_like of int, shape (n_runs,)
        1-based levels from :func:`nondominated_levels`.
    algorithms : sequence, shape (n_runs,)
        Algorithm label of each run (hashable).

    Returns
    -------
    counts : ndarray of int, shape (k_algorithms, L)
        ``counts[a, l − 1]`` = runs of algorithm ``a`` on level ``l``; ``L = max(levels)``.
    names : list
        Algorithm labels in order of first appearance; row ``a`` of ``counts`` is ``names[a]``.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``levels`` not 1-D positive integers; ``algorithms`` of another length.

    Examples
    --------
    >>> c, names = level_counts([1, 2, 1, 3], ["a", "b", "b", "a"])
    >>> c.tolist(), names
    ([[1, 0, 1], [1, 1, 0]], ['a', 'b'])
    """
    lv = _level_counts_iv(levels, algorithms)
    names: list[Hashable] = list(dict.fromkeys(algorithms))
    row = {name: i for i, name in enumerate(names)}
    idx = np.fromiter((row[a] for a in algorithms), dtype=np.int64, count=lv.size)
    counts = np.zeros((len(names), int(lv.max())), dtype=np.int64)
    np.add.at(counts, (idx, lv - 1), 1)
    return LevelCounts(counts, names)


def _counts_iv(counts: ArrayLike, field: str = "counts") -> IntArray:
    try:
        c = np.asarray(counts, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{field} must be a 2-D array of counts", field=field) from exc
    if c.ndim != 2 or c.shape[0] == 0 or c.shape[1] == 0:
        raise InvalidInput(
            f"{field} must have shape (k_algorithms, L) with both >= 1, got {c.shape}", field=field
        )
    if not np.isfinite(c).all() or (c < 0).any() or (c != np.round(c)).any():
        raise InvalidInput(f"{field} must hold non-negative integers", field=field)
    return c.astype(np.int64)


def sum_counts(matrices: Sequence[ArrayLike]) -> IntArray:
    """Add per-problem count matrices level by level, padding shallower ones with zeros.

    Level 1 of every problem is that problem's own first front [1]_. Every matrix must list the
    same algorithms in the same row order.

    Parameters
    ----------
    matrices : sequence of array_like, each shape (k_algorithms, L_p)
        Count matrices from :func:`level_counts`, one per problem.

    Returns
    -------
    ndarray of int, shape (k_algorithms, max_p L_p)

    Raises
    ------
    app.domain.errors.InvalidInput
        No matrices, a matrix that is not a count matrix, or differing numbers of rows.

    Examples
    --------
    >>> sum_counts([[[1, 1], [2, 0]], [[1], [1]]]).tolist()
    [[2, 1], [3, 0]]
    """
    if len(matrices) == 0:
        raise InvalidInput("matrices is empty", field="matrices")
    mats = [_counts_iv(m, field="matrices") for m in matrices]
    k = mats[0].shape[0]
    if any(m.shape[0] != k for m in mats):
        raise InvalidInput("every count matrix must have the same algorithms", field="matrices")
    out = np.zeros((k, max(m.shape[1] for m in mats)), dtype=np.int64)
    for m in mats:
        out[:, : m.shape[1]] += m
    return out


@dataclass(frozen=True)
class RankingResult:
    """Scores and ranks of algorithms under the four rules of [1]_ and their average.

    Attributes
    ----------
    counts : ndarray of int, shape (k_algorithms, L)
        The count matrix ranked (``counts[a, l − 1]`` = runs of ``a`` on level ``l``).
    scores : dict of str to ndarray, each shape (k_algorithms,)
        Per rule in :data:`RULES`. Higher is better for ``olympic`` (number of algorithms whose
        count vector is lexicographically smaller), ``linear``, ``exponential`` and ``adaptive``;
        for ``average`` the score is the mean of the four ranks, so **lower** is better.
    ranks : dict of str to ndarray, each shape (k_algorithms,)
        Per rule, 1 = best; tied scores share the average of the ranks they span (midranks).
    """

    counts: IntArray
    scores: dict[str, FloatArray]
    ranks: dict[str, FloatArray]


def _olympic(c: IntArray) -> FloatArray:
    # rows sorted lexicographically ascending; score = algorithms with a smaller count vector
    _, inverse, sizes = np.unique(c, axis=0, return_inverse=True, return_counts=True)
    below = np.cumsum(sizes) - sizes
    return below[inverse.reshape(-1)].astype(np.float64)


def _linear(c: IntArray) -> FloatArray:
    big_l = c.shape[1]
    return c @ np.arange(big_l, 0, -1, dtype=np.float64)  # weights L − l + 1 [1]_


def _exponential(c: IntArray) -> FloatArray:
    return c @ (0.5 ** np.arange(c.shape[1], dtype=np.float64))  # weights 2^−(l−1) [1]_


def _adaptive(c: IntArray) -> FloatArray:
    cw = np.cumsum(c, axis=1).astype(np.float64)  # CW(a, l) [1]_
    total = cw.sum(axis=0)
    keep = total > 0
    adaptive: FloatArray = (cw[:, keep] / total[keep]).sum(axis=1)
    return adaptive


_SCORERS = {
    "olympic": _olympic,
    "linear": _linear,
    "exponential": _exponential,
    "adaptive": _adaptive,
}


def rank_algorithms(counts: ArrayLike) -> RankingResult:
    r"""Rank algorithms from a (problem-summed) count matrix by the rules of [1]_.

    With ``L`` the number of columns and ``C[a, l]`` the runs of ``a`` on level ``l``:

    - **Olympic**: lexicographic on ``(C[a, 1], C[a, 2], ...)``: more level-1 runs first, ties
      broken by level 2, then 3, ...; only identical count vectors tie.
    - **Linear**: :math:`\sum_l C[a, l]\,(L - l + 1)`.
    - **Exponential**: :math:`\sum_l C[a, l]\,2^{-(l-1)}`.
    - **Adaptive**: :math:`\sum_l CW(a, l) / \mathrm{Total}(l)` with
      :math:`CW(a, l) = \sum_{l' \le l} C[a, l']` and
      :math:`\mathrm{Total}(l) = \sum_a CW(a, l)`;
      levels with ``Total(l) = 0`` are skipped.
    - **Average**: the mean of the four ranks above, ranked (smaller mean = better).

    Higher score = rank 1 (except ``average``). Tie rule: tied scores share the average of the ranks
    they span (midranks); float scores within a relative ``1e-12`` count as tied.

    Parameters
    ----------
    counts : array_like of int, shape (k_algorithms, L)
        Count matrix from :func:`level_counts` or :func:`sum_counts`.

    Returns
    -------
    RankingResult

    Raises
    ------
    app.domain.errors.InvalidInput
        ``counts`` not a 2-D non-empty matrix of non-negative integers.

    Examples
    --------
    >>> res = rank_algorithms([[20, 10, 1], [15, 14, 2]])
    >>> res.scores["linear"].tolist(), res.scores["exponential"].tolist()
    ([81.0, 75.0], [25.25, 22.5])
    >>> res.ranks["average"].tolist()
    [1.0, 2.0]
    """
    c = _counts_iv(counts)
    scores = {rule: f(c) for rule, f in _SCORERS.items()}
    ranks = {rule: midranks(-s, rtol=_SCORE_RTOL) for rule, s in scores.items()}
    scores["average"] = np.mean([ranks[r] for r in _SCORERS], axis=0)
    ranks["average"] = midranks(scores["average"], rtol=_SCORE_RTOL)
    return RankingResult(counts=c, scores=scores, ranks=ranks)
