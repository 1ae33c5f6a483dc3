"""table_chunks: a covering index for a table's progress (no read of the chunk blobs).

On SQLite a row's columns after its blobs (``cpu_seconds``, ``worker``, ``started_at``,
``finished_at``) are read by walking the blobs' overflow pages: the progress of a building
2^22 table (``GET /v1/tables/{id}``, every merge) took ~15 ms, 0.5 ms from this index.

Revision ID: b4d1e8a2c7f3
Revises: a7c3e5f90b12
Create Date: 2026-12-03 06:40:00+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence

from alembic import op

# revision identifiers, used by Alembic.
revision: str = "b4d1e8a2c7f3"
down_revision: str | Sequence[str] | None = "a7c3e5f90b12"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index(
        "ix_table_chunks_progress",
        "table_chunks",
        ["table_id", "status", "started_at", "finished_at", "cpu_seconds", "worker"],
    )


def downgrade() -> None:
    op.drop_index("ix_table_chunks_progress", table_name="table_chunks")
