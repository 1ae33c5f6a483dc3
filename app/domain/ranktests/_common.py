"""Shared pieces of the rank tests: read-only arrays, log-space tails, matrix checks, ranks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from app.domain.errors import InvalidInput, NotApplicable
from app.domain.ranking import rank_rows
from app.domain.stattools import is_normal_p, log10_clip, log10_of

SQRT2 = math.sqrt(2.0)
LN10 = math.log(10.0)


def frozen(a: ArrayLike) -> np.ndarray:
    """A read-only float copy (results are immutable)."""
    out = np.array(a, dtype=np.float64)
    out.setflags(write=False)
    return out


class _LogSpaceDistribution(Protocol):
    """What :func:`log10_sf` uses of a scipy new-infrastructure distribution."""

    def logccdf(self, x: float) -> float: ...


def _make_family(name: str) -> Callable[..., _LogSpaceDistribution]:
    """scipy's new-infrastructure distribution class of ``scipy.stats.<name>``."""
    return stats.make_distribution(getattr(stats, name))  # type: ignore[no-any-return]  # scipy ships no stubs


# Built at import, not on the first underflowing p: ``make_distribution`` assembles the class's
# docstring by parsing scipy's source (``inspect.findsource``), about 0.25 s per family, which
# the first Friedman call of a process paid (bench/ranktests.py, cold call).
_FAMILIES: dict[str, Callable[..., _LogSpaceDistribution]] = {
    name: _make_family(name) for name in ("chi2", "f")
}


def _log_space_family(name: str) -> Callable[..., _LogSpaceDistribution]:
    """The family of ``scipy.stats.<name>`` (built at import for chi2 and F)."""
    family = _FAMILIES.get(name)
    if family is None:
        family = _FAMILIES[name] = _make_family(name)
    return family


def _log10_sf(name: str, x: float, sf: float, **params: float) -> float:
    """``log10 P(X > x)`` given the float ``sf``: its own log while it is a normal float, else
    scipy's ``logccdf`` (log-space quadrature of ``logpdf``; tests: within 1e-12 relative of
    mpmath down to p ≈ 1e-8900)."""
    if is_normal_p(sf):
        return log10_of(sf)
    if math.isinf(x):
        return -math.inf
    with np.errstate(divide="ignore", under="ignore"):  # its log(ccdf) try underflows first
        log_sf = float(_log_space_family(name)(**params).logccdf(x))
    return log10_clip(log_sf / LN10)


def chi2_log10_sf(x: float, df: int, sf: float | None = None) -> float:
    """``log10 P(χ²_df > x)`` without underflow (``sf``: the float value if already known).

    Examples
    --------
    >>> round(chi2_log10_sf(4500.0, 9), 6)  # 10 algorithms × 500 problems, perfect concordance
    -966.494914
    """
    p = float(stats.chi2.sf(x, df)) if sf is None else sf
    return _log10_sf("chi2", x, p, df=df)


def f_log10_sf(x: float, dfn: int, dfd: int, sf: float | None = None) -> float:
    """``log10 P(F_{dfn, dfd} > x)`` without underflow (``sf``: the float value if known)."""
    p = float(stats.f.sf(x, dfn, dfd)) if sf is None else sf
    return _log10_sf("f", x, p, dfn=dfn, dfd=dfd)


# ------------------------------------------------------------------------------ validation


def matrix_iv(values: ArrayLike, *, min_problems: int) -> np.ndarray:
    try:
        a = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInput(
            "values must be a rectangular numeric matrix (problems × algorithms)", field="values"
        ) from None
    if a.ndim != 2:
        raise InvalidInput(
            f"values must be a 2-D matrix (problems × algorithms), got shape {a.shape}",
            field="values",
        )
    n, k = a.shape
    if k < 2:
        raise InvalidInput(
            f"at least 2 algorithms (columns) are needed, got {k}", field="algorithms"
        )
    if n < min_problems:
        raise InvalidInput(
            f"at least {min_problems} problems (rows) are needed, got {n}", field="problems"
        )
    if np.isnan(a).any():
        raise InvalidInput(
            "values contains NaN; declare a missing-value policy instead of sending NaN",
            field="values",
        )
    return a


def finite_matrix_iv(values: ArrayLike, test: str) -> np.ndarray:
    """Matrix for the tests that use value differences (aligned ranks, Quade ranges)."""
    a = matrix_iv(values, min_problems=2)
    if not np.isfinite(a).all():
        raise NotApplicable(
            f"{test} uses differences of values, which are undefined for ±inf; use the "
            "Friedman test (ranks only) or replace infinite values by a declared policy",
            field="values",
        )
    # No scaling of the matrix: one power of two for all problems flushed the small problems'
    # values to ties (issue 13). Alignments and ranges are exact in integer units instead.
    return a


def rank_matrix(
    values: ArrayLike, *, rtol: float = 0.0, atol: float = 0.0
) -> tuple[np.ndarray, np.ndarray]:
    """Within-problem midranks and the average rank of each algorithm.

    Parameters
    ----------
    values : array_like, shape (n_problems, k_algorithms)
        Metric values, smaller is better; ``±inf`` allowed, NaN refused.
    rtol, atol : float, optional
        Tie tolerance of :func:`app.domain.ranking.tie_labels` (default exact equality).

    Returns
    -------
    ranks : ndarray, shape (n_problems, k_algorithms)
        Rank 1 = smallest value; each row sums to ``k (k + 1) / 2``.
    average_ranks : ndarray, shape (k_algorithms,)
        Column means of ``ranks``.

    Raises
    ------
    app.domain.errors.InvalidInput
        Not 2-D (``values``), fewer than 2 algorithms (``algorithms``), no problem
        (``problems``), NaN (``values``), or a bad tolerance (``rtol``/``atol``).

    Examples
    --------
    >>> ranks, average = rank_matrix([[3.0, 1.0, 2.0], [1.0, 1.0, 5.0]])
    >>> average.tolist()
    [2.25, 1.25, 2.5]
    """
    a = matrix_iv(values, min_problems=1)
    ranks = rank_rows(a, rtol=rtol, atol=atol)
    return ranks, ranks.mean(axis=0)


def k_iv(k: object, field: str = "k") -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 2:
        raise InvalidInput(f"{field} must be an integer >= 2, got {k!r}", field=field)
    return int(k)
