"""Schemas of the v_f tables."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import STRICT_REQUEST, FiniteFloat, FunctionId


class TableCreate(BaseModel):
    """A table spec: function, region, N = 2^log2n, Sobol seed (SPEC §3.2)."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {"function_id": "bbob/f15/i1/d10", "log2n": 16, "seed": 0},
                {"function_id": "classic/ellipsoid/d10", "delta": 0.5, "log2n": 18, "seed": 1},
            ]
        },
    )
    function_id: FunctionId
    delta: FiniteFloat | None = Field(
        None, gt=0, description="sample [x* - delta, x* + delta] ∩ domain; null = whole domain"
    )
    log2n: int | None = Field(
        None,
        ge=4,
        le=30,
        description="N = 2^log2n Sobol points (default and maximum are settings, at most 30)",
    )
    seed: int = Field(0, ge=0, le=2**63 - 1, description="scrambling seed (Sobol rng=seed)")


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
    summary: dict[str, Any] | None = Field(description="y_1, y_N and quantiles t at several v")
    provenance: dict[str, Any] | None


class TableList(BaseModel):
    """A page of tables."""

    total: int
    items: list[TableRead]
