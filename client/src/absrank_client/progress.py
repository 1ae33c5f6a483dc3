"""Waiting on jobs: polling with backoff (``Retry-After`` first), progress reporting, timeouts."""

from __future__ import annotations

import email.utils
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from absrank_client.errors import JobTimeout
from absrank_client.models import Progress

__all__ = ["JobStatus", "Poller", "ProgressOption", "RichProgress"]


@dataclass(frozen=True)
class JobStatus:
    """What a poll saw: the job's URL, status, chunks done/total and the server's ETA."""

    url: str
    status: str
    progress: Progress | None
    eta_seconds: float | None


ProgressOption = bool | Callable[[JobStatus], None] | None
"""``True`` draws a progress bar on stderr; a callable gets every :class:`JobStatus` seen."""


class RichProgress:
    """A rich progress bar on stderr: chunks done/total and the server's ETA."""

    def __init__(self, label: str) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TextColumn
        from rich.progress import Progress as Bar

        self._bar = Bar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("chunks"),
            TextColumn("{task.fields[eta]}"),
            console=Console(stderr=True),
            transient=False,
        )
        self._task = self._bar.add_task(label, total=None, eta="")
        self._bar.start()

    def __call__(self, status: JobStatus) -> None:
        eta = "" if status.eta_seconds is None else f"server ETA {status.eta_seconds:.0f} s"
        p = status.progress
        self._bar.update(
            self._task,
            total=p.total if p else None,
            completed=p.done if p else 0,
            eta=f"{status.status} {eta}".strip(),
        )

    def close(self) -> None:
        self._bar.stop()


def retry_after_seconds(value: str | None) -> float | None:
    """``Retry-After`` as seconds (delta-seconds or an HTTP date), None when absent or bad."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


class Poller:
    """Sleeps between polls of one job: ``Retry-After`` when the server sends it, else an
    exponential backoff from ``initial`` to ``maximum`` seconds (factor 1.5); raises
    :class:`JobTimeout` once ``timeout`` seconds have passed."""

    def __init__(
        self,
        *,
        timeout: float,
        initial: float,
        maximum: float,
        progress: ProgressOption,
        label: str,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.timeout = timeout
        self.delay = initial
        self.maximum = maximum
        self.started = time.monotonic()
        self.last: JobStatus | None = None
        self._sleep = sleep
        self._label = label
        self._progress = progress
        self._callback: Callable[[JobStatus], None] | None = None
        self._bar: RichProgress | None = None

    def __enter__(self) -> Poller:
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._bar is not None:
            self._bar.close()

    def report(self, status: JobStatus) -> None:
        self.last = status
        if self._progress is True:
            if self._bar is None:
                self._bar = RichProgress(self._label)
            self._bar(status)
        elif callable(self._progress):
            self._progress(status)

    def finish(self) -> None:
        """Show the job as complete (when a progress was reported at all)."""
        last = self.last
        if last is None:
            return
        total = last.progress.total if last.progress else 0
        self.report(JobStatus(last.url, "ready", Progress(total, total, 1.0), None))

    def wait(self, retry_after: str | None = None) -> None:
        """Sleep before the next poll, or raise :class:`JobTimeout` when time is up."""
        waited = time.monotonic() - self.started
        remaining = self.timeout - waited
        last = self.last
        if remaining <= 0:
            raise JobTimeout(
                last.url if last else "?",
                waited,
                last.progress if last else None,
                last.eta_seconds if last else None,
            )
        hinted = retry_after_seconds(retry_after)
        delay = hinted if hinted is not None else self.delay
        self.delay = min(self.delay * 1.5, self.maximum)
        self._sleep(min(delay, remaining))
