"""Health: ``/healthz`` checks the database and the queue; ``/healthz/live`` does no I/O."""

from __future__ import annotations

from fastapi import APIRouter, Response

from app import __version__
from app.api.deps import DispatcherDep, SessionmakerDep, SettingsDep
from app.api.responses import model_response
from app.schemas.health import DependencyHealth, Health, Liveness
from app.services.health import Check, health

router = APIRouter(tags=["health"])


def _dependency(check: Check, *, detail: bool) -> DependencyHealth:
    if check.ok:
        return DependencyHealth(status="ok")
    if not detail:  # a public instance: the message (hosts, ports, paths) stays in the log
        return DependencyHealth(status="down", error=check.error)
    return DependencyHealth(status="down", error=check.error, detail=check.detail)


@router.get(
    "/healthz",
    summary="Check that the database and the queue answer",
    response_model=Health,
    # its 503 (the same report, with Retry-After) is not declared: every declared error of
    # this API is a problem+json, and a probe reads the status code
)
def healthz(sm: SessionmakerDep, dispatcher: DispatcherDep, settings: SettingsDep) -> Response:
    """Ask the database (``SELECT 1``) and the queue (its length), each within its timeout.

    200 with ``status: ok`` when both answer; otherwise 503 with Retry-After and this same
    report, ``degraded`` (the queue is down) or ``down`` (the database is), naming the error
    class of each (and its message, except in production).
    """
    report = health(sm, dispatcher)
    detail = settings.environment != "production"
    answer = Health(
        status=report.status,
        version=report.version,
        database=_dependency(report.database, detail=detail),
        queue=_dependency(report.queue, detail=detail),
    )
    if report.status == "ok":
        return model_response(Health, answer)
    headers = {"Retry-After": str(settings.retry_after_seconds), "Cache-Control": "no-store"}
    return model_response(Health, answer, status_code=503, headers=headers)


@router.get("/healthz/live", summary="Check that the process answers", response_model=Liveness)
async def healthz_live() -> Liveness:
    """Liveness for probes: no database, no queue, no thread (microseconds)."""
    return Liveness(status="ok", version=__version__)
