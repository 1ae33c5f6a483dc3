"""The one error hierarchy: every failure a client is told about.

The root :class:`DomainError` is a ``ValueError`` (the numerical core raises it for values it
cannot answer) that carries what a client needs to hear: a ``detail``, the request ``field`` at
fault, and members to add (``extra``). Each class classifies the failure by three class
attributes, the RFC 9457 problem ``status``, ``title`` and ``type`` slug, which
``app.api.problems`` renders as ``application/problem+json``; nothing here imports a web
library. ``app.errors`` re-exports these classes (``app.errors.InvalidInput`` *is*
:class:`InvalidInput`, ``app.errors.AppError`` is :class:`DomainError`) and adds the errors only
the web layer raises (401, 405, 415, tables not ready), so no error is translated into another.

The classification:

- :class:`NotFound` (404): an unknown id; :class:`UnknownFunction` for a benchmark function.
- :class:`InvalidInput` (422): a request value is malformed or out of range; ``field`` names it.
- :class:`Conflict` (409), and :class:`NotApplicable`: a valid request that the available data
  (or the method asked for) cannot answer.
- :class:`PayloadTooLarge` (413), and :class:`UploadTooLarge`: an upload exceeds a size,
  member-count or row limit; reading stops there.

The one-line docstrings of the classes a caller may raise without a detail are that detail
(``InvalidInput()`` says "The payload is not valid."): keep them as they are.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

UploadLimit = Literal["max_upload_bytes", "max_decompressed_bytes", "max_files", "max_rows"]
"""The field of :class:`app.domain.importers.UploadLimits` an :class:`UploadTooLarge` passed."""


class DomainError(ValueError):
    """Base of all errors that reach a client.

    Parameters
    ----------
    detail : str or None, optional
        Human-readable explanation, the problem ``detail`` (default: the class docstring).
    field : str or None, optional
        Name of the request field at fault (for example ``"points"``), if any.
    extra : dict or None, optional
        Members the problem adds (``{"index": 3}``, a ``table_request``...).
    headers : dict or None, optional
        Response headers the web layer adds (``Location``); the numerical core sets none.

    Attributes
    ----------
    status : int
        Class attribute: the problem ``status`` (500 here: an error nobody classified).
    title : str
        Class attribute: the problem ``title``.
    type : str
        Class attribute: the problem ``type`` slug (``app.api.problems`` prefixes the base URI).
    detail, field, extra, headers
        As given.
    """

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
        self.extra: dict[str, Any] = extra or {}
        self.headers: dict[str, str] = headers or {}
        super().__init__(self.detail)


class NotFound(DomainError):
    """The resource does not exist."""

    status = 404
    title = "Not found"
    type = "not-found"


class UnknownFunction(NotFound):
    """No benchmark function is registered under this id."""


class InvalidInput(DomainError):
    """The payload is not valid."""

    status = 422
    title = "Invalid input"
    type = "invalid-input"


class Conflict(DomainError):
    """The request conflicts with the current state of the resource."""

    status = 409
    title = "Conflict"
    type = "conflict"


class NotApplicable(Conflict):
    """The method asked for does not apply to this data."""

    title = "Method not applicable"
    type = "not-applicable"


class PayloadTooLarge(DomainError):
    """The request body exceeds the configured limit."""

    status = 413
    title = "Payload too large"
    type = "payload-too-large"


class UploadTooLarge(PayloadTooLarge):
    """An upload exceeds a size, member-count or row limit; reading stops there.

    Parameters
    ----------
    message : str
        What was passed, for a person.
    limit : UploadLimit
        The ``UploadLimits`` field that was passed (services name their setting for it).
    field : str or None, optional
        The request field that carried the upload.
    """

    def __init__(self, message: str, *, limit: UploadLimit, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.limit: UploadLimit = limit
