"""Helpers shared by the test packages (conftest modules cannot import each other)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
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


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (children, grandchildren, ...)."""
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        p, pp = (int(x) for x in line.split())
        children.setdefault(pp, []).append(p)
    found, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.add(c)
            todo.append(c)
    return found


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


@dataclass
class Served:
    """A running ``absrank serve`` started by :func:`served`.

    Attributes
    ----------
    url : str
        Its base URL on loopback.
    process : subprocess.Popen
        The ``absrank serve`` process (its own session).
    workers : set of int
        The pids of its embedded workers, read once it answered ``/healthz``.
    """

    url: str
    process: subprocess.Popen[bytes]
    workers: set[int]


@contextlib.contextmanager
def served(tmp_path: Path, **settings: str) -> Iterator[Served]:
    """``absrank migrate`` + ``absrank serve`` on a free loopback port, as a user runs them.

    Small tables (N = 2^12 in chunks of 2^10) and no default tables unless ``settings``
    (``ABSRANK_*`` names without the prefix) say otherwise. Everything it started is stopped
    when the block ends: SIGTERM to the server's group, then SIGKILL to what is left.
    """
    port = free_port()
    env = (
        os.environ
        | {
            "ABSRANK_DATABASE_URL": f"sqlite:///{tmp_path / 'absrank.db'}",
            "ABSRANK_QUEUE_URL": f"sqlite:///{tmp_path / 'queue.db'}",
            "ABSRANK_PORT": str(port),
            "ABSRANK_DEFAULT_TABLES": "false",
            "ABSRANK_SEED_ARCHIVE": "false",
            "ABSRANK_TABLE_DEFAULT_LOG2N": "12",
            "ABSRANK_TABLE_CHUNK_LOG2": "10",
        }
        | {f"ABSRANK_{k.upper()}": v for k, v in settings.items()}
    )
    cli = [sys.executable, "-m", "app.cli"]
    subprocess.run([*cli, "migrate"], env=env, cwd=ROOT, check=True, capture_output=True)
    with (tmp_path / "serve.log").open("wb") as log:
        process = subprocess.Popen(
            [*cli, "serve"],
            env=env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        running = Served(f"http://127.0.0.1:{port}", process, set())
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if httpx.get(f"{running.url}/healthz", timeout=5).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "absrank serve did not start within 60 s"
                assert process.poll() is None, "absrank serve exited; see serve.log"
                time.sleep(0.3)
            running.workers = descendants(process.pid)
            yield running
        finally:
            if process.poll() is None:
                stop_group(process, signal.SIGTERM, wait=30)
            for pid in running.workers:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


DEFAULT_PG_ADMIN = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
"""The test PostgreSQL server's admin URL unless ``ABSRANK_TEST_POSTGRES_URL`` names another."""


def pg_admin_url() -> str:
    """The admin URL of the test PostgreSQL server."""
    return os.environ.get("ABSRANK_TEST_POSTGRES_URL", DEFAULT_PG_ADMIN)


def libpq(url: str) -> str:
    """A SQLAlchemy URL as psycopg's connection string."""
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def require_postgres(url: str) -> None:
    """Fail (under ``CI``) or skip the test when the server at ``url`` is unreachable."""
    import psycopg
    import pytest

    try:
        with psycopg.connect(libpq(url), connect_timeout=3, autocommit=True):
            pass
    except psycopg.OperationalError as exc:
        msg = f"PostgreSQL not reachable at {url!r}: {exc}"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)


@contextlib.contextmanager
def pg_databases(admin_url: str) -> Iterator[Callable[[], str]]:
    """``create()`` makes a database ``absrank_test_<random>`` and returns its URL; all are
    dropped on exit."""
    import secrets

    import psycopg
    from sqlalchemy.engine import make_url

    created: list[str] = []

    def create() -> str:
        name = f"absrank_test_{secrets.token_hex(6)}"
        with psycopg.connect(libpq(admin_url), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        created.append(name)
        return (
            make_url(admin_url)
            .set(drivername="postgresql+psycopg", database=name)
            .render_as_string(hide_password=False)
        )

    try:
        yield create
    finally:
        with psycopg.connect(libpq(admin_url), autocommit=True) as conn:
            for name in created:
                conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def pair_rows(pairs: Any, algorithms: Any = None) -> list[dict[str, Any]]:
    """A comparison's pairwise results (compact, or columns) as one object per pair, as the
    client gives them (``absrank_client.models.pair_rows``)."""
    from absrank_client.models import pair_rows as client_pair_rows

    return client_pair_rows(pairs, algorithms)


def count_checks(monkeypatch: Any, seconds: float = 0.0) -> list[int]:
    """Count :meth:`WorkControl.check` calls (``[n]``), each "taking" ``seconds`` first
    (``monkeypatch``: pytest's fixture)."""
    from app.domain.cost import WorkControl

    checks = [0]
    real = WorkControl.check

    def counted(self: WorkControl, done: float | None = None, total: float | None = None) -> None:
        checks[0] += 1
        time.sleep(seconds)
        real(self, done, total)

    monkeypatch.setattr(WorkControl, "check", counted)
    return checks
