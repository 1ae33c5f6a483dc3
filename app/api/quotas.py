"""Quotas and rate limits per API key and per client address (issue 17), with ``limits``.

Three quotas per :class:`app.api.keys.Identity` (a key's name, or the client address of an
anonymous request); a key of role ``operator`` has none:

- **requests per minute** (``anonymous_requests_per_minute``, ``key_requests_per_minute``), in
  the window of ``rate_limit_strategy``; counted by :class:`QuotaMiddleware` for every request
  but the health routes and static files, before the body is read;
- **CPU-seconds per hour** (``anonymous_cpu_seconds_per_hour``, ``key_cpu_seconds_per_hour``,
  a fixed window counted in milliseconds). What is charged: the wall-clock time from the end of
  the request's body to the start of its answer, measured by the middleware. That is an upper
  bound of the CPU the handler used on one core (it also counts waiting for the thread pool or
  the GIL under load, never less than the work): measuring the handler's own CPU is not
  possible across the thread pool (``time.thread_time`` is per thread, the process's CPU mixes
  concurrent requests). A request is refused once the hour's budget is used up; the request
  that crosses it still runs (its cost is known only after it). Work done later as a job is
  charged by the code that admits it: :meth:`Quotas.charge_cpu` with the estimate's
  ``cpu_seconds`` (``app.domain.cost.CostEstimate``);
- **queued table chunks per hour** (``anonymous_chunks_per_hour``, ``key_chunks_per_hour``):
  :meth:`Quotas.charge_chunks` before a new table's chunks are stored (``POST /v1/tables``,
  its ladders, ``POST /v1/region-scans``), refusing with 429 and storing nothing.

Over a quota: 429 problem+json (:class:`app.errors.TooManyRequests`, naming the limit, its
amount and window) with ``Retry-After``, the seconds until the window frees.

Storage: ``limits``' ``RedisStorage`` (its asyncio client, on the event loop: no thread hop)
when ``rate_limit_storage_url`` is a ``redis://`` URL, shared by every API process; else its
``MemoryStorage``, per process (a check costs a few microseconds). When Redis fails (down,
slow past :data:`REDIS_TIMEOUT_SECONDS`) the limiter **fails open to memory**: for
:data:`REDIS_RETRY_SECONDS` it counts in this process's memory (quotas per process instead of
shared), logs a warning at most every :data:`WARN_EVERY_SECONDS`, then tries Redis again — a
limiter outage never answers 500, and never leaves requests unlimited.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from limits import RateLimitItem, RateLimitItemPerHour, RateLimitItemPerMinute
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import (
    FixedWindowRateLimiter,
    MovingWindowRateLimiter,
    RateLimiter,
    SlidingWindowCounterRateLimiter,
)
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.api.keys import IDENTITY_SCOPE_KEY, Access, Identity, access_of
from app.api.problems import error_response
from app.config import Settings
from app.errors import QuotaLimit, TooManyRequests

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: A Redis call of the limiter that takes longer fails (and the limiter falls back to memory).
REDIS_TIMEOUT_SECONDS = 0.25
#: After a Redis failure the limiter counts in memory this long before it tries Redis again.
REDIS_RETRY_SECONDS = 5.0
#: At most one warning about a failing Redis per this many seconds.
WARN_EVERY_SECONDS = 60.0
#: Paths without quotas: the health probes and static files.
EXEMPT_PREFIXES = ("/healthz", "/static/", "/static-offline-docs/")

_STRATEGIES: dict[str, type[RateLimiter]] = {
    "moving-window": MovingWindowRateLimiter,
    "fixed-window": FixedWindowRateLimiter,
    "sliding-window-counter": SlidingWindowCounterRateLimiter,
}


@dataclass(frozen=True)
class _Quota:
    """A :class:`QuotaLimit` and the ``limits`` item counting it (CPU in milliseconds)."""

    limit: QuotaLimit
    item: RateLimitItem


def _quota(name: Any, amount: float, per_hour: bool, setting: str, scale: int = 1) -> _Quota | None:
    if amount <= 0:
        return None  # 0: no limit
    window = 3600 if per_hour else 60
    units = max(1, math.ceil(amount * scale))
    item = (
        RateLimitItemPerHour(units, namespace=name)
        if per_hour
        else RateLimitItemPerMinute(units, namespace=name)
    )
    return _Quota(QuotaLimit(name, amount, window, setting), item)


@dataclass(frozen=True)
class _Quotas:
    """The three quotas of one kind of identity (anonymous, or a read/submit key)."""

    requests: _Quota | None
    cpu: _Quota | None
    chunks: _Quota | None


def _quotas_for(settings: Settings, prefix: str) -> _Quotas:
    s = settings
    return _Quotas(
        _quota("requests", getattr(s, f"{prefix}_requests_per_minute"), False,
               f"{prefix}_requests_per_minute"),
        _quota("cpu_seconds", getattr(s, f"{prefix}_cpu_seconds_per_hour"), True,
               f"{prefix}_cpu_seconds_per_hour", scale=1000),
        _quota("chunks", getattr(s, f"{prefix}_chunks_per_hour"), True,
               f"{prefix}_chunks_per_hour"),
    )  # fmt: skip


class _Limiters:
    """The limiters over one storage (made inside the event loop that uses them)."""

    def __init__(self, storage: Storage, strategy: type[RateLimiter]) -> None:
        self.storage = storage
        self.requests = strategy(storage)
        self.window = FixedWindowRateLimiter(storage)  # weighted counts: one counter each


def _redis_url(url: str) -> bool:
    return url.startswith(("redis://", "rediss://", "redis+unix://"))


class Quotas:
    """The quotas of one application (``app.state.quotas``), counted per :class:`Identity`.

    Parameters
    ----------
    settings : Settings
    clock : callable
        Seconds since the epoch, for ``Retry-After`` (``limits`` counts with ``time.time``).
    """

    def __init__(self, settings: Settings, *, clock: Callable[[], float] = time.time) -> None:
        self.settings = settings
        self.clock = clock
        self.anonymous = _quotas_for(settings, "anonymous")
        self.keyed = _quotas_for(settings, "key")
        self.uses_redis = _redis_url(settings.rate_limit_storage_url)
        self._strategy = _STRATEGIES[settings.rate_limit_strategy]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._primary: _Limiters | None = None
        self._memory: _Limiters | None = None
        self._redis_down_until = 0.0
        self._warned_at = -math.inf

    def access(self) -> Access:
        """The keys and proxies of these settings."""
        return access_of(self.settings)

    def of(self, identity: Identity) -> _Quotas | None:
        """The quotas of ``identity`` (None: an operator's key, unlimited)."""
        if identity.role == "operator":
            return None
        return self.keyed if identity.role is not None else self.anonymous

    # -- storage ----------------------------------------------------------------------------

    def _limiters(self) -> tuple[_Limiters, _Limiters]:
        if self._memory is None:  # made in an event loop (its expiry task runs there)
            self._memory = _Limiters(MemoryStorage(), self._strategy)
        if not self.uses_redis:
            return self._memory, self._memory
        loop = asyncio.get_running_loop()
        if self._loop is not loop or self._primary is None:
            # a Redis client's connections belong to one loop (a test client may start several)
            self._loop = loop
            self._primary = _Limiters(self._redis_storage(), self._strategy)
        return self._primary, self._memory

    def _redis_storage(self) -> Storage:
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff

        return RedisStorage(
            "async+" + self.settings.rate_limit_storage_url,
            implementation="redispy",
            key_prefix=self.settings.rate_limit_key_prefix,
            socket_timeout=REDIS_TIMEOUT_SECONDS,
            socket_connect_timeout=REDIS_TIMEOUT_SECONDS,
            retry=Retry(NoBackoff(), 0),  # type: ignore[arg-type]  # redis-py's own option
        )

    async def _run(self, op: Callable[[_Limiters], Awaitable[T]]) -> T:
        primary, memory = self._limiters()
        if primary is memory or time.monotonic() < self._redis_down_until:
            return await op(memory)
        try:
            return await op(primary)
        except Exception as exc:  # Redis down or slow: count in memory for a while
            now = time.monotonic()
            self._redis_down_until = now + REDIS_RETRY_SECONDS
            if now - self._warned_at >= WARN_EVERY_SECONDS:
                self._warned_at = now
                logger.warning(
                    "rate-limit storage %s failed (%s: %s); counting quotas in this process's "
                    "memory for %g s",
                    self.settings.rate_limit_storage_url.split("@")[-1],
                    type(exc).__name__,
                    exc,
                    REDIS_RETRY_SECONDS,
                )
            return await op(memory)

    async def aclose(self) -> None:
        """Close the Redis connections of the current loop's storage (tests, shutdown)."""
        if self._primary is not None and self._primary is not self._memory:
            bridge = getattr(self._primary.storage, "bridge", None)
            client = getattr(bridge, "storage", None)
            if client is not None:
                await client.aclose()
        self._primary = None
        self._loop = None

    async def _refusal(
        self, limiters: _Limiters, quota: _Quota, identity: Identity, asked: float = 1
    ) -> TooManyRequests:
        strategy = limiters.requests if quota.limit.name == "requests" else limiters.window
        stats = await strategy.get_window_stats(quota.item, identity.bucket)
        return TooManyRequests(
            quota.limit, stats.reset_time - self.clock(), who=identity.who, asked=asked
        )

    # -- the checks -------------------------------------------------------------------------

    async def admit(self, identity: Identity) -> TooManyRequests | None:
        """Count one request of ``identity``; the refusal if a quota is used up."""
        quotas = self.of(identity)
        if quotas is None:
            return None
        requests, cpu = quotas.requests, quotas.cpu

        async def check(limiters: _Limiters) -> TooManyRequests | None:
            if requests is not None and not await limiters.requests.hit(
                requests.item, identity.bucket
            ):
                return await self._refusal(limiters, requests, identity)
            if cpu is not None and not await limiters.window.test(cpu.item, identity.bucket):
                return await self._refusal(limiters, cpu, identity)
            return None

        return await self._run(check)

    def charges_cpu(self, identity: Identity) -> bool:
        """Whether the CPU-seconds of ``identity`` are counted."""
        quotas = self.of(identity)
        return quotas is not None and quotas.cpu is not None

    async def charge_cpu(self, identity: Identity, seconds: float) -> None:
        """Charge ``seconds`` of CPU to ``identity`` (the next request over the budget is
        refused; this one is not). Call it with a job's estimated ``cpu_seconds`` when a job
        is admitted; synchronous requests are charged by :class:`QuotaMiddleware`."""
        quotas = self.of(identity)
        if quotas is None or quotas.cpu is None or not seconds > 0:
            return
        cpu = quotas.cpu
        cost = max(1, round(seconds * 1000))

        async def hit(limiters: _Limiters) -> None:
            await limiters.window.hit(cpu.item, identity.bucket, cost=cost)

        await self._run(hit)

    async def charge_chunks(self, identity: Identity, n: int) -> None:
        """Charge ``n`` queued table chunks to ``identity``, or raise :class:`TooManyRequests`
        (charging nothing) when they do not fit in this hour's quota."""
        quotas = self.of(identity)
        if quotas is None or quotas.chunks is None or n <= 0:
            return
        chunks = quotas.chunks

        async def charge(limiters: _Limiters) -> TooManyRequests | None:
            if n > chunks.item.amount:
                # never fits: retry once the window is empty, and split the request
                return TooManyRequests(
                    chunks.limit, chunks.limit.window_seconds, who=identity.who, asked=n
                )
            if not await limiters.window.test(chunks.item, identity.bucket, cost=n):
                return await self._refusal(limiters, chunks, identity, asked=n)
            await limiters.window.hit(chunks.item, identity.bucket, cost=n)
            return None

        refusal = await self._run(charge)
        if refusal is not None:
            raise refusal


def identity_of(request: Request) -> Identity:
    """Who sends ``request`` (as :class:`QuotaMiddleware` found it; else found now)."""
    identity = request.scope.get(IDENTITY_SCOPE_KEY)
    if isinstance(identity, Identity):
        return identity
    return _identify(access_of(request.app.state.settings), request.scope)


def quotas_of(request: Request) -> Quotas:
    """The application's :class:`Quotas`."""
    quotas: Quotas = request.app.state.quotas
    return quotas


async def charge_cpu(request: Request, seconds: float) -> None:
    """:meth:`Quotas.charge_cpu` for the sender of ``request`` (e.g. a job's estimate)."""
    await quotas_of(request).charge_cpu(identity_of(request), seconds)


async def charge_chunks(request: Request, n: int) -> None:
    """:meth:`Quotas.charge_chunks` for the sender of ``request``."""
    await quotas_of(request).charge_chunks(identity_of(request), n)


def chunk_charge(request: Request) -> Callable[[int], None]:
    """A function a service running in the thread pool calls with the chunks it is about to
    queue (``charge=`` of ``app.services.tables.request_table``): it charges them on the event
    loop, or raises the 429."""
    from anyio.from_thread import run

    def charge(n: int) -> None:
        run(charge_chunks, request, n)

    return charge


def _identify(access: Access, scope: Scope) -> Identity:
    key = None
    forwarded: list[str] = []
    for name, value in scope.get("headers") or ():
        if name == b"x-api-key":
            key = value.decode("latin-1")
        elif name == b"x-forwarded-for":  # several headers are one list (RFC 9110 §5.3)
            forwarded.append(value.decode("latin-1"))
    client = scope.get("client")
    peer = str(client[0]) if client else "unknown"
    return access.identify(key, peer, ",".join(forwarded) if forwarded else None)


class QuotaMiddleware:
    """Count every request against its sender's quotas (pure ASGI; see the module).

    Leaves the sender's :class:`Identity` in ``scope["absrank.identity"]``
    (:func:`identity_of`), answers 429 over a quota before the body is read, and charges the
    time from the end of the body to the start of the answer as the request's CPU-seconds.
    """

    def __init__(self, app: ASGIApp, quotas: Quotas) -> None:
        self.app = app
        self.quotas = quotas

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(EXEMPT_PREFIXES):
            await self.app(scope, receive, send)
            return
        quotas = self.quotas
        identity = _identify(quotas.access(), scope)
        scope[IDENTITY_SCOPE_KEY] = identity
        refusal = await quotas.admit(identity)
        if refusal is not None:
            await error_response(refusal, scope.get("path", ""))(scope, receive, send)
            return
        if not quotas.charges_cpu(identity):
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        answered: float | None = None

        async def timed_receive() -> Message:
            nonlocal started
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                started = time.perf_counter()  # the body is in: the handler's time starts
            return message

        async def timed_send(message: Message) -> None:
            nonlocal answered
            if answered is None and message["type"] == "http.response.start":
                answered = time.perf_counter()
            await send(message)

        try:
            await self.app(scope, timed_receive, timed_send)
        finally:
            end = answered if answered is not None else time.perf_counter()
            await quotas.charge_cpu(identity, end - started)
