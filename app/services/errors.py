"""Translate pure-domain ``ValueError`` subclasses into client-facing ``AppError`` s."""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager

from app import errors
from app.domain import errors as domain_errors

_MAP: dict[type[domain_errors.DomainError], type[errors.AppError]] = {
    domain_errors.UnknownFunction: errors.NotFound,
    domain_errors.InvalidInput: errors.InvalidInput,
    domain_errors.NotApplicable: errors.NotApplicable,
    domain_errors.UploadTooLarge: errors.PayloadTooLarge,
}


@contextmanager
def domain_errors_as_problems(
    default_field: str | None = None, *, request_fields: Collection[str] | None = None
) -> Iterator[None]:
    """Re-raise a domain error as the matching ``AppError``, keeping its field name.

    With ``request_fields`` (the request model's field names), a domain field that is not one
    of them (``x`` of a test run on derived values, ``wins``, ...) becomes ``default_field``:
    an answer never names a field the request does not have.

    Raises
    ------
    app.errors.AppError
        ``NotFound`` for unknown ids, ``InvalidInput`` (422) for bad values, ``NotApplicable`` (409)
        when a valid request cannot be answered by the method asked for.
    """
    try:
        yield
    except domain_errors.DomainError as exc:
        target = next((v for k, v in _MAP.items() if isinstance(exc, k)), errors.InvalidInput)
        field = exc.field or default_field
        if request_fields is not None and (field or "").split(".")[0] not in request_fields:
            field = default_field
        raise target(str(exc), field=field) from exc
