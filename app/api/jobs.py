"""Jobs (issue 17 §2): ``Prefer: respond-async`` on heavy routes, then poll, fetch, cancel.

A route that can run as a job calls :func:`submit_as_job` (or :func:`submit_job_response`
from a synchronous route) when :func:`prefers_async` says the client asked for it — or when
``app.domain.cost.admit`` returns ``Mode.JOB``: one call per route. The answer is
``202 Accepted`` with the job's status (:class:`JobRead`), ``Location: /v1/jobs/{id}`` and
``Preference-Applied: respond-async`` (RFC 7240).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from app.api.deps import SessionmakerDep, stored_id_path
from app.api.quotas import charge_cpu
from app.api.responses import JSON, model_response
from app.errors import JobFinished, JobNotDone
from app.schemas.common import PROBLEM_BASE, ProblemExample, problem_responses, unknown_id
from app.schemas.jobs import JobProblemRead, JobProgressRead, JobRead
from app.services import jobs as service

#: FastAPI's type of a route's ``responses``.
OpenApiResponses = dict[int | str, dict[str, Any]]

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

RESPOND_ASYNC = "respond-async"
#: A done job's answer never changes: cached for a year, never revalidated.
IMMUTABLE = "public, max-age=31536000, immutable"
_EXAMPLE_ID = "j5d2c1b0a9f8e7d6c5b4a392"

#: The ``202`` entry of a route that runs as a job on ``Prefer: respond-async``.
ACCEPTED: OpenApiResponses = {
    202: {
        "model": JobRead,
        "description": "Sent with the header Prefer: respond-async (RFC 7240): queued as a job; "
        "poll its Location (GET /v1/jobs/{job_id}), fetch the answer at /v1/jobs/{job_id}/answer "
        "(the bytes this route would have answered), DELETE it to cancel",
        "headers": {
            "Location": {"schema": {"type": "string"}, "description": "/v1/jobs/{job_id}"},
            "Preference-Applied": {"schema": {"type": "string"}, "description": RESPOND_ASYNC},
        },
    }
}


def prefers_async(request: Request) -> bool:
    """Whether the request's ``Prefer`` headers (RFC 7240 §2) hold ``respond-async``.

    Preferences are comma-separated tokens, case-insensitive, with optional ``=value`` and
    ``;`` parameters; several headers add up. A header lookup and a split: microseconds."""
    for header in request.headers.getlist("prefer"):
        for preference in header.split(","):
            token = preference.split(";", 1)[0].split("=", 1)[0].strip().lower()
            if token == RESPOND_ASYNC:
                return True
    return False


def job_owner(request: Request) -> str:
    """Who submits: ``key:`` and 16 hex digits of the SHA-256 of the ``X-API-Key`` sent,
    else ``addr:`` and the client's address (never the key itself)."""
    key = request.headers.get("x-api-key")
    if key:
        return "key:" + hashlib.sha256(key.encode()).hexdigest()[:16]
    return "addr:" + (request.client.host if request.client else "unknown")[:60]


def job_read(job: service.JobStatus) -> JobRead:
    """The :class:`JobRead` of a job's status."""
    problem = job.problem
    return JobRead(
        id=job.id,
        kind=job.kind,  # type: ignore[arg-type]  # a kind the executors know
        status=job.status,  # type: ignore[arg-type]
        location=job.location,
        answer=job.location + "/answer",
        progress=None
        if job.progress is None
        else JobProgressRead(done=job.progress[0], total=job.progress[1]),
        eta_seconds=job.eta_seconds,
        attempt=job.attempt,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        problem=None
        if problem is None
        else JobProblemRead(
            type=PROBLEM_BASE + problem.type,
            title=problem.title,
            status=problem.status,
            detail=problem.detail,
            field=problem.field,
            extra=dict(problem.extra),
        ),
    )


def _status_response(job: service.JobStatus, status_code: int = 200, **headers: str) -> Response:
    extra = {"Cache-Control": "no-store"}  # a status changes until the job finishes
    if job.status in ("queued", "running"):
        extra["Retry-After"] = "1"
    return model_response(JobRead, job_read(job), status_code=status_code, headers=extra | headers)


def submit_job_response(
    request: Request, kind: str, body: BaseModel, *, may_queue_builds: bool
) -> Response:
    """Submit ``body`` as a job of ``kind`` and answer ``202`` (blocking: call it from a
    synchronous route, or through :func:`submit_as_job`)."""
    return _submitted(request, kind, body, may_queue_builds=may_queue_builds)[0]


def _submitted(
    request: Request, kind: str, body: BaseModel, *, may_queue_builds: bool
) -> tuple[Response, bool]:
    """The answer to a job's submission, and whether this submission queued it."""
    state = request.app.state
    submitted = service.submit(
        state.sessionmaker,
        state.dispatcher,
        kind,
        service.canonical_request(body),
        owner=job_owner(request),
        may_queue_builds=may_queue_builds,
    )
    job = submitted.job
    headers = {"Location": job.location, "Vary": "Prefer"}
    asked = prefers_async(request)
    if asked:  # RFC 7240: applied only where it was asked for
        headers["Preference-Applied"] = RESPOND_ASYNC
    elif job.status == "done" and not submitted.queued:
        # a request the server made a job of, sent again once that job is done: its answer
        content, final = service.answer(state.sessionmaker, job.id)
        if final:
            return Response(content, 200, media_type="application/json", headers=headers), False
    return _status_response(job, 202, **headers), submitted.queued


async def submit_as_job(
    request: Request,
    kind: str,
    body: BaseModel,
    *,
    may_queue_builds: bool,
    cost_seconds: float | None = None,
) -> Response:
    """:func:`submit_job_response` off the event loop (the request's canonical bytes and
    the database). A job this call queues is charged to its sender's CPU-seconds quota
    (:mod:`app.api.quotas`): ``cost_seconds``, its estimate, or where the route has none yet
    (a comparison's rows are read by the worker) the synchronous limit."""
    response, queued = await run_in_threadpool(
        _submitted, request, kind, body, may_queue_builds=may_queue_builds
    )
    if queued:
        settings = request.app.state.settings
        charge = cost_seconds if cost_seconds is not None else settings.sync_cpu_limit_seconds
        await charge_cpu(request, charge)
    return response


if TYPE_CHECKING:
    JobIdPath = str
else:
    JobIdPath = stored_id_path(
        "job_id",
        "a job id (j + 23 hex digits), as in the Location of a 202 answer",
        _EXAMPLE_ID,
    )

_UNKNOWN = unknown_id("job_id", "job", _EXAMPLE_ID)


@router.get(
    "/{job_id}",
    response_model=JobRead,
    summary="Status, progress and ETA of a job",
    responses=problem_responses(_UNKNOWN),
)
def get_job(job_id: JobIdPath, sm: SessionmakerDep) -> Response:
    """A job's status (queued, running, done, failed, cancelled), progress and ETA."""
    return _status_response(service.status(sm, job_id))


@router.get(
    "/{job_id}/answer",
    response_class=Response,
    summary="The stored answer of a finished job",
    responses=OpenApiResponses(
        {
            200: {
                "content": {JSON: {}},
                "description": "The bytes the synchronous route would have answered (a failed "
                "job answers its problem with the route's status instead)",
            }
        }
    )
    | problem_responses(
        _UNKNOWN,
        ProblemExample(
            JobNotDone,
            f"job {_EXAMPLE_ID} is running",
            "job_id",
            description="The job is queued, running or was cancelled (Location: its status)",
        ),
    ),
)
def get_answer(job_id: JobIdPath, sm: SessionmakerDep) -> Response:
    """The answer of a done job (``Cache-Control: immutable`` once final)."""
    content, final = service.answer(sm, job_id)
    cache = IMMUTABLE if final else "no-cache"
    return Response(content, media_type=JSON, headers={"Cache-Control": cache})


@router.delete(
    "/{job_id}",
    status_code=202,
    response_model=JobRead,
    summary="Cancel a job",
    responses=OpenApiResponses(
        {
            202: {"description": "Cancelled; a running computation stops at its next check"},
            204: {"description": "The job was already cancelled"},
        }
    )
    | problem_responses(
        _UNKNOWN,
        ProblemExample(
            JobFinished,
            f"job {_EXAMPLE_ID} is done: there is nothing to cancel (its answer is kept)",
            "job_id",
            description="The job is done or failed: its answer or problem is kept",
        ),
    ),
)
def cancel_job(job_id: JobIdPath, sm: SessionmakerDep) -> Response:
    """Cancel a queued or running job (the running computation stops at its next check).

    A done or failed job is not cancelled (409: its answer or problem stays); cancelling a
    cancelled job again answers 204."""
    before = service.status(sm, job_id)
    if before.status == "cancelled":
        return Response(status_code=204)
    return _status_response(service.cancel(sm, job_id), 202)
