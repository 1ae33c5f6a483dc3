"""The per-application caches of tables and ladders, as objects (no module-level state).

A ready table never changes, so its decoded data and everything derived from it can be kept;
a table found missing is taken to stay missing for a few seconds; a ladder's plan and table ids
depend only on the function and the settings. The application creates one :class:`TableCaches`
and one :class:`LadderCaches` in its lifespan (``app.state.table_caches``,
``app.state.ladder_caches``; the routers get them with ``app.api.deps.TableCachesDep`` and
``LadderCachesDep``), a worker process with its sessionmaker (``workers.app.worker_caches``),
and passes them down to the services explicitly (``cache=`` for table caches,
``ladder_cache=`` for ladder caches; ``cache=`` of the ladder functions that take only
ladder caches). Every service that reads or keeps tables or ladders takes them as a required
argument; a command-line run or a bench script makes its own
(``AppCaches.from_settings(settings)``). Nothing is kept at module level, so two applications
(two sessionmakers, as in the tests) never share an entry. The sizes are settings
(``table_ready_cache_size``, ``table_missing_ttl_seconds``, ``table_missing_cache_size``,
``table_publish_cache_size``, ``ladder_plan_cache_size``, ``ladder_ids_cache_size``).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from app.config import Settings

if TYPE_CHECKING:
    from app.domain import nested
    from app.services._table_requests import ReadyTable

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

class LRUCache(Generic[K, V]):
    """A thread-safe least-recently-used map of at most ``maxsize`` entries (0 keeps none).

    Parameters
    ----------
    maxsize : int
        Entries kept; the least recently used one goes first.
    """

    def __init__(self, maxsize: int) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        """The entry of ``key`` (now the most recent), or ``None``."""
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` under ``key``, dropping the oldest entries beyond ``maxsize``."""
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def get_or_make(self, key: K, make: Callable[[], V]) -> V:
        """The entry of ``key``, else ``make()`` (called outside the lock), kept."""
        with self._lock:
            if key in self._items:
                self._items.move_to_end(key)
                return self._items[key]
        value = make()
        self.put(key, value)
        return value

    def clear(self) -> None:
        """Forget every entry."""
        with self._lock:
            self._items.clear()


class ExpiringKeys(Generic[K]):
    """Keys remembered for ``ttl`` seconds (monotonic clock); cleared when ``maxsize`` is hit.

    Parameters
    ----------
    ttl : float
        Seconds a key stays.
    maxsize : int
        Keys kept before all are forgotten at once.
    """

    def __init__(self, ttl: float, maxsize: int) -> None:
        self.ttl = ttl
        self.maxsize = maxsize
        self._until: dict[K, float] = {}
        self._lock = threading.Lock()

    def has(self, key: K) -> bool:
        """Whether ``key`` was added less than ``ttl`` seconds ago."""
        with self._lock:
            until = self._until.get(key)
        return until is not None and until > time.monotonic()

    def add(self, key: K) -> None:
        """Remember ``key`` for ``ttl`` seconds from now."""
        with self._lock:
            if len(self._until) >= self.maxsize:
                self._until.clear()
            self._until[key] = time.monotonic() + self.ttl

    def discard(self, key: K) -> None:
        """Forget ``key`` (if remembered)."""
        with self._lock:
            self._until.pop(key, None)

    def clear(self) -> None:
        """Forget every key."""
        with self._lock:
            self._until.clear()


def _default(name: str) -> Any:
    """The default of a :class:`Settings` field (for caches made without settings)."""
    return Settings.model_fields[name].default


@dataclass(frozen=True)
class TableCaches:
    """What one application (one database) keeps of its tables.

    Attributes
    ----------
    ready : LRUCache of str to ReadyTable
        Ready tables' views and decoded data by id (``settings.table_ready_cache_size``).
    missing : ExpiringKeys of str
        Ids found missing, for ``settings.table_missing_ttl_seconds`` (``regions='auto'``
        looks for a ladder on every rank request); a table requested here is forgotten at once.
    published : LRUCache
        Answers derived from ready tables and ladders (curves, CSV, plots), keyed by content
        (``settings.table_publish_cache_size``).
    """

    ready: LRUCache[str, ReadyTable]
    missing: ExpiringKeys[str]
    published: LRUCache[tuple[Any, ...], Any]

    @classmethod
    def from_settings(cls, settings: Settings | None = None) -> TableCaches:
        """Caches sized by ``settings`` (the settings' defaults when ``None``)."""

        def size(name: str) -> Any:
            return _default(name) if settings is None else getattr(settings, name)

        return cls(
            ready=LRUCache(size("table_ready_cache_size")),
            missing=ExpiringKeys(
                size("table_missing_ttl_seconds"), size("table_missing_cache_size")
            ),
            published=LRUCache(size("table_publish_cache_size")),
        )

    def clear(self) -> None:
        """Forget everything."""
        self.ready.clear()
        self.missing.clear()
        self.published.clear()


@dataclass(frozen=True)
class LadderCaches:
    """What one application keeps of its ladders (pure functions of function and settings).

    Attributes
    ----------
    plans : LRUCache
        Ladder plans by (function, shape, factor, levels, volume target)
        (``settings.ladder_plan_cache_size``).
    ids : LRUCache
        A ladder's table ids by function, shape, ``log2n``, ``seed`` and the settings its
        specs depend on (``settings.ladder_ids_cache_size``).
    """

    plans: LRUCache[tuple[Any, ...], nested.LadderPlan]
    ids: LRUCache[tuple[Any, ...], tuple[str, ...]]

    @classmethod
    def from_settings(cls, settings: Settings) -> LadderCaches:
        """Caches sized by ``settings.ladder_plan_cache_size`` and ``ladder_ids_cache_size``."""
        return cls(
            plans=LRUCache(settings.ladder_plan_cache_size),
            ids=LRUCache(settings.ladder_ids_cache_size),
        )

    def clear(self) -> None:
        """Forget everything."""
        self.plans.clear()
        self.ids.clear()


@dataclass(frozen=True)
class AppCaches:
    """An application's (or worker process's) caches, made together.

    Attributes
    ----------
    tables : TableCaches
    ladders : LadderCaches
    """

    tables: TableCaches
    ladders: LadderCaches

    @classmethod
    def from_settings(cls, settings: Settings) -> AppCaches:
        """Both caches, sized by ``settings``."""
        return cls(TableCaches.from_settings(settings), LadderCaches.from_settings(settings))

    def clear(self) -> None:
        """Forget everything."""
        self.tables.clear()
        self.ladders.clear()
