"""Exact v1 of the sphere and the L∞ cone on boxes (SPEC §3.3; Jing & Liu §IV-B)."""

import math

import numpy as np
import pytest
from scipy import integrate, special

from app.domain import analytic
from app.domain.absrank import RankContext, analytic_ranks
from app.domain.analytic import (
    SPHERE_REL_ERROR,
    box_distances,
    cone_ln_cdf,
    sphere_ln_cdf,
)
from app.domain.errors import InvalidInput, NotApplicable


def _v(s: np.ndarray, a: np.ndarray, b: np.ndarray, **kw: int) -> np.ndarray:
    return np.exp(sphere_ln_cdf(np.log(np.asarray(s, dtype=float)), a, b, **kw))


def _bbob_like(d: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances for x* uniform in [-4, 4]^d inside [-5, 5]^d (BBOB f1)."""
    x_opt = np.random.default_rng(seed).uniform(-4.0, 4.0, d)
    return box_distances(np.full(d, -5.0), np.full(d, 5.0), x_opt)


def test_one_dimension_exact() -> None:
    a, b = np.array([1.0]), np.array([3.0])
    s = np.array([0.25, 1.0, 2.25, 4.0, 9.0, 16.0])
    expected = [(0.5 + 0.5) / 4, 2 / 4, (1 + 1.5) / 4, (1 + 2) / 4, 1.0, 1.0]
    np.testing.assert_allclose(_v(s, a, b), expected, rtol=1e-14)


def _square_disc_area(r: float, w: float) -> float:
    """Area of the disc of radius r ∩ the square [-w, w]² (textbook closed form)."""
    if r <= w:
        return math.pi * r * r
    if r >= w * math.sqrt(2.0):
        return 4.0 * w * w
    segment = r * r * math.acos(w / r) - w * math.sqrt(r * r - w * w)
    return math.pi * r * r - 4.0 * segment


def test_two_dimensions_centred_closed_form() -> None:
    w = 5.12
    a = b = np.full(2, w)
    r = np.linspace(0.1, 1.5 * w, 61)
    expected = [_square_disc_area(x, w) / (2 * w) ** 2 for x in r]
    np.testing.assert_allclose(_v(r * r, a, b), expected, rtol=1e-12)


def _rect_quad(s: float, a: np.ndarray, b: np.ndarray) -> float:
    """Area of {|x|² <= s} ∩ [-a0, b0] × [-a1, b1] by quad (independent of the module)."""
    root = math.sqrt(s)

    def height(x: float) -> float:
        h = math.sqrt(max(s - x * x, 0.0))
        return min(h, b[1]) + min(h, a[1])

    def integrand(phi: float) -> float:  # x = root·sin(phi) removes the endpoint square root
        return height(root * math.sin(phi)) * root * math.cos(phi)

    lo, hi = math.asin(max(-a[0], -root) / root), math.asin(min(b[0], root) / root)
    brk = [sg * math.sqrt(s - c * c) / root for c in (a[1], b[1]) if c * c < s for sg in (-1, 1)]
    pts = [math.asin(p) for p in brk if lo < math.asin(p) < hi] or None
    val = integrate.quad(integrand, lo, hi, points=pts, epsabs=0, epsrel=1e-13, limit=200)[0]
    return val / ((a[0] + b[0]) * (a[1] + b[1]))


def test_two_dimensions_asymmetric_vs_quad() -> None:
    a, b = np.array([1.3, 0.7]), np.array([3.7, 4.3])
    s = np.array([0.3, 0.6, 1.0, 2.0, 5.0, 9.0, 15.0, 25.0, 30.0])
    expected = [_rect_quad(x, a, b) for x in s]
    np.testing.assert_allclose(_v(s, a, b), expected, rtol=1e-12)


def _v3_nested_quad(s: float, a: np.ndarray, b: np.ndarray) -> float:
    """v_3 by scipy nested quad over (x0, x1) of the exact 1-D law of the third coordinate."""

    def v_last(rest: float) -> float:
        if rest <= 0:
            return 0.0
        q = math.sqrt(rest)
        return (min(q, a[2]) + min(q, b[2])) / (a[2] + b[2])

    def inner(x0: float) -> float:
        rest = s - x0 * x0
        if rest <= 0:
            return 0.0
        q = math.sqrt(rest)
        lo, hi = max(-a[1], -q), min(b[1], q)
        brk = [sg * math.sqrt(rest - c * c) for c in (a[2], b[2]) if c * c < rest for sg in (-1, 1)]
        pts = [p for p in brk if lo < p < hi] or None
        val = integrate.quad(
            lambda x1: v_last(rest - x1 * x1), lo, hi, points=pts, epsabs=0, epsrel=1e-12, limit=200
        )[0]
        return val / (a[1] + b[1])

    root = math.sqrt(s)
    lo, hi = max(-a[0], -root), min(b[0], root)
    kinks = [c1 * c1 + c2 * c2 for c1 in (0, a[1], b[1]) for c2 in (0, a[2], b[2])]
    brk = sorted(sg * math.sqrt(s - k) for k in kinks if 0 < k < s for sg in (-1, 1))
    pts = [p for p in brk if lo < p < hi] or None
    val = integrate.quad(inner, lo, hi, points=pts, epsabs=0, epsrel=1e-11, limit=200)[0]
    return val / (a[0] + b[0])


def test_three_dimensions_vs_nested_quad() -> None:
    a, b = np.array([1.3, 0.7, 2.0]), np.array([3.7, 4.3, 3.0])
    s = np.array([0.3, 0.5, 1.0, 2.0, 4.0, 9.0, 15.0, 25.0, 35.0])
    expected = [_v3_nested_quad(x, a, b) for x in s]
    np.testing.assert_allclose(_v(s, a, b), expected, rtol=1e-8)


@pytest.mark.parametrize(
    ("d", "centred"), [(5, False), (12, True), (12, False), (40, True), (40, False)]
)
def test_monte_carlo_within_four_standard_errors(d: int, centred: bool) -> None:
    rng = np.random.default_rng(1000 + d)
    x_opt = np.zeros(d) if centred else rng.uniform(-4.0, 4.0, d)
    lo, hi = np.full(d, -5.0), np.full(d, 5.0)
    a, b = box_distances(lo, hi, x_opt)
    n = 10**6
    f = np.empty(n)
    for start in range(0, n, 250_000):
        X = rng.uniform(-5.0, 5.0, (250_000, d))
        f[start : start + 250_000] = np.sum((X - x_opt) ** 2, axis=1)
    pilot = np.sum((rng.uniform(-5.0, 5.0, (20_000, d)) - x_opt) ** 2, axis=1)
    s = np.quantile(pilot, [0.002, 0.02, 0.2, 0.5, 0.8, 0.98])
    emp = np.array([np.mean(f <= x) for x in s])
    se = np.sqrt(emp * (1 - emp) / n)
    assert np.all(np.abs(_v(s, a, b) - emp) <= 4 * se)


@pytest.mark.parametrize(("d", "seed"), [(4, 1), (10, 2), (40, 3)])
def test_grid_refinement_below_documented_error(d: int, seed: int) -> None:
    a, b = _bbob_like(d, seed)
    top = np.sum(np.maximum(a, b) ** 2)
    bottom = np.min(np.minimum(a, b)) ** 2
    ln_s = np.linspace(math.log(bottom), math.log(top), 200)
    coarse = sphere_ln_cdf(ln_s, a, b)
    fine = sphere_ln_cdf(ln_s, a, b, n_points=3000)
    assert np.max(np.abs(coarse - fine)) < SPHERE_REL_ERROR / 10


def test_ball_formula_and_continuity_at_switch_point() -> None:
    d = 10
    a, b = _bbob_like(d, 7)
    m2 = float(np.min(np.minimum(a, b)) ** 2)
    ln_const = 0.5 * d * math.log(math.pi) - special.gammaln(0.5 * d + 1.0) - np.sum(np.log(a + b))
    ln_s = np.log([1e-300, 1e-20, 0.5 * m2, m2])
    np.testing.assert_allclose(sphere_ln_cdf(ln_s, a, b), ln_const + 0.5 * d * ln_s, rtol=1e-13)
    eps = 1e-7
    below, above = sphere_ln_cdf(np.log([m2 * (1 - eps), m2 * (1 + eps)]), a, b)
    assert abs((above - below) - 0.5 * d * math.log((1 + eps) / (1 - eps))) < 1e-7


def test_centred_sphere_ball_region_matches_paper_formula() -> None:
    d, w = 10, 5.12
    a = b = np.full(d, w)
    t = np.array([1e-6, 1.0, 26.0])
    paper = math.pi ** (d / 2) * t ** (d / 2) / (math.gamma(d / 2 + 1) * (2 * w) ** d)
    np.testing.assert_allclose(_v(t, a, b), paper, rtol=1e-12)


def test_x_opt_on_face_and_corner() -> None:
    d = 3
    lo, hi = np.zeros(d), np.ones(d)
    a, b = box_distances(lo, hi, np.zeros(d))  # corner: one octant of the ball
    s = np.array([0.25])
    assert _v(s, a, b)[0] == pytest.approx(math.pi * 0.5**3 * 4 / 3 / 8, rel=1e-13)
    a, b = box_distances(lo, hi, np.array([0.5, 0.5, 1.0]))  # face: half ball
    assert _v(np.array([0.16]), a, b)[0] == pytest.approx(math.pi * 0.4**3 * 4 / 3 / 2, rel=1e-13)


def test_box_distances_errors() -> None:
    with pytest.raises(NotApplicable):
        box_distances(np.zeros(2), np.ones(2), np.array([0.5, 2.0]))
    with pytest.raises(InvalidInput):
        box_distances(np.zeros(2), np.ones(3), np.zeros(2))


def test_cone_centred_is_power_d() -> None:
    d = 7
    a = b = np.full(d, 2.0)
    q = np.array([1e-300, 1e-5, 0.3, 1.0])
    np.testing.assert_allclose(cone_ln_cdf(np.log(q), a, b, 2.0), d * np.log(q), rtol=1e-14)


def test_cone_asymmetric_vs_monte_carlo() -> None:
    rng = np.random.default_rng(5)
    d = 3
    x_opt = np.array([0.5, -3.0, 4.0])
    a, b = box_distances(np.full(d, -5.0), np.full(d, 5.0), x_opt)
    X = rng.uniform(-5.0, 5.0, (10**6, d))
    rho = np.max(np.abs(X - x_opt), axis=1)
    for r in (0.5, 2.0, 4.5, 8.0):
        emp = np.mean(rho <= r)
        got = math.exp(cone_ln_cdf(np.log([r / 9.0]), a, b, 9.0)[0])
        assert abs(got - emp) <= 4 * math.sqrt(emp * (1 - emp) / 10**6)


def _ctx(d: int, x_opt: np.ndarray, f_max: float | None = None, f_opt: float = 10.0) -> RankContext:
    return RankContext(
        f_opt=f_opt,
        f_max=f_max,
        atom=0.0,
        beta=d / 2,
        beta_derivation="",
        x_opt=x_opt,
        region_lower=np.full(d, -5.0),
        region_upper=np.full(d, 5.0),
    )


def test_analytic_ranks_sphere_and_transforms() -> None:
    d = 20
    x_opt = np.random.default_rng(3).uniform(-4, 4, d)
    ctx = _ctx(d, x_opt, f_opt=0.0)
    t = np.array([-1.0, 0.0, 1e-200, 1.0, 50.0, 390.0, 4990.0])
    res = analytic_ranks(t, "sphere", ctx)
    assert list(res.method[:2]) == ["at-or-below-minimum", "at-or-below-minimum"]
    assert set(res.method[2:]) == {"analytic"}
    assert res.log10_v[0] == -np.inf
    assert res.log10_v[1] == -np.inf
    assert np.isfinite(res.log10_v[2])
    assert res.log10_v[2] < -2000
    assert res.v[2] == 0.0  # underflows, log10_v does not
    assert res.log10_v[-1] == 0.0
    assert np.all(res.log10_lo <= res.log10_v)
    assert np.all(res.log10_v <= res.log10_hi)
    a, b = box_distances(ctx.region_lower, ctx.region_upper, x_opt)
    expected = sphere_ln_cdf(np.log(t[2:]), a, b) / math.log(10)
    np.testing.assert_allclose(res.log10_v[2:], expected, rtol=1e-12)
    best = analytic_ranks(t, "sphere", ctx, budget=100)
    assert best.log10_v[2] == pytest.approx(res.log10_v[2] + 2.0, abs=1e-9)


def test_analytic_ranks_cone_and_errors() -> None:
    d = 4
    ctx = _ctx(d, np.zeros(d), f_max=20.0)
    res = analytic_ranks(np.array([10.0, 12.5, 20.0, 25.0]), "cone", ctx)
    np.testing.assert_allclose(res.v, [0.0, 0.25**4, 1.0, 1.0], rtol=1e-12)
    with pytest.raises(InvalidInput):
        analytic_ranks(np.array([1.0]), "rastrigin", ctx)
    with pytest.raises(NotApplicable):
        analytic_ranks(np.array([1.0]), "cone", _ctx(d, np.zeros(d)))


def test_model_is_cached() -> None:
    a, b = _bbob_like(6, 11)
    sphere_ln_cdf(np.array([0.0]), a, b)
    hits = analytic._sphere_model.cache_info().hits
    sphere_ln_cdf(np.array([1.0]), a, b)
    assert analytic._sphere_model.cache_info().hits == hits + 1


def test_box_distances_a_few_ulps_apart_give_the_same_volume() -> None:
    """Kinks a few ulps apart are merged (the spline had no room between them)."""
    from app.domain.analytic import sphere_ln_cdf

    ln_s = np.log([0.5, 1.5, 2.5])
    near = np.r_[np.nextafter(1.0, 2.0), np.ones(3)]
    got = sphere_ln_cdf(ln_s, np.ones(4), near)
    np.testing.assert_allclose(got, sphere_ln_cdf(ln_s, np.ones(4), np.ones(4)), rtol=1e-12)
