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

Cost: ``O(P · S · log P)`` per call (one sort per solver).

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

from app.domain.anytime.steps import StepFunction, frozen, lower_step, upper_step
from app.domain.errors import InvalidInput

__all__ = [
    "MAX_DIGITS",
    "Profile",
    "ProfileKind",
    "accuracy_profile",
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
