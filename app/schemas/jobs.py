"""Jobs (issue 17 §2): heavy requests run by the workers, their status and the job requests.

A client asks for a job with the header ``Prefer: respond-async`` (RFC 7240) on
``POST /v1/comparisons``, ``POST /v1/pareto-rankings`` and ``POST /v1/absolute-ranks``; the
answer is ``202 Accepted`` with a :class:`JobRead` and ``Location: /v1/jobs/{id}``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.comparisons import ComparisonCreate

JobState = Literal["queued", "running", "done", "failed", "cancelled"]
JobKind = Literal["comparisons", "pareto-rankings", "absolute-ranks"]


class JobProgressRead(BaseModel):
    """How far a running job is: ``done`` of ``total`` steps (the computation's own unit)."""

    done: float = Field(examples=[3])
    total: float = Field(examples=[10])


class JobProblemRead(BaseModel):
    """The problem a failed job answers (what the synchronous route would have answered)."""

    type: str = Field(examples=["https://absrank.dev/problems/invalid-input"])
    title: str
    status: int
    detail: str
    field: str | None = None
    extra: dict[str, Any] = Field(
        default_factory=dict, description="the problem's further members (RFC 9457 extensions)"
    )


class JobRead(BaseModel):
    """A job's status; its answer is at ``answer`` once ``status`` is ``done``."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": "j5d2c1b0a9f8e7d6c5b4a392",
                    "kind": "comparisons",
                    "status": "running",
                    "location": "/v1/jobs/j5d2c1b0a9f8e7d6c5b4a392",
                    "answer": "/v1/jobs/j5d2c1b0a9f8e7d6c5b4a392/answer",
                    "progress": {"done": 3, "total": 10},
                    "eta_seconds": 14.2,
                    "attempt": 1,
                    "created_at": "2026-12-06T22:00:00Z",
                    "started_at": "2026-12-06T22:00:01Z",
                    "finished_at": None,
                    "problem": None,
                }
            ]
        }
    )

    id: str = Field(description="j + 23 hex digits, from the kind and the canonical request")
    kind: JobKind
    status: JobState
    location: str = Field(description="this status: GET it to poll, DELETE it to cancel")
    answer: str = Field(description="GET: the stored answer once done (409 before)")
    progress: JobProgressRead | None = Field(
        None, description="what the running computation reported; null before it reports"
    )
    eta_seconds: float | None = Field(
        None, description="seconds left at the pace observed since the job started"
    )
    attempt: int = Field(description="times a worker claimed it (more than 1: a worker died)")
    created_at: datetime = Field(description="when it was (last) submitted")
    started_at: datetime | None = None
    finished_at: datetime | None = None
    problem: JobProblemRead | None = Field(
        None, description="a failed job's problem, as the synchronous route would answer it"
    )


class ComparisonJob(BaseModel):
    """The request of a comparison job: the comparison and the answer's view."""

    model_config = ConfigDict(extra="forbid")

    comparison: ComparisonCreate
    view: Literal["full", "summary"] = "full"
