"""Fair comparison across machines: equivalent runtime and the corrected sign test."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request, Response

from app.api.deps import JsonBody, SessionmakerDep, requires, stored_id_path
from app.api.http_hygiene import stored
from app.api.paper_formats import NOT_ACCEPTABLE_JSON_ONLY, json_only
from app.api.responses import model_response
from app.errors import Conflict, InvalidInput, NotFound
from app.schemas.common import (
    body_problems,
    invalid,
    problem_responses,
    refused,
    unknown_id,
)
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

#: FastAPI's type of a route's ``responses``.
OpenApiResponses = dict[int | str, dict[str, Any]]

router = APIRouter(prefix="/v1", tags=["machines"])


#: The 404 of a CPU name the registry does not hold.
_UNKNOWN_CPU = refused(
    NotFound,
    "no CPU named 'Acme Turbo 9000' in the registry (GET /v1/cpus?q=...)",
    "cpu1",
    description="A CPU named in cpu1 or cpu2 is not in the registry",
)
#: The 422 of a machine given both or neither of its score and its CPU name.
_ONE_OF_S1_CPU1 = invalid(
    "s1", "give exactly one of s1 (a score) and cpu1 (a CPU name)", "cross_field"
)


@router.post(
    "/equivalent-runtime",
    response_model=EquivalentRuntimeResponse,
    dependencies=[JsonBody],
    summary="Equivalent runtimes on another machine (PassMark model)",
    responses=problem_responses(_UNKNOWN_CPU, *body_problems(_ONE_OF_S1_CPU1)),
)
def equivalent_runtime(body: EquivalentRuntimeRequest, sm: SessionmakerDep) -> Response:
    """Convert runtimes on machine M1 into equivalent runtimes on M2 (PassMark model)."""
    return model_response(EquivalentRuntimeResponse, service.equivalent_runtime(sm, body))


@router.post(
    "/tests/sign-cross-machine",
    response_model=TestResponse,
    dependencies=[JsonBody],
    summary="Sign test of B better than A across machines, corrected for p_gamma",
    responses=problem_responses(
        NOT_ACCEPTABLE_JSON_ONLY,
        *body_problems(refused(InvalidInput, "k must be in [0, n] = [0, 20], got 30", "k")),
    ),
)
def sign_cross_machine(body: CrossMachineSignRequest, request: Request) -> Response:
    """Run the one-sided sign test of "B better than A", corrected for p_gamma."""
    json_only(request)
    return model_response(TestResponse, service.sign_cross_machine(body))


if TYPE_CHECKING:
    ComparisonIdPath = str
else:
    ComparisonIdPath = stored_id_path(
        "comparison_id",
        "a cross-machine comparison id (x + 23 hex digits), as in the Location of "
        "POST /v1/cross-machine-comparisons",
        "x4f1c0d9a8b7e6f5a4b3c2d1",
    )
_UNKNOWN = unknown_id("comparison_id", "cross-machine comparison", "x4f1c0d9a8b7e6f5a4b3c2d1")


@router.post(
    "/cross-machine-comparisons",
    response_model=CrossMachineRead,
    status_code=201,
    dependencies=[requires("cross_machine_comparisons"), JsonBody],
    responses=OpenApiResponses(
        {200: {"model": CrossMachineRead, "description": "The same setup exists"}}
    )
    | problem_responses(_UNKNOWN_CPU, *body_problems(_ONE_OF_S1_CPU1)),
    summary="Start a cross-machine comparison: runtimes for B",
)
def create_cross_machine(body: CrossMachineCreate, sm: SessionmakerDep) -> Response:
    """Start the paper's procedure: equivalent runtimes on M2 for A's published table."""
    out, created = service.create(sm, body)
    return model_response(
        CrossMachineRead,
        out,
        status_code=201 if created else 200,
        headers={"Location": out["location"]},
    )


@router.get(
    "/cross-machine-comparisons/{comparison_id}",
    response_model=CrossMachineRead,
    summary="Show a cross-machine comparison",
    responses=problem_responses(_UNKNOWN),
)
def get_cross_machine(comparison_id: ComparisonIdPath, sm: SessionmakerDep) -> Response:
    """Show a cross-machine comparison: runtimes for B and, once given, the test."""
    out = service.get(sm, comparison_id)
    # immutable once B's results are in (they are final)
    headers = stored(out["status"] == "complete")
    return model_response(CrossMachineRead, out, headers=headers)


@router.post(
    "/cross-machine-comparisons/{comparison_id}/results",
    response_model=CrossMachineRead,
    dependencies=[requires("cross_machine_comparisons"), JsonBody],
    summary="Submit B's results: the corrected sign test",
    responses=problem_responses(
        _UNKNOWN,
        refused(
            Conflict,
            "B's results for this comparison were already submitted and differ; results are "
            "final (start a new comparison, e.g. with another p_gamma)",
            "results",
            description="Other results were already submitted (results are final)",
        ),
        *body_problems(
            invalid(
                "results", "List should have at least 1 item after validation, not 0", "too_short"
            )
        ),
    ),
)
def submit_results(
    comparison_id: ComparisonIdPath, body: CrossMachineResults, sm: SessionmakerDep
) -> Response:
    """Give B's results (run for the equivalent runtimes): the corrected sign test."""
    out, _ = service.submit_results(sm, comparison_id, body)
    return model_response(CrossMachineRead, out)
