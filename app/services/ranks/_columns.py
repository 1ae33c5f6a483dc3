"""The answer's per-value items as columns: no object per value on the hot path.

:class:`RankColumns` holds the columns of ``RankResponse.results`` (one entry per value) and
writes them as the JSON bytes ``pydantic_core.to_json`` writes for the list of ``RankItem``
dicts that :meth:`RankColumns.items` makes (the shape the endpoint has always sent), without
making those dicts: every float column is formatted by one ``to_json`` call (the same encoder,
so the same digits), cut at its commas and laid out, a fixed-width row per item, with numpy;
the padding is then dropped (from :data:`COLUMNAR_FROM` values; below, the dicts are
cheaper). ``tests/unit/services/ranks_reference.py`` keeps the per-value implementation this
replaces, and the property tests compare the two.
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


COLUMNAR_FROM = 50_000
"""From this many values :meth:`RankColumns.json` lays the columns out with numpy
(bench/ranks_load.py: below it the dicts + ``to_json`` take less CPU; 1.6x less at 10^3, 1.4x
at 10^4, 1.1x more at 10^5)."""

_MAX_TOKEN = 24
"""The longest JSON text of a float (``-2.2250738585072014e-308``) or null."""
_SENTINEL = "#" * _MAX_TOKEN
"""The last entry of the flat column: its text is longer than any float's (see _tokens)."""


def _tokens(column: list[Any]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where the JSON text of every entry of ``column`` (floats or None, then
    :data:`_SENTINEL`) begins in ``to_json(column)`` and how long it is; and that text, as a
    uint8 array. No entry's text but the sentinel's holds a comma, and the sentinel makes
    every window of :data:`_MAX_TOKEN` bytes from an entry's start lie inside the text."""
    buf = np.frombuffer(to_json(column), dtype=np.uint8)
    commas = np.flatnonzero(buf == ord(","))
    starts = np.concatenate(([1], commas + 1))
    lengths = np.concatenate((commas, [len(buf) - 1])) - starts
    return buf, starts[:-1], lengths[:-1]


def _categories(a: np.ndarray) -> tuple[list[str], np.ndarray]:
    """The distinct strings of ``a`` and the index of each entry's (``np.unique`` without its
    string sort: the entries are keyed by a weighted sum of their code points, and the keys
    are checked to tell the strings apart, else ``np.unique`` decides)."""
    u = np.ascontiguousarray(a, dtype=str)
    width = u.dtype.itemsize // 4
    if len(u) == 0 or width == 0:
        names, which = np.unique(u, return_inverse=True)
        return names.tolist(), which.reshape(-1)
    points = u.view(np.uint32).reshape(len(u), width).astype(np.float64)
    keys = points @ np.random.default_rng(0).uniform(1.0, 2.0, width)
    _, first, which = np.unique(keys, return_index=True, return_inverse=True)
    which = which.reshape(-1)
    if not (u[first][which] == u).all():  # two strings share a key
        names, which = np.unique(u, return_inverse=True)
        return names.tolist(), which.reshape(-1)
    return u[first].tolist(), which


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
        """``to_json(self.items())``: below :data:`COLUMNAR_FROM` values exactly that (one
        dict per value, serialized in Rust, is the fastest there), from there on made from
        the columns with numpy (no object per value: the dicts' cost grows faster than
        linearly, with the garbage collector's passes over them)."""
        if len(self.value) < COLUMNAR_FROM:
            return to_json(self.items())
        return self.columnar_json()

    def columnar_json(self) -> bytes:
        """``to_json(self.items())`` laid out from the columns with numpy, whatever ``n``."""
        n = len(self.value)
        if n == 0:
            return b"[]"
        flat: list[Any] = [None] * (7 * n + 1)
        for j, col in enumerate(self._sent()):
            flat[j : 7 * n : 7] = col
        flat[-1] = _SENTINEL
        buf, starts, lengths = _tokens(flat)
        if int(lengths.max()) > _MAX_TOKEN:
            raise ValueError("a float longer than _MAX_TOKEN characters")
        starts, lengths = starts.reshape(n, 7), lengths.reshape(n, 7)
        names, which = _categories(self.method)
        methods = _literal([to_json(m) for m in names])
        ends = _literal([_END, _END_PROVISIONAL])
        widths = lengths.max(axis=0).tolist()
        widths.insert(3, methods.shape[1])
        # one row per item: key, column, key, column, ..., the end; then only the bytes kept
        size = sum(len(k) for k in _KEYS) + sum(widths) + ends.shape[1]
        template = np.zeros(size, dtype=np.uint8)
        at, spans = 0, []
        for key, width in zip(_KEYS, widths, strict=True):
            template[at : at + len(key)] = np.frombuffer(key, dtype=np.uint8)
            spans.append(at + len(key))
            at += len(key) + width
        rows = np.tile(template, (n, 1))
        keep = np.tile(template != 0, (n, 1))
        for j, at in enumerate(spans):
            w = widths[j]
            if j == 3:
                picked = methods[which]
                rows[:, at : at + w] = picked
                keep[:, at : at + w] = picked != 0
                continue
            k = j if j < 3 else j - 1
            rows[:, at : at + w] = sliding_window_view(buf, w)[starts[:, k]]
            np.less(np.arange(w), lengths[:, k, None], out=keep[:, at : at + w])
        end = ends[0] if self.provisional is None else ends[self.provisional.astype(np.intp)]
        rows[:, size - ends.shape[1] :] = end
        keep[:, size - ends.shape[1] :] = end != 0
        text: bytes = rows[keep].tobytes()
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
