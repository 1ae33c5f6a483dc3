"""One algorithm's results on benchmark functions: the model every importer and the archive share.

An importer (:mod:`app.domain.importers`) turns a file in one of the field's formats into
:class:`ImportedResults`; the results archive stores exactly that (plus the set's metadata), and
leaderboards read it back. Nothing here knows about HTTP or the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from app.domain.errors import InvalidInput

__all__ = [
    "FORMATS",
    "ImportNote",
    "ImportedResults",
    "MalformedFile",
    "RunResult",
    "Trajectory",
    "ValuesAre",
]

ValuesAre = Literal["f", "error"]
"""``"f"``: values are objective values ``f(x)``; ``"error"``: they are ``f(x) − f*``."""

FORMATS = ("coco", "iohprofiler", "nevergrad", "csv")
"""Upload formats of ``POST /v1/result-sets`` (``multipart/form-data`` field ``format``)."""


class MalformedFile(InvalidInput):
    """A file of an upload cannot be read (HTTP 422 naming the file and the line).

    Parameters
    ----------
    message : str
        What is wrong, for a person.
    file : str
        Path of the file inside the upload (the upload's own name for a single file).
    line : int or None
        1-based line number, when the fault is on one line.
    field : str, optional
        The request field that carried the file (default ``"file"``).
    """

    def __init__(
        self, message: str, *, file: str, line: int | None = None, field: str = "file"
    ) -> None:
        where = file if line is None else f"{file}, line {line}"
        super().__init__(f"{where}: {message}", field=field)
        self.message = message
        self.file = file
        self.line = line


@dataclass(frozen=True)
class Trajectory:
    """Best-so-far value of one run as a function of the evaluations spent.

    Attributes
    ----------
    evaluations : tuple of int
        Strictly increasing evaluation counts, each ``>= 1``.
    best : tuple of float
        The best value found within that many evaluations (same units as
        :attr:`ImportedResults.values_are`); non-increasing, finite.
    """

    evaluations: tuple[int, ...]
    best: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.evaluations) != len(self.best) or not self.evaluations:
            raise InvalidInput("a trajectory needs as many evaluations as values, at least one")
        if self.evaluations[0] < 1 or any(
            b <= a for a, b in zip(self.evaluations, self.evaluations[1:], strict=False)
        ):
            raise InvalidInput("trajectory evaluations must be >= 1 and strictly increasing")
        if any(b > a for a, b in zip(self.best, self.best[1:], strict=False)):
            raise InvalidInput("a trajectory's best-so-far values must not increase")

    def best_at(self, budget: int) -> float | None:
        """The best value within ``budget`` evaluations; ``None`` before the first record."""
        best: float | None = None
        for e, b in zip(self.evaluations, self.best, strict=True):
            if e > budget:
                break
            best = b
        return best


@dataclass(frozen=True)
class RunResult:
    """One run of an algorithm on one function.

    Attributes
    ----------
    function_id : str
        absrank id of the function, e.g. ``"bbob/f1/i1/d10"``.
    run : int
        Index of the run on that function (0-based, unique per function within a set).
    value : float
        Final best value (``f`` or error, see :attr:`ImportedResults.values_are`), finite.
    budget : int
        Evaluations the run used (``>= 1``).
    trajectory : Trajectory or None
        Evaluations → best so far, when the source records it; its last value is ``value``.
    """

    function_id: str
    run: int
    value: float
    budget: int
    trajectory: Trajectory | None = None


@dataclass(frozen=True)
class ImportNote:
    """Something an importer did that the user should know (a typed warning, never parsed).

    Attributes
    ----------
    code : str
        Stable identifier, e.g. ``"coco-no-final-line"``.
    message : str
        For a person.
    file : str or None
        The file it concerns.
    """

    code: str
    message: str
    file: str | None = None


@dataclass(frozen=True)
class ImportedResults:
    """What an importer read: runs in absrank's terms.

    Attributes
    ----------
    format : str
        One of :data:`FORMATS`.
    values_are : {"f", "error"}
        Whether :attr:`RunResult.value` (and trajectories) are ``f`` or ``f − f*``.
    runs : tuple of RunResult
        Ordered by ``(function_id, run)``.
    algorithm : str or None
        The algorithm's name as the files give it (COCO ``algId``, IOHprofiler ``algorithm``).
    notes : tuple of ImportNote
        Warnings about what was read.
    """

    format: str
    values_are: ValuesAre
    runs: tuple[RunResult, ...]
    algorithm: str | None = None
    notes: tuple[ImportNote, ...] = ()
