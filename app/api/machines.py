"""Fair comparison across machines: equivalent runtime and the corrected sign test."""

from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic_core import to_json

from app.api.deps import JsonBody, SessionmakerDep, stored_id_path
from app.schemas.common import BODY_PROBLEMS, problem_responses
from app.schemas.machines import (
    CrossMachineCreate,
    CrossMachineRead,
    CrossMachineResults,
    CrossMachineSignRequest,
    EquivalentRuntimeRequest,
    EquivalentRuntimeResponse,
)
from app.schemas.stattests import TestResponse
from app.services import machines as service

router = APIRouter(prefix="/v1", tags=["machines"])


def _json(body: dict, status: int = 200, location: str | None = None) -> Response:  # type: ignore[type-arg]
    headers = {"Location": location} if location else None
    return Response(
        to_json(body), status_code=status, media_type="application/json", headers=headers
    )


@router.post(
    "/equivalent-runtime",
    response_model=EquivalentRuntimeResponse,
    dependencies=[JsonBody],
    responses=problem_responses(404, *BODY_PROBLEMS),
)
def equivalent_runtime(body: EquivalentRuntimeRequest, sm: SessionmakerDep) -> Response:
    """Convert runtimes on machine M1 into equivalent runtimes on M2 (PassMark model)."""
    return _json(service.equivalent_runtime(sm, body))


@router.post(
    "/tests/sign-cross-machine",
    response_model=TestResponse,
    dependencies=[JsonBody],
    responses=problem_responses(*BODY_PROBLEMS),
)
def sign_cross_machine(body: CrossMachineSignRequest) -> Response:
    """Run the one-sided sign test of "B better than A", corrected for p_gamma."""
    return _json(service.sign_cross_machine(body))


ComparisonIdPath = stored_id_path(
    "comparison_id",
    "a cross-machine comparison id (x + 23 hex digits), as in the Location of "
    "POST /v1/cross-machine-comparisons",
    "x4f1c0d9a8b7e6f5a4b3c2d1",
)


@router.post(
    "/cross-machine-comparisons",
    response_model=CrossMachineRead,
    status_code=201,
    dependencies=[JsonBody],
    responses={200: {"model": CrossMachineRead, "description": "The same setup exists"}}
    | problem_responses(404, *BODY_PROBLEMS),
)
def create_cross_machine(body: CrossMachineCreate, sm: SessionmakerDep) -> Response:
    """Start the paper's procedure: equivalent runtimes on M2 for A's published table."""
    out, created = service.create(sm, body)
    return _json(out, 201 if created else 200, out["location"])


@router.get(
    "/cross-machine-comparisons/{comparison_id}",
    response_model=CrossMachineRead,
    responses=problem_responses(404),
)
def get_cross_machine(comparison_id: ComparisonIdPath, sm: SessionmakerDep) -> Response:
    """Show a cross-machine comparison: runtimes for B and, once given, the test."""
    return _json(service.get(sm, comparison_id))


@router.post(
    "/cross-machine-comparisons/{comparison_id}/results",
    response_model=CrossMachineRead,
    dependencies=[JsonBody],
    responses=problem_responses(404, 409, *BODY_PROBLEMS),
)
def submit_results(
    comparison_id: ComparisonIdPath, body: CrossMachineResults, sm: SessionmakerDep
) -> Response:
    """Give B's results (run for the equivalent runtimes): the corrected sign test."""
    out, _ = service.submit_results(sm, comparison_id, body)
    return _json(out)
