"""Rank tests across problems (SPEC §4): references, exact brute force and properties.

References: scipy.stats.friedmanchisquare (tie-corrected χ²), R's quade.test worked example,
scikit-posthocs' posthoc_nemenyi_friedman, autorank's CD-diagram groups, statsmodels' Holm,
closed-testing brute force for Holm/Hommel, set-partition enumeration for Shaffer's S(k), an
independent double-quadrature of the range distribution, and a direct maximum-likelihood fit for
Bradley–Terry.
"""

import itertools
import math
import time
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import scikit_posthocs as sp
from autorank import autorank
from autorank._util import get_sorted_rank_groups
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import integrate, optimize, special, stats
from statsmodels.stats.multitest import multipletests

from app.domain import ranktests as rt
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.ranking import tie_sizes
from app.domain.ranktests import _studentized

BASE = [-5.2, -6.0, -2.1, -1.7, -6.4]
CONCORDANT = np.array([[v + 0.01 * j for v in BASE] for j in range(10)])
# R: x <- matrix(c(5,4,7,10,12, 1,3,1,0,2, 16,12,22,22,35, 5,4,3,5,4, 10,9,7,13,10,
#                  19,18,28,37,58, 10,7,6,8,7), nrow = 7, byrow = TRUE); quade.test(x)
# -> Quade F = 3.8293, num df = 4, denom df = 24, p-value = 0.01519
CONOVER = np.array(
    [
        [5, 4, 7, 10, 12],
        [1, 3, 1, 0, 2],
        [16, 12, 22, 22, 35],
        [5, 4, 3, 5, 4],
        [10, 9, 7, 13, 10],
        [19, 18, 28, 37, 58],
        [10, 7, 6, 8, 7],
    ],
    dtype=float,
)
ALL_METHODS = sorted(rt.POSTHOC_METHODS)


def _random_ties(seed: int, n: int = 12, k: int = 5, levels: int = 4) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, levels, size=(n, k)).astype(float)


# ----------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ([1.0, 2.0, 3.0], "values"),
        ([[1.0], [2.0]], "algorithms"),
        ([[1.0, 2.0]], "problems"),
        ([[1.0, np.nan], [2.0, 3.0]], "values"),
        ([[1.0, 2.0], [3.0]], "values"),
    ],
)
def test_friedman_refuses_bad_matrices(values: object, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        rt.friedman(values)  # type: ignore[arg-type]
    assert err.value.field == field


def test_tolerance_is_validated_by_ranking() -> None:
    with pytest.raises(InvalidInput) as err:
        rt.friedman(CONOVER, rtol=-1.0)
    assert err.value.field == "rtol"


@pytest.mark.parametrize("test", [rt.friedman_aligned_ranks, rt.quade])
def test_value_based_tests_refuse_infinity(test: object) -> None:
    x = CONOVER.copy()
    x[0, 0] = np.inf
    with pytest.raises(NotApplicable):
        test(x)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"method": "tukey"}, "method"),
        ({"alpha": 0.0}, "alpha"),
        ({"alpha": 1.0}, "alpha"),
        ({"method": "bonferroni-dunn"}, "control"),
        ({"method": "li"}, "control"),
        ({"method": "nemenyi", "control": 0}, "control"),
        ({"method": "shaffer", "control": 0}, "control"),
        ({"method": "holm", "control": 5}, "control"),
        ({"method": "holm", "control": -1}, "control"),
        ({"method": "holm", "control": True}, "control"),
    ],
)
def test_posthoc_refuses_bad_options(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        rt.posthoc(CONOVER, **kwargs)  # type: ignore[arg-type]
    assert err.value.field == field


def test_adjusted_pvalues_validation() -> None:
    with pytest.raises(InvalidInput, match="unknown"):
        rt.adjusted_pvalues([0.1], method="sidak")
    for bad in ([[0.1]], [1.5], [np.nan]):
        with pytest.raises(InvalidInput) as err:
            rt.adjusted_pvalues(bad, method="holm")
        assert err.value.field == "p"
    with pytest.raises(InvalidInput, match="pairwise"):
        rt.adjusted_pvalues([0.1, 0.2], method="shaffer")
    assert rt.adjusted_pvalues([], method="holm").shape == (0,)


def test_rank_matrix_rows_sum_to_triangular_number() -> None:
    ranks, average = rt.rank_matrix(CONOVER)
    np.testing.assert_array_equal(ranks.sum(axis=1), 15.0)
    np.testing.assert_allclose(average, ranks.mean(axis=0))


# ----------------------------------------------------------------------------- Friedman


def test_friedman_perfect_concordance_reference() -> None:
    res = rt.friedman(CONCORDANT)
    assert res.statistic == 40.0  # N (k − 1)
    assert res.p_value == pytest.approx(4.3284e-8, rel=1e-4)
    assert res.p_value == pytest.approx(stats.chi2.sf(40.0, 4), rel=1e-12)
    assert res.iman_davenport_statistic == math.inf
    assert res.iman_davenport_p_value == 0.0
    assert res.iman_davenport_df == (4, 36)
    assert res.degenerate
    assert "concordance" in (res.reason or "")
    np.testing.assert_array_equal(res.average_ranks, [3, 2, 4, 5, 1])


def test_friedman_every_row_tied() -> None:
    res = rt.friedman(np.ones((4, 3)))
    assert (res.statistic, res.p_value) == (0.0, 1.0)
    assert (res.iman_davenport_statistic, res.iman_davenport_p_value) == (0.0, 1.0)
    assert res.degenerate
    assert "ties" in (res.reason or "")


@pytest.mark.parametrize("seed", range(8))
def test_friedman_matches_scipy_with_ties(seed: int) -> None:
    x = _random_ties(seed)
    res = rt.friedman(x)
    ref = stats.friedmanchisquare(*x.T)  # scipy applies the tie correction
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)
    n, k = x.shape
    ties = sum(float(np.sum(t**3 - t)) for t in (tie_sizes(row) for row in x))
    assert res.tie_correction == pytest.approx(1 - ties / (n * k * (k * k - 1)), rel=1e-12)
    chi2 = res.statistic
    f = (n - 1) * chi2 / (n * (k - 1) - chi2)
    assert res.iman_davenport_statistic == pytest.approx(f, rel=1e-12)
    assert res.iman_davenport_p_value == pytest.approx(
        stats.f.sf(f, k - 1, (k - 1) * (n - 1)), rel=1e-10
    )
    assert not res.degenerate


def test_friedman_ranks_infinities() -> None:
    x = _random_ties(1)
    x[0, 1], x[3, 2], x[5, 0] = np.inf, -np.inf, np.inf
    y = np.where(np.isposinf(x), 1e9, np.where(np.isneginf(x), -1e9, x))
    a, b = rt.friedman(x), rt.friedman(y)
    assert (a.statistic, a.p_value, a.tie_correction) == (b.statistic, b.p_value, b.tie_correction)
    np.testing.assert_array_equal(a.average_ranks, b.average_ranks)


def test_friedman_tolerance_makes_ties() -> None:
    x = np.array([[1.0, 1.0 + 1e-12, 2.0], [2.0, 1.0, 3.0], [1.0, 3.0, 2.0]])
    assert rt.friedman(x, atol=1e-9).tie_correction < 1.0
    assert rt.friedman(x).tie_correction == 1.0


# ------------------------------------------------------------------- aligned ranks, Quade


def _aligned_exact(x: np.ndarray) -> Fraction:
    """García et al. (2010) aligned-ranks T from exact fractions (no ties in the data)."""
    n, k = x.shape
    rows = [[Fraction(v) for v in row] for row in x.tolist()]
    aligned = [(v - sum(row) / k, i, j) for i, row in enumerate(rows) for j, v in enumerate(row)]
    rank = {(i, j): r + 1 for r, (_, i, j) in enumerate(sorted(aligned))}
    total = k * n
    col = [sum(rank[i, j] for i in range(n)) for j in range(k)]
    row = [sum(rank[i, j] for j in range(k)) for i in range(n)]
    num = (k - 1) * (sum(c * c for c in col) - Fraction(k * n * n, 4) * (total + 1) ** 2)
    den = Fraction(total * (total + 1) * (2 * total + 1), 6) - Fraction(1, k) * sum(
        r * r for r in row
    )
    return Fraction(num) / den


@pytest.mark.parametrize("seed", range(5))
def test_aligned_ranks_against_exact_formula(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(9, 4)) + rng.normal(size=(9, 1)) * 5 + np.arange(4) * 0.3
    res = rt.friedman_aligned_ranks(x)
    expected = float(_aligned_exact(x))
    assert res.statistic == pytest.approx(expected, rel=1e-12)
    assert res.p_value == pytest.approx(stats.chi2.sf(expected, 3), rel=1e-10)
    assert res.average_ranks.sum() == pytest.approx(4 * (36 + 1) / 2)


def test_aligned_ranks_ignore_problem_shifts() -> None:
    x = np.random.default_rng(7).integers(0, 50, size=(8, 4)).astype(float)
    shifted = x + np.arange(8)[:, None] * 1000.0
    assert rt.friedman_aligned_ranks(x).statistic == rt.friedman_aligned_ranks(shifted).statistic


def test_aligned_ranks_degenerate() -> None:
    res = rt.friedman_aligned_ranks(np.full((3, 4), 2.5))
    assert (res.statistic, res.p_value, res.degenerate) == (0.0, 1.0, True)


def _quade_exact(x: np.ndarray) -> Fraction:
    """Quade F from exact fractions (Conover 1999), ties by midranks."""
    n, k = x.shape
    ranks = stats.rankdata(x, axis=1)
    weights = stats.rankdata(x.max(axis=1) - x.min(axis=1))
    s = [
        [Fraction(weights[i]) * (Fraction(ranks[i, j]) - Fraction(k + 1, 2)) for j in range(k)]
        for i in range(n)
    ]
    a = sum(v * v for row in s for v in row)
    b = sum(sum(s[i][j] for i in range(n)) ** 2 for j in range(k)) / n
    return (n - 1) * b / (a - b)


def test_quade_r_reference() -> None:
    res = rt.quade(CONOVER)
    assert res.statistic == pytest.approx(3.8293, abs=5e-5)
    assert res.p_value == pytest.approx(0.01519, abs=5e-6)
    assert res.df == (4, 24)
    assert res.statistic == pytest.approx(float(_quade_exact(CONOVER)), rel=1e-14)
    np.testing.assert_array_equal(res.problem_weights, [5, 2, 6, 1, 4, 7, 3])
    expected = (res.problem_weights[:, None] * stats.rankdata(CONOVER, axis=1)).sum(0) / 28
    np.testing.assert_allclose(res.average_ranks, expected, rtol=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_quade_against_exact_formula_with_ties(seed: int) -> None:
    x = _random_ties(seed, n=10, k=4, levels=6)
    res = rt.quade(x)
    assert res.statistic == pytest.approx(float(_quade_exact(x)), rel=1e-13)
    assert res.p_value == pytest.approx(stats.f.sf(res.statistic, 3, 27), rel=1e-10)


def test_quade_degenerate_cases() -> None:
    concordant = rt.quade(np.tile([3.0, 1.0, 2.0, 5.0], (6, 1)))  # equal ranges, equal ranks
    assert (concordant.statistic, concordant.p_value, concordant.degenerate) == (
        math.inf,
        0.0,
        True,
    )
    tied = rt.quade(np.zeros((3, 3)))
    assert (tied.statistic, tied.p_value, tied.degenerate) == (0.0, 1.0, True)


# ------------------------------------------------------------ studentized range (df = ∞)


def _range_density(w: float, k: int) -> float:
    """Density of the range of k normals, without cancellation (independent of the module)."""

    def inner(z: float) -> float:
        gap = (
            special.ndtr(z + w) - special.ndtr(z)
            if z < 0
            else special.ndtr(-z) - special.ndtr(-z - w)
        )
        return math.exp(-0.5 * z * z - 0.5 * (z + w) ** 2) / (2 * math.pi) * gap ** (k - 2)

    c = -w / 2
    limits = (min(c, -8.0) - 12.0, max(c, 0.0) + 12.0)
    return k * (k - 1) * integrate.quad(inner, *limits, epsabs=0, epsrel=1e-12, limit=200)[0]


def _range_sf_reference(q: float, k: int) -> float:
    return integrate.quad(_range_density, q, q + 40, args=(k,), epsabs=0, epsrel=1e-12)[0]


def test_range_sf_closed_form_for_two() -> None:
    q = np.linspace(0.0, 30.0, 301)  # down to erfc(15) ≈ 7e-100
    np.testing.assert_allclose(rt.studentized_range_sf(q, 2), special.erfc(q / 2), rtol=1e-13)


@pytest.mark.parametrize(("q", "k"), [(q, k) for k in (3, 10, 100) for q in (1.0, 6.0, 11.0)])
def test_range_sf_against_double_quadrature(q: float, k: int) -> None:
    assert rt.studentized_range_sf(q, k) == pytest.approx(_range_sf_reference(q, k), rel=1e-9)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7, 10, 20, 50, 100, 500])
def test_range_sf_against_scipy_away_from_its_tail(k: int) -> None:
    q = np.linspace(0.05, 9.0, 40)
    ref = stats.studentized_range.sf(q, k, np.inf)
    ok = ref > 1e-8  # scipy forms 1 − cdf: its error is ~1e-16 absolute (see the far tail)
    np.testing.assert_allclose(rt.studentized_range_sf(q[ok], k), ref[ok], rtol=1e-7)


def test_range_sf_far_tail_is_accurate_where_scipy_is_not() -> None:
    # k = 3, q = 12: true SF 6.4559e-17 (double quadrature); scipy returns 1.1e-16 there
    ref = _range_sf_reference(12.0, 3)
    assert rt.studentized_range_sf(12.0, 3) == pytest.approx(ref, rel=1e-9)
    assert ref == pytest.approx(6.4559e-17, rel=1e-4)


def test_range_sf_edges_and_shape() -> None:
    q = np.array([[-1.0, 0.0], [np.inf, 3.0]])
    out = rt.studentized_range_sf(q, 4)
    assert out.shape == (2, 2)
    assert out[0, 0] == out[0, 1] == 1.0
    assert out[1, 0] == 0.0
    with pytest.raises(InvalidInput) as err:
        rt.studentized_range_sf([np.nan], 3)
    assert err.value.field == "q"
    with pytest.raises(InvalidInput) as err:
        rt.studentized_range_sf(1.0, 1)
    assert err.value.field == "k"
    huge = rt.studentized_range_sf([60.0, 1e6, 1e300], 10)  # no grid spanning -q/2
    np.testing.assert_array_equal(huge, 0.0)
    grid = rt.studentized_range_sf(np.linspace(0, 20, 400), 7)
    assert np.all(np.diff(grid) <= 0)


# The interpolated path (>= 512 values: Nemenyi's all pairs) against the direct quadrature it
# interpolates (the implementation before the interpolant, still used below 512 values): within
# 3e-14 relative plus the SF's own conditioning eps·q²/2 (one rounding of q), 2e-14 absolute.
_INTERPOLATED_KS = [*range(2, 201), 300, 1000, 10_000]


def _interpolated_and_direct(k: int, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    assert q.size >= _studentized._INTERP_MIN_VALUES
    order = np.argsort(q)
    direct = np.empty(q.size)
    direct[order] = _studentized._range_sf_sorted(q[order], k)
    return rt.studentized_range_sf(q, k), direct


@pytest.mark.parametrize("k", _INTERPOLATED_KS)
def test_range_sf_interpolated_matches_the_direct_quadrature(k: int) -> None:
    rng = np.random.default_rng(k)
    q_max = _studentized._range_q_max(k)
    q = np.concatenate(
        (
            rng.uniform(0.0, q_max, 600),
            rng.uniform(0.0, 10.0, 400),
            [1e-9, 1e-3, q_max * (1 - 1e-9)],
        )
    )
    got, direct = _interpolated_and_direct(k, q)
    assert np.all(direct > 0.0)
    np.testing.assert_array_less(np.abs(got - direct), 2e-14)
    np.testing.assert_array_less(np.abs(got / direct - 1.0), 3e-14 + 1.1e-16 * q * q)


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7, 10, 20, 50, 100, 150, 200])
def test_range_sf_interpolated_matches_scipy(k: int) -> None:
    # scipy integrates the CDF k ∫ φ(z) [Φ(z+q) − Φ(z)]^(k−1) dz per value (quad): ~1e-14 abs
    q = np.linspace(0.01, 12.0, 600)
    got = rt.studentized_range_sf(q, k)
    np.testing.assert_allclose(got, stats.studentized_range.sf(q, k, np.inf), rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        1.0 - got, stats.studentized_range.cdf(q, k, np.inf), rtol=0, atol=1e-12
    )


def test_range_sf_interpolated_tail_for_two_means_is_erfc() -> None:
    q = np.linspace(0.0, 52.0, 1000)  # down to erfc(26) ≈ 5.6e-296
    got = rt.studentized_range_sf(q, 2)
    np.testing.assert_array_less(np.abs(got / special.erfc(q / 2) - 1.0), 1e-14 + 1.1e-16 * q * q)


@pytest.mark.parametrize(("q", "k"), [(q, k) for k in (3, 10, 100) for q in (1.0, 6.0, 11.0)])
def test_range_sf_interpolated_against_double_quadrature(q: float, k: int) -> None:
    values = np.full(_studentized._INTERP_MIN_VALUES, q)
    got = rt.studentized_range_sf(values, k)
    assert got[0] == pytest.approx(_range_sf_reference(q, k), rel=1e-9)


def test_range_interpolant_is_cheaper_than_the_values_it_serves() -> None:
    # what makes the interpolant worth it: at most ~600 quadratures per k (4,569 distinct q in
    # bench/ranktests.py's 100 × 500 Nemenyi test)
    for k in (2, 10, 100, 1000):
        assert _studentized._range_interpolant(k).n_quadratures <= 700


def test_range_sf_is_fast_for_all_pairs_of_100() -> None:
    q = np.random.default_rng(0).uniform(0.0, 8.0, 4950)
    rt.studentized_range_sf(q[:2], 100)  # the per-k rule is cached
    start = time.perf_counter()
    rt.studentized_range_sf(q, 100)
    assert time.perf_counter() - start < 1.0


# Demšar (2006), Table 5: q_α for the Nemenyi test (already divided by √2)
DEMSAR_Q05 = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
DEMSAR_Q10 = [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920]


@pytest.mark.parametrize(("alpha", "table"), [(0.05, DEMSAR_Q05), (0.10, DEMSAR_Q10)])
def test_range_isf_reproduces_demsar_table(alpha: float, table: list[float]) -> None:
    got = [rt.studentized_range_isf(alpha, k) / math.sqrt(2) for k in range(2, 11)]
    np.testing.assert_allclose(got, table, atol=1e-3)  # printed digits are not all rounded


@pytest.mark.parametrize(("alpha", "k"), [(0.05, 3), (0.01, 10), (0.2, 100), (1e-6, 5)])
def test_range_isf_inverts_sf_and_matches_scipy(alpha: float, k: int) -> None:
    q = rt.studentized_range_isf(alpha, k)
    assert rt.studentized_range_sf(q, k) == pytest.approx(alpha, rel=1e-10)
    assert q == pytest.approx(stats.studentized_range.ppf(1 - alpha, k, np.inf), rel=1e-9)
    two = rt.studentized_range_isf(alpha, 2)
    assert two == pytest.approx(math.sqrt(2) * stats.norm.isf(alpha / 2), rel=1e-12)


# ------------------------------------------------------------------------------- Nemenyi


def test_nemenyi_critical_difference_references() -> None:
    assert rt.critical_difference(5, 10) == pytest.approx(1.929, abs=5e-4)
    res = rt.nemenyi(CONCORDANT)
    assert res.critical_difference == pytest.approx(rt.critical_difference(5, 10), rel=1e-15)
    assert res.critical_value == pytest.approx(2.728, abs=5e-4)  # Demšar's q_0.05, k = 5
    for n in (1, 7, 30):
        cd = rt.critical_difference(2, n)
        assert cd == pytest.approx(1.959964 * math.sqrt(1 / n), rel=1e-6)


@pytest.mark.parametrize(
    ("args", "kwargs", "field"),
    [
        ((5, 10), {"alpha": 1.5, "method": "bonferroni-dunn"}, "alpha"),
        ((5, 10), {"method": "tukey"}, "method"),
        ((1, 10), {}, "algorithms"),
        ((5, 0), {}, "problems"),
    ],
)
def test_critical_difference_validation(
    args: tuple[int, int], kwargs: dict[str, object], field: str
) -> None:
    with pytest.raises(InvalidInput) as err:
        rt.critical_difference(*args, **kwargs)  # type: ignore[arg-type]
    assert err.value.field == field


def test_nemenyi_perfect_concordance_cliques() -> None:
    res = rt.nemenyi(CONCORDANT)
    assert res.cliques == ((4, 1), (1, 0), (0, 2), (2, 3))
    sig = {(p.i, p.j) for p in res.pairs if p.significant}
    assert sig == {(i, j) for i in range(5) for j in range(i + 1, 5)} - {
        (1, 4),
        (0, 1),
        (0, 2),
        (2, 3),
    }
    for clique in res.cliques:
        for a, b in itertools.combinations(sorted(clique), 2):
            assert (a, b) not in sig


@pytest.mark.parametrize("seed", range(6))
def test_nemenyi_matches_scikit_posthocs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 5, size=(25, 6)) + np.arange(6) * 0.4
    res = rt.nemenyi(x)
    ref = sp.posthoc_nemenyi_friedman(x).to_numpy()
    np.testing.assert_allclose(res.p_matrix, ref, rtol=1e-7, atol=1e-12)


def test_nemenyi_significance_agrees_with_critical_difference() -> None:
    rng = np.random.default_rng(11)
    x = rng.normal(size=(40, 12)) + np.linspace(0, 2, 12)
    res = rt.nemenyi(x)
    cd = res.critical_difference
    assert cd is not None
    for pair in res.pairs:
        gap = abs(pair.rank_difference)
        if abs(gap - cd) > 1e-9:
            assert pair.significant == (gap > cd)
        assert pair.significant == (pair.p_adjusted < res.alpha)


def test_nemenyi_p_of_zero_is_significant() -> None:
    x = np.tile([1.0, 2.0, 3.0], (3000, 1))
    res = rt.nemenyi(x)
    assert res.pairs[1].p_adjusted == 0.0  # (0, 2): z ≈ 77, the tail underflows
    assert res.pairs[1].significant
    assert res.cliques == ()


def _autorank_cliques(x: np.ndarray, alpha: float) -> tuple[tuple[int, ...], ...]:
    names = [f"A{i}" for i in range(x.shape[1])]
    res = autorank(
        pd.DataFrame(x, columns=names),
        alpha=alpha,
        order="ascending",  # autorank then gives rank 1 to the smallest value, as we do
        force_mode="nonparametric",
    )
    _, sorted_names, groups = get_sorted_rank_groups(res, reverse=False)
    index = [names.index(s) for s in sorted_names]
    return tuple(tuple(index[a : b + 1]) for a, b in groups)


@pytest.mark.parametrize(("seed", "alpha"), [(0, 0.05), (1, 0.05), (2, 0.1), (3, 0.01)])
def test_cliques_match_autorank(seed: int, alpha: float) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(30, 7)) + np.linspace(0, 1.5, 7)
    res = rt.nemenyi(x, alpha=alpha)
    gaps = np.abs(np.subtract.outer(res.average_ranks, res.average_ranks))
    # autorank's CD comes from statsmodels' qsturng table interpolation (relative error
    # ~1e-5): only compare where no rank gap is that close to the CD
    assert np.min(np.abs(gaps - res.critical_difference)) > 1e-3
    assert res.cliques == _autorank_cliques(x, alpha)


def _brute_cliques(sig: np.ndarray, average: np.ndarray) -> set[tuple[int, ...]]:
    order = list(np.argsort(average, kind="stable"))
    k = len(order)
    runs = [
        (a, b)
        for a in range(k)
        for b in range(a + 1, k)
        if not any(sig[order[i], order[j]] for i in range(a, b + 1) for j in range(a, b + 1))
    ]
    maximal = [r for r in runs if not any(o != r and o[0] <= r[0] and r[1] <= o[1] for o in runs)]
    return {tuple(int(x) for x in order[a : b + 1]) for a, b in maximal}


@given(
    st.integers(2, 9).flatmap(
        lambda k: st.tuples(
            hnp.arrays(bool, (k, k)), hnp.arrays(np.float64, k, elements=st.integers(1, 4))
        )
    )
)
def test_rank_cliques_match_brute_force(data: tuple[np.ndarray, np.ndarray]) -> None:
    raw, average = data
    sig = np.triu(raw, 1)
    sig = sig | sig.T
    got = rt.rank_cliques(sig, average)
    assert set(got) == _brute_cliques(sig, average)
    assert len(got) == len(set(got))


# --------------------------------------------------------- Bonferroni–Dunn, vs control


def test_bonferroni_dunn_reference() -> None:
    # Demšar (2006), Table 5(b), α = 0.05, k = 2..8
    table = [1.960, 2.241, 2.394, 2.498, 2.576, 2.638, 2.690]
    got = [
        rt.critical_difference(k, 6, method="bonferroni-dunn") / math.sqrt(k * (k + 1) / 36)
        for k in range(2, 9)
    ]
    np.testing.assert_allclose(got, table, atol=5e-4)
    x = _random_ties(3, n=20, k=5, levels=5)
    res = rt.bonferroni_dunn(x, control=2)
    assert res.comparison == "vs-control"
    assert res.p_matrix is None
    assert [(p.i, p.j) for p in res.pairs] == [(2, 0), (2, 1), (2, 3), (2, 4)]
    se = math.sqrt(5 * 6 / (6 * 20))
    assert res.critical_difference == pytest.approx(stats.norm.isf(0.05 / 8) * se, rel=1e-12)
    for pair in res.pairs:
        z = (res.average_ranks[2] - res.average_ranks[pair.j]) / se
        assert pair.z == pytest.approx(z, rel=1e-12, abs=1e-15)
        assert pair.p_value == pytest.approx(2 * stats.norm.sf(abs(z)), rel=1e-12)
        assert pair.p_adjusted == pytest.approx(min(1.0, 4 * pair.p_value), rel=1e-12)
    assert res.p_vs_control is not None
    assert res.p_vs_control[2] == 1.0


def test_vs_control_clique_is_control_plus_not_significant() -> None:
    res = rt.posthoc(CONCORDANT, method="holm", control=0)
    others = {p.j for p in res.pairs if not p.significant}
    assert res.cliques == (
        (tuple(sorted({0} | others, key=lambda a: res.average_ranks[a])),) if others else ()
    )


# ---------------------------------------------------------------- p-value adjustments


def _closed_testing(p: np.ndarray, local: str) -> np.ndarray:
    m = p.size
    out = np.zeros(m)
    for size in range(1, m + 1):
        for subset in itertools.combinations(range(m), size):
            ps = np.sort(p[list(subset)])
            if local == "bonferroni":
                value = min(1.0, size * ps[0])
            else:  # Simes
                value = min(1.0, float(np.min(size * ps / np.arange(1, size + 1))))
            for i in subset:
                out[i] = max(out[i], value)
    return out


def test_holm_reference() -> None:
    got = rt.adjusted_pvalues([0.01, 0.04, 0.03, 0.50], method="holm")
    np.testing.assert_allclose(got, [0.04, 0.09, 0.09, 0.50], rtol=1e-14)


@pytest.mark.parametrize("seed", range(4))
def test_holm_matches_statsmodels(seed: int) -> None:
    p = np.random.default_rng(seed).uniform(0, 0.2, 40) ** 2
    p[[3, 7]] = p[5]  # ties
    ref = multipletests(p, method="holm")[1]
    np.testing.assert_allclose(rt.adjusted_pvalues(p, method="holm"), ref, rtol=1e-14)


@pytest.mark.parametrize("seed", range(10))
def test_adjustments_against_definitions(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 7))
    p = rng.uniform(0, 0.3, m) ** rng.uniform(0.5, 2)
    order = np.argsort(p, kind="stable")
    ps = p[order]
    j = np.arange(1, m + 1)

    def unsort(sorted_values: np.ndarray) -> np.ndarray:
        out = np.empty(m)
        out[order] = sorted_values
        return out

    holm = _closed_testing(p, "bonferroni")
    np.testing.assert_allclose(rt.adjusted_pvalues(p, method="holm"), holm, rtol=1e-12)
    hommel = _closed_testing(p, "simes")
    np.testing.assert_allclose(rt.adjusted_pvalues(p, method="hommel"), hommel, rtol=1e-12)
    hochberg = np.minimum.accumulate(np.minimum(1, (m - j + 1) * ps)[::-1])[::-1]
    np.testing.assert_allclose(
        rt.adjusted_pvalues(p, method="hochberg"), unsort(hochberg), rtol=1e-12
    )
    finner = np.maximum.accumulate(1 - (1 - ps) ** (m / j))
    np.testing.assert_allclose(rt.adjusted_pvalues(p, method="finner"), unsort(finner), rtol=1e-12)
    li = p / (p + 1 - p.max())
    li[p == p.max()] = p.max()
    np.testing.assert_allclose(rt.adjusted_pvalues(p, method="li"), li, rtol=1e-12)
    bonferroni = np.minimum(1, m * p)
    np.testing.assert_allclose(rt.adjusted_pvalues(p, method="bonferroni"), bonferroni)


def test_li_with_largest_p_one() -> None:
    got = rt.adjusted_pvalues([0.0, 0.3, 1.0], method="li")
    np.testing.assert_array_equal(got, [0.0, 1.0, 1.0])


def _partitions(items: list[int]) -> list[list[list[int]]]:
    if not items:
        return [[]]
    first, rest = items[0], items[1:]
    out = []
    for part in _partitions(rest):
        out.append([[first], *part])
        for i in range(len(part)):
            out.append([*part[:i], [first, *part[i]], *part[i + 1 :]])
    return out


def test_shaffer_sets() -> None:
    assert rt.shaffer_true_hypotheses(0) == (0,)
    assert rt.shaffer_true_hypotheses(1) == (0,)
    assert rt.shaffer_true_hypotheses(4) == (0, 1, 2, 3, 6)
    # 7 is not in S(5): no partition of 5 items has 7 pairs inside its blocks
    assert rt.shaffer_true_hypotheses(5) == (0, 1, 2, 3, 4, 6, 10)
    for k in range(2, 8):
        brute = {
            sum(len(b) * (len(b) - 1) // 2 for b in part) for part in _partitions(list(range(k)))
        }
        assert rt.shaffer_true_hypotheses(k) == tuple(sorted(brute))


def test_shaffer_adjustment_for_four_algorithms() -> None:
    p = np.array([0.001, 0.04, 0.01, 0.02, 0.3, 0.008])
    t = np.array([6, 3, 3, 3, 2, 1])  # max true hypotheses after j − 1 rejections, k = 4
    order = np.argsort(p)
    expected = np.empty(6)
    expected[order] = np.maximum.accumulate(np.minimum(1, t * p[order]))
    np.testing.assert_allclose(rt.adjusted_pvalues(p, method="shaffer"), expected, rtol=1e-14)


@given(hnp.arrays(np.float64, st.integers(1, 10), elements=st.floats(0, 1)))
def test_adjusted_pvalues_properties(p: np.ndarray) -> None:
    order = np.argsort(p, kind="stable")
    for method in ("bonferroni", "holm", "hochberg", "hommel", "finner", "li"):
        adj = rt.adjusted_pvalues(p, method=method)
        assert np.all(adj >= p)
        assert np.all(adj <= 1.0)
        assert np.all(np.diff(adj[order]) >= 0), method


@given(hnp.arrays(np.float64, st.sampled_from([1, 3, 6, 10, 15]), elements=st.floats(0, 1)))
def test_shaffer_is_between_raw_and_holm(p: np.ndarray) -> None:
    adj = rt.adjusted_pvalues(p, method="shaffer")
    holm = rt.adjusted_pvalues(p, method="holm")
    assert np.all(adj >= p)
    assert np.all(adj <= holm + 1e-15)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adj[order]) >= 0)


# ------------------------------------------------------------------------ post-hoc API


@pytest.mark.parametrize("method", ALL_METHODS)
def test_posthoc_result_shape(method: str) -> None:
    x = _random_ties(5, n=15, k=5, levels=5)
    control = 1 if method in ("bonferroni-dunn", "li") else None
    res = rt.posthoc(x, method=method, control=control, alpha=0.1)
    assert res.procedure == method
    assert res.method == "asymptotic"
    assert res.alpha == 0.1
    assert res.n_problems == 15
    assert res.n_algorithms == 5
    np.testing.assert_allclose(res.average_ranks, stats.rankdata(x, axis=1).mean(axis=0))
    for pair in res.pairs:
        assert 0.0 <= pair.p_value <= pair.p_adjusted <= 1.0  # Nemenyi too: range >= |gap|
        assert pair.significant == (pair.p_adjusted < 0.1)
    if control is None:
        assert res.comparison == "all-pairs"
        assert [(p.i, p.j) for p in res.pairs] == list(itertools.combinations(range(5), 2))
        assert res.p_matrix is not None
        np.testing.assert_array_equal(res.p_matrix, res.p_matrix.T)
        np.testing.assert_array_equal(np.diag(res.p_matrix), 1.0)
        assert not np.isnan(res.p_matrix).any()
    else:
        assert res.comparison == "vs-control"
        assert res.p_matrix is None
    if method in ("nemenyi", "bonferroni-dunn"):
        assert res.critical_difference is not None
    else:
        assert res.critical_difference is None
        assert res.critical_value is None


def test_posthoc_step_methods_use_the_right_family() -> None:
    x = _random_ties(8, n=30, k=6, levels=6) + np.arange(6) * 0.3
    pairs = rt.posthoc(x, method="holm")
    raw = np.array([p.p_value for p in pairs.pairs])
    np.testing.assert_allclose(
        [p.p_adjusted for p in pairs.pairs], rt.adjusted_pvalues(raw, method="holm")
    )
    control = rt.posthoc(x, method="finner", control=3)
    raw = np.array([p.p_value for p in control.pairs])
    assert raw.size == 5
    np.testing.assert_allclose(
        [p.p_adjusted for p in control.pairs], rt.adjusted_pvalues(raw, method="finner")
    )


def test_posthoc_ranks_infinities() -> None:
    x = _random_ties(6, n=10, k=4)
    x[:, 3] = np.inf
    res = rt.posthoc(x, method="hommel")
    assert res.average_ranks[3] == 4.0
    assert not np.isnan(res.p_matrix).any()


def test_posthoc_all_tied_is_degenerate() -> None:
    res = rt.posthoc(np.ones((5, 4)), method="shaffer")
    assert res.degenerate
    assert all(p.p_adjusted == 1.0 for p in res.pairs)
    assert res.cliques == ((0, 1, 2, 3),)


# ----------------------------------------------------------------------- Bradley–Terry


def test_pairwise_wins() -> None:
    x = _random_ties(2, n=20, k=5, levels=3)
    w = rt.pairwise_wins(x)
    off = ~np.eye(5, dtype=bool)
    np.testing.assert_array_equal((w + w.T)[off], 20.0)
    np.testing.assert_array_equal(np.diag(w), 0.0)
    i, j = 1, 3
    assert w[i, j] == np.sum(x[:, i] < x[:, j]) + 0.5 * np.sum(x[:, i] == x[:, j])


def _bt_mle(w: np.ndarray) -> np.ndarray:
    k = w.shape[0]

    def nll(beta: np.ndarray) -> float:
        b = np.concatenate(([0.0], beta))
        diff = b[:, None] - b[None, :]
        return float(np.sum(w * np.logaddexp(0.0, -diff)))

    fit = optimize.minimize(nll, np.zeros(k - 1), method="BFGS", options={"gtol": 1e-12})
    theta = np.exp(np.concatenate(([0.0], fit.x)))
    return theta / np.exp(np.mean(np.log(theta)))


def test_bradley_terry_matches_direct_mle_and_zermelo() -> None:
    x = np.random.default_rng(4).normal(size=(40, 5)) + np.linspace(0, 1, 5)
    w = rt.pairwise_wins(x)
    res = rt.bradley_terry(w)
    assert not res.degenerate
    assert res.converged
    assert res.iteration == "newman"
    np.testing.assert_allclose(res.strengths, _bt_mle(w), rtol=1e-6)
    assert np.exp(np.mean(np.log(res.strengths))) == pytest.approx(1.0, rel=1e-12)
    assert res.zermelo_max_relative_difference < 1e-8
    p = res.strengths[:, None] / (res.strengths[:, None] + res.strengths[None, :])
    np.fill_diagonal(p, 0.5)
    np.testing.assert_allclose(res.probabilities, p, rtol=1e-14)
    assert res.components == ((0, 1, 2, 3, 4),)


def test_bradley_terry_two_algorithms_closed_form() -> None:
    res = rt.bradley_terry([[0.0, 3.0], [1.0, 0.0]])
    np.testing.assert_allclose(res.strengths, [math.sqrt(3), 1 / math.sqrt(3)], rtol=1e-12)
    assert res.probabilities[0, 1] == pytest.approx(0.75, rel=1e-12)


def test_bradley_terry_never_wins_and_never_loses() -> None:
    x = np.random.default_rng(5).normal(size=(30, 5))
    x[:, 0] = -100.0  # algorithm 0 wins every problem
    x[:, 4] = 100.0  # algorithm 4 loses every problem
    res = rt.bradley_terry(rt.pairwise_wins(x))
    assert res.degenerate
    assert res.strengths[0] == math.inf
    assert res.strengths[4] == 0.0
    assert np.all(np.isfinite(res.strengths[1:4]) & (res.strengths[1:4] > 0))
    assert np.exp(np.mean(np.log(res.strengths[1:4]))) == pytest.approx(1.0, rel=1e-12)
    assert res.components == ((0,), (1, 2, 3), (4,))
    assert "never loses" in (res.reason or "")
    assert "never wins" in (res.reason or "")
    assert res.probabilities[0, 4] == 1.0
    assert res.probabilities[4, 1] == 0.0
    np.testing.assert_allclose(res.strengths[1:4], _bt_mle(rt.pairwise_wins(x[:, 1:4])), 1e-6)


def test_bradley_terry_dominance_chain() -> None:
    res = rt.bradley_terry(rt.pairwise_wins(CONCORDANT))
    assert res.components == ((4,), (1,), (0,), (2,), (3,))
    np.testing.assert_array_equal(res.strengths, [0.0, 1.0, 0.0, 0.0, math.inf])
    expected = np.zeros((5, 5))
    rank = {a: r for r, a in enumerate([4, 1, 0, 2, 3])}
    for i, j in itertools.product(range(5), repeat=2):
        expected[i, j] = 0.5 if i == j else float(rank[i] < rank[j])
    np.testing.assert_array_equal(res.probabilities, expected)
    strict = rt.bradley_terry([[0.0, 4.0], [0.0, 0.0]])
    np.testing.assert_array_equal(strict.strengths, [math.inf, 0.0])


def test_bradley_terry_all_ties() -> None:
    res = rt.bradley_terry(rt.pairwise_wins(np.zeros((6, 3))))
    np.testing.assert_allclose(res.strengths, 1.0)
    np.testing.assert_allclose(res.probabilities, 0.5)


def test_bradley_terry_unordered_groups_and_validation() -> None:
    with pytest.raises(NotApplicable):  # 1 and 2 never compared, both beaten by 0
        rt.bradley_terry([[0, 1, 1], [0, 0, 0], [0, 0, 0]])
    for bad, field in (
        ([[0, -1], [1, 0]], "wins"),
        ([[0, 1, 2]], "wins"),
        ([[0.0]], "algorithms"),
        ([[0, np.inf], [1, 0]], "wins"),
    ):
        with pytest.raises(InvalidInput) as err:
            rt.bradley_terry(bad)
        assert err.value.field == field
    with pytest.raises(InvalidInput) as err:
        rt.bradley_terry([[0, 1], [1, 0]], tol=0.0)
    assert err.value.field == "tol"


# ------------------------------------------------------------------------- properties

matrices = st.tuples(st.integers(2, 8), st.integers(2, 6)).flatmap(
    lambda s: hnp.arrays(np.float64, s, elements=st.integers(-5, 5))
)


def _transform(x: np.ndarray) -> np.ndarray:
    """Strictly increasing and exact on small integers (no rounding can create ties)."""
    return x**3 + 2.0 * x + 7.0


@given(matrices)
def test_friedman_properties(x: np.ndarray) -> None:
    res = rt.friedman(x)
    n, k = x.shape
    for p in (res.p_value, res.iman_davenport_p_value):
        assert 0.0 <= p <= 1.0
    assert 0.0 <= res.statistic <= n * (k - 1) * (1 + 1e-12)
    assert not math.isnan(res.iman_davenport_statistic)
    again = rt.friedman(_transform(x))
    assert again.statistic == res.statistic
    assert again.p_value == res.p_value
    ranks, _ = rt.rank_matrix(x)
    np.testing.assert_array_equal(ranks.sum(axis=1), k * (k + 1) / 2)
    for other in (rt.friedman_aligned_ranks(x), rt.quade(x)):
        assert 0.0 <= other.p_value <= 1.0
        assert not math.isnan(other.statistic)


@given(matrices, st.sampled_from(ALL_METHODS))
def test_posthoc_properties(x: np.ndarray, method: str) -> None:
    control = 0 if method in ("bonferroni-dunn", "li") else None
    res = rt.posthoc(x, method=method, control=control)
    again = rt.posthoc(_transform(x), method=method, control=control)
    assert again.pairs == res.pairs
    assert again.cliques == res.cliques
    significant = {frozenset((p.i, p.j)) for p in res.pairs if p.significant}
    for pair in res.pairs:
        assert 0.0 <= pair.p_value <= 1.0
        assert 0.0 <= pair.p_adjusted <= 1.0
    for clique in res.cliques:
        assert len(clique) >= 2
        for a, b in itertools.combinations(clique, 2):
            assert frozenset((a, b)) not in significant


@given(matrices)
def test_bradley_terry_never_nan(x: np.ndarray) -> None:
    res = rt.bradley_terry(rt.pairwise_wins(x))
    assert not np.isnan(res.strengths).any()
    assert not np.isnan(res.probabilities).any()
    np.testing.assert_allclose(res.probabilities + res.probabilities.T, 1.0, rtol=1e-12)
    finite = res.strengths[np.isfinite(res.strengths) & (res.strengths > 0)]
    if finite.size:
        assert np.exp(np.mean(np.log(finite))) == pytest.approx(1.0, rel=1e-9)
