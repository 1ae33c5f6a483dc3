"""ORM model of a guided cross-machine comparison (Arza et al. 2024, the five steps)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, String
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.tables import UTCDateTime, _in

CROSS_MACHINE_STATUSES = ("awaiting-results", "complete")


class CrossMachineComparison(Base):
    """A's published table, the two machines and p_γ (``setup``), the equivalent runtimes for B
    (``answer``), then B's results and the corrected sign test.

    The id is derived from the normalized setup, so the same setup is one resource; once B's
    results are in, they are final (``complete``).
    """

    __tablename__ = "cross_machine_comparisons"
    __table_args__ = (CheckConstraint(_in("status", CROSS_MACHINE_STATUSES), name="status"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    setup_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    status: Mapped[str] = mapped_column(String(24))
    setup: Mapped[dict[str, Any]] = mapped_column(JSON)
    answer: Mapped[dict[str, Any]] = mapped_column(JSON)
    results: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
