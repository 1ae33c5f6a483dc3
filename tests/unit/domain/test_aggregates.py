"""Mean of r runs and median of an even r (SPEC §3.1): app.domain.aggregates.

References: Monte Carlo resampling from the same table; the exact Dirichlet form of the mean of
power-law variables; ``scipy.integrate.quad`` of the median's order-statistic integral (David &
Nagaraja §2.2) with the analytic CDF of the 2-D sphere; closed forms for a uniform law with an
atom.
"""

from __future__ import annotations

import dataclasses
import math
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import integrate, special, stats

from app.domain import absrank
from app.domain.aggregates import MAX_MEAN_RUNS, _mean, aggregate_ranks
from app.domain.curves import V1Curve
from app.domain.errors import NotApplicable
from app.domain.sampling import scale_to_box, sobol_chunk

LN10 = math.log(10.0)
AGGREGATE_METHODS = {
    "mean-power",
    "mean-convolution",
    "mean-exact",
    "median-integral",
    "median-exact",
    "at-or-below-minimum",
}


def _ctx(d: int, *, half: float = 1.0, beta: float | None = None, f_max: float | None = None):
    return absrank.RankContext(
        f_opt=0.0,
        f_max=f_max,
        atom=0.0,
        beta=beta,
        beta_derivation="test: sphere",
        x_opt=np.zeros(d),
        region_lower=np.full(d, -half),
        region_upper=np.full(d, half),
    )


@lru_cache
def _sphere_table(scale: float = 1.0, shift: float = 0.0) -> absrank.TableData:
    """N = 2^14 Sobol points of the 3-D sphere on [-1, 1]^3, values a·f + b."""
    d = 3
    X = scale_to_box(sobol_chunk(d, 7, 0, 2**14), np.full(d, -1.0), np.full(d, 1.0))
    f = np.sum(X * X, axis=1)
    low = X[np.argsort(f, kind="stable")[:200]]
    return absrank.build_table_data(scale * f + shift, low, k_exact=512, n_knots=1024)


@lru_cache
def _table_curve(scale: float = 1.0, shift: float = 0.0) -> V1Curve:
    ctx = dataclasses.replace(_ctx(3, beta=1.5, f_max=3.0 * scale + shift), f_opt=shift)
    return absrank.table_curve(_sphere_table(scale, shift), ctx)


@lru_cache
def _sphere_curve(d: int, half: float = 5.12) -> V1Curve:
    return absrank.analytic_curve("sphere", _ctx(d, half=half))


def _without_power(curve: V1Curve) -> V1Curve:
    """The same curve without its power-law description: forces the convolution."""
    return dataclasses.replace(curve, power=None)


def _dirichlet_ln(curve: V1Curve, t: np.ndarray, r: int) -> np.ndarray:
    """ln P(mean of r <= t) for v1 = C (t − f*)^β on [f*, f* + r(t − f*)] (c = 1)."""
    p = curve.power
    assert p is not None
    return r * (p.ln_c + special.gammaln(p.beta + 1.0) + p.beta * np.log(r * t)) - special.gammaln(
        r * p.beta + 1.0
    )


# ---------------------------------------------------------------- Monte Carlo, same table -----


def _sampler(curve: V1Curve):
    """Inverse-CDF sampler of Z (best of c) from the curve's point estimate v1."""
    grid = np.concatenate(([0.0], np.geomspace(1e-9, 0.05, 2000), np.linspace(0.05, 3.0, 300001)))
    cdf = np.exp(curve.evaluate(grid)[0])
    assert np.all(np.diff(cdf) >= 0)
    assert cdf[-1] == 1.0

    def sample(rng: np.random.Generator, shape: tuple[int, int], c: int) -> np.ndarray:
        u = rng.random(shape)
        v1 = -np.expm1(np.log1p(-u) / c)  # v_c(Z) = u  <=>  v1(Z) = 1 − (1 − u)^(1/c)
        return np.interp(v1, cdf, grid)

    return sample


_STATISTIC = {"mean": lambda z: z.mean(axis=1), "median": lambda z: np.median(z, axis=1)}


@pytest.mark.parametrize("c", [1, 10])
@pytest.mark.parametrize(
    ("aggregate", "r"),
    [("mean", 2), ("mean", 4), ("mean", 25), ("median", 2), ("median", 4), ("median", 24)],
)
def test_agrees_with_monte_carlo_from_the_same_table(aggregate: str, r: int, c: int) -> None:
    curve = _table_curve()
    sample = _sampler(curve)
    rng = np.random.default_rng(20240 + 100 * r + c)
    pilot = _STATISTIC[aggregate](sample(rng, (4000, r), c))
    t = np.quantile(pilot, [0.01, 0.2, 0.5, 0.9])
    m = 40_000
    agg = _STATISTIC[aggregate](sample(rng, (m, r), c))
    p_mc = (agg[:, None] <= t[None, :]).mean(axis=0)
    se = np.sqrt(p_mc * (1 - p_mc) / m)
    res = aggregate_ranks(t, curve, budget=c, runs=r, aggregate=aggregate)
    assert set(res.method) == {
        f"{aggregate}-{'integral' if aggregate == 'median' else 'convolution'}"
    }
    np.testing.assert_array_less(np.abs(res.v - p_mc), 3 * se)
    assert np.all((res.log10_lo <= res.log10_v) & (res.log10_v <= res.log10_hi))


def test_odd_median_falls_back_to_the_order_statistic() -> None:
    curve = _table_curve()
    t = np.array([0.3, 0.6])
    res = aggregate_ranks(t, curve, budget=3, runs=25, aggregate="median")
    ref = absrank.ranks_from_curve(t, curve, budget=3, runs=25, aggregate="order", order=13)
    np.testing.assert_array_equal(res.log10_v, ref.log10_v)


# ---------------------------------------------------------------- analytic sphere -------------


@pytest.mark.parametrize("d", [2, 10])
@pytest.mark.parametrize("r", [2, 4, 25, 51])
def test_mean_of_power_law_runs_is_the_dirichlet_form(d: int, r: int) -> None:
    """Unclipped sphere, c = 1: exact through the power path and through forced convolution."""
    curve = _sphere_curve(d)
    assert curve.power is not None
    t = np.array([1e-9, 1e-3, 0.5]) * curve.power.limit / r
    exact10 = _dirichlet_ln(curve, t, r) / LN10
    power = aggregate_ranks(t, curve, budget=1, runs=r, aggregate="mean")
    assert list(power.method) == ["mean-power"] * 3
    np.testing.assert_allclose(power.log10_v, exact10, rtol=1e-12, atol=1e-12)
    conv = aggregate_ranks(t, _without_power(curve), budget=1, runs=r, aggregate="mean")
    assert list(conv.method) == ["mean-convolution"] * 3
    error = np.abs(conv.log10_v - exact10)
    # deep into the tail: v down to 1e-2500 (d = 10, r = 51: 2.7e-6 on the first level of the
    # shared lattices, 3435-3602 cells, where E = 3e-5 ends the refinement)
    assert np.all(error <= 3e-6)
    assert np.all(error <= np.array(conv.tail.as_json()["aggregate"]["numerical_error_log10"]))
    lo, hi = np.array(conv.tail.as_json()["aggregate"]["bracket_log10"]).T
    assert np.all((lo <= exact10) & (exact10 <= hi))  # the rigorous bracket holds
    assert np.all((conv.log10_lo <= exact10) & (exact10 <= conv.log10_hi))


def test_mean_power_with_a_budget_is_c_v1_within_the_stated_accuracy() -> None:
    curve = _sphere_curve(10)
    r, c = 5, 1000
    t = np.array([1e-8])
    res = aggregate_ranks(t, curve, budget=c, runs=r, aggregate="mean")
    assert res.method[0] == "mean-power"
    exact10 = (_dirichlet_ln(curve, t, r) + r * math.log(c)) / LN10
    assert res.log10_v[0] == pytest.approx(exact10[0], abs=1e-9)
    # higher up, still inside the power range, the Bonferroni bound r (c − 1) v1/2 exceeds
    # 1e-6: the convolution takes over
    far = aggregate_ranks(np.array([1.0]), curve, budget=c, runs=r, aggregate="mean")
    assert far.method[0] == "mean-convolution"


def _median_quad(t: float, r: int, c: int, ln_v1) -> float:
    """P(M <= t) by scipy quad of David & Nagaraja's integral with F = v_c and f = F'."""
    k = r // 2

    def big_f(x: float) -> float:
        return float(np.exp(absrank.ln_best_of_c(ln_v1(np.array([x])), c))[0])

    def density(x: float) -> float:
        h = 1e-6 * x
        return (big_f(x + h) - big_f(x - h)) / (2 * h)

    ft = big_f(t)
    coef = math.factorial(r) / (math.factorial(k - 1) * math.factorial(r - k))

    def integrand(x: float) -> float:
        bracket = (1 - big_f(x)) ** (r - k) - (1 - big_f(2 * t - x)) ** (r - k)
        return coef * big_f(x) ** (k - 1) * bracket * density(x)

    scale = stats.binom.pmf(k, r, ft)  # order of magnitude of the answer
    value, _ = integrate.quad(lambda x: integrand(x) / scale, 0.0, t, epsabs=1e-13, limit=200)
    return value * scale


@pytest.mark.parametrize("c", [1, 10])
@pytest.mark.parametrize("r", [2, 4, 10])
def test_even_median_matches_quad(r: int, c: int) -> None:
    """2-D sphere on [-1, 1]^2: v1 is closed form, clipped by the box beyond t = 1."""
    curve = _sphere_curve(2, half=1.0)
    t = np.array([1e-4, 0.05, 0.6, 1.5])
    res = aggregate_ranks(t, curve, budget=c, runs=r, aggregate="median")
    assert set(res.method) == {"median-integral"}

    def ln_v1(x: np.ndarray) -> np.ndarray:
        return curve.evaluate(x)[0]

    ref = np.array([math.log10(_median_quad(x, r, c, ln_v1)) for x in t])
    np.testing.assert_allclose(res.log10_v, ref, rtol=0, atol=1e-6)
    assert np.max(res.tail.as_json()["aggregate"]["numerical_error_log10"]) < 1e-5


def test_median_of_two_is_the_mean_of_two() -> None:
    curve = _table_curve()
    t = np.array([1e-3, 0.1, 0.5, 1.2])
    for c in (1, 7):
        mean = aggregate_ranks(t, curve, budget=c, runs=2, aggregate="mean")
        median = aggregate_ranks(t, curve, budget=c, runs=2, aggregate="median")
        errors = [
            np.array(x.tail.as_json()["aggregate"]["numerical_error_log10"]) for x in (mean, median)
        ]
        assert np.all(np.abs(median.log10_v - mean.log10_v) <= errors[0] + errors[1])
        np.testing.assert_allclose(median.log10_v, mean.log10_v, rtol=0, atol=1e-4)


# ---------------------------------------------------------------- atoms and edges -------------


def _uniform_with_atom(a: float) -> V1Curve:
    """v1 = a + (1 − a)·t on [0, 1]: a plateau of mass a at f* = 0."""

    def evaluate(x: np.ndarray):
        v = np.where(x < 0, 0.0, np.minimum(a + (1 - a) * np.maximum(x, 0.0), 1.0))
        with np.errstate(divide="ignore"):
            ln = np.log(v)
        return ln, ln, ln, np.full(x.shape, "analytic", dtype=object)

    return V1Curve(evaluate, {"mode": "test"}, [], 0.0, None, atom=a)


def test_mean_with_an_atom_is_exact() -> None:
    a, b = 0.3, 0.7
    curve = _uniform_with_atom(a)
    t = np.array([-0.1, 0.0, 0.01, 0.1, 0.3])
    s = 3 * np.maximum(t, 0)
    # P(W1 + W2 + W3 <= s) for W = 0 w.p. a, else U(0, 1), s <= 1
    exact = a**3 + 3 * a * a * b * s + 3 * a * b * b * s**2 / 2 + b**3 * s**3 / 6
    exact[0] = 0.0
    res = aggregate_ranks(t, curve, budget=1, runs=3, aggregate="mean")
    np.testing.assert_allclose(res.v, exact, rtol=1e-12, atol=0)
    assert list(res.method) == ["at-or-below-minimum", "mean-exact"] + ["mean-convolution"] * 3


def test_median_with_an_atom_agrees_with_monte_carlo() -> None:
    a, r, m = 0.3, 4, 200_000
    curve = _uniform_with_atom(a)
    rng = np.random.default_rng(5)
    z = np.where(rng.random((m, r)) < a, 0.0, rng.random((m, r)))
    med = np.median(z, axis=1)
    t = np.array([0.0, 0.05, 0.3])
    p_mc = (med[:, None] <= t).mean(axis=0)
    res = aggregate_ranks(t, curve, budget=1, runs=r, aggregate="median")
    assert res.v[0] == pytest.approx(stats.binom.sf(2, r, a), rel=1e-12)  # >= 3 runs at f*
    np.testing.assert_array_less(np.abs(res.v - p_mc), 3 * np.sqrt(p_mc * (1 - p_mc) / m))


def test_no_mass_between_t_and_the_top_of_the_grid_is_exact() -> None:
    """Above y_N with the flat upper tail v1 = N/(N+1): every finite run is below t."""
    curve = absrank.table_curve(_sphere_table(), _ctx(3, beta=1.5))
    res = aggregate_ranks(np.array([3.5]), curve, budget=1, runs=6, aggregate="mean")
    assert res.method[0] == "mean-exact"
    n = _sphere_table().n
    assert res.log10_v[0] == pytest.approx(6 * math.log10(n / (n + 1)), rel=1e-12)


def test_a_gap_above_the_minimum_gives_exact_zeros() -> None:
    """v1 = 0 below 0.5, then linear: two runs average at least 0.5."""

    def evaluate(x: np.ndarray):
        v = np.clip(2.0 * x - 1.0, 0.0, 1.0)
        with np.errstate(divide="ignore"):
            ln = np.log(v)
        return ln, ln, ln, np.full(x.shape, "analytic", dtype=object)

    curve = V1Curve(evaluate, {"mode": "test"}, [], 0.0, None)
    t = np.array([0.3, 0.49, 0.6, 0.75])
    res = aggregate_ranks(t, curve, budget=1, runs=2, aggregate="mean")
    np.testing.assert_array_equal(res.v[:2], [0.0, 0.0])
    s = 4 * t[2:] - 2.0  # W = (1 + U)/2: W + W' <= 2t  <=>  U + U' <= 4t − 2 = s <= 1
    np.testing.assert_allclose(res.v[2:], s**2 / 2, rtol=1e-9)
    med = aggregate_ranks(t, curve, budget=1, runs=2, aggregate="median")  # = mean of 2
    np.testing.assert_array_equal(med.v[:2], [0.0, 0.0])
    error = np.array(med.tail.as_json()["aggregate"]["numerical_error_log10"][2:])
    assert np.all(np.abs(med.log10_v[2:] - np.log10(s**2 / 2)) <= error)  # a kink at 0.5
    assert np.all(error < 1e-5)


@pytest.mark.parametrize(("aggregate", "r"), [("mean", 25), ("median", 24)])
def test_ranks_near_one_are_exactly_monotone(aggregate: str, r: int) -> None:
    """A large budget puts v within rounding of 1: no rounding noise may reverse the order."""
    t = np.linspace(0.02, 2.5, 60)
    res = aggregate_ranks(t, _table_curve(), budget=100, runs=r, aggregate=aggregate)
    assert np.all(np.diff(res.log10_v) >= 0)
    assert np.all(res.log10_v <= 0)
    assert res.log10_v[-1] == 0.0


def test_runs_one_falls_back_to_the_single_run_rank() -> None:
    curve = _table_curve()
    t = np.array([1e-4, 0.2, 0.9])
    single = absrank.ranks_from_curve(t, curve, budget=4)
    for aggregate in ("mean", "median"):
        res = aggregate_ranks(t, curve, budget=4, runs=1, aggregate=aggregate)
        np.testing.assert_array_equal(res.log10_v, single.log10_v)
        np.testing.assert_array_equal(res.log10_lo, single.log10_lo)


@pytest.mark.parametrize("aggregate", ["mean", "median"])
def test_huge_r_and_tiny_v_do_not_underflow(aggregate: str) -> None:
    curve = _sphere_curve(10)
    r = 51 if aggregate == "mean" else 50
    t = np.array([1e-16, 0.6, 1.0])  # v1 ≈ 1e-100 (power form), and beyond the power range
    res = aggregate_ranks(t, curve, budget=1, runs=r, aggregate=aggregate)
    assert np.all(np.isfinite(res.log10_v))
    assert res.log10_v[0] < (-4000 if aggregate == "mean" else -2000)
    assert np.all(np.diff(res.log10_v) > 0)
    assert res.v[0] == 0.0  # underflows; log10_v is authoritative


def test_unknown_minimum_is_not_applicable() -> None:
    table = _sphere_table()
    curve = absrank.table_curve(table, dataclasses.replace(_ctx(3), f_opt=None), tail="paper")
    for aggregate, r in (("mean", 3), ("median", 4)):
        with pytest.raises(NotApplicable, match="f\\*") as err:
            aggregate_ranks(np.array([0.5]), curve, budget=1, runs=r, aggregate=aggregate)
        assert err.value.field == "aggregate"


def test_too_many_runs_for_the_convolution() -> None:
    curve = _sphere_curve(10)
    r = MAX_MEAN_RUNS + 1
    deep = aggregate_ranks(np.array([1e-6]), curve, budget=1, runs=r, aggregate="mean")
    assert deep.method[0] == "mean-power"  # the exact form has no limit on r
    with pytest.raises(NotApplicable) as err:
        aggregate_ranks(np.array([20.0]), curve, budget=1, runs=r, aggregate="mean")
    assert err.value.field == "runs"


def test_result_describes_the_transform_and_the_numerics() -> None:
    curve = _table_curve()
    res = absrank.ranks_from_curve(np.array([0.4, 0.5]), curve, budget=2, runs=4, aggregate="mean")
    assert res.tail.as_json()["transform"] == {
        "budget": 2,
        "runs": 4,
        "aggregate": "mean",
        "order": None,
    }
    info = res.tail.as_json()["aggregate"]
    assert info["statistic"] == "mean"
    assert set(info["methods"]) == {"mean-convolution"}
    assert info["normal_approximation"] == "never used"
    assert info["cells"] == [2048, 2048]
    assert 0 < info["max_numerical_error_log10"] < 1e-3
    assert res.tail.as_json()["lower"] == "power"  # the curve's own description is kept
    again = absrank.ranks_from_curve(
        np.array([0.4, 0.5]), curve, budget=2, runs=4, aggregate="mean"
    )
    np.testing.assert_array_equal(res.log10_v, again.log10_v)  # deterministic


# ---------------------------------------------------------------- properties ------------------

_PROPS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_T = st.lists(
    st.floats(min_value=-0.1, max_value=3.2, allow_nan=False), min_size=1, max_size=4
).map(np.array)


@_PROPS
@given(
    t=_T,
    r=st.integers(2, 8),
    c=st.sampled_from([1, 3, 50]),
    aggregate=st.sampled_from(["mean", "median"]),
)
def test_ranks_are_probabilities_monotone_in_t_with_their_interval(
    t: np.ndarray, r: int, c: int, aggregate: str
) -> None:
    curve = _table_curve()
    r += r % 2 if aggregate == "median" else 0  # an odd median is an order statistic
    t = np.sort(np.concatenate((t, t * 0.5, [1e-5])))
    res = aggregate_ranks(t, curve, budget=c, runs=r, aggregate=aggregate)
    assert np.all((res.v >= 0) & (res.v <= 1))
    assert np.all((res.log10_lo <= res.log10_v) & (res.log10_v <= res.log10_hi))
    assert set(res.method) <= AGGREGATE_METHODS
    err = np.array(res.tail.as_json()["aggregate"]["numerical_error_log10"], dtype=float)
    finite = np.isfinite(res.log10_v)
    drops = np.diff(res.log10_v[finite])
    slack = (err[finite][1:] + err[finite][:-1]) + 1e-12
    assert np.all(drops >= -slack)
    assert np.all(np.isneginf(res.log10_v[t < 0]))


@_PROPS
@given(
    scale=st.floats(min_value=1e-3, max_value=1e3),
    shift=st.floats(min_value=-100.0, max_value=100.0),
    q=st.lists(st.floats(min_value=0.0, max_value=1.2), min_size=1, max_size=3),
    r=st.sampled_from([2, 3, 4, 6]),
    aggregate=st.sampled_from(["mean", "median"]),
)
def test_invariant_under_increasing_affine_maps_of_f(
    scale: float, shift: float, q: list[float], r: int, aggregate: str
) -> None:
    """Rank a·t + b on the table of a·f + b: the same ranks (v is a probability of f <= t).

    Up to rounding, except the mean of more than ``DIRECT_RUNS`` runs: its lattices are placed
    by the octave of ``L`` (shared by a request's values), so ``a`` moves ``L`` on the lattice and
    the two answers agree within their numerical error estimates."""
    t = np.array(q) + 1e-3
    base = aggregate_ranks(t, _table_curve(), budget=2, runs=r, aggregate=aggregate)
    moved = aggregate_ranks(
        scale * t + shift,
        _table_curve(scale, shift),
        budget=2,
        runs=r,
        aggregate=aggregate,
    )
    assert list(moved.method) == list(base.method)
    tol = 1e-6 * (1.0 + np.abs(base.log10_v))
    if aggregate == "mean" and r > _mean.DIRECT_RUNS:
        for res in (base, moved):
            block = res.tail.as_json()["aggregate"]
            assert isinstance(block, dict)
            tol = tol + np.array(block["numerical_error_log10"], dtype=float)
    assert np.all(np.abs(moved.log10_v - base.log10_v) <= tol)


@_PROPS
@given(t=_T, c=st.sampled_from([1, 2, 30]), d=st.sampled_from([1, 3]))
def test_mean_of_one_run_is_the_single_run_rank(t: np.ndarray, c: int, d: int) -> None:
    curve = _sphere_curve(d, half=1.0)
    single = absrank.ranks_from_curve(t, curve, budget=c)
    mean = absrank.ranks_from_curve(t, curve, budget=c, runs=1, aggregate="mean")
    np.testing.assert_array_equal(mean.log10_v, single.log10_v)
