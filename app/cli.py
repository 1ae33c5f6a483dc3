"""``absrank`` command line: serve, worker, migrate, redispatch, queue-defaults, seed-archive."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from app.config import get_settings

if TYPE_CHECKING:
    from alembic.config import Config

app = typer.Typer(help="absrank: absolute ranks for benchmarking optimization algorithms.")

DEFAULT_TABLE_DIMS = (2, 5, 10)


def project_root() -> Path:
    """Folder holding ``alembic.ini``: the working directory if it has one, else the source tree."""
    cwd = Path.cwd()
    return cwd if (cwd / "alembic.ini").exists() else Path(__file__).resolve().parent.parent


def alembic_config() -> Config:
    """Alembic configuration pointing at this project's migrations and the configured database."""
    from alembic.config import Config

    root = project_root()
    cfg = Config(str(root / "alembic.ini"))
    cfg.set_main_option("script_location", str(root / "migrations"))
    cfg.set_main_option("sqlalchemy.url", get_settings().database_url.replace("%", "%%"))
    return cfg


@app.command()
def migrate(revision: str = "head") -> None:
    """Apply database migrations (default: up to head)."""
    from alembic import command

    get_settings().ensure_dirs()
    command.upgrade(alembic_config(), revision)
    typer.echo(f"database at {revision}")


def default_table_ids() -> list[str]:
    """Function ids of the default tables: the classic suite and BBOB instance 1 at d = 2, 5, 10."""
    from app.domain.functions import list_functions

    ids = [f.id for f in list_functions(suite="classic") if f.dim in DEFAULT_TABLE_DIMS]
    ids += [
        f.id
        for f in list_functions(suite="bbob")
        if f.dim in DEFAULT_TABLE_DIMS and f.instance == 1
    ]
    return ids


@app.command("queue-defaults")
def queue_defaults() -> None:
    """Queue the default tables (idempotent: existing tables are left as they are)."""
    from app.db import engine_for, make_sessionmaker
    from app.services.table_cache import TableCaches
    from app.services.tables import request_table
    from workers.app import get_dispatcher

    settings = get_settings()
    settings.ensure_dirs()
    engine = engine_for(settings)
    sm = make_sessionmaker(engine)
    caches = TableCaches.from_settings(settings)  # this command's own
    created = 0
    dispatcher = get_dispatcher()
    try:
        for fid in default_table_ids():
            _, new = request_table(sm, settings, dispatcher, function_id=fid, cache=caches)
            created += int(new)
    finally:
        engine.dispose()
    typer.echo(f"default tables: {created} queued, {len(default_table_ids()) - created} existing")


@app.command("seed-archive")
def seed_archive() -> None:
    """Load the archive's seed results: CEC 2005 F15-F17 (11 algorithms) and the BBOB demo's
    three scipy optimizers (idempotent: sets already archived are left as they are)."""
    from app.db import engine_for, make_sessionmaker
    from app.services.archive_seed import seed_archive as seed
    from app.services.table_cache import AppCaches
    from workers.app import get_dispatcher

    settings = get_settings()
    settings.ensure_dirs()
    engine = engine_for(settings)
    caches = AppCaches.from_settings(settings)  # this command's own
    try:
        report = seed(
            make_sessionmaker(engine),
            settings,
            get_dispatcher(),
            cache=caches.tables,
            ladder_cache=caches.ladders,
        )
    finally:
        engine.dispose()
    typer.echo(
        f"result sets: {len(report.created)} stored, {len(report.existing)} existing; queued "
        f"{report.queued_tables} tables and {report.queued_ladders} ladders"
    )


@app.command()
def worker(
    workers: Annotated[int, typer.Option(help="worker processes")] = 1,
) -> None:
    """Run a worker (huey consumer with process workers) on the configured queue."""
    from workers.app import run_consumer

    get_settings().ensure_dirs()
    run_consumer(workers)


@app.command()
def redispatch() -> None:
    """Re-enqueue chunks and merges whose lease expired (the periodic task does this too)."""
    from app.db import engine_for, make_sessionmaker
    from app.services.tables import redispatch as do_redispatch
    from workers.app import get_dispatcher

    settings = get_settings()
    engine = engine_for(settings)
    try:
        counts = do_redispatch(make_sessionmaker(engine), settings, get_dispatcher())
    finally:
        engine.dispose()
    typer.echo(counts)


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def _die_with_parent() -> None:
    """In the embedded worker: get SIGTERM when ``absrank serve`` dies, however it dies.

    uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, so the ``finally`` of
    :func:`serve` does not always run; Linux's ``PR_SET_PDEATHSIG`` covers that case.
    """
    try:
        import ctypes

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: rely on the finally below
        pass


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="bind address")] = None,
    port: Annotated[int | None, typer.Option(help="port")] = None,
    embedded_worker: Annotated[
        bool | None, typer.Option(help="also run worker processes (default: setting)")
    ] = None,
    default_tables: Annotated[
        bool | None, typer.Option(help="queue the default tables (default: setting)")
    ] = None,
    seed: Annotated[
        bool | None, typer.Option(help="seed the results archive (default: setting)")
    ] = None,
) -> None:
    """Serve the API (with an embedded worker in the default, single-machine mode)."""
    import uvicorn

    from app.main import create_app

    settings = get_settings()
    settings.ensure_dirs()
    run_worker = settings.embedded_worker if embedded_worker is None else embedded_worker
    queue = settings.default_tables if default_tables is None else default_tables
    seed_sets = settings.seed_archive if seed is None else seed
    child: subprocess.Popen[bytes] | None = None
    if run_worker:
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "app.cli",
                "worker",
                "--workers",
                str(settings.embedded_workers),
            ],
            start_new_session=True,
        )
    # uvicorn re-raises SIGTERM after its graceful shutdown; make that an exception so that the
    # finally below stops the embedded worker instead of orphaning it
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        if queue:
            queue_defaults()
        if seed_sets:
            seed_archive()
        uvicorn.run(
            create_app(settings),
            host=host or settings.host,
            port=port or settings.port,
            log_level="info",
        )
    finally:
        if child is not None and child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(child.pid, signal.SIGKILL)


if __name__ == "__main__":
    app()
