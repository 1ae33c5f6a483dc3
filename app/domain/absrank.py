"""Absolute ranks ``v_f(t)`` from sampled tables (SPEC §3; Jing & Liu Eq. 28 and Eq. 19).

Pipeline for one query value ``t``:

1. ``v1(t)``, the share of the sampling region with ``f <= t``:

   * inside the sample range, paper Eq. 28 on the stored table (``method="interpolated"``);
   * below it, a lower-tail model (``tail=``): ``"paper"`` (Eq. 28's ``exp(t − y_1)/(N+1)``),
     ``"linear"`` (from ``(f*, atom)`` to ``(y_1, v1(y_1))``), ``"power"``
     (``v1(y_k)·((t − f*)/(y_k − f*))^β``) or ``"auto"``;
   * above it, ``"upper-tail"`` (paper: ``1 − exp(−ln(N+1)·t/y_N)``; otherwise linear to
     ``(f_max, 1)`` or flat at ``N/(N+1)``);
   * ``"atom"`` at ``t = f*`` for a function with a plateau of registered mass ``atom > 0``.

2. Best of ``c`` evaluations (Eq. 19): ``v_c = 1 − (1 − v1)^c``.
3. ``r > 1`` runs aggregated by an order statistic: ``P(Z_(k) <= t) = P(Bin(r, v_c) >= k)``.

Everything is computed with natural logarithms and returned as ``log10_v`` (authoritative, finite
down to ``1e-400`` and beyond; ``-inf`` only where ``v`` is exactly 0, i.e. ``t < f*`` or ``t = f*``
without an atom) and ``v = 10**log10_v`` (may underflow to 0.0). Intervals are transformed by the
same monotone maps as the point estimate.

Errors ``t − f*`` are ranked as the gap itself (``ranks_from_curve(..., values_are="error")``):
tails and exact forms take the gap, Eq. 28 compares it with the knots' exact gaps [4].

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking Optimization
       Algorithms. Eq. 28 (estimate of ``v1`` from ``N`` sorted samples, with its tails), Eq. 19
       (best of ``c``: ``v_c = 1 − (1 − v1)^c``), §IV-B (analytic cases), §V (regions).
.. [2] C. J. Clopper, E. S. Pearson. The use of confidence or fiducial limits illustrated in the
       case of the binomial. Biometrika 26 (1934).
.. [3] B. M. Hill. A simple general approach to inference about the tail of a distribution.
       Ann. Statist. 3 (1975).
.. [4] D. E. Knuth. The Art of Computer Programming, vol. 2: Seminumerical Algorithms, 3rd ed.,
       §4.2.2 (the exact error of a rounded sum, TwoSum): used to know which knots' gaps
       ``y_j − f*`` are exact, so that errors (``values_are="error"``) are compared and
       interpolated as gaps (docs/METHODS.md, "Values and errors").
"""

from __future__ import annotations

import math
import struct
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

import numpy as np
from scipy import special, stats

from app.domain import analytic, notices
from app.domain.curves import (
    AnalyticInfo,
    CurveDescription,
    CurveInfo,
    LowerTail,
    PowerInfo,
    PowerLaw,
    TableCurve,
    UpperTail,
    V1Curve,
    info_json,
)
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.stattools import log10_of
from app.domain.validation import check_confidence as _check_confidence
from app.domain.validation import check_values_are as _check_values_are
from app.domain.validation import finite_1d as _finite_1d
from app.domain.validation import positive_int as _positive_int

if TYPE_CHECKING:
    from app.domain.aggregates import AggregateInfo

__all__ = [
    "AGGREGATES",
    "METHODS",
    "TAIL_MODES",
    "PowerLaw",
    "RankContext",
    "RankResult",
    "RankTail",
    "TableData",
    "Transform",
    "V1Curve",
    "absolute_ranks",
    "analytic_curve",
    "analytic_ranks",
    "build_table_data",
    "decode_table_data",
    "encode_table_data",
    "ln_best_of_c",
    "log10_best_of_c",
    "log10_order_statistic_cdf",
    "ranks_from_curve",
    "table_curve",
]

LN10 = math.log(10.0)
TAIL_MODES = ("auto", "paper", "linear", "power")
METHODS = (
    "interpolated",
    "tail-power",
    "tail-linear",
    "tail-paper",
    "analytic",
    "atom",
    "upper-tail",
)
#: A lowest-sample point farther from ``x*`` than this share of the distance to the region
#: boundary (on that side, in some coordinate) means the sublevel set is clipped by the box.
NOT_AN_ORDER_STATISTIC = 0
"""Order ``k`` of aggregates that are no order statistic (mean of r > 1, median of even r)."""
AGGREGATES = ("best", "worst", "median", "lower-median", "order", "mean")
MIN_ANCHOR = 25
"""Smallest anchor order statistic of the power tail (see ``_valid_anchor``)."""
FIT_P_MIN = 0.01
"""Smallest KS p-value at which the samples below the anchor are taken to follow the power law."""
CLIP_SHARE = 0.9
_NEG_INF = -np.inf


# --------------------------------------------------------------------------------------------
# Stored table
# --------------------------------------------------------------------------------------------


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
    (``_cp_limits``, see :class:`_CPLimits`); it is not part of the stored representation.
    """

    n: int
    values: np.ndarray
    counts: np.ndarray
    k_exact: int
    max_interp_error: float
    low_x: np.ndarray
    low_values: np.ndarray
    _cp_limits: dict[float, _CPLimits] = field(
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
    Representation. The values are sorted (stable, so ties keep Sobol order). Knots are (i) every
    distinct value among ``y_1..y_{k_exact}`` and (ii) the order statistics
    ``y_{k_exact + s·stride}`` (``s = 1, 2, …``) and ``y_N``, with
    ``stride = max(1, ceil((N − k_exact)/n_knots))``; equal values are merged. Every knot carries
    its exact cumulative count ``#{y_i <= value}``, so Eq. 28 is exact at every knot and
    ``v_stored`` is the linear interpolation of ``counts/(N+1)`` between knots.

    Error bound. Let ``a < b`` be consecutive knots with counts ``c_a < c_b``. Eq. 28 on
    ``[a, b]`` is the piecewise-linear interpolation of ``#{y_i <= y}/(N+1)`` through the distinct
    sample values ``y ∈ [a, b]``; both ``a`` and ``b`` are sample values and the counts are
    non-decreasing, so ``c_a/(N+1) <= v_eq28(t) <= c_b/(N+1)`` for every ``t ∈ [a, b]``. The stored
    interpolation is a convex combination of the same two endpoint values and lies in the same
    range. Hence

    .. math:: |v_{stored}(t) - v_{eq28}(t)| \le \frac{c_b - c_a}{N + 1}, \qquad t ∈ [a, b],

    and the difference is 0 when no distinct sample value lies strictly between ``a`` and ``b``
    (then both are the same line segment). ``max_interp_error`` is the maximum of that bound over
    the segments that skip sample values (0 when everything is stored); it is about
    ``stride/(N+1)`` without ties.
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


# --------------------------------------------------------------------------------------------
# Context and result
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class RankContext:
    """Everything rank evaluation needs besides the table.

    Attributes
    ----------
    f_opt : float or None
        Known minimum ``f*`` (units of ``f``).
    f_max : float or None
        Known maximum of ``f`` over the region.
    atom : float
        Registered probability mass at ``f*`` (plateau), 0.0 if none.
    beta : float or None
        Registered tail exponent (``v1(t) ~ C (t − f*)^β``); None = unknown (estimated).
    beta_derivation : str
        Why ``beta`` has its value (echoed in results).
    x_opt : ndarray, shape (d,) or None
        Known minimiser.
    region_lower, region_upper : ndarray, shape (d,)
        The table's sampling region.
    domain_volume_fraction : float
        ``Leb(region ∩ Ω)/Leb(Ω)``; ranks are relative to the region and are *not* rescaled by it
        (echoed in ``RankResult.tail``; a nested-region caller multiplies by it, SPEC §3.4).
    points_known : bool
        Whether the table stores the points of its lowest samples. ``False`` for a table built
        from values alone (a user's samples): the power tail's clipping check cannot be made,
        so it is skipped and the validity record says so; the power-law fit tests still apply.
    no_plateau : bool
        Whether ``f`` is known to have no plateau at ``f*`` (registered atom 0): then
        ``v1(f*) = 0`` in every region, even where stored samples round to ``f*`` (a deep
        nested level's ``f = g + f*`` in float64). ``False`` (unknown; a box of a function
        with a plateau, whose own samples at ``f*`` are counted): only ``t < f*`` is 0.
    """

    f_opt: float | None
    f_max: float | None
    atom: float
    beta: float | None
    beta_derivation: str
    x_opt: np.ndarray | None
    region_lower: np.ndarray
    region_upper: np.ndarray
    domain_volume_fraction: float = 1.0
    points_known: bool = True
    no_plateau: bool = False


@dataclass(frozen=True, eq=False)
class RankResult:
    """Absolute ranks of ``n`` query values.

    Attributes
    ----------
    log10_v : ndarray, shape (n,)
        Authoritative ``log10`` of the rank (``-inf`` only where ``v`` is exactly 0).
    v : ndarray, shape (n,)
        ``10**log10_v``; may underflow to 0.0.
    method : ndarray of str, shape (n,)
        One of :data:`METHODS` per value (how ``v1`` was obtained).
    log10_lo, log10_hi : ndarray, shape (n,)
        ``log10`` of the interval ends at the requested confidence.
    tail : RankTail
        The models used (the curve's description: tail mode, ``beta`` and its source/standard
        error, anchor ``k`` and value, validity check, upper tail) and the transform.
    warnings : list of notices.Warning
        Fallbacks taken (e.g. power tail refused, paper tail used because ``f*`` is unknown),
        each with a stable ``code``.
    """

    log10_v: np.ndarray
    v: np.ndarray
    method: np.ndarray
    log10_lo: np.ndarray
    log10_hi: np.ndarray
    tail: RankTail
    warnings: list[notices.Warning] = field(default_factory=list)


@dataclass(frozen=True)
class Transform:
    """How ``v1`` became the rank: best of ``budget`` evaluations, aggregated over ``runs``.

    Attributes
    ----------
    budget : int
        ``c``, evaluations per run (Eq. 19).
    runs : int
        ``r``, runs per aggregate value.
    aggregate : str
        One of :data:`AGGREGATES`.
    order : int or None
        The order statistic ``k`` (1 = best run); ``None`` (:func:`app.domain.aggregates.
        aggregate_ranks`) or 0 (:data:`NOT_AN_ORDER_STATISTIC`) for a mean or an even median.
    """

    budget: int
    runs: int
    aggregate: str
    order: int | None

    def as_json(self) -> dict[str, object]:
        """``{"budget", "runs", "aggregate", "order"}``."""
        return {
            "budget": self.budget,
            "runs": self.runs,
            "aggregate": self.aggregate,
            "order": self.order,
        }


@dataclass(frozen=True)
class RankTail:
    """The models behind a :class:`RankResult` (its ``tail`` block in the answer).

    Attributes
    ----------
    curve : CurveDescription
        The curve's description (``V1Curve.info``).
    transform : Transform
        Budget, runs, aggregate and order statistic.
    aggregate : AggregateInfo or None
        The numerical method of a mean or an even median (:mod:`app.domain.aggregates`).
    """

    curve: CurveDescription
    transform: Transform
    aggregate: AggregateInfo | None = None

    @property
    def anchor_k(self) -> int | None:
        """The power tail's anchor ``k`` (``None`` without a power tail)."""
        if isinstance(self.curve, CurveInfo):
            return None if self.curve.power is None else self.curve.power.k
        if isinstance(self.curve, AnalyticInfo):
            return None
        k = self.curve.get("k")  # a nested ladder's block: its deepest level's anchor
        return k if isinstance(k, int) else None

    @property
    def requested_k(self) -> int | None:
        """The anchor asked for after the table's cap (``None``: not recorded)."""
        if isinstance(self.curve, CurveInfo) and self.curve.power is not None:
            return self.curve.power.requested_k
        return None

    def curve_json(self) -> dict[str, object]:
        """The curve's JSON block alone (what ``runs_by_algorithm`` answers as ``tail``)."""
        return info_json(self.curve)

    def as_json(self) -> dict[str, object]:
        """The whole ``tail`` block: the curve's, then ``transform`` and ``aggregate``."""
        out = info_json(self.curve)
        out["transform"] = self.transform.as_json()
        if self.aggregate is not None:
            out["aggregate"] = self.aggregate.as_json()
        return out


# --------------------------------------------------------------------------------------------
# Log-space helpers
# --------------------------------------------------------------------------------------------

_SMALL_LN = -20.0  # below this, series expansions replace log1p/expm1 (x = e^a < 2e-9)


def _ln1m_exp(ln_p: np.ndarray) -> np.ndarray:
    """``ln(1 − p)`` from ``ln p`` without cancellation."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return np.where(ln_p > -math.log(2.0), np.log(-np.expm1(ln_p)), np.log1p(-np.exp(ln_p)))


def _ln_neg_ln1m(ln_p: np.ndarray) -> np.ndarray:
    """``ln(−ln(1 − p))`` from ``ln p``; ``−ln(1−p) = p(1 + p/2 + p²/3 + …)`` for tiny ``p``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p = np.exp(ln_p)
        series = ln_p + np.log1p(p / 2.0 + p * p / 3.0)
        direct = np.log(-np.log1p(-p))
        return np.where(ln_p < _SMALL_LN, series, direct)


def _ln_one_minus_exp_neg_exp(a: np.ndarray) -> np.ndarray:
    """``ln(1 − exp(−e^a))``; ``1 − e^{−x} = x(1 − x/2 + x²/6 − …)`` for tiny ``x = e^a``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = np.exp(a)
        series = a + np.log1p(-x / 2.0 + x * x / 6.0)
        direct = np.log(-np.expm1(-x))
        return np.where(a < _SMALL_LN, series, direct)


def ln_best_of_c(ln_v1: np.ndarray, c: int) -> np.ndarray:
    """``ln v_c`` with ``v_c = 1 − (1 − v1)^c = −expm1(c·log1p(−v1))`` (Eq. 19), in log space."""
    if c == 1:
        return np.array(ln_v1, dtype=np.float64)
    out = _ln_one_minus_exp_neg_exp(math.log(c) + _ln_neg_ln1m(ln_v1))
    return np.minimum(out, 0.0)


def _log_sum_rows(terms: np.ndarray) -> np.ndarray:
    """Row-wise ``log Σ exp``; rows of ``-inf`` give ``-inf``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.max(terms, axis=1)
        safe = np.where(np.isfinite(top), top, 0.0)
        total = np.log(np.sum(np.exp(terms - safe[:, None]), axis=1)) + safe
    return np.where(np.isneginf(top), _NEG_INF, total)


def _ln_binom_sf(ln_p: np.ndarray, r: int, k: int) -> np.ndarray:
    """``ln P(Bin(r, p) >= k)`` by log-sum-exp of the log-pmfs (``binom.sf`` underflows)."""
    if k <= 0:
        return np.zeros_like(ln_p)
    j = np.arange(k, r + 1, dtype=np.float64)
    ln_comb = special.gammaln(r + 1.0) - special.gammaln(j + 1.0) - special.gammaln(r - j + 1.0)
    ln_q = _ln1m_exp(ln_p)
    with np.errstate(invalid="ignore"):
        fail = np.where(j[None, :] == r, 0.0, (r - j)[None, :] * ln_q[:, None])
        terms = ln_comb[None, :] + j[None, :] * ln_p[:, None] + fail
    return np.minimum(_log_sum_rows(terms), 0.0)


def log10_best_of_c(log10_v1: np.ndarray, c: int) -> np.ndarray:
    """``log10`` of the best-of-``c`` rank ``v_c = 1 − (1 − v1)^c`` (Jing & Liu Eq. 19).

    Parameters
    ----------
    log10_v1 : array_like, shape (n,)
        ``log10 v1`` (``-inf`` allowed); valid far below the double range, e.g. ``-500``.
    c : int
        Budget (evaluations per run), ``>= 1``.

    Returns
    -------
    ndarray, shape (n,)
        ``log10 v_c``, computed as ``ln(−expm1(c·log1p(−v1)))`` through series expansions when
        ``v1`` or ``c·v1`` is tiny, so that ``log10 v_c = log10 c + log10 v1`` holds where
        ``c·v1 << 1`` even if ``v1`` underflows.
    """
    c = _positive_int(c, "budget")
    ln_v1 = np.asarray(log10_v1, dtype=np.float64) * LN10
    return ln_best_of_c(ln_v1, c) / LN10


def log10_order_statistic_cdf(log10_p: np.ndarray, runs: int, k: int) -> np.ndarray:
    """``log10 P(Z_(k) <= t) = log10 P(Bin(runs, p) >= k)`` for i.i.d. runs with CDF ``p``.

    Parameters
    ----------
    log10_p : array_like, shape (n,)
        ``log10`` of the per-run CDF at ``t`` (e.g. :func:`log10_best_of_c`).
    runs : int
        Number of runs ``r >= 1``.
    k : int
        Order statistic, ``1 <= k <= r`` (1 = best run, ``r`` = worst).

    Returns
    -------
    ndarray, shape (n,)
        Log-sum-exp of ``ln C(r, j) + j ln p + (r − j) ln(1 − p)`` over ``j = k..r``, divided by
        ``ln 10``; no underflow for tiny ``p``.
    """
    runs = _positive_int(runs, "runs")
    k = _positive_int(k, "order")
    if k > runs:
        raise InvalidInput(f"order must be <= runs ({runs}), got {k}", field="order")
    ln_p = np.atleast_1d(np.asarray(log10_p, dtype=np.float64)) * LN10
    return _ln_binom_sf(ln_p, runs, k) / LN10


def _ln_cp_lower(c: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """``ln`` of the Clopper–Pearson lower limit for ``c`` successes out of ``n`` [2]."""
    c = np.asarray(c, dtype=np.float64)
    out = np.full(c.shape, _NEG_INF)
    pos = c > 0
    out[pos] = np.log(special.betaincinv(c[pos], n - c[pos] + 1.0, alpha / 2.0))
    return out


def _ln_cp_upper(c: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """``ln`` of the Clopper–Pearson upper limit for ``c`` successes out of ``n`` [2]."""
    c = np.asarray(c, dtype=np.float64)
    out = np.zeros(c.shape)
    below = c < n
    out[below] = np.log(special.betaincinv(c[below] + 1.0, n - c[below], 1.0 - alpha / 2.0))
    return out


def _ln(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


class _CPLimits:
    """Clopper–Pearson limits of one table at one ``alpha``, each computed once.

    Inside the samples the counts are always knot counts ``c_j`` or ``c_j − 1``, so the limits
    are memoised per knot: ``lower(j)`` at ``c_j``, ``upper(j)`` at ``c_j`` and ``upper_below(j)``
    at ``c_j − 1``, filled on first use (precomputing all ``3m`` of them would cost about 0.1 s
    per table and level, far more than a request). ``upper_zero`` (count 0, below ``y_1``) and
    ``lower_n`` (count ``N``, above ``y_N``) are the two constants. Every entry comes from
    :func:`_ln_cp_lower` / :func:`_ln_cp_upper` on the same count, so the results are those of
    the per-value calls bit for bit. Concurrent fills are harmless: they write the same values.
    """

    def __init__(self, table: TableData, alpha: float) -> None:
        self.n = table.n
        self.alpha = alpha
        self.counts = table.counts
        self._lower = np.full(table.counts.size, np.nan)
        self._upper = np.full(table.counts.size, np.nan)
        self._upper_below = np.full(table.counts.size, np.nan)
        self.upper_zero = float(_ln_cp_upper(np.zeros(1), self.n, alpha)[0])
        self.lower_n = float(_ln_cp_lower(np.full(1, self.n), self.n, alpha)[0])

    def _memo(
        self,
        store: np.ndarray,
        j: np.ndarray,
        limit: Callable[[np.ndarray, int, float], np.ndarray],
        shift: int,
    ) -> np.ndarray:
        out = store[j]
        miss = np.isnan(out)
        if np.any(miss):
            need, inverse = np.unique(j[miss], return_inverse=True)
            got = limit(self.counts[need] - shift, self.n, self.alpha)
            store[need] = got
            out[miss] = got[inverse]
        return out

    def lower(self, j: np.ndarray) -> np.ndarray:
        return self._memo(self._lower, j, _ln_cp_lower, 0)

    def upper(self, j: np.ndarray) -> np.ndarray:
        return self._memo(self._upper, j, _ln_cp_upper, 0)

    def upper_below(self, j: np.ndarray) -> np.ndarray:
        return self._memo(self._upper_below, j, _ln_cp_upper, 1)


#: Confidence levels whose limits a table keeps (the oldest is dropped beyond this).
_CP_LEVELS_PER_TABLE = 4
_CP_LOCK = threading.Lock()


def _cp_limits(table: TableData, alpha: float) -> _CPLimits:
    """The table's :class:`_CPLimits` at ``alpha``, created on first use."""
    cache = table._cp_limits
    limits = cache.get(alpha)
    if limits is None:
        with _CP_LOCK:
            limits = cache.get(alpha)
            if limits is None:
                limits = _CPLimits(table, alpha)
                while len(cache) >= _CP_LEVELS_PER_TABLE:
                    del cache[next(iter(cache))]
                cache[alpha] = limits
    return limits


# --------------------------------------------------------------------------------------------
# v1 pieces
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class _Piece:
    """``ln v``, interval ends and method of a subset of query values."""

    ln_v: np.ndarray
    ln_lo: np.ndarray
    ln_hi: np.ndarray
    method: str


@dataclass(frozen=True, eq=False)
class _GapKnots:
    """A table's knots as gaps ``y_j − f*``: exact for the first ``exact`` knots.

    ``fl(y_j − f*)`` is the exact difference wherever it is representable (always within a factor
    2 of ``f*``, Sterbenz's lemma), which is checked knot by knot with the error term of Knuth's
    TwoSum [4]; the leading knots with an exact difference are compared with exact gaps.
    """

    knots: np.ndarray  # fl(values − f*), the first ``exact`` of them exact
    exact: int

    @classmethod
    def of(cls, values: np.ndarray, f_opt: float) -> _GapKnots:
        d = values - f_opt
        # TwoSum of values + (−f*): err = (values − f*) − d exactly [4]
        b_virtual = d - values
        err = (values - (d - b_virtual)) + (-f_opt - b_virtual)
        inexact = np.flatnonzero(err != 0.0)
        return cls(d, int(inexact[0]) if inexact.size else int(values.size))

    @property
    def top(self) -> float:
        """The largest gap compared exactly (``-inf`` when no knot's difference is exact)."""
        return float(self.knots[self.exact - 1]) if self.exact else -math.inf


class _Eq28:
    """Paper Eq. 28 on a stored table, with Clopper–Pearson intervals."""

    def __init__(self, table: TableData, alpha: float, f_opt: float | None = None) -> None:
        self.table = table
        self.n = table.n
        self.alpha = alpha
        self.cp = _cp_limits(table, alpha)
        self.ln_n1 = math.log(table.n + 1.0)
        self.y_min = float(table.values[0])
        self.y_max = float(table.values[-1])
        j = int(np.searchsorted(table.counts, min(table.k_exact, table.n)))
        self.exact_upto = float(table.values[min(j, table.values.size - 1)])
        self.f_opt = f_opt
        self._gaps: _GapKnots | None = None

    @property
    def gaps(self) -> _GapKnots:
        """The knots as gaps to ``f*`` (computed on first use; needs ``f_opt``)."""
        if self._gaps is None:
            assert self.f_opt is not None
            self._gaps = _GapKnots.of(self.table.values, self.f_opt)
        return self._gaps

    def count_at(self, y: float) -> float:
        return float(np.interp(y, self.table.values, self.table.counts))

    def ln_v(self, t: np.ndarray) -> np.ndarray:
        return self._ln_v(t, self.table.values)

    def _ln_v(self, x: np.ndarray, knots: np.ndarray) -> np.ndarray:
        return np.log(np.interp(x, knots, self.table.counts[: knots.size])) - self.ln_n1

    def bracket(
        self, t: np.ndarray, knots: np.ndarray | None = None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bounds on the sample count ``#{y_i <= t}`` for ``t`` in ``[y_1, y_N]``.

        Returns knot indices ``j`` and ``nxt`` and a mask ``exact``: the count lies in
        ``[counts[j], counts[j]]`` where ``exact``, else in ``[counts[j], counts[nxt] − 1]``.
        ``knots``: the leading knots in the units of ``t`` (default the values of ``f``; the
        exact gaps ``y_j − f*`` for gaps).
        """
        values, counts = self.table.values, self.table.counts
        knots = values if knots is None else knots
        j = np.clip(np.searchsorted(knots, t, side="right") - 1, 0, values.size - 1)
        nxt = np.minimum(j + 1, values.size - 1)
        exact = (knots[j] == t) | (values[nxt] <= self.exact_upto) | (counts[nxt] - counts[j] <= 1)
        return j, nxt, exact

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> _Piece:
        """Eq. 28; interval = Clopper–Pearson on the bracketed count (:func:`absolute_ranks`).

        With ``gap`` (exact ``t − f*``), values up to the last knot whose ``y_j − f*`` is exact
        are compared and interpolated as gaps (``(gap − (y_a − f*))/(y_b − y_a)``: no rounding of
        ``f* + gap``); the others as ``t``, where ``t`` resolves the gap as finely as ``gap``
        itself.
        """
        if gap is None:
            return self._piece(t, self.table.values)
        gaps = self.gaps
        near = gap <= gaps.top
        if not np.any(near):
            return self._piece(t, self.table.values)
        ln_v, lo, hi = (np.empty(t.shape) for _ in range(3))
        for mask, x, knots in (
            (near, gap, gaps.knots[: gaps.exact]),
            (~near, t, self.table.values),
        ):
            if np.any(mask):
                part = self._piece(x[mask], knots)
                ln_v[mask], lo[mask], hi[mask] = part.ln_v, part.ln_lo, part.ln_hi
        return _Piece(ln_v, lo, hi, "interpolated")

    def _piece(self, t: np.ndarray, knots: np.ndarray) -> _Piece:
        ln_v = self._ln_v(t, knots)
        j, nxt, exact = self.bracket(t, knots)
        cp_hi = np.empty(t.shape)
        cp_hi[exact] = self.cp.upper(j[exact])
        cp_hi[~exact] = self.cp.upper_below(nxt[~exact])
        lo = np.minimum(self.cp.lower(j), ln_v)
        hi = np.maximum(cp_hi, ln_v)
        return _Piece(ln_v, lo, hi, "interpolated")

    def ln_cp_upper_zero(self) -> float:
        """Upper confidence limit of ``v1(t)`` for ``t < y_1`` (no sample at or below ``t``)."""
        return self.cp.upper_zero


class _LowerTail(Protocol):
    limit: float  # the tail is used for t < limit
    uses_atom: bool

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> _Piece: ...


@dataclass(frozen=True, eq=False)
class _PaperTail:
    """Eq. 28's lower tail ``exp(t − y_1)/(N + 1)`` exactly as written (not scale-invariant)."""

    eq: _Eq28
    limit: float
    uses_atom: bool = False

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> _Piece:
        # exp(t − y_1): a rounding of t by ulp(f*) changes it by a factor 1 + ulp(f*); no gap
        ln_v = (t - self.eq.y_min) - self.eq.ln_n1
        lo = np.full(t.shape, _NEG_INF)
        hi = np.maximum(self.eq.ln_cp_upper_zero(), ln_v)
        return _Piece(ln_v, lo, hi, "tail-paper")


@dataclass(frozen=True, eq=False)
class _LinearTail:
    """``v1 = 0`` below ``f*``, linear from ``(f*, atom)`` to ``(y_1, max(atom, v1(y_1)))``."""

    eq: _Eq28
    f_opt: float
    atom: float
    limit: float
    uses_atom: bool = True

    @property
    def v_top(self) -> float:
        """``v1`` where the line meets the samples: ``max(atom, v1(y_1))``."""
        return max(self.atom, self.eq.count_at(self.eq.y_min) / (self.eq.n + 1.0))

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> _Piece:
        """``gap``: exact ``t − f*`` (errors), used for the ramp ``(t − f*)/(y_1 − f*)``."""
        ln_top = math.log(self.v_top)
        span = self.eq.y_min - self.f_opt
        ln_atom = _ln(self.atom)
        rise = t - self.f_opt if gap is None else gap
        with np.errstate(divide="ignore", invalid="ignore"):
            frac_ln = np.log(rise) - math.log(span) if span > 0 else np.zeros(t.shape)
            ramp = ln_top + frac_ln  # ln of the linear part above the atom
            ln_v = np.logaddexp(ln_atom, _ln1m_exp(np.array(ln_atom - ln_top)) + ramp)
        below, at = (t < self.f_opt, t == self.f_opt) if gap is None else (gap < 0, gap == 0)
        ln_v = np.where(below, _NEG_INF, np.where(at, ln_atom, ln_v))
        lo = np.where(below, _NEG_INF, ln_atom)
        hi = np.where(below | at, ln_v, np.maximum(self.eq.ln_cp_upper_zero(), ln_v))
        return _Piece(ln_v, np.minimum(lo, ln_v), hi, "tail-linear")


@dataclass(frozen=True, eq=False)
class _PowerTail:
    """``v1(t) = v1(y_k)·((t − f*)/(y_k − f*))^β`` for ``t < y_k``, in log space."""

    f_opt: float
    limit: float  # y_k
    ln_anchor: float
    ln_anchor_lo: float
    ln_anchor_hi: float
    beta: float
    beta_lo: float
    beta_hi: float
    uses_atom: bool = True

    def piece(self, t: np.ndarray, gap: np.ndarray | None = None) -> _Piece:
        """``gap``: exact ``t − f*`` (errors), used in ``(t − f*)/(y_k − f*)``."""
        rise = t - self.f_opt if gap is None else gap
        with np.errstate(divide="ignore", invalid="ignore"):
            ln_ratio = np.log(np.maximum(rise, 0.0)) - math.log(self.limit - self.f_opt)
        ln_v = self.ln_anchor + self.beta * ln_ratio
        lo = self.ln_anchor_lo + self.beta_hi * ln_ratio
        hi = self.ln_anchor_hi + self.beta_lo * ln_ratio
        return _Piece(ln_v, np.minimum(lo, ln_v), np.maximum(hi, ln_v), "tail-power")


@dataclass(frozen=True)
class _TailInputs:
    table: TableData
    ctx: RankContext
    eq: _Eq28
    k_anchor: int
    confidence: float


@dataclass(frozen=True)
class _TailChoice:
    """A lower tail, its name in the answer, the power tail's record and the fallbacks taken."""

    tail: _LowerTail
    lower: str  # "paper" | "linear" | "power"
    power: PowerInfo | None = None
    warnings: tuple[notices.Warning, ...] = ()


TailChoice = _TailChoice


def _require_f_opt(inp: _TailInputs, mode: str) -> float:
    if inp.ctx.f_opt is None:
        raise NotApplicable(f"tail={mode!r} needs a known minimum f*", field="tail")
    f_opt = float(inp.ctx.f_opt)
    if inp.eq.y_min < f_opt:
        raise NotApplicable(
            f"the table's smallest value {inp.eq.y_min!r} is below the registered f* {f_opt!r}",
            field="f_opt",
        )
    return f_opt


def _paper_tail(inp: _TailInputs) -> TailChoice:
    return _TailChoice(_PaperTail(inp.eq, inp.eq.y_min), "paper")


def _linear_tail(inp: _TailInputs) -> TailChoice:
    f_opt = _require_f_opt(inp, "linear")
    return _TailChoice(_LinearTail(inp.eq, f_opt, inp.ctx.atom, inp.eq.y_min), "linear")


def _clipping(points: np.ndarray, ctx: RankContext) -> dict[str, object]:
    """Does the sublevel set through ``points`` reach ``CLIP_SHARE`` of the way to the boundary?"""
    if ctx.x_opt is None:
        raise NotApplicable(
            "x_opt is unknown: the power tail's validity cannot be checked", field="tail"
        )
    x_opt = np.asarray(ctx.x_opt, dtype=np.float64)
    room_lo = x_opt - np.asarray(ctx.region_lower, dtype=np.float64)
    room_hi = np.asarray(ctx.region_upper, dtype=np.float64) - x_opt
    if np.any(room_lo < 0) or np.any(room_hi < 0):
        raise NotApplicable("x_opt lies outside the table's region", field="tail")
    dev = points - x_opt
    room = np.where(dev < 0, room_lo, room_hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(dev == 0, 0.0, np.abs(dev) / room)
    i, coord = np.unravel_index(int(np.argmax(share)), share.shape)
    worst = float(share[i, coord])
    return {
        "ok": bool(worst <= CLIP_SHARE),
        "threshold": CLIP_SHARE,
        "max_share": worst,
        "coordinate": int(coord),
        "point_rank": int(i) + 1,
        "deviation": float(dev[i, coord]),
        "room": float(room[i, coord]),
    }


def _hill(
    low: np.ndarray, y_k: float, f_opt: float, alpha: float
) -> tuple[float, float, float, float]:
    """Hill-type estimate of β from ``log(y_i − f*)``, ``i < k`` [3]: ``(β̂, se, lo, hi)``.

    ``1/β̂ = mean_i log((y_k − f*)/(y_i − f*))``; under ``v1 = C(t − f*)^β`` the ``k − 1`` terms are
    i.i.d. ``Exp(β)``, so ``2β·Σ ~ χ²(2(k − 1))`` gives an exact interval; ``se = β̂/sqrt(k − 1)``.
    """
    gaps = low - f_opt
    if low.size < 1 or np.any(gaps <= 0):
        raise NotApplicable("the Hill estimate of beta needs k >= 2 samples above f*", field="tail")
    total = float(np.sum(np.log((y_k - f_opt) / gaps)))
    if total <= 0:
        raise NotApplicable("the lowest samples are tied: beta cannot be estimated", field="tail")
    dof = 2.0 * low.size
    beta = low.size / total
    lo = float(stats.chi2.ppf(alpha / 2.0, dof)) / (2.0 * total)
    hi = float(stats.chi2.ppf(1.0 - alpha / 2.0, dof)) / (2.0 * total)
    return beta, beta / math.sqrt(low.size), lo, hi


@dataclass(frozen=True)
class _Fit:
    """The power-law tests on the samples below an anchor (:func:`_power_fit`)."""

    ok: bool
    p_value: float
    min_p_value: float
    record: dict[str, object]  # the JSON of the answer's ``validity.fit``


def _power_fit(below: np.ndarray, y_k: float, f_opt: float, beta: float) -> _Fit:
    """Goodness of fit of the power law on the samples below the anchor.

    If ``v1(t) = v1(y_k)·((t − f*)/(y_k − f*))^β`` on ``[f*, y_k]``, then given ``y_k`` the
    ``k − 1`` lower samples are i.i.d. with ``u_i = ((y_i − f*)/(y_k − f*))^β ~ U(0, 1)``. Two
    tests, each at ``FIT_P_MIN / 2`` (Bonferroni):

    - Kolmogorov–Smirnov of the ``u_i`` against ``U(0, 1)`` (the shape over ``[y_1, y_k]``);
    - the smallest one, ``P(min u <= u_(1)) = 1 − (1 − u_(1))^(k−1)``: the extrapolation is used
      below ``y_1``, exactly where KS has least power. A lowest sample that the model calls
      improbably low means the power law does not reach down there (BBOB f7 and f19 at d = 2:
      KS alone passed and the tail was 10–10^4 times too small at ``y_1``).

    A registered β is a statement about the limit ``t → f*``; these checks refuse it where the
    anchor is not yet in that regime (e.g. BBOB f20 on its full domain, where ``y_1`` lies six
    decades above the power law through ``y_25``). For a Hill-estimated β they are conservative
    (the parameter was fitted to the same points).
    """
    u = ((below - f_opt) / (y_k - f_opt)) ** beta
    ks = stats.kstest(u, "uniform")
    u_min = float(np.min(u))
    # 1 - (1 - u)^m without cancellation
    p_min = float(-np.expm1(u.size * np.log1p(-min(u_min, 1.0 - 1e-16))))
    level = FIT_P_MIN / 2.0
    ok = bool(ks.pvalue >= level and p_min >= level)
    record: dict[str, object] = {
        "test": "Kolmogorov-Smirnov of u_i = ((y_i - f*)/(y_k - f*))^beta against U(0, 1), "
        "and P(min u <= u_(1)) = 1 - (1 - u_(1))^(k-1), each at threshold/2",
        "statistic": float(ks.statistic),
        "p_value": float(ks.pvalue),
        "log10_p_value": log10_of(float(ks.pvalue)),  # kept only when ok: p >= threshold/2
        "min_u": u_min,
        "min_p_value": p_min,
        "log10_min_p_value": log10_of(p_min),
        "threshold": FIT_P_MIN,
        "ok": ok,
    }
    return _Fit(ok, float(ks.pvalue), p_min, record)


@dataclass(frozen=True)
class _Anchor:
    k: int
    y_k: float
    beta: float
    beta_se: float
    beta_lo: float
    beta_hi: float
    check: dict[str, object]  # the JSON of the answer's ``validity`` (without rejected anchors)


_CLIPPING_UNCHECKED: dict[str, object] = {
    "ok": True,
    "checked": False,
    "reason": "the table holds values without their points (a user's samples): whether the "
    "sublevel set is clipped by the region cannot be checked",
}


def _try_anchor(
    table: TableData, ctx: RankContext, f_opt: float, k: int, split: float
) -> _Anchor | notices.Refusal:
    """The power tail anchored at ``y_k``, or why it is not valid there."""
    check = _clipping(table.low_x[:k], ctx) if ctx.points_known else dict(_CLIPPING_UNCHECKED)
    if not check["ok"]:
        deviation, room = check["deviation"], check["room"]
        assert isinstance(deviation, float)
        assert isinstance(room, float)
        return notices.Refusal(
            "sublevel-set-clipped",
            f"sublevel set {{f <= y_{k}}} is clipped by the region: point "
            f"{check['point_rank']} has |x_{check['coordinate']} - x*| = "
            f"{abs(deviation):.6g} > {CLIP_SHARE} x {room:.6g} "
            "(distance from x* to the boundary on that side)",
            field="tail",
        )
    y_k = float(table.low_values[k - 1])
    if y_k <= f_opt:
        return notices.Refusal(
            "anchor-not-above-minimum",
            f"anchor y_{k} = {y_k!r} is not above f* = {f_opt!r}",
            field="tail",
        )
    if ctx.beta is not None:
        beta = beta_lo = beta_hi = float(ctx.beta)
        beta_se = 0.0
    else:
        try:
            beta, beta_se, beta_lo, beta_hi = _hill(table.low_values[: k - 1], y_k, f_opt, split)
        except NotApplicable as exc:
            return notices.Refusal("beta-not-estimable", str(exc), field="tail")
    fit = _power_fit(table.low_values[: k - 1], y_k, f_opt, beta)
    if not fit.ok:
        return notices.Refusal(
            "power-law-rejected",
            f"the {k - 1} samples below y_{k} do not follow the power law with beta = "
            f"{beta:.6g} (KS p = {fit.p_value:.3g}, lowest-sample p = "
            f"{fit.min_p_value:.3g}; each must reach {FIT_P_MIN / 2})",
            field="tail",
        )
    return _Anchor(k, y_k, beta, beta_se, beta_lo, beta_hi, check | {"fit": fit.record})


def _choose_anchor(
    table: TableData, ctx: RankContext, f_opt: float, k_max: int, split: float
) -> tuple[_Anchor, list[str]]:
    """Largest anchor ``k`` (k_max, k_max/2, …, >= MIN_ANCHOR) where the power tail is valid.

    Valid means: ``{f <= y_k}`` lies inside the region (checked on the stored lowest points) and
    the samples below ``y_k`` follow the power law (:func:`_power_fit`). ``{f <= y_k}`` shrinks
    with ``k``, so when the requested anchor fails a lower one may pass, at the price of a wider
    anchor interval. Below ``MIN_ANCHOR`` points both checks lose their power (a
    fully clipped axis escapes the clipping check with probability ``0.8^k``), so the power tail
    is refused.

    Returns
    -------
    anchor : _Anchor
    rejected : list of str
        Why each larger anchor was refused.

    Raises
    ------
    NotApplicable
        No anchor is valid (field ``tail``).
    """
    rejected: list[str] = []
    k = k_max
    while True:
        anchor = _try_anchor(table, ctx, f_opt, k, split)
        if isinstance(anchor, _Anchor):
            return anchor, rejected
        rejected.append(f"k = {k}: {anchor.message}")
        if k // 2 < min(MIN_ANCHOR, k_max):
            raise NotApplicable("no valid power-tail anchor: " + "; ".join(rejected), field="tail")
        k //= 2


def _power_tail(inp: _TailInputs) -> TailChoice:
    f_opt = _require_f_opt(inp, "power")
    ctx, table = inp.ctx, inp.table
    if ctx.atom > 0:
        raise NotApplicable(
            f"f has a plateau at f* (atom {ctx.atom}): its registered mass is used, "
            "never a power tail",
            field="tail",
        )
    # the anchor must be a knot (k <= k_exact) so that its count is exact
    k_max = min(inp.k_anchor, table.low_values.size, table.k_exact, table.n)
    if k_max < 1 or (ctx.beta is None and k_max < 2):
        raise NotApplicable("not enough stored low samples for a power tail", field="tail")
    alpha = 1.0 - inp.confidence
    registered = ctx.beta is not None
    split = alpha if registered else alpha / 2.0  # Bonferroni over (anchor, beta)
    anchor, rejected = _choose_anchor(table, ctx, f_opt, k_max, split)
    count = np.array([inp.eq.count_at(anchor.y_k)])
    tail = _PowerTail(
        f_opt=f_opt,
        limit=anchor.y_k,
        ln_anchor=float(np.log(count[0]) - inp.eq.ln_n1),
        ln_anchor_lo=float(_ln_cp_lower(count, table.n, split)[0]),
        ln_anchor_hi=float(_ln_cp_upper(count, table.n, split)[0]),
        beta=anchor.beta,
        beta_lo=anchor.beta_lo,
        beta_hi=anchor.beta_hi,
    )
    info = PowerInfo(
        beta=anchor.beta,
        beta_source="registered" if registered else "hill",
        beta_se=anchor.beta_se,
        beta_interval=(anchor.beta_lo, anchor.beta_hi),
        beta_derivation=ctx.beta_derivation if registered else "Hill estimator on log(y_i - f*)",
        k=anchor.k,
        requested_k=k_max,
        anchor_value=anchor.y_k,
        anchor_count=round(float(count[0])),
        validity=anchor.check | {"rejected_anchors": rejected},
    )
    warnings = (
        notices.Warning(
            "power-anchor-lowered",
            f"power tail anchored at y_{anchor.k}; refused: " + "; ".join(rejected),
            {"k": anchor.k, "requested_k": k_max, "rejected": tuple(rejected)},
            field="tail",
        ),
    )
    return _TailChoice(tail, "power", info, warnings if rejected else ())


def _auto_tail(inp: _TailInputs) -> TailChoice:
    if inp.ctx.atom > 0:
        return _linear_tail(inp)
    if inp.ctx.f_opt is None:
        said = notices.Warning(
            "paper-tail-without-minimum",
            "f* is unknown: the paper's lower tail exp(t - y_1)/(N+1) is used",
            field="tail",
        )
        return replace(_paper_tail(inp), warnings=(said,))
    table = inp.table
    k_cap = min(table.low_values.size, table.k_exact, table.n)
    if k_cap < min(MIN_ANCHOR, inp.k_anchor):  # the table, not the request, caps the anchor
        said = notices.Warning(
            "power-tail-not-tried",
            f"power tail not tried: the table keeps only {k_cap} lowest samples "
            f"(N = {table.n}), fewer than the {MIN_ANCHOR} an anchor needs to check clipping "
            "and the power law "
            "(the tail would replace Eq. 28 over most of the samples); linear tail used instead",
            {"kept": k_cap, "n": table.n, "min_anchor": MIN_ANCHOR},
            field="tail",
        )
        return replace(_linear_tail(inp), warnings=(said,))
    try:
        return _power_tail(inp)
    except NotApplicable as exc:
        if exc.field != "tail":
            raise
        said = notices.Warning(
            "power-tail-refused",
            f"power tail refused ({exc}); linear tail used instead",
            {"reason": str(exc)},
            field="tail",
        )
        return replace(_linear_tail(inp), warnings=(said,))


_LOWER_TAILS: dict[str, Callable[[_TailInputs], TailChoice]] = {
    "auto": _auto_tail,
    "paper": _paper_tail,
    "linear": _linear_tail,
    "power": _power_tail,
}


def _upper_paper(t: np.ndarray, eq: _Eq28, ctx: RankContext) -> tuple[np.ndarray, np.ndarray]:
    if eq.y_max <= 0:
        raise NotApplicable(
            f"the paper's upper tail needs y_N > 0 (y_N = {eq.y_max!r})", field="tail"
        )
    with np.errstate(divide="ignore"):
        return np.log(-np.expm1(-eq.ln_n1 * t / eq.y_max)), np.zeros(t.shape)


def _upper_fmax(t: np.ndarray, eq: _Eq28, ctx: RankContext) -> tuple[np.ndarray, np.ndarray]:
    span = (eq.y_max if ctx.f_max is None else float(ctx.f_max)) - eq.y_max
    frac = np.clip((t - eq.y_max) / span, 0.0, 1.0) if span > 0 else np.ones(t.shape)
    return np.log((eq.n + frac) / (eq.n + 1.0)), np.zeros(t.shape)


def _upper_flat(t: np.ndarray, eq: _Eq28, ctx: RankContext) -> tuple[np.ndarray, np.ndarray]:
    return np.full(t.shape, math.log(eq.n / (eq.n + 1.0))), np.zeros(t.shape)


_UPPER_TAILS: dict[
    str, Callable[[np.ndarray, _Eq28, RankContext], tuple[np.ndarray, np.ndarray]]
] = {
    "paper": _upper_paper,
    "linear-to-f_max": _upper_fmax,
    "flat": _upper_flat,
}


def _upper_kind(mode: str, ctx: RankContext) -> str:
    """Paper's upper tail only when asked for explicitly; ``auto`` never uses it."""
    if mode == "paper":
        return "paper"
    return "flat" if ctx.f_max is None else "linear-to-f_max"


def _upper_piece(t: np.ndarray, eq: _Eq28, ctx: RankContext, kind: str) -> _Piece:
    ln_v, hi = _UPPER_TAILS[kind](t, eq, ctx)
    lo = np.minimum(eq.cp.lower_n, ln_v)
    at_max = ln_v == 0.0
    return _Piece(ln_v, np.where(at_max, 0.0, lo), hi, "upper-tail")


# --------------------------------------------------------------------------------------------
# Aggregates over runs
# --------------------------------------------------------------------------------------------


def _k_best(runs: int, order: int | None) -> int:
    return 1


def _k_worst(runs: int, order: int | None) -> int:
    return runs


def _k_median(runs: int, order: int | None) -> int:
    # even r: the mean of the two middle order statistics, not an order statistic
    return (runs + 1) // 2 if runs % 2 else NOT_AN_ORDER_STATISTIC


def _k_lower_median(runs: int, order: int | None) -> int:
    return (runs + 1) // 2


def _k_order(runs: int, order: int | None) -> int:
    if order is None:
        raise InvalidInput("aggregate='order' needs order (1 = best run)", field="order")
    k = _positive_int(order, "order")
    if k > runs:
        raise InvalidInput(f"order must be <= runs ({runs}), got {k}", field="order")
    return k


def _k_mean(runs: int, order: int | None) -> int:
    return 1 if runs == 1 else NOT_AN_ORDER_STATISTIC


_AGGREGATES: dict[str, Callable[[int, int | None], int]] = {
    "best": _k_best,
    "worst": _k_worst,
    "median": _k_median,
    "lower-median": _k_lower_median,
    "order": _k_order,
    "mean": _k_mean,
}


# --------------------------------------------------------------------------------------------
# Public entry points
# --------------------------------------------------------------------------------------------


def _check_context(ctx: RankContext) -> None:
    if not isinstance(ctx, RankContext):
        raise InvalidInput("ctx must be a RankContext", field="ctx")
    if not (0.0 <= ctx.atom < 1.0):
        raise InvalidInput(f"atom must be in [0, 1), got {ctx.atom}", field="atom")
    if ctx.atom > 0 and ctx.f_opt is None:
        raise InvalidInput("a registered atom needs a known f*", field="atom")
    if ctx.beta is not None and not (math.isfinite(ctx.beta) and ctx.beta > 0):
        raise InvalidInput(f"beta must be finite and > 0, got {ctx.beta}", field="beta")
    for name in ("f_opt", "f_max"):
        val = getattr(ctx, name)
        if val is not None and not math.isfinite(val):
            raise InvalidInput(f"{name} must be finite", field=name)
    if ctx.f_opt is not None and ctx.f_max is not None and ctx.f_max < ctx.f_opt:
        raise InvalidInput("f_max must be >= f_opt", field="f_max")


def _check_transform(budget: int, runs: int, aggregate: str, order: int | None) -> int:
    """Validate the budget/runs options; return the order statistic ``k``."""
    _positive_int(budget, "budget")
    runs = _positive_int(runs, "runs")
    if aggregate not in _AGGREGATES:
        raise InvalidInput(f"aggregate must be one of {sorted(_AGGREGATES)}", field="aggregate")
    if order is not None and aggregate != "order":
        raise InvalidInput("order is only used with aggregate='order'", field="order")
    return _AGGREGATES[aggregate](runs, order)


"""What query values hold: values of ``f``, or errors ``t − f*`` (exact gaps)."""


def _check_table_options(table: TableData, ctx: RankContext, tail: str, k_anchor: int) -> None:
    if not isinstance(table, TableData):
        raise InvalidInput("table must be a TableData", field="table")
    if tail not in _LOWER_TAILS:
        raise InvalidInput(f"tail must be one of {list(TAIL_MODES)}, got {tail!r}", field="tail")
    _positive_int(k_anchor, "k_anchor")
    _check_context(ctx)
    if ctx.f_max is not None and ctx.f_max < table.values[-1]:
        raise NotApplicable(
            f"the table's largest value {float(table.values[-1])!r} exceeds the registered f_max "
            f"{ctx.f_max!r}",
            field="f_max",
        )


def _apply_atom(
    t: np.ndarray, est: _Piece, method: np.ndarray, ctx: RankContext, gap: np.ndarray | None
) -> _Piece:
    """Registered plateau mass: ``v1(f*) = atom`` and ``v1(t) >= atom`` above ``f*``."""
    if ctx.f_opt is None or ctx.atom <= 0:
        return est
    ln_atom = math.log(ctx.atom)
    above, at = (t > ctx.f_opt, t == ctx.f_opt) if gap is None else (gap > 0, gap == 0)
    method[at] = "atom"

    def lift(x: np.ndarray) -> np.ndarray:
        return np.where(at, ln_atom, np.where(above, np.maximum(x, ln_atom), x))

    return _Piece(lift(est.ln_v), lift(est.ln_lo), lift(est.ln_hi), "")


def _assemble(
    t: np.ndarray,
    eq: _Eq28,
    lower: _LowerTail,
    upper: str,
    ctx: RankContext,
    gap: np.ndarray | None = None,
) -> tuple[_Piece, np.ndarray]:
    """The pieces of ``v1`` at ``t``; with ``gap`` (exact ``t − f*``, ``t = f* + gap`` rounded)
    the lower tail, the atom and the knots near ``f*`` see the gap."""
    if gap is None:
        low = t < lower.limit
    else:
        assert eq.f_opt is not None
        low = gap < lower.limit - eq.f_opt  # exact where y_k − f* is (Sterbenz)
    up = t > eq.y_max
    if upper == "linear-to-f_max" and ctx.f_max is not None:
        up |= t >= float(ctx.f_max)  # v(f_max) = 1 even when y_N = f_max (not N/(N+1))
    masks = {"low": low, "up": ~low & up}
    masks["mid"] = ~(masks["low"] | masks["up"])
    makers: dict[str, Callable[[np.ndarray, np.ndarray | None], _Piece]] = {
        "low": lower.piece,
        "mid": eq.piece,
        "up": lambda x, _: _upper_piece(x, eq, ctx, upper),
    }
    ln_v, lo, hi = (np.empty(t.shape) for _ in range(3))
    method = np.empty(t.shape, dtype=object)
    for name, mask in masks.items():
        if np.any(mask):
            part = makers[name](t[mask], None if gap is None else gap[mask])
            ln_v[mask], lo[mask], hi[mask], method[mask] = (
                part.ln_v,
                part.ln_lo,
                part.ln_hi,
                part.method,
            )
    est = _Piece(ln_v, lo, hi, "")
    if lower.uses_atom:  # the f*-aware tails (the paper's exp tail is kept as published)
        est = _apply_atom(t, est, method, ctx, gap)
        if ctx.f_opt is not None:
            est = _zero_at_minimum(t, est, ctx, gap)
    return est, method


def _zero_at_minimum(
    t: np.ndarray, est: _Piece, ctx: RankContext, gap: np.ndarray | None
) -> _Piece:
    """``v1 = 0`` below ``f*``, and at ``f*`` without an atom, whatever the samples say: a
    sample that rounds to ``f*`` (a deep ladder level, ``f = g + f*`` in float64) must not
    give ``f*`` itself a positive rank."""
    assert ctx.f_opt is not None
    f_opt = float(ctx.f_opt)
    at_zero = ctx.no_plateau and ctx.atom == 0  # v1(f*) = 0 too
    if gap is None:
        zero = t <= f_opt if at_zero else t < f_opt
    else:
        zero = gap <= 0 if at_zero else gap < 0
    if not np.any(zero):
        return est
    out = [np.where(zero, -np.inf, x) for x in (est.ln_v, est.ln_lo, est.ln_hi)]
    return _Piece(out[0], out[1], out[2], "")


def _transform(ln: np.ndarray, budget: int, runs: int, k: int) -> np.ndarray:
    out = ln_best_of_c(ln, budget)
    return _ln_binom_sf(out, runs, k) if runs > 1 else out


def _result(
    est: _Piece,
    method: np.ndarray,
    budget: int,
    runs: int,
    k: int,
    tail: RankTail,
    warnings: list[notices.Warning],
) -> RankResult:
    ln_v, lo, hi = (_transform(x, budget, runs, k) for x in (est.ln_v, est.ln_lo, est.ln_hi))
    with np.errstate(under="ignore"):
        v = np.exp(ln_v)
    # v is exactly 0 (t below f*, or at f* without an atom): say so instead of naming a tail
    method = np.where(np.isneginf(ln_v), "at-or-below-minimum", method).astype(object)
    return RankResult(
        log10_v=ln_v / LN10,
        v=v,
        method=method,
        log10_lo=np.minimum(lo, ln_v) / LN10,
        log10_hi=np.maximum(hi, ln_v) / LN10,
        tail=tail,
        warnings=warnings,
    )


def table_curve(
    table: TableData,
    ctx: RankContext,
    *,
    tail: str = "auto",
    k_anchor: int = 100,
    confidence: float = 0.95,
) -> V1Curve:
    """``v1(t)`` on a table's region: Eq. 28 inside the samples, a tail model outside.

    Parameters
    ----------
    table, ctx, tail, k_anchor, confidence
        As in :func:`absolute_ranks`.

    Returns
    -------
    V1Curve
        ``power`` is set when the lower tail is the power law; ``f_opt`` is ``None`` for the
        paper's tail (positive below any ``f*``).

    Raises
    ------
    InvalidInput, NotApplicable
        As in :func:`absolute_ranks`.
    """
    _check_table_options(table, ctx, tail, k_anchor)
    confidence = _check_confidence(confidence)
    eq = _Eq28(table, 1.0 - confidence, None if ctx.f_opt is None else float(ctx.f_opt))
    choice = _LOWER_TAILS[tail](_TailInputs(table, ctx, eq, int(k_anchor), float(confidence)))
    lower = choice.tail
    upper = _upper_kind(tail, ctx)
    tail_info = CurveInfo(
        mode=tail,
        lower=choice.lower,
        upper=upper,
        atom=ctx.atom,
        n=table.n,
        max_interp_error=table.max_interp_error,
        confidence=float(confidence),
        region_volume_fraction=ctx.domain_volume_fraction,
        power=choice.power,
    )
    power = None
    if isinstance(lower, _PowerTail):
        ln_c = lower.ln_anchor - lower.beta * math.log(lower.limit - lower.f_opt)
        power = PowerLaw(lower.f_opt, ln_c, lower.beta, lower.limit)

    def evaluate(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        est, method = _assemble(np.asarray(t, dtype=np.float64), eq, lower, upper, ctx)
        return est.ln_v, est.ln_lo, est.ln_hi, method

    def evaluate_gap(gap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        assert eq.f_opt is not None
        g = np.asarray(gap, dtype=np.float64)
        est, method = _assemble(eq.f_opt + g, eq, lower, upper, ctx, g)
        return est.ln_v, est.ln_lo, est.ln_hi, method

    atom = ctx.atom if lower.uses_atom else 0.0
    model = TableCurve(
        n=table.n,
        values=table.values,
        counts=table.counts,
        lower=_lower_model(lower, choice.power, eq),
        upper=UpperTail(upper, eq.y_max, None if ctx.f_max is None else float(ctx.f_max)),
        atom=atom,
    )
    return V1Curve(
        evaluate=evaluate,
        info=tail_info,
        warnings=list(choice.warnings),
        f_opt=None if isinstance(lower, _PaperTail) else ctx.f_opt,
        power=power,
        atom=atom,
        table=model,
        evaluate_gap=None if eq.f_opt is None else evaluate_gap,
    )


def _lower_model(lower: _LowerTail, power: PowerInfo | None, eq: _Eq28) -> LowerTail:
    """The published form of a lower tail (point estimate; see :class:`LowerTail`)."""
    if isinstance(lower, _PowerTail):
        assert power is not None
        lo, hi = power.beta_interval
        return LowerTail(
            kind="power",
            limit=lower.limit,
            f_opt=lower.f_opt,
            v_top=math.exp(lower.ln_anchor),
            beta=lower.beta,
            beta_se=float(power.beta_se),
            beta_interval=(float(lo), float(hi)),
            beta_source=power.beta_source,
            beta_derivation=power.beta_derivation,
            k=int(power.k),
            requested_k=int(power.requested_k),
            anchor_count=int(power.anchor_count),
        )
    if isinstance(lower, _LinearTail):
        return LowerTail("linear", lower.limit, lower.f_opt, lower.v_top, atom=lower.atom)
    return LowerTail("paper", lower.limit, None, 1.0 / (eq.n + 1.0))


def ranks_from_curve(
    t: np.ndarray,
    curve: V1Curve,
    *,
    budget: int = 1,
    runs: int = 1,
    aggregate: str = "best",
    order: int | None = None,
    values_are: str = "f",
) -> RankResult:
    """Absolute ranks of metric values from a curve ``v1``.

    Parameters
    ----------
    t : array_like, shape (n,)
        Metric values (units of ``f``), finite: one aggregate value per entry; with
        ``values_are="error"`` the errors ``t − f*`` themselves.
    curve : V1Curve
        ``v1`` of one evaluation.
    budget, runs, aggregate, order
        As in :func:`absolute_ranks`.
    values_are : {"f", "error"}, optional
        ``"error"``: ``t`` holds exact gaps to the curve's ``f*``, ranked as gaps
        (:meth:`V1Curve.evaluate_errors`): an error far below the float64 resolution of ``f*``
        keeps its digits, where ``f* + e`` would round them away.

    Returns
    -------
    RankResult
        ``tail`` is the curve's description plus the ``transform``.

    Raises
    ------
    InvalidInput
        Non-finite ``t`` or invalid options.
    NotApplicable
        An aggregate the curve cannot support (see :mod:`app.domain.aggregates`); errors on a
        curve without ``f*``.
    """
    values = _finite_1d(t, "values")
    k = _check_transform(budget, runs, aggregate, order)
    gaps = _check_values_are(values_are)
    if k == NOT_AN_ORDER_STATISTIC:
        from app.domain.aggregates import aggregate_ranks  # imports this module

        return aggregate_ranks(
            values, curve, budget=budget, runs=runs, aggregate=aggregate, values_are=values_are
        )
    ln_v, lo, hi, method = curve.evaluate_errors(values) if gaps else curve.evaluate(values)
    info = RankTail(curve.info, Transform(int(budget), int(runs), aggregate, k))
    est = _Piece(ln_v, lo, hi, "")
    return _result(est, method, int(budget), int(runs), k, info, curve_warnings(curve))


def curve_warnings(curve: V1Curve) -> list[notices.Warning]:
    """The curve's warnings as :class:`notices.Warning` (text from untyped curves gets the
    code ``"curve"``)."""
    return [
        w if isinstance(w, notices.Warning) else notices.Warning("curve", w) for w in curve.warnings
    ]


def absolute_ranks(
    t: np.ndarray,
    table: TableData,
    ctx: RankContext,
    *,
    tail: str = "auto",
    budget: int = 1,
    runs: int = 1,
    aggregate: str = "best",
    order: int | None = None,
    k_anchor: int = 100,
    confidence: float = 0.95,
) -> RankResult:
    r"""Absolute ranks of metric values from a sampled table (SPEC §3; Jing & Liu Eq. 28, Eq. 19).

    Parameters
    ----------
    t : array_like, shape (n,)
        Metric values (best ``f`` found per run, units of ``f``); must be finite.
    table : TableData
        The sampled table of the function on ``ctx``'s region.
    ctx : RankContext
        Known ``f*``, ``f_max``, atom, ``β``, ``x*`` and the table's region.
    tail : {"auto", "paper", "linear", "power"}, optional
        Lower-tail model below the sample range:

        * ``"paper"``: exactly Eq. 28's tails, ``exp(t − y_1)/(N+1)`` below and
          ``1 − exp(−ln(N+1)·t/y_N)`` above (the latter only if ``y_N > 0``);
        * ``"linear"``: needs ``f*``; 0 below ``f*``, the atom at ``f*``, linear up to
          ``(y_1, v1(y_1))`` (no jump when ``y_1`` is tied);
        * ``"power"``: needs ``f*``, no atom and an unclipped sublevel set at ``y_k`` (``k =
          min(k_anchor, stored low samples)``): ``v1(y_k)·((t − f*)/(y_k − f*))^β`` for ``t < y_k``;
          ``β`` registered or the Hill estimate;
        * ``"auto"``: linear when ``atom > 0``; power when possible, else linear (with a warning);
          paper (with a warning) when ``f*`` is unknown.

        Above ``y_N`` the non-paper modes use linear interpolation to ``(f_max, 1)`` when ``f_max``
        is known, else ``v = N/(N+1)``.
    budget : int, optional
        Evaluations per run ``c``: ``v_c = 1 − (1 − v1)^c`` (Eq. 19).
    runs : int, optional
        Number of runs ``r``.
    aggregate : {"best", "worst", "median", "lower-median", "order", "mean"}, optional
        How ``r > 1`` runs are summarised: order statistic ``k`` = 1, ``r``, ``(r+1)/2`` (odd
        ``r``; ``lower-median``: ``ceil(r/2)``) or ``order``, with ``P(Z_(k) <= t) = P(Bin(r,
        v_c) >= k)``; the mean of ``r`` runs and the median of an even ``r`` (mean of the two
        middle order statistics) by :func:`app.domain.aggregates.aggregate_ranks`.
    order : int, optional
        ``k`` for ``aggregate="order"``.
    k_anchor : int, optional
        Anchor rank of the power tail; capped at the stored low samples and ``k_exact``.
    confidence : float, optional
        Level of the intervals.

    Returns
    -------
    RankResult

    Raises
    ------
    InvalidInput
        Non-finite ``t`` (``field="values"``), invalid options (``field`` names the option).
    NotApplicable
        ``tail="power"`` refused (no ``f*``, an atom, unknown ``x*``, clipped sublevel set — the
        message gives the coordinate and numbers; ``field="tail"``), ``tail="linear"`` without
        ``f*``, paper upper tail with ``y_N <= 0``, the table contradicts ``f*``/``f_max``; an
        aggregate that needs what the curve lacks (see :mod:`app.domain.aggregates`).

    Notes
    -----
    Intervals (all at ``confidence``; the same monotone transform as the point estimate is applied
    to both ends):

    * inside ``[y_1, y_N]``: Clopper–Pearson [2] on the sample count ``c = #{y_i <= t}``. Between
      two knots that skip sample values the count is only known to lie in ``[c_a, c_b − 1]``;
      the interval then runs from the lower limit of ``c_a`` to the upper limit of ``c_b − 1``,
      which is the Clopper–Pearson interval widened by the interpolation uncertainty
      (``max_interp_error``). Conservative for QMC samples.
    * power tail: ``ln v = ln v1(y_k) + β ln((t − f*)/(y_k − f*))``; the anchor ``v1(y_k)`` ranges
      over the Clopper–Pearson interval of its count and ``β`` over the exact χ² interval of the
      Hill estimator (``2β·Σ ~ χ²(2(k − 1))``), each at level ``1 − α/2`` (Bonferroni);
      ``β_se = β̂/sqrt(k − 1)`` is reported. With a registered ``β`` only the anchor varies, at level
      ``1 − α`` (model error of the registered ``β`` is not included).
    * linear tail: ``[atom, max(v, U_0)]`` where ``U_0 = 1 − (α/2)^{1/N}`` is the Clopper–Pearson
      upper limit for a count of 0 (no sample at or below ``t``) — the statistically valid
      version of the bound ``v1(y_1)``; the lower end is 0 (``-inf``) without an atom, since
      nothing below ``y_1`` is observed.
    * paper lower tail: ``[0, max(v, U_0)]``.
    * upper tail: ``[L_N, 1]`` with ``L_N = (α/2)^{1/N}`` the lower limit for a count of ``N``;
      ``[1, 1]`` at or above ``f_max``.
    * atom: the registered mass (exact); ``t < f*``: ``v = 0`` exactly.

    Examples
    --------
    >>> import numpy as np
    >>> table = build_table_data(np.array([1.0, 3.0, 4.0, 6.0]), np.zeros((0, 1)))
    >>> ctx = RankContext(None, None, 0.0, None, "", None, np.zeros(1), np.ones(1))
    >>> res = absolute_ranks(np.array([3.0, 3.5]), table, ctx, tail="paper")
    >>> np.round(res.v, 12).tolist()
    [0.4, 0.5]
    """
    values = _finite_1d(t, "values")
    _check_table_options(table, ctx, tail, k_anchor)
    _check_transform(budget, runs, aggregate, order)
    curve = table_curve(table, ctx, tail=tail, k_anchor=k_anchor, confidence=confidence)
    return ranks_from_curve(
        values, curve, budget=budget, runs=runs, aggregate=aggregate, order=order
    )


@dataclass(frozen=True, eq=False)
class _AnalyticInputs:
    ln_gap: np.ndarray  # ln(t - f*), -inf at or below f*
    a: np.ndarray  # distances from x* to the lower faces, (d,)
    b: np.ndarray  # distances to the upper faces, (d,)
    ctx: RankContext
    halfwidth: float | None


def _sphere_v1(inp: _AnalyticInputs) -> tuple[np.ndarray, float]:
    return analytic.sphere_ln_cdf(inp.ln_gap, inp.a, inp.b), analytic.sphere_rel_error(inp.a.size)


def _cone_v1(inp: _AnalyticInputs) -> tuple[np.ndarray, float]:
    f_opt, f_max = inp.ctx.f_opt, inp.ctx.f_max
    if f_opt is None or f_max is None or not f_max > f_opt:
        raise NotApplicable("the analytic cone needs f_max > f*", field="kind")
    w = float(np.max(np.maximum(inp.a, inp.b))) if inp.halfwidth is None else float(inp.halfwidth)
    if not (math.isfinite(w) and w > 0):
        raise InvalidInput(
            f"cone_halfwidth must be finite and > 0, got {w}", field="cone_halfwidth"
        )
    ln_q = inp.ln_gap - math.log(f_max - f_opt)
    return analytic.cone_ln_cdf(ln_q, inp.a, inp.b, w), analytic.CONE_REL_ERROR


_ANALYTIC: dict[str, Callable[[_AnalyticInputs], tuple[np.ndarray, float]]] = {
    "sphere": _sphere_v1,
    "cone": _cone_v1,
}
ANALYTIC_KINDS = tuple(_ANALYTIC)


def _analytic_ln_v1(
    t: np.ndarray,
    kind: str,
    ctx: RankContext,
    halfwidth: float | None,
    gap: np.ndarray | None = None,
) -> tuple[np.ndarray, float]:
    """``ln v1`` at ``t``; with ``gap`` (exact ``t − f*``) the forms take ``ln gap`` itself."""
    if ctx.f_opt is None or ctx.x_opt is None:
        raise NotApplicable(f"analytic {kind!r} ranks need f* and x*", field="kind")
    a, b = analytic.box_distances(ctx.region_lower, ctx.region_upper, ctx.x_opt)
    rise = np.maximum(t - ctx.f_opt, 0.0) if gap is None else gap
    above = t > ctx.f_opt if gap is None else gap > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ln_gap = np.where(above, np.log(np.maximum(rise, 0.0)), _NEG_INF)
    return _ANALYTIC[kind](_AnalyticInputs(ln_gap, a, b, ctx, halfwidth))


def analytic_ranks(
    t: np.ndarray,
    kind: str,
    ctx: RankContext,
    *,
    budget: int = 1,
    runs: int = 1,
    aggregate: str = "best",
    order: int | None = None,
    cone_halfwidth: float | None = None,
) -> RankResult:
    """Absolute ranks from an exact ``v1`` (SPEC §3.3; Jing & Liu §IV-B), ``method="analytic"``.

    Parameters
    ----------
    t : array_like, shape (n,)
        Metric values (units of ``f``), finite.
    kind : {"sphere", "cone"}
        ``"sphere"``: ``f = f* + Σ (x_i − x*_i)²``; ``"cone"``: ``f = f* + (f_max − f*)·max_i|x_i −
        x*_i|/w``. ``v1`` is relative to ``ctx``'s region (pass the domain box for ``v_f``).
    ctx : RankContext
        Needs ``f_opt``, ``x_opt`` (inside the region) and, for the cone, ``f_max``.
    budget, runs, aggregate, order
        As in :func:`absolute_ranks`.
    cone_halfwidth : float, optional
        ``w`` of the cone; default ``max_i max(x*_i − l_i, u_i − x*_i)`` (the L∞ radius at which the
        cone reaches ``f_max`` on the region).

    Returns
    -------
    RankResult
        Interval = point widened by the numerical relative error (``1e-6`` for the clipped sphere
        with ``d >= 3``, ``1e-12`` for closed forms); ``tail`` records ``kind`` and that bound.

    Raises
    ------
    InvalidInput
        Unknown ``kind`` or invalid options.
    NotApplicable
        ``f*``/``x*`` (or ``f_max`` for the cone) unknown, or ``x*`` outside the region.
    """
    values = _finite_1d(t, "values")
    curve = analytic_curve(kind, ctx, cone_halfwidth=cone_halfwidth)
    return ranks_from_curve(
        values, curve, budget=budget, runs=runs, aggregate=aggregate, order=order
    )


def _analytic_power(kind: str, ctx: RankContext, halfwidth: float | None) -> PowerLaw | None:
    """The unclipped range of an exact form, where ``v1`` is a pure power of ``t − f*``."""
    assert ctx.f_opt is not None
    assert ctx.x_opt is not None
    a, b = analytic.box_distances(ctx.region_lower, ctx.region_upper, ctx.x_opt)
    room = float(np.min(np.minimum(a, b)))
    if room <= 0:
        return None
    ln_vol = float(np.sum(np.log(a + b)))
    d = a.size
    if kind == "sphere":  # ball of radius sqrt(t - f*) inside the box
        ln_c = 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0) - ln_vol
        return PowerLaw(float(ctx.f_opt), ln_c, 0.5 * d, float(ctx.f_opt) + room**2)
    assert ctx.f_max is not None
    span = float(ctx.f_max) - float(ctx.f_opt)
    w = float(np.max(np.maximum(a, b))) if halfwidth is None else float(halfwidth)
    # cube of half-width w (t - f*)/span inside the box
    ln_c = d * (math.log(2.0 * w) - math.log(span)) - ln_vol
    return PowerLaw(float(ctx.f_opt), ln_c, float(d), float(ctx.f_opt) + span * room / w)


def analytic_curve(kind: str, ctx: RankContext, *, cone_halfwidth: float | None = None) -> V1Curve:
    """The exact ``v1`` of :func:`analytic_ranks` as a curve.

    Parameters
    ----------
    kind, ctx, cone_halfwidth
        As in :func:`analytic_ranks`.

    Returns
    -------
    V1Curve
        ``power`` covers the range where the sublevel set is not clipped by the region.

    Raises
    ------
    InvalidInput, NotApplicable
        As in :func:`analytic_ranks`.
    """
    if kind not in ANALYTIC_KINDS:
        raise InvalidInput(
            f"kind must be one of {list(ANALYTIC_KINDS)}, got {kind!r}", field="kind"
        )
    _check_context(ctx)
    probe = np.array([np.inf if ctx.f_opt is None else float(ctx.f_opt)])
    _, rel = _analytic_ln_v1(probe, kind, ctx, cone_halfwidth)  # validates the options
    pad = math.log1p(rel)

    def evaluate(t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        ln_v, _ = _analytic_ln_v1(np.asarray(t, dtype=np.float64), kind, ctx, cone_halfwidth)
        method = np.full(ln_v.shape, "analytic", dtype=object)
        return ln_v, ln_v - pad, np.minimum(ln_v + pad, 0.0), method

    def evaluate_gap(gap: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        assert ctx.f_opt is not None
        g = np.asarray(gap, dtype=np.float64)
        ln_v, _ = _analytic_ln_v1(ctx.f_opt + g, kind, ctx, cone_halfwidth, g)
        method = np.full(ln_v.shape, "analytic", dtype=object)
        return ln_v, ln_v - pad, np.minimum(ln_v + pad, 0.0), method

    info = AnalyticInfo(kind, rel, ctx.domain_volume_fraction)
    return V1Curve(
        evaluate=evaluate,
        info=info,
        warnings=[],
        f_opt=ctx.f_opt,
        power=_analytic_power(kind, ctx, cone_halfwidth),
        evaluate_gap=evaluate_gap,
    )
