"""Shared pieces of the rank tests: read-only arrays, log-space tails, matrix checks, ranks."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

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


_CF_TINY = 1e-300  # modified Lentz: a vanishing denominator is replaced by this
_CF_EPS = 4e-16  # a continued fraction has converged when a factor is 1 within this
_CF_MAX_TERMS = 20_000  # else the quadrature decides (O(sqrt(max(a, b))) terms are needed)


def _lentz(value: float) -> float:
    return value if abs(value) >= _CF_TINY else _CF_TINY


def _log_gamma_q(a: float, x: float) -> float | None:
    """``ln Q(a, x)`` (regularized upper incomplete gamma) for ``x > a + 1`` by Legendre's
    continued fraction (modified Lentz; Numerical Recipes §6.2), or None if it did not
    converge: ``Q = e^{−x} x^a / Γ(a) · 1/(x + 1 − a − 1·(1 − a)/(x + 3 − a − …))``."""
    b = x + 1.0 - a
    c, d = 1.0 / _CF_TINY, 1.0 / b
    h = d
    for i in range(1, _CF_MAX_TERMS):
        an = -i * (i - a)
        b += 2.0
        d = 1.0 / _lentz(an * d + b)
        c = _lentz(b + an / c)
        h *= d * c
        if abs(d * c - 1.0) < _CF_EPS:
            return -x + a * math.log(x) - math.lgamma(a) + math.log(h)
    return None


def _log_beta_i(a: float, b: float, y: float, one_minus_y: float) -> float | None:
    """``ln I_y(a, b)`` (regularized incomplete beta) for ``y < (a + 1)/(a + b + 2)`` by its
    continued fraction (modified Lentz; Numerical Recipes §6.4), or None if it did not
    converge; ``one_minus_y`` is ``1 − y`` computed without cancellation."""
    c, d = 1.0, 1.0 / _lentz(1.0 - (a + b) * y / (a + 1.0))
    h = d
    for m in range(1, _CF_MAX_TERMS):
        m2 = 2 * m
        even = m * (b - m) * y / ((a - 1.0 + m2) * (a + m2))
        d = 1.0 / _lentz(1.0 + even * d)
        c = _lentz(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * y / ((a + m2) * (a + 1.0 + m2))
        d = 1.0 / _lentz(1.0 + odd * d)
        c = _lentz(1.0 + odd / c)
        h *= d * c
        if abs(d * c - 1.0) < _CF_EPS:
            front = a * math.log(y) + b * math.log(one_minus_y) - math.log(a)
            return front - float(special.betaln(a, b)) + math.log(h)
    return None


def _log_sf_continued_fraction(name: str, x: float, params: dict[str, float]) -> float | None:
    """``ln P(X > x)`` of χ² or F by the incomplete gamma or beta continued fraction where it
    converges fast (the far upper tail, where the float SF underflows), else None."""
    if name == "chi2":
        a, half = 0.5 * params["df"], 0.5 * x
        return _log_gamma_q(a, half) if half > a + 1.0 else None
    if name == "f":  # P(F > x) = I_y(dfd/2, dfn/2), y = dfd / (dfd + dfn x)
        dfn, dfd = params["dfn"], params["dfd"]
        a, b = 0.5 * dfd, 0.5 * dfn
        y, one_minus_y = dfd / (dfd + dfn * x), dfn * x / (dfd + dfn * x)
        fast = 0.0 < y < (a + 1.0) / (a + b + 2.0) and one_minus_y < math.inf  # dfn x overflows
        return _log_beta_i(a, b, y, one_minus_y) if fast else None
    return None


def _log10_sf(name: str, x: float, sf: float, **params: float) -> float:
    """``log10 P(X > x)`` given the float ``sf``: its own log while it is a normal float, else
    the continued fraction of the incomplete gamma (χ²) or beta (F) function where it
    converges (the far tail: ~0.1 ms, where scipy's quadrature took 2–3 ms), else scipy's
    ``logccdf`` (log-space quadrature of ``logpdf``). Tests: both within 1e-12 relative of
    mpmath down to p ≈ 1e-8900, and of each other."""
    if is_normal_p(sf):
        return log10_of(sf)
    if math.isinf(x):
        return -math.inf
    log_sf = _log_sf_continued_fraction(name, x, params)
    if log_sf is None:
        log_sf = _log_sf_quadrature(name, x, params)
    return log10_clip(log_sf / LN10)


def _log_sf_quadrature(name: str, x: float, params: dict[str, float]) -> float:
    """``ln P(X > x)`` by scipy's log-space quadrature (``logccdf``)."""
    with np.errstate(divide="ignore", under="ignore"):  # its log(ccdf) try underflows first
        return float(_log_space_family(name)(**params).logccdf(x))


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
