"""Scrambled Sobol chunks and sampling regions for v tables.

A table of ``N = 2^m`` samples is split into chunks of ``B = 2^b`` consecutive Sobol indices; chunk
``j`` covers indices ``[j·B, (j+1)·B)`` of the sequence ``scipy.stats.qmc.Sobol(d, scramble=True,
rng=seed)``. Every chunk is generated from a fresh engine (``fast_forward(j·B)`` for ``j > 0``), so
any number of workers on any number of machines produce the same table bit for bit, in any order.

The seed keyword is recorded (:data:`SOBOL_SEED_KEYWORD`): since SciPy 1.15 ``rng=seed`` seeds a
``numpy.random.Generator`` while the legacy ``seed=`` keyword gives *different* points.

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking Optimization
       Algorithms (Eq. 28 is estimated from these samples; §V for the region ``[x* − δ, x* + δ]``).
.. [2] scipy.stats.qmc.Sobol (``random_base2``, ``fast_forward``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from scipy.stats import qmc

from app.domain.errors import InvalidInput

__all__ = [
    "SOBOL_BITS",
    "SOBOL_SEED_KEYWORD",
    "Box",
    "ChunkResult",
    "MergedTable",
    "chunk_plan",
    "evaluate_chunk",
    "evaluate_intersected_chunk",
    "evaluate_oriented_chunk",
    "merge_chunk_results",
    "oriented_box_points",
    "region_box",
    "scale_to_box",
    "sobol_chunk",
    "sobol_chunks",
]

#: Keyword under which the seed is passed to ``scipy.stats.qmc.Sobol`` (recorded in table specs).
SOBOL_SEED_KEYWORD = "rng"
#: Bits of the Sobol engine (SciPy's default): at most ``2**SOBOL_BITS`` points per sequence.
SOBOL_BITS = 30


class Box(NamedTuple):
    """An axis-aligned box ``[lower, upper]`` (unpacks as ``lo, hi``).

    Attributes
    ----------
    lower, upper : ndarray, shape (d,)
        Its corners, ``lower < upper``.
    """

    lower: np.ndarray
    upper: np.ndarray


class MergedTable(NamedTuple):
    """The joined chunks of one table (:func:`merge_chunk_results`; unpacks as a triple).

    Attributes
    ----------
    values : ndarray, shape (N,)
        All values in Sobol index order.
    low_x : ndarray, shape (k, d)
        Points of the ``k`` lowest samples ordered by ``(value, Sobol index)``.
    low_values : ndarray, shape (k,)
        Their values.
    """

    values: np.ndarray
    low_x: np.ndarray
    low_values: np.ndarray


def _is_power_of_two(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _check_int(value: object, field: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidInput(f"{field} must be an integer, got {value!r}", field=field)
    if int(value) < minimum:
        raise InvalidInput(f"{field} must be >= {minimum}, got {value}", field=field)
    return int(value)


def _check_power_of_two(value: object, field: str) -> int:
    n = _check_int(value, field, minimum=1)
    if not _is_power_of_two(n):
        raise InvalidInput(f"{field} must be a power of 2, got {n}", field=field)
    return n


def chunk_plan(n: int, chunk_size: int) -> int:
    """Number of chunks of a table.

    Parameters
    ----------
    n : int
        Total number of Sobol samples ``N``; a power of 2, at most ``2**SOBOL_BITS``.
    chunk_size : int
        Samples per chunk ``B``; a power of 2 with ``B <= N``.

    Returns
    -------
    int
        ``N // B``; chunk ``j`` covers Sobol indices ``[j·B, (j+1)·B)``.

    Raises
    ------
    InvalidInput
        ``n`` or ``chunk_size`` is not a power of 2, ``chunk_size > n`` or ``n`` exceeds the engine.
    """
    n = _check_power_of_two(n, "n")
    size = _check_power_of_two(chunk_size, "chunk_size")
    if n > 2**SOBOL_BITS:
        raise InvalidInput(f"n must be <= 2**{SOBOL_BITS}, got {n}", field="n")
    if size > n:
        raise InvalidInput(f"chunk_size {size} exceeds n {n}", field="chunk_size")
    return n // size


def sobol_chunk(dim: int, seed: int, index: int, size: int) -> np.ndarray:
    """Points ``[index·size, (index+1)·size)`` of the scrambled Sobol sequence.

    Parameters
    ----------
    dim : int
        Dimension ``d >= 1``.
    seed : int
        Non-negative seed, passed as ``Sobol(dim, scramble=True, rng=seed)``.
    index : int
        Chunk index ``j >= 0``.
    size : int
        Chunk size ``B``, a power of 2.

    Returns
    -------
    U : ndarray, shape (size, dim)
        Points in ``[0, 1)^d``, in Sobol index order.

    Raises
    ------
    InvalidInput
        A parameter is not a valid integer, ``size`` is not a power of 2, or the chunk runs past
        ``2**SOBOL_BITS`` points.

    Notes
    -----
    Chunk 0 draws ``random_base2(log2 B)``; chunk ``j > 0`` calls ``fast_forward(j·B)`` (never
    ``fast_forward(0)``, which SciPy rejects) and then ``random(B)``: after a fast-forward
    ``random_base2`` would refuse ``(j+1)·B`` that is not a power of 2, and ``random`` does not warn
    because the engine has already generated points. Concatenating chunks ``0..N/B − 1`` equals
    ``Sobol(dim, scramble=True, rng=seed).random_base2(log2 N)`` byte for byte.

    Examples
    --------
    >>> import numpy as np
    >>> from scipy.stats import qmc
    >>> whole = qmc.Sobol(2, scramble=True, rng=7).random_base2(3)
    >>> parts = [sobol_chunk(2, 7, j, 4) for j in range(2)]
    >>> bool(np.array_equal(np.concatenate(parts), whole))
    True
    """
    dim = _check_int(dim, "dim", minimum=1)
    seed = _check_int(seed, "seed", minimum=0)
    index = _check_int(index, "index", minimum=0)
    size = _check_power_of_two(size, "size")
    if (index + 1) * size > 2**SOBOL_BITS:
        raise InvalidInput(
            f"chunk {index} of size {size} exceeds 2**{SOBOL_BITS} points", field="index"
        )
    engine = qmc.Sobol(dim, scramble=True, rng=seed)
    # scipy ships no stubs: its float64 arrays pass through asarray unchanged (no copy)
    if index == 0:
        return np.asarray(engine.random_base2(size.bit_length() - 1), dtype=np.float64)
    engine.fast_forward(index * size)
    return np.asarray(engine.random(size), dtype=np.float64)


def sobol_chunks(dim: int, seed: int, first: int, size: int, count: int) -> Iterator[np.ndarray]:
    """Chunks ``first, first + 1, …, first + count − 1`` of the sequence, from one engine.

    Yields the arrays :func:`sobol_chunk` returns for those chunks, byte for byte (the engine
    continues where the previous chunk ended), but fast-forwards only once: a worker that
    evaluates consecutive chunks skips ``first·size`` points once instead of once per chunk.

    Parameters
    ----------
    dim, seed, size : int
        As in :func:`sobol_chunk`.
    first : int
        Index of the first chunk, ``>= 0``.
    count : int
        Number of consecutive chunks, ``>= 1``.

    Yields
    ------
    U : ndarray, shape (size, dim)
        Each chunk's points in ``[0, 1)^d``, in Sobol index order (a fresh array each).

    Raises
    ------
    InvalidInput
        As :func:`sobol_chunk`, for the last chunk.
    """
    dim = _check_int(dim, "dim", minimum=1)
    seed = _check_int(seed, "seed", minimum=0)
    first = _check_int(first, "first", minimum=0)
    count = _check_int(count, "count", minimum=1)
    size = _check_power_of_two(size, "size")
    if (first + count) * size > 2**SOBOL_BITS:
        raise InvalidInput(
            f"chunk {first + count - 1} of size {size} exceeds 2**{SOBOL_BITS} points",
            field="index",
        )
    engine = qmc.Sobol(dim, scramble=True, rng=seed)
    if first == 0:
        yield np.asarray(engine.random_base2(size.bit_length() - 1), dtype=np.float64)
    else:
        engine.fast_forward(first * size)
        yield np.asarray(engine.random(size), dtype=np.float64)
    for _ in range(count - 1):
        # the engine has generated points already: ``random`` continues without a warning
        yield np.asarray(engine.random(size), dtype=np.float64)


def _unit_points(dim: int, seed: int, index: int, size: int, unit: np.ndarray | None) -> np.ndarray:
    """``unit`` (chunk ``index``'s points from :func:`sobol_chunks`) or :func:`sobol_chunk`."""
    if unit is None:
        return sobol_chunk(dim, seed, index, size)
    if unit.shape != (size, dim) or unit.dtype != np.float64:
        raise InvalidInput(f"unit points must have shape ({size}, {dim})", field="points")
    return unit


def _as_box(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if lo.ndim != 1 or lo.shape != hi.shape or lo.size == 0:
        raise InvalidInput("lower and upper must be 1-D arrays of equal length", field="region")
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))) or np.any(hi <= lo):
        raise InvalidInput("the box must be finite with lower < upper", field="region")
    return lo, hi


def scale_to_box(U: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """Map points of ``[0, 1)^d`` affinely to the box ``[lower, upper]``.

    Parameters
    ----------
    U : array_like, shape (n, d)
        Unit-cube points.
    lower, upper : array_like, shape (d,)
        Box bounds, in the function's input units.

    Returns
    -------
    X : ndarray, shape (n, d)
        ``lower + U·(upper − lower)``.

    Raises
    ------
    InvalidInput
        Shapes do not match or the box is empty/non-finite (``field="region"``).
    """
    lo, hi = _as_box(lower, upper)
    pts = np.asarray(U, dtype=np.float64)
    if pts.ndim != 2 or pts.shape[1] != lo.size:
        raise InvalidInput(f"points must have shape (n, {lo.size})", field="points")
    # one (n, d) temporary instead of two; IEEE addition commutes, so ``U·(hi − lo) + lo`` has
    # the bytes of ``lo + U·(hi − lo)`` (recorded tables depend on them; tested)
    X = pts * (hi - lo)
    X += lo
    return np.asarray(X, dtype=np.float64)


def region_box(
    lower: np.ndarray,
    upper: np.ndarray,
    x_opt: np.ndarray | None,
    delta: float | Sequence[float] | np.ndarray | None,
) -> Box:
    """Sampling region ``[x* − δ, x* + δ] ∩ Ω`` of Jing & Liu §V, cubic or per coordinate.

    Parameters
    ----------
    lower, upper : array_like, shape (d,)
        The domain ``Ω``.
    x_opt : array_like, shape (d,) or None
        The known minimiser ``x*``.
    delta : float, array_like of shape (d,), or None
        Half-width ``δ > 0`` (input units): one number for the cube ``[x* − δ, x* + δ]^d``, or
        ``d`` numbers ``δ_i`` for the box ``Π_i [x*_i − δ_i, x*_i + δ_i]``; ``None`` means the
        whole domain. A list of ``d`` equal values gives the bytes of the scalar.

    Returns
    -------
    Box
        ``(lower, upper)`` = ``(max(lower, x* − δ), min(upper, x* + δ))``, each shape (d,).

    Raises
    ------
    InvalidInput
        ``delta`` is not a finite positive number (or ``d`` of them), ``x_opt`` is unknown or has
        the wrong shape, or the intersection with ``Ω`` is empty (``field="delta"`` /
        ``"x_opt"``).

    Examples
    --------
    >>> lo, hi = region_box([-5.0, -5.0], [5.0, 5.0], [4.5, 0.0], [1.0, 0.25])
    >>> lo.tolist(), hi.tolist()
    ([3.5, -0.25], [5.0, 0.25])
    """
    lo, hi = _as_box(lower, upper)
    if delta is None:
        return Box(lo.copy(), hi.copy())
    half = _half_widths(delta, lo.size)
    if x_opt is None:
        raise InvalidInput("a region [x* - delta, x* + delta] needs a known x_opt", field="x_opt")
    x = np.asarray(x_opt, dtype=np.float64)
    if x.shape != lo.shape or not np.all(np.isfinite(x)):
        raise InvalidInput(f"x_opt must be a finite array of shape {lo.shape}", field="x_opt")
    r_lo, r_hi = np.maximum(lo, x - half), np.minimum(hi, x + half)
    if np.any(r_hi <= r_lo):
        bad = int(np.flatnonzero(r_hi <= r_lo)[0])
        shown = half if np.ndim(half) == 0 else np.asarray(half)[bad]
        if lo[bad] <= x[bad] <= hi[bad]:  # x* is inside: the box is too thin to hold a float
            raise InvalidInput(
                f"delta = {shown} is too small: [x* - delta, x* + delta] has no width in "
                f"floating point in coordinate {bad} (x*={x[bad]})",
                field="delta",
            )
        raise InvalidInput(
            f"[x* - delta, x* + delta] does not meet the domain in coordinate {bad} "
            f"(x*={x[bad]}, delta={shown}, domain=[{lo[bad]}, {hi[bad]}])",
            field="delta",
        )
    return Box(r_lo, r_hi)


def _half_widths(delta: object, dim: int) -> float | np.ndarray:
    """``δ`` as a float (one number) or a float64 array of shape ``(dim,)``, checked."""
    if isinstance(delta, bool):
        raise InvalidInput(f"delta must be a number, got {delta!r}", field="delta")
    if isinstance(delta, int | float | np.number):
        value = float(delta)
        if not np.isfinite(value) or value <= 0:
            raise InvalidInput(f"delta must be finite and > 0, got {value}", field="delta")
        return value
    if isinstance(delta, np.ndarray) and delta.dtype.kind in "iuf":
        if delta.ndim == 0:
            return _half_widths(float(delta), dim)
    elif not isinstance(delta, Sequence) or any(
        isinstance(v, bool) or not isinstance(v, int | float | np.number) for v in delta
    ):
        raise InvalidInput(f"delta must be a number or {dim} numbers, got {delta!r}", field="delta")
    half = np.asarray(delta, dtype=np.float64)
    if half.shape != (dim,):
        raise InvalidInput(
            f"delta must be one number or {dim} numbers (one per coordinate), got {half.size}",
            field="delta",
        )
    if not np.all(np.isfinite(half)) or np.any(half <= 0):
        raise InvalidInput("every delta_i must be finite and > 0", field="delta")
    return half


@dataclass(frozen=True, eq=False)
class ChunkResult:
    """Evaluated Sobol chunk.

    Attributes
    ----------
    values : ndarray, shape (size,)
        ``f`` at the chunk's points, float64, in Sobol index order.
    low_index : ndarray, shape (k,)
        int64 positions (within the chunk) of the ``k = min(k_low, size)`` lowest values, ordered by
        ``(value, position)``.
    low_x : ndarray, shape (k, d)
        Their points, in input units.
    """

    values: np.ndarray
    low_index: np.ndarray
    low_x: np.ndarray


def _lowest(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` lowest values ordered by ``(value, position)``.

    The first ``k`` entries of ``np.argsort(values, kind="stable")`` without sorting the whole
    chunk: a partition finds the ``k``-th smallest value ``y_(k)``; every position with a value
    ``<= y_(k)`` (``k`` or more of them, with ties) is a candidate, and a stable sort of the
    candidates, taken in position order, orders them by ``(value, position)``. ``-0.0 == 0.0``
    here as in the full sort, so signed zeros keep their positions' order.
    """
    if k <= 0:
        return np.zeros(0, dtype=np.int64)
    if k >= values.size:
        return np.argsort(values, kind="stable").astype(np.int64)
    kth = values[np.argpartition(values, k - 1)[k - 1]]
    cand = np.flatnonzero(values <= kth)
    return cand[np.argsort(values[cand], kind="stable")[:k]].astype(np.int64)


def evaluate_chunk(
    f: Callable[[np.ndarray], np.ndarray],
    lower: np.ndarray,
    upper: np.ndarray,
    seed: int,
    index: int,
    size: int,
    k_low: int,
    *,
    unit: np.ndarray | None = None,
) -> ChunkResult:
    """Evaluate ``f`` on one Sobol chunk of the box ``[lower, upper]``.

    Parameters
    ----------
    f : callable
        Vectorised function, ``(n, d) -> (n,)``.
    lower, upper : array_like, shape (d,)
        The sampling region (input units).
    seed, index, size : int
        As in :func:`sobol_chunk`.
    k_low : int
        Number of lowest samples whose points are kept (``>= 0``).
    unit : ndarray, shape (size, d), optional
        The chunk's unit-cube points if already generated (:func:`sobol_chunks`); they are
        scaled in place (the array is consumed). Default: :func:`sobol_chunk`.

    Returns
    -------
    ChunkResult

    Raises
    ------
    InvalidInput
        Invalid parameters, or ``f`` returned a wrong shape or non-finite values
        (``field="values"``).
    """
    lo, hi = _as_box(lower, upper)
    k_low = _check_int(k_low, "k_low", minimum=0)
    U = _unit_points(lo.size, seed, index, size, unit)
    # scale_to_box's arithmetic (``U·(hi − lo) + lo``, same bytes) on the fresh points in place:
    # no (size, d) temporary to allocate and fault in per chunk
    U *= hi - lo
    U += lo
    return _evaluate_points(f, U, index, k_low)


def oriented_box_points(
    U: np.ndarray, center: np.ndarray, axes: np.ndarray, half_widths: np.ndarray
) -> np.ndarray:
    """Map points of ``[0, 1)^d`` affinely to the oriented box ``{c + Q·diag(h)·u : |u_k| <= 1}``.

    Parameters
    ----------
    U : array_like, shape (n, d)
        Unit-cube points.
    center : array_like, shape (d,)
        ``c`` (the box's centre, ``x*`` for a ladder level).
    axes : array_like, shape (d, d)
        ``Q``: column ``k`` is the unit direction of the box's ``k``-th axis.
    half_widths : array_like, shape (d,)
        ``h_k > 0`` along each axis.

    Returns
    -------
    X : ndarray, shape (n, d)
        ``c + ((2U − 1)·h) @ Qᵀ``.
    """
    c = np.asarray(center, dtype=np.float64)
    Q = np.asarray(axes, dtype=np.float64)
    h = np.asarray(half_widths, dtype=np.float64)
    pts = np.asarray(U, dtype=np.float64)
    if Q.shape != (c.size, c.size) or h.shape != c.shape or pts.ndim != 2 or pts.shape[1] != c.size:
        raise InvalidInput(
            "oriented box: center, axes, half_widths, points disagree", field="region"
        )
    if not (np.all(np.isfinite(Q)) and np.all(np.isfinite(h)) and np.all(h > 0)):
        raise InvalidInput("oriented box: axes, half-widths must be finite, h > 0", field="region")
    return c + ((2.0 * pts - 1.0) * h) @ Q.T


def evaluate_oriented_chunk(
    f: Callable[[np.ndarray], np.ndarray],
    center: np.ndarray,
    axes: np.ndarray,
    half_widths: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    seed: int,
    index: int,
    size: int,
    k_low: int,
    *,
    unit: np.ndarray | None = None,
) -> ChunkResult:
    """Evaluate ``f`` on one Sobol chunk of an oriented box (:func:`oriented_box_points`).

    The box must lie inside ``[lower, upper]`` (the domain); the points are clipped to it, which
    only removes rounding (an ulp) at faces the box touches. Otherwise as :func:`evaluate_chunk`
    (``unit``: the chunk's unit-cube points if already generated, read only).
    """
    lo, hi = _as_box(lower, upper)
    k_low = _check_int(k_low, "k_low", minimum=0)
    U = _unit_points(lo.size, seed, index, size, unit)
    X = oriented_box_points(U, center, axes, half_widths)
    np.clip(X, lo, hi, out=X)
    return _evaluate_points(f, X, index, k_low)


def evaluate_intersected_chunk(
    f: Callable[[np.ndarray, np.ndarray], np.ndarray],
    center: np.ndarray,
    axes: np.ndarray,
    half_widths: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    seed: int,
    index: int,
    size: int,
    k_low: int,
    *,
    unit: np.ndarray | None = None,
) -> ChunkResult:
    """One Sobol chunk of an oriented box ``B`` intersected with the domain ``[lower, upper]``.

    The chunk's points of ``B`` (:func:`oriented_box_points`, the bytes of
    :func:`evaluate_oriented_chunk` before clipping) are tested against the domain; ``f`` is
    evaluated **only** at those inside it (``lower <= x <= upper`` in every coordinate; a point
    on a face is inside), and the others get the value ``+inf`` (never evaluated: ``f`` may be
    undefined outside). Whether a point is kept depends on that point alone, so the kept set,
    and the table merged from the chunks, are the same for any chunking.

    Parameters
    ----------
    f : callable
        ``f(X, mask) -> values`` at the kept points ``X`` (shape ``(m, d)``); ``mask`` (shape
        ``(size,)``) says which of the chunk's points they are (e.g. to pick their noise).
    center, axes, half_widths
        As in :func:`oriented_box_points`.
    lower, upper : array_like, shape (d,)
        The domain.
    seed, index, size, k_low, unit
        As in :func:`evaluate_chunk` (``unit`` is read only).

    Returns
    -------
    ChunkResult
        ``values`` of shape ``(size,)`` in Sobol order, ``+inf`` where the point is outside the
        domain; the ``k_low`` lowest (``+inf`` ones last, when fewer are kept).
    """
    lo, hi = _as_box(lower, upper)
    k_low = _check_int(k_low, "k_low", minimum=0)
    U = _unit_points(lo.size, seed, index, size, unit)
    X = oriented_box_points(U, center, axes, half_widths)
    inside = np.all((X >= lo) & (X <= hi), axis=1)
    values = np.full(size, np.inf)
    if np.any(inside):
        kept = np.asarray(f(X[inside], inside), dtype=np.float64)
        if kept.shape != (int(np.count_nonzero(inside)),):
            raise InvalidInput(
                f"f returned shape {kept.shape}, expected ({int(np.count_nonzero(inside))},)",
                field="values",
            )
        if not np.all(np.isfinite(kept)):
            pos = np.flatnonzero(inside)[int(np.flatnonzero(~np.isfinite(kept))[0])]
            raise InvalidInput(
                f"f returned a non-finite value at Sobol index {int(pos) + index * size}",
                field="values",
            )
        values[inside] = kept
    low = _lowest(values, min(k_low, size))
    return ChunkResult(values=values, low_index=low, low_x=X[low])


def _evaluate_points(
    f: Callable[[np.ndarray], np.ndarray], X: np.ndarray, index: int, k_low: int
) -> ChunkResult:
    values = np.asarray(f(X), dtype=np.float64)
    if values.shape != (X.shape[0],):
        raise InvalidInput(
            f"f returned shape {values.shape}, expected ({X.shape[0]},)", field="values"
        )
    if not np.all(np.isfinite(values)):
        bad = int(np.flatnonzero(~np.isfinite(values))[0]) + index * X.shape[0]
        raise InvalidInput(f"f returned a non-finite value at Sobol index {bad}", field="values")
    low = _lowest(values, min(k_low, values.size))
    return ChunkResult(values=values, low_index=low, low_x=X[low])


def merge_chunk_results(results: Sequence[ChunkResult], k_low: int) -> MergedTable:
    """Join the chunks of one table.

    Parameters
    ----------
    results : sequence of ChunkResult
        Chunks ``0, 1, …`` in index order, all of the same size.
    k_low : int
        Number of lowest samples to keep over the whole table.

    Returns
    -------
    MergedTable
        With the fields:
    values : ndarray, shape (N,)
        All values in Sobol index order.
    low_x : ndarray, shape (k, d)
        Points of the ``k = min(k_low, N)`` lowest samples ordered by ``(value, Sobol index)``; this
        is the ``low_x`` expected by :func:`app.domain.absrank.build_table_data`.
    low_values : ndarray, shape (k,)
        Their values.

    Raises
    ------
    InvalidInput
        No chunks, unequal chunk sizes, or a chunk kept fewer than ``min(k_low, size)`` points.
    """
    if not results:
        raise InvalidInput("no chunks to merge", field="chunks")
    size = results[0].values.size
    if any(r.values.size != size for r in results):
        raise InvalidInput("all chunks must have the same size", field="chunks")
    k = min(_check_int(k_low, "k_low", minimum=0), size * len(results))
    if any(r.low_index.size < min(k, size) for r in results):
        raise InvalidInput(
            f"every chunk must keep at least {min(k, size)} low points", field="chunks"
        )
    values = np.concatenate([r.values for r in results])
    cand_index = np.concatenate([r.low_index + j * size for j, r in enumerate(results)])
    cand_values = values[cand_index]
    # the k lowest by (value, index) are among the candidates of value <= the k-th smallest
    # candidate value: sort those only (ties, -0.0 == 0.0 included, are all kept)
    sel = np.arange(cand_index.size)
    if 0 < k < cand_index.size:
        kth = cand_values[np.argpartition(cand_values, k - 1)[k - 1]]
        sel = np.flatnonzero(cand_values <= kth)
    elif k == 0:
        sel = sel[:0]
    order = sel[np.lexsort((cand_index[sel], cand_values[sel]))[:k]]
    # gather only the kept points (not a concatenation of every chunk's candidates)
    starts = np.cumsum([0] + [r.low_index.size for r in results])
    chunk = np.searchsorted(starts, order, "right") - 1
    low_x = np.empty((order.size, results[0].low_x.shape[1]), dtype=np.float64)
    for j in np.unique(chunk):
        rows = chunk == j
        low_x[rows] = results[j].low_x[order[rows] - starts[j]]
    return MergedTable(values, low_x, cand_values[order])
