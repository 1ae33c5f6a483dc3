"""Cliques of algorithms not significantly different (the bars of a CD diagram)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def rank_cliques(significant: ArrayLike, average_ranks: ArrayLike) -> tuple[tuple[int, ...], ...]:
    """Groups of algorithms not significantly different (the bars of a CD diagram [1]_).

    Parameters
    ----------
    significant : array_like of bool, shape (k, k)
        Symmetric: ``significant[i, j]`` when the pair differs significantly.
    average_ranks : array_like, shape (k,)
        Orders the algorithms (ties by index).

    Returns
    -------
    tuple of tuple of int
        With the algorithms sorted by average rank, every maximal run of consecutive
        algorithms in which no pair is significant, of size ``>= 2``, in order of their first
        member; each run lists its members in rank order. A run contained in another is
        dropped.

    Examples
    --------
    >>> sig = [[0, 0, 1], [0, 0, 0], [1, 0, 0]]
    >>> rank_cliques(sig, [1.0, 2.0, 3.0])
    ((0, 1), (1, 2))
    """
    sig = np.asarray(significant, dtype=bool)
    order = np.argsort(np.asarray(average_ranks, dtype=np.float64), kind="stable")
    s = sig[np.ix_(order, order)]
    k = order.size
    cliques: list[tuple[int, ...]] = []
    end = 0  # exclusive end of the run starting at `start`; never decreases with `start`
    previous_end = 0
    for start in range(k):
        end = max(end, start + 1)
        while end < k and not s[end, start:end].any():
            end += 1
        if end > previous_end and end - start >= 2:
            cliques.append(tuple(int(x) for x in order[start:end]))
        previous_end = max(previous_end, end)
    return tuple(cliques)
