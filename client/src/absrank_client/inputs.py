"""Results as input: a pandas DataFrame, a CSV path, or a list of rows, in long format.

Long format is one row per run: ``algorithm, problem, run, value`` (``run`` may be left out:
the runs of each algorithm on each problem are then numbered 0, 1, ... in the order given).
A missing value (``None``, NaN, an empty CSV field, ``NA``) is a missing run.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["ResultsInput", "long_rows", "matrix_payload", "results_payload", "runs_by_algorithm"]

ResultsInput = Any
"""A ``pandas.DataFrame``, a path (``str`` or ``os.PathLike``) to a CSV file, or an iterable of
rows (mappings with keys ``algorithm, problem, run, value``, or tuples in that order)."""

LONG_COLUMNS = ("algorithm", "problem", "run", "value")
_MISSING = {"", "na", "nan", "null", "none"}


def _is_frame(obj: object) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "to_dict")


def _is_path(obj: object) -> bool:
    return isinstance(obj, str | os.PathLike)


def _value(x: Any) -> float | None:
    if x is None:
        return None
    if isinstance(x, str):
        if x.strip().lower() in _MISSING:
            return None
        x = float(x)
    x = float(x)
    return None if math.isnan(x) or math.isinf(x) else x


def _frame_records(frame: Any) -> list[dict[str, Any]]:
    columns = [str(c) for c in frame.columns]
    missing = [c for c in ("algorithm", "problem", "value") if c not in columns]
    if missing:
        raise ValueError(
            f"the DataFrame needs long-format columns {', '.join(LONG_COLUMNS)} (run optional); "
            f"missing: {', '.join(missing)} (has: {', '.join(columns)})"
        )
    return list(frame.to_dict(orient="records"))


def _records(results: ResultsInput) -> Sequence[Mapping[str, Any]]:
    if _is_frame(results):
        return _frame_records(results)
    if _is_path(results):
        return read_csv_rows(Path(results))
    if isinstance(results, Mapping) or not isinstance(results, Iterable):
        raise TypeError(
            "results must be a pandas DataFrame, a CSV path or a list of rows "
            f"(algorithm, problem, run, value); got {type(results).__name__}"
        )
    out: list[Mapping[str, Any]] = []
    for n, row in enumerate(results):
        if isinstance(row, Mapping):
            out.append(row)
        elif isinstance(row, Sequence) and not isinstance(row, str) and len(row) in (3, 4):
            keys = LONG_COLUMNS if len(row) == 4 else ("algorithm", "problem", "value")
            out.append(dict(zip(keys, row, strict=True)))
        else:
            raise ValueError(
                f"row {n}: expected a mapping or a tuple (algorithm, problem, run, value), "
                f"got {row!r}"
            )
    return out


def read_text(path: Path) -> str:
    """A UTF-8 text file's text; a ``ValueError`` naming the file and byte when it is not."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"{path}: not UTF-8 (byte {exc.start}); save the file as UTF-8"
        ) from None


def read_csv_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a long-format CSV file (header ``algorithm,problem,run,value``)."""
    text = read_text(path)
    reader = csv.DictReader(io.StringIO(text))
    header = [h.strip() for h in reader.fieldnames or ()]
    missing = [c for c in ("algorithm", "problem", "value") if c not in header]
    if missing:
        raise ValueError(
            f"{path}: the CSV needs the header {','.join(LONG_COLUMNS)} (run optional); "
            f"missing: {', '.join(missing)}"
        )
    return [{k.strip(): v for k, v in row.items() if k is not None} for row in reader]


def long_rows(results: ResultsInput) -> list[dict[str, Any]]:
    """Normalized long-format rows ``{algorithm, problem, run, value}`` (value None = missing)."""
    rows = []
    counters: dict[tuple[str, str], int] = {}
    for n, rec in enumerate(_records(results)):
        try:
            algorithm, problem = str(rec["algorithm"]), str(rec["problem"])
            value = _value(rec.get("value"))
        except (KeyError, ValueError) as exc:
            raise ValueError(f"row {n}: {exc}") from None
        run = rec.get("run")
        if run is None or (isinstance(run, str) and not run.strip()):
            run = counters.get((algorithm, problem), 0)
        try:
            run = int(run)
        except (TypeError, ValueError):
            raise ValueError(f"row {n}: run must be an integer, got {run!r}") from None
        counters[(algorithm, problem)] = run + 1
        rows.append({"algorithm": algorithm, "problem": problem, "run": run, "value": value})
    if not rows:
        raise ValueError("results hold no rows")
    return rows


def results_payload(results: ResultsInput) -> dict[str, Any]:
    """The ``results``/``csv`` part of a ``POST /v1/comparisons`` body.

    A CSV path is sent as the file's text (``csv``), so the server's CSV rules apply as they
    would to ``curl --data-binary @file.csv``; other inputs are sent as JSON rows.
    """
    if _is_path(results):
        path = Path(results)
        return {"csv": read_text(path)}
    return {"results": long_rows(results)}


def runs_by_algorithm(
    results: ResultsInput, function_id: str | None = None
) -> tuple[str, dict[str, list[float]]]:
    """``(problem, {algorithm: [values by run]})`` of long rows on one problem (for ranks)."""
    rows = long_rows(results)
    problems = sorted({r["problem"] for r in rows})
    if function_id is not None:
        rows = [r for r in rows if r["problem"] == function_id]
        if not rows:
            raise ValueError(f"no rows for {function_id!r} (problems: {', '.join(problems)})")
    elif len(problems) > 1:
        raise ValueError(
            f"the rows hold {len(problems)} problems ({', '.join(problems[:5])}...): name the "
            "function_id to rank, or compare them with compare()"
        )
    out: dict[str, list[tuple[int, float]]] = {}
    for r in rows:
        if r["value"] is None:
            raise ValueError(
                f"{r['algorithm']} run {r['run']} on {r['problem']} has no value: absolute "
                "ranks need every run"
            )
        out.setdefault(r["algorithm"], []).append((r["run"], r["value"]))
    problem = function_id or problems[0]
    return problem, {a: [v for _, v in sorted(runs)] for a, runs in out.items()}


def matrix_payload(
    values: Any, algorithms: Sequence[str] | None, problems: Sequence[str] | None
) -> dict[str, Any]:
    """``values``/``algorithms``/``problems`` of a matrix test.

    ``values`` is a list of rows (one per problem) or a DataFrame whose index names the
    problems and whose columns name the algorithms; NaN and None are missing cells.
    """
    if _is_frame(values):
        algorithms = algorithms or [str(c) for c in values.columns]
        index = [str(i) for i in values.index]
        problems = problems or (None if index == [str(i) for i in range(len(index))] else index)
        rows = values.to_numpy().tolist()
    else:
        rows = [list(r) for r in values]
    out: dict[str, Any] = {"values": [[_value(x) for x in row] for row in rows]}
    if algorithms is not None:
        out["algorithms"] = list(algorithms)
    if problems is not None:
        out["problems"] = list(problems)
    return out
