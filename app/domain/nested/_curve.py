"""``v1`` on ``Ω`` from a ladder: every ``t`` served by the deepest level verified at ``t``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.domain import absrank, validation
from app.domain.curves import NestedPiece, PowerLaw, V1Curve, info_json
from app.domain.nested._common import LN10, MIN_INNER_SAMPLES
from app.domain.nested._info import (
    KeptInfo,
    LevelInfo,
    NestedCurveInfo,
    RegionInfo,
    ServedRange,
)
from app.domain.nested._levels import (
    NestedLevel,
    Threshold,
    check_ladder,
    containment_threshold,
    count_below,
    region_of,
)

#: Per-value methods of a nested curve: ``"nested-"`` + the serving level's own method.
METHODS = tuple(f"nested-{m}" for m in absrank.METHODS)


# --------------------------------------------------------------------------------------------
# The curve
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    """Which levels serve which ``t`` (``thresholds[m]`` = ``τ*`` of ``used[m]``)."""

    used: list[int]
    thresholds: list[float]  # +inf for level 0, then non-increasing
    taus: list[Threshold | None]  # per level (None for level 0)
    cumulative: list[float]  # running minimum τ*_j per level
    inner_counts: list[int]
    skipped: dict[int, str]


def _plan(levels: Sequence[NestedLevel], f_opt: float, x_opt: np.ndarray) -> _Plan:
    taus: list[Threshold | None] = [None]
    cumulative = [math.inf]
    counts = [levels[0].table.n]
    used, thresholds = [0], [math.inf]
    skipped: dict[int, str] = {}
    for j in range(1, len(levels)):
        tau = containment_threshold(levels, j, x_opt)
        taus.append(tau)
        # {f <= t} ⊂ R_j implies {f <= t} ⊂ R_i only for the levels i whose region holds R_j
        # (every outer level of an axis-aligned ladder; not an axis box around an oriented one)
        held = [cumulative[i] for i in range(j) if _holds(levels[i], levels[j])]
        cumulative.append(min([tau.value, *held]))
        counts.append(count_below(levels[j].table, cumulative[-1]))
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
    (o_lo, o_hi), (i_lo, i_hi) = region_of(outer), region_of(inner)
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
) -> LevelInfo:
    lv = levels[j]
    lo, hi = region_of(lv)
    kept = None
    if lv.kept is not None:
        level_conf = _level_confidence(lv, confidence)
        share_lo, share_hi = lv.kept.interval(level_conf)
        lo_open, hi_open = lv.open_faces(np.asarray(levels[0].ctx.x_opt, dtype=np.float64))
        kept = KeptInfo(
            n_box=lv.kept.n_box,
            n_kept=lv.kept.n_kept,
            share=lv.kept.share,
            share_lower=share_lo,
            share_upper=share_hi,
            confidence=level_conf,
            faces_inside_domain=int(np.sum(lo_open) + np.sum(hi_open)),
        )
    oriented = lv.axes is not None and lv.half_widths is not None
    region = RegionInfo(
        lower=lo.tolist(),
        upper=hi.tolist(),
        axes=np.asarray(lv.axes).tolist() if oriented else None,
        half_widths=np.asarray(lv.half_widths).tolist() if oriented else None,
        kept=kept,
    )
    tau = plan.taus[j]
    serves = None
    if j in curves:
        m = plan.used.index(j)
        below = plan.thresholds[m + 1] if m + 1 < len(plan.used) else -math.inf
        serves = ServedRange(_finite_or_none(below), _finite_or_none(plan.thresholds[m]))
    return LevelInfo(
        level=j,
        delta=_json_delta(lv.delta),
        region=region,
        volume_fraction=math.exp(lv.ln_volume_fraction),
        log10_volume_fraction=lv.ln_volume_fraction / LN10,
        n=lv.table.n,
        tau=None if tau is None else _finite_or_none(tau.value),
        tau_cumulative=None if tau is None else _finite_or_none(plan.cumulative[j]),
        tau_source=None if tau is None else tau.source,
        samples_below_tau=None if tau is None else plan.inner_counts[j],
        undetectable_share=None if tau is None else _undetectable_share(levels, j, confidence),
        used=j in plan.used,
        skipped=plan.skipped.get(j),
        serves=serves,
        label=lv.label,
        curve=_curve_info(curves[j]) if j in curves else None,
    )


def _curve_info(curve: V1Curve) -> Mapping[str, Any]:
    """A level curve's info block as JSON (the one place that reads ``V1Curve.info``)."""
    return info_json(curve.info)


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
        serving level ``j`` at ``t`` (Jing & Liu Eq. 28, or its tail below its samples), with that
        level's interval shifted by the same ``ln`` fraction; methods ``"nested-" + method``
        (:data:`METHODS`). ``info`` is a :class:`NestedCurveInfo` (one :class:`LevelInfo` per
        level); ``power`` is the deepest serving level's power law shifted by its ``ln``
        fraction (``limit`` capped at its threshold), when it has one.

    Raises
    ------
    InvalidInput
        Malformed ladder (``field="levels"``), bad ``tail``/``k_anchor``/``confidence``.
    NotApplicable
        ``f*`` or ``x*`` unknown, an atom at ``f*``, ``tail="power"`` refused on the deepest
        level, or a table that contradicts ``f*``.

    Notes
    -----
    Level ``j >= 1`` serves ``t < τ*_j``, the running minimum of the thresholds ``τ_i`` of the
    levels whose region holds ``R_j``; ``τ_j`` is the lowest stored sample that contradicts
    ``{f <= t} ⊂ R_j`` (outside ``R_j`` shrunk by :data:`CLIP_SHARE`), and a level with fewer
    than :data:`MIN_INNER_SAMPLES` samples below ``τ*_j`` is skipped. The check, what it does
    not guarantee (``undetectable_share`` ≈ ``3.7/N``), the geometry of cubes, shaped and
    oriented boxes: docs/METHODS.md, "Nested regions", items "Containment is checked, not
    assumed", "Shape, limit of axis-aligned boxes" and "Oriented boxes".

    Examples
    --------
    ``f = |x|`` on ``[−1, 1]`` has ``v1(t) = t``; four tables of 1024 points reach ``1e-9``:

    >>> from app.domain import sampling
    >>> from app.domain.absrank import RankContext
    >>> from app.domain.nested import ladder_boxes
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
    f_opt, x_opt = check_ladder(levels, tail)
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

    deep_info = _curve_info(curves[deepest])
    info = NestedCurveInfo(
        upper=_curve_info(curves[0]).get("upper"),
        deepest_level=deepest,
        levels_used=tuple(plan.used),
        deepest_lower=deep_info.get("lower"),
        beta=deep_info.get("beta"),
        beta_source=deep_info.get("beta_source"),
        k=deep_info.get("k"),
        anchor_value=deep_info.get("anchor_value"),
        n=levels[0].table.n,
        confidence=confidence,
        levels=tuple(_level_info(levels, plan, curves, j, confidence) for j in range(len(levels))),
    )
    warnings = _warnings(levels, plan, curves)
    bounds = [*plan.thresholds, -math.inf]
    pieces = []
    for m, j in enumerate(plan.used):
        model = curves[j].table
        assert model is not None
        pieces.append(NestedPiece(j, bounds[m + 1], bounds[m], ln_fracs[m], model))
    return V1Curve(
        evaluate=evaluate,
        info=info.as_json(),  # V1Curve.info is a JSON block on main (see NestedCurveInfo)
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
