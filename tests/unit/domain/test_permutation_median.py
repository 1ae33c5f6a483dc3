"""The exact median count (issue 15): equal, as integers, to the configuration-pair counter it
replaced (``reference_permutation_median``) and to enumeration of every split."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.domain.permutation import _permutation_test_iv, permutation_test
from app.domain.permutation._median import median_exact_count
from app.domain.permutation._problem import Problem
from tests.unit.domain.reference_permutation_median import reference_median_exact_count

ALTERNATIVES = ("two-sided", "greater", "less")


def _problem(x: list[float], y: list[float], alternative: str, rtol: float) -> Problem:
    return _permutation_test_iv(x, y, "median", alternative, "exact", rtol)


def _new(prob: Problem) -> int:
    return median_exact_count(prob.pooled, prob.n_a, prob.n_b, prob.extreme, prob.alternative)


def _brute(prob: Problem) -> int:
    """Every split enumerated, medians by ``np.median``, the same predicate."""
    v, n_a = prob.pooled, prob.n_a
    combos = np.array(list(itertools.combinations(range(v.size), n_a)))
    mask = np.zeros((len(combos), v.size), dtype=bool)
    mask[np.arange(len(combos))[:, None], combos] = True
    full = np.broadcast_to(v, mask.shape)
    a = full[mask].reshape(len(combos), n_a)
    b = full[~mask].reshape(len(combos), -1)
    return int(np.count_nonzero(prob.extreme(np.median(a, axis=1) - np.median(b, axis=1))))


def _sample(draw: st.DrawFn, size: int, kind: str) -> list[float]:
    if kind == "ties":
        return [float(v) for v in draw(st.lists(st.integers(0, 4), min_size=size, max_size=size))]
    if kind == "grid":  # halves and quarters: means of two middles tie exactly
        return [v / 4 for v in draw(st.lists(st.integers(-8, 8), min_size=size, max_size=size))]
    return draw(
        st.lists(st.floats(-1e3, 1e3, allow_nan=False, width=64), min_size=size, max_size=size)
    )


@st.composite
def problems(draw: st.DrawFn, max_size: int) -> Problem:
    n_a = draw(st.integers(1, max_size))
    n_b = draw(st.integers(1, max_size))
    kind = draw(st.sampled_from(("ties", "grid", "floats")))
    x, y = _sample(draw, n_a, kind), _sample(draw, n_b, kind)
    if draw(st.booleans()):  # shift y: small p-values too
        y = [v + draw(st.sampled_from((0.5, 2.0, 10.0))) for v in y]
    alternative = draw(st.sampled_from(ALTERNATIVES))
    rtol = draw(st.sampled_from((0.0, 1e-9, 1e-3)))
    return _problem(x, y, alternative, rtol)


@settings(max_examples=300, deadline=None)
@given(prob=problems(max_size=24))
def test_new_count_equals_the_configuration_pair_counter(prob: Problem) -> None:
    # n <= 48: every count and partial float sum of the old counter is an exact integer
    selected, total = reference_median_exact_count(prob.pooled, prob.n_a, prob.n_b, prob.extreme)
    assert total == math.comb(prob.n, prob.n_a)
    assert _new(prob) == int(selected)


@settings(max_examples=200, deadline=None)
@given(prob=problems(max_size=7))
def test_new_count_equals_enumeration(prob: Problem) -> None:
    assert _new(prob) == _brute(prob)


@given(
    x=st.lists(st.integers(-3, 3), min_size=1, max_size=9),
    y=st.lists(st.integers(-3, 3), min_size=1, max_size=9),
    alternative=st.sampled_from(ALTERNATIVES),
)
def test_p_value_is_the_correctly_rounded_ratio(
    x: list[int], y: list[int], alternative: str
) -> None:
    r = permutation_test(x, y, alternative=alternative, method="exact")
    prob = _problem([float(v) for v in x], [float(v) for v in y], alternative, 1e-9)
    count = _brute(prob)
    assert r.p_value == count / math.comb(len(x) + len(y), len(x))
    assert r.n_extreme == count


@pytest.mark.parametrize(("n_a", "n_b"), [(40, 40), (41, 38), (33, 60)])
def test_large_counts_agree_with_the_float_counter(n_a: int, n_b: int) -> None:
    """Beyond 2^53 the old counter rounds; the p-values agree to rounding."""
    rng = np.random.default_rng(n_a * n_b)
    x, y = rng.integers(0, 9, n_a).astype(float), rng.normal(4.0, 3.0, n_b).round(1)
    for alternative in ALTERNATIVES:
        prob = _problem(list(x), list(y), alternative, 1e-9)
        selected, total = reference_median_exact_count(
            prob.pooled, prob.n_a, prob.n_b, prob.extreme
        )
        new = _new(prob)
        assert new / math.comb(prob.n, n_a) == pytest.approx(selected / total, rel=1e-12)


def test_every_split_of_two_hundred_runs_is_counted_once() -> None:
    v = np.sort(np.random.default_rng(5).integers(0, 7, 400).astype(float))
    for n_a in (200, 199, 201):
        count = median_exact_count(v, n_a, 400 - n_a, lambda s: np.ones(s.shape, bool), "less")
        assert count == math.comb(400, n_a)
