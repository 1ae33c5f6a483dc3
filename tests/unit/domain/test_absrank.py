"""Absolute ranks from sampled tables (SPEC §3; Jing & Liu Eq. 28, Eq. 19)."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import special, stats

from app.domain.absrank import (
    RankContext,
    TableData,
    _logspace,
    absolute_ranks,
    analytic_ranks,
    build_table_data,
    decode_table_data,
    encode_table_data,
    log10_best_of_c,
    log10_order_statistic_cdf,
)
from app.domain.absrank._eq28 import Eq28 as _Eq28
from app.domain.absrank._eq28 import upper_piece as _upper_piece
from app.domain.analytic import box_distances, sphere_ln_cdf
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.sampling import scale_to_box, sobol_chunk

LN10 = math.log(10.0)


def _ctx(
    d: int = 1,
    *,
    f_opt: float | None = None,
    f_max: float | None = None,
    atom: float = 0.0,
    beta: float | None = None,
    x_opt: np.ndarray | None = None,
    half: float = 1.0,
) -> RankContext:
    return RankContext(
        f_opt=f_opt,
        f_max=f_max,
        atom=atom,
        beta=beta,
        beta_derivation="test",
        x_opt=x_opt,
        region_lower=np.full(d, -half),
        region_upper=np.full(d, half),
    )


def _table(values: list[float] | np.ndarray, **kw: int) -> TableData:
    return build_table_data(np.asarray(values, dtype=float), np.zeros((0, 1)), **kw)


def _eq28(sample: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Full paper Eq. 28 inside [y_1, y_N], straight from the definition."""
    uniq, mult = np.unique(sample, return_counts=True)
    return np.interp(t, uniq, np.cumsum(mult)) / (sample.size + 1)


# ---------------------------------------------------------------- Eq. 28 ----------------------


def test_eq28_by_hand() -> None:
    table = _table([6.0, 1.0, 4.0, 3.0])
    res = absolute_ranks(
        np.array([1.0, 3.0, 4.0, 6.0, 2.0, 3.25, 5.0]), table, _ctx(), tail="paper"
    )
    expected = [Fraction(1, 5), Fraction(2, 5), Fraction(3, 5), Fraction(4, 5)]
    expected += [Fraction(3, 10), Fraction(2, 5) + Fraction(1, 20), Fraction(7, 10)]
    np.testing.assert_allclose(res.v, [float(x) for x in expected], rtol=1e-15)
    assert list(res.method) == ["interpolated"] * 7
    assert np.all(res.log10_lo <= res.log10_v)
    assert np.all(res.log10_v <= res.log10_hi)


def test_paper_tails_exactly_as_written() -> None:
    table = _table([1.0, 3.0, 4.0, 6.0])
    t = np.array([-2.0, 0.5, 7.0, 30.0])
    res = absolute_ranks(t, table, _ctx(), tail="paper")
    lower = np.exp(t[:2] - 1.0) / 5
    upper = 1 - np.exp(-math.log(5) * t[2:] / 6.0)
    np.testing.assert_allclose(res.v, np.r_[lower, upper], rtol=1e-14)
    assert list(res.method) == ["tail-paper", "tail-paper", "upper-tail", "upper-tail"]
    far = absolute_ranks(np.array([-2000.0]), table, _ctx(), tail="paper")
    assert far.v[0] == 0.0
    assert far.log10_v[0] == pytest.approx((-2001.0 - math.log(5)) / LN10, rel=1e-14)


def test_paper_upper_tail_needs_positive_max() -> None:
    table = _table([-3.0, -2.0, -1.0])
    with pytest.raises(NotApplicable) as err:
        absolute_ranks(np.array([0.0]), table, _ctx(), tail="paper")
    assert err.value.field == "tail"
    res = absolute_ranks(np.array([-2.5]), table, _ctx(), tail="paper")
    assert res.v[0] == pytest.approx(1.5 / 4)


def test_auto_without_f_opt_is_paper_with_warning() -> None:
    res = absolute_ranks(np.array([0.0]), _table([1.0, 2.0]), _ctx())
    assert res.method[0] == "tail-paper"
    assert res.tail.as_json()["lower"] == "paper"
    assert res.tail.as_json()["upper"] == "flat"
    assert any("f* is unknown" in str(w) for w in res.warnings)


def test_linear_tail_and_atom() -> None:
    table = _table([0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 3.0, 4.0])  # plateau at f* = 0
    ctx = _ctx(f_opt=0.0, f_max=8.0, atom=0.25)
    t = np.array([-1.0, 0.0, 0.5, 4.0, 6.0, 8.0, 9.0])
    res = absolute_ranks(t, table, ctx)
    assert res.tail.as_json()["lower"] == "linear"
    assert list(res.method) == [
        "at-or-below-minimum",
        "atom",
        "interpolated",
        "interpolated",
        "upper-tail",
        "upper-tail",
        "upper-tail",
    ]
    np.testing.assert_allclose(res.v, [0.0, 0.25, 3.5 / 9, 8 / 9, 8.5 / 9, 1.0, 1.0], rtol=1e-14)
    assert res.log10_v[0] == -np.inf
    assert res.log10_lo[1] == res.log10_hi[1] == pytest.approx(math.log10(0.25), rel=1e-15)
    with pytest.raises(NotApplicable, match="plateau"):
        absolute_ranks(t, table, ctx, tail="power")


def test_linear_tail_has_no_jump_at_tied_minimum() -> None:
    table = _table([2.0, 2.0, 2.0, 5.0])
    res = absolute_ranks(np.array([1.0, 2.0 - 1e-12, 2.0]), table, _ctx(f_opt=1.0), tail="linear")
    np.testing.assert_allclose(res.v, [0.0, 3 / 5, 3 / 5], rtol=1e-9, atol=0)
    assert res.log10_v[0] == -np.inf


def test_linear_needs_f_opt_and_consistent_table() -> None:
    with pytest.raises(NotApplicable) as err:
        absolute_ranks(np.array([0.0]), _table([1.0]), _ctx(), tail="linear")
    assert err.value.field == "tail"
    with pytest.raises(NotApplicable) as err:
        absolute_ranks(np.array([0.0]), _table([1.0]), _ctx(f_opt=2.0), tail="linear")
    assert err.value.field == "f_opt"


# ---------------------------------------------------------------- properties -----------------


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[TableData, RankContext, str]:
    n = draw(st.integers(1, 60))
    ints = draw(st.lists(st.integers(0, 30), min_size=n, max_size=n))
    values = 1.0 + np.array(ints, dtype=float) / 10.0  # ties; distinct values >= 0.1 apart
    mode = draw(st.sampled_from(["paper", "linear", "power", "auto"]))
    known = mode in ("linear", "power") or draw(st.booleans())
    f_opt = draw(st.sampled_from([0.0, 0.5, 0.9])) if known else None
    atom = 0.0 if mode == "power" or not known else draw(st.sampled_from([0.0, 0.01, 0.3]))
    beta = draw(st.sampled_from([None, 0.5, 2.0, 7.0]))
    f_max = draw(st.sampled_from([None, 4.5, 10.0]))
    low_x = np.random.default_rng(n).uniform(-0.5, 0.5, (n, 2))  # well inside the region
    table = build_table_data(
        values, low_x, k_exact=draw(st.integers(1, 70)), n_knots=draw(st.integers(1, 70))
    )
    ctx = RankContext(f_opt, f_max, atom, beta, "test", np.zeros(2), -np.ones(2), np.ones(2))
    return table, ctx, mode


def _ranks(table: TableData, ctx: RankContext, mode: str, t: np.ndarray, **kw: int):
    try:
        return absolute_ranks(t, table, ctx, tail=mode, k_anchor=kw.pop("k_anchor", 10), **kw)
    except NotApplicable:
        assume(False)
        raise


GRID = np.linspace(-1.0, 12.0, 1301)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(scenarios())
def test_monotone_in_unit_interval_with_ordered_intervals(
    scenario: tuple[TableData, RankContext, str],
) -> None:
    table, ctx, mode = scenario
    res = _ranks(table, ctx, mode, GRID)
    assert np.all(res.log10_v[1:] >= res.log10_v[:-1] - 1e-12)
    assert np.all((res.v >= 0) & (res.v <= 1))
    assert np.all(res.log10_v <= 0)
    assert np.all(res.log10_lo <= res.log10_v)
    assert np.all(res.log10_v <= res.log10_hi)
    assert not np.any(np.isnan(res.log10_v))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(scenarios())
def test_continuous_except_at_atom(scenario: tuple[TableData, RankContext, str]) -> None:
    table, ctx, mode = scenario
    eps = 1e-10
    res = _ranks(table, ctx, mode, np.concatenate([GRID, GRID + eps]))
    jump = res.v[GRID.size :] - res.v[: GRID.size]
    allowed = np.zeros(GRID.size, dtype=bool)
    if ctx.atom > 0 and ctx.f_opt is not None:
        allowed |= (GRID <= ctx.f_opt) & (ctx.f_opt <= GRID + eps)
    if res.tail.as_json()["lower"] == "paper":  # Eq. 28's tail jumps to c_1/(N+1) when y_1 is tied
        y1 = table.values[0]
        allowed |= (GRID <= y1) & (y1 <= GRID + eps)
    assert np.all(np.abs(jump[~allowed]) <= 1e-4)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(scenarios(), st.integers(1, 10**6), st.integers(1, 10**6))
def test_best_of_c_monotone_in_c(
    scenario: tuple[TableData, RankContext, str], c1: int, c2: int
) -> None:
    table, ctx, mode = scenario
    lo_c, hi_c = sorted((c1, c2))
    small = _ranks(table, ctx, mode, GRID, budget=lo_c)
    large = _ranks(table, ctx, mode, GRID, budget=hi_c)
    assert np.all(large.log10_v >= small.log10_v - 1e-12)
    assert np.all(large.log10_hi >= small.log10_hi - 1e-12)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 60), st.sampled_from([None, 0.5, 5.0, 20.0]))
def test_power_tail_finite_far_below_samples(n: int, beta: float | None) -> None:
    rng = np.random.default_rng(n)
    # a sample that follows v1(t) = t^b on [0, 1] (b = beta, or 2 for the Hill case)
    values = rng.random(n) ** (1.0 / (beta or 2.0))
    low_x = rng.uniform(-0.1, 0.1, (n, 3))
    table = build_table_data(values, low_x)
    ctx = _ctx(3, f_opt=0.0, beta=beta, x_opt=np.zeros(3))
    t = table.values[0] * np.array([10.0**-k for k in range(1, 300, 7)])
    res = absolute_ranks(t, table, ctx, tail="power", k_anchor=20)
    assert set(res.method) == {"tail-power"}
    assert np.all(np.isfinite(res.log10_v))
    assert np.all(np.diff(res.log10_v) < 0)
    assert np.all(np.isfinite(res.log10_lo))
    assert np.all(np.isfinite(res.log10_hi))


def test_power_tail_refused_where_the_samples_contradict_it() -> None:
    """A registered beta that the samples below the anchor reject is never extrapolated."""
    rng = np.random.default_rng(7)
    n, d = 4096, 3
    values = 1.0 + rng.random(n)  # a wall at 1: nothing like (t - 0)^5 on [0, y_k]
    values[0] = 0.01  # one sample far below the rest (as on BBOB f20's full domain)
    low_x = rng.uniform(-0.1, 0.1, (n, d))
    table = build_table_data(values, low_x)
    ctx = _ctx(d, f_opt=0.0, beta=5.0, x_opt=np.zeros(d))
    with pytest.raises(NotApplicable, match="do not follow the power law") as info:
        absolute_ranks(np.array([0.005]), table, ctx, tail="power")
    assert info.value.field == "tail"
    auto = absolute_ranks(np.array([0.01]), table, ctx)
    assert list(auto.method) == ["interpolated"]
    assert any("do not follow the power law" in str(w) for w in auto.warnings)


def test_power_tail_refused_when_only_the_lowest_sample_contradicts_it() -> None:
    """KS has little power at the bottom; the lowest-sample test catches a too-low y_1."""
    rng = np.random.default_rng(11)
    n, d, beta = 4096, 2, 1.0
    values = rng.random(n) ** (1.0 / beta)  # exactly v1(t) = t on [0, 1]
    order = np.argsort(values)
    values[order[0]] = values[order[1]] * 1e-4  # one sample far below the power law's reach
    table = build_table_data(values, rng.uniform(-0.01, 0.01, (n, d)))
    ctx = _ctx(d, f_opt=0.0, beta=beta, x_opt=np.zeros(d))
    with pytest.raises(NotApplicable, match="lowest-sample p") as info:
        absolute_ranks(np.array([1e-9]), table, ctx, tail="power", k_anchor=100)
    assert info.value.field == "tail"
    # the untouched sample passes both tests
    values[order[0]] = values[order[1]] * 0.5
    ok = absolute_ranks(
        np.array([1e-9]),
        build_table_data(values, rng.uniform(-0.01, 0.01, (n, d))),
        ctx,
        tail="power",
    )
    assert ok.tail.as_json()["validity"]["fit"]["ok"]
    assert ok.tail.as_json()["validity"]["fit"]["min_p_value"] >= 0.005


# ---------------------------------------------------------------- sampled vs exact -----------


def _sobol_sphere(d: int, n_log2: int, half: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    X = scale_to_box(sobol_chunk(d, seed, 0, 2**n_log2), np.full(d, -half), np.full(d, half))
    return X, np.sum(X * X, axis=1)


def _low(X: np.ndarray, f: np.ndarray, k: int) -> np.ndarray:
    return X[np.argsort(f, kind="stable")[:k]]


@pytest.mark.parametrize("n_knots", [16384, 256])
def test_sampled_sphere_table_covers_analytic(n_knots: int) -> None:
    d, half = 5, 5.12
    X, f = _sobol_sphere(d, 14, half, seed=3)
    table = build_table_data(f, _low(X, f, 200), k_exact=512, n_knots=n_knots)
    assert (table.max_interp_error == 0.0) == (n_knots == 16384)
    ctx = _ctx(d, f_opt=0.0, beta=d / 2, x_opt=np.zeros(d), half=half)
    t = np.quantile(f, np.linspace(0.0005, 0.9995, 400))
    res = absolute_ranks(t, table, ctx)
    exact = sphere_ln_cdf(
        np.log(t), *box_distances(ctx.region_lower, ctx.region_upper, np.zeros(d))
    )
    exact10 = exact / LN10
    misses = np.sum((exact10 < res.log10_lo) | (exact10 > res.log10_hi))
    assert misses <= 0.03 * t.size
    assert np.max(np.abs(res.v - np.exp(exact))) < 0.01


def test_power_tail_matches_exact_sphere_far_below_one_over_n() -> None:
    d, half = 10, 5.12
    X, f = _sobol_sphere(d, 16, half, seed=11)
    table = build_table_data(f, _low(X, f, 400))
    ctx = _ctx(d, f_opt=0.0, beta=d / 2, x_opt=np.zeros(d), half=half)
    y1 = table.values[0]
    t = np.array([1e-3 * y1, 1e-6 * y1])
    res = absolute_ranks(t, table, ctx)
    assert res.tail.as_json()["lower"] == "power"
    assert res.tail.as_json()["beta_source"] == "registered"
    assert res.tail.as_json()["k"] == 100
    assert res.tail.as_json()["validity"]["ok"]
    assert list(res.method) == ["tail-power", "tail-power"]
    a, b = box_distances(ctx.region_lower, ctx.region_upper, np.zeros(d))
    exact10 = sphere_ln_cdf(np.log(t), a, b) / LN10
    assert np.all(res.log10_v < -math.log10(2**16) - 10)  # decades below 1/N
    assert np.all(np.abs(res.log10_v - exact10) <= 0.15)
    assert np.all((res.log10_lo <= exact10) & (exact10 <= res.log10_hi))
    paper = absolute_ranks(t, table, ctx, tail="paper")
    assert np.all(np.abs(paper.log10_v - exact10) > 10)  # the paper's tail is far off
    hill = absolute_ranks(t, table, _ctx(d, f_opt=0.0, x_opt=np.zeros(d), half=half))
    lo, hi = hill.tail.as_json()["beta_interval"]
    assert hill.tail.as_json()["beta_source"] == "hill"
    assert lo <= d / 2 <= hi
    assert hill.tail.as_json()["beta_se"] == pytest.approx(
        hill.tail.as_json()["beta"] / math.sqrt(99)
    )
    assert np.all((hill.log10_lo <= exact10) & (exact10 <= hill.log10_hi))


def test_power_tail_lowers_its_anchor_when_y_100_is_clipped() -> None:
    """Small N in d = 10: {f <= y_100} leaves the box, a lower anchor's set does not."""
    d, half = 10, 5.12
    X, f = _sobol_sphere(d, 13, half, seed=5)
    table = build_table_data(f, _low(X, f, 400))
    ctx = _ctx(d, f_opt=0.0, beta=d / 2, x_opt=np.zeros(d), half=half)
    t = np.array([1e-2 * table.values[0], 1e-5 * table.values[0]])
    res = absolute_ranks(t, table, ctx, tail="power")
    assert res.tail.as_json()["requested_k"] == 100
    assert "k = 100: sublevel set" in res.tail.as_json()["validity"]["rejected_anchors"][0]
    assert res.tail.as_json()["validity"]["ok"]
    assert res.tail.as_json()["validity"]["fit"]["ok"]
    assert 25 <= res.tail.as_json()["k"] < 100
    assert any("anchored at" in str(w) for w in res.warnings)
    a, b = box_distances(ctx.region_lower, ctx.region_upper, np.zeros(d))
    exact10 = sphere_ln_cdf(np.log(t), a, b) / LN10
    assert np.all(np.abs(res.log10_v - exact10) <= 0.3)
    assert np.all((res.log10_lo <= exact10) & (exact10 <= res.log10_hi))


def test_power_tail_refused_on_ill_conditioned_ellipsoid() -> None:
    d, half, n_log2 = 10, 5.12, 16
    coef = 10.0 ** (6.0 * np.arange(d) / (d - 1))
    X = scale_to_box(sobol_chunk(d, 5, 0, 2**n_log2), np.full(d, -half), np.full(d, half))
    f = (X * X) @ coef
    table = build_table_data(f, _low(X, f, 200))
    ctx = _ctx(d, f_opt=0.0, beta=d / 2, x_opt=np.zeros(d), half=half)
    t = np.array([1.0])
    with pytest.raises(NotApplicable, match="clipped by the region") as err:
        absolute_ranks(t, table, ctx, tail="power")
    assert err.value.field == "tail"
    assert "|x_" in str(err.value)
    assert "0.9" in str(err.value)
    auto = absolute_ranks(t, table, ctx)
    assert auto.tail.as_json()["lower"] == "linear"
    assert auto.method[0] == "tail-linear"
    assert any("power tail refused" in str(w) for w in auto.warnings)

    # what the unchecked power tail would say: v1(y_k) (t / y_k)^beta, anchored at y_100
    y_k = table.low_values[99]
    count = np.interp(y_k, table.values, table.counts)
    unchecked = math.log10(count / (2**n_log2 + 1)) + d / 2 * math.log10(t[0] / y_k)

    # reference by a nested box R = [-h, h] around x* containing {f <= t} (h_i = sqrt(t/coef_i))
    h = np.sqrt(t[0] / coef)
    inner = scale_to_box(sobol_chunk(d, 6, 0, 2**16), -h, h)
    share = np.mean((inner * inner) @ coef <= t[0])
    reference = math.log10(share) + float(np.sum(np.log10(h / half)))
    ellipsoid = math.log10(
        math.pi ** (d / 2) / math.gamma(d / 2 + 1) / np.prod(np.sqrt(coef)) / (2 * half) ** d
    )
    assert abs(reference - ellipsoid) < 0.05  # the nested box reproduces the exact volume
    assert abs(unchecked - reference) > 1.0


# ---------------------------------------------------------------- best of c, runs -----------


@pytest.mark.parametrize("v1", [Fraction(1, 7), Fraction(3, 1000), Fraction(1, 2**40), Fraction(1)])
@pytest.mark.parametrize("c", [1, 2, 10, 1000])
def test_best_of_c_vs_fractions(v1: Fraction, c: int) -> None:
    exact = 1 - (1 - v1) ** c
    got = log10_best_of_c(np.array([math.log10(v1)]), c)[0]
    assert got == pytest.approx(math.log10(exact), rel=1e-12, abs=1e-14)


def test_best_of_c_far_below_double_range() -> None:
    for c in (1, 7, 1000, 10**12):
        got = log10_best_of_c(np.array([-500.0]), c)[0]
        # c·v1 < 1e-480, so 1 - (1 - v1)^c = c·v1 (1 - (c - 1) v1 / 2 + …) = c·v1 to all digits
        assert got == pytest.approx(-500.0 + math.log10(c), abs=1e-12)
    assert log10_best_of_c(np.array([-np.inf]), 5)[0] == -np.inf
    assert log10_best_of_c(np.array([0.0]), 5)[0] == 0.0
    # c·v1 = 1: 1 - (1 - 1e-20)^(1e20) = 1 - e^(-1) to double precision
    got = log10_best_of_c(np.array([-20.0]), 10**20)[0]
    assert got == pytest.approx(math.log10(-math.expm1(-1.0)), rel=1e-12)


def _binom_sf_fraction(p: Fraction, r: int, k: int) -> Fraction:
    return sum((math.comb(r, j) * p**j * (1 - p) ** (r - j) for j in range(k, r + 1)), Fraction(0))


@pytest.mark.parametrize("r", [1, 2, 3, 5, 8])
def test_order_statistic_vs_fractions(r: int) -> None:
    for p in (Fraction(1, 3), Fraction(1, 1000), Fraction(999, 1000), Fraction(1, 2**60)):
        for k in range(1, r + 1):
            got = log10_order_statistic_cdf(np.array([math.log10(p)]), r, k)[0]
            exact = math.log10(_binom_sf_fraction(p, r, k))
            assert got == pytest.approx(exact, rel=1e-12, abs=1e-13)


def test_order_statistic_vs_scipy_and_underflow() -> None:
    r = 31
    p = np.array([1e-6, 1e-3, 0.05, 0.5, 0.9, 0.999])
    for k in (1, 5, 16, 31):
        got = log10_order_statistic_cdf(np.log10(p), r, k)
        ref = stats.binom.sf(k - 1, r, p)
        mask = ref > 1e-290
        np.testing.assert_allclose(10 ** got[mask], ref[mask], rtol=1e-11)
    # binom.sf underflows to 0 here; the log-space sum does not
    deep = log10_order_statistic_cdf(np.array([-200.0]), r, 16)[0]
    assert stats.binom.sf(15, r, 1e-200) == 0.0
    assert deep == pytest.approx(math.log10(math.comb(31, 16)) - 3200.0, rel=1e-12)


def test_runs_aggregates() -> None:
    table = _table(np.arange(1.0, 101.0))
    ctx = _ctx(f_opt=0.0)
    t = np.array([10.0, 50.0])
    single = absolute_ranks(t, table, ctx, budget=3)
    for aggregate, order, k in [("best", None, 1), ("worst", None, 5), ("median", None, 3)]:
        res = absolute_ranks(t, table, ctx, budget=3, runs=5, aggregate=aggregate, order=order)
        expected = log10_order_statistic_cdf(single.log10_v, 5, k)
        np.testing.assert_allclose(res.log10_v, expected, rtol=1e-13)
    res = absolute_ranks(t, table, ctx, budget=3, runs=5, aggregate="order", order=2)
    np.testing.assert_allclose(res.log10_v, log10_order_statistic_cdf(single.log10_v, 5, 2))
    best_of_15 = absolute_ranks(t, table, ctx, budget=15)
    best = absolute_ranks(t, table, ctx, budget=3, runs=5, aggregate="best")
    np.testing.assert_allclose(best.log10_v, best_of_15.log10_v, rtol=1e-12, atol=1e-14)
    # lower-median of an even r is the order statistic r/2
    lower = absolute_ranks(t, table, ctx, budget=3, runs=4, aggregate="lower-median")
    np.testing.assert_array_equal(lower.log10_v, log10_order_statistic_cdf(single.log10_v, 4, 2))
    # the median of an even r (mean of the two middle runs) lies between them: Z_(2) <= M <= Z_(3)
    median = absolute_ranks(t, table, ctx, budget=3, runs=4, aggregate="median")
    assert set(median.method) == {"median-integral"}
    assert np.all(median.log10_v <= lower.log10_v)
    assert np.all(median.log10_v >= log10_order_statistic_cdf(single.log10_v, 4, 3))
    assert median.tail.as_json()["transform"]["order"] is None
    mean = absolute_ranks(t, table, ctx, budget=3, runs=4, aggregate="mean")
    assert set(mean.method) == {"mean-convolution"}


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"budget": 0}, "budget"),
        ({"runs": 0}, "runs"),
        ({"confidence": 1.0}, "confidence"),
        ({"confidence": 0.0}, "confidence"),
        ({"tail": "exp"}, "tail"),
        ({"aggregate": "mode"}, "aggregate"),
        ({"runs": 3, "aggregate": "order"}, "order"),
        ({"runs": 3, "aggregate": "order", "order": 4}, "order"),
        ({"order": 1}, "order"),
        ({"k_anchor": 0}, "k_anchor"),
    ],
)
def test_invalid_options(kwargs: dict, field: str) -> None:
    with pytest.raises(InvalidInput) as err:
        absolute_ranks(np.array([1.0]), _table([1.0, 2.0]), _ctx(), **kwargs)
    assert err.value.field == field


def test_non_finite_values_rejected() -> None:
    with pytest.raises(InvalidInput) as err:
        absolute_ranks(np.array([1.0, np.nan]), _table([1.0]), _ctx())
    assert err.value.field == "values"
    with pytest.raises(InvalidInput) as err:
        analytic_ranks(np.array([np.inf]), "sphere", _ctx(f_opt=0.0, x_opt=np.zeros(1)))
    assert err.value.field == "values"
    with pytest.raises(InvalidInput) as err:
        build_table_data(np.array([1.0, np.inf]), np.zeros((0, 1)))
    assert err.value.field == "values"


# ---------------------------------------------------------------- representation -------------


def _tied_sample(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.round(rng.gamma(2.0, 1.0, n), 2)  # many ties


@pytest.mark.parametrize(("k_exact", "n_knots"), [(100, 200), (1, 7), (4096, 16384), (50, 1)])
def test_compressed_table_within_max_interp_error(k_exact: int, n_knots: int) -> None:
    sample = _tied_sample(5000, k_exact)
    table = build_table_data(sample, np.zeros((0, 2)), k_exact=k_exact, n_knots=n_knots)
    uniq = np.unique(sample)
    t = np.unique(np.concatenate([uniq, (uniq[1:] + uniq[:-1]) / 2, uniq[:-1] + 1e-9]))
    stored = np.interp(t, table.values, table.counts) / (table.n + 1)
    err = np.abs(stored - _eq28(sample, t))
    assert np.max(err) <= table.max_interp_error + 1e-15
    assert (table.max_interp_error == 0.0) == (uniq.size == table.values.size)
    ys = np.sort(sample)
    exact_part = uniq[uniq <= ys[min(k_exact, ys.size) - 1]]
    assert np.all(np.isin(exact_part, table.values))
    assert np.array_equal(table.counts, np.searchsorted(ys, table.values, side="right"))
    assert table.values[0] == ys[0]
    assert table.values[-1] == ys[-1]
    res = absolute_ranks(t, table, _ctx(), tail="paper")
    np.testing.assert_allclose(res.v, stored, rtol=1e-13)


def test_encode_decode_round_trip_and_determinism() -> None:
    sample = _tied_sample(3000, 1)
    low_x = np.random.default_rng(2).random((64, 3))
    table = build_table_data(sample, low_x, k_exact=100, n_knots=50)
    blob = encode_table_data(table)
    assert blob == encode_table_data(
        build_table_data(sample.copy(), low_x.copy(), k_exact=100, n_knots=50)
    )
    back = decode_table_data(blob)
    for name in ("values", "counts", "low_x", "low_values"):
        original, decoded = getattr(table, name), getattr(back, name)
        assert original.dtype == decoded.dtype
        assert original.tobytes() == decoded.tobytes()
    assert (back.n, back.k_exact, back.max_interp_error) == (
        table.n,
        table.k_exact,
        table.max_interp_error,
    )
    assert encode_table_data(back) == blob
    with pytest.raises(InvalidInput):
        decode_table_data(blob[:-8])
    with pytest.raises(InvalidInput):
        decode_table_data(b"PICKLE" + blob[6:])


def test_low_values_keep_sobol_order_of_ties() -> None:
    values = np.array([3.0, 1.0, 2.0, 1.0, 5.0])
    low_x = np.array([[1.0], [3.0], [2.0]])  # points of indices 1, 3, 2
    table = build_table_data(values, low_x)
    np.testing.assert_array_equal(table.low_values, [1.0, 1.0, 2.0])
    np.testing.assert_array_equal(table.counts, [2, 3, 4, 5])


# ------------------------------------------ fast paths vs the reference implementations -------
# Stored tables' bytes and served intervals must not change: the implementations these replaced
# are kept here as references and compared bit for bit on tie-heavy inputs with signed zeros.


def _ref_build_table_data(
    values: np.ndarray, low_x: np.ndarray, *, k_exact: int, n_knots: int
) -> TableData:
    """``build_table_data`` as first written: full-size ``np.unique`` and ``cumsum``."""
    y = np.asarray(values, dtype=np.float64)
    pts = np.asarray(low_x, dtype=np.float64)
    n = y.size
    ys = np.sort(y, kind="stable")
    uniq, first, mult = np.unique(ys, return_index=True, return_counts=True)
    cum = np.cumsum(mult)
    ke = min(k_exact, n)
    keep = first < ke
    stride = max(1, math.ceil((n - ke) / n_knots))
    ranks = np.append(np.arange(ke + stride, n + 1, stride), n)
    keep[np.searchsorted(uniq, ys[ranks - 1])] = True
    kept = np.flatnonzero(keep)
    gaps = np.diff(cum[kept])[np.diff(kept) > 1]
    return TableData(
        n=n,
        values=uniq[kept].astype(np.float64),
        counts=cum[kept].astype(np.int64),
        k_exact=k_exact,
        max_interp_error=float(gaps.max()) / (n + 1) if gaps.size else 0.0,
        low_x=pts.copy(),
        low_values=ys[: pts.shape[0]].copy(),
    )


#: few distinct values, both zeros: ties everywhere
_TIED = st.sampled_from([-2.5, -1.0, -0.0, 0.0, 0.0, 1e-300, 0.25, 1.0, 1.0, 3.0, 8.0])
_SAMPLE = st.one_of(_TIED, _TIED, st.floats(-1e3, 1e3))


@st.composite
def _samples(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, int]:
    n = draw(st.integers(1, 400))
    values = draw(hnp.arrays(np.float64, n, elements=_SAMPLE))
    low_x = draw(hnp.arrays(np.float64, (draw(st.integers(0, min(n, 8))), 2), elements=_SAMPLE))
    return values, low_x, draw(st.integers(1, n + 3)), draw(st.integers(1, n + 3))


@given(_samples())
def test_build_table_data_bytes_equal_reference(sample: tuple) -> None:
    values, low_x, k_exact, n_knots = sample
    got = build_table_data(values, low_x, k_exact=k_exact, n_knots=n_knots)
    ref = _ref_build_table_data(values, low_x, k_exact=k_exact, n_knots=n_knots)
    assert encode_table_data(got) == encode_table_data(ref)


@pytest.mark.parametrize(("k_exact", "n_knots"), [(4096, 16384), (4096, 256), (1, 1), (10, 3)])
@pytest.mark.parametrize("decimals", [0, 2, None])
def test_build_table_data_bytes_equal_reference_at_chunk_scale(
    k_exact: int, n_knots: int, decimals: int | None
) -> None:
    rng = np.random.default_rng(k_exact + n_knots)
    values = rng.standard_normal(2**16) * rng.gamma(0.5, 1.0, 2**16)
    if decimals is not None:
        values = np.round(values, decimals)  # ties, and -0.0 among them
    low_x = rng.random((100, 3))
    got = build_table_data(values, low_x, k_exact=k_exact, n_knots=n_knots)
    ref = _ref_build_table_data(values, low_x, k_exact=k_exact, n_knots=n_knots)
    assert encode_table_data(got) == encode_table_data(ref)


# the per-value Clopper–Pearson limits (unchanged): the reference calls them once per value
_ref_ln_cp_lower = _logspace.ln_cp_lower
_ref_ln_cp_upper = _logspace.ln_cp_upper


def _ref_eq28_interval(table: TableData, alpha: float, t: np.ndarray) -> tuple:
    """Eq. 28 and its interval with one Clopper–Pearson computation per value, as first written."""
    values, counts, n = table.values, table.counts, table.n
    ln_v = np.log(np.interp(t, values, counts)) - math.log(n + 1.0)
    upto = values[min(int(np.searchsorted(counts, min(table.k_exact, n))), values.size - 1)]
    j = np.clip(np.searchsorted(values, t, side="right") - 1, 0, values.size - 1)
    nxt = np.minimum(j + 1, values.size - 1)
    exact = (values[j] == t) | (values[nxt] <= upto) | (counts[nxt] - counts[j] <= 1)
    c_hi = np.where(exact, counts[j], counts[nxt] - 1)
    lo = np.minimum(_ref_ln_cp_lower(counts[j], n, alpha), ln_v)
    hi = np.maximum(_ref_ln_cp_upper(c_hi, n, alpha), ln_v)
    return ln_v, lo, hi


@st.composite
def _queries(draw: st.DrawFn) -> tuple[TableData, list[np.ndarray], list[float]]:
    n = draw(st.integers(1, 300))
    sample = draw(hnp.arrays(np.float64, n, elements=_SAMPLE))
    k_exact, n_knots = draw(st.integers(1, 30)), draw(st.integers(1, 30))  # skipped values
    table = decode_table_data(  # as the service holds it
        encode_table_data(
            build_table_data(sample, np.zeros((0, 1)), k_exact=k_exact, n_knots=n_knots)
        )
    )
    lo, hi = float(table.values[0]), float(table.values[-1])
    inside = st.one_of(st.sampled_from(sorted(set(sample.tolist()))), st.floats(lo, hi))
    batches = draw(st.lists(st.lists(inside, min_size=1, max_size=60), min_size=1, max_size=4))
    levels = draw(
        st.lists(
            st.one_of(st.sampled_from([0.95, 0.5, 0.999]), st.floats(0.01, 0.9999)),
            min_size=1,
            max_size=6,  # more than a table keeps: some are evicted and computed again
        )
    )
    return table, [np.array(b) for b in batches], levels


@given(_queries())
def test_cached_clopper_pearson_limits_equal_per_value_computation(query: tuple) -> None:
    table, batches, levels = query
    for confidence in levels:
        alpha = 1.0 - confidence
        for t in batches:
            eq = _Eq28(table, alpha)
            got = eq.piece(t)
            ref = _ref_eq28_interval(table, alpha, t)
            for a, b in zip((got.ln_v, got.ln_lo, got.ln_hi), ref, strict=True):
                assert a.tobytes() == b.tobytes()
            assert eq.ln_cp_upper_zero() == _ref_ln_cp_upper(np.zeros(1), table.n, alpha)[0]
            above = t + (float(table.values[-1]) - float(table.values[0]) + 1.0)
            up = _upper_piece(above, eq, _ctx(), "flat")
            ref_lo = np.minimum(
                _ref_ln_cp_lower(np.full(above.shape, table.n), table.n, alpha), up.ln_v
            )
            assert up.ln_lo.tobytes() == np.where(up.ln_v == 0.0, 0.0, ref_lo).tobytes()


def test_clopper_pearson_limits_are_computed_once_per_table_and_level(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sample = _tied_sample(20000, 3)
    table = build_table_data(sample, np.zeros((0, 1)), k_exact=200, n_knots=500)
    t = np.random.default_rng(4).uniform(table.values[0] - 1, table.values[-1] + 1, 1000)
    cold = absolute_ranks(t, table, _ctx(), tail="paper")
    evaluated: list[int] = []
    original = special.betaincinv

    def counting(*args: np.ndarray) -> np.ndarray:
        evaluated.append(np.broadcast(*args).size)
        return original(*args)

    monkeypatch.setattr(_logspace.special, "betaincinv", counting)
    warm = absolute_ranks(t, table, _ctx(), tail="paper")
    assert evaluated == []  # every limit came from the table's cache
    fresh = absolute_ranks(t, decode_table_data(encode_table_data(table)), _ctx(), tail="paper")
    assert 0 < sum(evaluated) <= 3 * np.unique(t).size  # no more than per value, once each
    for res in (warm, fresh):
        for name in ("log10_v", "log10_lo", "log10_hi"):
            assert getattr(res, name).tobytes() == getattr(cold, name).tobytes()
    absolute_ranks(t, table, _ctx(), tail="paper", confidence=0.9)
    assert sorted(table._cp_limits) == sorted([1.0 - 0.95, 1.0 - 0.9])
