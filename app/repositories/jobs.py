"""All SQL of jobs. No commits here: the caller owns the transaction.

Every change of state is one conditional ``UPDATE`` (``WHERE status ...``, and for a
worker's writes ``AND attempt = <its claim>``): two workers, a late message or a cancel
racing a finish never both win.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import CursorResult, and_, insert, or_, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models.jobs import Job

#: States a job never leaves unless its request is sent again.
FINISHED = ("done", "failed", "cancelled")
#: States a new submission of the same request queues again.
RESUBMITTABLE = ("failed", "cancelled")


def _rows(result: Any) -> int:
    assert isinstance(result, CursorResult)
    return int(result.rowcount)


class JobRepository:
    """Store jobs, claim them with a lease, record progress and outcomes."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, job_id: str) -> Job | None:
        """The job (without its request and answer bytes), or ``None``."""
        return self.session.scalars(select(Job).where(Job.id == job_id)).one_or_none()

    def request_of(self, job_id: str) -> bytes | None:
        """The request's canonical JSON bytes."""
        return self.session.scalars(select(Job.request).where(Job.id == job_id)).one_or_none()

    def answer_of(self, job_id: str) -> bytes | None:
        """The stored answer's bytes (``None`` unless done)."""
        return self.session.scalars(
            select(Job.answer).where(Job.id == job_id, Job.status == "done")
        ).one_or_none()

    def add(
        self,
        *,
        job_id: str,
        kind: str,
        digest: str,
        request: bytes,
        owner: str | None,
        may_queue_builds: bool,
        now: datetime,
    ) -> bool:
        """Insert a queued job (not dispatched yet); ``False`` when a job with this id exists."""
        try:
            with self.session.begin_nested():
                self.session.execute(
                    insert(Job).values(
                        id=job_id,
                        kind=kind,
                        request_sha256=digest,
                        status="queued",
                        request=request,
                        owner=owner,
                        may_queue_builds=may_queue_builds,
                        answer_final=False,
                        attempt=0,
                        created_at=now,
                        dispatched_at=None,
                    )
                )
        except IntegrityError:
            return False
        return True

    def requeue(
        self, job_id: str, *, owner: str | None, may_queue_builds: bool, now: datetime
    ) -> bool:
        """Queue again a failed or cancelled job, or a done one whose answer is not final
        (e.g. a comparison answered while tables were building); ``False`` otherwise."""
        result = self.session.execute(
            update(Job)
            .where(
                Job.id == job_id,
                or_(
                    Job.status.in_(RESUBMITTABLE),
                    and_(Job.status == "done", Job.answer_final.is_(False)),
                ),
            )
            .values(
                status="queued",
                owner=owner,
                may_queue_builds=may_queue_builds,
                progress_done=None,
                progress_total=None,
                answer=None,
                answer_final=False,
                problem=None,
                lease_until=None,
                created_at=now,
                dispatched_at=None,
                started_at=None,
                finished_at=None,
            )
        )
        return _rows(result) == 1

    def claim(self, job_id: str, *, now: datetime, lease_until: datetime) -> int | None:
        """Claim a queued job, or a running one whose lease expired (its worker died).

        Returns
        -------
        int or None
            The claim's ``attempt`` (what the worker's later writes name), or ``None`` when
            the job is not there to claim (finished, cancelled, leased by a live worker).
        """
        result = self.session.execute(
            update(Job)
            .where(
                Job.id == job_id,
                or_(
                    Job.status == "queued",
                    and_(Job.status == "running", Job.lease_until < now),
                ),
            )
            .values(
                status="running",
                attempt=Job.attempt + 1,
                lease_until=lease_until,
                started_at=now,
                progress_done=None,
                progress_total=None,
            )
        )
        if _rows(result) != 1:
            return None
        return self.session.scalars(select(Job.attempt).where(Job.id == job_id)).one()

    def renew(self, job_id: str, attempt: int, *, lease_until: datetime) -> bool:
        """Extend a running claim's lease; ``False`` when the claim is no longer the job's
        (cancelled, or re-claimed after this worker's lease expired): the work must stop."""
        result = self.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.attempt == attempt, Job.status == "running")
            .values(lease_until=lease_until)
        )
        return _rows(result) == 1

    def record_progress(
        self, job_id: str, attempt: int, *, done: float, total: float, lease_until: datetime
    ) -> bool:
        """Write the claim's progress (and renew its lease); ``False`` as for :meth:`renew`."""
        result = self.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.attempt == attempt, Job.status == "running")
            .values(progress_done=done, progress_total=total, lease_until=lease_until)
        )
        return _rows(result) == 1

    def finish(
        self, job_id: str, attempt: int, *, answer: bytes, final: bool, now: datetime
    ) -> bool:
        """Store the claim's answer (``done``); ``False`` when the claim is no longer the
        job's (the answer is dropped)."""
        result = self.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.attempt == attempt, Job.status == "running")
            .values(
                status="done",
                answer=answer,
                answer_final=final,
                lease_until=None,
                finished_at=now,
                progress_done=Job.progress_total,
            )
        )
        return _rows(result) == 1

    def fail(self, job_id: str, attempt: int, *, problem: dict[str, Any], now: datetime) -> bool:
        """Store the claim's failure as its problem (``failed``)."""
        result = self.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.attempt == attempt, Job.status == "running")
            .values(status="failed", problem=problem, lease_until=None, finished_at=now)
        )
        return _rows(result) == 1

    def cancel(self, job_id: str, *, now: datetime) -> bool:
        """Cancel a queued or running job; ``False`` when it had finished."""
        result = self.session.execute(
            update(Job)
            .where(Job.id == job_id, Job.status.in_(("queued", "running")))
            .values(status="cancelled", lease_until=None, finished_at=now)
        )
        return _rows(result) == 1

    def to_redispatch(self, *, now: datetime, lost_before: datetime) -> list[str]:
        """Jobs to queue again: running with an expired lease (the worker died), or queued
        and not dispatched since ``lost_before`` (a lost message) or never (the enqueue
        failed)."""
        return list(
            self.session.scalars(
                select(Job.id)
                .where(
                    or_(
                        and_(Job.status == "running", Job.lease_until < now),
                        and_(
                            Job.status == "queued",
                            or_(Job.dispatched_at.is_(None), Job.dispatched_at < lost_before),
                        ),
                    )
                )
                .order_by(Job.created_at)
            )
        )

    def mark_dispatched(self, job_ids: Sequence[str], *, now: datetime) -> None:
        """Record that a message for these jobs was just sent."""
        if job_ids:
            self.session.execute(
                update(Job).where(Job.id.in_(list(job_ids))).values(dispatched_at=now)
            )
