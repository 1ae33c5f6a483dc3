"""cross_machine_comparisons: guided cross-machine comparisons (the five steps of Arza et al.).

Revision ID: 93b02391d40f
Revises: ea340b0eb357
Create Date: 2026-11-30 04:34:50.433523+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "93b02391d40f"
down_revision: str | Sequence[str] | None = "ea340b0eb357"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cross_machine_comparisons",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("setup_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=24), nullable=False),
        sa.Column("setup", sa.JSON(), nullable=False),
        sa.Column("answer", sa.JSON(), nullable=False),
        sa.Column("results", sa.JSON(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('awaiting-results', 'complete')",
            name=op.f("ck_cross_machine_comparisons_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cross_machine_comparisons")),
        sa.UniqueConstraint("setup_sha256", name=op.f("uq_cross_machine_comparisons_setup_sha256")),
    )


def downgrade() -> None:
    op.drop_table("cross_machine_comparisons")
