"""ORM models of the ``tables`` aggregate: a v_f table and the chunks it is built from.

A :class:`Table` is identified by the SHA-256 of its canonical spec; its build is split into
:class:`TableChunk` rows, one per Sobol index range ``[index·B, (index+1)·B)``. The database,
never the queue, records what is done.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Text,
    TypeDecorator,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import Mapped, mapped_column, relationship

from app.db import Base

TABLE_STATUSES = ("building", "merging", "ready", "failed")
CHUNK_STATUSES = ("pending", "done")


class UTCDateTime(TypeDecorator[datetime]):
    """``DateTime(timezone=True)`` that always hands back aware UTC datetimes.

    PostgreSQL stores ``timestamptz``; SQLite has no time zones, so values are stored as UTC
    wall time and re-tagged as UTC when read. Naive datetimes are refused on the way in.
    """

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime: pass an aware (UTC) datetime")
        return value.astimezone(UTC)

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Table(Base):
    """One v_f table: its spec, build status, and once ready its encoded data.

    ``data`` is deferred with raiseload: it is only loaded when asked for explicitly
    (``undefer(Table.data)``), so listing tables never reads the blobs.
    """

    __tablename__ = "tables"
    __table_args__ = (
        CheckConstraint(_in("status", TABLE_STATUSES), name="status"),
        Index("ix_tables_function_id_status", "function_id", "status"),
        Index("ix_tables_status", "status"),
    )

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    spec_hash: Mapped[str] = mapped_column(String(64), unique=True)
    function_id: Mapped[str] = mapped_column(String(128))
    spec: Mapped[dict[str, Any]] = mapped_column(JSON)
    n: Mapped[int] = mapped_column(BigInteger)
    seed: Mapped[int] = mapped_column(BigInteger)
    chunk_size: Mapped[int] = mapped_column(BigInteger)
    n_chunks: Mapped[int] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16), default="building")
    error: Mapped[str | None] = mapped_column(Text)
    merge_lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    data: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True, deferred_raiseload=True)
    data_sha256: Mapped[str | None] = mapped_column(String(64))
    max_interp_error: Mapped[float | None] = mapped_column(Double)
    summary: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    provenance: Mapped[dict[str, Any] | None] = mapped_column(JSON)

    chunks: Mapped[list[TableChunk]] = relationship(
        back_populates="table",
        lazy="raise",
        cascade="all, delete-orphan",
        passive_deletes=True,
        order_by="TableChunk.index",
    )

    def __repr__(self) -> str:
        return f"Table(id={self.id!r}, function_id={self.function_id!r}, status={self.status!r})"


class TableChunk(Base):
    """Sobol indices ``[index·chunk_size, (index+1)·chunk_size)`` of one table.

    ``values`` holds the chunk's function values as float64 little-endian in Sobol order,
    ``low_index`` (int64 LE) and ``low_x`` (float64 LE, C order, shape (k, d)) the positions
    and points of its k lowest values. The blobs are cleared once the table is merged.
    """

    __tablename__ = "table_chunks"
    __table_args__ = (
        CheckConstraint(_in("status", CHUNK_STATUSES), name="status"),
        Index("ix_table_chunks_status_lease_until", "status", "lease_until"),
        # covers a table's progress: on SQLite the columns after the blobs are slow to read
        Index(
            "ix_table_chunks_progress",
            "table_id",
            "status",
            "started_at",
            "finished_at",
            "cpu_seconds",
            "worker",
        ),
    )

    table_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    index: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    dispatched_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    values: Mapped[bytes | None] = mapped_column(
        LargeBinary, deferred=True, deferred_raiseload=True
    )
    low_index: Mapped[bytes | None] = mapped_column(
        LargeBinary, deferred=True, deferred_raiseload=True
    )
    low_x: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True, deferred_raiseload=True)
    cpu_seconds: Mapped[float | None] = mapped_column(Double)
    worker: Mapped[str | None] = mapped_column(String(255))
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)

    table: Mapped[Table] = relationship(back_populates="chunks", lazy="raise")

    def __repr__(self) -> str:
        return f"TableChunk(table_id={self.table_id!r}, index={self.index}, status={self.status!r})"
