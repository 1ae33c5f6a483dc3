"""Midranks and tie groups: the one place where absrank decides that two values are equal.

Every rank-based statistic (Friedman, Wilcoxon, rank-sum, KS, permutation tests) groups ties
through :func:`tie_labels`, so a tolerance declared by the user means the same thing everywhere.

Two values ``a <= b`` adjacent in sorted order are tied when ``b - a <= atol + rtol·max(|a|, |b|)``.
Groups are formed by chaining adjacent sorted values (single linkage), so a tie group is a run of
sorted values whose consecutive gaps are all within tolerance. With ``rtol = atol = 0`` (the
default) only exactly equal values tie, as in scipy.

NaN is never ranked as data: callers apply their declared missing-value policy first, and these
functions refuse NaN with :class:`~app.domain.errors.InvalidInput`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.domain.errors import InvalidInput

__all__ = ["TieLabels", "check_tolerances", "midranks", "rank_rows", "tie_labels", "tie_sizes"]


def check_tolerances(rtol: float, atol: float) -> None:
    """Refuse a negative or non-finite tie tolerance (fields ``rtol`` / ``atol``)."""
    if not (np.isfinite(rtol) and rtol >= 0):
        raise InvalidInput(f"rtol must be a finite number >= 0, got {rtol!r}", field="rtol")
    if not (np.isfinite(atol) and atol >= 0):
        raise InvalidInput(f"atol must be a finite number >= 0, got {atol!r}", field="atol")


def _as_1d(values: ArrayLike, field: str) -> np.ndarray:
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 1:
        raise InvalidInput(f"{field} must be one-dimensional, got shape {a.shape}", field=field)
    if np.isnan(a).any():
        raise InvalidInput(
            f"{field} contains NaN; declare a missing-value policy instead of sending NaN",
            field=field,
        )
    return a


class TieLabels(NamedTuple):
    """Sort order and tie groups of a sample (unpacks as ``order, labels``).

    Attributes
    ----------
    order : ndarray of int, shape (n,)
        ``np.argsort(values, kind="stable")``.
    labels : ndarray of int, shape (n,)
        Tie group (0, 1, ...) of the ``i``-th smallest value, in increasing order of value.
    """

    order: NDArray[np.intp]
    labels: NDArray[np.int64]


def tie_labels(
    values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0, field: str = "values"
) -> TieLabels:
    """Sort order and tie-group label of each sorted value.

    Parameters
    ----------
    values : array_like, shape (n,)
        Real values; ``±inf`` allowed (they tie only with themselves), NaN refused.
    rtol, atol : float, optional
        Relative and absolute tolerance for "equal" (module docstring). Default exact equality.
    field : str, optional
        Request field named in errors.

    Returns
    -------
    order : ndarray of int, shape (n,)
        ``np.argsort(values, kind="stable")``.
    labels : ndarray of int, shape (n,)
        ``labels[i]`` is the tie group (0, 1, ...) of the ``i``-th smallest value; groups are
        numbered in increasing order of value.

    Raises
    ------
    app.domain.errors.InvalidInput
        NaN in ``values``, a non-1-D array, or a negative/non-finite tolerance.
    """
    check_tolerances(rtol, atol)
    a = _as_1d(values, field)
    order = np.argsort(a, kind="stable")
    s = a[order]
    if s.size == 0:
        return TieLabels(order, np.zeros(0, dtype=np.int64))
    with np.errstate(invalid="ignore"):  # inf - inf
        gap = np.diff(s)
        scale = np.maximum(np.abs(s[:-1]), np.abs(s[1:]))
        close = np.isfinite(gap) & (gap <= atol + rtol * scale)  # ±inf tie only with themselves
        new_group = ~(close | (s[:-1] == s[1:]))
    labels = np.concatenate(([0], np.cumsum(new_group))).astype(np.int64)
    return TieLabels(order, labels)


def midranks(
    values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0, field: str = "values"
) -> np.ndarray:
    """Ascending ranks 1..n with ties given the average of the ranks they span.

    Parameters
    ----------
    values : array_like, shape (n,)
        Real values (NaN refused).
    rtol, atol : float, optional
        Tie tolerance (module docstring).
    field : str, optional
        Request field named in errors.

    Returns
    -------
    ndarray, shape (n,)
        ``ranks[i]`` is the midrank of ``values[i]`` (smallest value has rank 1); every rank is a
        multiple of 1/2.

    Raises
    ------
    app.domain.errors.InvalidInput
        As :func:`tie_labels`.

    Examples
    --------
    >>> midranks([3.0, 1.0, 3.0, 2.0]).tolist()
    [3.5, 1.0, 3.5, 2.0]
    """
    order, labels = tie_labels(values, rtol=rtol, atol=atol, field=field)
    n = order.size
    out = np.empty(n, dtype=np.float64)
    if n == 0:
        return out
    counts = np.bincount(labels)
    ends = np.cumsum(counts)  # 1-based rank of each group's last member
    group_rank = ends - (counts - 1) / 2.0
    out[order] = group_rank[labels]
    return out


def tie_sizes(values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0) -> np.ndarray:
    """Sizes of the tie groups of ``values`` (all ones when there are no ties).

    Returns
    -------
    ndarray of int, shape (n_groups,)
        Group sizes in increasing order of value.
    """
    _, labels = tie_labels(values, rtol=rtol, atol=atol)
    return np.bincount(labels) if labels.size else np.zeros(0, dtype=np.int64)


def rank_rows(
    values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0, field: str = "values"
) -> np.ndarray:
    """Midranks within each row (1 = smallest = best under minimization).

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        One row per problem (block); NaN refused.
    rtol, atol : float, optional
        Tie tolerance (module docstring).
    field : str, optional
        Request field named in errors.

    Returns
    -------
    ndarray, shape (n_problems, k_algorithms)
        Each row holds ranks summing to ``k(k+1)/2``.

    Raises
    ------
    app.domain.errors.InvalidInput
        Not 2-D, or NaN present.
    """
    a = np.asarray(values, dtype=np.float64)
    if a.ndim != 2:
        raise InvalidInput(f"{field} must be a 2-D matrix, got shape {a.shape}", field=field)
    check_tolerances(rtol, atol)
    if np.isnan(a).any():
        raise InvalidInput(
            f"{field} contains NaN; declare a missing-value policy instead of sending NaN",
            field=field,
        )
    if rtol == 0.0 and atol == 0.0:
        return _exact_row_midranks(a)
    return np.vstack([midranks(row, rtol=rtol, atol=atol, field=field) for row in a]).reshape(
        a.shape
    )


def _exact_row_midranks(a: np.ndarray) -> np.ndarray:
    """Row-wise midranks with exact ties, vectorized (``scipy.stats.rankdata(axis=1)`` values)."""
    n, k = a.shape
    if n == 0 or k == 0:
        return np.zeros((n, k), dtype=np.float64)
    order = np.argsort(a, axis=1, kind="stable")
    s = np.take_along_axis(a, order, axis=1)
    idx = np.broadcast_to(np.arange(k), (n, k))
    starts = np.ones((n, k), dtype=bool)
    starts[:, 1:] = s[:, 1:] != s[:, :-1]
    ends = np.ones((n, k), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    first = np.maximum.accumulate(np.where(starts, idx, 0), axis=1)
    last = np.minimum.accumulate(np.where(ends, idx, k - 1)[:, ::-1], axis=1)[:, ::-1]
    out = np.empty((n, k), dtype=np.float64)
    np.put_along_axis(out, order, (first + last) / 2.0 + 1.0, axis=1)
    return out
