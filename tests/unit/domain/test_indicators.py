"""Front quality indicators against pymoo / moocore, hand-computed cases and input validation.

Peers: ``pymoo.indicators`` (hv.HV, igd.IGD, igd_plus.IGDPlus, gd.GD, gd_plus.GDPlus,
spacing.SpacingIndicator) and ``moocore.avg_hausdorff_dist`` (Δp).
"""

from __future__ import annotations

import math

import moocore
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pymoo.indicators.gd import GD
from pymoo.indicators.gd_plus import GDPlus
from pymoo.indicators.hv import HV
from pymoo.indicators.igd import IGD
from pymoo.indicators.igd_plus import IGDPlus
from pymoo.indicators.spacing import SpacingIndicator

from app.domain.errors import InvalidInput
from app.domain.indicators import INDICATORS, compute_indicators

TOL = 1e-9


def _random_case(seed: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    ref = np.abs(rng.normal(size=(40, m)))
    ref /= np.linalg.norm(ref, axis=1, keepdims=True)  # points on the unit sphere's positive part
    front = ref[:25] + rng.uniform(-0.05, 0.3, size=(25, m))
    return front, ref, np.full(m, 1.5)


# ---------------------------------------------------------------------------- peers


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("m", [2, 3, 4])
def test_agrees_with_pymoo(seed: int, m: int) -> None:
    front, ref, point = _random_case(seed, m)
    res = compute_indicators(front, reference_front=ref, reference_point=point)
    peers = {
        "hv": HV(ref_point=point).do(front),
        "igd": IGD(ref).do(front),
        "igd_plus": IGDPlus(ref).do(front),
        "gd": GD(ref).do(front),
        "gd_plus": GDPlus(ref).do(front),
        # pymoo divides by n, Schott by n - 1
        "spacing": SpacingIndicator().do(front) * math.sqrt(len(front) / (len(front) - 1)),
    }
    for name, peer in peers.items():
        assert res.values[name] == pytest.approx(peer, rel=TOL, abs=TOL), name
    assert res.values["hv"] > 0


@pytest.mark.parametrize("p", [1, 2, 3])
def test_delta_p_agrees_with_moocore(p: int) -> None:
    front, ref, _ = _random_case(7, 3)
    res = compute_indicators(front, reference_front=ref, indicators=["delta_p"], p=p)
    peer = moocore.avg_hausdorff_dist(front, ref, p=p)
    assert res.values["delta_p"] == pytest.approx(peer, rel=TOL)
    assert res.settings["p"] == float(p)


def test_delta_p_at_p1_is_max_gd_igd() -> None:
    front, ref, _ = _random_case(3, 2)
    v = compute_indicators(front, reference_front=ref, indicators=["gd", "igd", "delta_p"]).values
    assert v["delta_p"] == pytest.approx(max(v["gd"], v["igd"]), rel=TOL)


# ---------------------------------------------------------------------------- hand-computed


def test_tiny_hand_case() -> None:
    res = compute_indicators(
        [[1, 3], [2, 2], [3, 1]], reference_front=[[0, 3], [3, 0]], reference_point=[4, 4]
    )
    v = res.values
    assert v["hv"] == pytest.approx(6.0)  # 3·1 + 2·1 + 1·1
    assert v["igd"] == pytest.approx(1.0)  # (0,3)→(1,3), (3,0)→(3,1)
    assert v["igd_plus"] == pytest.approx(1.0)
    assert v["gd"] == pytest.approx((2 + math.sqrt(5)) / 3)
    assert v["gd_plus"] == pytest.approx(4 / 3)  # d+ = 1, 2, 1
    assert v["spacing"] == pytest.approx(0.0)  # every L1 nearest-neighbour distance is 2
    assert v["spread"] == pytest.approx(math.sqrt(2) - 1)  # (1 + 1 + 0) / (1 + 1 + 2√2)
    assert v["delta_p"] == pytest.approx(v["gd"])
    assert list(v) == list(INDICATORS)
    assert res.settings["orientation"] == "minimize"
    assert res.settings["normalization"] == "none"
    assert res.settings["reference_point"] == [4.0, 4.0]


def test_hv_ignores_points_not_strictly_dominating_the_reference() -> None:
    res = compute_indicators([[1, 1], [4, 0], [5, 5]], reference_point=[4, 4], indicators=["hv"])
    assert res.values["hv"] == pytest.approx(9.0)
    assert res.settings["hv_points_counted"] == 1


def test_spacing_hand_case() -> None:
    # L1 nearest-neighbour distances 1, 1, 6 → mean 8/3, S = sqrt((25/9 + 25/9 + 100/9) / 2)
    v = compute_indicators([[0, 4], [0, 5], [4, 2]], indicators=["spacing"]).values
    assert v["spacing"] == pytest.approx(math.sqrt(75 / 9))


def test_spread_zero_for_uniform_front_through_extremes() -> None:
    ref = np.array([[0.0, 1.0], [0.25, 0.75], [0.5, 0.5], [0.75, 0.25], [1.0, 0.0]])
    v = compute_indicators(ref, reference_front=ref, indicators=["spread"]).values
    assert v["spread"] == pytest.approx(0.0, abs=1e-12)
    simplex = np.eye(3)  # 3 objectives: extremes covered, equal nearest-neighbour distances
    v3 = compute_indicators(simplex, reference_front=simplex, indicators=["spread"]).values
    assert v3["spread"] == pytest.approx(0.0, abs=1e-12)


def _own_box_hv(front: np.ndarray) -> float:
    # the per-set normalization we refuse: each set scaled to its own [min, max] box, ref 1.1
    lo, hi = front.min(axis=0), front.max(axis=0)
    return float(moocore.hypervolume((front - lo) / (hi - lo), ref=[1.1, 1.1]))


def test_shared_reference_point_keeps_an_order_per_set_normalization_inverts() -> None:
    a = np.array([[0.0, 4.0], [4.0, 0.0], [2.0, 2.0]])  # (2, 2) dominates every point of b
    b = np.array([[3.0, 4.0], [4.0, 3.0], [3.1, 3.1]])
    assert _own_box_hv(b) > _own_box_hv(a)  # per-set normalization says b > a (wrong)
    hv = {
        name: compute_indicators(f, reference_point=[5, 5], indicators=["hv"]).values["hv"]
        for name, f in (("a", a), ("b", b))
    }
    assert hv["a"] > hv["b"]
    # staircases against (5, 5), slabs left to right
    assert hv["a"] == pytest.approx(2 * 1 + 2 * 3 + 1 * 5)  # 13
    assert hv["b"] == pytest.approx(0.1 * 1 + 0.9 * 1.9 + 1 * 2)  # 3.81


# ---------------------------------------------------------------------------- properties

FRONTS = hnp.arrays(
    np.float64,
    st.tuples(st.integers(2, 8), st.just(2)),
    elements=st.floats(0, 10, allow_nan=False, allow_infinity=False),
)


@settings(max_examples=60, deadline=None)
@given(front=FRONTS, ref=FRONTS)
def test_plus_variants_never_exceed_plain(front: np.ndarray, ref: np.ndarray) -> None:
    v = compute_indicators(
        front, reference_front=ref, indicators=["gd", "gd_plus", "igd", "igd_plus"]
    ).values
    assert v["gd_plus"] <= v["gd"] + 1e-12
    assert v["igd_plus"] <= v["igd"] + 1e-12


@settings(max_examples=60, deadline=None)
@given(front=FRONTS, extra=hnp.arrays(np.float64, 2, elements=st.floats(0, 10)))
def test_hv_monotone_under_adding_a_point(front: np.ndarray, extra: np.ndarray) -> None:
    point = [11.0, 11.0]
    before = compute_indicators(front, reference_point=point, indicators=["hv"]).values["hv"]
    bigger = np.vstack([front, extra])
    after = compute_indicators(bigger, reference_point=point, indicators=["hv"]).values["hv"]
    assert after >= before - 1e-9


# ---------------------------------------------------------------------------- validation


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("where", ["front", "reference_front", "reference_point"])
def test_non_finite_refused(bad: float, where: str) -> None:
    kwargs: dict[str, object] = {
        "front": [[1.0, 2.0], [2.0, 1.0]],
        "reference_front": [[0.0, 2.0], [2.0, 0.0]],
        "reference_point": [3.0, 3.0],
    }
    value = np.array(kwargs[where], dtype=float)
    value.flat[0] = bad
    kwargs[where] = value
    front = kwargs.pop("front")
    with pytest.raises(InvalidInput, match="finite") as info:
        compute_indicators(front, **kwargs)  # type: ignore[arg-type]
    assert info.value.field == where


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"reference_front": [[0.0, 1.0, 2.0]]}, "reference_front"),
        ({"reference_point": [3.0, 3.0, 3.0]}, "reference_point"),
        ({"reference_point": [[3.0, 3.0]]}, "reference_point"),
    ],
)
def test_dimension_mismatch_names_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        compute_indicators([[1.0, 2.0], [2.0, 1.0]], indicators=["spacing"], **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize("front", [[1.0, 2.0], [], [[]], [["a", "b"]]])
def test_bad_front_refused(front: object) -> None:
    with pytest.raises(InvalidInput) as info:
        compute_indicators(front, reference_point=[3, 3], indicators=["hv"])  # type: ignore[arg-type]
    assert info.value.field == "front"


@pytest.mark.parametrize(
    ("indicators", "field"),
    [(["hv"], "reference_point"), (["igd"], "reference_front"), (["spread"], "reference_front")],
)
def test_missing_reference_is_named(indicators: list[str], field: str) -> None:
    with pytest.raises(InvalidInput, match="required") as info:
        compute_indicators([[1.0, 2.0], [2.0, 1.0]], indicators=indicators)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"indicators": ["hv", "nope"]}, "indicators"),
        ({"indicators": []}, "indicators"),
        ({"indicators": "hv"}, "indicators"),
        ({"p": 0.0}, "p"),
        ({"p": math.nan}, "p"),
        ({"p": "2"}, "p"),
    ],
)
def test_bad_options_refused(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        compute_indicators([[1.0, 2.0]], reference_point=[3, 3], **kwargs)  # type: ignore[arg-type]
    assert info.value.field == field


def test_spacing_needs_two_points() -> None:
    with pytest.raises(InvalidInput, match="at least 2") as info:
        compute_indicators([[1.0, 2.0]], indicators=["spacing"])
    assert info.value.field == "front"
