"""Application factory: lifespan opens/disposes the engine, routers, problem handlers."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from fastapi import FastAPI
from fastapi_offline import FastAPIOffline
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app import __version__
from app.api import (
    anytime,
    comparisons,
    cpus,
    functions,
    health,
    jobs,
    ladders,
    leaderboards,
    machines,
    pareto,
    ranks,
    region_scans,
    result_sets,
    stattests,
    tables,
)
from app.api.http_hygiene import install_http_hygiene
from app.api.openapi import install_openapi
from app.api.problems import install_problem_handlers, problem_response
from app.api.quotas import QuotaMiddleware, Quotas
from app.config import Settings, get_settings
from app.db import engine_for, make_sessionmaker
from app.errors import PayloadTooLarge, ServiceUnavailable
from app.heap import keep_large_blocks, settle_after_imports
from app.services import table_cache
from app.web.pages import install_pages

logger = logging.getLogger(__name__)

DESCRIPTION = """
absrank publishes, for every hosted benchmark function, the **absolute-ranking function**
`v_f(t)`: the probability that uniform random search does at least as well as `t`
(Jing & Liu). Lower is better; `log10_v` is authoritative. Tables are built by workers from
scrambled Sobol samples and can be rebuilt bit for bit. Errors are RFC 9457 problem details.
"""


@dataclass(frozen=True)
class UploadRoute:
    """A route whose bodies of ``media_types`` have their own, larger limit ``setting``."""

    path: str
    media_types: tuple[str, ...]
    limit: int
    setting: str


class BodySizeLimit:
    """Refuse request bodies over ``limit`` bytes with a 413 problem (before parsing them).

    A declared ``Content-Length`` over the limit is refused at once. Otherwise the body is read
    up to ``limit + 1`` bytes before the application runs — also when no length is declared
    (``Transfer-Encoding: chunked``): over the limit it is refused, else its messages are
    replayed to the application (which reads the whole body into memory anyway).
    """

    def __init__(self, app: ASGIApp, limit: int, uploads: tuple[UploadRoute, ...] = ()) -> None:
        self.app = app
        self.limit = limit
        self.uploads = uploads

    def _limit_of(self, scope: Scope, headers: dict[bytes, bytes]) -> tuple[int, str]:
        """The limit of this request and the setting's name (an upload route's own, or the
        global ``max_request_bytes``)."""
        media_type = headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()
        for route in self.uploads:
            if (
                scope.get("method") == "POST"
                and scope.get("path") == route.path
                and media_type.decode("latin-1") in route.media_types
            ):
                return route.limit, route.setting
        return self.limit, "max_request_bytes"

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        limit = self._limit_of(scope, headers)
        declared = headers.get(b"content-length", b"")
        # more than 18 digits is over any limit (and int() refuses beyond 4300 digits)
        if declared.isdigit() and (len(declared) > 18 or int(declared) > limit[0]):
            await self._reject(scope, receive, send, limit)
            return
        await self._buffered(scope, receive, send, limit)

    async def _buffered(
        self, scope: Scope, receive: Receive, send: Send, limit: tuple[int, str]
    ) -> None:
        messages: deque[Message] = deque()
        seen = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":  # http.disconnect: let the app see it
                break
            seen += len(message.get("body", b""))
            if seen > limit[0]:
                await self._reject(scope, receive, send, limit)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return messages.popleft() if messages else await receive()

        await self.app(scope, replay, send)

    async def _reject(
        self, scope: Scope, receive: Receive, send: Send, limit: tuple[int, str]
    ) -> None:
        response = problem_response(
            status=413,
            type_=PayloadTooLarge.type,
            title=PayloadTooLarge.title,
            detail=f"request body exceeds {limit[1]} = {limit[0]}",
            instance=scope.get("path", ""),
            field="body",
        )
        await response(scope, receive, send)


DOCS_URL = "/docs"
REDOC_URL = "/redoc"
#: The documentation pages load only what the API serves. ReDoc 2 draws a Redocly logo from
#: its CDN in the menu's footer (no option turns it off): ``img-src`` keeps the browser from
#: requesting it, so the pages never reach out of the deployment.
DOCS_CSP = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; "
    "base-uri 'none'; form-action 'none'; frame-ancestors 'self'"
)


class DocsContentSecurityPolicy:
    """Send :data:`DOCS_CSP` with the HTML of the documentation pages ``paths``."""

    def __init__(self, app: ASGIApp, paths: tuple[str, ...]) -> None:
        self.app = app
        self.paths = frozenset(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") not in self.paths:
            await self.app(scope, receive, send)
            return

        async def send_with_csp(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [
                    *message.get("headers", []),
                    (b"content-security-policy", DOCS_CSP.encode()),
                ]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, send_with_csp)


#: How often a thread holding Python's interpreter lock lets another run (5 ms by default): the
#: event loop waits at most about this long per hand-over while computations run.
SWITCH_INTERVAL_SECONDS = 0.001
#: How long a stopping API waits for the preload thread (a few seconds at most on a busy core).
PRELOAD_JOIN_SECONDS = 60.0
#: The preload starts this long after the API does: the requests of a fresh start (a health
#: probe, a first comparison) do not share the CPU with matplotlib's import.
PRELOAD_DELAY_SECONDS = 2.0


def _preload_figures(stopping: threading.Event) -> None:
    from app.services import plots

    if stopping.wait(PRELOAD_DELAY_SECONDS):
        return  # the API stops: nothing to warm
    try:
        plots.preload()
    except Exception:  # a figure request then imports it itself, and says what failed
        logger.exception("preloading matplotlib failed")


async def _redispatch_loop(app: FastAPI, settings: Settings) -> None:
    """Every ``redispatch_interval_seconds``, re-enqueue chunks and jobs whose lease expired.

    The worker's periodic task does the same once a minute; this loop makes recovery faster in
    the embedded mode. Both are idempotent.
    """
    from app.services.jobs import redispatch_jobs
    from app.services.tables import redispatch

    while True:
        await asyncio.sleep(settings.redispatch_interval_seconds)
        try:
            await asyncio.to_thread(
                redispatch, app.state.sessionmaker, settings, app.state.dispatcher
            )
            await asyncio.to_thread(
                redispatch_jobs, app.state.sessionmaker, settings, app.state.dispatcher
            )
        except ServiceUnavailable as exc:  # the queue or the database is down: said once a round
            logger.warning("redispatch: %s", exc)
        except Exception:  # keep serving; the next round retries
            logger.exception("redispatch failed")


def create_app(settings: Settings | None = None, dispatcher: Any | None = None) -> FastAPI:
    """Build the ASGI application.

    Parameters
    ----------
    settings : Settings, optional
        Defaults to :func:`app.config.get_settings`.
    dispatcher : object, optional
        Has ``enqueue_span(TaskSpan)`` and ``enqueue_merge(table_id)``; defaults to the
        huey queue named by ``settings.queue_url``.
    """
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        settings.ensure_dirs()
        # the request threads (FastAPI's synchronous routes and dependencies, run_controlled):
        # a few, so that computations waiting their turn do not contend for the interpreter
        # lock with the event loop (40 by default: /healthz p99 0.7 s under the load test)
        anyio.to_thread.current_default_thread_limiter().total_tokens = settings.request_threads
        sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
        engine = engine_for(settings)
        app.state.engine = engine
        app.state.sessionmaker = make_sessionmaker(engine)
        # this app's caches (ready tables, missing ids, derived answers; ladder plans and ids),
        # passed by the routers to the services (app.api.deps.TableCachesDep, LadderCachesDep)
        caches = table_cache.AppCaches.from_settings(settings)
        app.state.table_caches = caches.tables
        app.state.ladder_caches = caches.ladders
        settle_after_imports()  # the imports' heap collected once and frozen (app.heap)
        keep_large_blocks()  # large answers' buffers from the heap, not fresh pages (app.heap)
        preload: threading.Thread | None = None
        stopping = threading.Event()
        if settings.preload_figures:  # matplotlib warmed off the event loop (plots.preload)
            preload = threading.Thread(
                target=_preload_figures, args=(stopping,), name="absrank-preload", daemon=True
            )
            preload.start()
        loop_task: asyncio.Task[None] | None = None
        if dispatcher is None:
            from workers.app import get_dispatcher

            app.state.dispatcher = get_dispatcher()
            if settings.redispatch_interval_seconds > 0 and not settings.queue_url.startswith(
                "memory"
            ):
                loop_task = asyncio.create_task(_redispatch_loop(app, settings))
        else:
            app.state.dispatcher = dispatcher
        try:
            yield
        finally:
            if preload is not None:  # never left importing while the interpreter exits
                stopping.set()
                # joined on the loop itself: the API is stopping (and a lifespan ended at the
                # interpreter's exit can no longer start an executor thread)
                preload.join(PRELOAD_JOIN_SECONDS)
            if loop_task is not None:
                loop_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await loop_task
            app.state.table_caches.clear()
            await app.state.quotas.aclose()  # the limiter's Redis connections, if any
            engine.dispose()

    # /docs and /redoc from the Swagger UI and ReDoc files that fastapi-offline ships (served
    # under /static-offline-docs): no CDN, so the documentation works without a network
    app = FastAPIOffline(
        docs_url=DOCS_URL,
        redoc_url=REDOC_URL,
        title="absrank",
        version=__version__,
        description=DESCRIPTION,
        lifespan=lifespan,
        # Swagger UI's default validator badge would load an image from its public validator
        swagger_ui_parameters={"validatorUrl": None},
    )
    # read by app.api.deps.SettingsDep (not a dependency override: any override makes FastAPI
    # rebuild every route's dependency graph on every request)
    app.state.settings = settings
    install_problem_handlers(app)
    documented = (
        health,
        functions,
        tables,
        ranks,
        stattests,
        comparisons,
        cpus,
        machines,
        pareto,
        region_scans,
        result_sets,
        ladders,
        leaderboards,
        anytime,
        jobs,
    )
    # Requests are matched in the order routers are included: the hot router first (no path
    # of ranks' is matched by another router's, nor the reverse: every route is a fixed
    # path or a parameter under its own prefix); the OpenAPI document keeps the order above.
    for module in sorted(documented, key=lambda m: m is not ranks):
        app.include_router(module.router)
    install_pages(app)  # the web page at / (not in the OpenAPI document)
    install_openapi(
        app,
        lambda: stattests.response_examples(settings),
        path_order=[getattr(r, "path_format", r.path) for m in documented for r in m.router.routes],
    )
    app.add_middleware(
        BodySizeLimit,
        limit=settings.max_request_bytes,
        uploads=(
            UploadRoute(
                "/v1/result-sets",
                ("text/csv", "multipart/form-data"),
                settings.max_upload_bytes,
                "max_upload_bytes",
            ),
            UploadRoute(
                "/archive",
                ("multipart/form-data",),
                settings.max_upload_bytes,
                "max_upload_bytes",
            ),
            UploadRoute(
                "/report",
                ("multipart/form-data", "application/x-www-form-urlencoded"),
                settings.max_upload_bytes,
                "max_upload_bytes",
            ),
            UploadRoute(
                "/v1/tables/samples",
                ("text/csv", "text/plain"),
                settings.max_upload_bytes,
                "max_upload_bytes",
            ),
        ),
    )
    app.add_middleware(
        DocsContentSecurityPolicy,
        paths=(DOCS_URL, REDOC_URL, app.swagger_ui_oauth2_redirect_url or DOCS_URL),
    )
    # outermost: a request over its sender's quota is refused before its body is read
    app.state.quotas = Quotas(settings)
    app.add_middleware(QuotaMiddleware, quotas=app.state.quotas)
    if settings.cors_allow_origins:  # off by default (README "HTTP headers, caching and CORS")
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_allow_origins,
            allow_methods=settings.cors_allow_methods,
            allow_headers=settings.cors_allow_headers,
            expose_headers=settings.cors_expose_headers,
            max_age=settings.cors_max_age_seconds,
        )
    # outermost, around Starlette's own error middleware too (app.api.http_hygiene)
    install_http_hygiene(app, cors=bool(settings.cors_allow_origins))
    return app
