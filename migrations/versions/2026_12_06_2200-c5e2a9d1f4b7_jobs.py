"""jobs: heavy work run by the workers, with progress, a lease and the stored answer (issue 17).

Revision ID: c5e2a9d1f4b7
Revises: b4d1e8a2c7f3
Create Date: 2026-12-06 22:00:00+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "c5e2a9d1f4b7"
down_revision: str | Sequence[str] | None = "b4d1e8a2c7f3"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(length=24), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("request_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("request", sa.LargeBinary(), nullable=False),
        sa.Column("owner", sa.String(length=80), nullable=True),
        sa.Column("may_queue_builds", sa.Boolean(), nullable=False),
        sa.Column("progress_done", sa.Double(), nullable=True),
        sa.Column("progress_total", sa.Double(), nullable=True),
        sa.Column("answer", sa.LargeBinary(), nullable=True),
        sa.Column("answer_final", sa.Boolean(), nullable=False),
        sa.Column("problem", sa.JSON(), nullable=True),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("dispatched_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'done', 'failed', 'cancelled')",
            name=op.f("ck_jobs_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_jobs")),
    )
    op.create_index("ix_jobs_status_lease_until", "jobs", ["status", "lease_until"])


def downgrade() -> None:
    op.drop_index("ix_jobs_status_lease_until", table_name="jobs")
    op.drop_table("jobs")
