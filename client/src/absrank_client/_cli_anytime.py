"""``absrank-client runtime-distributions``: ERT, runtime ECDFs and the anytime absolute rank of
trajectories in a long CSV or archived result sets; ``absrank-client profiles``: performance,
data or accuracy profiles of a (problems × solvers) CSV (both registered by
:mod:`absrank_client.cli`)."""

from __future__ import annotations

import csv
from dataclasses import dataclass
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

__all__ = [
    "ProfileMatrix",
    "profiles",
    "read_profile_matrix",
    "read_trajectories",
    "runtime_distributions",
]

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


@dataclass(frozen=True)
class ProfileMatrix:
    """A profile's matrix read from a wide CSV: one row per problem, one column per solver.

    Attributes
    ----------
    problems : list of str
        The ``problem`` column.
    solvers : list of str
        The other columns' names, in order (``dim`` and ``initial_error`` excluded).
    matrix : list of list of float or None
        Costs (performance, data) or final errors (accuracy); ``None`` = a failure.
    dims : list of int or None
        The ``dim`` column (data profiles).
    initial_errors : list of float or None
        The ``initial_error`` column (accuracy profiles).
    """

    problems: list[str]
    solvers: list[str]
    matrix: list[list[float | None]]
    dims: list[int] | None
    initial_errors: list[float] | None


FAILURES = ("", "na", "nan", "null", "none", "inf", "fail")
"""Cells that mean a failure (case-insensitive): the solver did not solve the problem."""


def _cell(path: Path, line: int, column: str, text: str) -> float | None:
    if text.strip().lower() in FAILURES:
        return None
    try:
        return float(text)
    except ValueError:
        raise typer.BadParameter(f"{path}, line {line}, column {column}: {text!r}") from None


def read_profile_matrix(path: Path) -> ProfileMatrix:
    """A wide CSV ``problem,<solver>,…`` (optional columns ``dim``, ``initial_error``) as the
    arguments of :meth:`Client.profiles`; an empty cell (or ``inf``, ``nan``, ``fail``) is a
    failure."""
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        names = list(reader.fieldnames or ())
        if "problem" not in names:
            raise typer.BadParameter(f"{path}: missing column problem")
        solvers = [n for n in names if n not in ("problem", "dim", "initial_error")]
        if not solvers:
            raise typer.BadParameter(f"{path}: no solver columns besides problem")
        problems, matrix, dims, initial = [], [], [], []
        for line, row in enumerate(reader, start=2):
            problems.append(row["problem"])
            matrix.append([_cell(path, line, s, row[s] or "") for s in solvers])
            if "dim" in names:
                try:
                    dims.append(int(row["dim"]))
                except (TypeError, ValueError):
                    raise typer.BadParameter(f"{path}, line {line}, column dim") from None
            if "initial_error" in names:
                value = _cell(path, line, "initial_error", row["initial_error"] or "")
                if value is None:
                    raise typer.BadParameter(f"{path}, line {line}, column initial_error")
                initial.append(value)
    return ProfileMatrix(
        problems,
        solvers,
        matrix,
        dims if "dim" in names else None,
        initial if "initial_error" in names else None,
    )


@_handled
def profiles(
    matrix: Annotated[
        Path,
        typer.Argument(
            help="wide CSV: problem,<solver>,... (costs, or final errors for accuracy; empty = "
            "failure), plus dim (data) or initial_error (accuracy)"
        ),
    ],
    kind: Annotated[str, typer.Option(help="performance, data or accuracy")] = "performance",
    max_digits: Annotated[
        float | None, typer.Option(help="accuracy: cap on the digits gained (default 16)")
    ] = None,
    plot: Annotated[Path | None, typer.Option(help="also draw a figure: .svg, .pdf, .png")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Performance, data or accuracy profiles: every breakpoint of each solver's step."""
    read = read_profile_matrix(matrix)
    args: dict[str, Any] = {
        "problems": read.problems,
        "dims": read.dims if kind == "data" else None,
        "initial_errors": read.initial_errors if kind == "accuracy" else None,
        "max_digits": max_digits,
    }
    with _client() as client:
        result = client.profiles(kind, read.solvers, read.matrix, **args)  # type: ignore[arg-type]
        if plot is not None:
            client.profile_plot(
                kind,  # type: ignore[arg-type]
                read.solvers,
                read.matrix,
                format=figure_format(plot),
                path=plot,
                **args,
            )
    _emit(result, fmt, f"{result.kind} profile")
    if plot is not None:
        _note(f"{kind} profile written to {plot}")
