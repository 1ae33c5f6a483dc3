"""Pairwise wins and Bradley–Terry strengths."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.ranking import rank_rows
from app.domain.ranktests._common import frozen, matrix_iv


def pairwise_wins(values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0) -> np.ndarray:
    """Pairwise wins over problems: ``W[i, j]`` = problems where ``i`` beats ``j``.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, smaller is better; ``±inf`` allowed, NaN refused.
    rtol, atol : float, optional
        Tie tolerance (:mod:`app.domain.ranking`).

    Returns
    -------
    ndarray, shape (k_algorithms, k_algorithms)
        ``W[i, j]`` = number of problems where ``i`` has the smaller value, plus 1/2 per tie;
        ``W[i, j] + W[j, i] = N`` off the diagonal, 0 on the diagonal.

    Examples
    --------
    >>> pairwise_wins([[1.0, 2.0, 2.0], [3.0, 1.0, 2.0]]).tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.5], [1.0, 0.5, 0.0]]
    """
    a = matrix_iv(values, min_problems=1)
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    n, k = ranks.shape
    wins = np.zeros((k, k))
    step = max(1, 2_000_000 // (k * k))
    for start in range(0, n, step):
        r = ranks[start : start + step]
        wins += (r[:, :, None] < r[:, None, :]).sum(axis=0)
        wins += 0.5 * (r[:, :, None] == r[:, None, :]).sum(axis=0)
    np.fill_diagonal(wins, 0.0)
    return wins


@dataclass(frozen=True, eq=False)  # holds arrays: compare fields, not results
class BradleyTerryResult:
    """Bradley–Terry strengths from pairwise wins.

    Attributes
    ----------
    strengths : ndarray, shape (k_algorithms,)
        ``θ``: the finite positive strengths have geometric mean 1; ``+inf`` above the fitted
        component, 0 below it (see :func:`bradley_terry`).
    probabilities : ndarray, shape (k_algorithms, k_algorithms)
        ``P(i ≻ j)``: ``θ_i / (θ_i + θ_j)`` within a component (each component fitted on its
        own comparisons), 1 or 0 between components by their dominance order, 0.5 on the
        diagonal. ``P[i, j] + P[j, i] = 1``.
    components : tuple of tuple of int
        Strongly connected components of the win graph (``i → j`` when ``W[i, j] > 0``),
        strongest first: each one beat every later one and never lost to one of them.
    iterations : int
        Newman iterations of the longest component fit.
    converged : bool
        Every component fit met ``tol`` within ``max_iter`` iterations.
    iteration : str
        ``"newman"``.
    zermelo_max_relative_difference : float
        Max ``|θ_newman − θ_zermelo| / θ_newman`` over the fitted components, Zermelo's
        classic iteration [15]_ run as an independent check (0 when nothing was fitted).
    degenerate : bool
        True when the win graph is not strongly connected (no finite maximum-likelihood
        estimate exists).
    reason : str or None
        What was done about it.
    """

    strengths: np.ndarray
    probabilities: np.ndarray
    components: tuple[tuple[int, ...], ...]
    iterations: int
    converged: bool
    iteration: str
    zermelo_max_relative_difference: float
    degenerate: bool
    reason: str | None


def _bradley_terry_iv(wins: ArrayLike, tol: float, max_iter: int) -> np.ndarray:
    try:
        w = np.array(wins, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput("wins must be a square numeric matrix", field="wins") from None
    if w.ndim != 2 or w.shape[0] != w.shape[1]:
        raise InvalidInput(f"wins must be a square matrix, got shape {w.shape}", field="wins")
    if w.shape[0] < 2:
        raise InvalidInput("at least 2 algorithms are needed", field="algorithms")
    if not (np.isfinite(w).all() and (w >= 0).all()):
        raise InvalidInput("wins must be finite and >= 0", field="wins")
    if not (isinstance(tol, int | float | np.floating) and math.isfinite(tol) and tol > 0):
        raise InvalidInput(f"tol must be a finite number > 0, got {tol!r}", field="tol")
    if isinstance(max_iter, bool) or not isinstance(max_iter, int) or max_iter < 1:
        raise InvalidInput(f"max_iter must be an integer >= 1, got {max_iter!r}", field="max_iter")
    np.fill_diagonal(w, 0.0)
    return w


def _geometric_normalize(pi: np.ndarray) -> np.ndarray:
    out: NDArray[np.float64] = pi / np.exp(np.mean(np.log(pi)))
    return out


def _newman(w: np.ndarray, tol: float, max_iter: int) -> tuple[np.ndarray, int, bool]:
    """Newman's iteration [14]_ on a strongly connected win matrix (geometric mean 1).

    Updated in place, one algorithm at a time: the simultaneous update can oscillate (with two
    algorithms it only swaps their values). One iteration is one sweep over all algorithms.
    """
    k = w.shape[0]
    pi = np.ones(k)
    wt = w.T
    for it in range(1, max_iter + 1):
        previous = pi.copy()
        for i in range(k):
            inv = 1.0 / (pi[i] + pi)
            pi[i] = np.dot(w[i], pi * inv) / np.dot(wt[i], inv)
        pi = _geometric_normalize(pi)
        if np.max(np.abs(pi - previous) / pi) < tol:
            return pi, it, True
    return pi, max_iter, False


def _zermelo(w: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """Zermelo's MM iteration [15]_: ``π_i ← W_i / Σ_j n_ij / (π_i + π_j)``."""
    games = w + w.T
    won = w.sum(axis=1)
    pi = np.ones(w.shape[0])
    for _ in range(max_iter):
        new = _geometric_normalize(won / (games / (pi[:, None] + pi[None, :])).sum(axis=1))
        if np.max(np.abs(new - pi) / new) < tol:
            return new
        pi = new
    return pi


def _dominance_order(w: np.ndarray) -> list[np.ndarray]:
    """Strongly connected components of the win graph, strongest first.

    Raises NotApplicable unless the condensation is a total order (it always is when every pair
    was compared, as with :func:`pairwise_wins`).
    """
    n_comp, labels = connected_components(csr_matrix(w > 0), directed=True, connection="strong")
    beats = np.zeros((n_comp, n_comp), dtype=np.int64)
    rows, cols = np.nonzero(w > 0)
    beats[labels[rows], labels[cols]] = 1
    np.fill_diagonal(beats, 0)
    indegree = beats.sum(axis=0)
    alive = np.ones(n_comp, dtype=bool)
    order: list[np.ndarray] = []
    for _ in range(n_comp):
        sources = np.flatnonzero(alive & (indegree == 0))
        if sources.size != 1:
            raise NotApplicable(
                "the pairwise comparisons do not order the algorithms' groups: some groups "
                "were never compared, directly or through others, so their strengths are not "
                "on a common scale",
                field="wins",
            )
        c = int(sources[0])
        alive[c] = False
        indegree -= beats[c]
        order.append(np.flatnonzero(labels == c))
    return order


def _reference(order: list[np.ndarray]) -> int | None:
    """The component given finite strengths: the largest (first if tied), except a singleton
    that never loses (top) or never wins (bottom)."""
    m = len(order)
    candidates = [c for c in range(m) if not (m > 1 and order[c].size == 1 and c in (0, m - 1))]
    if not candidates:
        return None
    return max(candidates, key=lambda c: (order[c].size, -c))


def _degenerate_reason(order: list[np.ndarray], ref: int | None) -> str:
    m = len(order)
    parts = [
        f"the win graph is not strongly connected: {m} groups ordered by dominance "
        f"{[c.tolist() for c in order]}, each beating every later one without a loss to it, "
        "so no finite maximum-likelihood strengths exist"
    ]
    if order[0].size == 1:
        parts.append(f"algorithm {int(order[0][0])} never loses (strength +inf)")
    if order[-1].size == 1:
        parts.append(f"algorithm {int(order[-1][0])} never wins (strength 0)")
    if ref is None:
        parts.append("no finite strengths")
    else:
        parts.append(
            f"strengths are fitted within {order[ref].tolist()}; groups above it get +inf, "
            "groups below it 0; probabilities between groups are 1/0 by the order and within a "
            "group come from that group's own fit"
        )
    return "; ".join(parts)


def bradley_terry(
    wins: ArrayLike, *, tol: float = 1e-10, max_iter: int = 100_000
) -> BradleyTerryResult:
    """Bradley–Terry strengths by Newman's iteration, with Zermelo's as a check.

    Parameters
    ----------
    wins : array_like, shape (k, k)
        ``W[i, j]`` = (possibly fractional) wins of ``i`` over ``j``, finite and ``>= 0``
        (e.g. :func:`pairwise_wins`); the diagonal is ignored.
    tol : float, optional
        Stop when no strength changes by more than ``tol`` (relative) in an iteration.
    max_iter : int, optional
        Iteration cap per component (Newman, and separately the Zermelo check).

    Returns
    -------
    BradleyTerryResult

    Raises
    ------
    app.domain.errors.InvalidInput
        ``wins`` not square, negative or non-finite; bad ``tol``/``max_iter``.
    app.domain.errors.NotApplicable
        The comparisons do not order the strongly connected groups (possible only when some
        pairs were never compared): strengths of unrelated groups have no common scale.

    Notes
    -----
    ``P(i ≻ j) = θ_i / (θ_i + θ_j)``; the maximum-likelihood ``θ`` solves Newman's fixed point
    [14]_

    .. math:: θ_i ← \\frac{\\sum_j w_{ij} θ_j / (θ_i + θ_j)}{\\sum_j w_{ji} / (θ_i + θ_j)},

    renormalized to geometric mean 1 each step. A finite maximum exists iff the win graph
    (``i → j`` whenever ``W[i, j] > 0``) is strongly connected (Zermelo [15]_; Ford 1957);
    otherwise one reference group keeps finite strengths, groups above it get ``+inf`` and
    groups below it 0 (docs/METHODS.md, "Per-test decisions", the Bradley–Terry item).

    Examples
    --------
    >>> res = bradley_terry([[0, 2, 3], [1, 0, 3], [0, 0, 0]])  # algorithm 2 never wins
    >>> res.strengths.round(3).tolist(), res.components, res.degenerate
    ([1.414, 0.707, 0.0], ((0, 1), (2,)), True)
    """
    w = _bradley_terry_iv(wins, tol, max_iter)
    k = w.shape[0]
    order = _dominance_order(w)
    component = np.empty(k, dtype=np.intp)
    fitted = np.ones(k)
    iterations, converged, zermelo_diff = 0, True, 0.0
    for c, members in enumerate(order):
        component[members] = c
        if members.size < 2:
            continue
        sub = w[np.ix_(members, members)]
        pi, its, ok = _newman(sub, tol, max_iter)
        fitted[members] = pi
        iterations, converged = max(iterations, its), converged and ok
        check = _zermelo(sub, tol, max_iter)
        zermelo_diff = max(zermelo_diff, float(np.max(np.abs(pi - check) / pi)))
    ref = _reference(order)
    position = ref if ref is not None else 0.5  # no reference: the top group only is above
    strengths = np.where(component < position, math.inf, 0.0)
    if ref is not None:
        strengths[order[ref]] = fitted[order[ref]]
    same = component[:, None] == component[None, :]
    within = fitted[:, None] / (fitted[:, None] + fitted[None, :])
    probabilities = np.where(same, within, (component[:, None] < component[None, :]) * 1.0)
    np.fill_diagonal(probabilities, 0.5)
    degenerate = len(order) > 1
    return BradleyTerryResult(
        strengths=frozen(strengths),
        probabilities=frozen(probabilities),
        components=tuple(tuple(int(x) for x in c) for c in order),
        iterations=iterations,
        converged=converged,
        iteration="newman",
        zermelo_max_relative_difference=zermelo_diff,
        degenerate=degenerate,
        reason=_degenerate_reason(order, ref) if degenerate else None,
    )
