"""All SQL of guided cross-machine comparisons. No commits here: the caller owns the transaction."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models.crossmachine import CrossMachineComparison


class CrossMachineRepository:
    """Create, read and complete cross-machine comparisons."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, cid: str) -> CrossMachineComparison | None:
        """The comparison with this id, or ``None``."""
        return self.session.scalars(
            select(CrossMachineComparison).where(CrossMachineComparison.id == cid)
        ).one_or_none()

    def add(
        self, *, cid: str, setup_sha256: str, setup: dict[str, Any], answer: dict[str, Any]
    ) -> bool:
        """Insert a new comparison awaiting B's results; ``False`` if the id exists."""
        now = datetime.now(UTC)
        try:
            with self.session.begin_nested():
                self.session.execute(
                    insert(CrossMachineComparison).values(
                        id=cid,
                        setup_sha256=setup_sha256,
                        status="awaiting-results",
                        setup=setup,
                        answer=answer,
                        results=None,
                        created_at=now,
                        updated_at=now,
                    )
                )
        except IntegrityError:
            return False
        return True

    def complete(self, cid: str, results: dict[str, Any]) -> bool:
        """Store B's results and the test once; ``False`` if results were already stored."""
        done = self.session.execute(
            update(CrossMachineComparison)
            .where(
                CrossMachineComparison.id == cid,
                CrossMachineComparison.status == "awaiting-results",
            )
            .values(status="complete", results=results, updated_at=datetime.now(UTC))
        )
        return bool(getattr(done, "rowcount", 0))
