"""ORM model of the CPU registry: PassMark single-thread scores of machines."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import CheckConstraint, Double, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.tables import UTCDateTime


class Cpu(Base):
    """A CPU model and its PassMark single-thread score, with where the score comes from.

    ``key`` is the name folded for matching (lower case, single spaces); it is unique, so one
    model has one entry.
    """

    __tablename__ = "cpus"
    __table_args__ = (CheckConstraint("score > 0", name="score_positive"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(200))
    key: Mapped[str] = mapped_column(String(200), unique=True)
    score: Mapped[float] = mapped_column(Double)
    source: Mapped[str] = mapped_column(Text)
    source_date: Mapped[str] = mapped_column(String(10))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"Cpu(id={self.id!r}, name={self.name!r}, score={self.score!r})"
