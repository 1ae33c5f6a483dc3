"""Translate pure-domain ``ValueError`` subclasses into client-facing ``AppError`` s."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from app import errors
from app.domain import errors as domain_errors

_MAP: dict[type[domain_errors.DomainError], type[errors.AppError]] = {
    domain_errors.UnknownFunction: errors.NotFound,
    domain_errors.InvalidInput: errors.InvalidInput,
    domain_errors.NotApplicable: errors.NotApplicable,
}


@contextmanager
def domain_errors_as_problems(default_field: str | None = None) -> Iterator[None]:
    """Re-raise a domain error as the matching ``AppError``, keeping its field name.

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
        raise target(str(exc), field=exc.field or default_field) from exc
