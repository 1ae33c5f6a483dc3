"""pareto_rankings: stored Pareto rankings of multi-objective algorithms (SPEC §7).

Revision ID: d72b89bee34c
Revises: 93b02391d40f
Create Date: 2026-11-30 05:08:53.441383+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "d72b89bee34c"
down_revision: str | Sequence[str] | None = "93b02391d40f"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pareto_rankings",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("request", sa.JSON(), nullable=False),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pareto_rankings")),
        sa.UniqueConstraint("request_sha256", name=op.f("uq_pareto_rankings_request_sha256")),
    )


def downgrade() -> None:
    op.drop_table("pareto_rankings")
