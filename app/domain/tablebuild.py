"""The numerics of building a v_f table from Sobol chunks (pure: no database, no settings).

A table of ``N = 2^m`` samples is cut into chunks of ``B`` Sobol indices; each chunk is
evaluated on its own (:func:`compute_chunk`, any worker, any order), the stored chunks are
joined in Sobol order (:func:`combine_chunks`) and compressed into the table data
(:func:`build_table`); :func:`summarize` gives the order statistics a table view shows. Every
step depends on the indices only, so any chunking gives the same bytes.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from app.domain import absrank, sampling
from app.domain.functions import BenchmarkFunction

FloatArray = npt.NDArray[np.float64]

NOISE_STREAM = 0x6E6F697365  # "noise": keeps the noise stream apart from any other use of a seed
NOISE_BLOCK = 1024
"""Sobol indices per noise stream: points ``[b·B, (b+1)·B)`` take their normals from stream b."""

#: ``v`` levels at which the summary reports quantiles ``t`` with ``v1(t) >= v``.
SUMMARY_LEVELS = (1e-3, 0.01, 0.1, 0.5, 0.9)


def noise_normals(table_seed: int, start: int, size: int) -> FloatArray:
    """The standard normals of Sobol indices ``[start, start + size)`` of a noisy table.

    Index ``i`` takes draw ``i mod B`` of ``default_rng(SeedSequence([NOISE_STREAM, table_seed,
    i // B]))``, ``B = NOISE_BLOCK``: derived from the table seed and the index only, so a point's
    noise does not depend on the chunk size, on which worker computes it or when.

    Returns
    -------
    ndarray, shape (size,)
    """
    first, last = start // NOISE_BLOCK, (start + size - 1) // NOISE_BLOCK
    blocks = [
        np.random.default_rng(
            np.random.SeedSequence([NOISE_STREAM, int(table_seed), b])
        ).standard_normal(NOISE_BLOCK)
        for b in range(first, last + 1)
    ]
    offset = start - first * NOISE_BLOCK
    out: FloatArray = np.concatenate(blocks)[offset : offset + size]
    return out


# ---------------------------------------------------------------------------- regions


class OrientedGeometry(NamedTuple):
    """An oriented box ``{center + Q·u : |u_k| <= h_k}`` of a spec region.

    Attributes
    ----------
    center : ndarray, shape (d,)
        ``x*``.
    axes : ndarray, shape (d, d)
        ``Q``, the box's axes as columns.
    half_widths : ndarray, shape (d,)
        ``h_k`` along the axes.
    """

    center: FloatArray
    axes: FloatArray
    half_widths: FloatArray


def region_intersected(region: Mapping[str, Any]) -> bool:
    """Whether a spec region is an oriented box intersected with the domain (``B ∩ Ω``)."""
    return region.get("kind") == "oriented" and region.get("intersect") == "domain"


def oriented_geometry(region: Mapping[str, Any]) -> OrientedGeometry:
    """``(center, Q, h)`` of an ``"oriented"`` spec region (``Q`` with the axes as columns)."""
    center = np.asarray(region["center"], dtype=np.float64)
    axes = np.asarray(region["axes"], dtype=np.float64).T
    half = np.asarray(region["half_widths"], dtype=np.float64)
    return OrientedGeometry(center, axes, half)


# ---------------------------------------------------------------------------- chunks


@dataclass(frozen=True)
class TaskSpan:
    """What one build task works on: chunks ``first … first + count − 1`` of table ``table_id``.

    The queue message of a chunk task (huey pickles it). ``count=None`` reaches the table's last
    chunk (a message of the one-chunk format, ``(table_id, index)``, means chunk ``index`` and
    the next ones a task may take along).

    Attributes
    ----------
    table_id : str
    first : int
        The span's first chunk, ``>= 0``.
    count : int or None
        Chunks in the span, ``>= 1``; ``None``: through the table's last chunk.
    """

    table_id: str
    first: int
    count: int | None = 1

    def __post_init__(self) -> None:
        if self.first < 0 or (self.count is not None and self.count < 1):
            raise ValueError(f"bad task span {self.first}+{self.count} of {self.table_id}")

    def stop(self, n_chunks: int) -> int:
        """One past the span's last chunk, in a table of ``n_chunks`` chunks."""
        end = n_chunks if self.count is None else self.first + self.count
        return min(end, n_chunks)

    def after(self, index: int, n_chunks: int) -> TaskSpan | None:
        """The part of the span after chunk ``index`` (``None`` if it is empty)."""
        stop = self.stop(n_chunks)
        if index + 1 >= stop:
            return None
        return TaskSpan(self.table_id, index + 1, stop - index - 1)


def spans_of(table_id: str, indices: Iterable[int]) -> list[TaskSpan]:
    """The runs of consecutive chunks among ``indices`` (ascending), as task spans."""
    spans: list[TaskSpan] = []
    for i in indices:
        last = spans[-1] if spans else None
        if last is not None and last.count is not None and last.first + last.count == i:
            spans[-1] = TaskSpan(table_id, last.first, last.count + 1)
        else:
            spans.append(TaskSpan(table_id, i, 1))
    return spans


@dataclass(frozen=True)
class Backlog:
    """What the re-dispatcher knows of the workers' pace and of the queue.

    Attributes
    ----------
    workers : int
        Worker processes taking chunks (a setting, or those seen finishing chunks lately).
    seconds_per_chunk : float
        Measured mean CPU-seconds of a chunk (``> 0``).
    queued : int
        Chunks already waiting in the queue (dispatched, unclaimed; at least the queue's
        length in messages, each of one chunk or more).
    """

    workers: int
    seconds_per_chunk: float
    queued: int

    def budget(self, lease_seconds: float) -> int:
        """Chunks worth re-sending now: what ``workers`` work within one lease, less what is
        queued; at least one chunk per worker when nothing is queued (a chunk longer than
        the lease is still sent).

        >>> Backlog(workers=2, seconds_per_chunk=10.0, queued=25).budget(300.0)
        35
        >>> Backlog(workers=2, seconds_per_chunk=1000.0, queued=0).budget(300.0)
        2
        """
        capacity = max(
            self.workers, math.floor(self.workers * lease_seconds / self.seconds_per_chunk)
        )
        return max(0, capacity - self.queued)


@dataclass(frozen=True)
class ChunkSpec:
    """What evaluating and merging a table's chunks needs from its spec (typed once).

    Attributes
    ----------
    function_id : str
    region : mapping
        The spec's region, as :func:`compute_chunk` takes it.
    seed, n, chunk_size, k_exact, n_knots, dim : int
        Sobol seed, ``N``, ``B``, kept lowest points, knots, dimension.
    intersected : bool
        :func:`region_intersected` of the region.
    versions : mapping of str to str
        Library versions the spec was made with.
    """

    function_id: str
    region: Mapping[str, Any]
    seed: int
    n: int
    chunk_size: int
    k_exact: int
    n_knots: int
    dim: int
    intersected: bool
    versions: Mapping[str, str]

    @classmethod
    def of(cls, spec: Mapping[str, Any], *, chunk_size: int) -> ChunkSpec:
        """From a normalized spec (``app.services.tables.table_spec``) and a chunk size."""
        rep = spec["representation"]
        return cls(
            function_id=str(spec["function_id"]),
            region=spec["region"],
            seed=int(spec["seed"]),
            n=int(spec["n"]),
            chunk_size=int(chunk_size),
            k_exact=int(rep["k_exact"]),
            n_knots=int(rep["n_knots"]),
            dim=len(spec["region"]["lower"]),
            intersected=region_intersected(spec["region"]),
            versions={str(k): str(v) for k, v in spec["versions"].items()},
        )


def compute_chunk(
    fn: BenchmarkFunction,
    region: Mapping[str, Any],
    *,
    seed: int,
    k_exact: int,
    index: int,
    chunk_size: int,
    unit: np.ndarray | None = None,
) -> sampling.ChunkResult:
    """Evaluate chunk ``index`` (Sobol indices ``[index·B, (index+1)·B)``) of a table.

    Parameters
    ----------
    fn : BenchmarkFunction
        The table's function (a noisy one draws its normals from :func:`noise_normals`).
    region : mapping
        The spec's region: ``kind`` ``"domain"``/``"box"`` (``lower``, ``upper``) or
        ``"oriented"`` (:func:`oriented_geometry`; with ``intersect="domain"`` the points
        outside the domain get ``+inf``, never evaluated).
    seed : int
        Sobol scrambling seed.
    k_exact : int
        Lowest values whose points are kept (at most ``chunk_size``).
    index, chunk_size : int
        Chunk number and ``B``.
    unit : ndarray, shape (B, d), optional
        The chunk's unit-cube Sobol points if already generated
        (:func:`app.domain.sampling.sobol_chunks`; consumed). Default: generated here.

    Returns
    -------
    ChunkResult
        Values in Sobol order and the chunk's ``min(k_exact, B)`` lowest points.
    """
    lower = np.asarray(region["lower"], dtype=np.float64)
    upper = np.asarray(region["upper"], dtype=np.float64)
    k_low = min(int(k_exact), chunk_size)
    seed = int(seed)
    f: Callable[[np.ndarray], np.ndarray] = fn.evaluate
    normals: FloatArray | None = None
    if fn.noisy:
        # one N(0, 1) per point from per-index blocks: any worker, any chunk size, same table
        normals = noise_normals(seed, index * chunk_size, chunk_size)
        f = functools.partial(fn.evaluate_with_normals, normals=normals)
    if region_intersected(region):  # an oriented box ∩ the domain
        center, axes, half = oriented_geometry(region)
        if normals is not None:
            noise = normals

            def kept_f(X: np.ndarray, mask: np.ndarray) -> np.ndarray:
                return fn.evaluate_with_normals(X, normals=noise[mask])

        else:

            def kept_f(X: np.ndarray, mask: np.ndarray) -> np.ndarray:
                return fn.evaluate(X)

        return sampling.evaluate_intersected_chunk(
            kept_f,
            center,
            axes,
            half,
            fn.lower,
            fn.upper,
            seed,
            index,
            chunk_size,
            k_low,
            unit=unit,
        )
    if region["kind"] == "oriented":  # a ladder box along the local form's axes
        center, axes, half = oriented_geometry(region)
        return sampling.evaluate_oriented_chunk(
            f, center, axes, half, fn.lower, fn.upper, seed, index, chunk_size, k_low, unit=unit
        )
    return sampling.evaluate_chunk(f, lower, upper, seed, index, chunk_size, k_low, unit=unit)


def compute_chunks(
    fn: BenchmarkFunction,
    region: Mapping[str, Any],
    *,
    seed: int,
    k_exact: int,
    first: int,
    count: int,
    chunk_size: int,
) -> Iterator[sampling.ChunkResult]:
    """Evaluate the consecutive chunks ``first … first + count − 1`` of a table, in order.

    Each result equals :func:`compute_chunk` of that chunk byte for byte; the Sobol points come
    from one engine (:func:`app.domain.sampling.sobol_chunks`), fast-forwarded once.

    Yields
    ------
    ChunkResult
        Chunk ``first``, then ``first + 1``, …
    """
    units = sampling.sobol_chunks(fn.dim, int(seed), first, chunk_size, count)
    for offset, unit in enumerate(units):
        yield compute_chunk(
            fn,
            region,
            seed=seed,
            k_exact=k_exact,
            index=first + offset,
            chunk_size=chunk_size,
            unit=unit,
        )


class StoredChunk(Protocol):
    """A finished chunk as stored: little-endian blobs (``ChunkBlobs`` of the repository)."""

    @property
    def index(self) -> int:
        """Chunk number."""

    @property
    def values(self) -> bytes:
        """``B`` ``<f8`` values in Sobol order."""

    @property
    def low_index(self) -> bytes:
        """``<i8`` positions (in the chunk) of its lowest values."""

    @property
    def low_x(self) -> bytes:
        """``<f8`` points of those values, row by row."""


class Combined(NamedTuple):
    """All values of a table and its ``k`` lowest points.

    Attributes
    ----------
    values : ndarray, shape (N,)
        Function values in Sobol index order.
    low_x : ndarray, shape (k, d)
        Points of the ``k`` lowest values, ordered by (value, Sobol index).
    """

    values: FloatArray
    low_x: FloatArray


def combine_chunks(
    chunks: Iterable[StoredChunk], *, n: int, chunk_size: int, dim: int, k: int
) -> Combined:
    """Assemble stored chunk results into all values (Sobol order) and the k lowest points.

    Decodes the blobs, checks that every chunk is present exactly once with the right size, and
    joins them with :func:`app.domain.sampling.merge_chunk_results`.

    Parameters
    ----------
    chunks : iterable of StoredChunk
        Every chunk exactly once, any order.
    n, chunk_size, dim : int
        Table size ``N``, chunk size ``B`` and dimension ``d``.
    k : int
        Number of lowest samples whose points are kept, ``<= N``.

    Returns
    -------
    Combined
        ``(values, low_x)``.

    Raises
    ------
    ValueError
        A chunk is missing, repeated or has the wrong size.
    """
    n_chunks = n // chunk_size
    results: list[sampling.ChunkResult | None] = [None] * n_chunks
    for chunk in chunks:
        if not 0 <= chunk.index < n_chunks or results[chunk.index] is not None:
            raise ValueError(f"chunk {chunk.index} is out of range or repeated")
        values = np.frombuffer(chunk.values, dtype="<f8")
        low_index = np.frombuffer(chunk.low_index, dtype="<i8")
        if values.shape != (chunk_size,) or np.any((low_index < 0) | (low_index >= chunk_size)):
            raise ValueError(f"chunk {chunk.index} has a wrong size")
        low_x = np.frombuffer(chunk.low_x, dtype="<f8").reshape(low_index.size, dim)
        results[chunk.index] = sampling.ChunkResult(values, low_index, low_x)
    missing = [i for i, r in enumerate(results) if r is None]
    if missing:
        raise ValueError(f"chunks missing: {missing[:10]}")
    complete = [r for r in results if r is not None]
    # every global k-lowest sample is among its own chunk's k lowest; ties follow Sobol order
    values, low_x, _ = sampling.merge_chunk_results(complete, k)
    return Combined(values, np.ascontiguousarray(low_x))


def stable_sorted(values: FloatArray) -> FloatArray:
    """``np.sort(values, kind="stable")`` byte for byte, with the fast (SIMD) unstable sort.

    Values that compare equal have equal bytes, except ``-0.0 == 0.0`` (the samples are never
    NaN): only the zeros' signs can depend on the sort's stability. They are put back in the
    order a stable sort keeps, the order of ``values``.

    Parameters
    ----------
    values : ndarray, shape (N,)
        float64 samples without NaN (``±inf`` allowed).

    Returns
    -------
    ndarray, shape (N,)
        A new array.
    """
    ys = np.sort(values)
    lo, hi = np.searchsorted(ys, 0.0, "left"), np.searchsorted(ys, 0.0, "right")
    if hi > lo:
        ys[lo:hi] = values[values == 0.0]  # the zeros in their order in ``values``
    return ys


class BuiltTable(NamedTuple):
    """A merged table.

    Attributes
    ----------
    data : TableData
        The stored representation (:func:`app.domain.absrank.build_table_data`).
    values : ndarray, shape (M,)
        The samples it was built from (``M = N``, or the kept points of ``B ∩ Ω``), in Sobol
        order.
    sorted_values : ndarray, shape (M,)
        The same samples, sorted (:func:`stable_sorted`).
    """

    data: absrank.TableData
    values: FloatArray
    sorted_values: FloatArray


def build_table(
    chunks: Iterable[StoredChunk],
    *,
    n: int,
    chunk_size: int,
    dim: int,
    k_exact: int,
    n_knots: int,
    intersected: bool,
) -> BuiltTable:
    """Join a table's chunks (:func:`combine_chunks`) and build its data.

    An intersected region (``B ∩ Ω``) keeps only the finite values (the points inside the
    domain; Eq. 28 counts among them).

    Raises
    ------
    ValueError
        From :func:`combine_chunks`, or no point of an intersected box inside the domain.
    """
    values, low_x = combine_chunks(chunks, n=n, chunk_size=chunk_size, dim=dim, k=min(k_exact, n))
    if intersected:
        # B ∩ Ω: the table is over the kept points (Eq. 28 counts among them); the +inf of the
        # points outside Ω sort last, so the first min(k, M) lowest are the kept ones
        keep = np.isfinite(values)
        values = values[keep]
        if values.size == 0:
            raise ValueError("no Sobol point of the oriented box lies inside the domain")
        low_x = np.ascontiguousarray(low_x[: min(low_x.shape[0], values.size)])
    ys = stable_sorted(values)
    # build_table_data sorts its input stably: handed the sorted samples, that sort finds one
    # run (linear time) and the table is the one of the samples in Sobol order, byte for byte
    data = absrank.build_table_data(ys, low_x, k_exact=k_exact, n_knots=n_knots)
    return BuiltTable(data, values, ys)


# ---------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class SampleSummary:
    """``y_1``, ``y_N`` and order statistics of a table's samples.

    Attributes
    ----------
    y_1, y_N : float
        Smallest and largest sample.
    quantiles : tuple of (float, float)
        ``(v, t)`` for each level ``v`` of :data:`SUMMARY_LEVELS`: ``t = y_(r)``,
        ``r = ceil(v (N + 1))`` clamped to ``[1, N]``.
    """

    y_1: float
    y_N: float
    quantiles: tuple[tuple[float, float], ...]

    def as_json(self) -> dict[str, Any]:
        """The stored JSON: ``{"y_1", "y_N", "quantiles": [{"v", "t"}, ...]}``."""
        return {
            "y_1": self.y_1,
            "y_N": self.y_N,
            "quantiles": [{"v": v, "t": t} for v, t in self.quantiles],
        }


def _one_signed_zero(ys: FloatArray) -> bool:
    """Whether the sorted ``ys`` has no zeros of both signs (equal values have equal bytes)."""
    lo, hi = np.searchsorted(ys, 0.0, "left"), np.searchsorted(ys, 0.0, "right")
    signs = np.signbit(ys[lo:hi])
    return bool(signs.all() or not signs.any())


def summarize(values: FloatArray, *, sorted_values: FloatArray | None = None) -> SampleSummary:
    """Return ``y_1``, ``y_N`` and order statistics of a table's samples.

    For each level ``v`` in :data:`SUMMARY_LEVELS` the quantile is the smallest sample ``t``
    with ``#{y_i <= t} / (N + 1) >= v`` (``y_1`` when none is; ``y_N`` when ``v > N/(N + 1)``):
    an order statistic, not the inverse of the published curve.

    ``sorted_values`` (the same samples sorted, e.g. :attr:`BuiltTable.sorted_values`) saves
    the partition of ``values``; the answer is the same bytes (when zeros of both signs tie,
    the partition of ``values`` decides which one is reported, as without it).
    """
    n = values.size
    ranks = [min(max(math.ceil(v * (n + 1)), 1), n) for v in SUMMARY_LEVELS]
    kth = sorted({0, n - 1, *(r - 1 for r in ranks)})
    if sorted_values is not None and sorted_values.size == n and _one_signed_zero(sorted_values):
        part = sorted_values
    else:
        part = np.partition(values, kth)
    return SampleSummary(
        y_1=float(part[0]),
        y_N=float(part[n - 1]),
        quantiles=tuple(
            (v, float(part[r - 1])) for v, r in zip(SUMMARY_LEVELS, ranks, strict=True)
        ),
    )
