"""ORM model of a δ-region scan (Jing & Liu §V), keyed by its request hash.

A scan owns no table: it names one cheap table per δ (``table_ids``, in the order of
``request["deltas"]``), which the ``tables`` aggregate builds. ``status`` is ``building`` until
every table is ready, ``failed`` while one of them has failed, and ``ready`` once the answer is
computed and stored in ``result`` (then it never changes).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, CheckConstraint, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.tables import UTCDateTime, _in

REGION_SCAN_STATUSES = ("building", "ready", "failed")


class RegionScan(Base):
    """One scan: the normalized request, its tables, and once ready the full answer."""

    __tablename__ = "region_scans"
    __table_args__ = (CheckConstraint(_in("status", REGION_SCAN_STATUSES), name="status"),)

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    request_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    function_id: Mapped[str] = mapped_column(String(200))
    status: Mapped[str] = mapped_column(String(16))
    request: Mapped[dict[str, Any]] = mapped_column(JSON)
    table_ids: Mapped[list[str]] = mapped_column(JSON)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"RegionScan(id={self.id!r}, status={self.status!r})"
