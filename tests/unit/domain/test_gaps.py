"""Ranks of errors as gaps ``t − f*`` (issue 13 item 3).

(a) ``values_are='f'`` answers are byte-identical to those recorded from main before errors were
ranked as gaps (``fpath_main.json``, written by ``fpath_cases.py``).
(b) CEC 2005 F1–F5 at d = 10 with errors 1e-15 … 1e-3: error ranks against the closed-form ball
volume (F1) and the power tail's exact scaling (F1–F5), the same values as ``f`` against the gap
that ``f* + e`` still carries after rounding.
(c) Each tail's gap path against formulas computed here in rational arithmetic.
"""

from __future__ import annotations

import functools
import json
import math
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np
import pytest

from app.domain import absrank, aggregates, sampling
from app.domain.absrank import RankContext
from app.domain.curves import V1Curve
from app.domain.functions import get_function
from app.domain.nested import ladder_shape, nested_curve, plan_ladder
from tests.unit.domain import fpath_cases
from tests.unit.domain import test_nested as tn

HERE = Path(__file__).parent


def test_f_answers_are_bit_identical_to_main_before_gaps() -> None:
    recorded = json.loads((HERE / "fpath_main.json").read_text())
    now = json.loads(json.dumps(fpath_cases.cases(), sort_keys=True))
    assert sorted(now) == sorted(recorded)
    for name in recorded:
        assert now[name] == recorded[name], name


# --------------------------------------------------------------------------------------------
# (b) CEC 2005 F1–F5 at d = 10: errors 1e-15 … 1e-3 ranked as errors and as f = f* + e
# --------------------------------------------------------------------------------------------

ERRORS = 10.0 ** np.arange(-15, -2)  # 1e-15, 1e-14, …, 1e-3


@functools.cache
def _cec_curve(fid: int) -> tuple[V1Curve, float, float, float]:
    """The service's ladder for ``cec2005/f{fid}/d10`` (N = 2^12 per level, as test_nested builds
    it): its nested curve, ``f*``, the registered β and the deepest level's ``y_1 − f*``.

    F4 is noisy: its samples draw the noise from a seeded generator; the ladder's shape is that of
    the noise-free part (the registered β is the same, see its derivation).
    """
    fn = get_function(f"cec2005/f{fid}/d10")
    assert fn.f_opt is not None
    assert fn.x_opt is not None
    assert fn.local.beta is not None
    if fn.noisy:

        def f(X: np.ndarray) -> np.ndarray:
            return fn.evaluate_noisy(X, np.random.default_rng(20260))

    else:
        f = fn.evaluate
    problem = tn._Problem(f, fn.lower, fn.upper, fn.x_opt, fn.f_opt, fn.local.beta, fn.f_max)
    shape = ladder_shape(
        fn.evaluate_noise_free,
        fn.x_opt,
        fn.f_opt,
        fn.lower,
        fn.upper,
        degree=fn.dim / fn.local.beta,
    )
    plan = plan_ladder(
        fn.lower,
        fn.upper,
        fn.x_opt,
        factor=2.0,
        max_levels=14,
        min_log10_volume=-60.0,
        shape=np.asarray(shape),
        orientation=shape.orientation,
    )
    levels = tn._levels(problem, plan.boxes, 12, fn.x_opt)
    deepest = float(levels[-1].table.values[0]) - fn.f_opt
    return nested_curve(levels), fn.f_opt, fn.local.beta, deepest


def _rounded_gap(f_opt: float, e: float) -> Fraction:
    """The gap that ``f* + e`` (rounded to float64) still carries, exactly."""
    return Fraction(f_opt + e) - Fraction(f_opt)


def _mp_log10_ball(e: float, d: int, side: float) -> mpmath.mpf:
    """log10 of ``V_d r^d / Leb(Ω)``, ``r = sqrt(e)``, ``V_d = π^(d/2)/Γ(d/2 + 1)`` (50 digits)."""
    with mpmath.workdps(50):
        e_mp = mpmath.mpf(Fraction(e).numerator) / Fraction(e).denominator
        vol = mpmath.pi ** (d / 2) / mpmath.gamma(d / 2 + 1) * e_mp ** (mpmath.mpf(d) / 2)
        return mpmath.log10(vol / mpmath.mpf(side) ** d)


def test_cec2005_f1_error_ranks_are_the_ball_volume_while_f_ranks_lose_digits() -> None:
    fn = get_function("cec2005/f1/d10")
    assert fn.analytic == "sphere"
    assert fn.f_opt is not None
    assert fn.x_opt is not None
    d, side = 10, 200.0
    # the ball of radius sqrt(1e-3) around x* lies inside the box [-100, 100]^10
    assert float(np.min(np.minimum(fn.x_opt - fn.lower, fn.upper - fn.x_opt))) > math.sqrt(1e-3)
    ctx = RankContext(fn.f_opt, None, 0.0, 5.0, "registered", fn.x_opt, fn.lower, fn.upper)
    curve = absrank.analytic_curve("sphere", ctx)
    err = absrank.ranks_from_curve(ERRORS, curve, values_are="error")
    as_f = absrank.ranks_from_curve(fn.f_opt + ERRORS, curve)
    for i, e in enumerate(ERRORS):
        ref = float(_mp_log10_ball(float(e), d, side))
        assert abs(err.log10_v[i] - ref) <= 1e-12 * abs(ref), e
        g = _rounded_gap(fn.f_opt, float(e))
        if g == 0:
            assert as_f.log10_v[i] == -math.inf  # 1e-15 < ulp(450)/2: f* + e == f*
        else:  # the f rank is the ball of the rounded gap, not of e
            ref_f = float(_mp_log10_ball(float(g), d, side))
            assert abs(as_f.log10_v[i] - ref_f) <= 1e-12 * abs(ref_f), e
    assert as_f.log10_v[0] == -math.inf
    assert np.all(np.diff(err.log10_v) > 0)
    # digits lost by f: at 1e-13 (about 2 ulp(450)) the f rank is off by > 0.1 decade
    lost = np.abs(as_f.log10_v - err.log10_v)
    assert lost[ERRORS.tolist().index(1e-13)] > 0.1


@pytest.mark.parametrize(
    ("fid", "tail"), [(1, "power"), (2, "power"), (3, "power"), (4, "linear"), (5, "linear")]
)
def test_cec2005_tail_of_errors_scales_exactly(fid: int, tail: str) -> None:
    """Below the deepest sample the error ranks follow (e1/e2)^β: the registered β where the
    power tail serves. F4 (noisy) and F5 are served by the linear tail (exponent 1,
    ``v1(f*) = 0``): every level refuses the power tail, F4's because its lowest noisy samples
    reach the boxes' faces (clipping check), F5's because x* lies on a face of Ω and the deep
    levels see too few samples below their thresholds (measured with this ladder, N = 2^12)."""
    curve, f_opt, registered_beta, deepest = _cec_curve(fid)
    beta = registered_beta if tail == "power" else 1.0
    # the errors below the deepest stored sample (1e-15 … 1e-5 at least at this N)
    below = ERRORS < deepest
    assert below[:11].all()
    e = ERRORS[below]
    err = absrank.ranks_from_curve(e, curve, values_are="error")
    assert set(err.method) == {f"nested-tail-{tail}"}
    as_f = absrank.ranks_from_curve(f_opt + e, curve)
    log10_e = np.array([float(mpmath.log10(Fraction(float(x)))) for x in e])
    # v(e1)/v(e2) = (e1/e2)^β, in decades, against the exact decade of every error
    want = beta * (log10_e - log10_e[-1])
    got = err.log10_v - err.log10_v[-1]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9)
    assert np.all(np.diff(err.log10_v) > 0)
    # the same values as f: v = 0 where f* + e == f* (1e-15, 1e-14 < ulp(f*)/2), elsewhere the
    # rank of the gap left after rounding f* + e
    assert as_f.log10_v[0] == -math.inf
    assert np.isfinite(err.log10_v).all()
    for i, x in enumerate(e):
        g = _rounded_gap(f_opt, float(x))
        if g == 0:
            assert as_f.log10_v[i] == -math.inf, x
            continue
        shift = beta * float(mpmath.log10(g) - mpmath.log10(Fraction(float(x))))
        assert abs((as_f.log10_v[i] - err.log10_v[i]) - shift) <= 1e-9, x
    assert abs(as_f.log10_v[2] - err.log10_v[2]) > 0.05  # 1e-13 is about 2 ulp(f*)


# --------------------------------------------------------------------------------------------
# (c) each tail's gap path against rational formulas
# --------------------------------------------------------------------------------------------

ULP = 2.0**-44  # ulp(450): the spacing of float64 values near f* = −450
F_OPT = fpath_cases.F_STAR


def _q(x: float) -> Fraction:
    return Fraction(float(x))


def _mp_log10(x: Fraction) -> float:
    with mpmath.workdps(40):
        return float(mpmath.log10(mpmath.mpf(x.numerator) / x.denominator))


def _hand_table(values: np.ndarray) -> absrank.TableData:
    """A table of the given values (one dimension; points only matter to the power tail)."""
    low_x = np.zeros((min(values.size, 4096), 1))
    return absrank.build_table_data(values, low_x, k_exact=4096)


def _ctx1(atom: float = 0.0, beta: float | None = None) -> RankContext:
    return RankContext(F_OPT, None, atom, beta, "test", None, np.zeros(1), np.ones(1))


def _near_table() -> absrank.TableData:
    """5 samples at each of ``f* + j·ulp(f*)``, j = 1..10 (exact gaps), and 200 far above."""
    near = np.repeat(F_OPT + ULP * np.arange(1, 11), 5)
    return _hand_table(np.concatenate((near, F_OPT + np.arange(1.0, 201.0))))


GAPS = np.array([1e-300, 1e-30, 1e-16, 3e-15, 1e-14])  # all below one ulp(f*)


def test_power_tail_gap_path_is_the_rational_power_law() -> None:
    """``v = v(y_k)·(gap/(y_k − f*))^β`` with the exact ``y_k − f*`` (fpath_cases' sphere)."""
    table = fpath_cases._table(fpath_cases.LOWER, fpath_cases.UPPER)
    ctx = fpath_cases._ctx(fpath_cases.LOWER, fpath_cases.UPPER, 1.5)
    curve = absrank.table_curve(table, ctx, tail="power")
    info = curve.info.as_json()
    y_k, count = info["anchor_value"], info["anchor_count"]
    gaps = np.concatenate((GAPS, [1e-8, 1e-4]))
    assert np.all(gaps < y_k - F_OPT)
    res = absrank.ranks_from_curve(gaps, curve, values_are="error")
    assert set(res.method) == {"tail-power"}
    span = _q(y_k) - _q(F_OPT)
    for got, g in zip(res.log10_v, gaps, strict=True):
        # β = 3/2: v² = (count/(N+1))²·(gap/span)³, rational
        v2 = Fraction(count, table.n + 1) ** 2 * (_q(g) / span) ** 3
        assert abs(got - _mp_log10(v2) / 2) <= 1e-13 * abs(got), g
    # as f the three smallest gaps are f* itself: v = 0
    as_f = absrank.ranks_from_curve(F_OPT + gaps, curve)
    assert np.all(as_f.log10_v[:3] == -math.inf)


def test_linear_tail_gap_path_is_the_rational_ramp() -> None:
    """``v = v(y_1)·gap/(y_1 − f*)`` below the deepest sample (no atom)."""
    table = _near_table()
    curve = absrank.table_curve(table, _ctx1(), tail="linear")
    res = absrank.ranks_from_curve(GAPS, curve, values_are="error")
    assert set(res.method) == {"tail-linear"}
    for got, g in zip(res.log10_v, GAPS, strict=True):
        want = Fraction(5, table.n + 1) * _q(g) / Fraction(ULP)
        assert abs(got - _mp_log10(want)) <= 1e-13 * abs(got), g
    assert np.all(absrank.ranks_from_curve(F_OPT + GAPS, curve).log10_v[:3] == -math.inf)


def test_atom_gap_path_is_the_atom_plus_ramp() -> None:
    """With an atom ``a``: ``v = a + (v(y_1) − a)·gap/(y_1 − f*)``, ``a`` at gap 0, 0 below."""
    a = 0.01
    table = _near_table()
    curve = absrank.table_curve(table, _ctx1(atom=a), tail="linear")
    gaps = np.concatenate((GAPS, [0.0, -1e-300, -1e-3]))
    res = absrank.ranks_from_curve(gaps, curve, values_are="error")
    v_top = Fraction(5, table.n + 1)
    assert v_top > _q(a)
    for got, g in zip(res.log10_v, gaps, strict=True):
        if g < 0:
            assert got == -math.inf, g
            continue
        want = _q(a) + (v_top - _q(a)) * _q(g) / Fraction(ULP)
        assert abs(got - _mp_log10(want)) <= 1e-13 * abs(got), g
    # as f, f* + 1e-16 == f*: the atom alone
    as_f = absrank.ranks_from_curve(F_OPT + np.array([1e-16]), curve)
    assert as_f.log10_v[0] == pytest.approx(math.log10(a), abs=1e-14)
    assert res.log10_v[2] > as_f.log10_v[0]


def test_eq28_knots_near_f_opt_interpolate_the_exact_gaps() -> None:
    """Between knots ``f* + j·ulp`` Eq. 28 interpolates the counts in the exact gaps; as ``f``
    the same values round to a knot."""
    table = _near_table()
    curve = absrank.table_curve(table, _ctx1(), tail="linear")
    gaps = ULP * np.array([1.25, 2.5, 3.75, 7.0, 9.5])  # 2.5·ulp etc.: exact binary fractions
    res = absrank.ranks_from_curve(gaps, curve, values_are="error")
    assert set(res.method) == {"interpolated"}
    as_f = absrank.ranks_from_curve(F_OPT + gaps, curve)
    for i, g in enumerate(gaps):
        x = _q(g) / Fraction(ULP)  # in units of ulp
        j = int(x)
        count = 5 * j + (x - j) * 5  # counts 5j at knot j, linear between knots
        assert abs(res.log10_v[i] - _mp_log10(count / (table.n + 1))) <= 1e-13, g
        # f* + g rounds to a neighbouring knot (ties to even): the count there, exactly
        knot = (_q(F_OPT + g) - _q(F_OPT)) / Fraction(ULP)
        assert knot.denominator == 1
        assert abs(as_f.log10_v[i] - _mp_log10(Fraction(5 * knot, table.n + 1))) <= 1e-13, g
    assert np.all(np.diff(res.log10_v) > 0)


def test_mean_of_error_runs_uses_the_exact_power_law_on_gaps() -> None:
    """The mean of r = 3 runs of errors (mean 1e-13, below ulp(450) = 5.7e-14 × 2) on the
    analytic F1: ``P(mean <= w) = (C Γ(β+1))^r (r w)^(rβ)/Γ(rβ+1)`` with ``C = V_10/200^10``,
    β = 5 (the r-fold convolution of ``C w^β``), from the gap itself."""
    fn = get_function("cec2005/f1/d10")
    assert fn.f_opt is not None
    ctx = RankContext(fn.f_opt, None, 0.0, 5.0, "registered", fn.x_opt, fn.lower, fn.upper)
    curve = absrank.analytic_curve("sphere", ctx)
    w = np.array([1e-13, 2e-9])
    res = aggregates.aggregate_ranks(
        w, curve, budget=1, runs=3, aggregate="mean", values_are="error"
    )
    assert list(res.method) == ["mean-power", "mean-power"]
    with mpmath.workdps(50):
        c = mpmath.pi**5 / mpmath.gamma(6) / mpmath.mpf(200) ** 10
        for got, x in zip(res.log10_v, w, strict=True):
            xq = mpmath.mpf(Fraction(float(x)).numerator) / Fraction(float(x)).denominator
            p = (c * mpmath.gamma(6)) ** 3 * (3 * xq) ** 15 / mpmath.gamma(16)
            assert abs(got - float(mpmath.log10(p))) <= 1e-9, x


def test_deepest_default_ladder_level_of_f1_keeps_its_gaps_to_about_5_digits() -> None:
    """The measurement of docs/METHODS.md "Values and errors": CEC 2005 F1 d10, the default
    ladder (factor 2, 60 decades, as app.config's defaults and app.services.tables.ladder_plan),
    its deepest box at N = 2^16 (seed 0). The stored samples are ``fl(g(x) + f*)``: each gap
    ``y_i − f*`` (an exact difference of floats) misses ``g(x_i)`` by at most ``ulp(f*)/2``."""
    fn = get_function("cec2005/f1/d10")
    assert fn.f_opt is not None
    assert fn.x_opt is not None
    shape = ladder_shape(fn.evaluate_noise_free, fn.x_opt, fn.f_opt, fn.lower, fn.upper, degree=2.0)
    plan = plan_ladder(
        fn.lower,
        fn.upper,
        fn.x_opt,
        factor=2.0,
        max_levels=32,
        min_log10_volume=-60.0,
        shape=np.asarray(shape),
        orientation=shape.orientation,
        intersect=True,
    )
    box = plan.boxes[-1]
    assert len(plan.boxes) == 22
    chunk = sampling.evaluate_chunk(fn.evaluate, box.lower, box.upper, 0, 0, 2**16, 16)
    values, low_x, _ = sampling.merge_chunk_results([chunk], 16)
    ulp = Fraction(float(np.spacing(abs(fn.f_opt))))
    y_1 = float(np.min(values))
    gap = _q(y_1) - _q(fn.f_opt)
    exact = sum((_q(a) - _q(b)) ** 2 for a, b in zip(low_x[0], fn.x_opt, strict=True))
    assert 3e4 < gap / ulp < 4e4  # y_1 − f* ≈ 2.07e-9 = 36477 ulp(450)
    assert abs(gap - exact) <= ulp / 2 + exact * Fraction(1, 2**48)  # g(x) itself: a few ulps
    assert abs(gap - exact) / exact < Fraction(2, 10**5)  # about 5 significant digits kept
