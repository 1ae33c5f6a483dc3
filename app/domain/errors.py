"""Errors raised by the numerical core.

Every error is a ``ValueError`` that names the offending request field, so services can
translate it into an ``app.errors.AppError`` (rendered as RFC 9457 problem+json) without
parsing messages.
"""

from __future__ import annotations

from typing import Literal

UploadLimit = Literal["max_upload_bytes", "max_decompressed_bytes", "max_files", "max_rows"]
"""The field of :class:`app.domain.importers.UploadLimits` an :class:`UploadTooLarge` passed."""


class DomainError(ValueError):
    """The numerical core cannot answer this request.

    Parameters
    ----------
    message : str
        Human-readable explanation, shown to the user as the problem ``detail``.
    field : str or None, optional
        Name of the request field at fault (for example ``"points"``), if any.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class UnknownFunction(DomainError):
    """No benchmark function is registered under this id (HTTP 404)."""


class InvalidInput(DomainError):
    """A request value is malformed or out of range (HTTP 422); ``field`` names it."""


class NotApplicable(DomainError):
    """A valid request that the available data cannot answer (HTTP 409)."""


class UploadTooLarge(DomainError):
    """An upload exceeds a size, member-count or row limit (HTTP 413); reading stops there.

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
