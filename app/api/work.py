"""Bounded synchronous work: admission by cost, a deadline, cancellation, bodies off the loop.

The pieces a route that computes uses (issue 17):

- :func:`admit_sync`: the route's :class:`app.domain.cost.CostEstimate` against
  ``sync_cpu_limit_seconds`` (:func:`app.domain.cost.admit`). A route whose work can be a job
  (comparisons, Pareto rankings, absolute ranks: ``job=True``) gets :class:`Mode` ``JOB`` above
  it, up to ``job_cpu_limit_seconds``, and submits the request as a job
  (:mod:`app.api.jobs`; :class:`RunAsJob` where the estimate is known only inside the
  service); beyond, and above the synchronous limit on the other routes, a 422
  ``cost-too-high`` problem naming the field that drives the cost.
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
import pydantic_core
from fastapi import Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, TypeAdapter, ValidationError

from app.config import Settings
from app.domain.cost import CostEstimate, CostTooHigh, Mode, WorkControl, admit

__all__ = [
    "DISCONNECT_POLL_SECONDS",
    "RunAsJob",
    "admit_sync",
    "body_schema",
    "parse_body",
    "run_controlled",
    "sync_control",
]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)



class RunAsJob(Exception):
    """Raised by an admission hook inside a service: the work is above the synchronous budget
    and is to be submitted as a job; nothing was computed."""

    def __init__(self, estimate: CostEstimate) -> None:
        super().__init__(estimate.operation)
        self.estimate = estimate

DISCONNECT_POLL_SECONDS = 0.2
"""How often a running synchronous request checks that its client is still there."""


def admit_sync(
    estimate: CostEstimate, settings: Settings, *, field: str, job: bool = False
) -> Mode:
    """Where the work runs (:func:`admit`): ``job`` says whether this route's work can be a
    job; a refusal names ``field``."""
    try:
        return admit(
            estimate,
            sync_limit_seconds=settings.sync_cpu_limit_seconds,
            job_limit_seconds=settings.job_cpu_limit_seconds,
            jobs_available=job,
        )
    except CostTooHigh as exc:
        exc.field = field
        raise


def sync_control(settings: Settings, dispatcher: Any = None) -> WorkControl:
    """The control of one synchronous request: its wall-clock deadline, none when the
    ``dispatcher`` runs table builds inside the request (``runs_in_request``: tests, scripts
    with ``queue_url = memory://``), whose time the deadline would count."""
    inline = bool(getattr(dispatcher, "runs_in_request", False))
    return WorkControl(
        deadline_seconds=None
        if inline
        else settings.sync_cpu_limit_seconds * settings.sync_deadline_factor
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


BATCH_ROWS = 2000
"""Rows of a batched list validated per call (about 15 ms): validation holds the GIL, so a
thread alone would not let the event loop run; between batches it does."""


@functools.lru_cache(maxsize=32)
def _adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    annotation = model.model_fields[name].annotation
    assert annotation is not None
    return TypeAdapter(annotation)


def _prefixed(exc: ValidationError, name: str, offset: int) -> RequestValidationError:
    """A batch's errors located in the request: ``body.<name>.<offset + index>...``."""
    return RequestValidationError(
        [
            {**e, "loc": ("body", name, offset + int(e["loc"][0]), *e["loc"][1:])}
            if e.get("loc") and isinstance(e["loc"][0], int)
            else {**e, "loc": ("body", name, *e.get("loc", ()))}
            for e in exc.errors(include_url=False)
        ]
    )


def validate_json_batched(raw: bytes, model: type[M], batched: tuple[str, ...] = ()) -> M:
    """``model.model_validate_json(raw)``, with the lists named in ``batched`` (lists of
    models, no length bound) validated ``BATCH_ROWS`` items at a time when longer (each batch
    as JSON again: the same JSON-mode rules). A worker thread running this lets the event loop
    in between batches."""
    try:
        data = pydantic_core.from_json(raw) if batched else None
    except ValueError:
        data = None  # not JSON: the model's own error
    big = [
        n
        for n in batched
        if isinstance(data, dict) and isinstance(data.get(n), list) and len(data[n]) > BATCH_ROWS
    ]
    if not big:
        return model.model_validate_json(raw)
    assert isinstance(data, dict)
    rows: dict[str, list[Any]] = {}
    for name in big:
        items, adapter, out = data[name], _adapter(model, name), []
        for start in range(0, len(items), BATCH_ROWS):
            chunk = pydantic_core.to_json(
                items[start : start + BATCH_ROWS], inf_nan_mode="constants"
            )
            try:
                out += adapter.validate_json(chunk)
            except ValidationError as exc:
                raise _prefixed(exc, name, start) from None
        rows[name] = out
        data[name] = items[:1]
    rest = model.model_validate_json(pydantic_core.to_json(data, inf_nan_mode="constants"))
    return rest.model_copy(update=rows)


async def parse_body(request: Request, model: type[M], batched: tuple[str, ...] = ()) -> M:
    """The request's JSON body as ``model``, validated in a worker thread
    (:func:`validate_json_batched`: the long lists named in ``batched`` in batches).

    Raises
    ------
    fastapi.exceptions.RequestValidationError
        As FastAPI's own validation (``loc`` starts with ``"body"``): a 422 problem naming the
        field.
    """
    raw = await request.body()
    try:
        return await anyio.to_thread.run_sync(validate_json_batched, raw, model, batched)
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
