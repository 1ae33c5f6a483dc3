"""RegionScanRepository on SQLite and PostgreSQL: one row per request, a ready answer is final
and reads back byte for byte."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest
from pydantic_core import to_json
from sqlalchemy import delete, insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import RegionScan
from app.repositories.region_scans import RegionScanRepository

pytestmark = pytest.mark.db

SM = sessionmaker[Session]


@pytest.fixture(autouse=True)
def _clean(engine: Engine) -> Iterator[None]:
    yield
    with engine.begin() as conn:
        conn.execute(delete(RegionScan))


def _add(sm: SM, sid: str = "r0123", digest: str | None = None) -> bool:
    with session_scope(sm) as s:
        return RegionScanRepository(s).add(
            scan_id=sid,
            request_sha256=digest or sid * 4,
            function_id="classic/sphere/d2",
            request={"deltas": [0.1, 1.0], "tables": ["ta", "tb"]},
            table_ids=["ta", "tb"],
        )


def _get(sm: SM, sid: str = "r0123") -> RegionScan:
    with session_scope(sm) as s:
        row = RegionScanRepository(s).get(sid)
    assert row is not None
    return row


def test_add_is_idempotent_and_get_reads_it(sm: SM) -> None:
    assert _add(sm)
    assert not _add(sm)  # the same request again: the first row stays
    row = _get(sm)
    assert (row.status, row.result, row.error) == ("building", None, None)
    assert row.table_ids == ["ta", "tb"]
    assert row.request["deltas"] == [0.1, 1.0]
    assert row.created_at.tzinfo is not None
    with session_scope(sm) as s:
        assert RegionScanRepository(s).get("rnope") is None


def test_request_hash_is_unique(sm: SM) -> None:
    assert _add(sm, "r1", digest="d" * 64)
    assert not _add(sm, "r2", digest="d" * 64)
    with session_scope(sm) as s:
        assert RegionScanRepository(s).get("r2") is None


def test_status_follows_the_tables_until_ready(sm: SM) -> None:
    _add(sm)
    with session_scope(sm) as s:
        repo = RegionScanRepository(s)
        assert not repo.set_status("r0123", "building")  # already building: no write
        assert repo.set_status("r0123", "failed", error="table ta failed")
        assert not repo.set_status("r0123", "failed", error="table ta failed")
        assert repo.set_status("r0123", "failed", error="tables ta, tb failed")
    assert (_get(sm).status, _get(sm).error) == ("failed", "tables ta, tb failed")
    with session_scope(sm) as s:
        assert RegionScanRepository(s).set_status("r0123", "building")
    assert (_get(sm).status, _get(sm).error) == ("building", None)
    with session_scope(sm) as s, pytest.raises(ValueError, match="building or failed"):
        RegionScanRepository(s).set_status("r0123", "ready")


def test_ready_answer_is_final_and_reads_back_byte_for_byte(sm: SM) -> None:
    _add(sm)
    result = {
        "id": "r0123",
        "zeta": [0.1, 1e-300, -3.0000000000000004, None],
        "alpha": {"log10_e": -21.5, "e": 3.1622776601683794e-22, "δ": "box"},
        "status": "ready",
    }
    with session_scope(sm) as s:
        assert RegionScanRepository(s).finish("r0123", result)
    with session_scope(sm) as s:
        repo = RegionScanRepository(s)
        assert not repo.finish("r0123", {"other": 1})  # first answer wins
        assert not repo.set_status("r0123", "failed", error="late")  # ready is final
    row = _get(sm)
    assert row.status == "ready"
    assert row.error is None
    assert row.result is not None
    assert to_json(row.result) == to_json(result)  # key order and floats survive


def test_status_is_constrained(sm: SM) -> None:
    with pytest.raises(IntegrityError), session_scope(sm) as s:
        s.execute(
            insert(RegionScan).values(
                id="rbad",
                request_sha256="b" * 64,
                function_id="classic/sphere/d2",
                status="done",
                request={},
                table_ids=[],
                created_at=datetime.now(UTC),
                updated_at=datetime.now(UTC),
            )
        )
