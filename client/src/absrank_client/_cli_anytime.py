"""``absrank-client runtime-distributions``: ERT, runtime ECDFs and the anytime absolute rank of
trajectories in a long CSV or archived result sets (registered by :mod:`absrank_client.cli`)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Annotated, Any

import typer

from absrank_client._cli_base import (
    Format,
    FormatOption,
    _client,
    _emit,
    _handled,
    _note,
    figure_format,
)

__all__ = ["read_trajectories", "runtime_distributions"]

COLUMNS = ("algorithm", "function_id", "run", "evaluations", "value")


def read_trajectories(path: Path) -> dict[str, list[dict[str, Any]]]:
    """A long CSV ``algorithm,function_id,run,evaluations,value`` (one record per line) as the
    ``algorithms`` of :meth:`Client.runtime_distributions` (runs in order of first line)."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        missing = [c for c in COLUMNS if c not in (reader.fieldnames or ())]
        if missing:
            raise typer.BadParameter(f"{path}: missing column(s) {', '.join(missing)}")
        runs: dict[str, dict[tuple[str, str], dict[str, Any]]] = {}
        for line, row in enumerate(reader, start=2):
            try:
                evaluations, value = int(row["evaluations"]), float(row["value"])
            except ValueError as exc:
                raise typer.BadParameter(f"{path}, line {line}: {exc}") from None
            key = (row["function_id"], row["run"])
            run = runs.setdefault(row["algorithm"], {}).setdefault(
                key, {"function_id": row["function_id"], "evaluations": [], "values": []}
            )
            run["evaluations"].append(evaluations)
            run["values"].append(value)
    return {name: list(by_run.values()) for name, by_run in runs.items()}


@_handled
def runtime_distributions(
    trajectories: Annotated[
        Path | None,
        typer.Argument(help="long CSV: algorithm,function_id,run,evaluations,value"),
    ] = None,
    result_set: Annotated[
        list[str] | None, typer.Option(help="an archived result set id; repeat it")
    ] = None,
    target: Annotated[
        list[float] | None, typer.Option(help="a precision f - f*; repeat it (default COCO's 51)")
    ] = None,
    budget: Annotated[list[int] | None, typer.Option(help="a budget c; repeat it")] = None,
    values_are: Annotated[str, typer.Option(help="error or f")] = "error",
    records: Annotated[str, typer.Option(help="best-so-far or observed")] = "best-so-far",
    pool_instances: Annotated[bool, typer.Option(help="pool instances as COCO does")] = False,
    simulated_restarts: Annotated[int | None, typer.Option(help="samples per target")] = None,
    seed: Annotated[int, typer.Option(help="seed of the simulated restarts")] = 0,
    plot: Annotated[Path | None, typer.Option(help="also draw a figure: .svg, .pdf, .png")] = None,
    figure: Annotated[str, typer.Option(help="ecdf, fixed-budget or anytime-rank")] = "ecdf",
    fmt: FormatOption = Format.table,
) -> None:
    """ERT per (algorithm, function, target), runtime ECDFs and the anytime absolute rank."""
    if (trajectories is None) == (not result_set):
        raise typer.BadParameter("give a trajectories CSV or --result-set, not both")
    algorithms = None if trajectories is None else read_trajectories(trajectories)
    with _client() as client:
        result = client.runtime_distributions(
            algorithms,
            result_sets=result_set or None,
            targets=target or None,
            budgets=budget or None,
            values_are=values_are,  # type: ignore[arg-type]  # the server checks it
            records=records,  # type: ignore[arg-type]
            pool_instances=pool_instances,
            simulated_restarts=simulated_restarts,
            seed=seed,
        )
        if plot is not None:
            client.runtime_plot(
                result,
                figure=figure,  # type: ignore[arg-type]
                format=figure_format(plot),
                path=plot,
            )
    _emit(result, fmt, "ERT per target")
    if fmt is not Format.json:
        for w in result.warnings:
            _note(f"warning: {w}")
    if plot is not None:
        _note(f"{figure} figure written to {plot}")
