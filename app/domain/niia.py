"""Non-independence from irrelevant alternatives (NIIA): which pairwise conclusions flip.

Jing & Liu (Eq. 8) call a ranking-based comparison NIIA-free when the conclusion about a pair
``(A, B)`` does not depend on which other algorithms are in the study. Relative ranks are not:
adding or removing a third algorithm can change the order of ``A`` and ``B`` by average rank, and
whether their difference is significant under a post-hoc procedure. Absolute ranks cannot
change the order (each cell's rank depends on its own value only), but a multiple-testing
adjustment still depends on how many pairs are tested.

A pair's **conclusion** has two parts, reported separately:

* ``order``: ``-1`` when ``A`` (the first of the pair in the full set's algorithm order) has the
  lower (better) average, ``+1`` when ``B`` has, ``0`` when the averages are equal (within a
  relative tolerance of ``1e-12``);
* ``significant``: whether the post-hoc procedure calls the difference significant at ``α``,
  or ``None`` when the procedure does not test this pair (e.g. neither is the control).

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking
       Optimization Algorithms. Eq. 8 (independence from irrelevant alternatives).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from app.domain.errors import InvalidInput

__all__ = [
    "Analysis",
    "Flip",
    "NiiaCheck",
    "PairAnalyses",
    "PairConclusion",
    "SubsetReport",
    "conclusions",
    "flip_kinds",
    "niia_check",
    "niia_report",
]

ORDER_RTOL = 1e-12


@dataclass(frozen=True)
class PairConclusion:
    """The conclusion about one pair ``(i, j)``, ``i < j`` in the full set's order.

    Attributes
    ----------
    order : int
        ``-1``: ``i`` better (lower average); ``+1``: ``j`` better; ``0``: equal averages.
    significant : bool or None
        Post-hoc significance at ``α``; ``None`` when this pair is not tested.
    """

    order: int
    significant: bool | None


@dataclass(frozen=True)
class Analysis:
    """What an analysis of a set of algorithms concludes (input to :func:`conclusions`).

    Attributes
    ----------
    average : ndarray, shape (m,)
        Average rank (or average absolute rank) per algorithm of the set; lower is better.
    significant : ndarray of object, shape (m, m)
        ``True``/``False`` per tested pair, ``None`` where the pair is not tested.
    """

    average: np.ndarray
    significant: np.ndarray


def conclusions(
    analysis: Analysis, members: Sequence[int]
) -> dict[tuple[int, int], PairConclusion]:
    """Pair conclusions of an analysis of the algorithms ``members`` (ascending full-set indices).

    Returns
    -------
    dict
        ``{(i, j): PairConclusion}`` for every pair of members, ``i < j`` as full-set indices.
    """
    avg = np.asarray(analysis.average, dtype=np.float64)
    out: dict[tuple[int, int], PairConclusion] = {}
    for a in range(len(members)):
        for b in range(a + 1, len(members)):
            out[(members[a], members[b])] = _conclusion(
                avg[a], avg[b], analysis.significant[a, b]
            )
    return out


def _conclusion(avg_a: np.float64, avg_b: np.float64, sig: object) -> PairConclusion:
    gap = avg_a - avg_b
    scale = max(abs(avg_a), abs(avg_b), 1e-300)
    order = 0 if abs(gap) <= ORDER_RTOL * scale else (-1 if gap < 0 else 1)
    return PairConclusion(order=order, significant=None if sig is None else bool(sig))


@dataclass(frozen=True, eq=False)  # holds arrays
class PairAnalyses:
    """What the analyses of pairs ``(i[p], j[p])``, each alone, conclude (:func:`niia_report`).

    Attributes
    ----------
    average_i, average_j : ndarray, shape (n_pairs,)
        The pair's averages (lower is better), as its own analysis gives them.
    significant : ndarray of object, shape (n_pairs,)
        ``True``/``False``, or ``None`` where the pair alone is not tested.
    """

    average_i: np.ndarray
    average_j: np.ndarray
    significant: np.ndarray


@dataclass(frozen=True)
class Flip:
    """A pair whose conclusion differs between the full set and a subset.

    Attributes
    ----------
    pair : tuple of int
        ``(i, j)``, full-set indices, ``i < j``.
    kinds : tuple of str
        ``"order"`` and/or ``"significance"``.
    full, subset : PairConclusion
        The two conclusions.
    """

    pair: tuple[int, int]
    kinds: tuple[str, ...]
    full: PairConclusion
    subset: PairConclusion


@dataclass(frozen=True)
class SubsetReport:
    """Flips of one subset.

    Attributes
    ----------
    members : tuple of int
        The subset (full-set indices, ascending).
    pairs_compared : int
        Pairs of the subset.
    flips : tuple of Flip
        Pairs whose conclusion flipped, in (i, j) order.
    """

    members: tuple[int, ...]
    pairs_compared: int
    flips: tuple[Flip, ...]


def flip_kinds(full: PairConclusion, sub: PairConclusion) -> tuple[str, ...]:
    """``("order",)``, ``("significance",)``, both, or ``()`` when nothing flipped.

    Significance is compared only where both analyses test the pair.
    """
    kinds = []
    if full.order != sub.order:
        kinds.append("order")
    if full.significant is not None and sub.significant is not None:
        if full.significant != sub.significant:
            kinds.append("significance")
    return tuple(kinds)


class NiiaCheck(NamedTuple):
    """Conclusions on the full set and the report of each subset (unpacks as
    ``full, reports``).

    Attributes
    ----------
    full : dict of (int, int) to PairConclusion
        Every pair's conclusion on the full set.
    reports : tuple of SubsetReport
        One per subset, in the order given.
    """

    full: dict[tuple[int, int], PairConclusion]
    reports: tuple[SubsetReport, ...]


def niia_check(
    values: ArrayLike,
    subsets: Sequence[Sequence[int]],
    analyse: Callable[[np.ndarray, list[int]], Analysis],
) -> NiiaCheck:
    """Compare every pair's conclusion on the full set with its conclusion on each subset.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        The matrix the analysis runs on (relative ranks are recomputed within each subset).
    subsets : sequence of sequence of int
        Algorithm subsets (column indices, at least 2 distinct each).
    analyse : callable
        ``analyse(submatrix, members) -> Analysis`` for the columns ``members`` (ascending
        full-set indices; ``submatrix = values[:, members]``).

    Returns
    -------
    full : dict
        Conclusions on the full set, ``{(i, j): PairConclusion}``.
    reports : tuple of SubsetReport
        One per subset, in input order.

    Raises
    ------
    app.domain.errors.InvalidInput
        A subset with fewer than 2 distinct algorithms or an index out of range
        (field ``niia_subsets``).
    """
    a = np.asarray(values, dtype=np.float64)
    k = a.shape[1]
    everyone = list(range(k))
    full = conclusions(analyse(a, everyone), everyone)
    reports = []
    for s, subset in enumerate(subsets):
        members = sorted({int(i) for i in subset})
        if len(members) < 2 or members[0] < 0 or members[-1] >= k:
            raise InvalidInput(
                f"subset {s} needs at least 2 distinct known algorithms", field=f"niia_subsets.{s}"
            )
        sub = conclusions(analyse(a[:, members], members), members)
        flips = tuple(
            Flip(pair=pair, kinds=kinds, full=full[pair], subset=c)
            for pair, c in sorted(sub.items())
            if (kinds := flip_kinds(full[pair], c))
        )
        reports.append(SubsetReport(tuple(members), len(sub), flips))
    return NiiaCheck(full, tuple(reports))


def _members(subsets: Sequence[Sequence[int]], k: int) -> list[list[int]]:
    out = []
    for s, subset in enumerate(subsets):
        members = sorted({int(i) for i in subset})
        if len(members) < 2 or members[0] < 0 or members[-1] >= k:
            raise InvalidInput(
                f"subset {s} needs at least 2 distinct known algorithms", field=f"niia_subsets.{s}"
            )
        out.append(members)
    return out


def niia_report(
    full: Analysis,
    subsets: Sequence[Sequence[int]],
    analyse: Callable[[list[int]], Analysis],
    analyse_pairs: Callable[[np.ndarray, np.ndarray], PairAnalyses],
) -> NiiaCheck:
    """:func:`niia_check` from the full set's analysis, already made, and two analysers: one of
    any subset, and one of many pairs at once (each pair alone), which the subsets of two
    algorithms (the default report: every pair) go through together.

    Parameters
    ----------
    full : Analysis
        The analysis of all ``k`` algorithms (``len(full.average) == k``).
    subsets : sequence of sequence of int
        As in :func:`niia_check`.
    analyse : callable
        ``analyse(members) -> Analysis`` of the columns ``members`` (ascending full-set indices),
        as :func:`niia_check`'s ``analyse(values[:, members], members)``.
    analyse_pairs : callable
        ``analyse_pairs(i, j) -> PairAnalyses`` of the pairs ``(i[p], j[p])``, ``i < j``, each
        alone: for every pair, what ``analyse([i[p], j[p]])`` concludes.

    Returns
    -------
    NiiaCheck
        Equal to :func:`niia_check` with the same analyses.

    Raises
    ------
    app.domain.errors.InvalidInput
        As :func:`niia_check` (checked before any subset is analysed).
    """
    k = len(full.average)
    everyone = list(range(k))
    full_c = conclusions(full, everyone)
    members = _members(subsets, k)
    two = [s for s, m in enumerate(members) if len(m) == 2]
    pair_c: dict[int, PairConclusion] = {}
    if two:
        i = np.array([members[s][0] for s in two], dtype=np.intp)
        j = np.array([members[s][1] for s in two], dtype=np.intp)
        res = analyse_pairs(i, j)
        avg_i = np.asarray(res.average_i, dtype=np.float64)
        avg_j = np.asarray(res.average_j, dtype=np.float64)
        for p, s in enumerate(two):
            pair_c[s] = _conclusion(avg_i[p], avg_j[p], res.significant[p])
    reports = []
    for s, m in enumerate(members):
        if s in pair_c:
            sub = {(m[0], m[1]): pair_c[s]}
        else:
            sub = conclusions(analyse(m), m)
        flips = tuple(
            Flip(pair=pair, kinds=kinds, full=full_c[pair], subset=c)
            for pair, c in sorted(sub.items())
            if (kinds := flip_kinds(full_c[pair], c))
        )
        reports.append(SubsetReport(tuple(m), len(sub), flips))
    return NiiaCheck(full_c, tuple(reports))
