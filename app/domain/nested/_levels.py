"""Sampled levels of a ladder and their containment thresholds ``τ_j`` (checked, not assumed).

:class:`NestedLevel` (a table on ``R_j``), :class:`KeptShare` (the measured ``Leb(B ∩ Ω)/Leb(B)``
of an intersected level), the threshold below which ``{f <= t} ⊂ R_j`` is not contradicted by
any stored sample, and the validation of a ladder. See :func:`app.domain.nested.nested_curve`,
Notes.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, NamedTuple

import numpy as np
from scipy import special

from app.domain import notices
from app.domain.absrank import RankContext, TableData
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.nested._common import CLIP_SHARE, TAIL_MODES, check_int
from app.domain.nested._plan import domain_extents

# --------------------------------------------------------------------------------------------
# Levels and their containment thresholds
# --------------------------------------------------------------------------------------------


class ShareInterval(NamedTuple):
    """A two-sided Clopper–Pearson interval of a share (unpacks as ``lo, hi``).

    Attributes
    ----------
    lower, upper : float
        ``0 <= lower <= upper <= 1``.
    """

    lower: float
    upper: float


class OpenFaces(NamedTuple):
    """Which faces of an oriented box lie inside ``Ω`` (:meth:`NestedLevel.open_faces`).

    Attributes
    ----------
    lower, upper : ndarray of bool, shape (d,)
        Face ``z_k = −h_k`` / ``z_k = +h_k`` inside ``Ω``.
    """

    lower: np.ndarray
    upper: np.ndarray


class LocalView(NamedTuple):
    """A level's table and context in the box's own coordinates (:meth:`NestedLevel.local`).

    Attributes
    ----------
    table : TableData
        The level's table (``low_x`` in box coordinates for an oriented level).
    ctx : RankContext
        Its context (``x* = 0`` and the box ``[−h, h]`` for an oriented level).
    """

    table: TableData
    ctx: RankContext


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

    def interval(self, confidence: float) -> ShareInterval:
        """Clopper–Pearson interval of ``φ`` at ``confidence`` (exact 1 when ``M = N``).

        A scrambled Sobol count is treated as binomial, as for the tables' own counts: for the
        indicator of a set with a piecewise smooth boundary the randomized-QMC variance is
        ``O(N^{-1-1/d})``, below the binomial ``φ(1 − φ)/N`` at the sizes used (measured in
        tests/unit/domain/test_nested.py over independent scramblings).
        """
        return kept_share_interval(self.n_box, self.n_kept, confidence)


def kept_share_interval(n_box: int, n_kept: int, confidence: float) -> ShareInterval:
    """Clopper–Pearson ``(lower, upper)`` of a share ``M/N`` at ``confidence`` (two-sided)."""
    n = check_int(n_box, "n_box", 1)
    m = check_int(n_kept, "n_kept", 0)
    if m > n:
        raise InvalidInput(f"n_kept {m} exceeds n_box {n}", field="n_kept")
    alpha = 1.0 - float(confidence)
    lower = 0.0 if m == 0 else float(special.betaincinv(m, n - m + 1, alpha / 2.0))
    upper = 1.0 if m == n else float(special.betaincinv(m + 1, n - m, 1.0 - alpha / 2.0))
    return ShareInterval(lower, upper)


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
    label: Mapping[str, notices.JSONValue] = field(default_factory=dict)
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

    def open_faces(self, x_opt: np.ndarray) -> OpenFaces:
        """Which faces ``z_k = −h_k`` / ``z_k = +h_k`` of an oriented box are inside ``Ω``.

        Every face of an oriented level inside ``Ω``; for an intersected level a face counts
        only where ``Ω`` reaches beyond it (``min/max z_k`` over ``Ω``, exact), since beyond a
        face outside ``Ω`` there is nothing to sample (as a face shared with ``Ω``).
        """
        h = np.asarray(self.half_widths, dtype=np.float64)
        if self.kept is None or self.axes is None:
            return OpenFaces(np.ones(h.size, dtype=bool), np.ones(h.size, dtype=bool))
        z_lo, z_hi = domain_extents(
            self.axes, x_opt, self.kept.domain_lower, self.kept.domain_upper
        )
        return OpenFaces(z_lo < -h, z_hi > h)

    def local(self, x_opt: np.ndarray) -> LocalView:
        """Table and context in the box's own coordinates ``z = Qᵀ(x − x*)`` (oriented levels).

        The stored lowest points become ``z``, ``x*`` becomes 0 and the region ``[−h, h]``, so
        the power tail's clipping check (:func:`app.domain.absrank.table_curve`) measures the
        sublevel sets against the faces of the oriented box itself. Axis-aligned levels are
        returned unchanged.
        """
        if self.axes is None or self.half_widths is None:
            return LocalView(self.table, self.ctx)
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
            return LocalView(table, ctx)
        table = dataclasses.replace(self.table, low_x=z)
        ctx = dataclasses.replace(
            self.ctx, x_opt=np.zeros(h.size), region_lower=-h, region_upper=h.copy()
        )
        return LocalView(table, ctx)


@dataclass(frozen=True)
class ThresholdSource:
    """Where a level's threshold ``τ_j`` comes from (``tau_source`` of the level's info).

    Attributes
    ----------
    level : int
        The level ``i <= j`` whose stored samples set it.
    check : {"outer", "own"}
        (a) an outer level's samples outside the shrunken ``R_j``, or (b) level ``j``'s own
        samples near a face of ``R_j`` inside the domain.
    kind : {"sample outside", "cap: largest stored sample", "no stored samples"}
        A sample beyond the shrunken box, the level's largest stored value (beyond it nothing is
        known), or no stored samples at all (``τ_j = −inf``).
    point_rank : int or None
        1-based rank of that sample among the level's stored lowest (``None`` without samples).
    """

    level: int
    check: Literal["outer", "own"]
    kind: Literal["sample outside", "cap: largest stored sample", "no stored samples"]
    point_rank: int | None = None

    def as_json(self) -> dict[str, object]:
        """The JSON block (``point_rank`` only when there is one)."""
        out: dict[str, object] = {"level": self.level, "check": self.check, "kind": self.kind}
        if self.point_rank is not None:
            out["point_rank"] = self.point_rank
        return out


@dataclass(frozen=True)
class Threshold:
    """``τ_j`` of one level and where it comes from.

    Attributes
    ----------
    value : float
        ``τ_j`` (units of ``f``; ``−inf`` when a level has no stored samples).
    source : ThresholdSource
        The sample (or cap) that sets it.
    """

    value: float
    source: ThresholdSource


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
    level: NestedLevel, mask: np.ndarray, index: int, check: Literal["outer", "own"]
) -> Threshold:
    """Smallest stored value among ``mask``, or the level's largest stored value (the cap)."""
    values = level.table.low_values
    if values.size == 0:
        return Threshold(-math.inf, ThresholdSource(index, check, "no stored samples"))
    if np.any(mask):
        rank = int(np.argmax(mask))
        return Threshold(
            float(values[rank]), ThresholdSource(index, check, "sample outside", rank + 1)
        )
    return Threshold(
        float(values[-1]),
        ThresholdSource(index, check, "cap: largest stored sample", int(values.size)),
    )


def region_of(level: NestedLevel) -> tuple[np.ndarray, np.ndarray]:
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
        return _beyond(points, x_opt, region_of(inner), outer)
    if points.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    z = (points - x_opt) @ np.asarray(inner.axes, dtype=np.float64)
    h = np.asarray(inner.half_widths, dtype=np.float64)
    if inner.kept is not None:  # an intersected level: only its faces inside Ω count
        lo_open, hi_open = inner.open_faces(x_opt)
        out = ((z < -CLIP_SHARE * h) & lo_open) | ((z > CLIP_SHARE * h) & hi_open)
        return np.asarray(np.any(out, axis=1))
    return np.asarray(np.any(np.abs(z) > CLIP_SHARE * h, axis=1))


def containment_threshold(levels: Sequence[NestedLevel], j: int, x_opt: np.ndarray) -> Threshold:
    """``τ_j``: the smallest value at which ``{f <= t} ⊂ R_j`` is contradicted by a sample."""
    inner = levels[j]
    domain = region_of(levels[0])
    candidates = []
    for i in range(j):  # (a) outer levels' samples outside the shrunken R_j
        # an oriented outer box shares no face with R_j: only the domain's faces are shared
        outer = domain if levels[i].oriented else region_of(levels[i])
        mask = _beyond_level(levels[i].table.low_x, x_opt, inner, outer)
        candidates.append(_first_beyond(levels[i], mask, i, "outer"))
    # (b) level j's own samples near a face of R_j that lies inside the domain
    mask = _beyond_level(levels[j].table.low_x, x_opt, inner, domain)
    candidates.append(_first_beyond(levels[j], mask, j, "own"))
    return min(candidates, key=lambda c: c.value)


def count_below(table: TableData, t: float) -> int:
    """``#{y_i < t}`` where known exactly, else a lower bound (the knot below ``t``)."""
    j = int(np.searchsorted(table.values, t, side="left")) - 1
    return int(table.counts[j]) if j >= 0 else 0


# --------------------------------------------------------------------------------------------
# Validation
# --------------------------------------------------------------------------------------------


def check_ladder(levels: Sequence[NestedLevel], tail: str) -> tuple[float, np.ndarray]:
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
    prev = region_of(levels[0])
    prev_ln = 0.0
    for j, lv in enumerate(levels):
        # an oriented box (or the first box below one) need not lie in the previous region's
        # bounding box, only in the domain; the containment checks use every outer level
        outer = region_of(levels[0]) if lv.oriented or levels[max(j - 1, 0)].oriented else prev
        _check_level(lv, j, f_opt, x_opt, outer, prev_ln)
        prev, prev_ln = region_of(lv), lv.ln_volume_fraction
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
    lo, hi = region_of(lv)
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
