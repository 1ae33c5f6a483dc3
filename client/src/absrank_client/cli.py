"""``absrank-client``: the command line of the absrank client.

Exit codes: 0 success; 2 bad input (usage errors, unreadable files, and 4xx problems such as
422 or 404); 1 server errors, timeouts and connection errors. Errors print the problem's
title, detail and field on stderr, never a traceback. Long waits draw a progress bar on stderr.

The commands live by topic in ``_cli_tables`` (functions, tables, curves, absolute ranks, region
scans), ``_cli_compare`` (comparisons, tests, Pareto rankings, leaderboards), ``_cli_machines``
(CPUs, runtimes), ``_cli_jobs`` (jobs) and :mod:`absrank_client.archive_cli` (result sets), on
the shared plumbing of ``_cli_base``; this module makes the Typer app, registers them in
``--help`` order and holds :data:`client_factory`, the injection point of the commands'
:class:`Client`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer

# ``X as X``: importable from here as before the split, though not in __all__.
from absrank_client._cli_anytime import profiles, runtime_distributions
from absrank_client._cli_base import ClientFactory, _state
from absrank_client._cli_base import Format as Format
from absrank_client._cli_base import FormatOption as FormatOption
from absrank_client._cli_base import NoProgress as NoProgress
from absrank_client._cli_base import NoWait as NoWait
from absrank_client._cli_base import TimeoutOption as TimeoutOption
from absrank_client._cli_compare import compare, leaderboard, pareto, run_test
from absrank_client._cli_jobs import job
from absrank_client._cli_machines import cpu_register, cpus, cross_machine, equivalent_runtime
from absrank_client._cli_tables import CurveFormat as CurveFormat
from absrank_client._cli_tables import (
    function,
    functions,
    quantiles,
    rank,
    region_scan,
    table,
    table_curve,
    table_plot,
    tables,
    user_table,
)
from absrank_client.archive_cli import result_set, result_sets, upload
from absrank_client.client import DEFAULT_HTTP_TIMEOUT, Client

__all__ = ["app", "client_factory", "main"]

app = typer.Typer(
    name="absrank-client",
    help="Absolute ranks, statistical tests and comparisons from an absrank server.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _default_factory(url: str | None, api_key: str | None, timeout: float) -> Client:
    return Client(url, api_key, timeout=timeout)


client_factory: ClientFactory = _default_factory
"""How commands build their :class:`Client` (tests inject one wired to the real app)."""


@app.callback()
def _options(
    url: Annotated[
        str | None,
        typer.Option(envvar="ABSRANK_URL", help="server URL [default: http://127.0.0.1:8000]"),
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="ABSRANK_API_KEY", help="sent as X-API-Key")
    ] = None,
    http_timeout: Annotated[
        float, typer.Option(help="seconds one HTTP request may take")
    ] = DEFAULT_HTTP_TIMEOUT,
) -> None:
    _state.url, _state.api_key, _state.timeout = url, api_key, http_timeout


# ------------------------------------------------------------------ commands, in --help order

for _name, _command in (
    ("compare", compare),
    ("rank", rank),
    ("test", run_test),
    ("user-table", user_table),
    ("table", table),
    ("table-curve", table_curve),
    ("table-plot", table_plot),
    ("quantiles", quantiles),
    ("tables", tables),
    ("functions", functions),
    ("function", function),
    ("cpus", cpus),
    ("cpu-register", cpu_register),
    ("equivalent-runtime", equivalent_runtime),
    ("cross-machine", cross_machine),
    ("pareto", pareto),
    ("region-scan", region_scan),
    ("leaderboard", leaderboard),
    ("upload", upload),
    ("result-sets", result_sets),
    ("result-set", result_set),
    ("runtime-distributions", runtime_distributions),
    ("profiles", profiles),
    ("job", job),
):
    # rank: negative values (f of many functions is negative) are values, not options
    _context = {"ignore_unknown_options": True} if _name == "rank" else None
    app.command(_name, context_settings=_context)(_command)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    app(args=list(argv) if argv is not None else None, prog_name="absrank-client")


if __name__ == "__main__":  # pragma: no cover
    main()
