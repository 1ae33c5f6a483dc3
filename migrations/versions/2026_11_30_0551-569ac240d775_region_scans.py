"""region_scans: δ-region scans (Jing & Liu §V; SPEC §3.5), keyed by the request hash.

Revision ID: 569ac240d775
Revises: d72b89bee34c
Create Date: 2026-11-30 05:51:36.618023+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "569ac240d775"
down_revision: str | Sequence[str] | None = "d72b89bee34c"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "region_scans",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("function_id", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("table_ids", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('building', 'ready', 'failed')", name=op.f("ck_region_scans_status")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_region_scans")),
        sa.UniqueConstraint("request_sha256", name=op.f("uq_region_scans_request_sha256")),
    )


def downgrade() -> None:
    op.drop_table("region_scans")
