r"""Runtimes to targets and the expected running time (ERT, COCO's aRT) from trajectories.

A run *reaches* a target ``t`` (a precision ``Δf = f − f*``, the units of absrank's errors)
at the first recorded evaluation whose best-so-far is ``<= t``. For one (function, target)
the expected running time of [1]_ (§4, "average runtime") is

.. math::

    \mathrm{ERT}(t) = \frac{\sum_{r\ \text{successful}} \mathrm{RT}_r(t)
                      + \sum_{r\ \text{unsuccessful}} \mathrm{budget}_r}
                     {\#\{r\ \text{successful}\}},

``inf`` when no run reached ``t``: the evaluations of all runs divided by the successes. This is
``cocopp.pproc.DataSet.detERT`` (tested against it on a ``cocoex`` archive).

Cost of :func:`runtime_tables`: ``O(R · T · log m)`` for ``R`` runs, ``T`` targets and
trajectories of at most ``m`` records (one binary search per run and target), memory
``O(R · T)``.

References
----------
.. [1] N. Hansen, A. Auger, D. Brockhoff, T. Tušar. Anytime performance assessment in
   blackbox optimization benchmarking. IEEE TEVC 26(6) (2022); N. Hansen et al. COCO: a
   platform for comparing continuous optimizers in a black-box setting, Optim. Methods
   Softw. 36(1) (2021). Data format and ``cocopp``: https://numbbo.github.io/coco
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.domain.anytime.steps import frozen
from app.domain.errors import InvalidInput
from app.domain.results import RunResult, Trajectory

__all__ = [
    "DEFAULT_TARGETS",
    "RuntimeTable",
    "expected_running_time",
    "first_hits",
    "group_runs",
    "pooled_id",
    "runtime_table",
    "runtime_tables",
    "targets_of",
    "trajectory_of",
]

DEFAULT_TARGETS = frozen(10.0 ** (np.arange(10, -41, -1) / 5))
"""COCO's 51 default precisions ``Δf = 10^2, 10^1.8, …, 10^−8`` (five per decade), decreasing.

Computed as ``10 ** (k / 5)``, the floats cocopp aligns its data on (``readalign``);
``np.logspace(2, -8, 51)`` differs from them by one ulp at 26 of the 51 targets, enough to move
a target across a recorded value."""

_INSTANCE = re.compile(r"/i\d+(?=/d\d+$)")


def targets_of(targets: ArrayLike | None) -> NDArray[np.float64]:
    """Validate a target set: finite precisions ``>= 0``, at least one; default COCO's 51.

    The order is kept (results follow it); repeated targets are allowed and give equal columns.
    """
    if targets is None:
        return DEFAULT_TARGETS
    array = np.asarray(targets, dtype=float).reshape(-1)
    if array.size == 0 or not np.all(np.isfinite(array)) or np.any(array < 0):
        raise InvalidInput(
            "targets must be finite precisions f - f* >= 0, at least one", field="targets"
        )
    return frozen(array)


def first_hits(trajectory: Trajectory, targets: NDArray[np.float64]) -> NDArray[np.float64]:
    """Evaluations at which a run first reached each target (``best <= target``); ``inf`` if never.

    Parameters
    ----------
    trajectory : Trajectory
        Best-so-far (errors ``f − f*``), non-increasing.
    targets : ndarray of float, shape (T,)
        Precisions.

    Returns
    -------
    ndarray of float, shape (T,)
    """
    arrays = trajectory.arrays
    evaluations = arrays.evaluations.astype(float)
    # best is non-increasing, so -best is non-decreasing: the first index with best <= t
    index = np.searchsorted(-arrays.best, -targets, side="left")
    return np.where(
        index < evaluations.size, evaluations[np.minimum(index, evaluations.size - 1)], np.inf
    )


def expected_running_time(
    runtimes: NDArray[np.float64], budgets: NDArray[np.int64]
) -> NDArray[np.float64]:
    """COCO's ERT per target from first hits and budgets (module docstring; [1]_).

    Parameters
    ----------
    runtimes : ndarray, shape (R, T)
        First hits, ``inf`` where a run did not reach the target.
    budgets : ndarray, shape (R,)
        Evaluations each run spent.

    Returns
    -------
    ndarray of float, shape (T,)
        ``inf`` where no run succeeded.
    """
    success = np.isfinite(runtimes)
    spent = np.where(success, runtimes, budgets[:, None].astype(float)).sum(axis=0)
    count = success.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(count > 0, spent / np.maximum(count, 1), np.inf)


@dataclass(frozen=True, eq=False)
class RuntimeTable:
    """Runtimes of the runs on one function to each target, with ERT and success counts.

    Attributes
    ----------
    function_id : str
        The function (instances pooled when :func:`runtime_tables` was asked to).
    targets : ndarray of float, shape (T,)
        Precisions ``Δf``, in the order given.
    runs : tuple of (str, int)
        ``(function_id, run)`` of each row, as in the :class:`~app.domain.results.RunResult`.
    budgets : ndarray of int, shape (R,)
        Evaluations each run spent (an unsuccessful run's runtime in the ERT).
    runtimes : ndarray of float, shape (R, T)
        Evaluations to first reach each target; ``inf`` where not reached.
    successes : ndarray of int, shape (T,)
        Runs that reached each target.
    ert : ndarray of float, shape (T,)
        Expected running time (aRT) per target, evaluations; ``inf`` where no success.
    """

    function_id: str
    targets: NDArray[np.float64]
    runs: tuple[tuple[str, int], ...]
    budgets: NDArray[np.int64]
    runtimes: NDArray[np.float64]
    successes: NDArray[np.int64]
    ert: NDArray[np.float64]

    @property
    def n_runs(self) -> int:
        """Number of runs ``R``."""
        return len(self.runs)


def runtime_table(
    function_id: str, runs: Sequence[RunResult], targets: ArrayLike | None = None
) -> RuntimeTable:
    """Runtimes, successes and ERT of runs on one function (module docstring).

    Parameters
    ----------
    function_id : str
        Name of the group (the runs may carry other ids, e.g. instances pooled).
    runs : sequence of RunResult
        Each with a trajectory of errors ``f − f*`` whose last evaluation is ``<= budget``.
    targets : array_like, shape (T,), optional
        Precisions; default :data:`DEFAULT_TARGETS`.

    Raises
    ------
    InvalidInput
        No runs, a run without trajectory, or a trajectory past the run's budget.
    """
    wanted = targets_of(targets)
    if not runs:
        raise InvalidInput(f"no runs on {function_id}", field="runs")
    rows = []
    for run in runs:
        trajectory = trajectory_of(run)
        if trajectory.arrays.evaluations[-1] > run.budget:
            raise InvalidInput(
                f"run {run.run} on {run.function_id}: trajectory goes past the budget {run.budget}",
                field="runs",
            )
        rows.append(first_hits(trajectory, wanted))
    runtimes = np.vstack(rows)
    budgets = np.array([r.budget for r in runs], dtype=np.int64)
    return RuntimeTable(
        function_id=function_id,
        targets=wanted,
        runs=tuple((r.function_id, r.run) for r in runs),
        budgets=frozen(budgets),
        runtimes=frozen(runtimes),
        successes=frozen(np.isfinite(runtimes).sum(axis=0), np.int64),
        ert=frozen(expected_running_time(runtimes, budgets)),
    )


def trajectory_of(run: RunResult) -> Trajectory:
    """The run's trajectory; :class:`InvalidInput` when it has none (anytime views need one)."""
    if run.trajectory is None:
        raise InvalidInput(
            f"run {run.run} on {run.function_id} has no trajectory: anytime views need "
            "evaluations -> best-so-far",
            field="runs",
        )
    return run.trajectory


def pooled_id(function_id: str) -> str:
    """The id without its instance: ``"bbob/f1/i3/d10"`` → ``"bbob/f1/d10"`` (COCO pools them)."""
    return _INSTANCE.sub("", function_id)


def runtime_tables(
    runs: Sequence[RunResult],
    *,
    targets: ArrayLike | None = None,
    function_ids: Sequence[str] | None = None,
    pool_instances: bool = False,
) -> tuple[RuntimeTable, ...]:
    """One :class:`RuntimeTable` per function, in order of first appearance.

    Parameters
    ----------
    runs : sequence of RunResult
        Runs with trajectories of errors.
    targets : array_like, optional
        Precisions; default :data:`DEFAULT_TARGETS`.
    function_ids : sequence of str, optional
        Keep only these groups (after pooling), in this order.
    pool_instances : bool, default False
        Group ``bbob/f1/i1/d10`` and ``bbob/f1/i2/d10`` as ``bbob/f1/d10``, as COCO's data sets do.
    """
    return tuple(
        runtime_table(f, group, targets)
        for f, group in group_runs(runs, function_ids=function_ids, pool_instances=pool_instances)
    )


def group_runs(
    runs: Sequence[RunResult],
    *,
    function_ids: Sequence[str] | None = None,
    pool_instances: bool = False,
) -> tuple[tuple[str, list[RunResult]], ...]:
    """Runs grouped per function: ``(function_id, runs)`` in order of first appearance.

    Parameters
    ----------
    runs : sequence of RunResult
        Runs; every one must carry a trajectory.
    function_ids : sequence of str, optional
        Keep only these groups (after pooling), in this order.
    pool_instances : bool, default False
        Group the instances of a function under :func:`pooled_id`.

    Raises
    ------
    InvalidInput
        A run without trajectory, or a wanted function without runs.
    """
    groups: dict[str, list[RunResult]] = {}
    for run in runs:
        trajectory_of(run)
        key = pooled_id(run.function_id) if pool_instances else run.function_id
        groups.setdefault(key, []).append(run)
    order = list(groups) if function_ids is None else list(function_ids)
    missing = [f for f in order if f not in groups]
    if missing:
        raise InvalidInput(f"no runs on {', '.join(missing[:5])}", field="function_ids")
    return tuple((f, groups[f]) for f in order)
