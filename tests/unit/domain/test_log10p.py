"""``log10_`` companions of the p-values: right far below the float range.

References are independent: mpmath at 40-60 digits for the χ², F, normal and studentized-range
tails (p down to 1e-9000), exact integers and ``Fraction`` for binomial, sign, lattice and
permutation counts, and statsmodels' ``multipletests`` for the adjustments (in the float range,
and shifted by a power of ten below it, where the homogeneous procedures must shift alike).
"""

import math
from fractions import Fraction

import mpmath as mp
import numpy as np
import pytest
from statsmodels.stats.multitest import multipletests

from app.domain import machines, paired, permutation, ranktests, twosample
from app.domain.errors import InvalidInput
from app.domain.ranktests import _common
from app.domain.stattools import (
    binomial_half_log10_cdf,
    log10_int_ratio,
    normal_log10_p,
)
from app.domain.twosample._ks import KSPath, ks_exact_log10

mp.mp.dps = 50


def _close(got: float, ref: mp.mpf, rel: float = 1e-12) -> None:
    assert math.isfinite(got)
    assert got == pytest.approx(float(ref), rel=rel, abs=1e-13)


def _chi2_ref(x: float, df: int) -> mp.mpf:
    return mp.log10(mp.gammainc(mp.mpf(df) / 2, mp.mpf(x) / 2, mp.inf, regularized=True))


def _f_ref(f: float, d1: int, d2: int) -> mp.mpf:
    x = mp.mpf(d2) / (d2 + d1 * mp.mpf(f))
    return mp.log10(mp.betainc(mp.mpf(d2) / 2, mp.mpf(d1) / 2, 0, x, regularized=True))


def _normal_ref(z: float) -> mp.mpf:  # log10 P(Z > z)
    return mp.log10(mp.erfc(mp.mpf(z) / mp.sqrt(2)) / 2)


def _range_ref(q: float, k: int) -> mp.mpf:
    """log10 P(range of k normals > q) by mpmath quadrature of David & Nagaraja's integral."""
    with mp.workdps(30):
        qq = mp.mpf(q)

        def phic(z: mp.mpf) -> mp.mpf:
            return mp.erfc(z / mp.sqrt(2)) / 2

        def f(z: mp.mpf) -> mp.mpf:
            weight = k * mp.exp(-z * z / 2) / mp.sqrt(2 * mp.pi) * phic(z) ** (k - 1)
            return weight * -mp.expm1((k - 1) * mp.log1p(-phic(z + qq) / phic(z)))

        nodes = [-mp.inf, *mp.linspace(-qq / 2 - 12, 8, 120), mp.inf]
        return mp.log10(mp.quad(f, nodes))


# --------------------------------------------------------------------------- continuous tails


@pytest.mark.parametrize(
    ("x", "df"), [(4500.0, 9), (60.0, 9), (3000.0, 1), (4700.0, 4), (5000.0, 99), (41000.0, 9)]
)
def test_chi2_log_tail_matches_mpmath(x: float, df: int) -> None:
    _close(ranktests.chi2_log10_sf(x, df), _chi2_ref(x, df))


@pytest.mark.parametrize(
    ("f", "d1", "d2"),
    [(1e6, 9, 4491), (3000.0, 9, 4491), (1e5, 4, 24), (3.8, 4, 24), (1e30, 2, 10), (1e120, 3, 6)],
)
def test_f_log_tail_matches_mpmath(f: float, d1: int, d2: int) -> None:
    _close(ranktests.f_log10_sf(f, d1, d2), _f_ref(f, d1, d2))


# The continued fractions (the far tail, where the float SF underflows) against scipy's log-space
# quadrature, the implementation before them (still the fallback): also where mpmath's betainc
# gives up (dfd = 49,401: the 100 × 500 Friedman test of bench/ranktests.py).
_CHI2_FAR = [(7936.023657891268, 99), (1600.0, 10), (3e4, 9999), (1e6, 3), (2000.0, 500)]
_F_FAR = [
    (95.2847, 99, 49401),
    (3000.0, 9, 4491),
    (1e120, 3, 6),
    (500.0, 2, 2000),
    (300, 999, 499500),
]


@pytest.mark.parametrize(("x", "df"), _CHI2_FAR)
def test_chi2_log_tail_continued_fraction_matches_the_quadrature(x: float, df: int) -> None:
    got = _common._log_sf_continued_fraction("chi2", x, {"df": df})
    assert got is not None
    assert got == pytest.approx(_common._log_sf_quadrature("chi2", x, {"df": df}), rel=1e-13)
    assert ranktests.chi2_log10_sf(x, df) == pytest.approx(got / math.log(10), rel=1e-15)


@pytest.mark.parametrize(("f", "d1", "d2"), _F_FAR)
def test_f_log_tail_continued_fraction_matches_the_quadrature(f: float, d1: int, d2: int) -> None:
    params = {"dfn": d1, "dfd": d2}
    got = _common._log_sf_continued_fraction("f", f, params)
    assert got is not None
    assert got == pytest.approx(_common._log_sf_quadrature("f", f, params), rel=1e-13)
    assert ranktests.f_log10_sf(f, d1, d2) == pytest.approx(got / math.log(10), rel=1e-15)


def test_f_log_tail_with_large_df_matches_the_mpmath_series() -> None:
    # bench/ranktests.py's Iman–Davenport F (100 × 500); mpmath's betainc does not converge
    # there, so the reference sums I_y(a, b) = y^a (1−y)^b / (a B(a, b)) · 2F1(a+b, 1; a+1; y)
    f, d1, d2 = 95.27663505273831, 99, 49401
    a, b = mp.mpf(d2) / 2, mp.mpf(d1) / 2
    y = mp.mpf(d2) / (d2 + d1 * mp.mpf(f))
    term, total, n = mp.mpf(1), mp.mpf(0), 0
    while term > total * mp.mpf(10) ** -40:
        total += term
        term *= (a + b + n) / (a + 1 + n) * y
        n += 1
    ref = mp.log10(y**a * (1 - y) ** b / (a * mp.beta(a, b)) * total)  # −1761.89796011567735
    _close(ranktests.f_log10_sf(f, d1, d2), ref, rel=1e-14)


def test_log_tail_continued_fraction_declines_outside_its_domain() -> None:
    assert _common._log_sf_continued_fraction("chi2", 5.0, {"df": 20}) is None  # x/2 < a + 1
    assert _common._log_sf_continued_fraction("f", 1e307, {"dfn": 1000, "dfd": 10}) is None


@pytest.mark.parametrize("z", [0.5, 5.0, 38.0, 67.7, 200.0])
def test_normal_log_tails_match_mpmath(z: float) -> None:
    _close(normal_log10_p(z, "greater"), _normal_ref(z))
    _close(normal_log10_p(-z, "less"), _normal_ref(z))
    _close(normal_log10_p(-z, "two-sided"), mp.log10(2) + _normal_ref(z))
    assert normal_log10_p(0.0, "two-sided") == 0.0


@pytest.mark.parametrize("q", [30.0, 60.0, 100.0, 300.0])
def test_studentized_range_log_tail_for_two_means_is_log_erfc(q: float) -> None:
    _close(float(ranktests.studentized_range_log10_sf(q, 2)), mp.log10(mp.erfc(mp.mpf(q) / 2)))


@pytest.mark.parametrize(("q", "k"), [(30.0, 10), (60.0, 3), (80.0, 5)])
def test_studentized_range_log_tail_matches_mpmath_quadrature(q: float, k: int) -> None:
    _close(float(ranktests.studentized_range_log10_sf(q, k)), _range_ref(q, k), rel=1e-11)


def test_studentized_range_log_tail_agrees_with_the_float_one_where_both_exist() -> None:
    q = np.array([0.0, 1.0, 3.3, 8.0, 20.0, 35.0])
    sf = ranktests.studentized_range_sf(q, 6)
    got = ranktests.studentized_range_log10_sf(q, 6)
    assert got == pytest.approx(np.log10(sf), rel=1e-13, abs=1e-15)
    assert got[0] == 0.0
    assert ranktests.studentized_range_log10_sf(np.inf, 4) == -np.inf


# ------------------------------------------------------------------ the case of the issue


def test_friedman_ten_by_five_hundred_concordant_keeps_its_logarithm() -> None:
    values = np.tile(np.arange(10.0), (500, 1))
    res = ranktests.friedman(values)
    assert res.statistic == 4500.0
    assert res.p_value == 0.0
    assert res.log10_p_value == pytest.approx(float(_chi2_ref(4500.0, 9)), rel=1e-9)
    assert res.log10_p_value == pytest.approx(-966.4949139274266, rel=1e-12)
    assert res.iman_davenport_p_value == 0.0  # F = +inf: the F approximation's p is 0 exactly
    assert res.log10_iman_davenport_p_value == -math.inf


def test_nemenyi_and_holm_pairs_of_the_concordant_case_match_mpmath() -> None:
    values = np.tile(np.arange(10.0), (500, 1))
    z = 9.0 / math.sqrt(10 * 11 / (6.0 * 500))  # algorithms 0 and 9: the extreme pair
    raw = mp.log10(2) + _normal_ref(z)
    nemenyi = ranktests.posthoc(values, method="nemenyi")
    pair = next(p for p in nemenyi.pairs if (p.i, p.j) == (0, 9))
    assert pair.p_value == 0.0
    assert pair.p_adjusted == 0.0
    _close(pair.log10_p_value, raw)
    _close(pair.log10_p_adjusted, _range_ref(math.sqrt(2.0) * z, 10), rel=1e-11)
    assert nemenyi.log10_p_matrix[0, 9] == pair.log10_p_adjusted
    assert nemenyi.log10_p_matrix[9, 0] == pair.log10_p_adjusted
    holm = ranktests.posthoc(values, method="holm")
    pair = next(p for p in holm.pairs if (p.i, p.j) == (0, 9))
    _close(pair.log10_p_adjusted, raw + mp.log10(45))  # the smallest p: times m = 45
    logs = np.array([p.log10_p_adjusted for p in holm.pairs])
    raws = np.array([p.log10_p_value for p in holm.pairs])
    order = np.argsort(raws)
    assert np.all(np.diff(logs[order]) >= 0.0)
    assert np.all(logs >= raws)
    assert np.all(logs <= 0.0)


def test_posthoc_logs_equal_the_logs_of_the_float_p_values_in_range() -> None:
    rng = np.random.default_rng(3)
    values = rng.normal(size=(30, 6)) + np.arange(6) * 0.4
    for method, control in [
        ("nemenyi", None),
        ("shaffer", None),
        ("hommel", None),
        ("finner", 2),
        ("li", 0),
        ("bonferroni-dunn", 1),
        ("hochberg", None),
    ]:
        res = ranktests.posthoc(values, method=method, control=control)
        for p in res.pairs:
            assert p.log10_p_value == pytest.approx(math.log10(p.p_value), rel=1e-12, abs=1e-14)
            assert p.log10_p_adjusted == pytest.approx(
                math.log10(p.p_adjusted), rel=1e-12, abs=1e-14
            ), method
        matrix = res.p_matrix if res.p_matrix is not None else res.p_vs_control
        logs = res.log10_p_matrix if res.log10_p_matrix is not None else res.log10_p_vs_control
        assert logs == pytest.approx(np.log10(matrix), rel=1e-12, abs=1e-14)


def test_aligned_ranks_and_quade_logs_below_the_float_range() -> None:
    rng = np.random.default_rng(0)
    values = np.arange(8.0)[None, :] * 100.0 + rng.normal(size=(2000, 8))
    values *= rng.uniform(1.0, 2.0, size=(2000, 1))  # unequal ranges: Quade stays finite
    aligned = ranktests.friedman_aligned_ranks(values)
    assert aligned.p_value == 0.0
    _close(aligned.log10_p_value, _chi2_ref(aligned.statistic, 7), rel=1e-11)
    quade = ranktests.quade(values)
    assert quade.p_value == 0.0
    _close(quade.log10_p_value, _f_ref(quade.statistic, *quade.df), rel=1e-11)


# --------------------------------------------------------------------------- adjustments

METHODS_SM = {
    "bonferroni": "bonferroni",
    "holm": "holm",
    "hochberg": "simes-hochberg",
    "hommel": "hommel",
}


@pytest.mark.parametrize("method", sorted(METHODS_SM))
@pytest.mark.parametrize("seed", range(4))
def test_log_adjustments_equal_log_statsmodels_in_range(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = 10.0 ** rng.uniform(-12, 0, size=int(rng.integers(2, 30)))
    ref = multipletests(p, method=METHODS_SM[method])[1]
    got = ranktests.adjusted_log10_pvalues(np.log10(p), method=method)
    assert 10.0**got == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("method", ["finner", "li", "shaffer"])
@pytest.mark.parametrize("seed", range(4))
def test_log_adjustments_equal_log_of_the_float_ones_in_range(method: str, seed: int) -> None:
    rng = np.random.default_rng(seed)
    p = 10.0 ** rng.uniform(-12, 0, size=10 if method == "shaffer" else 7)
    ref = ranktests.adjusted_pvalues(p, method=method)
    got = ranktests.adjusted_log10_pvalues(np.log10(p), method=method)
    assert 10.0**got == pytest.approx(ref, rel=1e-12)


@pytest.mark.parametrize("method", [*sorted(METHODS_SM), "shaffer"])
def test_homogeneous_adjustments_shift_with_the_raw_p_values_below_the_float_range(
    method: str,
) -> None:
    """Multiples of the p's: with every adjusted p below 1, dividing all raw p's by 10^2000
    divides the adjusted ones by 10^2000 too (statsmodels gives the unshifted reference)."""
    rng = np.random.default_rng(11)
    p = 10.0 ** rng.uniform(-9, -4, size=10)
    if method == "shaffer":  # not in statsmodels: our float Shaffer (tested elsewhere)
        ref = ranktests.adjusted_pvalues(p, method=method)
    else:
        ref = multipletests(p, method=METHODS_SM[method])[1]
    assert ref.max() < 1.0
    got = ranktests.adjusted_log10_pvalues(np.log10(p) - 2000.0, method=method)
    assert got == pytest.approx(np.log10(ref) - 2000.0, rel=1e-12)


def test_finner_and_li_below_the_float_range_match_mpmath() -> None:
    lp = np.array([-3000.0, -2500.0, -800.0, -5.0, -0.5])
    m = lp.size
    p = [mp.mpf(10) ** mp.mpf(x) for x in lp]
    finner = [-mp.expm1(mp.mpf(m) / (j + 1) * mp.log1p(-p[j])) for j in range(m)]
    finner = [max(finner[: j + 1]) for j in range(m)]
    got = ranktests.adjusted_log10_pvalues(lp, method="finner")
    for g, r in zip(got, finner, strict=True):
        _close(float(g), mp.log10(r))
    largest = p[-1]
    li = [x / (x + 1 - largest) for x in p[:-1]] + [largest]
    got = ranktests.adjusted_log10_pvalues(lp, method="li")
    for g, r in zip(got, li, strict=True):
        _close(float(g), mp.log10(r))


LOG_METHODS = ["bonferroni", "finner", "hochberg", "holm", "hommel", "li", "shaffer"]


@pytest.mark.parametrize("method", LOG_METHODS)
def test_log_adjustments_below_the_float_range_are_monotone_and_at_most_zero(method: str) -> None:
    lp = np.array([-5000.0, -0.2, -4000.0, -3.0, -1e-9, -700.0, 0.0, -20.0, -320.0, -1.0])
    got = ranktests.adjusted_log10_pvalues(lp, method=method)
    assert np.all(np.isfinite(got))
    assert np.all(got <= 0.0)
    assert np.all(got >= lp)
    if method != "li":  # Li is monotone too, but through p/(p + 1 − p_max)
        order = np.argsort(lp)
        assert np.all(np.diff(got[order]) >= -1e-12)


def test_li_with_a_largest_p_of_one_gives_one_also_when_the_raw_float_underflowed() -> None:
    adjusted = ranktests.adjusted_family([0.0, 1.0], [-400.0, 0.0], method="li")
    assert adjusted.p.tolist() == [1.0, 1.0]
    assert adjusted.log10_p.tolist() == [0.0, 0.0]


def test_log_adjustments_refuse_positive_logs() -> None:
    with pytest.raises(InvalidInput, match=r"must lie in \[-inf, 0\]"):
        ranktests.adjusted_log10_pvalues([0.1], method="holm")


# --------------------------------------------------------------------------- exact counts


def _binomial_tail(k: int, n: int) -> Fraction:  # P(Bin(n, 1/2) <= k), exactly
    return Fraction(sum(math.comb(n, i) for i in range(k + 1)), 2**n)


def _log10_fraction(x: Fraction) -> float:
    return math.log10(x.numerator) - math.log10(x.denominator)


@pytest.mark.parametrize(("k", "n"), [(0, 1200), (2, 3000), (40, 3000), (900, 3000), (5, 10)])
def test_binomial_log_tail_matches_exact_integers(k: int, n: int) -> None:
    ref = _log10_fraction(_binomial_tail(k, n))
    assert binomial_half_log10_cdf(k, n) == pytest.approx(ref, rel=1e-12)


def test_sign_test_logs_match_exact_integers() -> None:
    n = 3000
    x = np.concatenate([np.ones(n - 3), -np.ones(3)])  # 3 negative differences
    for alternative, sign, ref in [
        ("two-sided", 1.0, 2 * _binomial_tail(3, n)),
        ("greater", 1.0, _binomial_tail(3, n)),  # P(K >= n − 3) = P(K <= 3)
        ("less", -1.0, _binomial_tail(3, n)),  # 3 positive differences: P(K <= 3)
        ("less", 1.0, _binomial_tail(n - 3, n)),  # P(K <= n − 3), next to 1
    ]:
        res = paired.sign_test(sign * x, alternative=alternative)
        expected = _log10_fraction(ref)
        assert res.log10_p_value == pytest.approx(expected, rel=1e-12, abs=1e-15), alternative
    assert paired.sign_test(x).p_value == 0.0


def test_wilcoxon_logs_exact_and_asymptotic() -> None:
    exact = paired.wilcoxon_signed_rank(np.arange(1.0, 301.0), alternative="greater")
    assert exact.method == "exact"
    assert exact.log10_p_value == pytest.approx(-300 * math.log10(2.0), rel=1e-12)
    big = paired.wilcoxon_signed_rank(np.arange(1.0, 3001.0), alternative="greater")
    assert big.method == "asymptotic"
    assert big.p_value == 0.0
    _close(big.log10_p_value, _normal_ref(big.z))


def test_rank_sum_asymptotic_log_matches_mpmath() -> None:
    res = twosample.rank_sum(np.arange(3000.0), np.arange(3000.0, 6000.0))
    assert res.method == "asymptotic"
    assert res.p_value == 0.0
    _close(res.log10_p_value, mp.log10(2) + _normal_ref(abs(res.z)))


@pytest.mark.parametrize(("alternative", "paths"), [("less", 1), ("two-sided", 2)])
def test_ks_exact_log_below_the_float_range_counts_the_extreme_paths(
    alternative: str, paths: int
) -> None:
    res = twosample.ks_2samp(np.arange(600.0), np.arange(600.0, 1200.0), alternative=alternative)
    assert res.method == "exact"
    assert res.p_value == 0.0
    expected = log10_int_ratio(paths, math.comb(1200, 600))
    assert res.log10_p_value == pytest.approx(expected, rel=1e-12)


def test_ks_exact_log_walk_agrees_with_the_float_walk_with_ties() -> None:
    rng = np.random.default_rng(5)
    x, y = rng.integers(0, 12, size=40).astype(float), rng.integers(3, 15, size=35).astype(float)
    for alternative in ("two-sided", "less", "greater"):
        res = twosample.ks_2samp(x, y, alternative=alternative)
        assert res.log10_p_value == pytest.approx(math.log10(res.p_value), rel=1e-12)
        n = x.size + y.size
        path = KSPath(  # the log-space walk itself, on the same lattice
            is_end=np.isin(
                np.arange(n + 1),
                np.cumsum(np.unique(np.concatenate([x, y]), return_counts=True)[1]),
            ),
            n_x=x.size,
            n_y=y.size,
            d_num=round(res.statistic * x.size * y.size),
        )
        log_walk = ks_exact_log10(path, alternative)
        assert log_walk == pytest.approx(math.log10(res.p_value), rel=1e-11)


def _smirnov_ref(n: int, d: float) -> mp.mpf:
    dd = mp.mpf(d)
    total = mp.mpf(0)
    for j in range(math.floor(n * (1 - d)) + 1):
        rest = 1 - dd - mp.mpf(j) / n
        if rest > 0:
            total += mp.binomial(n, j) * rest ** (n - j) * (dd + mp.mpf(j) / n) ** (j - 1)
    return mp.log10(dd * total)


def test_ks_asymptotic_two_sided_log_below_the_float_range() -> None:
    x, y = np.arange(25000.0), np.arange(9000.0, 34000.0)  # D = 0.36, n_eff = 12500
    res = twosample.ks_2samp(x, y)
    assert res.method == "asymptotic"
    assert res.p_value == 0.0
    _close(res.log10_p_value, mp.log10(2) + _smirnov_ref(12500, res.statistic), rel=1e-10)
    full = twosample.ks_2samp(np.arange(25000.0), np.arange(25000.0, 50000.0))
    expected = math.log10(2.0) - float(mp.log10(mp.binomial(50000, 25000)))
    assert full.log10_p_value == pytest.approx(expected, rel=1e-10)  # D = 1: the permutation p


def test_ks_asymptotic_one_sided_log_is_the_hodges_exponent() -> None:
    x, y = np.arange(25000.0), np.arange(9000.0, 34000.0)
    res = twosample.ks_2samp(x, y, alternative="less")
    m = n = 25000.0
    z = math.sqrt(m * n / (m + n)) * res.statistic
    exponent = -2 * z**2 - 2 * z * (m + 2 * n) / math.sqrt(m * n * (m + n)) / 3.0
    assert res.p_value == 0.0
    assert res.log10_p_value == pytest.approx(exponent / math.log(10.0), rel=1e-13)


def test_permutation_logs_are_exact_ratios_and_the_paper_zero_is_minus_infinity() -> None:
    x, y = np.arange(10.0), np.arange(10.0, 20.0)
    res = permutation.permutation_test(x, y, statistic="mean", alternative="less", method="exact")
    assert res.log10_p_value == pytest.approx(-math.log10(math.comb(20, 10)), rel=1e-13)
    mc = permutation.permutation_test(
        np.arange(40.0),
        np.arange(40.0, 80.0),
        statistic="mean",
        method="monte_carlo",
        n_resamples=999,
        seed=1,
    )
    assert mc.n_extreme == 0.0
    assert mc.log10_p_value == pytest.approx(-3.0, rel=1e-13)  # (0 + 1)/(999 + 1)
    assert mc.p_value_paper == 0.0
    assert mc.log10_p_value_paper == -math.inf


def _corrected_ref(n: int, k: int, p_gamma: Fraction) -> Fraction:
    cum = [0] * (n + 1)
    s = 0
    for y in range(n + 1):
        s += math.comb(n, y)
        cum[y] = s
    q = 1 - p_gamma
    total = sum(
        math.comb(n, x) * p_gamma**x * q ** (n - x) * cum[min(k + x, n)] for x in range(n + 1)
    )
    return total / 2**n


@pytest.mark.parametrize("n", [400, 700])  # the rational path, and the float one beyond 500
def test_cross_machine_logs_match_exact_fractions(n: int) -> None:
    res = machines.corrected_sign_test(n=n, k=2, p_gamma=0.1)
    assert res.log10_p_value == pytest.approx(_log10_fraction(_binomial_tail(2, n)), rel=1e-12)
    ref = _log10_fraction(_corrected_ref(n, 2, Fraction(0.1)))  # the float 0.1, exactly
    assert res.log10_p_value_corrected == pytest.approx(ref, rel=1e-11)


def test_cross_machine_logs_below_the_float_range() -> None:
    res = machines.corrected_sign_test(n=2000, k=3, p_gamma=0.1)
    assert res.p_value == 0.0
    assert res.log10_p_value == pytest.approx(_log10_fraction(_binomial_tail(3, 2000)), rel=1e-12)
    assert res.log10_p_value < res.log10_p_value_corrected < 0.0
