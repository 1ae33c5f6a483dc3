"""Schemas of the v_f tables."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from app.schemas.common import STRICT_REQUEST, FiniteFloat, FunctionId, field_error

PositiveHalfWidth = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]

Delta = Annotated[
    Annotated[PositiveHalfWidth, Tag("<number>")]
    | Annotated[list[PositiveHalfWidth], Field(min_length=1), Tag("<list>")],
    Discriminator(lambda v: "<list>" if isinstance(v, list) else "<number>"),
]
"""One half-width (a cube) or one per coordinate (a box); errors name ``delta`` or ``delta.3``
(tags in ``<>`` are dropped from error locations). The list's length (``d``) is checked by the
service (422 on ``delta``)."""


USER_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
#: The fields of a table of the user's own samples (only with ``samples``).
USER_FIELDS = ("name", "f_opt", "f_max", "dim", "sampled_by", "sampling")
#: The fields of a hosted function's table (never with ``samples``).
HOSTED_FIELDS = ("function_id", "delta", "log2n", "seed", "ladder")


class TableCreate(BaseModel):
    """A table spec: function, region, N = 2^log2n, Sobol seed."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {"function_id": "bbob/f15/i1/d10", "log2n": 16, "seed": 0},
                {"function_id": "classic/ellipsoid/d10", "delta": 0.5, "log2n": 18, "seed": 1},
                {"function_id": "classic/ellipsoid/d2", "delta": [2.0, 0.002], "log2n": 16},
                {"function_id": "classic/ellipsoid/d10", "ladder": True},
                {
                    "samples": [1.0, 3.0, 4.0, 6.0],
                    "name": "fig9",
                    "sampled_by": "Jing & Liu",
                    "sampling": "four uniform points (the paper's Fig. 9)",
                },
            ]
        },
    )
    function_id: FunctionId | None = Field(
        None, description="a hosted function; exactly one of function_id and samples"
    )
    samples: list[FiniteFloat] | None = Field(
        None,
        min_length=2,
        description="your own function instead of a hosted one: values of f at N points drawn "
        "uniformly from its domain (any order, each finite; at most the setting "
        "max_user_samples). The table (Eq. 28 on the sorted values) is built at once under the "
        "id user/<19 hex digits of the content hash>; nothing is evaluated",
        examples=[[1.0, 3.0, 4.0, 6.0]],
    )
    name: str | None = Field(
        None,
        pattern=USER_NAME_PATTERN,
        description="with samples: your function's name (letters, digits, . _ -; at most 64); "
        "the table's function_id is user/<name>",
        examples=["my-problem"],
    )
    f_opt: FiniteFloat | None = Field(
        None,
        description="with samples: the minimum f* of your function, as you state it (not "
        "verified); enables the tails that need f* (linear from (f*, 0), power with a Hill "
        "estimate of beta) and values_are='error'",
    )
    f_max: FiniteFloat | None = Field(
        None,
        description="with samples: the maximum of f over the domain, as stated (the upper tail "
        "is then linear to (f_max, 1) instead of flat at N/(N+1))",
    )
    dim: int | None = Field(
        None, ge=1, le=1_000_000, description="with samples: the domain's dimension, as stated"
    )
    sampled_by: str | None = Field(
        None,
        min_length=1,
        max_length=200,
        description="with samples: who sampled the values, as stated (recorded, not verified)",
        examples=["A. Researcher, lab X"],
    )
    sampling: str | None = Field(
        None,
        min_length=1,
        max_length=2000,
        description="with samples: how the points were drawn (e.g. 'uniform on [0, 1]^5, "
        "numpy default_rng(1)'), as stated (recorded, not verified)",
    )
    delta: Delta | None = Field(
        None,
        description="sample [x* - delta, x* + delta] ∩ domain: one half-width (the cube), or d "
        "half-widths delta_i, one per coordinate (the box Π_i [x*_i - delta_i, x*_i + delta_i]); "
        "each finite and > 0; null = whole domain",
        examples=[0.5, [2.0, 0.002]],
    )
    log2n: int | None = Field(
        None,
        ge=4,
        le=30,
        description="N = 2^log2n Sobol points (default and maximum are settings, at most 30)",
    )
    seed: int = Field(0, ge=0, le=2**63 - 1, description="scrambling seed (Sobol rng=seed)")
    ladder: bool = Field(
        False,
        description="request the ladder of nested regions instead: the whole domain "
        "and boxes [x* - h_j, x* + h_j] ∩ domain shaped like f's local sublevel sets, "
        "h_j,i = min(R, sigma_j·a_i), sigma_j = sigma_0 / nested_factor^j, until the volume "
        "fraction reaches 10^nested_min_log10_volume (at most nested_levels boxes; settings), "
        "each an ordinary table of N points; needs a known x*",
    )

    @model_validator(mode="after")
    def _ladder_picks_its_boxes(self) -> TableCreate:
        given = self.model_fields_set
        if self.samples is not None:
            hosted = next((f for f in HOSTED_FIELDS if f in given), None)
            if hosted is not None:
                raise field_error(hosted, f"{hosted} is for a hosted function: not with samples")
        else:
            user = next((f for f in USER_FIELDS if f in given), None)
            if user is not None:
                raise field_error(user, f"{user} describes your own samples: send samples too")
            if self.function_id is None:
                raise field_error("function_id", "give exactly one of function_id and samples")
        if self.f_opt is not None and self.f_max is not None and self.f_max < self.f_opt:
            raise field_error("f_max", "f_max must be >= f_opt")
        if self.ladder and self.delta is not None:
            raise field_error("delta", "a ladder chooses its own boxes: leave delta null")
        return self


class Progress(BaseModel):
    """Chunks done out of the total."""

    done: int
    total: int
    fraction: float


class TableRead(BaseModel):
    """A table and its build status."""

    id: str
    location: str
    function_id: str
    status: str = Field(description="building | merging | ready | failed")
    progress: Progress
    eta_seconds: float | None
    error: str | None
    spec: dict[str, Any]
    spec_hash: str
    n: int
    seed: int
    chunk_size: int
    n_chunks: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    data_sha256: str | None
    max_interp_error: float | None = Field(
        description="bound on |v_stored - v_Eq28| inside the sample range"
    )
    summary: dict[str, Any] | None = Field(
        description="y_1, y_N and quantiles t at several v; these are sample order statistics "
        "(the smallest sample t with #{y_i <= t}/(N+1) >= v, said in quantiles_are), not the "
        "inverse of the published curve, which GET /v1/tables/{table_id}/quantiles gives"
    )
    provenance: dict[str, Any] | None


class TableList(BaseModel):
    """A page of tables."""

    total: int
    items: list[TableRead]


class LadderLevel(BaseModel):
    """One table of a ladder of nested regions."""

    level: int = Field(description="0 = the whole domain, then boxes shrinking around x*")
    kind: str = Field(
        "box",
        description="domain | box (axis-aligned) | oriented (a box along the fitted form's "
        "eigenvectors, for rotated forms, where it fits in the domain) | oriented ∩ domain "
        "(such a box that leaves the domain: only its points inside the domain are evaluated, "
        "and their share measures the level's volume)",
    )
    delta: list[float] | float | None = Field(
        description="half-widths h_j of the box, one per coordinate (before clipping to the "
        "domain); null for the domain"
    )
    sigma: float | None = Field(
        description="the level's scale sigma_j (h_j,i = min(R, sigma_j·a_i)); null for the domain"
    )
    log10_volume_fraction: float = Field(description="log10 Leb(box)/Leb(domain)")
    id: str
    location: str
    status: str = Field(description="building | merging | ready | failed")
    progress: Progress


class LadderShape(BaseModel):
    """The per-coordinate shape a of a ladder's boxes (app.domain.nested.ladder_shape)."""

    method: str
    model: str = Field(description="quadratic-form | diagonal (d > 40) | cube (fallback)")
    half_widths: list[float] = Field(
        description="a_i, max 1: the bounding box of the fitted local sublevel ellipsoid"
    )
    degree: float = Field(description="p = d/beta (registered), 2 when beta is unknown")
    fit_residual: float | None = Field(description="RMS relative misfit of the quadratic form")
    fallback: str | None = Field(description="why the cube is used instead, if it is")
    probes: int = Field(description="level-set crossings used by the fit")
    condition: float | None = Field(description="condition number of the fitted form")
    log10_fill_share: float | None = Field(
        description="log10 share of its axis-aligned bounding box the fitted ellipsoid fills "
        "(-2.6 for any axis-aligned ellipsoid in 10-D; far less for rotated ill-conditioned "
        "ones, which axis-aligned boxes cannot sample)"
    )
    rotation: float | None = Field(
        None, description="RMS off-diagonal correlation of the fitted form (0 = axis-aligned)"
    )
    oriented: bool = Field(
        False, description="whether the deep levels are boxes along the form's eigenvectors"
    )
    whitened: int = Field(
        0,
        description="whitening passes that made the form (0: the first fit was positive "
        "definite; > 0 when an ill-conditioned form was refitted in its own whitened "
        "coordinates, e.g. BBOB f10)",
    )


class LadderRead(BaseModel):
    """The tables of a ladder of nested regions around x*."""

    function_id: str
    ladder: bool = Field(True, description="always true: this is a ladder, not one table")
    status: str = Field(
        description="ready when every level is; failed if one failed; else building"
    )
    nested_factor: float = Field(description="divisor of the scale sigma per level")
    nested_levels: int = Field(description="boxes L below the domain in this ladder")
    nested_levels_cap: int = Field(description="the setting nested_levels: most boxes allowed")
    nested_min_log10_volume: float = Field(
        description="the ladder ends at the first box with log10 volume fraction <= this"
    )
    stop: str = Field(
        description="why L boxes: volume (target reached) | levels (cap) | thin (a deeper box "
        "would be narrower than 1e-8 of the domain)"
    )
    stop_detail: str
    deepest_log10_volume_fraction: float
    shape: LadderShape
    n: int = Field(description="Sobol points per level")
    seed: int
    progress: Progress = Field(description="chunks over all levels")
    eta_seconds: float | None = Field(
        None,
        description="seconds until every level's chunks are done: remaining chunks / the rate "
        "observed since the first chunk of the levels being built started; null before a "
        "chunk finishes and once ready",
    )
    levels: list[LadderLevel]
