"""The answer's per-value items as columns: no object per value on the hot path.

:class:`RankColumns` holds the columns of ``RankResponse.results`` (one entry per value) and
writes them as the JSON bytes ``pydantic_core.to_json`` writes for the list of ``RankItem``
dicts that :meth:`RankColumns.items` makes (the shape the endpoint has always sent), without
making those dicts: every float column is formatted by one ``to_json`` call (the same encoder,
so the same digits), cut at its commas and laid out, a fixed-width row per item, with numpy;
the padding is then dropped. ``tests/unit/ranks_reference.py`` keeps the per-value
implementation this replaces, and the property tests compare the two.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from pydantic_core import to_json

from app.domain import absrank

_METHOD = re.compile(r"[a-z][a-z-]*")
"""A method name (:data:`app.domain.absrank.METHODS`, ``nested-``): written as it is."""

# the bytes around each column in one item, in RankItem's key order
_KEYS = (
    b'{"value":',
    b',"v":',
    b',"log10_v":',
    b',"method":',
    b',"interval":{"log10_lo":',
    b',"log10_hi":',
    b',"v_lo":',
    b',"v_hi":',
)
_END = b"}},"
_END_PROVISIONAL = b'},"provisional":true},'


def _pow10(x: list[float]) -> list[float]:
    """``10.0**x`` per entry as Python computes it (numpy's vectorized power may differ in
    the last bit, and these digits are sent)."""
    return list(map((10.0).__pow__, x))


def _tokens(column: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    """The JSON text of every entry (floats or None) of ``column``, as ``to_json`` writes it,
    zero-padded to the longest (an ``(n, width)`` uint8 array), and the lengths."""
    text = to_json(column)
    buf = np.frombuffer(text, dtype=np.uint8)
    commas = np.flatnonzero(buf == ord(","))
    starts = np.concatenate(([1], commas + 1))
    lengths = np.concatenate((commas, [len(buf) - 1])) - starts
    width = int(lengths.max())
    padded = np.frombuffer(text + bytes(width), dtype=np.uint8)
    out: np.ndarray = sliding_window_view(padded, width)[starts]
    out *= np.arange(width) < lengths[:, None]  # the bytes after each entry's own are 0
    return out, lengths


def _literal(strings: list[bytes]) -> np.ndarray:
    """Byte strings as rows of a zero-padded uint8 array."""
    width = max(len(s) for s in strings)
    return np.array([list(s.ljust(width, b"\0")) for s in strings], dtype=np.uint8)


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

    def _sent(self) -> tuple[list[Any], ...]:
        """The sent columns as JSON types: value, v, log10_v, log10_lo, log10_hi, v_lo, v_hi
        (``None`` where a ``log10`` is not finite, or the lower end of a provisional rank)."""
        lo, hi = self.log10_lo, self.log10_hi
        no_lo = ~np.isfinite(lo)
        if self.provisional is not None:  # a tail model bounds v only from above (METHODS.md)
            no_lo = no_lo | self.provisional
        no_hi = ~np.isfinite(hi)
        lo_list, hi_list = lo.tolist(), hi.tolist()
        v_lo = _pow10(np.where(no_lo, 0.0, lo).tolist())
        v_hi = _pow10(np.where(no_hi, 0.0, hi).tolist())
        for i in np.flatnonzero(no_lo).tolist():
            lo_list[i], v_lo[i] = None, 0.0
        for i in np.flatnonzero(no_hi).tolist():
            hi_list[i], v_hi[i] = None, 0.0
        log10_v = self.log10_v.tolist()
        for i in np.flatnonzero(~np.isfinite(self.log10_v)).tolist():
            log10_v[i] = None
        return self.value, self.v.tolist(), log10_v, lo_list, hi_list, v_lo, v_hi

    def items(self) -> list[dict[str, Any]]:
        """One ``RankItem`` dict per value (for callers that read items; the endpoint sends
        :meth:`json`)."""
        value, v, log10_v, lo, hi, v_lo, v_hi = self._sent()
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

    def json(self) -> bytes:
        """``to_json(self.items())``, made from the columns."""
        n = len(self.value)
        if n == 0:
            return b"[]"
        flat: list[Any] = [None] * (7 * n)
        for j, col in enumerate(self._sent()):
            flat[j::7] = col
        tokens, lengths = _tokens(flat)
        tokens, lengths = tokens.reshape(n, 7, -1), lengths.reshape(n, 7)
        names, which = np.unique(self.method, return_inverse=True)
        methods = _literal([to_json(str(m)) for m in names.tolist()])[which.reshape(-1)]
        ends = _literal([_END, _END_PROVISIONAL])
        end = ends[0] if self.provisional is None else ends[self.provisional.astype(np.intp)]
        widths = lengths.max(axis=0).tolist()
        columns = [tokens[:, j, : widths[j]] for j in range(7)]
        columns.insert(3, methods)
        # one row per item: key, column, key, column, ..., the end; the padding is 0
        size = sum(len(k) for k in _KEYS) + sum(c.shape[1] for c in columns) + ends.shape[1]
        rows = np.empty((n, size), dtype=np.uint8)
        at = 0
        for key, col in zip(_KEYS, columns, strict=True):
            rows[:, at : at + len(key)] = np.frombuffer(key, dtype=np.uint8)
            at += len(key)
            rows[:, at : at + col.shape[1]] = col
            at += col.shape[1]
        rows[:, at:] = end
        text = rows.tobytes().translate(None, b"\0")
        return b"[" + text[:-1] + b"]"


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

    def envelope(self) -> dict[str, Any]:
        """The body without its per-value items (``results`` empty)."""
        return self.body | {"results": []}

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
        return b"".join(
            (head[:-1], b',"results":', cols.json(), b"," if len(tail) > 2 else b"", tail[1:])
        )
