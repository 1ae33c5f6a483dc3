"""Schemas of ``/v1/region-scans``: choosing the δ of a box table (Jing & Liu §V)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator
from pydantic.config import JsonValue

from app.schemas.common import STRICT_REQUEST, FiniteFloat, FunctionId, field_error
from app.schemas.ranks import MAX_BUDGET, Tail
from app.schemas.stattests import NAME

PositiveDelta = Annotated[float, Field(gt=0.0, allow_inf_nan=False)]


class AlgorithmValue(BaseModel):
    """One algorithm's metric value (best f found, or its error; see ``values_are``)."""

    model_config = STRICT_REQUEST
    algorithm: NAME
    value: FiniteFloat


class DeltaGrid(BaseModel):
    """``count`` half-widths geometric from ``min`` to ``max`` (both included)."""

    model_config = STRICT_REQUEST
    min: PositiveDelta
    max: PositiveDelta
    count: int = Field(ge=2, le=1000, description="at most the setting max_region_scan_deltas")

    @model_validator(mode="after")
    def _ordered(self) -> DeltaGrid:
        if self.min >= self.max:
            raise field_error("max", "max must be larger than min")
        return self


Values = Annotated[
    Annotated[list[AlgorithmValue], Field(min_length=1), Tag("<list>")]
    | Annotated[dict[NAME, FiniteFloat], Field(min_length=1), Tag("<mapping>")],
    Discriminator(lambda v: "<list>" if isinstance(v, list) else "<mapping>"),
]
"""A list of ``{"algorithm", "value"}`` or a mapping name → value; errors name ``values.0.value``
or ``values.<name>`` (tags in ``<>`` are dropped from error locations)."""

Deltas = Annotated[
    Annotated[list[PositiveDelta], Field(min_length=1), Tag("<list>")]
    | Annotated[DeltaGrid, Tag("<grid>")],
    Discriminator(lambda v: "<list>" if isinstance(v, list) else "<grid>"),
]

_EXAMPLES: list[JsonValue] = [
    {
        "function_id": "classic/rastrigin/d2",
        "values": [
            {"algorithm": "DE", "value": 0.01},
            {"algorithm": "PSO", "value": 0.8},
            {"algorithm": "CMA-ES", "value": 1e-6},
            {"algorithm": "random", "value": 4.5},
        ],
        "deltas": {"min": 0.01, "max": 5.12, "count": 6},
        "log2n": 15,
        "follow_up_log2n": 20,
        "seed": 0,
    },
    {
        "function_id": "bbob/f15/i1/d10",
        "values": {"DE": 1012.5, "PSO": 1040.0, "CMA-ES": 1001.2},
        "deltas": [0.5, 1.0, 2.0, 5.0],
        "budget": 1000,
    },
]


class RegionScanCreate(BaseModel):
    """Scan box half-widths δ and choose the one that spreads the algorithms' ranks best."""

    model_config = STRICT_REQUEST | ConfigDict(json_schema_extra={"examples": _EXAMPLES})
    function_id: FunctionId = Field(description="a hosted function with a known minimiser x*")
    values: Values = Field(
        description="the compared algorithms' metric values: a list of {algorithm, value} or "
        "a mapping name -> value (one value per algorithm)"
    )
    values_are: Literal["f", "error"] = Field(
        "f", description="'error' means t - f*; f* is added before ranking"
    )
    deltas: Deltas | None = Field(
        None,
        description="half-widths δ > 0 (a list, or {min, max, count} geometric); default: 8 "
        "values geometric from 1e-3 to 1 x the domain's largest half-width. At most the setting "
        "max_region_scan_deltas (32 by default)",
    )
    log2n: int | None = Field(
        None, ge=4, le=30, description="N = 2^log2n of each cheap table (default 15)"
    )
    follow_up_log2n: int | None = Field(
        None,
        ge=4,
        le=30,
        description="N = 2^log2n of the full table at the chosen δ (default 20, lowered to the "
        "deployment's table_max_log2n, with a note, when that is smaller)",
    )
    seed: int = Field(0, ge=0, le=2**63 - 1, description="Sobol scrambling seed of every table")
    budget: int | None = Field(
        None,
        ge=1,
        le=MAX_BUDGET,
        description="c: evaluations per run; e is computed on v_c (Eq. 19). Default: on v1",
    )
    tail: Tail = Field(
        "auto",
        description="tail model on every box, as on POST /v1/absolute-ranks: 'auto' (default), "
        "'power', 'linear', or 'paper' = Eq. 28 exactly as published (exp(t - y_1)/(N+1) below "
        "the box's lowest sample, 1 - exp(-ln(N+1) t/y_N) above its largest), the literal "
        "computation of Jing & Liu's Table V",
        examples=["paper"],
    )


class TablesProgress(BaseModel):
    """Tables ready out of the scan's tables."""

    ready: int
    total: int


class ChunksProgress(BaseModel):
    """Chunks done, summed over the scan's tables."""

    done: int
    total: int
    fraction: float


class ScanProgress(BaseModel):
    """Progress of a scan: its tables, and their chunks."""

    tables: TablesProgress
    chunks: ChunksProgress


class ScanError(BaseModel):
    """A table of the scan that failed."""

    delta: float
    table_id: str
    error: str | None


class TableProgressRead(BaseModel):
    """One table's chunks done."""

    done: int
    total: int
    fraction: float


class BoxRegion(BaseModel):
    """A box table's region: ``[x* - δ, x* + δ] ∩ domain``."""

    model_config = ConfigDict(extra="allow")
    kind: str
    delta: float | list[float]
    lower: list[float]
    upper: list[float]


class BoxRank(BaseModel):
    """One algorithm's absolute rank relative to one box."""

    model_config = ConfigDict(extra="allow")
    algorithm: str
    value: float = Field(description="the value sent (in the units of values_are)")
    v: float
    log10_v: float | None = Field(description="authoritative log10 v (null where v = 0)")
    method: str


class ChosenDelta(BaseModel):
    """The δ a rule chose: its position in the grid, e and the rule."""

    delta: float
    index: int = Field(description="position of δ in deltas")
    e: float = Field(description="geometric mean difference (Eq. 29); may underflow")
    log10_e: float = Field(description="authoritative log10 e")
    rule: str


class FollowUpTableRequest(BaseModel):
    """The ``POST /v1/tables`` body of the full-size table at the chosen δ."""

    function_id: str
    delta: float
    log2n: int
    seed: int


class FollowUp(BaseModel):
    """The full-size table at the chosen δ: its request and the id it will have."""

    table_request: FollowUpTableRequest
    table_id: str
    location: str
    log2n_capped: bool = Field(description="log2n was capped by the deployment's table_max_log2n")
    how: str


class DeltaResult(BaseModel):
    """One δ: its table, and once ready the ranks on that box and their spread ``e``."""

    model_config = ConfigDict(extra="allow")
    delta: float
    table_id: str
    location: str
    status: str = Field(description="the table's status: building | merging | ready | failed")
    progress: TableProgressRead
    eta_seconds: float | None = Field(None, description="the table's ETA while it builds")
    error: str | None = Field(None, description="why the table failed")
    region: BoxRegion = Field(
        description="the table's region: the box [x* - δ, x* + δ] ∩ domain (as in its spec)"
    )
    volume_fraction: float = Field(description="Leb(box ∩ domain) / Leb(domain)")
    ranks: list[BoxRank] | None = Field(
        None, description="per algorithm: v, log10_v, method — relative to THIS box"
    )
    distinct_ranks: int | None = None
    distinct_v: list[float] | None = None
    distinct_log10_v: list[float | None] | None = None
    e: float | None = Field(None, description="geometric mean difference (Eq. 29); may underflow")
    log10_e: float | None = Field(None, description="authoritative log10 e")
    computable: bool | None = None
    reason: str | None = Field(None, description="why e is not computable")
    tail: dict[str, Any] | None = None
    warnings: list[str] | None = None


class RegionScanRead(BaseModel):
    """A δ-region scan: its tables' progress, then per δ the ranks, e, the choice and the
    follow-up table."""

    model_config = ConfigDict(extra="allow")
    id: str
    location: str
    status: str = Field(description="building | ready | failed")
    function_id: str
    algorithms: list[dict[str, Any]] = Field(description="the values ranked: {algorithm, value}")
    values_are: Literal["f", "error"]
    budget: int | None = Field(description="c: evaluations per run (null: v1)")
    rank_of: str = Field(description="what is ranked (v1 or v_c)")
    grid: dict[str, Any] = Field(description="the δ grid as requested")
    log2n: int
    follow_up_log2n: int
    seed: int
    tail: Tail = Field(
        "auto",
        description="the tail model of every box, as requested ('paper': Eq. 28 as published, "
        "Jing & Liu Table V)",
    )
    progress: ScanProgress
    eta_seconds: float | None = Field(
        description="remaining chunks / the rate observed since the first chunk of the tables "
        "being built started (README, tables); null before a chunk finishes, once ready, and "
        "while failed"
    )
    errors: list[ScanError]
    deltas: list[DeltaResult]
    chosen: ChosenDelta | None = Field(
        None, description="the δ with the largest e (ties: the larger δ); null until ready"
    )
    chosen_separating: ChosenDelta | None = Field(
        None,
        description="the same rule among the δ whose ranks keep every distinct value apart; "
        "null until ready or when no δ does",
    )
    follow_up: FollowUp | None = Field(
        None,
        description="table_request (a POST /v1/tables body at the chosen δ) and the table_id "
        "it will have",
    )
    notes: list[str]
    warnings: list[str]
    provenance: dict[str, Any]
