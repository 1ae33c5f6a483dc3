"""Choosing the sampling region of a table: the δ scan of Jing & Liu §V.

The low-cost recipe of [1]_ samples the box ``[x* − δ, x* + δ]^d ∩ Ω`` for every ``δ`` of a
grid with a cheap ``N``, ranks the compared algorithms on each box, and keeps the ``δ`` whose
ranks spread the algorithms best, measured by the geometric mean difference of their ordered
distinct absolute ranks ``v_1 < … < v_k`` ([1]_, Eq. 29):

.. math::

    e = \\Bigl(\\prod_{i=2}^{k} (v_i - v_{i-1})\\Bigr)^{1/(k-1)}

A full-size table is then built at the chosen ``δ``. Ranks of different boxes are different
scales (``v`` is relative to the box), so only ``e`` is compared across ``δ``, never the ranks.

Everything works on ``log10 v`` (the authoritative form of a rank; ranks like 1e-40 are
normal): ``ln e`` is the mean of ``ln(v_i − v_{i−1})``, each difference computed without
cancellation as ``ln v_i + ln(−expm1(ln v_{i−1} − ln v_i))``.

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking
   Optimization Algorithms, §V.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from app.domain.errors import InvalidInput

__all__ = [
    "DEFAULT_GRID_COUNT",
    "DEFAULT_GRID_HIGH",
    "DEFAULT_GRID_LOW",
    "DeltaChoice",
    "Spread",
    "choose_delta",
    "default_grid",
    "geometric_grid",
    "geometric_mean_difference",
]

LN10 = math.log(10.0)
#: Default grid: ``DEFAULT_GRID_COUNT`` values geometric from ``DEFAULT_GRID_LOW`` to
#: ``DEFAULT_GRID_HIGH`` times the domain's largest half-width.
DEFAULT_GRID_COUNT = 8
DEFAULT_GRID_LOW = 1e-3
DEFAULT_GRID_HIGH = 1.0


@dataclass(frozen=True)
class Spread:
    """How far apart a set of absolute ranks lies: Eq. 29 of [1]_.

    Attributes
    ----------
    computable : bool
        Whether there are at least 2 distinct ranks.
    k : int
        Number of distinct ranks.
    log10_v : ndarray, shape (k,)
        The distinct ranks ``log10 v_1 < … < log10 v_k`` (``-inf`` for ``v = 0``).
    log10_e : float or None
        ``log10 e`` (authoritative: ``e`` may underflow); ``None`` when not computable.
    e : float or None
        ``10**log10_e``; ``None`` when not computable.
    reason : str or None
        Why ``e`` is not computable.
    """

    computable: bool
    k: int
    log10_v: np.ndarray
    log10_e: float | None
    e: float | None
    reason: str | None


@dataclass(frozen=True)
class DeltaChoice:
    """The chosen half-width of a δ scan.

    Attributes
    ----------
    index : int
        Position of the chosen ``δ`` in the grid as given.
    delta : float
        The chosen ``δ``.
    log10_e : float
        Its ``log10 e``, the largest of the grid.
    """

    index: int
    delta: float
    log10_e: float


def _log10_ranks_iv(log10_v: ArrayLike) -> np.ndarray:
    try:
        x = np.asarray(log10_v, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput("log10_v must be an array of numbers", field="log10_v") from exc
    if x.ndim != 1:
        raise InvalidInput(f"log10_v must be 1-D, got shape {x.shape}", field="log10_v")
    if np.isnan(x).any() or (x > 0).any() or (x == np.inf).any():
        raise InvalidInput(
            "log10_v must hold log10 of ranks in [0, 1]: numbers <= 0, or -inf for v = 0",
            field="log10_v",
        )
    return x


def geometric_mean_difference(log10_v: ArrayLike) -> Spread:
    """Geometric mean of the gaps between ordered distinct absolute ranks ([1]_, Eq. 29).

    Parameters
    ----------
    log10_v : array_like, shape (n,)
        ``log10`` of the ranks of the compared algorithms on one region, any order, duplicates
        allowed (``-inf`` for ``v = 0``).

    Returns
    -------
    Spread
        ``e`` over the ``k`` distinct ranks; not computable when ``k < 2``.

    Raises
    ------
    InvalidInput
        ``log10_v`` is not 1-D, holds NaN or numbers above 0 (``field="log10_v"``).

    Notes
    -----
    With ``l_i = log10 v_i`` sorted and distinct,
    ``ln(v_i − v_{i−1}) = ln10·l_i + ln(−expm1(ln10·(l_{i−1} − l_i)))`` (exact also for
    ``v_{i−1} = 0``) and ``ln e = mean_i ln(v_i − v_{i−1})``. Order and duplicates of the input
    do not matter.

    Examples
    --------
    >>> import numpy as np
    >>> s = geometric_mean_difference(np.log10([0.1, 0.4, 0.5, 0.1]))
    >>> s.k, round(s.e, 12)  # sqrt((0.4 - 0.1) * (0.5 - 0.4))
    (3, 0.173205080757)
    """
    x = _log10_ranks_iv(log10_v)
    distinct = np.unique(x)  # sorted ascending
    k = int(distinct.size)
    if k < 2:
        reason = (
            "no ranks" if k == 0 else f"all {x.size} rank(s) are equal: fewer than 2 distinct ranks"
        )
        return Spread(False, k, distinct, None, None, reason)
    hi, lo = distinct[1:], distinct[:-1]
    with np.errstate(divide="ignore"):  # lo = -inf (v = 0): expm1(-inf) = -1, ln 1 = 0
        ln_gaps = LN10 * hi + np.log(-np.expm1(LN10 * (lo - hi)))
    log10_e = float(np.mean(ln_gaps) / LN10)
    return Spread(True, k, distinct, log10_e, 10.0**log10_e, None)


def choose_delta(deltas: Sequence[float], log10_e: Sequence[float | None]) -> DeltaChoice | None:
    """The ``δ`` with the largest ``e``; ties go to the larger ``δ``.

    Parameters
    ----------
    deltas : sequence of float, length m
        The grid (any order).
    log10_e : sequence of float or None, length m
        ``log10 e`` of each ``δ``; ``None`` where ``e`` is not computable.

    Returns
    -------
    DeltaChoice or None
        ``None`` when no ``e`` is computable.

    Raises
    ------
    InvalidInput
        Lengths differ, or a ``log10 e`` is NaN.

    Notes
    -----
    ``e`` is compared as ``log10 e`` (floats, exact comparison). Of equal ``e`` the larger box
    wins: it clips fewer sublevel sets of the algorithms' values and leaves fewer of them above
    its largest sample, so its ranks rest least on tail models.

    Examples
    --------
    >>> choose_delta([0.1, 1.0, 0.5], [-2.0, -1.0, -1.0]).delta
    1.0
    """
    if len(deltas) != len(log10_e):
        raise InvalidInput("deltas and log10_e must have the same length", field="log10_e")
    best: DeltaChoice | None = None
    for i, (delta, le) in enumerate(zip(deltas, log10_e, strict=True)):
        if le is None:
            continue
        if math.isnan(le):
            raise InvalidInput("log10_e must not be NaN", field="log10_e")
        if best is None or (le, float(delta)) > (best.log10_e, best.delta):
            best = DeltaChoice(i, float(delta), float(le))
    return best


def geometric_grid(low: float, high: float, count: int) -> np.ndarray:
    """``count`` half-widths geometric from ``low`` to ``high`` (both included).

    Raises
    ------
    InvalidInput
        ``low``/``high`` not finite and positive, ``low >= high``, ``count < 2``, or values that
        coincide in floating point (``field="deltas"``).

    Examples
    --------
    >>> geometric_grid(0.01, 1.0, 3).tolist()
    [0.01, 0.1, 1.0]
    """
    if not (math.isfinite(low) and math.isfinite(high)) or low <= 0 or high <= 0:
        raise InvalidInput("the grid's min and max must be finite and > 0", field="deltas")
    if low >= high:
        raise InvalidInput("the grid's min must be smaller than its max", field="deltas")
    if isinstance(count, bool) or not isinstance(count, int) or count < 2:
        raise InvalidInput("the grid's count must be an integer >= 2", field="deltas")
    grid = np.geomspace(low, high, count)  # endpoints exact
    if np.any(np.diff(grid) <= 0):
        raise InvalidInput(
            f"{count} values between {low!r} and {high!r} coincide in floating point",
            field="deltas",
        )
    return grid


def default_grid(
    lower: ArrayLike, upper: ArrayLike, *, count: int = DEFAULT_GRID_COUNT
) -> np.ndarray:
    """The default δ grid of a domain: ``count`` (8) values geometric from 1e-3 to 1 × its
    half-width.

    The half-width is the largest ``(upper_i − lower_i)/2`` over coordinates.

    Examples
    --------
    >>> default_grid([-5.0, -5.0], [5.0, 5.0])[[0, -1]].tolist()
    [0.005, 5.0]
    """
    lo = np.asarray(lower, dtype=np.float64)
    hi = np.asarray(upper, dtype=np.float64)
    if lo.shape != hi.shape or lo.ndim != 1 or not np.all(np.isfinite(hi - lo)) or np.any(hi <= lo):
        raise InvalidInput("the domain must be a finite box with lower < upper", field="domain")
    half = float(np.max(hi - lo)) / 2.0
    return geometric_grid(DEFAULT_GRID_LOW * half, DEFAULT_GRID_HIGH * half, count)
