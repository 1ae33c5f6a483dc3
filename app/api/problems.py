"""RFC 9457 ``application/problem+json`` rendering for every error the API returns."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import AppError

PROBLEM_BASE = "https://absrank.dev/problems/"
PROBLEM_MEDIA_TYPE = "application/problem+json"


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
        "detail": detail,
        "instance": instance,
    }
    reserved = set(body)
    body.update({k: v for k, v in extra.items() if v is not None and k not in reserved})
    return JSONResponse(body, status_code=status, media_type=PROBLEM_MEDIA_TYPE, headers=headers)


def _loc_to_field(loc: tuple[Any, ...] | list[Any]) -> str:
    parts = [str(p) for p in loc if p not in ("body", "query", "path", "header")]
    return ".".join(parts) if parts else "body"


async def _app_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, AppError)
    return problem_response(
        status=exc.status,
        type_=exc.type,
        title=exc.title,
        detail=exc.detail,
        instance=request.url.path,
        headers=exc.headers,
        field=exc.field,
        **exc.extra,
    )


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {
            "field": _loc_to_field(e.get("loc", ())),
            "message": e.get("msg", ""),
            "type": e.get("type"),
        }
        for e in exc.errors()
    ]
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


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    slug = {404: "not-found", 405: "method-not-allowed"}.get(exc.status_code, "http-error")
    return problem_response(
        status=exc.status_code,
        type_=slug,
        title=str(exc.detail) if exc.detail else "HTTP error",
        detail=str(exc.detail),
        instance=request.url.path,
        headers=getattr(exc, "headers", None),
    )


def install_problem_handlers(app: FastAPI) -> None:
    """Register the handlers that turn every error into problem+json."""
    app.add_exception_handler(AppError, _app_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
