"""What the commands of ``absrank-client`` share: output formats and rendering, error
handling (exit codes), the options every waiting command takes, and the :class:`Client` of
the invocation (made by :data:`absrank_client.cli.client_factory`)."""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import sys
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from absrank_client._models_base import Row, _Tabular
from absrank_client.client import DEFAULT_HTTP_TIMEOUT, Client
from absrank_client.errors import (
    AbsrankError,
    ConnectionFailed,
    JobFailed,
    JobTimeout,
    ProblemError,
)

F = TypeVar("F", bound=Callable[..., Any])


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


ClientFactory = Callable[[str | None, str | None, float], Client]


class _State:
    url: str | None = None
    api_key: str | None = None
    timeout: float = DEFAULT_HTTP_TIMEOUT


_state = _State()


def _client() -> Client:
    """The invocation's :class:`Client`, from ``absrank_client.cli.client_factory``: the CLI's
    injection point, looked up at each call so that replacing it there takes effect."""
    from absrank_client import cli

    return cli.client_factory(_state.url, _state.api_key, _state.timeout)


_err = Console(stderr=True, highlight=False, soft_wrap=True)


def _note(text: str) -> None:
    """A line on stderr (warnings, files written), printed verbatim."""
    _err.print(text, markup=False)


def _fail(message: str, code: int) -> typer.Exit:
    _err.print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(code)


def _problem_text(exc: ProblemError) -> str:
    lines = [f"{exc.status} {exc.title}"]
    if exc.detail:
        lines.append(f"  detail: {exc.detail}")
    if exc.field:
        lines.append(f"  field: {exc.field}")
    for e in exc.errors[1:]:
        lines.append(f"  also: {e.get('field')}: {e.get('message')}")
    return "\n".join(lines)


def _handled(func: F) -> F:
    """Turn every client error into a message on stderr and an exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ProblemError as exc:
            raise _fail(_problem_text(exc), 2 if 400 <= exc.status < 500 else 1) from None
        except (JobTimeout, JobFailed, ConnectionFailed) as exc:
            raise _fail(str(exc), 1) from None
        except AbsrankError as exc:
            raise _fail(str(exc), 1) from None
        except (ValueError, TypeError, OSError) as exc:
            raise _fail(str(exc), 2) from None

    return wrapper  # type: ignore[return-value]


# ------------------------------------------------------------------ rendering


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        if 1e-3 <= abs(x) < 1e6:
            return f"{x:.4f}"
        return f"{x:.4g}"
    if isinstance(x, list | tuple):
        return ", ".join(_fmt(v) for v in x)
    return str(x)


def _stdout() -> Console:
    return Console(width=None if sys.stdout.isatty() else 200, highlight=False, soft_wrap=False)


def _write_rows(rows: list[Row], fmt: Format, title: str | None = None) -> None:
    if not rows:
        if fmt in (Format.table, Format.markdown):
            typer.echo(f"{title + ': ' if title else ''}(none)")
        return
    columns = list(dict.fromkeys(k for r in rows for k in r))
    if fmt is Format.csv:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: "" if r.get(k) is None else r.get(k) for k in columns})
        typer.echo(buffer.getvalue(), nl=False)
    elif fmt is Format.markdown:
        if title:
            typer.echo(f"\n**{title}**\n")
        typer.echo("| " + " | ".join(columns) + " |")
        typer.echo("|" + "|".join("---" for _ in columns) + "|")
        for r in rows:
            typer.echo(
                "| " + " | ".join(_fmt(r.get(k)).replace("|", "\\|") for k in columns) + " |"
            )
    else:
        if title:
            typer.echo(title)
        table = RichTable(show_edge=False)
        for c in columns:
            table.add_column(c, overflow="fold", justify="left" if c in _TEXT else "right")
        for r in rows:
            table.add_row(*(_fmt(r.get(k)) for k in columns))
        _stdout().print(table)


_TEXT = {
    "algorithm",
    "a",
    "b",
    "id",
    "name",
    "test",
    "method",
    "status",
    "kinds",
    "subset",
    "function_id",
    "suite",
    "title",
    "decision",
    "reason",
    "scale",
    "instance",
    "indicator",
    "region",
    "kind",
    "source_date",
    "analytic",
}


def _emit(result: _Tabular, fmt: Format, title: str | None = None) -> None:
    if fmt is Format.json:
        typer.echo(json.dumps(result.raw, indent=2, sort_keys=False, ensure_ascii=False))  # type: ignore[attr-defined]
    else:
        _write_rows(result.rows(), fmt, title)


def _line(text: str, fmt: Format) -> None:
    typer.echo(f"{text}\n" if fmt is Format.markdown else text)


FormatOption = Annotated[Format, typer.Option("--format", "-f", help="output format")]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", help="seconds to wait for tables / jobs")
]
NoWait = Annotated[bool, typer.Option("--no-wait", help="return at once, even if unfinished")]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="no progress bar on stderr")]


def _floats(text: str) -> list[float | None]:
    out: list[float | None] = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        out.append(None if part.lower() in ("na", "nan", "null", "none") else float(part))
    return out


def figure_format(path: Path) -> Literal["svg", "pdf", "png"]:
    """A figure's format from its file's suffix (``.png``, ``.pdf``; SVG otherwise)."""
    suffix = path.suffix.lower()
    return "png" if suffix == ".png" else "pdf" if suffix == ".pdf" else "svg"
