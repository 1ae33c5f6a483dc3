"""tables: v_f tables and the Sobol chunks they are built from.

Revision ID: b316884d5ba6
Revises:
Create Date: 2026-11-30 00:57:33.426997+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "b316884d5ba6"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "tables",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("spec_hash", sa.String(length=64), nullable=False),
        sa.Column("function_id", sa.String(length=128), nullable=False),
        sa.Column("spec", sa.JSON(), nullable=False),
        sa.Column("n", sa.BigInteger(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("chunk_size", sa.BigInteger(), nullable=False),
        sa.Column("n_chunks", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("merge_lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("data", sa.LargeBinary(), nullable=True),
        sa.Column("data_sha256", sa.String(length=64), nullable=True),
        sa.Column("max_interp_error", sa.Double(), nullable=True),
        sa.Column("summary", sa.JSON(), nullable=True),
        sa.Column("provenance", sa.JSON(), nullable=True),
        sa.CheckConstraint(
            "status IN ('building', 'merging', 'ready', 'failed')", name=op.f("ck_tables_status")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tables")),
        sa.UniqueConstraint("spec_hash", name=op.f("uq_tables_spec_hash")),
    )
    op.create_index("ix_tables_function_id_status", "tables", ["function_id", "status"])
    op.create_index("ix_tables_status", "tables", ["status"])

    op.create_table(
        "table_chunks",
        sa.Column("table_id", sa.String(length=24), nullable=False),
        sa.Column("index", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("dispatched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("values", sa.LargeBinary(), nullable=True),
        sa.Column("low_index", sa.LargeBinary(), nullable=True),
        sa.Column("low_x", sa.LargeBinary(), nullable=True),
        sa.Column("cpu_seconds", sa.Double(), nullable=True),
        sa.Column("worker", sa.String(length=255), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('pending', 'done')", name=op.f("ck_table_chunks_status")),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["tables.id"],
            name=op.f("fk_table_chunks_table_id_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("table_id", "index", name=op.f("pk_table_chunks")),
    )
    op.create_index("ix_table_chunks_status_lease_until", "table_chunks", ["status", "lease_until"])


def downgrade() -> None:
    op.drop_index("ix_table_chunks_status_lease_until", table_name="table_chunks")
    op.drop_table("table_chunks")
    op.drop_index("ix_tables_status", table_name="tables")
    op.drop_index("ix_tables_function_id_status", table_name="tables")
    op.drop_table("tables")
