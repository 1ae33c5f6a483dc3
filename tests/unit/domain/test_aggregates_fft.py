"""The mean's FFT chains (app.domain.aggregates._fft, _mean): rigorous rounding bounds, and the
same answers as the direct convolution they replace (kept as the oracle: ``_mean_numeric``).

References: exact integer convolutions (Python ints); the direct convolution of every lattice
(``_reference_fold``: sums of non-negative products); Monte Carlo resampling from the same table.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.domain.absrank import RankResult
from app.domain.aggregates import _fft, _lattice, _mean, aggregate_ranks, aggregate_ranks_each
from app.domain.aggregates._common import Inputs, evaluate
from app.domain.curves import V1Curve
from tests.unit.domain.test_aggregates import (
    _STATISTIC,
    LN10,
    _dirichlet_ln,
    _sampler,
    _sphere_curve,
    _table_curve,
)

_PROPS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exact_power(ints: list[int], runs: int, size: int) -> list[int]:
    out = [1]
    for _ in range(runs):
        out = np.convolve(np.array(out, dtype=object), np.array(ints, dtype=object))[:size]
        out = [int(x) for x in out]
    return out


@_PROPS
@given(
    seed=st.integers(0, 2**32 - 1),
    runs=st.sampled_from([2, 3, 5, 8]),
    shape=st.sampled_from(["flat", "growing", "spiky", "sparse"]),
)
def test_fft_power_is_within_its_bound_of_the_exact_convolution(
    seed: int, runs: int, shape: str
) -> None:
    """Entries j/2^20 are exact floats; the r-fold power is computed exactly in integers."""
    rng = np.random.default_rng(seed)
    m = 96
    j = np.arange(m)
    weight = {
        "flat": np.ones(m),
        "growing": np.exp(0.3 * j - 0.3 * m),  # a left tail: tiny entries next to large ones
        "spiky": np.where(rng.random(m) < 0.05, 1.0, 1e-6),
        "sparse": (rng.random(m) < 0.2).astype(float),
    }[shape]
    ints = [int(x) for x in np.floor(rng.random(m) * weight * 2**20)]
    ints[int(np.argmax(ints))] = 2**20  # max 1 after scaling
    vec = np.array(ints, dtype=np.float64)[None, :] / 2**20
    out, ln_scale, bound = _fft.power(vec, np.zeros(1), runs, m)
    exact = _exact_power(ints, runs, m)
    scale = math.exp(float(ln_scale[0]))
    err = max(abs(float(out[0, k]) * scale - exact[k] / 2.0 ** (20 * runs)) for k in range(m))
    assert err <= float(bound[0]) * scale
    if shape != "flat":
        # e.g. untilted, the truncated power of a growing vector has entries ~e^-29 of its
        # inputs' norms: no digits left, and the bound says so (the chain is then tilted or
        # convolved directly)
        return
    # the bound is rigorous, not absurd: a few 1e-9 of the largest entry (measured over 12,000
    # seeds x runs: at most 5.6e-9), and the error at most 3e-4 of it
    assert float(bound[0]) < 3e-8
    assert err <= 0.01 * float(bound[0]) * scale


def test_fft_bound_grows_with_the_input_error() -> None:
    vec = np.ones((1, 64))
    _, _, clean = _fft.power(vec, np.zeros(1), 4, 64)
    _, _, noisy = _fft.power(vec, np.full(1, 1e-10), 4, 64)
    assert noisy[0] > clean[0] + 1e-10


def _rows(t: float, r: int, c: int, n: int) -> np.ndarray:
    inp = Inputs(_table_curve(), 0.0, c, r, False, 0.0)
    return evaluate(inp, r * t * (np.arange(n + 1) / n))


@_PROPS
@given(
    t=st.floats(min_value=0.05, max_value=1.6),
    r=st.integers(5, 40),
    c=st.sampled_from([1, 3, 20]),
)
def test_fft_estimates_agree_with_the_direct_convolution(t: float, r: int, c: int) -> None:
    """New bracket contains the old one up to the old sums' own rounding and is no wider than
    it plus the FFT bound; the new point is within the old bracket and the old error."""
    n = 2048
    ln_f = _rows(t, r, c, n)
    theta = _mean._tilt_rows(ln_f[:1], r)
    new = _mean._mean_numeric_rows(ln_f, r, np.repeat(theta, 3))
    for k in range(3):
        old = _mean._mean_numeric(ln_f[k], r)
        if not math.isfinite(old.point):
            assert not math.isfinite(new[k].point)
            continue
        tol = 1e-11 * max(1.0, abs(old.point))  # the direct sums' own rounding
        assert new[k].lower <= old.lower + tol
        assert new[k].upper >= old.upper - tol
        assert (new[k].upper - new[k].lower) <= (old.upper - old.lower) + 2 * _mean.FFT_MAX_REL
        assert old.lower - tol <= new[k].point <= old.upper + tol
        assert new[k].lower <= old.point <= new[k].upper
        assert abs(new[k].point - old.point) <= old.error
        assert new[k].error >= old.error - tol


def _agree_with_direct(new: RankResult, old: RankResult) -> None:
    """FFT answers against the same lattices convolved directly: the same methods, points
    within the direct answer's error, intervals containing the direct ones."""
    err = np.array(_block(old)["numerical_error_log10"], dtype=float)
    assert list(new.method) == list(old.method)
    assert np.all(np.abs(new.log10_v - old.log10_v) <= np.maximum(err, 1e-12))
    assert np.all(new.log10_lo <= old.log10_lo + 1e-12)
    assert np.all(new.log10_hi >= old.log10_hi - 1e-12)


def _block(res: RankResult) -> dict[str, Any]:
    block = res.tail.as_json()["aggregate"]
    assert isinstance(block, dict)
    return block


@pytest.mark.parametrize(("r", "t"), [(25, [0.4, 0.8, 1.2]), (64, [0.9, 1.0, 1.1])])
def test_per_value_lattices_agree_with_the_direct_method(
    monkeypatch: pytest.MonkeyPatch, r: int, t: list[float]
) -> None:
    """The per-value path (atoms; the shared path's oracle) against its direct convolution."""
    monkeypatch.setattr(_mean, "SHARED_LATTICES", False)
    curve = _table_curve()
    values = np.array(t)
    new = aggregate_ranks(values, curve, budget=2, runs=r, aggregate="mean")
    monkeypatch.setattr(_mean, "DIRECT_RUNS", 10**9)
    _agree_with_direct(new, aggregate_ranks(values, curve, budget=2, runs=r, aggregate="mean"))


@pytest.mark.parametrize(("r", "t"), [(25, [0.4, 0.8, 1.2]), (64, [0.9, 1.0, 1.1]), (7, [0.05])])
def test_shared_lattices_agree_with_their_direct_convolution(
    monkeypatch: pytest.MonkeyPatch, r: int, t: list[float]
) -> None:
    """Every read of the shared chains from the direct convolution of the same lattice instead
    (``FFT_MAX_REL < 0``): the FFT's rounding bound only widens the bracket."""
    curve = _table_curve()
    values = np.array(t)
    new = aggregate_ranks(values, curve, budget=2, runs=r, aggregate="mean")
    monkeypatch.setattr(_mean, "FFT_MAX_REL", -1.0)
    _agree_with_direct(new, aggregate_ranks(values, curve, budget=2, runs=r, aggregate="mean"))


def _answer(
    curve: V1Curve, t: np.ndarray, r: int, c: int, shared: bool
) -> tuple[RankResult, dict[str, Any]]:
    old = _mean.SHARED_LATTICES
    _mean.SHARED_LATTICES = shared
    try:
        res = aggregate_ranks(t, curve, budget=c, runs=r, aggregate="mean")
    finally:
        _mean.SHARED_LATTICES = old
    return res, _block(res)


@_PROPS
@given(
    t=st.lists(st.floats(min_value=0.05, max_value=1.6), min_size=1, max_size=3),
    r=st.integers(5, 40),
    c=st.sampled_from([1, 3, 20]),
)
def test_shared_lattices_agree_with_the_per_value_lattices(t: list[float], r: int, c: int) -> None:
    """Shared chains (octave lattices) against the per-value lattices they replace (the oracle):
    each point inside the other's rigorous bracket and the other's interval inside its own
    reported interval; the brackets overlap (both hold the same true value)."""
    values = np.array(t)
    new, jn = _answer(_table_curve(), values, r, c, True)
    old, jo = _answer(_table_curve(), values, r, c, False)
    assert list(new.method) == list(old.method)
    bn, bo = np.array(jn["bracket_log10"], float), np.array(jo["bracket_log10"], float)
    vn, vo = new.log10_v, old.log10_v
    tol = 1e-12
    assert np.all((bo[:, 0] - tol <= vn) & (vn <= bo[:, 1] + tol))
    assert np.all((bn[:, 0] - tol <= vo) & (vo <= bn[:, 1] + tol))
    assert np.all(np.maximum(bn[:, 0], bo[:, 0]) <= np.minimum(bn[:, 1], bo[:, 1]) + tol)
    assert np.all((new.log10_lo <= vo + tol) & (vo <= new.log10_hi + tol))


@pytest.mark.parametrize("r", [5, 25, 51])
@pytest.mark.parametrize("d", [2, 10])
def test_shared_and_per_value_lattices_agree_within_their_errors(d: int, r: int) -> None:
    """A smooth law (the unclipped sphere without its power tail, c = 1) where ``E`` is reliable:
    the two paths differ by less than their error estimates, and both by less than their own
    error from the exact Dirichlet form."""
    sphere = _sphere_curve(d)
    assert sphere.power is not None
    curve, limit = dataclasses.replace(sphere, power=None), sphere.power.limit
    t = np.array([1e-9, 1e-3, 0.1, 0.5]) * limit / r
    exact = _dirichlet_ln(sphere, t, r) / LN10
    new, jn = _answer(curve, t, r, 1, True)
    old, jo = _answer(curve, t, r, 1, False)
    en, eo = (np.array(j["numerical_error_log10"], float) for j in (jn, jo))
    assert np.all(np.abs(new.log10_v - old.log10_v) <= en + eo)
    assert np.all(np.abs(new.log10_v - exact) <= en)
    assert np.all(np.abs(old.log10_v - exact) <= eo)


def test_shared_lattice_reads_bound_the_lattice_cdf() -> None:
    """``_lattice.fft_cdf``'s bracket holds the exactly summed lattice CDF of the same chain
    (an exact integer chain: ``C(k)`` in Python ints)."""
    rng = np.random.default_rng(5)
    m, runs = 400, 6
    ints = [int(x) for x in np.floor(np.exp(-0.02 * np.arange(m)) * rng.random(m) * 2**20)]
    ints[0] = 0
    ints[int(np.argmax(ints))] = 2**20
    exact = _exact_power(ints, runs, m)
    exact_cum = np.cumsum(np.array(exact, dtype=object))
    ln_exact = np.array([math.log(int(x)) if x > 0 else -math.inf for x in exact_cum])
    ln_exact -= runs * 20 * math.log(2.0)
    vec = np.array(ints, dtype=np.float64)[None, :] / 2**20
    for theta in (0.0, -0.05, -0.5):
        tilted, ln_tilt, delta = _fft.tilted(np.log(np.maximum(vec, 1e-300)), np.array([theta]))
        out, ln_fold, bound = _fft.power(tilted, delta, runs, m)
        base = float(ln_fold[0] + runs * ln_tilt[0])
        lo, mid, hi = _lattice.fft_cdf(out[0], float(bound[0]), theta, base)
        ok = np.isfinite(ln_exact)
        assert np.all(lo[ok] <= ln_exact[ok] + 1e-12)
        assert np.all(ln_exact[ok] <= hi[ok] + 1e-12)
        assert np.all(np.abs(mid[ok] - ln_exact[ok]) <= np.maximum(hi[ok] - lo[ok], 1e-12))


def test_values_share_the_batched_chains_bit_for_bit() -> None:
    """A value's answer does not depend on the other values of the request."""
    curve = _table_curve()
    t = np.array([0.3, 0.7, 1.1, 1.4])
    together = aggregate_ranks(t, curve, budget=1, runs=30, aggregate="mean")
    for i, value in enumerate(t):
        alone = aggregate_ranks(np.array([value]), curve, budget=1, runs=30, aggregate="mean")
        assert alone.log10_v[0] == together.log10_v[i]
        assert alone.log10_lo[0] == together.log10_lo[i]
        assert alone.log10_hi[0] == together.log10_hi[i]


def test_small_r_is_the_direct_method_bit_for_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    t = np.array([0.4, 0.9])
    new = aggregate_ranks(t, _table_curve(), budget=3, runs=_mean.DIRECT_RUNS, aggregate="mean")
    assert list(new.method) == ["mean-convolution"] * 2
    monkeypatch.setattr(_mean, "_fft", None)  # the FFT is not used at all
    again = aggregate_ranks(t, _table_curve(), budget=3, runs=_mean.DIRECT_RUNS, aggregate="mean")
    np.testing.assert_array_equal(new.log10_v, again.log10_v)


@pytest.mark.parametrize("c", [1, 10])
@pytest.mark.parametrize("r", [64, 200])
def test_large_r_agrees_with_monte_carlo_from_the_same_table(r: int, c: int) -> None:
    curve = _table_curve()
    sample = _sampler(curve)
    rng = np.random.default_rng(31337 + 100 * r + c)
    pilot = _STATISTIC["mean"](sample(rng, (2000, r), c))
    t = np.quantile(pilot, [0.02, 0.3, 0.7])
    m = 20_000
    agg = np.concatenate([_STATISTIC["mean"](sample(rng, (m // 4, r), c)) for _ in range(4)])
    p_mc = (agg[:, None] <= t[None, :]).mean(axis=0)
    se = np.sqrt(p_mc * (1 - p_mc) / m)
    res = aggregate_ranks(t, curve, budget=c, runs=r, aggregate="mean")
    assert set(res.method) == {"mean-convolution"}
    np.testing.assert_array_less(np.abs(res.v - p_mc), 3 * se)


def test_deep_values_of_many_runs_keep_their_digits() -> None:
    """A far left tail (v ~ 1e-100) of r = 128 off the power path: the tilt keeps the FFT's
    bracket as tight as the direct one's."""
    curve = _sphere_curve(3, half=1.0)
    t = np.array([0.35])
    res = aggregate_ranks(
        t, _mean_dataclass_without_power(curve), budget=1, runs=128, aggregate="mean"
    )
    info = res.tail.as_json()["aggregate"]
    lo, hi = info["bracket_log10"][0]
    assert res.method[0] == "mean-convolution"
    assert res.log10_v[0] < -20
    assert lo <= res.log10_v[0] <= hi


def _mean_dataclass_without_power(curve):  # type: ignore[no-untyped-def]
    import dataclasses

    return dataclasses.replace(curve, power=None)


@pytest.mark.parametrize(("aggregate", "r"), [("mean", 3), ("mean", 40), ("median", 6)])
def test_ranks_each_are_the_single_value_answers_bit_for_bit(aggregate: str, r: int) -> None:
    """runs_by_algorithm batches every algorithm's mean or even median (services/ranks/_runs)."""
    curve = _table_curve()
    t = np.array([0.6, 0.2, 0.6, 1.3, 1e-4])
    each = aggregate_ranks_each(t, curve, budget=2, runs=r, aggregate=aggregate)
    for i, value in enumerate(t):
        alone = aggregate_ranks(np.array([value]), curve, budget=2, runs=r, aggregate=aggregate)
        got = each[i]
        for name in ("log10_v", "v", "log10_lo", "log10_hi", "method"):
            np.testing.assert_array_equal(getattr(got, name), getattr(alone, name))
        assert got.tail.as_json() == alone.tail.as_json()
        assert [w.message for w in got.warnings] == [w.message for w in alone.warnings]
