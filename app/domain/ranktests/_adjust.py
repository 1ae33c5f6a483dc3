"""Multiple-comparison adjustment of p-values, in linear and in log10 space."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial

import numpy as np
from numpy.typing import ArrayLike, NDArray
from statsmodels.stats.multitest import multipletests

from app.domain.errors import InvalidInput
from app.domain.ranktests._common import LN10, frozen
from app.domain.stattools import LOG10_TINY


def _statsmodels_adjust(p: np.ndarray, name: str) -> np.ndarray:
    return np.asarray(multipletests(p, method=name)[1], dtype=np.float64)


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm [8]_: ``p'_(i) = max_{j <= i} min(1, (m − j + 1) p_(j))``.

    Computed here rather than by statsmodels, whose Holm branch runs ``gc.collect()`` on every
    call (about 40 ms in a test process, more in a large server heap); tests compare the two.
    """
    m = p.size
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.maximum.accumulate(np.minimum(1.0, (m - np.arange(m)) * p[order]))
    return out


def _bonferroni(p: np.ndarray) -> np.ndarray:
    out: NDArray[np.float64] = np.minimum(1.0, p.size * p)
    return out


def _finner(p: np.ndarray) -> np.ndarray:
    """``p'_(i) = max_{j <= i} 1 − (1 − p_(j))^{m/j}`` [11]_ (step-down, monotone)."""
    m = p.size
    order = np.argsort(p, kind="stable")
    j = np.arange(1, m + 1)
    with np.errstate(divide="ignore"):  # log1p(-1) = -inf gives exactly 1
        adj = -np.expm1((m / j) * np.log1p(-p[order]))
    out = np.empty(m)
    out[order] = np.maximum.accumulate(adj)
    return out


def _li(p: np.ndarray) -> np.ndarray:
    """Li's two-step procedure [12]_: ``p'_i = p_i / (p_i + 1 − p_(m))``, ``p'_(m) = p_(m)``.

    With ``p_(m) = 1`` this is 1 for every ``p_i > 0`` and 0 for ``p_i = 0`` (Li's second step
    rejects ``p_i <= α (1 − p_(m)) / (1 − α) = 0`` only).
    """
    largest = float(p.max())
    denominator = p + (1.0 - largest)
    out: NDArray[np.float64] = np.divide(
        p, denominator, out=np.zeros_like(p), where=denominator > 0
    )
    out[p == largest] = largest
    return out


@lru_cache(maxsize=64)
def shaffer_true_hypotheses(k: int) -> tuple[int, ...]:
    """``S(k)``: the possible numbers of true hypotheses among all pairwise equalities of k means.

    Parameters
    ----------
    k : int
        Number of algorithms, ``k >= 0``.

    Returns
    -------
    tuple of int
        Sorted ``S(k) = ∪_{j=1..k} {C(j, 2) + x : x ∈ S(k − j)}``, ``S(0) = S(1) = {0}``
        (Shaffer [13]_; García & Herrera [2]_): the true equalities are those inside the blocks
        of a partition of the ``k`` means.

    Examples
    --------
    >>> shaffer_true_hypotheses(4)
    (0, 1, 2, 3, 6)
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InvalidInput(f"k must be an integer >= 0, got {k!r}", field="k")
    masks = [1, 1]  # bit s set <=> s ∈ S(i)
    for i in range(2, k + 1):
        mask = 0
        for j in range(1, i + 1):
            mask |= masks[i - j] << (j * (j - 1) // 2)
        masks.append(mask)
    mask = masks[k]
    return tuple(s for s in range(mask.bit_length()) if mask >> s & 1)


def _n_algorithms_of_pairs(m: int) -> int:
    k = (1 + math.isqrt(1 + 8 * m)) // 2
    if k * (k - 1) // 2 != m or k < 2:
        raise InvalidInput(
            f"shaffer adjusts all k(k − 1)/2 pairwise comparisons; {m} is not such a count",
            field="p",
        )
    return k


def _shaffer(p: np.ndarray) -> np.ndarray:
    """Static Shaffer [13]_ [2]_: ``p'_(i) = max_{j <= i} min(1, t_j p_(j))``.

    ``t_j`` is the largest number of hypotheses that can still be true once ``j − 1`` are false:
    the largest element of ``S(k)`` that is ``<= m − j + 1``.
    """
    m = p.size
    t = _shaffer_multipliers(m)  # for m − j + 1 remaining hypotheses, j = 1..m
    order = np.argsort(p, kind="stable")
    out = np.empty(m)
    out[order] = np.maximum.accumulate(np.minimum(1.0, t * p[order]))
    return out


def _shaffer_multipliers(m: int) -> np.ndarray:
    """``t_j`` of :func:`_shaffer` for ``j = 1..m``."""
    possible = np.array(shaffer_true_hypotheses(_n_algorithms_of_pairs(m)))
    remaining = m - np.arange(m)
    return possible[np.searchsorted(possible, remaining, side="right") - 1]


# Log-space adjustments: every procedure is a min/max of constant multiples of raw p's (Finner,
# Li: of smooth functions of them), so it runs on ``log10 p`` unchanged and never underflows.


def _log_step_down(lp: np.ndarray, multipliers: np.ndarray) -> np.ndarray:
    """``max_{j <= i} min(0, log10 c_j + lp_(j))`` in the input order (Holm, Shaffer)."""
    order = np.argsort(lp, kind="stable")
    out = np.empty(lp.size)
    out[order] = np.maximum.accumulate(np.minimum(0.0, np.log10(multipliers) + lp[order]))
    return out


def _log_holm(lp: np.ndarray) -> np.ndarray:
    return _log_step_down(lp, lp.size - np.arange(lp.size, dtype=np.float64))


def _log_shaffer(lp: np.ndarray) -> np.ndarray:
    return _log_step_down(lp, _shaffer_multipliers(lp.size).astype(np.float64))


def _log_bonferroni(lp: np.ndarray) -> np.ndarray:
    return np.minimum(0.0, math.log10(lp.size) + lp)


def _log_hochberg(lp: np.ndarray) -> np.ndarray:
    """Step-up [9]_: ``p'_(i) = min_{j >= i} min(1, (m − j + 1) p_(j))``."""
    m = lp.size
    order = np.argsort(lp, kind="stable")
    raw = np.log10(m - np.arange(m, dtype=np.float64)) + lp[order]
    out = np.empty(m)
    out[order] = np.minimum(0.0, np.minimum.accumulate(raw[::-1])[::-1])
    return out


def _log_hommel(lp: np.ndarray) -> np.ndarray:
    """Hommel [10]_ as R's ``p.adjust(method="hommel")``, on ``log10 p`` (Hochberg for m = 2)."""
    n = lp.size
    if n <= 2:
        return _log_hochberg(lp)
    order = np.argsort(lp, kind="stable")
    p = lp[order]
    log_i = np.log10(np.arange(1, n + 1, dtype=np.float64))
    q = np.full(n, float(np.min(math.log10(n) + p - log_i)))
    pa = q.copy()
    for m in range(n - 1, 1, -1):
        log_m = math.log10(m)
        q1 = float(np.min(log_m + p[n - m + 1 :] - log_i[1:m]))
        q[: n - m + 1] = np.minimum(log_m + p[: n - m + 1], q1)
        q[n - m + 1 :] = q[n - m]
        pa = np.maximum(pa, q)
    out = np.empty(n)
    out[order] = np.minimum(0.0, np.maximum(pa, p))
    return out


def _log10_one_minus_power(lp: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``log10(1 − (1 − p)^c)`` for ``p = 10^lp``, ``c >= 1``: ``log10(c p)`` once ``p``
    underflows (relative error ``c p / 2``)."""
    ln_p = lp * LN10
    with np.errstate(divide="ignore", under="ignore"):  # log1p(−1) = −inf gives exactly 1
        direct = np.log10(-np.expm1(c * np.log1p(-np.exp(ln_p))))
    out: NDArray[np.float64] = np.where(ln_p < -700.0, np.log10(c) + lp, direct)
    return out


def _log_finner(lp: np.ndarray) -> np.ndarray:
    m = lp.size
    order = np.argsort(lp, kind="stable")
    adj = _log10_one_minus_power(lp[order], m / np.arange(1, m + 1, dtype=np.float64))
    out = np.empty(m)
    out[order] = np.maximum.accumulate(adj)
    return out


def _log_li(lp: np.ndarray) -> np.ndarray:
    """Li [12]_ on logs: ``log10 p_i − log10(p_i + 1 − p_(m))`` by ``logaddexp``."""
    largest = float(lp.max())
    with np.errstate(divide="ignore"):  # p_(m) = 1: log1p(−1) = −inf, the ratio is 1
        log_gap = math.log1p(-(10.0**largest)) if largest < 0.0 else -math.inf
    out = lp - np.logaddexp(lp * LN10, log_gap) / LN10
    out[lp == largest] = largest
    return out


_LOG_ADJUSTMENTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "bonferroni": _log_bonferroni,
    "holm": _log_holm,
    "hochberg": _log_hochberg,
    "hommel": _log_hommel,
    "finner": _log_finner,
    "li": _log_li,
    "shaffer": _log_shaffer,
}


_ADJUSTMENTS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "bonferroni": _bonferroni,
    "holm": _holm,
    "hochberg": partial(_statsmodels_adjust, name="simes-hochberg"),
    "hommel": partial(_statsmodels_adjust, name="hommel"),
    "finner": _finner,
    "li": _li,
    "shaffer": _shaffer,
}


def adjusted_pvalues(p: ArrayLike, *, method: str) -> np.ndarray:
    """Adjust a family of p-values for multiple testing.

    Parameters
    ----------
    p : array_like, shape (m,)
        Raw p-values in ``[0, 1]``.
    method : {"bonferroni", "holm", "hochberg", "hommel", "finner", "li", "shaffer"}
        Hochberg [9]_ and Hommel [10]_ come from statsmodels' ``multipletests``
        (``"simes-hochberg"``, ``"hommel"``); Holm [8]_, Finner [11]_, Li [12]_ and static
        Shaffer [13]_ are computed here. ``"shaffer"`` needs the family of all
        ``k(k − 1)/2`` pairwise comparisons of ``k`` algorithms (``m`` must be such a count).

    Returns
    -------
    ndarray, shape (m,)
        Adjusted p-values, in the input order, ``>= p`` and ``<= 1``; for the step-wise
        procedures they are non-decreasing in the order of the raw p-values.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``p`` not 1-D or outside ``[0, 1]`` (``p``); unknown ``method`` (``method``).

    Examples
    --------
    >>> adjusted_pvalues([0.01, 0.04, 0.03, 0.50], method="holm").tolist()
    [0.04, 0.09, 0.09, 0.5]
    """
    return _run_adjustment(p, method, _ADJUSTMENTS, low=0.0, high=1.0, what="p-values")


def _run_adjustment(
    values: ArrayLike,
    method: str,
    procedures: dict[str, Callable[[np.ndarray], np.ndarray]],
    *,
    low: float,
    high: float,
    what: str,
) -> np.ndarray:
    """Validate a family (1-D, in ``[low, high]``, no NaN), adjust it, clip to ``[raw, high]``."""
    adjust = procedures.get(method) if isinstance(method, str) else None
    if adjust is None:
        raise InvalidInput(
            f"unknown adjustment {method!r}; choose one of {sorted(procedures)}",
            field="method",
        )
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1:
        raise InvalidInput(f"p must be one-dimensional, got shape {a.shape}", field="p")
    if not np.all((a >= low) & (a <= high)):  # also refuses NaN
        raise InvalidInput(f"{what} must lie in [{low:g}, {high:g}]", field="p")
    if a.size == 0:
        return a.copy()
    out: NDArray[np.float64] = np.clip(adjust(a), a, high)
    return out


def adjusted_log10_pvalues(log10_p: ArrayLike, *, method: str) -> np.ndarray:
    """:func:`adjusted_pvalues` in log space: ``log10`` of the adjusted p-values.

    Parameters
    ----------
    log10_p : array_like, shape (m,)
        ``log10`` of the raw p-values, in ``[−inf, 0]`` (finite whenever the p-value is
        positive, however small).
    method : str
        As :func:`adjusted_pvalues`; the same procedure run on logarithms (products by
        constants become sums; Finner's ``1 − (1 − p)^{m/j}`` and Li's ratio are taken through
        ``log1p``/``expm1`` and ``logaddexp``), so nothing underflows.

    Returns
    -------
    ndarray, shape (m,)
        ``log10`` of the adjusted p-values, ``>= log10_p`` and ``<= 0``; equal to ``log10`` of
        :func:`adjusted_pvalues` wherever that does not underflow.

    Raises
    ------
    app.domain.errors.InvalidInput
        ``log10_p`` not 1-D, positive or NaN (``p``); unknown ``method`` (``method``).

    Examples
    --------
    >>> adjusted_log10_pvalues([-2000.0, -3.0, -1.0], method="holm").round(6).tolist()
    [-1999.522879, -2.69897, -1.0]
    """
    return _run_adjustment(
        log10_p, method, _LOG_ADJUSTMENTS, low=-math.inf, high=0.0, what="log10 p-values"
    )


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class AdjustedPValues:
    """Adjusted p-values of a family and their ``log10``.

    Attributes
    ----------
    p : ndarray, shape (m,)
        :func:`adjusted_pvalues`, except that a 0 whose logarithm lies in the float range is
        taken from the logarithm (Li with ``p_(m) = 1`` and a raw p that underflowed: the
        float procedure sees ``p = 0``, the log-space one knows it was positive).
    log10_p : ndarray, shape (m,)
        :func:`adjusted_log10_pvalues`.
    """

    p: np.ndarray
    log10_p: np.ndarray


def adjusted_family(p: ArrayLike, log10_p: ArrayLike, *, method: str) -> AdjustedPValues:
    """Adjust a family both ways: the p-values and, in log space, their logarithms.

    Parameters
    ----------
    p : array_like, shape (m,)
        Raw p-values in ``[0, 1]``.
    log10_p : array_like, shape (m,)
        Their ``log10``, computed without underflow.
    method : str
        As :func:`adjusted_pvalues`.

    Returns
    -------
    AdjustedPValues
    """
    logs = adjusted_log10_pvalues(log10_p, method=method)
    adjusted = adjusted_pvalues(p, method=method)
    adjusted = np.where((adjusted == 0.0) & (logs >= LOG10_TINY), 10.0**logs, adjusted)
    return AdjustedPValues(frozen(adjusted), frozen(logs))
