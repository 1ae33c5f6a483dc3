"""CEC 2017/2020/2022: the organisers' C code's values, optima, local structure, input guard.

Reference values: ``tests/data/cec_vectors/cec20{17,20,22}.csv.gz``, gzip copies of
``shared/data/cec_vectors`` (the organisers' C code compiled and run on 32 points per
(function, dimension); point 0 is the code's shift vector o). Tolerance as their README says:
``|f - f_ref| <= 1e-9 max(1, |f_ref|)``.
"""

import csv
import functools
import gzip
from pathlib import Path

import numpy as np
import pytest

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.functions import (
    cec2017,
    cec2020,
    cec2022,
    get_function,
    list_functions,
    local_degree,
)
from app.domain.functions.cec_common import Hybrid, hybrid_exponents, load_data

VECTORS = Path(__file__).resolve().parents[2] / "data" / "cec_vectors"
SUITES = {"cec2017": cec2017, "cec2020": cec2020, "cec2022": cec2022}
YEARS = {"cec2017": 2017, "cec2020": 2020, "cec2022": 2022}

REFUSED = {
    # the code returns NaN for every input (pow(10, 6*0/(1-1)) in the elliptic piece)
    ("cec2020", 7, 5): "NaN",
    # the installed M_4_D5.txt is not the matrix the code was run with (see cec2020.REFUSED)
    ("cec2020", 5, 5): "M_4_D5",
}


@functools.cache
def vectors(suite: str) -> dict[tuple[int, int], tuple[np.ndarray, np.ndarray]]:
    """``(function, dim) -> (X (32, dim), f (32,))`` from the gzip copy of the vectors."""
    rows: dict[tuple[int, int], list[tuple[np.ndarray, float]]] = {}
    with gzip.open(VECTORS / f"{suite}.csv.gz", "rt", newline="") as fh:
        for row in csv.DictReader(fh):
            key = (int(row["function"]), int(row["dim"]))
            point = np.array(row["x"].split(), dtype=np.float64)
            rows.setdefault(key, []).append((int(row["point_index"]), point, float(row["f"])))
    out = {}
    for key, points in rows.items():
        points.sort(key=lambda p: p[0])
        out[key] = (np.array([p[1] for p in points]), np.array([p[2] for p in points]))
    return out


GROUPS = [(suite, k, d) for suite in SUITES for (k, d) in sorted(vectors(suite))]
HOSTED = [g for g in GROUPS if g not in REFUSED]


def _id(suite: str, k: int, d: int) -> str:
    return f"{suite}/f{k}/d{d}"


def _unit_directions(rng: np.random.Generator, k: int, d: int) -> np.ndarray:
    u = rng.standard_normal((k, d))
    return u / np.linalg.norm(u, axis=1, keepdims=True)


# --- the organisers' code -------------------------------------------------------------------


@pytest.mark.parametrize(("suite", "k", "d"), GROUPS, ids=[_id(*g) for g in GROUPS])
def test_matches_the_organisers_code(suite, k, d):
    X, expected = vectors(suite)[(k, d)]
    assert X.shape == (32, d)
    if (suite, k, d) in REFUSED:
        with pytest.raises(InvalidInput, match=REFUSED[(suite, k, d)]) as info:
            get_function(_id(suite, k, d))
        assert info.value.field == "function_id"
        assert f"{suite}/f{k}" in str(info.value)
        return
    f = get_function(_id(suite, k, d))
    got = f.evaluate(X)
    assert np.all(np.abs(got - expected) <= 1e-9 * np.maximum(1.0, np.abs(expected)))
    # point 0 is the code's shift vector o
    np.testing.assert_array_equal(
        X[0],
        load_data(YEARS[suite], _internal(suite, k), d, SUITES[suite].ENTRIES[k].spec).shifts[0],
    )


def _internal(suite: str, k: int) -> int:
    return SUITES[suite].ENTRIES[k].internal


def test_refused_f7_d5_is_nan_in_the_code():
    _, expected = vectors("cec2020")[(7, 5)]
    assert np.isnan(expected).all()
    with pytest.raises(InvalidInput, match="NaN") as info:
        get_function("cec2020/f7/d5")
    assert "cec2020/f7" in str(info.value)


def test_registered_pairs_are_exactly_the_vectors():
    for suite in SUITES:
        listed = {f.id for f in list_functions(suite=suite)}
        assert listed == {_id(*g) for g in HOSTED if g[0] == suite}
    with pytest.raises(InvalidInput, match="dimension"):
        get_function("cec2017/f11/d2")  # no D = 2 data for the hybrids
    with pytest.raises(InvalidInput, match="dimension"):
        get_function("cec2022/f1/d30")


# --- optimum, bounds, properties ------------------------------------------------------------


@pytest.mark.parametrize(("suite", "k", "d"), HOSTED, ids=[_id(*g) for g in HOSTED])
def test_optimum_and_lower_bound(suite, k, d):
    f = get_function(_id(suite, k, d))
    assert f.f_opt == SUITES[suite].ENTRIES[k].bias
    np.testing.assert_array_equal(f.lower, -100.0)
    np.testing.assert_array_equal(f.upper, 100.0)
    assert f.x_opt is not None
    assert np.all(np.abs(f.x_opt) <= 100.0)
    # f(x*) == f*; CEC2017 F10 at D = 50 is a few ulps of 418.98 D above (truncated constant)
    assert abs(f.evaluate(f.x_opt[None])[0] - f.f_opt) <= 1e-8
    rng = np.random.default_rng(1000 * k + d)
    values = f.evaluate(rng.uniform(-100.0, 100.0, (64, d)))
    assert np.all(values >= f.f_opt)
    assert f.formula
    assert f.title
    assert f"cec{suite[-2:]}_test_func.cpp" in f.source


@pytest.mark.parametrize("d", [2, 10, 30, 50])
def test_cec2017_f9_minimiser_is_where_z_is_one(d):
    f = get_function(f"cec2017/f9/d{d}")
    X, expected = vectors("cec2017")[(9, d)]
    shift = X[0]
    assert not np.array_equal(f.x_opt, shift)
    data = load_data(2017, 9, d, cec2017.ENTRIES[9].spec)
    np.testing.assert_allclose(data.rotations[0] @ (f.x_opt - shift), np.ones(d), atol=1e-12)
    assert f.evaluate(f.x_opt[None])[0] == 900.0
    # the code's shift vector is not the minimiser (README: 0.7158, 1.4426, 3.2595, 5.0764)
    gap = {2: 0.7158, 10: 1.4426, 30: 3.2595, 50: 5.0764}[d]
    assert f.evaluate(shift[None])[0] - 900.0 == pytest.approx(gap, abs=1e-4)
    assert expected[0] - 900.0 == pytest.approx(gap, abs=1e-4)


def test_batch_equals_one_by_one():
    rng = np.random.default_rng(5)
    for suite in SUITES:
        for f in list_functions(suite=suite):
            X = rng.uniform(-100.0, 100.0, (9, f.dim))
            batch = f.evaluate(X)
            single = np.array([f.evaluate(x[None])[0] for x in X])
            np.testing.assert_array_equal(batch, single)
            np.testing.assert_array_equal(batch, f.evaluate(X[::-1])[::-1])


def test_non_finite_input_is_rejected():
    f = get_function("cec2017/f21/d10")
    x = np.zeros((2, 10))
    x[1, 3] = np.nan
    with pytest.raises(InvalidInput, match="finite") as info:
        f.evaluate(x)
    assert info.value.field == "points"


def test_notes_and_flags():
    def notes(suite, k):
        return " ".join(SUITES[suite].ENTRIES[k].notes)

    assert cec2017.ENTRIES[2].flags == ("excluded-by-organisers",)
    assert "excluded by the organisers" in notes("cec2017", 2)
    assert all(cec2017.ENTRIES[k].flags == () for k in range(3, 31))
    for k, word in {
        6: "without rotation",
        8: "never takes effect",
        9: "minimiser",
        10: "truncated",
        13: "signs",
        14: "index 0",
        20: "index 0",
    }.items():
        assert word in notes("cec2017", k), k
    for k in range(11, 21):
        assert "rotates the whole vector once" in notes("cec2017", k)
    for k in range(21, 31):
        assert "1e99" in notes("cec2017", k)
    for k in range(3, 31):
        assert f"is F{k - 1} of the updated report" in notes("cec2017", k)
    for k, n in enumerate(cec2020.INTERNAL, start=1):
        assert f"internal function {n}" in notes("cec2020", k)
    assert "first group" in notes("cec2020", 5)
    assert "[1, 1, 1, 2]" in notes("cec2020", 6)
    assert "NaN" in notes("cec2020", 7)
    for k, word in {
        3: "no rotation",
        4: "never takes effect",
        5: "w = 1 + z/4",
        7: "[0.1, 0.2, 0.2, 0.2, 0.1, 0.2]",
        9: "1e-26",
        10: "unrotated",
        11: "[5e-4, 1, 10, 1, 10]",
    }.items():
        assert word in notes("cec2022", k), k
    assert "D = 2" in " ".join(get_function("cec2017/f21/d2").notes)


# --- local structure ------------------------------------------------------------------------

# degree p of f - f* at x* (beta = d/p), stated independently of the modules
DEGREE = {
    "cec2017": dict.fromkeys((1, 3, 4, 5, 7, 8, 9, 10, 11, 12, 13), 2)
    | dict.fromkeys((6, 21, 22, 23, 24, 25, 26, 28), 1),
    "cec2020": {1: 2, 2: 2, 3: 2, 4: 4, 5: 2, 8: 1, 9: 1, 10: 1},
    "cec2022": {1: 2, 2: 2, 3: 1, 4: 2, 5: 2, 9: 1, 10: 2, 11: 1},
}
UNKNOWN = {
    "cec2017": {14, 15, 16, 17, 18, 19, 20, 27, 29, 30},
    "cec2020": {6, 7},
    "cec2022": {6, 7, 8, 12},
}
SCHAFFER = {("cec2017", 6), ("cec2022", 3)}  # degree 1 times a factor in [1, 4]


def _scales(suite, k):
    entry = SUITES[suite].ENTRIES[k]
    if (suite, k) in {("cec2017", 10), ("cec2020", 2)}:  # Schwefel: f(o) - f* is rounding
        return np.logspace(-4, -2, 5)
    if (suite, k) == ("cec2020", 4):  # degree 4: f - f* ~ (0.05 s)^4
        return np.logspace(-2.5, -1.5, 5)
    if (suite, k) == ("cec2022", 10):
        return np.logspace(-5, -2, 7)
    if entry.title.startswith("Composition"):
        return np.logspace(-7, -4, 7)
    if DEGREE[suite][k] == 2:  # f - f* ~ (rate s)^2 must stay well above the ulp of f*
        return np.logspace(-4, -2, 5)
    return np.logspace(-6, -3, 7)


ISOTROPIC = [(s, k, d) for (s, k, d) in HOSTED if k in DEGREE[s]]


@pytest.mark.parametrize(("suite", "k", "d"), ISOTROPIC, ids=[_id(*g) for g in ISOTROPIC])
def test_local_degree(suite, k, d):
    f = get_function(_id(suite, k, d))
    p = DEGREE[suite][k]
    assert f.local.beta == pytest.approx(d / p)
    assert f.local.atom == 0.0
    measured = local_degree(f, _unit_directions(np.random.default_rng(d), 12, d), _scales(suite, k))
    assert measured == pytest.approx(p, abs=0.15 if (suite, k) in SCHAFFER else 0.1)


def test_unknown_local_structure():
    for suite in SUITES:
        unknown = {f.name for f in list_functions(suite=suite) if f.local.beta is None}
        assert unknown == {f"f{k}" for k in UNKNOWN[suite]}
        for f in list_functions(suite=suite):
            if f.local.beta is None:
                assert f.local.derivation.startswith("unknown: ")
            assert f.local.derivation


@pytest.mark.parametrize("d", [2, 10, 30, 50])
def test_cec2017_f2_anisotropic_scaling(d):
    # f - f* = sum_(i=1..D) |z_i|^i: scaling z_i by t^(1/i) multiplies f - f* by t exactly, so
    # {f - f* <= t} has extent t^(1/i) along z_i and beta = sum_i 1/i
    f = get_function(f"cec2017/f2/d{d}")
    assert f.local.beta == pytest.approx(sum(1.0 / i for i in range(1, d + 1)))
    data = load_data(2017, 2, d, cec2017.ENTRIES[2].spec)
    rng = np.random.default_rng(d)
    v = rng.uniform(-1.0, 1.0, (8, d))
    base = f.evaluate(f.x_opt + np.linalg.solve(data.rotations[0], v.T).T) - f.f_opt
    for t in (1e-2, 1e-4):
        w = v * t ** (1.0 / np.arange(1.0, d + 1.0))
        scaled = f.evaluate(f.x_opt + np.linalg.solve(data.rotations[0], w.T).T) - f.f_opt
        np.testing.assert_allclose(scaled, t * base, rtol=1e-3)


HYBRIDS = [
    (s, k, d)
    for (s, k, d) in HOSTED
    if isinstance(SUITES[s].ENTRIES[k].spec, Hybrid) and k not in UNKNOWN[s]
]


@pytest.mark.parametrize(("suite", "k", "d"), HYBRIDS, ids=[_id(*g) for g in HYBRIDS])
def test_hybrid_degree_per_group(suite, k, d):
    # beta = sum over shuffled variables of 1/(smallest degree reading it): check each group's
    # degree along directions inside the group (y = M[S] (x - o)), and that free ones are flat
    entry = SUITES[suite].ENTRIES[k]
    f = get_function(_id(suite, k, d))
    exponents = hybrid_exponents(entry.spec, d)
    assert f.local.beta == pytest.approx(np.sum(exponents))
    data = load_data(YEARS[suite], entry.internal, d, entry.spec)
    shuffled = data.rotations[0][data.orders[0]]
    rng = np.random.default_rng(k + d)
    for start, size in zip(entry.spec.starts(d), entry.spec.sizes(d), strict=True):
        group = exponents[start : start + size]
        assert np.all(group == group[0])
        e = np.zeros((6, d))
        e[:, start : start + size] = rng.standard_normal((6, size))
        directions = np.linalg.solve(shuffled, e.T).T
        if group[0] == 0.0:  # read by no piece: f is flat along the group
            probes = f.x_opt + np.logspace(-3, 0, 4)[:, None, None] * directions[None]
            assert np.all(np.abs(f.evaluate(probes.reshape(-1, d)) - f.f_opt) <= 1e-9)
            continue
        p = 1.0 / group[0]
        scales = np.logspace(-9, -7, 5) if p == 1 else np.logspace(-4, -2, 5)
        assert local_degree(f, directions, scales) == pytest.approx(p, abs=0.1)


@pytest.mark.parametrize("d", [10, 30, 50])
def test_cec2017_f14_structure(d):
    # why beta is None: elliptic + Schaffer F7 on group 1 (Schaffer reads index 0 onwards),
    # Ackley on group 2, group 3 read by no piece, Rastrigin on group 4
    spec = cec2017.ENTRIES[14].spec
    n = {10: (2, 2, 2, 4), 30: (6, 6, 6, 12), 50: (10, 10, 10, 20)}[d]
    assert spec.sizes(d) == n
    f = get_function(f"cec2017/f14/d{d}")
    assert f.local.beta is None
    assert "6, 18, 30 at D = 10, 30, 50" in f.local.derivation
    assert n[0] + n[1] + n[3] / 2 == {10: 6, 30: 18, 50: 30}[d]
    np.testing.assert_array_equal(hybrid_exponents(spec, d), np.repeat([1, 1, 0, 0.5], n))
    data = load_data(2017, 14, d, spec)
    shuffled = data.rotations[0][data.orders[0]]
    rng = np.random.default_rng(d)
    degrees = []
    windows = [(-11, -7), (-11, -7), (-4, 0), (-4, -2)]
    for start, size, (lo, hi) in zip(spec.starts(d), spec.sizes(d), windows, strict=True):
        e = np.zeros((6, d))
        e[:, start : start + size] = rng.standard_normal((6, size))
        directions = np.linalg.solve(shuffled, e.T).T
        try:
            degrees.append(local_degree(f, directions, np.logspace(lo, hi, 9)))
        except NotApplicable:
            degrees.append(None)
    assert 0.75 < degrees[0] < 1.25  # degree 1 times a drifting factor
    assert degrees[1] == pytest.approx(1.0, abs=0.02)  # Ackley cone
    assert degrees[2] is None  # flat: f - f* <= 0 at some probe
    assert degrees[3] == pytest.approx(2.0, abs=0.02)  # Rastrigin
    probes = f.x_opt + np.linspace(0.0, 50.0, 6)[:, None] * np.linalg.solve(
        shuffled, np.eye(d)[spec.starts(d)[2]]
    )
    assert np.all(np.abs(f.evaluate(probes) - f.f_opt) <= 1e-9)
