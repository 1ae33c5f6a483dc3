r"""Deep lower tails by nested regions: ``v1`` many decades below ``1/N``.

A table of ``N`` Sobol samples on ``Ω`` resolves ``v1`` down to about ``1/N``; below that only a
tail model remains, and a power tail is valid only while the sublevel set ``{f <= t}`` lies inside
the sampled region. For a function with a known minimiser ``x*`` a *ladder* of boxes

.. math:: R_0 = Ω ⊃ R_1 ⊃ … ⊃ R_L, \qquad R_j = \prod_i [x^*_i − h_{j,i}, x^*_i + h_{j,i}] ∩ Ω,
          \qquad h_{j,i} = \min(R, σ_j a_i), \quad σ_j = σ_0 / \mathrm{factor}^j,

each sampled with its own ordinary table of ``N`` points, gives

.. math:: v_1(t) = \frac{\mathrm{Leb}(R_j)}{\mathrm{Leb}(Ω)}\, v_{1,R_j}(t)
          \quad\text{wherever}\quad \{f <= t\} ⊂ R_j,

so level ``j`` measures ``v1`` at the resolution ``Leb(R_j)/(N·Leb(Ω))`` without extrapolation.
The shape ``a`` (``max a_i = 1``) is the bounding box of ``f``'s local sublevel ellipsoid
(:func:`ladder_shape`; the cube ``a = 1`` when no ellipsoid fits), ``R`` the largest distance
from ``x*`` to a face of ``Ω``, and ``σ_0 = max_i max(x*_i − l_i, u_i − x*_i)/a_i`` the scale of
the smallest box of that shape around ``x*`` covering ``Ω`` (so the short axes shrink first;
for cubes ``σ_j = δ_j``, the ``[x* − δ_j, x* + δ_j]^d`` of Jing & Liu §V). :func:`plan_ladder`
picks ``L`` (a volume target, a cap, a thinness limit); every box is known before any sample is
drawn, so the levels build in parallel.

Oriented boxes. When the fitted form ``A`` is rotated (:attr:`LadderShape.rotation` above
:data:`MIN_ROTATION`), an axis-aligned box holds its sublevel ellipsoid at a tiny share (``10^-6``
to ``10^-12`` in 10-D). Every level whose box along ``A``'s eigenvectors,
``R_j = {x* + Q·diag(σ_j·b)·u : u ∈ [−1, 1]^d}`` (``b_k ∝ 1/sqrt(λ_k)``), lies inside ``Ω`` is
that box instead (the ball's ``V_d/2^d`` again); shallower levels, whose oriented box would
leave ``Ω``, stay axis-aligned. Axis-aligned forms (sphere, ellipsoid, cone) are unaffected.

The containment ``{f <= t} ⊂ R_j`` is *checked* from samples, never assumed (:func:`nested_curve`,
Notes), and every ``t`` is served by the deepest level whose containment is verified at ``t``; the
deepest level's own tail (:func:`app.domain.absrank.table_curve`, ``tail="auto"`` by default, its
power-tail validity checked on that box) serves ``t`` below its samples.

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking Optimization
       Algorithms, Eq. 28 (the per-level estimate) and §V (sampling boxes ``[x* − δ, x* + δ]``).
.. [2] SPEC §3.4, "nested regions": ``R_0 = Ω ⊃ R_1 ⊃ …`` around ``x*``, containment verified
       from the outer levels' samples.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import special

from app.domain import absrank, sampling, validation
from app.domain.absrank import RankContext, TableData
from app.domain.curves import NestedPiece, PowerLaw, V1Curve, info_json
from app.domain.errors import InvalidInput, NotApplicable

__all__ = [
    "CLIP_SHARE",
    "METHODS",
    "MIN_INNER_SAMPLES",
    "MIN_KEPT_SHARE",
    "MIN_ROTATION",
    "RESIDUAL_FLOOR",
    "SHAPE_METHOD",
    "THIN_SHARE",
    "KeptShare",
    "LadderBox",
    "LadderPlan",
    "LadderShape",
    "NestedLevel",
    "domain_extents",
    "kept_share_interval",
    "ladder_boxes",
    "ladder_deltas",
    "ladder_shape",
    "ln_volume_fraction",
    "nested_curve",
    "plan_ladder",
    "planned_kept_share",
]

LN10 = math.log(10.0)
#: A sample farther from ``x*`` than this share of the way to a face of ``R_j`` (a face inside the
#: outer region) counts as lying outside ``R_j`` (the margin of :data:`absrank.CLIP_SHARE`).
CLIP_SHARE = absrank.CLIP_SHARE
#: A level serves only if at least this many of its own samples lie below its threshold ``τ*_j``:
#: a box that sees (almost) none of the sublevel sets it would serve adds only extrapolation, and
#: is the signature of a box that misses the minimiser (a wrong ``x*``).
MIN_INNER_SAMPLES = 10
#: Per-value methods of a nested curve: ``"nested-"`` + the serving level's own method.
METHODS = tuple(f"nested-{m}" for m in absrank.METHODS)
#: Lower-tail modes accepted for the deepest level (the paper's tail ignores ``f*``).
TAIL_MODES = ("auto", "power", "linear")

_CONTAINMENT = (
    "{f <= t} within R_j is checked from samples: level j serves t only below tau_j = the "
    "smallest value among (a) the stored lowest samples of every outer level i < j that lie "
    "outside R_j shrunk toward x* by clip_share (faces inside R_i only; nothing lies beyond a "
    "shared face), each outer level capped at its largest stored value (beyond it nothing is "
    "known), and (b) level j's own stored lowest samples beyond clip_share of the way to a face "
    "of R_j inside the domain (the sublevel set reaches that face); levels with fewer than "
    "min_inner_samples samples below their threshold are skipped. The check has the resolution "
    "of the samples: a part of {f <= t} outside R_j that no outer sample falls into (share of "
    "the domain below about undetectable_share, the 95% upper limit for 0 hits among N points "
    "per outer level) escapes it, so v1 can be underestimated by up to about that share; it is "
    "not a proof of containment, and the reported intervals do not include it."
)


# --------------------------------------------------------------------------------------------
# Geometry of the ladder
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LadderBox:
    """One rung of a ladder of nested boxes around ``x*``.

    Attributes
    ----------
    level : int
        ``j >= 0``; level 0 is the whole domain.
    delta : float or None
        The scale ``σ_j`` of the rung (input units divided by the shape; for cubes its
        half-width ``δ_j``); ``None`` for level 0 (the domain itself).
    lower, upper : ndarray, shape (d,)
        ``R_j = [x* − h_j, x* + h_j] ∩ Ω``.
    ln_volume_fraction : float
        ``ln(Leb(R_j)/Leb(Ω))`` (``<= 0``; exactly 0 for level 0).
    half_widths : ndarray, shape (d,), or None
        ``h_{j,i} = min(R, σ_j·s_i)`` (input units, before clipping to ``Ω``; ``R`` the largest
        distance from ``x*`` to a face of ``Ω``), the per-coordinate ``delta`` of the box table
        (:func:`app.domain.sampling.region_box`); ``None`` for level 0. For an oriented box,
        the half-widths ``h_{j,k} = σ_j·b_k`` along its axes.
    axes : ndarray, shape (d, d), or None
        ``Q`` of an *oriented* box ``{x* + Q·diag(h_j)·u : u ∈ [−1, 1]^d}`` (column ``k`` the
        ``k``-th axis; it lies inside ``Ω``, and ``lower``/``upper`` are its axis-aligned
        bounding box); ``None`` for an axis-aligned box.
    intersect : bool
        ``True`` for an *intersected* level ``R_j = B_j ∩ Ω``: the oriented box ``B_j`` leaves
        ``Ω``; its table samples ``B_j`` and keeps the points inside ``Ω`` (``lower``/``upper``
        are then the bounding box of ``B_j`` clipped to ``Ω``, and ``half_widths`` are capped
        at ``Ω``'s extent along each axis, which leaves ``B_j ∩ Ω`` unchanged).
    planned_kept_share : float or None
        For an intersected level, the share of :data:`PLAN_KEPT_POINTS` fixed-seed Sobol points
        of ``B_j`` inside ``Ω`` (the planning estimate of ``Leb(B_j ∩ Ω)/Leb(B_j)``; the table
        measures it again on its own points); ``ln_volume_fraction`` is
        ``ln(planned_kept_share·Leb(B_j)/Leb(Ω))``.
    """

    level: int
    delta: float | None
    lower: np.ndarray
    upper: np.ndarray
    ln_volume_fraction: float
    half_widths: np.ndarray | None = None
    axes: np.ndarray | None = None
    intersect: bool = False
    planned_kept_share: float | None = None

    @property
    def oriented(self) -> bool:
        """Whether the box is oriented (its axes are those of the fitted form)."""
        return self.axes is not None


def _check_int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InvalidInput(f"{name} must be an integer >= {minimum}, got {value!r}", field=name)
    return int(value)


def _check_factor(factor: object) -> float:
    if isinstance(factor, bool) or not isinstance(factor, int | float | np.number):
        raise InvalidInput(f"factor must be a number, got {factor!r}", field="factor")
    value = float(factor)
    if not (math.isfinite(value) and value > 1.0):
        raise InvalidInput(f"factor must be finite and > 1, got {factor!r}", field="factor")
    return value


def _domain_and_opt(
    lower: np.ndarray, upper: np.ndarray, x_opt: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi = sampling.region_box(lower, upper, None, None)
    if x_opt is None:
        raise NotApplicable("nested regions need a known minimiser x*", field="x_opt")
    x = np.asarray(x_opt, dtype=np.float64)
    if x.shape != lo.shape or not np.all(np.isfinite(x)):
        raise InvalidInput(f"x_opt must be a finite array of shape {lo.shape}", field="x_opt")
    if np.any(x < lo) or np.any(x > hi):
        raise InvalidInput("x_opt must lie in the domain", field="x_opt")
    return lo, hi, x


def _reach(lo: np.ndarray, hi: np.ndarray, x: np.ndarray) -> float:
    """``R``: the largest distance from ``x*`` to a face of ``Ω`` (over both faces, all axes)."""
    return float(np.max(np.maximum(x - lo, hi - x)))


def ladder_deltas(
    lower: np.ndarray,
    upper: np.ndarray,
    x_opt: np.ndarray | None,
    *,
    factor: float,
    levels: int,
    shape: np.ndarray | None = None,
) -> tuple[float | None, ...]:
    """Scales ``σ_0, …, σ_L`` of a ladder of nested boxes around ``x*``.

    Parameters
    ----------
    lower, upper : array_like, shape (d,)
        The domain ``Ω``.
    x_opt : array_like, shape (d,)
        The known minimiser ``x*`` (inside ``Ω``).
    factor : float
        Divisor of the scale per level, ``> 1`` (2 halves every side that is not clipped).
    levels : int
        Number ``L >= 0`` of boxes below the domain.
    shape : array_like, shape (d,), optional
        Positive per-coordinate scale ``s``: box ``j`` has half-width ``min(R, σ_j·s_i)`` in
        coordinate ``i`` (default all ones: cubes, the ``[x* − δ, x* + δ]^d`` of Jing & Liu §V).
        A shape matched to the sublevel sets (:func:`ladder_shape`; ``1/sqrt(w_i)`` for
        ``Σ w_i x_i²``) lets ill-conditioned sets be sampled unclipped (Notes of
        :func:`nested_curve`).

    Returns
    -------
    tuple
        ``L + 1`` entries: ``None`` (level 0 is ``Ω`` itself), then ``σ_j = σ_0 / factor**j``
        for ``j = 1..L`` (units of ``x`` divided by ``s``), with
        ``σ_0 = max_i max(x*_i − l_i, u_i − x*_i)/s_i``, the scale of the smallest box of that
        shape centred at ``x*`` that covers ``Ω``. So the shortest axes of the shape shrink
        first, and a level spans ``Ω`` along every axis with ``σ_j·s_i >= R``; for cubes,
        ``σ_j = δ_j`` is the half-width of level ``j``.

    Raises
    ------
    InvalidInput
        Bad ``factor`` (``field="factor"``), ``levels`` (``field="levels"``) or ``shape``
        (``field="shape"``), a malformed box (``field="region"``) or an ``x_opt`` outside it
        (``field="x_opt"``).
    NotApplicable
        ``x_opt`` is unknown (``field="x_opt"``).

    Examples
    --------
    >>> ladder_deltas([-5.0, -5.0], [5.0, 5.0], [1.0, 0.0], factor=2.0, levels=3)
    (None, 3.0, 1.5, 0.75)
    """
    factor = _check_factor(factor)
    levels = _check_int(levels, "levels", 0)
    lo, hi, x = _domain_and_opt(lower, upper, x_opt)
    scale = _check_shape(shape, x.size)
    delta0 = float(np.max(np.maximum(x - lo, hi - x) / scale))
    return (None, *(delta0 / factor**j for j in range(1, levels + 1)))


def _check_orientation(
    orientation: tuple[np.ndarray, np.ndarray] | None, dim: int
) -> tuple[np.ndarray | None, np.ndarray | None, float]:
    """``(Q, b, ln|det Q|)`` of an orientation, checked; ``(None, None, 0)`` without one."""
    if orientation is None:
        return None, None, 0.0
    Q = np.asarray(orientation[0], dtype=np.float64)
    b = np.asarray(orientation[1], dtype=np.float64)
    ok = Q.shape == (dim, dim) and b.shape == (dim,) and np.all(np.isfinite(Q))
    if not (ok and np.all(np.isfinite(b)) and np.all(b > 0)):
        raise InvalidInput(
            f"orientation must be a {dim}x{dim} matrix of axes and {dim} positive half-widths",
            field="orientation",
        )
    if not np.allclose(Q.T @ Q, np.eye(dim), atol=1e-6):
        raise InvalidInput("orientation axes must be orthonormal", field="orientation")
    return Q, b, float(np.linalg.slogdet(Q)[1])


def _check_shape(shape: np.ndarray | None, dim: int) -> np.ndarray:
    if shape is None:
        return np.ones(dim)
    s = np.asarray(shape, dtype=np.float64)
    if s.shape != (dim,) or not np.all(np.isfinite(s)) or np.any(s <= 0):
        raise InvalidInput(f"shape must be {dim} finite positive numbers", field="shape")
    return s


def ln_volume_fraction(
    domain_lower: np.ndarray, domain_upper: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> float:
    """``ln(Leb(R)/Leb(Ω))`` of a box ``R = [lower, upper] ⊂ Ω``, summed per coordinate.

    Parameters
    ----------
    domain_lower, domain_upper : array_like, shape (d,)
        ``Ω``.
    lower, upper : array_like, shape (d,)
        ``R``.

    Returns
    -------
    float
        ``Σ_i ln((upper_i − lower_i)/(domain_upper_i − domain_lower_i))``; exactly 0 when
        ``R = Ω``; no underflow for tiny boxes in high dimension.

    Raises
    ------
    InvalidInput
        Malformed boxes or ``R`` not inside ``Ω`` (``field="region"``).
    """
    dlo, dhi = sampling.region_box(domain_lower, domain_upper, None, None)
    lo, hi = sampling.region_box(lower, upper, None, None)
    if lo.shape != dlo.shape or np.any(lo < dlo) or np.any(hi > dhi):
        raise InvalidInput("the box must lie inside the domain", field="region")
    return float(np.sum(np.log((hi - lo) / (dhi - dlo))))


def ladder_boxes(
    lower: np.ndarray,
    upper: np.ndarray,
    x_opt: np.ndarray | None,
    *,
    factor: float,
    levels: int,
    shape: np.ndarray | None = None,
    orientation: tuple[np.ndarray, np.ndarray] | None = None,
    intersect: bool = False,
) -> list[LadderBox]:
    """The boxes ``R_0 = Ω ⊃ R_1 ⊃ … ⊃ R_L`` of :func:`ladder_deltas` with their volume shares.

    Parameters
    ----------
    lower, upper, x_opt, factor, levels, shape
        As in :func:`ladder_deltas`.
    orientation : (ndarray, ndarray), optional
        ``(Q, b)``: the axes (orthonormal columns) and per-axis half-widths of the fitted
        sublevel ellipsoid (:attr:`LadderShape.orientation`). Every level whose oriented box
        ``{x* + Q·diag(σ_j·b)·u : u ∈ [−1, 1]^d}`` lies inside ``Ω``
        (``Σ_k |Q_ik| σ_j b_k <= min(x*_i − l_i, u_i − x*_i)`` for every ``i``) is that box
        instead of the axis-aligned one (so all levels from the first that fits on).
    intersect : bool, optional
        With ``orientation``: a level whose oriented box leaves ``Ω`` becomes the intersected
        region ``B_j ∩ Ω`` (:attr:`LadderBox.intersect`) where that is the finer region: the
        capped box ``B_j`` (half-widths ``min(σ_j·b_k, e_k)``, ``e_k`` the largest ``|z_k|``
        over ``Ω``, so ``B_j ∩ Ω`` is unchanged) has less volume than the clipped
        axis-aligned box (each sample then stands for less volume: the table resolves
        ``v1`` down to ``Leb(B_j)/(N·Leb(Ω))``) and at least :data:`MIN_KEPT_SHARE` of its
        planning points lie inside ``Ω``. Default ``False`` (the ladders before intersected
        levels).

    Returns
    -------
    list of LadderBox
        ``L + 1`` boxes, ``R_j = [x* − h_j, x* + h_j] ∩ Ω`` with ``h_{j,i} = min(R, σ_j·s_i)``,
        clipped by :func:`app.domain.sampling.region_box` exactly as a box table with
        ``delta=h_j`` is (for cubes ``h_j = δ_j``, and ``delta=δ_j`` gives the same bytes);
        or the oriented box, with ``ln_volume_fraction = ln(|det Q|·Π_k 2h_k / Leb(Ω))``.

    Raises
    ------
    InvalidInput, NotApplicable
        As in :func:`ladder_deltas`.

    Examples
    --------
    >>> boxes = ladder_boxes([-1.0], [1.0], [0.0], factor=2.0, levels=2)
    >>> [(b.delta, b.lower.tolist(), b.upper.tolist()) for b in boxes]
    [(None, [-1.0], [1.0]), (0.5, [-0.5], [0.5]), (0.25, [-0.25], [0.25])]
    >>> round(boxes[2].ln_volume_fraction / math.log(2.0), 12)
    -2.0
    """
    deltas = ladder_deltas(lower, upper, x_opt, factor=factor, levels=levels, shape=shape)
    lo, hi, x = _domain_and_opt(lower, upper, x_opt)
    scale = _check_shape(shape, x.size)
    reach = _reach(lo, hi, x)
    out = [LadderBox(0, None, lo, hi, 0.0)]
    axes, b, ln_det = _check_orientation(orientation, x.size)
    room = np.minimum(x - lo, hi - x)
    for j, delta in enumerate(deltas[1:], start=1):
        assert delta is not None
        if axes is not None and b is not None:
            h = delta * b
            ext = np.abs(axes) @ h
            if np.all(ext <= room):
                r_lo, r_hi = np.maximum(lo, x - ext), np.minimum(hi, x + ext)
                ln_frac = float(np.sum(np.log(2.0 * h)) + ln_det - np.sum(np.log(hi - lo)))
                out.append(LadderBox(j, delta, r_lo, r_hi, min(ln_frac, 0.0), h, axes))
                continue
        half = np.minimum(reach, delta * scale)
        r_lo, r_hi = sampling.region_box(lo, hi, x, half)
        ln_frac = ln_volume_fraction(lo, hi, r_lo, r_hi)
        if intersect and axes is not None and b is not None:
            cut = _intersected_box(j, delta, delta * b, axes, ln_det, x, lo, hi, ln_frac)
            if cut is not None:
                out.append(cut)
                continue
        out.append(LadderBox(j, delta, r_lo, r_hi, ln_frac, half))
    return out


#: Fixed-seed scrambled Sobol points of the oriented box with which :func:`ladder_boxes` plans
#: an intersected level (geometry only, no evaluation of ``f``): its kept share decides whether
#: the level is worth sampling.
PLAN_KEPT_POINTS = 2**14
PLAN_KEPT_SEED = 20_261_202
#: An intersected level ``B_j ∩ Ω`` is planned only when at least this share of ``B_j``'s
#: planning points lies inside ``Ω`` (so its table keeps at least ``N/16`` points).
MIN_KEPT_SHARE = 1.0 / 16.0


def domain_extents(
    axes: np.ndarray, x_opt: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """``(min, max)`` of ``z_k = Q[:, k]ᵀ(x − x*)`` over the box ``Ω = [lower, upper]``.

    Exact (a linear function on a box is extreme at a vertex): ``Σ_i min/max(Q_ik (l_i − x*_i),
    Q_ik (u_i − x*_i))``.
    """
    Q = np.asarray(axes, dtype=np.float64)
    a = Q * (np.asarray(lower, dtype=np.float64) - x_opt)[:, None]
    c = Q * (np.asarray(upper, dtype=np.float64) - x_opt)[:, None]
    return np.sum(np.minimum(a, c), axis=0), np.sum(np.maximum(a, c), axis=0)


def planned_kept_share(
    axes: np.ndarray,
    half_widths: np.ndarray,
    x_opt: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
) -> float:
    """Share of :data:`PLAN_KEPT_POINTS` fixed-seed Sobol points of the oriented box in ``Ω``."""
    U = sampling.sobol_chunk(x_opt.size, PLAN_KEPT_SEED, 0, PLAN_KEPT_POINTS)
    X = sampling.oriented_box_points(U, x_opt, axes, half_widths)
    inside = np.all((X >= lower) & (X <= upper), axis=1)
    return float(np.count_nonzero(inside)) / PLAN_KEPT_POINTS


def _intersected_box(
    j: int,
    delta: float,
    h: np.ndarray,
    axes: np.ndarray,
    ln_det: float,
    x: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    ln_axis_frac: float,
) -> LadderBox | None:
    """The intersected level ``B_j ∩ Ω`` if it is finer than the axis-aligned box, else None."""
    z_lo, z_hi = domain_extents(axes, x, lo, hi)
    cap = np.maximum(-z_lo, z_hi)
    h = np.minimum(h, cap)  # beyond e_k no point of Ω: B_j ∩ Ω unchanged
    if not np.all(h > 0):
        return None
    ln_box = float(np.sum(np.log(2.0 * h)) + ln_det - np.sum(np.log(hi - lo)))
    if not ln_box < ln_axis_frac:
        return None
    share = planned_kept_share(axes, h, x, lo, hi)
    if share < MIN_KEPT_SHARE:
        return None
    ext = np.abs(axes) @ h
    r_lo, r_hi = np.maximum(lo, x - ext), np.minimum(hi, x + ext)
    ln_frac = min(ln_box + math.log(share), 0.0)
    return LadderBox(j, delta, r_lo, r_hi, ln_frac, h, axes, True, share)


#: A ladder stops before a box narrower than this share of the domain's width in some
#: coordinate (a box table is refused below ``1e-9``: its Sobol points would collapse).
THIN_SHARE = 1e-8


@dataclass(frozen=True, eq=False)
class LadderPlan:
    """The boxes of a ladder and why it has that many (:func:`plan_ladder`).

    Attributes
    ----------
    boxes : list of LadderBox
        ``R_0 = Ω`` first, then ``L >= 1`` boxes.
    stop : str
        ``"volume"`` (the deepest box reached ``min_log10_volume``), ``"levels"`` (the cap
        ``max_levels``) or ``"thin"`` (one more level would be narrower than
        :data:`THIN_SHARE` of the domain in some coordinate).
    stop_detail : str
        The same in words.
    """

    boxes: list[LadderBox]
    stop: str
    stop_detail: str

    @property
    def log10_volume_fraction(self) -> float:
        """``log10(Leb(R_L)/Leb(Ω))`` of the deepest box."""
        return self.boxes[-1].ln_volume_fraction / LN10


def plan_ladder(
    lower: np.ndarray,
    upper: np.ndarray,
    x_opt: np.ndarray | None,
    *,
    factor: float,
    max_levels: int,
    min_log10_volume: float,
    shape: np.ndarray | None = None,
    orientation: tuple[np.ndarray, np.ndarray] | None = None,
    intersect: bool = False,
) -> LadderPlan:
    r"""The ladder the service builds: shaped boxes until the deepest is small enough.

    Level ``j >= 1`` is the box of :func:`ladder_boxes`,
    ``R_j = [x* − h_j, x* + h_j] ∩ Ω``, ``h_{j,i} = min(R, σ_j·a_i)``,
    ``σ_j = σ_0/factor^j``, ``σ_0 = max_i max(x*_i − l_i, u_i − x*_i)/a_i`` (the smallest
    box of shape ``a`` around ``x*`` covering ``Ω``). With ``a`` normalized to ``max a_i = 1``
    (:func:`ladder_shape`) the short axes of the sublevel shape shrink first, one factor per
    level, while the long ones still span ``Ω``; from the level where ``σ_j <= R`` on, every
    box is the shape scaled by ``σ_j`` (clipped to ``Ω``) and loses ``d·log10(factor)``
    decades of volume per level. For cubes (``a = 1``) ``σ_j = δ_j``, the half-width.

    Parameters
    ----------
    lower, upper, x_opt
        As in :func:`ladder_deltas`.
    factor : float
        Divisor of ``σ`` per level, ``> 1``.
    max_levels : int
        Hard cap ``>= 1`` on the number of boxes below the domain.
    min_log10_volume : float
        Target: the ladder ends at the first level with
        ``log10(Leb(R_j)/Leb(Ω)) <= min_log10_volume`` (``< 0``).
    shape : array_like, shape (d,), optional
        ``a`` (default the cube).
    orientation : (ndarray, ndarray), optional
        Oriented boxes for the levels that fit inside ``Ω`` (:func:`ladder_boxes`); their
        thinness is judged along their own axes (``2h_k`` against the domain's narrowest side).
    intersect : bool, optional
        Intersected levels ``B_j ∩ Ω`` where the oriented box leaves ``Ω`` (:func:`ladder_boxes`).

    Returns
    -------
    LadderPlan
        ``L + 1`` boxes, ``1 <= L <= max_levels``, and the reason ``L`` is what it is: the
        volume target, the cap, or :data:`THIN_SHARE` (a deeper box would be too thin to
        sample; the level is dropped rather than refused).

    Raises
    ------
    InvalidInput, NotApplicable
        As in :func:`ladder_deltas`; ``max_levels`` (``field="levels"``) or
        ``min_log10_volume`` not negative (``field="min_log10_volume"``).

    Examples
    --------
    >>> plan = plan_ladder([-1.0] * 2, [1.0] * 2, [0.0] * 2, factor=2.0, max_levels=10,
    ...                    min_log10_volume=-3.0)
    >>> len(plan.boxes) - 1, plan.stop, round(plan.log10_volume_fraction, 3)
    (5, 'volume', -3.01)
    """
    max_levels = _check_int(max_levels, "levels", 1)
    target = float(min_log10_volume)
    if not (math.isfinite(target) and target < 0):
        raise InvalidInput(
            f"min_log10_volume must be a finite negative number, got {min_log10_volume!r}",
            field="min_log10_volume",
        )
    boxes = ladder_boxes(
        lower,
        upper,
        x_opt,
        factor=factor,
        levels=max_levels,
        shape=shape,
        orientation=orientation,
        intersect=intersect,
    )
    width = boxes[0].upper - boxes[0].lower
    for j, box in enumerate(boxes[1:], start=1):
        if box.axes is not None and box.half_widths is not None:
            thin = np.flatnonzero(2.0 * box.half_widths < THIN_SHARE * np.min(width))
        else:
            thin = np.flatnonzero(box.upper - box.lower < THIN_SHARE * width)
        if thin.size and j > 1:
            i = int(thin[0])
            return LadderPlan(
                boxes[:j],
                "thin",
                f"level {j} would be narrower than {THIN_SHARE:g} of the domain in coordinate "
                f"{i}; the ladder stops at level {j - 1} "
                f"(log10 volume fraction {boxes[j - 1].ln_volume_fraction / LN10:.4g})",
            )
        if box.ln_volume_fraction / LN10 <= target:
            return LadderPlan(
                boxes[: j + 1],
                "volume",
                f"level {j} reaches log10 volume fraction "
                f"{box.ln_volume_fraction / LN10:.4g} <= {target:g}",
            )
    return LadderPlan(
        boxes,
        "levels",
        f"capped at {max_levels} levels (log10 volume fraction "
        f"{boxes[-1].ln_volume_fraction / LN10:.4g}, target {target:g})",
    )


# --------------------------------------------------------------------------------------------
# The shape of the boxes
# --------------------------------------------------------------------------------------------

#: Seed of the random probe directions of :func:`ladder_shape` (fixed, so the shape, and every
#: level's spec with it, is a function of ``f`` alone).
SHAPE_SEED = 20_240_917
#: Probe radii of :func:`ladder_shape`, as shares of ``R`` (the largest distance from ``x*`` to
#: a face of ``Ω``): one target level of ``f − f*`` per radius.
SHAPE_RADII = (1e-2, 1e-3, 1e-4)
#: Significant digits kept of the half-widths ``a_i`` (2 of the fit residual): the shape enters
#: the spec hash, and rounding makes it independent of the last bits of the LAPACK solve.
SHAPE_DIGITS = 3
#: A fit residual below this is recorded as 0 (an exact quadratic form up to rounding, whose
#: digits would differ between platforms and so split the spec hash).
RESIDUAL_FLOOR = 1e-6
#: Largest condition number of a fitted form that counts as positive definite (beyond it the
#: smallest eigenvalues are the fit's noise: a rank-deficient form, e.g. a linear slope).
MAX_CONDITION = 1e10
#: The full quadratic form (``d(d+1)/2`` unknowns) is fitted up to this dimension, its diagonal
#: above (the axis extents of the form, rotations ignored).
SHAPE_MAX_FULL_DIM = 40
#: Rotation (root mean square of the off-diagonal correlations ``A_ij/sqrt(A_ii·A_jj)`` of the
#: fitted form, i.e. ``‖C − I‖_F/sqrt(d)``) above which a ladder uses oriented boxes: below it
#: the form is axis-aligned up to fit noise (exactly 0 for the sphere, ellipsoid and cone).
MIN_ROTATION = 0.05
#: Decimals kept of the axes ``Q`` of an oriented shape (they enter the spec hash).
AXES_DECIMALS = 9
#: Whitening passes of :func:`ladder_shape` when the first fit is not positive definite (an
#: ill-conditioned form seen through a relative wiggle, BBOB f10/f12): at most this many refits
#: in the coordinates ``y = S(x − x*)``, ``S`` the square root of the previous form.
WHITEN_STEPS = 8
#: A whitening pass has converged when its residual form ``M`` is positive definite with
#: ``λ_max(M)/λ_min(M)`` at most this: the previous form was right to within this factor.
WHITEN_CONDITION = 1.5
#: Largest factor by which one whitening pass rescales the form along any direction (the
#: residual form's eigenvalues are clipped to ``[1/WHITEN_TRUST, WHITEN_TRUST]``: a negative
#: or tiny eigenvalue of a noisy pass does not throw the next pass's probes off).
WHITEN_TRUST = 10.0
#: Largest fit residual of a whitened form that is accepted: beyond it the level sets are not
#: ellipsoids (multi-modal rises fit 0.3-0.9), and the cube stays.
WHITEN_MAX_RESIDUAL = 0.25
#: Name and version of the method, recorded with every shape.
SHAPE_METHOD = "bounding box of the fitted local quadratic form (f - f*)^(2/p), v1"
# no numbers in the reason: it enters the spec hash, and near-zero eigenvalues are noise
_NOT_PD = (
    "the fitted form is not positive definite (smallest eigenvalue not above 1e-10 of the "
    "largest): no ellipsoidal sublevel sets"
)
_SCAN_STEPS = 48  # radii r_top·2^-m, m = 0..47, for the innermost crossing
_BISECTION_STEPS = 32  # bracket [r/2, r] narrowed to 2^-32 of r


@dataclass(frozen=True, eq=False)
class LadderShape:
    """Per-coordinate shape ``a`` of the boxes of a ladder (:func:`ladder_shape`).

    Attributes
    ----------
    half_widths : ndarray, shape (d,)
        ``a_i > 0`` with ``max a_i = 1``, rounded to :data:`SHAPE_DIGITS` significant digits;
        all ones for the cube (fallback). ``np.asarray(shape)`` gives it.
    degree : float
        ``p``: ``f − f*`` grows as ``|x − x*|^p`` (``d/β`` from the registered β, else 2).
    model : str
        ``"quadratic-form"`` (full ``A``), ``"diagonal"`` (``d >``
        :data:`SHAPE_MAX_FULL_DIM`) or ``"cube"`` (fallback).
    fit_residual : float or None
        Root mean square of ``(x − x*)ᵀA(x − x*)/g − 1`` over the probes (2 significant
        digits; 0 below :data:`RESIDUAL_FLOOR`); ``None`` when no fit was made.
    fallback : str or None
        Why the cube is used instead of a fitted shape.
    probes : int
        Points on the level sets used by the fit.
    condition : float or None
        ``λ_max/λ_min`` of the fitted ``A``.
    log10_fill_share : float or None
        ``log10`` of the share of its axis-aligned bounding box that the ellipsoid
        ``{(x − x*)ᵀA(x − x*) <= 1}`` fills (``V_d/2^d`` for a ball or an axis-aligned ellipsoid,
        ``-2.6`` in 10-D; smaller when ``A`` is rotated): about the share of a deep box's
        samples that fall in the sublevel set touching it.
    rotation : float or None
        ``‖C − I‖_F/sqrt(d)`` of the correlation form ``C_ij = A_ij/sqrt(A_ii·A_jj)`` (2
        significant digits): 0 for an axis-aligned form.
    axes : ndarray, shape (d, d), or None
        Orthonormal eigenvectors ``Q`` of ``A`` (columns, eigenvalues ascending, each with its
        largest entry positive, rounded to :data:`AXES_DECIMALS` decimals).
    axis_half_widths : ndarray, shape (d,), or None
        ``b_k ∝ 1/sqrt(λ_k)`` along ``Q``'s columns, in the units of ``half_widths`` (the
        oriented box ``σ·b`` bounds the same ellipsoid as the axis-aligned box ``σ·a``),
        :data:`SHAPE_DIGITS` significant digits.
    whitened : int
        Whitening passes that made the form (0: the first fit was positive definite; see
        :func:`ladder_shape`, Notes, "Whitening").
    """

    half_widths: np.ndarray
    degree: float
    model: str
    fit_residual: float | None
    fallback: str | None
    probes: int
    condition: float | None = None
    log10_fill_share: float | None = None
    rotation: float | None = None
    axes: np.ndarray | None = None
    axis_half_widths: np.ndarray | None = None
    whitened: int = 0

    @property
    def orientation(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(Q, b)`` for oriented ladder boxes when the form is rotated, else ``None``.

        Only a full quadratic form whose :attr:`rotation` exceeds :data:`MIN_ROTATION`:
        axis-aligned forms (sphere, ellipsoid, cone) keep their axis-aligned ladders exactly.
        """
        if (
            self.model != "quadratic-form"
            or self.rotation is None
            or self.rotation <= MIN_ROTATION
            or self.axes is None
            or self.axis_half_widths is None
        ):
            return None
        return self.axes, self.axis_half_widths

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.array(self.half_widths, dtype=dtype)

    @property
    def is_cube(self) -> bool:
        """Whether every ``a_i`` is 1 (fitted isotropic, or the fallback)."""
        return bool(np.all(self.half_widths == 1.0))

    def spec(self) -> dict[str, Any]:
        """What enters each level's spec region (JSON-ready, rounded, deterministic).

        ``orientation`` (rotation, threshold, axis half-widths ``b``) only when the ladder uses
        oriented boxes, so axis-aligned shapes keep their specs (and hashes).
        """
        out: dict[str, Any] = {
            "method": SHAPE_METHOD,
            "model": self.model,
            "half_widths": [float(v) for v in self.half_widths],
            "degree": float(self.degree),
            "fit_residual": self.fit_residual,
            "fallback": self.fallback,
        }
        if self.whitened:  # only then: first-pass shapes keep their specs (and hashes)
            out["whitened"] = self.whitened
        orientation = self.orientation
        if orientation is not None:
            out["orientation"] = {
                "rotation": self.rotation,
                "min_rotation": MIN_ROTATION,
                "axis_half_widths": [float(v) for v in orientation[1]],
            }
        return out

    def describe(self) -> dict[str, Any]:
        """:meth:`spec` plus the fit's diagnostics (probes, condition, fill share, rotation)."""
        return self.spec() | {
            "probes": self.probes,
            "condition": self.condition,
            "log10_fill_share": self.log10_fill_share,
            "rotation": self.rotation,
            "oriented": self.orientation is not None,
        }


def _significant(x: float, digits: int) -> float:
    return float(f"{x:.{digits - 1}e}")


def _pair_directions(scale: np.ndarray) -> np.ndarray:
    """``(±c_i e_i ± c_j e_j)/norm`` for ``i < j``: the off-diagonal probes, in scaled axes ``c``.

    With the axes ``±e_i`` the design is invariant under permutations and sign changes of the
    coordinates: a function with the symmetry of the cube (the cone ``max_i |x_i|``) gets an
    exactly isotropic shape, and every ``u`` comes with ``−u``, which cancels the odd (cubic)
    terms of ``f`` about ``x*`` to first order in the fit (Rosenbrock's, for one).
    """
    dim = scale.size
    i, j = np.triu_indices(dim, 1)
    if not i.size:
        return np.zeros((0, dim))
    out = []
    for si, sj in ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)):
        V = np.zeros((i.size, dim))
        V[np.arange(i.size), i] = si * scale[i]
        V[np.arange(i.size), j] = sj * scale[j]
        out.append(V)
    V = np.vstack(out)
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def _random_directions(scale: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` directions ``c ⊙ g/|c ⊙ g|``, ``g`` Gaussian from ``default_rng(seed)``."""
    V = np.random.default_rng(seed).standard_normal((n, scale.size)) * scale
    return V / np.linalg.norm(V, axis=1, keepdims=True)


def _ray_lengths(U: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Largest ``r`` with ``x + r·u`` in ``Ω``, per direction ``u``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(U > 0, (hi - x) / U, np.inf)
        down = np.where(U < 0, (lo - x) / U, np.inf)
    return np.min(np.minimum(up, down), axis=1)


def _features(Z: np.ndarray, full: bool) -> np.ndarray:
    """Columns of ``zᵀAz`` linear in the entries of symmetric ``A`` (upper triangle)."""
    if not full:
        return Z * Z
    i, j = np.triu_indices(Z.shape[1])
    return Z[:, i] * Z[:, j] * np.where(i == j, 1.0, 2.0)


def _unpack(coef: np.ndarray, dim: int, full: bool) -> np.ndarray:
    if not full:
        return np.diag(coef)
    A = np.zeros((dim, dim))
    A[np.triu_indices(dim)] = coef
    return A + np.triu(A, 1).T


def _cube(dim: int, degree: float, reason: str, *, probes: int = 0, residual: float | None = None):
    return LadderShape(np.ones(dim), degree, "cube", residual, reason, probes)


def ladder_shape(
    fn_evaluate: Callable[[np.ndarray], np.ndarray],
    x_opt: np.ndarray | None,
    f_opt: float | None,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    degree: float | None = None,
    n_random: int | None = None,
    seed: int = SHAPE_SEED,
    radii: Sequence[float] = SHAPE_RADII,
) -> LadderShape:
    r"""Per-coordinate shape of ladder boxes: the bounding box of ``f``'s local sublevel set.

    Deterministic and computed from ``f`` alone (no table), so every level's box is known up
    front and all levels build in parallel.

    Parameters
    ----------
    fn_evaluate : callable
        Vectorised ``f``, ``(n, d) -> (n,)``.
    x_opt : array_like, shape (d,)
        The known minimiser ``x*`` (inside ``Ω``).
    f_opt : float
        The known minimum ``f*``.
    lower, upper : array_like, shape (d,)
        The domain ``Ω``.
    degree : float, optional
        ``p > 0`` with ``f − f* ≈ |x − x*|^p`` near ``x*``: ``d/β`` from the registered
        local structure (2 at a smooth minimum, 1 at a cone, 4 for BBOB f21/f22); default 2.
    n_random : int, optional
        Fixed-seed random probe directions added to the deterministic design (default 0: the
        axes and the pair diagonals determine ``A`` and keep the design symmetric).
    seed : int, optional
        Seed of the random directions (:data:`SHAPE_SEED`; part of the method, do not vary).
    radii : sequence of float, optional
        Probe radii as shares of ``R`` (:data:`SHAPE_RADII`).

    Returns
    -------
    LadderShape
        ``half_widths`` ``a`` (``max a_i = 1``), the model, degree, fit residual, and the
        fallback reason when the cube is returned instead.

    Raises
    ------
    InvalidInput
        Malformed domain, ``x_opt``, ``degree``, ``n_random`` or ``radii``.
    NotApplicable
        ``x_opt`` or ``f_opt`` unknown.

    Notes
    -----
    Method. Near a minimum of degree ``p``, ``g(x) = (f(x) − f*)^{2/p}`` is approximately a
    positive-definite quadratic form ``(x − x*)ᵀA(x − x*)``, so the sublevel sets
    ``{f <= f* + s}`` are approximately the ellipsoids ``{(x − x*)ᵀA(x − x*) <= s^{2/p}}``, all
    the same shape. A box holds such an ellipsoid unclipped with the least waste when it is the
    ellipsoid's axis-aligned bounding box, of half-widths ``sqrt(s^{2/p}·(A^{-1})_{ii})``;
    hence ``a_i = sqrt((A^{-1})_{ii})``, normalized to ``max a_i = 1``, and the ladder scales
    that box (:func:`plan_ladder`). For ``Σ w_i x_i²`` this gives ``a_i ∝ 1/sqrt(w_i)``.

    Probes. Target levels: for each radius ``ρ·R`` of ``radii`` (``R`` the largest distance
    from ``x*`` to a face of ``Ω``), ``s = min_i (f(x* ± ρR·e_i) − f*)`` over the axis
    directions that stay in ``Ω`` that far (levels within rounding of 0 are skipped). Along a
    direction ``u`` the crossing of ``f − f* = s`` nearest ``x*`` is bracketed on the radii
    ``r_max(u)·2^{-m}`` (``r_max`` to the boundary of ``Ω``; non-monotone rays, e.g. through
    other basins, are handled) and bisected to ``2^{-32}``. Stage 1 probes the axes ``±e_i``;
    their crossing radii give the extent ``c_i`` of the level sets along each axis. Stage 2
    probes the pair diagonals ``(±c_i e_i ± c_j e_j)/norm``, ``i < j`` (and ``n_random``
    fixed-seed random directions ``c ⊙ g/|c ⊙ g|`` if asked), spread evenly in the scaled
    coordinates ``y = (x − x*)/c`` so that ill-conditioned axes are probed as well as the
    others; a direction that leaves ``Ω`` at once (``x*`` on a face) is replaced by its
    opposite. Each crossing ``z = r·u`` gives one equation ``zᵀAz = s^{2/p}``; ``A`` (symmetric,
    ``d(d+1)/2`` unknowns, or its diagonal above :data:`SHAPE_MAX_FULL_DIM`) is their
    least-squares solution in relative terms (each row divided by ``s^{2/p}``, in the scaled
    coordinates, columns normalized), and ``fit_residual`` is the root mean square of the
    relative misfit: rounding noise for an exact quadratic form (recorded as 0; the ellipsoid
    is recovered to 0.2%, the rounding to 3 digits), 0.2 for the cone ``max_i |x_i|``
    (``p = 1``; its sublevel cubes are fitted by a ball: ``a`` is exactly isotropic by the
    symmetry of the design), 0.004-0.07 for BBOB functions with ``T_osz`` (its log-periodic
    factor).
    ``2d + 2d(d − 1)`` directions, about ``140`` evaluations each: 0.01-0.05 s in 10-D, 1-4 s
    in 40-D.

    Whitening. With a relative wiggle ``ε`` on the rise (``T_osz``), the small eigenvalues of
    a form of condition ``1e6`` are differences of large numbers, ``O(ε·λ_max)``, and the first
    fit can come out indefinite (BBOB f10). Only then, the form is refined by passes in its own
    whitened coordinates: ``S = |A|^{1/2}`` (eigenvalues ``|λ|`` floored at ``λ_max/``
    :data:`MAX_CONDITION`), the axes and pair diagonals of ``y = S(x − x*)`` (directions
    ``S^{-1}u/|S^{-1}u|``, the same target levels) probed, the residual form ``M`` fitted in
    ``y`` (near the identity: its eigenvalues come to about ``ε``), and ``A ← S M' S`` with
    ``M'`` the form ``M`` with eigenvalues clipped to ``[1/T, T]``, ``T =``
    :data:`WHITEN_TRUST` (a trust region). Converged when ``M`` is positive definite of
    condition at most :data:`WHITEN_CONDITION` (at most :data:`WHITEN_STEPS` passes) with a
    residual at most :data:`WHITEN_MAX_RESIDUAL`; the shape then records the passes in
    ``whitened`` (and in its spec). A first fit that is positive definite is returned as it
    is, so those shapes (and their specs) do not depend on the whitening. BBOB f10: 3 passes in
    5-D, 5 in 10-D; BBOB f12 (bent cigar, asymmetric under ``T_asy``) does not converge and
    keeps the cube.

    Fallback to the cube (all ones, with the reason in ``fallback``): ``f`` non-finite or below
    ``f*`` at a probe, a plateau (``f − f*`` within rounding of 0 at the largest probe radius
    in some direction), too few crossings for the unknowns, a non-finite fit, or ``A`` not
    positive definite (or of condition above :data:`MAX_CONDITION`).

    Limit of axis-aligned boxes. An ellipsoid whose axes are the coordinate axes fills
    ``V_d/2^d`` of its bounding box (``10^-2.6`` in 10-D, as a ball its cube; but ``10^-20.5``
    in 40-D), whatever its condition. A rotated ill-conditioned ellipsoid fills far less
    (``log10_fill_share``): BBOB f22/i1/d10 (rotated, condition 1e3) ``10^-6.25`` of its
    bounding box (``10^-7.8`` of the smallest cube around it), f21/i1/d10 (condition 32)
    ``10^-3.6`` (cube ``10^-5.2``), BBOB f10 (rotated ellipsoid, condition 1e6, fitted by
    whitening) far less again. Such a set never fills a box
    enough for ``N`` samples to resolve it unclipped: a box's own samples reach its faces first
    and :func:`nested_curve` refuses the level (on f22 with ``N = 2^16`` only level 2 of 21 is
    used, and its clipped lower tail is decades off). Hence oriented boxes: ``axes`` (the
    eigenvectors ``Q`` of ``A``) and ``axis_half_widths`` (``b_k ∝ 1/sqrt(λ_k)``) come with
    every positive-definite fit, and :attr:`LadderShape.orientation` hands them to
    :func:`plan_ladder` when ``rotation > MIN_ROTATION`` (f21, f22, CEC2005 F2/F3, CEC2017 F1;
    not the sphere, ellipsoid or cone, whose ``rotation`` is rounding noise, ``~1e-15``). An
    oriented box is used only where it fits inside ``Ω``: sets whose tight oriented box meets
    a face of ``Ω`` are still sampled by (clipped) axis-aligned boxes.

    Examples
    --------
    >>> f = lambda X: X[:, 0] ** 2 + 100.0 * X[:, 1] ** 2
    >>> shape = ladder_shape(f, [0.0, 0.0], 0.0, [-1.0, -1.0], [1.0, 1.0])
    >>> shape.half_widths.tolist(), shape.model, shape.fallback
    ([1.0, 0.1], 'quadratic-form', None)
    """
    lo, hi, x = _domain_and_opt(lower, upper, x_opt)
    if f_opt is None:
        raise NotApplicable("nested regions need a known minimum f*", field="f_opt")
    f_star = float(f_opt)
    p = 2.0 if degree is None else float(degree)
    if not (math.isfinite(p) and p > 0):
        raise InvalidInput(f"degree must be finite and > 0, got {degree!r}", field="degree")
    rhos = sorted((float(r) for r in radii), reverse=True)
    if not rhos or not all(math.isfinite(r) and 0 < r <= 1 for r in rhos):
        raise InvalidInput("radii must be shares in (0, 1]", field="radii")
    n_rand = 0 if n_random is None else _check_int(n_random, "n_random", 0)
    dim = x.size
    full = dim <= SHAPE_MAX_FULL_DIM
    unknowns = dim * (dim + 1) // 2 if full else dim
    reach = _reach(lo, hi, x)

    def rise(r: np.ndarray, dirs: np.ndarray) -> np.ndarray:
        pts = np.clip(x + r[:, None] * dirs, lo, hi)
        return np.asarray(fn_evaluate(pts), dtype=np.float64) - f_star

    # stage 1: the axes fix the target levels and the scale of every coordinate
    axes = np.vstack([np.eye(dim), -np.eye(dim)])
    axes_len = _ray_lengths(axes, x, lo, hi)
    targets = _target_levels(rise, axes, axes_len, [r * reach for r in rhos], f_star)
    if isinstance(targets, str):
        return _cube(dim, p, targets)
    g_levels = np.asarray(targets) ** (2.0 / p)
    ax_r, ax_ok = _crossings(rise, axes, axes_len, targets)
    scale = _axis_scale(ax_r, ax_ok, g_levels)
    # stage 2: off-diagonal (and optional random) directions, evenly spread in scaled axes
    extra = _pair_directions(scale) if full else np.zeros((0, dim))
    if n_rand:
        extra = np.vstack([extra, _random_directions(scale, n_rand, seed)])
    extra, extra_len = _inside_directions(extra, x, lo, hi)
    ex_r, ex_ok = _crossings(rise, extra, extra_len, targets)
    U = np.vstack([axes, extra])
    R = np.hstack([ax_r, ex_r])
    ok = np.hstack([ax_ok, ex_ok])
    g_all = np.repeat(g_levels[:, None], U.shape[0], axis=1)
    Z = (R[:, :, None] * U[None, :, :])[ok]
    g = g_all[ok]
    if Z.shape[0] < max(1.5 * unknowns, unknowns + 2):
        return _cube(dim, p, f"too few level-set crossings ({Z.shape[0]}) for {unknowns} unknowns")
    shape = _fit(Z, g, p, full, scale)
    if shape.fallback != _NOT_PD or not full:
        return shape
    # the first form is not positive definite: refit it in its own whitened coordinates
    A = _solve(Z / scale, g, full)[0] / np.outer(scale, scale)
    return _whiten(rise, A, x, lo, hi, targets, p, scale, unknowns) or shape


def _inside_directions(
    U: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Directions ``U`` with their ray lengths, flipped where ``x*`` on a face of ``Ω`` would
    leave ``Ω`` at once (the opposite direction is probed instead), duplicates dropped."""
    U = U.copy()
    length = _ray_lengths(U, x, lo, hi)
    out = length <= 0
    U[out] *= -1.0
    length[out] = _ray_lengths(U[out], x, lo, hi)
    _, first = np.unique(U, axis=0, return_index=True)  # a flip may repeat a direction
    keep = np.zeros(U.shape[0], dtype=bool)
    keep[first] = True
    keep &= length > 0
    return U[keep], length[keep]


def _psd_root(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(S, S^{-1})``, ``S = |A|^{1/2}`` (eigenvalues ``|λ|`` floored at ``λ_max/``
    :data:`MAX_CONDITION`), symmetric: the whitening of a form that may be indefinite."""
    lam, V = np.linalg.eigh(0.5 * (A + A.T))
    mag = np.abs(lam)
    mag = np.maximum(mag, np.max(mag) / MAX_CONDITION)
    root = np.sqrt(mag)
    return (V * root) @ V.T, (V / root) @ V.T


def _whiten(
    rise: Callable[[np.ndarray, np.ndarray], np.ndarray],
    A: np.ndarray,
    x: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    targets: Sequence[float],
    p: float,
    scale: np.ndarray,
    unknowns: int,
) -> LadderShape | None:
    """Refit ``A`` in the whitened coordinates ``y = S(x − x*)``, ``S = |A|^{1/2}``, until the
    residual form is near the identity (:data:`WHITEN_CONDITION`); ``None`` if it never is."""
    dim = x.size
    ones = np.ones(dim)
    design = np.vstack([np.eye(dim), -np.eye(dim), _pair_directions(ones)])
    g_levels = np.asarray(targets) ** (2.0 / p)
    for step in range(1, WHITEN_STEPS + 1):
        if not np.all(np.isfinite(A)):
            return None
        S, S_inv = _psd_root(A)
        U = design @ S_inv  # x-directions S^{-1} u (S_inv symmetric)
        U = U / np.linalg.norm(U, axis=1, keepdims=True)
        U, length = _inside_directions(U, x, lo, hi)
        R, ok = _crossings(rise, U, length, targets)
        Z = (R[:, :, None] * U[None, :, :])[ok]
        g = np.repeat(g_levels[:, None], U.shape[0], axis=1)[ok]
        if Z.shape[0] < max(1.5 * unknowns, unknowns + 2):
            return None
        M, residual = _solve(Z @ S, g, True)  # S symmetric: y = S z
        if not (np.all(np.isfinite(M)) and math.isfinite(residual)):
            return None
        lam, V = np.linalg.eigh(0.5 * (M + M.T))
        # a trust region: one pass rescales no direction by more than WHITEN_TRUST
        step_form = (V * np.clip(lam, 1.0 / WHITEN_TRUST, WHITEN_TRUST)) @ V.T
        A = S @ step_form @ S
        A = 0.5 * (A + A.T)
        if lam[0] > 0 and lam[-1] <= WHITEN_CONDITION * lam[0]:
            if residual > WHITEN_MAX_RESIDUAL:
                return None
            shape = _shape_of(A * np.outer(scale, scale), scale, residual, Z.shape[0], p, True)
            if shape.fallback is not None:
                return None
            return dataclasses.replace(shape, whitened=step)
    return None


def _target_levels(
    rise: Callable[[np.ndarray, np.ndarray], np.ndarray],
    axes: np.ndarray,
    axes_len: np.ndarray,
    radii: Sequence[float],
    f_star: float,
) -> list[float] | str:
    """Target levels ``s = min over the axes of f(x* ± r·e_i) − f*``, per radius (decreasing).

    Returns the levels above rounding, or why there are none (a reason for the cube).
    """
    targets = []
    for k, r in enumerate(radii):
        long = axes_len >= r
        if not np.any(long):
            continue
        h = rise(np.full(int(np.sum(long)), r), axes[long])
        if not np.all(np.isfinite(h)):
            return "f is not finite at a probe point"
        noise = 1e4 * np.finfo(float).eps * max(abs(f_star), float(np.max(np.abs(h + f_star))))
        if np.any(h < -noise):
            return f"f < f* at distance {r:.3g} from x*: x* is not the minimiser"
        level = float(np.min(h))
        if level > noise:
            targets.append(level)
        elif k == 0:
            return (
                f"a plateau: f - f* is within rounding of 0 at distance {r:.3g} from x* along "
                "some axis"
            )
    return targets or f"no axis reaches {radii[0]:.3g} from x* inside the domain"


def _axis_scale(ax_r: np.ndarray, ax_ok: np.ndarray, g_levels: np.ndarray) -> np.ndarray:
    """Per-coordinate extent ``c_i`` (max 1) of the level sets along ``±e_i``.

    Geometric mean of ``r/sqrt(g)`` over both signs and all levels; an axis never crossed
    (the domain ends first) counts as the longest.
    """
    dim = ax_r.shape[1] // 2
    with np.errstate(divide="ignore"):
        ln_ext = np.where(ax_ok, np.log(ax_r) - 0.5 * np.log(g_levels)[:, None], np.nan)
    per_axis = ln_ext.reshape(len(g_levels), 2, dim).transpose(2, 0, 1).reshape(dim, -1)
    seen = np.any(np.isfinite(per_axis), axis=1)
    if not np.any(seen):
        return np.ones(dim)
    ln_scale = np.full(dim, np.nan)
    ln_scale[seen] = np.nanmean(per_axis[seen], axis=1)
    ln_scale[~seen] = np.max(ln_scale[seen])
    return np.exp(ln_scale - np.max(ln_scale))


def _crossings(
    rise: Callable[[np.ndarray, np.ndarray], np.ndarray],
    U: np.ndarray,
    r_top: np.ndarray,
    targets: Sequence[float],
) -> tuple[np.ndarray, np.ndarray]:
    """Radius of the innermost crossing of ``f − f* = s`` along each ``u``, per target ``s``.

    One scan of the radii ``r_top·2^{-m}`` (shared by the targets) brackets the crossing
    nearest ``x*``; bisection narrows it. Returns radii and validity, shape
    ``(len(targets), n)``: no crossing within ``r_top``, or ``f − f* >= s`` even at the
    innermost scan radius (a jump at ``x*``), is invalid.
    """
    n = U.shape[0]
    scan = np.empty((_SCAN_STEPS, n))
    for m in range(_SCAN_STEPS):
        scan[m] = rise(r_top * 2.0**-m, U) if n else scan[m]
    radii, valid = np.empty((len(targets), n)), np.empty((len(targets), n), dtype=bool)
    steps = np.arange(_SCAN_STEPS)[:, None]
    for k, s in enumerate(targets):
        last_above = np.max(np.where(scan >= s, steps, -1), axis=0) if n else np.zeros(0, int)
        valid[k] = (last_above >= 0) & (last_above < _SCAN_STEPS - 1)
        outer = r_top * 2.0 ** -np.maximum(last_above, 0)
        inner = outer / 2.0
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (inner + outer)
            above = rise(mid, U) >= s if n else np.zeros(0, bool)
            outer, inner = np.where(above, mid, outer), np.where(above, inner, mid)
        radii[k] = 0.5 * (inner + outer)
    return radii, valid


def _solve(Y: np.ndarray, g: np.ndarray, full: bool) -> tuple[np.ndarray, float]:
    """Least squares (relative) for the form ``B`` with ``yᵀBy = g``; its RMS relative misfit."""
    dim = Y.shape[1]
    X = _features(Y, full) / g[:, None]
    norms = np.linalg.norm(X, axis=0)
    norms[norms == 0] = 1.0
    coef, *_ = np.linalg.lstsq(X / norms, np.ones(Y.shape[0]), rcond=None)
    B = _unpack(coef / norms, dim, full)
    misfit = np.einsum("ni,ij,nj->n", Y, B, Y) / g - 1.0
    return B, float(np.sqrt(np.mean(misfit**2)))


def _fit(Z: np.ndarray, g: np.ndarray, p: float, full: bool, scale: np.ndarray) -> LadderShape:
    """Least squares for ``A`` in the scaled coordinates ``y = z/c``; bounding box of ``A``."""
    B, residual = _solve(Z / scale, g, full)  # A = diag(1/c) B diag(1/c)
    return _shape_of(B, scale, residual, Z.shape[0], p, full)


def _shape_of(
    B: np.ndarray, scale: np.ndarray, residual: float, n: int, p: float, full: bool
) -> LadderShape:
    """The shape (bounding box, axes) of the form ``A = diag(1/c) B diag(1/c)``."""
    dim = B.shape[0]
    # below RESIDUAL_FLOOR the misfit is rounding noise, whose digits vary with the platform
    shown: float | None = None
    if math.isfinite(residual):
        shown = 0.0 if residual < RESIDUAL_FLOOR else _significant(residual, 2)
    if not (np.all(np.isfinite(B)) and math.isfinite(residual)):
        return _cube(dim, p, "the least-squares fit is not finite", probes=n)
    lam, V = np.linalg.eigh(B)
    if not (lam[-1] > 0 and lam[0] > MAX_CONDITION**-1 * lam[-1]):
        # no numbers in the reason: it enters the spec hash, and near-zero eigenvalues are noise
        return _cube(dim, p, _NOT_PD, probes=n, residual=shown)
    inv_diag = np.sum(V * V / lam, axis=1)  # (B^-1)_ii; (A^-1)_ii = c_i^2 (B^-1)_ii
    a = scale * np.sqrt(inv_diag)
    a = np.array([_significant(v, SHAPE_DIGITS) for v in a / np.max(a)])
    ln_fill = (
        0.5 * dim * math.log(math.pi)
        - math.lgamma(0.5 * dim + 1.0)
        - dim * math.log(2.0)
        - 0.5 * float(np.sum(np.log(lam)))
        - 0.5 * float(np.sum(np.log(inv_diag)))
    )
    A = B / np.outer(scale, scale)
    A = 0.5 * (A + A.T)
    eig_a, Q = np.linalg.eigh(A)
    d_a = np.sqrt(np.abs(np.diag(A)))
    corr = A / np.outer(d_a, d_a)
    rotation = _significant(
        float(np.linalg.norm(corr - np.diag(np.diag(corr))) / math.sqrt(dim)), 2
    )
    axes = axis_half = None
    if eig_a[0] > 0:
        # a deterministic sign per axis (largest entry positive), rounded like the rest
        pick = np.argmax(np.abs(Q), axis=0)
        Q = Q * np.sign(Q[pick, np.arange(dim)])
        axes = np.round(Q, AXES_DECIMALS) + 0.0
        raw_max = float(np.max(scale * np.sqrt(inv_diag)))
        axis_half = np.array(
            [_significant(v, SHAPE_DIGITS) for v in 1.0 / (np.sqrt(eig_a) * raw_max)]
        )
    return LadderShape(
        half_widths=a,
        degree=p,
        model="quadratic-form" if full else "diagonal",
        fit_residual=shown,
        fallback=None,
        probes=n,
        condition=_significant(float(eig_a[-1] / eig_a[0]), 3) if eig_a[0] > 0 else None,
        log10_fill_share=round(ln_fill / LN10, 2),
        rotation=rotation,
        axes=axes,
        axis_half_widths=axis_half,
    )


# --------------------------------------------------------------------------------------------
# Levels and their containment thresholds
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class KeptShare:
    """The measured share ``φ = Leb(B ∩ Ω)/Leb(B)`` of an intersected level (``R_j = B ∩ Ω``).

    The level's table sampled ``n_box`` scrambled Sobol points of the oriented box ``B`` and
    kept (evaluated ``f`` at) the ``n_kept`` inside ``Ω``; ``φ̂ = n_kept/n_box``, with a
    Clopper–Pearson interval (:meth:`interval`), the convention of the tables' own counts.

    Attributes
    ----------
    n_box : int
        ``N``: Sobol points drawn in ``B`` (the spec's ``n``).
    n_kept : int
        ``M``: those inside ``Ω`` (the table's ``n``).
    domain_lower, domain_upper : ndarray, shape (d,)
        ``Ω``, whose faces also bound ``R_j`` (the power tail's clipping check looks at them).
    """

    n_box: int
    n_kept: int
    domain_lower: np.ndarray
    domain_upper: np.ndarray

    @property
    def share(self) -> float:
        """``φ̂ = M/N``."""
        return self.n_kept / self.n_box

    def interval(self, confidence: float) -> tuple[float, float]:
        """Clopper–Pearson interval of ``φ`` at ``confidence`` (exact 1 when ``M = N``).

        A scrambled Sobol count is treated as binomial, as for the tables' own counts: for the
        indicator of a set with a piecewise smooth boundary the randomized-QMC variance is
        ``O(N^{-1-1/d})``, below the binomial ``φ(1 − φ)/N`` at the sizes used (measured in
        tests/unit/domain/test_nested.py over independent scramblings).
        """
        return kept_share_interval(self.n_box, self.n_kept, confidence)


def kept_share_interval(n_box: int, n_kept: int, confidence: float) -> tuple[float, float]:
    """Clopper–Pearson ``(lower, upper)`` of a share ``M/N`` at ``confidence`` (two-sided)."""
    n = _check_int(n_box, "n_box", 1)
    m = _check_int(n_kept, "n_kept", 0)
    if m > n:
        raise InvalidInput(f"n_kept {m} exceeds n_box {n}", field="n_kept")
    alpha = 1.0 - float(confidence)
    lower = 0.0 if m == 0 else float(special.betaincinv(m, n - m + 1, alpha / 2.0))
    upper = 1.0 if m == n else float(special.betaincinv(m + 1, n - m, 1.0 - alpha / 2.0))
    return lower, upper


@dataclass(frozen=True, eq=False)
class NestedLevel:
    """One sampled rung of a ladder: a table on ``R_j`` and how to rank on it.

    Attributes
    ----------
    table : TableData
        The ordinary table of ``N`` Sobol samples on ``R_j`` (its ``low_x``/``low_values`` are
        the evidence of the containment check).
    ctx : RankContext
        ``f*``, ``x*``, ``β`` and the region ``R_j`` (``region_lower``/``region_upper``); ``f_max``
        only for level 0 (a box's maximum is not the domain's).
    ln_volume_fraction : float
        ``ln(Leb(R_j)/Leb(Ω))`` (:func:`ln_volume_fraction`); 0 for level 0.
    delta : float, sequence of float, or None
        ``δ_j``, echoed in the curve's info: the half-width of a cube, or the per-coordinate
        half-widths of a shaped box (``None`` for the domain).
    label : mapping
        JSON-ready extras echoed in this level's info (e.g. ``{"table_id": ...}``).
    axes : ndarray, shape (d, d), or None
        ``Q`` of an oriented box ``R_j = {x* + Q·diag(h)·u : u ∈ [−1, 1]^d} ⊂ Ω`` (columns the
        axes), ``None`` for an axis-aligned one. ``ctx``'s region is then the box's axis-aligned
        bounding box, and every check of the level works in the box's own coordinates
        ``z = Qᵀ(x − x*)``, ``|z_k| <= h_k``.
    half_widths : ndarray, shape (d,), or None
        ``h`` of an oriented box (required with ``axes``).
    kept : KeptShare or None
        Set for an intersected level ``R_j = B ∩ Ω`` (the oriented box ``B`` leaves ``Ω``; the
        table holds only its points inside ``Ω``): then ``ln_volume_fraction`` is
        ``ln(φ̂·Leb(B)/Leb(Ω))`` and the intervals served from the level include ``φ``'s
        (:func:`nested_curve`).
    """

    table: TableData
    ctx: RankContext
    ln_volume_fraction: float
    delta: float | Sequence[float] | None = None
    label: Mapping[str, Any] = field(default_factory=dict)
    axes: np.ndarray | None = None
    half_widths: np.ndarray | None = None
    kept: KeptShare | None = None

    @property
    def oriented(self) -> bool:
        """Whether ``R_j`` is an oriented box."""
        return self.axes is not None

    @property
    def intersected(self) -> bool:
        """Whether ``R_j = B ∩ Ω`` (an oriented box cut by the domain)."""
        return self.kept is not None

    def open_faces(self, x_opt: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Which faces ``z_k = −h_k`` / ``z_k = +h_k`` of an oriented box are inside ``Ω``.

        Every face of an oriented level inside ``Ω``; for an intersected level a face counts
        only where ``Ω`` reaches beyond it (``min/max z_k`` over ``Ω``, exact), since beyond a
        face outside ``Ω`` there is nothing to sample (as a face shared with ``Ω``).
        """
        h = np.asarray(self.half_widths, dtype=np.float64)
        if self.kept is None or self.axes is None:
            return np.ones(h.size, dtype=bool), np.ones(h.size, dtype=bool)
        z_lo, z_hi = domain_extents(
            self.axes, x_opt, self.kept.domain_lower, self.kept.domain_upper
        )
        return z_lo < -h, z_hi > h

    def local(self, x_opt: np.ndarray) -> tuple[TableData, RankContext]:
        """Table and context in the box's own coordinates ``z = Qᵀ(x − x*)`` (oriented levels).

        The stored lowest points become ``z``, ``x*`` becomes 0 and the region ``[−h, h]``, so
        the power tail's clipping check (:func:`app.domain.absrank.table_curve`) measures the
        sublevel sets against the faces of the oriented box itself. Axis-aligned levels are
        returned unchanged.
        """
        if self.axes is None or self.half_widths is None:
            return self.table, self.ctx
        h = np.asarray(self.half_widths, dtype=np.float64)
        z = (self.table.low_x - x_opt) @ np.asarray(self.axes, dtype=np.float64)
        if self.kept is not None:
            # R_j = B ∩ Ω: the faces of B inside Ω (z) and the faces of Ω (x − x*) both bound
            # it; the clipping check sees both as coordinates of one box
            lo_open, hi_open = self.open_faces(x_opt)
            dev = self.table.low_x - x_opt
            table = dataclasses.replace(self.table, low_x=np.hstack([z, dev]))
            ctx = dataclasses.replace(
                self.ctx,
                x_opt=np.zeros(2 * h.size),
                region_lower=np.r_[np.where(lo_open, -h, -np.inf), self.kept.domain_lower - x_opt],
                region_upper=np.r_[np.where(hi_open, h, np.inf), self.kept.domain_upper - x_opt],
            )
            return table, ctx
        table = dataclasses.replace(self.table, low_x=z)
        ctx = dataclasses.replace(
            self.ctx, x_opt=np.zeros(h.size), region_lower=-h, region_upper=h.copy()
        )
        return table, ctx


@dataclass(frozen=True)
class _Threshold:
    """``τ_j`` of one level and where it comes from."""

    value: float
    source: dict[str, Any]


def _beyond(
    points: np.ndarray,
    x_opt: np.ndarray,
    inner: tuple[np.ndarray, np.ndarray],
    outer: tuple[np.ndarray, np.ndarray],
) -> np.ndarray:
    """Mask of ``points`` beyond ``CLIP_SHARE`` of the way from ``x*`` to a face of ``inner``.

    Only faces of ``inner`` strictly inside ``outer`` count: beyond a face that ``inner`` shares
    with ``outer`` (both clipped by ``Ω``) there is nothing to miss.
    """
    (i_lo, i_hi), (o_lo, o_hi) = inner, outer
    lo_lim = np.where(i_lo > o_lo, x_opt - CLIP_SHARE * (x_opt - i_lo), -np.inf)
    hi_lim = np.where(i_hi < o_hi, x_opt + CLIP_SHARE * (i_hi - x_opt), np.inf)
    if points.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    return np.asarray(np.any((points < lo_lim) | (points > hi_lim), axis=1))


def _first_beyond(
    level: NestedLevel, mask: np.ndarray, index: int, check: str
) -> tuple[float, dict[str, Any]]:
    """Smallest stored value among ``mask``, or the level's largest stored value (the cap)."""
    values = level.table.low_values
    if values.size == 0:
        return -math.inf, {"level": index, "check": check, "kind": "no stored samples"}
    if np.any(mask):
        rank = int(np.argmax(mask))
        return float(values[rank]), {
            "level": index,
            "check": check,
            "kind": "sample outside",
            "point_rank": rank + 1,
        }
    return float(values[-1]), {
        "level": index,
        "check": check,
        "kind": "cap: largest stored sample",
        "point_rank": int(values.size),
    }


def _region(level: NestedLevel) -> tuple[np.ndarray, np.ndarray]:
    ctx = level.ctx
    return (
        np.asarray(ctx.region_lower, dtype=np.float64),
        np.asarray(ctx.region_upper, dtype=np.float64),
    )


def _beyond_level(
    points: np.ndarray, x_opt: np.ndarray, inner: NestedLevel, outer: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """:func:`_beyond` for any level: an oriented one in its own coordinates ``z = Qᵀ(x − x*)``.

    Every face of an oriented box lies inside ``Ω`` (it is only used when it fits), so all of
    them count: a point is beyond when ``|z_k| > CLIP_SHARE·h_k`` for some ``k``.
    """
    if inner.axes is None or inner.half_widths is None:
        return _beyond(points, x_opt, _region(inner), outer)
    if points.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    z = (points - x_opt) @ np.asarray(inner.axes, dtype=np.float64)
    h = np.asarray(inner.half_widths, dtype=np.float64)
    if inner.kept is not None:  # an intersected level: only its faces inside Ω count
        lo_open, hi_open = inner.open_faces(x_opt)
        out = ((z < -CLIP_SHARE * h) & lo_open) | ((z > CLIP_SHARE * h) & hi_open)
        return np.asarray(np.any(out, axis=1))
    return np.asarray(np.any(np.abs(z) > CLIP_SHARE * h, axis=1))


def _threshold(levels: Sequence[NestedLevel], j: int, x_opt: np.ndarray) -> _Threshold:
    """``τ_j``: the smallest value at which ``{f <= t} ⊂ R_j`` is contradicted by a sample."""
    inner = levels[j]
    domain = _region(levels[0])
    candidates = []
    for i in range(j):  # (a) outer levels' samples outside the shrunken R_j
        # an oriented outer box shares no face with R_j: only the domain's faces are shared
        outer = domain if levels[i].oriented else _region(levels[i])
        mask = _beyond_level(levels[i].table.low_x, x_opt, inner, outer)
        candidates.append(_first_beyond(levels[i], mask, i, "outer"))
    # (b) level j's own samples near a face of R_j that lies inside the domain
    mask = _beyond_level(levels[j].table.low_x, x_opt, inner, domain)
    candidates.append(_first_beyond(levels[j], mask, j, "own"))
    value, source = min(candidates, key=lambda c: c[0])
    return _Threshold(value, source)


def _count_below(table: TableData, t: float) -> int:
    """``#{y_i < t}`` where known exactly, else a lower bound (the knot below ``t``)."""
    j = int(np.searchsorted(table.values, t, side="left")) - 1
    return int(table.counts[j]) if j >= 0 else 0


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def _nested_iv(levels: Sequence[NestedLevel], tail: str) -> tuple[float, np.ndarray]:
    """Validate the ladder; return ``f*`` and ``x*``."""
    if tail not in TAIL_MODES:
        raise InvalidInput(
            f"tail must be one of {list(TAIL_MODES)} for nested regions, got {tail!r}",
            field="tail",
        )
    if not levels or not all(isinstance(lv, NestedLevel) for lv in levels):
        raise InvalidInput("levels must be a non-empty sequence of NestedLevel", field="levels")
    ctx0 = levels[0].ctx
    if ctx0.f_opt is None:
        raise NotApplicable("nested regions need a known minimum f*", field="f_opt")
    if ctx0.x_opt is None:
        raise NotApplicable("nested regions need a known minimiser x*", field="x_opt")
    f_opt = float(ctx0.f_opt)
    x_opt = np.asarray(ctx0.x_opt, dtype=np.float64)
    if abs(levels[0].ln_volume_fraction) > 1e-12:
        raise InvalidInput("level 0 must be the whole domain (volume fraction 1)", field="levels")
    if levels[0].oriented:
        raise InvalidInput("level 0 must be the whole domain, not an oriented box", field="levels")
    prev = _region(levels[0])
    prev_ln = 0.0
    for j, lv in enumerate(levels):
        # an oriented box (or the first box below one) need not lie in the previous region's
        # bounding box, only in the domain; the containment checks use every outer level
        outer = _region(levels[0]) if lv.oriented or levels[max(j - 1, 0)].oriented else prev
        _check_level(lv, j, f_opt, x_opt, outer, prev_ln)
        prev, prev_ln = _region(lv), lv.ln_volume_fraction
    return f_opt, x_opt


def _check_kept(lv: NestedLevel, j: int) -> None:
    kept = lv.kept
    if kept is None:
        return
    if not lv.oriented or not (0 < kept.n_kept <= kept.n_box) or kept.n_kept != lv.table.n:
        raise InvalidInput(
            f"level {j} is intersected (B ∩ Ω) but is not oriented, or its kept count "
            f"{kept.n_kept} is not its table's n {lv.table.n} in 1..{kept.n_box}",
            field="levels",
        )


def _check_level(
    lv: NestedLevel,
    j: int,
    f_opt: float,
    x_opt: np.ndarray,
    outer: tuple[np.ndarray, np.ndarray],
    outer_ln: float,
) -> None:
    ctx = lv.ctx
    lo, hi = _region(lv)
    if ctx.f_opt is None or float(ctx.f_opt) != f_opt or ctx.x_opt is None:
        raise InvalidInput(f"level {j} has another f* than level 0", field="levels")
    if not np.array_equal(np.asarray(ctx.x_opt, dtype=np.float64), x_opt):
        raise InvalidInput(f"level {j} has another x* than level 0", field="levels")
    if ctx.atom > 0:
        raise NotApplicable(
            f"f has a plateau at f* (atom {ctx.atom}): its registered mass gives v1 near f*, "
            "nested regions are for a continuous lower tail",
            field="atom",
        )
    if lo.shape != x_opt.shape or np.any(lo < outer[0]) or np.any(hi > outer[1]):
        raise InvalidInput(f"level {j}'s region is not inside level {j - 1}'s", field="levels")
    if lv.oriented:
        Q = np.asarray(lv.axes, dtype=np.float64)
        h = np.asarray(lv.half_widths, dtype=np.float64) if lv.half_widths is not None else None
        if (
            h is None
            or Q.shape != (x_opt.size, x_opt.size)
            or h.shape != x_opt.shape
            or not (np.all(np.isfinite(Q)) and np.all(np.isfinite(h)) and np.all(h > 0))
            or not np.allclose(Q.T @ Q, np.eye(x_opt.size), atol=1e-6)
        ):
            raise InvalidInput(
                f"level {j} is oriented but has no orthonormal axes and positive half-widths",
                field="levels",
            )
        ext = np.abs(Q) @ h
        tol = 1e-9 * (hi - lo)
        if lv.kept is None and (np.any(x_opt - ext < lo - tol) or np.any(x_opt + ext > hi + tol)):
            raise InvalidInput(
                f"level {j}'s oriented box is not inside its region's bounding box", field="levels"
            )
    if np.any(x_opt < lo) or np.any(x_opt > hi):
        raise InvalidInput(f"x* lies outside level {j}'s region", field="levels")
    _check_kept(lv, j)
    ln_frac = lv.ln_volume_fraction
    if not (math.isfinite(ln_frac) and ln_frac <= outer_ln + 1e-12):
        raise InvalidInput(
            f"level {j}'s ln volume fraction {ln_frac!r} must be finite and <= the outer "
            f"level's {outer_ln!r}",
            field="levels",
        )
    if lv.table.low_x.ndim != 2 or lv.table.low_x.shape[1] != x_opt.size:
        raise InvalidInput(f"level {j}'s table keeps no {x_opt.size}-D low points", field="levels")


# --------------------------------------------------------------------------------------------
# The curve
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """Which levels serve which ``t`` (``thresholds[m]`` = ``τ*`` of ``used[m]``)."""

    used: list[int]
    thresholds: list[float]  # +inf for level 0, then non-increasing
    taus: list[_Threshold | None]  # per level (None for level 0)
    cumulative: list[float]  # running minimum τ*_j per level
    inner_counts: list[int]
    skipped: dict[int, str]


def _plan(levels: Sequence[NestedLevel], f_opt: float, x_opt: np.ndarray) -> _Plan:
    taus: list[_Threshold | None] = [None]
    cumulative = [math.inf]
    counts = [levels[0].table.n]
    used, thresholds = [0], [math.inf]
    skipped: dict[int, str] = {}
    for j in range(1, len(levels)):
        tau = _threshold(levels, j, x_opt)
        taus.append(tau)
        # {f <= t} ⊂ R_j implies {f <= t} ⊂ R_i only for the levels i whose region holds R_j
        # (every outer level of an axis-aligned ladder; not an axis box around an oriented one)
        held = [cumulative[i] for i in range(j) if _holds(levels[i], levels[j])]
        cumulative.append(min([tau.value, *held]))
        counts.append(_count_below(levels[j].table, cumulative[-1]))
        while len(used) > 1 and thresholds[-1] < cumulative[-1] and cumulative[-1] > f_opt:
            # a deeper level verified higher up: the shallower one would serve nothing
            skipped[used[-1]] = (
                f"superseded by level {j}, whose containment holds up to a higher threshold "
                f"({cumulative[-1]:.6g} > {thresholds[-1]:.6g})"
            )
            used.pop()
            thresholds.pop()
        if not cumulative[-1] > f_opt:
            skipped[j] = f"its threshold {cumulative[-1]:.6g} is not above f* = {f_opt:.6g}"
        elif counts[-1] < MIN_INNER_SAMPLES:
            skipped[j] = (
                f"only {counts[-1]} of its samples lie below its threshold "
                f"{cumulative[-1]:.6g} (at least {MIN_INNER_SAMPLES} needed): the box does not "
                "see the sublevel sets it would serve"
            )
        else:
            used.append(j)
            thresholds.append(cumulative[-1])
    return _Plan(used, thresholds, taus, cumulative, counts, skipped)


def _holds(outer: NestedLevel, inner: NestedLevel) -> bool:
    """Whether ``R_outer ⊇ R_inner`` (sufficient test; level 0, the domain, holds every level)."""
    if abs(outer.ln_volume_fraction) <= 1e-12 and not outer.oriented:
        return True
    if outer.oriented:
        if not inner.oriented or outer.half_widths is None or inner.half_widths is None:
            return False
        return bool(
            np.array_equal(np.asarray(outer.axes), np.asarray(inner.axes))
            and np.all(np.asarray(inner.half_widths) <= np.asarray(outer.half_widths))
        )
    (o_lo, o_hi), (i_lo, i_hi) = _region(outer), _region(inner)
    return bool(np.all(i_lo >= o_lo) and np.all(i_hi <= o_hi))


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _undetectable_share(levels: Sequence[NestedLevel], j: int, confidence: float) -> float:
    """Share of ``Ω`` a part of ``{f <= t}`` outside ``R_j`` may have unseen (0 hits, CP upper)."""
    alpha = 1.0 - confidence
    total = 0.0
    for i in range(j):
        n = levels[i].table.n
        total += math.exp(levels[i].ln_volume_fraction) * -math.expm1(math.log(alpha / 2.0) / n)
    return total


def _json_delta(delta: float | Sequence[float] | None) -> float | list[float] | None:
    if delta is None:
        return None
    if isinstance(delta, int | float | np.number):
        return float(delta)
    return [float(v) for v in delta]


def _level_info(
    levels: Sequence[NestedLevel],
    plan: _Plan,
    curves: dict[int, V1Curve],
    j: int,
    confidence: float,
) -> dict[str, Any]:
    lv = levels[j]
    lo, hi = _region(lv)
    info: dict[str, Any] = {
        "level": j,
        "delta": _json_delta(lv.delta),
        "region": {"lower": lo.tolist(), "upper": hi.tolist()},
        "volume_fraction": math.exp(lv.ln_volume_fraction),
        "log10_volume_fraction": lv.ln_volume_fraction / LN10,
        "n": lv.table.n,
        "tau": None,
        "tau_cumulative": None,
        "tau_source": None,
        "samples_below_tau": None,
        "undetectable_share": None,
        "used": j in plan.used,
        "skipped": plan.skipped.get(j),
        "serves": None,
        **dict(lv.label),
    }
    if lv.axes is not None and lv.half_widths is not None:
        info["region"] |= {
            "kind": "oriented",
            "axes": np.asarray(lv.axes).tolist(),
            "half_widths": np.asarray(lv.half_widths).tolist(),
            "coordinates": "z = Q^T (x - x*), |z_k| <= h_k (axes = columns of Q); lower/upper "
            "is the bounding box; containment and clipping checks use z",
        }
    if lv.kept is not None:
        level_conf = _level_confidence(lv, confidence)
        share_lo, share_hi = lv.kept.interval(level_conf)
        lo_open, hi_open = lv.open_faces(np.asarray(levels[0].ctx.x_opt, dtype=np.float64))
        info["region"] |= {
            "intersect": "domain",
            "kept": {
                "n_box": lv.kept.n_box,
                "n_kept": lv.kept.n_kept,
                "share": lv.kept.share,
                "share_lower": share_lo,
                "share_upper": share_hi,
                "confidence": level_conf,
                "faces_inside_domain": int(np.sum(lo_open) + np.sum(hi_open)),
                "method": "R_j = B ∩ Ω: the oriented box B sampled by scrambled Sobol, f "
                "evaluated only at the n_kept points inside Ω; Leb(B ∩ Ω)/Leb(B) = n_kept/n_box "
                "with its Clopper-Pearson interval at 1 - alpha/2, the level's own curve at "
                "1 - alpha/2 (Bonferroni: both hold with probability >= 1 - alpha); intervals "
                "served from the level are [share_lower·lo, share_upper·hi]; only faces of B "
                "inside Ω (and the faces of Ω) count in the containment and clipping checks",
            },
        }
    tau = plan.taus[j]
    if tau is not None:
        info |= {
            "tau": _finite_or_none(tau.value),
            "tau_cumulative": _finite_or_none(plan.cumulative[j]),
            "tau_source": tau.source,
            "samples_below_tau": plan.inner_counts[j],
            "undetectable_share": _undetectable_share(levels, j, confidence),
        }
    if j in curves:
        m = plan.used.index(j)
        below = plan.thresholds[m + 1] if m + 1 < len(plan.used) else -math.inf
        info["serves"] = {
            "t_from": _finite_or_none(below),
            "t_below": _finite_or_none(plan.thresholds[m]),
        }
        info["curve"] = info_json(curves[j].info)
    return info


def _shifted_power(curve: V1Curve, ln_frac: float, limit: float) -> PowerLaw | None:
    p = curve.power
    if p is None:
        return None
    return PowerLaw(p.f_opt, p.ln_c + ln_frac, p.beta, min(p.limit, limit))


def nested_curve(
    levels: Sequence[NestedLevel],
    *,
    tail: str = "auto",
    k_anchor: int = 100,
    confidence: float = 0.95,
) -> V1Curve:
    r"""``v1(t)`` on ``Ω`` from a ladder of nested box tables.

    Parameters
    ----------
    levels : sequence of NestedLevel
        ``R_0 = Ω`` first (``ln_volume_fraction == 0``), then boxes ``R_1 ⊃ R_2 ⊃ …`` around the
        same ``x*``, all with the same known ``f*`` and without an atom.
    tail : {"auto", "power", "linear"}, optional
        Lower tail of the deepest serving level (below its samples), as in
        :func:`app.domain.absrank.table_curve`; the other levels use ``"auto"``.
    k_anchor : int, optional
        Anchor rank of the power tails.
    confidence : float, optional
        Level of the intervals.

    Returns
    -------
    V1Curve
        ``evaluate(t)`` gives ``ln v1 = ln(Leb(R_j)/Leb(Ω)) + ln v1_{R_j}(t)`` from the deepest
        serving level ``j`` at ``t`` (its Eq. 28, or its tail below its samples), with that level's
        interval shifted by the same ``ln`` fraction, and methods ``"nested-" + method`` (e.g.
        ``"nested-interpolated"``, ``"nested-tail-power"``; see :data:`METHODS`). ``info`` has
        ``method="nested"``, one entry per level (``delta``, ``region``, volume fraction,
        threshold ``τ_j`` and its source, samples below it, ``undetectable_share``, whether it is
        used, the ``t`` range it serves and its own curve's info) and the statement of what the
        containment check guarantees. ``power`` is the deepest serving level's power law shifted
        by its ``ln`` fraction (``limit`` capped at its threshold), when it has one.

    Raises
    ------
    InvalidInput
        Malformed ladder (``field="levels"``), bad ``tail``/``k_anchor``/``confidence``.
    NotApplicable
        ``f*`` or ``x*`` unknown, an atom at ``f*``, ``tail="power"`` refused on the deepest
        level, or a table that contradicts ``f*``.

    Notes
    -----
    Containment check. Level ``j >= 1`` is used for ``t < τ*_j = min(τ_1, …, τ_j)`` with

    * ``τ_j`` = the smallest value among (a) the stored lowest samples of every outer level
      ``i < j`` that lie outside ``R_j`` shrunk toward ``x*`` by :data:`CLIP_SHARE` (only faces of
      ``R_j`` inside ``R_i`` count; each outer level contributes at most its largest stored
      value, since above it nothing is known) and (b) level ``j``'s own stored lowest samples
      beyond ``CLIP_SHARE`` of the way to a face of ``R_j`` inside ``Ω`` (the sublevel set
      reaches that face, so it may cross it between the samples);
    * a level with fewer than :data:`MIN_INNER_SAMPLES` samples below ``τ*_j`` is skipped (it
      would serve only by extrapolation; a box that misses the minimiser ends here).

    Each ``t`` is served by the deepest used level with ``t < τ*_j`` (level 0 otherwise). So no
    stored sample of any level contradicts ``{f <= t} ⊂ R_j`` where level ``j`` serves.

    What this does *not* guarantee: the check sees only sampled points. A part of ``{f <= t}``
    outside ``R_j`` into which no outer sample fell — at 95% a share of ``Ω`` below about
    ``Σ_{i<j} Leb(R_i)/Leb(Ω)·(1 − 0.025^{1/N})`` ≈ ``3.7/N`` (``undetectable_share`` per level) —
    escapes it (a needle-like basin elsewhere; a set that pokes out of ``R_j`` between samples),
    and ``v1`` is then underestimated by up to that share. Intervals are the serving level's own
    (Clopper–Pearson inside its samples, tail-model intervals below) and do not include this.
    The curve need not be monotone where the serving level changes (two estimates of the same
    ``v1`` meet there).

    Geometry. A cube ``R_j`` holds an unclipped sublevel set of share at most
    ``Leb(E)/Leb(cube(E))`` of it, where ``cube(E)`` is the smallest cube around ``x*`` containing
    the set ``E``: ``V_d/2^d ≈ 2.5e-3`` for the 10-D ball, but ``2.5e-18`` for the 10-D ellipsoid
    of condition ``1e6``, whose sets therefore stay clipped in every cube at any practical
    ``N``; the check then refuses the levels (level ``j``'s own samples reach its faces) instead of
    returning clipped volumes. Boxes shaped like the sets (:func:`ladder_shape`) hold them at
    ``V_d/2^d`` again when their axes are the coordinate axes; rotated sets need oriented boxes
    (:func:`ladder_boxes` with ``orientation``).

    Oriented levels (``axes`` set) are checked in their own coordinates ``z = Qᵀ(x − x*)``:
    a point is outside the shrunken ``R_j`` when ``|z_k| > clip_share·h_k`` for some ``k`` (all
    faces lie inside ``Ω``), and the level's own power tail checks its clipping against
    ``[−h, h]`` in ``z`` (:meth:`NestedLevel.local`), not against the bounding box. An oriented
    box need not lie inside the axis-aligned box above it, so the running minimum ``τ*_j`` runs
    only over the levels whose region holds ``R_j`` (all outer levels of an axis-aligned
    ladder), and a level whose ``τ*`` is below a deeper level's is superseded (never serves).

    Examples
    --------
    ``f = |x|`` on ``[−1, 1]`` has ``v1(t) = t``; four tables of 1024 points reach ``1e-9``:

    >>> from app.domain import sampling
    >>> f = lambda X: np.abs(X[:, 0])
    >>> levels = []
    >>> for box in ladder_boxes([-1.0], [1.0], [0.0], factor=4.0, levels=3):
    ...     chunk = sampling.evaluate_chunk(f, box.lower, box.upper, 0, 0, 1024, 256)
    ...     values, low_x, _ = sampling.merge_chunk_results([chunk], 256)
    ...     table = absrank.build_table_data(values, low_x, k_exact=256)
    ...     ctx = RankContext(0.0, None, 0.0, 1.0, "|x|", np.zeros(1), box.lower, box.upper)
    ...     levels.append(NestedLevel(table, ctx, box.ln_volume_fraction, box.delta))
    >>> curve = nested_curve(levels)
    >>> ln_v, lo, hi, method = curve.evaluate(np.array([1e-4, 1e-9]))
    >>> np.round(ln_v / np.log(10), 3).tolist(), method.tolist()
    ([-4.0, -9.0], ['nested-tail-power', 'nested-tail-power'])
    """
    f_opt, x_opt = _nested_iv(levels, tail)
    validation.positive_int(k_anchor, "k_anchor")
    confidence = validation.check_confidence(confidence)
    plan = _plan(levels, f_opt, x_opt)
    deepest = plan.used[-1]
    curves = {
        j: absrank.table_curve(
            *levels[j].local(x_opt),
            tail=tail if j == deepest else "auto",
            k_anchor=k_anchor,
            confidence=_level_confidence(levels[j], confidence),
        )
        for j in plan.used
    }
    cuts = np.asarray(plan.thresholds[1:], dtype=np.float64)
    ln_fracs = [levels[j].ln_volume_fraction for j in plan.used]
    ln_shift_lo, ln_shift_hi = [], []
    for j in plan.used:
        lo_share, hi_share = _share_bounds(levels[j], confidence)
        ln_shift_lo.append(levels[j].ln_volume_fraction + lo_share)
        ln_shift_hi.append(levels[j].ln_volume_fraction + hi_share)

    def evaluate(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        return serve(np.atleast_1d(np.asarray(t, dtype=np.float64)), cuts, gaps=False)

    def evaluate_gap(gap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # the thresholds as gaps: exact where τ − f* is (Sterbenz), so the serving level of an
        # error is chosen without rounding f* + error
        g = np.atleast_1d(np.asarray(gap, dtype=np.float64))
        return serve(g, cuts - f_opt, gaps=True)

    def serve(
        x: np.ndarray, bounds: np.ndarray, *, gaps: bool
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        which = np.sum(x[:, None] < bounds[None, :], axis=1)
        ln_v, lo, hi = (np.empty(x.shape) for _ in range(3))
        method = np.empty(x.shape, dtype=object)
        for m, j in enumerate(plan.used):
            mask = which == m
            if np.any(mask):
                level = curves[j].evaluate_errors if gaps else curves[j].evaluate
                part_v, part_lo, part_hi, part_m = level(x[mask])
                ln_v[mask] = part_v + ln_fracs[m]
                lo[mask] = part_lo + ln_shift_lo[m]
                hi[mask] = np.minimum(part_hi + ln_shift_hi[m], 0.0)
                method[mask] = [f"nested-{name}" for name in part_m]
        return ln_v, lo, hi, method

    deep_info = info_json(curves[deepest].info)
    info: dict[str, Any] = {
        "mode": "nested",
        "method": "nested",
        "lower": "nested",
        "upper": info_json(curves[0].info).get("upper"),
        "deepest_level": deepest,
        "levels_used": list(plan.used),
        "deepest_lower": deep_info.get("lower"),
        "beta": deep_info.get("beta"),
        "beta_source": deep_info.get("beta_source"),
        "k": deep_info.get("k"),
        "anchor_value": deep_info.get("anchor_value"),
        "n": levels[0].table.n,
        "confidence": confidence,
        "region_volume_fraction": 1.0,
        "containment": {
            "check": _CONTAINMENT,
            "clip_share": CLIP_SHARE,
            "min_inner_samples": MIN_INNER_SAMPLES,
            "guarantee": "no stored sample contradicts {f <= t} in R_j where level j serves; "
            "parts of {f <= t} outside R_j smaller than the samples' resolution "
            "(undetectable_share) are not excluded, and not in the intervals",
        },
        "levels": [_level_info(levels, plan, curves, j, confidence) for j in range(len(levels))],
    }
    warnings = _warnings(levels, plan, curves)
    bounds = [*plan.thresholds, -math.inf]
    pieces = []
    for m, j in enumerate(plan.used):
        model = curves[j].table
        assert model is not None
        pieces.append(NestedPiece(j, bounds[m + 1], bounds[m], ln_fracs[m], model))
    return V1Curve(
        evaluate=evaluate,
        info=info,
        warnings=warnings,
        f_opt=f_opt,
        power=_shifted_power(curves[deepest], ln_fracs[-1], plan.thresholds[-1]),
        pieces=tuple(pieces),
        evaluate_gap=evaluate_gap,
    )


def _level_confidence(level: NestedLevel, confidence: float) -> float:
    """Confidence of a level's own curve: ``1 − α/2`` for an intersected level (Bonferroni
    with its kept share's interval), else ``confidence``."""
    return confidence if level.kept is None else 1.0 - (1.0 - confidence) / 2.0


def _share_bounds(level: NestedLevel, confidence: float) -> tuple[float, float]:
    """``ln(φ_lo/φ̂)``, ``ln(φ_hi/φ̂)`` of an intersected level at ``1 − α/2`` (0, 0 otherwise)."""
    if level.kept is None:
        return 0.0, 0.0
    lo, hi = level.kept.interval(_level_confidence(level, confidence))
    share = level.kept.share
    return (math.log(lo / share) if lo > 0 else -math.inf), math.log(hi / share)


def _warnings(levels: Sequence[NestedLevel], plan: _Plan, curves: dict[int, V1Curve]) -> list[str]:
    """Skipped levels, and the tail warnings of every level whose tail serves some ``t``."""
    out = [f"nested level {j} not used: {why}" for j, why in sorted(plan.skipped.items())]
    for m, j in enumerate(plan.used):
        below = plan.thresholds[m + 1] if m + 1 < len(plan.used) else -math.inf
        if below < float(levels[j].table.values[0]):  # its lower tail serves some t
            out += [f"nested level {j}: {w}" for w in curves[j].warnings]
    return out
