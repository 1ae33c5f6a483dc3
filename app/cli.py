"""``absrank`` command line: serve, worker, migrate, redispatch, queue-defaults, seed-archive,
key new."""

from __future__ import annotations

import enum
import json
import secrets
import signal
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
    parent: Annotated[
        int | None,
        typer.Option(
            help="stop when process PARENT, this worker's parent, is gone (absrank serve "
            "passes its pid to its embedded worker)"
        ),
    ] = None,
) -> None:
    """Run a worker (huey consumer with process workers) on the configured queue.

    SIGTERM stops it gracefully (tasks in flight finish within worker_shutdown_seconds), SIGINT
    at once. An embedded (SQLite) queue takes one consumer: a second one exits with status 75.
    """
    from workers import lifecycle

    if parent is not None:
        # first, before the heavy imports: the kernel signals this process when serve dies
        lifecycle.arm_parent_death_signal(signal.SIGTERM)
        if lifecycle.ParentWatch(parent).gone():  # it died before the signal was armed
            typer.echo(f"absrank worker: parent process {parent} is gone; not starting", err=True)
            raise typer.Exit(0)
    from workers.app import run_consumer

    get_settings().ensure_dirs()
    try:
        run_consumer(workers, parent=parent)
    except lifecycle.QueueBusy as busy:
        typer.echo(f"absrank worker: {busy}; not starting a second one", err=True)
        raise typer.Exit(lifecycle.EXIT_QUEUE_BUSY) from None


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


key_app = typer.Typer(help="API keys: make one (the deployment stores only its SHA-256).")
app.add_typer(key_app, name="key")


class KeyRole(enum.StrEnum):
    """The role of a new key (``app.config.Role``)."""

    read = "read"
    submit = "submit"
    operator = "operator"


@key_app.command("new")
def key_new(
    role: Annotated[KeyRole, typer.Option(help="what the key may do")] = KeyRole.submit,
    name: Annotated[
        str | None, typer.Option(help="who holds it (default: <role>-<8 hex digits>)")
    ] = None,
) -> None:
    """Print a fresh API key (once: it is stored nowhere) and its entry of ABSRANK_API_KEYS."""
    from app.config import ApiKey, key_sha256

    key = secrets.token_urlsafe(32)
    sha = key_sha256(key)
    entry = ApiKey(sha256=sha, role=role.value, name=name or f"{role.value}-{sha[:8]}")
    line = json.dumps(entry.model_dump(), separators=(", ", ": "))
    typer.echo(f"key: {key}")
    typer.echo("(shown once: give it to its holder, who sends it as the X-API-Key header)")
    typer.echo(f"ABSRANK_API_KEYS='[{line}]'")
    typer.echo("(with several keys, ABSRANK_API_KEYS lists every entry in one JSON list)")


def _exit_on_signal(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


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
    """Serve the API (with an embedded worker in the default, single-machine mode).

    SIGTERM or Ctrl-C stops it within api_shutdown_seconds (requests in flight are then
    cancelled) and its embedded worker within worker_shutdown_seconds, in parallel. An
    embedded queue that already has a consumer gets no second one: the API serves without.
    """
    from app.main import create_app
    from app.serving import EmbeddedWorker, StoppingServer, exit_leaving_threads, run_server
    from workers.lifecycle import queue_consumer

    settings = get_settings()
    settings.ensure_dirs()
    run_worker = settings.embedded_worker if embedded_worker is None else embedded_worker
    queue = settings.default_tables if default_tables is None else default_tables
    seed_sets = settings.seed_archive if seed is None else seed
    child: EmbeddedWorker | None = None
    if run_worker:
        holder = queue_consumer(settings.queue_url)
        if holder is None:
            child = EmbeddedWorker(settings)
            typer.echo(f"absrank serve: embedded worker pid {child.process.pid}", err=True)
        else:
            typer.echo(
                f"absrank serve: queue {settings.queue_url} already has a consumer: "
                f"{holder.describe()}; serving without an embedded worker",
                err=True,
            )
    server = StoppingServer(
        create_app(settings),
        on_exit=child.signal_stop if child is not None else lambda: None,
        host=host or settings.host,
        port=port or settings.port,
        log_level="info",
        timeout_graceful_shutdown=settings.api_shutdown_seconds,
        # no "server: uvicorn" banner, in every environment (README "HTTP headers, caching and
        # CORS"); the Date header stays
        server_header=False,
    )
    # uvicorn re-raises SIGTERM after its graceful shutdown; make that an exception so that the
    # finally below stops the embedded worker (a SIGTERM before uvicorn runs lands here too)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    status = 0
    try:
        try:
            if queue:
                queue_defaults()
            if seed_sets:
                seed_archive()
            run_server(server)
        except SystemExit as stop:  # SIGTERM, re-raised by uvicorn once it stopped
            status = stop.code if isinstance(stop.code, int) else 1
        except KeyboardInterrupt:  # Ctrl-C, likewise
            status = 128 + signal.SIGINT
    finally:
        if child is not None:
            child.stop()
    exit_leaving_threads(status)


if __name__ == "__main__":
    app()
