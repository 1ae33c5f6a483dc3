"""Schemas of ``/v1/cpus``: the registry of PassMark single-thread scores."""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from app.schemas.common import STRICT_REQUEST, FiniteFloat

#: No control characters and no invisible formatting characters (zero-width spaces, BOM).
VISIBLE = r"^[^\x00-\x1f\x7f\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]+$"

CpuName = Annotated[
    str,
    StringConstraints(strip_whitespace=True),
    Field(
        min_length=2,
        max_length=200,
        pattern=VISIBLE,
        description="CPU model name, e.g. 'Intel Core i7-6700HQ' (surrounding spaces ignored)",
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
    source: Annotated[str, StringConstraints(strip_whitespace=True)] = Field(
        min_length=3, max_length=1000, pattern=VISIBLE, description="where the score comes from"
    )
    source_date: str = Field(
        pattern=r"^[0-9]{4}(-[0-9]{2}(-[0-9]{2})?)?$",
        description="when the source gave the score: YYYY, YYYY-MM or YYYY-MM-DD (a real date, "
        "1990 or later, not in the future)",
    )

    @field_validator("source_date")
    @classmethod
    def _real_date(cls, v: str) -> str:
        parts = [int(x) for x in v.split("-")]
        try:
            first = date(
                parts[0], parts[1] if len(parts) > 1 else 1, parts[2] if len(parts) > 2 else 1
            )
        except ValueError:
            raise ValueError(f"{v!r} is not a calendar date") from None
        if first.year < 1990 or first > date.today():
            raise ValueError(f"{v!r} must be between 1990 and today")
        return v


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
    warnings: list[str] = Field(
        default_factory=list, description="e.g. a score the runtime model cannot use (>= α)"
    )


class CpuList(BaseModel):
    """Registry entries, best matches first when searching."""

    total: int
    items: list[CpuRead]
