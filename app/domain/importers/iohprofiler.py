"""IOHprofiler results: the current JSON + ``.dat`` format and the legacy ``.info`` + ``.dat``.

Current format (``ioh.logger.Analyzer``, ioh >= 0.3)::

    IOHprofiler_f1_Sphere.json     function_id, function_name, suite, maximization, algorithm,
                                   scenarios: [{dimension, path, runs: [{instance, evals,
                                   best: {evals, y}}]}]
    data_f1_Sphere/IOHprofiler_f1_DIM5.dat
                                   one block per run, each opening with a header line
                                   ``evaluations raw_y ...``, rows written on improvement

For BBOB problems ``raw_y`` and ``best.y`` are errors ``f - f*`` (measured with ioh 0.4.2 in
``tests/unit/importers/test_iohprofiler.py``: the values logged equal ``f(x) - optimum.y`` of
what the optimizer saw), and ioh's BBOB optimum equals absrank's ``f*`` for the same
``(f, i, d)`` (same test, over functions, instances up to ``MAX_INSTANCE`` and dimensions).
``raw_y`` is printed with 10 decimals; a run's value is the JSON's full-precision ``best.y``
and its budget the JSON's ``evals``; its trajectory is the best-so-far of ``raw_y`` (never
below ``best.y``), ending at the budget.

Legacy format (IOHexperimenter before 0.3)::

    IOHprofiler_f1_DIM5.info       suite = 'BBOB', funcId = 1, funcName = 'Sphere', DIM = 5,
                                   maximization = 'F', algId = '...'
                                   %
                                   data_f1_Sphere/IOHprofiler_f1_DIM5.dat, 1:100|0.5, 2:...
    .dat                           blocks opening with ``"function evaluation" "current f(x)"
                                   "best-so-far f(x)" "current af(x)+b" "best af(x)+b"``

Whether the legacy ``f(x)`` columns are ``f`` or ``f - f*`` is not written down; when the
``best af(x)+b`` column is there it is ``f`` and settles it (``af(x)+b - f(x)`` is either 0
or ``f*``); otherwise the user's ``values_are`` is required.

Mapping: ``(function_id, function_name)`` must be one of ioh's 24 BBOB problems
(:data:`BBOB_NAMES`); ids ``bbob/f{n}/i{i}/d{d}``. The JSON does not record the problem class:
``suite = "BBOB"`` is certain, ``"unknown_suite"`` (a problem made by ``ioh.get_problem``) is
read as BBOB with a note, because ioh's SBOX class uses the same ids and names. Other suites
(PBO, ...), unknown names and maximization problems are refused (absrank ranks minimisation).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeGuard

from app.domain.errors import InvalidInput
from app.domain.functions import format_id
from app.domain.importers import UploadedFile, UploadLimits
from app.domain.importers.common import (
    RowBudget,
    Step,
    UploadIndex,
    check_dimension_in_name,
    check_line_end,
    check_run,
    declared_or,
    f_star,
    lines_of,
    number_runs,
    parse_float,
    parse_int,
    parse_key_values,
    step_trajectory,
)
from app.domain.results import (
    ImportedResults,
    ImportNote,
    MalformedFile,
    RunResult,
    Trajectory,
    ValuesAre,
)

__all__ = ["BBOB_NAMES", "read"]

BBOB_NAMES = {
    1: "Sphere", 2: "Ellipsoid", 3: "Rastrigin", 4: "BuecheRastrigin", 5: "LinearSlope",
    6: "AttractiveSector", 7: "StepEllipsoid", 8: "Rosenbrock", 9: "RosenbrockRotated",
    10: "EllipsoidRotated", 11: "Discus", 12: "BentCigar", 13: "SharpRidge",
    14: "DifferentPowers", 15: "RastriginRotated", 16: "Weierstrass", 17: "Schaffers10",
    18: "Schaffers1000", 19: "GriewankRosenbrock", 20: "Schwefel", 21: "Gallagher101",
    22: "Gallagher21", 23: "Katsuura", 24: "LunacekBiRastrigin",
}  # fmt: skip
"""ioh's BBOB problems, ``ioh.problem.BBOB.problems`` (checked against ioh in the tests)."""

_PRINTED_SLACK = 1e-9
"""raw_y has 10 decimals: a logged value may sit up to 5e-11 (plus rounding) below best.y."""

_SUITES = ("BBOB", "unknown_suite")


@dataclass(frozen=True)
class _Problem:
    fid: int
    maximization: bool
    suite: str
    name: str


def read(
    files: Sequence[UploadedFile], *, limits: UploadLimits, values_are: ValuesAre | None = None
) -> ImportedResults:
    """Read IOHprofiler results (current JSON layout, else legacy ``.info``) into absrank runs.

    Parameters
    ----------
    files : sequence of UploadedFile
        The upload's files; ``.json`` (or, without any, ``.info``) files index the rest.
    limits : UploadLimits
        ``max_rows`` bounds runs plus records read.
    values_are : {"f", "error"}, optional
        JSON files hold errors (``"f"`` is refused); legacy files need it unless their
        ``best af(x)+b`` column settles it.

    Raises
    ------
    MalformedFile
        Naming the file and line of the first fault.
    UploadTooLarge
        More than ``limits.max_rows`` rows.
    InvalidInput
        ``field="values_are"`` when contradicted or needed.
    """
    by_path = UploadIndex(files)
    budget = RowBudget(limits.max_rows)
    notes: list[ImportNote] = []
    indexes = sorted(p for p in by_path if p.lower().endswith(".json"))
    if indexes:
        kind = declared_or(values_are, "error", format_name="IOHprofiler")
        runs, algorithms = _read_json(indexes, by_path, budget, notes)
    else:
        infos = sorted(p for p in by_path if p.lower().endswith(".info"))
        if not infos:
            raise MalformedFile(
                "holds no IOHprofiler index (.json, or legacy .info) file",
                file=files[0].path if len(files) == 1 else "the upload",
            )
        runs, algorithms, kind = _read_legacy(infos, by_path, budget, values_are)
    other = next((a for a in algorithms if a[1] != algorithms[0][1]), None)
    if other is not None:
        raise MalformedFile(
            f"algorithm {other[1]!r} differs from {algorithms[0][1]!r}: one result set holds "
            f"one algorithm",
            file=other[0],
        )
    if not runs:
        raise MalformedFile("lists no runs", file=(indexes or ["the upload"])[0])
    return ImportedResults(
        format="iohprofiler",
        values_are=kind,
        runs=number_runs(runs),
        algorithm=algorithms[0][1] if algorithms else None,
        notes=tuple(notes),
    )


def _problem(
    fid: object, name: object, suite: object, maximization: bool, file: str, line: int | None = None
) -> _Problem:
    if not _is_int(fid):
        raise MalformedFile(f"function_id {fid!r} is not an integer", file=file, line=line)
    if maximization:
        raise MalformedFile(
            "is a maximization problem; absrank ranks minimisation only", file=file, line=line
        )
    if suite not in _SUITES or BBOB_NAMES.get(fid) != name:
        raise MalformedFile(
            f"function {fid} {name!r} of suite {suite!r} is not one of ioh's BBOB problems "
            f"(the suite absrank hosts)",
            file=file,
            line=line,
        )
    return _Problem(fid=fid, maximization=False, suite=str(suite), name=str(name))


def _read_json(
    indexes: list[str],
    by_path: UploadIndex,
    budget: RowBudget,
    notes: list[ImportNote],
) -> tuple[list[RunResult], list[tuple[str, str]]]:
    runs: list[RunResult] = []
    algorithms: list[tuple[str, str]] = []
    used: set[str] = set()
    for index in indexes:
        meta = _json(index, by_path[index].data)
        algorithm = meta.get("algorithm", {})
        name = algorithm.get("name") if isinstance(algorithm, dict) else None
        if isinstance(name, str):
            algorithms.append((index, name))
        problem = _problem(
            meta.get("function_id"),
            meta.get("function_name"),
            meta.get("suite"),
            bool(meta.get("maximization", False)),
            index,
        )
        if problem.suite != "BBOB":
            notes.append(
                ImportNote(
                    "ioh-suite-assumed-bbob",
                    f"{index} says suite {problem.suite!r}: read as ioh's BBOB class (SBOX "
                    f"problems share its ids and names and would be misread)",
                    index,
                )
            )
        scenarios = meta.get("scenarios")
        if not isinstance(scenarios, list) or not scenarios:
            raise MalformedFile("has no 'scenarios' list", file=index)
        for scenario in scenarios:
            runs += _scenario(index, problem, scenario, by_path, used, budget)
    return runs, algorithms


def _json(index: str, data: bytes) -> dict[str, object]:
    try:
        meta = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        line = getattr(exc, "lineno", None)
        raise MalformedFile(f"is not JSON: {exc}", file=index, line=line) from exc
    if not isinstance(meta, dict):
        raise MalformedFile("is not a JSON object", file=index)
    return meta


def _scenario(
    index: str,
    problem: _Problem,
    scenario: object,
    by_path: UploadIndex,
    used: set[str],
    budget: RowBudget,
) -> list[RunResult]:
    if not isinstance(scenario, dict) or not isinstance(scenario.get("runs"), list):
        raise MalformedFile("a scenario without 'dimension', 'path' and 'runs'", file=index)
    dim, entries = scenario.get("dimension"), scenario["runs"]
    path = by_path.resolve(posixpath.dirname(index), str(scenario.get("path", "")))
    if not isinstance(dim, int) or path is None:
        raise MalformedFile(
            f"scenario of dimension {dim!r}: data file {scenario.get('path')!r} is not in the "
            f"upload",
            file=index,
        )
    check_dimension_in_name(path, dim, file=index, line=None)
    if path in used:
        raise MalformedFile(f"{path} is listed twice: duplicate runs", file=index)
    used.add(path)
    blocks = _blocks(path, by_path[path].data, budget, ("evaluations", "raw_y"))
    if len(blocks) != len(entries):
        raise MalformedFile(
            f"lists {len(entries)} runs in dimension {dim} but {path} holds {len(blocks)}",
            file=index,
        )
    budget.take(len(entries), file=index)
    runs = []
    for entry, block in zip(entries, blocks, strict=True):
        instance, evals, best = _json_run(entry, index)
        function_id = format_id("bbob", f"f{problem.fid}", instance, dim)
        f_star(function_id, file=index, line=None)  # hosted?
        runs.append(_run(function_id, block, evals, best))
    return runs


def _json_run(entry: object, index: str) -> tuple[int, int, float]:
    best_entry = entry.get("best") if isinstance(entry, dict) else None
    if isinstance(entry, dict) and isinstance(best_entry, dict):
        instance, evals, best = entry.get("instance"), entry.get("evals"), best_entry.get("y")
        if (
            _is_int(instance)
            and _is_int(evals)
            and isinstance(best, int | float)
            and not isinstance(best, bool)
            and evals >= 1
        ):
            return instance, evals, float(best)
    raise MalformedFile(
        f"a run entry without integer 'instance', 'evals' and 'best.y': {str(entry)[:80]}",
        file=index,
    )


def _is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class _Block:
    file: str
    line: int
    steps: tuple[Step, ...]
    offsets: tuple[float, ...]
    """``best af(x)+b - best-so-far f(x)`` per row (legacy files with that column), else ()."""


def _blocks(
    path: str, data: bytes, budget: RowBudget, names: tuple[str, str], extra: str | None = None
) -> list[_Block]:
    """Split a ``.dat`` into runs at header lines; read the evaluation and value columns."""
    check_line_end(data, path)
    lines = lines_of(data, path)
    budget.take(len(lines), file=path)
    blocks: list[_Block] = []
    columns: tuple[int, int, int | None] | None = None
    start = 0
    steps: list[Step] = []
    offsets: list[float] = []
    for number, text in enumerate(lines, start=1):
        fields = text.split() if not text.lstrip().startswith('"') else _quoted(text)
        if not fields:
            continue
        if fields[0] == names[0]:
            if columns is not None:
                blocks.append(_Block(path, start, tuple(steps), tuple(offsets)))
            columns = _columns(fields, names, extra, path, number)
            start, steps, offsets = number, [], []
            continue
        if columns is None:
            raise MalformedFile(
                f"records before any header line ({' '.join(names)} ...): missing header",
                file=path,
                line=number,
            )
        if len(fields) <= max(c for c in columns if c is not None):
            raise MalformedFile(
                f"a record with {len(fields)} columns, the header has more: truncated row",
                file=path,
                line=number,
            )
        evaluations = parse_int(fields[columns[0]], file=path, line=number, what="evaluations")
        value = parse_float(fields[columns[1]], file=path, line=number, what=names[1])
        steps.append(Step(evaluations, value))
        if columns[2] is not None:
            raw = parse_float(fields[columns[2]], file=path, line=number, what=extra or "")
            offsets.append(raw - value)
    if columns is not None:
        blocks.append(_Block(path, start, tuple(steps), tuple(offsets)))
    if not blocks:
        raise MalformedFile("holds no runs", file=path)
    return blocks


def _quoted(text: str) -> list[str]:
    quoted = re.findall(r'"([^"]*)"', text)
    return quoted if quoted else text.split()


def _columns(
    fields: list[str], names: tuple[str, str], extra: str | None, path: str, number: int
) -> tuple[int, int, int | None]:
    if names[1] not in fields:
        raise MalformedFile(
            f"header without a {names[1]!r} column: {' '.join(fields)[:80]}",
            file=path,
            line=number,
        )
    third = fields.index(extra) if extra is not None and extra in fields else None
    return fields.index(names[0]), fields.index(names[1]), third


def _run(function_id: str, block: _Block, evals: int, best: float) -> RunResult:
    if not block.steps:
        raise MalformedFile("a run header without records", file=block.file, line=block.line)
    logged = min(s.best for s in block.steps)
    if logged < best - _PRINTED_SLACK * max(1.0, abs(best)):
        raise MalformedFile(
            f"logs {logged!r}, below the run's best {best!r} in the JSON",
            file=block.file,
            line=block.line,
        )
    if best < -_PRINTED_SLACK:
        raise MalformedFile(
            f"best {best!r} is negative: not an error f - f*", file=block.file, line=block.line
        )
    best = max(best, 0.0)  # within the printed slack of 0
    last = max(s.evaluations for s in block.steps)
    if last > evals:
        raise MalformedFile(
            f"records go to evaluation {last}, past the run's {evals} in the JSON",
            file=block.file,
            line=block.line,
        )
    steps = [Step(s.evaluations, max(s.best, best)) for s in block.steps]
    trajectory = _ending(step_trajectory(steps), evals, best)
    return RunResult(function_id, 0, best, evals, trajectory)


def _ending(trajectory: Trajectory, evals: int, best: float) -> Trajectory:
    """The trajectory with its last point at ``(evals, best)``."""
    evaluations, values = list(trajectory.evaluations), list(trajectory.best)
    if evaluations[-1] == evals:
        values[-1] = best
    else:
        evaluations.append(evals)
        values.append(best)
    return Trajectory(tuple(evaluations), tuple(values))


_LEGACY = ("function evaluation", "best-so-far f(x)")
_LEGACY_RAW = "best af(x)+b"


def _read_legacy(
    infos: list[str],
    by_path: UploadIndex,
    budget: RowBudget,
    values_are: ValuesAre | None,
) -> tuple[list[RunResult], list[tuple[str, str]], ValuesAre]:
    runs: list[tuple[str, int, RunResult, _Block]] = []
    algorithms: list[tuple[str, str]] = []
    for info in infos:
        lines = lines_of(by_path[info].data, info)
        i = 0
        while i < len(lines):
            if not lines[i].strip() or lines[i].lstrip().startswith("%"):
                i += 1
                continue
            header = parse_key_values(lines[i], file=info, line=i + 1)
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j].lstrip().startswith("%")):
                j += 1
            if j >= len(lines):
                raise MalformedFile("an entry without a data line", file=info, line=i + 1)
            if "algId" in header:
                algorithms.append((info, header["algId"]))
            runs += _legacy_entry(info, i + 1, header, lines[j], j + 1, by_path, budget)
            i = j + 1
    kind = _legacy_kind(runs, values_are)
    for _, _, run, block in runs:
        if kind == "error" and run.value < -_PRINTED_SLACK * max(1.0, abs(run.value)):
            raise MalformedFile(
                f"best-so-far f(x) {run.value!r} is negative: not an error f - f*",
                file=block.file,
                line=block.line,
            )
        check_run(run, kind, file=block.file, line=block.line)
    return [run for _, _, run, _ in runs], algorithms, kind


def _legacy_entry(
    info: str,
    line: int,
    header: dict[str, str],
    data: str,
    data_line: int,
    by_path: UploadIndex,
    budget: RowBudget,
) -> list[tuple[str, int, RunResult, _Block]]:
    for key in ("funcId", "DIM"):
        if key not in header:
            raise MalformedFile(f"an index header without {key}", file=info, line=line)
    fid = parse_int(header["funcId"], file=info, line=line, what="funcId")
    maximization = header.get("maximization", "F").strip().upper() in ("T", "TRUE", "1")
    name = header.get("funcName", BBOB_NAMES.get(fid))
    _problem(fid, name, _legacy_suite(header), maximization, info, line)
    dim = parse_int(header["DIM"], file=info, line=line, what="DIM")
    items = [p.strip() for p in data.split(",") if p.strip()]
    names = [p for p in items if p.lower().endswith(".dat")]
    entries = [p for p in items if not p.lower().endswith(".dat")]
    if len(names) != 1:
        raise MalformedFile("the data line must name one .dat file", file=info, line=data_line)
    check_dimension_in_name(names[0], dim, file=info, line=data_line)
    path = by_path.resolve(posixpath.dirname(info), names[0])
    if path is None:
        raise MalformedFile(f"names {names[0]!r}, not in the upload", file=info, line=data_line)
    blocks = _blocks(path, by_path[path].data, budget, _LEGACY, _LEGACY_RAW)
    if len(blocks) != len(entries):
        raise MalformedFile(
            f"lists {len(entries)} runs but {path} holds {len(blocks)}", file=info, line=data_line
        )
    budget.take(len(entries), file=info)
    out = []
    for item, block in zip(entries, blocks, strict=True):
        instance_text, _, rest = item.partition(":")
        instance = parse_int(instance_text, file=info, line=data_line, what="instance")
        evals_text = rest.partition("|")[0]
        function_id = format_id("bbob", f"f{fid}", instance, dim)
        f_star(function_id, file=info, line=data_line)
        if not block.steps:
            raise MalformedFile("a run header without records", file=path, line=block.line)
        trajectory = step_trajectory(block.steps)
        evals = trajectory.evaluations[-1]
        if evals_text:
            listed = parse_int(evals_text, file=info, line=data_line, what="evaluations")
            if listed < evals:
                raise MalformedFile(
                    f"lists {listed} evaluations; {path} records go to {evals}",
                    file=info,
                    line=data_line,
                )
            evals = listed
        trajectory = _ending(trajectory, evals, trajectory.best[-1])
        run = RunResult(function_id, 0, trajectory.best[-1], evals, trajectory)
        out.append((info, data_line, run, block))
    return out


def _legacy_suite(header: dict[str, str]) -> str:
    suite = header.get("suite", "BBOB")
    return "BBOB" if suite.upper() == "BBOB" else suite


def _legacy_kind(
    runs: list[tuple[str, int, RunResult, _Block]], values_are: ValuesAre | None
) -> ValuesAre:
    """``"error"`` / ``"f"`` from the ``best af(x)+b`` column when every run has it."""
    if not runs or any(not block.offsets for *_, block in runs):
        if values_are is None:
            raise InvalidInput(
                "legacy IOHprofiler files without a 'best af(x)+b' column do not say whether "
                "'best-so-far f(x)' is f or f - f*: send values_are",
                field="values_are",
            )
        return values_are
    kinds = set()
    for info, line, run, block in runs:
        fstar = f_star(run.function_id, file=info, line=line)
        for offset in block.offsets:
            slack = 1e-6 * max(1.0, abs(fstar))
            if abs(offset) <= slack:
                kinds.add("f")
            elif abs(offset - fstar) <= slack:
                kinds.add("error")
            else:
                raise MalformedFile(
                    f"'best af(x)+b' minus 'best-so-far f(x)' is {offset!r}, neither 0 nor "
                    f"f* = {fstar!r} of {run.function_id}",
                    file=block.file,
                    line=block.line,
                )
    if len(kinds) != 1:
        raise MalformedFile("mixes f and f - f* columns", file=runs[0][3].file)
    kind: ValuesAre = "error" if kinds == {"error"} else "f"
    return declared_or(values_are, kind, format_name="These legacy IOHprofiler")
