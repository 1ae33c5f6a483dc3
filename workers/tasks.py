"""Thin, idempotent tasks: each one calls a service of ``app.services.tables``.

The database decides what is done, so a task may run twice, late, or never (the periodic
re-dispatcher resends it): duplicates are skipped and results are written once.
"""

from __future__ import annotations

import logging
import weakref
from typing import Any

from huey import Huey, crontab
from huey.storage import SqliteStorage

from app.config import Settings
from app.domain.tablebuild import TaskSpan
from app.errors import QueueUnavailable
from app.services import job_kinds, jobs, result_sets, table_build
from app.services import tables as table_service
from app.services._table_specs import SM, Dispatcher
from workers.app import (
    QUEUE_ERRORS,
    checkpoint,
    consumer_workers,
    get_dispatcher,
    get_sessionmaker,
    huey,
    worker_caches,
    worker_costs,
    worker_settings,
)

logger = logging.getLogger(__name__)


def _build_span(span: TaskSpan) -> str:
    """Build the first chunks of ``span`` (one; of a cheap function, about
    ``table_task_seconds`` of work), hand the rest of the span on as a new message, and merge
    the table if they were the last (:func:`app.services.table_build.run_span`)."""
    settings = worker_settings()
    outcome = table_build.run_span(
        get_sessionmaker(),
        settings,
        span,
        task_seconds=settings.table_task_seconds,
        share=consumer_workers(),
        costs=worker_costs(),
        dispatcher=get_dispatcher(),
    )
    if outcome == "merged":
        after_table_ready(get_sessionmaker(), worker_settings(), get_dispatcher(), span.table_id)
    return outcome


def _build_chunk(table_id: str, index: int) -> str:
    """A message of the one-chunk format (queued by an earlier version): chunk ``index`` and
    the next ones a task takes along."""
    return _build_span(TaskSpan(table_id, index, None))


def _merge_table(table_id: str) -> bool:
    """Merge a table whose chunks are all done (no-op otherwise)."""
    merged = table_service.merge(get_sessionmaker(), worker_settings(), table_id)
    if merged:
        after_table_ready(get_sessionmaker(), worker_settings(), get_dispatcher(), table_id)
    return merged


def after_table_ready(sm: SM, settings: Settings, dispatcher: Dispatcher, table_id: str) -> None:
    """What follows a table becoming ready: the ladder archived values need
    (:func:`app.services.result_sets.on_table_ready`). A failure here is logged, never the
    task's: the table is ready either way, and storing or ranking a set can queue it later.
    The worker's own caches are used (:func:`workers.app.worker_caches`)."""
    try:
        caches = worker_caches()
        result_sets.on_table_ready(
            sm, settings, dispatcher, table_id, cache=caches.tables, ladder_cache=caches.ladders
        )
    except Exception:
        logger.exception("after table %s became ready", table_id)
    try:
        checkpoint()  # the WAL pages of its chunk blobs (workers.app.WORKER_WAL_AUTOCHECKPOINT)
    except Exception:
        logger.exception("checkpoint after table %s", table_id)


def _run_job(job_id: str) -> str:
    """Run a job (:func:`app.services.jobs.run_job`) with this process's database, caches and
    dispatcher; idempotent (a finished job, or one a live worker holds, is skipped)."""
    return jobs.run_job(worker_job_env(), job_id, job_kinds.EXECUTORS)


def worker_job_env() -> jobs.JobEnv:
    """What a job run by this worker process uses."""
    caches = worker_caches()
    return jobs.JobEnv(
        get_sessionmaker(), worker_settings(), get_dispatcher(), caches.tables, caches.ladders
    )


def _redispatch_jobs() -> int:
    """Re-enqueue jobs whose lease expired (their worker died) or whose message was lost."""
    return jobs.redispatch_jobs(get_sessionmaker(), worker_settings(), HueyDispatcher(huey))


def _redispatch_tables() -> table_service.Redispatched:
    """Re-enqueue chunks and merges whose lease expired or whose message was lost."""
    return table_service.redispatch(get_sessionmaker(), worker_settings(), HueyDispatcher(huey))


# task names (module + function name) are what messages carry: keep them stable
build_span = huey.task(name="build_span")(_build_span)
build_chunk = huey.task(name="build_chunk")(_build_chunk)
merge_table = huey.task(name="merge_table")(_merge_table)
run_job = huey.task(name="run_job")(_run_job)
redispatch_tables = huey.periodic_task(crontab(minute="*"), name="redispatch_tables")(
    _redispatch_tables
)
redispatch_jobs = huey.periodic_task(crontab(minute="*"), name="redispatch_jobs")(_redispatch_jobs)

_registered: weakref.WeakSet[Huey] = weakref.WeakSet([huey])


def register_tasks(instance: Huey) -> None:
    """Register the tasks on another huey instance (same names, so any consumer runs them).

    Parameters
    ----------
    instance : huey.Huey
        E.g. ``workers.app.make_huey(settings)`` for a queue other than the process default.
    """
    if instance in _registered:
        return
    instance.task(name="build_span")(_build_span)
    instance.task(name="build_chunk")(_build_chunk)
    instance.task(name="merge_table")(_merge_table)
    instance.task(name="run_job")(_run_job)
    _registered.add(instance)


class HueyDispatcher:
    """The services' dispatcher: enqueue chunk and merge tasks on a huey instance.

    Parameters
    ----------
    instance : huey.Huey, optional
        Default: the process-wide ``workers.app.huey``.
    retry_after : int, optional
        Retry-After of the :class:`app.errors.QueueUnavailable` it raises when the queue does
        not answer. Default: ``worker_settings().retry_after_seconds``.
    """

    def __init__(self, instance: Huey | None = None, *, retry_after: int | None = None) -> None:
        self.huey = instance if instance is not None else huey
        self.retry_after = (
            retry_after if retry_after is not None else worker_settings().retry_after_seconds
        )
        register_tasks(self.huey)

    def _enqueue(self, message: Any) -> None:
        try:
            self.huey.enqueue(message)
        except QUEUE_ERRORS as exc:
            name = type(exc).__name__
            # the message (a host, a port, a path) is the operator's, in the log
            logger.warning("queue unavailable: %s: %s", name, _first_line(exc))
            raise QueueUnavailable(
                f"the task queue is unavailable ({name}); nothing was queued, try again in "
                f"{self.retry_after} s",
                retry_after=self.retry_after,
                extra={"dependency": "queue", "error": name},
            ) from exc

    def pending_count(self) -> int | None:
        """Messages waiting in the queue (``None`` if the queue does not answer)."""
        try:
            return int(self.huey.pending_count())
        except QUEUE_ERRORS:
            return None

    def ping(self) -> None:
        """Ask the queue how many messages wait (a bounded round trip); a SQLite queue is
        also asked for the write lock an enqueue needs.

        Raises
        ------
        app.errors.QueueUnavailable
            The queue does not answer (within ``queue_timeout_seconds``).
        """
        try:
            self.huey.pending_count()
            storage = self.huey.storage
            if isinstance(storage, SqliteStorage):
                # a SQLite queue reads while another connection holds its write lock: take
                # the lock an enqueue takes, write nothing (within the busy timeout)
                with storage.db(commit=True):
                    pass
        except QUEUE_ERRORS as exc:
            raise QueueUnavailable(
                f"the task queue is unavailable ({type(exc).__name__})",
                retry_after=self.retry_after,
                extra={"dependency": "queue", "error": type(exc).__name__},
            ) from exc

    def enqueue_span(self, span: TaskSpan) -> None:
        """Queue a task on the chunks of ``span`` (the message carries the pickled span).

        Raises
        ------
        app.errors.QueueUnavailable
            The queue does not answer: the message was not queued.
        """
        self._enqueue(build_span.s(span))

    def enqueue_chunk(self, table_id: str, index: int) -> None:
        """Queue chunk ``index`` of a table (a span of one chunk)."""
        self.enqueue_span(TaskSpan(table_id, index))

    def enqueue_merge(self, table_id: str) -> None:
        """Queue the merge of a table (raises :class:`app.errors.QueueUnavailable` as
        :meth:`enqueue_span` does)."""
        self._enqueue(merge_table.s(table_id))

    def enqueue_job(self, job_id: str) -> None:
        """Queue the run of a job (:mod:`app.services.jobs`; raises
        :class:`app.errors.QueueUnavailable` as :meth:`enqueue_span` does)."""
        self._enqueue(run_job.s(job_id))


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else "no answer"
