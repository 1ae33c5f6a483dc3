"""CpuRepository on SQLite and PostgreSQL: the seeded registry, unique keys, savepoints."""

from __future__ import annotations

import pytest
from sqlalchemy import delete
from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.models import Cpu
from app.repositories import CpuRepository, cpu_key

pytestmark = pytest.mark.db

SM = sessionmaker[Session]


def test_seeded_and_unique_by_folded_name(sm: SM) -> None:
    try:
        with session_scope(sm) as s:
            repo = CpuRepository(s)
            assert len(repo.all()) == 9
            xeon = repo.by_name("  intel XEON   e5440 ")
            assert xeon is not None
            assert xeon.score == 1219.0
            added = repo.add(name="Test CPU 9000", score=3000.0, source="test", source_date="2026")
            assert added is not None
            assert added.key == cpu_key("test  cpu 9000")
            assert repo.add(name="test cpu 9000", score=1.0, source="x", source_date="2026") is None
            assert repo.get(added.id) is not None  # only the failed insert was rolled back
    finally:
        with session_scope(sm) as s:
            s.execute(delete(Cpu).where(Cpu.key == "test cpu 9000"))
