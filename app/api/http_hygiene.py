"""HTTP hygiene of every answer (issue 17 §6), one pure ASGI middleware: :class:`HttpHygiene`.

- ``X-Content-Type-Options: nosniff`` on every response;
- ``Cache-Control: no-store`` on every error (status >= 400, replacing what the route set) and
  on every response that sets none; routes that publish something that never changes set their
  own (:data:`IMMUTABLE`: ready tables and ladders, final stored results, :func:`stored`);
- ``HEAD`` on every ``GET`` route: a HEAD request is routed as a GET and its body dropped (the
  headers, ``Content-Length`` included, are the GET's);
- a 405 carries the complete ``Allow`` of its path (:func:`allowed_methods`), whichever route
  refused it;
- with CORS on, a plain ``OPTIONS`` (no preflight) answers 204 with that ``Allow``;
- a malformed ``Content-Length`` (not digits, a list of differing values) is a 400 problem
  naming the header; a numeric one over the limit is the 413 of ``app.main.BodySizeLimit``.

It wraps the whole stack (outside Starlette's ``ServerErrorMiddleware``, see
:func:`install_http_hygiene`) so a 500 gets the headers too. Per request it costs a scan of
the request's headers and of the response's: microseconds (docs/ARCHITECTURE.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Final, TypeVar

from fastapi import FastAPI
from fastapi.routing import RouteContext, iter_route_contexts
from starlette.routing import Match, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem_response
from app.errors import InvalidHeader
from app.services.table_publish import IMMUTABLE

__all__ = [
    "IMMUTABLE",
    "NO_STORE",
    "HttpHygiene",
    "allowed_methods",
    "install_http_hygiene",
    "refuses_method",
    "stored",
]

#: ``Cache-Control`` of errors and of answers that may change (a table's status, a list).
NO_STORE: Final = "no-store"
#: The order methods are listed in ``Allow``.
METHOD_ORDER: Final = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
#: The attribute :func:`refuses_method` sets on an endpoint that only answers 405.
_REFUSES: Final = "_absrank_refuses_method"

_NOSNIFF: Final = (b"x-content-type-options", b"nosniff")
_CACHE_CONTROL: Final = b"cache-control"
_NO_STORE: Final = (_CACHE_CONTROL, b"no-store")
_CONTENT_LENGTH: Final = b"content-length"

F = TypeVar("F", bound=Callable[..., object])


def stored(final: bool) -> dict[str, str]:
    """The ``Cache-Control`` of a stored result: :data:`IMMUTABLE` once it is ``final`` (it
    never changes again), else :data:`NO_STORE` (a partial comparison, a cross-machine
    comparison awaiting results)."""
    return {"Cache-Control": IMMUTABLE if final else NO_STORE}


def refuses_method(endpoint: F) -> F:
    """Mark a route's endpoint as one that only answers 405 (it keeps another route's
    parameter from taking the path): its methods are not in the path's ``Allow``."""
    setattr(endpoint, _REFUSES, True)
    return endpoint


def _route_methods(route: RouteContext) -> frozenset[str] | None:
    methods = route.methods
    if methods:
        return frozenset(methods)
    if isinstance(route.original_route, Mount):  # static files: GET and HEAD
        return frozenset(("GET", "HEAD"))
    return None  # a websocket route, or a route of any method


def allowed_methods(
    routes: Iterable[RouteContext], path: str, *, options: bool = False
) -> list[str]:
    """The methods ``path`` answers other than 405, in :data:`METHOD_ORDER`.

    ``routes`` are the app's, flattened (FastAPI's ``iter_route_contexts``: the included
    routers' routes with their prefixes, in the order requests are matched). A method is the
    first matching route's that lists it (a later route never sees it), and a
    :func:`refuses_method` route keeps its methods off the list. ``HEAD`` comes with ``GET``;
    ``OPTIONS`` when CORS is on.
    """
    scope: Scope = {"type": "http", "path": path, "root_path": "", "method": "GET"}
    claimed: set[str] = set()
    allowed: set[str] = set()
    for route in routes:
        methods = _route_methods(route)
        if methods is None or route.matches(scope)[0] is Match.NONE:
            continue
        if not getattr(route.endpoint, _REFUSES, False):
            allowed |= methods - claimed
        claimed |= methods
    if "GET" in allowed:
        allowed.add("HEAD")
    if options and allowed:
        allowed.add("OPTIONS")
    return [m for m in METHOD_ORDER if m in allowed] + sorted(allowed - set(METHOD_ORDER))


def _content_length_problem(headers: Iterable[tuple[bytes, bytes]]) -> str | None:
    """What is wrong with the request's ``Content-Length`` values, or None (RFC 9110 §8.6:
    one or more equal lists of digits; a numeric value over any limit is not this one's)."""
    first: bytes | None = None
    for name, value in headers:
        if name != _CONTENT_LENGTH:
            continue
        if first is None and value.isdigit():  # the usual case: one plain number
            first = value
            continue
        for item in value.split(b","):
            item = item.strip()
            if not item.isdigit():  # bytes.isdigit: ASCII digits only
                shown = item[:20].decode("latin-1")
                return f"Content-Length must be a number of bytes (digits), not {shown!r}"
            if first is None:
                first = item
            elif item != first:
                return "Content-Length is given with differing values"
    return None


def _answer_headers(message: Message, error: bool) -> Message:
    """``message`` (an ``http.response.start``) with nosniff and, for an error or when it sets
    none, ``Cache-Control: no-store``."""
    headers = list(message.get("headers", ()))
    names = [name for name, _ in headers]
    if _CACHE_CONTROL in names:
        if error:
            headers = [h for h in headers if h[0] != _CACHE_CONTROL]
            headers.append(_NO_STORE)
    else:
        headers.append(_NO_STORE)
    if _NOSNIFF[0] not in names:
        headers.append(_NOSNIFF)
    message["headers"] = headers
    return message


class HttpHygiene:
    """The middleware (see the module's docstring); ``routes()`` gives the app's routes (read
    once, on the first 405 or plain OPTIONS), ``cors`` says whether CORS is on."""

    def __init__(
        self, app: ASGIApp, routes: Callable[[], Iterable[RouteContext]], cors: bool
    ) -> None:
        self.app = app
        self.routes = routes
        self.cors = cors
        self._routes: list[RouteContext] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        problem = _content_length_problem(scope["headers"])
        if problem is not None:
            await self._respond_bad_length(scope, receive, send, problem)
            return
        method = scope["method"]
        if method == "OPTIONS" and self.cors and not _is_preflight(scope):
            await self._options(scope, receive, send)
            return
        head = method == "HEAD"
        if head:  # routed as a GET; its body is dropped below
            scope = {**scope, "method": "GET"}
        path = scope["path"]

        async def send_clean(message: Message) -> None:
            kind = message["type"]
            if kind == "http.response.start":
                status = message["status"]
                message = _answer_headers(message, status >= 400)
                if status == 405:
                    message = self._with_allow(message, path)
            elif head and kind == "http.response.body":
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b""}
            await send(message)

        await self.app(scope, receive, send_clean)

    def _allow(self, path: str) -> list[str]:
        if self._routes is None:  # the app's routes are complete once it serves
            self._routes = list(self.routes())
        return allowed_methods(self._routes, path, options=self.cors)

    def _with_allow(self, message: Message, path: str) -> Message:
        allow = ", ".join(self._allow(path)).encode()
        headers = [(k, v) for k, v in message["headers"] if k != b"allow"]
        return {**message, "headers": [*headers, (b"allow", allow)]}

    async def _options(self, scope: Scope, receive: Receive, send: Send) -> None:
        allow = self._allow(scope["path"])
        if not allow:  # no such path: the app's own 404
            await self.app(scope, receive, send)
            return
        headers = [(b"allow", ", ".join(allow).encode())]  # a 204 has no Content-Length
        start = {"type": "http.response.start", "status": 204, "headers": headers}
        await send(_answer_headers(start, error=False))
        await send({"type": "http.response.body", "body": b""})

    async def _respond_bad_length(
        self, scope: Scope, receive: Receive, send: Send, detail: str
    ) -> None:
        response = problem_response(
            status=InvalidHeader.status,
            type_=InvalidHeader.type,
            title=InvalidHeader.title,
            detail=detail,
            instance=scope.get("path", ""),
            field="Content-Length",
            headers={"Connection": "close"},  # the body's end is unknown: no next request
        )

        async def send_clean(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = _answer_headers(message, error=True)
            await send(message)

        await response(scope, receive, send_clean)


def _is_preflight(scope: Scope) -> bool:
    names = {name for name, _ in scope["headers"]}
    return b"origin" in names and b"access-control-request-method" in names


def install_http_hygiene(app: FastAPI, *, cors: bool) -> None:
    """Wrap ``app``'s whole middleware stack in :class:`HttpHygiene`.

    Starlette puts its ``ServerErrorMiddleware`` outside every ``add_middleware``: wrapping
    ``build_middleware_stack`` is what makes a 500 carry the headers too.
    """
    build = app.build_middleware_stack

    def build_with_hygiene() -> ASGIApp:
        return HttpHygiene(build(), routes=lambda: iter_route_contexts(app.routes), cors=cors)

    app.build_middleware_stack = build_with_hygiene  # type: ignore[method-assign]
