"""How ``absrank serve`` runs: uvicorn with a bounded stop, and its embedded worker.

``absrank serve`` stops within ``api_shutdown_seconds`` (plus a second) on SIGTERM or Ctrl-C,
even with a runaway computation in a request thread, and its embedded worker stops with it —
also when the server dies by ``kill -9`` (:mod:`workers.lifecycle`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

import uvicorn
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.problems import problem_response
from app.config import Settings

logger = logging.getLogger(__name__)

#: How long a stopped ``absrank serve`` waits for its embedded worker beyond the worker's own
#: ``worker_shutdown_seconds`` (its interruption of tasks and exit), before SIGKILL.
WORKER_EXIT_MARGIN_SECONDS = 2.0
#: How long idle request threads get to finish once the API stopped, before the process exits
#: without them (a runaway computation cannot be stopped from outside its thread).
THREAD_JOIN_SECONDS = 1.0


class EmbeddedWorker:
    """The worker process ``absrank serve`` starts (its own session, so a terminal's Ctrl-C
    reaches only the server, which stops it gracefully).

    It runs ``absrank worker --parent <serve's pid>``: it arms ``PR_SET_PDEATHSIG`` and
    watches its parent, so it stops when the server dies, even by ``kill -9``.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app.cli",
                "worker",
                "--workers",
                str(settings.embedded_workers),
                "--parent",
                str(os.getpid()),
            ],
            start_new_session=True,
        )
        self._signalled = False

    def signal_stop(self) -> None:
        """Ask it to stop gracefully (SIGTERM to its group), once; safe in a signal handler."""
        if self._signalled or self.process.poll() is not None:
            return
        self._signalled = True
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)

    def stop(self) -> None:
        """Stop it and wait: SIGKILL to its group if it outlives its graceful stop."""
        self.signal_stop()
        try:
            self.process.wait(
                timeout=self.settings.worker_shutdown_seconds + WORKER_EXIT_MARGIN_SECONDS
            )
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


#: ``Retry-After`` of the answer to a request cut off by a stopping server (a restart's time).
STOPPING_RETRY_AFTER_SECONDS = 5


class StopAnswer:
    """Pure ASGI wrapper: a request that uvicorn cancels because the server stops (after
    ``timeout_graceful_shutdown``) answers 503 problem+json with ``Retry-After``, instead of
    uvicorn's 500 text/plain. Any other cancellation propagates unchanged."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.stopping = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except asyncio.CancelledError:
            if started or not self.stopping:
                raise
            response = problem_response(
                status=503,
                type_="server-stopping",
                title="Service Unavailable",
                detail="the server is stopping and cut this request off; send it again",
                instance=scope.get("path", ""),
                headers={
                    "Retry-After": str(STOPPING_RETRY_AFTER_SECONDS),
                    "Connection": "close",
                },
            )
            with contextlib.suppress(OSError, RuntimeError):  # the client may be gone too
                await response(scope, receive, send)


class StoppingServer(uvicorn.Server):
    """uvicorn's server for ``app`` (wrapped in :class:`StopAnswer`) that also calls
    ``on_exit`` as soon as it is asked to stop: the embedded worker then stops in parallel with
    the API, within the larger of their two bounds."""

    def __init__(self, app: ASGIApp, *, on_exit: Callable[[], None], **config: Any) -> None:
        self.answer = StopAnswer(app)
        super().__init__(uvicorn.Config(self.answer, **config))
        self._on_exit = on_exit

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        self.answer.stopping = True
        super().handle_exit(sig, frame)
        self._on_exit()


def run_server(server: uvicorn.Server) -> None:
    """Run ``server`` on a new event loop until it stops, without waiting for request tasks
    still held by a thread.

    ``asyncio.run`` (``server.run``) cancels the tasks left at the end and waits for them; a
    sync route's task waits for its thread (anyio shields it), so a runaway computation kept
    the process alive for minutes after uvicorn's ``timeout_graceful_shutdown`` cancelled it.
    Here the leftover tasks get a second to finish.
    """
    factory = server.config.get_loop_factory()
    loop = factory() if factory is not None else asyncio.new_event_loop()
    try:
        loop.run_until_complete(server.serve())
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=THREAD_JOIN_SECONDS))
        loop.run_until_complete(loop.shutdown_asyncgens())
        # the default executor's idle threads (asyncio.to_thread) exit; a busy one is left
        with contextlib.suppress(TimeoutError):
            loop.run_until_complete(
                asyncio.wait_for(loop.shutdown_default_executor(), THREAD_JOIN_SECONDS)
            )
        if all(t.done() for t in pending):
            loop.close()


def exit_leaving_threads(status: int) -> None:
    """Exit with ``status``; if threads of the stopped API still run (a computation no
    deadline stopped), exit without waiting for them (``os._exit`` after flushing)."""
    deadline = time.monotonic() + THREAD_JOIN_SECONDS
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join(max(deadline - time.monotonic(), 0))
    running = [
        t.name
        for t in threading.enumerate()
        if t is not threading.main_thread() and not t.daemon and t.is_alive()
    ]
    if running:
        logger.warning(
            "absrank serve: exiting with %d thread(s) still running (%s)",
            len(running),
            ", ".join(sorted(set(running))),
        )
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    if status:
        raise SystemExit(status)


__all__ = [
    "EmbeddedWorker",
    "StopAnswer",
    "StoppingServer",
    "exit_leaving_threads",
    "run_server",
]
