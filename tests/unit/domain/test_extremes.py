"""Issue 13 item 6: right answers at the extremes of float64, against exact rational references.

References are computed here with :class:`fractions.Fraction` (exact) and exact enumeration, never
with the code under test.
"""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain import absrank
from app.domain.exactfloat import midranks_exact, units
from app.domain.paired import sign_test, wilcoxon_signed_rank
from app.domain.ranktests import friedman, friedman_aligned_ranks, quade

MIXED = [
    [2.0**1000, 3 * 2.0**1000, 2 * 2.0**1000],
    [2.0**-100, 3 * 2.0**-100, 2 * 2.0**-100],
    [1.0, 3.0, 2.5],
    [2.0, 1.0, 3.0],
]


def _midranks(values: list[Fraction]) -> list[Fraction]:
    out = [Fraction(0)] * len(values)
    for i, v in enumerate(values):
        below = sum(w < v for w in values)
        equal = sum(w == v for w in values)
        out[i] = Fraction(2 * below + equal + 1, 2)
    return out


def _aligned_t(matrix: list[list[float]]) -> Fraction:
    """García et al. (2010) aligned-ranks T, exactly (deviations from the problem mean)."""
    m = [[Fraction(v) for v in row] for row in matrix]
    n, k = len(m), len(m[0])
    flat = _midranks([v - sum(row) / k for row in m for v in row])
    r = [flat[i * k : (i + 1) * k] for i in range(n)]
    col = [sum(r[i][j] for i in range(n)) for j in range(k)]
    num = (k - 1) * (sum(c * c for c in col) - Fraction(k * n * n, 4) * (k * n + 1) ** 2)
    den = sum(x * x for row in r for x in row) - Fraction(1, k) * sum(sum(row) ** 2 for row in r)
    return num / den


def _quade_f(matrix: list[list[float]]) -> Fraction:
    """Quade's F (Conover 1999), exactly: weights are the midranks of the problems' ranges."""
    m = [[Fraction(v) for v in row] for row in matrix]
    n, k = len(m), len(m[0])
    q = _midranks([max(row) - min(row) for row in m])
    s = [[q[i] * (x - Fraction(k + 1, 2)) for x in _midranks(m[i])] for i in range(n)]
    a = sum(x * x for row in s for x in row)
    b = sum(sum(s[i][j] for i in range(n)) ** 2 for j in range(k)) / n
    return (n - 1) * b / (a - b)


def test_mixed_magnitudes_exact_values():
    # Issue 13: scaling the whole matrix by 2^-1001 flushed the 2^-100 problem to ties
    # (absrank said T = 2.7716, F = 1.1835).
    assert float(_aligned_t(MIXED)) == pytest.approx(3.6459, abs=5e-5)
    assert float(_quade_f(MIXED)) == pytest.approx(1.7677, abs=5e-5)
    assert friedman_aligned_ranks(MIXED).statistic == pytest.approx(float(_aligned_t(MIXED)))
    assert quade(MIXED).statistic == pytest.approx(float(_quade_f(MIXED)))


def test_overflowing_rows_are_exact():
    # Row means and ranges beyond the float range: exact in integer units, no refusal.
    big = [[1.7e308, -1.7e308, 0.0], [1e-300, 3e-300, 2e-300], [5e-324, 0.0, 1e-323]]
    assert friedman_aligned_ranks(big).statistic == pytest.approx(float(_aligned_t(big)))
    assert quade(big).statistic == pytest.approx(float(_quade_f(big)))


def test_aligned_ties_are_exact():
    # a − mean in floats rounds: 0.1 + 0.2 style alignments split exact ties; units keep them.
    m = [[0.1, 0.2, 0.3], [1.1, 1.2, 1.3]]
    assert friedman_aligned_ranks(m).statistic == pytest.approx(float(_aligned_t(m)))


_ints = st.integers(min_value=-50, max_value=50)


@st.composite
def _int_matrices(draw: st.DrawFn) -> list[list[float]]:
    n = draw(st.integers(2, 6))
    k = draw(st.integers(2, 5))
    return [[float(draw(_ints)) for _ in range(k)] for _ in range(n)]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(_int_matrices(), st.integers(-1060, 960), st.lists(_ints, min_size=6, max_size=6))
def test_invariances(m, power, shifts):
    """Exactly which invariances hold (integer matrices, so every operation below is exact).

    - aligned ranks and Quade: a common positive scaling of the whole matrix (here ``2^p``, exact
      down to subnormals) and a shift of each problem by its own constant;
    - Friedman: any strictly increasing transform per problem (here a per-problem positive
      scaling by its own power of two).
    Aligned ranks and Quade are *not* invariant under per-problem scaling: aligned values are
    compared across problems, and Quade's weights rank the problems' ranges.
    """
    a = np.array(m)
    scaled = np.ldexp(a, power)
    shifted = a + np.array(shifts[: a.shape[0]], dtype=float)[:, None]
    t = friedman_aligned_ranks(a).statistic
    f = quade(a).statistic
    assert friedman_aligned_ranks(scaled).statistic == pytest.approx(t, rel=1e-12)
    assert friedman_aligned_ranks(shifted).statistic == pytest.approx(t, rel=1e-12)
    assert quade(scaled).statistic == pytest.approx(f, rel=1e-12)
    assert quade(shifted).statistic == pytest.approx(f, rel=1e-12)
    per_row = np.ldexp(a, np.arange(a.shape[0])[:, None] * 200 - 500)
    assert friedman(per_row).statistic == pytest.approx(friedman(a).statistic, rel=1e-12)
    # and the exact references agree with the code at this scale
    if not friedman_aligned_ranks(a).degenerate:
        assert t == pytest.approx(float(_aligned_t(m)), rel=1e-12)
    if not quade(a).degenerate:
        assert f == pytest.approx(float(_quade_f(m)), rel=1e-12)


def test_aligned_ranks_not_invariant_under_per_problem_scaling():
    # A counterexample, so the documented limit of the invariance is itself tested.
    m = [[1.0, 3.0, 2.5], [2.0, 1.0, 3.0], [0.0, 4.0, 1.0]]
    scaled = [[v * 1000.0 for v in m[0]], m[1], m[2]]
    assert _aligned_t(m) != _aligned_t(scaled)
    assert friedman_aligned_ranks(scaled).statistic == pytest.approx(float(_aligned_t(scaled)))


# --------------------------------------------------------------------------- paired tests


def _exact_wilcoxon_two_sided(d: list[Fraction]) -> Fraction:
    """Exact two-sided signed-rank p by enumerating the 2^n sign assignments (no zeros)."""
    ranks = _midranks([abs(v) for v in d])
    w_obs = sum(r for r, v in zip(ranks, d, strict=True) if v > 0)
    mean = sum(ranks) / 2
    hits = 0
    for signs in itertools.product((0, 1), repeat=len(d)):
        w = sum(r for r, s in zip(ranks, signs, strict=True) if s)
        hits += abs(w - mean) >= abs(w_obs - mean)
    return Fraction(hits, 2 ** len(d))


def test_subnormal_differences_survive_an_overflowing_pair():
    x = [1.7e308] + [5e-324] * 4
    y = [-1.7e308] + [0.0] * 4
    d = [Fraction(a) - Fraction(b) for a, b in zip(x, y, strict=True)]
    assert _exact_wilcoxon_two_sided(d) == Fraction(2, 32)
    w = wilcoxon_signed_rank(x, y)
    assert w.p_value == 0.0625
    assert w.n_effective == 5
    s = sign_test(x, y)
    assert s.p_value == 0.0625  # all 5 positive: 2 · 2^-5
    assert s.n_greater == 5
    # zero_tol below the subnormal keeps it; at it, it is a tie
    assert sign_test(x, y, zero_tol=0.0).n_ties == 0
    assert sign_test(x, y, zero_tol=5e-324).n_ties == 4


def test_rounded_differences_keep_their_order():
    # 2^53 − (−1) and −2^53 − 0.5 round to ±2^53 in floats (a tie); exactly |d_2| < |d_1|.
    x = [2.0**53, -(2.0**53), 1.0, 2.0, 3.0]
    y = [-1.0, 0.5, 0.0, 0.0, 0.0]
    d = [Fraction(a) - Fraction(b) for a, b in zip(x, y, strict=True)]
    assert wilcoxon_signed_rank(x, y).p_value == float(_exact_wilcoxon_two_sided(d))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(
            st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True),
            st.floats(allow_nan=False, allow_infinity=False, allow_subnormal=True),
        ).filter(lambda p: p[0] != p[1]),
        min_size=1,
        max_size=8,
    )
)
def test_wilcoxon_matches_exact_enumeration(pairs):
    x = [p[0] for p in pairs]
    y = [p[1] for p in pairs]
    d = [Fraction(a) - Fraction(b) for a, b in pairs]
    assert wilcoxon_signed_rank(x, y, method="exact").p_value == pytest.approx(
        float(_exact_wilcoxon_two_sided(d)), rel=1e-12
    )


def test_units_and_exact_midranks():
    vals = np.array([5e-324, -1.7e308, 0.0, 2.5, 1e-310])
    assert [Fraction(u, 2**1074) for u in units(vals)] == [Fraction(v) for v in vals.tolist()]
    keys = [3, 1, 3, 2]
    assert midranks_exact(keys).tolist() == [float(r) for r in _midranks(keys)]


# --------------------------------------------------------------------------- v(f_max)


def test_v_at_registered_maximum_is_one():
    # SPEC §3.2, known maximum: the mirror image at the top; v(f_max) = P(f <= f_max) = 1.
    from app.domain.absrank import absolute_ranks
    from tests.unit.domain.test_absrank import _ctx, _table

    table = _table([0.0, 1.0, 2.0, 3.0, 4.0])  # largest sample equals f_max
    res = absolute_ranks(np.array([3.0, 4.0, 5.0]), table, _ctx(f_opt=0.0, f_max=4.0))
    v = np.asarray(res.v)
    assert v[1] == 1.0  # at f_max: exactly 1, not N/(N+1) = 5/6
    assert v[2] == 1.0  # above f_max
    assert v[0] < 1.0


def test_a_sample_that_rounds_to_f_opt_does_not_rank_f_opt_above_zero() -> None:
    """A deep ladder level's samples ``f = g + f*`` can round to ``f*`` itself (BBOB f8 at
    d = 2: f* = 149.15, ulp 2.8e-14): ``v1(f*)`` is still exactly 0 without an atom (and the
    atom where there is one), never ``#{y_i <= f*}/(N + 1)``."""
    f_opt = 149.15
    rng = np.random.default_rng(3)
    x = rng.uniform(-1.0, 1.0, size=(64, 1))
    values = f_opt + 1e-14 * np.abs(x[:, 0])  # several round to f* exactly
    assert np.any(values == f_opt)
    order = np.lexsort((np.arange(values.size), values))
    data = absrank.build_table_data(values, x[order[:32]], k_exact=32)
    ctx = absrank.RankContext(
        f_opt,
        None,
        0.0,
        0.5,
        "|x|",
        np.zeros(1),
        np.full(1, -1.0),
        np.full(1, 1.0),
        no_plateau=True,
    )
    curve = absrank.table_curve(data, ctx, tail="linear")
    res = absrank.ranks_from_curve(np.array([f_opt, np.nextafter(f_opt, 0.0)]), curve)
    assert res.v.tolist() == [0.0, 0.0]
    assert res.method.tolist() == ["at-or-below-minimum"] * 2
    gap = absrank.ranks_from_curve(np.array([0.0]), curve, values_are="error")
    assert gap.v.tolist() == [0.0]
    unknown = absrank.table_curve(data, dataclasses.replace(ctx, no_plateau=False), tail="linear")
    assert absrank.ranks_from_curve(np.array([f_opt]), unknown).v[0] > 0  # counted (a box)
    with_atom = absrank.table_curve(data, dataclasses.replace(ctx, atom=0.25), tail="linear")
    at = absrank.ranks_from_curve(np.array([f_opt]), with_atom)
    assert at.v.tolist() == [0.25]
