"""The ranks on a table's curve as they were computed before issue 15's last pass, the oracle.

``Eq28._piece`` with the bracket spelt out (``bracket`` and the three memoised limits read one
by one), the linear tail with its constants recomputed per call, ``_assemble`` selecting its
pieces by index arrays, and ``_result`` copying ``v = v1``: the code of ``app.domain.absrank``
at commit ``daca54a``. :func:`reference_ranks` composes them on the same tail choice as
:func:`app.domain.absrank.table_curve`; ``tests/unit/domain/test_absrank_fast.py`` compares
every number bit for bit with the rewritten path.
"""

from __future__ import annotations

import math

import numpy as np

from app.domain import absrank
from app.domain.absrank._context import (
    RankContext,
    RankResult,
    RankTail,
    Transform,
    check_transform,
)
from app.domain.absrank._curve import _apply_atom, _transform
from app.domain.absrank._eq28 import (
    Eq28,
    LinearTail,
    LowerTailModel,
    Piece,
    upper_kind,
    upper_piece,
)
from app.domain.absrank._logspace import LN10, NEG_INF, ln1m_exp, ln_or_neg_inf
from app.domain.absrank._tails import LOWER_TAILS, TailInputs


def eq28_piece(eq: Eq28, t: np.ndarray, knots: np.ndarray) -> Piece:
    ln_v = np.log(np.interp(t, knots, eq.counts[: knots.size])) - eq.ln_n1
    j, nxt, exact = eq.bracket(t, knots)
    cp_hi = np.empty(t.shape)
    cp_hi[exact] = eq.cp.upper(j[exact])
    cp_hi[~exact] = eq.cp.upper_below(nxt[~exact])
    lo = np.minimum(eq.cp.lower(j), ln_v)
    hi = np.maximum(cp_hi, ln_v)
    return Piece(ln_v, lo, hi, "interpolated")


def eq28(eq: Eq28, t: np.ndarray, gap: np.ndarray | None) -> Piece:
    if gap is None:
        return eq28_piece(eq, t, eq.table.values)
    gaps = eq.gaps
    near = gap <= gaps.top
    if not np.any(near):
        return eq28_piece(eq, t, eq.table.values)
    ln_v, lo, hi = (np.empty(t.shape) for _ in range(3))
    for mask, x, knots in ((near, gap, gaps.knots[: gaps.exact]), (~near, t, eq.table.values)):
        if np.any(mask):
            part = eq28_piece(eq, x[mask], knots)
            ln_v[mask], lo[mask], hi[mask] = part.ln_v, part.ln_lo, part.ln_hi
    return Piece(ln_v, lo, hi, "interpolated")


def linear(tail: LinearTail, t: np.ndarray, gap: np.ndarray | None) -> Piece:
    ln_top = math.log(tail.v_top)
    span = tail.eq.y_min - tail.f_opt
    ln_atom = ln_or_neg_inf(tail.atom)
    rise = t - tail.f_opt if gap is None else gap
    with np.errstate(divide="ignore", invalid="ignore"):
        frac_ln = np.log(rise) - math.log(span) if span > 0 else np.zeros(t.shape)
        ramp = ln_top + frac_ln
        ln_v = np.logaddexp(ln_atom, ln1m_exp(np.array(ln_atom - ln_top)) + ramp)
    below, at = (t < tail.f_opt, t == tail.f_opt) if gap is None else (gap < 0, gap == 0)
    ln_v = np.where(below, NEG_INF, np.where(at, ln_atom, ln_v))
    lo = np.where(below, NEG_INF, ln_atom)
    hi = np.where(below | at, ln_v, np.maximum(tail.eq.ln_cp_upper_zero(), ln_v))
    return Piece(ln_v, np.minimum(lo, ln_v), hi, "tail-linear")


def _selection(mask: np.ndarray) -> slice | np.ndarray | None:
    at = np.flatnonzero(mask)
    if at.size == 0:
        return None
    first, last = int(at[0]), int(at[-1])
    return slice(first, last + 1) if last - first + 1 == at.size else mask


def _zero_at_minimum(t: np.ndarray, est: Piece, ctx: RankContext, gap: np.ndarray | None) -> Piece:
    assert ctx.f_opt is not None
    f_opt = float(ctx.f_opt)
    at_zero = ctx.no_plateau and ctx.atom == 0
    if gap is None:
        zero = t <= f_opt if at_zero else t < f_opt
    else:
        zero = gap <= 0 if at_zero else gap < 0
    if not np.any(zero):
        return est
    out = [np.where(zero, -np.inf, x) for x in (est.ln_v, est.ln_lo, est.ln_hi)]
    return Piece(out[0], out[1], out[2], "")


def assemble(
    t: np.ndarray,
    eq: Eq28,
    lower: LowerTailModel,
    upper: str,
    ctx: RankContext,
    gap: np.ndarray | None = None,
) -> tuple[Piece, np.ndarray]:
    if gap is None:
        low = t < lower.limit
    else:
        assert eq.f_opt is not None
        low = gap < lower.limit - eq.f_opt
    up = t > eq.y_max
    if upper == "linear-to-f_max" and ctx.f_max is not None:
        up |= t >= float(ctx.f_max)
    masks = {"low": low, "up": ~low & up}
    masks["mid"] = ~(masks["low"] | masks["up"])

    def low_piece(x: np.ndarray, g: np.ndarray | None) -> Piece:
        return linear(lower, x, g) if isinstance(lower, LinearTail) else lower.piece(x, g)

    makers = {
        "low": low_piece,
        "mid": lambda x, g: eq28(eq, x, g),
        "up": lambda x, _: upper_piece(x, eq, ctx, upper),
    }
    ln_v, lo, hi = (np.empty(t.shape) for _ in range(3))
    method = np.empty(t.shape, dtype=object)
    for name, mask in masks.items():
        where = _selection(mask)
        if where is not None:
            part = makers[name](t[where], None if gap is None else gap[where])
            ln_v[where], lo[where], hi[where], method[where] = (
                part.ln_v,
                part.ln_lo,
                part.ln_hi,
                part.method,
            )
    est = Piece(ln_v, lo, hi, "")
    if lower.uses_atom:
        est = _apply_atom(t, est, method, ctx, gap)
        if ctx.f_opt is not None:
            est = _zero_at_minimum(t, est, ctx, gap)
    return est, method


def result(
    est: Piece, method: np.ndarray, budget: int, runs: int, k: int, tail: RankTail
) -> RankResult:
    ln_v, lo, hi = (_transform(x, budget, runs, k) for x in (est.ln_v, est.ln_lo, est.ln_hi))
    with np.errstate(under="ignore"):
        v = np.exp(ln_v)
    zero = np.isneginf(ln_v)
    method = np.array(method, dtype=object)
    if zero.any():
        method[zero] = "at-or-below-minimum"
    return RankResult(
        log10_v=ln_v / LN10,
        v=v,
        method=method,
        log10_lo=np.minimum(lo, ln_v) / LN10,
        log10_hi=np.maximum(hi, ln_v) / LN10,
        tail=tail,
    )


def reference_ranks(
    t: np.ndarray,
    table: absrank.TableData,
    ctx: RankContext,
    *,
    tail: str = "auto",
    k_anchor: int = 100,
    confidence: float = 0.95,
    budget: int = 1,
    runs: int = 1,
    aggregate: str = "best",
    order: int | None = None,
    values_are: str = "f",
) -> RankResult:
    """The ranks of order statistics of ``t`` on the table's curve, the old way (``tail`` of
    the result: the new curve's description, which this module does not change)."""
    curve = absrank.table_curve(table, ctx, tail=tail, k_anchor=k_anchor, confidence=confidence)
    eq = Eq28(table, 1.0 - confidence, None if ctx.f_opt is None else float(ctx.f_opt))
    lower = LOWER_TAILS[tail](TailInputs(table, ctx, eq, int(k_anchor), float(confidence))).tail
    upper = upper_kind(tail, ctx)
    k = check_transform(budget, runs, aggregate, order)
    x = np.asarray(t, dtype=np.float64)
    if values_are == "error":
        assert eq.f_opt is not None
        est, method = assemble(eq.f_opt + x, eq, lower, upper, ctx, x)
    else:
        est, method = assemble(x, eq, lower, upper, ctx)
    info = RankTail(curve.info, Transform(int(budget), int(runs), aggregate, k))
    return result(est, method, int(budget), int(runs), k, info)
