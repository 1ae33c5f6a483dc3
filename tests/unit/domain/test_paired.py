"""Wilcoxon signed-rank and sign test (SPEC §4): references, brute force, scipy, properties."""

import itertools
import math
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.paired import (
    ALTERNATIVES,
    ZERO_METHODS,
    sign_test,
    signed_rank_pmf,
    wilcoxon_signed_rank,
)
from app.domain.stattools import lattice_p

# --------------------------------------------------------------------------- brute force


def _brute_wilcoxon(d: np.ndarray, zero_method: str, alternative: str) -> tuple[float, float]:
    """W+ and p by enumerating all 2^m sign flips of the m non-zero differences."""
    d = np.asarray(d, dtype=float)
    zero = d == 0
    a = np.abs(d)
    if zero_method == "wilcox":
        ranks = np.zeros(d.size)
        ranks[~zero] = stats.rankdata(a[~zero])
    else:
        ranks = stats.rankdata(a)
    const = ranks[zero].sum() / 2 if zero_method == "zsplit" else 0.0
    r = ranks[~zero]
    w_obs = const + ranks[d > 0].sum()
    signs = np.array(list(itertools.product([0, 1], repeat=r.size)), dtype=float).reshape(
        -1, r.size
    )
    w = const + signs @ r
    tol = 1e-9
    if alternative == "less":
        hit = w <= w_obs + tol
    elif alternative == "greater":
        hit = w >= w_obs - tol
    else:
        mean = w.mean()
        hit = np.abs(w - mean) >= abs(w_obs - mean) - tol
    return w_obs, hit.mean()


# --------------------------------------------------------------------------- Wilcoxon references


def test_alternating_reference_p_is_one_never_above() -> None:
    d = [-1, -2, 3, 4, -5, 6, 7, 8, -9, -10, 11, -12]
    res = wilcoxon_signed_rank(d)
    assert res.statistic == 39.0  # = n(n+1)/4, the centre
    assert res.p_value == 1.0
    assert res.method == "exact"
    assert res.z is None
    assert not res.degenerate


def test_all_positive_55_is_two_over_two_to_the_55() -> None:
    d = np.arange(1, 56)
    res = wilcoxon_signed_rank(d)
    assert res.p_value > 0
    assert res.p_value == pytest.approx(2 / 2**55, rel=1e-12)
    assert wilcoxon_signed_rank(d, alternative="greater").p_value == pytest.approx(
        2.0**-55, rel=1e-12
    )
    assert wilcoxon_signed_rank(d, alternative="less").p_value == 1.0
    # scipy 1.17 returns exactly 0 here (1 - cdf cancellation)
    assert stats.wilcoxon(d, method="exact").pvalue == 0.0


@pytest.mark.parametrize("zero_method", ZERO_METHODS)
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_all_zero_differences_are_degenerate(zero_method: str, alternative: str) -> None:
    x = [1.0, 2.0, 3.5, np.inf]
    res = wilcoxon_signed_rank(x, x, zero_method=zero_method, alternative=alternative)
    assert res.p_value == 1.0
    assert res.n_effective == 0
    assert res.n_zeros == 4
    assert res.degenerate
    assert res.reason
    assert res.statistic == (5.0 if zero_method == "zsplit" else 0.0)  # half of 1+2+3+4


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_matches_scipy_exact_without_ties(seed: int, alternative: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    x, y = rng.normal(size=n), rng.normal(size=n) + 0.3
    ours = wilcoxon_signed_rank(x, y, alternative=alternative)
    ref = stats.wilcoxon(x, y, alternative=alternative, method="exact")
    assert ours.method == "exact"
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)
    if alternative != "two-sided":
        assert ours.statistic == pytest.approx(ref.statistic)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("zero_method", ZERO_METHODS)
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_exact_equals_brute_force_with_ties_and_zeros(
    seed: int, zero_method: str, alternative: str
) -> None:
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(1, 15))
    d = rng.integers(-4, 5, size=n).astype(float)  # many ties, some zeros
    w, p = _brute_wilcoxon(d, zero_method, alternative)
    res = wilcoxon_signed_rank(d, zero_method=zero_method, alternative=alternative)
    assert res.statistic == pytest.approx(w, abs=1e-12)
    assert res.p_value == pytest.approx(p, rel=1e-12, abs=1e-15)
    assert res.n_zeros == int(np.sum(d == 0))


def test_zero_tol_makes_small_differences_zero() -> None:
    d = np.array([0.001, -0.002, 1.0, 2.0, -3.0, 4.0])
    for zm in ZERO_METHODS:
        a = wilcoxon_signed_rank(d, zero_method=zm, zero_tol=0.01)
        b = wilcoxon_signed_rank([0, 0, 1.0, 2.0, -3.0, 4.0], zero_method=zm)
        assert a.n_zeros == 2
        assert (a.statistic, a.p_value) == (b.statistic, b.p_value)
        assert a.zero_tol == 0.01


def test_equal_infinities_are_zero_differences() -> None:
    res = wilcoxon_signed_rank([np.inf, 2.0, np.inf], [np.inf, 1.0, 0.0], zero_method="wilcox")
    assert res.n_zeros == 1
    assert res.n_effective == 2
    assert res.statistic == 3.0


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox"])
@pytest.mark.parametrize("continuity", [False, True])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_asymptotic_matches_scipy(zero_method: str, continuity: bool, alternative: str) -> None:
    rng = np.random.default_rng(7)
    d = rng.integers(-6, 9, size=60).astype(float)
    ours = wilcoxon_signed_rank(
        d,
        zero_method=zero_method,
        method="asymptotic",
        continuity=continuity,
        alternative=alternative,
    )
    ref = stats.wilcoxon(
        d,
        zero_method=zero_method,
        method="asymptotic",
        correction=continuity,
        alternative=alternative,
    )
    assert ours.method == "asymptotic"
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    assert ours.z is not None


def test_zsplit_asymptotic_variance_excludes_the_fixed_zero_ranks() -> None:
    d = np.array([0.0, 0.0, 0.0, 1.0, -2.0, 3.0, 4.0, 5.0, -6.0, 7.0])
    res = wilcoxon_signed_rank(d, zero_method="zsplit", method="asymptotic")
    ranks = stats.rankdata(np.abs(d))[3:]
    z = (res.statistic - (6.0 / 2 + ranks.sum() / 2)) / math.sqrt(np.sum(ranks**2) / 4)
    assert res.z == pytest.approx(z, rel=1e-12)


def test_method_selection_and_reason() -> None:
    d = np.arange(1.0, 21.0)
    auto = wilcoxon_signed_rank(d, exact_max_n=10)
    assert auto.method == "asymptotic"
    assert "exact_max_n=10" in auto.method_reason
    assert wilcoxon_signed_rank(d).method == "exact"
    with pytest.raises(NotApplicable) as err:
        wilcoxon_signed_rank(d, method="exact", exact_max_n=10)
    assert err.value.field == "method"


def test_exact_n400_is_fast() -> None:
    x = np.random.default_rng(0).normal(size=400) + 0.05
    y = np.zeros(400)
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        res = wilcoxon_signed_rank(x, y)
        best = min(best, time.perf_counter() - t0)
    assert res.method == "exact"
    assert best < 0.2


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"x": [1.0, np.nan]}, "x"),
        ({"x": [1.0, 2.0], "y": [np.nan, 1.0]}, "y"),
        ({"x": []}, "x"),
        ({"x": [1.0, 2.0], "y": []}, "y"),
        ({"x": [1.0, 2.0, 3.0], "y": [1.0, 2.0]}, "y"),
        ({"x": [[1.0, 2.0]]}, "x"),
        ({"x": [1.0], "zero_method": "none"}, "zero_method"),
        ({"x": [1.0], "zero_tol": -1.0}, "zero_tol"),
        ({"x": [1.0], "zero_tol": math.nan}, "zero_tol"),
        ({"x": [1.0], "alternative": "smaller"}, "alternative"),
        ({"x": [1.0], "method": "permutation"}, "method"),
        ({"x": [1.0], "exact_max_n": 5000}, "exact_max_n"),
        ({"x": [1.0], "exact_max_n": 2.5}, "exact_max_n"),
    ],
)
def test_wilcoxon_invalid_input_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        wilcoxon_signed_rank(**kwargs)
    assert err.value.field == field


# --------------------------------------------------------------------------- exact distribution


@given(st.lists(st.integers(1, 40), min_size=0, max_size=30))
def test_signed_rank_pmf_sums_to_one_and_matches_convolution(scores: list[int]) -> None:
    pmf = signed_rank_pmf(np.array(scores, dtype=np.int64))
    ref = np.ones(1)
    for s in scores:  # product of the generating functions (1 + z^s)/2
        factor = np.zeros(s + 1)
        factor[[0, s]] = 0.5
        ref = np.convolve(ref, factor)
    assert pmf.sum() == pytest.approx(1.0, rel=1e-12)
    np.testing.assert_allclose(pmf, ref, rtol=1e-12, atol=1e-300)


@given(st.lists(st.integers(1, 20), min_size=1, max_size=15))
def test_p_non_decreasing_towards_the_centre(scores: list[int]) -> None:
    s = np.array(scores, dtype=np.int64)
    pmf = signed_rank_pmf(s)
    total = int(s.sum())
    ks = range(total + 1)
    two = np.array([lattice_p(pmf, k, total, "two-sided") for k in ks])
    less = np.array([lattice_p(pmf, k, total, "less") for k in ks])
    greater = np.array([lattice_p(pmf, k, total, "greater") for k in ks])
    order = np.argsort([-abs(2 * k - total) for k in ks], kind="stable")  # outside → centre
    assert np.all(np.diff(two[order]) >= -1e-15)
    assert np.all(np.diff(less) >= -1e-15)
    assert np.all(np.diff(greater) <= 1e-15)
    assert np.all((two >= 0) & (two <= 1))


# --------------------------------------------------------------------------- properties

_paired = st.integers(1, 14).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(-8, 8), min_size=n, max_size=n),
        st.lists(st.integers(-8, 8), min_size=n, max_size=n),
    )
)


@given(
    _paired,
    st.sampled_from(ZERO_METHODS),
    st.sampled_from(ALTERNATIVES),
    st.sampled_from(["exact", "asymptotic"]),
)
def test_p_value_in_unit_interval(pair, zero_method, alternative, method) -> None:
    x, y = pair
    res = wilcoxon_signed_rank(
        x, y, zero_method=zero_method, alternative=alternative, method=method
    )
    assert 0.0 <= res.p_value <= 1.0
    assert res.n_effective + res.n_zeros == res.n == len(x)


@given(
    _paired,
    st.sampled_from(ZERO_METHODS),
    st.sampled_from(ALTERNATIVES),
    st.sampled_from([0.25, 0.5, 2.0, 8.0]),
    st.integers(-1000, 1000),
)
def test_invariant_under_common_shift_and_positive_scaling(
    pair, zero_method, alternative, scale, shift
) -> None:
    x, y = (np.array(v, dtype=float) for v in pair)
    a = wilcoxon_signed_rank(x, y, zero_method=zero_method, alternative=alternative)
    b = wilcoxon_signed_rank(
        scale * x + shift, scale * y + shift, zero_method=zero_method, alternative=alternative
    )
    assert (a.statistic, a.p_value, a.n_zeros) == (b.statistic, b.p_value, b.n_zeros)


@given(_paired, st.sampled_from(ZERO_METHODS))
def test_swapping_x_and_y_mirrors_the_tails(pair, zero_method) -> None:
    x, y = pair
    less = wilcoxon_signed_rank(x, y, zero_method=zero_method, alternative="less")
    greater = wilcoxon_signed_rank(y, x, zero_method=zero_method, alternative="greater")
    assert less.p_value == pytest.approx(greater.p_value, rel=1e-12)


# --------------------------------------------------------------------------- sign test


def test_sign_test_references() -> None:
    res = sign_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 6])
    assert res.p_value == 0.0625
    assert (res.n_less, res.n_greater, res.n_effective) == (5, 0, 5)
    assert sign_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 6], alternative="less").p_value == 0.03125
    assert sign_test([1, 2, 3, 4, 5], [2, 3, 4, 5, 6], alternative="greater").p_value == 1.0
    res = sign_test(np.zeros(60), np.ones(60))
    assert res.p_value == pytest.approx(2 / 2**60, rel=1e-12)
    assert res.p_value > 0


def test_sign_test_all_ties_degenerate() -> None:
    res = sign_test([1.0, 2.0, 3.0], [1.05, 2.0, 2.95], zero_tol=0.1)
    assert res.p_value == 1.0
    assert res.n_effective == 0
    assert res.n_ties == 3
    assert res.degenerate
    assert res.reason


def test_sign_test_drops_and_counts_ties() -> None:
    res = sign_test([0, 0, 0, 1, 2, 3, 4], [0, 0, 1, 0, 0, 0, 0])
    assert (res.n_ties, res.n_less, res.n_greater, res.n_effective) == (2, 1, 4, 5)
    assert res.statistic == 4
    assert res.p_value == pytest.approx(stats.binomtest(4, 5).pvalue, rel=1e-12)


def _exact_binomial_p(k: int, n: int, alternative: str) -> float:
    pmf = [Fraction(math.comb(n, j), 2**n) for j in range(n + 1)]
    if alternative == "less":
        return float(sum(pmf[: k + 1]))
    if alternative == "greater":
        return float(sum(pmf[k:]))
    return float(min(Fraction(1), sum(q for q in pmf if q <= pmf[k])))


@given(st.integers(1, 80).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_sign_test_matches_exact_fractions_and_binomtest(kn) -> None:
    k, n = kn
    d = np.array([1.0] * k + [-1.0] * (n - k))
    for alternative in ALTERNATIVES:
        p = sign_test(d, alternative=alternative).p_value
        assert p == pytest.approx(_exact_binomial_p(k, n, alternative), rel=1e-12)
        assert p == pytest.approx(stats.binomtest(k, n, alternative=alternative).pvalue, rel=1e-9)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"x": [np.nan]}, "x"),
        ({"x": [1.0], "y": [1.0, 2.0]}, "y"),
        ({"x": []}, "x"),
        ({"x": [1.0], "zero_tol": -0.5}, "zero_tol"),
        ({"x": [1.0], "alternative": "up"}, "alternative"),
    ],
)
def test_sign_test_invalid_input_names_the_field(kwargs: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        sign_test(**kwargs)
    assert err.value.field == field


def test_differences_beyond_the_float_range_keep_their_order() -> None:
    x = np.array([1.7e308, -1e308, 1.0, 2.0])
    y = np.array([-1.7e308, 1.5e308, 0.0, 0.0])
    big = wilcoxon_signed_rank(x, y)
    small = wilcoxon_signed_rank(x / 2.0**600, y / 2.0**600)
    assert big.statistic == small.statistic == 7.0  # |d| ranks 4, 3, 1, 2; positive: 4 + 1 + 2
    assert big.p_value == small.p_value == pytest.approx(0.625)
    assert sign_test(x, y).n_greater == 3
