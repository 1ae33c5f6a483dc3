"""One algorithm's results on benchmark functions: the model every importer and the archive share.

An importer (:mod:`app.domain.importers`) turns a file in one of the field's formats into
:class:`ImportedResults`; the results archive stores exactly that (plus the set's metadata), and
leaderboards read it back. Nothing here knows about HTTP or the database.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from app.domain.errors import InvalidInput

__all__ = [
    "FORMATS",
    "ImportNote",
    "ImportedResults",
    "MalformedFile",
    "RunResult",
    "Trajectory",
    "TrajectoryArrays",
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


@dataclass(frozen=True, eq=False)
class TrajectoryArrays:
    """A trajectory's records as read-only arrays (:attr:`Trajectory.arrays`).

    Attributes
    ----------
    evaluations : ndarray, shape (m,)
        Evaluation counts (integers as given: int64 for Python ints).
    best : ndarray of float, shape (m,)
        Best-so-far values.
    """

    evaluations: NDArray[Any]
    best: NDArray[np.float64]


class Trajectory:
    """Best-so-far value of one run as a function of the evaluations spent (immutable).

    Attributes
    ----------
    evaluations : tuple of int
        Strictly increasing evaluation counts, each ``>= 1``.
    best : tuple of float
        The best value found within that many evaluations (same units as
        :attr:`ImportedResults.values_are`); non-increasing, finite.
    arrays : TrajectoryArrays
        The same records as read-only numpy arrays, for the numerical code.

    The checks run on numpy arrays, which the trajectory keeps. Made by :meth:`from_arrays`, it
    holds only the arrays and builds the tuples when first read: an anytime analysis of 10^6
    records never makes 10^6 Python numbers twice. Equality and hash are those of the tuples.
    """

    __slots__ = ("_arrays", "_best", "_evaluations")

    _arrays: TrajectoryArrays
    _evaluations: tuple[int, ...] | None
    _best: tuple[float, ...] | None

    def __init__(self, evaluations: tuple[int, ...], best: tuple[float, ...]) -> None:
        if len(evaluations) != len(best) or not evaluations:
            raise InvalidInput("a trajectory needs as many evaluations as values, at least one")
        self._set(np.array(evaluations), np.array(best, dtype=float))
        object.__setattr__(self, "_evaluations", tuple(evaluations))
        object.__setattr__(self, "_best", tuple(best))

    @classmethod
    def from_arrays(cls, evaluations: NDArray[Any], best: NDArray[Any]) -> Trajectory:
        """The trajectory of these arrays (checked as the constructor does; kept as copies).

        Parameters
        ----------
        evaluations : ndarray of int, shape (m,)
        best : ndarray of float, shape (m,)
        """
        e, b = np.array(evaluations).reshape(-1), np.array(best, dtype=float).reshape(-1)
        if e.size != b.size or e.size == 0:
            raise InvalidInput("a trajectory needs as many evaluations as values, at least one")
        out = cls.__new__(cls)
        out._set(e, b)
        object.__setattr__(out, "_evaluations", None)
        object.__setattr__(out, "_best", None)
        return out

    def _set(self, e: NDArray[Any], b: NDArray[np.float64]) -> None:
        if e[0] < 1 or (e[1:] <= e[:-1]).any():
            raise InvalidInput("trajectory evaluations must be >= 1 and strictly increasing")
        if (b[1:] > b[:-1]).any():
            raise InvalidInput("a trajectory's best-so-far values must not increase")
        e.setflags(write=False)
        b.setflags(write=False)
        object.__setattr__(self, "_arrays", TrajectoryArrays(e, b))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Trajectory is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Trajectory is immutable: cannot delete {name!r}")

    def __getstate__(self) -> tuple[NDArray[Any], NDArray[np.float64]]:
        return self._arrays.evaluations, self._arrays.best

    def __setstate__(self, state: tuple[NDArray[Any], NDArray[np.float64]]) -> None:
        self._set(np.array(state[0]), np.array(state[1], dtype=float))
        object.__setattr__(self, "_evaluations", None)
        object.__setattr__(self, "_best", None)

    @property
    def evaluations(self) -> tuple[int, ...]:
        """Strictly increasing evaluation counts (a tuple of Python ints)."""
        got = self._evaluations
        if got is None:
            got = tuple(self._arrays.evaluations.tolist())
            object.__setattr__(self, "_evaluations", got)
        return got

    @property
    def best(self) -> tuple[float, ...]:
        """Best-so-far values (a tuple of Python floats)."""
        got = self._best
        if got is None:
            got = tuple(self._arrays.best.tolist())
            object.__setattr__(self, "_best", got)
        return got

    @property
    def arrays(self) -> TrajectoryArrays:
        """The same records as read-only numpy arrays."""
        return self._arrays

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Trajectory):
            return NotImplemented
        return (self.evaluations, self.best) == (other.evaluations, other.best)

    def __hash__(self) -> int:
        return hash((self.evaluations, self.best))

    def __repr__(self) -> str:
        return f"Trajectory(evaluations={self.evaluations!r}, best={self.best!r})"

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
