"""Classic suite: hand-computed values, exact optima, maxima, local structure, registry errors."""

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import optimize

from app.domain.errors import InvalidInput, UnknownFunction
from app.domain.functions import SUPPORTED_DIMS, get_function, list_functions, local_degree
from app.domain.functions.classic import (
    MAX_DIM,
    RASTRIGIN_PEAK,
    SCHWEFEL_PEAK,
    SCHWEFEL_X_OPT,
)

NAMES = (
    "sphere",
    "ellipsoid",
    "rastrigin",
    "rosenbrock",
    "ackley",
    "griewank",
    "schwefel226",
    "step",
    "pyramid",
)
PI = math.pi

# Values worked out by hand (closed forms), not by running the code under test.
REGRESSION = [
    ("classic/sphere/d3", [1.0, 2.0, 3.0], 14.0),
    ("classic/ellipsoid/d3", [1.0, 1.0, 1.0], 1.0 + 1e3 + 1e6),
    ("classic/ellipsoid/d3", [2.0, 0.0, -1.0], 4.0 + 1e6),
    ("classic/ellipsoid/d1", [3.0], 9.0),
    ("classic/rastrigin/d4", [1.0, 1.0, 1.0, 1.0], 4.0),  # cos(2 pi) = 1: only x^2 is left
    ("classic/rastrigin/d2", [0.5, -0.5], 2 * (0.25 + 20.0)),  # cos(pi) = -1
    ("classic/rosenbrock/d2", [0.0, 0.0], 1.0),
    ("classic/rosenbrock/d2", [-1.0, 1.0], 4.0),
    ("classic/rosenbrock/d3", [1.0, 1.0, 2.0], 100.0),
    ("classic/ackley/d2", [1.0, 1.0], 20.0 * (1.0 - math.exp(-0.2))),
    ("classic/ackley/d1", [0.5], 20.0 * (1.0 - math.exp(-0.1)) + math.e - math.exp(-1.0)),
    ("classic/griewank/d1", [2 * PI], PI**2 / 1000.0),  # cos(2 pi) = 1
    ("classic/griewank/d2", [0.0, 2 * PI * math.sqrt(2.0)], PI**2 / 500.0),
    ("classic/schwefel226/d2", [0.0, 0.0], 2 * SCHWEFEL_PEAK),
    ("classic/schwefel226/d2", [-SCHWEFEL_X_OPT, SCHWEFEL_X_OPT], 2 * SCHWEFEL_PEAK),
    ("classic/step/d3", [0.4, -0.6, 1.5], 0.0 + 1.0 + 4.0),
    ("classic/step/d3", [-0.5, 0.49, 99.6], 1.0e4),
    ("classic/pyramid/d3", [1.0, -3.0, 2.0], 3.0),
]


@pytest.mark.parametrize(("function_id", "x", "expected"), REGRESSION)
def test_regression_values(function_id, x, expected):
    value = get_function(function_id).evaluate([x])
    assert value.shape == (1,)
    assert value[0] == pytest.approx(expected, rel=1e-14, abs=1e-14)


def test_listing_and_ids():
    functions = list_functions(suite="classic")
    assert SUPPORTED_DIMS["classic"] == (2, 3, 5, 10, 20, 40)
    assert [f.id for f in functions] == [
        f"classic/{name}/d{d}" for name in NAMES for d in SUPPORTED_DIMS["classic"]
    ]
    assert [f.id for f in list_functions(suite="classic", dim=7)] == [
        f"classic/{name}/d7" for name in NAMES
    ]
    assert {f.id for f in list_functions(dim=3, suite="classic")} == {
        f"classic/{name}/d3" for name in NAMES
    }
    for f in functions:
        assert (f.suite, f.instance, f.f_opt) == ("classic", None, 0.0)
        assert f.source
        assert f.formula
        assert np.all(f.lower < f.x_opt)
        assert np.all(f.x_opt < f.upper)
    assert get_function("classic/sphere/d10") is get_function("classic/sphere/d10")


def test_analytic_kinds():
    kinds = {f.name: f.analytic for f in list_functions(suite="classic", dim=2)}
    assert kinds.pop("sphere") == "sphere"
    assert kinds.pop("pyramid") == "cone"
    assert set(kinds.values()) == {None}
    # The cone's analytic table (SPEC §3.3) assumes f = f* + (f_max - f*) max|x - x*| / w.
    cone = get_function("classic/pyramid/d4")
    w = cone.upper - cone.x_opt
    assert np.all(w == cone.x_opt - cone.lower)
    x = np.random.default_rng(1).uniform(cone.lower, cone.upper, (100, 4))
    expected = cone.f_opt + (cone.f_max - cone.f_opt) * np.max(np.abs(x - cone.x_opt) / w, axis=1)
    np.testing.assert_allclose(cone.evaluate(x), expected, rtol=1e-15)


def test_overflow_far_outside_the_domain_is_inf():
    for f in list_functions(suite="classic", dim=2):
        values = f.evaluate(np.vstack([[1e200, -1e300], f.x_opt]))
        assert not np.isnan(values[0])
        assert values[1] == 0.0
    assert get_function("classic/sphere/d2").evaluate([[1e200, 0.0]])[0] == np.inf


def test_arrays_are_read_only():
    f = get_function("classic/sphere/d2")
    with pytest.raises(ValueError, match="read-only"):
        f.x_opt[0] = 1.0


def test_pickles_for_worker_processes():
    f = get_function("classic/griewank/d5")
    x = np.random.default_rng(2).uniform(f.lower, f.upper, (10, 5))
    clone = pickle.loads(pickle.dumps(f))
    np.testing.assert_array_equal(clone.evaluate(x), f.evaluate(x))


def test_batch_rows_are_independent():
    rng = np.random.default_rng(3)
    for f in list_functions(suite="classic", dim=5):
        x = rng.uniform(f.lower, f.upper, (37, 5))
        one_by_one = np.concatenate([f.evaluate(row[None, :]) for row in x])
        np.testing.assert_array_equal(f.evaluate(x), one_by_one)


@pytest.mark.parametrize(
    "function_id",
    ["classic/nope/d2", "classic/sphere", "classic/sphere/i1/d2", "classic/sphere/d02", "sphere"],
)
def test_unknown_ids(function_id):
    with pytest.raises(UnknownFunction) as info:
        get_function(function_id)
    assert info.value.field == "function_id"


@pytest.mark.parametrize(
    "function_id",
    ["classic/sphere/d0", f"classic/sphere/d{MAX_DIM + 1}", "classic/rosenbrock/d1"],
)
def test_unavailable_dimensions(function_id):
    with pytest.raises(InvalidInput, match="dimension") as info:
        get_function(function_id)
    assert info.value.field == "function_id"


def test_an_explicit_dimension_lists_every_function_accepted_there():
    assert [f.id for f in list_functions(dim=4)] == [f"classic/{name}/d4" for name in NAMES]
    assert "classic/rosenbrock/d1" not in {f.id for f in list_functions(dim=1)}
    assert len(list_functions(suite="classic", dim=1)) == len(NAMES) - 1
    assert len(list_functions(dim=MAX_DIM)) == len(NAMES)
    assert list_functions(dim=MAX_DIM + 1) == []


@pytest.mark.parametrize(
    "function_id",
    [
        "classic/sphere/d" + "9" * 5000,  # beyond Python's 4300-digit int conversion limit
        "classic/sphere/d" + "9" * 19,
        "classic/" + "s" * 300 + "/d2",
        "classic/sphere/d2" + " " * 300,
    ],
)
def test_huge_ids_are_unknown_and_not_echoed(function_id):
    with pytest.raises(UnknownFunction) as info:
        get_function(function_id)
    assert info.value.field == "function_id"
    assert len(str(info.value)) < 300


def test_any_dimension_up_to_the_maximum():
    assert get_function("classic/rastrigin/d1").dim == 1
    assert get_function(f"classic/ackley/d{MAX_DIM}").dim == MAX_DIM


# --- optimum and maximum ------------------------------------------------------------------


def _accepted_ids():
    return st.sampled_from(NAMES).flatmap(
        lambda name: st.integers(2 if name == "rosenbrock" else 1, MAX_DIM).map(
            lambda d: f"classic/{name}/d{d}"
        )
    )


@settings(max_examples=150, deadline=None)
@given(function_id=_accepted_ids())
def test_optimum_is_exact(function_id):
    # Exact, not approximate: every term of every classic formula vanishes in floating point
    # at x* (Ackley via expm1, Schwefel with the correctly rounded peak value).
    f = get_function(function_id)
    assert f.evaluate(f.x_opt[None, :])[0] == f.f_opt == 0.0


@st.composite
def _points_in_domain(draw):
    f = get_function(draw(_accepted_ids()))
    n = draw(st.integers(1, 6))
    u = draw(hnp.arrays(np.float64, (n, f.dim), elements=st.floats(0.0, 1.0)))
    return f, f.lower + u * (f.upper - f.lower)


@settings(max_examples=300, deadline=None)
@given(case=_points_in_domain())
def test_values_between_optimum_and_maximum(case):
    f, x = case
    values = f.evaluate(x)
    assert np.all(values >= f.f_opt)
    if f.f_max is not None:
        assert np.all(values <= f.f_max * (1 + 1e-15))


def test_registered_maxima_are_attained():
    argmax = {
        "sphere": 5.12,
        "ellipsoid": -5.12,
        "rastrigin": 4.522993659584519,
        "schwefel226": -SCHWEFEL_X_OPT,
        "step": 100.0,
        "pyramid": -5.0,
    }
    for name, coordinate in argmax.items():
        for d in (1, 2, 7, 40):
            f = get_function(f"classic/{name}/d{d}")
            value = f.evaluate(np.full((1, d), coordinate))[0]
            assert value == pytest.approx(f.f_max, rel=1e-14), name


def test_constants_against_scipy():
    # Stationary points from the derivatives, by Brent's method.
    x = optimize.brentq(lambda x: 2 * x + 20 * np.pi * np.sin(2 * np.pi * x), 4.4, 4.6, xtol=1e-15)
    assert x == pytest.approx(4.522993659584519, abs=1e-13)
    assert x * x + 10 * (1 - np.cos(2 * np.pi * x)) == pytest.approx(RASTRIGIN_PEAK, rel=1e-15)
    assert RASTRIGIN_PEAK > 5.12**2 + 10 * (1 - np.cos(2 * np.pi * 5.12))  # not at the boundary
    u = optimize.brentq(lambda u: np.sin(u) + u / 2 * np.cos(u), 20.0, 21.0, xtol=1e-15)
    assert u * u == pytest.approx(SCHWEFEL_X_OPT, rel=1e-15)
    assert u * u * np.sin(u) == pytest.approx(SCHWEFEL_PEAK, rel=1e-15)
    # The peak is the global maximum of x sin(sqrt|x|) on [-500, 500] (dense grid check).
    grid = np.linspace(-500.0, 500.0, 2_000_001)
    assert np.max(grid * np.sin(np.sqrt(np.abs(grid)))) <= SCHWEFEL_PEAK


# --- local structure (SPEC §3.4) ------------------------------------------------------------


@pytest.mark.parametrize("name", [n for n in NAMES if n != "step"])
def test_tail_exponent_matches_measured_degree(name):
    # Measure p from f(x* + s u) - f* along random unit directions; the registered beta must
    # equal d / p. Steps s in [1e-4, 1e-2] (f - f* well above rounding); Ackley's cone is
    # measured at s in [1e-8, 1e-6], below its quadratic cos term (f is exact near 0 there).
    rng = np.random.default_rng(4)
    lo, hi = (-8, -6) if name == "ackley" else (-4, -2)
    for d in (2, 5, 40, MAX_DIM):
        f = get_function(f"classic/{name}/d{d}")
        directions = rng.standard_normal((16, d))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        p = local_degree(f, directions, np.logspace(lo, hi, 9))
        assert d / p == pytest.approx(f.local.beta, rel=0.01), (name, d, p)
        assert f.local.atom == 0.0


def test_step_plateau_mass():
    for d in (1, 2, 5, 40, MAX_DIM):
        f = get_function(f"classic/step/d{d}")
        assert f.local.beta is None
        assert f.local.atom == 200.0**-d > 0.0
        # The minimising plateau is exactly [-0.5, 0.5)^d: a share (1/200)^d of [-100, 100]^d.
        inside = np.random.default_rng(5).uniform(-0.5, 0.5, (50, d))
        inside[0] = -0.5
        inside[1] = 0.5 - 1e-15  # not nextafter(0.5, 0): 0.5 - 2^-54 + 0.5 rounds up to 1
        assert np.all(f.evaluate(inside) == 0.0)
        for k in range(d):
            for edge in (0.5, np.nextafter(-0.5, -1.0)):
                outside = np.zeros((1, d))
                outside[0, k] = edge
                assert f.evaluate(outside)[0] == 1.0
    # Monte Carlo in d = 1: P(f = 0) = 1/200.
    step = get_function("classic/step/d1")
    x = np.random.default_rng(6).uniform(-100.0, 100.0, (400_000, 1))
    share = np.mean(step.evaluate(x) == 0.0)
    assert share == pytest.approx(step.local.atom, abs=4 * math.sqrt(0.005 / 400_000))
