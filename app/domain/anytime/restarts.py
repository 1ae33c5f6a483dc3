"""Simulated restarts: runtimes of a restarted algorithm, bootstrapped from the runs [1]_.

For one target, a *simulated run* draws runs uniformly with replacement until it draws a
successful one; its runtime is the budgets of the unsuccessful runs drawn plus the successful
run's runtime to the target (``cocopp.toolsstats.simulated_evals``, ``drawSP``). Its
expectation is the ERT (:mod:`app.domain.anytime.runtimes`): with ``p = s / R`` successes,
``E = (1 − p)/p · mean(unsuccessful budgets) + mean(successful runtimes) = ERT``.

Like cocopp, the *first* draw is stratified: samples ``kR … (k+1)R − 1`` start from a random
permutation of the ``R`` runs, so with every run successful and ``n_samples`` a multiple of
``R`` the simulated runtimes are the runs' runtimes, each ``n_samples / R`` times. Further
draws are uniform. They are drawn in bulk: after an unsuccessful first draw the number of
further unsuccessful draws is geometric (``rng.geometric(p) − 1``), each uniform among the
unsuccessful runs, then one uniform among the successful — the same law as drawing one at a
time. No run succeeded: every sample is ``inf``.

Cost per call: ``O(T · N)`` plus one draw per further unsuccessful draw, in expectation
``T · N · (1 − p)/p <= T · N · (R − 1)``; memory likewise.

References
----------
.. [1] N. Hansen, A. Auger, D. Brockhoff, T. Tušar. Anytime performance assessment in
   blackbox optimization benchmarking. IEEE TEVC 26(6) (2022), §"simulated restarts";
   N. Hansen et al. COCO: performance assessment, arXiv:1605.03560.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from app.domain.anytime.runtimes import RuntimeTable
from app.domain.anytime.steps import frozen
from app.domain.errors import InvalidInput

__all__ = ["MIN_SAMPLES", "SimulatedRuntimes", "default_samples", "simulated_restarts"]

MIN_SAMPLES = 45
"""cocopp's default sample size is the smallest multiple of ``R`` not below 45."""


@dataclass(frozen=True, eq=False)
class SimulatedRuntimes:
    """Simulated-restart runtimes of one function to each target.

    Attributes
    ----------
    function_id : str
        As in the :class:`~app.domain.anytime.runtimes.RuntimeTable`.
    targets : ndarray of float, shape (T,)
        Precisions.
    runtimes : ndarray of float, shape (T, N)
        Evaluations of each simulated run; ``inf`` for every sample of a target no run reached.
    """

    function_id: str
    targets: NDArray[np.float64]
    runtimes: NDArray[np.float64]

    @property
    def n_samples(self) -> int:
        """Samples per target ``N``."""
        return int(self.runtimes.shape[1])


def default_samples(n_runs: int) -> int:
    """The smallest multiple of ``n_runs`` that is ``>= MIN_SAMPLES`` (cocopp's default)."""
    return n_runs * -(-MIN_SAMPLES // n_runs)


def simulated_restarts(
    table: RuntimeTable, *, n_samples: int | None = None, rng: np.random.Generator
) -> SimulatedRuntimes:
    """Bootstrap simulated restarts from a runtime table (module docstring).

    Parameters
    ----------
    table : RuntimeTable
        Runtimes and budgets of ``R`` runs.
    n_samples : int, optional
        Simulated runs per target ``N >= 1``; default :func:`default_samples`.
    rng : numpy.random.Generator
        The only source of randomness (same seed, same samples).

    Returns
    -------
    SimulatedRuntimes
    """
    n_runs, n_targets = table.runtimes.shape
    size = default_samples(n_runs) if n_samples is None else int(n_samples)
    if size < 1:
        raise InvalidInput("n_samples must be >= 1", field="n_samples")
    success = np.isfinite(table.runtimes)  # (R, T)
    n_succ = success.sum(axis=0)
    n_fail = n_runs - n_succ
    # per target, the runs ordered unsuccessful first: a uniform draw among the n_fail first
    # entries is an unsuccessful run, among the rest a successful one
    order = np.argsort(success, axis=0, kind="stable").T  # (T, R)
    blocks = -(-size // n_runs)
    first = rng.permuted(np.broadcast_to(np.arange(n_runs), (n_targets, blocks, n_runs)), axis=2)
    first = first.reshape(n_targets, blocks * n_runs)[:, :size]  # (T, N) stratified first draw
    target = np.arange(n_targets)[:, None]
    hit = table.runtimes.T  # (T, R)
    budgets = table.budgets.astype(float)
    out = np.where(success.T[target, first], hit[target, first], np.inf)
    restart = ~success.T[target, first] & (n_succ[:, None] > 0)
    rows, cols = np.nonzero(restart)
    if rows.size:
        p = n_succ[rows] / n_runs
        extra = rng.geometric(p) - 1  # further unsuccessful draws before the successful one
        owner = np.repeat(np.arange(rows.size), extra)
        drawn = order[rows[owner], (rng.random(owner.size) * n_fail[rows[owner]]).astype(np.int64)]
        spent = budgets[first[rows, cols]] + np.bincount(owner, budgets[drawn], minlength=rows.size)
        last = order[rows, n_fail[rows] + (rng.random(rows.size) * n_succ[rows]).astype(np.int64)]
        out[rows, cols] = spent + hit[rows, last]
    return SimulatedRuntimes(
        function_id=table.function_id,
        targets=table.targets,
        runtimes=frozen(out),
    )
