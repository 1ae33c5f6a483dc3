"""The papers' conventions, on request (issue 13 item 5), against references computed here.

- ``cd_convention="jing-liu"``: CD = z_{1 − α/(2k)} · sqrt(k (k + 1) / (6 N)) (Jing & Liu,
  Table I), with scipy.stats.norm.ppf, and the significance/cliques that CD implies;
- the rank-sum normal approximation without tie or continuity correction = scipy.stats.ranksums;
- the exact KS law ignoring ties = scipy.stats.ks_2samp(method="exact").
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from app.domain import ranktests, twosample
from app.domain.errors import InvalidInput

# ------------------------------------------------------------------------ jing-liu CD


def _jing_liu_cd(alpha: float, k: int, n: int) -> float:
    return float(stats.norm.ppf(1.0 - alpha / (2.0 * k))) * math.sqrt(k * (k + 1) / (6.0 * n))


@pytest.mark.parametrize("method", ["nemenyi", "bonferroni-dunn"])
@pytest.mark.parametrize("alpha", [0.01, 0.05, 0.1])
@pytest.mark.parametrize(("k", "n"), [(2, 3), (3, 17), (5, 10), (11, 3), (11, 30), (20, 50)])
def test_jing_liu_cd_is_the_normal_quantile_at_alpha_over_2k(
    method: str, alpha: float, k: int, n: int
) -> None:
    cd = ranktests.critical_difference(k, n, alpha=alpha, method=method, cd_convention="jing-liu")
    assert cd == pytest.approx(_jing_liu_cd(alpha, k, n), rel=1e-13)


def test_standard_cd_unchanged_by_the_option() -> None:
    for k, n in [(3, 5), (5, 10), (11, 3)]:
        for method in ("nemenyi", "bonferroni-dunn"):
            base = ranktests.critical_difference(k, n, method=method)
            same = ranktests.critical_difference(k, n, method=method, cd_convention="standard")
            assert base == same
    # Bonferroni–Dunn standard: z at 1 − α/(2(k − 1)); the conventions differ by k vs k − 1
    bd = ranktests.critical_difference(5, 10, method="bonferroni-dunn")
    assert bd == pytest.approx(stats.norm.ppf(1 - 0.05 / 8) * math.sqrt(5 * 6 / 60.0), rel=1e-13)


def _cliques_from_cd(avg: np.ndarray, cd: float) -> tuple[tuple[int, ...], ...]:
    """Maximal runs (in rank order) whose range is <= CD, written independently."""
    order = np.argsort(avg, kind="stable")
    runs: list[tuple[int, ...]] = []
    for s in range(order.size):
        e = s
        while e + 1 < order.size and avg[order[e + 1]] - avg[order[s]] <= cd:
            e += 1
        run = tuple(int(m) for m in order[s : e + 1])
        if len(run) >= 2 and not any(set(run) <= set(r) for r in runs):
            runs.append(run)
    return tuple(runs)


@pytest.mark.parametrize("seed", range(12))
def test_jing_liu_posthoc_significance_and_cliques_follow_its_cd(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(3, 30)), int(rng.integers(3, 12))
    values = rng.random((n, k)) + np.linspace(0, rng.uniform(0, 1.5), k)
    res = ranktests.posthoc(values, method="nemenyi", cd_convention="jing-liu")
    assert res.cd_convention == "jing-liu"
    assert res.critical_difference == pytest.approx(_jing_liu_cd(0.05, k, n), rel=1e-13)
    assert res.critical_value == pytest.approx(stats.norm.ppf(1 - 0.05 / (2 * k)), rel=1e-13)
    ranks = np.apply_along_axis(stats.rankdata, 1, values)
    avg = ranks.mean(axis=0)
    for pair in res.pairs:
        diff = avg[pair.i] - avg[pair.j]
        raw = 2 * stats.norm.sf(abs(diff) / math.sqrt(k * (k + 1) / (6 * n)))
        assert pair.p_adjusted == pytest.approx(min(1.0, k * raw), rel=1e-12, abs=1e-300)
        assert pair.log10_p_adjusted == pytest.approx(
            math.log10(min(1.0, k * raw)), rel=1e-9, abs=1e-12
        )
        if abs(abs(diff) - res.critical_difference) > 1e-9:  # away from the boundary
            assert pair.significant == (abs(diff) > res.critical_difference)
    if all(abs(abs(a - b) - res.critical_difference) > 1e-9 for a in avg for b in avg if a != b):
        assert res.cliques == _cliques_from_cd(avg, res.critical_difference)


def test_jing_liu_vs_control_uses_k_not_k_minus_1() -> None:
    rng = np.random.default_rng(3)
    values = rng.random((14, 6))
    std = ranktests.posthoc(values, method="bonferroni-dunn", control=2)
    jl = ranktests.posthoc(values, method="bonferroni-dunn", control=2, cd_convention="jing-liu")
    assert std.critical_value == pytest.approx(stats.norm.ppf(1 - 0.05 / 10), rel=1e-13)
    assert jl.critical_value == pytest.approx(stats.norm.ppf(1 - 0.05 / 12), rel=1e-13)
    for a, b in zip(std.pairs, jl.pairs, strict=True):
        assert b.p_adjusted == pytest.approx(min(1.0, 6 * a.p_value), rel=1e-12)
        assert a.p_value == b.p_value
        assert a.z == b.z


def test_jing_liu_against_nemenyi_conservative_below_4_liberal_from_4() -> None:
    # z_{1 − α/(2k)} vs q_α/√2 at α = 0.05: the Bonferroni bound over k (not k(k − 1)/2)
    # comparisons is wider for k = 2, 3 and narrower from k = 4 (0.88 × Nemenyi at k = 11)
    for k in range(2, 30):
        jl = ranktests.critical_difference(k, 10, cd_convention="jing-liu")
        nemenyi = ranktests.critical_difference(k, 10)
        assert (jl > nemenyi) == (k < 4)
    ratio = ranktests.critical_difference(11, 3, cd_convention="jing-liu") / (
        ranktests.critical_difference(11, 3)
    )
    q = stats.studentized_range.ppf(0.95, 11, np.inf) / math.sqrt(2)
    assert ratio == pytest.approx(stats.norm.ppf(1 - 0.05 / 22) / q, rel=1e-6)


def test_default_posthoc_answer_unchanged_by_the_option() -> None:
    rng = np.random.default_rng(7)
    values = rng.random((9, 5))
    a = ranktests.posthoc(values)
    b = ranktests.posthoc(values, cd_convention="standard")
    assert a.cd_convention == "standard"
    assert a.critical_difference == b.critical_difference
    assert a.pairs == b.pairs
    assert a.cliques == b.cliques


def _mp_upper_normal_quantile(p: float) -> float:
    """z with Φ(−z) = p in 50-digit arithmetic (mpmath), independent of scipy's ndtri."""
    import mpmath

    with mpmath.workdps(50):
        target = mpmath.mpf(p)
        z = mpmath.findroot(
            lambda t: mpmath.log(mpmath.ncdf(-t)) - mpmath.log(target),
            mpmath.sqrt(-2 * mpmath.log(target)),
        )
        return float(z)


@pytest.mark.parametrize("alpha", [1e-10, 1e-16, 1e-300])
@pytest.mark.parametrize("k", [2, 5, 11])
def test_critical_values_keep_precision_at_small_alpha(alpha: float, k: int) -> None:
    # Φ⁻¹(1 − α/(2k)) rounds 1 − α/(2k): at α = 1e-16 it was ∞, at 1e-10 off in the 9th digit
    jl = ranktests.posthoc(
        np.random.default_rng(k).random((6, k)),
        method="nemenyi",
        alpha=alpha,
        cd_convention="jing-liu",
    )
    assert jl.critical_value == pytest.approx(_mp_upper_normal_quantile(alpha / (2 * k)), rel=1e-14)
    assert jl.critical_value == pytest.approx(stats.norm.isf(alpha / (2 * k)), rel=1e-15)
    bd = ranktests.critical_difference(k, 7, alpha=alpha, method="bonferroni-dunn")
    want = _mp_upper_normal_quantile(alpha / (2 * (k - 1))) * math.sqrt(k * (k + 1) / 42.0)
    assert bd == pytest.approx(want, rel=1e-14)


@pytest.mark.parametrize("method", ["holm", "hochberg", "hommel", "finner", "shaffer"])
def test_jing_liu_refused_without_a_cd(method: str) -> None:
    with pytest.raises(InvalidInput) as exc:
        ranktests.posthoc(
            np.random.default_rng(0).random((5, 4)), method=method, cd_convention="jing-liu"
        )
    assert exc.value.field == "cd_convention"


def test_unknown_convention_refused() -> None:
    with pytest.raises(InvalidInput) as exc:
        ranktests.critical_difference(4, 5, cd_convention="demsar")
    assert exc.value.field == "cd_convention"


# ------------------------------------------------------------------------ scipy ranksums


def _samples(rng: np.random.Generator, it: int) -> tuple[np.ndarray, np.ndarray]:
    nx, ny = (int(v) for v in rng.integers(1, 30, 2))
    if it % 3 == 0:  # heavy ties
        return rng.integers(0, 4, nx).astype(float), rng.integers(0, 4, ny).astype(float)
    if it % 3 == 1:  # some ties
        return np.round(rng.normal(size=nx), 1), np.round(rng.normal(0.3, 1, ny), 1)
    return rng.random(nx), rng.random(ny)  # no ties


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_rank_sum_without_corrections_is_scipy_ranksums(alternative: str) -> None:
    rng = np.random.default_rng(20)
    checked = 0
    for it in range(400):
        x, y = _samples(rng, it)
        res = twosample.rank_sum(
            x,
            y,
            alternative=alternative,
            method="asymptotic",
            continuity=False,
            tie_correction=False,
        )
        ref = stats.ranksums(x, y, alternative=alternative)
        assert res.z == pytest.approx(ref.statistic, rel=1e-12, abs=1e-12)
        assert res.p_value == pytest.approx(ref.pvalue, rel=1e-12)
        assert not res.continuity
        assert not res.tie_correction
        checked += 1
    assert checked == 400  # all-tied draws compared too (below: the all-tied cases themselves)


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize(("x", "y"), [([1, 1, 1], [1, 1, 1]), ([2.5], [2.5]), ([0] * 7, [0] * 2)])
def test_rank_sum_without_corrections_all_tied_is_scipy_ranksums(
    alternative: str, x: list[float], y: list[float]
) -> None:
    # the uncorrected variance n_x n_y (n + 1)/12 stays positive: z = 0, not the exact p = 1
    res = twosample.rank_sum(
        x, y, alternative=alternative, method="asymptotic", continuity=False, tie_correction=False
    )
    ref = stats.ranksums(x, y, alternative=alternative)
    assert res.z == ref.statistic == 0.0
    assert res.p_value == ref.pvalue
    assert res.log10_p_value == pytest.approx(math.log10(ref.pvalue), abs=1e-15)
    assert res.method == "asymptotic"
    assert res.degenerate
    assert res.reason is not None
    assert "scipy.stats.ranksums" in res.reason
    # the standard test keeps its single-point null law: p = 1
    standard = twosample.rank_sum(x, y, alternative=alternative)
    assert (standard.p_value, standard.degenerate, standard.z) == (1.0, True, None)


def test_rank_sum_tie_correction_matters_only_with_ties() -> None:
    x, y = [1.0, 2, 2, 3, 5], [2.0, 3, 3, 4, 6, 7]
    corrected = twosample.rank_sum(x, y, method="asymptotic", continuity=False)
    plain = twosample.rank_sum(x, y, method="asymptotic", continuity=False, tie_correction=False)
    assert corrected.tie_correction
    assert corrected.p_value != plain.p_value
    untied = ([1.0, 2.5, 3], [2.0, 4, 6, 7])
    a = twosample.rank_sum(*untied, method="asymptotic")
    b = twosample.rank_sum(*untied, method="asymptotic", tie_correction=False)
    assert a.p_value == b.p_value


# ------------------------------------------------------------------------ scipy exact KS

_SCIPY_ALT = {"two-sided": "two-sided", "less": "greater", "greater": "less"}


@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_ks_ignoring_ties_is_scipy_exact(alternative: str) -> None:
    rng = np.random.default_rng(21)
    checked = tied = skipped = 0
    for it in range(300):
        x, y = _samples(rng, it)
        res = twosample.ks_2samp(x, y, alternative=alternative, method="exact", ties="ignore")
        if res.degenerate:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                ref = stats.ks_2samp(x, y, alternative=_SCIPY_ALT[alternative], method="exact")
            except RuntimeWarning:  # scipy fell back to its asymptotic formula: no reference
                skipped += 1
                continue
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
        assert res.p_value == pytest.approx(ref.pvalue, rel=1e-10)
        has_ties = np.unique(np.concatenate([x, y])).size < x.size + y.size
        assert res.ties_ignored == has_ties
        tied += has_ties
        checked += 1
    assert checked > 250
    assert tied > 100
    assert skipped < 10


def test_ks_conditional_default_differs_under_ties_and_is_flagged_not() -> None:
    x, y = [1, 1.01, 3, 4], [1.01, 0.5, 0.25]
    cond = twosample.ks_2samp(x, y)
    ign = twosample.ks_2samp(x, y, ties="ignore")
    assert cond.ties == "conditional"
    assert not cond.ties_ignored
    assert ign.ties == "ignore"
    assert ign.ties_ignored
    assert cond.statistic == ign.statistic
    assert cond.p_value == pytest.approx(12 / 35, rel=1e-12)  # exact, conditional on the tie
    ref = stats.ks_2samp(x, y, method="exact").pvalue
    assert ign.p_value == pytest.approx(ref, rel=1e-12)
    assert ign.p_value != cond.p_value


def test_ks_ties_option_checked() -> None:
    with pytest.raises(InvalidInput) as exc:
        twosample.ks_2samp([1, 2], [3, 4], ties="drop")
    assert exc.value.field == "ties"
