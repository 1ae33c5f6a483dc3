"""One error hierarchy, rendered as RFC 9457 problem details by ``app.api.problems``."""

from __future__ import annotations

from typing import Any, ClassVar


class AppError(Exception):
    """Base of all errors that reach a client."""

    status: ClassVar[int] = 500
    title: ClassVar[str] = "Internal error"
    type: ClassVar[str] = "internal-error"

    def __init__(
        self,
        detail: str | None = None,
        *,
        field: str | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.detail = detail or (self.__doc__ or self.title).strip()
        self.field = field
        self.extra = extra or {}
        self.headers = headers or {}
        super().__init__(self.detail)


class NotFound(AppError):
    """The resource does not exist."""

    status = 404
    title = "Not found"
    type = "not-found"


class InvalidInput(AppError):
    """The payload is not valid."""

    status = 422
    title = "Invalid input"
    type = "invalid-input"


class Conflict(AppError):
    """The request conflicts with the current state of the resource."""

    status = 409
    title = "Conflict"
    type = "conflict"


class TableNotReady(Conflict):
    """The table this request needs is still being built."""

    title = "Table not ready"
    type = "table-not-ready"


class TableNotBuilt(Conflict):
    """The table this request needs does not exist, and this request may not queue it."""

    title = "Table not built"
    type = "table-not-built"


class NotApplicable(Conflict):
    """The method asked for does not apply to this data."""

    title = "Method not applicable"
    type = "not-applicable"


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


class PayloadTooLarge(AppError):
    """The request body exceeds the configured limit."""

    status = 413
    title = "Payload too large"
    type = "payload-too-large"
