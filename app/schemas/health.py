"""The answers of ``GET /healthz`` and ``GET /healthz/live``."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class DependencyHealth(BaseModel):
    """One dependency's check: ``ok``, or ``down`` with the class of the error it raised."""

    model_config = ConfigDict(frozen=True)

    status: Literal["ok", "down"]
    error: str | None = Field(
        None, description="class of the error the check raised (e.g. ConnectionError)"
    )
    detail: str | None = Field(
        None, description="its message's first line (not in production: it is logged)"
    )


class Health(BaseModel):
    """``GET /healthz``: the database and the queue checked, each within its timeout.

    ``ok``: both answer. ``degraded``: the database answers but the queue does not (stored
    answers and ranks on ready tables work; nothing new can be queued). ``down``: the database
    does not answer. Anything but ``ok`` is a 503 with Retry-After.
    """

    model_config = ConfigDict(
        frozen=True,
        json_schema_extra={
            "examples": [
                {
                    "status": "degraded",
                    "version": "0.1.0",
                    "database": {"status": "ok"},
                    "queue": {
                        "status": "down",
                        "error": "ConnectionError",
                        "detail": "Error 111 connecting to 127.0.0.1:6390. Connection refused.",
                    },
                }
            ]
        },
    )

    status: Literal["ok", "degraded", "down"]
    version: str
    database: DependencyHealth
    queue: DependencyHealth


class Liveness(BaseModel):
    """``GET /healthz/live``: the process answers (no database or queue is asked)."""

    model_config = ConfigDict(frozen=True)

    status: Literal["ok"]
    version: str
