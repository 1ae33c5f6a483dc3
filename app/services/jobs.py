"""Heavy work as jobs (issue 17 §2): submitted by the API, run by the workers, cancellable.

A job is a request of one *kind* (``comparisons``, ``pareto-rankings``, ``absolute-ranks``)
stored as its canonical JSON bytes; its id is ``j`` + 23 hex digits of the SHA-256 of the
kind and those bytes, so an identical request finds the same job and its stored answer
(a failed or cancelled job, or one whose answer was provisional, runs again). The answer is
stored as the bytes the synchronous route sends; a failure as its problem
(:class:`JobProblem`).

The same rules as table builds: the database, never the queue, says what is done.
:func:`run_job` claims the job with a lease (``job_lease_seconds``), renewed while it works
by a heartbeat thread and by the computation's checks; a job whose worker died is claimed
again once its lease expired (:func:`redispatch_jobs`), and a claim writes its outcome only
while it is the job's current one (``attempt``). The computation runs under a
:class:`~app.domain.cost.WorkControl` whose ``should_stop`` reads the row at most once per
``job_check_seconds`` (a ``DELETE`` stops it at its next check) and whose ``on_progress``
writes progress at the same pace.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from datetime import datetime, timedelta
from typing import Any, Protocol

from pydantic import BaseModel
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain.cost import Cancelled, WorkControl
from app.domain.errors import DomainError
from app.errors import JobFinished, JobNotDone, NotFound
from app.models.jobs import Job
from app.repositories.jobs import JobRepository
from app.services._table_specs import utc_now
from app.services.table_cache import LadderCaches, TableCaches

logger = logging.getLogger(__name__)

SM = sessionmaker[Session]

__all__ = [
    "Executor",
    "JobAnswer",
    "JobDispatcher",
    "JobEnv",
    "JobProblem",
    "JobRun",
    "JobStatus",
    "Submitted",
    "answer",
    "cancel",
    "canonical_request",
    "job_id_for",
    "job_location",
    "redispatch_jobs",
    "run_job",
    "status",
    "submit",
]


class JobDispatcher(Protocol):
    """Where :func:`submit` sends a job (``workers.tasks.HueyDispatcher``,
    ``workers.inline.InlineDispatcher``)."""

    def enqueue_job(self, job_id: str) -> None:
        """Queue the task that runs the job."""


@dataclass(frozen=True)
class JobEnv:
    """What an executor needs of its process: the database, settings, the dispatcher (a
    comparison may queue tables) and the process's caches."""

    sm: SM
    settings: Settings
    dispatcher: Any
    cache: TableCaches
    ladder_cache: LadderCaches


@dataclass(frozen=True)
class JobRun:
    """One run of a job, as its executor sees it.

    Attributes
    ----------
    env : JobEnv
    request : bytes
        The request's canonical JSON bytes (the executor validates them with its model).
    may_queue_builds : bool
        Whether the submitter could have queued table builds (a valid key, or none needed).
    control : WorkControl
        Check it between steps: it records progress and raises :class:`Cancelled`.
    """

    env: JobEnv
    request: bytes
    may_queue_builds: bool
    control: WorkControl


@dataclass(frozen=True)
class JobAnswer:
    """What an executor returns: the synchronous route's body, and whether it is final (a
    comparison answered while its tables build is not: the same request runs again)."""

    content: bytes
    final: bool = True


Executor = Callable[[JobRun], JobAnswer]
"""Runs one kind of job (``app.services.job_kinds.EXECUTORS``)."""


@dataclass(frozen=True)
class JobProblem:
    """A failed job's problem: the members of the problem+json the route would answer."""

    status: int
    type: str
    title: str
    detail: str
    field: str | None = None
    extra: Mapping[str, Any] = dataclass_field(default_factory=dict)

    @classmethod
    def of(cls, exc: BaseException) -> JobProblem:
        """The problem of an exception: a :class:`DomainError` as the API renders it; any
        other exception a 500 naming only its type (the traceback is logged)."""
        if isinstance(exc, DomainError):
            return cls(exc.status, exc.type, exc.title, exc.detail, exc.field, dict(exc.extra))
        return cls(
            500,
            "internal-error",
            "Internal error",
            f"the job failed with {type(exc).__name__}; the workers' log has the details",
        )

    def stored(self) -> dict[str, Any]:
        """As stored in the job's ``problem`` column (JSON)."""
        return {
            "status": self.status,
            "type": self.type,
            "title": self.title,
            "detail": self.detail,
            "field": self.field,
            "extra": dict(self.extra),
        }

    @classmethod
    def from_stored(cls, data: Mapping[str, Any]) -> JobProblem:
        """Read back what :meth:`stored` wrote."""
        return cls(
            int(data["status"]),
            str(data["type"]),
            str(data["title"]),
            str(data["detail"]),
            data.get("field"),
            dict(data.get("extra") or {}),
        )


@dataclass(frozen=True)
class JobStatus:
    """A job as ``GET /v1/jobs/{id}`` shows it (``JobRead``)."""

    id: str
    kind: str
    status: str
    progress: tuple[float, float] | None
    eta_seconds: float | None
    attempt: int
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    problem: JobProblem | None
    final: bool

    @property
    def location(self) -> str:
        return job_location(self.id)


@dataclass(frozen=True)
class Submitted:
    """What :func:`submit` did: the job's status, and whether this call queued it."""

    job: JobStatus
    queued: bool


def job_location(job_id: str) -> str:
    """The URL path of a job's status."""
    return f"/v1/jobs/{job_id}"


def canonical_request(model: BaseModel) -> bytes:
    """The canonical JSON bytes of a validated request (sorted keys, no spaces): equal
    requests give equal bytes, which name the job."""
    text = json.dumps(
        model.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), allow_nan=False
    )
    return text.encode()


def job_id_for(kind: str, request: bytes) -> tuple[str, str]:
    """``(job id, SHA-256)`` of a kind and its request's canonical bytes."""
    digest = hashlib.sha256(kind.encode() + b"\n" + request).hexdigest()
    return "j" + digest[:23], digest


def _status(job: Job, now: datetime) -> JobStatus:
    progress = None
    if job.progress_done is not None and job.progress_total is not None:
        progress = (job.progress_done, job.progress_total)
    eta = None
    if job.status == "running" and progress is not None and job.started_at is not None:
        done, total = progress
        if done > 0:  # the pace of this run since its claim (not the wait in the queue)
            elapsed = max((now - job.started_at).total_seconds(), 0.0)
            eta = max(total - done, 0.0) * elapsed / done
    return JobStatus(
        id=job.id,
        kind=job.kind,
        status=job.status,
        progress=progress,
        eta_seconds=eta,
        attempt=job.attempt,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
        problem=None if job.problem is None else JobProblem.from_stored(job.problem),
        final=job.answer_final,
    )


def submit(
    sm: SM,
    dispatcher: JobDispatcher,
    kind: str,
    request: bytes,
    *,
    owner: str | None,
    may_queue_builds: bool,
    now: datetime | None = None,
) -> Submitted:
    """Store a job for ``request`` (or find the identical one) and queue it.

    An identical request finds the existing job: done (its stored answer), queued or
    running (the same work). A failed or cancelled one, or one whose answer is not final,
    is queued again. The message is sent after the commit, and the job marked dispatched only
    once it is; if the enqueue fails (the error is raised) or the queue loses the message,
    the re-dispatcher sends it again (:func:`redispatch_jobs`).

    Parameters
    ----------
    kind : str
        The executor's kind (``app.services.job_kinds.EXECUTORS``).
    request : bytes
        The request's canonical JSON bytes (:func:`canonical_request`).
    owner : str or None
        Who submitted it (a key's digest or a client address), for quotas and the logs.
    may_queue_builds : bool
        Whether the submitter may queue table builds (the executor runs with it).
    """
    now = now or utc_now()
    job_id, digest = job_id_for(kind, request)
    with session_scope(sm) as session:
        repo = JobRepository(session)
        queued = repo.add(
            job_id=job_id,
            kind=kind,
            digest=digest,
            request=request,
            owner=owner,
            may_queue_builds=may_queue_builds,
            now=now,
        ) or repo.requeue(job_id, owner=owner, may_queue_builds=may_queue_builds, now=now)
    if queued:
        dispatcher.enqueue_job(job_id)  # raises if the queue is down: the job stays queued,
        with session_scope(sm) as session:  # undispatched, and the re-dispatcher sends it
            JobRepository(session).mark_dispatched([job_id], now=now)
    return Submitted(status(sm, job_id, now=now), queued)


def status(sm: SM, job_id: str, *, now: datetime | None = None) -> JobStatus:
    """A job's status, progress and ETA.

    Raises
    ------
    app.errors.NotFound
        No job has this id.
    """
    with session_scope(sm) as session:
        job = JobRepository(session).get(job_id)
        if job is None:
            raise NotFound(f"no job with id {job_id[:40]!r}", field="job_id")
        return _status(job, now or utc_now())


def answer(sm: SM, job_id: str) -> tuple[bytes, bool]:
    """A done job's stored answer and whether it is final.

    Raises
    ------
    app.errors.NotFound
        No job has this id.
    app.errors.JobNotDone
        Queued, running or cancelled (409; ``Location`` of its status, and ``Retry-After``
        while it may still finish).
    app.domain.errors.DomainError
        A failed job raises its problem again (the status the route would have answered).
    """
    with session_scope(sm) as session:
        repo = JobRepository(session)
        job = repo.get(job_id)
        if job is None:
            raise NotFound(f"no job with id {job_id[:40]!r}", field="job_id")
        if job.status == "done":
            content = repo.answer_of(job_id)
            if content is not None:
                return content, job.answer_final
        current = _status(job, utc_now())
    if current.problem is not None:
        raise _replayed(current.problem)
    headers = {"Location": current.location}
    if current.status in ("queued", "running"):
        headers["Retry-After"] = "1"
    raise JobNotDone(
        f"job {job_id} is {current.status}"
        + ("; send its request again to run it again" if current.status == "cancelled" else ""),
        field="job_id",
        headers=headers,
    )


def _replayed(problem: JobProblem) -> DomainError:
    """The stored problem as an error the API renders as it rendered the original."""
    replay = type(
        "StoredJobProblem",
        (DomainError,),
        {"status": problem.status, "type": problem.type, "title": problem.title},
    )
    error: DomainError = replay(problem.detail, field=problem.field, extra=dict(problem.extra))
    return error


def cancel(sm: SM, job_id: str, *, now: datetime | None = None) -> JobStatus:
    """Cancel a queued or running job (a running computation stops at its next check);
    cancelling a cancelled job again changes nothing.

    Raises
    ------
    app.errors.NotFound
        No job has this id.
    app.errors.JobFinished
        The job is done or failed: its answer or problem is kept (409).
    """
    now = now or utc_now()
    with session_scope(sm) as session:
        repo = JobRepository(session)
        job = repo.get(job_id)
        if job is None:
            raise NotFound(f"no job with id {job_id[:40]!r}", field="job_id")
        before = job.status
        if before in ("done", "failed"):
            raise JobFinished(
                f"job {job_id} is {before}: there is nothing to cancel (its "
                f"{'answer' if before == 'done' else 'problem'} is kept)",
                field="job_id",
                headers={"Location": job_location(job_id)},
            )
        repo.cancel(job_id, now=now)
    current = status(sm, job_id, now=now)
    if current.status in ("done", "failed"):  # finished between the read and the update
        raise JobFinished(f"job {job_id} is {current.status}", field="job_id")
    return current


# ------------------------------------------------------------------ the worker's side


class _Claim:
    """A worker's claim of one job: lease renewal, cancellation polls and progress writes,
    each at most once per ``job_check_seconds`` (and a heartbeat every third of the lease)."""

    def __init__(
        self,
        sm: SM,
        settings: Settings,
        job_id: str,
        attempt: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.sm, self.job_id, self.attempt = sm, job_id, attempt
        self.lease = timedelta(seconds=settings.job_lease_seconds)
        self.every = settings.job_check_seconds
        self.clock = clock
        self.lost = threading.Event()  # cancelled, or claimed again by another worker
        self._polled = self._written = -float("inf")
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heart = threading.Thread(target=self._beat, name=f"absrank-job-{job_id}", daemon=True)

    def _renew(self) -> None:
        with self._lock, session_scope(self.sm) as session:
            held = JobRepository(session).renew(
                self.job_id, self.attempt, lease_until=utc_now() + self.lease
            )
        if not held:
            self.lost.set()

    def _beat(self) -> None:
        while not self._stop.wait(self.lease.total_seconds() / 3):
            try:
                self._renew()
            except Exception:  # the next beat retries; the lease covers two misses
                logger.exception("renewing the lease of job %s", self.job_id)

    def __enter__(self) -> _Claim:
        self._heart.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._heart.join()

    def should_stop(self) -> bool:
        now = self.clock()
        if not self.lost.is_set() and now - self._polled >= self.every:
            self._polled = now
            self._renew()
        return self.lost.is_set()

    def on_progress(self, done: float, total: float) -> None:
        now = self.clock()
        if now - self._written < self.every:
            return
        self._written = now
        with self._lock, session_scope(self.sm) as session:
            held = JobRepository(session).record_progress(
                self.job_id,
                self.attempt,
                done=float(done),
                total=float(total),
                lease_until=utc_now() + self.lease,
            )
        if not held:
            self.lost.set()


def run_job(
    env: JobEnv,
    job_id: str,
    executors: Mapping[str, Executor],
    *,
    now: datetime | None = None,
) -> str:
    """Run one job (the task ``run_job``): claim it, run its kind's executor, store the
    outcome. Idempotent: a job that is not there to claim (finished, cancelled, leased by a
    live worker) is left alone.

    The work runs under a deadline of ``sync_deadline_factor × job_cpu_limit_seconds``
    seconds of wall-clock time (a job past it fails with its problem).

    Returns
    -------
    str
        ``done``, ``failed``, ``cancelled`` (stopped, or superseded by another claim) or
        ``skipped`` (nothing to claim).
    """
    settings = env.settings
    now = now or utc_now()
    with session_scope(env.sm) as session:
        repo = JobRepository(session)
        attempt = repo.claim(
            job_id, now=now, lease_until=now + timedelta(seconds=settings.job_lease_seconds)
        )
        if attempt is None:
            return "skipped"
        job = repo.get(job_id)
        request = repo.request_of(job_id)
        assert job is not None
        assert request is not None
        kind, may_queue_builds = job.kind, job.may_queue_builds
    with _Claim(env.sm, settings, job_id, attempt) as claim:
        control = WorkControl(
            settings.sync_deadline_factor * settings.job_cpu_limit_seconds,
            on_progress=claim.on_progress,
            should_stop=claim.should_stop,
        )
        try:
            executor = executors[kind]
            result = executor(JobRun(env, request, may_queue_builds, control))
        except Cancelled:
            return "cancelled"
        except Exception as exc:
            if not isinstance(exc, DomainError):
                logger.exception("job %s (%s) failed", job_id, kind)
            with session_scope(env.sm) as session:
                written = JobRepository(session).fail(
                    job_id, attempt, problem=JobProblem.of(exc).stored(), now=utc_now()
                )
            return "failed" if written else "cancelled"
    with session_scope(env.sm) as session:
        written = JobRepository(session).finish(
            job_id, attempt, answer=result.content, final=result.final, now=utc_now()
        )
    return "done" if written else "cancelled"


def redispatch_jobs(
    sm: SM, settings: Settings, dispatcher: JobDispatcher, *, now: datetime | None = None
) -> int:
    """Queue again the jobs the queue lost: running ones whose lease expired (the worker
    died) and queued ones never dispatched (the enqueue failed) or not for a lease (a lost
    message). Idempotent: the workers' periodic task and the API's loop both run it. Returns
    how many were sent."""
    now = now or utc_now()
    lease = timedelta(seconds=settings.job_lease_seconds)
    with session_scope(sm) as session:
        repo = JobRepository(session)
        job_ids = repo.to_redispatch(now=now, lost_before=now - lease)
        repo.mark_dispatched(job_ids, now=now)
    for job_id in job_ids:
        dispatcher.enqueue_job(job_id)
    if job_ids:
        logger.info("redispatch: %d job(s)", len(job_ids))
    return len(job_ids)
