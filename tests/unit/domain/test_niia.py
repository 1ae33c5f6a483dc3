"""NIIA report: pairs whose conclusion flips between the full set and a subset."""

from __future__ import annotations

import numpy as np
import pytest

from app.domain.errors import InvalidInput
from app.domain.niia import Analysis, PairConclusion, conclusions, flip_kinds, niia_check
from app.domain.ranking import rank_rows


def _average_ranks(sub: np.ndarray, members: list[int]) -> Analysis:
    avg = rank_rows(sub).mean(axis=0)
    m = len(members)
    return Analysis(avg, np.full((m, m), None, dtype=object))


def test_the_classic_relative_rank_flip_by_a_third_algorithm() -> None:
    # A beats B on problems 1-2 and loses on 3 by a lot; C sits between them on problem 3 only.
    # Without C: A wins 2 of 3 problems -> A better. With C: C pushes A's rank down on problems
    # 1-2 (C is best there), so B's average drops below A's.
    values = np.array(
        [
            [2.0, 3.0, 1.0],
            [2.0, 3.0, 1.0],
            [3.0, 1.0, 2.0],
        ]
    )
    full, reports = niia_check(values, [[0, 1]], _average_ranks)
    assert full[(0, 1)].order == 0  # A, B tie on average rank with C present: 7/3 each
    (report,) = reports
    assert report.members == (0, 1)
    assert report.pairs_compared == 1
    (flip,) = report.flips
    assert flip.kinds == ("order",)
    assert flip.subset.order == -1  # A alone against B: A wins 2 of 3


def test_absolute_style_analyses_never_flip_order() -> None:
    v = np.random.default_rng(1).random((6, 4))

    def absolute(sub: np.ndarray, members: list[int]) -> Analysis:
        return Analysis(sub.mean(axis=0), np.full((len(members),) * 2, None, dtype=object))

    subsets = [[0, 1], [1, 2, 3], [0, 3]]
    _, reports = niia_check(v, subsets, absolute)
    assert all(r.flips == () for r in reports)


def test_significance_flips_are_reported_separately() -> None:
    full = PairConclusion(order=-1, significant=True)
    assert flip_kinds(full, PairConclusion(-1, False)) == ("significance",)
    assert flip_kinds(full, PairConclusion(1, False)) == ("order", "significance")
    assert flip_kinds(full, PairConclusion(-1, None)) == ()  # not tested in the subset
    assert flip_kinds(full, full) == ()


def test_conclusions_use_full_set_indices() -> None:
    a = Analysis(np.array([2.0, 1.0]), np.array([[None, True], [True, None]], dtype=object))
    out = conclusions(a, [1, 3])
    assert out == {(1, 3): PairConclusion(order=1, significant=True)}


@pytest.mark.parametrize("subset", [[0], [0, 0], [0, 9], [-1, 0]])
def test_bad_subsets_name_the_field(subset: list[int]) -> None:
    with pytest.raises(InvalidInput) as err:
        niia_check(np.ones((3, 3)), [[0, 1], subset], _average_ranks)
    assert err.value.field == "niia_subsets.1"
