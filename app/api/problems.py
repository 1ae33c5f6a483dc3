"""RFC 9457 ``application/problem+json`` rendering for every error the API returns."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy import exc as sa_exc
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.db import unavailable_reason
from app.errors import AppError, DatabaseUnavailable, ServiceUnavailable
from app.schemas.common import PROBLEM_BASE, PROBLEM_MEDIA_TYPE

logger = logging.getLogger(__name__)

#: Longest ``instance`` and ``detail`` echoed back: a request path or id can be huge.
MAX_INSTANCE_CHARS = 200
MAX_DETAIL_CHARS = 2000
#: What FastAPI says when the body is not UTF-8 JSON that Python can load (it answers 400).
_FASTAPI_BODY_PARSE_ERROR = "There was an error parsing the body"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def problem_response(
    *,
    status: int,
    type_: str,
    title: str,
    detail: str,
    instance: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    """Build a problem+json response (RFC 9457 §3)."""
    body: dict[str, Any] = {
        "type": PROBLEM_BASE + type_,
        "title": title,
        "status": status,
        "detail": _cut(detail, MAX_DETAIL_CHARS),
        "instance": _cut(instance, MAX_INSTANCE_CHARS),
    }
    reserved = set(body)
    body.update({k: v for k, v in extra.items() if v is not None and k not in reserved})
    return JSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


def _loc_to_field(loc: tuple[Any, ...] | list[Any]) -> str:
    # "<...>" parts are the tags of tagged unions (e.g. one number or a list): not fields
    parts = [
        str(p)
        for p in loc
        if p not in ("body", "query", "path", "header") and not str(p).startswith("<")
    ]
    return ".".join(parts) if parts else "body"


def error_response(exc: AppError, instance: str) -> JSONResponse:
    """The problem+json answer of ``exc`` at ``instance`` (also for ASGI middlewares, which
    answer before the exception handlers)."""
    return problem_response(
        status=exc.status,
        type_=exc.type,
        title=exc.title,
        detail=exc.detail,
        instance=instance,
        headers=exc.headers,
        field=exc.field,
        **exc.extra,
    )


async def app_error_response(request: Request, exc: Exception) -> JSONResponse:
    """The problem+json of an :class:`AppError` (status, type, title, detail, field, extra)."""
    assert isinstance(exc, AppError)
    return error_response(exc, request.url.path)


def _error_item(error: dict[str, Any]) -> dict[str, Any]:
    if error.get("type") == "json_invalid":
        # FastAPI puts the character offset where a field name belongs: ("body", 17)
        position = error.get("loc", ("body", "?"))[-1]
        reason = (error.get("ctx") or {}).get("error", "")
        where = f" at character {position}" if isinstance(position, int) else ""
        message = f"invalid JSON{where}: {reason}".rstrip(": ")
        return {"field": "body", "message": message, "type": "json_invalid"}
    return {
        "field": _loc_to_field(error.get("loc", ())),
        "message": error.get("msg", ""),
        "type": error.get("type"),
    }


def _invalid_input(request: Request, errors: list[dict[str, Any]]) -> JSONResponse:
    first = errors[0] if errors else {"field": "body", "message": "invalid"}
    return problem_response(
        status=422,
        type_="invalid-input",
        title="Invalid input",
        detail=f"{first['field']}: {first['message']}",
        instance=request.url.path,
        field=first["field"],
        errors=errors,
    )


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    return _invalid_input(request, [_error_item(e) for e in exc.errors()])


def _body_parse_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """FastAPI's bare 400 for a body ``json.loads`` refuses (bad UTF-8, >4300-digit numbers)."""
    cause = exc.__cause__
    if isinstance(cause, UnicodeDecodeError):
        reason = f"the body is not valid UTF-8 (byte {cause.start}: {cause.reason})"
    elif cause is not None:
        # e.g. "Exceeds the limit (4300 digits) for integer string conversion: ..."
        reason = "the body is not valid JSON: " + str(cause).split(";", 1)[0]
    else:
        reason = "the body could not be parsed as JSON"
    item = {"field": "body", "message": reason, "type": "json_invalid"}
    return _invalid_input(request, [item])


#: Starlette's own errors: problem type and the request part at fault.
_HTTP_ERRORS = {404: ("not-found", "path"), 405: ("method-not-allowed", "method")}


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    if exc.status_code == 400 and exc.detail == _FASTAPI_BODY_PARSE_ERROR:
        return _body_parse_error(request, exc)
    slug, field = _HTTP_ERRORS.get(exc.status_code, ("http-error", None))
    return problem_response(
        status=exc.status_code,
        type_=slug,
        title=str(exc.detail) if exc.detail else "HTTP error",
        detail=str(exc.detail),
        instance=request.url.path,
        headers=getattr(exc, "headers", None),
        field=field,
    )


#: Retry-After of a 503 when the application has no settings (``create_app`` always sets them).
DEFAULT_RETRY_AFTER_SECONDS = 30


def as_unavailable(request: Request, exc: Exception) -> ServiceUnavailable:
    """The :class:`ServiceUnavailable` a database error means, or ``exc`` re-raised.

    SQLAlchemy's errors that mean "unavailable" (down, unreachable, locked past
    ``database_busy_timeout_seconds``, a pool exhausted: :func:`app.db.unavailable_reason`)
    become a :class:`DatabaseUnavailable` whose Retry-After is ``retry_after_seconds``; any
    other (a bug, a constraint) propagates as the 500 it is.
    """
    if isinstance(exc, ServiceUnavailable):
        return exc
    reason = unavailable_reason(exc)
    if reason is None:
        raise exc
    settings = getattr(request.app.state, "settings", None)
    retry = getattr(settings, "retry_after_seconds", DEFAULT_RETRY_AFTER_SECONDS)
    error = reason.split(":", 1)[0]
    # the message (a host, a port, a path) is the operator's, in the log; the client hears
    # the error class and when to ask again
    logger.warning("%s %s: database unavailable: %s", request.method, request.url.path, reason)
    return DatabaseUnavailable(
        f"the database is unavailable ({error}); try again in {retry} s",
        retry_after=retry,
        extra={"dependency": "database", "error": error},
    )


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    return await app_error_response(request, as_unavailable(request, exc))


def install_problem_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into problem+json."""
    app.add_exception_handler(AppError, app_error_response)
    app.add_exception_handler(sa_exc.DBAPIError, _database_error)
    app.add_exception_handler(sa_exc.TimeoutError, _database_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
