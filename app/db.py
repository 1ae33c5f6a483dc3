"""SQLAlchemy base, engine and session factories."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import TYPE_CHECKING

from sqlalchemy import MetaData, create_engine, event
from sqlalchemy import exc as sa_exc
from sqlalchemy.engine import Engine
from sqlalchemy.engine.interfaces import DBAPIConnection
from sqlalchemy.orm import DeclarativeBase, Session, sessionmaker

if TYPE_CHECKING:
    from app.config import Settings

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    """Declarative base with a naming convention so migrations are stable."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


#: SQLite's busy timeout when none is given (``ABSRANK_DATABASE_BUSY_TIMEOUT_SECONDS``).
DEFAULT_BUSY_TIMEOUT_SECONDS = 30.0


def _sqlite_pragmas(
    dbapi_connection: DBAPIConnection,
    _record: object,
    *,
    busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS,
) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA journal_mode=WAL")
    # In WAL mode, NORMAL syncs the WAL at checkpoints only, not at every commit (FULL's fsync
    # cost about 3 ms per commit, two commits per table chunk). The database cannot be corrupted
    # either way. The trade-off is durability: after a power loss or an OS crash (not a crash
    # of the process) the last transactions committed before it may be rolled back. A lost
    # chunk result or claim is re-queued by the re-dispatcher once its lease expires; a lost
    # table request or state change is as if it had not happened (the client requests again).
    cur.execute("PRAGMA synchronous=NORMAL")
    # a write waits this long for another connection's write lock, then fails "database is
    # locked" (the API answers 503 with Retry-After: app.api.problems)
    cur.execute(f"PRAGMA busy_timeout={round(busy_timeout_seconds * 1000)}")
    cur.execute("PRAGMA foreign_keys=ON")
    cur.close()


def make_engine(
    url: str,
    *,
    busy_timeout_seconds: float = DEFAULT_BUSY_TIMEOUT_SECONDS,
    connect_timeout_seconds: float | None = None,
) -> Engine:
    """Create an engine; SQLite gets WAL mode (``synchronous=NORMAL``) and a busy timeout so
    workers and API share it.

    Parameters
    ----------
    url : str
        SQLAlchemy URL.
    busy_timeout_seconds : float, default 30
        How long a statement waits for another connection's lock before it fails: SQLite's
        busy timeout ("database is locked"), PostgreSQL's ``lock_timeout`` (SQLSTATE 55P03)
        (``ABSRANK_DATABASE_BUSY_TIMEOUT_SECONDS``).
    connect_timeout_seconds : float, optional
        PostgreSQL: how long opening a connection may take (libpq ``connect_timeout``, whole
        seconds, at least 1; ``ABSRANK_DATABASE_CONNECT_TIMEOUT_SECONDS``); also how long a
        request waits for a pooled connection. Default: libpq's (none) and SQLAlchemy's 30 s.
    """
    if url.startswith("sqlite"):
        engine = create_engine(
            url, connect_args={"check_same_thread": False, "timeout": busy_timeout_seconds}
        )
        pragmas = partial(_sqlite_pragmas, busy_timeout_seconds=busy_timeout_seconds)
        event.listen(engine, "connect", pragmas)
        return engine
    # a statement waits at most the busy timeout for a lock (lock_timeout), as on SQLite
    connect_args: dict[str, object] = {
        "options": f"-c lock_timeout={round(busy_timeout_seconds * 1000)}"
    }
    if connect_timeout_seconds is None:
        return create_engine(url, pool_pre_ping=True, connect_args=connect_args)
    connect_args["connect_timeout"] = max(1, round(connect_timeout_seconds))
    return create_engine(
        url, pool_pre_ping=True, pool_timeout=connect_timeout_seconds, connect_args=connect_args
    )


def engine_for(settings: Settings) -> Engine:
    """:func:`make_engine` for ``settings.database_url`` with the settings' timeouts."""
    return make_engine(
        settings.database_url,
        busy_timeout_seconds=settings.database_busy_timeout_seconds,
        connect_timeout_seconds=settings.database_connect_timeout_seconds,
    )


#: SQLite's messages for a database another connection holds, or that cannot be opened.
_SQLITE_UNAVAILABLE = (
    "database is locked",
    "database table is locked",
    "database is busy",
    "unable to open database file",
    "disk i/o error",
)
#: PostgreSQL SQLSTATEs (or their classes) that mean "not now" rather than "wrong request":
#: connection exceptions, insufficient resources, operator intervention (shutdown, cannot
#: connect now, query canceled by a timeout) and lock_not_available.
_POSTGRES_UNAVAILABLE = ("08", "53", "57P", "57014", "55P03")


def unavailable_reason(exc: BaseException) -> str | None:
    """Why ``exc`` means the database is unavailable (down, unreachable, locked past its
    timeout, its pool exhausted), or ``None`` for any other error (a bug, a constraint).

    Parameters
    ----------
    exc : BaseException
        Typically a :class:`sqlalchemy.exc.DBAPIError` or :class:`sqlalchemy.exc.TimeoutError`.

    Returns
    -------
    str or None
        A short reason naming the error class (``"OperationalError: database is locked"``).
    """
    if isinstance(exc, sa_exc.TimeoutError):  # QueuePool: no connection within pool_timeout
        return f"TimeoutError: {str(exc).splitlines()[0]}"
    if not isinstance(exc, sa_exc.DBAPIError):
        return None
    orig = exc.orig
    name = type(orig).__name__
    first = str(orig).strip().splitlines()[0] if str(orig).strip() else name
    if exc.connection_invalidated or isinstance(exc, sa_exc.DisconnectionError):
        return f"{name}: {first}"
    if isinstance(orig, sqlite3.OperationalError):
        return f"{name}: {first}" if first.lower().startswith(_SQLITE_UNAVAILABLE) else None
    if isinstance(exc, sa_exc.OperationalError):
        state = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
        # no SQLSTATE: the client library failed before a server answered (refused, timeout)
        if state is None or str(state).startswith(_POSTGRES_UNAVAILABLE):
            return f"{name}: {first}"
    return None


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    """Sessions that never expire on commit (objects are read after the transaction ends)."""
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One transaction: commit on success, roll back on error."""
    session = factory()
    try:
        yield session
        session.commit()
    except BaseException:
        session.rollback()
        raise
    finally:
        session.close()
