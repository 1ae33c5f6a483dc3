"""The stored table of ``v1``: :class:`TableData`, its compression and its bytes."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from app.domain.errors import InvalidInput
from app.domain.validation import finite_1d as _finite_1d
from app.domain.validation import positive_int as _positive_int

if TYPE_CHECKING:
    from app.domain.absrank._logspace import CPLimits


@dataclass(frozen=True, eq=False)
class TableData:
    """Stored representation of one ``v1`` table.

    Attributes
    ----------
    n : int
        ``N``, number of samples.
    values : ndarray, shape (m,)
        Sorted distinct knot values (units of ``f``).
    counts : ndarray, shape (m,)
        int64, exact ``#{y_i <= values[j]}``; strictly increasing, ``counts[-1] == n``.
    k_exact : int
        Every distinct value among the ``k_exact`` lowest samples is a knot.
    max_interp_error : float
        Bound on ``|v_stored(t) − v_eq28(t)|`` for ``t`` in ``[y_1, y_N]`` (see
        :func:`build_table_data`); 0 when the table is exact.
    low_x : ndarray, shape (k, d)
        Points of the ``k`` lowest samples, ordered by ``(value, Sobol index)``.
    low_values : ndarray, shape (k,)
        Their values ``y_1 <= … <= y_k``.

    Notes
    -----
    An instance also carries a cache of its Clopper–Pearson limits per confidence level
    (``_cp_limits``, see :class:`CPLimits`); it is not part of the stored representation.
    """

    n: int
    values: np.ndarray
    counts: np.ndarray
    k_exact: int
    max_interp_error: float
    low_x: np.ndarray
    low_values: np.ndarray
    _cp_limits: dict[float, CPLimits] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )


def _readonly(arr: np.ndarray) -> np.ndarray:
    arr.setflags(write=False)
    return arr


def build_table_data(
    values: np.ndarray, low_x: np.ndarray, *, k_exact: int = 4096, n_knots: int = 16384
) -> TableData:
    r"""Compress ``N`` sampled values into a table that reproduces Eq. 28 within a stated bound.

    Parameters
    ----------
    values : array_like, shape (N,)
        ``f`` at the ``N`` Sobol points, in Sobol index order (units of ``f``).
    low_x : array_like, shape (k, d)
        Points of the ``k`` lowest samples ordered by ``(value, Sobol index)``, e.g. from
        :func:`app.domain.sampling.merge_chunk_results`; kept for the power-tail validity check.
    k_exact : int, optional
        Every distinct value among the ``k_exact`` lowest samples is stored exactly.
    n_knots : int, optional
        Approximate number of knots for the rest of the distribution.

    Returns
    -------
    TableData

    Raises
    ------
    InvalidInput
        Non-finite or empty ``values`` (``field="values"``), malformed ``low_x``
        (``field="low_x"``), non-positive ``k_exact``/``n_knots``.

    Notes
    -----
    Knots: every distinct value among ``y_1..y_{k_exact}``, then ``y_{k_exact + s·stride}``
    (``s = 1, 2, …``) and ``y_N``, ``stride = max(1, ceil((N − k_exact)/n_knots))``, each with its
    exact count ``#{y_i <= value}``; between consecutive knots ``a < b`` (counts ``c_a < c_b``)

    .. math:: |v_{stored}(t) - v_{eq28}(t)| \le \frac{c_b - c_a}{N + 1}, \qquad t ∈ [a, b],

    (Jing & Liu Eq. 28), and ``max_interp_error`` is its maximum over the segments that skip
    sample values. Representation and proof: docs/METHODS.md, "Sampling and tables".
    """
    y = _finite_1d(values, "values")
    pts = np.asarray(low_x, dtype=np.float64)
    k_exact = _positive_int(k_exact, "k_exact")
    n_knots = _positive_int(n_knots, "n_knots")
    if pts.ndim != 2 or pts.shape[0] > y.size or not np.all(np.isfinite(pts)):
        raise InvalidInput("low_x must be a finite (k, d) array with k <= N", field="low_x")
    n = y.size
    ys = np.sort(y, kind="stable")
    ke = min(k_exact, n)
    stride = max(1, math.ceil((n - ke) / n_knots))
    ranks = np.append(np.arange(ke + stride, n + 1, stride), n)  # 1-based order statistics
    # Only the knots' groups of equal values are located (no full-size unique/cumsum): a knot
    # value's group starts at searchsorted(…, "left") and its count #{y <= value} is
    # searchsorted(…, "right"). The stored value is the group's first element, as np.unique took
    # it: tied zeros are stored with the sign of the first of them in Sobol order.
    first = np.unique(np.searchsorted(ys, np.concatenate((ys[:ke], ys[ranks - 1])), "left"))
    knots = ys[first]
    counts = np.searchsorted(ys, knots, "right")
    # a segment skips a distinct sample value iff the next knot's group does not start right
    # after this knot's group ends
    skips = first[1:] > counts[:-1]
    gaps = np.diff(counts)[skips]
    err = float(gaps.max()) / (n + 1) if gaps.size else 0.0
    return TableData(
        n=n,
        values=_readonly(knots.astype(np.float64)),
        counts=_readonly(counts.astype(np.int64)),
        k_exact=k_exact,
        max_interp_error=err,
        low_x=_readonly(pts.copy()),
        low_values=_readonly(ys[: pts.shape[0]].copy()),
    )


_MAGIC = b"ABSRTAB\x00"
_VERSION = 1
_HEADER = struct.Struct("<8sIqqqqqd")  # magic, version, n, k_exact, m, k, d, max_interp_error


def encode_table_data(t: TableData) -> bytes:
    """Serialise a table to deterministic bytes.

    Parameters
    ----------
    t : TableData

    Returns
    -------
    bytes
        Header ``<8sIqqqqqd`` (magic ``ABSRTAB\\0``, format version 1, ``n``, ``k_exact``, ``m``
        knots, ``k`` low points, ``d``, ``max_interp_error``) followed by little-endian arrays
        ``values`` (f8, m), ``counts`` (i8, m), ``low_values`` (f8, k), ``low_x`` (f8, k·d,
        C order).
        No pickle, no timestamps: identical tables give identical bytes.
    """
    k, d = t.low_x.shape
    header = _HEADER.pack(
        _MAGIC, _VERSION, t.n, t.k_exact, t.values.size, k, d, float(t.max_interp_error)
    )
    body = [
        np.ascontiguousarray(t.values, dtype="<f8").tobytes(),
        np.ascontiguousarray(t.counts, dtype="<i8").tobytes(),
        np.ascontiguousarray(t.low_values, dtype="<f8").tobytes(),
        np.ascontiguousarray(t.low_x, dtype="<f8").tobytes(),
    ]
    return header + b"".join(body)


def decode_table_data(b: bytes) -> TableData:
    """Inverse of :func:`encode_table_data` (exact round trip).

    Parameters
    ----------
    b : bytes

    Returns
    -------
    TableData

    Raises
    ------
    InvalidInput
        Wrong magic, version or length, or inconsistent contents (``field="table"``).
    """
    raw = bytes(b)
    if len(raw) < _HEADER.size:
        raise InvalidInput("table blob is too short", field="table")
    magic, version, n, k_exact, m, k, d, err = _HEADER.unpack_from(raw)
    if magic != _MAGIC or version != _VERSION:
        raise InvalidInput(f"not an absrank table blob (version {version})", field="table")
    if min(n, k_exact, m, k, d) < 0 or len(raw) != _HEADER.size + 8 * (2 * m + k + k * d):
        raise InvalidInput("table blob has an inconsistent length", field="table")
    offsets = np.cumsum([_HEADER.size, 8 * m, 8 * m, 8 * k])
    values = np.frombuffer(raw, "<f8", m, offsets[0]).astype(np.float64)
    counts = np.frombuffer(raw, "<i8", m, offsets[1]).astype(np.int64)
    low_values = np.frombuffer(raw, "<f8", k, offsets[2]).astype(np.float64)
    low_x = np.frombuffer(raw, "<f8", k * d, offsets[3]).astype(np.float64).reshape(k, d)
    if m == 0 or counts[-1] != n or np.any(np.diff(counts) <= 0) or np.any(np.diff(values) <= 0):
        raise InvalidInput("table blob has inconsistent knots", field="table")
    return TableData(
        n=int(n),
        values=_readonly(values),
        counts=_readonly(counts),
        k_exact=int(k_exact),
        max_interp_error=float(err),
        low_x=_readonly(low_x),
        low_values=_readonly(low_values),
    )
