"""Rank-sum, two-sample KS and A12 (SPEC §5): references, brute force over splits, scipy."""

import itertools
import math
import time

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.stattools import lattice_p
from app.domain.twosample import (
    ALTERNATIVES,
    ks_2samp,
    rank_sum,
    vargha_delaney_a12,
)
from app.domain.twosample._ks import KSPath, ks_exact
from app.domain.twosample._rank_sum import rank_sum_pmf

SCIPY_KS_ALTERNATIVE = {"two-sided": "two-sided", "less": "greater", "greater": "less"}

# --------------------------------------------------------------------------- brute force


def _splits(n: int, n_x: int) -> np.ndarray:
    """Boolean masks (C(n, n_x), n): every way to label n_x of the pooled values as x."""
    combos = list(itertools.combinations(range(n), n_x))
    masks = np.zeros((len(combos), n), dtype=bool)
    for row, c in enumerate(combos):
        masks[row, list(c)] = True
    return masks


def _brute_rank_sum(x, y, alternative: str) -> float:
    pooled = np.concatenate([x, y])
    ranks = stats.rankdata(pooled)
    n_x, n_y = len(x), len(y)
    u = _splits(pooled.size, n_x) @ ranks - n_x * (n_x + 1) / 2
    u_obs = ranks[:n_x].sum() - n_x * (n_x + 1) / 2
    tol = 1e-9
    centre = n_x * n_y / 2
    hit = {
        "less": u <= u_obs + tol,
        "greater": u >= u_obs - tol,
        "two-sided": np.abs(u - centre) >= abs(u_obs - centre) - tol,
    }[alternative]
    return hit.mean()


def _ks_stats(x, y) -> tuple[float, float]:
    """(D+, D−) from the ECDFs evaluated at every pooled value (independent of the module)."""
    x, y = np.sort(x), np.sort(y)
    t = np.concatenate([x, y])
    diff = (
        np.searchsorted(x, t, side="right") / x.size - np.searchsorted(y, t, side="right") / y.size
    )
    return max(diff.max(), 0.0), max(-diff.min(), 0.0)


def _brute_ks(x, y, alternative: str) -> float:
    pooled = np.concatenate([x, y])
    masks = _splits(pooled.size, len(x))
    pick = {"less": 0, "greater": 1}

    def stat(a, b) -> float:
        dp, dm = _ks_stats(a, b)
        return max(dp, dm) if alternative == "two-sided" else (dp, dm)[pick[alternative]]

    d_obs = stat(np.asarray(x, float), np.asarray(y, float))
    d = np.array([stat(pooled[m], pooled[~m]) for m in masks])
    return float(np.mean(d >= d_obs - 1e-12))


# --------------------------------------------------------------------------- rank-sum


def test_rank_sum_reference_with_ties() -> None:
    x, y = np.arange(1, 11), np.arange(2, 25, 2)
    less = rank_sum(x, y, alternative="less")
    greater = rank_sum(x, y, alternative="greater")
    two = rank_sum(x, y)
    assert less.method == greater.method == two.method == "exact"
    assert less.p_value == pytest.approx(0.0060017, rel=1e-4)
    assert greater.p_value == pytest.approx(0.99492, rel=1e-4)
    assert two.p_value == pytest.approx(0.011889, rel=1e-4)
    assert two.statistic == 22.5
    assert two.a12 == pytest.approx(22.5 / 120)
    # swapping the samples mirrors the tails
    assert rank_sum(y, x, alternative="greater").p_value == pytest.approx(less.p_value, rel=1e-12)
    assert rank_sum(y, x, alternative="less").p_value == pytest.approx(greater.p_value, rel=1e-12)
    assert rank_sum(y, x).p_value == pytest.approx(two.p_value, rel=1e-12)
    # scipy's "exact" ignores the ties: 0.0068848 / 0.013770
    assert stats.mannwhitneyu(x, y, alternative="less", method="exact").pvalue == pytest.approx(
        0.0068848, rel=1e-4
    )


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_rank_sum_exact_equals_brute_force_with_ties(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    n_x, n_y = (int(v) for v in rng.integers(1, 8, size=2))
    x, y = rng.integers(0, 5, size=n_x), rng.integers(0, 6, size=n_y)
    if np.unique(np.concatenate([x, y])).size == 1:
        y[0] = 7
    res = rank_sum(x, y, alternative=alternative)
    assert res.method == "exact"
    assert res.p_value == pytest.approx(_brute_rank_sum(x, y, alternative), rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_rank_sum_matches_scipy_exact_without_ties(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    n_x, n_y = (int(v) for v in rng.integers(1, 25, size=2))
    x, y = rng.normal(size=n_x), rng.normal(size=n_y) + 0.4
    res = rank_sum(x, y, alternative=alternative)
    ref = stats.mannwhitneyu(x, y, alternative=alternative, method="exact")
    assert res.statistic == ref.statistic
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)


@pytest.mark.parametrize("continuity", [False, True])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_rank_sum_asymptotic_matches_scipy(continuity: bool, alternative: str) -> None:
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 10, size=40), rng.integers(1, 11, size=35)
    res = rank_sum(x, y, alternative=alternative, method="asymptotic", continuity=continuity)
    ref = stats.mannwhitneyu(
        x, y, alternative=alternative, method="asymptotic", use_continuity=continuity
    )
    assert res.method == "asymptotic"
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)


def test_rank_sum_auto_falls_back_and_exact_beyond_limit_is_refused() -> None:
    x, y = np.arange(30.0), np.arange(30.0) + 0.5
    res = rank_sum(x, y, exact_max_cells=1000)
    assert res.method == "asymptotic"
    assert "cells" in res.method_reason
    assert res.z is not None
    with pytest.raises(NotApplicable) as err:
        rank_sum(x, y, method="exact", exact_max_cells=1000)
    assert err.value.field == "method"


def test_rank_sum_all_tied_is_degenerate() -> None:
    res = rank_sum([2.0, 2.0], [2.0, 2.0, 2.0], alternative="less")
    assert res.p_value == 1.0
    assert res.degenerate
    assert res.reason
    assert res.statistic == 3.0
    assert res.a12 == 0.5


def test_rank_sum_tolerance_creates_ties() -> None:
    a = rank_sum([1.0, 2.0 + 1e-12], [2.0, 3.0], rtol=1e-9)
    b = rank_sum([1.0, 2.0], [2.0, 3.0])
    assert (a.statistic, a.p_value) == (b.statistic, b.p_value)


def test_rank_sum_handles_infinite_runtimes() -> None:
    x = [10.0, 20.0, np.inf, np.inf]
    y = [np.inf, np.inf, np.inf, 30.0]
    res = rank_sum(x, y, alternative="less")
    assert res.p_value == pytest.approx(_brute_rank_sum(np.array(x), np.array(y), "less"))


def test_rank_sum_exact_50_vs_50_with_ties_is_fast() -> None:
    rng = np.random.default_rng(1)
    x, y = np.round(rng.normal(size=50), 1), np.round(rng.normal(size=50) + 0.3, 1)
    rank_sum(x, y)
    t0 = time.perf_counter()
    res = rank_sum(x, y)
    assert time.perf_counter() - t0 < 1.0
    assert res.method == "exact"
    # close to the tie-corrected normal approximation
    assert res.p_value == pytest.approx(stats.mannwhitneyu(x, y).pvalue, rel=0.02)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"x": [np.nan], "y": [1.0]}, "x"),
        ({"x": [1.0], "y": [1.0, np.nan]}, "y"),
        ({"x": [], "y": [1.0]}, "x"),
        ({"x": [1.0], "y": []}, "y"),
        ({"x": [1.0], "y": [2.0], "alternative": "lesser"}, "alternative"),
        ({"x": [1.0], "y": [2.0], "method": "mc"}, "method"),
        ({"x": [1.0], "y": [2.0], "rtol": -1.0}, "rtol"),
        ({"x": [1.0], "y": [2.0], "atol": math.inf}, "atol"),
        ({"x": [1.0], "y": [2.0], "exact_max_cells": -1}, "exact_max_cells"),
    ],
)
def test_rank_sum_invalid_input_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        rank_sum(**kwargs)
    assert err.value.field == field


# --------------------------------------------------------------------------- KS


def test_ks_references() -> None:
    assert ks_2samp([0], [1]).p_value == pytest.approx(1.0, rel=1e-14)
    assert ks_2samp([0], [1, 2]).p_value == pytest.approx(2 / 3, rel=1e-14)
    res = ks_2samp([1, 2], [3, 4, 5, 6])
    assert res.statistic == 1.0
    assert res.p_value == pytest.approx(2 / 15, rel=1e-14)


def test_ks_tie_across_samples_is_conditional_exact() -> None:
    x, y = [1, 1.01, 3, 4], [1.01, 0.5, 0.25]
    res = ks_2samp(x, y)
    assert res.method == "exact"
    assert res.p_value == pytest.approx(12 / 35, rel=1e-13)
    assert res.p_value == pytest.approx(_brute_ks(x, y, "two-sided"), rel=1e-13)
    # scipy's "exact" uses the no-ties distribution: 14/35
    assert stats.ks_2samp(x, y, method="exact").pvalue == pytest.approx(14 / 35)


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_ks_exact_equals_brute_force_with_ties(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(50 + seed)
    n_x, n_y = (int(v) for v in rng.integers(1, 7, size=2))
    x, y = rng.integers(0, 4, size=n_x), rng.integers(0, 5, size=n_y)
    if np.unique(np.concatenate([x, y])).size == 1:
        y[0] = 9
    res = ks_2samp(x, y, alternative=alternative)
    assert res.p_value == pytest.approx(_brute_ks(x, y, alternative), rel=1e-12)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_ks_matches_scipy_exact_without_ties(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    n_x, n_y = (int(v) for v in rng.integers(1, 40, size=2))
    x, y = rng.normal(size=n_x), rng.normal(size=n_y) - 0.5
    res = ks_2samp(x, y, alternative=alternative)
    ref = stats.ks_2samp(x, y, alternative=SCIPY_KS_ALTERNATIVE[alternative], method="exact")
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)


def test_ks_statistics_sign_convention() -> None:
    x, y = [1.0, 2.0, 3.0], [2.5, 4.0, 5.0, 6.0]  # x tends to be smaller
    res = ks_2samp(x, y, alternative="less")
    dp, dm = _ks_stats(x, y)
    assert (res.d_plus, res.d_minus) == pytest.approx((dp, dm))
    assert res.statistic == res.d_plus > res.d_minus
    assert res.p_value < ks_2samp(x, y, alternative="greater").p_value


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_ks_asymptotic_is_scipys(alternative: str) -> None:
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=300), rng.normal(size=200) + 0.1
    res = ks_2samp(x, y, alternative=alternative, method="asymptotic")
    ref = stats.ks_2samp(x, y, alternative=SCIPY_KS_ALTERNATIVE[alternative], method="asymp")
    assert res.method == "asymptotic"
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    auto = ks_2samp(x, y, alternative=alternative, exact_max_paths=100)
    assert auto.method == "asymptotic"
    assert "lattice points" in auto.method_reason
    with pytest.raises(NotApplicable):
        ks_2samp(x, y, method="exact", exact_max_paths=100)


def test_ks_all_tied_is_degenerate() -> None:
    res = ks_2samp([1.0, 1.0], [1.0])
    assert res.p_value == 1.0
    assert res.statistic == 0.0
    assert res.degenerate
    assert res.reason


def test_ks_tiny_p_is_not_rounded_to_zero() -> None:
    res = ks_2samp(np.arange(60.0), np.arange(60.0) + 100, alternative="less")
    assert res.p_value == pytest.approx(1 / math.comb(120, 60), rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"x": [np.nan], "y": [1.0]}, "x"),
        ({"x": [1.0], "y": []}, "y"),
        ({"x": [1.0], "y": [2.0], "alternative": "both"}, "alternative"),
        ({"x": [1.0], "y": [2.0], "exact_max_paths": math.nan}, "exact_max_paths"),
    ],
)
def test_ks_invalid_input_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        ks_2samp(**kwargs)
    assert err.value.field == field


# --------------------------------------------------------------------------- A12


def _brute_a12(x, y) -> float:
    x, y = np.asarray(x, float)[:, None], np.asarray(y, float)[None, :]
    return float(np.mean((x > y) + 0.5 * (x == y)))


@pytest.mark.parametrize("seed", range(5))
def test_a12_equals_pair_counting(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 6, size=9), rng.integers(0, 6, size=13)
    res = vargha_delaney_a12(x, y)
    assert res.a12 == pytest.approx(_brute_a12(x, y), rel=1e-14)
    assert rank_sum(x, y).a12 == pytest.approx(res.a12, rel=1e-14)


def test_a12_direction_under_minimization() -> None:
    res = vargha_delaney_a12([1, 2, 3], [4, 5, 6])
    assert res.a12 == 0.0
    assert res.better == "x"
    assert res.magnitude == "large"
    assert "better" in res.interpretation
    flipped = vargha_delaney_a12([4, 5, 6], [1, 2, 3])
    assert (flipped.a12, flipped.better) == (1.0, "y")
    even = vargha_delaney_a12([1, 2], [1, 2])
    assert (even.a12, even.better, even.magnitude) == (0.5, None, "negligible")


@pytest.mark.parametrize(
    ("wins", "magnitude"),
    [(55, "negligible"), (56, "small"), (63, "small"), (64, "medium"), (71, "large")],
)
def test_a12_thresholds_are_symmetric(wins: int, magnitude: str) -> None:
    # x = 0..99 and one y placed so that P(X > Y) = wins/100 exactly.
    x = np.arange(100.0)
    y = [100 - wins - 0.5]
    hi, lo = vargha_delaney_a12(x, y), vargha_delaney_a12(y, x)
    assert hi.a12 == pytest.approx(wins / 100)
    assert lo.a12 == pytest.approx(1 - wins / 100)
    assert hi.magnitude == lo.magnitude == magnitude


def test_a12_invalid_input() -> None:
    with pytest.raises(InvalidInput) as err:
        vargha_delaney_a12([1.0], [np.nan])
    assert err.value.field == "y"


# --------------------------------------------------------------------------- properties

_small = st.lists(st.integers(-6, 6), min_size=1, max_size=7)
_transforms = st.sampled_from(
    [lambda v: v**3 + 7.0, lambda v: np.exp(v / 3.0), np.arctan, lambda v: 2.0 * v - 11.0]
)


@given(_small, _small, st.sampled_from(ALTERNATIVES), st.sampled_from(["exact", "asymptotic"]))
def test_p_values_in_unit_interval(x, y, alternative, method) -> None:
    for res in (
        rank_sum(x, y, alternative=alternative, method=method),
        ks_2samp(x, y, alternative=alternative, method=method),
    ):
        assert 0.0 <= res.p_value <= 1.0


@given(_small, _small, st.sampled_from(ALTERNATIVES), _transforms)
def test_invariant_under_increasing_transforms(x, y, alternative, f) -> None:
    x, y = np.array(x, dtype=float), np.array(y, dtype=float)
    for test in (rank_sum, ks_2samp):
        a = test(x, y, alternative=alternative)
        b = test(f(x), f(y), alternative=alternative)
        assert (a.statistic, a.p_value) == pytest.approx((b.statistic, b.p_value), rel=1e-12)
    assert vargha_delaney_a12(x, y).a12 == vargha_delaney_a12(f(x), f(y)).a12


@given(_small, _small, st.sampled_from(ALTERNATIVES))
def test_rank_sum_exact_equals_brute_force(x, y, alternative) -> None:
    if len(set(x) | set(y)) == 1:
        return
    res = rank_sum(x, y, alternative=alternative, method="exact")
    assert res.p_value == pytest.approx(_brute_rank_sum(x, y, alternative), rel=1e-12)


@given(st.lists(st.integers(0, 30), min_size=1, max_size=25), st.data())
def test_rank_sum_pmf_sums_to_one(scores, data) -> None:
    m = data.draw(st.integers(0, len(scores)))
    pmf = rank_sum_pmf(np.array(scores), m)
    assert pmf.sum() == pytest.approx(1.0, rel=1e-12)
    assert np.all(pmf >= 0)


@given(_small, _small)
def test_rank_sum_p_non_decreasing_towards_the_centre(x, y) -> None:
    pooled = np.concatenate([x, y])
    scores = np.rint(2 * stats.rankdata(pooled)).astype(np.int64)
    n_x, n_y = len(x), len(y)
    m = n_x
    pmf = rank_sum_pmf(scores, m)[m * (m + 1) : m * (m + 1) + 2 * n_x * n_y + 1]
    big = n_x * n_y
    ks = range(pmf.size)
    two = np.array([lattice_p(pmf, k, 2 * big, "two-sided") for k in ks])
    order = np.argsort([-abs(k - big) for k in ks], kind="stable")
    assert np.all(np.diff(two[order]) >= -1e-15)
    less = np.array([lattice_p(pmf, k, 2 * big, "less") for k in ks])
    assert np.all(np.diff(less) >= -1e-15)


@given(_small, _small, st.sampled_from(ALTERNATIVES))
def test_ks_p_non_increasing_in_the_observed_distance(x, y, alternative) -> None:
    n_x, n_y = len(x), len(y)
    _, labels = np.unique(np.concatenate([x, y]), return_inverse=True)
    ends = np.cumsum(np.bincount(labels))
    is_end = np.zeros(n_x + n_y + 1, dtype=bool)
    is_end[ends] = True
    p = [
        ks_exact(KSPath(is_end=is_end, n_x=n_x, n_y=n_y, d_num=d), alternative)
        for d in range(n_x * n_y + 1)
    ]
    assert p[0] == pytest.approx(1.0, rel=1e-12)
    assert np.all(np.diff(p) <= 1e-15)
