"""Declared missing-value policies: what a NaN cell or run means, decided by the user.

NaN is never ranked as data. A missing value is refused unless the request declares a policy:

``reject``
    (default) any missing value is an error naming its position.
``drop-problem``
    a problem (block, row) with any missing cell is removed from the analysis; the answer says
    which problems were dropped.
``worst-rank``
    a missing cell ranks after every present value of its problem (missing cells of one problem
    tie with each other). Implemented as ``+inf``, so only rank-based statistics apply.
``par-k``
    penalized average runtime style: a missing cell becomes ``k`` times the worst (largest)
    present value of its problem; needs every present value of that problem to be positive
    (runtimes, errors), otherwise the policy is refused.

For two samples of runs the policies are ``reject`` and ``drop`` (drop the missing
runs; for paired samples, drop the pair).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from app.domain.errors import InvalidInput

__all__ = [
    "MATRIX_POLICIES",
    "SAMPLE_POLICIES",
    "MatrixOutcome",
    "MissingReport",
    "PairedOutcome",
    "SampleOutcome",
    "apply_matrix_policy",
    "apply_paired_policy",
    "apply_sample_policy",
]

MATRIX_POLICIES = ("reject", "drop-problem", "worst-rank", "par-k")
SAMPLE_POLICIES = ("reject", "drop")


@dataclass(frozen=True)
class MissingReport:
    """What a missing-value policy did.

    Attributes
    ----------
    policy : str
        The declared policy.
    n_missing : int
        Missing cells (or runs) seen.
    dropped : tuple of int
        Indices of dropped problems (matrix) or pairs/runs (samples), in input order.
    filled : int
        Cells replaced by a value (``worst-rank`` or ``par-k``).
    par_k : float or None
        ``k`` of ``par-k``.
    """

    policy: str
    n_missing: int
    dropped: tuple[int, ...] = ()
    filled: int = 0
    par_k: float | None = None


class MatrixOutcome(NamedTuple):
    """A matrix after its missing-value policy (unpacks as ``matrix, kept, report``).

    Attributes
    ----------
    matrix : ndarray, shape (n_kept, k_algorithms)
        No NaN; ``+inf`` only under ``worst-rank``.
    kept : ndarray of bool, shape (n_problems,)
        Which input problems are in ``matrix``.
    report : MissingReport
    """

    matrix: NDArray[np.float64]
    kept: NDArray[np.bool_]
    report: MissingReport


class SampleOutcome(NamedTuple):
    """One sample after its missing-value policy (unpacks as ``sample, report``).

    Attributes
    ----------
    sample : ndarray, shape (n_kept,)
    report : MissingReport
    """

    sample: NDArray[np.float64]
    report: MissingReport


class PairedOutcome(NamedTuple):
    """Paired samples after the policy (unpacks as ``x, y, report``).

    Attributes
    ----------
    x, y : ndarray, shape (n_kept,)
        The complete pairs, in order.
    report : MissingReport
    """

    x: NDArray[np.float64]
    y: NDArray[np.float64]
    report: MissingReport


def _first_missing(mask: np.ndarray) -> str:
    idx = tuple(int(i) for i in np.argwhere(mask)[0])
    return ".".join(str(i) for i in idx)


def _reject(mask: np.ndarray, field: str) -> None:
    if mask.any():
        raise InvalidInput(
            f"{field} has {int(mask.sum())} missing value(s) (first at {field}."
            f"{_first_missing(mask)}); declare a missing-value policy to use them",
            field=f"{field}.{_first_missing(mask)}",
        )


def apply_matrix_policy(
    values: ArrayLike,
    *,
    policy: str = "reject",
    par_k: float = 10.0,
    field: str = "values",
    problems: Sequence[str] | None = None,
) -> MatrixOutcome:
    """Apply a declared missing-value policy to a problems × algorithms matrix.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, NaN where missing (``±inf`` counts as missing too: a failed run).
    policy : {"reject", "drop-problem", "worst-rank", "par-k"}, optional
        Module docstring.
    par_k : float, optional
        ``k`` of ``par-k`` (> 1).
    field : str, optional
        Request field named in errors.
    problems : sequence of str, optional
        Problem (row) names for messages (default: row indices).

    Returns
    -------
    matrix : ndarray, shape (n_kept, k_algorithms)
        No NaN; ``+inf`` only under ``worst-rank``.
    kept : ndarray of bool, shape (n_problems,)
        Which input problems are in ``matrix``.
    report : MissingReport

    Raises
    ------
    app.domain.errors.InvalidInput
        Missing values under ``reject`` (naming the first cell), an unknown policy, ``par-k``
        on a problem whose present values are not all positive or that has no present value.
    """
    a = np.array(values, dtype=np.float64)
    if a.ndim != 2:
        raise InvalidInput(f"{field} must be a 2-D matrix, got shape {a.shape}", field=field)
    if policy not in MATRIX_POLICIES:
        raise InvalidInput(
            f"unknown missing policy {policy!r}; one of {', '.join(MATRIX_POLICIES)}",
            field="missing",
        )
    mask = ~np.isfinite(a)
    n_missing = int(mask.sum())
    kept: NDArray[np.bool_] = np.ones(a.shape[0], dtype=bool)
    if policy == "reject" or n_missing == 0:
        _reject(mask, field)
        return MatrixOutcome(a, kept, MissingReport(policy=policy, n_missing=0))
    if policy == "drop-problem":
        kept = np.logical_not(mask.any(axis=1))
        dropped = tuple(int(i) for i in np.flatnonzero(~kept))
        return MatrixOutcome(a[kept], kept, MissingReport(policy, n_missing, dropped=dropped))
    if policy == "worst-rank":
        a[mask] = np.inf
        return MatrixOutcome(a, kept, MissingReport(policy, n_missing, filled=n_missing))
    names = [str(i) for i in range(a.shape[0])] if problems is None else list(problems)
    return MatrixOutcome(
        _par_k(a, mask, par_k, field, names),
        kept,
        MissingReport(policy, n_missing, filled=n_missing, par_k=par_k),
    )


def _par_k(
    a: np.ndarray, mask: np.ndarray, par_k: float, field: str, problems: list[str]
) -> np.ndarray:
    if not (np.isfinite(par_k) and par_k > 1):
        raise InvalidInput(f"par_k must be a finite number > 1, got {par_k!r}", field="par_k")
    for i in np.flatnonzero(mask.any(axis=1)):
        present = a[i][~mask[i]]
        if present.size == 0:
            raise InvalidInput(
                f"problem {problems[i]!r} has no present value to penalize from (par-k)",
                field=f"{field}.{i}",
            )
        if (present <= 0).any():
            raise InvalidInput(
                f"par-k needs positive values (runtimes, errors); problem {problems[i]!r} has a "
                "value <= 0",
                field="missing",
            )
        a[i][mask[i]] = par_k * present.max()
    return a


def apply_sample_policy(x: ArrayLike, *, policy: str = "reject", field: str = "x") -> SampleOutcome:
    """Apply ``reject`` or ``drop`` to one sample of runs (NaN or ``±inf`` = missing).

    Returns
    -------
    sample : ndarray, shape (n_kept,)
    report : MissingReport

    Raises
    ------
    app.domain.errors.InvalidInput
        Missing values under ``reject``; an unknown policy; nothing left after ``drop``.
    """
    a = np.asarray(x, dtype=np.float64)
    if a.ndim != 1:
        raise InvalidInput(f"{field} must be one-dimensional", field=field)
    if policy not in SAMPLE_POLICIES:
        raise InvalidInput(
            f"unknown missing policy {policy!r}; one of {', '.join(SAMPLE_POLICIES)}",
            field="missing",
        )
    mask = ~np.isfinite(a)
    if policy == "reject":
        _reject(mask, field)
    kept = a[~mask]
    if kept.size == 0:
        raise InvalidInput(f"{field} has no present value", field=field)
    dropped = tuple(int(i) for i in np.flatnonzero(mask))
    return SampleOutcome(kept, MissingReport(policy, int(mask.sum()), dropped=dropped))


def apply_paired_policy(x: ArrayLike, y: ArrayLike, *, policy: str = "reject") -> PairedOutcome:
    """Apply ``reject`` or ``drop`` (drop the pair) to paired samples of equal length.

    Raises
    ------
    app.domain.errors.InvalidInput
        Lengths differ (field ``y``), missing values under ``reject``, an unknown policy, no
        complete pair left.
    """
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or b.ndim != 1:
        raise InvalidInput("x and y must be one-dimensional", field="x" if a.ndim != 1 else "y")
    if a.shape != b.shape:
        raise InvalidInput(
            f"paired samples must have equal lengths: x has {a.size}, y has {b.size}", field="y"
        )
    if policy not in SAMPLE_POLICIES:
        raise InvalidInput(
            f"unknown missing policy {policy!r}; one of {', '.join(SAMPLE_POLICIES)}",
            field="missing",
        )
    if policy == "reject":
        _reject(~np.isfinite(a), "x")
        _reject(~np.isfinite(b), "y")
    mask = ~(np.isfinite(a) & np.isfinite(b))
    if mask.all():
        raise InvalidInput("no complete pair (x_i, y_i) is left", field="x")
    dropped = tuple(int(i) for i in np.flatnonzero(mask))
    return PairedOutcome(
        a[~mask], b[~mask], MissingReport(policy, int(mask.sum()), dropped=dropped)
    )
