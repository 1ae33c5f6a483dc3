"""Health: ``/healthz`` checks the database and the queue; ``/healthz/live`` does no I/O."""

from __future__ import annotations

import anyio
import anyio.to_thread
from fastapi import APIRouter, Response

from app import __version__
from app.api.deps import DispatcherDep, SessionmakerDep, SettingsDep
from app.api.responses import model_response
from app.schemas.health import DependencyHealth, Health, Liveness
from app.services.health import Check, health

router = APIRouter(tags=["health"])

HEALTH_THREADS = 4
"""Threads /healthz may use at once, apart from the request threads."""
_limiters: dict[int, anyio.CapacityLimiter] = {}


def _health_limiter() -> anyio.CapacityLimiter:
    """The health checks' own limiter (one per event loop: a limiter belongs to its loop)."""
    import asyncio

    key = id(asyncio.get_running_loop())
    if key not in _limiters:
        _limiters.clear()  # a new loop (tests start many): the old limiters are dead
        _limiters[key] = anyio.CapacityLimiter(HEALTH_THREADS)
    return _limiters[key]


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
async def healthz(
    sm: SessionmakerDep, dispatcher: DispatcherDep, settings: SettingsDep
) -> Response:
    """Ask the database (``SELECT 1``) and the queue (its length), each within its timeout.

    200 with ``status: ok`` when both answer; otherwise 503 with Retry-After and this same
    report, ``degraded`` (the queue is down) or ``down`` (the database is), naming the error
    class of each (and its message, except in production).
    """
    # its own threads: never queued behind the computations that hold the request threads
    # (app.main: request_threads), so a probe answers while the service is busy
    report = await anyio.to_thread.run_sync(health, sm, dispatcher, limiter=_health_limiter())
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
