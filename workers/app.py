"""The huey application and the workers' composition root.

``ABSRANK_QUEUE_URL`` picks the storage:

* ``sqlite:///path`` — :class:`huey.SqliteHuey`, embedded (one machine, no server);
* ``redis://host:port/db`` (or ``rediss://``, ``unix://``) — :class:`huey.RedisHuey`, distributed;
* ``postgresql://...`` — :class:`huey.PostgresHuey`, distributed on the same PostgreSQL as the data;
* ``memory://`` — :class:`huey.MemoryHuey` with ``immediate=True``: tasks run inline (tests only).

Start workers with :func:`run_consumer` (``absrank worker``) or
``huey_consumer workers.app.huey -k process -w N``. Each worker process creates its own engine
lazily (after the fork), from the same settings.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import redis
from huey import Huey, MemoryHuey, PostgresHuey, RedisHuey, SqliteHuey
from huey.exceptions import HueyException
from redis.backoff import NoBackoff
from redis.retry import Retry
from sqlalchemy import event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings, get_settings
from app.db import engine_for, make_sessionmaker
from app.heap import settle_after_imports
from app.services import table_build, table_cache
from workers import lifecycle

logger = logging.getLogger(__name__)

_REDIS_SCHEMES = ("redis://", "rediss://", "unix://")
#: Seconds a Redis consumer's blocking read (BRPOP) waits for a message (huey's default).
_REDIS_READ_TIMEOUT = 1.0
#: What a storage raises when the queue does not answer: Redis refused or timed out, the
#: SQLite queue file locked past its timeout, PostgreSQL unreachable (huey adds its own).
QUEUE_ERRORS: tuple[type[BaseException], ...] = (
    redis.RedisError,
    sqlite3.Error,
    psycopg.Error,
    OSError,
    HueyException,
)
_POSTGRES_SCHEMES = ("postgresql://", "postgres://", "postgresql+psycopg://")


def make_huey(settings: Settings) -> Huey:
    """Return a huey instance for ``settings.queue_url`` (see the module docstring).

    Parameters
    ----------
    settings : Settings
        ``queue_url`` and ``queue_name`` are used.

    Returns
    -------
    huey.Huey
        Results are not stored (the database holds every outcome). Every storage answers
        within about ``settings.queue_timeout_seconds`` or raises (Redis: connect and socket
        timeouts, a blocking read waits its 1 s more; PostgreSQL: ``connect_timeout``; SQLite:
        the queue file's busy timeout), so a dead queue cannot hold a request.

    Raises
    ------
    ValueError
        Unsupported URL scheme.
    """
    url, name = settings.queue_url, settings.queue_name
    timeout = settings.queue_timeout_seconds
    if url.startswith("memory://"):
        return MemoryHuey(name, immediate=True, results=False)
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        path.parent.mkdir(parents=True, exist_ok=True)
        return SqliteHuey(name, filename=str(path), results=False, timeout=timeout)
    if url.startswith(_REDIS_SCHEMES):
        # the consumer's BRPOP blocks read_timeout (1 s) on the socket: its timeout exceeds it
        pool = redis.ConnectionPool.from_url(
            url,
            socket_connect_timeout=timeout,
            socket_timeout=timeout + _REDIS_READ_TIMEOUT,
            retry=Retry(NoBackoff(), 0),
        )
        return RedisHuey(
            name, connection_pool=pool, read_timeout=_REDIS_READ_TIMEOUT, results=False
        )
    if url.startswith(_POSTGRES_SCHEMES):
        dsn = make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)
        return PostgresHuey(name, dsn=dsn, results=False, connect_timeout=max(1, round(timeout)))
    raise ValueError(
        f"unsupported queue_url {url!r}: use sqlite:///path, redis://..., postgresql://... "
        "or memory://"
    )


@dataclass
class _Runtime:
    """Per-process state of the tasks: settings, a sessionmaker and its caches (made after
    fork)."""

    settings: Settings | None = None
    sessionmaker: sessionmaker[Session] | None = None
    engine: Engine | None = None
    pid: int | None = None
    owned: bool = field(default=False)
    caches: table_cache.AppCaches | None = None
    consumer_workers: int = 1
    costs: table_build.TaskCosts | None = None


_runtime = _Runtime()


def configure(
    *,
    settings: Settings | None = None,
    sessionmaker: sessionmaker[Session] | None = None,
    caches: table_cache.AppCaches | None = None,
) -> None:
    """Override what the tasks use in this process (tests, an embedded worker).

    Parameters
    ----------
    settings : Settings, optional
        Default: :func:`app.config.get_settings`.
    sessionmaker : sessionmaker, optional
        Default: a sessionmaker on a new engine for ``settings.database_url``, created on first
        use in each process.
    caches : AppCaches, optional
        The caches the tasks use (an embedded worker may share an app's). Default: the
        process's own, made with its sessionmaker (:func:`worker_caches`).
    """
    reset()
    _runtime.settings = settings
    _runtime.sessionmaker = sessionmaker
    _runtime.caches = caches
    _runtime.pid = os.getpid() if sessionmaker is not None else None


def reset() -> None:
    """Forget configured state and dispose an engine this module created."""
    if _runtime.owned and _runtime.engine is not None and _runtime.pid == os.getpid():
        _runtime.engine.dispose()
    _runtime.settings = None
    _runtime.sessionmaker = None
    _runtime.engine = None
    _runtime.pid = None
    _runtime.owned = False
    _runtime.caches = None
    _runtime.costs = None
    _runtime.consumer_workers = 1


def worker_settings() -> Settings:
    """Return the settings the tasks use."""
    return _runtime.settings or get_settings()


def get_sessionmaker() -> sessionmaker[Session]:
    """Return this process's sessionmaker, creating the engine lazily after a fork."""
    pid = os.getpid()
    if _runtime.sessionmaker is None or _runtime.pid != pid:
        if _runtime.engine is not None and _runtime.owned:
            # inherited through fork: drop the parent's pooled connections without closing them
            _runtime.engine.dispose(close=False)
        settings = worker_settings()
        settings.ensure_dirs()
        engine = engine_for(settings)
        if engine.dialect.name == "sqlite":
            event.listen(engine, "connect", _sqlite_worker_pragmas)
        _runtime.engine = engine
        _runtime.sessionmaker = make_sessionmaker(engine)
        if _runtime.caches is None or _runtime.pid is not None:
            # the worker's own caches (a forked child starts empty, as its engine does)
            _runtime.caches = table_cache.AppCaches.from_settings(settings)
        _runtime.costs = table_build.TaskCosts()
        _runtime.pid = pid
        _runtime.owned = True
    return _runtime.sessionmaker


#: WAL pages a worker's SQLite connection lets accumulate before a commit checkpoints them
#: (SQLite's default is 1000, 4 MB): a chunk task's commit of 16 chunks of 2^16 (14 MB of blobs)
#: spent 40-70 ms in the checkpoint, of 80-130 ms. Workers checkpoint after each table instead
#: (:func:`checkpoint`), off its build.
WORKER_WAL_AUTOCHECKPOINT = 16384


def _sqlite_worker_pragmas(dbapi_connection: DBAPIConnection, _record: object) -> None:
    cur = dbapi_connection.cursor()
    cur.execute(f"PRAGMA wal_autocheckpoint={WORKER_WAL_AUTOCHECKPOINT}")
    cur.close()


def checkpoint() -> None:
    """Checkpoint this process's SQLite database (``PASSIVE``: waits for no reader or
    writer); no-op on other databases. A worker runs it once a table is ready."""
    get_sessionmaker()
    engine = _runtime.engine
    if engine is None or engine.dialect.name != "sqlite":
        return
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(PASSIVE)")


def worker_caches() -> table_cache.AppCaches:
    """This process's table and ladder caches, made with its sessionmaker (sized by
    :func:`worker_settings`), or those given to :func:`configure`."""
    get_sessionmaker()  # a forked child makes its own engine and caches first
    if _runtime.caches is None:  # a sessionmaker given to configure, without caches
        _runtime.caches = table_cache.AppCaches.from_settings(worker_settings())
    return _runtime.caches


def worker_costs() -> table_build.TaskCosts:
    """This process's measured costs per point of the functions it built chunks of (they size
    its chunk tasks; a forked child starts with none)."""
    get_sessionmaker()  # a forked child makes its own first
    if _runtime.costs is None:  # a sessionmaker given to configure
        _runtime.costs = table_build.TaskCosts()
    return _runtime.costs


def consumer_workers() -> int:
    """Worker processes of this process's consumer (:func:`run_consumer`; 1 otherwise): the
    chunk tasks size their last claims so that they finish together."""
    return _runtime.consumer_workers


class QueueErrorThrottle(logging.Filter):
    """Let huey's "Error reading from queue" through once per ``interval`` seconds.

    While the queue is down, huey logs it with a traceback at every poll (every 0.02 s, see
    :func:`run_consumer`): thousands of lines a minute. The first is logged whole; later ones
    once per interval, saying how many were left out.
    """

    MESSAGE = "Error reading from queue"

    def __init__(self, interval: float = 30.0, clock: Callable[[], float] = time.monotonic):
        super().__init__()
        self.interval = interval
        self.clock = clock
        self._last: float | None = None
        self._skipped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg != self.MESSAGE:
            return True
        now = self.clock()
        if self._last is not None and now - self._last < self.interval:
            self._skipped += 1
            return False
        if self._skipped:
            record.msg = f"{self.MESSAGE} ({self._skipped} more left out since the last one)"
            record.exc_info = None
        self._last, self._skipped = now, 0
        return True


def run_consumer(
    workers: int = 1, *, periodic: bool = True, parent: int | None = None, **options: Any
) -> None:
    """Run a huey consumer with ``workers`` worker processes until SIGTERM/SIGINT.

    SIGTERM stops it gracefully: tasks in flight may finish for ``worker_shutdown_seconds``,
    then are interrupted. SIGINT (Ctrl-C) interrupts them at once (their chunks are re-sent
    when their lease expires: the database is the truth). Either way it returns within about
    a second after that. On an embedded (SQLite) queue it holds the queue's consumer lock for
    its life (:class:`workers.lifecycle.ConsumerLock`); its worker processes get SIGKILL if it
    dies (Linux), so none outlives it.

    Parameters
    ----------
    workers : int, default 1
        Worker processes (``worker_type="process"``: cocoex holds the GIL, so threads do not
        scale).
    periodic : bool, default True
        Also run the periodic re-dispatcher (once a minute). Several consumers may all run it;
        it is idempotent.
    parent : int, optional
        The pid of the process this consumer must not outlive (``absrank serve``'s, for its
        embedded worker): the consumer stops as on SIGTERM once its parent is another
        (:class:`workers.lifecycle.ParentWatch`, the fallback of ``PR_SET_PDEATHSIG``).
    **options
        Other :class:`huey.consumer.Consumer` options (``max_delay``, ``backoff``, ...).

    Raises
    ------
    RuntimeError
        With ``memory://`` (tasks run inline, there is nothing to consume).
    workers.lifecycle.QueueBusy
        The embedded queue already has a consumer (nothing was started).
    """
    if huey.immediate:
        raise RuntimeError("queue_url is memory://: tasks run inline, no consumer is needed")
    if workers < 1:
        raise ValueError("workers must be >= 1")
    huey_logger = logging.getLogger("huey")
    if not logging.getLogger().handlers and not huey_logger.handlers:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(processName)s %(message)s"
        )
    throttle = QueueErrorThrottle()
    for handler in {*logging.getLogger().handlers, *huey_logger.handlers}:
        handler.addFilter(throttle)
    # An idle worker polls a non-blocking queue (SQLite) every 0.02 s instead of backing off to
    # 2 s: a table requested after a quiet spell waited up to 2 s for its first chunk (and
    # 0.05 s on average at 0.1 s, a fifth of a cheap 2^20 table's evaluation). An empty poll
    # is one indexed SELECT on the local queue file (~0.05 ms): ~50 per second per worker
    # process, a fraction of a percent of a core. Redis and PostgreSQL storage block on the
    # queue (BRPOP, LISTEN) and do not poll at all.
    consumer_options: dict[str, Any] = {
        "initial_delay": 0.02,
        "backoff": 1.15,
        "max_delay": 0.02,
        "check_worker_health": True,
        "health_check_interval": 10,
        # SIGTERM (systemd, docker, absrank serve, a dead parent) lets tasks finish, bounded
        "graceful_signal": "TERM",
        "shutdown_timeout": worker_settings().worker_shutdown_seconds,
    }
    consumer_options.update(options)
    settings = worker_settings()
    # the lock of the queue this consumer reads (the process-wide huey's file)
    queue_url = f"sqlite:///{huey.storage.filename}" if isinstance(huey, SqliteHuey) else ""
    lock = lifecycle.ConsumerLock.acquire(queue_url, parent=parent)
    try:
        _runtime.consumer_workers = workers  # the forked worker processes inherit it
        consumer = lifecycle.WatchedConsumer(
            huey,
            watch=lifecycle.ParentWatch(parent) if parent is not None else None,
            workers=workers,
            worker_type="process",
            periodic=periodic,
            **consumer_options,
        )
        logger.info("absrank worker: %d process(es) on %s", workers, settings.queue_url)
        settle_after_imports()  # before the worker processes fork (app.heap)
        consumer.run()
    finally:
        if lock is not None:
            lock.release()


def get_dispatcher() -> tasks.HueyDispatcher:
    """Return a dispatcher that enqueues on the process-wide :data:`huey`."""
    return tasks.HueyDispatcher(huey)


huey: Huey = make_huey(get_settings())

from workers import tasks  # noqa: E402  (registers the tasks on ``huey``)

__all__ = [
    "checkpoint",
    "configure",
    "consumer_workers",
    "get_dispatcher",
    "get_sessionmaker",
    "huey",
    "make_huey",
    "reset",
    "run_consumer",
    "tasks",
    "worker_caches",
    "worker_costs",
    "worker_settings",
]
