"""Absolute ranks of metric values."""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic_core import to_json

from app.api.deps import DispatcherDep, JsonBody, MayQueueBuildsDep, SessionmakerDep, SettingsDep
from app.schemas.common import BODY_PROBLEMS, problem_responses
from app.schemas.ranks import RankRequest, RankResponse
from app.services.ranks import rank_values

router = APIRouter(prefix="/v1", tags=["absolute ranks"])


@router.post(
    "/absolute-ranks",
    response_model=RankResponse,
    dependencies=[JsonBody],
    responses=problem_responses(401, 404, 409, *BODY_PROBLEMS),
)
def absolute_ranks(
    body: RankRequest,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    may_queue_builds: MayQueueBuildsDep,
) -> Response:
    """Turn metric values into absolute ranks v (lower is better; log10_v is authoritative)."""
    # The service returns plain JSON types in RankResponse's shape (tests validate it against
    # the model); serializing directly skips a per-value model rebuild that cost ~half of the
    # endpoint's CPU (bench/README.md).
    out = rank_values(sm, settings, dispatcher, body, may_queue_builds=may_queue_builds)
    return Response(to_json(out), media_type="application/json")
