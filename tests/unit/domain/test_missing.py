"""Declared missing-value policies: NaN is never ranked as data."""

from __future__ import annotations

import numpy as np
import pytest

from app.domain.errors import InvalidInput
from app.domain.missing import apply_matrix_policy, apply_paired_policy, apply_sample_policy

NAN = np.nan
M = np.array([[1.0, 2.0, 3.0], [NAN, 1.0, 2.0], [4.0, np.inf, 1.0], [2.0, 3.0, 5.0]])


def test_reject_names_the_first_missing_cell() -> None:
    with pytest.raises(InvalidInput) as err:
        apply_matrix_policy(M)
    assert err.value.field == "values.1.0"
    assert "2 missing" in str(err.value)


def test_reject_passes_complete_matrices_untouched() -> None:
    a = np.arange(6.0).reshape(2, 3)
    out, kept, report = apply_matrix_policy(a)
    assert np.array_equal(out, a)
    assert kept.all()
    assert report.n_missing == 0


def test_drop_problem_removes_rows_and_says_which() -> None:
    out, kept, report = apply_matrix_policy(M, policy="drop-problem")
    assert out.tolist() == [[1.0, 2.0, 3.0], [2.0, 3.0, 5.0]]
    assert kept.tolist() == [True, False, False, True]
    assert report.dropped == (1, 2)
    assert report.n_missing == 2


def test_worst_rank_is_plus_infinity() -> None:
    out, _, report = apply_matrix_policy(M, policy="worst-rank")
    assert out[1, 0] == np.inf
    assert out[2, 1] == np.inf
    assert report.filled == 2


def test_par_k_penalizes_by_k_times_the_worst_present_value() -> None:
    out, _, report = apply_matrix_policy(M, policy="par-k", par_k=10.0)
    assert out[1, 0] == 20.0
    assert out[2, 1] == 40.0
    assert report.par_k == 10.0


def test_par_k_refuses_non_positive_values() -> None:
    bad = np.array([[-1.0, NAN], [1.0, 2.0]])
    with pytest.raises(InvalidInput) as err:
        apply_matrix_policy(bad, policy="par-k")
    assert err.value.field == "missing"
    with pytest.raises(InvalidInput) as err:
        apply_matrix_policy(np.array([[NAN, NAN], [1.0, 2.0]]), policy="par-k")
    assert err.value.field == "values.0"


def test_unknown_policy_names_the_field() -> None:
    with pytest.raises(InvalidInput) as err:
        apply_matrix_policy(M, policy="impute")
    assert err.value.field == "missing"


def test_samples_drop_or_reject() -> None:
    with pytest.raises(InvalidInput) as err:
        apply_sample_policy([1.0, NAN], field="y")
    assert err.value.field == "y.1"
    kept, report = apply_sample_policy([1.0, NAN, 3.0], policy="drop")
    assert kept.tolist() == [1.0, 3.0]
    assert report.dropped == (1,)
    with pytest.raises(InvalidInput):
        apply_sample_policy([NAN], policy="drop")


def test_paired_drop_removes_the_pair_and_refuses_ragged() -> None:
    x, y, report = apply_paired_policy([1.0, NAN, 3.0], [2.0, 2.0, NAN], policy="drop")
    assert x.tolist() == [1.0]
    assert y.tolist() == [2.0]
    assert report.dropped == (1, 2)
    with pytest.raises(InvalidInput) as err:
        apply_paired_policy([1.0, 2.0], [1.0])
    assert err.value.field == "y"
