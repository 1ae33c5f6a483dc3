"""The CPU registry: PassMark single-thread scores for equivalent runtimes."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from app.api.deps import ApiKeyDep, JsonBody, SessionmakerDep
from app.schemas.common import BODY_PROBLEMS, problem_responses
from app.schemas.cpus import CpuCreate, CpuList, CpuRead
from app.services import cpus as service

router = APIRouter(prefix="/v1/cpus", tags=["machines"])


@router.get("", response_model=CpuList, responses=problem_responses(422))
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
    return CpuList(total=total, items=[CpuRead(**i) for i in items])


@router.get("/{cpu_id}", response_model=CpuRead, responses=problem_responses(404, 422))
def get_cpu(
    cpu_id: Annotated[int, Path(ge=1, le=2**31 - 1, description="a CPU id", examples=[6])],
    sm: SessionmakerDep,
) -> CpuRead:
    """Show one CPU of the registry."""
    return CpuRead(**service.get_cpu(sm, cpu_id))


@router.post(
    "",
    response_model=CpuRead,
    status_code=201,
    dependencies=[ApiKeyDep, JsonBody],
    responses=problem_responses(401, 409, *BODY_PROBLEMS),
)
def add_cpu(body: CpuCreate, response: Response, sm: SessionmakerDep) -> CpuRead:
    """Register a CPU and its score (operators: needs X-API-Key when keys are configured)."""
    cpu = CpuRead(**service.add_cpu(sm, body))
    response.headers["Location"] = f"/v1/cpus/{cpu.id}"
    return cpu
