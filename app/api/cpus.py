"""The CPU registry: PassMark single-thread scores for equivalent runtimes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from app.api.deps import JsonBody, SessionmakerDep, requires
from app.errors import Conflict, NotFound
from app.schemas.common import (
    KEY_REQUIRED,
    LIMIT_TOO_SMALL,
    ProblemExample,
    body_problems,
    invalid,
    problem_responses,
    refused,
)
from app.schemas.cpus import CpuCreate, CpuList, CpuRead
from app.services import cpus as service

router = APIRouter(prefix="/v1/cpus", tags=["machines"])


@router.get(
    "",
    response_model=CpuList,
    summary="Find CPUs by name (PassMark single-thread scores)",
    responses=problem_responses(LIMIT_TOO_SMALL),
)
def list_cpus(
    sm: SessionmakerDep,
    q: Annotated[
        str | None,
        Query(
            max_length=200,
            description="fuzzy, case-insensitive match on the model name (best first)",
            examples=["i7 6700"],
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="page size", examples=[20])] = 20,
) -> CpuList:
    """Find CPUs by name, best matches first (all, by name, without q)."""
    items, total = service.search(sm, q, limit=limit)
    return CpuList(total=total, items=items)


@router.get(
    "/{cpu_id}",
    response_model=CpuRead,
    summary="Show one CPU of the registry",
    responses=problem_responses(
        ProblemExample(
            NotFound,
            "no CPU with id 999999",
            "cpu_id",
            description="Unknown CPU id",
            instance="/v1/cpus/999999",
        ),
        invalid("cpu_id", "Input should be greater than or equal to 1", "greater_than_equal"),
    ),
)
def get_cpu(
    cpu_id: Annotated[int, Path(ge=1, le=2**31 - 1, description="a CPU id", examples=[6])],
    sm: SessionmakerDep,
) -> CpuRead:
    """Show one CPU of the registry."""
    return service.get_cpu(sm, cpu_id)


@router.post(
    "",
    response_model=CpuRead,
    status_code=201,
    dependencies=[requires("cpus"), JsonBody],
    summary="Register a CPU and its score (operators)",
    responses=problem_responses(
        KEY_REQUIRED,
        refused(
            Conflict,
            "a CPU named 'Intel Core i7-8700K' is already registered",
            "name",
            description="A CPU of that name (ignoring case and spacing) is registered",
        ),
        *body_problems(
            invalid("name", "String should have at least 2 characters", "string_too_short")
        ),
    ),
)
def add_cpu(body: CpuCreate, response: Response, sm: SessionmakerDep) -> CpuRead:
    """Register a CPU and its score (operators: needs X-API-Key when keys are configured)."""
    cpu = service.add_cpu(sm, body)
    response.headers["Location"] = f"/v1/cpus/{cpu.id}"
    return cpu
