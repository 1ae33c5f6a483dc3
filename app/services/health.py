"""Health check use case: the database and the queue, each asked once within its timeout."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from app import __version__
from app.errors import ServiceUnavailable
from app.repositories.health import ping


@runtime_checkable
class Pingable(Protocol):
    """A dispatcher that can ask its queue for an answer (``workers.tasks.HueyDispatcher``);
    an inline dispatcher (tests, ``memory://``) has no queue to ask."""

    def ping(self) -> None:
        """Raise :class:`app.errors.ServiceUnavailable` if the queue does not answer."""


@dataclass(frozen=True)
class Check:
    """One dependency's answer.

    Attributes
    ----------
    ok : bool
    error : str or None
        Class name of the error the check raised.
    detail : str or None
        First line of its message.
    """

    ok: bool
    error: str | None = None
    detail: str | None = None


@dataclass(frozen=True)
class HealthReport:
    """What :func:`health` found.

    Attributes
    ----------
    database, queue : Check
    version : str
    """

    database: Check
    queue: Check
    version: str = __version__

    @property
    def status(self) -> Literal["ok", "degraded", "down"]:
        """``down`` without a database, ``degraded`` without a queue, else ``ok``."""
        if not self.database.ok:
            return "down"
        return "ok" if self.queue.ok else "degraded"


def _failed(exc: BaseException) -> Check:
    cause = exc.__cause__ if isinstance(exc, ServiceUnavailable) and exc.__cause__ else exc
    if isinstance(cause, SQLAlchemyError) and getattr(cause, "orig", None) is not None:
        cause = cause.orig  # type: ignore[attr-defined]
    text = str(cause).strip()
    return Check(False, type(cause).__name__, text.splitlines()[0][:200] if text else None)


def check_database(sm: sessionmaker[Session]) -> Check:
    """``SELECT 1`` on a pooled connection (a new one within the connect timeout)."""
    try:
        with sm() as session:
            ping(session)
    except SQLAlchemyError as exc:
        return _failed(exc)
    return Check(True)


def check_queue(dispatcher: object) -> Check:
    """The dispatcher's :meth:`Pingable.ping` (bounded by ``queue_timeout_seconds``)."""
    if not isinstance(dispatcher, Pingable):
        return Check(True)
    try:
        dispatcher.ping()
    except ServiceUnavailable as exc:
        return _failed(exc)
    return Check(True)


def health(sm: sessionmaker[Session], dispatcher: object) -> HealthReport:
    """Check the database and the queue; each check is bounded by its driver's timeouts
    (``database_connect_timeout_seconds``, ``database_busy_timeout_seconds``,
    ``queue_timeout_seconds``), so a dead dependency cannot make the check hang."""
    return HealthReport(database=check_database(sm), queue=check_queue(dispatcher))
