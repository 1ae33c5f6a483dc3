"""What leaderboards read from the archive, on SQLite and PostgreSQL: runs as columns, the
archive's state token."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models.result_sets import ResultSet
from app.repositories.result_sets import ResultSetRepository
from tests.archive_support import store_set

pytestmark = pytest.mark.db


@pytest.fixture
def clean(engine: Engine) -> Iterator[None]:
    yield
    with engine.begin() as conn:
        conn.execute(delete(ResultSet).where(ResultSet.supersedes.is_not(None)))
        conn.execute(delete(ResultSet))


@pytest.mark.usefixtures("clean")
def test_run_columns_are_the_runs_column_by_column(sm: sessionmaker[Session]) -> None:
    store_set(sm, "A", {"bbob/f1/i1/d2": [0.5, 0.25], "bbob/f2/i1/d2": [3.0]}, budget=10)
    store_set(sm, "B", {"bbob/f1/i1/d2": [1.5], "classic/sphere/d2": [0.1]})
    with session_scope(sm) as session:
        repo = ResultSetRepository(session)
        for filters in ({}, {"suite": "bbob", "dim": 2}, {"function_id": "bbob/f1/i1/d2"}):
            rows = repo.runs(**filters)  # type: ignore[arg-type]
            cols = repo.run_columns(**filters)  # type: ignore[arg-type]
            got = zip(cols.set_id, cols.function_id, cols.run, cols.value, cols.budget, strict=True)
            assert list(got) == [(r.set_id, r.function_id, r.run, r.value, r.budget) for r in rows]
        assert repo.run_columns(function_id="bbob/f3/i1/d2").run == ()


@pytest.mark.usefixtures("clean")
def test_the_state_changes_with_every_stored_set(sm: sessionmaker[Session]) -> None:
    def state() -> tuple[int, str]:
        with session_scope(sm) as session:
            return ResultSetRepository(session).state()

    empty = state()
    assert empty == (0, "")
    a = store_set(sm, "A", {"bbob/f1/i1/d2": [0.5]})
    one = state()
    assert one[0] == 1
    assert a in one[1]
    store_set(sm, "A", {"bbob/f1/i1/d2": [0.4]}, supersedes=a)
    assert state()[0] == 2
