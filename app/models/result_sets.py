"""ORM models of the results archive: immutable result sets, their runs and trajectories.

A :class:`ResultSet` is one algorithm's results, identified by the SHA-256 of its normalized
content (metadata and runs); it is never updated: a correction is a new set whose
``supersedes`` names the old one. Runs (:class:`ResultRun`) and trajectory points
(:class:`TrajectoryPoint`) live in their own tables, indexed by function id, so leaderboards
read one function's runs without touching the sets' other data.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    Double,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    Integer,
    String,
    Text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db import Base
from app.models.tables import UTCDateTime

VALUES_ARE = ("f", "error")


class ResultSet(Base):
    """One algorithm's archived results (immutable).

    Attributes
    ----------
    id : str
        ``"r"`` + the first 23 hex digits of :attr:`content_sha256`.
    content_sha256 : str
        SHA-256 of the normalized content (unique: the same content is stored once).
    supersedes : str or None
        The set this one corrects (that set stays readable, marked as superseded).
    source_format : str
        How it arrived: ``json``, ``csv``, ``coco``, ``iohprofiler``, ``nevergrad``.
    suites : list of str
        Suites of the functions it covers (denormalized for listing).
    n_functions, n_runs : int
        Counts of distinct function ids and of runs.
    value_aggregate, value_runs : str or None, int or None
        Published, already-reduced values: each stored "run" is the ``value_aggregate``
        (``mean`` or ``median``) of ``value_runs`` runs (e.g. CEC tables of means of 25 runs);
        ``None`` when every stored run is one run.
    notes : list
        The importer's notes (``{code, message, file}``), kept with the set.
    """

    __tablename__ = "result_sets"
    __table_args__ = (
        CheckConstraint("values_are IN ('f', 'error')", name="values_are"),
        Index("ix_result_sets_name", "name"),
        Index("ix_result_sets_created_at", "created_at"),
    )

    id: Mapped[str] = mapped_column(String(24), primary_key=True)
    content_sha256: Mapped[str] = mapped_column(String(64), unique=True)
    name: Mapped[str] = mapped_column(String(200))
    version: Mapped[str | None] = mapped_column(String(100))
    description: Mapped[str | None] = mapped_column(Text)
    reference: Mapped[str | None] = mapped_column(String(500))
    contact: Mapped[str | None] = mapped_column(String(200))
    cpu_id: Mapped[int | None] = mapped_column(Integer)
    cpu_score: Mapped[float | None] = mapped_column(Double)
    values_are: Mapped[str] = mapped_column(String(8))
    value_aggregate: Mapped[str | None] = mapped_column(String(16))
    value_runs: Mapped[int | None] = mapped_column(Integer)
    supersedes: Mapped[str | None] = mapped_column(
        String(24), ForeignKey("result_sets.id", ondelete="RESTRICT")
    )
    source_format: Mapped[str] = mapped_column(String(16))
    suites: Mapped[list[str]] = mapped_column(JSON)
    n_functions: Mapped[int] = mapped_column(Integer)
    n_runs: Mapped[int] = mapped_column(Integer)
    has_trajectories: Mapped[bool] = mapped_column(default=False)
    notes: Mapped[list[Any]] = mapped_column(JSON)
    provenance: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)

    def __repr__(self) -> str:
        return f"ResultSet(id={self.id!r}, name={self.name!r})"


class ResultRun(Base):
    """One run of a set on one function: final value and evaluations used.

    ``suite`` and ``dim`` are the function id's suite and dimension, denormalized so that a
    suite leaderboard is one indexed scan.
    """

    __tablename__ = "result_runs"
    __table_args__ = (
        CheckConstraint("budget >= 1", name="budget_positive"),
        Index("ix_result_runs_function_id_set_id", "function_id", "set_id"),
        Index("ix_result_runs_suite_dim", "suite", "dim"),
    )

    set_id: Mapped[str] = mapped_column(
        String(24), ForeignKey("result_sets.id", ondelete="CASCADE"), primary_key=True
    )
    function_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    run: Mapped[int] = mapped_column(Integer, primary_key=True)
    suite: Mapped[str] = mapped_column(String(32))
    dim: Mapped[int] = mapped_column(Integer)
    value: Mapped[float] = mapped_column(Double)
    budget: Mapped[int] = mapped_column(BigInteger)


class TrajectoryPoint(Base):
    """One point ``(evaluations, best so far)`` of a run's trajectory."""

    __tablename__ = "result_trajectory_points"
    __table_args__ = (
        ForeignKeyConstraint(
            ["set_id", "function_id", "run"],
            ["result_runs.set_id", "result_runs.function_id", "result_runs.run"],
            ondelete="CASCADE",
        ),
        CheckConstraint("evaluations >= 1", name="evaluations_positive"),
    )

    set_id: Mapped[str] = mapped_column(String(24), primary_key=True)
    function_id: Mapped[str] = mapped_column(String(128), primary_key=True)
    run: Mapped[int] = mapped_column(Integer, primary_key=True)
    evaluations: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    best: Mapped[float] = mapped_column(Double)
