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
from app.domain.nested._common import CLIP_SHARE, MIN_INNER_SAMPLES
from app.domain.nested._levels import ThresholdSource

#: What the containment check does (``containment.check``): fixed text, part of every answer.
CONTAINMENT_CHECK = (
    "{f <= t} within R_j is checked from samples: level j serves t only below tau_j = the "
    "smallest value among (a) the stored lowest samples of every outer level i < j that lie "
    "outside R_j shrunk toward x* by clip_share (faces inside R_i only; nothing lies beyond a "
    "shared face), each outer level capped at its largest stored value (beyond it nothing is "
    "known), and (b) level j's own stored lowest samples beyond clip_share of the way to a face "
    "of R_j inside the domain (the sublevel set reaches that face); levels with fewer than "
    "min_inner_samples samples below their threshold are skipped. The check has the resolution "
    "of the samples: a part of {f <= t} outside R_j that no outer sample falls into (share of "
    "the domain below about undetectable_share, the 95% upper limit for 0 hits among N points "
    "per outer level) escapes it, so v1 can be underestimated by up to about that share; it is "
    "not a proof of containment, and the reported intervals do not include it."
)
#: What it guarantees (``containment.guarantee``).
CONTAINMENT_GUARANTEE = (
    "no stored sample contradicts {f <= t} in R_j where level j serves; "
    "parts of {f <= t} outside R_j smaller than the samples' resolution "
    "(undetectable_share) are not excluded, and not in the intervals"
)
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


@dataclass(frozen=True)
class NestedCurveInfo:
    """What a nested curve says about itself (``V1Curve.info`` of :func:`nested_curve`).

    Attributes
    ----------
    upper : object
        The upper tail of level 0's curve (its info's ``upper``).
    deepest_level : int
        The deepest serving level ``j``.
    levels_used : tuple of int
        The serving levels, level 0 first.
    deepest_lower, beta, beta_source, k, anchor_value : object
        The deepest serving level's lower tail and its power tail's record (``None`` where it
        has none), copied from that level's curve info.
    n : int
        Samples of level 0 (the domain table).
    confidence : float
        Level of the intervals.
    levels : tuple of LevelInfo
        Every level of the ladder, level 0 first.
    clip_share : float
        The containment check's margin (:data:`CLIP_SHARE`).
    min_inner_samples : int
        Samples a level needs below its threshold (:data:`MIN_INNER_SAMPLES`).
    """

    upper: object
    deepest_level: int
    levels_used: tuple[int, ...]
    deepest_lower: object
    beta: object
    beta_source: object
    k: object
    anchor_value: object
    n: int
    confidence: float
    levels: tuple[LevelInfo, ...]
    clip_share: float = CLIP_SHARE
    min_inner_samples: int = MIN_INNER_SAMPLES

    def as_json(self) -> dict[str, Any]:
        """The JSON block (``RankResult.tail`` of nested ranks), keys in their usual order."""
        return {
            "mode": "nested",
            "method": "nested",
            "lower": "nested",
            "upper": self.upper,
            "deepest_level": self.deepest_level,
            "levels_used": list(self.levels_used),
            "deepest_lower": self.deepest_lower,
            "beta": self.beta,
            "beta_source": self.beta_source,
            "k": self.k,
            "anchor_value": self.anchor_value,
            "n": self.n,
            "confidence": self.confidence,
            "region_volume_fraction": 1.0,
            "containment": {
                "check": CONTAINMENT_CHECK,
                "clip_share": self.clip_share,
                "min_inner_samples": self.min_inner_samples,
                "guarantee": CONTAINMENT_GUARANTEE,
            },
            "levels": [level.as_json() for level in self.levels],
        }
