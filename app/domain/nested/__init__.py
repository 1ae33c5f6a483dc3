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

The containment ``{f <= t} ⊂ R_j`` is *checked* from samples, never assumed (docs/METHODS.md,
"Nested regions"), and every ``t`` is served by the deepest level whose containment is verified
at ``t``; the deepest level's own tail (:func:`app.domain.absrank.table_curve`, ``tail="auto"``
by default, its power-tail validity checked on that box) serves ``t`` below its samples.

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking Optimization
       Algorithms, Eq. 28 (the per-level estimate) and §V (sampling boxes ``[x* − δ, x* + δ]``).
.. [2] SPEC §3.4, "nested regions": ``R_0 = Ω ⊃ R_1 ⊃ …`` around ``x*``, containment verified
       from the outer levels' samples.
"""

from __future__ import annotations

from app.domain.nested._common import CLIP_SHARE, LN10, MIN_INNER_SAMPLES, TAIL_MODES
from app.domain.nested._curve import METHODS, nested_curve
from app.domain.nested._info import (
    KeptInfo,
    LevelInfo,
    NestedCurveInfo,
    RegionInfo,
    ServedRange,
)
from app.domain.nested._levels import (
    KeptShare,
    LocalView,
    NestedLevel,
    OpenFaces,
    ShareInterval,
    Threshold,
    ThresholdSource,
    kept_share_interval,
)
from app.domain.nested._plan import (
    MIN_KEPT_SHARE,
    PLAN_KEPT_POINTS,
    PLAN_KEPT_SEED,
    THIN_SHARE,
    Extents,
    LadderBox,
    LadderPlan,
    domain_extents,
    ladder_boxes,
    ladder_deltas,
    ln_volume_fraction,
    plan_ladder,
    planned_kept_share,
)
from app.domain.nested._shape import (
    AXES_DECIMALS,
    MAX_CONDITION,
    MIN_ROTATION,
    RESIDUAL_FLOOR,
    SHAPE_DIGITS,
    SHAPE_MAX_FULL_DIM,
    SHAPE_METHOD,
    SHAPE_RADII,
    SHAPE_SEED,
    WHITEN_CONDITION,
    WHITEN_MAX_RESIDUAL,
    WHITEN_STEPS,
    WHITEN_TRUST,
    LadderShape,
    Orientation,
    OrientationSpec,
    ShapeDescription,
    ShapeSpec,
    ladder_shape,
)

__all__ = [
    "AXES_DECIMALS",
    "CLIP_SHARE",
    "LN10",
    "MAX_CONDITION",
    "METHODS",
    "MIN_INNER_SAMPLES",
    "MIN_KEPT_SHARE",
    "MIN_ROTATION",
    "PLAN_KEPT_POINTS",
    "PLAN_KEPT_SEED",
    "RESIDUAL_FLOOR",
    "SHAPE_DIGITS",
    "SHAPE_MAX_FULL_DIM",
    "SHAPE_METHOD",
    "SHAPE_RADII",
    "SHAPE_SEED",
    "TAIL_MODES",
    "THIN_SHARE",
    "WHITEN_CONDITION",
    "WHITEN_MAX_RESIDUAL",
    "WHITEN_STEPS",
    "WHITEN_TRUST",
    "Extents",
    "KeptInfo",
    "KeptShare",
    "LadderBox",
    "LadderPlan",
    "LadderShape",
    "LevelInfo",
    "LocalView",
    "NestedCurveInfo",
    "NestedLevel",
    "OpenFaces",
    "Orientation",
    "OrientationSpec",
    "RegionInfo",
    "ServedRange",
    "ShapeDescription",
    "ShapeSpec",
    "ShareInterval",
    "Threshold",
    "ThresholdSource",
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
