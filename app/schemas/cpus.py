"""Schemas of ``/v1/cpus``: the registry of PassMark single-thread scores (SPEC §6)."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import STRICT_REQUEST, FiniteFloat

CpuName = Annotated[
    str,
    Field(
        min_length=2,
        max_length=200,
        pattern=r"^[^\x00-\x1f\x7f]+$",
        description="CPU model name, e.g. 'Intel Core i7-6700HQ'",
        examples=["Intel Core i7-6700HQ"],
    ),
]


class CpuCreate(BaseModel):
    """A CPU and its PassMark single-thread score, with its source (operators only)."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "Intel Core i7-8700K",
                    "score": 2760,
                    "source": "PassMark CPU benchmark page, single-thread rating, read by hand",
                    "source_date": "2026-11-30",
                }
            ]
        }
    )
    name: CpuName
    score: FiniteFloat = Field(
        gt=0, le=100_000, description="PassMark single-thread score (the model needs < 3223.49)"
    )
    source: str = Field(min_length=3, max_length=1000, description="where the score comes from")
    source_date: str = Field(
        pattern=r"^\d{4}(-\d{2}(-\d{2})?)?$",
        description="when the source gave the score: YYYY, YYYY-MM or YYYY-MM-DD",
    )


class CpuRead(BaseModel):
    """A registry entry."""

    id: int
    name: str
    score: float
    source: str
    source_date: str
    created_at: datetime
    match: float | None = Field(
        None, description="with q: how well the name matches (higher is better)"
    )


class CpuList(BaseModel):
    """Registry entries, best matches first when searching."""

    total: int
    items: list[CpuRead]
