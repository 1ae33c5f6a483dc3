"""The archive's storage on SQLite and PostgreSQL: all or nothing, indexed reads, no updates."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.models.result_sets import ResultRun, ResultSet, TrajectoryPoint
from app.repositories import result_sets as repo_module
from app.repositories.result_sets import NewRun, PointRow, ResultSetRepository
from app.schemas.result_sets import ResultSetCreate
from app.services import result_sets as service
from app.services.table_cache import AppCaches
from tests.archive_support import store_set
from workers.inline import InlineDispatcher

pytestmark = pytest.mark.db


def _caches(settings: Settings) -> dict[str, Any]:
    """Fresh table and ladder caches for a service called directly (no app)."""
    caches = AppCaches.from_settings(settings)
    return {"cache": caches.tables, "ladder_cache": caches.ladders}


@pytest.fixture
def clean(engine: Engine) -> Iterator[None]:
    yield
    with engine.begin() as conn:
        conn.execute(delete(ResultSet).where(ResultSet.supersedes.is_not(None)))
        conn.execute(delete(ResultSet))


def counts(sm: sessionmaker[Session]) -> tuple[int, int, int]:
    with session_scope(sm) as s:
        return tuple(  # type: ignore[return-value]
            int(s.scalar(select(func.count()).select_from(t)) or 0)
            for t in (ResultSet, ResultRun, TrajectoryPoint)
        )


def a_set(set_id: str, **kw: Any) -> ResultSet:
    fields: dict[str, Any] = {
        "id": set_id,
        "content_sha256": set_id[1:] + "0" * 41,
        "name": "DE",
        "values_are": "f",
        "source_format": "json",
        "suites": ["classic"],
        "n_functions": 1,
        "n_runs": 1,
        "notes": [],
        "provenance": {},
        "created_at": datetime.now(UTC),
    }
    return ResultSet(**(fields | kw))


def runs(set_id: str, n: int, *, bad_at: int | None = None) -> Iterator[NewRun]:
    for i in range(n):
        yield NewRun(set_id, "classic/sphere/d2", i, "classic", 2, 1.0, 0 if i == bad_at else 10)


def test_a_failure_midway_leaves_no_rows(sm: sessionmaker[Session], clean: None) -> None:
    """The run refused by the database lies in the third INSERT batch: nothing stays."""
    bad = 2 * repo_module._BATCH + 7
    with pytest.raises(IntegrityError), session_scope(sm) as s:
        ResultSetRepository(s).add(
            a_set("r" + "a" * 23), runs("r" + "a" * 23, 3 * repo_module._BATCH, bad_at=bad), []
        )
    assert counts(sm) == (0, 0, 0)


def test_a_failure_in_the_points_after_the_runs_leaves_no_rows(
    sm: sessionmaker[Session], clean: None
) -> None:
    sid = "r" + "b" * 23
    points = [
        PointRow(sid, "classic/sphere/d2", 0, 1, 2.0),
        PointRow(sid, "classic/sphere/d2", 0, 0, 1.0),
    ]
    with pytest.raises(IntegrityError), session_scope(sm) as s:
        ResultSetRepository(s).add(a_set(sid), runs(sid, 10), points)
    assert counts(sm) == (0, 0, 0)


def test_the_service_stores_nothing_when_a_write_fails_midway(
    sm: sessionmaker[Session], clean: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The set and its runs are inserted, then the points fail: the transaction rolls back."""
    original = ResultSetRepository.add

    def add_then_fail(
        self: ResultSetRepository, result_set: Any, run_rows: Any, points: Any
    ) -> None:
        original(self, result_set, run_rows, [])
        self.session.flush()
        assert self.session.scalar(select(func.count()).select_from(ResultRun)) == 2
        raise RuntimeError("disk full")

    monkeypatch.setattr(ResultSetRepository, "add", add_then_fail)
    body = ResultSetCreate.model_validate(
        {
            "name": "DE",
            "values_are": "f",
            "results": [
                {"function_id": "classic/sphere/d2", "run": r, "value": 1.0, "budget": 10}
                for r in range(2)
            ],
        }
    )
    settings = Settings(environment="test")
    with pytest.raises(RuntimeError, match="disk full"):
        service.create_from_json(sm, settings, None, body, **_caches(settings))
    assert counts(sm) == (0, 0, 0)


def test_the_same_content_is_stored_once(sm: sessionmaker[Session], clean: None) -> None:
    with session_scope(sm) as s:
        ResultSetRepository(s).add(a_set("r" + "c" * 23), runs("r" + "c" * 23, 2), [])
    with pytest.raises(IntegrityError), session_scope(sm) as s:
        ResultSetRepository(s).add(
            a_set("r" + "d" * 23, content_sha256="c" * 23 + "0" * 41), runs("r" + "d" * 23, 2), []
        )
    assert counts(sm) == (1, 2, 0)


def test_reads_filter_and_order(sm: sessionmaker[Session], clean: None) -> None:
    now = datetime.now(UTC)
    with session_scope(sm) as s:
        repo = ResultSetRepository(s)
        for k, (sid, name, fid, suite) in enumerate(
            [
                ("r" + "1" * 23, "A", "classic/sphere/d2", "classic"),
                ("r" + "2" * 23, "B", "bbob/f1/i1/d2", "bbob"),
                ("r" + "3" * 23, "A", "bbob/f1/i1/d2", "bbob"),
            ]
        ):
            repo.add(
                a_set(sid, name=name, created_at=now + timedelta(seconds=k)),
                [NewRun(sid, fid, r, suite, 2, 100.0 + r, 10) for r in range(3)],
                [PointRow(sid, fid, 0, e, 200.0 - e) for e in (1, 5)],
            )
    with session_scope(sm) as s:
        repo = ResultSetRepository(s)
        items, total = repo.list()
        assert [i.id[1] for i in items] == ["3", "2", "1"]
        assert total == 3
        assert [i.id[1] for i in repo.list(suite="bbob", name="A")[0]] == ["3"]
        assert repo.list(function_id="bbob/f1/i1/d2", limit=1, offset=1)[0][0].id[1] == "2"
        rows = repo.runs(function_id="bbob/f1/i1/d2")
        assert [(r.set_id[1], r.run) for r in rows] == [(s, r) for s in "23" for r in range(3)]
        assert [r.value for r in repo.runs(suite="classic", dim=2)] == [100.0, 101.0, 102.0]
        pts = repo.points(suite="bbob")
        assert [(p.set_id[1], p.evaluations, p.best) for p in pts] == [
            ("2", 1, 199.0),
            ("2", 5, 195.0),
            ("3", 1, 199.0),
            ("3", 5, 195.0),
        ]


def test_a_concurrent_store_of_the_same_content_answers_that_set(
    sm: sessionmaker[Session], clean: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two requests pass the existence check together: the second insert fails on the unique
    content hash and answers the set the first stored (nothing else is left behind)."""
    body = ResultSetCreate.model_validate(
        {
            "name": "DE",
            "values_are": "f",
            "results": [{"function_id": "classic/sphere/d2", "run": 0, "value": 1.0, "budget": 9}],
        }
    )
    settings = Settings(environment="test", table_default_log2n=12)
    held = InlineDispatcher(settings)
    held.hold = True
    first = service.create_from_json(sm, settings, held, body, **_caches(settings))
    assert first.created
    real = ResultSetRepository.by_content
    calls = iter([None])
    monkeypatch.setattr(
        ResultSetRepository, "by_content", lambda self, sha: next(calls, real(self, sha))
    )
    again = service.create_from_json(sm, settings, held, body, **_caches(settings))
    assert (again.created, again.read.id) == (False, first.read.id)
    assert counts(sm) == (1, 1, 0)


# --- what leaderboards read: runs as columns, the archive's state token


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
