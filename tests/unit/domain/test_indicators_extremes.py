"""Indicators at the extremes (issue 13 item 6): dirty reference fronts and underflowing HV.

References: moocore's and pymoo's IGD / IGD+ / GD / GD+ on the reference front cleaned here by a
brute-force dominance loop (independent of the moocore non-dominated sorting the code uses), and
the hypervolume as an exact :class:`fractions.Fraction` over the grid of the points' coordinates.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import moocore
import numpy as np
import pytest
from pymoo.indicators.gd import GD
from pymoo.indicators.gd_plus import GDPlus
from pymoo.indicators.igd import IGD
from pymoo.indicators.igd_plus import IGDPlus

from app.domain.indicators import compute_indicators, log10_hypervolume

TOL = 1e-12


def _clean(z: np.ndarray) -> np.ndarray:
    """Distinct rows no other row dominates, first occurrences in order (brute force)."""
    distinct: list[np.ndarray] = []
    for row in z:
        if not any(np.array_equal(row, d) for d in distinct):
            distinct.append(row)
    keep = [
        a
        for a in distinct
        if not any(bool((b <= a).all() and (b < a).any()) for b in distinct if b is not a)
    ]
    return np.asarray(keep)


def _dirty_case(seed: int, m: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    rng = np.random.default_rng(seed)
    clean = np.abs(rng.normal(size=(30, m)))
    clean /= np.linalg.norm(clean, axis=1, keepdims=True)  # mutually non-dominated
    dominated = clean[:8] + rng.uniform(0.01, 0.3, size=(8, m))
    repeated = clean[rng.integers(0, 30, size=6)]
    repeated_dominated = dominated[:2]  # a dominated row sent twice: one repeat, one dominated
    z = np.vstack([clean, dominated, repeated, repeated_dominated])
    z = z[rng.permutation(z.shape[0])]
    front = clean[:15] + rng.uniform(-0.05, 0.3, size=(15, m))
    return front, z, clean, 6 + 2, 8


@pytest.mark.parametrize(("seed", "m"), [(0, 2), (1, 3), (2, 4)])
def test_dirty_reference_front_gives_the_peers_value_on_the_clean_front(seed: int, m: int) -> None:
    front, z, clean, n_repeated, n_dominated = _dirty_case(seed, m)
    assert _clean(z).shape == clean.shape
    res = compute_indicators(
        front, reference_front=z, indicators=["igd", "igd_plus", "gd", "gd_plus", "delta_p"]
    )
    ref = _clean(z)
    peers = {
        "igd": (float(moocore.igd(front, ref=ref)), float(IGD(ref)(front))),
        "igd_plus": (float(moocore.igd_plus(front, ref=ref)), float(IGDPlus(ref)(front))),
        "gd": (float(GD(ref)(front)),),
        "gd_plus": (float(GDPlus(ref)(front)),),
        "delta_p": (float(moocore.avg_hausdorff_dist(front, ref=ref, p=1)),),
    }
    for name, values in peers.items():
        for v in values:
            assert res.values[name] == pytest.approx(v, rel=TOL, abs=TOL), name
    info = res.reference_front_filter
    assert info is not None
    assert (info.n_given, info.duplicates_removed, info.dominated_removed, info.n_used) == (
        z.shape[0],
        n_repeated,
        n_dominated,
        clean.shape[0],
    )
    assert res.settings["n_reference"] == clean.shape[0]
    # the fix matters: the peers on the dirty front give other values
    assert abs(float(moocore.igd(front, ref=z)) - res.values["igd"]) > 1e-6
    assert abs(float(moocore.igd_plus(front, ref=z)) - res.values["igd_plus"]) > 1e-6


def test_clean_reference_front_is_reported_untouched() -> None:
    z = np.array([[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]])
    res = compute_indicators([[0.2, 0.9]], reference_front=z, indicators=["igd"])
    assert res.values["igd"] == pytest.approx(float(moocore.igd(np.array([[0.2, 0.9]]), ref=z)))
    info = res.reference_front_filter
    assert info is not None
    assert (info.duplicates_removed, info.dominated_removed, info.n_used) == (0, 0, 3)
    no_ref = compute_indicators([[0.2, 0.9]], reference_point=[2, 2], indicators=["hv"])
    assert no_ref.reference_front_filter is None


def test_weakly_dominated_and_all_repeated_rows() -> None:
    # [1, 1] is weakly dominated by [0, 1] (equal in one objective): removed
    res = compute_indicators(
        [[0.5, 0.5]], reference_front=[[0, 1], [1, 1], [1, 0], [1, 0], [1, 0]], indicators=["igd"]
    )
    info = res.reference_front_filter
    assert info is not None
    assert (info.duplicates_removed, info.dominated_removed, info.n_used) == (2, 1, 2)
    clean = np.array([[0.0, 1.0], [1.0, 0.0]])
    assert res.values["igd"] == pytest.approx(float(moocore.igd(np.array([[0.5, 0.5]]), ref=clean)))
    one = compute_indicators([[0.5, 0.5]], reference_front=[[1, 2]] * 4, indicators=["gd"])
    assert one.reference_front_filter is not None
    assert one.reference_front_filter.n_used == 1
    assert one.values["gd"] == pytest.approx(math.hypot(0.5, 1.5))


# ------------------------------------------------------------------ hypervolume below the range


def _exact_hv(front: np.ndarray, ref: np.ndarray) -> Fraction:
    """Exact HV: sum of the grid cells (from all coordinates) dominated by some point."""
    pts = [[Fraction(float(x)) for x in p] for p in front if (p < ref).all()]
    r = [Fraction(float(x)) for x in ref]
    m = len(r)
    axes = [sorted({p[k] for p in pts} | {r[k]}) for k in range(m)]
    total = Fraction(0)
    for cell in itertools.product(*(range(len(a) - 1) for a in axes)):
        lo = [axes[k][cell[k]] for k in range(m)]
        if any(all(p[k] <= lo[k] for k in range(m)) for p in pts):
            vol = Fraction(1)
            for k in range(m):
                vol *= axes[k][cell[k] + 1] - lo[k]
            total += vol
    return total


def _log10(x: Fraction) -> float:
    return math.log10(x.numerator) - math.log10(x.denominator)


_CASES = [
    # 2 objectives, points 1e-200 from the reference point: HV ~ 1e-400 underflows to 0
    (np.array([[-1e-200, -3e-200], [-2e-200, -1e-200], [-1.5e-200, -2e-200]]), np.zeros(2)),
    # shifted reference point, differences of different magnitude per objective
    (np.array([[1.0 - 2**-45, 0.0], [1.0 - 2**-46, -1e-300]]), np.array([1.0, 1e-300])),
    # 3 objectives, differences ~ 1e-110: HV ~ 1e-330
    (
        np.array([[-1e-110, -2e-110, -3e-110], [-3e-110, -1e-110, -1e-110], [-2e-110] * 3]),
        np.zeros(3),
    ),
    # subnormal HV (1e-311): digits lost, log10 keeps them
    (np.array([[-1e-306, -1e-5], [-5e-307, -2e-5]]), np.zeros(2)),
]


@pytest.mark.parametrize(("front", "ref"), _CASES)
def test_log10_hv_below_the_float_range_against_fractions(
    front: np.ndarray, ref: np.ndarray
) -> None:
    exact = _exact_hv(front, ref)
    assert exact > 0
    want = _log10(exact)
    res = compute_indicators(front, reference_point=ref, indicators=["hv"])
    assert res.values["hv"] < np.finfo(float).tiny  # the float HV left the range
    assert res.log10_hv == pytest.approx(want, abs=1e-12)
    w = res.hv_underflow
    assert w is not None
    assert w.kind == "hv-underflow"
    assert w.points_counted == front.shape[0]
    assert w.log10_hv == res.log10_hv
    assert log10_hypervolume(front, ref) == res.log10_hv


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log10_hv_in_range_is_log10_of_hv_and_no_warning(seed: int) -> None:
    rng = np.random.default_rng(seed)
    m = 2 + seed % 2
    front = rng.uniform(0, 1, size=(5, m))
    ref = np.full(m, 1.25)
    res = compute_indicators(front, reference_point=ref, indicators=["hv"])
    assert res.hv_underflow is None
    assert res.log10_hv == pytest.approx(_log10(_exact_hv(front, ref)), abs=1e-12)


def test_no_point_counted_gives_no_log10_and_no_underflow() -> None:
    res = compute_indicators([[1.0, 1.0]], reference_point=[0.5, 0.5], indicators=["hv"])
    assert res.values["hv"] == 0.0
    assert res.log10_hv is None
    assert res.hv_underflow is None


def test_scaling_refused_when_inexact_says_so() -> None:
    # objective 1 spans 1e300 with a subnormal coordinate: scaling it down by 2^-997 would lose
    # that coordinate, so log10_hv is not given; the warning still says the HV underflowed
    front = np.array([[1e-310, 0.0, 0.0]])
    ref = np.array([1e300, 1e-310, 1e-310])
    assert _exact_hv(front, ref) > 0
    res = compute_indicators(front, reference_point=ref, indicators=["hv"])
    assert res.values["hv"] < np.finfo(float).tiny
    assert res.log10_hv is None
    assert res.hv_underflow is not None
    assert res.hv_underflow.log10_hv is None
    assert "not computable" in res.hv_underflow.message
