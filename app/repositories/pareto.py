"""All SQL of stored Pareto rankings. No commits here: the caller owns the transaction."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models.pareto import ParetoRanking


class ParetoRankingRepository:
    """Store and read Pareto rankings by id."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, rid: str) -> ParetoRanking | None:
        """The ranking with this id, or ``None``."""
        return self.session.scalars(
            select(ParetoRanking).where(ParetoRanking.id == rid)
        ).one_or_none()

    def add(
        self, *, rid: str, digest: str, request: dict[str, Any], result: dict[str, Any]
    ) -> bool:
        """Insert; ``False`` when the same request is stored (identical answer)."""
        try:
            with self.session.begin_nested():
                self.session.execute(
                    insert(ParetoRanking).values(
                        id=rid,
                        request_sha256=digest,
                        request=request,
                        result=result,
                        created_at=datetime.now(UTC),
                    )
                )
        except IntegrityError:
            return False
        return True
