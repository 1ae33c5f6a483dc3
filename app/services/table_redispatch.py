"""Recovery of table builds: re-enqueue what the queue lost (the periodic task's work).

A build's state lives in the database (:mod:`app.services.table_build`); messages are only
hints. :func:`redispatch` compares the two every minute and re-sends the chunks whose lease
expired or whose message was lost, and the merges that never ran.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import TypedDict

from sqlalchemy.exc import SQLAlchemyError

from app.config import Settings
from app.db import session_scope
from app.domain import tablebuild
from app.domain.tablebuild import TaskSpan
from app.errors import ServiceUnavailable
from app.repositories.tables import TableRepository
from app.services._table_specs import SM, Dispatcher, utc_now

logger = logging.getLogger("app.services.table_build")


class Redispatched(TypedDict):
    """What :func:`redispatch` re-enqueued (a JSON-ready count: tasks and the CLI print it).

    Attributes
    ----------
    chunks_expired : int
        Chunks whose lease expired.
    chunks_lost : int
        Chunks never claimed since they were dispatched more than one lease ago.
    merges : int
        Tables whose merge was queued.
    """

    chunks_expired: int
    chunks_lost: int
    merges: int


def send(
    sm: SM, dispatcher: Dispatcher, spans: Sequence[TaskSpan], merges: Sequence[str] = ()
) -> None:
    """Enqueue ``spans`` then ``merges``, whose chunks the database already marks dispatched.

    When the queue refuses a message (:class:`app.errors.QueueUnavailable`, or any
    :class:`app.errors.ServiceUnavailable`), the chunks of the spans not sent are marked never
    dispatched (:meth:`TableRepository.mark_undispatched`) before the error propagates (the
    API answers 503): no table waits a lease with nothing queued; the re-dispatcher sends them
    at its next run once the queue answers. An unsent merge needs no mark: the re-dispatcher
    queues the merge of every building table whose chunks are all done.

    Raises
    ------
    app.errors.ServiceUnavailable
        From the dispatcher.
    """
    sent = 0
    try:
        for span in spans:
            dispatcher.enqueue_span(span)
            sent += 1
        for table_id in merges:
            dispatcher.enqueue_merge(table_id)
    except ServiceUnavailable:
        unsent = spans[sent:]
        if unsent:
            try:
                with session_scope(sm) as session:
                    TableRepository(session).mark_undispatched(unsent)
            except SQLAlchemyError:  # the database too: the lease-based recovery remains
                logger.exception("marking %d span(s) not dispatched", len(unsent))
        raise


def redispatch(
    sm: SM, settings: Settings, dispatcher: Dispatcher, *, now: datetime | None = None
) -> Redispatched:
    """Re-enqueue work the queue lost; the periodic task calls this every minute.

    * chunks of building tables whose lease expired (the worker died or overran the lease);
    * chunks never claimed since they were last dispatched more than one lease ago (a lost
      message; each such chunk is re-sent at most once per lease period);
    * merges: building tables with every chunk done, merging tables whose merge lease expired;

    and clears the chunk blobs a merge left behind (its worker died before it dropped them).

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
        ``chunk_lease_seconds``.
    dispatcher : Dispatcher
    now : datetime, optional
        Current UTC time (tests pass one).

    Returns
    -------
    Redispatched
        Counts of chunks re-sent (expired leases, lost messages) and of merges.
    """
    now = now or utc_now()
    lease = timedelta(seconds=settings.chunk_lease_seconds)
    with session_scope(sm) as session:
        repo = TableRepository(session)
        keys = repo.chunks_to_redispatch(now=now, lost_before=now - lease)
        repo.mark_dispatched(keys, now=now)
        merges = repo.tables_to_merge(now=now)
        repo.clear_ready_chunk_blobs()  # left by a worker that died after a merge
    by_table: dict[str, list[int]] = {}
    for key in keys:
        by_table.setdefault(key.table_id, []).append(key.index)
    spans = [
        span
        for table_id, indices in by_table.items()
        for span in tablebuild.spans_of(table_id, indices)
    ]
    send(sm, dispatcher, spans, merges)
    counts = Redispatched(
        chunks_expired=sum(k.reason == "expired" for k in keys),
        chunks_lost=sum(k.reason == "lost" for k in keys),
        merges=len(merges),
    )
    if keys or merges:
        logger.info("redispatch: %s", counts)
    return counts
