"""Helpers shared by the test packages (conftest modules cannot import each other)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from collections.abc import Iterator
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


def stop_group(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL, wait: float = 20) -> None:
    """Send ``sig`` to the process group of ``proc`` (started in its own session); SIGKILL if
    it is still running after ``wait`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
    try:
        proc.wait(timeout=wait)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


@contextlib.contextmanager
def process_group(
    cmd: list[str], *, env: dict[str, str], log: Path, stop_signal: int = signal.SIGKILL
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``cmd`` from the project root in its own process group, output appended to ``log``;
    the whole group is stopped with ``stop_signal`` at the end, whatever happens."""
    with log.open("ab") as out:
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
    try:
        yield proc
    finally:
        stop_group(proc, stop_signal)
