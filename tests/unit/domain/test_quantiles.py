"""Quantiles of a published table curve: q is the inverse of v1 (property tests).

Tables are sampled from distributions whose ``v1`` is known, with ``f* = 0`` so that ``t`` is
exact in float (no rounding of ``f* + e``); ``v1(q(v))`` is evaluated with the service's own
curve (:func:`app.domain.absrank.table_curve`), not with the inverse.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from app.domain import absrank
from app.domain.errors import InvalidInput
from app.domain.quantiles import table_quantiles


def _curve(
    beta: float | None,
    *,
    n: int = 2048,
    atom: float = 0.0,
    f_max: float | None = None,
    seed: int = 0,
) -> absrank.V1Curve:
    """``f(x) = |x|^(1/β)`` per sample on ``[-1, 1]`` (``v1(t) = t^β``), as a table."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, size=(n, 1))
    b = beta or 1.0
    values = np.abs(x[:, 0]) ** (1.0 / b)
    if atom > 0:
        values = np.where(np.abs(x[:, 0]) < 0.05, 0.0, values)
    order = np.argsort(values, kind="stable")
    table = absrank.build_table_data(values, x[order[:256]], k_exact=256, n_knots=256)
    ctx = absrank.RankContext(
        f_opt=0.0,
        f_max=f_max,
        atom=atom,
        beta=beta,
        beta_derivation="test",
        x_opt=np.zeros(1),
        region_lower=np.array([-1.0]),
        region_upper=np.array([1.0]),
    )
    return absrank.table_curve(table, ctx)


CURVES = {
    "power-registered": _curve(0.5),
    "power-hill": _curve(None, seed=1),
    "atom-linear": _curve(None, atom=0.05, f_max=1.0, seed=2),
}


def _ln_v1(curve: absrank.V1Curve, t: np.ndarray) -> np.ndarray:
    return curve.evaluate(t)[0]


@pytest.mark.parametrize("name", list(CURVES))
@settings(max_examples=150, deadline=None)
@given(log10_v=st.floats(min_value=-300.0, max_value=0.0))
def test_v1_of_the_quantile_is_v(name: str, log10_v: float) -> None:
    curve = CURVES[name]
    model = curve.table
    assert model is not None
    v = 10.0**log10_v
    q = table_quantiles(model, np.array([v]))
    method = q.method[0]
    if method == "above-maximum":
        assert v > model.n / (model.n + 1.0)
        assert model.upper.kind == "flat"
        return
    t = q.t[0]
    # t - f* below the normal float range cannot be represented (it rounds, or underflows to 0)
    assume(method != "tail-power" or q.error[0] > 1e-300)
    got = _ln_v1(curve, np.array([t]))[0]
    if method == "atom" or t == 0.0:  # v1 jumps at f*: the left end f*
        assert t == 0.0
        right = _ln_v1(curve, np.array([np.nextafter(0.0, 1.0)]))[0]
        assert max(got, right) >= math.log(v)
        return
    assert got == pytest.approx(math.log(v), abs=1e-9), method
    # and t is the smallest such t: just below it v1 is below v (beyond the rounding of t)
    below = _ln_v1(curve, np.array([t * (1.0 - 1e-7)]))[0]
    assert below < math.log(v) + 1e-12


@pytest.mark.parametrize("name", list(CURVES))
@settings(max_examples=100, deadline=None)
@given(
    levels=st.lists(st.floats(min_value=1e-300, max_value=1.0), min_size=2, max_size=30),
)
def test_quantiles_are_monotone(name: str, levels: list[float]) -> None:
    model = CURVES[name].table
    assert model is not None
    v = np.sort(np.asarray(levels))
    t = table_quantiles(model, v).t
    finite = t[~np.isnan(t)]
    assert np.all(np.diff(finite) >= 0.0)
    # the levels the curve never reaches are the largest ones
    assert np.all(~np.isnan(t[: finite.size]))


def test_power_tail_quantile_is_exact_in_log_space() -> None:
    model = CURVES["power-registered"].table
    assert model is not None
    low = model.lower
    assert low.kind == "power"
    assert low.beta == 0.5
    q = table_quantiles(model, np.array([1e-300]))
    # (t/y_k)^β = v/v_k  =>  t = y_k·(v/v_k)^(1/β): 1e-600-ish relative, far below float's
    # smallest normal; the exact value underflows to 0 only past 1e-308
    expected = math.exp(math.log(low.limit) + (math.log(1e-300) - math.log(low.v_top)) / 0.5)
    assert q.t[0] == expected
    assert q.method[0] == "tail-power"


def test_levels_outside_0_1_are_refused() -> None:
    model = CURVES["power-hill"].table
    assert model is not None
    for bad in (0.0, -1.0, 1.5, math.nan):
        with pytest.raises(InvalidInput) as err:
            table_quantiles(model, np.array([bad]))
        assert err.value.field == "v"


def test_the_published_model_reproduces_the_curve() -> None:
    """The TableCurve fields, evaluated by the documented formula, give curve.evaluate."""
    for name, curve in CURVES.items():
        m = curve.table
        assert m is not None
        t = np.concatenate(([-1.0, 0.0], np.geomspace(1e-12, 2.0, 400), m.values[:50]))
        n1 = m.n + 1.0
        low, up = m.lower, m.upper
        with np.errstate(divide="ignore", invalid="ignore"):
            if low.kind == "power":
                assert low.beta is not None
                tail = low.v_top * (np.maximum(t, 0.0) / low.limit) ** low.beta
            else:
                tail = m.atom + (low.v_top - m.atom) * t / low.limit
            mid = np.interp(t, m.values, m.counts) / n1
            if up.kind == "flat":
                upper = np.full(t.shape, m.n / n1)
            else:
                assert up.f_max is not None
                upper = (m.n + np.clip((t - up.y_n) / (up.f_max - up.y_n), 0, 1)) / n1
            v = np.where(t < low.limit, tail, np.where(t <= up.y_n, mid, upper))
            v = np.where(t > 0, np.maximum(v, m.atom), np.where(t == 0, m.atom, 0.0))
            expected = np.log(v)
        got = curve.evaluate(t)[0]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0, err_msg=name)
