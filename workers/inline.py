"""A dispatcher that runs chunk and merge tasks in the caller, for one-process use.

What a worker would do, done synchronously inside the request that queued the work: the API
tests, ``scripts/readme_outputs.py`` and other in-process runs use it. ``hold = True`` queues
nothing (tables stay ``building``), to look at a build in progress.
"""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.domain.tablebuild import TaskSpan
from app.services import job_kinds, jobs, result_sets
from app.services import tables as table_service


class _HasSessionmaker(Protocol):
    state: object


class InlineDispatcher:
    """Runs chunk and merge tasks synchronously in the request (what a worker would do).

    Parameters
    ----------
    settings : Settings
        The app's settings (the same object given to ``create_app``).

    Attributes
    ----------
    app : object or None
        The ASGI app whose ``state.sessionmaker`` the tasks use; set it after ``create_app``.
    hold : bool
        When true, queue nothing: tables stay ``building``.
    chunks : list of (str, int)
        Every ``(table_id, index)`` enqueued, in order (a span, chunk by chunk).
    jobs : list of str
        Every job id enqueued, in order.
    executors : mapping
        The executor of each kind of job (tests may add kinds).
    """

    runs_in_request = True
    """Table builds run inside the request that queues them, so a synchronous request's
    deadline (``app.api.work.sync_control``) does not apply: it would count their time."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.app: _HasSessionmaker | None = None
        self.hold = False
        self.chunks: list[tuple[str, int]] = []
        self.jobs: list[str] = []
        self.executors: dict[str, jobs.Executor] = dict(job_kinds.EXECUTORS)

    def enqueue_span(self, span: TaskSpan) -> None:
        """Build the chunks of ``span`` now, one task each (unless held)."""
        if span.count is None:
            raise ValueError("InlineDispatcher needs spans of a known length")
        for index in range(span.first, span.first + span.count):
            self.enqueue_chunk(span.table_id, index)

    def enqueue_chunk(self, table_id: str, index: int) -> None:
        """Build chunk ``index`` of ``table_id`` now (unless held)."""
        self.chunks.append((table_id, index))
        if not self.hold:
            outcome = table_service.run_chunk(self._sm(), self.settings, table_id, index)
            if outcome == "merged":
                self._after_ready(table_id)

    def enqueue_merge(self, table_id: str) -> None:
        """Merge ``table_id`` now (unless held)."""
        if not self.hold and table_service.merge(self._sm(), self.settings, table_id):
            self._after_ready(table_id)

    def enqueue_job(self, job_id: str) -> None:
        """Run the job now (unless held)."""
        self.jobs.append(job_id)
        if not self.hold:
            jobs.run_job(self.job_env(), job_id, self.executors)

    def job_env(self) -> jobs.JobEnv:
        """What a job run here uses: the app's database, settings, caches and this dispatcher."""
        state = self._state()
        return jobs.JobEnv(
            state.sessionmaker, self.settings, self, state.table_caches, state.ladder_caches
        )

    def _after_ready(self, table_id: str) -> None:
        """:func:`app.services.result_sets.on_table_ready` with the app's caches."""
        state = self._state()
        result_sets.on_table_ready(
            state.sessionmaker,
            self.settings,
            self,
            table_id,
            cache=state.table_caches,
            ladder_cache=state.ladder_caches,
        )

    def _state(self) -> Any:
        """The app's ``state`` (its sessionmaker and caches, made by its lifespan)."""
        if self.app is None:
            raise RuntimeError("InlineDispatcher.app is not set")
        return self.app.state  # FastAPI's state is untyped

    def _sm(self) -> sessionmaker[Session]:
        sm: sessionmaker[Session] = self._state().sessionmaker
        return sm
