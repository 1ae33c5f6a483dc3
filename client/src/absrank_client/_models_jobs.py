"""A job of the server (``GET /v1/jobs/{id}``): heavy work run by its workers."""

from __future__ import annotations

from dataclasses import dataclass, field

from absrank_client._models_base import JSON, Progress, Row, _Row

FINISHED = ("done", "failed", "cancelled")


@dataclass(frozen=True)
class Job(_Row):
    """A job's status: ``queued``, ``running``, ``done``, ``failed`` or ``cancelled``.

    ``answer`` is the URL of its answer (the bytes the synchronous route would have sent),
    ``problem`` the problem+json members of a failure, ``attempt`` how many times a worker
    claimed it (more than 1: a worker died and it ran again).
    """

    id: str
    kind: str
    status: str
    location: str
    answer: str
    progress: Progress | None
    eta_seconds: float | None
    attempt: int
    problem: JSON | None
    raw: JSON = field(repr=False)

    @property
    def finished(self) -> bool:
        return self.status in FINISHED

    @property
    def done(self) -> bool:
        return self.status == "done"

    @classmethod
    def parse(cls, raw: JSON) -> Job:
        location = raw.get("location", f"/v1/jobs/{raw['id']}")
        return cls(
            id=raw["id"],
            kind=str(raw.get("kind", "")),
            status=str(raw.get("status", "")),
            location=location,
            answer=raw.get("answer", location + "/answer"),
            progress=Progress.parse(raw.get("progress")),
            eta_seconds=raw.get("eta_seconds"),
            attempt=int(raw.get("attempt", 0)),
            problem=raw.get("problem"),
            raw=raw,
        )

    def row(self) -> Row:
        return {
            "id": self.id,
            "kind": self.kind,
            "status": self.status,
            "done": None if self.progress is None else self.progress.done,
            "total": None if self.progress is None else self.progress.total,
            "eta_seconds": self.eta_seconds,
            "attempt": self.attempt,
        }
