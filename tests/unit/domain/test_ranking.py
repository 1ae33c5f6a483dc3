"""The one tie rule: midranks, tolerances, NaN refused; row ranks equal scipy's rankdata."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from app.domain.errors import InvalidInput
from app.domain.ranking import check_tolerances, midranks, rank_rows, tie_labels, tie_sizes

VALUES = st.sampled_from([-np.inf, -2.5, -1.0, 0.0, 0.5, 1.0, 3.0, np.inf])


@given(
    hnp.arrays(np.float64, hnp.array_shapes(min_dims=2, max_dims=2, max_side=9), elements=VALUES)
)
def test_rank_rows_equal_scipy_and_sum_per_row(a: np.ndarray) -> None:
    ranks = rank_rows(a)
    assert np.array_equal(ranks, stats.rankdata(a, axis=1).reshape(a.shape))
    k = a.shape[1]
    assert np.allclose(ranks.sum(axis=1), k * (k + 1) / 2)


@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=12))
def test_midranks_are_invariant_under_increasing_transforms(ints: list[int]) -> None:
    a = np.array(ints, dtype=np.float64)
    # x^3 + 2x is strictly increasing and exact in float64 on these integers
    assert np.array_equal(midranks(a), midranks(a**3 + 2 * a))


def test_tolerance_chains_near_values_into_one_group() -> None:
    a = [1.0, 1.0 + 1e-12, 1.0 + 2e-12, 2.0]
    assert midranks(a).tolist() == [1.0, 2.0, 3.0, 4.0]
    assert midranks(a, rtol=2e-12).tolist() == [2.0, 2.0, 2.0, 4.0]
    assert tie_sizes(a, rtol=2e-12).tolist() == [3, 1]
    assert midranks([0.0, 1e-9], atol=1e-9).tolist() == [1.5, 1.5]
    assert rank_rows([[1.0, 1.0000001, 2.0]], rtol=1e-6).tolist() == [[1.5, 1.5, 3.0]]


def test_infinities_tie_only_with_themselves() -> None:
    order, labels = tie_labels([np.inf, 1.0, np.inf, -np.inf], rtol=0.5)
    assert labels.tolist() == [0, 1, 2, 2]
    assert order.tolist() == [3, 1, 0, 2]


@pytest.mark.parametrize("bad", [[1.0, np.nan], [[1.0, 2.0]]])
def test_nan_and_wrong_shapes_are_refused(bad: list) -> None:
    with pytest.raises(InvalidInput) as err:
        midranks(bad, field="x")
    assert err.value.field == "x"


@pytest.mark.parametrize(("rtol", "atol", "field"), [(-1.0, 0.0, "rtol"), (0.0, np.inf, "atol")])
def test_bad_tolerances_name_their_field(rtol: float, atol: float, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        check_tolerances(rtol, atol)
    assert err.value.field == field


def test_rank_rows_refuses_nan_and_one_dimensional_input() -> None:
    with pytest.raises(InvalidInput):
        rank_rows([[1.0, np.nan]])
    with pytest.raises(InvalidInput):
        rank_rows([1.0, 2.0])
    assert rank_rows(np.zeros((0, 3))).shape == (0, 3)
