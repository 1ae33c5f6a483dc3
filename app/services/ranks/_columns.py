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
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import orjson
from pydantic_core import to_json

from app.domain import absrank
from app.domain.validation import float64_array
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


def _exact_pow10(x: np.ndarray) -> np.ndarray:
    """``10.0**x`` per entry by Python's own ``float.__pow__`` (a C loop over the entries)."""
    return np.fromiter(map((10.0).__pow__, x.tolist()), dtype=np.float64, count=len(x))


_PROBE = np.concatenate(
    [
        np.linspace(-330.0, 1.0, 1553),
        np.random.default_rng(20261203).uniform(-330.0, 1.0, 2048),
        np.array([0.0, -0.0, -1e-300, -5e-324, -307.9, -323.5, -324.0, -1e-16, -0.5, 1e-17]),
    ]
)
"""Exponents on which the vectorized power is checked against Python's before it is used."""

_POW_TOP = 308.0
"""Above this exponent ``10.0**x`` may overflow, which Python reports (``OverflowError``) and
numpy does not: such columns take the exact path, which raises as it always has."""


def _vector_pow_is_libm() -> bool:
    """Whether ``np.power(10.0, x)`` is ``10.0**x`` as Python computes it, entry by entry.

    CPython's ``float.__pow__`` (base 10, finite exponent) returns the C library's
    ``pow(10.0, x)``. numpy's float64 ``power`` loop is one ``npy_pow`` = ``pow`` call per
    entry too, in its baseline build; only its AVX-512 (X86_V4) variant uses SVML's
    vectorized ``pow``, whose last bits may differ. The app's numeric pin
    (:data:`app.NUMPY_DISABLED`) disables that variant unless ``ABSRANK_NATIVE_SIMD=1``, so
    the loop in use is read at import (``numpy.lib.introspect.opt_func_info``): the baseline
    one, and a check on :data:`_PROBE`, or the exact path. (glibc exports ``pow`` to numpy's
    manylinux build as its SVID-compatibility wrapper and to CPython as the plain function:
    both return the same ``__ieee754_pow`` result, the wrapper only sets ``errno`` on
    overflow and underflow, where its POSIX-mode value, ``HUGE_VAL`` or ``+0`` for a positive
    base, is the plain one's.)
    """
    try:
        from numpy.lib.introspect import opt_func_info

        loop = opt_func_info(func_name="^power$", signature="^float64$")["power"]["ddd"]
    except (ImportError, KeyError, TypeError):
        return False
    current = loop.get("current") if isinstance(loop, dict) else None
    if not isinstance(current, str) or not current.startswith("baseline"):
        return False
    return bool(np.array_equal(np.power(10.0, _PROBE), _exact_pow10(_PROBE)))


VECTOR_POW = _vector_pow_is_libm()
"""``np.power(10.0, x)`` is Python's ``10.0**x`` bit for bit here (see
:func:`_vector_pow_is_libm`); else :func:`_pow10` takes the exact per-entry path."""


def _pow10(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``10.0**x`` per entry as Python computes it (these digits are sent), ``x`` finite:
    numpy's vectorized power where it is the same function (:data:`VECTOR_POW`), else
    Python's own per entry (in a C loop)."""
    if VECTOR_POW and not (x.size and float(x.max()) > _POW_TOP):
        got: np.ndarray = np.power(10.0, x, out=out)
        return got
    exact = _exact_pow10(x)
    if out is None:
        return exact
    out[...] = exact
    return out


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
    value64 : ndarray of float64, shape (n,), optional
        ``value`` as float64, when the caller has converted it already (the service: the
        same list, converted once for the ranking and the provenance hash); checked here
        like ``value`` (finite, of the right length), not converted again.
    """

    value: list[float]
    v: np.ndarray
    log10_v: np.ndarray
    method: np.ndarray
    log10_lo: np.ndarray
    log10_hi: np.ndarray
    provisional: np.ndarray | None = None
    value64: np.ndarray | None = field(default=None, kw_only=True, repr=False, compare=False)

    def __post_init__(self) -> None:
        # the typed check of every column (one model per value would cost ~45% of the
        # endpoint): floats of the right length, finite values, known method names; what it
        # converts (the values as float64, the method names) is kept for json()
        n = len(self.value)
        value = self.value64
        if value is None:
            value = float64_array(self.value)
        elif not isinstance(value, np.ndarray) or value.dtype != np.float64:
            raise TypeError("RankColumns.value64: float64 array")
        if value.shape != (n,) or np.count_nonzero(np.isfinite(value)) != n:
            raise TypeError("RankColumns.value: finite floats")
        for name in ("v", "log10_v", "log10_lo", "log10_hi"):
            col = getattr(self, name)
            if not isinstance(col, np.ndarray) or col.dtype != np.float64 or col.shape != (n,):
                raise TypeError(f"RankColumns.{name}: float64 array of shape ({n},)")
        names = self.method.tolist() if isinstance(self.method, np.ndarray) else None
        if names is None or self.method.shape != (n,):
            raise TypeError("RankColumns.method: method names")
        distinct = set(names)  # json() writes the same bytes in any order of these
        if not all(isinstance(m, str) and _METHOD.fullmatch(m) for m in distinct):
            raise TypeError("RankColumns.method: method names")
        p = self.provisional
        if p is not None and (
            not isinstance(p, np.ndarray) or p.dtype != np.bool_ or p.shape != (n,)
        ):
            raise TypeError(f"RankColumns.provisional: bool array of shape ({n},)")
        object.__setattr__(self, "_value64", value)
        object.__setattr__(self, "_names", names)
        object.__setattr__(self, "_distinct", sorted(distinct))

    @classmethod
    def of(
        cls,
        values: list[float],
        res: absrank.RankResult,
        provisional: np.ndarray | None = None,
        *,
        value64: np.ndarray | None = None,
    ) -> RankColumns:
        """The columns of ``res`` for ``values``; ``provisional`` (a mask) marks the ranks
        that await the ladder (``None`` or no mark: none do); ``value64``: ``values`` as
        float64, if the caller has them."""
        marked = None if provisional is None or not np.count_nonzero(provisional) else provisional
        return cls(
            list(values),
            np.asarray(res.v, dtype=np.float64),
            np.asarray(res.log10_v, dtype=np.float64),
            np.asarray(res.method),
            np.asarray(res.log10_lo, dtype=np.float64),
            np.asarray(res.log10_hi, dtype=np.float64),
            None if marked is None else np.asarray(marked, dtype=bool),
            value64=value64,
        )

    def __len__(self) -> int:
        return len(self.value)

    def _table(self) -> np.ndarray:
        """The sent floats, one row per value: value, v, log10_v, log10_lo, log10_hi, v_lo,
        v_hi (NaN, sent as null, where a ``log10`` is not finite or for the lower end of a
        provisional rank; then ``v_lo``/``v_hi`` are 0), written in place."""
        n = len(self.value)
        table = np.empty((n, 7), dtype=np.float64)
        table[:, 0] = self._value64  # type: ignore[attr-defined]
        table[:, 1] = self.v
        lv, lo, hi = self.log10_v, self.log10_lo, self.log10_hi
        table[:, 2] = lv
        np.copyto(table[:, 2], np.nan, where=~np.isfinite(lv))
        no_lo = ~np.isfinite(lo)
        if self.provisional is not None:  # a tail model bounds v only from above (METHODS.md)
            no_lo |= self.provisional
        no_hi = ~np.isfinite(hi)
        for j, log10, none in ((3, lo, no_lo), (4, hi, no_hi)):
            table[:, j] = log10
            np.copyto(table[:, j], np.nan, where=none)
            _pow10(np.where(none, 0.0, log10), out=table[:, j + 2])
            np.copyto(table[:, j + 2], 0.0, where=none)
        return table

    def _sent(self) -> tuple[np.ndarray, ...]:
        """The sent float columns: v, log10_v, log10_lo, log10_hi, v_lo, v_hi (see
        :meth:`_table`)."""
        table = self._table()
        return tuple(table[:, j] for j in range(1, 7))

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
        Its commas become ``%s`` and one ``bytes % texts`` puts the text between two numbers
        in their place: the keys of the next column, the method's (one text per method name)
        or the end of an item and the start of the next (``provisional: true`` or not). C
        loops only, and few large buffers: the numbers, the template (prefix and numbers,
        commas as ``%s``; the prefix's own commas are put back as texts), the texts (one row
        of seven per value) and the output, each freed as soon as it is used: at 10^5 values
        the fresh pages the allocator faults in for them (when it has returned the last
        answer's memory to the system) are a large share of the time.
        """
        n = len(self.value)
        if n == 0:
            return prefix + b"[]" + suffix
        numbers = orjson.dumps(self._table().ravel(), option=orjson.OPT_SERIALIZE_NUMPY)
        # the template: the prefix and the numbers, each comma a "%s" (the prefix's own
        # commas put back as texts), and a last "%s" for the end
        head = prefix.replace(b"%", b"%%") + b'[{"value":'
        template = b"".join((head, memoryview(numbers)[1:-1], b"%s")).replace(b",", b"%s")
        del numbers
        # the texts: one row of seven per value, the method's and the end's per value
        distinct: list[str] = self._distinct  # type: ignore[attr-defined]
        keys = {m: _method_key(m) for m in distinct}
        texts = [*_SEPARATORS[:2], keys[distinct[0]], *_SEPARATORS[3:6], _BETWEEN[0]] * n
        if len(distinct) > 1:
            names: list[str] = self._names  # type: ignore[attr-defined]
            texts[2::7] = map(keys.__getitem__, names)
        marks = self.provisional
        if marks is not None:
            texts[6::7] = _BETWEEN[marks.view(np.uint8)].tolist()
        # after the last number: the end of the last item, the list closed, the suffix
        texts[-1] = _ENDS[int(marks[-1]) if marks is not None else 0] + b"]" + suffix
        args = (*([b","] * head.count(b",")), *texts)
        del texts
        out: bytes = template % args
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
