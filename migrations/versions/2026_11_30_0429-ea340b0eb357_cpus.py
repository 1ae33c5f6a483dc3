"""cpus: the CPU registry (PassMark single-thread scores), seeded with the paper's machines.

The seed is the eight calibration machines of Arza, Ceberio, Irurozki, Pérez (2024) and the
machine of its worked example, with the scores the paper reports. No scraped score list is
shipped: operators add CPUs through ``POST /v1/cpus``.

Revision ID: ea340b0eb357
Revises: de1c8a261c49
Create Date: 2026-11-30 04:29:07.054009+00:00

Revisions are static: never import app models here; spell out every column.
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "ea340b0eb357"
down_revision: str | Sequence[str] | None = "de1c8a261c49"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

PAPER = (
    "E. Arza, J. Ceberio, E. Irurozki, A. Pérez. On the fair comparison of optimization "
    "algorithms in different machines. Ann. Appl. Stat. (2024), arXiv:2305.07345"
)
SEED = [
    ("Intel Core i5-470UM", 539.0, "calibration machine"),
    ("Intel Celeron N4100", 1012.0, "calibration machine"),
    ("AMD A9-9420", 1344.0, "calibration machine"),
    ("AMD FX-6300", 1486.0, "calibration machine"),
    ("Intel Core i7-2760QM", 1559.0, "calibration machine"),
    ("Intel Core i7-6700HQ", 1921.0, "calibration machine"),
    ("Intel Core i7-7500U", 1955.0, "calibration machine"),
    ("AMD Ryzen 7 1800X", 2185.0, "calibration machine"),
    ("Intel Xeon E5440", 1219.0, "machine of the worked example"),
]
SEED_CREATED_AT = datetime(2026, 11, 30, tzinfo=UTC)


def _key(name: str) -> str:
    return " ".join(name.lower().split())


def upgrade() -> None:
    cpus = op.create_table(
        "cpus",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("score", sa.Double(), nullable=False),
        sa.Column("source", sa.Text(), nullable=False),
        sa.Column("source_date", sa.String(length=10), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("score > 0", name=op.f("ck_cpus_score_positive")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cpus")),
        sa.UniqueConstraint("key", name=op.f("uq_cpus_key")),
    )
    op.bulk_insert(
        cpus,
        [
            {
                "name": name,
                "key": _key(name),
                "score": score,
                "source": f"{PAPER}: {role}, PassMark single-thread score as the paper reports it",
                "source_date": "2023-05",
                "created_at": SEED_CREATED_AT,
            }
            for name, score, role in SEED
        ],
    )


def downgrade() -> None:
    op.drop_table("cpus")
