"""All SQL of the ``comparisons`` aggregate. No commits here: the caller owns the transaction."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, undefer

from app.models.comparisons import Comparison


class ComparisonRepository:
    """Store and read comparisons by id."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, comparison_id: str, *, with_request: bool = False) -> Comparison | None:
        """The comparison with this id, or ``None``."""
        stmt = select(Comparison).where(Comparison.id == comparison_id)
        if with_request:
            stmt = stmt.options(undefer(Comparison.request))
        return self.session.scalars(stmt).one_or_none()

    def save(
        self,
        *,
        comparison_id: str,
        request_sha256: str,
        status: str,
        request: dict[str, Any],
        result: dict[str, Any],
    ) -> bool:
        """Insert the comparison, or replace a ``partial`` one with the same id.

        A ``complete`` comparison is never overwritten (identical requests give identical
        answers). Returns whether this call wrote a row. A concurrent insert of the same id is
        not an error: the first one wins (savepoint).
        """
        now = datetime.now(UTC)
        updated = self.session.execute(
            update(Comparison)
            .where(Comparison.id == comparison_id, Comparison.status == "partial")
            .values(status=status, result=result, updated_at=now)
        )
        if getattr(updated, "rowcount", 0):
            return True
        try:
            with self.session.begin_nested():
                self.session.execute(
                    insert(Comparison).values(
                        id=comparison_id,
                        request_sha256=request_sha256,
                        status=status,
                        request=request,
                        result=result,
                        created_at=now,
                        updated_at=now,
                    )
                )
        except IntegrityError:
            return False
        return True
