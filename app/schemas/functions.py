"""Schemas of the benchmark-function registry."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import STRICT_REQUEST, FiniteFloat


class LocalStructureRead(BaseModel):
    """Behaviour of ``v1`` near the minimum."""

    beta: float | None = Field(description="tail exponent: v1(t) ~ C (t - f*)^beta; null = unknown")
    derivation: str
    atom: float = Field(description="probability mass at f* under uniform sampling (plateaus)")


class FunctionRead(BaseModel):
    """One registered benchmark function."""

    id: str = Field(examples=["bbob/f15/i1/d10"])
    suite: str
    name: str
    title: str
    dim: int
    instance: int | None
    lower: list[float]
    upper: list[float]
    x_opt: list[float] | None
    f_opt: float | None
    f_max: float | None
    local_structure: LocalStructureRead
    analytic: str | None = Field(description="exact v1 available on boxes: sphere | cone | null")
    source: str
    formula: str
    notes: list[str] = Field(
        default_factory=list,
        description="facts about the definition, e.g. where the organisers' code departs from "
        "their report (absrank follows the code)",
    )
    flags: list[str] = Field(
        default_factory=list, description="e.g. excluded-by-organisers, noisy, noise-free"
    )
    noisy: bool = Field(False, description="values carry random noise: evaluate with a seed")


class FunctionList(BaseModel):
    """A page of functions."""

    total: int
    items: list[FunctionRead]


class EvaluateRequest(BaseModel):
    """A small batch of points."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={"examples": [{"points": [[0.0, 0.0], [1.0, -2.5]]}]}
    )
    points: list[list[FiniteFloat]] = Field(
        description="shape (n, d), n <= max_evaluate_points and n·d <= max_evaluate_values "
        "(and max_request_bytes / 28)"
    )
    seed: int | None = Field(
        None,
        ge=0,
        le=2**63 - 1,
        description="noisy functions only (and required there): seed of the noise, "
        "numpy.random.default_rng(seed)",
    )


class EvaluateResponse(BaseModel):
    """Function values at the points, in order."""

    function_id: str
    values: list[float]
    seed: int | None = Field(None, description="the noise seed used (noisy functions)")
