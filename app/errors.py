"""One error hierarchy, rendered as RFC 9457 problem details by ``app.api.problems``.

The classes the numerical core also raises live in :mod:`app.domain.errors` and are re-exported
here unchanged (``app.errors.InvalidInput is app.domain.errors.InvalidInput``); ``AppError`` is
their root, :class:`app.domain.errors.DomainError`. This module adds the errors only the web
layer raises.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from app.domain.errors import (
    Conflict,
    DomainError,
    InvalidInput,
    NotApplicable,
    NotFound,
    PayloadTooLarge,
)

__all__ = [
    "AppError",
    "Conflict",
    "DatabaseUnavailable",
    "Forbidden",
    "InvalidHeader",
    "InvalidInput",
    "JobFinished",
    "JobNotDone",
    "MethodNotAllowed",
    "NotApplicable",
    "NotFound",
    "PayloadTooLarge",
    "QueueUnavailable",
    "QuotaLimit",
    "ServiceUnavailable",
    "TableNotBuilt",
    "TableNotReady",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
]

AppError = DomainError
"""Base of all errors that reach a client (the root of :mod:`app.domain.errors`)."""


class TableNotReady(Conflict):
    """The table this request needs is still being built."""

    title = "Table not ready"
    type = "table-not-ready"


class TableNotBuilt(Conflict):
    """The table this request needs does not exist, and this request may not queue it."""

    title = "Table not built"
    type = "table-not-built"


class JobNotDone(Conflict):
    """The job has no answer (yet): it is queued, running or was cancelled."""

    title = "Job not done"
    type = "job-not-done"


class JobFinished(Conflict):
    """The job has finished (its answer or problem is kept): there is nothing to cancel."""

    title = "Job finished"
    type = "job-finished"


class Unauthorized(AppError):
    """A valid X-API-Key header is required for this operation."""

    status = 401
    title = "Unauthorized"
    type = "unauthorized"

    def __init__(self, detail: str | None = None, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        # RFC 9110 §11.6.1: a 401 names the scheme the client must use
        self.headers.setdefault("WWW-Authenticate", 'ApiKey header="X-API-Key"')


class Forbidden(AppError):
    """The request's API key is valid, but its role does not allow this operation."""

    status = 403
    title = "Forbidden"
    type = "forbidden"


@dataclass(frozen=True)
class QuotaLimit:
    """One quota: ``amount`` of ``name`` per ``window_seconds``, set by ``setting``."""

    name: Literal["requests", "cpu_seconds", "chunks"]
    amount: float
    window_seconds: int
    setting: str


class TooManyRequests(AppError):
    """A quota of this key or client address is used up (``Retry-After`` says for how long).

    The problem names the limit: ``limit_name`` (``requests``, ``cpu_seconds``, ``chunks``),
    ``limit`` (its amount per window), ``window_seconds``, ``limit_setting`` and
    ``retry_after_seconds`` (as the ``Retry-After`` header).
    """

    status = 429
    title = "Too many requests"
    type = "too-many-requests"

    def __init__(
        self, limit: QuotaLimit, retry_after_seconds: float, *, who: str, asked: float = 1
    ) -> None:
        retry = max(1, math.ceil(retry_after_seconds))
        asking = f" (this request asks for {asked:g})" if asked != 1 else ""
        super().__init__(
            f"{who} used up its quota of {limit.amount:g} {limit.name.replace('_', '-')} per "
            f"{limit.window_seconds} s ({limit.setting}){asking}; retry in {retry} s",
            extra={
                "limit_name": limit.name,
                "limit": limit.amount,
                "window_seconds": limit.window_seconds,
                "limit_setting": limit.setting,
                "retry_after_seconds": retry,
            },
            headers={"Retry-After": str(retry)},
        )
        self.limit = limit
        self.retry_after_seconds = retry


class MethodNotAllowed(AppError):
    """The resource does not support this HTTP method."""

    status = 405
    title = "Method not allowed"
    type = "method-not-allowed"


class UnsupportedMediaType(AppError):
    """The request body's Content-Type is not one this endpoint reads."""

    status = 415
    title = "Unsupported media type"
    type = "unsupported-media-type"


class InvalidHeader(AppError):
    """A request header is malformed (e.g. a ``Content-Length`` that is not a number)."""

    status = 400
    title = "Invalid header"
    type = "invalid-header"


class ServiceUnavailable(AppError):
    """A dependency of the service (its database or its queue) does not answer; try again."""

    status = 503
    title = "Service unavailable"
    type = "service-unavailable"

    def __init__(self, detail: str | None = None, *, retry_after: int = 30, **kwargs: Any) -> None:
        super().__init__(detail, **kwargs)
        # RFC 9110 §10.2.3: when to ask again; the problem names the dependency that failed
        self.headers.setdefault("Retry-After", str(retry_after))
        self.retry_after = retry_after


class DatabaseUnavailable(ServiceUnavailable):
    """The database does not answer (down, unreachable, or locked past its timeout)."""

    type = "database-unavailable"


class QueueUnavailable(ServiceUnavailable):
    """The task queue does not answer: nothing was queued; the database keeps the work."""

    type = "queue-unavailable"
