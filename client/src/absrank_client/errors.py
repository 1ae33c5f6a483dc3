"""Typed errors: every RFC 9457 problem answer of the API becomes a :class:`ProblemError`.

The class follows the HTTP status (:class:`NotFound`, :class:`Conflict`, :class:`InvalidInput`,
...) and, for the problems a client reacts to, the problem type (:class:`TableNotReady`,
:class:`TableNotBuilt`); ``kind`` is the last segment of the problem's ``type`` URI
(``"not-found"``, ``"table-not-ready"``, ``"invalid-input"``, ...). Nothing needs the
``detail`` text parsed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "AbsrankError",
    "BadRequest",
    "Conflict",
    "ConnectionFailed",
    "InvalidInput",
    "JobFailed",
    "JobTimeout",
    "MethodNotAllowed",
    "NotFound",
    "PayloadTooLarge",
    "ProblemError",
    "RequestTimedOut",
    "ServerError",
    "TableNotBuilt",
    "TableNotReady",
    "Unauthorized",
    "UnsupportedMediaType",
    "problem_from_response",
]


class AbsrankError(Exception):
    """Base class of every error this client raises."""


@dataclass(eq=False)
class ProblemError(AbsrankError):
    """An RFC 9457 problem answer (or any other non-2xx answer), as data.

    Attributes
    ----------
    status : int
        HTTP status of the answer.
    type : str
        The problem type URI (``about:blank`` when the server sent no problem document).
    title, detail : str
        Human-readable summary and explanation.
    field : str or None
        The offending request field (``values.0``, ``function_id``, ``X-API-Key``, ...).
    instance : str or None
        The request path the problem is about.
    errors : tuple of Mapping
        Every validation error of a 422 (``field``, ``message``, ``type``).
    extra : Mapping
        Any further member of the problem document (e.g. ``location`` and ``progress`` of a
        ``table-not-ready`` problem).
    headers : Mapping
        The answer's headers (``Location``, ``Retry-After``, ``Allow`` ...).
    raw : Mapping
        The problem document as received.
    """

    status: int
    type: str
    title: str
    detail: str
    field: str | None = None
    instance: str | None = None
    errors: tuple[Mapping[str, Any], ...] = ()
    extra: Mapping[str, Any] | None = None
    headers: Mapping[str, str] | None = None
    raw: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)

    @property
    def kind(self) -> str:
        """The problem type's slug: ``https://absrank.dev/problems/not-found`` -> ``not-found``."""
        return self.type.rstrip("/").rsplit("/", 1)[-1]

    @property
    def location(self) -> str | None:
        """The ``Location`` the problem names (a table still building), if any."""
        extra = self.extra or {}
        if isinstance(extra.get("location"), str):
            return str(extra["location"])
        return (self.headers or {}).get("location")

    @property
    def message(self) -> str:
        """One line: ``status title: detail (field: f)``."""
        text = f"{self.status} {self.title}"
        if self.detail and self.detail != self.title:
            text += f": {self.detail}"
        if self.field:
            text += f" (field: {self.field})"
        return text

    def __str__(self) -> str:
        return self.message


class BadRequest(ProblemError):
    """400."""


class Unauthorized(ProblemError):
    """401: a valid ``X-API-Key`` is required (pass ``api_key=`` to :class:`Client`)."""


class NotFound(ProblemError):
    """404: unknown function, table, comparison, CPU, ranking or scan id."""


class MethodNotAllowed(ProblemError):
    """405."""


class Conflict(ProblemError):
    """409: a table is not ready or not built, or a method does not apply to the data."""


class TableNotReady(Conflict):
    """409 ``table-not-ready``: the table is building; ``location`` and ``extra['progress']``."""


class TableNotBuilt(Conflict):
    """409 ``table-not-built``: only a key-holder may queue it (``extra['table_request']``)."""


class PayloadTooLarge(ProblemError):
    """413."""


class UnsupportedMediaType(ProblemError):
    """415."""


class InvalidInput(ProblemError):
    """422: invalid payload or parameter; ``field`` names it."""


class ServerError(ProblemError):
    """5xx."""


_BY_STATUS: dict[int, type[ProblemError]] = {
    400: BadRequest,
    401: Unauthorized,
    404: NotFound,
    405: MethodNotAllowed,
    409: Conflict,
    413: PayloadTooLarge,
    415: UnsupportedMediaType,
    422: InvalidInput,
}
_BY_KIND: dict[str, type[ProblemError]] = {
    "table-not-ready": TableNotReady,
    "table-not-built": TableNotBuilt,
}
_MEMBERS = ("type", "title", "status", "detail", "instance", "field", "errors")


def problem_from_response(
    status: int, reason: str, body: object, headers: Mapping[str, str]
) -> ProblemError:
    """The typed error of a non-2xx answer (``body``: the decoded JSON, or None)."""
    doc: Mapping[str, Any] = body if isinstance(body, Mapping) else {}
    type_ = str(doc.get("type") or "about:blank")
    kind = type_.rstrip("/").rsplit("/", 1)[-1]
    cls = _BY_KIND.get(kind) or _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status >= 500 else ProblemError
    field = doc.get("field")
    return cls(
        status=status,
        type=type_,
        title=str(doc.get("title") or reason or f"HTTP {status}"),
        detail=str(doc.get("detail") or ""),
        field=None if field is None else str(field),
        instance=None if doc.get("instance") is None else str(doc["instance"]),
        errors=tuple(e for e in doc.get("errors") or () if isinstance(e, Mapping)),
        extra={k: v for k, v in doc.items() if k not in _MEMBERS},
        headers={k.lower(): v for k, v in headers.items()},
        raw=dict(doc),
    )


class ConnectionFailed(AbsrankError):
    """The server could not be reached (refused, DNS, TLS, or a transport timeout)."""

    def __init__(self, url: str, reason: str) -> None:
        super().__init__(f"cannot reach {url}: {reason}")
        self.url = url
        self.reason = reason


class RequestTimedOut(ConnectionFailed):
    """The server was reached but did not answer within the HTTP timeout.

    Heavy synchronous requests (e.g. a comparison with hundreds of means over runs) can take a
    minute or more; raise ``Client(timeout=...)`` (CLI: ``--http-timeout``). Requests are
    idempotent: the same request again returns the stored answer once it is computed.
    """

    def __init__(self, url: str, timeout: float) -> None:
        AbsrankError.__init__(
            self,
            f"{url} did not answer within {timeout:g} s; raise the HTTP timeout "
            "(Client(timeout=...), --http-timeout) or send the same request again later",
        )
        self.url = url
        self.reason = "read timeout"
        self.timeout = timeout


class JobTimeout(AbsrankError):
    """A job (table build, ladder, region scan, partial comparison) was not ready in time.

    Attributes
    ----------
    url : str
        The job's URL (poll it, or call the same method again later: requests are idempotent).
    waited : float
        Seconds waited.
    progress : Progress or None
        The last progress seen (``done``/``total`` chunks).
    eta_seconds : float or None
        The server's last estimate of the remaining time.
    last : object or None
        The last answer received before time ran out, when the server sent one that still
        waited (e.g. the provisional :class:`~absrank_client.models.RankSet` of ranks awaiting
        a ladder); None when every poll was a ``table-not-ready`` problem.
    """

    last: Any = None

    def __init__(
        self, url: str, waited: float, progress: Any = None, eta_seconds: float | None = None
    ) -> None:
        shown = f"; last progress {progress.done}/{progress.total} chunks" if progress else ""
        eta = f", server ETA {eta_seconds:.0f} s" if eta_seconds is not None else ""
        super().__init__(f"{url} was not ready after {waited:.1f} s{shown}{eta}")
        self.url = url
        self.waited = waited
        self.progress = progress
        self.eta_seconds = eta_seconds


class JobFailed(AbsrankError):
    """A job the client waited on failed on the server (e.g. a table build error)."""

    def __init__(self, url: str, error: str | None) -> None:
        super().__init__(f"{url} failed: {error or 'no error message'}")
        self.url = url
        self.error = error
