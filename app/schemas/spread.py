"""Schemas of ``POST /v1/rank-spread`` (Jing & Liu Eq. 29 on ranks the user sends)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.common import STRICT_REQUEST, FiniteFloat, field_error

UnitRank = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Log10Rank = Annotated[float, Field(le=0.0, allow_inf_nan=False)] | None


class RankSpreadRequest(BaseModel):
    """Absolute ranks whose spread ``e`` (Eq. 29) is wanted: ``v`` or ``log10_v``."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [{"v": [0.1, 0.4, 0.5]}, {"log10_v": [-12.5, -3.0, -0.7, None]}]
        }
    )
    v: list[UnitRank] | None = Field(
        None,
        min_length=1,
        description="ranks v in [0, 1], any order, duplicates allowed (at most the setting "
        "max_rank_values); exactly one of v and log10_v",
        examples=[[0.1, 0.4, 0.5]],
    )
    log10_v: list[Log10Rank] | None = Field(
        None,
        min_length=1,
        description="log10 of the ranks (<= 0; null for v = 0), e.g. the log10_v of "
        "POST /v1/absolute-ranks: exact far below the float range",
        examples=[[-12.5, -3.0, -0.7]],
    )

    @model_validator(mode="after")
    def _one_of(self) -> RankSpreadRequest:
        if self.v is None and self.log10_v is None:
            raise field_error("v", "give exactly one of v and log10_v")
        if self.v is not None and self.log10_v is not None:
            raise field_error("log10_v", "give either v or log10_v, not both")
        return self


class RankSpreadRead(BaseModel):
    """The geometric mean difference of ordered distinct ranks (Jing & Liu Eq. 29)."""

    definition: str = Field(description="the formula computed")
    computable: bool = Field(description="whether there are at least 2 distinct ranks")
    k: int = Field(description="number of distinct ranks")
    n: int = Field(description="number of ranks sent")
    log10_v: list[float | None] = Field(
        description="the distinct ranks, ascending, as log10 (null for v = 0)"
    )
    log10_e: FiniteFloat | None = Field(description="log10 e (authoritative: e may underflow)")
    e: float | None = Field(description="e = 10^log10_e")
    reason: str | None = Field(description="why e is not computable")
