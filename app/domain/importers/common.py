"""Helpers shared by the format readers: row budget, numbers, key = value headers, f* checks.

Every reader counts what it reads against :class:`RowBudget` (runs plus trajectory points over
all files) and stops at the limit; numbers are parsed with the file and 1-based line in any
refusal; run ids are numbered 0, 1, ... per function in file order by :func:`number_runs`.
"""

from __future__ import annotations

import math
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal, InvalidOperation

from app.domain.archive import run_problem
from app.domain.errors import DomainError, InvalidInput, UploadTooLarge
from app.domain.functions import get_function
from app.domain.importers import UploadedFile
from app.domain.results import MalformedFile, RunResult, Trajectory, ValuesAre

__all__ = [
    "RowBudget",
    "Step",
    "UploadIndex",
    "check_dimension_in_name",
    "check_line_end",
    "check_optimum",
    "check_run",
    "declared_or",
    "f_star",
    "guess_format",
    "lines_of",
    "number_runs",
    "parse_float",
    "parse_int",
    "parse_key_values",
    "printed_tolerance",
    "step_trajectory",
]

_REL_TOLERANCE = 1e-12
"""Relative slack on top of the printed precision when an optimum is compared with absrank's."""


class RowBudget:
    """Counts runs plus trajectory points read so far; raises once ``limit`` is passed."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def take(self, n: int, *, file: str) -> None:
        """Count ``n`` more rows read from ``file``.

        Raises
        ------
        UploadTooLarge
            When the total exceeds the limit (reading stops there).
        """
        self.used += n
        if self.used > self.limit:
            raise UploadTooLarge(
                f"{file}: the upload holds more than {self.limit} rows (runs plus trajectory "
                f"points); split it into smaller sets",
                limit="max_rows",
                field="file",
            )


def lines_of(data: bytes, file: str) -> list[str]:
    """Decode a text file (UTF-8, BOM and CRLF tolerated) into lines."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise MalformedFile("is not UTF-8 text", file=file, line=line) from exc
    return text.splitlines()


def check_line_end(data: bytes, file: str) -> None:
    """Refuse a data file whose last line has no line end: it was cut while being written.

    The COCO and IOHprofiler loggers end every line they write, so a missing final line end
    means the file is truncated and its last record (the run's final value) may be cut short.
    """
    if data and not data.endswith((b"\n", b"\r")):
        raise MalformedFile(
            "the last line has no line end: the file was cut (the loggers end every line), so "
            "its last record may be cut short; upload the complete file",
            file=file,
            line=len(data.splitlines()),
        )


def parse_float(text: str, *, file: str, line: int, what: str) -> float:
    """A finite float, or MalformedFile naming the file and line."""
    try:
        value = float(text)
    except ValueError:
        raise MalformedFile(f"{what} {text[:40]!r} is not a number", file=file, line=line) from None
    if not math.isfinite(value):
        raise MalformedFile(f"{what} {text[:40]!r} is not finite", file=file, line=line)
    return value


def parse_int(text: str, *, file: str, line: int, what: str) -> int:
    """A positive integer (``1000`` or ``1e+03``), or MalformedFile naming the file and line."""
    try:
        value = int(text)
    except ValueError:
        number = parse_float(text, file=file, line=line, what=what)
        if number != int(number) or abs(number) > 2**62:
            raise MalformedFile(
                f"{what} {text[:40]!r} is not an integer", file=file, line=line
            ) from None
        value = int(number)
    if value < 1:
        raise MalformedFile(f"{what} {text[:40]!r} must be at least 1", file=file, line=line)
    return value


_PAIR = re.compile(r"\s*([A-Za-z_][\w ]*?)\s*=\s*('[^']*'|\"[^\"]*\"|[^,]*?)\s*(?:,|$)")


def parse_key_values(text: str, *, file: str, line: int) -> dict[str, str]:
    """Read a ``key = value, key = 'value', ...`` header line (COCO and IOHprofiler ``.info``)."""
    pairs: dict[str, str] = {}
    position = 0
    text = text.strip()
    while position < len(text):
        match = _PAIR.match(text, position)
        if match is None or match.end() == position:
            raise MalformedFile(
                f"cannot read 'key = value' pairs from {text[position : position + 40]!r}",
                file=file,
                line=line,
            )
        key, value = match[1].strip(), match[2]
        if value[:1] in "'\"" and len(value) >= 2:
            value = value[1:-1]
        pairs[key] = value
        position = match.end()
    return pairs


class UploadIndex(dict[str, UploadedFile]):
    """The upload's files by path, and where to find the file an index names.

    :meth:`resolve` tries the exact path (relative to the index's folder, Windows separators
    allowed); else a unique case-insensitive match; else a unique file with that name anywhere
    in the upload (archives re-packed by hand). None when absent or ambiguous.
    """

    def __init__(self, files: Iterable[UploadedFile]) -> None:
        super().__init__((f.path, f) for f in files)
        self._folded: dict[str, list[str]] = {}
        self._named: dict[str, list[str]] = {}
        for path in sorted(self):
            self._folded.setdefault(path.lower(), []).append(path)
            self._named.setdefault(posixpath.basename(path), []).append(path)

    def resolve(self, base: str, relative: str) -> str | None:
        """The path that ``relative``, written in an index in folder ``base``, names."""
        wanted = posixpath.normpath(posixpath.join(base, relative.strip().replace("\\", "/")))
        if wanted in self:
            return wanted
        for found in (
            self._folded.get(wanted.lower()),
            self._named.get(posixpath.basename(wanted)),
        ):
            if found is not None and len(found) == 1:
                return found[0]
        return None


_DIM_IN_NAME = re.compile(r"_DIM(\d+)", re.IGNORECASE)


def check_dimension_in_name(name: str, dim: int, *, file: str, line: int | None) -> None:
    """Refuse a data file named for another dimension (``..._DIM5.dat`` under ``DIM = 10``)."""
    in_name = _DIM_IN_NAME.search(posixpath.basename(name.replace("\\", "/")))
    if in_name is not None and int(in_name[1]) != dim:
        raise MalformedFile(
            f"data file {name!r} is named for dimension {in_name[1]} but the index says "
            f"dimension {dim}: mixed dimensions",
            file=file,
            line=line,
        )


_SNIFF = 4096
"""Bytes of each file :func:`guess_format` looks at."""


def guess_format(files: Sequence[UploadedFile]) -> str | None:
    """The upload format these files look like, for a hint when another was sent (or None).

    COCO: a ``.tdat``, or an ``.info`` with ``funcId`` but no ``funcName``; IOHprofiler: a
    ``.json`` with ``scenarios`` or an ``.info`` with ``funcName``; nevergrad: a ``.csv``
    header with ``loss`` and ``optimizer_name``; long CSV: a header naming ``function_id``,
    ``run``, ``value`` and ``budget``. Only the first bytes of each file are looked at.
    """
    seen: list[str] = []
    for f in files:
        name, head = f.path.lower(), f.data[:_SNIFF]
        first = next(
            (ln for ln in head.decode("utf-8", "replace").splitlines() if ln.strip()[:1] != "#"),
            "",
        )
        header = {c.strip().lower() for c in first.split(",")}
        if name.endswith(".tdat") or (
            name.endswith(".info") and b"funcId" in head and b"funcName" not in head
        ):
            seen.append("coco")
        elif (name.endswith(".json") and b'"scenarios"' in head) or (
            name.endswith(".info") and b"funcName" in head
        ):
            seen.append("iohprofiler")
        elif {"loss", "optimizer_name"} <= header:
            seen.append("nevergrad")
        elif {"function_id", "run", "value", "budget"} <= header:
            seen.append("csv")
    return next((f for f in ("coco", "iohprofiler", "nevergrad", "csv") if f in seen), None)


def printed_tolerance(text: str) -> float:
    """Half a unit in the last printed digit of ``text`` (``"79.48"`` -> 0.005)."""
    try:
        exponent = Decimal(text.strip()).as_tuple().exponent
    except InvalidOperation:
        return 0.0
    return 0.5 * 10.0 ** int(exponent) if isinstance(exponent, int) else 0.0


def f_star(function_id: str, *, file: str, line: int | None) -> float:
    """absrank's ``f*`` for an id, or MalformedFile naming where the id came from."""
    try:
        value = get_function(function_id).f_opt
    except DomainError as exc:
        raise MalformedFile(f"{function_id} is not hosted: {exc}", file=file, line=line) from exc
    if value is None:
        raise MalformedFile(f"{function_id} has no known optimum", file=file, line=line)
    return value


def check_optimum(function_id: str, printed: str, *, file: str, line: int) -> None:
    """Refuse a file whose optimum ``printed`` disagrees with absrank's ``f*`` for the id.

    Equal means within half a unit of the last printed digit plus ``1e-12`` relative.
    """
    expected = f_star(function_id, file=file, line=line)
    value = parse_float(printed, file=file, line=line, what="Fopt")
    slack = printed_tolerance(printed) + _REL_TOLERANCE * max(abs(value), abs(expected))
    if abs(value - expected) > slack:
        raise MalformedFile(
            f"Fopt {printed} disagrees with f* = {expected!r} of {function_id}: these are not "
            f"the instances absrank hosts",
            file=file,
            line=line,
        )


def check_run(run: RunResult, values_are: ValuesAre, *, file: str, line: int | None) -> None:
    """Refuse a run the archive could not store (an ``f`` below ``f*``, an error below 0, ...).

    The archive's own rule (:func:`app.domain.archive.run_problem`), checked where the run was
    read so the refusal names the file and line rather than only the run.
    """
    problem = run_problem(run, get_function(run.function_id), values_are)
    if problem is not None:
        raise MalformedFile(
            f"{run.function_id}: {problem[1]}; is the value (values_are={values_are!r}) right?",
            file=file,
            line=line,
        )


@dataclass(frozen=True)
class Step:
    """One record of a run: evaluations spent and the best value so far."""

    evaluations: int
    best: float


def step_trajectory(steps: Sequence[Step]) -> Trajectory:
    """The best-so-far step function of a run's records (any order, repeats allowed).

    Records are sorted by evaluations; the running minimum is kept; only improvements and the
    last record (the budget) stay, so ``best_at`` is unchanged and the rows are few.
    """
    ordered = sorted(steps, key=lambda s: (s.evaluations, s.best))
    evaluations: list[int] = []
    best: list[float] = []
    for step in ordered:
        if evaluations and step.evaluations == evaluations[-1]:
            best[-1] = min(best[-1], step.best)
        elif not best or step.best < best[-1]:
            evaluations.append(step.evaluations)
            best.append(step.best)
    last = ordered[-1].evaluations
    if evaluations[-1] != last:
        evaluations.append(last)
        best.append(best[-1])
    return Trajectory(tuple(evaluations), tuple(best))


def number_runs(runs: Iterable[RunResult]) -> tuple[RunResult, ...]:
    """Give each run its id, 0, 1, ... per function in the given (file) order; sort the set."""
    counts: dict[str, int] = {}
    numbered = []
    for run in runs:
        index = counts.get(run.function_id, 0)
        counts[run.function_id] = index + 1
        numbered.append(replace(run, run=index))
    return tuple(sorted(numbered, key=lambda r: (r.function_id, r.run)))


def declared_or(values_are: ValuesAre | None, known: ValuesAre, *, format_name: str) -> ValuesAre:
    """The values a self-describing format holds, refusing a contradicting declaration."""
    if values_are is not None and values_are != known:
        what = "errors f - f*" if known == "error" else "objective values f"
        raise InvalidInput(
            f"{format_name} files hold {what}; values_are={values_are!r} contradicts them "
            f"(leave it out or send {known!r})",
            field="values_are",
        )
    return known
