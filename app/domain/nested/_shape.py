"""The shape of a ladder's boxes: the bounding box of ``f``'s local sublevel ellipsoid.

:func:`ladder_shape` fits ``(f − f*)^{2/p} ≈ (x − x*)ᵀA(x − x*)`` from level-set crossings
along a symmetric design of directions (whitening passes when the first fit is not positive
definite). Derivation and measurements: docs/METHODS.md, "Nested regions", "Shape".
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, NotRequired, TypedDict

import numpy as np

from app.domain import notices
from app.domain.errors import InvalidInput, NotApplicable
from app.domain.nested._common import LN10, check_int, domain_and_opt, largest_reach

# --------------------------------------------------------------------------------------------
# The shape of the boxes
# --------------------------------------------------------------------------------------------

#: Seed of the random probe directions of :func:`ladder_shape` (fixed, so the shape, and every
#: level's spec with it, is a function of ``f`` alone).
SHAPE_SEED = 20_240_917
#: Probe radii of :func:`ladder_shape`, as shares of ``R`` (the largest distance from ``x*`` to
#: a face of ``Ω``): one target level of ``f − f*`` per radius.
SHAPE_RADII = (1e-2, 1e-3, 1e-4)
#: Significant digits kept of the half-widths ``a_i`` (2 of the fit residual): the shape enters
#: the spec hash, and rounding makes it independent of the last bits of the LAPACK solve.
SHAPE_DIGITS = 3
#: A fit residual below this is recorded as 0 (an exact quadratic form up to rounding, whose
#: digits would differ between platforms and so split the spec hash).
RESIDUAL_FLOOR = 1e-6
#: Largest condition number of a fitted form that counts as positive definite (beyond it the
#: smallest eigenvalues are the fit's noise: a rank-deficient form, e.g. a linear slope).
MAX_CONDITION = 1e10
#: The full quadratic form (``d(d+1)/2`` unknowns) is fitted up to this dimension, its diagonal
#: above (the axis extents of the form, rotations ignored).
SHAPE_MAX_FULL_DIM = 40
#: Rotation (root mean square of the off-diagonal correlations ``A_ij/sqrt(A_ii·A_jj)`` of the
#: fitted form, i.e. ``‖C − I‖_F/sqrt(d)``) above which a ladder uses oriented boxes: below it
#: the form is axis-aligned up to fit noise (exactly 0 for the sphere, ellipsoid and cone).
MIN_ROTATION = 0.05
#: Decimals kept of the axes ``Q`` of an oriented shape (they enter the spec hash).
AXES_DECIMALS = 9
#: Whitening passes of :func:`ladder_shape` when the first fit is not positive definite (an
#: ill-conditioned form seen through a relative wiggle, BBOB f10/f12): at most this many refits
#: in the coordinates ``y = S(x − x*)``, ``S`` the square root of the previous form.
WHITEN_STEPS = 8
#: A whitening pass has converged when its residual form ``M`` is positive definite with
#: ``λ_max(M)/λ_min(M)`` at most this: the previous form was right to within this factor.
WHITEN_CONDITION = 1.5
#: Largest factor by which one whitening pass rescales the form along any direction (the
#: residual form's eigenvalues are clipped to ``[1/WHITEN_TRUST, WHITEN_TRUST]``: a negative
#: or tiny eigenvalue of a noisy pass does not throw the next pass's probes off).
WHITEN_TRUST = 10.0
#: Largest fit residual of a whitened form that is accepted: beyond it the level sets are not
#: ellipsoids (multi-modal rises fit 0.3-0.9), and the cube stays.
WHITEN_MAX_RESIDUAL = 0.25
#: Name and version of the method, recorded with every shape.
SHAPE_METHOD = "bounding box of the fitted local quadratic form (f - f*)^(2/p), v1"
# no numbers in the reason: it enters the spec hash, and near-zero eigenvalues are noise
_NOT_PD = (
    "the fitted form is not positive definite (smallest eigenvalue not above 1e-10 of the "
    "largest): no ellipsoidal sublevel sets"
)
_SCAN_STEPS = 48  # radii r_top·2^-m, m = 0..47, for the innermost crossing
_BISECTION_STEPS = 32  # bracket [r/2, r] narrowed to 2^-32 of r


class OrientationSpec(TypedDict):
    """``orientation`` of a shape's stored spec (oriented ladders only)."""

    rotation: float | None
    min_rotation: float
    axis_half_widths: list[float]


class ShapeSpec(TypedDict):
    """A shape as stored in every level's spec region (``ladder.shape``; part of the hash).

    The keys of :class:`LadderShape` of the same names; ``whitened`` only after whitening
    passes and ``orientation`` only for oriented ladders, so older specs keep their bytes.
    """

    method: str
    model: str
    half_widths: list[float]
    degree: float
    fit_residual: float | None
    fallback: str | None
    whitened: NotRequired[int]
    orientation: NotRequired[OrientationSpec]


class ShapeDescription(ShapeSpec):
    """:class:`ShapeSpec` plus the fit's diagnostics (:meth:`LadderShape.describe`)."""

    probes: int
    condition: float | None
    log10_fill_share: float | None
    rotation: float | None
    oriented: bool


class Orientation(NamedTuple):
    """Axes and half-widths of oriented ladder boxes (:attr:`LadderShape.orientation`).

    Attributes
    ----------
    axes : ndarray, shape (d, d)
        ``Q``: orthonormal columns, the eigenvectors of the fitted form.
    half_widths : ndarray, shape (d,)
        ``b_k ∝ 1/sqrt(λ_k)`` along ``Q``'s columns.
    """

    axes: np.ndarray
    half_widths: np.ndarray


@dataclass(frozen=True, eq=False)
class LadderShape:
    """Per-coordinate shape ``a`` of the boxes of a ladder (:func:`ladder_shape`).

    Attributes
    ----------
    half_widths : ndarray, shape (d,)
        ``a_i > 0`` with ``max a_i = 1``, rounded to :data:`SHAPE_DIGITS` significant digits;
        all ones for the cube (fallback). ``np.asarray(shape)`` gives it.
    degree : float
        ``p``: ``f − f*`` grows as ``|x − x*|^p`` (``d/β`` from the registered β, else 2).
    model : str
        ``"quadratic-form"`` (full ``A``), ``"diagonal"`` (``d >``
        :data:`SHAPE_MAX_FULL_DIM`) or ``"cube"`` (fallback).
    fit_residual : float or None
        Root mean square of ``(x − x*)ᵀA(x − x*)/g − 1`` over the probes (2 significant
        digits; 0 below :data:`RESIDUAL_FLOOR`); ``None`` when no fit was made.
    fallback : str or None
        Why the cube is used instead of a fitted shape.
    probes : int
        Points on the level sets used by the fit.
    condition : float or None
        ``λ_max/λ_min`` of the fitted ``A``.
    log10_fill_share : float or None
        ``log10`` of the share of its axis-aligned bounding box that the ellipsoid
        ``{(x − x*)ᵀA(x − x*) <= 1}`` fills (``V_d/2^d`` for a ball or an axis-aligned ellipsoid,
        ``-2.6`` in 10-D; smaller when ``A`` is rotated): about the share of a deep box's
        samples that fall in the sublevel set touching it.
    rotation : float or None
        ``‖C − I‖_F/sqrt(d)`` of the correlation form ``C_ij = A_ij/sqrt(A_ii·A_jj)`` (2
        significant digits): 0 for an axis-aligned form.
    axes : ndarray, shape (d, d), or None
        Orthonormal eigenvectors ``Q`` of ``A`` (columns, eigenvalues ascending, each with its
        largest entry positive, rounded to :data:`AXES_DECIMALS` decimals).
    axis_half_widths : ndarray, shape (d,), or None
        ``b_k ∝ 1/sqrt(λ_k)`` along ``Q``'s columns, in the units of ``half_widths`` (the
        oriented box ``σ·b`` bounds the same ellipsoid as the axis-aligned box ``σ·a``),
        :data:`SHAPE_DIGITS` significant digits.
    whitened : int
        Whitening passes that made the form (0: the first fit was positive definite; see
        docs/METHODS.md, "Nested regions", "Shape, whitening passes").
    """

    half_widths: np.ndarray
    degree: float
    model: str
    fit_residual: float | None
    fallback: str | None
    probes: int
    condition: float | None = None
    log10_fill_share: float | None = None
    rotation: float | None = None
    axes: np.ndarray | None = None
    axis_half_widths: np.ndarray | None = None
    whitened: int = 0

    @property
    def orientation(self) -> Orientation | None:
        """``(Q, b)`` for oriented ladder boxes when the form is rotated, else ``None``.

        Only a full quadratic form whose :attr:`rotation` exceeds :data:`MIN_ROTATION`:
        axis-aligned forms (sphere, ellipsoid, cone) keep their axis-aligned ladders exactly.
        """
        if (
            self.model != "quadratic-form"
            or self.rotation is None
            or self.rotation <= MIN_ROTATION
            or self.axes is None
            or self.axis_half_widths is None
        ):
            return None
        return Orientation(self.axes, self.axis_half_widths)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        return np.array(self.half_widths, dtype=dtype)

    @property
    def is_cube(self) -> bool:
        """Whether every ``a_i`` is 1 (fitted isotropic, or the fallback)."""
        return bool(np.all(self.half_widths == 1.0))

    def spec(self) -> ShapeSpec:
        """What enters each level's spec region (JSON-ready, rounded, deterministic).

        ``orientation`` (rotation, threshold, axis half-widths ``b``) only when the ladder uses
        oriented boxes, so axis-aligned shapes keep their specs (and hashes).
        """
        out: ShapeSpec = {
            "method": SHAPE_METHOD,
            "model": self.model,
            "half_widths": [float(v) for v in self.half_widths],
            "degree": float(self.degree),
            "fit_residual": self.fit_residual,
            "fallback": self.fallback,
        }
        if self.whitened:  # only then: first-pass shapes keep their specs (and hashes)
            out["whitened"] = self.whitened
        orientation = self.orientation
        if orientation is not None:
            out["orientation"] = {
                "rotation": self.rotation,
                "min_rotation": MIN_ROTATION,
                "axis_half_widths": [float(v) for v in orientation[1]],
            }
        return out

    def describe(self) -> ShapeDescription:
        """:meth:`spec` plus the fit's diagnostics (probes, condition, fill share, rotation)."""
        return {
            **self.spec(),
            "probes": self.probes,
            "condition": self.condition,
            "log10_fill_share": self.log10_fill_share,
            "rotation": self.rotation,
            "oriented": self.orientation is not None,
        }


def _significant(x: float, digits: int) -> float:
    return float(f"{x:.{digits - 1}e}")


def _pair_directions(scale: np.ndarray) -> np.ndarray:
    """``(±c_i e_i ± c_j e_j)/norm`` for ``i < j``: the off-diagonal probes, in scaled axes ``c``.

    With the axes ``±e_i`` the design is invariant under permutations and sign changes of the
    coordinates: a function with the symmetry of the cube (the cone ``max_i |x_i|``) gets an
    exactly isotropic shape, and every ``u`` comes with ``−u``, which cancels the odd (cubic)
    terms of ``f`` about ``x*`` to first order in the fit (Rosenbrock's, for one).
    """
    dim = scale.size
    i, j = np.triu_indices(dim, 1)
    if not i.size:
        return np.zeros((0, dim))
    out = []
    for si, sj in ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0)):
        V = np.zeros((i.size, dim))
        V[np.arange(i.size), i] = si * scale[i]
        V[np.arange(i.size), j] = sj * scale[j]
        out.append(V)
    V = np.vstack(out)
    return np.asarray(V / np.linalg.norm(V, axis=1, keepdims=True), dtype=np.float64)


def _random_directions(scale: np.ndarray, n: int, seed: int) -> np.ndarray:
    """``n`` directions ``c ⊙ g/|c ⊙ g|``, ``g`` Gaussian from ``default_rng(seed)``."""
    V = np.random.default_rng(seed).standard_normal((n, scale.size)) * scale
    return np.asarray(V / np.linalg.norm(V, axis=1, keepdims=True), dtype=np.float64)


def _ray_lengths(U: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Largest ``r`` with ``x + r·u`` in ``Ω``, per direction ``u``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.where(U > 0, (hi - x) / U, np.inf)
        down = np.where(U < 0, (lo - x) / U, np.inf)
    return np.asarray(np.min(np.minimum(up, down), axis=1), dtype=np.float64)


def _features(Z: np.ndarray, full: bool) -> np.ndarray:
    """Columns of ``zᵀAz`` linear in the entries of symmetric ``A`` (upper triangle)."""
    if not full:
        return np.asarray(Z * Z, dtype=np.float64)
    i, j = np.triu_indices(Z.shape[1])
    return np.asarray(Z[:, i] * Z[:, j] * np.where(i == j, 1.0, 2.0), dtype=np.float64)


def _unpack(coef: np.ndarray, dim: int, full: bool) -> np.ndarray:
    if not full:
        return np.asarray(np.diag(coef), dtype=np.float64)
    A = np.zeros((dim, dim))
    A[np.triu_indices(dim)] = coef
    return np.asarray(A + np.triu(A, 1).T, dtype=np.float64)


def _cube(
    dim: int, degree: float, reason: str, *, probes: int = 0, residual: float | None = None
) -> LadderShape:
    """The fallback shape: the cube ``a = 1``, with the reason."""
    return LadderShape(np.ones(dim), degree, "cube", residual, reason, probes)


def ladder_shape(
    fn_evaluate: Callable[[np.ndarray], np.ndarray],
    x_opt: np.ndarray | None,
    f_opt: float | None,
    lower: np.ndarray,
    upper: np.ndarray,
    *,
    degree: float | None = None,
    n_random: int | None = None,
    seed: int = SHAPE_SEED,
    radii: Sequence[float] = SHAPE_RADII,
) -> LadderShape:
    r"""Per-coordinate shape of ladder boxes: the bounding box of ``f``'s local sublevel set.

    Deterministic and computed from ``f`` alone (no table), so every level's box is known up
    front and all levels build in parallel.

    Parameters
    ----------
    fn_evaluate : callable
        Vectorised ``f``, ``(n, d) -> (n,)``.
    x_opt : array_like, shape (d,)
        The known minimiser ``x*`` (inside ``Ω``).
    f_opt : float
        The known minimum ``f*``.
    lower, upper : array_like, shape (d,)
        The domain ``Ω``.
    degree : float, optional
        ``p > 0`` with ``f − f* ≈ |x − x*|^p`` near ``x*``: ``d/β`` from the registered
        local structure (2 at a smooth minimum, 1 at a cone, 4 for BBOB f21/f22); default 2.
    n_random : int, optional
        Fixed-seed random probe directions added to the deterministic design (default 0: the
        axes and the pair diagonals determine ``A`` and keep the design symmetric).
    seed : int, optional
        Seed of the random directions (:data:`SHAPE_SEED`; part of the method, do not vary).
    radii : sequence of float, optional
        Probe radii as shares of ``R`` (:data:`SHAPE_RADII`).

    Returns
    -------
    LadderShape
        ``half_widths`` ``a`` (``max a_i = 1``), the model, degree, fit residual, and the
        fallback reason when the cube is returned instead.

    Raises
    ------
    InvalidInput
        Malformed domain, ``x_opt``, ``degree``, ``n_random`` or ``radii``.
    NotApplicable
        ``x_opt`` or ``f_opt`` unknown.

    Notes
    -----
    Near a minimum of degree ``p``, ``(f − f*)^{2/p} ≈ (x − x*)ᵀA(x − x*)``, and the sublevel
    ellipsoids' bounding box is ``a_i = sqrt((A^{-1})_{ii})``, normalized to ``max a_i = 1``;
    ``A`` is the relative least-squares solution of ``zᵀAz = s^{2/p}`` over probed crossings
    ``z`` (whitening passes, at most :data:`WHITEN_STEPS`, when that fit is not positive
    definite). The probes, the whitening, the fallbacks to the cube and the limit of
    axis-aligned boxes: docs/METHODS.md, "Nested regions", the "Shape" items.

    Examples
    --------
    >>> f = lambda X: X[:, 0] ** 2 + 100.0 * X[:, 1] ** 2
    >>> shape = ladder_shape(f, [0.0, 0.0], 0.0, [-1.0, -1.0], [1.0, 1.0])
    >>> shape.half_widths.tolist(), shape.model, shape.fallback
    ([1.0, 0.1], 'quadratic-form', None)
    """
    lo, hi, x = domain_and_opt(lower, upper, x_opt)
    if f_opt is None:
        raise NotApplicable("nested regions need a known minimum f*", field="f_opt")
    f_star = float(f_opt)
    p = 2.0 if degree is None else float(degree)
    if not (math.isfinite(p) and p > 0):
        raise InvalidInput(f"degree must be finite and > 0, got {degree!r}", field="degree")
    rhos = sorted((float(r) for r in radii), reverse=True)
    if not rhos or not all(math.isfinite(r) and 0 < r <= 1 for r in rhos):
        raise InvalidInput("radii must be shares in (0, 1]", field="radii")
    n_rand = 0 if n_random is None else check_int(n_random, "n_random", 0)
    dim = x.size
    full = dim <= SHAPE_MAX_FULL_DIM
    unknowns = dim * (dim + 1) // 2 if full else dim
    reach = largest_reach(lo, hi, x)

    def rise(r: np.ndarray, dirs: np.ndarray) -> np.ndarray:
        pts = np.clip(x + r[:, None] * dirs, lo, hi)
        return np.asarray(fn_evaluate(pts), dtype=np.float64) - f_star

    # stage 1: the axes fix the target levels and the scale of every coordinate
    axes = np.vstack([np.eye(dim), -np.eye(dim)])
    axes_len = _ray_lengths(axes, x, lo, hi)
    targets = _target_levels(rise, axes, axes_len, [r * reach for r in rhos], f_star)
    if isinstance(targets, notices.Refusal):
        return _cube(dim, p, targets.message)
    g_levels = np.asarray(targets) ** (2.0 / p)
    ax_r, ax_ok = _crossings(rise, axes, axes_len, targets)
    scale = _axis_scale(ax_r, ax_ok, g_levels)
    # stage 2: off-diagonal (and optional random) directions, evenly spread in scaled axes
    extra = _pair_directions(scale) if full else np.zeros((0, dim))
    if n_rand:
        extra = np.vstack([extra, _random_directions(scale, n_rand, seed)])
    extra, extra_len = _inside_directions(extra, x, lo, hi)
    ex_r, ex_ok = _crossings(rise, extra, extra_len, targets)
    U = np.vstack([axes, extra])
    R = np.hstack([ax_r, ex_r])
    ok = np.hstack([ax_ok, ex_ok])
    g_all = np.repeat(g_levels[:, None], U.shape[0], axis=1)
    Z = (R[:, :, None] * U[None, :, :])[ok]
    g = g_all[ok]
    if Z.shape[0] < max(1.5 * unknowns, unknowns + 2):
        return _cube(dim, p, f"too few level-set crossings ({Z.shape[0]}) for {unknowns} unknowns")
    shape = _fit(Z, g, p, full, scale)
    if shape.fallback != _NOT_PD or not full:
        return shape
    # the first form is not positive definite: refit it in its own whitened coordinates
    A = _solve(Z / scale, g, full)[0] / np.outer(scale, scale)
    return _whiten(rise, A, x, lo, hi, targets, p, scale, unknowns) or shape


def _inside_directions(
    U: np.ndarray, x: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Directions ``U`` with their ray lengths, flipped where ``x*`` on a face of ``Ω`` would
    leave ``Ω`` at once (the opposite direction is probed instead), duplicates dropped."""
    U = U.copy()
    length = _ray_lengths(U, x, lo, hi)
    out = length <= 0
    U[out] *= -1.0
    length[out] = _ray_lengths(U[out], x, lo, hi)
    _, first = np.unique(U, axis=0, return_index=True)  # a flip may repeat a direction
    keep = np.zeros(U.shape[0], dtype=bool)
    keep[first] = True
    keep &= length > 0
    return U[keep], length[keep]


def _psd_root(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(S, S^{-1})``, ``S = |A|^{1/2}`` (eigenvalues ``|λ|`` floored at ``λ_max/``
    :data:`MAX_CONDITION`), symmetric: the whitening of a form that may be indefinite."""
    lam, V = np.linalg.eigh(0.5 * (A + A.T))
    mag = np.abs(lam)
    mag = np.maximum(mag, np.max(mag) / MAX_CONDITION)
    root = np.sqrt(mag)
    return (V * root) @ V.T, (V / root) @ V.T


def _whiten(
    rise: Callable[[np.ndarray, np.ndarray], np.ndarray],
    A: np.ndarray,
    x: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    targets: Sequence[float],
    p: float,
    scale: np.ndarray,
    unknowns: int,
) -> LadderShape | None:
    """Refit ``A`` in the whitened coordinates ``y = S(x − x*)``, ``S = |A|^{1/2}``, until the
    residual form is near the identity (:data:`WHITEN_CONDITION`); ``None`` if it never is."""
    dim = x.size
    ones = np.ones(dim)
    design = np.vstack([np.eye(dim), -np.eye(dim), _pair_directions(ones)])
    g_levels = np.asarray(targets) ** (2.0 / p)
    for step in range(1, WHITEN_STEPS + 1):
        if not np.all(np.isfinite(A)):
            return None
        S, S_inv = _psd_root(A)
        U = design @ S_inv  # x-directions S^{-1} u (S_inv symmetric)
        U = U / np.linalg.norm(U, axis=1, keepdims=True)
        U, length = _inside_directions(U, x, lo, hi)
        R, ok = _crossings(rise, U, length, targets)
        Z = (R[:, :, None] * U[None, :, :])[ok]
        g = np.repeat(g_levels[:, None], U.shape[0], axis=1)[ok]
        if Z.shape[0] < max(1.5 * unknowns, unknowns + 2):
            return None
        M, residual = _solve(Z @ S, g, True)  # S symmetric: y = S z
        if not (np.all(np.isfinite(M)) and math.isfinite(residual)):
            return None
        lam, V = np.linalg.eigh(0.5 * (M + M.T))
        # a trust region: one pass rescales no direction by more than WHITEN_TRUST
        step_form = (V * np.clip(lam, 1.0 / WHITEN_TRUST, WHITEN_TRUST)) @ V.T
        A = S @ step_form @ S
        A = 0.5 * (A + A.T)
        if lam[0] > 0 and lam[-1] <= WHITEN_CONDITION * lam[0]:
            if residual > WHITEN_MAX_RESIDUAL:
                return None
            shape = _shape_of(A * np.outer(scale, scale), scale, residual, Z.shape[0], p, True)
            if shape.fallback is not None:
                return None
            return dataclasses.replace(shape, whitened=step)
    return None


def _target_levels(
    rise: Callable[[np.ndarray, np.ndarray], np.ndarray],
    axes: np.ndarray,
    axes_len: np.ndarray,
    radii: Sequence[float],
    f_star: float,
) -> list[float] | notices.Refusal:
    """Target levels ``s = min over the axes of f(x* ± r·e_i) − f*``, per radius (decreasing).

    Returns the levels above rounding, or why there are none (the cube's reason, its
    ``message`` recorded as :attr:`LadderShape.fallback`).
    """
    targets = []
    for k, r in enumerate(radii):
        long = axes_len >= r
        if not np.any(long):
            continue
        h = rise(np.full(int(np.sum(long)), r), axes[long])
        if not np.all(np.isfinite(h)):
            return notices.Refusal("probe-not-finite", "f is not finite at a probe point")
        noise = 1e4 * np.finfo(float).eps * max(abs(f_star), float(np.max(np.abs(h + f_star))))
        if np.any(h < -noise):
            return notices.Refusal(
                "below-f-opt", f"f < f* at distance {r:.3g} from x*: x* is not the minimiser"
            )
        level = float(np.min(h))
        if level > noise:
            targets.append(level)
        elif k == 0:
            return notices.Refusal(
                "plateau",
                f"a plateau: f - f* is within rounding of 0 at distance {r:.3g} from x* along "
                "some axis",
            )
    if not targets:
        return notices.Refusal(
            "no-axis-reach", f"no axis reaches {radii[0]:.3g} from x* inside the domain"
        )
    return targets


def _axis_scale(ax_r: np.ndarray, ax_ok: np.ndarray, g_levels: np.ndarray) -> np.ndarray:
    """Per-coordinate extent ``c_i`` (max 1) of the level sets along ``±e_i``.

    Geometric mean of ``r/sqrt(g)`` over both signs and all levels; an axis never crossed
    (the domain ends first) counts as the longest.
    """
    dim = ax_r.shape[1] // 2
    with np.errstate(divide="ignore"):
        ln_ext = np.where(ax_ok, np.log(ax_r) - 0.5 * np.log(g_levels)[:, None], np.nan)
    per_axis = ln_ext.reshape(len(g_levels), 2, dim).transpose(2, 0, 1).reshape(dim, -1)
    seen = np.any(np.isfinite(per_axis), axis=1)
    if not np.any(seen):
        return np.ones(dim)
    ln_scale = np.full(dim, np.nan)
    ln_scale[seen] = np.nanmean(per_axis[seen], axis=1)
    ln_scale[~seen] = np.max(ln_scale[seen])
    return np.asarray(np.exp(ln_scale - np.max(ln_scale)), dtype=np.float64)


def _crossings(
    rise: Callable[[np.ndarray, np.ndarray], np.ndarray],
    U: np.ndarray,
    r_top: np.ndarray,
    targets: Sequence[float],
) -> tuple[np.ndarray, np.ndarray]:
    """Radius of the innermost crossing of ``f − f* = s`` along each ``u``, per target ``s``.

    One scan of the radii ``r_top·2^{-m}`` (shared by the targets) brackets the crossing
    nearest ``x*``; bisection narrows it. Returns radii and validity, shape
    ``(len(targets), n)``: no crossing within ``r_top``, or ``f − f* >= s`` even at the
    innermost scan radius (a jump at ``x*``), is invalid.
    """
    n = U.shape[0]
    scan = np.empty((_SCAN_STEPS, n))
    for m in range(_SCAN_STEPS):
        scan[m] = rise(r_top * 2.0**-m, U) if n else scan[m]
    radii, valid = np.empty((len(targets), n)), np.empty((len(targets), n), dtype=bool)
    steps = np.arange(_SCAN_STEPS)[:, None]
    for k, s in enumerate(targets):
        last_above = np.max(np.where(scan >= s, steps, -1), axis=0) if n else np.zeros(0, int)
        valid[k] = (last_above >= 0) & (last_above < _SCAN_STEPS - 1)
        outer = r_top * 2.0 ** -np.maximum(last_above, 0)
        inner = outer / 2.0
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (inner + outer)
            above = rise(mid, U) >= s if n else np.zeros(0, bool)
            outer, inner = np.where(above, mid, outer), np.where(above, inner, mid)
        radii[k] = 0.5 * (inner + outer)
    return radii, valid


def _solve(Y: np.ndarray, g: np.ndarray, full: bool) -> tuple[np.ndarray, float]:
    """Least squares (relative) for the form ``B`` with ``yᵀBy = g``; its RMS relative misfit."""
    dim = Y.shape[1]
    X = _features(Y, full) / g[:, None]
    norms = np.linalg.norm(X, axis=0)
    norms[norms == 0] = 1.0
    coef, *_ = np.linalg.lstsq(X / norms, np.ones(Y.shape[0]), rcond=None)
    B = _unpack(coef / norms, dim, full)
    misfit = np.einsum("ni,ij,nj->n", Y, B, Y) / g - 1.0
    return B, float(np.sqrt(np.mean(misfit**2)))


def _fit(Z: np.ndarray, g: np.ndarray, p: float, full: bool, scale: np.ndarray) -> LadderShape:
    """Least squares for ``A`` in the scaled coordinates ``y = z/c``; bounding box of ``A``."""
    B, residual = _solve(Z / scale, g, full)  # A = diag(1/c) B diag(1/c)
    return _shape_of(B, scale, residual, Z.shape[0], p, full)


def _shape_of(
    B: np.ndarray, scale: np.ndarray, residual: float, n: int, p: float, full: bool
) -> LadderShape:
    """The shape (bounding box, axes) of the form ``A = diag(1/c) B diag(1/c)``."""
    dim = B.shape[0]
    # below RESIDUAL_FLOOR the misfit is rounding noise, whose digits vary with the platform
    shown: float | None = None
    if math.isfinite(residual):
        shown = 0.0 if residual < RESIDUAL_FLOOR else _significant(residual, 2)
    if not (np.all(np.isfinite(B)) and math.isfinite(residual)):
        return _cube(dim, p, "the least-squares fit is not finite", probes=n)
    lam, V = np.linalg.eigh(B)
    if not (lam[-1] > 0 and lam[0] > MAX_CONDITION**-1 * lam[-1]):
        # no numbers in the reason: it enters the spec hash, and near-zero eigenvalues are noise
        return _cube(dim, p, _NOT_PD, probes=n, residual=shown)
    inv_diag = np.sum(V * V / lam, axis=1)  # (B^-1)_ii; (A^-1)_ii = c_i^2 (B^-1)_ii
    a = scale * np.sqrt(inv_diag)
    a = np.array([_significant(v, SHAPE_DIGITS) for v in a / np.max(a)])
    ln_fill = (
        0.5 * dim * math.log(math.pi)
        - math.lgamma(0.5 * dim + 1.0)
        - dim * math.log(2.0)
        - 0.5 * float(np.sum(np.log(lam)))
        - 0.5 * float(np.sum(np.log(inv_diag)))
    )
    A = B / np.outer(scale, scale)
    A = 0.5 * (A + A.T)
    eig_a, Q = np.linalg.eigh(A)
    d_a = np.sqrt(np.abs(np.diag(A)))
    corr = A / np.outer(d_a, d_a)
    rotation = _significant(
        float(np.linalg.norm(corr - np.diag(np.diag(corr))) / math.sqrt(dim)), 2
    )
    axes = axis_half = None
    if eig_a[0] > 0:
        # a deterministic sign per axis (largest entry positive), rounded like the rest
        pick = np.argmax(np.abs(Q), axis=0)
        Q = Q * np.sign(Q[pick, np.arange(dim)])
        axes = np.round(Q, AXES_DECIMALS) + 0.0
        raw_max = float(np.max(scale * np.sqrt(inv_diag)))
        axis_half = np.array(
            [_significant(v, SHAPE_DIGITS) for v in 1.0 / (np.sqrt(eig_a) * raw_max)]
        )
    return LadderShape(
        half_widths=a,
        degree=p,
        model="quadratic-form" if full else "diagonal",
        fit_residual=shown,
        fallback=None,
        probes=n,
        condition=_significant(float(eig_a[-1] / eig_a[0]), 3) if eig_a[0] > 0 else None,
        log10_fill_share=round(ln_fill / LN10, 2),
        rotation=rotation,
        axes=axes,
        axis_half_widths=axis_half,
    )
