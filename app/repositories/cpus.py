"""All SQL of the CPU registry. No commits here: the caller owns the transaction."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models.cpus import Cpu


def cpu_key(name: str) -> str:
    """The matching key of a CPU name: lower case, single spaces."""
    return " ".join(name.lower().split())


class CpuRepository:
    """Read and add registry entries."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def all(self) -> list[Cpu]:
        """Every entry, by name (the registry is small: a few thousand CPUs at most)."""
        return list(self.session.scalars(select(Cpu).order_by(Cpu.key)))

    def get(self, cpu_id: int) -> Cpu | None:
        """The entry with this id, or ``None``."""
        return self.session.get(Cpu, cpu_id)

    def by_name(self, name: str) -> Cpu | None:
        """The entry whose name folds to the same key, or ``None``."""
        return self.session.scalars(select(Cpu).where(Cpu.key == cpu_key(name))).one_or_none()

    def add(self, *, name: str, score: float, source: str, source_date: str) -> Cpu | None:
        """Add an entry; ``None`` when a CPU with the same key exists (savepoint, no error)."""
        try:
            with self.session.begin_nested():
                new_id = self.session.execute(
                    insert(Cpu)
                    .values(
                        name=name,
                        key=cpu_key(name),
                        score=score,
                        source=source,
                        source_date=source_date,
                        created_at=datetime.now(UTC),
                    )
                    .returning(Cpu.id)
                ).scalar_one()
        except IntegrityError:
            return None
        return self.get(new_id)
