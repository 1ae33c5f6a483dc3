"""Bounded synchronous work: admission by cost, a deadline, cancellation, bodies off the loop.

The pieces a route that computes uses (issue 17):

- :func:`admit_sync`: the route's :class:`app.domain.cost.CostEstimate` against
  ``sync_cpu_limit_seconds`` (:func:`app.domain.cost.admit`); above it a 422 ``cost-too-high``
  problem naming the field that drives the cost. Jobs are not available yet
  (``JOBS_AVAILABLE``); when they are, :class:`app.domain.cost.Mode` ``JOB`` is the route's to
  act on.
- :func:`run_controlled`: the work in a worker thread with a :class:`WorkControl` whose
  deadline is ``sync_cpu_limit_seconds × sync_deadline_factor`` of wall-clock time, cancelled
  when the client disconnects (an asyncio task polls ``request.is_disconnected()``), so no
  thread keeps computing for nobody.
- :func:`parse_body`: a JSON body read as bytes and validated in a worker thread
  (``Model.model_validate_json``), so a 6.7 MB body does not hold the event loop; its 422
  names the fields as FastAPI's own validation does.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from typing import Any, TypeVar

import anyio.to_thread
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError

from app.config import Settings
from app.domain.cost import CostEstimate, CostTooHigh, Mode, WorkControl, admit

__all__ = [
    "DISCONNECT_POLL_SECONDS",
    "JOBS_AVAILABLE",
    "admit_sync",
    "body_schema",
    "parse_body",
    "run_controlled",
    "sync_control",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

JOBS_AVAILABLE = False
"""Whether requests above the synchronous budget can become jobs (wired when jobs exist)."""

DISCONNECT_POLL_SECONDS = 0.2
"""How often a running synchronous request checks that its client is still there."""


def admit_sync(estimate: CostEstimate, settings: Settings, *, field: str) -> Mode:
    """Where the work runs (:func:`admit`); a refusal names ``field``."""
    try:
        return admit(
            estimate,
            sync_limit_seconds=settings.sync_cpu_limit_seconds,
            job_limit_seconds=settings.job_cpu_limit_seconds,
            jobs_available=JOBS_AVAILABLE,
        )
    except CostTooHigh as exc:
        exc.field = field
        raise


def sync_control(settings: Settings) -> WorkControl:
    """The control of one synchronous request: its wall-clock deadline."""
    return WorkControl(
        deadline_seconds=settings.sync_cpu_limit_seconds * settings.sync_deadline_factor
    )


async def _watch(request: Request, control: WorkControl) -> None:
    while not control.cancelled:
        if await request.is_disconnected():
            control.cancel()
            return
        await asyncio.sleep(DISCONNECT_POLL_SECONDS)


async def run_controlled(
    request: Request,
    control: WorkControl,
    work: Callable[..., T],
    /,
    *args: Any,
    **kwargs: Any,
) -> T:
    """``work(*args, control=control, **kwargs)`` in a worker thread; ``control`` is cancelled
    when the client disconnects (the request's body must have been read already)."""
    watcher = asyncio.create_task(_watch(request, control))
    try:
        return await anyio.to_thread.run_sync(
            functools.partial(work, *args, control=control, **kwargs)
        )
    finally:
        watcher.cancel()


async def parse_body(request: Request, model: type[M]) -> M:
    """The request's JSON body as ``model``, validated in a worker thread.

    Raises
    ------
    fastapi.exceptions.RequestValidationError
        As FastAPI's own validation (``loc`` starts with ``"body"``): a 422 problem naming the
        field.
    """
    raw = await request.body()
    try:
        return await anyio.to_thread.run_sync(model.model_validate_json, raw)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e.get("loc", ()))} for e in exc.errors(include_url=False)]
        ) from None


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``openapi_extra`` of a route that parses its body with :func:`parse_body`: the same
    required JSON body of ``model`` as a body parameter declares (add the model to
    ``app.api.openapi.EXTRA_COMPONENTS``)."""
    return {
        "requestBody": {
            "required": True,
            "content": {
                "application/json": {"schema": {"$ref": f"#/components/schemas/{model.__name__}"}}
            },
        }
    }
