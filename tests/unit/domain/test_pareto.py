"""Pareto-optimal ranking: levels against a brute-force peeling and pymoo, rules against [1].

[1] Ibrahim, Bidgoli, Rahnamayan, Deb (2024), arXiv:2411.17999 (worked counts a1, a2).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

from app.domain.errors import InvalidInput
from app.domain.pareto import (
    RULES,
    level_counts,
    nondominated_levels,
    rank_algorithms,
    specialists,
    sum_counts,
)

# small integer grid: many duplicates and per-indicator ties
GRID = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 14), st.integers(1, 4)),
    elements=st.integers(0, 3).map(float),
)
FLOATS = hnp.arrays(
    np.float64,
    st.tuples(st.integers(1, 14), st.integers(1, 4)),
    elements=st.floats(-100, 100, allow_nan=False, allow_infinity=False),
)


def _dominates(y: np.ndarray, x: np.ndarray) -> bool:
    return bool(np.all(y <= x) and np.any(y < x))


def _peel(f: np.ndarray) -> np.ndarray:
    """Brute-force NSGA-II levels: repeatedly remove the runs no remaining run dominates."""
    n = f.shape[0]
    levels = np.zeros(n, dtype=np.int64)
    remaining = set(range(n))
    level = 0
    while remaining:
        level += 1
        front = {i for i in remaining if not any(_dominates(f[j], f[i]) for j in remaining)}
        for i in front:
            levels[i] = level
        remaining -= front
    return levels


# --- nondominated_levels -------------------------------------------------------------------


def test_one_indicator_reference() -> None:
    levels = nondominated_levels([[0.5], [0.6], [0.3], [0.1], [0.0], [0.9]])
    assert levels.tolist() == [4, 5, 3, 2, 1, 6]
    assert np.flatnonzero(levels == 1).tolist() == [4]


def test_equal_vectors_share_a_level() -> None:
    f = [[1, 2], [1, 2], [2, 1], [3, 3], [1, 3], [2, 2], [3, 3]]
    assert nondominated_levels(f).tolist() == [1, 1, 1, 3, 2, 2, 3]


@given(GRID)
def test_levels_equal_brute_force_peeling(f: np.ndarray) -> None:
    assert np.array_equal(nondominated_levels(f), _peel(f))


@given(FLOATS)
def test_levels_equal_pymoo_without_duplicates(f: np.ndarray) -> None:
    assume(np.unique(f, axis=0).shape[0] == f.shape[0])
    _, rank = NonDominatedSorting().do(f, return_rank=True)
    assert np.array_equal(nondominated_levels(f), rank + 1)


@given(GRID)
def test_levels_equal_pymoo_with_duplicates(f: np.ndarray) -> None:
    # pymoo 0.6.2's default fast non-dominated sort also puts equal vectors on one level
    # (checked here, not assumed: the brief warned it might differ).
    _, rank = NonDominatedSorting().do(f, return_rank=True)
    assert np.array_equal(nondominated_levels(f), rank + 1)


@given(GRID, st.data())
def test_maximize_negates_the_column(f: np.ndarray, data: st.DataObject) -> None:
    mx = data.draw(st.lists(st.booleans(), min_size=f.shape[1], max_size=f.shape[1]))
    flipped = np.where(mx, -f, f)
    assert np.array_equal(nondominated_levels(f, maximize=mx), nondominated_levels(flipped))


@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 12), st.integers(1, 3)),
        elements=st.integers(-50, 50).map(float),
    )
)
def test_levels_invariant_under_increasing_transforms(f: np.ndarray) -> None:
    # x^3 + 2x, exp(x / 10) and arctan are strictly increasing; one per column (cycled)
    transforms = (lambda x: x**3 + 2 * x, lambda x: np.exp(x / 10), np.arctan)
    g = np.column_stack([transforms[j % 3](f[:, j]) for j in range(f.shape[1])])
    assert np.array_equal(nondominated_levels(f), nondominated_levels(g))


@given(GRID, st.data())
def test_adding_a_run_that_dominates_nobody_keeps_other_levels(
    f: np.ndarray, data: st.DataObject
) -> None:
    m = f.shape[1]
    x = np.array(data.draw(st.lists(st.integers(0, 4), min_size=m, max_size=m)), dtype=float)
    assume(not any(_dominates(x, row) for row in f))
    before = nondominated_levels(f)
    after = nondominated_levels(np.vstack([f, x]))
    assert np.array_equal(after[:-1], before)


@pytest.mark.parametrize("bad", [[[np.nan, 1.0]], [[np.inf, 1.0]], [[1.0, -np.inf]]])
def test_non_finite_scores_refused(bad: list[list[float]]) -> None:
    with pytest.raises(InvalidInput) as err:
        nondominated_levels(bad)
    assert err.value.field == "scores"


@pytest.mark.parametrize("bad", [[1.0, 2.0], [[]], [["a", 1.0]], np.zeros((0, 2))])
def test_malformed_scores_refused(bad: object) -> None:
    with pytest.raises(InvalidInput) as err:
        nondominated_levels(bad)  # type: ignore[arg-type]
    assert err.value.field == "scores"


@pytest.mark.parametrize("mx", [[True], [True, False, True], "ab", [1, 0]])
def test_bad_maximize_refused(mx: object) -> None:
    with pytest.raises(InvalidInput) as err:
        nondominated_levels([[1.0, 2.0]], maximize=mx)  # type: ignore[arg-type]
    assert err.value.field == "maximize"


# --- specialists ---------------------------------------------------------------------------


def test_specialists_hand_example() -> None:
    f = np.array(
        [
            [-1.0, 5.0, 5.0],  # uniquely best on indicator 0, poor elsewhere
            [1.0, 1.0, 1.0],  # balanced; best (tied) on indicators 1 and 2
            [1.0, 1.0, 1.0],  # duplicate of run 1
            [2.0, 2.0, 2.0],  # dominated by run 1: level 2
            [0.0, 1.0, 2.0],  # best (tied) on indicator 1 only
        ]
    )
    assert nondominated_levels(f).tolist() == [1, 1, 1, 2, 1]
    special = specialists(f)
    # run 0 without indicator 0 is (5, 5), dominated by (1, 1): a specialist on 0
    assert special[0].tolist() == [True, False, False]
    # runs 1, 2 without indicator 2 are (1, 1), dominated by run 4's (0, 1): specialists on 2;
    # without indicator 1 they are (1, 1), not dominated by (-1, 5) or (0, 2): not on 1
    assert special[1].tolist() == [False, False, True]
    assert special[2].tolist() == [False, False, True]
    # run 4 is best only on indicator 1 and (0, 2) stays non-dominated without it
    assert not special[4].any()
    assert not special[3].any()  # a level-2 run is never a specialist


def test_specialists_need_two_indicators_and_respect_maximize() -> None:
    assert not specialists([[0.0], [1.0]]).any()
    f = np.array([[0.0, 9.0], [9.0, 0.0], [1.0, 1.0]])
    assert np.array_equal(specialists(f), specialists(-f, maximize=[True, True]))


# --- level_counts / sum_counts ---------------------------------------------------------------


def test_level_counts_rows_in_first_appearance_order() -> None:
    counts, names = level_counts([1, 2, 1, 3, 1], ["b", "a", "a", "b", "b"])
    assert names == ["b", "a"]
    assert counts.tolist() == [[2, 0, 1], [1, 1, 0]]


@given(GRID, st.data())
def test_level_counts_sum_to_runs(f: np.ndarray, data: st.DataObject) -> None:
    n = f.shape[0]
    algos = data.draw(st.lists(st.sampled_from("xyz"), min_size=n, max_size=n))
    levels = nondominated_levels(f)
    counts, names = level_counts(levels, algos)
    assert counts.shape == (len(set(algos)), levels.max())
    assert counts.sum(axis=1).tolist() == [algos.count(a) for a in names]


@pytest.mark.parametrize(
    ("levels", "algos", "field"),
    [
        ([0, 1], ["a", "b"], "levels"),
        ([1.5, 1], ["a", "b"], "levels"),
        ([], [], "levels"),
        ([1, 2], ["a"], "algorithms"),
        ([1, 2], "ab", "algorithms"),
    ],
)
def test_level_counts_refuses(levels: list[float], algos: object, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        level_counts(levels, algos)  # type: ignore[arg-type]
    assert err.value.field == field


def test_sum_counts_pads_to_deepest_problem() -> None:
    total = sum_counts([[[1, 2], [3, 0]], [[1, 0, 5], [0, 1, 0]], [[4], [4]]])
    assert total.tolist() == [[6, 2, 5], [7, 1, 0]]


@pytest.mark.parametrize("mats", [[], [[[1, 2]], [[1], [2]]], [[[1, -1]]], [[[1.5]]], [[[np.nan]]]])
def test_sum_counts_refuses(mats: list[object]) -> None:
    with pytest.raises(InvalidInput) as err:
        sum_counts(mats)  # type: ignore[arg-type]
    assert err.value.field == "matrices"


# --- rank_algorithms -------------------------------------------------------------------------


def test_paper_reference_counts() -> None:
    res = rank_algorithms([[20, 10, 1], [15, 14, 2]])
    assert res.scores["linear"].tolist() == [81.0, 75.0]
    assert res.scores["exponential"].tolist() == [25.25, 22.5]
    assert np.round(res.scores["adaptive"], 2).tolist() == [1.58, 1.42]
    # exact: 20/35 + 30/59 + 31/62 and 15/35 + 29/59 + 31/62
    assert res.scores["adaptive"] == pytest.approx(
        [20 / 35 + 30 / 59 + 0.5, 15 / 35 + 29 / 59 + 0.5]
    )
    for rule in RULES:
        assert res.ranks[rule].tolist() == [1.0, 2.0], rule
    assert res.counts.tolist() == [[20, 10, 1], [15, 14, 2]]


def test_olympic_is_lexicographic_and_ties_only_identical_vectors() -> None:
    c = [[3, 0, 0], [2, 9, 9], [3, 0, 0], [2, 9, 10], [0, 0, 20]]
    res = rank_algorithms(c)
    assert res.ranks["olympic"].tolist() == [1.5, 4.0, 1.5, 3.0, 5.0]
    assert res.scores["olympic"].tolist() == [3.0, 1.0, 3.0, 2.0, 0.0]


def test_tied_scores_share_midranks() -> None:
    # linear: 2*2 + 0 = 4 and 1*2 + 2*1 = 4 tie; exponential 2 vs 2 tie; olympic does not tie
    res = rank_algorithms([[2, 0], [1, 2], [0, 1]])
    assert res.scores["linear"].tolist() == [4.0, 4.0, 1.0]
    assert res.ranks["linear"].tolist() == [1.5, 1.5, 3.0]
    assert res.ranks["exponential"].tolist() == [1.5, 1.5, 3.0]
    assert res.ranks["olympic"].tolist() == [1.0, 2.0, 3.0]
    expected = np.mean([res.ranks[r] for r in ("olympic", "linear", "exponential", "adaptive")], 0)
    assert np.array_equal(res.scores["average"], expected)


def test_adaptive_skips_empty_leading_levels() -> None:
    res = rank_algorithms([[0, 1, 1], [0, 2, 0]])
    # Total(1) = 0 skipped; CW: a=(0,1,2), b=(0,2,2); Totals (.,3,4)
    assert res.scores["adaptive"] == pytest.approx([1 / 3 + 2 / 4, 2 / 3 + 2 / 4])


@given(
    hnp.arrays(
        np.int64,
        st.tuples(st.integers(1, 6), st.integers(1, 5)),
        elements=st.integers(0, 20),
    )
)
@settings(max_examples=50)
def test_ranks_are_midranks_summing_to_k(c: np.ndarray) -> None:
    res = rank_algorithms(c)
    k = c.shape[0]
    for rule in RULES:
        assert res.ranks[rule].sum() == pytest.approx(k * (k + 1) / 2), rule
    # identical count vectors get identical ranks under every rule
    same = np.vstack([c, c[:1]])
    r2 = rank_algorithms(same)
    for rule in RULES:
        assert r2.ranks[rule][0] == r2.ranks[rule][-1], rule


@pytest.mark.parametrize("bad", [[1, 2], [[-1, 2]], [[0.5]], [[]], [[np.inf]]])
def test_rank_algorithms_refuses(bad: object) -> None:
    with pytest.raises(InvalidInput) as err:
        rank_algorithms(bad)  # type: ignore[arg-type]
    assert err.value.field == "counts"


# --- ε-dominance variant ---------------------------------------------------------------------


def _eps_peel(f: np.ndarray) -> np.ndarray:
    """Brute-force ε levels: pairwise counts and min–max-normalized Euclidean norms."""
    lo, hi = f.min(axis=0), f.max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    norms = [float(np.linalg.norm((row - lo) / span)) for row in f]

    def dom(i: int, k: int) -> bool:
        better = int(np.sum(f[i] < f[k]))
        worse = int(np.sum(f[i] > f[k]))
        return better > worse and norms[i] < norms[k]

    n = f.shape[0]
    levels = np.zeros(n, dtype=np.int64)
    remaining = set(range(n))
    level = 0
    while remaining:
        level += 1
        front = {k for k in remaining if not any(dom(i, k) for i in remaining)}
        for k in front:
            levels[k] = level
        remaining -= front
    return levels


def test_epsilon_hand_example() -> None:
    # normalized: run 0 = (0, 1, 1), run 1 = (1, 0, 0), run 2 = (0.5, 0.5, 0.5)
    f = [[0.0, 8.0, 8.0], [2.0, 0.0, 0.0], [1.0, 4.0, 4.0]]
    assert nondominated_levels(f).tolist() == [1, 1, 1]
    # norms: run 0 sqrt(2), run 1 1, run 2 sqrt(3)/2. Runs 1 and 2 are each better than run 0 on
    # 2 of 3 indicators with a smaller norm, so both ε-dominate it. Run 1 is better than run 2 on
    # 2 of 3 but has the larger norm; run 2 is better than run 1 on 1 of 3: neither dominates.
    assert nondominated_levels(f, dominance="epsilon").tolist() == [2, 1, 1]


@given(GRID)
def test_epsilon_levels_equal_brute_force(f: np.ndarray) -> None:
    assert np.array_equal(nondominated_levels(f, dominance="epsilon"), _eps_peel(f))


@given(GRID)
def test_epsilon_first_level_within_pareto_first_level(f: np.ndarray) -> None:
    eps1 = nondominated_levels(f, dominance="epsilon") == 1
    par1 = nondominated_levels(f) == 1
    assert eps1.any()
    assert not (eps1 & ~par1).any()


def test_unknown_dominance_refused() -> None:
    with pytest.raises(InvalidInput) as err:
        nondominated_levels([[1.0]], dominance="strong")
    assert err.value.field == "dominance"
