"""Schemas of ``POST /v1/absolute-ranks``."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.common import STRICT_REQUEST, FiniteFloat, FunctionId, field_error

Tail = Literal["auto", "power", "linear", "paper"]
Aggregate = Literal["best", "worst", "median", "order"]

MAX_BUDGET = 10**15
"""Largest budget c (evaluations per run) accepted."""
MAX_RUNS = 10_000
MAX_TAIL_K = 100_000
MAX_TABLE_ID_LENGTH = 64


class RankRequest(BaseModel):
    """Metric values to turn into absolute ranks ``v`` (SPEC §3.1)."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "function_id": "bbob/f15/i1/d10",
                    "values": [1012.5, 1040.0, 1100.25],
                    "budget": 1000,
                    "tail": "auto",
                },
                {"function_id": "classic/sphere/d10", "values": [1e-8, 0.5], "values_are": "error"},
            ]
        },
    )
    function_id: FunctionId | None = Field(
        None,
        description="a hosted function; its default table (full domain, N=2^16, seed 0) is used",
    )
    table_id: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TABLE_ID_LENGTH,
        description="a specific table (e.g. a δ-box or a larger N); exactly one of function_id "
        "and table_id",
    )
    values: list[FiniteFloat] = Field(
        min_length=1,
        description="metric values t (best f found per run, or errors; see values_are)",
    )
    values_are: Literal["f", "error"] = Field(
        "f", description="'error' means t - f*; f* is added before ranking"
    )
    budget: int = Field(
        1, ge=1, le=MAX_BUDGET, description="c: evaluations per run (best-of-c, Eq. 19)"
    )
    runs: int = Field(1, ge=1, le=MAX_RUNS, description="r: runs aggregated into each value")
    aggregate: Aggregate | None = Field(
        None,
        description="how the r runs were aggregated (required when runs > 1)",
    )
    order: int | None = Field(
        None,
        ge=1,
        le=MAX_RUNS,
        description="k for aggregate='order' (k-th best of r); required then, and <= runs",
    )
    tail: Tail = Field("auto", description="lower-tail model below the samples (SPEC §3.2, §3.4)")
    tail_k: int = Field(
        100,
        ge=2,
        le=MAX_TAIL_K,
        description="anchor order statistic of the power tail (capped by the table's stored "
        "lowest samples; the response warns when the anchor differs)",
    )
    confidence: float = Field(0.95, gt=0.0, lt=1.0, description="level of every interval")
    use_analytic: bool = Field(
        True, description="with function_id: use the exact v1 where one exists (sphere, cone)"
    )

    @model_validator(mode="after")
    def _cross_field_rules(self) -> RankRequest:
        if self.function_id is None and self.table_id is None:
            raise field_error("function_id", "give exactly one of function_id or table_id")
        if self.function_id is not None and self.table_id is not None:
            raise field_error("table_id", "give either function_id or table_id, not both")
        if self.runs > 1 and self.aggregate is None:
            raise field_error(
                "aggregate", "aggregate is required when runs > 1 (best, worst, median or order)"
            )
        if self.aggregate == "order" and self.order is None:
            raise field_error("order", "order is required when aggregate='order'")
        if self.order is not None and self.order > self.runs:
            raise field_error("order", f"order must not exceed runs ({self.runs})")
        return self


class RankInterval(BaseModel):
    """An interval for ``v`` at the request's confidence level."""

    log10_lo: float | None
    log10_hi: float | None
    v_lo: float
    v_hi: float


class RankItem(BaseModel):
    """The absolute rank of one value (lower is better)."""

    value: float
    v: float = Field(description="may underflow to 0.0 below 1e-308; log10_v is authoritative")
    log10_v: float | None = Field(
        description="null only when v is exactly 0: t below f*, or t = f* without an atom"
    )
    method: str = Field(
        description="interpolated | tail-power | tail-linear | tail-paper | analytic | atom | "
        "upper-tail | at-or-below-minimum"
    )
    interval: RankInterval


class RankResponse(BaseModel):
    """Absolute ranks with their provenance."""

    function_id: str
    source: dict[str, Any]
    budget: int
    runs: int
    aggregate: str
    results: list[RankItem]
    tail: dict[str, Any]
    warnings: list[str]
    provenance: dict[str, Any]
