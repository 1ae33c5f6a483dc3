"""Exact ``v1`` of the analytic forms (sphere, cone) as a curve."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.domain import analytic
from app.domain.absrank._context import RankContext, RankResult, check_context
from app.domain.absrank._curve import ranks_from_curve
from app.domain.absrank._logspace import NEG_INF
from app.domain.curves import (
    AnalyticInfo,
    PowerLaw,
    V1Curve,
)
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.validation import finite_1d as _finite_1d


@dataclass(frozen=True, eq=False)
class _AnalyticInputs:
    ln_gap: np.ndarray  # ln(t - f*), -inf at or below f*
    a: np.ndarray  # distances from x* to the lower faces, (d,)
    b: np.ndarray  # distances to the upper faces, (d,)
    ctx: RankContext
    halfwidth: float | None


def _sphere_v1(inp: _AnalyticInputs) -> tuple[np.ndarray, float]:
    return analytic.sphere_ln_cdf(inp.ln_gap, inp.a, inp.b), analytic.sphere_rel_error(inp.a.size)


def _cone_v1(inp: _AnalyticInputs) -> tuple[np.ndarray, float]:
    f_opt, f_max = inp.ctx.f_opt, inp.ctx.f_max
    if f_opt is None or f_max is None or not f_max > f_opt:
        raise NotApplicable("the analytic cone needs f_max > f*", field="kind")
    w = float(np.max(np.maximum(inp.a, inp.b))) if inp.halfwidth is None else float(inp.halfwidth)
    if not (math.isfinite(w) and w > 0):
        raise InvalidInput(
            f"cone_halfwidth must be finite and > 0, got {w}", field="cone_halfwidth"
        )
    ln_q = inp.ln_gap - math.log(f_max - f_opt)
    return analytic.cone_ln_cdf(ln_q, inp.a, inp.b, w), analytic.CONE_REL_ERROR


_ANALYTIC: dict[str, Callable[[_AnalyticInputs], tuple[np.ndarray, float]]] = {
    "sphere": _sphere_v1,
    "cone": _cone_v1,
}
ANALYTIC_KINDS = tuple(_ANALYTIC)


def _analytic_ln_v1(
    t: np.ndarray,
    kind: str,
    ctx: RankContext,
    halfwidth: float | None,
    gap: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """``ln v1`` at ``t``; with ``gap`` (exact ``t − f*``) the forms take ``ln gap`` itself."""
    if ctx.f_opt is None or ctx.x_opt is None:
        raise NotApplicable(f"analytic {kind!r} ranks need f* and x*", field="kind")
    a, b = analytic.box_distances(ctx.region_lower, ctx.region_upper, ctx.x_opt)
    rise = np.maximum(t - ctx.f_opt, 0.0) if gap is None else gap
    above = t > ctx.f_opt if gap is None else gap > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ln_gap = np.where(above, np.log(np.maximum(rise, 0.0)), NEG_INF)
    return _ANALYTIC[kind](_AnalyticInputs(ln_gap, a, b, ctx, halfwidth))


def analytic_ranks(
    t: np.ndarray,
    kind: str,
    ctx: RankContext,
    *,
    budget: int = 1,
    runs: int = 1,
    aggregate: str = "best",
    order: int | None = None,
    cone_halfwidth: float | None = None,
) -> RankResult:
    """Absolute ranks from an exact ``v1`` (SPEC §3.3; Jing & Liu §IV-B), ``method="analytic"``.

    Parameters
    ----------
    t : array_like, shape (n,)
        Metric values (units of ``f``), finite.
    kind : {"sphere", "cone"}
        ``"sphere"``: ``f = f* + Σ (x_i − x*_i)²``; ``"cone"``: ``f = f* + (f_max − f*)·max_i|x_i −
        x*_i|/w``. ``v1`` is relative to ``ctx``'s region (pass the domain box for ``v_f``).
    ctx : RankContext
        Needs ``f_opt``, ``x_opt`` (inside the region) and, for the cone, ``f_max``.
    budget, runs, aggregate, order
        As in :func:`absolute_ranks`.
    cone_halfwidth : float, optional
        ``w`` of the cone; default ``max_i max(x*_i − l_i, u_i − x*_i)`` (the L∞ radius at which the
        cone reaches ``f_max`` on the region).

    Returns
    -------
    RankResult
        Interval = point widened by the numerical relative error (``1e-6`` for the clipped sphere
        with ``d >= 3``, ``1e-12`` for closed forms); ``tail`` records ``kind`` and that bound.

    Raises
    ------
    InvalidInput
        Unknown ``kind`` or invalid options.
    NotApplicable
        ``f*``/``x*`` (or ``f_max`` for the cone) unknown, or ``x*`` outside the region.
    """
    values = _finite_1d(t, "values")
    curve = analytic_curve(kind, ctx, cone_halfwidth=cone_halfwidth)
    return ranks_from_curve(
        values, curve, budget=budget, runs=runs, aggregate=aggregate, order=order
    )


def _analytic_power(kind: str, ctx: RankContext, halfwidth: float | None) -> PowerLaw | None:
    """The unclipped range of an exact form, where ``v1`` is a pure power of ``t − f*``."""
    assert ctx.f_opt is not None
    assert ctx.x_opt is not None
    a, b = analytic.box_distances(ctx.region_lower, ctx.region_upper, ctx.x_opt)
    room = float(np.min(np.minimum(a, b)))
    if room <= 0:
        return None
    ln_vol = float(np.sum(np.log(a + b)))
    d = a.size
    if kind == "sphere":  # ball of radius sqrt(t - f*) inside the box
        ln_c = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0) - ln_vol
        return PowerLaw(float(ctx.f_opt), ln_c, 0.5 * d, float(ctx.f_opt) + room**2)
    assert ctx.f_max is not None
    span = float(ctx.f_max) - float(ctx.f_opt)
    w = float(np.max(np.maximum(a, b))) if halfwidth is None else float(halfwidth)
    # cube of half-width w (t - f*)/span inside the box
    ln_c = d * (math.log(2.0 * w) - math.log(span)) - ln_vol
    return PowerLaw(float(ctx.f_opt), ln_c, float(d), float(ctx.f_opt) + span * room / w)


def analytic_curve(kind: str, ctx: RankContext, *, cone_halfwidth: float | None = None) -> V1Curve:
    """The exact ``v1`` of :func:`analytic_ranks` as a curve.

    Parameters
    ----------
    kind, ctx, cone_halfwidth
        As in :func:`analytic_ranks`.

    Returns
    -------
    V1Curve
        ``power`` covers the range where the sublevel set is not clipped by the region.

    Raises
    ------
    InvalidInput, NotApplicable
        As in :func:`analytic_ranks`.
    """
    if kind not in ANALYTIC_KINDS:
        raise InvalidInput(
            f"kind must be one of {list(ANALYTIC_KINDS)}, got {kind!r}", field="kind"
        )
    check_context(ctx)
    probe = np.array([np.inf if ctx.f_opt is None else float(ctx.f_opt)])
    _, rel = _analytic_ln_v1(probe, kind, ctx, cone_halfwidth)  # validates the options
    pad = math.log1p(rel)

    def evaluate(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ln_v, _ = _analytic_ln_v1(np.asarray(t, dtype=np.float64), kind, ctx, cone_halfwidth)
        method = np.full(ln_v.shape, "analytic", dtype=object)
        return ln_v, ln_v - pad, np.minimum(ln_v + pad, 0.0), method

    def evaluate_gap(gap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        assert ctx.f_opt is not None
        g = np.asarray(gap, dtype=np.float64)
        ln_v, _ = _analytic_ln_v1(ctx.f_opt + g, kind, ctx, cone_halfwidth, g)
        method = np.full(ln_v.shape, "analytic", dtype=object)
        return ln_v, ln_v - pad, np.minimum(ln_v + pad, 0.0), method

    info = AnalyticInfo(kind, rel, ctx.domain_volume_fraction)
    return V1Curve(
        evaluate=evaluate,
        info=info,
        warnings=[],
        f_opt=ctx.f_opt,
        power=_analytic_power(kind, ctx, cone_halfwidth),
        evaluate_gap=evaluate_gap,
    )
