"""Helpers shared by the test packages (conftest modules cannot import each other)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

ROOT = Path(__file__).resolve().parents[1]


def alembic_config(url: str) -> Config:
    """An Alembic config for ``url`` that leaves the test's logging alone."""
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    cfg.attributes["configure_logger"] = False
    return cfg


def migrate(url: str) -> None:
    """Apply the Alembic migrations to ``url``."""
    command.upgrade(alembic_config(url), "head")
