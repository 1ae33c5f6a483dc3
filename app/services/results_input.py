"""Results tables in long format (``algorithm,problem,run,value``): parse, check, reduce.

JSON rows and CSV text become the same normalized rows, so a comparison's id does not depend
on how its results were sent.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.config import Settings
from app.domain import csvrows
from app.errors import InvalidInput

COLUMNS = ("algorithm", "problem", "run", "value")
MISSING_TOKENS = {"", "na", "nan", "null", "none"}
MAX_NAME = 200

Row = tuple[str, str, int, float | None]


def _csv_value(text: str, where: str) -> float | None:
    token = text.strip()
    if token.lower() in MISSING_TOKENS:
        return None
    if "_" in token:  # float() would read "1_000" as 1000
        raise InvalidInput(f"{where}: value {token[:40]!r} is not a number", field="csv")
    try:
        value = float(token)
    except ValueError:
        raise InvalidInput(f"{where}: value {token[:40]!r} is not a number", field="csv") from None
    if not math.isfinite(value):
        return None  # ±inf: a failed run, handled by the missing policy like NaN
    return value


def csv_run(text: str, where: str) -> int:
    run = csvrows.parse_count(text)
    if run is None:
        raise InvalidInput(
            f"{where}: run {text.strip()[:40]!r} is not an integer in [0, 10^9]", field="csv"
        )
    return run


def csv_name(text: str, where: str, column: str) -> str:
    name = text.strip()
    if not name or len(name) > MAX_NAME:
        raise InvalidInput(f"{where}: {column} must have 1 to {MAX_NAME} characters", field="csv")
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in name):
        raise InvalidInput(f"{where}: {column} contains a control character", field="csv")
    return name


def read_csv(
    text: str,
    columns: tuple[str, ...],
    parse_row: Callable[[list[str], str], tuple[Any, ...]],
    *,
    max_rows: int,
) -> list[tuple[Any, ...]]:
    """Rows of a long-format CSV whose header names ``columns`` (any order; a BOM is ignored).

    ``parse_row(fields, where)`` gets a row's fields in ``columns`` order and the line's name
    for messages (``"csv line 7"``), and returns the parsed row.

    Raises
    ------
    app.errors.InvalidInput
        Missing/unknown/duplicate header columns, a row with the wrong number of fields, what
        ``parse_row`` refuses, more than ``max_rows`` data rows, no row; the message names the
        line. Field ``csv``.
    """

    def fail(message: str, line: int | None) -> InvalidInput:
        where = "csv" if line is None else f"csv line {line}:"
        return InvalidInput(f"{where} {message}", field="csv")

    return [
        parse_row(fields, f"csv line {line}")
        for line, fields in csvrows.read_rows(text, columns, max_rows=max_rows, fail=fail)
    ]


def parse_csv(text: str, *, max_rows: int) -> list[Row]:
    """Rows of a CSV results table with header ``algorithm,problem,run,value`` (any order).

    Raises
    ------
    app.errors.InvalidInput
        As :func:`read_csv`, and a bad run number or value. Field ``csv``.
    """

    def row(fields: list[str], where: str) -> Row:
        a, p, r, v = fields
        return (
            csv_name(a, where, "algorithm"),
            csv_name(p, where, "problem"),
            csv_run(r, where),
            _csv_value(v, where),
        )

    return read_csv(text, COLUMNS, row, max_rows=max_rows)


WIDE_PLACEHOLDER = "{column}"


def _header_cells(text: str) -> list[str]:
    """The first non-blank, non-``#`` line's cells, lower case (empty when there is none)."""
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            return [c.strip().lower() for c in next(csv.reader([line.lstrip("\ufeff")]))]
    return []


def is_wide(text: str) -> bool:
    """Whether a CSV is a wide table (``algorithm`` then one column per problem), not long."""
    header = _header_cells(text)
    return bool(header) and header[0] == "algorithm" and "problem" not in header


def parse_wide_csv(text: str, *, template: str, max_rows: int, field: str = "csv") -> list[Row]:
    """Rows of a wide table: header ``algorithm,<p1>,<p2>,…``, one row per algorithm, one
    value per cell (run 0), as published tables of mean errors print them.

    ``template`` names each column's problem: ``{column}`` is replaced by the column's header
    (``cec2005/{column}/d10`` makes ``f15`` the problem ``cec2005/f15/d10``). ``#`` lines are
    comments. At most ``max_rows`` cells.

    Raises
    ------
    app.errors.InvalidInput
        No header, a header without problem columns or with a repeated one, a row with the
        wrong number of fields, a bad name or value, more cells than ``max_rows``; the message
        names the line. Field ``field``.
    """
    if WIDE_PLACEHOLDER not in template:
        raise InvalidInput(
            f"the problem template must contain {WIDE_PLACEHOLDER} (got {template[:60]!r})",
            field="problem_template",
        )
    lines = [
        "" if line.lstrip().startswith("#") else line for line in text.lstrip("\ufeff").splitlines()
    ]
    reader = csv.reader(lines)
    rows: list[Row] = []
    problems: list[str] | None = None
    try:
        for fields in reader:
            where = f"{field} line {reader.line_num}"
            if not fields or all(not f.strip() for f in fields):
                continue
            if problems is None:
                columns = [f.strip() for f in fields[1:]]
                if fields[0].strip().lower() != "algorithm" or not columns:
                    raise InvalidInput(
                        f"{where}: a wide table's header is algorithm, then one column per problem",
                        field=field,
                    )
                problems = [
                    csv_name(template.replace(WIDE_PLACEHOLDER, c), where, "problem")
                    for c in columns
                ]
                if len(set(problems)) != len(problems):
                    raise InvalidInput(f"{where}: a problem column is repeated", field=field)
                continue
            if len(fields) != len(problems) + 1:
                raise InvalidInput(
                    f"{where}: expected {len(problems) + 1} fields, got {len(fields)}",
                    field=field,
                )
            if len(rows) + len(problems) > max_rows:
                raise InvalidInput(f"{where}: more than {max_rows} cells", field=field)
            algorithm = csv_name(fields[0], where, "algorithm")
            rows += [
                (algorithm, p, 0, _csv_value(v, where))
                for p, v in zip(problems, fields[1:], strict=True)
            ]
    except csv.Error as exc:
        raise InvalidInput(f"{field} line {reader.line_num}: {exc}", field=field) from None
    if not rows:
        raise InvalidInput(
            f"{field}: a wide table needs a header and a row per algorithm", field=field
        )
    return rows


@dataclass(frozen=True)
class ResultsTable:
    """Runs grouped by (problem, algorithm).

    Attributes
    ----------
    algorithms, problems : tuple of str
        In order of first appearance in the rows.
    runs : dict
        ``{(problem_index, algorithm_index): ndarray of run values}``, NaN for a missing run,
        sorted by run number.
    sources : dict
        ``{(problem_index, algorithm_index): first row position}`` (for error messages).
    """

    algorithms: tuple[str, ...]
    problems: tuple[str, ...]
    runs: dict[tuple[int, int], np.ndarray]
    sources: dict[tuple[int, int], int]


def _index(names: dict[str, int], name: str) -> int:
    return names.setdefault(name, len(names))


def group_rows(rows: Iterable[Row], settings: Settings, *, field: str) -> ResultsTable:
    """Group rows by cell, refusing duplicate runs and sizes over the settings' limits.

    Raises
    ------
    app.errors.InvalidInput
        A duplicate (algorithm, problem, run), fewer than 2 algorithms or problems, more
        algorithms, problems or cells than the settings allow.
    """
    algs: dict[str, int] = {}
    probs: dict[str, int] = {}
    cells: dict[tuple[int, int], dict[int, float]] = {}
    sources: dict[tuple[int, int], int] = {}
    for pos, (alg, prob, run, value) in enumerate(rows):
        key = (_index(probs, prob), _index(algs, alg))
        runs = cells.setdefault(key, {})
        sources.setdefault(key, pos)
        if run in runs:
            raise InvalidInput(
                f"duplicate run {run} of algorithm {alg!r} on problem {prob!r} "
                + (f"(row {pos})" if field == "results" else f"(data row {pos + 1} of the csv)"),
                field=f"{field}.{pos}.run" if field == "results" else field,
            )
        runs[run] = math.nan if value is None else value
    _check_sizes(len(algs), len(probs), settings, field)
    grouped = {
        key: np.array([runs[r] for r in sorted(runs)], dtype=np.float64)
        for key, runs in cells.items()
    }
    return ResultsTable(tuple(algs), tuple(probs), grouped, sources)


def _check_sizes(k: int, n: int, settings: Settings, field: str) -> None:
    if k < 2:
        raise InvalidInput(f"a comparison needs at least 2 algorithms, got {k}", field=field)
    if n < 2:
        raise InvalidInput(f"a comparison needs at least 2 problems, got {n}", field=field)
    if k > settings.max_algorithms:
        raise InvalidInput(f"at most {settings.max_algorithms} algorithms", field=field)
    if n > settings.max_problems:
        raise InvalidInput(f"at most {settings.max_problems} problems", field=field)
    if n * k > settings.max_matrix_cells:
        raise InvalidInput(
            f"{n} problems × {k} algorithms exceeds max_matrix_cells = {settings.max_matrix_cells}",
            field=field,
        )


REDUCTIONS: dict[str, Any] = {"mean": np.mean, "median": np.median, "best": np.min}


@dataclass(frozen=True)
class Reduced:
    """A problems × algorithms matrix reduced from runs.

    Attributes
    ----------
    matrix : ndarray, shape (n_problems, k_algorithms)
        NaN where the cell is missing (no run, or any missing run).
    n_runs : ndarray of int, shape (n_problems, k_algorithms)
        Present runs per cell (0 for a missing cell).
    missing_runs : int
        Runs sent as missing (null, NaN, ±inf).
    """

    matrix: np.ndarray
    n_runs: np.ndarray
    missing_runs: int


def reduce_runs(table: ResultsTable, reduction: str, *, policy: str, field: str) -> Reduced:
    """Reduce each cell's runs by ``reduction``; a cell with a missing run is a missing cell.

    Raises
    ------
    app.errors.InvalidInput
        Under ``policy="reject"``: a missing run or an empty cell, naming it.
    """
    n, k = len(table.problems), len(table.algorithms)
    matrix = np.full((n, k), np.nan)
    n_runs = np.zeros((n, k), dtype=np.int64)
    missing_runs = 0
    fn = REDUCTIONS[reduction]
    for (i, j), values in table.runs.items():
        bad = int(np.isnan(values).sum())
        missing_runs += bad
        if bad:
            if policy == "reject":
                raise InvalidInput(
                    f"algorithm {table.algorithms[j]!r} on problem {table.problems[i]!r} has "
                    f"{bad} missing run value(s); declare a missing policy to use them",
                    field=_row_field(field, table.sources[(i, j)]),
                )
            continue
        matrix[i, j] = fn(values)
        n_runs[i, j] = values.size
    if policy == "reject":
        empty = np.argwhere(n_runs == 0)
        if empty.size:
            i, j = (int(v) for v in empty[0])
            raise InvalidInput(
                f"algorithm {table.algorithms[j]!r} has no result on problem "
                f"{table.problems[i]!r} ({empty.shape[0]} empty cell(s)); declare a missing "
                "policy (drop-problem, worst-rank, par-k)",
                field=field,
            )
    return Reduced(matrix, n_runs, missing_runs)


def _row_field(field: str, pos: int) -> str:
    return f"{field}.{pos}.value" if field == "results" else field
