"""Benchmark function registry endpoints."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.deps import SettingsDep
from app.domain.functions import BenchmarkFunction
from app.schemas.common import problem_responses
from app.schemas.functions import (
    EvaluateRequest,
    EvaluateResponse,
    FunctionList,
    FunctionRead,
    LocalStructureRead,
)
from app.services import functions as service

router = APIRouter(prefix="/v1/functions", tags=["functions"])


def _read(fn: BenchmarkFunction) -> FunctionRead:
    return FunctionRead(
        id=fn.id,
        suite=fn.suite,
        name=fn.name,
        title=fn.title,
        dim=fn.dim,
        instance=fn.instance,
        lower=fn.lower.tolist(),
        upper=fn.upper.tolist(),
        x_opt=None if fn.x_opt is None else fn.x_opt.tolist(),
        f_opt=fn.f_opt,
        f_max=fn.f_max,
        local_structure=LocalStructureRead(
            beta=fn.local.beta, derivation=fn.local.derivation, atom=fn.local.atom
        ),
        analytic=fn.analytic,
        source=fn.source,
        formula=fn.formula,
    )


@router.get("", response_model=FunctionList)
def list_functions(
    suite: Annotated[str | None, Query(examples=["bbob"])] = None,
    dim: Annotated[int | None, Query(ge=1, examples=[10])] = None,
    limit: Annotated[int, Query(ge=1, le=5000)] = 500,
    offset: Annotated[int, Query(ge=0)] = 0,
) -> FunctionList:
    """List hosted functions, filtered by suite and dimension."""
    items = service.search_functions(suite=suite, dim=dim)
    return FunctionList(total=len(items), items=[_read(f) for f in items[offset : offset + limit]])


@router.post(
    "/{function_id:path}/evaluate",
    response_model=EvaluateResponse,
    responses=problem_responses(404, 422),
)
def evaluate(function_id: str, body: EvaluateRequest, settings: SettingsDep) -> EvaluateResponse:
    """Evaluate a small batch of points (shape (n, d)) on a hosted function."""
    values = service.evaluate(function_id, body.points, max_points=settings.max_evaluate_points)
    return EvaluateResponse(function_id=function_id, values=values.tolist())


@router.get(
    "/{function_id:path}", response_model=FunctionRead, responses=problem_responses(404, 422)
)
def get_function(function_id: str) -> FunctionRead:
    """Describe one function: domain, optimum, local structure at x*, source."""
    return _read(service.find_function(function_id))
