"""result_sets: the results archive (immutable sets, their runs and trajectory points).

Revision ID: a7c3e5f90b12
Revises: 569ac240d775
Create Date: 2026-12-02 03:00:00+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "a7c3e5f90b12"
down_revision: str | Sequence[str] | None = "569ac240d775"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "result_sets",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("content_sha256", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("version", sa.String(length=100), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("reference", sa.String(length=500), nullable=True),
        sa.Column("contact", sa.String(length=200), nullable=True),
        sa.Column("cpu_id", sa.Integer(), nullable=True),
        sa.Column("cpu_score", sa.Double(), nullable=True),
        sa.Column("values_are", sa.String(length=8), nullable=False),
        sa.Column("value_aggregate", sa.String(length=16), nullable=True),
        sa.Column("value_runs", sa.Integer(), nullable=True),
        sa.Column("supersedes", sa.String(length=24), nullable=True),
        sa.Column("source_format", sa.String(length=16), nullable=False),
        sa.Column("suites", sa.JSON(), nullable=False),
        sa.Column("n_functions", sa.Integer(), nullable=False),
        sa.Column("n_runs", sa.Integer(), nullable=False),
        sa.Column("has_trajectories", sa.Boolean(), nullable=False),
        sa.Column("notes", sa.JSON(), nullable=False),
        sa.Column("provenance", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("values_are IN ('f', 'error')", name=op.f("ck_result_sets_values_are")),
        sa.ForeignKeyConstraint(
            ["supersedes"],
            ["result_sets.id"],
            name=op.f("fk_result_sets_supersedes_result_sets"),
            ondelete="RESTRICT",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_result_sets")),
        sa.UniqueConstraint("content_sha256", name=op.f("uq_result_sets_content_sha256")),
    )
    op.create_index("ix_result_sets_name", "result_sets", ["name"])
    op.create_index("ix_result_sets_created_at", "result_sets", ["created_at"])
    op.create_table(
        "result_runs",
        sa.Column("set_id", sa.String(length=24), nullable=False),
        sa.Column("function_id", sa.String(length=128), nullable=False),
        sa.Column("run", sa.Integer(), nullable=False),
        sa.Column("suite", sa.String(length=32), nullable=False),
        sa.Column("dim", sa.Integer(), nullable=False),
        sa.Column("value", sa.Double(), nullable=False),
        sa.Column("budget", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("budget >= 1", name=op.f("ck_result_runs_budget_positive")),
        sa.ForeignKeyConstraint(
            ["set_id"],
            ["result_sets.id"],
            name=op.f("fk_result_runs_set_id_result_sets"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("set_id", "function_id", "run", name=op.f("pk_result_runs")),
    )
    op.create_index("ix_result_runs_function_id_set_id", "result_runs", ["function_id", "set_id"])
    op.create_index("ix_result_runs_suite_dim", "result_runs", ["suite", "dim"])
    op.create_table(
        "result_trajectory_points",
        sa.Column("set_id", sa.String(length=24), nullable=False),
        sa.Column("function_id", sa.String(length=128), nullable=False),
        sa.Column("run", sa.Integer(), nullable=False),
        sa.Column("evaluations", sa.BigInteger(), nullable=False),
        sa.Column("best", sa.Double(), nullable=False),
        sa.CheckConstraint(
            "evaluations >= 1", name=op.f("ck_result_trajectory_points_evaluations_positive")
        ),
        sa.ForeignKeyConstraint(
            ["set_id", "function_id", "run"],
            ["result_runs.set_id", "result_runs.function_id", "result_runs.run"],
            name=op.f("fk_result_trajectory_points_set_id_result_runs"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "set_id", "function_id", "run", "evaluations", name=op.f("pk_result_trajectory_points")
        ),
    )


def downgrade() -> None:
    op.drop_table("result_trajectory_points")
    op.drop_index("ix_result_runs_suite_dim", table_name="result_runs")
    op.drop_index("ix_result_runs_function_id_set_id", table_name="result_runs")
    op.drop_table("result_runs")
    op.drop_index("ix_result_sets_created_at", table_name="result_sets")
    op.drop_index("ix_result_sets_name", table_name="result_sets")
    op.drop_table("result_sets")
