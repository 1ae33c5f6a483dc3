"""Database liveness probe."""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.orm import Session


def ping(session: Session) -> None:
    """Run ``SELECT 1``; raises if the database does not answer."""
    session.execute(text("SELECT 1"))
