"""One error hierarchy, rendered as RFC 9457 problem details by ``app.api.problems``.

The classes the numerical core also raises live in :mod:`app.domain.errors` and are re-exported
here unchanged (``app.errors.InvalidInput is app.domain.errors.InvalidInput``); ``AppError`` is
their root, :class:`app.domain.errors.DomainError`. This module adds the errors only the web
layer raises.
"""

from __future__ import annotations

from typing import Any

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
    "InvalidInput",
    "JobFinished",
    "JobNotDone",
    "MethodNotAllowed",
    "NotApplicable",
    "NotFound",
    "PayloadTooLarge",
    "TableNotBuilt",
    "TableNotReady",
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
