"""What every result of :mod:`absrank_client.models` is made of: the JSON and row types,
the service's warnings, the JSON number readers (``num``, ``log10_of``), the table
conversions (``rows()``, ``to_frame()``) and a job's progress."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Self

JSON = Mapping[str, Any]
Cell = str | int | float | bool | list[float] | None
"""A value in a flat result row (``list[float]``: an F test's two degrees of freedom)."""
Row = dict[str, Cell]
"""One row of :meth:`rows` / ``to_frame()``: column name → value."""


@dataclass(frozen=True)
class ServiceWarning:
    """A warning of the service, given once however often it arose.

    Attributes
    ----------
    message : str
        What happened, in words.
    count : int
        How many times it arose (e.g. once per cell of a comparison).
    problems : tuple of str
        The problems (function ids) it concerns, where the service names them.
    """

    message: str
    count: int = 1
    problems: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"[{', '.join(self.problems)}] " if self.problems else ""
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"{where}{self.message}{times}"

    @classmethod
    def parse(cls, item: str | JSON) -> ServiceWarning:
        """From a plain string or a ``{message, count, problems}`` object."""
        if isinstance(item, str):
            return cls(item)
        return cls(
            str(item.get("message", "")),
            int(item.get("count", 1)),
            tuple(str(p) for p in item.get("problems") or ()),
        )


def _warnings(*lists: Sequence[str | JSON] | None) -> tuple[ServiceWarning, ...]:
    return tuple(ServiceWarning.parse(w) for items in lists for w in items or ())


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "to_frame() needs pandas, which absrank-client does not install by default: "
            "pip install 'absrank-client[pandas]'"
        ) from None
    return pd


def num(x: Any) -> Any:
    """JSON number or the strings ``"Infinity"``/``"-Infinity"`` -> float; None stays None."""
    if x == "Infinity":
        return math.inf
    if x == "-Infinity":
        return -math.inf
    return x


def log10_of(doc: JSON, name: str) -> float | None:
    """``doc['log10_<name>']`` when the server sent it, else ``log10(doc[name])`` (None at 0)."""
    key = f"log10_{name}"
    if key in doc:
        return None if doc[key] is None else float(doc[key])
    p = num(doc.get(name))
    if not isinstance(p, int | float) or isinstance(p, bool) or p <= 0 or math.isnan(p):
        return None
    return math.log10(p)


def _names(algorithms: Sequence[str], indices: Sequence[Any]) -> tuple[str, ...]:
    return tuple(algorithms[i] if isinstance(i, int) else str(i) for i in indices)


class _Tabular:
    """``rows()`` (flat dicts) and ``to_frame()`` (the same as a pandas DataFrame)."""

    def rows(self) -> list[Row]:
        """The result as a list of flat dicts (one per row of :meth:`to_frame`)."""
        raise NotImplementedError

    def to_frame(self) -> Any:
        """The result as a ``pandas.DataFrame`` (rows as in :meth:`rows`)."""
        return _pandas().DataFrame(self.rows())


class _Row(_Tabular):
    """A single item: one row, ``row()``."""

    def row(self) -> Row:
        raise NotImplementedError

    def rows(self) -> list[Row]:
        return [self.row()]


@dataclass(frozen=True)
class _Page(_Tabular):
    """A page of items: ``total`` counts every match, ``items`` this page, one row each."""

    total: int
    items: tuple[Any, ...]
    raw: JSON = field(repr=False)

    @staticmethod
    def _item(raw: JSON) -> Any:
        raise NotImplementedError

    @classmethod
    def parse(cls, raw: JSON) -> Self:
        items = tuple(cls._item(i) for i in raw.get("items", ()))
        return cls(int(raw.get("total", len(items))), items, raw)

    def rows(self) -> list[Row]:
        return [i.row() for i in self.items]


@dataclass(frozen=True)
class Progress:
    """Chunks done out of the total (``fraction`` = done/total)."""

    done: int
    total: int
    fraction: float

    @classmethod
    def parse(cls, raw: JSON | None) -> Progress | None:
        if not raw:
            return None
        done, total = int(raw.get("done", 0)), int(raw.get("total", 0))
        fraction = raw.get("fraction")
        return cls(done, total, float(fraction) if fraction is not None else done / max(total, 1))
