"""ORM model of the ``comparisons`` aggregate: a stored statistical comparison.

A comparison is identified by the SHA-256 of its normalized request, so identical requests
share one id. ``status`` is ``complete``, or ``partial`` while absolute ranks wait for tables
(the comparison is recomputed when the same request arrives again).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.tables import UTCDateTime, _in

COMPARISON_STATUSES = ("complete", "partial")


class Comparison(Base):
    """One comparison: the normalized request, the full answer, and when it was computed.

    ``request`` is deferred with raiseload (it can hold a million result rows); read it only
    with ``undefer(Comparison.request)``.
    """

    __tablename__ = "comparisons"
    __table_args__ = (CheckConstraint(_in("status", COMPARISON_STATUSES), name="status"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    request_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    status: Mapped[str] = mapped_column(String(16))
    request: Mapped[dict[str, Any]] = mapped_column(JSON, deferred=True, deferred_raiseload=True)
    result: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"Comparison(id={self.id!r}, status={self.status!r})"
