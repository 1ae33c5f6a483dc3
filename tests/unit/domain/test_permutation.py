"""Permutation test of Omran et al. (SPEC §5): paper examples, brute force, Monte Carlo."""

import doctest
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain import permutation
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.permutation import PermutationResult, permutation_test
from app.domain.permutation._median import median_exact_count

ALTERNATIVES = ("two-sided", "greater", "less")
EPS = np.finfo(np.float64).eps


def _splits(z: np.ndarray, n_a: int) -> tuple[np.ndarray, np.ndarray]:
    """Every split of ``z``: A values (C, n_a) and B values (C, n_b), by itertools."""
    combos = np.array(list(itertools.combinations(range(z.size), n_a)))
    mask = np.zeros((len(combos), z.size), dtype=bool)
    mask[np.arange(len(combos))[:, None], combos] = True
    full = np.broadcast_to(z, mask.shape)
    return full[mask].reshape(len(combos), n_a), full[~mask].reshape(len(combos), -1)


def _brute_p(x: np.ndarray, y: np.ndarray, statistic: str, alternative: str) -> float:
    """Share of all splits at least as extreme, with the module's documented tolerance."""
    z = np.concatenate((x, y))
    f = np.median if statistic == "median" else np.mean
    a, b = _splits(z, x.size)
    s_i, s = f(a, axis=1) - f(b, axis=1), float(f(x) - f(y))
    orient = {"two-sided": np.abs, "greater": np.positive, "less": np.negative}[alternative]
    t, d = orient(s_i), float(orient(s))
    atol = 16 * z.size * EPS * np.max(np.abs(z))
    return float(np.mean(t >= d - (1e-9 * np.maximum(abs(d), np.abs(t)) + atol)))


def _brute_p_exact(x: list[int], y: list[int], statistic: str, alternative: str) -> Fraction:
    """Exact rational p of integer data: Fractions, no tolerance at all."""

    def stat(v: list[int]) -> Fraction:
        v = sorted(v)
        m = len(v)
        if statistic == "mean":
            return Fraction(sum(v), m)
        return Fraction(v[(m - 1) // 2] + v[m // 2], 2)

    z = x + y
    orient = {"two-sided": abs, "greater": lambda q: q, "less": lambda q: -q}[alternative]
    d = orient(stat(x) - stat(y))
    hits = total = 0
    for idx in itertools.combinations(range(len(z)), len(x)):
        chosen = set(idx)
        a = [z[i] for i in idx]
        b = [z[i] for i in range(len(z)) if i not in chosen]
        hits += orient(stat(a) - stat(b)) >= d
        total += 1
    return Fraction(hits, total)


# --------------------------------------------------------------------------------------------
# Reference values
# --------------------------------------------------------------------------------------------


def test_separated_samples_mean_exact() -> None:
    r = permutation_test([1, 2, 3], [4, 5, 6], statistic="mean", method="exact")
    assert r.p_value == pytest.approx(0.1, abs=1e-15)
    assert (r.n_extreme, r.n_splits) == (2, 20)
    assert r.statistic == 3.0
    assert r.observed_difference == -3.0
    assert (r.method, r.p_value_paper, r.standard_error, r.n_resamples, r.seed) == (
        "exact",
        None,
        None,
        None,
        None,
    )


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 7, 42, 123, 2024])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_nine_resamples_never_below_one_tenth(seed: int, statistic: str) -> None:
    r = permutation_test(
        [1, 2, 3, 4, 5],
        [6, 7, 8, 9, 10],
        statistic=statistic,
        method="monte_carlo",
        n_resamples=9,
        seed=seed,
    )
    assert r.p_value >= 1 / 10
    assert r.p_value == (r.n_extreme + 1) / 10
    assert r.p_value_paper == r.n_extreme / 10


def test_float_noise_does_not_split_ties_of_means() -> None:
    a, b = [0.1, 0.3, 0.5], [0.2, 0.4, 0.6]
    for x, y in ((a, b), (b, a)):
        r = permutation_test(x, y, statistic="mean", method="exact")
        assert r.n_extreme == 14
        assert r.p_value == pytest.approx(14 / 20, abs=1e-15)


def test_two_students_paper_example() -> None:
    pre, final = [70, 75], [76, 72]
    r = permutation_test(final, pre, statistic="mean", alternative="greater")
    assert (r.method, r.n_splits, r.n_extreme) == ("exact", 6, 2)
    assert r.statistic == 1.5
    assert r.p_value == pytest.approx(2 / 6, abs=1e-15)
    two = permutation_test(final, pre, statistic="mean")
    assert two.statistic == 1.5
    assert two.p_value == pytest.approx(4 / 6, abs=1e-15)
    less = permutation_test(final, pre, statistic="mean", alternative="less")
    assert less.statistic == 1.5  # s itself for one-sided alternatives
    assert less.p_value == pytest.approx(5 / 6, abs=1e-15)  # every split but s_i = 4.5


# --------------------------------------------------------------------------------------------
# Exact methods against full enumeration
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n_a", range(1, 8))
def test_exact_matches_enumeration_all_small_sizes(n_a: int) -> None:
    rng = np.random.default_rng(n_a)
    for n_b in range(1, 8):
        for ties in (False, True):
            if ties:
                x = rng.integers(0, 4, n_a).astype(float)
                y = rng.integers(0, 4, n_b).astype(float)
            else:
                x, y = rng.normal(size=n_a), rng.normal(0.5, size=n_b)
            for statistic, alternative in itertools.product(("median", "mean"), ALTERNATIVES):
                r = permutation_test(
                    x, y, statistic=statistic, alternative=alternative, method="exact"
                )
                expected = _brute_p(x, y, statistic, alternative)
                assert r.p_value == pytest.approx(expected, rel=1e-12, abs=1e-15), (
                    n_a,
                    n_b,
                    ties,
                    statistic,
                    alternative,
                )
                assert r.n_extreme == pytest.approx(expected * r.n_splits, rel=1e-12)


small_ints = st.lists(st.integers(-3, 3), min_size=1, max_size=6)


@given(
    x=small_ints,
    y=small_ints,
    statistic=st.sampled_from(["median", "mean"]),
    alternative=st.sampled_from(ALTERNATIVES),
)
def test_exact_equals_rational_enumeration(
    x: list[int], y: list[int], statistic: str, alternative: str
) -> None:
    r = permutation_test(x, y, statistic=statistic, alternative=alternative, method="exact")
    exact = _brute_p_exact(x, y, statistic, alternative)
    assert r.p_value == pytest.approx(float(exact), rel=1e-12, abs=1e-15)
    assert 0.0 <= r.p_value <= 1.0


@given(
    x=st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6),
    y=st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=6),
    statistic=st.sampled_from(["median", "mean"]),
    alternative=st.sampled_from(ALTERNATIVES),
)
def test_exact_equals_enumeration_floats(
    x: list[float], y: list[float], statistic: str, alternative: str
) -> None:
    xa, ya = np.array(x), np.array(y)
    r = permutation_test(xa, ya, statistic=statistic, alternative=alternative, method="exact")
    assert r.p_value == pytest.approx(_brute_p(xa, ya, statistic, alternative), abs=1e-12)
    assert 0.0 <= r.p_value <= 1.0


@pytest.mark.parametrize(
    ("n_a", "n_b"), [(1, 1), (2, 9), (9, 2), (6, 6), (7, 6), (30, 31), (1, 40), (64, 100)]
)
def test_configuration_counts_sum_to_all_splits(n_a: int, n_b: int) -> None:
    v = np.sort(np.random.default_rng(0).integers(0, 5, n_a + n_b).astype(float))
    for alternative in ALTERNATIVES:
        every = median_exact_count(v, n_a, n_b, lambda s: np.ones(s.shape, bool), alternative)
        assert every == math.comb(n_a + n_b, n_a)


@pytest.mark.parametrize(("n_a", "n_b"), [(8, 10), (10, 9), (12, 5)])
def test_exact_median_matches_enumeration_medium_sizes(n_a: int, n_b: int) -> None:
    rng = np.random.default_rng(n_a + n_b)
    x, y = rng.normal(size=n_a), rng.normal(0.3, size=n_b)
    for alternative in ALTERNATIVES:
        r = permutation_test(x, y, alternative=alternative, method="exact")
        assert r.p_value == pytest.approx(_brute_p(x, y, "median", alternative), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Invariants that hold (and one that does not)
# --------------------------------------------------------------------------------------------


@given(
    x=st.lists(st.integers(-20, 20), min_size=1, max_size=7),
    y=st.lists(st.integers(-20, 20), min_size=1, max_size=7),
    statistic=st.sampled_from(["median", "mean"]),
)
def test_symmetries(x: list[int], y: list[int], statistic: str) -> None:
    def p(a: object, b: object, alternative: str = "two-sided") -> float:
        return permutation_test(a, b, statistic=statistic, alternative=alternative).p_value

    xa, ya = np.array(x, dtype=float), np.array(y, dtype=float)
    two = p(xa, ya)
    assert p(ya, xa) == pytest.approx(two, rel=1e-12)  # swap the algorithms
    assert p(2.0 * xa + 3.0, 2.0 * ya + 3.0) == pytest.approx(two, rel=1e-12)  # affine, a > 0
    greater = p(xa, ya, "greater")
    assert p(ya, xa, "less") == pytest.approx(greater, rel=1e-12)
    assert p(-xa, -ya, "less") == pytest.approx(greater, rel=1e-12)  # reflection
    less = p(xa, ya, "less")
    assert min(greater, less) <= two + 1e-12
    assert two <= greater + less + 1e-12


def test_median_statistic_is_not_rank_invariant() -> None:
    """The statistic uses values: a strictly increasing non-affine map can change p."""
    x, y = np.array([4.0, 4.0, 5.0]), np.array([0.0, 2.0, 5.0])
    assert permutation_test(x, y).p_value == pytest.approx(0.4)
    assert permutation_test(np.exp(x), np.exp(y)).p_value == pytest.approx(0.6)


# --------------------------------------------------------------------------------------------
# Monte Carlo
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statistic", "n_a", "n_b"),
    [("median", 20, 20), ("median", 31, 18), ("mean", 9, 8), ("median", 50, 50)],
)
def test_monte_carlo_agrees_with_exact(statistic: str, n_a: int, n_b: int) -> None:
    rng = np.random.default_rng(n_a * 100 + n_b)
    x, y = rng.normal(size=n_a), rng.normal(0.4, size=n_b)
    for alternative in ALTERNATIVES:
        ex = permutation_test(x, y, statistic=statistic, alternative=alternative, method="exact")
        mc = permutation_test(
            x,
            y,
            statistic=statistic,
            alternative=alternative,
            method="monte_carlo",
            n_resamples=20_000,
            seed=11,
        )
        se = math.sqrt(ex.p_value * (1 - ex.p_value) / 20_000) + 1 / 20_001
        assert abs(mc.p_value - ex.p_value) <= 4 * se, alternative
        assert mc.standard_error == pytest.approx(math.sqrt(mc.p_value * (1 - mc.p_value) / 20_000))
        assert (ex.method, mc.method) == ("exact", "monte_carlo")


def test_monte_carlo_mean_with_ties_agrees_with_exact() -> None:
    rng = np.random.default_rng(3)
    x, y = rng.integers(0, 3, 9).astype(float), rng.integers(1, 4, 8).astype(float)
    ex = permutation_test(x, y, statistic="mean", method="exact")
    mc = permutation_test(x, y, statistic="mean", method="monte_carlo", n_resamples=20_000)
    assert abs(mc.p_value - ex.p_value) <= 4 * math.sqrt(ex.p_value * (1 - ex.p_value) / 20_000)


def test_monte_carlo_is_reproducible_and_never_zero() -> None:
    x, y = np.arange(30.0), np.arange(30.0) + 100.0
    kw = {"method": "monte_carlo", "n_resamples": 1000, "seed": 5}
    r1, r2 = permutation_test(x, y, **kw), permutation_test(x, y, **kw)
    assert r1 == r2
    assert r1.n_extreme == 0
    assert r1.p_value == 1 / 1001
    assert r1.p_value_paper == 0.0
    assert (r1.seed, r1.n_resamples) == (5, 1000)
    assert isinstance(r1.n_extreme, float)


def test_monte_carlo_seed_changes_the_draw() -> None:
    rng = np.random.default_rng(9)
    x, y = rng.normal(size=25), rng.normal(size=25)
    counts = {
        permutation_test(x, y, method="monte_carlo", n_resamples=2000, seed=s).n_extreme
        for s in range(4)
    }
    assert len(counts) > 1


def test_monte_carlo_odd_sizes_beyond_the_exact_median_limit() -> None:
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=501), rng.normal(0.1, size=600)
    r = permutation_test(x, y, n_resamples=2000)
    assert r.method == "monte_carlo"
    assert r.n_splits is None  # beyond 2^53: JSON clients could not read it exactly
    assert r.log10_n_splits == pytest.approx(
        math.log10(float(math.comb(1101, 501) >> 1000)) + 1000 * math.log10(2)
    )
    assert any("infeasible" in note.message for note in r.notes)
    assert 1 / 2001 <= r.p_value <= 1.0


# --------------------------------------------------------------------------------------------
# Method choice, degenerate samples, notes
# --------------------------------------------------------------------------------------------


def test_auto_method_choice() -> None:
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=50), rng.normal(size=50)
    assert permutation_test(x, y).method == "exact"  # median: counted, 50 vs 50
    r = permutation_test(x[:20], y[:20], statistic="mean", n_resamples=500)
    assert r.method == "monte_carlo"  # C(40, 20) > 1e6
    assert "exact_max_splits" in r.notes[0].message
    assert r.n_splits == math.comb(40, 20)


def test_exact_requested_but_infeasible() -> None:
    with pytest.raises(NotApplicable, match="splits") as info:
        permutation_test(np.arange(20), np.arange(20), statistic="mean", method="exact")
    assert info.value.field == "method"
    with pytest.raises(NotApplicable, match="10\\^") as info:  # C(15000, 7500) is never printed
        permutation_test(np.arange(7500), np.arange(7500) + 0.5, statistic="mean", method="exact")
    assert info.value.field == "method"
    with pytest.raises(NotApplicable) as info:
        permutation_test(np.arange(600), np.arange(600), method="exact")
    assert info.value.field == "method"


@pytest.mark.parametrize("method", ["exact", "monte_carlo"])
@pytest.mark.parametrize("statistic", ["median", "mean"])
def test_constant_sample_is_degenerate(method: str, statistic: str) -> None:
    r = permutation_test([2.5] * 4, [2.5] * 5, statistic=statistic, method=method, n_resamples=100)
    assert r.p_value == 1.0
    assert r.degenerate
    assert r.reason is not None
    assert r.statistic == 0.0


def test_equal_medians_are_noted_not_degenerate() -> None:
    r = permutation_test([1.0, 2.0, 3.0], [0.0, 2.0, 9.0])
    assert not r.degenerate
    assert r.p_value == 1.0
    assert any("mean" in note.message for note in r.notes)
    assert permutation_test([1.0, 2.0, 3.0], [0.0, 2.0, 9.0], statistic="mean").notes == ()


def test_one_sided_zero_difference_is_not_split_by_noise() -> None:
    x, y = [0.1, 0.5], [0.2, 0.4]  # means 0.3 and 0.30000000000000004
    g = permutation_test(x, y, statistic="mean", alternative="greater")
    l_ = permutation_test(x, y, statistic="mean", alternative="less")
    # s = 0: splits {0.1,0.5}|{0.2,0.4} and its mirror tie with it, in both directions
    assert g.n_extreme == l_.n_extreme == 4


def test_result_is_frozen() -> None:
    r = permutation_test([1.0, 2.0], [3.0, 4.0])
    assert isinstance(r, PermutationResult)
    with pytest.raises(AttributeError):
        r.p_value = 0.0  # type: ignore[misc]


def test_docstring_examples() -> None:
    failures, _ = doctest.testmod(permutation, optionflags=doctest.ELLIPSIS)
    assert failures == 0


# --------------------------------------------------------------------------------------------
# Input validation
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("x", "y", "field"),
    [
        ([], [1.0], "x"),
        ([1.0], [], "y"),
        ([np.nan, 1.0], [1.0], "x"),
        ([1.0], [np.inf], "y"),
        ([[1.0, 2.0]], [1.0], "x"),
        ([1.0], ["a"], "y"),
    ],
)
def test_bad_samples(x: object, y: object, field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        permutation_test(x, y)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"statistic": "mode"}, "statistic"),
        ({"alternative": "two_sided"}, "alternative"),
        ({"method": "permutation"}, "method"),
        ({"n_resamples": 0}, "n_resamples"),
        ({"n_resamples": 11, "max_resamples": 10}, "n_resamples"),
        ({"n_resamples": 10_000_001}, "n_resamples"),
        ({"n_resamples": 10.0}, "n_resamples"),
        ({"seed": -1}, "seed"),
        ({"seed": 1.5}, "seed"),
        ({"seed": None}, "seed"),
        ({"rtol": -1e-9}, "rtol"),
        ({"rtol": float("nan")}, "rtol"),
        ({"exact_max_splits": 0}, "exact_max_splits"),
        ({"exact_max_splits": 10**10}, "exact_max_splits"),
        ({"max_resamples": 0}, "max_resamples"),
    ],
)
def test_bad_options(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        permutation_test([1.0, 2.0], [3.0], **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_values_near_the_float_maximum_do_not_overflow(statistic: str) -> None:
    x = np.array([0.0, 8.98846567431158e307, 1.5e308])
    y = np.array([8.988465674311579e307, -1.7e308])
    big = permutation_test(x, y, statistic=statistic, method="exact")
    small = permutation_test(x / 2.0**1000, y / 2.0**1000, statistic=statistic, method="exact")
    assert big.p_value == small.p_value
    assert 0.0 <= big.p_value <= 1.0
    assert big.observed_difference == pytest.approx(small.observed_difference * 2.0**1000)
