"""A worker's life: it dies with its parent, and one embedded queue has one consumer.

* :func:`arm_parent_death_signal` — Linux's ``PR_SET_PDEATHSIG``: the kernel sends a signal to
  this process when its parent dies, however it dies (``kill -9`` included).
* :class:`ParentWatch` — the portable fallback, polled by the consumer's main loop
  (:class:`WatchedConsumer`): the parent is gone once this process's parent pid changes.
* :class:`ConsumerLock` — ``fcntl.flock`` on a lock file next to a SQLite queue file, held for
  the consumer's life (its forked worker processes share it): a second consumer on the same
  queue is refused, and the lock file names the holder, so an orphan (a worker whose
  ``absrank serve`` is gone) is recognised. The kernel drops the lock when its holders die.
  Redis and PostgreSQL queues are not locked: several consumers are the distributed mode.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import fcntl
import json
import logging
import os
import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from huey.consumer import Consumer, ConsumerStopped, ProcessEnvironment

logger = logging.getLogger(__name__)

PR_SET_PDEATHSIG = 1
#: Exit status of ``absrank worker`` when the queue already has a consumer (``EX_TEMPFAIL``).
EXIT_QUEUE_BUSY = 75


def arm_parent_death_signal(signum: int = signal.SIGTERM) -> bool:
    """Ask the kernel to send ``signum`` to this process when its parent dies (Linux).

    Returns
    -------
    bool
        Whether it is armed (False off Linux, or when ``prctl`` fails): rely on
        :class:`ParentWatch` then. Call it from the main thread: the signal follows the death
        of the parent *thread* that forked this process, which for a ``Popen`` child is the
        parent's thread that started it.
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return int(libc.prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class ParentWatch:
    """The parent this process expects (``absrank worker --parent PID``).

    Attributes
    ----------
    parent : int
        Its pid. Once it dies this process is re-parented (to init or a subreaper), so
        ``os.getppid()`` differs from it: no pid reuse can fool the check.
    """

    parent: int

    def gone(self) -> bool:
        """Whether the expected parent is no longer this process's parent."""
        return os.getppid() != self.parent


class _ArmedProcessEnvironment(ProcessEnvironment):  # type: ignore[misc]  # huey is untyped
    """huey's process environment whose forked worker processes and scheduler get SIGKILL when
    the consumer dies (a ``kill -9`` of it must not leave them consuming, holding the lock)."""

    def init_child(self, process: Any) -> None:
        super().init_child(process)
        arm_parent_death_signal(signal.SIGKILL)


class WatchedConsumer(Consumer):  # type: ignore[misc]  # huey is untyped
    """A huey consumer that stops gracefully, as on SIGTERM, when its parent is gone.

    The consumer's main loop wakes every 0.1 s; each round checks the :class:`ParentWatch`
    (one ``getppid``), so the fallback needs no thread (threads and the consumer's forks do
    not mix). When the parent-death signal came first, the consumer is already stopping and
    never loops again.
    """

    def __init__(self, huey: Any, *, watch: ParentWatch | None = None, **options: Any) -> None:
        super().__init__(huey, **options)
        self.watch = watch

    def get_environment(self, worker_type: str) -> Any:
        environment = super().get_environment(worker_type)
        if isinstance(environment, ProcessEnvironment):
            return _ArmedProcessEnvironment(environment.graceful, environment.interrupt)
        return environment

    def loop(self, health_check_ts: float | None = None) -> float | None:
        if self.watch is not None and self.watch.gone():
            # what the consumer does on its graceful signal (not a signal to itself: a second
            # SIGTERM, after the parent-death one, would interrupt the graceful stop)
            logger.warning(
                "absrank worker: parent process %d is gone; stopping", self.watch.parent
            )
            self.stop(graceful=True)
            raise ConsumerStopped
        result: float | None = super().loop(health_check_ts)
        return result


@dataclass(frozen=True)
class ConsumerHolder:
    """The process that holds a queue's consumer lock, as its lock file records it.

    Attributes
    ----------
    pid : int or None
        The consumer's pid (None when the file could not be read).
    parent : int or None
        The ``absrank serve`` it was started by (None for a standalone ``absrank worker``).
    orphan : bool
        Left over: started by an ``absrank serve`` that is no longer its parent, or gone itself
        while its forked worker processes still hold the lock.
    """

    pid: int | None
    parent: int | None
    orphan: bool

    def describe(self) -> str:
        """One line for a log or an error message."""
        if self.pid is None:
            return "another consumer (its lock file is unreadable)"
        if self.orphan and _parent_of(self.pid) is None:
            return (
                f"the worker processes of pid {self.pid}, which is gone (orphans: stop them by "
                "their pids)"
            )
        if self.orphan:
            return (
                f"pid {self.pid}, an orphaned embedded worker (its absrank serve, pid "
                f"{self.parent}, is gone; stop it with `kill {self.pid}`)"
            )
        started = f"started by absrank serve pid {self.parent}" if self.parent else "absrank worker"
        return f"pid {self.pid} ({started})"


class QueueBusy(RuntimeError):
    """The embedded queue already has a consumer (:attr:`holder`)."""

    def __init__(self, queue: str, holder: ConsumerHolder) -> None:
        super().__init__(f"queue {queue} already has a consumer: {holder.describe()}")
        self.queue = queue
        self.holder = holder


def lock_path(queue_url: str) -> Path | None:
    """The consumer lock file of an embedded (``sqlite:///``) queue; None for other queues."""
    if not queue_url.startswith("sqlite:///"):
        return None
    path = queue_url.removeprefix("sqlite:///")
    if path in ("", ":memory:"):
        return None
    return Path(os.path.realpath(path) + ".consumer.lock")  # one file whatever the spelling


def _parent_of(pid: int) -> int | None:
    """The parent pid of ``pid`` from ``/proc`` (None when it is gone or off Linux)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[1])


def _holder(path: Path) -> ConsumerHolder:
    try:
        record = json.loads(path.read_text() or "{}")
        pid, parent = record.get("pid"), record.get("parent")
    except (OSError, ValueError, AttributeError):
        return ConsumerHolder(None, None, orphan=False)
    pid = pid if isinstance(pid, int) else None
    parent = parent if isinstance(parent, int) else None
    if pid is None:
        return ConsumerHolder(None, parent, orphan=False)
    current = _parent_of(pid)
    orphan = current is None or (parent is not None and current != parent)
    return ConsumerHolder(pid, parent, orphan=orphan)


class ConsumerLock:
    """The consumer lock of one embedded queue (:func:`lock_path`), held while open."""

    def __init__(self, path: Path, handle: IO[str], *, recorded: bool = True) -> None:
        self.path = path
        self._handle: IO[str] | None = handle
        self._recorded = recorded

    @classmethod
    def acquire(
        cls, queue_url: str, *, parent: int | None = None, record: bool = True
    ) -> ConsumerLock | None:
        """Take the lock of ``queue_url`` for this process (None: the queue is not embedded).

        The file records this pid and ``parent`` (unless ``record`` is false: a probe). Forked
        children share the lock: it is released when this process and all of them have exited,
        or by :meth:`release`.

        Raises
        ------
        QueueBusy
            Another process holds it.
        """
        path = lock_path(queue_url)
        if path is None:
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise QueueBusy(queue_url.removeprefix("sqlite:///"), _holder(path)) from None
        if record:
            handle.seek(0)
            handle.truncate()
            handle.write(json.dumps({"pid": os.getpid(), "parent": parent}))
            handle.flush()
        return cls(path, handle, recorded=record)

    def release(self) -> None:
        """Drop the lock (also done by the kernel when its holders exit)."""
        if self._handle is not None:
            if self._recorded:
                with contextlib.suppress(OSError):
                    self._handle.truncate(0)
            self._handle.close()  # closing the last descriptor unlocks
            self._handle = None


def queue_consumer(queue_url: str) -> ConsumerHolder | None:
    """The process consuming the embedded queue ``queue_url`` now, if any (None also for
    Redis and PostgreSQL queues, which are not locked). A probe: it takes the lock and drops
    it at once."""
    try:
        lock = ConsumerLock.acquire(queue_url, record=False)
    except QueueBusy as busy:
        return busy.holder
    if lock is not None:
        lock.release()
    return None


__all__ = [
    "EXIT_QUEUE_BUSY",
    "ConsumerHolder",
    "ConsumerLock",
    "ParentWatch",
    "QueueBusy",
    "WatchedConsumer",
    "arm_parent_death_signal",
    "lock_path",
    "queue_consumer",
]
