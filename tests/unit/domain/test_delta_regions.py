"""δ scan (Jing & Liu §V, Eq. 29): e by hand, exactly with fractions, in the far tail, and its
properties; the choice of δ and the grids."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from app.domain.delta_regions import (
    DEFAULT_GRID_COUNT,
    choose_delta,
    default_grid,
    geometric_grid,
    geometric_mean_difference,
)
from app.domain.errors import InvalidInput


def _e(v: list[float]) -> float:
    with np.errstate(divide="ignore"):
        s = geometric_mean_difference(np.log10(np.asarray(v, dtype=np.float64)))
    assert s.e is not None
    return s.e


# --------------------------------------------------------------------------- e by hand


@pytest.mark.parametrize(
    ("v", "expected"),
    [
        ([0.2, 0.6], 0.4),  # k = 2: e is the one gap
        ([0.1, 0.4, 0.5], math.sqrt(0.3 * 0.1)),
        ([0.5, 0.1, 0.4], math.sqrt(0.3 * 0.1)),  # any order
        ([0.1, 0.1, 0.4, 0.5, 0.5, 0.4], math.sqrt(0.3 * 0.1)),  # duplicates
        ([0.0, 0.25, 1.0], math.sqrt(0.25 * 0.75)),  # v = 0 (log10 -inf) is a rank too
        ([0.01, 0.02, 0.04, 0.08], (0.01 * 0.02 * 0.04) ** (1 / 3)),
    ],
)
def test_e_by_hand(v: list[float], expected: float) -> None:
    assert _e(v) == pytest.approx(expected, rel=1e-13)


def test_result_lists_the_ordered_distinct_ranks() -> None:
    s = geometric_mean_difference(np.log10([0.5, 0.1, 0.4, 0.1]))
    assert s.computable
    assert s.k == 3
    assert s.reason is None
    np.testing.assert_allclose(10.0**s.log10_v, [0.1, 0.4, 0.5], rtol=1e-15)
    assert s.log10_e == pytest.approx(math.log10(math.sqrt(0.03)), abs=1e-14)


def test_exact_rational_product() -> None:
    # Π (v_i − v_{i−1}) with v = 1/7, 2/7, 3/4, 9/10: (1/7)(13/28)(3/20) = 39/3920
    v = [Fraction(1, 7), Fraction(2, 7), Fraction(3, 4), Fraction(9, 10)]
    product = Fraction(1, 7) * Fraction(13, 28) * Fraction(3, 20)
    assert product == Fraction(39, 3920)
    s = geometric_mean_difference([math.log10(x) for x in v])
    assert s.log10_e is not None
    assert 3 * s.log10_e == pytest.approx(math.log10(product), abs=1e-13)


@given(
    st.lists(st.fractions(min_value=0, max_value=1, max_denominator=1000), min_size=2, max_size=12)
)
def test_matches_exact_rational_arithmetic(v: list[Fraction]) -> None:
    distinct = sorted(set(v))
    assume(len(distinct) >= 2)
    product = math.prod(b - a for a, b in itertools.pairwise(distinct))
    with np.errstate(divide="ignore"):
        s = geometric_mean_difference(np.log10([float(x) for x in v]))
    assert s.k == len(distinct)
    assert s.log10_e is not None
    # gaps are >= 1e-6 and the inputs carry ~1e-16 relative rounding
    expected = (math.log10(product.numerator) - math.log10(product.denominator)) / (s.k - 1)
    assert s.log10_e == pytest.approx(expected, abs=1e-9)


# --------------------------------------------------------------------------- far tail


def test_tiny_ranks_do_not_underflow() -> None:
    # gaps 1e-40 and 1e-3 - 2e-40: log10 e = (-40 - 3)/2
    s = geometric_mean_difference([-40.0, math.log10(2e-40), -3.0])
    assert s.log10_e == pytest.approx(-21.5, abs=1e-12)
    # ranks below the float range: only log10 is meaningful, and it stays exact
    s = geometric_mean_difference([-400.0, -399.0])
    assert s.log10_e == pytest.approx(-399 + math.log10(0.9), abs=1e-12)
    assert s.e == 0.0  # underflows; log10_e is authoritative


def test_close_ranks_are_differenced_without_cancellation() -> None:
    h = 1e-12
    s = geometric_mean_difference([-1.0, -1.0 + h])
    exact_gap = 0.1 * math.expm1(math.log(10) * h)  # 10^(-1+h) - 10^(-1)
    assert s.e == pytest.approx(exact_gap, rel=1e-9)


# --------------------------------------------------------------------------- not computable


@pytest.mark.parametrize("log10_v", [[], [-1.0], [-2.0, -2.0, -2.0], [-math.inf, -math.inf]])
def test_fewer_than_two_distinct_ranks_is_not_computable(log10_v: list[float]) -> None:
    s = geometric_mean_difference(log10_v)
    assert not s.computable
    assert s.e is None
    assert s.log10_e is None
    assert s.reason
    assert s.k == len(set(log10_v))


@pytest.mark.parametrize("log10_v", [[math.nan, -1.0], [0.5, -1.0], [math.inf], [[-1.0, -2.0]]])
def test_bad_input_is_refused(log10_v: list) -> None:
    with pytest.raises(InvalidInput) as err:
        geometric_mean_difference(log10_v)
    assert err.value.field == "log10_v"


# --------------------------------------------------------------------------- properties

LOG10_V = st.floats(min_value=-300, max_value=0, allow_nan=False) | st.just(-math.inf)
RANKS = st.lists(LOG10_V, min_size=0, max_size=15)


@given(RANKS)
def test_e_is_positive_when_computable(log10_v: list[float]) -> None:
    s = geometric_mean_difference(log10_v)
    distinct = len(set(log10_v))
    assert s.computable == (distinct >= 2)
    if s.computable:
        assert s.log10_e is not None
        assert math.isfinite(s.log10_e)
        assert s.log10_e <= 0.0  # every gap is at most 1
    else:
        assert s.e is None


@given(st.lists(st.floats(min_value=-8, max_value=0, allow_nan=False), min_size=2, max_size=15))
def test_e_is_positive_and_below_the_mean_gap(log10_v: list[float]) -> None:
    assume(len(set(log10_v)) >= 2)
    s = geometric_mean_difference(log10_v)
    assert s.e is not None
    assert s.e > 0
    v = 10.0 ** np.asarray(sorted(set(log10_v)))
    # AM-GM: the geometric mean of the gaps is at most their mean (v_k - v_1)/(k - 1)
    assert s.e <= (v[-1] - v[0]) / (s.k - 1) * (1 + 1e-9)


@given(RANKS, st.randoms(use_true_random=False))
def test_order_of_the_inputs_does_not_matter(log10_v: list[float], rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(log10_v)
    rnd.shuffle(shuffled)
    a, b = geometric_mean_difference(log10_v), geometric_mean_difference(shuffled)
    assert (a.log10_e, a.k, a.computable) == (b.log10_e, b.k, b.computable)


@given(RANKS, st.data())
def test_duplicates_do_not_change_e(log10_v: list[float], data: st.DataObject) -> None:
    assume(log10_v)
    extra = data.draw(st.lists(st.sampled_from(log10_v), max_size=10))
    a, b = geometric_mean_difference(log10_v), geometric_mean_difference(log10_v + extra)
    assert (a.log10_e, a.k) == (b.log10_e, b.k)


# --------------------------------------------------------------------------- choice of δ


def test_largest_e_wins() -> None:
    c = choose_delta([0.1, 0.5, 1.0], [-3.0, -1.0, -2.0])
    assert c is not None
    assert (c.index, c.delta, c.log10_e) == (1, 0.5, -1.0)


def test_ties_go_to_the_larger_delta() -> None:
    c = choose_delta([1.0, 0.1, 0.5], [-1.0, -2.0, -1.0])
    assert c is not None
    assert (c.index, c.delta) == (0, 1.0)
    c = choose_delta([0.5, 1.0, 0.1], [-1.0, -1.0, -1.0])
    assert c is not None
    assert c.delta == 1.0


def test_not_computable_deltas_are_skipped() -> None:
    c = choose_delta([0.1, 0.5, 1.0], [None, -4.0, None])
    assert c is not None
    assert c.delta == 0.5
    assert choose_delta([0.1, 0.5], [None, None]) is None
    assert choose_delta([], []) is None


def test_choice_refuses_bad_input() -> None:
    with pytest.raises(InvalidInput):
        choose_delta([0.1, 0.5], [-1.0])
    with pytest.raises(InvalidInput):
        choose_delta([0.1], [math.nan])


@given(
    st.lists(
        st.tuples(
            st.floats(min_value=1e-6, max_value=1e3),
            st.none() | st.sampled_from([-3.0, -2.0, -1.0]),
        ),
        min_size=1,
        max_size=10,
        unique_by=lambda p: p[0],
    ),
    st.randoms(use_true_random=False),
)
def test_choice_does_not_depend_on_the_grid_order(pairs: list, rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(pairs)
    rnd.shuffle(shuffled)
    a = choose_delta([p[0] for p in pairs], [p[1] for p in pairs])
    b = choose_delta([p[0] for p in shuffled], [p[1] for p in shuffled])
    assert (a is None) == (b is None)
    if a is not None and b is not None:
        assert (a.delta, a.log10_e) == (b.delta, b.log10_e)
        best = max(p[1] for p in pairs if p[1] is not None)
        assert a.log10_e == best
        assert a.delta == max(p[0] for p in pairs if p[1] == best)


# --------------------------------------------------------------------------- grids


def test_geometric_grid() -> None:
    g = geometric_grid(0.001, 10.0, 5)
    assert g.tolist() == pytest.approx([0.001, 0.01, 0.1, 1.0, 10.0], rel=1e-14)
    assert (g[0], g[-1]) == (0.001, 10.0)  # endpoints exact
    ratios = g[1:] / g[:-1]
    np.testing.assert_allclose(ratios, 10.0, rtol=1e-12)


@pytest.mark.parametrize(
    ("low", "high", "count"),
    [
        (0.0, 1.0, 3),
        (-1.0, 1.0, 3),
        (1.0, 1.0, 3),
        (2.0, 1.0, 3),
        (0.1, 1.0, 1),
        (0.1, math.inf, 3),
    ],
)
def test_geometric_grid_refuses(low: float, high: float, count: int) -> None:
    with pytest.raises(InvalidInput) as err:
        geometric_grid(low, high, count)
    assert err.value.field == "deltas"


def test_coinciding_grid_values_are_refused() -> None:
    with pytest.raises(InvalidInput, match="coincide"):
        geometric_grid(1.0, 1.0 + 2e-16, 10)


def test_default_grid_spans_the_largest_half_width() -> None:
    g = default_grid([-5.0, -5.0], [5.0, 5.0])
    assert g.size == DEFAULT_GRID_COUNT
    assert (g[0], g[-1]) == (0.005, 5.0)
    g = default_grid([0.0, -100.0], [1.0, 100.0], count=3)
    assert g.tolist() == pytest.approx([0.1, math.sqrt(0.1 * 100.0), 100.0])
    with pytest.raises(InvalidInput):
        default_grid([0.0], [0.0])
