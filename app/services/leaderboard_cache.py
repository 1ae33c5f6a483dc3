"""Leaderboard answers kept per process, keyed by the request and the archive's state."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from pydantic import BaseModel
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.repositories.result_sets import ResultSetRepository
from app.services.provenance import canonical_sha256


class AnswerCache:
    """Leaderboard answers of this process (least recently used first out).

    Keys come from :func:`answer_key`: the request, the settings and the archive's state, so a
    stored set is never missed. Only answers whose every entry is final are kept (a table that
    finishes would change a provisional one).
    """

    def __init__(self) -> None:
        self._items: OrderedDict[str, BaseModel] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str) -> BaseModel | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def put(self, key: str, value: BaseModel, maxsize: int) -> None:
        with self._lock:
            self._items[key] = value
            while len(self._items) > maxsize:
                self._items.popitem(last=False)


ANSWERS = AnswerCache()


def answer_key(sm: sessionmaker[Session], settings: Settings, request: dict[str, Any]) -> str:
    """The cache key of a leaderboard request: database, settings, archive state, request."""
    with session_scope(sm) as session:
        state = ResultSetRepository(session).state()
    bind = sm.kw.get("bind")
    return canonical_sha256(
        {
            "database": str(getattr(bind, "url", id(sm))),
            "settings": settings.model_dump(mode="json"),
            "state": list(state),
            "request": request,
        }
    )


def cached_answer(
    sm: sessionmaker[Session], settings: Settings, request: dict[str, Any]
) -> tuple[str, BaseModel | None]:
    """The cache key of ``request`` (``""`` when the cache is off) and the kept answer, if any."""
    if not settings.leaderboard_cache_size:
        return "", None
    key = answer_key(sm, settings, request)
    return key, ANSWERS.get(key)


def keep_answer(key: str, answer: BaseModel, settings: Settings) -> None:
    """Keep a final answer under ``key`` (from :func:`cached_answer`; nothing when off)."""
    if key:
        ANSWERS.put(key, answer, settings.leaderboard_cache_size)
