"""Pareto-optimal ranking of multi-objective algorithms, and quality indicators."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request, Response

from app.api.deps import JsonBody, SessionmakerDep, SettingsDep, requires, stored_id_path
from app.api.http_hygiene import stored
from app.api.jobs import ACCEPTED, prefers_async, submit_as_job
from app.api.responses import model_response
from app.api.work import admit_sync, body_schema, parse_body, run_controlled, sync_control
from app.domain.cost import Mode
from app.errors import InvalidInput
from app.schemas.common import (
    body_problems,
    invalid,
    problem_responses,
    refused,
    unknown_id,
)
from app.schemas.pareto import (
    IndicatorRead,
    IndicatorRequest,
    ParetoRankingCreate,
    ParetoRankingRead,
)
from app.services import costs, job_kinds
from app.services import pareto as service

#: FastAPI's type of a route's ``responses``.
OpenApiResponses = dict[int | str, dict[str, Any]]

router = APIRouter(prefix="/v1", tags=["multi-objective"])


if TYPE_CHECKING:
    RankingIdPath = str
else:
    RankingIdPath = stored_id_path(
        "ranking_id",
        "a Pareto ranking id (p + 23 hex digits), as in the Location of POST /v1/pareto-rankings",
        "p4f1c0d9a8b7e6f5a4b3c2d1",
    )


@router.post(
    "/indicators",
    response_model=IndicatorRead,
    dependencies=[JsonBody],
    openapi_extra=body_schema(IndicatorRequest),
    summary="Quality indicators of one front (HV, IGD, IGD+, ...)",
    responses=problem_responses(*body_problems(invalid("front", "Field required", "missing"))),
)
async def indicators(request: Request, settings: SettingsDep) -> Response:
    """Compute quality indicators (HV, IGD, IGD+, GD, GD+, spacing, spread, Δp) of one front."""
    body = await parse_body(request, IndicatorRequest)
    admit_sync(costs.indicators_cost(body, settings), settings, field="front")
    out = await run_controlled(request, sync_control(settings), service.indicators, body)
    return model_response(IndicatorRead, out)


@router.post(
    "/pareto-rankings",
    response_model=ParetoRankingRead,
    status_code=201,
    dependencies=[requires("pareto_rankings"), JsonBody],
    openapi_extra=body_schema(ParetoRankingCreate),
    responses=OpenApiResponses(
        {200: {"model": ParetoRankingRead, "description": "Answered before"}}
    )
    | ACCEPTED
    | problem_responses(
        *body_problems(
            refused(InvalidInput, "give exactly one of scores, csv and fronts", "scores")
        )
    ),
    summary="Pareto-optimal ranking of multi-objective algorithms",
)
async def create_ranking(request: Request, sm: SessionmakerDep, settings: SettingsDep) -> Response:
    """Rank algorithms by non-dominated levels of their runs' indicator vectors."""
    body = await parse_body(request, ParetoRankingCreate, ("scores", "fronts"))
    estimate = costs.pareto_cost(body, settings)
    mode = admit_sync(estimate, settings, field=costs.pareto_field(body), job=True)
    if mode is Mode.JOB or prefers_async(request):  # README "Jobs"
        return await submit_as_job(
            request,
            job_kinds.PARETO_RANKINGS,
            body,
            may_queue_builds=False,
            cost_seconds=estimate.cpu_seconds,
        )
    out, created = await run_controlled(
        request, sync_control(settings), service.create, sm, settings, body
    )
    return model_response(
        ParetoRankingRead,
        out,
        status_code=201 if created else 200,
        headers={"Location": out["location"]},
    )


@router.get(
    "/pareto-rankings/{ranking_id}",
    response_model=ParetoRankingRead,
    summary="Show a stored Pareto ranking",
    responses=problem_responses(
        unknown_id("ranking_id", "Pareto ranking", "p4f1c0d9a8b7e6f5a4b3c2d1")
    ),
)
def get_ranking(ranking_id: RankingIdPath, sm: SessionmakerDep) -> Response:
    """Show a stored Pareto ranking."""
    # a ranking is stored once, with its answer, and never changes
    return model_response(ParetoRankingRead, service.get(sm, ranking_id), headers=stored(True))
