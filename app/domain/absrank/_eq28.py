"""The pieces of ``v1`` on a table: Eq. 28 inside the samples, the tail forms, the upper tail."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

import numpy as np

from app.domain.absrank._context import RankContext
from app.domain.absrank._logspace import NEG_INF, cp_limits, ln1m_exp, ln_or_neg_inf
from app.domain.absrank._table import TableData
from app.domain.errors import NotApplicable


@dataclass(frozen=True, eq=False)
class Piece:
    """``ln v``, interval ends and method of a subset of query values."""

    ln_v: np.ndarray
    ln_lo: np.ndarray
    ln_hi: np.ndarray
    method: str


@dataclass(frozen=True, eq=False)
class _GapKnots:
    """A table's knots as gaps ``y_j − f*``: exact for the first ``exact`` knots.

    ``fl(y_j − f*)`` is the exact difference wherever it is representable (always within a factor
    2 of ``f*``, Sterbenz's lemma), which is checked knot by knot with the error term of Knuth's
    TwoSum [4]; the leading knots with an exact difference are compared with exact gaps.
    """

    knots: np.ndarray  # fl(values − f*), the first ``exact`` of them exact
    exact: int

    @classmethod
    def of(cls, values: np.ndarray, f_opt: float) -> _GapKnots:
        d = values - f_opt
        # TwoSum of values + (−f*): err = (values − f*) − d exactly [4]
        b_virtual = d - values
        err = (values - (d - b_virtual)) + (-f_opt - b_virtual)
        inexact = np.flatnonzero(err != 0.0)
        return cls(d, int(inexact[0]) if inexact.size else int(values.size))

    @property
    def top(self) -> float:
        """The largest gap compared exactly (``-inf`` when no knot's difference is exact)."""
        return float(self.knots[self.exact - 1]) if self.exact else -math.inf


class Eq28:
    """Paper Eq. 28 on a stored table, with Clopper–Pearson intervals."""

    def __init__(self, table: TableData, alpha: float, f_opt: float | None = None) -> None:
        self.table = table
        # the counts as float64, converted once per curve: np.interp converts integer ordinates
        # on every call (a copy of every knot's count per request); the conversion is exact
        self.counts = table.counts.astype(np.float64)
        self.counts.flags.writeable = False
        self.n = table.n
        self.alpha = alpha
        self.cp = cp_limits(table, alpha)
        self.ln_n1 = math.log(table.n + 1.0)
        self.y_min = float(table.values[0])
        self.y_max = float(table.values[-1])
        j = int(np.searchsorted(table.counts, min(table.k_exact, table.n)))
        self.exact_upto = float(table.values[min(j, table.values.size - 1)])
        # the last knot at or below exact_upto: values[i] <= exact_upto iff i <= this (sorted
        # knots), so bracket() compares indices instead of reading the knots again
        self._upto = int(np.searchsorted(table.values, self.exact_upto, side="right")) - 1
        # per knot j: whether the count in [y_j, y_next) is known exactly whatever t is there
        # (the next knot is within the exact range, or holds one sample more): bracket()'s
        # test on j and nxt, computed once per curve instead of five passes per request
        m = table.values.size
        nxt = np.minimum(np.arange(1, m + 1), m - 1)
        self.static_exact = (nxt <= self._upto) | (self.counts[nxt] - self.counts <= 1)
        self.static_exact.flags.writeable = False
        self.f_opt = f_opt
        self._gaps: _GapKnots | None = None

    @property
    def gaps(self) -> _GapKnots:
        """The knots as gaps to ``f*`` (computed on first use; needs ``f_opt``)."""
        if self._gaps is None:
            assert self.f_opt is not None
            self._gaps = _GapKnots.of(self.table.values, self.f_opt)
        return self._gaps

    def count_at(self, y: float) -> float:
        return float(np.interp(y, self.table.values, self.counts))

    def ln_v(self, t: np.ndarray) -> np.ndarray:
        return self._ln_v(t, self.table.values)

    def _ln_v(self, x: np.ndarray, knots: np.ndarray) -> np.ndarray:
        out_: np.ndarray = np.log(np.interp(x, knots, self.counts[: knots.size])) - self.ln_n1
        return out_

    def bracket(
        self, t: np.ndarray, knots: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bounds on the sample count ``#{y_i <= t}`` for ``t`` in ``[y_1, y_N]``.

        Returns knot indices ``j`` and ``nxt`` and a mask ``exact``: the count lies in
        ``[counts[j], counts[j]]`` where ``exact``, else in ``[counts[j], counts[nxt] − 1]``.
        ``knots``: the leading knots in the units of ``t`` (default the values of ``f``; the
        exact gaps ``y_j − f*`` for gaps).
        """
        values, counts = self.table.values, self.counts  # the float64 counts: exact
        knots = values if knots is None else knots
        # searchsorted is at most knots.size <= values.size: only the lower end needs clipping
        # (np.maximum, not np.clip: the same integers, without clip's per-call checks)
        j = np.maximum(np.searchsorted(knots, t, side="right") - 1, 0)
        nxt = np.minimum(j + 1, values.size - 1)
        # values[nxt] <= exact_upto as nxt <= _upto, and the counts interp() has just read:
        # fewer of the table's cache lines per value
        exact = (knots[j] == t) | (nxt <= self._upto) | (counts[nxt] - counts[j] <= 1)
        return j, nxt, exact

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> Piece:
        """Eq. 28; interval = Clopper–Pearson on the bracketed count (:func:`absolute_ranks`).

        With ``gap`` (exact ``t − f*``), values up to the last knot whose ``y_j − f*`` is exact
        are compared and interpolated as gaps (``(gap − (y_a − f*))/(y_b − y_a)``: no rounding of
        ``f* + gap``); the others as ``t``, where ``t`` resolves the gap as finely as ``gap``
        itself.
        """
        if gap is None:
            return self._piece(t, self.table.values)
        gaps = self.gaps
        near = gap <= gaps.top
        if not np.any(near):
            return self._piece(t, self.table.values)
        ln_v, lo, hi = (np.empty(t.shape) for _ in range(3))
        for mask, x, knots in (
            (near, gap, gaps.knots[: gaps.exact]),
            (~near, t, self.table.values),
        ):
            if np.any(mask):
                part = self._piece(x[mask], knots)
                ln_v[mask], lo[mask], hi[mask] = part.ln_v, part.ln_lo, part.ln_hi
        return Piece(ln_v, lo, hi, "interpolated")

    def _piece(self, t: np.ndarray, knots: np.ndarray) -> Piece:
        """Eq. 28 at ``t`` on ``knots``: :meth:`bracket`'s count bounds and their limits, in
        few passes (one search, the per-knot test :attr:`static_exact`, the limits of both
        ends read by :meth:`CPLimits.at`); the same numbers as the bracket spelt out."""
        ln_v = np.log(np.interp(t, knots, self.counts[: knots.size]))
        ln_v -= self.ln_n1
        j = knots.searchsorted(t, side="right")
        j -= 1
        np.maximum(j, 0, out=j)  # searchsorted is at most knots.size: no upper clip
        exact = knots[j] == t
        exact |= self.static_exact[j]
        lower, upper = self.cp.at(j, exact)
        return Piece(ln_v, np.minimum(lower, ln_v), np.maximum(upper, ln_v), "interpolated")

    def ln_cp_upper_zero(self) -> float:
        """Upper confidence limit of ``v1(t)`` for ``t < y_1`` (no sample at or below ``t``)."""
        return self.cp.upper_zero


class LowerTailModel(Protocol):
    """A lower tail: ``v1`` below ``limit``, and whether the atom at ``f*`` applies to it."""

    @property
    def limit(self) -> float:
        """The tail is used for ``t < limit``."""
        ...

    @property
    def uses_atom(self) -> bool:
        """Whether the registered atom and ``v1 = 0`` below ``f*`` apply."""
        ...

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> Piece: ...


@dataclass(frozen=True, eq=False)
class PaperTail:
    """Eq. 28's lower tail ``exp(t − y_1)/(N + 1)`` exactly as written (not scale-invariant)."""

    eq: Eq28
    limit: float
    uses_atom: bool = False

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> Piece:
        # exp(t − y_1): a rounding of t by ulp(f*) changes it by a factor 1 + ulp(f*); no gap
        ln_v = (t - self.eq.y_min) - self.eq.ln_n1
        lo = np.full(t.shape, NEG_INF)
        hi = np.maximum(self.eq.ln_cp_upper_zero(), ln_v)
        return Piece(ln_v, lo, hi, "tail-paper")


@dataclass(frozen=True, eq=False)
class LinearTail:
    """``v1 = 0`` below ``f*``, linear from ``(f*, atom)`` to ``(y_1, max(atom, v1(y_1)))``."""

    eq: Eq28
    f_opt: float
    atom: float
    limit: float
    uses_atom: bool = True

    @cached_property
    def v_top(self) -> float:
        """``v1`` where the line meets the samples: ``max(atom, v1(y_1))`` (a constant of the
        table, read once per curve instead of once per request)."""
        return max(self.atom, self.eq.count_at(self.eq.y_min) / (self.eq.n + 1.0))

    @cached_property
    def _constants(self) -> tuple[float, float, float, float]:
        """``ln v_top``, ``ln(y_1 − f*)`` (NaN if not positive), ``ln atom`` and
        ``ln(1 − atom/v_top)``: the line's constants, computed once per curve."""
        ln_top = math.log(self.v_top)
        span = self.eq.y_min - self.f_opt
        ln_atom = ln_or_neg_inf(self.atom)
        ln_rest = float(ln1m_exp(np.array(ln_atom - ln_top)))
        return ln_top, math.log(span) if span > 0 else math.nan, ln_atom, ln_rest

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> Piece:
        """``gap``: exact ``t − f*`` (errors), used for the ramp ``(t − f*)/(y_1 − f*)``."""
        ln_top, ln_span, ln_atom, ln_rest = self._constants
        rise = t - self.f_opt if gap is None else gap
        with np.errstate(divide="ignore", invalid="ignore"):
            frac_ln = np.log(rise) - ln_span if not math.isnan(ln_span) else np.zeros(t.shape)
            ramp = ln_top + frac_ln  # ln of the linear part above the atom
            ln_v = np.logaddexp(ln_atom, ln_rest + ramp)
        below, at = (t < self.f_opt, t == self.f_opt) if gap is None else (gap < 0, gap == 0)
        cap = self.eq.ln_cp_upper_zero()
        if not (np.count_nonzero(below) or np.count_nonzero(at)):  # all above f*
            return Piece(ln_v, np.minimum(ln_atom, ln_v), np.maximum(cap, ln_v), "tail-linear")
        ln_v = np.where(below, NEG_INF, np.where(at, ln_atom, ln_v))
        lo = np.where(below, NEG_INF, ln_atom)
        hi = np.where(below | at, ln_v, np.maximum(cap, ln_v))
        return Piece(ln_v, np.minimum(lo, ln_v), hi, "tail-linear")


@dataclass(frozen=True, eq=False)
class PowerTail:
    """``v1(t) = v1(y_k)·((t − f*)/(y_k − f*))^β`` for ``t < y_k``, in log space."""

    f_opt: float
    limit: float  # y_k
    ln_anchor: float
    ln_anchor_lo: float
    ln_anchor_hi: float
    beta: float
    beta_lo: float
    beta_hi: float
    uses_atom: bool = True

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> Piece:
        """``gap``: exact ``t − f*`` (errors), used in ``(t − f*)/(y_k − f*)``."""
        rise = t - self.f_opt if gap is None else gap
        with np.errstate(divide="ignore", invalid="ignore"):
            ln_ratio = np.log(np.maximum(rise, 0.0)) - math.log(self.limit - self.f_opt)
        ln_v = self.ln_anchor + self.beta * ln_ratio
        lo = self.ln_anchor_lo + self.beta_hi * ln_ratio
        hi = self.ln_anchor_hi + self.beta_lo * ln_ratio
        return Piece(ln_v, np.minimum(lo, ln_v), np.maximum(hi, ln_v), "tail-power")


def _upper_paper(t: np.ndarray, eq: Eq28, ctx: RankContext) -> tuple[np.ndarray, np.ndarray]:
    if eq.y_max <= 0:
        raise NotApplicable(
            f"the paper's upper tail needs y_N > 0 (y_N = {eq.y_max!r})", field="tail"
        )
    with np.errstate(divide="ignore"):
        return np.log(-np.expm1(-eq.ln_n1 * t / eq.y_max)), np.zeros(t.shape)


def _upper_fmax(t: np.ndarray, eq: Eq28, ctx: RankContext) -> tuple[np.ndarray, np.ndarray]:
    span = (eq.y_max if ctx.f_max is None else float(ctx.f_max)) - eq.y_max
    frac = np.clip((t - eq.y_max) / span, 0.0, 1.0) if span > 0 else np.ones(t.shape)
    return np.log((eq.n + frac) / (eq.n + 1.0)), np.zeros(t.shape)


def _upper_flat(t: np.ndarray, eq: Eq28, ctx: RankContext) -> tuple[np.ndarray, np.ndarray]:
    return np.full(t.shape, math.log(eq.n / (eq.n + 1.0))), np.zeros(t.shape)


_UPPER_TAILS: dict[
    str, Callable[[np.ndarray, Eq28, RankContext], tuple[np.ndarray, np.ndarray]]
] = {
    "paper": _upper_paper,
    "linear-to-f_max": _upper_fmax,
    "flat": _upper_flat,
}


def upper_kind(mode: str, ctx: RankContext) -> str:
    """Paper's upper tail only when asked for explicitly; ``auto`` never uses it."""
    if mode == "paper":
        return "paper"
    return "flat" if ctx.f_max is None else "linear-to-f_max"


def upper_piece(t: np.ndarray, eq: Eq28, ctx: RankContext, kind: str) -> Piece:
    ln_v, hi = _UPPER_TAILS[kind](t, eq, ctx)
    lo = np.minimum(eq.cp.lower_n, ln_v)
    at_max = ln_v == 0.0
    return Piece(ln_v, np.where(at_max, 0.0, lo), hi, "upper-tail")
