"""ComparisonRepository on SQLite and PostgreSQL: complete answers are never overwritten."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import InvalidRequestError
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.repositories import ComparisonRepository

pytestmark = pytest.mark.db

SM = sessionmaker[Session]


def _save(sm: SM, status: str, result: dict, cid: str = "c0123") -> bool:
    with session_scope(sm) as s:
        return ComparisonRepository(s).save(
            comparison_id=cid,
            request_sha256=cid * 4,
            status=status,
            request={"rows": [["A", "p", 0, 1.5]]},
            result=result,
        )


def test_partial_is_replaced_complete_is_kept(sm: SM) -> None:
    assert _save(sm, "partial", {"absolute": "pending"})
    assert _save(sm, "complete", {"absolute": "done"})
    assert not _save(sm, "complete", {"absolute": "other"})  # identical request: first wins
    with session_scope(sm) as s:
        row = ComparisonRepository(s).get("c0123")
        assert row is not None
        assert row.status == "complete"
        assert row.result == {"absolute": "done"}


def test_request_is_deferred_until_asked_for(sm: SM) -> None:
    _save(sm, "complete", {"x": 1}, cid="c4567")
    with session_scope(sm) as s:
        row = ComparisonRepository(s).get("c4567")
        assert row is not None
        with pytest.raises(InvalidRequestError):
            _ = row.request
    with session_scope(sm) as s:
        row = ComparisonRepository(s).get("c4567", with_request=True)
        assert row is not None
        assert row.request["rows"][0] == ["A", "p", 0, 1.5]


def test_unknown_id_is_none(sm: SM) -> None:
    with session_scope(sm) as s:
        assert ComparisonRepository(s).get("cnope") is None
