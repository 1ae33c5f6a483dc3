"""Benchmark function registry endpoints."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from app.api.deps import JsonBody, OffsetQuery, SettingsDep
from app.api.http_hygiene import refuses_method
from app.config import evaluate_values_limit
from app.domain.functions import BenchmarkFunction
from app.errors import InvalidInput, MethodNotAllowed
from app.schemas.common import (
    LIMIT_TOO_SMALL,
    body_problems,
    problem_responses,
    refused,
    unknown_function,
)
from app.schemas.functions import (
    EvaluateRequest,
    EvaluateResponse,
    FunctionList,
    FunctionRead,
    LocalStructureRead,
)
from app.services import functions as service

router = APIRouter(prefix="/v1/functions", tags=["functions"])

MAX_DIM_FILTER = 10_000

FunctionIdPath = Annotated[
    str,
    Path(
        description="classic/{name}/d{dim} (1 <= dim <= 100) or bbob/f{1..24}/i{instance}/d{dim} "
        "(instance 1..214648, dim in 2, 3, 5, 10, 20, 40)",
        examples=["bbob/f15/i1/d10", "classic/rastrigin/d2"],
    ),
]


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
        notes=list(fn.notes),
        flags=list(fn.flags),
        noisy=fn.noisy,
    )


@router.get(
    "",
    response_model=FunctionList,
    summary="List hosted functions, by suite and dimension",
    responses=problem_responses(LIMIT_TOO_SMALL),
)
def list_functions(
    suite: Annotated[
        str | None, Query(description="only this suite: classic or bbob", examples=["bbob"])
    ] = None,
    dim: Annotated[
        int | None,
        Query(
            ge=1,
            le=MAX_DIM_FILTER,
            description="only this dimension: every classic function accepted there "
            "(1..100; Rosenbrock from 2) and BBOB at 2, 3, 5, 10, 20, 40 (instances 1-15); "
            "without it, the dimensions 2, 3, 5, 10, 20, 40",
            examples=[10],
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=5000, description="page size", examples=[100])] = 500,
    offset: OffsetQuery = 0,
) -> FunctionList:
    """List hosted functions, filtered by suite and dimension."""
    items = service.search_functions(suite=suite, dim=dim)
    return FunctionList(total=len(items), items=[_read(f) for f in items[offset : offset + limit]])


@router.post(
    "/{function_id:path}/evaluate",
    response_model=EvaluateResponse,
    dependencies=[JsonBody],
    summary="Evaluate a batch of points on a function",
    responses=problem_responses(
        unknown_function(),
        *body_problems(
            refused(
                InvalidInput,
                "every point must have 10 coordinates; points[0] has 2",
                "points.0",
            )
        ),
    ),
)
def evaluate(
    function_id: FunctionIdPath, body: EvaluateRequest, settings: SettingsDep
) -> EvaluateResponse:
    """Evaluate a small batch of points (shape (n, d)) on a hosted function."""
    values = service.evaluate(
        function_id,
        body.points,
        max_points=settings.max_evaluate_points,
        max_values=evaluate_values_limit(settings),
        seed=body.seed,
    )
    return EvaluateResponse(function_id=function_id, values=values.tolist(), seed=body.seed)


@router.api_route("/{function_id:path}/evaluate", methods=["GET", "HEAD"], include_in_schema=False)
@refuses_method  # the path's Allow: POST (app.api.http_hygiene)
def evaluate_needs_post(function_id: str) -> None:
    """Answer 405 (the GET route below would otherwise take ``.../evaluate`` for an id)."""
    raise MethodNotAllowed(
        'evaluate points with POST and a JSON body {"points": [[...], ...]}',
        field="method",
    )


@router.get(
    "/{function_id:path}",
    response_model=FunctionRead,
    summary="Describe one function: domain, optimum, local structure",
    responses=problem_responses(unknown_function()),
)
def get_function(function_id: FunctionIdPath) -> FunctionRead:
    """Describe one function: domain, optimum, local structure at x*, source."""
    return _read(service.find_function(function_id))
