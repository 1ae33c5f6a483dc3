"""COCO result folders: the ``cocoex.Observer`` output and the legacy ``bbobexp`` layout.

An experiment folder holds ``.info`` index files; each entry is three lines [1]_::

    suite = 'bbob', funcId = 1, DIM = 10, Precision = 1.000e-08, algId = 'my-es', ...
    % free comment
    data_f1/bbobexp_f1_DIM10.dat, 1:5000|5.2e-09, 2:5000|1.3e-08

(the legacy layout has no ``suite``/``coco_version``/``logger``/``data_format`` keys and may use
Windows separators). Each ``instance:evals|f-ftarget`` item is one run, in the order the runs
appear in the data file(s) named before them. A data file holds one block per run, each
opening with a ``%`` header that prints ``Fopt (value)``; rows are
``evaluations ... best-noise-free-f-minus-Fopt ...`` with that error in the third column, in
both layouts (``cocopp.readalign`` reads column 2, 0-based, too). ``.dat`` rows are written
when a target is reached, ``.tdat`` rows at fixed evaluation counts; both end with the run's
last evaluation.

Reading:

- ids: ``bbob/f{funcId}/i{instance}/d{DIM}``; only the ``bbob`` suite (funcId 1..24) is
  hosted, other suites (``bbob-biobj``, ``bbob-noisy`` = funcId 101..130, ``bbob-largescale``,
  ``bbob-mixint``, ``bbob-constrained``) are refused;
- every run header's ``Fopt`` must equal absrank's ``f*`` for its id, within half a unit of
  the last printed digit (:func:`~app.domain.importers.common.check_optimum`);
- values are errors ``f - Fopt``; a run's trajectory is the best-so-far step function of its
  ``.dat`` and ``.tdat`` rows; value and budget come from the last record. A budget that
  differs from the ``.info`` item's evaluations gives a note (cocopp warns likewise);
- truncation is refused (a file cut while being written stores a wrong final value): a data
  file whose last line has no line end (the loggers end every line); a record with fewer or
  more columns than its header implies (the named columns before ``x1``, alone or followed by
  the ``DIM`` variables, which cocoex writes in small dimensions only); a run whose final best
  error disagrees with its ``.info`` item ``instance:evals|value`` (printed to two digits:
  within half a unit of the last digit plus ``Precision``, since cocoex prints ``f - Fopt``
  and the legacy loggers ``f - ftarget``); a ``.dat`` and a ``.tdat`` whose records at the
  same last evaluation hold different best values;
- tolerant where the meaning is clear (missing ``.tdat``, missing ``%`` comment line, extra
  files, moved data files found by a unique name, a later batch's entry taking the next runs
  of the same data file, CRLF); strict where not (run counts that disagree, a data file
  indexed for more runs than it holds, a file named ``DIM5`` under ``DIM = 10``, unreadable
  numbers, several ``algId``).

References
----------
.. [1] COCO data format, https://numbbo.github.io/coco/data-format ; cocopp ``pproc.DataSet``
   and ``readalign`` (numbbo/coco, code-postprocessing/cocopp).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.domain.functions import format_id
from app.domain.importers import UploadedFile, UploadLimits
from app.domain.importers.common import (
    RowBudget,
    Step,
    UploadIndex,
    check_dimension_in_name,
    check_line_end,
    check_optimum,
    declared_or,
    lines_of,
    number_runs,
    parse_float,
    parse_int,
    parse_key_values,
    printed_tolerance,
    step_trajectory,
)
from app.domain.results import ImportedResults, ImportNote, MalformedFile, RunResult, ValuesAre

__all__ = ["read"]

BBOB_FUNCTIONS = range(1, 25)
"""funcId values of the noiseless ``bbob`` suite, the one COCO suite absrank hosts."""

_NEGATIVE_SLACK = 1e-12
"""An error ``f - Fopt`` below ``-_NEGATIVE_SLACK * max(1, |Fopt|)`` means a wrong optimum."""

_REL_SLACK = 1e-12
"""Relative slack on top of the printed precision when two printed values are compared."""

_FOPT = re.compile(r"Fopt\s*\(\s*([^)\s]+)\s*\)")


@dataclass(frozen=True)
class _Entry:
    """One index entry: its function, the data files and the runs' instances."""

    info: str
    line: int
    fid: int
    dim: int
    algorithm: str
    data_files: tuple[str, ...]
    instances: tuple[int, ...]
    evals: tuple[int | None, ...]
    finals: tuple[str | None, ...]
    """Each run's printed final error (``f - Fopt``, or ``f - ftarget`` in legacy files)."""
    precision: float


@dataclass(frozen=True)
class _Block:
    """One run's rows in one data file: where its header is, its Fopt text and its records."""

    file: str
    line: int
    fopt: str
    steps: tuple[Step, ...]
    last: tuple[int, str] | None
    """Line and printed ``f - Fopt`` of the block's last record (the run's last evaluation)."""


def read(
    files: Sequence[UploadedFile], *, limits: UploadLimits, values_are: ValuesAre | None = None
) -> ImportedResults:
    """Read a COCO experiment (current or legacy layout) into absrank runs.

    Parameters
    ----------
    files : sequence of UploadedFile
        The upload's files; ``.info`` files index the rest, other files are ignored.
    limits : UploadLimits
        ``max_rows`` bounds runs plus records read.
    values_are : {"error"}, optional
        COCO files hold errors ``f - Fopt``; ``"f"`` is refused.

    Returns
    -------
    ImportedResults
        ``format="coco"``, ``values_are="error"``, ``algorithm`` = the ``algId``.

    Raises
    ------
    MalformedFile
        Naming the file and line of the first fault.
    UploadTooLarge
        More than ``limits.max_rows`` rows.
    InvalidInput
        ``field="values_are"`` for ``"f"``.
    """
    declared_or(values_are, "error", format_name="COCO")
    by_path = UploadIndex(files)
    infos = sorted(p for p in by_path if p.lower().endswith(".info"))
    if not infos:
        raise MalformedFile(
            "holds no COCO .info index file (expected e.g. bbobexp_f1.info beside data_f1/)",
            file=files[0].path if len(files) == 1 else "the upload",
        )
    budget = RowBudget(limits.max_rows)
    notes: list[ImportNote] = []
    entries = [e for info in infos for e in _entries(info, by_path[info].data, by_path)]
    algorithms = {e.algorithm for e in entries}
    if len(algorithms) > 1:
        second = next(e for e in entries if e.algorithm != entries[0].algorithm)
        raise MalformedFile(
            f"algId {second.algorithm!r} differs from {entries[0].algorithm!r}: one result set "
            f"holds one algorithm; upload each separately",
            file=second.info,
            line=second.line,
        )
    data = _DataFiles(by_path, budget)
    runs: list[RunResult] = []
    for entry in entries:
        runs.extend(_entry_runs(entry, data, notes))
    data.check_all_taken()
    if not runs:
        raise MalformedFile("the .info files list no runs", file=infos[0])
    return ImportedResults(
        format="coco",
        values_are="error",
        runs=number_runs(runs),
        algorithm=entries[0].algorithm or None,
        notes=tuple(notes),
    )


def _entries(info: str, data: bytes, by_path: UploadIndex) -> list[_Entry]:
    lines = lines_of(data, info)
    entries = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        header_line = i + 1
        header = parse_key_values(lines[i], file=info, line=header_line)
        i += 1
        if i < len(lines) and lines[i].lstrip().startswith("%"):
            i += 1  # the comment line (tolerated when missing)
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i >= len(lines):
            raise MalformedFile(
                "the entry ends after its header: no data line", file=info, line=header_line
            )
        entries.append(_entry(info, header, header_line, lines[i], i + 1))
        i += 1
    if not entries:
        raise MalformedFile("is empty", file=info)
    return entries


def _entry(info: str, header: dict[str, str], line: int, data: str, data_line: int) -> _Entry:
    suite = header.get("suite", "bbob")
    if suite != "bbob":
        raise MalformedFile(
            f"suite {suite!r} is not hosted: absrank ranks the noiseless bbob suite only",
            file=info,
            line=line,
        )
    if "funcId" not in header or "DIM" not in header:
        raise MalformedFile(
            'an index header needs funcId and DIM (e.g. "funcId = 1, DIM = 10, ..."), got '
            f"{', '.join(header) or 'no keys'}",
            file=info,
            line=line,
        )
    fid = parse_int(header["funcId"], file=info, line=line, what="funcId")
    if fid not in BBOB_FUNCTIONS:
        name = "bbob-noisy" if 101 <= fid <= 130 else "bbob"
        raise MalformedFile(
            f"suite {name!r} funcId {fid} is not hosted: absrank ranks the noiseless bbob suite "
            f"(funcId 1..24) only",
            file=info,
            line=line,
        )
    dim = parse_int(header["DIM"], file=info, line=line, what="DIM")
    names: list[str] = []
    instances: list[int] = []
    evals: list[int | None] = []
    finals: list[str | None] = []
    for item in (p.strip() for p in data.split(",")):
        if not item:
            continue
        if item.lower().endswith("dat"):
            if instances:
                raise MalformedFile(
                    f"data file {item!r} after run items: write files first",
                    file=info,
                    line=data_line,
                )
            names.append(item)
            continue
        instance, _, rest = item.partition(":")
        instances.append(parse_int(instance, file=info, line=data_line, what="instance"))
        spent, bar, final = rest.partition("|")
        evals.append(
            parse_int(spent, file=info, line=data_line, what="evaluations") if rest else None
        )
        if bar:
            parse_float(final, file=info, line=data_line, what="f - ftarget")
        finals.append(final.strip() if bar else None)
    if not names:
        raise MalformedFile("the data line names no .dat file", file=info, line=data_line)
    for name in names:
        check_dimension_in_name(name, dim, file=info, line=data_line)
    return _Entry(
        info=info,
        line=data_line,
        fid=fid,
        dim=dim,
        algorithm=header.get("algId", ""),
        data_files=tuple(names),
        instances=tuple(instances),
        evals=tuple(evals),
        finals=tuple(finals),
        precision=parse_float(
            header.get("Precision", "1e-8"), file=info, line=line, what="Precision"
        ),
    )


@dataclass
class _Cursor:
    """A data file's runs and how many index entries have taken so far."""

    blocks: list[_Block]
    taken: int
    first: tuple[str, int]


class _DataFiles:
    """Data files read once each; index entries take their runs in order.

    An entry naming one data file takes the next runs of that file (the legacy loggers append
    the runs of a later batch to the same file under a new ``.info`` entry); an entry naming
    several files takes all their remaining runs. Every run must be taken exactly once.
    """

    def __init__(self, by_path: UploadIndex, budget: RowBudget) -> None:
        self.by_path = by_path
        self.budget = budget
        self.cursors: dict[str, _Cursor] = {}

    def take(self, path: str, want: int | None, entry: _Entry) -> list[_Block]:
        cursor = self.cursors.get(path)
        if cursor is None:
            blocks = _read_blocks(path, self.by_path[path].data, self.budget, entry.dim)
            cursor = self.cursors[path] = _Cursor(blocks, 0, (entry.info, entry.line))
        left = len(cursor.blocks) - cursor.taken
        want = left if want is None else want
        if want > left:
            if cursor.taken:
                raise MalformedFile(
                    f"{path} is indexed again (first at {cursor.first[0]}, line "
                    f"{cursor.first[1]}) but holds no further {want} runs: duplicate runs",
                    file=entry.info,
                    line=entry.line,
                )
            raise MalformedFile(
                f"lists {want} runs but {path} holds {left}", file=entry.info, line=entry.line
            )
        cursor.taken += want
        return cursor.blocks[cursor.taken - want : cursor.taken]

    def check_all_taken(self) -> None:
        for path, cursor in self.cursors.items():
            if cursor.taken != len(cursor.blocks):
                raise MalformedFile(
                    f"the index lists {cursor.taken} runs but {path} holds {len(cursor.blocks)}",
                    file=cursor.first[0],
                    line=cursor.first[1],
                )


def _entry_runs(entry: _Entry, data: _DataFiles, notes: list[ImportNote]) -> list[RunResult]:
    base = posixpath.dirname(entry.info)
    n = len(entry.instances)
    single = len(entry.data_files) == 1
    dat_blocks: list[_Block] = []
    tdat_blocks: list[_Block] | None = []
    for name in entry.data_files:
        stem = re.sub(r"\.[a-z]?dat$", "", name.replace("\\", "/"), flags=re.IGNORECASE)
        dat = data.by_path.resolve(base, stem + ".dat")
        if dat is None:
            raise MalformedFile(
                f"names {name!r}, which is not in the upload", file=entry.info, line=entry.line
            )
        dat_blocks += data.take(dat, n if single else None, entry)
        tdat = data.by_path.resolve(base, stem + ".tdat")
        if tdat is None:
            tdat_blocks = None
            notes.append(
                ImportNote("coco-no-tdat", f"{dat} has no .tdat beside it; read the .dat only", dat)
            )
        elif tdat_blocks is not None:
            tdat_blocks += data.take(tdat, n if single else None, entry)
    for blocks, kind in ((dat_blocks, ".dat"), (tdat_blocks, ".tdat")):
        if blocks is not None and len(blocks) != n:
            raise MalformedFile(
                f"lists {n} runs but the {kind} files hold {len(blocks)}",
                file=entry.info,
                line=entry.line,
            )
    data.budget.take(n, file=entry.info)
    runs = []
    for k, instance in enumerate(entry.instances):
        blocks = [dat_blocks[k]] + ([tdat_blocks[k]] if tdat_blocks is not None else [])
        runs.append(_run(entry, k, instance, blocks, notes))
    return runs


def _run(
    entry: _Entry, k: int, instance: int, blocks: list[_Block], notes: list[ImportNote]
) -> RunResult:
    function_id = format_id("bbob", f"f{entry.fid}", instance, entry.dim)
    for block in blocks:
        check_optimum(function_id, block.fopt, file=block.file, line=block.line)
        if not block.steps:
            raise MalformedFile("a run header without records", file=block.file, line=block.line)
    _check_same_ending(blocks)
    trajectory = step_trajectory([s for b in blocks for s in b.steps])
    used = trajectory.evaluations[-1]
    listed = entry.evals[k]
    if listed is not None and listed != used:
        notes.append(
            ImportNote(
                "coco-evals-mismatch",
                f"run {k + 1} of {entry.info} line {entry.line} lists {listed} evaluations; its "
                f"records end at {used}, taken as the budget",
                entry.info,
            )
        )
    _check_final(entry, k, instance, blocks, trajectory.best[-1])
    return RunResult(
        function_id=function_id,
        run=0,
        value=trajectory.best[-1],
        budget=used,
        trajectory=trajectory,
    )


def _last(block: _Block) -> tuple[int, str]:
    assert block.last is not None  # a block with steps has a last record
    return block.last


def _check_same_ending(blocks: list[_Block]) -> None:
    """A ``.dat`` and a ``.tdat`` record at the same last evaluation hold the same best value."""
    if len(blocks) < 2 or blocks[0].steps[-1].evaluations != blocks[1].steps[-1].evaluations:
        return
    (dat_line, dat_text), (tdat_line, tdat_text) = _last(blocks[0]), _last(blocks[1])
    a, b = float(dat_text), float(tdat_text)
    slack = printed_tolerance(dat_text) + printed_tolerance(tdat_text)
    if abs(a - b) > slack + _REL_SLACK * max(abs(a), abs(b)):
        raise MalformedFile(
            f"the run's last record (evaluation {blocks[1].steps[-1].evaluations}) holds best "
            f"f - Fopt {tdat_text}, but {blocks[0].file}, line {dat_line} holds {dat_text} at the "
            "same evaluation: one of the files is cut or edited",
            file=blocks[1].file,
            line=tdat_line,
        )


def _check_final(entry: _Entry, k: int, instance: int, blocks: list[_Block], best: float) -> None:
    """The run's final best error agrees with the ``.info`` item ``instance:evals|value``.

    The item prints the final error to two significant digits: cocoex writes ``f - Fopt``
    (``0.0e+00`` once the optimum is hit), cocopp reads it as ``readfinalFminusFtarget``
    (``f - ftarget``, ``ftarget = Fopt + precision``, as the legacy loggers wrote it). Equal
    means within half a unit of its last printed digit plus the precision: either reading.
    """
    printed = entry.finals[k]
    if printed is None:
        return
    listed = float(printed)
    slack = printed_tolerance(printed) + entry.precision + _REL_SLACK * max(abs(listed), best)
    if abs(best - listed) <= slack:
        return
    line, text = _last(min(blocks, key=lambda b: float(_last(b)[1])))
    where = ", ".join(f"{b.file}, line {_last(b)[0]}" for b in blocks)
    raise MalformedFile(
        f"run {k + 1} (instance {instance}) lists a final error of {printed}, but the "
        f"data files end at best f - Fopt {best!r} ({where}; last record {text} on line "
        f"{line}): a data file is cut or does not belong to this index",
        file=entry.info,
        line=entry.line,
    )


def _expected_columns(header: str, dim: int) -> frozenset[int]:
    """How many columns a record under this ``%`` header has.

    The header names its columns between ``|``; ``x1 | x2...`` stands for the ``DIM`` search
    variables, which cocoex writes in small dimensions only: with them named, a record has the
    named columns before ``x1`` alone or followed by all ``DIM`` variables.
    """
    names = [n.strip() for n in header.lstrip("%").split("|")]
    if "x1" in names:
        named = names.index("x1")
        return frozenset((named, named + dim))
    return frozenset((len(names),))


def _read_blocks(path: str, data: bytes, budget: RowBudget, dim: int) -> list[_Block]:
    check_line_end(data, path)
    blocks: list[_Block] = []
    header: tuple[int, str, frozenset[int]] | None = None
    steps: list[Step] = []
    last: tuple[int, str] | None = None
    lines = lines_of(data, path)
    budget.take(len(lines), file=path)
    for number, text in enumerate(lines, start=1):
        if text.startswith("%"):
            match = _FOPT.search(text)
            if match is None:
                if header is not None and not steps:
                    continue  # a second comment line of the same header
                raise MalformedFile("a run header without 'Fopt (value)'", file=path, line=number)
            if header is not None:
                blocks.append(_Block(path, header[0], header[1], tuple(steps), last))
            parse_float(match[1], file=path, line=number, what="Fopt")
            header, steps, last = (number, match[1], _expected_columns(text, dim)), [], None
            continue
        fields = text.split()
        if not fields:
            continue
        if header is None:
            raise MalformedFile(
                "records before any '%' run header (missing header)", file=path, line=number
            )
        if len(fields) not in header[2]:
            raise MalformedFile(
                f"a record has {len(fields)} columns where its header (line {header[0]}) implies "
                f"{' or '.join(map(str, sorted(header[2])))}: truncated row",
                file=path,
                line=number,
            )
        steps.append(_record(fields, header[1], path, number))
        last = (number, fields[2])
    if header is not None:
        blocks.append(_Block(path, header[0], header[1], tuple(steps), last))
    if not blocks:
        raise MalformedFile("holds no runs", file=path)
    return blocks


def _record(fields: list[str], fopt: str, path: str, number: int) -> Step:
    evaluations = parse_int(fields[0], file=path, line=number, what="evaluations")
    error = parse_float(fields[2], file=path, line=number, what="f - Fopt")
    if error < -_NEGATIVE_SLACK * max(1.0, abs(float(fopt))):
        raise MalformedFile(
            f"f - Fopt = {fields[2]} is negative: Fopt {fopt} is not the optimum",
            file=path,
            line=number,
        )
    return Step(evaluations, max(error, 0.0))
