"""The cost of a request, known before its work starts, and the control of work under way.

Three pieces every bounded computation shares (issue 17):

- :class:`CostEstimate`: what a request will cost, in CPU-seconds on one core, and the terms
  it was estimated from (points, objectives, rows, subsets...), so that a refusal can say which
  term to reduce. Estimators live beside the services that do the work; their constants are
  measured (``tests/unit/test_cost_model.py`` checks estimate against measurement).
- :func:`admit`: where a request runs — synchronously (under a deadline), as a job run by the
  workers (above the synchronous budget, or when the client asks for it), or nowhere
  (:class:`CostTooHigh`, a 422 naming the estimate, the limit and how to split the work).
- :class:`WorkControl`: what a long computation calls between its steps. ``check(done,
  total)`` reports progress (a job records it, with an ETA) and stops the work — by raising
  :class:`DeadlineExceeded` past a wall-clock deadline, or :class:`Cancelled` once whoever
  wanted the answer is gone (a client that disconnected, a ``DELETE`` of the job). A
  computation that is never told anything runs with :data:`NO_CONTROL`.
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from app.domain.errors import DomainError, InvalidInput


@dataclass(frozen=True)
class CostTerm:
    """One quantity an estimate grows with (``name="points"``, ``value=200``)."""

    name: str
    value: float


@dataclass(frozen=True)
class CostEstimate:
    """The work a request will do, estimated from the request alone.

    Attributes
    ----------
    operation : str
        What is estimated (``"indicators.hypervolume"``, ``"comparisons"``...).
    cpu_seconds : float
        Estimated CPU time on one core of the reference machine.
    terms : tuple of CostTerm
        The quantities the estimate was computed from.
    how_to_split : str
        For a person: how to ask for the same answer in smaller requests.
    memory_bytes : int
        Estimated peak memory the work adds (0 where it is small).
    """

    operation: str
    cpu_seconds: float
    terms: tuple[CostTerm, ...] = ()
    how_to_split: str = ""
    memory_bytes: int = 0


class CostTooHigh(InvalidInput):
    """The request would cost more than this deployment allows."""

    title = "Request too costly"
    type = "cost-too-high"

    def __init__(
        self,
        estimate: CostEstimate,
        *,
        limit_seconds: float,
        setting: str,
        field: str | None = None,
    ) -> None:
        terms = ", ".join(f"{t.name} = {t.value:g}" for t in estimate.terms)
        detail = (
            f"{estimate.operation}: estimated {estimate.cpu_seconds:.3g} CPU-seconds ({terms}) "
            f"exceeds {setting} = {limit_seconds:g} s"
            + (f"; {estimate.how_to_split}" if estimate.how_to_split else "")
        )
        super().__init__(
            detail,
            field=field,
            extra={
                "estimate_cpu_seconds": estimate.cpu_seconds,
                "limit_cpu_seconds": limit_seconds,
                "limit_setting": setting,
                "terms": {t.name: t.value for t in estimate.terms},
                "how_to_split": estimate.how_to_split,
            },
        )
        self.estimate = estimate


class DeadlineExceeded(DomainError):
    """The work ran past its wall-clock deadline and was stopped."""

    status = 503
    title = "Deadline exceeded"
    type = "deadline-exceeded"


class Cancelled(DomainError):
    """The work was cancelled: nobody waits for its answer any more."""

    status = 409
    title = "Cancelled"
    type = "cancelled"


class WorkControl:
    """Progress and stop signals for one computation (thread-safe; cheap to call often).

    Parameters
    ----------
    deadline_seconds : float or None
        Wall-clock seconds from now after which :meth:`check` raises :class:`DeadlineExceeded`
        (None: no deadline).
    on_progress : callable or None
        Called as ``on_progress(done, total)`` by :meth:`check` when both are given (a job
        records them; throttling is the callee's).
    should_stop : callable or None
        Polled by :meth:`check`; True means cancelled (a job's row says so). Throttling is the
        callee's too.
    clock : callable
        Monotonic seconds (tests pass a fake).
    """

    def __init__(
        self,
        deadline_seconds: float | None = None,
        *,
        on_progress: Callable[[float, float], None] | None = None,
        should_stop: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._clock = clock
        self.deadline_seconds = deadline_seconds
        self._deadline = None if deadline_seconds is None else clock() + deadline_seconds
        self._on_progress = on_progress
        self._should_stop = should_stop
        self._cancelled = threading.Event()

    def cancel(self) -> None:
        """Stop the work at its next :meth:`check` (the client is gone)."""
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def check(self, done: float | None = None, total: float | None = None) -> None:
        """Report progress (when given) and raise if the work must stop."""
        if self._cancelled.is_set() or (self._should_stop is not None and self._should_stop()):
            self._cancelled.set()
            raise Cancelled("the work was cancelled before it finished")
        if self._deadline is not None and self._clock() > self._deadline:
            raise DeadlineExceeded(
                f"the work ran past its deadline of {self.deadline_seconds:g} s and was "
                "stopped; split the request, or (comparisons, Pareto rankings, absolute ranks) "
                "send it with the header 'Prefer: respond-async' to run it as a job",
                headers={"Retry-After": "1"},
            )
        if self._on_progress is not None and done is not None and total is not None:
            self._on_progress(done, total)


NO_CONTROL = WorkControl()
"""The control of work that nobody bounds (inside a job's own limits, tests, scripts)."""


class Mode(enum.Enum):
    """Where admitted work runs."""

    SYNC = "sync"
    JOB = "job"


def admit(
    estimate: CostEstimate,
    *,
    sync_limit_seconds: float,
    job_limit_seconds: float,
    prefer_async: bool = False,
    jobs_available: bool = True,
) -> Mode:
    """Decide where a request's work runs, or refuse it (:class:`CostTooHigh`).

    Work within ``sync_limit_seconds`` runs synchronously unless the client prefers a job;
    above it (up to ``job_limit_seconds``) it becomes a job. Without jobs (a deployment with
    no workers), the synchronous limit is the only one.
    """
    if not jobs_available:
        if estimate.cpu_seconds > sync_limit_seconds:
            raise CostTooHigh(
                estimate, limit_seconds=sync_limit_seconds, setting="sync_cpu_limit_seconds"
            )
        return Mode.SYNC
    if estimate.cpu_seconds > job_limit_seconds:
        raise CostTooHigh(
            estimate, limit_seconds=job_limit_seconds, setting="job_cpu_limit_seconds"
        )
    if prefer_async or estimate.cpu_seconds > sync_limit_seconds:
        return Mode.JOB
    return Mode.SYNC
