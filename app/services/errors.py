"""Name the request field of an error the numerical core raised.

``app.domain.errors`` and ``app.errors`` are one hierarchy (``app.errors.InvalidInput`` is
``app.domain.errors.InvalidInput``), so nothing is translated: a domain error already carries
its problem's status, title and type. What a service adds is the request field: the domain
names its own arguments (``x`` of a test run on derived values) or none.
"""

from __future__ import annotations

import weakref
from collections.abc import Collection, Iterator
from contextlib import contextmanager

from app.domain.errors import DomainError

#: Errors whose field a block already settled: an enclosing block leaves them as they are.
_SETTLED: weakref.WeakSet[DomainError] = weakref.WeakSet()


@contextmanager
def domain_errors_as_problems(
    default_field: str | None = None, *, request_fields: Collection[str] | None = None
) -> Iterator[None]:
    """Re-raise an error of the block with its field settled: its own, else ``default_field``.

    With ``request_fields`` (the request model's field names), a domain field that is not one
    of them (``x`` of a test run on derived values, ``wins``, ...) becomes ``default_field``:
    an answer never names a field the request does not have. The error itself (its class,
    detail, extra members and headers) is re-raised unchanged.

    Raises
    ------
    app.errors.AppError
        ``NotFound`` for unknown ids, ``InvalidInput`` (422) for bad values, ``NotApplicable`` (409)
        when a valid request cannot be answered by the method asked for.
    """
    try:
        yield
    except DomainError as exc:
        if exc not in _SETTLED:
            field = exc.field or default_field
            if request_fields is not None and (field or "").split(".")[0] not in request_fields:
                field = default_field
            exc.field = field
            _SETTLED.add(exc)
        raise
