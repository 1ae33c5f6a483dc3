"""A table's curve ``v1`` and the ranks of values on any curve (best of ``c``, order statistics)."""

from __future__ import annotations

import math

import numpy as np

from app.domain import notices
from app.domain.absrank._context import (
    NOT_AN_ORDER_STATISTIC,
    TAIL_MODES,
    RankContext,
    RankResult,
    RankTail,
    Transform,
    check_context,
    check_transform,
)
from app.domain.absrank._eq28 import (
    Eq28,
    LinearTail,
    LowerTailModel,
    PaperTail,
    Piece,
    PowerTail,
    upper_kind,
    upper_piece,
)
from app.domain.absrank._logspace import LN10, ln_best_of_c, ln_binom_sf
from app.domain.absrank._table import TableData
from app.domain.absrank._tails import LOWER_TAILS, TailInputs
from app.domain.cost import NO_CONTROL, WorkControl
from app.domain.curves import (
    CurveInfo,
    LowerTail,
    PowerInfo,
    PowerLaw,
    TableCurve,
    UpperTail,
    V1Curve,
)
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.validation import check_confidence as _check_confidence
from app.domain.validation import check_values_are as _check_values_are
from app.domain.validation import finite_1d as _finite_1d
from app.domain.validation import positive_int as _positive_int


def _check_table_options(table: TableData, ctx: RankContext, tail: str, k_anchor: int) -> None:
    if not isinstance(table, TableData):
        raise InvalidInput("table must be a TableData", field="table")
    if tail not in LOWER_TAILS:
        raise InvalidInput(f"tail must be one of {list(TAIL_MODES)}, got {tail!r}", field="tail")
    _positive_int(k_anchor, "k_anchor")
    check_context(ctx)
    if ctx.f_max is not None and ctx.f_max < table.values[-1]:
        raise NotApplicable(
            f"the table's largest value {float(table.values[-1])!r} exceeds the registered f_max "
            f"{ctx.f_max!r}",
            field="f_max",
        )


def _apply_atom(
    t: np.ndarray, est: Piece, method: np.ndarray, ctx: RankContext, gap: np.ndarray | None
) -> Piece:
    """Registered plateau mass: ``v1(f*) = atom`` and ``v1(t) >= atom`` above ``f*``."""
    if ctx.f_opt is None or ctx.atom <= 0:
        return est
    ln_atom = math.log(ctx.atom)
    above, at = (t > ctx.f_opt, t == ctx.f_opt) if gap is None else (gap > 0, gap == 0)
    method[at] = "atom"

    def lift(x: np.ndarray) -> np.ndarray:
        return np.where(at, ln_atom, np.where(above, np.maximum(x, ln_atom), x))

    return Piece(lift(est.ln_v), lift(est.ln_lo), lift(est.ln_hi), "")


def _selection(mask: np.ndarray) -> slice | np.ndarray | None:
    """The entries of ``mask`` as a slice where they are contiguous (always for sorted values:
    each piece of ``v1`` is a range of ``t``; a slice is a view, and reads and writes no
    index), else the mask itself; ``None`` where none is set (counts, not index arrays: a
    few passes over bytes)."""
    count = np.count_nonzero(mask)
    if count == 0:
        return None
    if count == mask.size:
        return slice(None)
    first = int(mask.argmax())
    end = first + count
    if np.count_nonzero(mask[first:end]) == count:
        return slice(first, end)
    return mask


def _assemble(
    t: np.ndarray,
    eq: Eq28,
    lower: LowerTailModel,
    upper: str,
    ctx: RankContext,
    gap: np.ndarray | None = None,
) -> tuple[Piece, np.ndarray]:
    """The pieces of ``v1`` at ``t``; with ``gap`` (exact ``t − f*``, ``t = f* + gap`` rounded)
    the lower tail, the atom and the knots near ``f*`` see the gap."""
    if gap is None:
        low = t < lower.limit
    else:
        assert eq.f_opt is not None
        low = gap < lower.limit - eq.f_opt  # exact where y_k − f* is (Sterbenz)
    up = t > eq.y_max
    if upper == "linear-to-f_max" and ctx.f_max is not None:
        up |= t >= float(ctx.f_max)  # v(f_max) = 1 even when y_N = f_max (not N/(N+1))
    above: np.ndarray | None = None  # most requests: nothing above the samples
    if np.count_nonzero(up):
        above = up & ~low
        mid = ~(low | above)
    else:
        mid = ~low
    ln_v, lo, hi = np.empty(t.shape), np.empty(t.shape), np.empty(t.shape)
    method = np.empty(t.shape, dtype=object)
    for mask, make in (
        (low, lower.piece),
        (mid, eq.piece),
        (above, lambda x, _: upper_piece(x, eq, ctx, upper)),
    ):
        where = None if mask is None else _selection(mask)
        if where is not None:
            part = make(t[where], None if gap is None else gap[where])
            ln_v[where], lo[where], hi[where], method[where] = (
                part.ln_v,
                part.ln_lo,
                part.ln_hi,
                part.method,
            )
    est = Piece(ln_v, lo, hi, "")
    if lower.uses_atom:  # the f*-aware tails (the paper's exp tail is kept as published)
        est = _apply_atom(t, est, method, ctx, gap)
        if ctx.f_opt is not None:
            est = _zero_at_minimum(t, est, ctx, gap)
    return est, method


def _zero_at_minimum(t: np.ndarray, est: Piece, ctx: RankContext, gap: np.ndarray | None) -> Piece:
    """``v1 = 0`` below ``f*``, and at ``f*`` without an atom, whatever the samples say: a
    sample that rounds to ``f*`` (a deep ladder level, ``f = g + f*`` in float64) must not
    give ``f*`` itself a positive rank."""
    assert ctx.f_opt is not None
    f_opt = float(ctx.f_opt)
    at_zero = ctx.no_plateau and ctx.atom == 0  # v1(f*) = 0 too
    if gap is None:
        zero = t <= f_opt if at_zero else t < f_opt
    else:
        zero = gap <= 0 if at_zero else gap < 0
    if not np.count_nonzero(zero):
        return est
    out = [np.where(zero, -np.inf, x) for x in (est.ln_v, est.ln_lo, est.ln_hi)]
    return Piece(out[0], out[1], out[2], "")


def _transform(
    ln: np.ndarray,
    budget: int,
    runs: int,
    k: int,
    control: WorkControl = NO_CONTROL,
    part: int = 0,
) -> np.ndarray:
    """Best of ``budget``, then the ``k``-th of ``runs``; ``part`` (0, 1, 2: the value, the
    interval's ends) places the order statistic's progress in the request's three passes."""
    out = ln_best_of_c(ln, budget)
    if runs == 1:
        return out
    return ln_binom_sf(out, runs, k, control=control, progress=(part * ln.size, 3.0 * ln.size))


def _result(
    est: Piece,
    method: np.ndarray,
    budget: int,
    runs: int,
    k: int,
    tail: RankTail,
    warnings: list[notices.Warning],
    control: WorkControl = NO_CONTROL,
) -> RankResult:
    if budget == 1 and runs == 1:  # v = v1: the logs as they are (read, never written)
        ln_v, lo, hi = est.ln_v, est.ln_lo, est.ln_hi
    else:
        ln_v, lo, hi = (
            _transform(x, budget, runs, k, control, part)
            for part, x in enumerate((est.ln_v, est.ln_lo, est.ln_hi))
        )
    with np.errstate(under="ignore"):
        v = np.exp(ln_v)
    # v is exactly 0 (t below f*, or at f* without an atom): say so instead of naming a tail
    # (a new object array either way: the caller's is not changed)
    zero = ln_v == -np.inf
    method = np.array(method, dtype=object)
    if np.count_nonzero(zero):
        method[zero] = "at-or-below-minimum"
    return RankResult(
        log10_v=ln_v / LN10,
        v=v,
        method=method,
        log10_lo=np.minimum(lo, ln_v) / LN10,
        log10_hi=np.maximum(hi, ln_v) / LN10,
        tail=tail,
        warnings=warnings,
    )


def table_curve(
    table: TableData,
    ctx: RankContext,
    *,
    tail: str = "auto",
    k_anchor: int = 100,
    confidence: float = 0.95,
) -> V1Curve:
    """``v1(t)`` on a table's region: Eq. 28 inside the samples, a tail model outside.

    Parameters
    ----------
    table, ctx, tail, k_anchor, confidence
        As in :func:`absolute_ranks`.

    Returns
    -------
    V1Curve
        ``power`` is set when the lower tail is the power law; ``f_opt`` is ``None`` for the
        paper's tail (positive below any ``f*``).

    Raises
    ------
    InvalidInput, NotApplicable
        As in :func:`absolute_ranks`.
    """
    _check_table_options(table, ctx, tail, k_anchor)
    confidence = _check_confidence(confidence)
    eq = Eq28(table, 1.0 - confidence, None if ctx.f_opt is None else float(ctx.f_opt))
    choice = LOWER_TAILS[tail](TailInputs(table, ctx, eq, int(k_anchor), float(confidence)))
    lower = choice.tail
    upper = upper_kind(tail, ctx)
    tail_info = CurveInfo(
        mode=tail,
        lower=choice.lower,
        upper=upper,
        atom=ctx.atom,
        n=table.n,
        max_interp_error=table.max_interp_error,
        confidence=float(confidence),
        region_volume_fraction=ctx.domain_volume_fraction,
        power=choice.power,
    )
    power = None
    if isinstance(lower, PowerTail):
        ln_c = lower.ln_anchor - lower.beta * math.log(lower.limit - lower.f_opt)
        power = PowerLaw(lower.f_opt, ln_c, lower.beta, lower.limit)

    def evaluate(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        est, method = _assemble(np.asarray(t, dtype=np.float64), eq, lower, upper, ctx)
        return est.ln_v, est.ln_lo, est.ln_hi, method

    def evaluate_gap(gap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        assert eq.f_opt is not None
        g = np.asarray(gap, dtype=np.float64)
        est, method = _assemble(eq.f_opt + g, eq, lower, upper, ctx, g)
        return est.ln_v, est.ln_lo, est.ln_hi, method

    atom = ctx.atom if lower.uses_atom else 0.0
    model = TableCurve(
        n=table.n,
        values=table.values,
        counts=table.counts,
        lower=_lower_model(lower, choice.power, eq),
        upper=UpperTail(upper, eq.y_max, None if ctx.f_max is None else float(ctx.f_max)),
        atom=atom,
    )
    return V1Curve(
        evaluate=evaluate,
        info=tail_info,
        warnings=list(choice.warnings),
        f_opt=None if isinstance(lower, PaperTail) else ctx.f_opt,
        power=power,
        atom=atom,
        table=model,
        evaluate_gap=None if eq.f_opt is None else evaluate_gap,
    )


def _lower_model(lower: LowerTailModel, power: PowerInfo | None, eq: Eq28) -> LowerTail:
    """The published form of a lower tail (point estimate; see :class:`LowerTail`)."""
    if isinstance(lower, PowerTail):
        assert power is not None
        lo, hi = power.beta_interval
        return LowerTail(
            kind="power",
            limit=lower.limit,
            f_opt=lower.f_opt,
            v_top=math.exp(lower.ln_anchor),
            beta=lower.beta,
            beta_se=float(power.beta_se),
            beta_interval=(float(lo), float(hi)),
            beta_source=power.beta_source,
            beta_derivation=power.beta_derivation,
            k=int(power.k),
            requested_k=int(power.requested_k),
            anchor_count=int(power.anchor_count),
        )
    if isinstance(lower, LinearTail):
        return LowerTail("linear", lower.limit, lower.f_opt, lower.v_top, atom=lower.atom)
    return LowerTail("paper", lower.limit, None, 1.0 / (eq.n + 1.0))


def ranks_from_curve(
    t: np.ndarray,
    curve: V1Curve,
    *,
    budget: int = 1,
    runs: int = 1,
    aggregate: str = "best",
    order: int | None = None,
    values_are: str = "f",
    control: WorkControl = NO_CONTROL,
) -> RankResult:
    """Absolute ranks of metric values from a curve ``v1``.

    Parameters
    ----------
    t : array_like, shape (n,)
        Metric values (units of ``f``), finite: one aggregate value per entry; with
        ``values_are="error"`` the errors ``t − f*`` themselves.
    curve : V1Curve
        ``v1`` of one evaluation.
    budget, runs, aggregate, order
        As in :func:`absolute_ranks`.
    values_are : {"f", "error"}, optional
        ``"error"``: ``t`` holds exact gaps to the curve's ``f*``, ranked as gaps
        (:meth:`V1Curve.evaluate_errors`): an error far below the float64 resolution of ``f*``
        keeps its digits, where ``f* + e`` would round them away.
    control : WorkControl, optional
        Passed to :func:`app.domain.aggregates.aggregate_ranks` (checked between its steps),
        and checked between the blocks of an order statistic's sums (:func:`ln_binom_sf`).

    Returns
    -------
    RankResult
        ``tail`` is the curve's description plus the ``transform``.

    Raises
    ------
    InvalidInput
        Non-finite ``t`` or invalid options.
    NotApplicable
        An aggregate the curve cannot support (see :mod:`app.domain.aggregates`); errors on a
        curve without ``f*``.
    """
    values = _finite_1d(t, "values")
    k = check_transform(budget, runs, aggregate, order)
    gaps = _check_values_are(values_are)
    if k == NOT_AN_ORDER_STATISTIC:
        from app.domain.aggregates import aggregate_ranks  # imports this module

        return aggregate_ranks(
            values,
            curve,
            budget=budget,
            runs=runs,
            aggregate=aggregate,
            values_are=values_are,
            control=control,
        )
    ln_v, lo, hi, method = curve.evaluate_errors(values) if gaps else curve.evaluate(values)
    info = RankTail(curve.info, Transform(int(budget), int(runs), aggregate, k))
    est = Piece(ln_v, lo, hi, "")
    return _result(est, method, int(budget), int(runs), k, info, curve_warnings(curve), control)


def curve_warnings(curve: V1Curve) -> list[notices.Warning]:
    """The curve's warnings as :class:`notices.Warning` (text from untyped curves gets the
    code ``"curve"``)."""
    return [
        w if isinstance(w, notices.Warning) else notices.Warning("curve", w) for w in curve.warnings
    ]


def absolute_ranks(
    t: np.ndarray,
    table: TableData,
    ctx: RankContext,
    *,
    tail: str = "auto",
    budget: int = 1,
    runs: int = 1,
    aggregate: str = "best",
    order: int | None = None,
    k_anchor: int = 100,
    confidence: float = 0.95,
) -> RankResult:
    r"""Absolute ranks of metric values from a sampled table (Jing & Liu Eq. 28, Eq. 19).

    Parameters
    ----------
    t : array_like, shape (n,)
        Metric values (best ``f`` found per run, units of ``f``); must be finite.
    table : TableData
        The sampled table of the function on ``ctx``'s region.
    ctx : RankContext
        Known ``f*``, ``f_max``, atom, ``β``, ``x*`` and the table's region.
    tail : {"auto", "paper", "linear", "power"}, optional
        Lower-tail model below the sample range: ``"paper"`` Eq. 28's own tails
        (``exp(t − y_1)/(N+1)`` below, ``1 − exp(−ln(N+1)·t/y_N)`` above); ``"linear"`` (needs
        ``f*``) linear from the atom at ``f*`` to ``(y_1, v1(y_1))``; ``"power"`` (needs ``f*``,
        no atom, an unclipped set at ``y_k``) ``v1(y_k)·((t − f*)/(y_k − f*))^β``; ``"auto"``
        linear with an atom, else power where valid, else linear, paper when ``f*`` is unknown
        (docs/METHODS.md, "v1 and its tails").
    budget : int, optional
        Evaluations per run ``c``: ``v_c = 1 − (1 − v1)^c`` (Eq. 19).
    runs : int, optional
        Number of runs ``r``.
    aggregate : {"best", "worst", "median", "lower-median", "order", "mean"}, optional
        How ``r > 1`` runs are summarised: order statistic ``k`` = 1, ``r``, ``(r+1)/2`` (odd
        ``r``; ``lower-median``: ``ceil(r/2)``) or ``order``, with ``P(Z_(k) <= t) = P(Bin(r,
        v_c) >= k)``; the mean of ``r`` runs and the median of an even ``r`` (mean of the two
        middle order statistics) by :func:`app.domain.aggregates.aggregate_ranks`.
    order : int, optional
        ``k`` for ``aggregate="order"``.
    k_anchor : int, optional
        Anchor rank of the power tail; capped at the stored low samples and ``k_exact``.
    confidence : float, optional
        Level of the intervals.

    Returns
    -------
    RankResult

    Raises
    ------
    InvalidInput
        Non-finite ``t`` (``field="values"``), invalid options (``field`` names the option).
    NotApplicable
        ``tail="power"`` refused (no ``f*``, an atom, unknown ``x*``, clipped sublevel set — the
        message gives the coordinate and numbers; ``field="tail"``), ``tail="linear"`` without
        ``f*``, paper upper tail with ``y_N <= 0``, the table contradicts ``f*``/``f_max``; an
        aggregate that needs what the curve lacks (see :mod:`app.domain.aggregates`).

    Notes
    -----
    Intervals at ``confidence``: Clopper–Pearson on the count inside ``[y_1, y_N]`` (widened
    where knots skip samples), the anchor's count and the Hill ``β``'s χ² interval at
    ``1 − α/2`` each for the power tail, ``max(v, 1 − (α/2)^{1/N})`` as the upper end of the
    linear and paper tails; each end goes through the same monotone transform as ``v``
    (docs/METHODS.md, "Intervals (at `confidence`, default 0.95)").

    Examples
    --------
    >>> import numpy as np
    >>> from app.domain.absrank import build_table_data
    >>> table = build_table_data(np.array([1.0, 3.0, 4.0, 6.0]), np.zeros((0, 1)))
    >>> ctx = RankContext(None, None, 0.0, None, "", None, np.zeros(1), np.ones(1))
    >>> res = absolute_ranks(np.array([3.0, 3.5]), table, ctx, tail="paper")
    >>> np.round(res.v, 12).tolist()
    [0.4, 0.5]
    """
    values = _finite_1d(t, "values")
    _check_table_options(table, ctx, tail, k_anchor)
    check_transform(budget, runs, aggregate, order)
    curve = table_curve(table, ctx, tail=tail, k_anchor=k_anchor, confidence=confidence)
    return ranks_from_curve(
        values, curve, budget=budget, runs=runs, aggregate=aggregate, order=order
    )
