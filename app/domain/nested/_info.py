"""What a nested curve says about each level: typed records behind ``info["levels"]``.

:func:`app.domain.nested.nested_curve` describes every level of its ladder by a
:class:`LevelInfo`; its ``as_json()`` is the block the answers carry (``tail.levels[j]``), keys
in the order they have always had.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.domain import notices
from app.domain.nested._levels import ThresholdSource

#: How an oriented level's region is read (the ``coordinates`` of its region block).
ORIENTED_COORDINATES = (
    "z = Q^T (x - x*), |z_k| <= h_k (axes = columns of Q); lower/upper "
    "is the bounding box; containment and clipping checks use z"
)
#: How an intersected level's kept share enters its intervals (the ``method`` of ``kept``).
KEPT_METHOD = (
    "R_j = B ∩ Ω: the oriented box B sampled by scrambled Sobol, f "
    "evaluated only at the n_kept points inside Ω; Leb(B ∩ Ω)/Leb(B) = n_kept/n_box "
    "with its Clopper-Pearson interval at 1 - alpha/2, the level's own curve at "
    "1 - alpha/2 (Bonferroni: both hold with probability >= 1 - alpha); intervals "
    "served from the level are [share_lower·lo, share_upper·hi]; only faces of B "
    "inside Ω (and the faces of Ω) count in the containment and clipping checks"
)


@dataclass(frozen=True)
class KeptInfo:
    """The measured kept share of an intersected level ``R_j = B ∩ Ω`` (``region.kept``).

    Attributes
    ----------
    n_box, n_kept : int
        Sobol points drawn in ``B``, and those inside ``Ω``.
    share : float
        ``φ̂ = n_kept/n_box``.
    share_lower, share_upper : float
        Its Clopper–Pearson interval at ``confidence``.
    confidence : float
        ``1 − α/2`` (Bonferroni with the level's own curve).
    faces_inside_domain : int
        Faces of ``B`` that ``Ω`` reaches beyond (the ones the checks look at).
    """

    n_box: int
    n_kept: int
    share: float
    share_lower: float
    share_upper: float
    confidence: float
    faces_inside_domain: int

    def as_json(self) -> dict[str, object]:
        """The JSON block (with the fixed ``method`` statement last)."""
        return {
            "n_box": self.n_box,
            "n_kept": self.n_kept,
            "share": self.share,
            "share_lower": self.share_lower,
            "share_upper": self.share_upper,
            "confidence": self.confidence,
            "faces_inside_domain": self.faces_inside_domain,
            "method": KEPT_METHOD,
        }


@dataclass(frozen=True)
class RegionInfo:
    """The region ``R_j`` of a level (its ``region`` block).

    Attributes
    ----------
    lower, upper : list of float
        ``R_j``'s axis-aligned box (for an oriented level, its bounding box).
    axes : list of list of float or None
        ``Q`` (rows of the matrix; columns are the axes) of an oriented box, else ``None``.
    half_widths : list of float or None
        ``h`` along the axes of an oriented box, else ``None``.
    kept : KeptInfo or None
        For an intersected level ``B ∩ Ω``.
    """

    lower: list[float]
    upper: list[float]
    axes: list[list[float]] | None = None
    half_widths: list[float] | None = None
    kept: KeptInfo | None = None

    def as_json(self) -> dict[str, object]:
        """``lower``/``upper``; ``kind: "oriented"`` with axes; ``intersect: "domain"``."""
        out: dict[str, object] = {"lower": self.lower, "upper": self.upper}
        if self.axes is not None and self.half_widths is not None:
            out |= {
                "kind": "oriented",
                "axes": self.axes,
                "half_widths": self.half_widths,
                "coordinates": ORIENTED_COORDINATES,
            }
        if self.kept is not None:
            out |= {"intersect": "domain", "kept": self.kept.as_json()}
        return out


@dataclass(frozen=True)
class ServedRange:
    """The values ``t_from <= t < t_below`` a level serves (``serves``; ``None`` = unbounded).

    Attributes
    ----------
    t_from : float or None
        The next deeper serving level's threshold (``None``: the deepest level, down to ``f*``).
    t_below : float or None
        The level's own threshold ``τ*_j`` (``None`` for level 0).
    """

    t_from: float | None
    t_below: float | None

    def as_json(self) -> dict[str, object]:
        """The JSON block."""
        return {"t_from": self.t_from, "t_below": self.t_below}


@dataclass(frozen=True)
class LevelInfo:
    """One level of a nested curve, as the curve's ``info["levels"][j]`` describes it.

    Attributes
    ----------
    level : int
        ``j``.
    delta : float, list of float, or None
        The level's ``δ_j`` (a cube's half-width, a shaped box's per-coordinate half-widths).
    region : RegionInfo
        ``R_j``.
    volume_fraction, log10_volume_fraction : float
        ``Leb(R_j)/Leb(Ω)`` and its ``log10`` (``ln`` fraction / ``ln 10``).
    n : int
        Samples of the level's table.
    tau, tau_cumulative : float or None
        ``τ_j`` and the running minimum ``τ*_j`` (``None`` for level 0 or where infinite).
    tau_source : ThresholdSource or None
        Where ``τ_j`` comes from (``None`` for level 0).
    samples_below_tau : int or None
        The level's samples below ``τ*_j``.
    undetectable_share : float or None
        Share of ``Ω`` a part of ``{f <= t}`` outside ``R_j`` may hide in unseen.
    used : bool
        Whether the level serves some ``t``.
    skipped : str or None
        Why it does not.
    serves : ServedRange or None
        The ``t`` it serves (used levels).
    label : mapping
        The level's JSON-ready extras (table id, location, ...), after ``serves``.
    curve : mapping or None
        The level's own curve's info (used levels), last.
    """

    level: int
    delta: float | list[float] | None
    region: RegionInfo
    volume_fraction: float
    log10_volume_fraction: float
    n: int
    tau: float | None = None
    tau_cumulative: float | None = None
    tau_source: ThresholdSource | None = None
    samples_below_tau: int | None = None
    undetectable_share: float | None = None
    used: bool = False
    skipped: str | None = None
    serves: ServedRange | None = None
    label: Mapping[str, notices.JSONValue] | None = None
    curve: Mapping[str, Any] | None = None

    def as_json(self) -> dict[str, Any]:
        """The JSON block, keys in the order the answers have always had."""
        out: dict[str, Any] = {
            "level": self.level,
            "delta": self.delta,
            "region": self.region.as_json(),
            "volume_fraction": self.volume_fraction,
            "log10_volume_fraction": self.log10_volume_fraction,
            "n": self.n,
            "tau": self.tau,
            "tau_cumulative": self.tau_cumulative,
            "tau_source": None if self.tau_source is None else self.tau_source.as_json(),
            "samples_below_tau": self.samples_below_tau,
            "undetectable_share": self.undetectable_share,
            "used": self.used,
            "skipped": self.skipped,
            "serves": None if self.serves is None else self.serves.as_json(),
        }
        for key, value in (self.label or {}).items():
            out.setdefault(key, value)  # extras never override the level's own keys
        if self.curve is not None:
            out["curve"] = self.curve
        return out
