"""Performance, data and accuracy profiles: exact hand examples, and a brute force in the test.

The brute force recomputes every profile from its definition (SPEC §8) in exact rational
arithmetic (``fractions.Fraction``) and evaluates it at every breakpoint, between and beside
them; ours must give the same count everywhere.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.anytime import (
    StepFunction,
    accuracy_profile,
    convergence_costs,
    data_profile,
    performance_profile,
)
from app.domain.errors import InvalidInput
from app.domain.results import Trajectory

INF = math.inf


def count_at(step: StepFunction, t: float) -> int:
    """Evaluate a step function from its fields, by a linear scan (independent of ``count``)."""
    k = 0
    for x in step.x:
        if x < t or (x == t and step.continuity == "right"):
            k += 1
    return int(step.counts[k])


# -- hand examples ----------------------------------------------------------------------------


def test_performance_profile_by_hand() -> None:
    # problem 0: 10 vs 20; problem 1: 30 vs 15; problem 2: 5 vs failure; problem 3: both fail
    costs = np.array([[10, 20], [30, 15], [5, INF], [INF, np.nan]])
    prof = performance_profile(costs, solvers=["a", "b"])
    a, b = prof.steps
    assert prof.solvers == ("a", "b")
    assert prof.axis == "log2"
    np.testing.assert_array_equal(a.x, [1, 2])  # ratios 1, 2, 1, inf
    np.testing.assert_array_equal(a.counts, [0, 2, 3])
    np.testing.assert_array_equal(b.x, [1, 2])  # ratios 2, 1, inf, inf
    np.testing.assert_array_equal(b.counts, [0, 1, 2])
    assert a.total == b.total == 4
    assert a.continuity == "right"
    assert a.count(2.0) == 3
    assert a.count(1.999) == 2
    np.testing.assert_array_equal(prof.values[3], [INF, INF])


def test_performance_ties_give_one_breakpoint() -> None:
    (s,) = performance_profile([[7], [7], [7]]).steps
    np.testing.assert_array_equal(s.x, [1])
    np.testing.assert_array_equal(s.counts, [0, 3])


def test_data_profile_by_hand() -> None:
    # kappa = t / (n + 1): n = 1 -> t / 2, n = 4 -> t / 5
    prof = data_profile(np.array([[4, 6], [10, INF], [15, 5]]), [1, 4, 4])
    a, b = prof.steps
    np.testing.assert_array_equal(a.x, [2, 3])  # 2, 2, 3
    np.testing.assert_array_equal(a.counts, [0, 2, 3])
    np.testing.assert_array_equal(b.x, [1, 3])  # 3, inf, 1
    np.testing.assert_array_equal(b.counts, [0, 1, 2])
    assert prof.axis == "linear"


def test_accuracy_profile_by_hand() -> None:
    # digits gained: 1e2 -> 1e-3 = 5; 1 -> 0 = M; 1 -> 1e-20 = 20 capped at M; 10 -> 1 = 1;
    # failure; worse than the start (10 -> 100) = -1
    final = [[1e-3, 0.0], [1e-20, 1.0], [np.nan, 100.0]]
    initial = [[1e2, 1.0], [1.0, 10.0], [10.0, 10.0]]
    prof = accuracy_profile(final, initial)
    np.testing.assert_allclose(prof.values, np.array([[5, 16], [16, 1], [-INF, -1]]), rtol=1e-15)
    a, b = prof.steps
    assert a.continuity == "left"
    np.testing.assert_allclose(a.x, [5, 16], rtol=1e-15)
    np.testing.assert_array_equal(a.counts, [2, 1, 0])  # #{γ >= τ}: 2 up to 5, 1 up to 16
    assert a.count(a.x[0]) == 2
    assert a.count(np.nextafter(a.x[0], INF)) == 1
    assert a.count(16.0) == 1
    assert a.count(16.5) == 0
    np.testing.assert_array_equal(b.x, [-1, 1, 16])
    np.testing.assert_array_equal(b.counts, [3, 2, 1, 0])
    assert b.count(0.0) == 2
    assert a.total == 3


def test_profiles_refuse_bad_input() -> None:
    with pytest.raises(InvalidInput):
        performance_profile([[0, 1]])
    with pytest.raises(InvalidInput):
        performance_profile([[1, 2]], solvers=["a", "a"])
    with pytest.raises(InvalidInput):
        data_profile([[1], [2]], [2])
    with pytest.raises(InvalidInput):
        accuracy_profile([[1.0]], [0.0])
    with pytest.raises(InvalidInput):
        accuracy_profile([[-1.0]], [1.0])


# -- brute force ------------------------------------------------------------------------------

cost = st.one_of(st.integers(1, 60), st.none())  # None = failure
cost_matrix = st.integers(1, 6).flatmap(
    lambda s: st.lists(st.lists(cost, min_size=s, max_size=s), min_size=1, max_size=9)
)


def as_array(rows: list[list[int | None]]) -> np.ndarray:
    return np.array([[INF if c is None else c for c in row] for row in rows], dtype=float)


def probes(exact: list[Fraction]) -> list[Fraction]:
    """Every breakpoint, points between and beside them."""
    xs = sorted(set(exact))
    if not xs:
        return [Fraction(0), Fraction(1)]
    mids = [(a + b) / 2 for a, b in itertools.pairwise(xs)]
    return [xs[0] - 1, *xs, *mids, xs[-1] + 1]


def check_upper(step: StepFunction, exact: list[Fraction | None], total: int) -> None:
    """``step`` is ``#{v <= t}`` of the exact values (None = never) at every probe."""
    finite = [v for v in exact if v is not None]
    assert step.total == total
    np.testing.assert_array_equal(step.x, sorted({float(v) for v in finite}))
    for t in probes(finite):
        want = sum(v <= t for v in finite)
        assert count_at(step, float(t)) == want == step.count(float(t))


@given(cost_matrix)
def test_performance_profile_equals_brute_force(rows: list[list[int | None]]) -> None:
    prof = performance_profile(as_array(rows))
    for s, step in enumerate(prof.steps):
        ratios: list[Fraction | None] = []
        for row in rows:
            done = [c for c in row if c is not None]
            c = row[s]
            ratios.append(None if c is None else Fraction(c, min(done)))
        check_upper(step, ratios, len(rows))


def ratio(c: int | None, d: int) -> Fraction | None:
    return None if c is None else Fraction(c, d)


@given(cost_matrix, st.data())
def test_data_profile_equals_brute_force(rows: list[list[int | None]], data: st.DataObject) -> None:
    dims = data.draw(st.lists(st.integers(1, 40), min_size=len(rows), max_size=len(rows)))
    prof = data_profile(as_array(rows), np.array(dims))
    for s, step in enumerate(prof.steps):
        kappas = [ratio(r[s], n + 1) for r, n in zip(rows, dims, strict=True)]
        check_upper(step, kappas, len(rows))


# final errors as powers of ten (exact digits), 0 (optimum hit) or None (failure); starts 10^0..4
final_error = st.one_of(st.integers(-25, 5), st.just(0.0), st.none())
problem = st.tuples(st.integers(0, 4), st.lists(final_error, min_size=1, max_size=5))


def gamma(start: int, e: int | float | None) -> Fraction | None:
    """Digits gained, exact: ``min(start - e, 16)``; 16 at the optimum; None = failure."""
    if e is None:
        return None
    return Fraction(16) if isinstance(e, float) else min(Fraction(start - e), Fraction(16))


@given(st.lists(problem, min_size=1, max_size=9))
def test_accuracy_profile_equals_brute_force(
    problems: list[tuple[int, list[int | float | None]]],
) -> None:
    width = min(len(row) for _, row in problems)
    rows = [(p, row[:width]) for p, row in problems]
    final = np.array(
        [
            [np.nan if e is None else 0.0 if isinstance(e, float) else 10.0**e for e in row]
            for _, row in rows
        ]
    )
    initial = np.array([10.0**p for p, _ in rows])
    prof = accuracy_profile(final, initial)
    for s, step in enumerate(prof.steps):
        gammas = [g for p, row in rows if (g := gamma(p, row[s])) is not None]
        assert step.continuity == "left"
        assert step.total == len(rows)
        np.testing.assert_allclose(
            step.x, sorted({float(g) for g in gammas}), rtol=1e-14, atol=1e-14
        )
        exact = set(gammas)
        for t in probes(list(gammas)):
            # at a breakpoint, probe the float breakpoint itself (log10 may round by an ulp)
            at = float(step.x[np.argmin(np.abs(step.x - float(t)))]) if t in exact else float(t)
            want = sum(g >= t for g in gammas)
            assert count_at(step, at) == want == step.count(at)


# -- Moré & Wild's convergence test ---------------------------------------------------------


def test_convergence_costs_by_hand() -> None:
    # f0 = 100; solver a ends at 1, solver b at 10: f_L = 1, threshold 1 + 0.1 * 99 = 10.9
    a = Trajectory((1, 4, 9), (50.0, 20.0, 1.0))
    b = Trajectory((2, 3), (30.0, 10.0))
    costs = convergence_costs([[a, b], [None, b]], [100.0, 31.0], tolerance=0.1)
    # problem 1: f_L = 10, threshold 10 + 0.1 * 21 = 12.1: b passes at 3, a is missing
    np.testing.assert_array_equal(costs, [[9, 3], [INF, 3]])
    given_f_star = convergence_costs([[a, b]], [100.0], tolerance=0.1, reference=[0.0])
    np.testing.assert_array_equal(given_f_star, [[9, 3]])  # threshold 10: b's 10.0 counts (<=)
    with pytest.raises(InvalidInput):
        convergence_costs([[a]], [1.0], tolerance=1.0)


@st.composite
def trajectory(draw: st.DrawFn) -> Trajectory | None:
    if draw(st.booleans()) and draw(st.booleans()):
        return None
    steps = draw(st.lists(st.tuples(st.integers(1, 9), st.integers(0, 9)), min_size=1, max_size=6))
    evaluations = np.cumsum([e for e, _ in steps]).tolist()
    best = (100 - np.cumsum([d for _, d in steps])).astype(float).tolist()
    return Trajectory(tuple(evaluations), tuple(best))


@given(
    st.integers(1, 4).flatmap(
        lambda s: st.lists(st.lists(trajectory(), min_size=s, max_size=s), min_size=1, max_size=5)
    ),
    st.sampled_from([0.5, 0.1, 1e-3]),
)
def test_convergence_costs_equal_a_scan_of_the_records(
    rows: list[list[Trajectory | None]], tolerance: float
) -> None:
    f0 = 120.0
    costs = convergence_costs(rows, [f0] * len(rows), tolerance=tolerance)
    for p, row in enumerate(rows):
        finals = [t.best[-1] for t in row if t is not None]
        f_low = min([*finals, f0])
        for s, t in enumerate(row):
            want = INF
            if t is not None:
                for e, b in zip(t.evaluations, t.best, strict=True):
                    if b <= f_low + tolerance * (f0 - f_low):
                        want = e
                        break
            assert costs[p, s] == want
