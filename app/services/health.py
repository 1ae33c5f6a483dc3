"""Health check use case."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from app import __version__
from app.repositories.health import ping


def health(sm: sessionmaker[Session]) -> dict[str, str]:
    """Return the service status after checking that the database answers."""
    with sm() as session:
        ping(session)
    return {"status": "ok", "version": __version__}
