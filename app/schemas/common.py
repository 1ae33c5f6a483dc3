"""Shared response pieces."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field


class Problem(BaseModel):
    """RFC 9457 problem details (``application/problem+json``)."""

    type: str = Field(examples=["https://absrank.dev/problems/not-found"])
    title: str
    status: int
    detail: str
    instance: str
    field: str | None = Field(None, description="the offending request field, when there is one")
    errors: list[dict[str, Any]] | None = None


def problem_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries for the given problem status codes."""
    return {
        c: {"model": Problem, "content": {"application/problem+json": {}}, "description": "Problem"}
        for c in codes
    }


FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A float that rejects NaN and ±inf with a 422 naming the field."""
