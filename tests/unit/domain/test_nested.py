"""Deep lower tails by nested regions (SPEC §3.4) against exact ``v1`` far below ``1/N``.

Targets are ``t = f* + 10^-k·(y_1 − f*)``, ``k = 2..8``, with ``y_1`` the smallest sample of the
whole-domain table. Measured with these seeds (decades, estimate − exact, k = 2..8):

* sphere d10, N = 2^16, factor 2, 8 levels: nested +0.013 +0.055 +0.013 … +0.013 (the
  single-table power tail is exact for the sphere too: +0.013).
* cone (pyramid) d10, same ladder: nested −0.001 −0.013 … −0.013; single table −0.013.
* ellipsoid d10, condition 1e6: single table: power tail refused (clipped), linear tail
  +6.0 +10.0 +14.0 … +30.0; the power law with the registered β = 5 anchored at y_100 anyway:
  −4.6 to −4.7; cubic ladder: every level refused (its own samples reach its faces), so nested =
  single table; ladder shaped like the ellipsoid (half-widths ∝ 1/sqrt(w_i), 24 levels): nested
  −0.03 +0.03 +0.01 +0.01 +0.06 +0.01 +0.01.
* BBOB f21/i1/d10 against the exact quadratic-form volume: single table auto: power refused,
  linear +3.9 +5.4 +6.7 +8.4 +9.7 +11.4 +12.8; registered β = d/4 forced at y_100: +1.35 +1.42
  +1.18 +1.34 +1.16 +1.37 +1.31; nested (factor 2, 8 levels) +0.17 −0.06 −0.30 −0.15 −0.12 +0.13
  −0.08; nested (factor 1.25, 30 levels) −0.03 +0.14 +0.01 −0.04 +0.08 −0.04 −0.12.
* BBOB f22/i1/d10 (k = 3..8; at k = 2 the reference ellipsoid leaves Ω): single table linear
  +4.9 +6.3 +7.9 +9.4 +11.0 +12.5; β = d/4 forced at y_100: +1.0 +0.9 +1.0 +1.0 +1.1 +1.1;
  nested: every level refused (the rotated condition-1e3 quadratic form fills a share 1.6e-8 of
  the smallest cube around it, so every box's own samples reach its faces) = single table.

The service's ladders (``ladder_shape`` + ``plan_ladder``: boxes shaped like the fitted local
sublevel ellipsoid, factor 2, down to a volume fraction of 1e-60, at most 32 levels):

* ellipsoid d10, shape = 1/sqrt(w_i) to 0.2% (3 digits), 25 levels: N = 2^16 −0.03 +0.03 +0.02
  +0.02 +0.07 +0.02 +0.02; N = 2^15 +0.02 +0.08 +0.08 +0.07 +0.08 +0.08 +0.08; N = 2^14
  +0.00 −0.03 +0.05 +0.05 +0.05 +0.05 +0.05.
* sphere d10 (fitted isotropic: cubes), 20 levels, N = 2^16: as above, +0.013 … +0.055; the
  cone d10 (exactly isotropic), 20 levels: −0.013 to +0.004.
* f21/i1/d10 (shape = the form's bounding box to 0.1%; fills 10^-3.6 of it), 21 levels, levels
  15-21 skipped (f − f* below the rounding of f*), N = 2^16: +0.18 +0.13 −0.04 −0.08 −0.17 +0.23
  +0.03 (cubes of the same plan: +0.17 −0.06 −0.30 −0.15 −0.12 +0.13 −0.08); N = 2^14: up to
  +1.5 at k = 4, shaped or not.
* f22/i1/d10 (shape to 0.1%, but the rotated set fills 10^-6.25 of its bounding box): only
  level 2 of 21 is used, k = 3..8: +2.4 +3.7 +5.4 +6.9 +8.5 +9.9 (its clipped linear tail;
  warned) — axis-aligned boxes cannot sample it.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
from scipy import special

from app.domain import absrank, nested, sampling
from app.domain.absrank import RankContext
from app.domain.analytic import sphere_ln_cdf
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.functions import get_function
from app.domain.nested import (
    NestedLevel,
    ladder_boxes,
    ladder_deltas,
    ladder_shape,
    nested_curve,
    plan_ladder,
)

LN10 = math.log(10.0)
KS = np.arange(2, 9)
K_EXACT = 4096


@dataclass(frozen=True)
class _Problem:
    """What a ladder needs to know about a function."""

    f: Callable[[np.ndarray], np.ndarray]
    lower: np.ndarray
    upper: np.ndarray
    x_opt: np.ndarray
    f_opt: float
    beta: float | None
    f_max: float | None = None


def _registered(function_id: str) -> _Problem:
    fn = get_function(function_id)
    assert fn.x_opt is not None
    assert fn.f_opt is not None
    return _Problem(fn.evaluate, fn.lower, fn.upper, fn.x_opt, fn.f_opt, fn.local.beta, fn.f_max)


def _table(f: Callable[[np.ndarray], np.ndarray], lower: np.ndarray, upper: np.ndarray, log2n: int):
    n = 2**log2n
    chunk = sampling.evaluate_chunk(f, lower, upper, 0, 0, n, K_EXACT)
    values, low_x, _ = sampling.merge_chunk_results([chunk], K_EXACT)
    return absrank.build_table_data(values, low_x, k_exact=K_EXACT)


def _ladder(
    p: _Problem,
    *,
    factor: float = 2.0,
    levels: int = 8,
    log2n: int = 16,
    shape: np.ndarray | None = None,
    x_opt: np.ndarray | None = None,
) -> list[NestedLevel]:
    """Box tables R_0 = Ω ⊃ R_1 ⊃ … built directly (no database), cubes unless ``shape``."""
    centre = p.x_opt if x_opt is None else x_opt
    boxes = ladder_boxes(p.lower, p.upper, centre, factor=factor, levels=levels, shape=shape)
    return _levels(p, boxes, log2n, centre)


def _oriented_table(p: _Problem, box: nested.LadderBox, log2n: int) -> absrank.TableData:
    assert box.axes is not None
    assert box.half_widths is not None
    n = 2**log2n
    chunk = sampling.evaluate_oriented_chunk(
        p.f, p.x_opt, box.axes, box.half_widths, p.lower, p.upper, 0, 0, n, K_EXACT
    )
    values, low_x, _ = sampling.merge_chunk_results([chunk], K_EXACT)
    return absrank.build_table_data(values, low_x, k_exact=K_EXACT)


def _levels(
    p: _Problem, boxes: list[nested.LadderBox], log2n: int, centre: np.ndarray
) -> list[NestedLevel]:
    out = []
    for box in boxes:
        if box.oriented:
            ctx = RankContext(
                p.f_opt, None, 0.0, p.beta, "registered", centre, box.lower, box.upper
            )
            table = _oriented_table(p, box, log2n)
            out.append(
                NestedLevel(
                    table,
                    ctx,
                    box.ln_volume_fraction,
                    box.delta,
                    {"tag": box.level},
                    axes=box.axes,
                    half_widths=box.half_widths,
                )
            )
            continue
        ctx = RankContext(
            f_opt=p.f_opt,
            f_max=p.f_max if box.level == 0 else None,
            atom=0.0,
            beta=p.beta,
            beta_derivation="registered",
            x_opt=centre,
            region_lower=box.lower,
            region_upper=box.upper,
            domain_volume_fraction=math.exp(box.ln_volume_fraction),
        )
        table = _table(p.f, box.lower, box.upper, log2n)
        out.append(NestedLevel(table, ctx, box.ln_volume_fraction, box.delta, {"tag": box.level}))
    return out


def _shape(function_id: str) -> nested.LadderShape:
    """:func:`ladder_shape` as the service calls it (degree d/β from the registry)."""
    fn = get_function(function_id)
    degree = fn.dim / fn.local.beta if fn.local.beta else None
    return ladder_shape(fn.evaluate, fn.x_opt, fn.f_opt, fn.lower, fn.upper, degree=degree)


def _service_ladder(
    function_id: str,
    *,
    log2n: int = 16,
    factor: float = 2.0,
    max_levels: int = 32,
    min_log10_volume: float = -60.0,
    oriented: bool = True,
) -> tuple[list[NestedLevel], nested.LadderShape, nested.LadderPlan]:
    """The ladder the service builds (``app.services.tables.ladder_plan``'s domain calls).

    ``oriented=False``: axis-aligned boxes only (the ladders before oriented boxes).
    """
    p = _registered(function_id)
    shape = _shape(function_id)
    plan = plan_ladder(
        p.lower,
        p.upper,
        p.x_opt,
        factor=factor,
        max_levels=max_levels,
        min_log10_volume=min_log10_volume,
        shape=np.asarray(shape),
        orientation=shape.orientation if oriented else None,
    )
    return _levels(p, plan.boxes, log2n, p.x_opt), shape, plan


def _targets(levels: list[NestedLevel], ks: np.ndarray = KS) -> np.ndarray:
    f_opt = float(levels[0].ctx.f_opt)  # type: ignore[arg-type]
    y_1 = float(levels[0].table.values[0])
    return f_opt + 10.0 ** -ks.astype(float) * (y_1 - f_opt)


def _decades(ln_a: np.ndarray, ln_b: np.ndarray) -> np.ndarray:
    return (np.asarray(ln_a) - np.asarray(ln_b)) / LN10


def _ball_ln_v(s: np.ndarray, d: int, ln_domain_volume: float) -> np.ndarray:
    """``ln`` of ``π^{d/2} s^{d/2}/(Γ(d/2+1)·Leb(Ω))``: the unclipped ball of radius ``sqrt(s)``."""
    ln_vd = 0.5 * d * math.log(math.pi) - special.gammaln(0.5 * d + 1.0)
    return ln_vd + 0.5 * d * np.log(s) - ln_domain_volume


def _single_table(levels: list[NestedLevel]) -> absrank.V1Curve:
    return absrank.table_curve(levels[0].table, levels[0].ctx)


def _forced_power(levels: list[NestedLevel], t: np.ndarray, beta: float, k: int = 100):
    """The whole-domain power law with the registered β anchored at ``y_k``, validity unchecked."""
    table, f_opt = levels[0].table, float(levels[0].ctx.f_opt)  # type: ignore[arg-type]
    y_k = float(table.low_values[k - 1])
    count = float(np.interp(y_k, table.values, table.counts))
    return math.log(count / (table.n + 1)) + beta * np.log((t - f_opt) / (y_k - f_opt))


# ---------------------------------------------------------------- geometry ----------------


def test_ladder_deltas_halve_the_covering_cube() -> None:
    deltas = ladder_deltas(np.full(2, -5.0), np.full(2, 5.0), [1.0, 0.0], factor=2.0, levels=3)
    assert deltas == (None, 3.0, 1.5, 0.75)
    boxes = ladder_boxes(np.full(2, -5.0), np.full(2, 5.0), [1.0, 0.0], factor=2.0, levels=3)
    assert boxes[0].ln_volume_fraction == 0.0
    np.testing.assert_array_equal(boxes[1].lower, [-2.0, -3.0])
    np.testing.assert_array_equal(boxes[1].upper, [4.0, 3.0])
    for outer, inner in itertools.pairwise(boxes):
        assert np.all(inner.lower >= outer.lower)
        assert np.all(inner.upper <= outer.upper)
        assert inner.ln_volume_fraction < outer.ln_volume_fraction
    # R_3 = [0.25, 1.75] x [-0.75, 0.75]: (1.5/10)^2
    assert boxes[3].ln_volume_fraction == pytest.approx(2 * math.log(0.15), rel=1e-14)


def test_ladder_boxes_match_region_box_of_their_delta() -> None:
    lower, upper, x = np.full(3, -5.0), np.full(3, 5.0), np.array([4.5, -1.0, 0.0])
    for box in ladder_boxes(lower, upper, x, factor=3.0, levels=4)[1:]:
        r_lo, r_hi = sampling.region_box(lower, upper, x, box.delta)
        assert r_lo.tobytes() == box.lower.tobytes()
        assert r_hi.tobytes() == box.upper.tobytes()


def test_shaped_ladder_scales_each_coordinate() -> None:
    boxes = ladder_boxes(
        np.full(2, -1.0), np.full(2, 1.0), np.zeros(2), factor=2.0, levels=2, shape=[1.0, 0.1]
    )
    assert boxes[1].delta == 5.0  # the cube of half-width 1/0.1 covers the domain
    np.testing.assert_allclose(boxes[1].upper, [1.0, 0.5])
    np.testing.assert_allclose(boxes[2].upper, [1.0, 0.25])


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"factor": 1.0}, InvalidInput, "factor"),
        ({"factor": float("nan")}, InvalidInput, "factor"),
        ({"factor": True}, InvalidInput, "factor"),
        ({"levels": -1}, InvalidInput, "levels"),
        ({"levels": 2.0}, InvalidInput, "levels"),
        ({"x_opt": None}, NotApplicable, "x_opt"),
        ({"x_opt": [2.0, 0.0]}, InvalidInput, "x_opt"),
        ({"shape": [1.0, 0.0]}, InvalidInput, "shape"),
    ],
)
def test_ladder_arguments_are_checked(kwargs: dict, error: type, field: str) -> None:
    args: dict = {"x_opt": [0.0, 0.0], "factor": 2.0, "levels": 2} | kwargs
    with pytest.raises(error) as info:
        ladder_boxes(np.full(2, -1.0), np.full(2, 1.0), **args)
    assert info.value.field == field


# ---------------------------------------------------------------- the shape ---------------


def _fill_share(dim: int) -> float:
    """``log10(V_d/2^d)``: the share of its bounding box an axis-aligned ellipsoid fills."""
    return (0.5 * dim * math.log(math.pi) - math.lgamma(0.5 * dim + 1.0)) / LN10 - dim * math.log10(
        2
    )


@pytest.mark.parametrize("dim", [2, 10, 20])
def test_shape_recovers_the_ellipsoid_axes(dim: int) -> None:
    shape = _shape(f"classic/ellipsoid/d{dim}")
    w = get_function(f"classic/ellipsoid/d{dim}").evaluate(np.eye(dim))
    want = 1.0 / np.sqrt(w)
    np.testing.assert_allclose(shape.half_widths, want / want.max(), rtol=5e-3)  # 3 digits
    np.testing.assert_array_equal(np.asarray(shape), shape.half_widths)
    assert (shape.model, shape.degree, shape.fallback) == ("quadratic-form", 2.0, None)
    assert shape.fit_residual is not None
    assert shape.fit_residual == 0.0  # an exact quadratic form: rounding noise only
    assert shape.condition == pytest.approx(1e6, rel=1e-3)
    assert shape.log10_fill_share == pytest.approx(_fill_share(dim), abs=0.01)
    assert shape.probes == 3 * 2 * dim**2  # 3 levels × (2d axes + 2d(d-1) pair diagonals)


@pytest.mark.parametrize("function_id", ["classic/sphere/d10", "bbob/f1/i1/d10"])
def test_shape_of_the_sphere_is_the_cube(function_id: str) -> None:
    shape = _shape(function_id)  # bbob/f1: x* off-centre, f* != 0
    assert shape.half_widths.tolist() == [1.0] * 10
    assert shape.is_cube
    assert shape.fallback is None  # fitted isotropic, not a fallback
    assert shape.fit_residual is not None
    assert shape.fit_residual < 1e-6


def test_shape_of_the_cone_is_isotropic() -> None:
    # the sublevel cubes of max|x_i| (p = 1) are fitted by a ball: a large misfit, but the
    # design has the cube's symmetry, so the shape is exactly isotropic
    shape = _shape("classic/pyramid/d10")
    assert shape.degree == 1.0
    assert shape.half_widths.tolist() == [1.0] * 10
    assert shape.fit_residual is not None
    assert 0.1 < shape.fit_residual < 0.4
    assert shape.fallback is None


@pytest.mark.parametrize(
    ("function_id", "fill", "condition"),
    [("bbob/f21/i1/d10", -3.61, 31.6), ("bbob/f22/i1/d10", -6.25, 1000.0)],
)
def test_shape_of_gallaghers_is_the_bounding_box_of_its_quadratic_form(
    function_id: str, fill: float, condition: float
) -> None:
    # f - f* = T_osz(10 - 10 exp(-q/2D))^2 with q = (x-x*)ᵀH(x-x*): degree p = 4 (β = d/4), and
    # the level sets are exactly the ellipsoids of H, whatever T_osz does to the levels
    ref = _Gallagher.measure(function_id)
    extent = np.sqrt(np.diag(np.linalg.inv(ref.H)))
    shape = _shape(function_id)
    assert shape.degree == 4.0
    np.testing.assert_allclose(shape.half_widths, extent / extent.max(), rtol=5e-3)
    assert shape.condition == pytest.approx(condition, rel=0.01)
    # rotated: the ellipsoid fills 10^fill of its bounding box, not V_d/2^d = 10^-2.6
    assert shape.log10_fill_share == pytest.approx(fill, abs=0.02)
    assert shape.fit_residual is not None
    assert shape.fit_residual < 0.05


def test_shape_is_deterministic_and_rounded() -> None:
    a, b = _shape("bbob/f21/i1/d10"), _shape("bbob/f21/i1/d10")
    assert a.spec() == b.spec()
    assert a.describe() == b.describe()
    for v in a.half_widths:
        assert float(f"{v:.2e}") == v  # 3 significant digits: independent of LAPACK's last bits
    assert a.fit_residual == float(f"{a.fit_residual:.1e}")
    json.dumps(a.describe(), allow_nan=False)
    assert a.spec()["method"] == nested.SHAPE_METHOD


def _custom_shape(f: Callable[[np.ndarray], np.ndarray], f_opt: float = 0.0, **kw: object):
    return ladder_shape(f, np.zeros(2), f_opt, np.full(2, -1.0), np.full(2, 1.0), **kw)


@pytest.mark.parametrize(
    ("f", "f_opt", "reason"),
    [
        (lambda X: X[:, 0] ** 2, 0.0, "plateau"),  # flat along x_1
        (lambda X: np.sum(X * X, axis=1), 1.0, "not the minimiser"),  # f* too high
        (lambda X: np.full(X.shape[0], np.nan), 0.0, "not finite"),
    ],
)
def test_shape_falls_back_to_the_cube_with_a_reason(
    f: Callable[[np.ndarray], np.ndarray], f_opt: float, reason: str
) -> None:
    shape = _custom_shape(f, f_opt)
    assert shape.is_cube
    assert shape.model == "cube"
    assert shape.fallback is not None
    assert reason in shape.fallback
    assert shape.spec()["fallback"] == shape.fallback


def test_shape_in_a_corner_needs_enough_crossings() -> None:
    def f(X: np.ndarray) -> np.ndarray:
        return np.sum((X + 1.0) ** 2, axis=1)

    corner, lower, upper = np.full(2, -1.0), np.full(2, -1.0), np.full(2, 1.0)
    # only 3 directions enter Ω from its corner: one level gives 3 equations for 3 unknowns
    few = ladder_shape(f, corner, 0.0, lower, upper, radii=[1e-2])
    assert few.is_cube
    assert "too few level-set crossings (3)" in (few.fallback or "")
    enough = ladder_shape(f, corner, 0.0, lower, upper)  # three levels: 9 equations
    assert enough.fallback is None
    assert enough.half_widths.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    ("function_id", "reason"),
    [
        # linear slope, x* in a corner of Ω: (f - f*)^2 is a rank-one form in the inward orthant
        ("bbob/f5/i1/d10", "not positive definite"),
        # bent cigar under T_asy: the whitening passes do not settle (residual 0.2-0.7)
        ("bbob/f12/i1/d10", "not positive definite"),
    ],
)
def test_shape_of_registered_functions_falls_back(function_id: str, reason: str) -> None:
    shape = _shape(function_id)
    assert shape.is_cube
    assert reason in (shape.fallback or "")


def _tosz(u: np.ndarray) -> np.ndarray:
    """BBOB's ``T_osz`` (Hansen et al. 2009, RR-6829), elementwise."""
    with np.errstate(divide="ignore"):
        xh = np.where(u != 0, np.log(np.abs(u)), 0.0)
    c1, c2 = np.where(u > 0, 10.0, 5.5), np.where(u > 0, 7.9, 3.1)
    return np.sign(u) * np.exp(xh + 0.049 * (np.sin(c1 * xh) + np.sin(c2 * xh)))


class _WiggledEllipsoid:
    """``Σ w_i T_osz(R(x − x*))_i²``, condition ``1e6``, ``R`` random: BBOB f10's form.

    ``T_osz(u)/u`` lies in ``[e^-0.098, e^0.098]``: a relative wiggle of ±20% on the rise, along
    each eigen-axis, about the exact form ``H = Rᵀ diag(w) R``.
    """

    def __init__(self, dim: int, seed: int = 3) -> None:
        q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, dim)))
        self.rotation = q * np.sign(np.diag(r))  # rows: y = R (x − x*)
        self.weights = 1e6 ** (np.arange(dim) / (dim - 1))
        self.hessian = (self.rotation.T * self.weights) @ self.rotation
        self.x_opt = np.linspace(-1.0, 1.0, dim)
        self.lower, self.upper = np.full(dim, -5.0), np.full(dim, 5.0)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        z = _tosz((X - self.x_opt) @ self.rotation.T)
        return np.sum(self.weights * z * z, axis=1)


@pytest.mark.parametrize("dim", [5, 8])
def test_whitened_shape_of_a_wiggled_condition_1e6_form(dim: int) -> None:
    g = _WiggledEllipsoid(dim)
    shape = ladder_shape(g, g.x_opt, 0.0, g.lower, g.upper)
    assert shape.fallback is None
    assert shape.whitened >= 1  # the first fit is indefinite (what the cube used to be)
    assert shape.spec()["whitened"] == shape.whitened
    assert shape.orientation is not None
    # the fitted form Q diag(b^-2) Qᵀ against the truth H, in H's own coordinates: every
    # eigenvalue of H^{-1/2} A H^{-1/2} (scaled to geometric mean 1) within a factor 1.2 of 1
    # (the wiggle alone allows e^{±0.196} = 1.22 on the rise; measured 1.06 in 5-D, 1.1 in 8-D)
    Q, b = shape.orientation
    A = (Q / b**2) @ Q.T
    root = (g.rotation.T / np.sqrt(g.weights)) @ g.rotation  # H^{-1/2}
    mu = np.linalg.eigvalsh(root @ A @ root)
    mu = mu / math.exp(float(np.mean(np.log(mu))))
    assert np.all((mu > 1 / 1.2) & (mu < 1.2)), mu
    assert shape.condition == pytest.approx(1e6, rel=0.5)


def test_whitening_leaves_first_pass_shapes_alone() -> None:
    g = _RotatedEllipsoid(8)
    shape = ladder_shape(g, g.x_opt, 0.0, g.lower, g.upper)
    assert shape.whitened == 0
    assert "whitened" not in shape.spec()


def test_f10_service_ladder_serves_deep_errors_from_a_fitted_shape() -> None:
    # BBOB f10 = Σ w_i T_osz(R(x − x*))_i², w_i = 1e6^((i−1)/(d−1)), R orthogonal (RR-6829): det
    # H = Π w_i = 10^{3d}, so {f − f* <= s} lies between the ellipsoids {(x−x*)ᵀH(x−x*) <= s
    # e^{∓0.196}}, ln v1 = ln V_d + (d/2) ln s − (3d/2) ln 10 − ln Leb(Ω) ± 0.098 d (0.21
    # decades in 5-D)
    fid = "bbob/f10/i1/d5"
    levels, shape, _ = _service_ladder(fid, log2n=12)
    assert shape.fallback is None
    assert shape.whitened >= 1
    fn = get_function(fid)
    d = fn.dim
    s = np.array([1e-6, 1e-3, 1.0])
    ln_dom = float(np.sum(np.log(fn.upper - fn.lower)))
    ln_vd = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)
    exact = ln_vd + 0.5 * d * np.log(s) - 1.5 * d * LN10 - ln_dom
    ln_v, _, _, method = nested_curve(levels).evaluate(fn.f_opt + s)
    assert all(m in ("nested-interpolated", "nested-tail-power") for m in method), method
    err = _decades(ln_v, exact)
    assert np.all(np.abs(err) < 0.3), err  # the bracket's 0.21 plus sampling (0.01 measured)


def test_shape_above_the_full_fit_dimension_is_diagonal() -> None:
    shape = _shape("classic/ellipsoid/d50")
    assert shape.model == "diagonal"
    w = get_function("classic/ellipsoid/d50").evaluate(np.eye(50))
    np.testing.assert_allclose(shape.half_widths, np.sqrt(w.min() / w), rtol=5e-3)


@pytest.mark.parametrize(
    ("kwargs", "error", "field"),
    [
        ({"degree": 0.0}, InvalidInput, "degree"),
        ({"degree": float("inf")}, InvalidInput, "degree"),
        ({"radii": []}, InvalidInput, "radii"),
        ({"radii": [2.0]}, InvalidInput, "radii"),
        ({"n_random": -1}, InvalidInput, "n_random"),
    ],
)
def test_shape_arguments_are_checked(kwargs: dict, error: type, field: str) -> None:
    with pytest.raises(error) as info:
        _custom_shape(lambda X: np.sum(X * X, axis=1), **kwargs)
    assert info.value.field == field
    with pytest.raises(NotApplicable):
        ladder_shape(lambda X: X[:, 0], np.zeros(1), None, [-1.0], [1.0])
    with pytest.raises(NotApplicable):
        ladder_shape(lambda X: X[:, 0], None, 0.0, [-1.0], [1.0])


def test_random_directions_are_optional_and_seeded() -> None:
    f = get_function("classic/ellipsoid/d5")
    with_random = ladder_shape(f.evaluate, f.x_opt, 0.0, f.lower, f.upper, n_random=20)
    plain = ladder_shape(f.evaluate, f.x_opt, 0.0, f.lower, f.upper)
    assert with_random.probes == plain.probes + 3 * 20
    np.testing.assert_allclose(with_random.half_widths, plain.half_widths, rtol=5e-3)


# ---------------------------------------------------------------- the service's ladder ----


def test_plan_stops_at_the_volume_target() -> None:
    lower, upper = np.full(10, -5.12), np.full(10, 5.12)
    plan = plan_ladder(lower, upper, np.zeros(10), factor=2.0, max_levels=64, min_log10_volume=-30)
    assert (len(plan.boxes), plan.stop) == (11, "volume")  # 3 decades per level
    assert plan.log10_volume_fraction == pytest.approx(-100 * math.log10(2.0))
    assert "reaches" in plan.stop_detail
    capped = plan_ladder(lower, upper, np.zeros(10), factor=2.0, max_levels=4, min_log10_volume=-30)
    assert (len(capped.boxes), capped.stop) == (5, "levels")
    for a, b in zip(plan.boxes[:5], capped.boxes, strict=True):
        assert a.lower.tobytes() == b.lower.tobytes()


def test_plan_stops_before_a_thin_box() -> None:
    lower, upper = np.full(2, -1.0), np.full(2, 1.0)
    plan = plan_ladder(
        lower,
        upper,
        np.zeros(2),
        factor=10.0,
        max_levels=64,
        min_log10_volume=-1000.0,
        shape=np.array([1.0, 1e-3]),
    )
    assert plan.stop == "thin"
    width = plan.boxes[-1].upper - plan.boxes[-1].lower
    assert np.all(width >= nested.THIN_SHARE * 2.0)
    assert np.min(width) / 10.0 < nested.THIN_SHARE * 2.0  # one more level would be too thin
    assert len(plan.boxes) - 1 == 8  # sigma_0 = 1000: the short side is 2·10^-j wide


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [({"min_log10_volume": 0.0}, "min_log10_volume"), ({"max_levels": 0}, "levels")],
)
def test_plan_arguments_are_checked(kwargs: dict, field: str) -> None:
    args: dict = {"factor": 2.0, "max_levels": 3, "min_log10_volume": -10.0} | kwargs
    with pytest.raises(InvalidInput) as info:
        plan_ladder(np.full(2, -1.0), np.full(2, 1.0), np.zeros(2), **args)
    assert info.value.field == field


def test_ellipsoid_ladder_geometry() -> None:
    _, shape, plan = _service_ladder("classic/ellipsoid/d10", log2n=4)
    # sigma_0 = 5.12/a_min: ten levels until sigma = 5.12 (the bounding box of {f <= 5.12^2}),
    # 15 decades; then 3 decades per level: 25 levels reach 1e-60
    assert (len(plan.boxes) - 1, plan.stop) == (25, "volume")
    assert -63.0 < plan.log10_volume_fraction <= -60.0
    a = np.asarray(shape)
    for box in plan.boxes[1:]:
        assert box.half_widths is not None
        np.testing.assert_array_equal(box.half_widths, np.minimum(5.12, box.delta * a))
    # the short axes shrink first: level 1 halves the shortest side only
    assert np.sum(plan.boxes[1].half_widths < 5.12) == 1
    deep = plan.boxes[-1].half_widths
    np.testing.assert_allclose(deep / deep.max(), a, rtol=1e-12)


# ---------------------------------------------------------------- exact references --------


@pytest.fixture(scope="module")
def sphere10() -> list[NestedLevel]:
    return _ladder(_registered("classic/sphere/d10"))


def test_sphere_d10_many_decades_below_one_over_n(sphere10: list[NestedLevel]) -> None:
    t = _targets(sphere10)
    curve = nested_curve(sphere10)
    ln_v, lo, hi, method = curve.evaluate(t)
    exact = _ball_ln_v(t, 10, 10 * math.log(10.24))
    assert np.all(np.abs(_decades(ln_v, exact)) < 0.1)
    assert ln_v[-1] / LN10 < -45.0  # 40 decades below 1/N = 1.5e-5
    assert np.all(lo <= ln_v)
    assert np.all(ln_v <= hi)
    assert np.all(lo <= exact)
    assert np.all(exact <= hi)
    assert all(m.startswith("nested-") and m in nested.METHODS for m in method)
    assert curve.info["method"] == "nested"
    assert curve.info["levels_used"] == list(range(9))
    assert curve.warnings == []


def test_level_info_describes_every_rung(sphere10: list[NestedLevel]) -> None:
    info = nested_curve(sphere10).info
    assert len(info["levels"]) == 9
    first, third = info["levels"][0], info["levels"][3]
    assert first["delta"] is None
    assert first["tau"] is None
    assert first["serves"]["t_below"] is None
    assert third["delta"] == pytest.approx(5.12 / 8)
    assert third["region"]["upper"] == pytest.approx([0.64] * 10)
    assert third["log10_volume_fraction"] == pytest.approx(-30 * math.log10(2.0))
    assert third["n"] == 2**16
    assert third["tag"] == 3  # the label is echoed
    assert third["tau_source"]["check"] in {"outer", "own"}
    assert third["samples_below_tau"] >= nested.MIN_INNER_SAMPLES
    assert 0 < third["undetectable_share"] < 4e-4
    assert third["curve"]["n"] == 2**16
    # the serving ranges tile the real line from the deepest level up
    ranges = [lv["serves"] for lv in info["levels"]]
    assert ranges[-1]["t_from"] is None
    for upper, lower in itertools.pairwise(ranges):
        assert upper["t_from"] == lower["t_below"]
    assert "resolution" in info["containment"]["check"]
    assert "not a proof" in info["containment"]["check"]
    json.dumps(info, allow_nan=False)  # JSON-ready, no inf/nan


def test_power_is_the_deepest_levels_law_shifted(sphere10: list[NestedLevel]) -> None:
    curve = nested_curve(sphere10)
    power = curve.power
    assert power is not None
    assert power.beta == 5.0
    ln_c = 5 * math.log(math.pi) - math.lgamma(6.0) - 10 * math.log(10.24)
    assert abs(power.ln_c - ln_c) / LN10 < 0.05
    assert power.limit <= curve.info["levels"][-1]["serves"]["t_below"]
    t = np.array([1e-9])
    assert curve.evaluate(t)[0][0] == pytest.approx(power.ln_c + 5 * math.log(1e-9))


def test_ranks_from_a_nested_curve(sphere10: list[NestedLevel]) -> None:
    curve = nested_curve(sphere10)
    res = absrank.ranks_from_curve(np.array([-1.0, 0.0, 1e-6, 1.0]), curve, budget=100)
    assert res.v[0] == 0.0
    assert list(res.method[:2]) == ["at-or-below-minimum"] * 2
    assert res.method[2].startswith("nested-")
    exact = _ball_ln_v(np.array([1e-6]), 10, 10 * math.log(10.24))[0] / LN10 + 2.0
    assert res.log10_v[2] == pytest.approx(exact, abs=0.1)
    assert res.tail.as_json()["method"] == "nested"
    assert res.tail.as_json()["transform"]["budget"] == 100


def test_cone_d10() -> None:
    levels = _ladder(_registered("classic/pyramid/d10"))
    t = _targets(levels)
    ln_v = nested_curve(levels).evaluate(t)[0]
    exact = 10 * np.log(t / 5.0)  # ((t - f*)/(f_max - f*))^d on [-5, 5]^10
    assert np.all(np.abs(_decades(ln_v, exact)) < 0.1)
    assert ln_v[-1] / LN10 < -80.0


# ---------------------------------------------------------------- ill-conditioned ---------


def _ellipsoid_weights(d: int) -> np.ndarray:
    fn = get_function(f"classic/ellipsoid/d{d}")
    w = fn.evaluate(np.eye(d))  # f(e_i) = w_i
    assert w.max() / w.min() == pytest.approx(1e6)  # condition 1e6, as the test is about
    return w


def _ellipsoid_exact(t: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Exact v1 of Σ w_i x_i² on [-5.12, 5.12]^d: a sphere in the box of half-widths 5.12 sqrt(w_i).

    Deep in the tail (sqrt(t) <= 5.12) it is the unclipped ellipsoid volume
    ``V_d t^{d/2} / (sqrt(Π w_i)·10.24^d)``; at the top of the range Ω clips it.
    """
    half = 5.12 * np.sqrt(w)
    return sphere_ln_cdf(np.log(t), half, half)


@pytest.fixture(scope="module")
def ellipsoid10() -> list[NestedLevel]:
    return _ladder(_registered("classic/ellipsoid/d10"))


def test_ellipsoid_single_table_power_tail_is_refused_and_far_off(
    ellipsoid10: list[NestedLevel],
) -> None:
    w = _ellipsoid_weights(10)
    t = _targets(ellipsoid10)
    exact = _ellipsoid_exact(t, w)
    deep = np.sqrt(t) <= 5.12
    unclipped = _ball_ln_v(t, 10, 10 * math.log(10.24)) - 0.5 * np.sum(np.log(w))
    np.testing.assert_allclose(exact[deep], unclipped[deep], rtol=1e-5)
    single = _single_table(ellipsoid10)
    assert single.info.as_json()["lower"] == "linear"
    assert "power tail refused" in str(single.warnings[0])
    with pytest.raises(NotApplicable, match="clipped"):
        absrank.table_curve(ellipsoid10[0].table, ellipsoid10[0].ctx, tail="power")
    off = _decades(single.evaluate(t)[0], exact)
    assert np.all(off > 5.0)
    forced = _decades(_forced_power(ellipsoid10, t, 5.0), exact)
    assert np.all(forced < -4.0)


def test_ellipsoid_cubic_ladder_is_refused_not_trusted(ellipsoid10: list[NestedLevel]) -> None:
    # the smallest cube around {f <= t} has half-width sqrt(t/w_min): the set fills a share
    # V_d/2^d/sqrt(Π w_i/w_min) of it
    w = _ellipsoid_weights(10)
    share = math.pi**5 / math.gamma(6.0) / 2**10 / math.sqrt(np.prod(w / w.min()))
    assert share < 3e-18  # no cube ever samples it at N = 2^16
    curve = nested_curve(ellipsoid10)
    assert curve.info["levels_used"] == [0]
    skipped = [lv["skipped"] for lv in curve.info["levels"][1:]]
    assert all("does not see the sublevel sets" in why for why in skipped)
    assert sum("not used" in x for x in curve.warnings) == 8
    t = _targets(ellipsoid10)
    np.testing.assert_array_equal(curve.evaluate(t)[0], _single_table(ellipsoid10).evaluate(t)[0])


# ---------------------------------------------------------------- BBOB f21 / f22 ----------


def _tosz_inverse(u: np.ndarray) -> np.ndarray:
    """Inverse of BBOB's ``T_osz`` for ``u > 0``: ``log u = y + 0.049 (sin 10y + sin 7.9y)``.

    The right side is increasing in ``y = log w`` (slope >= 1 − 0.049·17.9 > 0) and within 0.098
    of ``y``, so bisection on ``[log u − 0.1, log u + 0.1]`` converges.
    """
    target = np.log(u)
    lo, hi = target - 0.1, target + 0.1
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        above = mid + 0.049 * (np.sin(10.0 * mid) + np.sin(7.9 * mid)) > target
        lo, hi = np.where(above, lo, mid), np.where(above, mid, hi)
    return np.exp(0.5 * (lo + hi))


@dataclass(frozen=True)
class _Gallagher:
    """Exact ``v1`` near ``x*`` of BBOB f21/f22 (Hansen et al. 2009, RR-6829).

    ``f − f* = T_osz(10 − 10 exp(−q/(2D)))²`` with ``q = (x − x*)ᵀ H (x − x*)`` while the best peak
    dominates (``w_1 = 10``, every other ``w_i <= 9.1``, so for ``f − f* < T_osz(0.9)² ≈ 0.66``),
    hence ``{f − f* <= s} = {q <= Q(s)}``, ``Q(s) = −2D log(1 − T_osz^{-1}(sqrt s)/10)``, of volume
    ``V_D Q^{D/2}/sqrt(det H)`` while that ellipsoid lies in Ω. ``H`` is measured from ``q(x) =
    Q(f(x) − f*)`` by central differences (exact for a quadratic form, checked at random points);
    ``det H = 1`` by construction (``C_1 = Λ^α/α^{1/4}``).
    """

    fn_id: str
    H: np.ndarray
    q_inside: float  # largest Q whose ellipsoid lies in Ω

    @classmethod
    def measure(cls, fn_id: str) -> _Gallagher:
        fn = get_function(fn_id)
        d, x0 = fn.dim, fn.x_opt
        assert x0 is not None

        def q(X: np.ndarray) -> np.ndarray:
            return _gallagher_q(fn.evaluate(X) - fn.f_opt, d)

        h = 1e-2
        diag = q(x0 + h * np.eye(d)) / h**2
        H = np.diag(diag)
        for i in range(d):
            for j in range(i + 1, d):
                e = np.zeros(d)
                e[[i, j]] = h
                H[i, j] = H[j, i] = (q((x0 + e)[None, :])[0] / h**2 - diag[i] - diag[j]) / 2
        u = np.random.default_rng(1).normal(size=(50, d)) * 0.05
        quad = np.einsum("ni,ij,nj->n", u, H, u)
        np.testing.assert_allclose(q(x0 + u), quad, rtol=1e-4)  # q is a quadratic form
        assert np.linalg.det(H) == pytest.approx(1.0, rel=1e-4)
        extent = np.sqrt(np.diag(np.linalg.inv(H)))
        room = np.minimum(x0 - fn.lower, fn.upper - x0)
        return cls(fn_id, H, float(np.min((room / extent) ** 2)))

    def ln_v(self, t: np.ndarray) -> np.ndarray:
        fn = get_function(self.fn_id)
        d = fn.dim
        big_q = _gallagher_q(t - fn.f_opt, d)
        assert np.all(big_q <= 1.01 * self.q_inside)  # Ω clips it by a negligible sliver at most
        assert np.all(t - fn.f_opt < 0.5)  # the best peak dominates
        ln_vd = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0)
        return (
            ln_vd
            + 0.5 * d * np.log(big_q)
            - 0.5 * math.log(np.linalg.det(self.H))
            - float(np.sum(np.log(fn.upper - fn.lower)))
        )


def _gallagher_q(s: np.ndarray, d: int) -> np.ndarray:
    return -2.0 * d * np.log1p(-_tosz_inverse(np.sqrt(s)) / 10.0)


@pytest.fixture(scope="module")
def f21() -> list[NestedLevel]:
    return _ladder(_registered("bbob/f21/i1/d10"))


def test_f21_nested_against_the_quadratic_form_volume(f21: list[NestedLevel]) -> None:
    ref = _Gallagher.measure("bbob/f21/i1/d10")
    t = _targets(f21)
    exact = ref.ln_v(t)
    curve = nested_curve(f21)
    err = _decades(curve.evaluate(t)[0], exact)
    # T_osz's log-periodic factor makes ln v wiggle by ±(D/2)·0.098 = ±0.21 decades about the
    # power law the deepest tails extrapolate with
    assert np.all(np.abs(err) < 0.35), err
    assert curve.power is not None
    assert curve.power.beta == 2.5  # d/4, registered
    single = _decades(_single_table(f21).evaluate(t)[0], exact)
    assert np.all(single > 3.0)  # power tail refused (clipped) -> linear tail
    forced = _decades(_forced_power(f21, t, 2.5), exact)
    assert np.all(forced > 1.0)  # the registered beta anchored at y_100 regardless


@pytest.mark.slow
def test_f21_finer_ladder_within_a_sixth_of_a_decade() -> None:
    levels = _ladder(_registered("bbob/f21/i1/d10"), factor=1.25, levels=30)
    t = _targets(levels)
    exact = _Gallagher.measure("bbob/f21/i1/d10").ln_v(t)
    err = _decades(nested_curve(levels).evaluate(t)[0], exact)
    assert np.all(np.abs(err) < 0.17), err


def test_f22_cubic_ladder_refused_and_said_so() -> None:
    levels = _ladder(_registered("bbob/f22/i1/d10"))
    ref = _Gallagher.measure("bbob/f22/i1/d10")
    eig = np.linalg.eigvalsh(ref.H)
    assert eig.max() / eig.min() == pytest.approx(1000.0, rel=1e-3)
    # share of the smallest cube around {q <= Q} that the ellipsoid fills
    extent = np.sqrt(np.diag(np.linalg.inv(ref.H)))
    share = math.pi**5 / math.gamma(6.0) / (2 * extent.max()) ** 10
    assert share < 1e-7
    curve = nested_curve(levels)
    assert curve.info["levels_used"] == [0]
    t = _targets(levels, np.arange(3, 9))
    exact = ref.ln_v(t)
    single = _single_table(levels).evaluate(t)[0]
    np.testing.assert_array_equal(curve.evaluate(t)[0], single)
    assert np.all(_decades(single, exact) > 3.0)
    assert np.all(_decades(_forced_power(levels, t, 2.5), exact) > 0.5)


# ---------------------------------------------------------------- service ladders, end to end


@pytest.mark.parametrize("log2n", [14, 16])
def test_ellipsoid_service_ladder_within_015_decades(log2n: int) -> None:
    levels, shape, plan = _service_ladder("classic/ellipsoid/d10", log2n=log2n)
    assert shape.fallback is None
    w = _ellipsoid_weights(10)
    t = _targets(levels)
    curve = nested_curve(levels)
    err = _decades(curve.evaluate(t)[0], _ellipsoid_exact(t, w))
    assert np.all(np.abs(err) < 0.15), err
    assert curve.info["levels_used"] == list(range(len(plan.boxes)))
    if log2n == 16:
        assert curve.warnings == []  # every serving tail is a valid power tail
    # far below 1/N: k = 8 is 37 decades below it
    assert curve.evaluate(t)[0][-1] / LN10 < -log2n * math.log10(2.0) - 35.0


@pytest.mark.parametrize(
    ("function_id", "exact"),
    [
        ("classic/sphere/d10", lambda t: _ball_ln_v(t, 10, 10 * math.log(10.24))),
        ("classic/pyramid/d10", lambda t: 10 * np.log(t / 5.0)),
    ],
)
def test_cubic_service_ladders(function_id: str, exact: Callable[[np.ndarray], np.ndarray]) -> None:
    levels, shape, plan = _service_ladder(function_id)
    assert shape.is_cube
    assert (len(plan.boxes) - 1, plan.stop) == (20, "volume")
    t = _targets(levels)
    err = _decades(nested_curve(levels).evaluate(t)[0], exact(t))
    assert np.all(np.abs(err) < 0.1), err


def test_f21_service_ladder() -> None:
    levels, shape, _ = _service_ladder("bbob/f21/i1/d10")
    assert not shape.is_cube
    ref = _Gallagher.measure("bbob/f21/i1/d10")
    t = _targets(levels)
    curve = nested_curve(levels)
    err = _decades(curve.evaluate(t)[0], ref.ln_v(t))
    assert np.all(np.abs(err) < 0.3), err  # T_osz wiggles by ±0.21 decades about a power law
    # the deepest boxes resolve f - f* below float rounding of f* (41): skipped, said so
    assert 10 <= curve.info["deepest_level"] < len(levels) - 1
    assert any("not used" in w for w in curve.warnings)


def test_f22_service_ladder_cannot_sample_the_rotated_set_with_axis_aligned_boxes() -> None:
    # the limit of axis-aligned boxes (ladder_shape, Notes): f22's sublevel ellipsoid fills
    # 10^-6.25 of its bounding box, so N = 2^16 samples of a box never resolve it unclipped
    levels, shape, _ = _service_ladder("bbob/f22/i1/d10", oriented=False)
    assert shape.log10_fill_share is not None
    assert shape.log10_fill_share < -6.0
    curve = nested_curve(levels)
    assert len(curve.info["levels_used"]) <= 3  # of 22
    assert sum("not used" in w for w in curve.warnings) >= len(levels) - 3
    ref = _Gallagher.measure("bbob/f22/i1/d10")
    t = _targets(levels, np.arange(3, 9))
    err = _decades(curve.evaluate(t)[0], ref.ln_v(t))
    assert np.all(err > 1.0), err  # clipped tails: decades too high, and warned about


# ---------------------------------------------------------------- the check refuses -------

SECOND_BASIN = np.array([3.5, 3.5])
BASIN_DEPTH = 0.05


def _two_basins(X: np.ndarray) -> np.ndarray:
    """``min(|x|², c + |x − a|²)``: global minimum 0 at 0, a second basin of depth c at a."""
    return np.minimum(np.sum(X * X, axis=1), BASIN_DEPTH + np.sum((X - SECOND_BASIN) ** 2, axis=1))


def _two_basins_ln_v(t: np.ndarray) -> np.ndarray:
    return np.log(math.pi * (t + np.maximum(t - BASIN_DEPTH, 0.0)) / 100.0)


@pytest.fixture(scope="module")
def two_basins() -> list[NestedLevel]:
    p = _Problem(_two_basins, np.full(2, -5.0), np.full(2, 5.0), np.zeros(2), 0.0, 1.0)
    return _ladder(p, levels=6, log2n=14)


def test_second_basin_outside_the_boxes_stops_them(two_basins: list[NestedLevel]) -> None:
    curve = nested_curve(two_basins)
    first = curve.info["levels"][1]
    # level 0's lowest sample in the far basin caps every inner level
    assert first["tau_source"]["check"] == "outer"
    assert first["tau_source"]["level"] == 0
    assert BASIN_DEPTH < first["tau"] < BASIN_DEPTH + 0.01
    assert curve.info["levels"][0]["serves"]["t_from"] == first["tau"]
    t = np.array([0.2, 0.3, 0.5])  # both basins count; Eq. 28 of the whole domain serves
    ln_v, _, _, method = curve.evaluate(t)
    assert np.all(np.abs(_decades(ln_v, _two_basins_ln_v(t))) < 0.05)
    assert list(method) == ["nested-interpolated"] * 3
    # level 1 alone, trusted, misses the second basin (about 40% of the set)
    level1 = absrank.table_curve(two_basins[1].table, two_basins[1].ctx)
    naive = level1.evaluate(t)[0] + two_basins[1].ln_volume_fraction
    assert np.all(_decades(naive, _two_basins_ln_v(t)) < -0.15)
    # below the basin's depth the deep levels serve, and are right
    deep = np.array([1e-3, 1e-5, 1e-8])
    ln_deep = curve.evaluate(deep)[0]
    assert np.all(np.abs(_decades(ln_deep, _two_basins_ln_v(deep))) < 0.1)


def test_wrong_x_opt_boxes_are_skipped() -> None:
    p = _registered("classic/sphere/d2")
    # R_1 = [-1.06, 5.12]^2 holds the true minimiser 0, R_2 = [0.97, 5.03]^2 and deeper do not
    wrong = np.array([3.0, 3.0])
    levels = _ladder(p, levels=6, log2n=14, x_opt=wrong)
    curve = nested_curve(levels)
    assert curve.info["levels_used"] == [0, 1]
    for lv in curve.info["levels"][2:]:
        assert lv["samples_below_tau"] < nested.MIN_INNER_SAMPLES
        assert "does not see the sublevel sets" in lv["skipped"]
    t = _targets(levels)
    exact = np.log(math.pi * t / 10.24**2)
    assert np.all(np.abs(_decades(curve.evaluate(t)[0], exact)) < 0.1)


def _assert_no_sample_contradicts(levels: list[NestedLevel]) -> None:
    """Where level j serves, no stored sample below t lies outside (shrunken) R_j."""
    info = nested_curve(levels).info
    x_opt = np.asarray(levels[0].ctx.x_opt)
    omega = (levels[0].ctx.region_lower, levels[0].ctx.region_upper)
    for lv in info["levels"][1:]:
        if lv["serves"] is None:
            continue
        j, top = lv["level"], lv["serves"]["t_below"]
        lo, hi = (np.asarray(levels[j].ctx.region_lower), np.asarray(levels[j].ctx.region_upper))
        for i in range(j + 1):
            outer = omega if i == j else (levels[i].ctx.region_lower, levels[i].ctx.region_upper)
            low = levels[i].table.low_values < top
            pts = levels[i].table.low_x[low]
            shrunk_lo = np.where(lo > outer[0], x_opt - 0.9 * (x_opt - lo), -np.inf)
            shrunk_hi = np.where(hi < outer[1], x_opt + 0.9 * (hi - x_opt), np.inf)
            assert np.all((pts >= shrunk_lo) & (pts <= shrunk_hi)), (i, j)


def test_no_stored_sample_contradicts_a_serving_level(
    sphere10: list[NestedLevel], two_basins: list[NestedLevel], f21: list[NestedLevel]
) -> None:
    for levels in (sphere10, two_basins, f21):
        _assert_no_sample_contradicts(levels)


# ---------------------------------------------------------------- validation --------------


def _small_ladder() -> list[NestedLevel]:
    return _ladder(_registered("classic/sphere/d2"), levels=2, log2n=8)


def _replace(level: NestedLevel, **changes: object) -> NestedLevel:
    fields = {
        "table": level.table,
        "ctx": level.ctx,
        "ln_volume_fraction": level.ln_volume_fraction,
        "delta": level.delta,
    }
    return NestedLevel(**(fields | changes))  # type: ignore[arg-type]


def _ctx(level: NestedLevel, **changes: object) -> RankContext:
    c = level.ctx
    fields = {
        "f_opt": c.f_opt,
        "f_max": c.f_max,
        "atom": c.atom,
        "beta": c.beta,
        "beta_derivation": c.beta_derivation,
        "x_opt": c.x_opt,
        "region_lower": c.region_lower,
        "region_upper": c.region_upper,
    }
    return RankContext(**(fields | changes))  # type: ignore[arg-type]


def test_ladder_must_be_well_formed() -> None:
    lv = _small_ladder()
    cases: list[tuple[list, type, str]] = [
        ([], InvalidInput, "levels"),
        ([lv[1], lv[2]], InvalidInput, "levels"),  # level 0 is not the domain
        ([lv[0], lv[2], lv[1]], InvalidInput, "levels"),  # not nested
        ([lv[0], _replace(lv[1], ctx=_ctx(lv[1], f_opt=None))], InvalidInput, "levels"),
        ([lv[0], _replace(lv[1], ctx=_ctx(lv[1], x_opt=np.ones(2) * 0.1))], InvalidInput, "levels"),
        ([_replace(lv[0], ctx=_ctx(lv[0], f_opt=None))], NotApplicable, "f_opt"),
        ([_replace(lv[0], ctx=_ctx(lv[0], x_opt=None))], NotApplicable, "x_opt"),
        ([_replace(lv[0], ctx=_ctx(lv[0], atom=0.01))], NotApplicable, "atom"),
    ]
    for levels, error, field in cases:
        with pytest.raises(error) as info:
            nested_curve(levels)
        assert info.value.field == field
    with pytest.raises(InvalidInput) as bad_tail:
        nested_curve(lv, tail="paper")
    assert bad_tail.value.field == "tail"
    with pytest.raises(InvalidInput):
        nested_curve(lv, confidence=1.5)


def test_a_domain_table_alone_is_the_single_table_curve() -> None:
    lv = _small_ladder()[:1]
    t = np.array([1e-6, 1e-3, 0.5, 10.0])
    got = nested_curve(lv).evaluate(t)
    want = absrank.table_curve(lv[0].table, lv[0].ctx).evaluate(t)
    for a, b in zip(got[:3], want[:3], strict=True):
        np.testing.assert_array_equal(a, b)
    assert list(got[3]) == [f"nested-{m}" for m in want[3]]


# ---------------------------------------------------------------- oriented boxes ----------


def test_axis_aligned_shapes_are_not_oriented() -> None:
    for function_id in ("classic/sphere/d10", "classic/ellipsoid/d10", "classic/pyramid/d10"):
        shape = _shape(function_id)
        assert shape.rotation is not None
        assert shape.rotation < nested.MIN_ROTATION
        assert shape.orientation is None
        assert "orientation" not in shape.spec()


def test_f22_service_ladder_with_oriented_boxes() -> None:
    levels, shape, plan = _service_ladder("bbob/f22/i1/d10")
    assert shape.orientation is not None
    first = next(b.level for b in plan.boxes if b.oriented)
    assert all(b.oriented for b in plan.boxes[first:])
    curve = nested_curve(levels)
    ref = _Gallagher.measure("bbob/f22/i1/d10")
    t = _targets(levels, np.arange(5, 9))  # shallower sets: their oriented box leaves Ω
    err = _decades(curve.evaluate(t)[0], ref.ln_v(t))
    assert np.all(np.abs(err) < 0.3), err
    info = curve.info["levels"][first]
    assert info["region"]["kind"] == "oriented"
    assert len(info["region"]["axes"]) == 10


class _RotatedEllipsoid:
    """``f(x) = (x − x*)ᵀ H (x − x*)``, ``H = R diag(w) Rᵀ``, condition ``1e4``, ``R`` random."""

    def __init__(self, dim: int, condition: float = 1e4, seed: int = 7) -> None:
        q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((dim, dim)))
        self.rotation = q * np.sign(np.diag(r))
        self.weights = condition ** (np.arange(dim) / (dim - 1))
        self.hessian = (self.rotation * self.weights) @ self.rotation.T
        self.x_opt = np.linspace(-0.5, 0.5, dim)
        self.lower, self.upper = np.full(dim, -5.0), np.full(dim, 5.0)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        Z = (X - self.x_opt) @ self.rotation
        return np.sum(self.weights * Z * Z, axis=1)

    def ln_v(self, t: np.ndarray) -> np.ndarray:
        """Exact ``ln v1``: the ellipsoid's volume over ``Leb(Ω)`` (while it lies inside Ω)."""
        d = self.x_opt.size
        ln_vd = 0.5 * d * math.log(math.pi) - special.gammaln(0.5 * d + 1.0)
        ln_det = float(np.sum(np.log(self.weights)))
        ln_dom = float(np.sum(np.log(self.upper - self.lower)))
        return ln_vd + 0.5 * d * np.log(t) - 0.5 * ln_det - ln_dom

    def inside(self, t: float) -> bool:
        """Whether ``{f <= t}`` lies inside Ω (its extent ``sqrt(t·(H^-1)_ii)`` per coordinate)."""
        ext = np.sqrt(t * np.diag(np.linalg.inv(self.hessian)))
        return bool(np.all(self.x_opt - ext > self.lower) and np.all(self.x_opt + ext < self.upper))


def test_rotated_ellipsoid_needs_oriented_boxes() -> None:
    g = _RotatedEllipsoid(8)
    d = g.x_opt.size
    p = _Problem(g, g.lower, g.upper, g.x_opt, 0.0, 0.5 * d)
    shape = ladder_shape(g, g.x_opt, 0.0, g.lower, g.upper)
    assert shape.fallback is None
    assert shape.orientation is not None
    assert shape.log10_fill_share is not None
    assert shape.log10_fill_share < -4.0  # the rotated set fills little of its bounding box
    # the fitted axes span the same eigenspaces: Q diag(b^-2) Qᵀ is H up to scale
    Q, b = shape.orientation
    H_fit = (Q / b**2) @ Q.T
    np.testing.assert_allclose(H_fit / H_fit[0, 0], g.hessian / g.hessian[0, 0], rtol=0.02)

    def curve(orientation: tuple[np.ndarray, np.ndarray] | None) -> absrank.V1Curve:
        plan = plan_ladder(
            g.lower,
            g.upper,
            g.x_opt,
            factor=2.0,
            max_levels=16,
            min_log10_volume=-30.0,
            shape=np.asarray(shape),
            orientation=orientation,
        )
        return nested_curve(_levels(p, plan.boxes, 14, g.x_opt))

    oriented = curve(shape.orientation)
    t = 10.0 ** -np.arange(1.0, 5.0)
    assert all(g.inside(v) for v in t)
    exact = g.ln_v(t)
    assert np.all(exact / LN10 < -9.0)  # far below 1/N = 2^-14
    err = _decades(oriented.evaluate(t)[0], exact)
    assert np.all(np.abs(err) < 0.2), err
    used = oriented.info["levels_used"]
    assert any(oriented.info["levels"][j]["region"].get("kind") == "oriented" for j in used)
    # the same ladder with axis-aligned boxes: the sets stay clipped, v1 too high by 0.3-0.9
    axis_err = _decades(curve(None).evaluate(t)[0], exact)
    assert np.max(axis_err) > 0.5, axis_err
