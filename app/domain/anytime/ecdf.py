r"""Runtime ECDFs over a target set, and the fixed-budget view of the same runs [1]_.

The runtime ECDF of one function over targets ``t_1 … t_T`` is the fraction of
(target, run) pairs whose runtime is at most the budget ``b``:

.. math::

    F(b) = \frac{1}{T N} \#\{(j, k) : \mathrm{RT}_k(t_j) \le b\},

with the runs' own runtimes (``N = R``) or simulated restarts (``N`` samples per target,
:mod:`app.domain.anytime.restarts`), as cocopp's ``pprldistr``/``pprldmany`` plot them
(there on the axis ``b / dimension``). Pooling several functions with the same ``N`` gives
each (function, target, sample) the same weight. The result is the right-continuous
:class:`~app.domain.anytime.steps.StepFunction` with the distinct finite runtimes as
breakpoints; a repeated target counts once per occurrence.

The fixed-budget view is the best-so-far of each run at given budgets, with quantiles over
runs per budget.

Cost: ECDF ``O(M log M)`` for ``M = T · N`` runtimes; fixed budget ``O(R · B · log m)`` plus
``O(R · B · log R)`` for the quantiles.

References
----------
.. [1] N. Hansen, A. Auger, D. Brockhoff, T. Tušar. Anytime performance assessment in
   blackbox optimization benchmarking. IEEE TEVC 26(6) (2022).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.domain.anytime.runtimes import group_runs, trajectory_of
from app.domain.anytime.steps import StepFunction, frozen, upper_step
from app.domain.errors import InvalidInput
from app.domain.results import RunResult

__all__ = ["DEFAULT_QUANTILES", "FixedBudget", "fixed_budget", "runtime_ecdf"]

DEFAULT_QUANTILES = frozen([0.0, 0.25, 0.5, 0.75, 1.0])
"""Quantile levels of the fixed-budget view: min, quartiles, max."""


def runtime_ecdf(
    runtimes: Sequence[NDArray[np.float64]], *, scale: Sequence[float] | None = None
) -> StepFunction:
    """ECDF of runtimes pooled over targets (and functions), exact breakpoints.

    Parameters
    ----------
    runtimes : sequence of ndarray, each shape (T_f, N)
        Per function: ``RuntimeTable.runtimes.T`` or ``SimulatedRuntimes.runtimes``; ``inf``
        = not reached (counted in the denominator, never in the numerator). All ``N`` equal.
    scale : sequence of float, optional
        Divide function ``f``'s runtimes by ``scale[f]`` (e.g. its dimension: COCO's
        ``evaluations / dimension`` axis).

    Returns
    -------
    StepFunction
        Right-continuous, ``counts[0] = 0``, ``total = Σ_f T_f · N``.
    """
    arrays = [np.asarray(r, dtype=float) for r in runtimes]
    if not arrays or any(a.ndim != 2 or a.size == 0 for a in arrays):
        raise InvalidInput("runtime ECDFs need at least one non-empty (targets, samples) array")
    if len({a.shape[1] for a in arrays}) > 1:
        raise InvalidInput("pooled runtime ECDFs need the same number of samples per function")
    if scale is not None:
        if len(scale) != len(arrays) or not all(s > 0 for s in scale):
            raise InvalidInput("one positive scale per function", field="scale")
        arrays = [a / s for a, s in zip(arrays, scale, strict=True)]
    values = np.concatenate([a.reshape(-1) for a in arrays])
    return upper_step(values, values.size)


@dataclass(frozen=True, eq=False)
class FixedBudget:
    """Best-so-far of each run at fixed budgets, and quantiles over runs.

    Attributes
    ----------
    function_id : str
        The function (instances pooled if asked).
    budgets : ndarray of int, shape (B,)
        Evaluations, as given.
    runs : tuple of (str, int)
        ``(function_id, run)`` of each row.
    best : ndarray of float, shape (R, B)
        Best error within that many evaluations; ``nan`` before the run's first record. A run
        that stopped earlier keeps its final value (see :attr:`ended`).
    ended : ndarray of bool, shape (R, B)
        The budget exceeds the run's own budget.
    levels : ndarray of float, shape (Q,)
        Quantile levels.
    quantiles : ndarray of float, shape (Q, B)
        ``numpy.quantile`` (linear interpolation) over the runs with a record at that budget;
        ``nan`` where none has.
    """

    function_id: str
    budgets: NDArray[np.int64]
    runs: tuple[tuple[str, int], ...]
    best: NDArray[np.float64]
    ended: NDArray[np.bool_]
    levels: NDArray[np.float64]
    quantiles: NDArray[np.float64]


def fixed_budget(
    runs: Sequence[RunResult],
    budgets: ArrayLike,
    *,
    levels: ArrayLike | None = None,
    function_ids: Sequence[str] | None = None,
    pool_instances: bool = False,
) -> tuple[FixedBudget, ...]:
    """Best-so-far at given budgets per run, grouped per function (order of first appearance).

    Parameters
    ----------
    runs : sequence of RunResult
        Runs with trajectories.
    budgets : array_like of int, shape (B,)
        Evaluations ``>= 1``.
    levels : array_like of float, optional
        Quantile levels in [0, 1]; default :data:`DEFAULT_QUANTILES`.
    function_ids : sequence of str, optional
        Keep only these functions (after pooling), in this order.
    pool_instances : bool, default False
        Group instances of a function together (as COCO does).
    """
    wanted = np.asarray(budgets).reshape(-1)
    if wanted.size == 0 or not np.issubdtype(wanted.dtype, np.integer) or np.any(wanted < 1):
        raise InvalidInput("budgets must be integers >= 1, at least one", field="budgets")
    q: NDArray[np.float64] = np.asarray(
        DEFAULT_QUANTILES if levels is None else levels, dtype=float
    ).reshape(-1)
    if q.size == 0 or np.any(~(q >= 0) | ~(q <= 1)):
        raise InvalidInput("quantile levels must lie in [0, 1]", field="levels")
    groups = group_runs(runs, function_ids=function_ids, pool_instances=pool_instances)
    return tuple(_fixed_budget(f, group, wanted.astype(np.int64), q) for f, group in groups)


def _fixed_budget(
    function_id: str, runs: list[RunResult], budgets: NDArray[np.int64], levels: NDArray[np.float64]
) -> FixedBudget:
    rows = []
    for run in runs:
        arrays = trajectory_of(run).arrays
        best = arrays.best
        index = np.searchsorted(arrays.evaluations, budgets, side="right") - 1
        rows.append(np.where(index >= 0, best[np.maximum(index, 0)], np.nan))
    best = np.vstack(rows)
    ended = budgets[None, :] > np.array([r.budget for r in runs])[:, None]
    quantiles = _column_quantiles(best, levels)
    return FixedBudget(
        function_id=function_id,
        budgets=frozen(budgets),
        runs=tuple((r.function_id, r.run) for r in runs),
        best=frozen(best),
        ended=frozen(ended),
        levels=frozen(levels),
        quantiles=frozen(quantiles),
    )


def _column_quantiles(
    values: NDArray[np.float64], levels: NDArray[np.float64]
) -> NDArray[np.float64]:
    """``numpy.nanquantile(values, levels, axis=0)`` (linear), ``nan`` for all-``nan`` columns.

    One sort for all columns instead of a call per column (``nanquantile`` warns on empty ones).
    """
    ordered = np.sort(values, axis=0)  # nan sort last
    n = (~np.isnan(values)).sum(axis=0)
    position = levels[:, None] * np.maximum(n - 1, 0)  # numpy's "linear": q (n - 1)
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, np.maximum(n - 1, 0))
    column = np.arange(values.shape[1])
    a, b = ordered[low, column], ordered[high, column]
    with np.errstate(invalid="ignore"):
        out = a + (b - a) * (position - low)
    return np.where(n > 0, np.where(b == a, a, out), np.nan)
