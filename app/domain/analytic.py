"""Exact absolute ranks ``v1`` of analytic functions on boxes (SPEC §3.3, Jing & Liu §IV-B).

Two families have a ``v1`` that is known without sampling:

* the **sphere** ``f(x) = f* + Σ_i (x_i − x*_i)²`` on a box that need not be centred at ``x*``
  (BBOB f1 has ``x*`` off-centre in ``[−5, 5]^d``): ``v1(f* + s) = P(Σ_i u_i² <= s)`` with
  independent ``u_i = |x_i − x*_i|``, ``x ~ U(box)``;
* the **L∞ cone** ``f(x) = f* + (f_max − f*)·max_i |x_i − x*_i| / w``:
  ``v1(t) = Π_i P(u_i <= w·(t − f*)/(f_max − f*))``, which is ``((t − f*)/(f_max − f*))^d`` on the
  centred box ``[x* − w, x* + w]``.

Everything is returned as a natural logarithm, so values such as ``1e-400`` are representable.

Per coordinate ``i`` the box is described by the distances from ``x*_i`` to its lower and upper
bound, ``a_i = x*_i − l_i >= 0`` and ``b_i = u_i − x*_i >= 0`` (``a_i + b_i > 0``). The law ``μ_i``
of ``u_i`` has density ``(1[u <= a_i] + 1[u <= b_i]) / (a_i + b_i)`` on ``[0, max(a_i, b_i)]``.

Sphere algorithm
----------------
Let ``m = min`` over all positive distances and ``ρ_i = n_i/(a_i + b_i)`` the density of ``μ_i``
at 0 (``n_i`` = number of positive sides, 2 unless ``x*`` lies on a face). For ``s <= m²`` the
ball of radius ``√s`` is not clipped (except by faces through ``x*``) and

.. math:: v_d(s) = \\frac{π^{d/2} s^{d/2}}{Γ(d/2 + 1)} \\prod_i \\frac{ρ_i}{2},

which for an interior ``x*`` is ``π^{d/2} s^{d/2} / (Γ(d/2+1) Π_i (a_i + b_i))`` (Jing & Liu §IV-B).
Beyond ``m²`` the exact clipped volume is obtained from the recursion over coordinates

.. math:: v_j(s) = \\int v_{j-1}(s - u^2)\\, dμ_j(u)
          = \\sum_{c ∈ \\{a_j, b_j\\}} \\frac{\\sqrt{s}}{a_j + b_j}
            \\int_0^{θ_c} v_{j-1}(s \\cos^2 θ) \\cos θ \\, dθ,
          \\qquad θ_c = \\arcsin \\min(1, c/\\sqrt{s}),

(substitution ``u = √s sin θ`` removes the square-root endpoint). ``v_1`` and ``v_2`` (area of a
disc ∩ rectangle) are closed forms. For ``j >= 3``, ``ln v_j`` is tabulated on a grid uniform in
``ln s`` between ``m_j²`` and ``S_j = Σ_i max(a_i, b_i)²`` (where ``v_j = 1``) and interpolated by
cubic splines that are broken at every kink ``κ`` of ``v_j`` (sums of ``c_i²`` over subsets of
coordinates) for ``j <= 4``; for larger ``j`` the kinks are of order ``>= 3`` and are smoothed by
the spline. The ``θ`` integral uses composite Gauss–Legendre panels split where ``s cos² θ``
crosses a kink of ``v_{j−1}``, its ball limit or ``S_{j−1}``, and the final ``v_d`` is evaluated by
that quadrature at the requested points (no interpolation of ``v_d`` itself). Sums are taken in
log space (log-sum-exp).

Accuracy: ``d = 1, 2`` are closed forms (relative error ~1e-13); ``d = 3`` is one quadrature of the
closed form ``v_2``; for ``3 <= d <= 40`` the relative error was measured against a grid of twice
the resolution and against Monte Carlo and nested ``scipy.integrate.quad`` (tests/unit/domain/
test_analytic.py). :data:`SPHERE_REL_ERROR` is the documented bound.

References
----------
.. [1] Y. Jing, Q. Liu. Absolute Ranking: An Essential Normalization for Benchmarking Optimization
       Algorithms, §IV-B (analytic ``v`` of the sphere and of cones).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy import interpolate

from app.domain.errors import InvalidInput, NotApplicable

__all__ = [
    "CONE_REL_ERROR",
    "SPHERE_REL_ERROR",
    "box_distances",
    "cone_ln_cdf",
    "sphere_ln_cdf",
    "sphere_rel_error",
]

#: Documented bound on the relative error of :func:`sphere_ln_cdf` for ``3 <= d <= 40``.
SPHERE_REL_ERROR = 1e-6
#: Relative error of the closed forms (sphere with ``d <= 2``, cone): rounding only.
CONE_REL_ERROR = 1e-12

_GRID_POINTS = 1200  # grid points of ln v_j over [ln m_j², ln S_j]
_MIN_PIECE_POINTS = 8  # at least this many grid points between two consecutive kinks
_PANELS = 3  # equal sub-panels per θ interval between breakpoints
_GL_NODES = 12  # Gauss–Legendre nodes per sub-panel
_KINK_DIM = 4  # kinks of v_j are tracked exactly for j <= _KINK_DIM


@dataclass(frozen=True)
class _Axis:
    """Law of ``u = |x_i − x*_i|``: mixture of ``U(0, c)`` (density ``w`` on ``[0, c]``)."""

    sides: tuple[float, ...]  # distinct positive distances c
    weights: tuple[float, ...]  # multiplicity / (a + b): density contributed on [0, c]

    @classmethod
    def from_distances(cls, a: float, b: float) -> _Axis:
        width = a + b
        if a == b:
            return cls((a,), (2.0 / width,))
        pairs = [(c, 1.0 / width) for c in (a, b) if c > 0.0]
        return cls(tuple(c for c, _ in pairs), tuple(w for _, w in pairs))

    @property
    def rho(self) -> float:
        """Density of ``u`` at 0."""
        return float(sum(self.weights))

    @property
    def smallest(self) -> float:
        return min(self.sides)

    @property
    def largest(self) -> float:
        return max(self.sides)


@dataclass(frozen=True)
class _Ball:
    """Unclipped-ball formula ``ln v_j(s) = ln_const + (j/2) ln s`` valid for ``s <= limit``."""

    ln_const: float
    half_dim: float
    limit: float  # m_j²

    @classmethod
    def of(cls, axes: tuple[_Axis, ...]) -> _Ball:
        j = len(axes)
        ln_const = (
            0.5 * j * math.log(math.pi)
            - math.lgamma(0.5 * j + 1.0)
            + sum(math.log(ax.rho / 2.0) for ax in axes)
        )
        return cls(ln_const, 0.5 * j, min(ax.smallest for ax in axes) ** 2)

    def ln_cdf(self, s: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore"):
            out_: np.ndarray = self.ln_const + self.half_dim * np.log(s)
            return out_


def _log_sum(terms: np.ndarray, axis: int | tuple[int, ...]) -> np.ndarray:
    """``log Σ exp(terms)`` along ``axis``; all ``-inf`` gives ``-inf`` (no warning)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        top = np.max(terms, axis=axis, keepdims=True)
        safe = np.where(np.isfinite(top), top, 0.0)
        out = np.log(np.sum(np.exp(terms - safe), axis=axis, keepdims=True)) + safe
    out_: np.ndarray = np.squeeze(out, axis=axis)
    return out_


class _Cdf:
    """``ln v_j(s)`` of the first ``j`` coordinates; subclasses fill ``_middle``."""

    def __init__(self, axes: tuple[_Axis, ...]) -> None:
        self.axes = axes
        self.ball = _Ball.of(axes)
        self.top = float(sum(ax.largest**2 for ax in axes))  # S_j: v_j = 1 beyond
        self.kinks = _kinks(axes) if len(axes) <= _KINK_DIM else np.empty(0)

    def breakpoints(self) -> np.ndarray:
        """Points where ``v_j`` (or its representation) is not smooth, for quadrature panels."""
        return np.unique(np.concatenate([self.kinks, [self.ball.limit, self.top]]))

    def ln_cdf(self, s: np.ndarray) -> np.ndarray:
        s = np.asarray(s, dtype=np.float64)
        out = np.zeros_like(s)
        low = s <= self.ball.limit
        out[low] = self.ball.ln_cdf(s[low])
        mid = ~low & (s < self.top)
        if np.any(mid):
            out[mid] = np.minimum(self._middle(s[mid]), 0.0)
        return out

    def _middle(self, s: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class _OneDim(_Cdf):
    """``v_1(s) = Σ_c w_c·min(√s, c)`` (exact)."""

    def _middle(self, s: np.ndarray) -> np.ndarray:
        (ax,) = self.axes
        r = np.sqrt(s)
        total = sum(w * np.minimum(r, c) for c, w in zip(ax.sides, ax.weights, strict=True))
        out_: np.ndarray = np.log(total)
        return out_


def _quadrant_area(s: np.ndarray, c1: float, c2: float) -> np.ndarray:
    """Area of ``{x, y >= 0, x² + y² <= s, x <= c1, y <= c2}`` (closed form)."""
    r = np.sqrt(s)
    big_x = np.minimum(c1, r)
    x0 = np.minimum(np.sqrt(np.maximum(s - c2 * c2, 0.0)), big_x)

    def primitive(x: np.ndarray) -> np.ndarray:  # ∫_0^x sqrt(s - t²) dt, for 0 <= x <= r
        # (r - x)(r + x) instead of s - x²: exactly 0 at x = r (no square root of rounding noise)
        chord = np.sqrt(np.maximum((r - x) * (r + x), 0.0))
        out_: np.ndarray = 0.5 * (x * chord + s * np.arcsin(np.minimum(x / r, 1.0)))
        return out_

    out_: np.ndarray = c2 * x0 + primitive(big_x) - primitive(x0)
    return out_


class _TwoDim(_Cdf):
    """``v_2(s)``: area of a disc ∩ rectangle, summed over the four quadrants (exact)."""

    def _middle(self, s: np.ndarray) -> np.ndarray:
        ax1, ax2 = self.axes
        total = np.zeros_like(s)
        for c1, w1 in zip(ax1.sides, ax1.weights, strict=True):
            for c2, w2 in zip(ax2.sides, ax2.weights, strict=True):
                total += w1 * w2 * _quadrant_area(s, c1, c2)
        out_: np.ndarray = np.log(total)
        return out_


class _Convolved(_Cdf):
    """``v_j`` as the quadrature ``∫ v_{j−1}(s − u²) dμ_j(u)`` evaluated on demand."""

    def __init__(self, prev: _Cdf, axis: _Axis) -> None:
        super().__init__((*prev.axes, axis))
        self.prev = prev
        self.axis = axis

    def _middle(self, s: np.ndarray) -> np.ndarray:
        return _convolve(self.prev, self.axis, s)


class _Gridded(_Cdf):
    """``v_j`` tabulated in ``ln s`` and interpolated by kink-aware cubic splines."""

    def __init__(self, exact: _Cdf, n_points: int) -> None:
        super().__init__(exact.axes)
        z_lo, z_hi = math.log(self.ball.limit), math.log(self.top)
        inner = self.kinks[(self.kinks > self.ball.limit) & (self.kinks < self.top)]
        breaks = _separated(np.unique(np.concatenate([[z_lo, z_hi], np.log(inner)])))
        pieces = [
            np.linspace(
                lo, hi, max(_MIN_PIECE_POINTS, math.ceil(n_points * (hi - lo) / (z_hi - z_lo)))
            )
            for lo, hi in itertools.pairwise(breaks)
        ]
        z_all = np.unique(np.concatenate(pieces))
        ln_v = exact.ln_cdf(np.exp(z_all))
        ln_v[0] = self.ball.ln_cdf(np.array([self.ball.limit]))[0]
        values = dict(zip(z_all.tolist(), ln_v.tolist(), strict=True))
        splines = [interpolate.CubicSpline(z, [values[x] for x in z.tolist()]) for z in pieces]
        self.spline = interpolate.PPoly(
            np.hstack([sp.c for sp in splines]),
            np.concatenate([splines[0].x, *(sp.x[1:] for sp in splines[1:])]),
            extrapolate=True,
        )

    def _middle(self, s: np.ndarray) -> np.ndarray:
        out_: np.ndarray = self.spline(np.log(s))
        return out_


def _separated(breaks: np.ndarray, rel: float = 1e-9) -> np.ndarray:
    """Sorted breakpoints without ones closer than ``rel`` × the span to the previous kept one.

    Box distances that differ by a few ulps give kinks a few ulps apart; a spline piece between
    them would have no room for its points. Merging them moves a kink by at most ``rel`` × the
    span in ``ln s``, far below the quadrature error. The ends are kept.
    """
    span = breaks[-1] - breaks[0]
    kept = [breaks[0]]
    for z in breaks[1:-1]:
        if z - kept[-1] > rel * span and breaks[-1] - z > rel * span:
            kept.append(z)
    kept.append(breaks[-1])
    return np.asarray(kept)


def _kinks(axes: tuple[_Axis, ...]) -> np.ndarray:
    """Sums ``Σ_{i ∈ J} c_i²`` over non-empty subsets ``J`` and sides ``c_i`` (kinks of ``v_j``)."""
    sums = np.zeros(1)
    for ax in axes:
        options = np.array([0.0, *(c * c for c in ax.sides)])
        sums = np.unique((sums[:, None] + options[None, :]).ravel())
    return sums[sums > 0.0]


_GL_X, _GL_W = np.polynomial.legendre.leggauss(_GL_NODES)
# fractions of a panel covered by the composite rule, and their weights (sum to 1)
_FRAC = ((np.arange(_PANELS)[:, None] + 0.5 * (_GL_X[None, :] + 1.0)) / _PANELS).ravel()
_FRAC_W = np.tile(0.5 * _GL_W / _PANELS, _PANELS)


def _convolve(prev: _Cdf, axis: _Axis, s: np.ndarray, chunk: int = 256) -> np.ndarray:
    """``ln v_j(s)`` from ``v_{j−1}`` by the ``θ`` quadrature described in the module docstring."""
    out = np.empty_like(s)
    brk = prev.breakpoints()
    for start in range(0, s.size, chunk):
        out[start : start + chunk] = _convolve_block(prev, axis, s[start : start + chunk], brk)
    return out


def _convolve_block(prev: _Cdf, axis: _Axis, s: np.ndarray, brk: np.ndarray) -> np.ndarray:
    root = np.sqrt(s)
    parts = []
    with np.errstate(divide="ignore"):
        for c, w in zip(axis.sides, axis.weights, strict=True):
            theta_c = np.arcsin(np.minimum(1.0, c / root))
            theta_k = np.arccos(np.sqrt(np.clip(brk[None, :] / s[:, None], 0.0, 1.0)))
            theta_k = np.minimum(theta_k, theta_c[:, None])
            edges = np.sort(
                np.concatenate([np.zeros((s.size, 1)), theta_k, theta_c[:, None]], axis=1), axis=1
            )
            lo, width = edges[:, :-1], np.diff(edges, axis=1)
            nodes = lo[..., None] + width[..., None] * _FRAC  # (n, panels, nodes)
            cos = np.cos(nodes)
            ln_f = prev.ln_cdf(s[:, None, None] * cos * cos)
            terms = ln_f + np.log(cos) + np.log(width[..., None] * _FRAC_W)
            parts.append(_log_sum(terms, axis=(1, 2)) + math.log(w) + np.log(root))
    return _log_sum(np.stack(parts), axis=0)


@lru_cache(maxsize=32)
def _sphere_model(pairs: tuple[tuple[float, float], ...], n_points: int) -> _Cdf:
    """The evaluator of ``v_d`` for coordinates with distances ``pairs`` (cached per box)."""
    axes = [_Axis.from_distances(a, b) for a, b in pairs]
    # large exact regions first: v_j has its ball limit at min over its first j coordinates
    axes.sort(key=lambda ax: (-ax.smallest, -ax.largest))
    builders: dict[int, Callable[[], _Cdf]] = {
        1: lambda: _OneDim((axes[0],)),
        2: lambda: _TwoDim((axes[0], axes[1])),
    }
    model = builders[min(len(axes), 2)]()
    for axis in axes[2:]:
        if len(model.axes) >= 3:
            model = _Gridded(model, n_points)
        model = _Convolved(model, axis)
    return model


def box_distances(
    lower: np.ndarray, upper: np.ndarray, x_opt: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Distances from ``x*`` to the lower and upper faces of a box.

    Parameters
    ----------
    lower, upper : array_like, shape (d,)
        The box, in the function's input units.
    x_opt : array_like, shape (d,)
        The minimiser ``x*``; must lie in the box.

    Returns
    -------
    a, b : ndarray, shape (d,)
        ``a = x* − lower >= 0`` and ``b = upper − x* >= 0``.

    Raises
    ------
    InvalidInput
        Shapes differ or values are not finite (``field="region"``).
    NotApplicable
        ``x*`` lies outside the box or a coordinate has zero width (``field="x_opt"``).
    """
    lo, hi, x = (np.asarray(v, dtype=np.float64) for v in (lower, upper, x_opt))
    if lo.ndim != 1 or lo.shape != hi.shape or lo.shape != x.shape or lo.size == 0:
        raise InvalidInput(
            "lower, upper and x_opt must be 1-D arrays of equal length", field="region"
        )
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi)) and np.all(np.isfinite(x))):
        raise InvalidInput("box and x_opt must be finite", field="region")
    a, b = x - lo, hi - x
    if np.any(a < 0) or np.any(b < 0) or np.any(a + b <= 0):
        raise NotApplicable("x_opt must lie inside a box of positive width", field="x_opt")
    return a, b


def _pairs(a: np.ndarray, b: np.ndarray) -> tuple[tuple[float, float], ...]:
    return tuple((float(x), float(y)) for x, y in zip(a, b, strict=True))


def sphere_ln_cdf(
    ln_s: np.ndarray, a: np.ndarray, b: np.ndarray, *, n_points: int = _GRID_POINTS
) -> np.ndarray:
    """Natural log of ``v1`` of ``Σ_i (x_i − x*_i)²`` at ``s = t − f*``, exact up to quadrature.

    Parameters
    ----------
    ln_s : array_like, shape (n,)
        ``ln(t − f*)``; ``-inf`` means ``t = f*`` (``v = 0``). Passing the logarithm lets callers
        ask for ``t − f*`` below the smallest double.
    a, b : array_like, shape (d,)
        Distances from ``x*`` to the lower and upper bound of every coordinate (see
        :func:`box_distances`).
    n_points : int, optional
        Grid points per tabulated ``v_j`` (accuracy/cost knob; the default meets
        :data:`SPHERE_REL_ERROR`).

    Returns
    -------
    ln_v : ndarray, shape (n,)
        ``ln v1``; ``0`` once the ball covers the box, ``-inf`` at ``s = 0``.

    Notes
    -----
    Ball formula ``π^{d/2} s^{d/2} / (Γ(d/2+1) Π_i (a_i + b_i))`` while
    ``s <= min_i min(a_i, b_i)²`` (Jing & Liu §IV-B), exact clipped volume beyond (module
    docstring). Relative error: see :func:`sphere_rel_error`.
    """
    ln_s = np.asarray(ln_s, dtype=np.float64)
    model = _sphere_model(_pairs(np.asarray(a), np.asarray(b)), int(n_points))
    out = np.zeros_like(ln_s)
    low = ln_s <= math.log(model.ball.limit)
    out[low] = model.ball.half_dim * ln_s[low] + model.ball.ln_const
    mid = ~low & (ln_s < math.log(model.top))
    if np.any(mid):
        out[mid] = model.ln_cdf(np.exp(ln_s[mid]))
    return out


def sphere_rel_error(dim: int) -> float:
    """Documented relative error of :func:`sphere_ln_cdf` in dimension ``dim``."""
    return CONE_REL_ERROR if dim <= 2 else SPHERE_REL_ERROR


def cone_ln_cdf(ln_q: np.ndarray, a: np.ndarray, b: np.ndarray, halfwidth: float) -> np.ndarray:
    """Natural log of ``v1`` of the L∞ cone ``f* + (f_max − f*)·max_i |x_i − x*_i| / w``.

    Parameters
    ----------
    ln_q : array_like, shape (n,)
        ``ln((t − f*)/(f_max − f*))``; ``-inf`` at ``t = f*``.
    a, b : array_like, shape (d,)
        Distances from ``x*`` to the box faces (:func:`box_distances`).
    halfwidth : float
        ``w``, the L∞ distance at which the cone reaches ``f_max``.

    Returns
    -------
    ln_v : ndarray, shape (n,)
        ``Σ_i ln((min(ρ, a_i) + min(ρ, b_i)) / (a_i + b_i))`` with ``ρ = w·q``; on the centred box
        ``[x* − w, x* + w]`` this is ``d·ln q`` (Jing & Liu §IV-B), exactly.
    """
    ln_q = np.asarray(ln_q, dtype=np.float64)
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ln_rho = (ln_q + math.log(halfwidth))[:, None]
    sides = np.stack([a, b])  # (2, d)
    with np.errstate(divide="ignore", over="ignore"):
        ln_sides = np.log(sides)[:, None, :]  # (2, 1, d)
        ln_part = np.minimum(ln_rho[None, :, :], ln_sides)  # ln min(ρ, c)
        ln_part = np.where(sides[:, None, :] > 0, ln_part, -np.inf)
        ln_coord = np.logaddexp(ln_part[0], ln_part[1]) - np.log(a + b)[None, :]
    out_: np.ndarray = np.minimum(np.sum(ln_coord, axis=1), 0.0)
    return out_
