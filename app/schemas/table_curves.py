"""Schemas of published table curves: ``/v1/tables/{id}/curve.json``, quantiles, ladders.

A curve is everything needed to recompute ``v1(t)`` offline, as the service ranks with it by
default (``POST /v1/absolute-ranks`` with ``tail="auto"``, ``tail_k=100``, ``confidence=0.95``);
docs/METHODS.md ("Published tables") states the formulas.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

#: Version of the published curve format (bump when a field changes meaning).
CURVE_FORMAT_VERSION = 1

CURVE_FORMULA = (
    "N1 = N + 1. limit <= t <= y_N: v1 = interp(t, knots.value, knots.count)/N1 (Eq. 28, linear "
    "between knots). t < limit: lower_tail (power: v_top*((t - f*)/(limit - f*))^beta; linear: "
    "atom + (v_top - atom)*(t - f*)/(limit - f*); paper: exp(t - y_1)/N1). t > y_N: upper_tail "
    "(flat: N/N1; linear-to-f_max: (N + min((t - y_N)/(f_max - y_N), 1))/N1). Known f*: v1 = 0 "
    "for t < f*, and with atom > 0: v1(f*) = atom, v1 = max(v1, atom) above f*."
)


class TailOptions(BaseModel):
    """The rank options this curve is the answer to (the defaults of POST /v1/absolute-ranks)."""

    tail: str = Field(description="lower-tail mode asked for: auto")
    k_anchor: int = Field(description="anchor order statistic asked for (tail_k): 100")
    confidence: float = Field(description="level of the intervals (beta_interval): 0.95")


class LowerTailRead(BaseModel):
    """The lower-tail model: ``v1(t)`` for ``t < limit``."""

    kind: str = Field(
        description="power: v_top·((t - f*)/(limit - f*))^beta for t > f*, 0 at and below f*; "
        "linear: atom + (v_top - atom)·(t - f*)/(limit - f*) for f* < t, atom at f*, 0 below; "
        "paper: exp(t - y_1)/(N + 1) (f* unknown; positive everywhere)"
    )
    limit: float = Field(description="the tail serves t < limit: y_k (power) or y_1")
    f_opt: float | None = Field(description="f* the tail starts from (null for paper)")
    v_top: float = Field(
        description="v1 just below limit: c_k/(N+1) (power), max(atom, c_1/(N+1)) (linear), "
        "1/(N+1) (paper)"
    )
    beta: float | None = Field(description="power: the exponent beta")
    beta_se: float | None = Field(description="power: standard error of beta (0 if registered)")
    beta_interval: list[float] | None = Field(
        description="power: interval of beta at the confidence (Bonferroni split with the anchor "
        "when estimated)"
    )
    beta_source: str | None = Field(description="power: registered | hill (estimated)")
    beta_derivation: str | None = Field(description="power: why beta has its value")
    k: int | None = Field(description="power: anchor order statistic used (limit = y_k)")
    requested_k: int | None = Field(
        description="power: the anchor asked for, capped by k_exact and the stored lowest samples"
    )
    anchor_count: int | None = Field(
        description="power: c_k = #{y_i <= y_k}, exact (the anchor is a knot)"
    )
    atom: float = Field(description="linear: registered mass at f* (0 if none)")
    validity: dict[str, Any] | None = Field(
        description="power: why the anchor is valid (the sublevel set {f <= y_k} is not clipped "
        "by the region; KS and lowest-sample tests of the power law below y_k) and the larger "
        "anchors refused"
    )
    obtained: str = Field(description="how this tail was chosen (tail='auto')")


class UpperTailRead(BaseModel):
    """The upper-tail model: ``v1(t)`` for ``t > y_N``."""

    kind: str = Field(
        description="flat: N/(N+1) (f_max unknown, or a box region); linear-to-f_max: "
        "(N + min((t - y_N)/(f_max - y_N), 1))/(N+1)"
    )
    y_n: float = Field(description="y_N, the largest sample")
    f_max: float | None = Field(description="registered maximum over the region, if used")


class Knots(BaseModel):
    """The stored knots: Eq. 28 is exact at each of them."""

    value: list[float] = Field(description="sorted distinct knot values t_j (units of f)")
    count: list[int] = Field(description="exact #{y_i <= t_j}; strictly increasing, last = N")


class TableCurveRead(BaseModel):
    """A ready table's stored representation and the v1 model the service ranks with."""

    format_version: int = Field(CURVE_FORMAT_VERSION, description="version of this format")
    table_id: str
    location: str
    function_id: str
    formula: str = Field(CURVE_FORMULA, description="how v1(t) follows from the fields")
    n: int = Field(description="N, the number of samples")
    k_exact: int = Field(description="every distinct value among the k_exact lowest is a knot")
    n_knots: int = Field(description="number of knots m")
    max_interp_error: float = Field(
        description="bound on |v_stored - v_Eq28| for t in [y_1, y_N] (0: every sample stored)"
    )
    y_1: float = Field(description="smallest sample")
    y_n: float = Field(description="largest sample")
    region: dict[str, Any] = Field(
        description="the sampling region: kind (domain | box | oriented), lower, upper (its "
        "bounding box), delta (half-widths of a box), for oriented: center, axes, half_widths"
    )
    relative_to: str = Field(
        description="domain: v is a share of the domain; box: a share of the box (not rescaled)"
    )
    log10_volume_fraction: float = Field(description="log10 Leb(region)/Leb(domain)")
    spec: dict[str, Any] = Field(description="the table's normalized spec (as hashed)")
    spec_hash: str
    data_sha256: str = Field(description="SHA-256 of the stored table bytes (also the ETag)")
    f_opt: float | None = Field(description="the function's f* (null if unknown)")
    f_max: float | None = Field(description="the function's registered maximum (null if none)")
    atom: float = Field(description="mass lifted at f* (v1(f*) = atom); 0 if none")
    options: TailOptions
    lower_tail: LowerTailRead
    upper_tail: UpperTailRead
    low_points: int = Field(
        description="stored points x of the lowest samples (not published: they only serve the "
        "power tail's clipping check)"
    )
    warnings: list[str] = Field(description="fallbacks taken while choosing the tail")
    knots: Knots
    provenance: dict[str, Any]


class QuantileItem(BaseModel):
    """``q(v) = inf{t : v1(t) >= v}``."""

    v: float
    t: float | None = Field(description="q(v); null when v1 never reaches v")
    error: float | None = Field(
        description="q(v) - f*, without cancellation in the tail (null if f* is unknown)"
    )
    method: str = Field(
        description="atom | tail-power | tail-linear | tail-paper | interpolated | upper-tail | "
        "above-maximum (no t: v > N/(N+1) with a flat upper tail)"
    )


class QuantileList(BaseModel):
    """Quantiles of a table's published curve."""

    table_id: str
    data_sha256: str
    definition: str = Field(
        "q(v) = inf{t : v1(t) >= v}: the left end where v1 jumps or is flat; exact inverse of "
        "each piece (the power law in log space)",
        description="what t is",
    )
    items: list[QuantileItem]


class LadderPiece(BaseModel):
    """One serving level of the combined ladder curve."""

    level: int
    table_id: str
    t_from: float | None = Field(description="serves t >= t_from (null: no lower bound)")
    t_below: float | None = Field(description="serves t < t_below (null: no upper bound)")
    ln_volume_fraction: float = Field(description="ln Leb(R_j)/Leb(domain)")
    n: int
    lower_tail: LowerTailRead
    upper_tail: UpperTailRead
    atom: float
    knots: Knots = Field(
        description="the level's knots over its served range, with one neighbour each side "
        "(exact interpolation there)"
    )


class LadderCurveLevel(BaseModel):
    """One table of the ladder."""

    level: int
    table_id: str
    location: str
    curve: str = Field(description="URL of the table's own curve (its region's v1)")
    data_sha256: str
    region: dict[str, Any]
    log10_volume_fraction: float
    used: bool = Field(description="whether it serves some t in the combined curve")
    skipped: str | None = Field(description="why not, if not")


class LadderCurveRead(BaseModel):
    """The combined nested-region curve of a ladder: piecewise its levels' curves, scaled."""

    format_version: int = Field(CURVE_FORMAT_VERSION)
    function_id: str
    n: int = Field(description="samples per level")
    seed: int
    f_opt: float
    combination: str = Field(
        "v1(t) = exp(ln_volume_fraction)·v1_level(t) for the piece with t_from <= t < t_below; "
        "v1_level is that level's table curve (same formula as /v1/tables/{id}/curve.json, "
        "with the tail the ladder chose for the level)",
        description="how the pieces combine",
    )
    formula: str = Field(CURVE_FORMULA, description="each piece's v1_level")
    etag: str = Field(description="SHA-256 of the levels' data_sha256, joined by newlines")
    options: TailOptions
    levels: list[LadderCurveLevel]
    pieces: list[LadderPiece] = Field(description="serving levels, level 0 (highest t) first")
    warnings: list[str]
    provenance: dict[str, Any]
