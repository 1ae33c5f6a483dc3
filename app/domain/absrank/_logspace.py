"""Log-space arithmetic of ranks: best of ``c`` (Eq. 19), binomial tails, Clopper–Pearson limits."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
from scipy import special

from app.domain.errors import InvalidInput
from app.domain.validation import positive_int as _positive_int

if TYPE_CHECKING:
    from app.domain.absrank._table import TableData
    from app.domain.cost import WorkControl


LN10 = math.log(10.0)
NEG_INF = -np.inf
_SMALL_LN = -20.0  # below this, series expansions replace log1p/expm1 (x = e^a < 2e-9)


def ln1m_exp(ln_p: np.ndarray) -> np.ndarray:
    """``ln(1 − p)`` from ``ln p`` without cancellation."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        out_: np.ndarray = np.where(
            ln_p > -math.log(2.0), np.log(-np.expm1(ln_p)), np.log1p(-np.exp(ln_p))
        )
        return out_


def _ln_neg_ln1m(ln_p: np.ndarray) -> np.ndarray:
    """``ln(−ln(1 − p))`` from ``ln p``; ``−ln(1−p) = p(1 + p/2 + p²/3 + …)`` for tiny ``p``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        p = np.exp(ln_p)
        series = ln_p + np.log1p(p / 2.0 + p * p / 3.0)
        direct = np.log(-np.log1p(-p))
        out_: np.ndarray = np.where(ln_p < _SMALL_LN, series, direct)
        return out_


def _ln_one_minus_exp_neg_exp(a: np.ndarray) -> np.ndarray:
    """``ln(1 − exp(−e^a))``; ``1 − e^{−x} = x(1 − x/2 + x²/6 − …)`` for tiny ``x = e^a``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x = np.exp(a)
        series = a + np.log1p(-x / 2.0 + x * x / 6.0)
        direct = np.log(-np.expm1(-x))
        out_: np.ndarray = np.where(a < _SMALL_LN, series, direct)
        return out_


def ln_best_of_c(ln_v1: np.ndarray, c: int) -> np.ndarray:
    """``ln v_c`` with ``v_c = 1 − (1 − v1)^c = −expm1(c·log1p(−v1))`` (Eq. 19), in log space."""
    if c == 1:
        return np.array(ln_v1, dtype=np.float64)
    out = _ln_one_minus_exp_neg_exp(math.log(c) + _ln_neg_ln1m(ln_v1))
    out_: np.ndarray = np.minimum(out, 0.0)
    return out_


def _log_sum_rows(terms: np.ndarray) -> np.ndarray:
    """Row-wise ``log Σ exp``; rows of ``-inf`` give ``-inf``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.max(terms, axis=1)
        safe = np.where(np.isfinite(top), top, 0.0)
        total = np.log(np.sum(np.exp(terms - safe[:, None]), axis=1)) + safe
    return np.where(np.isneginf(top), NEG_INF, total)


BINOM_BLOCK_TERMS = 1 << 18
"""Terms (values × pmf terms) :func:`ln_binom_sf` holds at once: the rows are summed in blocks
of this many entries (2 MB per temporary), so that 10^5 values of an order statistic of 10^4
runs need neither gigabytes nor a pass over memory that misses the caches on every term."""


def ln_binom_sf(
    ln_p: np.ndarray,
    r: int,
    k: int,
    *,
    control: WorkControl | None = None,
    progress: tuple[float, float] | None = None,
) -> np.ndarray:
    """``ln P(Bin(r, p) >= k)`` by log-sum-exp of the log-pmfs (``binom.sf`` underflows).

    The ``r − k + 1`` terms of each value are summed row by row, in blocks of values of at
    most :data:`BINOM_BLOCK_TERMS` entries (every row's sum is the same whatever the block);
    ``control`` is checked before each block (a deadline, a cancel), with the values done as
    its progress: ``progress = (done before, total)`` places this call in a larger task
    (default: ``(0, ln_p.size)``)."""
    if k <= 0:
        return np.zeros_like(ln_p)
    j = np.arange(k, r + 1, dtype=np.float64)
    ln_comb = special.gammaln(r + 1.0) - special.gammaln(j + 1.0) - special.gammaln(r - j + 1.0)
    ln_q = ln1m_exp(ln_p)
    last, left = j == r, (r - j)[None, :]  # the failures' count, per term
    rows = max(1, BINOM_BLOCK_TERMS // j.size)
    out = np.empty(ln_p.shape)
    before, total = (0.0, float(ln_p.size)) if progress is None else progress
    for start in range(0, ln_p.size, rows):
        if control is not None:
            control.check(before + start, total)
        block = slice(start, start + rows)
        with np.errstate(invalid="ignore"):
            fail = np.where(last[None, :], 0.0, left * ln_q[block, None])
            terms = ln_comb[None, :] + j[None, :] * ln_p[block, None] + fail
        out[block] = np.minimum(_log_sum_rows(terms), 0.0)
    return out


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
    return ln_binom_sf(ln_p, runs, k) / LN10


def ln_cp_lower(c: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """``ln`` of the Clopper–Pearson lower limit for ``c`` successes out of ``n`` [2]."""
    c = np.asarray(c, dtype=np.float64)
    out = np.full(c.shape, NEG_INF)
    pos = c > 0
    out[pos] = np.log(special.betaincinv(c[pos], n - c[pos] + 1.0, alpha / 2.0))
    return out


def ln_cp_upper(c: np.ndarray, n: int, alpha: float) -> np.ndarray:
    """``ln`` of the Clopper–Pearson upper limit for ``c`` successes out of ``n`` [2]."""
    c = np.asarray(c, dtype=np.float64)
    out = np.zeros(c.shape)
    below = c < n
    out[below] = np.log(special.betaincinv(c[below] + 1.0, n - c[below], 1.0 - alpha / 2.0))
    return out


def ln_or_neg_inf(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


class CPLimits:
    """Clopper–Pearson limits of one table at one ``alpha``, each computed once.

    Inside the samples the counts are always knot counts ``c_j`` or ``c_j − 1``, so the limits
    are memoised per knot: ``lower(j)`` at ``c_j``, ``upper(j)`` at ``c_j`` and ``upper_below(j)``
    at ``c_j − 1``, filled on first use (precomputing all ``3m`` of them would cost about 0.1 s
    per table and level, far more than a request). ``upper_zero`` (count 0, below ``y_1``) and
    ``lower_n`` (count ``N``, above ``y_N``) are the two constants. Every entry comes from
    :func:`ln_cp_lower` / :func:`ln_cp_upper` on the same count, so the results are those of
    the per-value calls bit for bit. Concurrent fills are harmless: they write the same values.
    """

    def __init__(self, table: TableData, alpha: float) -> None:
        self.n = table.n
        self.alpha = alpha
        self.counts = table.counts
        # one row per knot (lower, upper, upper_below): a value's limits, and those of the next
        # knot, share a cache line instead of one line in each of three arrays
        rows = np.full((table.counts.size, 3), np.nan)
        self._lower, self._upper, self._upper_below = rows[:, 0], rows[:, 1], rows[:, 2]
        self.upper_zero = float(ln_cp_upper(np.zeros(1), self.n, alpha)[0])
        self.lower_n = float(ln_cp_lower(np.full(1, self.n), self.n, alpha)[0])

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
        out_: np.ndarray = out
        return out_

    def lower(self, j: np.ndarray) -> np.ndarray:
        return self._memo(self._lower, j, ln_cp_lower, 0)

    def at(self, j: np.ndarray, exact: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Limits of a count bracketed at knot ``j`` (:meth:`Eq28.bracket`): ``lower(j)``, and
        ``upper(j)`` where ``exact``, else ``upper_below(min(j + 1, m − 1))`` (the count is at
        most the next knot's less one). The same memo entries as those methods; the misses
        (a table's first requests) are filled by them."""
        lower = self._lower[j]
        upper = np.where(exact, self._upper[j], self._upper_below[self._next(j)])
        if np.count_nonzero(np.isnan(lower)):
            lower = self.lower(j)
        if np.count_nonzero(np.isnan(upper)):
            upper = np.empty(j.shape)
            upper[exact] = self.upper(j[exact])
            upper[~exact] = self.upper_below(self._next(j[~exact]))
        return lower, upper

    def _next(self, j: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.minimum(j + 1, self.counts.size - 1)
        return out

    def upper(self, j: np.ndarray) -> np.ndarray:
        return self._memo(self._upper, j, ln_cp_upper, 0)

    def upper_below(self, j: np.ndarray) -> np.ndarray:
        return self._memo(self._upper_below, j, ln_cp_upper, 1)


#: Confidence levels whose limits a table keeps (the oldest is dropped beyond this).
_CP_LEVELS_PER_TABLE = 4
_CP_LOCK = threading.Lock()


def cp_limits(table: TableData, alpha: float) -> CPLimits:
    """The table's :class:`CPLimits` at ``alpha``, created on first use."""
    cache = table._cp_limits
    limits = cache.get(alpha)
    if limits is None:
        with _CP_LOCK:
            limits = cache.get(alpha)
            if limits is None:
                limits = CPLimits(table, alpha)
                while len(cache) >= _CP_LEVELS_PER_TABLE:
                    del cache[next(iter(cache))]
                cache[alpha] = limits
    return limits
