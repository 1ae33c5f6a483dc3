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


#: Seconds per chunk the re-dispatcher assumes before any chunk finished within a lease (with
#: ``table_task_seconds`` of 0): a task aims at ``table_task_seconds`` of work, one chunk at least.
UNMEASURED_SECONDS_PER_CHUNK = 1.0
#: The smallest measured seconds per chunk (a chunk of a cheap function can take microseconds).
MIN_SECONDS_PER_CHUNK = 1e-3


def _queue_length(dispatcher: Dispatcher) -> int:
    """Messages in the queue (``pending_count`` of a huey dispatcher; 0 when it has none or
    the queue does not answer)."""
    pending = getattr(dispatcher, "pending_count", None)
    count = pending() if callable(pending) else None
    return int(count) if isinstance(count, int) else 0


def _backlog(
    repo: TableRepository, settings: Settings, *, now: datetime, in_queue: int
) -> tablebuild.Backlog:
    """The workers (``redispatch_workers``, else those that finished chunks in the last lease),
    their measured seconds per chunk, and the chunks queued: the database's dispatched and
    unclaimed chunks, or the queue's length if it holds more messages."""
    since = now - timedelta(seconds=settings.chunk_lease_seconds)
    pace = repo.chunk_pace(since=since)
    workers = settings.redispatch_workers or max(1, pace.workers)
    if pace.chunks:
        seconds = max(pace.cpu_seconds / pace.chunks, MIN_SECONDS_PER_CHUNK)
    else:
        seconds = settings.table_task_seconds or UNMEASURED_SECONDS_PER_CHUNK
    queued = max(repo.queued_chunk_count(dispatched_since=since), in_queue)
    return tablebuild.Backlog(workers=workers, seconds_per_chunk=seconds, queued=queued)


def redispatch(
    sm: SM, settings: Settings, dispatcher: Dispatcher, *, now: datetime | None = None
) -> Redispatched:
    """Re-enqueue work the queue lost; the periodic task calls this every minute.

    * chunks of building tables whose lease expired (the worker died or overran the lease);
    * chunks never claimed since they were last dispatched more than one lease ago (a lost
      message; each such chunk is re-sent at most once per lease period), or never sent (the
      queue refused them: :func:`send`);

    at most as many as the workers can work within the next lease, less what is queued
    (:class:`app.domain.tablebuild.Backlog`; the oldest tables' chunks first, the others wait
    for a later run: a backlog is never re-sent on top of itself);
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
    in_queue = _queue_length(dispatcher)  # before the transaction: a round trip to the queue
    with session_scope(sm) as session:
        repo = TableRepository(session)
        keys = repo.chunks_to_redispatch(now=now, lost_before=now - lease)
        if keys:  # oldest tables first; the rest waits for a later run
            backlog = _backlog(repo, settings, now=now, in_queue=in_queue)
            budget = backlog.budget(settings.chunk_lease_seconds)
            if len(keys) > budget:
                logger.info(
                    "redispatch: %d of %d chunk(s) now, the rest later (%s)",
                    budget,
                    len(keys),
                    backlog,
                )
                keys = keys[:budget]
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
