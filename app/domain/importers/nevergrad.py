"""nevergrad benchmark CSV (``python -m nevergrad.benchmark <experiment>`` output) [1]_.

One row per experiment: the optimizer's settings (``optimizer_name``, ``budget``,
``num_workers``, ``seed``, ...), the function's descriptors (for ``ArtificialFunction``:
``name``, ``dimension``, ``block_dimension``, ``num_blocks``, ``useless_variables``,
``rotation``, ``translation_factor``, ``noise_level``, ``hashing``, ``aggregator``, ``split``,
``expo``, ...) and the outcome (``loss``, ``elapsed_budget``, ``elapsed_time``, ``error``).

Mapping to absrank ids, only where unambiguous:

- an explicit ``function_id`` column is used as written (and must be hosted);
- else an ``ArtificialFunction`` row maps to ``classic/{name}/d{dimension}`` when its name is
  one whose nevergrad definition is absrank's (:data:`CLASSIC_NAMES`: sphere, rastrigin,
  rosenbrock, griewank; nevergrad's ``ellipsoid`` weights start at ``10^(-6/(d-1))`` and
  differ) and it is untransformed: no rotation, ``translation_factor`` 0, no noise, no hashing,
  no useless variables, one block, ``expo`` 1, no ``zero_pen``, not ``discrete`` (``bounded``
  only bounds the search space). nevergrad searches all of R^d (or its bounded box), absrank's
  box is the function's documented domain; a loss is a value of the same ``f`` either way.

Anything else is refused naming the file and line. ``loss`` is the final value (nevergrad's
noise-free loss of the recommendation; ``values_are`` defaults to ``"f"``, the user may declare
``"error"``), the budget is ``elapsed_budget`` when present, else ``budget``. No trajectory.
One set holds one algorithm in one setting: rows whose ``optimizer_name``, ``num_workers`` or
``batch_mode`` differ are refused (filter the CSV first), naming the column and the row; two
rows with the same function, ``seed`` and ``budget`` are duplicate runs and refused too.

References
----------
.. [1] nevergrad, ``nevergrad/benchmark`` (docs/benchmarking.rst) and
   ``nevergrad/functions/functionlib.py`` (``ArtificialFunction``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence

from app.domain.functions import format_id
from app.domain.importers import UploadedFile, UploadLimits
from app.domain.importers.common import (
    RowBudget,
    check_run,
    f_star,
    number_runs,
    parse_float,
    parse_int,
)
from app.domain.results import ImportedResults, MalformedFile, RunResult, ValuesAre

__all__ = ["ALGORITHM_COLUMNS", "CLASSIC_NAMES", "read"]

CLASSIC_NAMES = ("sphere", "rastrigin", "rosenbrock", "griewank")
"""nevergrad ``ArtificialFunction`` names whose definitions are absrank's ``classic`` ones."""

_UNTRANSFORMED: dict[str, bool | float] = {
    "rotation": False,
    "hashing": False,
    "split": False,
    "zero_pen": False,
    "discrete": False,
    "translation_factor": 0.0,
    "noise_level": 0.0,
    "useless_variables": 0.0,
    "num_blocks": 1.0,
    "expo": 1.0,
}
"""Descriptor -> its value when the function is not transformed (an empty cell counts as it)."""


def _plain(text: str, plain: bool | float) -> bool:
    value = text.strip().lower()
    if not value:
        return True
    if isinstance(plain, bool):
        return value in (("false", "0") if not plain else ("true", "1"))
    try:
        return float(value) == plain
    except ValueError:
        return False


def read(
    files: Sequence[UploadedFile], *, limits: UploadLimits, values_are: ValuesAre | None = None
) -> ImportedResults:
    """Read nevergrad benchmark CSV files into absrank runs.

    Parameters
    ----------
    files : sequence of UploadedFile
        ``.csv`` files (other files are ignored).
    limits : UploadLimits
        ``max_rows`` bounds the rows read.
    values_are : {"f", "error"}, optional
        What ``loss`` is; ``"f"`` when not given.

    Raises
    ------
    MalformedFile
        Naming the file and line of the first fault.
    UploadTooLarge
        More than ``limits.max_rows`` rows.
    """
    csvs = [f for f in files if f.path.lower().endswith(".csv")] or list(files[:1])
    budget = RowBudget(limits.max_rows)
    runs: list[RunResult] = []
    settings: dict[str, tuple[str, str, int]] = {}
    seeds: dict[tuple[str, str, str], tuple[str, int]] = {}
    for upload in csvs:
        for line, row in _rows(upload):
            budget.take(1, file=upload.path)
            _same_algorithm(row, settings, upload.path, line)
            run = _run(row, upload.path, line)
            check_run(run, values_are or "f", file=upload.path, line=line)
            seed = (row.get("seed") or "").strip()
            if seed:
                key = (run.function_id, seed, (row.get("budget") or "").strip())
                if key in seeds:
                    where = seeds[key]
                    raise MalformedFile(
                        f"the same run as {where[0]}, line {where[1]} ({run.function_id}, seed "
                        f"{seed}, same budget): duplicate runs",
                        file=upload.path,
                        line=line,
                    )
                seeds[key] = (upload.path, line)
            runs.append(run)
    if not runs:
        raise MalformedFile("holds no rows", file=csvs[0].path if csvs else "the upload")
    return ImportedResults(
        format="nevergrad",
        values_are=values_are or "f",
        runs=number_runs(runs),
        algorithm=settings.get("optimizer_name", ("",))[0] or None,
    )


ALGORITHM_COLUMNS = ("optimizer_name", "num_workers", "batch_mode")
"""Columns that define the algorithm: constant within one result set."""


def _same_algorithm(
    row: dict[str, str], settings: dict[str, tuple[str, str, int]], path: str, line: int
) -> None:
    for column in ALGORITHM_COLUMNS:
        if column not in row:
            continue
        value = row[column].strip()
        first = settings.setdefault(column, (value, path, line))
        if value != first[0]:
            raise MalformedFile(
                f"column {column} holds {value!r} here and {first[0]!r} at {first[1]}, line "
                f"{first[2]}: one result set holds one algorithm in one setting; upload each "
                f"separately",
                file=path,
                line=line,
            )


def _rows(upload: UploadedFile) -> Iterator[tuple[int, dict[str, str]]]:
    try:
        text = upload.data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = upload.data[: exc.start].count(b"\n") + 1
        raise MalformedFile("is not UTF-8 text", file=upload.path, line=line) from exc
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise MalformedFile("is empty", file=upload.path) from None
    except csv.Error as exc:
        raise MalformedFile(f"is not CSV: {exc}", file=upload.path, line=1) from exc
    header = [h.strip() for h in header]
    if "loss" not in header or not ({"function_id", "name"} & set(header)):
        raise MalformedFile(
            "header needs 'loss' and 'function_id' or 'name' (nevergrad benchmark columns), "
            f"got {', '.join(header)[:120]}",
            file=upload.path,
            line=1,
        )
    try:
        for values in reader:
            line = reader.line_num
            if not any(v.strip() for v in values):
                continue
            if len(values) != len(header):
                raise MalformedFile(
                    f"{len(values)} fields where the header has {len(header)}: truncated row",
                    file=upload.path,
                    line=line,
                )
            yield line, dict(zip(header, values, strict=True))
    except csv.Error as exc:
        raise MalformedFile(f"is not CSV: {exc}", file=upload.path, line=reader.line_num) from exc


def _run(row: dict[str, str], path: str, line: int) -> RunResult:
    if (row.get("error") or "").strip():
        raise MalformedFile(
            f"the experiment failed (error column: {row['error'].strip()[:60]!r})",
            file=path,
            line=line,
        )
    function_id = _function_id(row, path, line)
    f_star(function_id, file=path, line=line)
    value = parse_float(row["loss"].strip(), file=path, line=line, what="loss")
    spent = (row.get("elapsed_budget") or row.get("budget") or "").strip()
    if not spent:
        raise MalformedFile("neither elapsed_budget nor budget is given", file=path, line=line)
    evals = parse_int(spent, file=path, line=line, what="budget")
    return RunResult(function_id=function_id, run=0, value=value, budget=evals)


def _function_id(row: dict[str, str], path: str, line: int) -> str:
    explicit = (row.get("function_id") or "").strip()
    if explicit:
        return explicit
    name = (row.get("name") or "").strip()
    function_class = (row.get("function_class") or "ArtificialFunction").strip()
    if function_class != "ArtificialFunction" or name not in CLASSIC_NAMES:
        raise MalformedFile(
            f"function {name!r} ({function_class}) has no absrank counterpart; mapped are "
            f"untransformed ArtificialFunction {', '.join(CLASSIC_NAMES)}, or add a "
            f"function_id column",
            file=path,
            line=line,
        )
    for column, plain in _UNTRANSFORMED.items():
        value = (row.get(column) or "").strip().lower()
        if not _plain(value, plain):
            raise MalformedFile(
                f"{name} with {column}={value!r} is a transformed function absrank does not "
                f"host (only untransformed ones map to classic/{name})",
                file=path,
                line=line,
            )
    dim_text = (row.get("dimension") or row.get("block_dimension") or "").strip()
    if not dim_text:
        raise MalformedFile("no dimension column", file=path, line=line)
    dim = parse_int(dim_text, file=path, line=line, what="dimension")
    return format_id("classic", name, None, dim)
