"""``absrank-client rank``, ``table``, ``user-table``, the curves and quantiles, ``tables``,
``functions``, ``function`` and ``region-scan``: functions, their tables and absolute ranks
(registered by :mod:`absrank_client.cli`)."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from absrank_client._cli_base import (
    Format,
    FormatOption,
    NoProgress,
    NoWait,
    TimeoutOption,
    _client,
    _emit,
    _floats,
    _fmt,
    _handled,
    _note,
    figure_format,
)
from absrank_client.errors import JobTimeout
from absrank_client.models import RankSet

__all__ = [
    "function",
    "functions",
    "quantiles",
    "rank",
    "region_scan",
    "table",
    "table_curve",
    "table_plot",
    "tables",
    "user_table",
]


def _read_values(path: Path) -> list[float]:
    """One value per line (blank lines and ``#`` comments skipped), as ``user-table`` reads."""
    out: list[float] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            out.append(float(text))
        except ValueError:
            raise ValueError(f"{path}:{number}: not a number: {text!r}") from None
    if not out:
        raise ValueError(f"{path}: no values")
    return out


def _emit_ranks(ranks: RankSet, fmt: Format, title: str) -> None:
    _emit(ranks, fmt, title)
    if fmt is not Format.json:
        if ranks.provisional and ranks.awaiting is not None:
            _note(
                "provisional (column provisional = True): tail-model ranks with no lower end, "
                f"awaiting the nested-region ladder ({ranks.awaiting.status}): "
                f"{ranks.awaiting.detail}"
            )
        for w in ranks.warnings:
            _note(f"warning: {w}")


@_handled
def rank(
    function_id: Annotated[
        str | None,
        typer.Argument(
            help="a hosted function id (leave out with --table-id or --sample: "
            "the arguments are then all values)"
        ),
    ] = None,
    values: Annotated[list[float] | None, typer.Argument(help="metric values to rank")] = None,
    table_id: Annotated[
        str | None,
        typer.Option(help="rank against this table (any table id, e.g. user/... of user-table)"),
    ] = None,
    sample: Annotated[
        Path | None,
        typer.Option(help="rank against your own sample: a file, one value per line (Eq. 28)"),
    ] = None,
    f_opt: Annotated[float | None, typer.Option(help="with --sample: f*, as you state it")] = None,
    f_max: Annotated[
        float | None, typer.Option(help="with --sample: max of f, as you state it")
    ] = None,
    results: Annotated[
        Path | None, typer.Option(help="long-format CSV of runs (algorithm,problem,run,value)")
    ] = None,
    budget: Annotated[int | None, typer.Option(help="evaluations per run (best-of-c)")] = None,
    runs: Annotated[int | None, typer.Option(help="runs aggregated into each value")] = None,
    aggregate: Annotated[
        str | None, typer.Option(help="best, worst, median, lower-median, order, mean")
    ] = None,
    values_are: Annotated[str | None, typer.Option(help="f or error (f - f*)")] = None,
    tail: Annotated[str | None, typer.Option(help="auto, power, linear or paper")] = None,
    regions: Annotated[str | None, typer.Option(help="auto, domain or nested")] = None,
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait", help="print the first answer, provisional ranks included; do not wait"
        ),
    ] = False,
    no_progress: NoProgress = False,
) -> None:
    """Absolute ranks v of values (or of each algorithm's runs with --results).

    Against a hosted function (FUNCTION_ID), a table (--table-id) or your own sample
    (--sample). Provisional ranks (awaiting a ladder) are waited for unless --no-wait; when
    --timeout runs out after provisional ranks arrived they are printed with a note (exit 0).
    """
    if table_id is not None and sample is not None:
        raise ValueError("give one of --table-id and --sample")
    if (table_id is not None or sample is not None) and function_id is not None:
        try:  # no function id then: the first argument is a value
            values = [float(function_id), *(values or [])]
            function_id = None
        except ValueError:
            pass
    if function_id is None and table_id is None and sample is None and results is None:
        raise ValueError("give a function id, --table-id or --sample")
    if (f_opt is not None or f_max is not None) and sample is None:
        raise ValueError("--f-opt and --f-max state the --sample's f* and max")
    if not values and results is None:
        raise ValueError("give values to rank, or --results with the runs")
    with _client() as client:
        try:
            ranks = client.ranks(
                function_id,
                values or None,
                table_id=table_id,
                sample=None if sample is None else _read_values(sample),
                f_opt=f_opt,
                f_max=f_max,
                results=results,
                budget=budget,
                runs=runs,
                aggregate=aggregate,
                values_are=values_are,  # type: ignore[arg-type]
                tail=tail,
                regions=regions,  # type: ignore[arg-type]
                wait=not no_wait,
                timeout=timeout,
                progress=not no_progress,
            )
        except JobTimeout as exc:
            if not isinstance(exc.last, RankSet):
                raise
            ranks = exc.last
            _note(f"timed out: {exc}; printing the provisional ranks received")
    where = f"sample {sample.name}" if sample is not None else ranks.function_id or table_id
    _emit_ranks(ranks, fmt, f"absolute ranks on {where} (lower is better)")


@_handled
def user_table(
    samples: Annotated[
        Path, typer.Argument(help="your function's samples: one value per line, or a CSV")
    ],
    column: Annotated[
        str | None, typer.Option(help="the CSV column holding the values (header line)")
    ] = None,
    name: Annotated[str | None, typer.Option(help="your function's name")] = None,
    f_opt: Annotated[float | None, typer.Option(help="f*, as you state it")] = None,
    f_max: Annotated[float | None, typer.Option(help="max of f, as you state it")] = None,
    dim: Annotated[int | None, typer.Option(help="the domain's dimension, as stated")] = None,
    sampled_by: Annotated[str | None, typer.Option(help="who sampled, as stated")] = None,
    sampling: Annotated[str | None, typer.Option(help="how the points were drawn")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Build a table of your own function from a file of its samples (ready at once)."""
    with _client() as client:
        result = client.user_table(
            file=samples,
            column=column,
            name=name,
            f_opt=f_opt,
            f_max=f_max,
            dim=dim,
            sampled_by=sampled_by,
            sampling=sampling,
        )
    _emit(result, fmt, "table")


@_handled
def table(
    function_id: Annotated[str, typer.Argument(help="a hosted function id, or a table id")],
    delta: Annotated[
        list[float] | None, typer.Option(help="box half-width (once, or d times)")
    ] = None,
    log2n: Annotated[int | None, typer.Option(help="N = 2^log2n samples")] = None,
    seed: Annotated[int | None, typer.Option(help="Sobol seed")] = None,
    ladder: Annotated[bool, typer.Option(help="the ladder of nested regions")] = False,
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_wait: NoWait = False,
    no_progress: NoProgress = False,
) -> None:
    """Request a table of v1 (or a ladder) and wait until it is built; a table id shows it."""
    with _client() as client:
        if (function_id.startswith("t") and "/" not in function_id) or function_id.startswith(
            "user/"
        ):
            _emit(client.get_table(function_id), fmt, "table")
            return
        if ladder:
            result: Any = client.create_ladder(
                function_id,
                log2n=log2n,
                seed=seed,
                wait=not no_wait,
                timeout=timeout,
                progress=not no_progress,
            )
            title = f"ladder of {function_id}: {result.status}"
        else:
            d: Any = None if not delta else (delta[0] if len(delta) == 1 else delta)
            result = client.create_table(
                function_id,
                delta=d,
                log2n=log2n,
                seed=seed,
                wait=not no_wait,
                timeout=timeout,
                progress=not no_progress,
            )
            title = "table"
    _emit(result, fmt, title)


class CurveFormat(StrEnum):
    json = "json"
    csv = "csv"


@_handled
def table_curve(
    table: Annotated[str, typer.Argument(help="a table id, or a function id with --ladder")],
    fmt: Annotated[CurveFormat, typer.Option("--format", help="json or csv")] = CurveFormat.json,
    out: Annotated[Path | None, typer.Option("-o", "--output", help="write to this file")] = None,
    ladder: Annotated[bool, typer.Option(help="the ladder of this function id")] = False,
) -> None:
    """Download a ready table's curve (knots, counts, tail models), or a ladder's."""
    with _client() as client:
        if fmt == CurveFormat.csv:
            text = client.ladder_curve_csv(table) if ladder else client.table_curve_csv(table)
        else:
            curve: Any = client.ladder_curve(table) if ladder else client.table_curve(table)
            text = json.dumps(curve.raw, indent=1) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text)
        _note(f"curve written to {out}")


@_handled
def table_plot(
    table: Annotated[str, typer.Argument(help="a table id, or a function id with --ladder")],
    out: Annotated[Path, typer.Option("-o", "--output", help="file: .svg, .pdf or .png")],
    dpi: Annotated[int | None, typer.Option(help="PNG resolution (default 300)")] = None,
    width: Annotated[float | None, typer.Option(help="inches (1-20)")] = None,
    height: Annotated[float | None, typer.Option(help="inches (1-20)")] = None,
    font_size: Annotated[float | None, typer.Option(help="points (5-24, default 10)")] = None,
    ladder: Annotated[bool, typer.Option(help="the ladder of this function id")] = False,
) -> None:
    """Plot log10 v1 against t - f* of a ready table (or ladder) to an SVG, PDF or PNG file."""
    kind: Any = figure_format(out)
    with _client() as client:
        plot = client.ladder_plot if ladder else client.table_plot
        plot(table, format=kind, dpi=dpi, width=width, height=height, font_size=font_size, path=out)
    _note(f"plot written to {out}")


@_handled
def quantiles(
    table: Annotated[str, typer.Argument(help="a table id")],
    v: Annotated[list[float], typer.Option("-v", help="a level in (0, 1]; repeat it")],
    fmt: FormatOption = Format.table,
) -> None:
    """Quantiles t = q(v) of a ready table's curve (v1(t) = v)."""
    with _client() as client:
        _emit(client.table_quantiles(table, v), fmt, f"quantiles of {table}")


@_handled
def tables(
    function_id: Annotated[str | None, typer.Option(help="only this function")] = None,
    status: Annotated[str | None, typer.Option(help="building, merging, ready or failed")] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """List tables, newest first."""
    with _client() as client:
        _emit(client.list_tables(function_id, status, limit=limit), fmt, "tables")


@_handled
def functions(
    suite: Annotated[str | None, typer.Option(help="classic, bbob, cec2005, ...")] = None,
    dim: Annotated[int | None, typer.Option(help="dimension")] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """List hosted benchmark functions."""
    with _client() as client:
        result = client.list_functions(suite, dim, limit=limit)
    _emit(result, fmt, f"functions ({result.total} in all)")


@_handled
def function(
    function_id: Annotated[str, typer.Argument(help="a hosted function id")],
    fmt: FormatOption = Format.table,
) -> None:
    """Describe one function."""
    with _client() as client:
        _emit(client.get_function(function_id), fmt, function_id)


@_handled
def region_scan(
    function_id: Annotated[str, typer.Argument(help="a function with known x*")],
    values: Annotated[list[str], typer.Argument(help="ALGORITHM=VALUE ...")],
    deltas: Annotated[str | None, typer.Option(help="comma-separated half-widths")] = None,
    log2n: Annotated[int | None, typer.Option()] = None,
    budget: Annotated[int | None, typer.Option()] = None,
    values_are: Annotated[str | None, typer.Option(help="f or error")] = None,
    tail: Annotated[
        str | None,
        typer.Option(help="auto, power, linear, or paper (Eq. 28 as published: Table V)"),
    ] = None,
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_wait: NoWait = False,
    no_progress: NoProgress = False,
) -> None:
    """Scan box half-widths δ and choose the one that spreads the ranks best (Eq. 29)."""
    pairs = {}
    for item in values:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise ValueError(f"expected ALGORITHM=VALUE, got {item!r}")
        pairs[name] = float(value)
    with _client() as client:
        scan = client.region_scan(
            function_id,
            pairs,
            deltas=None if deltas is None else _floats(deltas),  # type: ignore[arg-type]
            log2n=log2n,
            budget=budget,
            values_are=values_are,  # type: ignore[arg-type]
            tail=tail,  # type: ignore[arg-type]
            wait=not no_wait,
            timeout=timeout,
            progress=not no_progress,
        )
    tail = "" if scan.tail == "auto" else f", tail = {scan.tail}"
    _emit(scan, fmt, f"region scan {scan.id} ({scan.status}{tail}); chosen δ = {_fmt(scan.chosen)}")
