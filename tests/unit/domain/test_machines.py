"""Equivalent runtime and corrected sign test across machines (SPEC §6): references, exact
rational arithmetic, Monte Carlo, properties."""

import math
import time
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain import machines
from app.domain.errors import InvalidInput
from app.domain.machines import (
    ALPHA,
    CALIBRATION_RANGE,
    GAMMA_RANGE,
    P_GAMMA_RANGE,
    _corrected_p_exact,
    _corrected_p_float,
    corrected_sign_test,
    equivalent_runtime,
    gamma_from_p,
    gamma_table,
    p_from_gamma,
)

SHARED_TABLE = Path(__file__).resolve().parents[4] / "shared" / "data" / "rtdhw_gamma_table.csv"


# --------------------------------------------------------------------------- table


@pytest.mark.skipif(not SHARED_TABLE.exists(), reason="shared calibration table not present")
def test_embedded_table_equals_shared_csv() -> None:
    rows = [
        line.split(",")
        for line in SHARED_TABLE.read_text().splitlines()
        if line and not line.startswith("#")
    ][1:]
    assert [int(r[0]) for r in rows] == list(range(150))
    gamma, p_gamma = gamma_table()
    np.testing.assert_array_equal(gamma, [float(r[1]) for r in rows])
    np.testing.assert_array_equal(p_gamma, [float(r[2]) for r in rows])


def test_table_constants_and_read_only() -> None:
    gamma, p_gamma = gamma_table()
    assert gamma.shape == p_gamma.shape == (150,)
    assert np.all(np.diff(gamma) < 0)
    assert np.all(np.diff(p_gamma) <= 0)
    assert P_GAMMA_RANGE == (0.0002790178571429047, 0.5)
    assert GAMMA_RANGE == (0.5, 1.0)
    assert ALPHA == 3223.49
    assert CALIBRATION_RANGE == (539.0, 2185.0)
    with pytest.raises(ValueError, match="read-only"):
        gamma[0] = 2.0
    with pytest.raises(ValueError, match="read-only"):
        p_gamma[0] = 2.0


def _reference_gamma(p: float) -> float:
    """The header's rule, written out independently (pure Python loop)."""
    gamma, pg = (t.tolist() for t in gamma_table())
    i = next(j for j in range(len(pg)) if p >= pg[j])
    if i == 0:
        return 1.0
    w1, w2 = abs(pg[i - 1] - p), abs(pg[i] - p)
    w1, w2 = w1 / (w1 + w2), w2 / (w1 + w2)
    return gamma[i - 1] * (1 - w1) + gamma[i] * (1 - w2)


def test_gamma_from_p_table_rows_and_ends() -> None:
    gamma, p_gamma = gamma_table()
    assert gamma_from_p(0.5) == 1.0
    assert gamma_from_p(P_GAMMA_RANGE[0]) == 0.5
    for i in range(150):
        first = int(np.argmax(p_gamma == p_gamma[i]))  # flat stretch: first row wins
        assert gamma_from_p(float(p_gamma[i])) == pytest.approx(gamma[first], abs=1e-15)


@given(st.floats(P_GAMMA_RANGE[0], P_GAMMA_RANGE[1]))
def test_gamma_from_p_matches_rule_and_is_monotone(p: float) -> None:
    g = gamma_from_p(p)
    assert g == _reference_gamma(p)
    assert GAMMA_RANGE[0] <= g <= GAMMA_RANGE[1]
    assert gamma_from_p(min(p * 1.01, 0.5)) >= g


@given(st.floats(P_GAMMA_RANGE[0], P_GAMMA_RANGE[1]))
def test_round_trip_p_gamma_p(p: float) -> None:
    assert p_from_gamma(gamma_from_p(p)) == pytest.approx(p, rel=1e-9, abs=1e-15)


def test_round_trip_gamma_p_gamma_where_strictly_monotone() -> None:
    gamma, p_gamma = gamma_table()
    strict = np.flatnonzero(np.diff(p_gamma) < 0)  # segments [i, i+1] strictly decreasing in p
    for i in strict:
        for t in (0.0, 0.25, 0.5, 0.9):
            g = float(gamma[i] + t * (gamma[i + 1] - gamma[i]))
            if t == 0.0 and i > 0 and p_gamma[i - 1] == p_gamma[i]:
                continue  # end of a flat stretch: the first row of the stretch wins
            assert gamma_from_p(p_from_gamma(g)) == pytest.approx(g, abs=1e-12)


def test_round_trip_fails_on_flat_stretch_as_documented() -> None:
    gamma, p_gamma = gamma_table()
    i = int(np.flatnonzero(np.diff(p_gamma) == 0)[0])
    g = float((gamma[i] + gamma[i + 1]) / 2)
    assert p_from_gamma(g) == p_gamma[i]
    assert gamma_from_p(p_from_gamma(g)) == gamma[int(np.argmax(p_gamma == p_gamma[i]))] != g


@pytest.mark.parametrize("p", [0.0, 1e-5, 0.50001, 1.0, -0.1, math.nan, math.inf, "0.1", True])
def test_gamma_from_p_rejects(p: object) -> None:
    with pytest.raises(InvalidInput) as exc:
        gamma_from_p(p)  # type: ignore[arg-type]
    assert exc.value.field == "p_gamma"


@pytest.mark.parametrize("g", [0.49, 1.01, math.nan, None])
def test_p_from_gamma_rejects(g: object) -> None:
    with pytest.raises(InvalidInput) as exc:
        p_from_gamma(g)  # type: ignore[arg-type]
    assert exc.value.field == "gamma"


def test_p_from_gamma_ends() -> None:
    assert p_from_gamma(1.0) == 0.5
    assert p_from_gamma(0.5) == P_GAMMA_RANGE[0]


# --------------------------------------------------------------------------- equivalent runtime


def test_equivalent_runtime_reference() -> None:
    res = equivalent_runtime(15.0, 1540, 1643, p_gamma=0.1)
    print(f"t2 = {res.t2!r}, gamma = {res.gamma!r}")  # noqa: T201
    assert res.t2 == pytest.approx(10.101738, rel=1e-6)
    assert isinstance(res.t2, float)
    assert res.ratio == pytest.approx((ALPHA - 1643) / (ALPHA - 1540), rel=1e-15)
    assert res.t2 == pytest.approx(res.gamma * 15.0 * res.ratio, rel=1e-15)
    assert (res.p_gamma, res.alpha, res.s1, res.s2, res.warnings) == (0.1, ALPHA, 1540, 1643, ())


def test_equivalent_runtime_default_is_unbiased_and_batch() -> None:
    t1 = np.array([1.0, 15.0, 300.0])
    res = equivalent_runtime(t1, 1000.0, 2000.0)
    assert res.gamma == 1.0
    assert res.p_gamma == 0.5
    assert isinstance(res.t2, np.ndarray)
    assert res.t2.shape == (3,)
    np.testing.assert_allclose(res.t2, t1 * (ALPHA - 2000) / (ALPHA - 1000), rtol=1e-15)
    assert equivalent_runtime(15.0, 1700, 1700).t2 == 15.0
    assert equivalent_runtime([2.0], 1700, 1700).t2.shape == (1,)  # type: ignore[union-attr]


def test_equivalent_runtime_warns_outside_calibration() -> None:
    res = equivalent_runtime(10.0, 500.0, 2500.0)
    assert len(res.warnings) == 2
    assert "s1" in res.warnings[0]
    assert "s2" in res.warnings[1]
    assert all("calibration range" in w for w in res.warnings)
    assert equivalent_runtime(10.0, 539.0, 2185.0).warnings == ()


@pytest.mark.parametrize(
    ("args", "field", "match"),
    [
        ((0.0, 1000, 1500), "t1", "t1 must"),
        ((-1.0, 1000, 1500), "t1", "t1 must"),
        ((math.inf, 1000, 1500), "t1", "t1 must"),
        (([1.0, 2.0, math.nan], 1000, 1500), "t1", "NaN"),
        (([1.0, 2.0, -3.0], 1000, 1500), "t1.2", r"t1\[2\]"),
        (([1.0, math.inf], 1000, 1500), "t1.1", r"t1\[1\]"),
        (([1.0, 1e308], 3223.48, 100), "t1.1", "outside the float range"),
        ((1e-320, 100, 3223.48), "t1", "outside the float range"),
        (([], 1000, 1500), "t1", "empty"),
        (([[1.0]], 1000, 1500), "t1", "one-dimensional"),
        (("x", 1000, 1500), "t1", "number"),
        ((1.0, 0.0, 1500), "s1", "s1"),
        ((1.0, ALPHA, 1500), "s1", "s1"),
        ((1.0, 1000, 3300), "s2", "s2"),
        ((1.0, 1000, -5), "s2", "s2"),
        ((1.0, 1000, math.nan), "s2", "s2"),
    ],
)
def test_equivalent_runtime_rejects(args: tuple, field: str, match: str) -> None:
    with pytest.raises(InvalidInput, match=match) as exc:
        equivalent_runtime(*args)
    assert exc.value.field == field


def test_equivalent_runtime_rejects_p_gamma() -> None:
    with pytest.raises(InvalidInput) as exc:
        equivalent_runtime(1.0, 1000, 1500, p_gamma=1e-4)
    assert exc.value.field == "p_gamma"


# --------------------------------------------------------------------------- corrected sign test


def _bruteforce(n: int, k: int, p: Fraction) -> Fraction:
    """The formula of SPEC §6 written out term by term (rational)."""
    total = Fraction(0)
    for v in range(n + 1):
        inner = sum(
            (math.comb(n, m) * p**m * (1 - p) ** (n - m) for m in range(v - k)), Fraction(0)
        )
        total += Fraction(math.comb(n, v), 2**n) * (1 - inner)
    return total


def test_reference_values() -> None:
    res = corrected_sign_test(n=20, k=3, p_gamma=0.1)
    print(f"p = {res.p_value!r}, p_c = {res.p_value_corrected!r}")  # noqa: T201
    assert res.p_value_corrected == pytest.approx(0.043596000, abs=1e-9)
    assert res.p_value == pytest.approx(0.0012884, abs=1e-7)
    assert res.p_value == 1351 / 2**20  # Σ_{j<=3} C(20, j) = 1351
    assert res.decision == "B is significantly better than A"
    assert (res.n, res.k, res.n_ties, res.method, res.degenerate, res.reason) == (
        20,
        3,
        0,
        "exact",
        False,
        None,
    )
    assert corrected_sign_test(n=20, k=3, p_gamma=0.1, alpha=0.04).decision == (
        "no evidence that B is better"
    )


@pytest.mark.parametrize(("n", "k"), [(1, 0), (2, 0), (2, 1), (5, 2), (8, 0), (8, 7), (12, 4)])
@pytest.mark.parametrize("p", [Fraction(1, 10), Fraction(1, 2), Fraction(0.3), Fraction(1, 1000)])
def test_exact_equals_spec_formula(n: int, k: int, p: Fraction) -> None:
    assert _corrected_p_exact(n, k, p) == _bruteforce(n, k, p)


def test_float_p_gamma_is_used_exactly() -> None:
    exact = _corrected_p_exact(20, 3, Fraction(0.1))
    assert corrected_sign_test(n=20, k=3, p_gamma=0.1).p_value_corrected == float(exact)
    tenth = corrected_sign_test(n=20, k=3, p_gamma=Fraction(1, 10)).p_value_corrected
    assert tenth == pytest.approx(float(exact), rel=1e-14)


def test_fast_path_matches_exact_small_n() -> None:
    rng = np.random.default_rng(20240507)
    for _ in range(40):
        n = int(rng.integers(1, 120))
        k = int(rng.integers(0, n + 1))
        p = float(rng.uniform(1e-4, 0.5))
        exact = float(_corrected_p_exact(n, k, Fraction(p)))
        assert _corrected_p_float(n, k, p) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize("k", [0, 150, 800, 1000, 1990])
def test_fast_path_matches_exact_n_2000(k: int) -> None:
    exact = float(_corrected_p_exact(2000, k, Fraction(0.1)))
    assert exact > 0.0
    assert _corrected_p_float(2000, k, 0.1) == pytest.approx(exact, rel=2e-12)


def test_monte_carlo() -> None:
    rng = np.random.default_rng(12345)
    n, k, p, reps = 30, 10, 0.2, 200_000
    d = rng.binomial(n, 0.5, reps) - rng.binomial(n, p, reps)
    est = np.mean(d <= k)
    se = math.sqrt(est * (1 - est) / reps)
    res = corrected_sign_test(n=n, k=k, p_gamma=p)
    assert abs(res.p_value_corrected - est) < 4 * se


def test_large_n_fast_and_sensible() -> None:
    start = time.perf_counter()
    res = corrected_sign_test(n=10_000, k=4_800, p_gamma=0.1)
    assert time.perf_counter() - start < 1.0
    assert math.isfinite(res.p_value_corrected)
    assert 0.0 < res.p_value < res.p_value_corrected <= 1.0
    # normal approximation of Y − X: mean n(1/2 − p), variance n(1/4 + p(1 − p))
    z = (4_800.5 - 10_000 * 0.4) / math.sqrt(10_000 * (0.25 + 0.09))
    assert res.p_value_corrected == pytest.approx(0.5 * math.erfc(-z / math.sqrt(2)), abs=1e-3)
    tiny = corrected_sign_test(n=10_000, k=3_500, p_gamma=0.01)
    assert 0.0 < tiny.p_value <= tiny.p_value_corrected < 1e-100
    # below ~1e-308 the plain p underflows to 0; the corrected one stays a valid bound
    deep = corrected_sign_test(n=10_000, k=3_000, p_gamma=0.01)
    assert 0.0 <= deep.p_value <= deep.p_value_corrected < 1e-300


def test_edge_cases() -> None:
    assert corrected_sign_test(n=1, k=1, p_gamma=0.3).p_value_corrected == 1.0
    assert corrected_sign_test(n=7, k=7, p_gamma=0.3).p_value == 1.0
    assert corrected_sign_test(n=5000, k=5000, p_gamma=0.3).p_value_corrected == 1.0
    two = corrected_sign_test(n=2, k=0, p_gamma=0.5)
    assert two.p_value == 0.25
    assert two.p_value_corrected == float(_bruteforce(2, 0, Fraction(1, 2)))
    one = corrected_sign_test(n=1, k=0, p_gamma=0.25)
    assert one.p_value_corrected == 0.5 + 0.5 * 0.25  # Y=0, or Y=1 and X=1


def test_tends_to_plain_as_p_gamma_vanishes() -> None:
    plain = corrected_sign_test(n=40, k=12, p_gamma=0.5).p_value
    for p, tol in ((1e-6, 1e-4), (1e-12, 1e-10)):
        res = corrected_sign_test(n=40, k=12, p_gamma=p)
        assert res.p_value_corrected == pytest.approx(plain, rel=tol)


def test_pairs_ties_and_counts() -> None:
    a = [1.0, 2.0, 3.0, 4.0, 5.0, math.inf, 7.0]
    b = [1.0, 2.5, 2.0, 4.0 + 1e-12, 6.0, math.inf, 6.0]
    res = corrected_sign_test(a, b, p_gamma=0.1)
    assert (res.n, res.k, res.n_ties) == (5, 3, 2)
    res = corrected_sign_test(a, b, p_gamma=0.1, rtol=1e-9)
    assert (res.n, res.k, res.n_ties) == (4, 2, 3)
    direct = corrected_sign_test(n=4, k=2, p_gamma=0.1)
    assert res.p_value_corrected == direct.p_value_corrected
    # an infinite value is never a tie with a finite one, whatever rtol
    res = corrected_sign_test([math.inf, -1e308], [1.0, 1e308], p_gamma=0.1, rtol=2.5)
    assert (res.n, res.k, res.n_ties) == (1, 0, 1)


def test_all_ties_degenerate() -> None:
    res = corrected_sign_test([1.0, 2.0], [1.0, 2.0], p_gamma=0.2)
    assert res.degenerate
    assert res.reason is not None
    assert "ties" in res.reason
    assert (res.n, res.k, res.n_ties, res.p_value, res.p_value_corrected) == (0, 0, 2, 1.0, 1.0)
    assert res.decision == "no evidence that B is better"


@given(
    st.integers(1, 60),
    st.data(),
    st.floats(1e-6, 0.5),
)
@settings(max_examples=60, deadline=None)
def test_properties(n: int, data: st.DataObject, p: float) -> None:
    k = data.draw(st.integers(0, n))
    res = corrected_sign_test(n=n, k=k, p_gamma=p)
    assert 0.0 <= res.p_value <= res.p_value_corrected <= 1.0
    if k < n:
        assert corrected_sign_test(n=n, k=k + 1, p_gamma=p).p_value_corrected >= (
            res.p_value_corrected
        )
    p2 = data.draw(st.floats(p, 0.5))
    assert corrected_sign_test(n=n, k=k, p_gamma=p2).p_value_corrected >= res.p_value_corrected
    for text in (res.decision, res.caveat, res.reason or ""):
        assert "A is better" not in text
        assert "equal" not in text.lower()


@given(st.integers(501, 1500), st.floats(0.0, 1.0), st.floats(1e-3, 0.5))
@settings(max_examples=15, deadline=None)
def test_properties_fast_path(n: int, frac: float, p: float) -> None:
    k = min(int(frac * n), n - 1)
    res = corrected_sign_test(n=n, k=k, p_gamma=p)
    nxt = corrected_sign_test(n=n, k=k + 1, p_gamma=p)
    assert 0.0 <= res.p_value <= res.p_value_corrected <= nxt.p_value_corrected <= 1.0


def test_caveat_wording() -> None:
    res = corrected_sign_test(n=10, k=5, p_gamma=0.2)
    assert res.decision == "no evidence that B is better"
    assert "One-sided" in res.caveat
    assert res.caveat.count(".") == 1


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"n": 0, "k": 0}, "n"),
        ({"n": -3, "k": 0}, "n"),
        ({"n": 5, "k": 6}, "k"),
        ({"n": 5, "k": -1}, "k"),
        ({"n": 5.0, "k": 2}, "n"),
        ({"n": 5, "k": True}, "k"),
        ({"n": 5}, "k"),
        ({"k": 5}, "n"),
        ({}, "n"),
        ({"a": [1.0, 2.0]}, "b"),
        ({"b": [1.0, 2.0]}, "a"),
        ({"a": [1.0, 2.0], "b": [1.0]}, "b"),
        ({"a": [1.0, math.nan], "b": [1.0, 2.0]}, "a"),
        ({"a": [1.0], "b": [2.0], "n": 1, "k": 0}, "n"),
        ({"n": 5, "k": 2, "p_gamma": 0.0}, "p_gamma"),
        ({"n": 5, "k": 2, "p_gamma": 0.6}, "p_gamma"),
        ({"n": 5, "k": 2, "p_gamma": math.nan}, "p_gamma"),
        ({"n": 5, "k": 2, "rtol": -1.0}, "rtol"),
        ({"n": 5, "k": 2, "alpha": 0.0}, "alpha"),
        ({"n": 5, "k": 2, "alpha": 1.0}, "alpha"),
    ],
)
def test_corrected_sign_test_rejects(kwargs: dict, field: str) -> None:
    kwargs = {"p_gamma": 0.1, **kwargs}
    with pytest.raises(InvalidInput) as exc:
        corrected_sign_test(**kwargs)
    assert exc.value.field == field


def test_numpy_integers_accepted() -> None:
    res = corrected_sign_test(n=np.int64(20), k=np.int32(3), p_gamma=np.float64(0.1))
    assert res.p_value_corrected == pytest.approx(0.043596000, abs=1e-9)
    assert type(res.n) is int


def test_module_exports() -> None:
    for name in machines.__all__:
        assert hasattr(machines, name)
