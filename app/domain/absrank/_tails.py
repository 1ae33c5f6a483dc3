"""Choice of the lower tail (paper, linear, power with its anchor and validity checks, auto)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from scipy import stats

from app.domain import notices
from app.domain.absrank._context import CLIP_SHARE, FIT_P_MIN, MIN_ANCHOR, RankContext
from app.domain.absrank._eq28 import Eq28, LinearTail, LowerTailModel, PaperTail, PowerTail
from app.domain.absrank._logspace import ln_cp_lower, ln_cp_upper
from app.domain.absrank._table import TableData
from app.domain.curves import (
    PowerInfo,
)
from app.domain.errors import NotApplicable
from app.domain.stattools import log10_of


@dataclass(frozen=True)
class TailInputs:
    table: TableData
    ctx: RankContext
    eq: Eq28
    k_anchor: int
    confidence: float


@dataclass(frozen=True)
class TailChoice:
    """The lower tail that applies, as :data:`LOWER_TAILS` choose it.

    Attributes
    ----------
    tail : LowerTailModel
        The tail's ``v1`` below its limit.
    lower : {"paper", "linear", "power"}
        Its name in the answer (``tail.lower``).
    power : PowerInfo or None
        The power tail's record (anchor, ``β``, validity); ``None`` for the other tails.
    warnings : tuple of notices.Warning
        Fallbacks taken (power tail refused or not tried, paper tail without ``f*``, ...).
    """

    tail: LowerTailModel
    lower: str
    power: PowerInfo | None = None
    warnings: tuple[notices.Warning, ...] = ()


def _require_f_opt(inp: TailInputs, mode: str) -> float:
    if inp.ctx.f_opt is None:
        raise NotApplicable(f"tail={mode!r} needs a known minimum f*", field="tail")
    f_opt = float(inp.ctx.f_opt)
    if inp.eq.y_min < f_opt:
        raise NotApplicable(
            f"the table's smallest value {inp.eq.y_min!r} is below the registered f* {f_opt!r}",
            field="f_opt",
        )
    return f_opt


def _paper_tail(inp: TailInputs) -> TailChoice:
    return TailChoice(PaperTail(inp.eq, inp.eq.y_min), "paper")


def _linear_tail(inp: TailInputs) -> TailChoice:
    f_opt = _require_f_opt(inp, "linear")
    return TailChoice(LinearTail(inp.eq, f_opt, inp.ctx.atom, inp.eq.y_min), "linear")


def _clipping(points: np.ndarray, ctx: RankContext) -> dict[str, object]:
    """Does the sublevel set through ``points`` reach ``CLIP_SHARE`` of the way to the boundary?"""
    if ctx.x_opt is None:
        raise NotApplicable(
            "x_opt is unknown: the power tail's validity cannot be checked", field="tail"
        )
    x_opt = np.asarray(ctx.x_opt, dtype=np.float64)
    room_lo = x_opt - np.asarray(ctx.region_lower, dtype=np.float64)
    room_hi = np.asarray(ctx.region_upper, dtype=np.float64) - x_opt
    if np.any(room_lo < 0) or np.any(room_hi < 0):
        raise NotApplicable("x_opt lies outside the table's region", field="tail")
    dev = points - x_opt
    room = np.where(dev < 0, room_lo, room_hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(dev == 0, 0.0, np.abs(dev) / room)
    i, coord = np.unravel_index(int(np.argmax(share)), share.shape)
    worst = float(share[i, coord])
    return {
        "ok": bool(worst <= CLIP_SHARE),
        "threshold": CLIP_SHARE,
        "max_share": worst,
        "coordinate": int(coord),
        "point_rank": int(i) + 1,
        "deviation": float(dev[i, coord]),
        "room": float(room[i, coord]),
    }


class _HillBeta(NamedTuple):
    """A Hill-type estimate of ``β`` (:func:`_hill`).

    Attributes
    ----------
    beta : float
        ``β̂ = (k − 1)/Σ_i log((y_k − f*)/(y_i − f*))``.
    se : float
        ``β̂/sqrt(k − 1)``.
    lo, hi : float
        The exact ``1 − alpha`` interval from ``2β·Σ ~ χ²(2(k − 1))``.
    """

    beta: float
    se: float
    lo: float
    hi: float


def _hill(low: np.ndarray, y_k: float, f_opt: float, alpha: float) -> _HillBeta:
    """Hill-type estimate of β from ``log(y_i − f*)``, ``i < k`` [3]: ``(β̂, se, lo, hi)``.

    ``1/β̂ = mean_i log((y_k − f*)/(y_i − f*))``; under ``v1 = C(t − f*)^β`` the ``k − 1`` terms are
    i.i.d. ``Exp(β)``, so ``2β·Σ ~ χ²(2(k − 1))`` gives an exact interval; ``se = β̂/sqrt(k − 1)``.
    """
    gaps = low - f_opt
    if low.size < 1 or np.any(gaps <= 0):
        raise NotApplicable("the Hill estimate of beta needs k >= 2 samples above f*", field="tail")
    total = float(np.sum(np.log((y_k - f_opt) / gaps)))
    if total <= 0:
        raise NotApplicable("the lowest samples are tied: beta cannot be estimated", field="tail")
    dof = 2.0 * low.size
    beta = low.size / total
    lo = float(stats.chi2.ppf(alpha / 2.0, dof)) / (2.0 * total)
    hi = float(stats.chi2.ppf(1.0 - alpha / 2.0, dof)) / (2.0 * total)
    return _HillBeta(beta, beta / math.sqrt(low.size), lo, hi)


@dataclass(frozen=True)
class _Fit:
    """The power-law tests on the samples below an anchor (:func:`_power_fit`)."""

    ok: bool
    p_value: float
    min_p_value: float
    record: dict[str, object]  # the JSON of the answer's ``validity.fit``


def _power_fit(below: np.ndarray, y_k: float, f_opt: float, beta: float) -> _Fit:
    """Goodness of fit of the power law on the samples below the anchor.

    If ``v1(t) = v1(y_k)·((t − f*)/(y_k − f*))^β`` on ``[f*, y_k]``, then given ``y_k`` the
    ``k − 1`` lower samples are i.i.d. with ``u_i = ((y_i − f*)/(y_k − f*))^β ~ U(0, 1)``. Two
    tests, each at ``FIT_P_MIN / 2`` (Bonferroni):

    - Kolmogorov–Smirnov of the ``u_i`` against ``U(0, 1)`` (the shape over ``[y_1, y_k]``);
    - the smallest one, ``P(min u <= u_(1)) = 1 − (1 − u_(1))^(k−1)``: the extrapolation is used
      below ``y_1``, exactly where KS has least power. A lowest sample that the model calls
      improbably low means the power law does not reach down there (BBOB f7 and f19 at d = 2:
      KS alone passed and the tail was 10–10^4 times too small at ``y_1``).

    A registered β is a statement about the limit ``t → f*``; these checks refuse it where the
    anchor is not yet in that regime (e.g. BBOB f20 on its full domain, where ``y_1`` lies six
    decades above the power law through ``y_25``). For a Hill-estimated β they are conservative
    (the parameter was fitted to the same points).
    """
    u = ((below - f_opt) / (y_k - f_opt)) ** beta
    ks = stats.kstest(u, "uniform")
    u_min = float(np.min(u))
    # 1 - (1 - u)^m without cancellation
    p_min = float(-np.expm1(u.size * np.log1p(-min(u_min, 1.0 - 1e-16))))
    level = FIT_P_MIN / 2.0
    ok = bool(ks.pvalue >= level and p_min >= level)
    record: dict[str, object] = {
        "test": "Kolmogorov-Smirnov of u_i = ((y_i - f*)/(y_k - f*))^beta against U(0, 1), "
        "and P(min u <= u_(1)) = 1 - (1 - u_(1))^(k-1), each at threshold/2",
        "statistic": float(ks.statistic),
        "p_value": float(ks.pvalue),
        "log10_p_value": log10_of(float(ks.pvalue)),  # kept only when ok: p >= threshold/2
        "min_u": u_min,
        "min_p_value": p_min,
        "log10_min_p_value": log10_of(p_min),
        "threshold": FIT_P_MIN,
        "ok": ok,
    }
    return _Fit(ok, float(ks.pvalue), p_min, record)


@dataclass(frozen=True)
class _Anchor:
    k: int
    y_k: float
    beta: float
    beta_se: float
    beta_lo: float
    beta_hi: float
    check: dict[str, object]  # the JSON of the answer's ``validity`` (without rejected anchors)


_CLIPPING_UNCHECKED: dict[str, object] = {
    "ok": True,
    "checked": False,
    "reason": "the table holds values without their points (a user's samples): whether the "
    "sublevel set is clipped by the region cannot be checked",
}


def _try_anchor(
    table: TableData, ctx: RankContext, f_opt: float, k: int, split: float
) -> _Anchor | notices.Refusal:
    """The power tail anchored at ``y_k``, or why it is not valid there."""
    check = _clipping(table.low_x[:k], ctx) if ctx.points_known else dict(_CLIPPING_UNCHECKED)
    if not check["ok"]:
        deviation, room = check["deviation"], check["room"]
        assert isinstance(deviation, float)
        assert isinstance(room, float)
        return notices.Refusal(
            "sublevel-set-clipped",
            f"sublevel set {{f <= y_{k}}} is clipped by the region: point "
            f"{check['point_rank']} has |x_{check['coordinate']} - x*| = "
            f"{abs(deviation):.6g} > {CLIP_SHARE} x {room:.6g} "
            "(distance from x* to the boundary on that side)",
            field="tail",
        )
    y_k = float(table.low_values[k - 1])
    if y_k <= f_opt:
        return notices.Refusal(
            "anchor-not-above-minimum",
            f"anchor y_{k} = {y_k!r} is not above f* = {f_opt!r}",
            field="tail",
        )
    if ctx.beta is not None:
        beta = beta_lo = beta_hi = float(ctx.beta)
        beta_se = 0.0
    else:
        try:
            beta, beta_se, beta_lo, beta_hi = _hill(table.low_values[: k - 1], y_k, f_opt, split)
        except NotApplicable as exc:
            return notices.Refusal("beta-not-estimable", str(exc), field="tail")
    fit = _power_fit(table.low_values[: k - 1], y_k, f_opt, beta)
    if not fit.ok:
        return notices.Refusal(
            "power-law-rejected",
            f"the {k - 1} samples below y_{k} do not follow the power law with beta = "
            f"{beta:.6g} (KS p = {fit.p_value:.3g}, lowest-sample p = "
            f"{fit.min_p_value:.3g}; each must reach {FIT_P_MIN / 2})",
            field="tail",
        )
    return _Anchor(k, y_k, beta, beta_se, beta_lo, beta_hi, check | {"fit": fit.record})


def _choose_anchor(
    table: TableData, ctx: RankContext, f_opt: float, k_max: int, split: float
) -> tuple[_Anchor, list[str]]:
    """Largest anchor ``k`` (k_max, k_max/2, …, >= MIN_ANCHOR) where the power tail is valid.

    Valid means: ``{f <= y_k}`` lies inside the region (checked on the stored lowest points) and
    the samples below ``y_k`` follow the power law (:func:`_power_fit`). ``{f <= y_k}`` shrinks
    with ``k``, so when the requested anchor fails a lower one may pass, at the price of a wider
    anchor interval. Below ``MIN_ANCHOR`` points both checks lose their power (a
    fully clipped axis escapes the clipping check with probability ``0.8^k``), so the power tail
    is refused.

    Returns
    -------
    anchor : _Anchor
    rejected : list of str
        Why each larger anchor was refused.

    Raises
    ------
    NotApplicable
        No anchor is valid (field ``tail``).
    """
    rejected: list[str] = []
    k = k_max
    while True:
        anchor = _try_anchor(table, ctx, f_opt, k, split)
        if isinstance(anchor, _Anchor):
            return anchor, rejected
        rejected.append(f"k = {k}: {anchor.message}")
        if k // 2 < min(MIN_ANCHOR, k_max):
            raise NotApplicable("no valid power-tail anchor: " + "; ".join(rejected), field="tail")
        k //= 2


def _power_tail(inp: TailInputs) -> TailChoice:
    f_opt = _require_f_opt(inp, "power")
    ctx, table = inp.ctx, inp.table
    if ctx.atom > 0:
        raise NotApplicable(
            f"f has a plateau at f* (atom {ctx.atom}): its registered mass is used, "
            "never a power tail",
            field="tail",
        )
    # the anchor must be a knot (k <= k_exact) so that its count is exact
    k_max = min(inp.k_anchor, table.low_values.size, table.k_exact, table.n)
    if k_max < 1 or (ctx.beta is None and k_max < 2):
        raise NotApplicable("not enough stored low samples for a power tail", field="tail")
    alpha = 1.0 - inp.confidence
    registered = ctx.beta is not None
    split = alpha if registered else alpha / 2.0  # Bonferroni over (anchor, beta)
    anchor, rejected = _choose_anchor(table, ctx, f_opt, k_max, split)
    count = np.array([inp.eq.count_at(anchor.y_k)])
    tail = PowerTail(
        f_opt=f_opt,
        limit=anchor.y_k,
        ln_anchor=float(np.log(count[0]) - inp.eq.ln_n1),
        ln_anchor_lo=float(ln_cp_lower(count, table.n, split)[0]),
        ln_anchor_hi=float(ln_cp_upper(count, table.n, split)[0]),
        beta=anchor.beta,
        beta_lo=anchor.beta_lo,
        beta_hi=anchor.beta_hi,
    )
    info = PowerInfo(
        beta=anchor.beta,
        beta_source="registered" if registered else "hill",
        beta_se=anchor.beta_se,
        beta_interval=(anchor.beta_lo, anchor.beta_hi),
        beta_derivation=ctx.beta_derivation if registered else "Hill estimator on log(y_i - f*)",
        k=anchor.k,
        requested_k=k_max,
        anchor_value=anchor.y_k,
        anchor_count=round(float(count[0])),
        validity=anchor.check | {"rejected_anchors": rejected},
    )
    warnings = (
        notices.Warning(
            "power-anchor-lowered",
            f"power tail anchored at y_{anchor.k}; refused: " + "; ".join(rejected),
            {"k": anchor.k, "requested_k": k_max, "rejected": tuple(rejected)},
            field="tail",
        ),
    )
    return TailChoice(tail, "power", info, warnings if rejected else ())


def _auto_tail(inp: TailInputs) -> TailChoice:
    if inp.ctx.atom > 0:
        return _linear_tail(inp)
    if inp.ctx.f_opt is None:
        said = notices.Warning(
            "paper-tail-without-minimum",
            "f* is unknown: the paper's lower tail exp(t - y_1)/(N+1) is used",
            field="tail",
        )
        return replace(_paper_tail(inp), warnings=(said,))
    table = inp.table
    k_cap = min(table.low_values.size, table.k_exact, table.n)
    if k_cap < min(MIN_ANCHOR, inp.k_anchor):  # the table, not the request, caps the anchor
        said = notices.Warning(
            "power-tail-not-tried",
            f"power tail not tried: the table keeps only {k_cap} lowest samples "
            f"(N = {table.n}), fewer than the {MIN_ANCHOR} an anchor needs to check clipping "
            "and the power law "
            "(the tail would replace Eq. 28 over most of the samples); linear tail used instead",
            {"kept": k_cap, "n": table.n, "min_anchor": MIN_ANCHOR},
            field="tail",
        )
        return replace(_linear_tail(inp), warnings=(said,))
    try:
        return _power_tail(inp)
    except NotApplicable as exc:
        if exc.field != "tail":
            raise
        said = notices.Warning(
            "power-tail-refused",
            f"power tail refused ({exc}); linear tail used instead",
            {"reason": str(exc)},
            field="tail",
        )
        return replace(_linear_tail(inp), warnings=(said,))


LOWER_TAILS: dict[str, Callable[[TailInputs], TailChoice]] = {
    "auto": _auto_tail,
    "paper": _paper_tail,
    "linear": _linear_tail,
    "power": _power_tail,
}
