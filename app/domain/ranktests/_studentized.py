"""The studentized range with infinitely many degrees of freedom (range of k iid normals)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from app.domain.errors import InvalidInput
from app.domain.ranktests._common import LN10, k_iv
from app.domain.stattools import LOG10_TINY

_RANGE_NEGLIGIBLE = 40.0  # e^-40 ≈ 4e-18: a weight below this is dropped from the integral
_RANGE_TAIL_MARGIN = 6.5  # the tail integrand ~ exp(-(z + q/2)²): margin gives e^-42
_RANGE_STEP = 0.35  # trapezoid step / (1 / sqrt(2 ln k)); 0.45 loses 1e-11 at k = 10^4
_RANGE_CHUNK = 1024  # q values per vectorized block (bounds the temporaries)
_RANGE_TINY = 1e-300  # SF values surely below this are returned as 0
# Many q values (Nemenyi's all pairs): a piecewise Chebyshev interpolant of the quadrature in q
_INTERP_MIN_VALUES = 512  # from this many q values on (building it costs ~300-600 quadratures)
_INTERP_DEGREE = 24  # per panel: 25 Chebyshev points of the first kind
_INTERP_TOL = 3e-14  # accepted when the last 3 coefficients of the panel are below this ...
_INTERP_TOL_Q2 = 1.1e-16  # ... plus eps·b²: the SF's own conditioning at q = b (relative)
_INTERP_MIN_WIDTH = 0.25  # panels are not split below this width (the error then is reported)


@lru_cache(maxsize=512)
def _range_rule(k: int) -> tuple[float, float, float]:
    """``(step, lower, upper)`` of the trapezoid rule for the range of ``k`` normals.

    The integrand's weight is the density of the minimum of ``k`` normals, whose width shrinks
    like ``1 / sqrt(2 ln k)``; the step is :data:`_RANGE_STEP` of that (at most 0.25), for
    which the trapezoid rule (geometrically convergent for these smooth, rapidly decaying
    integrands) agreed with a 2,000 times finer grid to ``4e-15`` relative for ``2 <= k <=
    10^4`` when this was tuned. ``lower`` and ``upper`` are where the weight falls below
    ``e^-40``.
    """
    log_k = math.log(k)
    step = min(0.25, _RANGE_STEP / math.sqrt(2.0 * log_k))
    lower = -math.sqrt(2.0 * (log_k + _RANGE_NEGLIGIBLE))
    z = np.linspace(lower, 40.0, 16001)
    log_weight = log_k - 0.5 * z * z - 0.5 * math.log(2 * math.pi) + (k - 1) * special.log_ndtr(-z)
    upper = float(z[np.flatnonzero(log_weight > -_RANGE_NEGLIGIBLE)[-1]]) + 0.25
    return step, lower, upper


@dataclass(frozen=True, eq=False)  # holds arrays
class _RangeGrid:
    """Trapezoid nodes ``z``, their log weights (density of the minimum of ``k`` normals, halved
    at both ends) and the step, shared by the q values of one block."""

    z: np.ndarray
    log_weight: np.ndarray
    step: float


def _range_grid(q: np.ndarray, k: int) -> _RangeGrid:
    step, lower, upper = _range_rule(k)
    lo = min(lower, -0.5 * float(q.max()) - _RANGE_TAIL_MARGIN)
    n_nodes = math.ceil((upper - lo) / step) + 1
    z = np.linspace(lo, upper, n_nodes)
    log_weight = math.log(k) - 0.5 * math.log(2 * math.pi) - 0.5 * z * z
    log_weight += (k - 1) * special.log_ndtr(-z)
    log_weight[[0, -1]] += math.log(0.5)  # trapezoid end weights
    return _RangeGrid(z, log_weight, (upper - lo) / (n_nodes - 1))


def _range_sf_block(q: np.ndarray, k: int) -> np.ndarray:
    """SF of the range of ``k`` iid N(0, 1) at positive finite ``q`` (1-D), by quadrature.

    ``P(W > q) = k ∫ φ(z) Φc(z)^{k−1} [1 − (1 − Φc(z + q)/Φc(z))^{k−1}] dz`` — the density of
    the minimum ``z`` times the probability that some other value exceeds ``z + q`` [16]_. The
    bracket is ``−expm1((k − 1) log1p(−ratio))``, accurate in both tails; nothing is
    subtracted from 1. All ``q`` share one grid (sort them so that a block spans little).
    """
    grid = _range_grid(q, k)
    z, weight = grid.z, np.exp(grid.log_weight)
    ratio = special.ndtr(-(z[None, :] + q[:, None]))
    ratio /= special.ndtr(-z)
    with np.errstate(divide="ignore"):  # ratio == 1 where z + q and z both sit far left
        others = np.log1p(-ratio, out=ratio)
    others *= k - 1
    others = -np.expm1(others, out=others)
    out: NDArray[np.float64] = grid.step * (others @ weight)
    return out


def _range_log_sf_block(q: np.ndarray, k: int) -> np.ndarray:
    """Natural log of :func:`_range_sf_block`, for ``q`` whose SF is below the float range.

    The same trapezoid rule, summed by log-sum-exp: ``log weight`` plus the log of the bracket,
    ``log(−expm1((k − 1) log1p(−ratio)))``, which is ``log(k − 1) + log ratio`` (relative error
    ``k · ratio``) once ``ratio = Φc(z + q)/Φc(z)`` itself underflows. The grid reaches
    ``−q/2 − 6.5``, past the peak of the integrand at ``z ≈ −q/2``.
    """
    grid = _range_grid(q, k)
    z = grid.z
    log_ratio = special.log_ndtr(-(z[None, :] + q[:, None])) - special.log_ndtr(-z)[None, :]
    with np.errstate(divide="ignore", under="ignore"):
        bracket = -np.expm1((k - 1) * np.log1p(-np.exp(log_ratio)))
        log_bracket = np.where(log_ratio < -700.0, math.log(k - 1) + log_ratio, np.log(bracket))
    out: NDArray[np.float64] = math.log(grid.step) + special.logsumexp(
        log_bracket + grid.log_weight, axis=1
    )
    return out


def _range_sf_sorted(q: np.ndarray, k: int) -> np.ndarray:
    """:func:`_range_sf_block` over sorted positive ``q`` in blocks of :data:`_RANGE_CHUNK`."""
    out = np.empty(q.size)
    for start in range(0, q.size, _RANGE_CHUNK):
        out[start : start + _RANGE_CHUNK] = _range_sf_block(q[start : start + _RANGE_CHUNK], k)
    return out


def _range_q_max(k: int) -> float:
    """The ``q`` above which ``C(k, 2) erfc(q/2) < 1e-300`` (the SF is returned as 0 there)."""
    return 2.0 * float(special.erfcinv(_RANGE_TINY / (0.5 * k * (k - 1))))


_CHEB_X = np.cos(np.pi * (np.arange(_INTERP_DEGREE + 1) + 0.5) / (_INTERP_DEGREE + 1))
# values at the Chebyshev points -> coefficients (discrete orthogonality of T_j at these points)
_CHEB_FIT = np.cos(np.outer(np.arange(_INTERP_DEGREE + 1), np.arccos(_CHEB_X)))
_CHEB_FIT *= 2.0 / (_INTERP_DEGREE + 1)
_CHEB_FIT[0] *= 0.5
_CHEB_WEIGHTS = (-1.0) ** np.arange(_INTERP_DEGREE + 1) * np.sin(  # barycentric (1st-kind points)
    np.pi * (np.arange(_INTERP_DEGREE + 1) + 0.5) / (_INTERP_DEGREE + 1)
)


@dataclass(frozen=True, eq=False)  # holds arrays
class _RangeInterpolant:
    """``log(SF(q) / erfc(q/2))`` on ``[0, edges[-1]]``: its values at the Chebyshev points
    :data:`_CHEB_X` of each panel ``[edges[i], edges[i + 1]]`` (``values[i]``)."""

    edges: np.ndarray
    values: np.ndarray
    n_quadratures: int


@lru_cache(maxsize=64)
def _range_interpolant(k: int) -> _RangeInterpolant:
    """Adaptive piecewise Chebyshev interpolant of ``h(q) = log(SF(q) / erfc(q/2))``.

    ``erfc(q/2)`` is the SF for ``k = 2`` and ``C(k, 2) erfc(q/2)`` the union bound, so ``h``
    goes from 0 at ``q = 0`` to about ``log C(k, 2)`` in the tail: bounded and smooth, where
    ``log SF`` falls like ``−q²/4``. Panels are bisected, all of one level evaluated by one
    vectorized quadrature (:func:`_range_sf_sorted`), until the last three coefficients of a
    degree-:data:`_INTERP_DEGREE` series are below ``1e-14 + eps·b²`` (``b`` the panel's right
    end: ``eps·q²/2`` is the relative change of the SF when ``q`` moves by one rounding, which
    the quadrature also carries).
    """
    pending = [(0.0, _range_q_max(k) * (1.0 + 1e-9))]
    done: list[tuple[float, float, np.ndarray]] = []
    n_quadratures = 0
    while pending:
        lo = np.array([a for a, _ in pending])
        hi = np.array([b for _, b in pending])
        q = (lo[:, None] + (hi - lo)[:, None] * (1.0 + _CHEB_X[None, :]) / 2.0).ravel()
        order = np.argsort(q, kind="stable")
        sf = np.empty(q.size)
        sf[order] = _range_sf_sorted(q[order], k)
        n_quadratures += q.size
        h = np.log(sf / special.erfc(0.5 * q)).reshape(lo.size, -1)
        coefficients = h @ _CHEB_FIT.T
        tail = np.abs(coefficients[:, -3:]).max(axis=1)
        tolerance = _INTERP_TOL + _INTERP_TOL_Q2 * hi * hi
        split = (tail > tolerance) & (hi - lo > 2.0 * _INTERP_MIN_WIDTH)
        done.extend((a, b, v) for a, b, v, s in zip(lo, hi, h, split, strict=True) if not s)
        pending = [
            half
            for a, b, s in zip(lo.tolist(), hi.tolist(), split.tolist(), strict=True)
            if s
            for half in ((a, 0.5 * (a + b)), (0.5 * (a + b), b))
        ]
    done.sort(key=lambda panel: panel[0])
    edges = np.array([a for a, _, _ in done] + [done[-1][1]])
    return _RangeInterpolant(edges, np.array([v for _, _, v in done]), n_quadratures)


def _range_sf_interpolated(q: np.ndarray, k: int) -> np.ndarray:
    """SF at positive ``q`` below :func:`_range_q_max` from :func:`_range_interpolant`."""
    rule = _range_interpolant(k)
    panel = np.searchsorted(rule.edges, q, side="right") - 1
    np.clip(panel, 0, rule.values.shape[0] - 1, out=panel)
    lo, hi = rule.edges[panel], rule.edges[panel + 1]
    t = (2.0 * q - lo - hi) / (hi - lo)
    # barycentric formula (second kind): rounding ~ eps · max|h| · (Lebesgue constant ~ 3),
    # where Clenshaw's sum of the coefficients lost ~ eps · degree · Σ|c_j| (1e-13 relative)
    with np.errstate(divide="ignore", invalid="ignore"):
        w = _CHEB_WEIGHTS / (t[:, None] - _CHEB_X[None, :])
        h = (w * rule.values[panel]).sum(axis=1) / w.sum(axis=1)
    hit = ~np.isfinite(h)  # t on a Chebyshev point: its value
    if hit.any():
        node = np.abs(t[hit, None] - _CHEB_X[None, :]).argmin(axis=1)
        h[hit] = rule.values[panel[hit], node]
    out: NDArray[np.float64] = special.erfc(0.5 * q) * np.exp(h)
    return out


def studentized_range_sf(q: ArrayLike, k: int) -> np.ndarray:
    """Survival function of the studentized range with infinite degrees of freedom.

    Parameters
    ----------
    q : array_like
        Range values (any shape); ``q <= 0`` gives 1, ``+inf`` gives 0; NaN refused.
    k : int
        Number of means, ``k >= 2``.

    Returns
    -------
    ndarray, same shape as ``q``
        ``P(max − min of k iid N(0, 1) > q)``, equal to
        ``scipy.stats.studentized_range.sf(q, k, np.inf)`` but vectorized, and accurate in the
        far tail: relative error about ``1e-14`` (``erfc(q/2)`` for ``k = 2``, an independent
        double quadrature for ``k > 2``), while scipy's ``1 − cdf`` keeps only ~1e-16 absolute
        accuracy. Values below ``1e-300`` (``C(k, 2) erfc(q/2) < 1e-300``) are returned as 0.

    Notes
    -----
    Fewer than :data:`_INTERP_MIN_VALUES` (512) values: the trapezoid quadrature per value
    (:func:`_range_sf_block`). From 512 values on (Nemenyi's all pairs of ``k >= 33``), the
    quadrature at 175–525 points of ``q`` builds a piecewise Chebyshev interpolant of
    ``log(SF / erfc(q/2))`` once per ``k`` (:func:`_range_interpolant`, cached), evaluated by
    the barycentric formula: 4,569 values at ``k = 100`` cost ~1 ms instead of ~8 ms. The two
    paths agree within ``2e-14`` absolute and ``3e-14 + eps·q²/2`` relative (the last term is
    the SF's own sensitivity to one rounding of ``q``: 1.5e-13 at ``q = 52``), tested for
    ``2 <= k <= 200`` and up to ``k = 10^4``.

    Raises
    ------
    app.domain.errors.InvalidInput
        NaN in ``q`` (``q``), or ``k`` not an integer ``>= 2`` (``k``).

    Examples
    --------
    >>> round(float(studentized_range_sf(3.314493, 3)), 6)  # q_0.05(3, ∞) = 3.3145
    0.05
    """
    k = k_iv(k)
    qa = np.asarray(q, dtype=np.float64)
    if np.isnan(qa).any():
        raise InvalidInput("q contains NaN", field="q")
    flat = qa.ravel()
    out = np.where(flat > 0, 0.0, 1.0)
    # SF <= C(k, 2) P(|Z1 − Z2| > q) = C(k, 2) erfc(q/2): skip what is surely below 1e-300
    with np.errstate(over="ignore", invalid="ignore"):
        bound = 0.5 * k * (k - 1) * special.erfc(0.5 * flat)
    inner = np.flatnonzero((flat > 0) & (bound >= _RANGE_TINY))
    if inner.size >= _INTERP_MIN_VALUES:
        out[inner] = _range_sf_interpolated(flat[inner], k)
    else:
        inner = inner[np.argsort(flat[inner], kind="stable")]  # similar q share a block's grid
        out[inner] = _range_sf_sorted(flat[inner], k)
    return np.clip(out, 0.0, 1.0).reshape(qa.shape)


def studentized_range_log10_sf(q: ArrayLike, k: int, sf: ArrayLike | None = None) -> np.ndarray:
    """``log10`` of :func:`studentized_range_sf`, finite below the float range.

    Parameters
    ----------
    q : array_like
        Range values; ``q <= 0`` gives 0, ``+inf`` gives ``−inf``; NaN refused.
    k : int
        Number of means, ``k >= 2``.
    sf : array_like, optional
        ``studentized_range_sf(q, k)`` if already computed.

    Returns
    -------
    ndarray, same shape as ``q``
        ``log10 sf`` where the SF is a normal float; below, the log-space quadrature
        (:func:`_range_log_sf_block`): ``log10 erfc(q/2)`` for ``k = 2`` to about 1e-12
        relative at ``q = 100`` (``p ≈ 10^-1090``).

    Examples
    --------
    >>> round(float(studentized_range_log10_sf(100.0, 2)), 4)  # log10 erfc(50)
    -1087.6838
    """
    k = k_iv(k)
    qa = np.asarray(q, dtype=np.float64)
    p = studentized_range_sf(qa, k) if sf is None else np.asarray(sf, dtype=np.float64)
    flat_q, flat_p = qa.ravel(), p.ravel()
    with np.errstate(divide="ignore"):
        out = np.minimum(np.log10(flat_p), 0.0)
    low = np.flatnonzero(~(out >= LOG10_TINY) & np.isfinite(flat_q))
    low = low[np.argsort(flat_q[low], kind="stable")]
    for start in range(0, low.size, _RANGE_CHUNK):
        idx = low[start : start + _RANGE_CHUNK]
        out[idx] = _range_log_sf_block(flat_q[idx], k) / LN10
    shaped: NDArray[np.float64] = np.minimum(out, 0.0).reshape(qa.shape)
    return shaped


def studentized_range_isf(p: float, k: int) -> float:
    """Inverse of :func:`studentized_range_sf`: the upper ``p`` quantile ``q`` (df = ∞).

    Parameters
    ----------
    p : float
        Upper tail probability in ``(0, 1)``.
    k : int
        Number of means, ``k >= 2``.

    Returns
    -------
    float
        ``q`` with ``studentized_range_sf(q, k) = p`` (to about 1e-12 in ``q``). Divided by
        ``√2`` this is Demšar's ``q_α`` [1]_ (2.728 for ``k = 5``, ``α = 0.05``).

    Raises
    ------
    app.domain.errors.InvalidInput
        ``p`` outside ``(0, 1)`` (``alpha``), bad ``k`` (``k``).

    Examples
    --------
    >>> round(studentized_range_isf(0.05, 5) / 2 ** 0.5, 3)
    2.728
    """
    k = k_iv(k)
    if not (isinstance(p, int | float | np.floating) and 0.0 < p < 1.0):
        raise InvalidInput(f"alpha must be in (0, 1), got {p!r}", field="alpha")

    def excess(x: float) -> float:
        return float(_range_sf_block(np.array([x]), k)[0]) - p

    hi = 8.0
    while excess(hi) >= 0.0:
        hi *= 2.0
    return float(optimize.brentq(excess, 0.0, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps))
