"""ORM model of a stored Pareto ranking (Ibrahim et al.), keyed by its request hash."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.tables import UTCDateTime


class ParetoRanking(Base):
    """The normalized request (deferred: it can be large) and the full answer."""

    __tablename__ = "pareto_rankings"

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    request_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    request: Mapped[dict[str, Any]] = mapped_column(JSON, deferred=True, deferred_raiseload=True)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
