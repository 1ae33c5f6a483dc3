"""ORM model of the ``jobs`` aggregate: heavy work run by the workers (issue 17 §2).

A job is identified by its kind and the canonical bytes of its request (``j`` + 23 hex
digits of their SHA-256), so that an identical request finds the same job and its stored
answer. ``status`` moves ``queued → running → done | failed | cancelled``; a failed or
cancelled job is queued again when its request is sent again. The database, never the queue,
says what is done: a running job holds a lease (``lease_until``) that its worker renews, and
the re-dispatcher queues again a job whose lease expired (its worker died) or whose message
was lost. ``attempt`` counts the claims: a worker writes its outcome only while its claim is
the current one.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    Double,
    Index,
    Integer,
    LargeBinary,
    String,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.tables import UTCDateTime, _in

JOB_STATUSES = ("queued", "running", "done", "failed", "cancelled")


class Job(Base):
    """One job: its request (canonical JSON bytes), state, progress and outcome.

    ``request`` and ``answer`` are deferred with raiseload (megabytes for a big comparison):
    read them only with ``undefer``. ``answer`` holds the bytes the synchronous route would
    have sent; ``problem`` the problem+json members of a failure (``app.services.jobs``
    reads it as a ``JobProblem``).
    """

    __tablename__ = "jobs"
    __table_args__ = (
        CheckConstraint(_in("status", JOB_STATUSES), name="status"),
        Index("ix_jobs_status_lease_until", "status", "lease_until"),
    )

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    request_sha256: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    request: Mapped[bytes] = mapped_column(LargeBinary, deferred=True, deferred_raiseload=True)
    owner: Mapped[str | None] = mapped_column(String(80))
    may_queue_builds: Mapped[bool] = mapped_column(Boolean)
    progress_done: Mapped[float | None] = mapped_column(Double)
    progress_total: Mapped[float | None] = mapped_column(Double)
    answer: Mapped[bytes | None] = mapped_column(
        LargeBinary, deferred=True, deferred_raiseload=True
    )
    answer_final: Mapped[bool] = mapped_column(Boolean, default=False)
    problem: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"Job(id={self.id!r}, kind={self.kind!r}, status={self.status!r})"
