"""v_f tables: request (built by workers), inspect, list."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Response

from app.api.deps import (
    ApiKeyDep,
    DispatcherDep,
    JsonBody,
    OffsetQuery,
    SessionmakerDep,
    SettingsDep,
    TableIdPath,
)
from app.config import Settings
from app.schemas.common import (
    KEY_REQUIRED,
    body_problems,
    invalid,
    problem_responses,
    unknown_function,
    unknown_id,
)
from app.schemas.tables import LadderRead, Progress, TableCreate, TableList, TableRead
from app.services import tables as service
from app.services.errors import domain_errors_as_problems

router = APIRouter(prefix="/v1/tables", tags=["tables"])


def _read(view: service.TableView) -> TableRead:
    return TableRead(
        id=view.id,
        location=view.location,
        function_id=view.function_id,
        status=view.status,
        progress=Progress(**view.progress),
        eta_seconds=view.eta_seconds,
        error=view.error,
        spec=view.spec,
        spec_hash=view.spec_hash,
        n=view.n,
        seed=view.seed,
        chunk_size=view.chunk_size,
        n_chunks=view.n_chunks,
        created_at=view.created_at,
        started_at=view.started_at,
        finished_at=view.finished_at,
        data_sha256=view.data_sha256,
        max_interp_error=view.max_interp_error,
        summary=view.summary,
        provenance=view.provenance,
    )


def _create_ladder(
    body: TableCreate,
    response: Response,
    sm: service.SM,
    settings: Settings,
    dispatcher: service.Dispatcher,
) -> LadderRead:
    with domain_errors_as_problems():
        views = service.request_ladder(
            sm, settings, dispatcher, body.function_id, log2n=body.log2n, seed=body.seed
        )
    views = [service.get_table(sm, v.id) for v in views]  # an inline dispatcher may be done
    ladder = LadderRead.model_validate(service.describe_ladder(settings, views))
    waiting = [v for v in views if not v.ready]
    if waiting:
        response.headers["Location"] = waiting[0].location
    response.status_code = 202 if waiting else 200
    return ladder


@router.post(
    "",
    response_model=TableRead | LadderRead,
    status_code=202,
    dependencies=[ApiKeyDep, JsonBody],
    responses={
        200: {
            "model": TableRead | LadderRead,
            "description": "The table (every table of the ladder) exists and is ready",
        },
        202: {
            "description": "The table is queued or building (for a ladder: some level is); the "
            "Location header names it (the first level still building)",
            "headers": {
                "Location": {
                    "description": "/v1/tables/{id}: poll it for progress",
                    "schema": {"type": "string"},
                }
            },
        },
    }
    | problem_responses(
        KEY_REQUIRED,
        unknown_function(),
        *body_problems(
            invalid("log2n", "Input should be less than or equal to 30", "less_than_equal")
        ),
    ),
    summary="Request a v_f table (or a ladder of nested regions)",
)
def create_table(
    body: TableCreate,
    response: Response,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
) -> TableRead | LadderRead:
    """Request a table; 202 + Location while it builds, 200 when the same spec is ready.

    ``delta`` samples the box around x* instead of the domain: one number for the cube
    ``[x* - δ, x* + δ]^d ∩ domain``, or d numbers for ``Π_i [x*_i - δ_i, x*_i + δ_i] ∩ domain``
    (422 naming ``delta`` for a list of the wrong length, ``delta.i`` for a bad entry).

    With ``"ladder": true`` (and no ``delta``) request the ladder of nested regions of a function
    with known x* instead: the whole domain (the default table when ``log2n`` and
    ``seed`` are the defaults) and boxes ``[x* - h_j, x* + h_j] ∩ domain`` shaped like the
    function's local sublevel sets (the bounding box ``a`` of a quadratic form fitted to
    ``(f - f*)^(2/p)`` near x*, the cube when the fit fails), ``h_j,i = min(R, σ_j·a_i)``,
    ``σ_j = σ_0 / nested_factor^j``: the short axes shrink first. Levels are added until the
    box's volume fraction reaches ``10^nested_min_log10_volume``, at most ``nested_levels``.
    Each level is an ordinary table of ``2^log2n`` points queued like any other, all at once.
    The answer lists every level (id, location, status, progress, half-widths), the shape
    (half-widths, degree, fit residual, fallback reason) and why the ladder has that many
    levels; 200 when all are ready, else 202 with the Location of the first level still
    building. A function without x* (or with a plateau at f*) is refused with 422 on
    ``function_id``.
    """
    if body.ladder:
        return _create_ladder(body, response, sm, settings, dispatcher)
    with domain_errors_as_problems():
        view, _ = service.request_table(
            sm,
            settings,
            dispatcher,
            function_id=body.function_id,
            delta=body.delta,
            log2n=body.log2n,
            seed=body.seed,
        )
    view = service.get_table(sm, view.id)  # an inline dispatcher may have finished it already
    response.headers["Location"] = view.location
    response.status_code = 200 if view.ready else 202
    return _read(view)


@router.get(
    "/{table_id}",
    response_model=TableRead,
    summary="Show a table: status, progress, ETA, spec, provenance",
    responses=problem_responses(unknown_id("table_id", "table", "t3f1c0d9a8b7e6f5a4b3c2d1")),
)
def get_table(table_id: TableIdPath, sm: SessionmakerDep) -> TableRead:
    """Show a table: status, progress (chunks), ETA, spec, quantiles, provenance."""
    return _read(service.get_table(sm, table_id))


@router.get(
    "",
    response_model=TableList,
    summary="List tables, newest first",
    responses=problem_responses(
        invalid(
            "status",
            "String should match pattern '^(building|merging|ready|failed)$'",
            "string_pattern_mismatch",
        )
    ),
)
def list_tables(
    sm: SessionmakerDep,
    function_id: Annotated[
        str | None,
        Query(
            max_length=200, description="only tables of this function", examples=["bbob/f15/i1/d10"]
        ),
    ] = None,
    status: Annotated[
        str | None,
        Query(
            pattern="^(building|merging|ready|failed)$",
            description="only tables in this status",
            examples=["ready"],
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="page size", examples=[100])] = 100,
    offset: OffsetQuery = 0,
) -> TableList:
    """List tables, newest first, filtered by function and status."""
    views, total = service.list_tables(
        sm, function_id=function_id, status=status, limit=limit, offset=offset
    )
    return TableList(total=total, items=[_read(v) for v in views])
