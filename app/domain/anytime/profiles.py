r"""Performance, data and accuracy profiles, as exact step functions (SPEC §8).

For problems ``p ∈ P`` and solvers ``s``, with ``t_{p,s} > 0`` the cost (evaluations) of ``s``
to solve ``p`` (``inf``/``nan`` = failure):

- performance profile [1]_: ``r_{p,s} = t_{p,s} / min_s t_{p,s}`` and
  ``ρ_s(τ) = #{p : r_{p,s} <= τ} / |P|``, ``τ >= 1``, plotted on a ``log2 τ`` axis; a failure has
  ``r = inf`` (a problem every solver failed counts as a failure of each);
- data profile [2]_: ``d_s(κ) = #{p : t_{p,s} / (n_p + 1) <= κ} / |P|``, ``κ`` in simplex
  gradients (``n_p + 1`` evaluations, ``n_p`` the dimension);
- accuracy profile [3]_ (§5.2, after Hare & Sagastizábal): from final and initial errors
  ``e = f(x̄) − f*``, ``e_0 = f(x_0) − f*``, ``f_acc = log10 e − log10 e_0`` and
  ``γ_{p,s} = min(−f_acc, M)`` digits (``M`` when ``e = 0``), then
  ``R_s(τ) = #{p : γ_{p,s} >= τ} / |P|`` for ``τ ∈ [0, M]``.

The first two are non-decreasing and right-continuous (``<=``); the accuracy profile counts
``γ >= τ``, so it is non-increasing and **left-continuous** — at a breakpoint it holds the
level before the drop. Every profile is a :class:`~app.domain.anytime.steps.StepFunction`
with breakpoints at the solver's distinct finite values: ties give one breakpoint whose step
is their number.

The costs ``t_{p,s}`` come from trajectories by Moré & Wild's convergence test [2]_
(:func:`convergence_costs`): the first evaluation with
``f(x) <= f_L + τ_tol (f(x_0) − f_L)``, ``f_L`` the best value any solver found on ``p`` (or a
given reference such as ``f*``), tolerance ``τ_tol`` (default ``10^-3``).

Cost: ``O(P · S · log P)`` per profile (one sort per solver); :func:`convergence_costs`
``O(P · S · log m)`` for trajectories of at most ``m`` records.

References
----------
.. [1] E. D. Dolan, J. J. Moré. Benchmarking optimization software with performance profiles.
   Math. Program. 91 (2002) 201–213.
.. [2] J. J. Moré, S. M. Wild. Benchmarking derivative-free optimization algorithms. SIAM J.
   Optim. 20(1) (2009) 172–191.
.. [3] V. Beiranvand, W. Hare, Y. Lucet. Best practices for comparing optimization algorithms.
   Optim. Eng. 18 (2017) 815–848.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.domain.anytime.runtimes import first_hits
from app.domain.anytime.steps import StepFunction, frozen, lower_step, upper_step
from app.domain.errors import InvalidInput
from app.domain.results import Trajectory

__all__ = [
    "MAX_DIGITS",
    "Profile",
    "ProfileKind",
    "accuracy_profile",
    "convergence_costs",
    "data_profile",
    "performance_profile",
]

ProfileKind = Literal["performance", "data", "accuracy"]

MAX_DIGITS = 16.0
"""``M``: accuracy is capped at 16 digits (about double precision), as in [3]_."""


@dataclass(frozen=True, eq=False)
class Profile:
    """One profile per solver, over the same problems.

    Attributes
    ----------
    kind : {"performance", "data", "accuracy"}
        Which profile.
    solvers : tuple of str
        Solver names, in column order.
    steps : tuple of StepFunction
        One per solver; ``x`` = ratios ``τ`` (performance), ``κ`` (data) or digits ``τ``
        (accuracy).
    values : ndarray of float, shape (P, S)
        The per-problem values behind the steps: ``r_{p,s}``, ``t_{p,s}/(n_p+1)`` or
        ``γ_{p,s}`` (``inf``, resp. ``-inf`` for the accuracy, = failure).
    axis : {"log2", "linear"}
        The x axis the figure uses (``log2 τ`` for performance profiles).
    """

    kind: ProfileKind
    solvers: tuple[str, ...]
    steps: tuple[StepFunction, ...]
    values: NDArray[np.float64]
    axis: Literal["log2", "linear"]


def _names(solvers: Sequence[str] | None, count: int) -> tuple[str, ...]:
    names = tuple(f"s{k}" for k in range(count)) if solvers is None else tuple(solvers)
    if len(names) != count or len(set(names)) != count:
        raise InvalidInput(f"need {count} distinct solver names", field="solvers")
    return names


def _costs(costs: ArrayLike) -> NDArray[np.float64]:
    t = np.array(costs, dtype=float)
    if t.ndim != 2 or t.shape[0] == 0 or t.shape[1] == 0:
        raise InvalidInput("costs must be a (problems, solvers) array, both >= 1", field="costs")
    t[np.isnan(t)] = np.inf  # failure
    if np.any(t <= 0):
        raise InvalidInput("costs must be > 0 (inf or nan for a failure)", field="costs")
    return t


def _profile(
    kind: ProfileKind,
    values: NDArray[np.float64],
    solvers: Sequence[str] | None,
    axis: Literal["log2", "linear"],
) -> Profile:
    step = lower_step if kind == "accuracy" else upper_step
    n_problems, n_solvers = values.shape
    return Profile(
        kind=kind,
        solvers=_names(solvers, n_solvers),
        steps=tuple(step(values[:, s], n_problems) for s in range(n_solvers)),
        values=frozen(values),
        axis=axis,
    )


def performance_profile(costs: ArrayLike, *, solvers: Sequence[str] | None = None) -> Profile:
    """Dolan & Moré performance profiles ``ρ_s(τ)`` [1]_.

    Parameters
    ----------
    costs : array_like, shape (P, S)
        ``t_{p,s} > 0`` (e.g. evaluations to a target); ``inf`` or ``nan`` = failure.
    solvers : sequence of str, optional
        Column names; default ``s0, s1, …``.

    Examples
    --------
    >>> prof = performance_profile([[10, 20], [30, 15], [5, float("inf")]])
    >>> prof.steps[1].x.tolist(), prof.steps[1].counts.tolist()
    ([1.0, 2.0], [0, 1, 2])
    """
    t = _costs(costs)
    best = t.min(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        ratios = np.where(np.isfinite(best), t / best, np.inf)  # inf/inf: every solver failed
    return _profile("performance", ratios, solvers, "log2")


def data_profile(
    costs: ArrayLike, dims: ArrayLike, *, solvers: Sequence[str] | None = None
) -> Profile:
    """Moré & Wild data profiles ``d_s(κ)`` [2]_.

    Parameters
    ----------
    costs : array_like, shape (P, S)
        Evaluations ``t_{p,s}`` to pass the convergence test; ``inf`` or ``nan`` = failure.
    dims : array_like of int, shape (P,)
        Dimension ``n_p >= 1`` of each problem.
    solvers : sequence of str, optional
        Column names.

    Examples
    --------
    >>> prof = data_profile([[3], [9]], [2, 2])
    >>> prof.steps[0].x.tolist(), prof.steps[0].counts.tolist()
    ([1.0, 3.0], [0, 1, 2])
    """
    t = _costs(costs)
    n = np.asarray(dims).reshape(-1)
    if n.shape != (t.shape[0],) or not np.issubdtype(n.dtype, np.integer) or np.any(n < 1):
        raise InvalidInput("dims must hold one integer >= 1 per problem", field="dims")
    return _profile("data", t / (n[:, None] + 1.0), solvers, "linear")


def accuracy_profile(
    final_errors: ArrayLike,
    initial_errors: ArrayLike,
    *,
    solvers: Sequence[str] | None = None,
    max_digits: float = MAX_DIGITS,
) -> Profile:
    """Accuracy profiles ``R_s(τ)`` of Beiranvand, Hare & Lucet [3]_ (left-continuous).

    Parameters
    ----------
    final_errors : array_like, shape (P, S)
        ``f(x̄_{p,s}) − f*_p >= 0``; ``nan`` or ``inf`` = failure (never counted).
    initial_errors : array_like, shape (P,) or (P, S)
        ``f(x_0) − f*_p > 0``, per problem (a common start) or per problem and solver.
    solvers : sequence of str, optional
        Column names.
    max_digits : float, default 16
        ``M``: the cap on ``γ`` (and ``γ`` when ``f(x̄) = f*``).

    Examples
    --------
    >>> prof = accuracy_profile([[1e-3, 0.0], [1.0, 1e-1]], [1.0, 10.0])
    >>> prof.values.tolist()
    [[3.0, 16.0], [1.0, 2.0]]
    """
    e = np.array(final_errors, dtype=float)
    if e.ndim != 2 or e.size == 0:
        raise InvalidInput("final_errors must be a (problems, solvers) array", field="final_errors")
    e0 = np.asarray(initial_errors, dtype=float)
    e0 = e0[:, None] if e0.ndim == 1 else e0
    if e0.shape[0] != e.shape[0] or e0.shape[1] not in (1, e.shape[1]) or e0.ndim != 2:
        raise InvalidInput("initial_errors must be (P,) or (P, S)", field="initial_errors")
    if not np.all(np.isfinite(e0) & (e0 > 0)):
        raise InvalidInput(
            "initial errors f(x0) - f* must be finite and > 0", field="initial_errors"
        )
    if np.any(e < 0):
        raise InvalidInput("final errors f - f* must be >= 0", field="final_errors")
    if not max_digits > 0:
        raise InvalidInput("max_digits must be > 0", field="max_digits")
    failed = ~np.isfinite(e)
    with np.errstate(divide="ignore", invalid="ignore"):
        digits = np.log10(e0) - np.log10(np.where(failed, 1.0, e))  # −f_acc; +inf where e = 0
    gamma = np.where(failed, -np.inf, np.minimum(digits, max_digits))
    return _profile("accuracy", gamma, solvers, "linear")


def convergence_costs(
    trajectories: Sequence[Sequence[Trajectory | None]],
    initial: ArrayLike,
    *,
    tolerance: float = 1e-3,
    reference: ArrayLike | None = None,
) -> NDArray[np.float64]:
    """Evaluations each solver needs to pass Moré & Wild's convergence test [2]_.

    Parameters
    ----------
    trajectories : sequence (P) of sequences (S) of Trajectory or None
        Best-so-far of solver ``s`` on problem ``p`` (``None``: no run, a failure); values in
        one unit per problem (``f`` or ``f − f*``), like ``initial`` and ``reference``.
    initial : array_like, shape (P,)
        ``f(x_0)``, the common starting value of each problem.
    tolerance : float, default 1e-3
        ``τ_tol`` in ``(0, 1)``.
    reference : array_like, shape (P,), optional
        ``f_L``; default the best final value over the solvers on each problem (at most
        ``f(x_0)``).

    Returns
    -------
    ndarray of float, shape (P, S)
        First evaluation with ``best <= f_L + τ_tol (f(x_0) − f_L)``; ``inf`` if never.

    Examples
    --------
    >>> a = Trajectory((1, 10, 50), (5.0, 1.0, 0.0))
    >>> b = Trajectory((2, 20), (4.0, 0.5))
    >>> convergence_costs([[a, b]], [10.0], tolerance=0.1).tolist()
    [[10.0, 20.0]]
    """
    f0 = np.asarray(initial, dtype=float).reshape(-1)
    if len(trajectories) != f0.size or len({len(row) for row in trajectories}) > 1:
        raise InvalidInput(
            "one row of solvers per problem, one initial value each", field="initial"
        )
    if not 0 < tolerance < 1:
        raise InvalidInput("tolerance must lie in (0, 1)", field="tolerance")
    if not np.all(np.isfinite(f0)):
        raise InvalidInput("initial values must be finite", field="initial")
    if reference is None:
        # a problem without any trajectory keeps f_L = f(x0): nobody passes, all costs inf
        finals = [[np.inf if t is None else t.arrays.best[-1] for t in row] for row in trajectories]
        f_low = np.minimum(np.min(np.array(finals, dtype=float), axis=1), f0)
    else:
        f_low = np.asarray(reference, dtype=float).reshape(-1)
        if f_low.shape != f0.shape or not np.all(np.isfinite(f_low)):
            raise InvalidInput(
                "reference values must be finite, one per problem", field="reference"
            )
    threshold = f_low + tolerance * (f0 - f_low)
    return np.array(
        [
            [np.inf if t is None else first_hits(t, threshold[p : p + 1])[0] for t in row]
            for p, row in enumerate(trajectories)
        ],
        dtype=float,
    ).reshape(f0.size, -1)
