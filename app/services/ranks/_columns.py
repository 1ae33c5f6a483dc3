"""The answer's per-value items as columns: no object per value on the hot path.

:class:`RankColumns` holds the columns of ``RankResponse.results`` (one entry per value) and
writes them as the JSON bytes ``pydantic_core.to_json`` writes for the list of ``RankItem``
dicts that :meth:`RankColumns.items` makes (the shape the endpoint has always sent), without
making those dicts: the float columns are written row by row by one ``orjson.dumps`` of an
``(n, 7)`` array (its shortest round-trip floats are ``to_json``'s digits, byte for byte), and
one ``bytes % keys`` puts the keys, the method and the ends of the items between the numbers
(:meth:`RankColumns.json`), for every size.
``tests/unit/services/ranks_reference.py`` keeps the per-value implementation this replaces,
and the property tests compare the two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import orjson
from pydantic_core import to_json

from app.domain import absrank
from app.schemas.ranks import RankResponse

_METHOD = re.compile(r"[a-z][a-z-]*")
"""A method name (:data:`app.domain.absrank.METHODS`, ``nested-``): written as it is."""

# the texts between the numbers of one item, in RankItem's key order: after value, v,
# log10_v (+ the method: _method_key), log10_lo, log10_hi, v_lo, v_hi (+ the end of the item,
# _BETWEEN)
_SEPARATORS = (
    b',"v":',
    b',"log10_v":',
    b"",
    b',"log10_hi":',
    b',"v_lo":',
    b',"v_hi":',
    b"",
)
_ENDS = np.array([b"}}", b'},"provisional":true}'], dtype=object)
"""The end of an item: interval and item closed, ``provisional: true`` or not."""
_BETWEEN = _ENDS + b',{"value":'


def _pow10(x: np.ndarray) -> np.ndarray:
    """``10.0**x`` per entry as Python computes it (numpy's vectorized power may differ in
    the last bit, and these digits are sent): the one per-value step, in a C loop."""
    return np.fromiter(map((10.0).__pow__, x.tolist()), dtype=np.float64, count=len(x))


@dataclass(frozen=True)
class RankColumns:
    """``RankResponse.results`` as columns (``n`` values).

    Attributes
    ----------
    value : list of float
        The values as sent (their digits are echoed).
    v, log10_v, log10_lo, log10_hi : ndarray of float64, shape (n,)
        The rank and its interval (``log10``; a non-finite ``log10`` is sent as null, its
        ``v_lo``/``v_hi`` as 0).
    method : ndarray of str, shape (n,)
        How each ``v1`` was obtained.
    provisional : ndarray of bool, shape (n,), optional
        The ranks that await the ladder: no lower end, and ``provisional: true``.
    """

    value: list[float]
    v: np.ndarray
    log10_v: np.ndarray
    method: np.ndarray
    log10_lo: np.ndarray
    log10_hi: np.ndarray
    provisional: np.ndarray | None = None

    def __post_init__(self) -> None:
        # the typed check of every column (one model per value would cost ~45% of the
        # endpoint): floats of the right length, finite values, known method names
        n = len(self.value)
        if not np.isfinite(np.asarray(self.value, dtype=np.float64)).all():
            raise TypeError("RankColumns.value: finite floats")
        for name in ("v", "log10_v", "log10_lo", "log10_hi"):
            col = getattr(self, name)
            if not isinstance(col, np.ndarray) or col.dtype != np.float64 or col.shape != (n,):
                raise TypeError(f"RankColumns.{name}: float64 array of shape ({n},)")
        if self.method.shape != (n,) or not all(
            isinstance(m, str) and _METHOD.fullmatch(m) for m in set(self.method.tolist())
        ):
            raise TypeError("RankColumns.method: method names")
        p = self.provisional
        if p is not None and (p.dtype != np.bool_ or p.shape != (n,)):
            raise TypeError(f"RankColumns.provisional: bool array of shape ({n},)")

    @classmethod
    def of(
        cls, values: list[float], res: absrank.RankResult, provisional: np.ndarray | None = None
    ) -> RankColumns:
        """The columns of ``res`` for ``values``; ``provisional`` (a mask) marks the ranks
        that await the ladder (``None`` or no mark: none do)."""
        marked = None if provisional is None or not provisional.any() else provisional
        return cls(
            list(values),
            np.asarray(res.v, dtype=np.float64),
            np.asarray(res.log10_v, dtype=np.float64),
            np.asarray(res.method),
            np.asarray(res.log10_lo, dtype=np.float64),
            np.asarray(res.log10_hi, dtype=np.float64),
            None if marked is None else np.asarray(marked, dtype=bool),
        )

    def __len__(self) -> int:
        return len(self.value)

    def _sent(self) -> tuple[np.ndarray, ...]:
        """The sent float columns: v, log10_v, log10_lo, log10_hi, v_lo, v_hi (NaN, sent as
        null, where a ``log10`` is not finite or for the lower end of a provisional rank; then
        ``v_lo``/``v_hi`` are 0)."""
        lo, hi = self.log10_lo, self.log10_hi
        no_lo = ~np.isfinite(lo)
        if self.provisional is not None:  # a tail model bounds v only from above (METHODS.md)
            no_lo = no_lo | self.provisional
        no_hi = ~np.isfinite(hi)
        v_lo = _pow10(np.where(no_lo, 0.0, lo))
        v_lo[no_lo] = 0.0
        v_hi = _pow10(np.where(no_hi, 0.0, hi))
        v_hi[no_hi] = 0.0
        lv = self.log10_v
        return (
            self.v,
            np.where(np.isfinite(lv), lv, np.nan),
            np.where(no_lo, np.nan, lo),
            np.where(no_hi, np.nan, hi),
            v_lo,
            v_hi,
        )

    def items(self) -> list[dict[str, Any]]:
        """One ``RankItem`` dict per value (for callers that read items; the endpoint sends
        :meth:`json`)."""
        v, log10_v, lo, hi, v_lo, v_hi = (_plain(c) for c in self._sent())
        value = self.value
        marks = [False] * len(value) if self.provisional is None else self.provisional.tolist()
        out: list[dict[str, Any]] = []
        for row in zip(
            value, v, log10_v, self.method.tolist(), lo, hi, v_lo, v_hi, marks, strict=True
        ):
            item: dict[str, Any] = {
                "value": row[0],
                "v": row[1],
                "log10_v": row[2],
                "method": row[3],
                "interval": {
                    "log10_lo": row[4],
                    "log10_hi": row[5],
                    "v_lo": row[6],
                    "v_hi": row[7],
                },
            }
            if row[8]:
                item["provisional"] = True
            out.append(item)
        return out

    def json(self, prefix: bytes = b"", suffix: bytes = b"") -> bytes:
        """``prefix + to_json(self.items()) + suffix`` without a dict per value.

        The seven float columns are written row by row by one ``orjson.dumps`` of the
        ``(n, 7)`` table (the same shortest round-trip digits as ``to_json``; NaN as null).
        Its commas become ``%s`` and one ``bytes % keys`` puts the text between two numbers
        in their place: the keys of the next column, the method's (one text per method name)
        or the end of an item and the start of the next (``provisional: true`` or not). C
        loops only, one output buffer.
        """
        n = len(self.value)
        if n == 0:
            return prefix + b"[]" + suffix
        v, log10_v, lo, hi, v_lo, v_hi = self._sent()
        table = np.empty((n, 7), dtype=np.float64)
        table[:, 0] = self.value
        for j, column in enumerate((v, log10_v, lo, hi, v_lo, v_hi), start=1):
            table[:, j] = column
        numbers = orjson.dumps(table.ravel(), option=orjson.OPT_SERIALIZE_NUMPY)[1:-1]
        marks = (
            np.zeros(n, dtype=np.intp)
            if self.provisional is None
            else self.provisional.astype(np.intp)
        )
        names = self.method.tolist()
        keys = {m: _method_key(m) for m in set(names)}
        seps = np.empty((n, 7), dtype=object)
        for j, key in enumerate(_SEPARATORS):
            seps[:, j] = key
        seps[:, 2] = list(map(keys.__getitem__, names))
        seps[:, 6] = _BETWEEN[marks]
        template = b"".join(
            (
                prefix.replace(b"%", b"%%"),
                b'[{"value":',
                numbers.replace(b",", b"%s"),
                _ENDS[marks[-1]],
                b"]",
                suffix.replace(b"%", b"%%"),
            )
        )
        out: bytes = template % tuple(seps.ravel()[:-1].tolist())
        return out


def _method_key(method: str) -> bytes:
    """The text between ``log10_v`` and ``log10_lo`` for ``method`` (it matches
    :data:`_METHOD`: no character to escape)."""
    return b',"method":' + orjson.dumps(method) + b',"interval":{"log10_lo":'


def _plain(column: np.ndarray) -> list[float | None]:
    """A float column as Python floats, NaN as None."""
    out: list[float | None] = column.tolist()
    for i in np.flatnonzero(np.isnan(column)).tolist():
        out[i] = None
    return out


@dataclass(frozen=True)
class RankAnswer:
    """The body of ``RankResponse`` with its ``results`` as columns.

    ``body`` holds every key of the answer in order, ``results`` included (a
    :class:`RankColumns`, or the empty list of ``runs_by_algorithm``).
    """

    body: dict[str, Any]

    @property
    def results(self) -> RankColumns | None:
        out = self.body["results"]
        return out if isinstance(out, RankColumns) else None

    def envelope(self) -> RankResponse:
        """The answer without its per-value items (``results`` and every ``per_run`` empty),
        validated by :class:`RankResponse` (``pydantic.ValidationError`` if the service built
        another shape; the items are checked as columns, :class:`RankColumns`)."""
        envelope = self.body | {"results": []}
        algorithms = envelope.get("algorithms")
        if algorithms is not None:
            envelope["algorithms"] = [a | {"per_run": []} for a in algorithms]
        return RankResponse.model_validate(envelope)

    def plain(self) -> dict[str, Any]:
        """The body in plain JSON types (``results`` as one dict per value)."""
        cols = self.results
        return self.body if cols is None else self.body | {"results": cols.items()}

    def json(self) -> bytes:
        """``to_json(self.plain())``: the envelope's keys by ``to_json``, the items from the
        columns."""
        cols = self.results
        if cols is None:
            return to_json(self.body)
        keys = list(self.body)
        at = keys.index("results")
        head = to_json({k: self.body[k] for k in keys[:at]})
        tail = to_json({k: self.body[k] for k in keys[at + 1 :]})
        # both are non-empty objects: "{...}" without spaces
        return cols.json(head[:-1] + b',"results":', (b"," + tail[1:]) if len(tail) > 2 else b"}")
