"""The archive's long CSV: one row per run, or one row per trajectory point.

Layout (columns in any order, names case-insensitive, ``#`` lines are comments)::

    function_id,run,value,budget
    bbob/f1/i1/d10,0,79.48,1000

With an optional ``evaluations`` column, a row whose ``evaluations`` cell is filled is one
trajectory point of its run: ``value`` is the best value found within ``evaluations``
evaluations. The run's final value is its last point's value (largest ``evaluations``), and
``budget`` (the evaluations the run used) is repeated on each of its rows. A row with an empty
``evaluations`` cell is a run without a trajectory. A run is either one such row or only points::

    function_id,run,evaluations,value,budget
    bbob/f1/i1/d10,0,1,412.5,1000
    bbob/f1/i1/d10,0,20,160.2,1000
    bbob/f1/i1/d10,0,1000,79.48,1000
    bbob/f1/i1/d10,1,,80.01,1000

A file whose last line has no line end gets a note (``csv-no-final-newline``): a row cut
short cannot be told from a complete one in general (``79.4`` for ``79.48``), so the last
row may be wrong if the file was cut; it is read, not refused.

``value`` is ``f(x)`` or the error ``f(x) − f*``: the file does not say, the caller does
(``values_are``). ``GET /v1/result-sets/{id}.csv`` writes this layout (:func:`write`), and
reading it back gives the same runs.
"""

from __future__ import annotations

import io
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.domain import csvrows
from app.domain.archive import run_problem
from app.domain.errors import DomainError, InvalidInput, UploadTooLarge
from app.domain.functions import BenchmarkFunction, get_function
from app.domain.importers import UploadedFile, UploadLimits
from app.domain.results import (
    ImportedResults,
    ImportNote,
    MalformedFile,
    RunResult,
    Trajectory,
    ValuesAre,
)

__all__ = ["COLUMNS", "OPTIONAL", "read", "write"]

COLUMNS = ("function_id", "run", "value", "budget")
OPTIONAL = ("evaluations",)
MAX_BUDGET = 10**15
MAX_RUN = 10**9


@dataclass
class _Run:
    """A run being read: its rows' line numbers, budget and points."""

    line: int
    budget: int
    value: float | None = None  # a row without evaluations
    points: list[tuple[int, float, int]] = field(default_factory=list)  # (evals, best, line)


def read(
    files: Sequence[UploadedFile], *, limits: UploadLimits, values_are: ValuesAre | None
) -> ImportedResults:
    """Read long CSV files into runs (all files form one set).

    Parameters
    ----------
    files : sequence of UploadedFile
        UTF-8 CSV files in the layout of this module.
    limits : UploadLimits
        ``max_rows`` bounds the rows of all files together (reading stops at the first row
        beyond it).
    values_are : {"f", "error"}
        What the values are; checked against each function's ``f*``. Required: a long CSV
        does not say (``None`` is refused with ``field="values_are"``).

    Returns
    -------
    ImportedResults
        ``format="csv"``, runs ordered by ``(function_id, run)``.

    Raises
    ------
    MalformedFile
        Naming the file and the 1-based line: not UTF-8, a bad header, a row with the wrong
        number of fields, an unknown function id, a run number outside ``[0, 10^9]``, a
        budget outside ``[1, 10^15]``, evaluations outside ``[1, budget]``, a non-finite
        value, an error below 0 or an ``f`` below ``f*``, a duplicate run or point, a run with
        both a final row and points or different budgets on its rows, best-so-far values that
        increase, a file without rows.
    UploadTooLarge
        More than ``limits.max_rows`` rows (HTTP 413; nothing after that row is read).
    InvalidInput
        ``values_are`` not given (``field="values_are"``).
    """
    if values_are is None:
        raise InvalidInput(
            "a long CSV does not say whether its values are f or f - f*: send values_are",
            field="values_are",
        )
    runs: dict[tuple[str, int], _Run] = {}
    where: dict[tuple[str, int], str] = {}
    budget_left = limits.max_rows
    for upload in files:
        budget_left -= _read_file(upload, runs, where, (budget_left, limits.max_rows), values_are)
    out = []
    for key in sorted(runs):
        out.append(_finish(key, runs[key], where[key], values_are))
    notes = tuple(
        ImportNote(
            "csv-no-final-newline",
            f"{upload.path}: the last line has no line end; if the file was cut, its last row "
            "is wrong",
            upload.path,
        )
        for upload in files
        if upload.data.strip() and not upload.data.endswith((b"\n", b"\r"))
    )
    return ImportedResults(format="csv", values_are=values_are, runs=tuple(out), notes=notes)


def _read_file(
    upload: UploadedFile,
    runs: dict[tuple[str, int], _Run],
    where: dict[tuple[str, int], str],
    rows: tuple[int, int],
    values_are: ValuesAre,
) -> int:
    """Add one file's rows to ``runs``; return how many rows it had.

    ``rows`` is (rows this file may still have, the limit of all files together).
    """
    max_rows, limit = rows
    name = upload.path
    try:
        text = upload.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = upload.data[: exc.start].count(b"\n") + 1
        raise MalformedFile(f"not UTF-8 (byte {exc.start})", file=name, line=line) from None

    def fail(message: str, line: int | None) -> MalformedFile:
        return MalformedFile(message, file=name, line=line)

    def overflow(_: str, line: int | None) -> UploadTooLarge:
        return UploadTooLarge(
            f"{name}, line {line}: more than {limit} rows (runs plus trajectory points of all "
            "files)",
            limit="max_rows",
            field="file",
        )

    functions: dict[str, BenchmarkFunction] = {}
    n = 0
    for line, fields in csvrows.read_rows(
        text,
        COLUMNS,
        optional=OPTIONAL,
        max_rows=max_rows,
        fail=fail,
        comments=True,
        overflow=overflow,
    ):
        n += 1
        fid, run_text, value_text, budget_text = (f.strip() for f in fields[:4])
        fn = _function(fid, functions, name, line)
        run = _count(run_text, "run", 0, MAX_RUN, name, line)
        budget = _count(budget_text, "budget", 1, MAX_BUDGET, name, line)
        value = _value(value_text, name, line)
        evals_text = fields[4].strip() if len(fields) > 4 else ""
        key = (fn.id, run)
        entry = runs.get(key)
        if entry is None:
            entry = runs[key] = _Run(line=line, budget=budget)
            where[key] = name
        elif entry.budget != budget:
            raise MalformedFile(
                f"run {run} of {fid} has budget {budget} here but {entry.budget} on line "
                f"{entry.line} of {where[key]}",
                file=name,
                line=line,
            )
        if not evals_text:
            if entry.value is not None or entry.points:
                raise MalformedFile(
                    f"duplicate run {run} of {fid} (first on line {entry.line} of {where[key]})",
                    file=name,
                    line=line,
                )
            problem = run_problem(RunResult(fn.id, run, value, budget), fn, values_are)
            if problem is not None:
                raise MalformedFile(problem[1], file=name, line=line)
            entry.value = value
            continue
        if entry.value is not None:
            raise MalformedFile(
                f"run {run} of {fid} has a final row without evaluations (line {entry.line} "
                f"of {where[key]}) and trajectory points",
                file=name,
                line=line,
            )
        evals = _count(evals_text, "evaluations", 1, budget, name, line)
        entry.points.append((evals, value, line))
    return n


def _function(
    fid: str, cache: dict[str, BenchmarkFunction], name: str, line: int
) -> BenchmarkFunction:
    fn = cache.get(fid)
    if fn is None:
        try:
            fn = cache[fid] = get_function(fid)
        except DomainError as exc:
            raise MalformedFile(f"function_id: {exc}", file=name, line=line) from None
    return fn


def _count(text: str, column: str, low: int, high: int, name: str, line: int) -> int:
    value = csvrows.parse_count(text, low=low, high=high)
    if value is None:
        raise MalformedFile(
            f"{column} {text[:40]!r} is not an integer in [{low}, {high}]", file=name, line=line
        )
    return value


def _value(text: str, name: str, line: int) -> float:
    try:
        value = float(text) if "_" not in text else math.nan  # float() reads "1_0" as 10
    except ValueError:
        raise MalformedFile(f"value {text[:40]!r} is not a number", file=name, line=line) from None
    if not math.isfinite(value):
        raise MalformedFile(f"value {text[:40]!r} is not a finite number", file=name, line=line)
    return value


def _finish(key: tuple[str, int], entry: _Run, name: str, values_are: ValuesAre) -> RunResult:
    """The run of ``entry``: its final row, or its points as a trajectory."""
    fid, run = key
    if entry.value is not None:
        return RunResult(fid, run, entry.value, entry.budget)
    points = sorted(entry.points, key=lambda p: (p[0], p[2]))
    for (e0, b0, _), (e1, b1, line) in itertools.pairwise(points):
        if e1 == e0:
            raise MalformedFile(
                f"run {run} of {fid} has two points at {e1} evaluations", file=name, line=line
            )
        if b1 > b0:
            raise MalformedFile(
                f"run {run} of {fid}: best-so-far value {b1!r} at {e1} evaluations is above "
                f"{b0!r} at {e0}",
                file=name,
                line=line,
            )
    traj = Trajectory(tuple(p[0] for p in points), tuple(p[1] for p in points))
    result = RunResult(fid, run, traj.best[-1], entry.budget, traj)
    fn = get_function(fid)
    problem = run_problem(result, fn, values_are)
    if problem is not None:
        raise MalformedFile(problem[1], file=name, line=points[-1][2])
    return result


def write(runs: Sequence[RunResult], *, comments: Sequence[str] = ()) -> str:
    """The long CSV of ``runs`` (with an ``evaluations`` column when a run has a trajectory).

    Values are written as ``repr`` (shortest round-trip text), so :func:`read` gives the same
    floats back. ``comments`` become leading ``#`` lines.
    """
    out = io.StringIO()
    for c in comments:
        out.write(f"# {c}\n")
    with_points = any(r.trajectory is not None for r in runs)
    out.write("function_id,run,evaluations,value,budget\n" if with_points else ",".join(COLUMNS))
    if not with_points:
        out.write("\n")
    for r in runs:
        if with_points and r.trajectory is not None:
            for e, b in zip(r.trajectory.evaluations, r.trajectory.best, strict=True):
                out.write(f"{r.function_id},{r.run},{e},{b!r},{r.budget}\n")
        elif with_points:
            out.write(f"{r.function_id},{r.run},,{r.value!r},{r.budget}\n")
        else:
            out.write(f"{r.function_id},{r.run},{r.value!r},{r.budget}\n")
    return out.getvalue()
