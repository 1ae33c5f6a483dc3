"""Curves ``v1(t)`` of one run: the common input of ranks and their aggregates over runs.

A table with its tail model (:func:`app.domain.absrank.table_curve`), an exact form
(:func:`app.domain.absrank.analytic_curve`) or a ladder of nested regions
(:mod:`app.domain.nested`) each reduce to a :class:`V1Curve`; best-of-``c``, order statistics,
means and medians over ``r`` runs (:mod:`app.domain.aggregates`) only ever see the curve.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from app.domain import notices
from app.domain.errors import NotApplicable

__all__ = [
    "AnalyticInfo",
    "CurveDescription",
    "CurveInfo",
    "Evaluation",
    "JSONObject",
    "LowerTail",
    "NestedPiece",
    "PowerInfo",
    "PowerLaw",
    "TableCurve",
    "UpperTail",
    "V1Curve",
    "info_json",
]

FloatArray = npt.NDArray[np.float64]
Evaluation = tuple[FloatArray, FloatArray, FloatArray, npt.NDArray[np.object_]]
"""``(ln_v, ln_lo, ln_hi, method)`` of a curve at ``n`` points, each of shape ``(n,)``."""
JSONObject = Mapping[str, object]
"""A JSON object as the answer carries it (nested blocks whose shape the schema leaves open)."""


@dataclass(frozen=True)
class PowerInfo:
    """How a table curve's power tail was obtained (the power keys of ``RankResult.tail``).

    Attributes
    ----------
    beta : float
        The exponent ``β`` used.
    beta_source : {"registered", "hill"}
        Registered with the function, or the Hill estimate on the lowest samples.
    beta_se : float
        Its standard error (0 when registered).
    beta_interval : tuple of float
        ``(lo, hi)`` of ``β`` at the Bonferroni-split level (``(β, β)`` when registered).
    beta_derivation : str
        Why ``β`` has its value.
    k : int
        The anchor order statistic used.
    requested_k : int
        The anchor asked for, capped by ``k_exact`` and the stored lowest samples.
    anchor_value : float
        ``y_k`` (units of ``f``).
    anchor_count : int
        ``c_k = #{y_i <= y_k}``.
    validity : JSONObject
        The clipping check (``ok``, ``threshold``, ``max_share``, ...; or ``checked: false``),
        the power-law fit (``fit``) and the refused larger anchors (``rejected_anchors``).
    """

    beta: float
    beta_source: str
    beta_se: float
    beta_interval: tuple[float, float]
    beta_derivation: str
    k: int
    requested_k: int
    anchor_value: float
    anchor_count: int
    validity: JSONObject


@dataclass(frozen=True)
class CurveInfo:
    """Description of a table curve's models: ``RankResult.tail`` without the transform.

    Attributes
    ----------
    mode : {"auto", "paper", "linear", "power"}
        The tail mode asked for.
    lower : {"paper", "linear", "power"}
        The lower tail used.
    upper : {"paper", "linear-to-f_max", "flat"}
        The upper tail used.
    atom : float
        The registered plateau mass at ``f*`` (0 if none).
    n : int
        ``N``, samples of the table.
    max_interp_error : float
        The table's bound on ``|v_stored − v_eq28|``.
    confidence : float
        Level of the intervals.
    region_volume_fraction : float
        ``Leb(region ∩ Ω)/Leb(Ω)`` (ranks are relative to the region).
    power : PowerInfo or None
        The power tail's record (``lower == "power"`` only).
    """

    mode: str
    lower: str
    upper: str
    atom: float
    n: int
    max_interp_error: float
    confidence: float
    region_volume_fraction: float
    power: PowerInfo | None = None

    def as_json(self) -> dict[str, object]:
        """The JSON block, keys in the order the answer has always had."""
        p = self.power
        out: dict[str, object] = {
            "mode": self.mode,
            "lower": self.lower,
            "upper": self.upper,
            "beta": None if p is None else p.beta,
            "beta_source": None if p is None else p.beta_source,
            "beta_se": None if p is None else p.beta_se,
            "k": None if p is None else p.k,
            "anchor_value": None if p is None else p.anchor_value,
            "validity": None if p is None else p.validity,
            "atom": self.atom,
            "n": self.n,
            "max_interp_error": self.max_interp_error,
            "confidence": self.confidence,
            "region_volume_fraction": self.region_volume_fraction,
        }
        if p is not None:
            out |= {
                "beta_interval": list(p.beta_interval),
                "beta_derivation": p.beta_derivation,
                "requested_k": p.requested_k,
                "anchor_count": p.anchor_count,
            }
        return out


@dataclass(frozen=True)
class AnalyticInfo:
    """Description of an exact ``v1`` (:func:`app.domain.absrank.analytic_curve`).

    Attributes
    ----------
    kind : {"sphere", "cone"}
        The exact form.
    rel_error : float
        Relative numerical error bound of ``v1`` (the interval's half-width, relative).
    region_volume_fraction : float
        ``Leb(region ∩ Ω)/Leb(Ω)``.
    """

    kind: str
    rel_error: float
    region_volume_fraction: float

    def as_json(self) -> dict[str, object]:
        """The JSON block (``mode: "analytic"`` first)."""
        return {
            "mode": "analytic",
            "kind": self.kind,
            "rel_error": self.rel_error,
            "region_volume_fraction": self.region_volume_fraction,
        }


class Described(Protocol):
    """A typed description of a curve built elsewhere (e.g. a nested ladder's record)."""

    def as_json(self) -> dict[str, object]:
        """Its JSON block, keys in the answer's order."""
        ...


CurveDescription = CurveInfo | AnalyticInfo | Described | JSONObject
"""What ``V1Curve.info`` holds: a table's or an exact form's typed record, another typed record
with ``as_json`` (a nested ladder's), or a plain JSON block."""


def info_json(info: CurveDescription) -> dict[str, object]:
    """The JSON block of a curve's description (a new dict)."""
    if isinstance(info, Mapping):
        return dict(info)
    return info.as_json()


@dataclass(frozen=True)
class PowerLaw:
    """A lower tail ``v1(t) = exp(ln_c)·(t − f*)^β`` for ``f* < t < limit`` (point estimate).

    Attributes
    ----------
    f_opt : float
        ``f*`` (units of ``f``).
    ln_c : float
        ``ln C`` (``C`` in units of ``f^−β``).
    beta : float
        The exponent ``β > 0``.
    limit : float
        The law is used for ``t < limit`` (the anchor ``y_k``, or where an analytic form stops
        being a pure power).
    """

    f_opt: float
    ln_c: float
    beta: float
    limit: float


@dataclass(frozen=True, eq=False)
class V1Curve:
    """``v1(t)`` of one run as a function of ``t``: the input of every aggregate.

    A table with its tail model (:func:`table_curve`), an exact form (:func:`analytic_curve`) or a
    ladder of nested regions (:mod:`app.domain.nested`) all reduce to this.

    Attributes
    ----------
    evaluate : callable
        ``t (n,) -> (ln_v, ln_lo, ln_hi, method)``: natural logs of ``v1`` and of its interval
        ends (``-inf`` where 0), and the method per value (one of :data:`METHODS`).
    info : CurveDescription
        Description of the models used (:class:`CurveInfo` for a table, :class:`AnalyticInfo`
        for an exact form, a JSON block for a nested ladder; :func:`info_json` renders it).
    warnings : sequence of notices.Warning or str
        Fallbacks taken while building the curve (plain text from curves built outside the
        numerical core's typed code, e.g. a nested ladder's).
    f_opt : float or None
        Lower end of the support of ``f(U)`` when known (``v1 = 0`` below it).
    power : PowerLaw or None
        The lower tail as a pure power law, where one is used (exact aggregates of the mean
        rely on it, SPEC §3.1).
    atom : float
        ``v1(f*)`` (plateau mass), 0.0 if none.
    table : TableCurve or None
        The published model of a table's curve (:func:`app.domain.absrank.table_curve`).
    pieces : tuple of NestedPiece
        A nested curve's serving levels, deepest last (:func:`app.domain.nested.nested_curve`).
    evaluate_gap : callable or None
        ``gap (n,) -> (ln_v, ln_lo, ln_hi, method)``: the same curve at ``t = f* + gap``, from
        the exact gap ``t − f*`` (errors sent as errors). Tails and exact forms use the gap
        itself, and comparisons with the stored samples use ``y_i − f*`` where that difference
        is exact, so an error far below the float64 resolution of ``f*`` keeps its digits
        (``f* + gap`` would round them away). ``None``: :meth:`evaluate_errors` falls back to
        ``evaluate(f_opt + gap)``.
    """

    evaluate: Callable[[FloatArray], Evaluation]
    info: CurveDescription
    warnings: Sequence[notices.Warning | str]
    f_opt: float | None
    power: PowerLaw | None = None
    atom: float = 0.0
    table: TableCurve | None = None
    pieces: tuple[NestedPiece, ...] = ()
    evaluate_gap: Callable[[FloatArray], Evaluation] | None = None

    def evaluate_errors(self, gap: npt.ArrayLike) -> Evaluation:
        """``v1`` at ``f* + gap`` from the exact gaps (see ``evaluate_gap``).

        Raises
        ------
        NotApplicable
            The curve has neither ``evaluate_gap`` nor a known ``f_opt`` (``field="values_are"``).
        """
        x = np.asarray(gap, dtype=np.float64)
        if self.evaluate_gap is not None:
            return self.evaluate_gap(x)
        if self.f_opt is None:
            raise NotApplicable("errors need a curve with a known f*", field="values_are")
        return self.evaluate(self.f_opt + x)


@dataclass(frozen=True)
class LowerTail:
    """The lower tail of a table curve: ``v1(t)`` for ``t < limit`` (point estimate).

    Attributes
    ----------
    kind : {"power", "linear", "paper"}
        ``power``: ``v1(t) = (c_k/(N+1))·((t − f*)/(y_k − f*))^β`` for ``t > f*``, 0 at and below
        ``f*``. ``linear``: ``v1(t) = atom + (v_top − atom)·(t − f*)/(y_1 − f*)`` for
        ``f* < t < y_1``, ``atom`` at ``f*``, 0 below, with ``v_top = max(atom, c_1/(N+1))``.
        ``paper``: ``v1(t) = exp(t − y_1)/(N+1)`` (Eq. 28 as published; ``f*`` unknown).
    limit : float
        The tail serves ``t < limit``: ``y_k`` (power) or ``y_1``.
    f_opt : float or None
        ``f*`` (``None`` for the paper's tail).
    v_top : float
        ``v1`` just below ``limit`` (``c_k/(N+1)``, ``v_top`` of the linear tail, or
        ``1/(N+1)``).
    beta, beta_se : float or None
        Power tail: the exponent and its standard error (0 when registered).
    beta_interval : tuple of float or None
        Power tail: the interval of ``β`` at the curve's confidence (Bonferroni-split).
    beta_source : {"registered", "hill"} or None
    beta_derivation : str or None
        Why ``β`` has its value.
    k, requested_k : int or None
        Power tail: the anchor order statistic used, and the one asked for (capped by
        ``k_exact`` and the stored lowest samples).
    anchor_count : int or None
        Power tail: ``c_k = #{y_i <= y_k}`` (exact: the anchor is a knot).
    atom : float
        Linear tail: the registered mass at ``f*`` (0 if none).
    """

    kind: str
    limit: float
    f_opt: float | None
    v_top: float
    beta: float | None = None
    beta_se: float | None = None
    beta_interval: tuple[float, float] | None = None
    beta_source: str | None = None
    beta_derivation: str | None = None
    k: int | None = None
    requested_k: int | None = None
    anchor_count: int | None = None
    atom: float = 0.0


@dataclass(frozen=True)
class UpperTail:
    """The upper tail of a table curve: ``v1(t)`` for ``t > y_N``.

    Attributes
    ----------
    kind : {"flat", "linear-to-f_max", "paper"}
        ``flat``: ``N/(N+1)``. ``linear-to-f_max``: ``(N + min((t − y_N)/(f_max − y_N), 1))/(N+1)``
        (1 beyond ``f_max``; 1 at once when ``f_max = y_N``). ``paper``:
        ``1 − exp(−ln(N+1)·t/y_N)`` (only with ``tail="paper"``).
    y_n : float
        ``y_N``, the largest sample.
    f_max : float or None
        The registered maximum of ``f`` over the region (``linear-to-f_max`` only).
    """

    kind: str
    y_n: float
    f_max: float | None = None


@dataclass(frozen=True, eq=False)
class TableCurve:
    """The complete point-estimate model of ``v1`` on one table (what is published).

    ``v1(t) = interp(t, values, counts)/(N+1)`` for ``lower.limit <= t <= y_N`` (paper Eq. 28 on
    the stored knots: exact at every knot, linear between), ``lower`` below, ``upper`` above,
    then ``max(v1, atom)`` for ``t > f*`` and ``atom`` at ``f*`` when ``atom > 0``.

    Attributes
    ----------
    n : int
        ``N``.
    values : ndarray, shape (m,)
        Knots (sorted, distinct).
    counts : ndarray, shape (m,)
        Exact ``#{y_i <= values[j]}``.
    lower : LowerTail
    upper : UpperTail
    atom : float
        Mass lifted at ``f*`` (0 unless the linear tail of a function with a plateau).
    """

    n: int
    values: FloatArray
    counts: npt.NDArray[np.int64]
    lower: LowerTail
    upper: UpperTail
    atom: float = 0.0


@dataclass(frozen=True, eq=False)
class NestedPiece:
    """One serving level of a nested curve: ``v1(t) = exp(ln_volume_fraction)·v1_level(t)``.

    Attributes
    ----------
    level : int
        The ladder level ``j``.
    t_from, t_below : float
        It serves ``t_from <= t < t_below`` (``-inf`` for the deepest, ``+inf`` for level 0).
    ln_volume_fraction : float
        ``ln(Leb(R_j)/Leb(Ω))``.
    curve : TableCurve
        The level's own curve on ``R_j``.
    """

    level: int
    t_from: float
    t_below: float
    ln_volume_fraction: float
    curve: TableCurve
