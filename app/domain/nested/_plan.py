"""The boxes of a ladder: ``R_0 = Ω ⊃ R_1 ⊃ … ⊃ R_L`` around ``x*`` (:func:`plan_ladder`).

Axis-aligned, oriented (along the fitted form's eigenvectors) and intersected (``B_j ∩ Ω``)
boxes; every box is known before any sample is drawn. Derivations: docs/METHODS.md, "Nested
regions".
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from app.domain import sampling
from app.domain.errors import InvalidInput
from app.domain.nested._common import LN10, check_int, domain_and_opt, largest_reach

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


def _check_factor(factor: object) -> float:
    if isinstance(factor, bool) or not isinstance(factor, int | float | np.number):
        raise InvalidInput(f"factor must be a number, got {factor!r}", field="factor")
    value = float(factor)
    if not (math.isfinite(value) and value > 1.0):
        raise InvalidInput(f"factor must be finite and > 1, got {factor!r}", field="factor")
    return value


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
    levels = check_int(levels, "levels", 0)
    lo, hi, x = domain_and_opt(lower, upper, x_opt)
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
    lo, hi, x = domain_and_opt(lower, upper, x_opt)
    scale = _check_shape(shape, x.size)
    reach = largest_reach(lo, hi, x)
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


class Extents(NamedTuple):
    """``(min, max)`` of the box coordinates ``z = Qᵀ(x − x*)`` over ``Ω`` (unpacks as a pair).

    Attributes
    ----------
    lower, upper : ndarray, shape (d,)
        ``min_k`` and ``max_k`` of ``z_k`` over ``Ω``.
    """

    lower: np.ndarray
    upper: np.ndarray


def domain_extents(
    axes: np.ndarray, x_opt: np.ndarray, lower: np.ndarray, upper: np.ndarray
) -> Extents:
    """``(min, max)`` of ``z_k = Q[:, k]ᵀ(x − x*)`` over the box ``Ω = [lower, upper]``.

    Exact (a linear function on a box is extreme at a vertex): ``Σ_i min/max(Q_ik (l_i − x*_i),
    Q_ik (u_i − x*_i))``.
    """
    Q = np.asarray(axes, dtype=np.float64)
    a = Q * (np.asarray(lower, dtype=np.float64) - x_opt)[:, None]
    c = Q * (np.asarray(upper, dtype=np.float64) - x_opt)[:, None]
    return Extents(np.sum(np.minimum(a, c), axis=0), np.sum(np.maximum(a, c), axis=0))


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
    max_levels = check_int(max_levels, "levels", 1)
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
