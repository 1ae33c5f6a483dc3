"""δ-region scans: choose the box of a table that spreads the algorithms' ranks best."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request, Response

from app.api.deps import (
    ApiKeyDep,
    DispatcherDep,
    JsonBody,
    SessionmakerDep,
    SettingsDep,
    TableCachesDep,
    stored_id_path,
)
from app.api.quotas import chunk_charge
from app.api.responses import model_response
from app.schemas.common import (
    KEY_REQUIRED,
    body_problems,
    invalid,
    problem_responses,
    unknown_function,
    unknown_id,
)
from app.schemas.region_scans import RegionScanCreate, RegionScanRead
from app.services import region_scans as service

#: FastAPI's type of a route's ``responses``.
OpenApiResponses = dict[int | str, dict[str, Any]]

router = APIRouter(prefix="/v1/region-scans", tags=["tables"])

if TYPE_CHECKING:
    ScanIdPath = str
else:
    ScanIdPath = stored_id_path(
        "scan_id",
        "a region scan id (r + 23 hex digits), as in the Location of POST /v1/region-scans",
        "r4f1c0d9a8b7e6f5a4b3c2d1",
    )


def _json(body: dict[str, Any], status_code: int = 200) -> Response:
    return model_response(
        RegionScanRead, body, status_code=status_code, headers={"Location": body["location"]}
    )


@router.post(
    "",
    response_model=RegionScanRead,
    status_code=202,
    dependencies=[ApiKeyDep, JsonBody],
    responses=OpenApiResponses(
        {
            200: {"model": RegionScanRead, "description": "The same scan is complete"},
            202: {
                "description": "The scan's tables are queued or building; its URL is in Location",
                "headers": {
                    "Location": {
                        "description": "/v1/region-scans/{id}: poll it for progress and the answer",
                        "schema": {"type": "string"},
                    }
                },
            },
        }
    )
    | problem_responses(
        KEY_REQUIRED,
        unknown_function(),
        *body_problems(invalid("function_id", "Field required", "missing")),
    ),
    summary="Scan box half-widths δ for the region that spreads ranks best",
)
def create_scan(
    request: Request,
    body: RegionScanCreate,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    cache: TableCachesDep,
) -> Response:
    """Scan box half-widths δ with cheap tables and choose the δ that spreads the ranks best."""
    out = service.create(sm, settings, dispatcher, body, cache=cache, charge=chunk_charge(request))
    return _json(out, 200 if out["status"] == "ready" else 202)


@router.get(
    "/{scan_id}",
    response_model=RegionScanRead,
    summary="Show a region scan: progress, then e per δ and the choice",
    responses=problem_responses(unknown_id("scan_id", "region scan", "r4f1c0d9a8b7e6f5a4b3c2d1")),
)
def get_scan(
    scan_id: ScanIdPath, sm: SessionmakerDep, settings: SettingsDep, cache: TableCachesDep
) -> Response:
    """Show a region scan: progress and ETA while it builds, then ranks, e per δ and the choice."""
    return _json(service.get(sm, settings, scan_id, cache=cache))
