"""comparisons: stored statistical comparisons (SPEC §4), keyed by the request hash.

Revision ID: de1c8a261c49
Revises: b316884d5ba6
Create Date: 2026-11-30 03:01:18.357999+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "de1c8a261c49"
down_revision: str | Sequence[str] | None = "b316884d5ba6"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "comparisons",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("status IN ('complete', 'partial')", name=op.f("ck_comparisons_status")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comparisons")),
        sa.UniqueConstraint("request_sha256", name=op.f("uq_comparisons_request_sha256")),
    )


def downgrade() -> None:
    op.drop_table("comparisons")
