"""Quality indicators of an approximation front (minimization), with every setting echoed.

All objectives are minimized. Nothing is normalized: the hypervolume uses the caller's explicit
reference point (never a per-set ``[min, max]`` box, which can invert the order of two fronts), and
the distance indicators use plain Euclidean distances in the objective space given.

Definitions, for a front :math:`A = \\{a_1, \\dots, a_n\\}` and a reference front
:math:`Z = \\{z_1, \\dots, z_r\\}` (:math:`d` = Euclidean distance,
:math:`d^+(a, z) = \\lVert \\max(a - z, 0) \\rVert_2`, the dominance-aware distance of [2]_):

- ``hv`` [1]_: Lebesgue measure of the region dominated by ``A`` and bounded by the reference point
  ``ρ`` (``moocore.hypervolume``). A point that does not strictly dominate ``ρ`` (some
  :math:`a_k \\ge ρ_k`) contributes nothing.
- ``gd`` = :math:`\\frac1n \\sum_i \\min_j d(a_i, z_j)`; ``gd_plus`` =
  :math:`\\frac1n \\sum_i \\min_j d^+(a_i, z_j)` [2]_ (plain means, as ``pymoo.indicators.gd.GD``
  and ``gd_plus.GDPlus``).
- ``igd`` = :math:`\\frac1r \\sum_j \\min_i d(a_i, z_j)`; ``igd_plus`` =
  :math:`\\frac1r \\sum_j \\min_i d^+(a_i, z_j)` (``moocore.igd`` / ``moocore.igd_plus``).
- ``delta_p`` = :math:`\\max(GD_p, IGD_p)` with the power means
  :math:`GD_p = (\\frac1n \\sum_i \\min_j d(a_i, z_j)^p)^{1/p}` and
  :math:`IGD_p = (\\frac1r \\sum_j \\min_i d(a_i, z_j)^p)^{1/p}` [3]_
  (``moocore.avg_hausdorff_dist`` for integer ``p``). ``p`` only affects ``delta_p``; at ``p = 1``
  it is ``max(gd, igd)``.
- ``spacing`` (Schott [4]_): :math:`S = \\sqrt{\\frac{1}{n-1} \\sum_i (\\bar D - D_i)^2}`,
  :math:`D_i = \\min_{k \\ne i} \\lVert a_i - a_k \\rVert_1` (``pymoo``'s ``SpacingIndicator``
  divides by ``n`` instead).
- ``spread`` (Deb's Δ [5]_): for two objectives, with ``A`` sorted by the first objective,
  :math:`Δ = \\frac{d_f + d_l + \\sum_{i=1}^{n-1} |d_i - \\bar d|}{d_f + d_l + (n-1) \\bar d}`,
  :math:`d_i = d(a_i, a_{i+1})`, :math:`d_f, d_l` the distances from the extreme points of ``Z``
  (smallest first, resp. second, objective) to the first and last point of ``A``. For three or
  more objectives the generalization of Zhou et al. [6]_:
  :math:`Δ = \\frac{\\sum_k d(e_k, A) + \\sum_i |D_i - \\bar D|}{\\sum_k d(e_k, A) + n \\bar D}`,
  :math:`e_k` the point of ``Z`` with the smallest objective ``k``, :math:`d(e, A)` its distance
  to the nearest point of ``A`` and :math:`D_i` the Euclidean nearest-neighbour distance in ``A``.

The front is used as given (not filtered to its non-dominated points), as moocore and pymoo do.
The **reference front** is filtered before any indicator uses it: repeated rows are kept once and
rows dominated by another row are removed (non-dominated sorting by :func:`app.domain.pareto.
nondominated_levels`, i.e. ``moocore.pareto_rank``), because a dominated or repeated reference
point is not part of a Pareto front and biases IGD, IGD+ and Δp (repeated points weigh twice in
the mean; dominated ones pull the distances). How many rows were removed is returned in
:class:`ReferenceFrontFilter`; the values equal moocore's and pymoo's on the filtered front.

A hypervolume that leaves the normal float range (a positive volume whose product of small
differences is below the smallest normal float, e.g. points ``1e-200`` from the reference point in
2 objectives) is returned with ``log10_hv`` computed without underflow: each objective (front and
reference point) is multiplied by a power of two ``2^{s_k}`` so that its largest difference
``ρ_k − a_k`` is in ``[1/2, 1)`` — exact in binary floating point when no coordinate
overflows or becomes subnormal, checked — the HV library is called on the scaled points, and
``log10 HV = log10 HV_scaled − log10(2) Σ_k s_k`` (the volume scales by ``Π_k 2^{s_k}``). A typed
:class:`HvUnderflow` says so.

References
----------
.. [1] Zitzler, E., Thiele, L. (1999). "Multiobjective evolutionary algorithms: a comparative case
   study and the strength Pareto approach". IEEE Trans. Evol. Comput. 3(4), 257-271.
.. [2] Ishibuchi, H., Masuda, H., Tanigaki, Y., Nojima, Y. (2015). "Modified distance calculation
   in generational distance and inverted generational distance". EMO 2015, LNCS 9019, 110-125.
.. [3] Schütze, O., Esquivel, X., Lara, A., Coello Coello, C. A. (2012). "Using the averaged
   Hausdorff distance as a performance measure in evolutionary multiobjective optimization".
   IEEE Trans. Evol. Comput. 16(4), 504-522.
.. [4] Schott, J. R. (1995). "Fault tolerant design using single and multicriteria genetic
   algorithm optimization". Master's thesis, MIT.
.. [5] Deb, K., Pratap, A., Agarwal, S., Meyarivan, T. (2002). "A fast and elitist
   multiobjective genetic algorithm: NSGA-II". IEEE Trans. Evol. Comput. 6(2), 182-197.
.. [6] Zhou, A., Jin, Y., Zhang, Q., Sendhoff, B., Tsang, E. (2006). "Combining model-based and
   genetics-based offspring generation for multi-objective optimization using a convergence
   criterion". IEEE CEC 2006, 892-899.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import moocore
import numpy as np
from numpy.typing import ArrayLike
from scipy.spatial.distance import cdist, pdist, squareform

from app.domain.errors import InvalidInput
from app.domain.pareto import FloatArray, nondominated_levels
from app.domain.stattools import choice

__all__ = [
    "INDICATORS",
    "CleanedReferenceFront",
    "HvUnderflow",
    "IndicatorResult",
    "ReferenceFrontFilter",
    "clean_reference_front",
    "compute_indicators",
    "log10_hypervolume",
]

INDICATORS = ("hv", "igd", "igd_plus", "gd", "gd_plus", "spacing", "spread", "delta_p")

# what each indicator needs besides the front
_NEEDS_POINT = frozenset({"hv"})
HV_MAX_OBJECTIVES = 31
"""Objectives ``moocore.hypervolume`` accepts (it raises a bare ValueError above)."""
_NEEDS_FRONT = frozenset({"igd", "igd_plus", "gd", "gd_plus", "spread", "delta_p"})
_NEEDS_TWO = frozenset({"spacing", "spread"})


_TINY = float(np.finfo(np.float64).tiny)
_LOG10_2 = float(np.log10(2.0))


@dataclass(frozen=True)
class ReferenceFrontFilter:
    """What was removed from the reference front before the indicators used it.

    Attributes
    ----------
    n_given : int
        Rows sent.
    duplicates_removed : int
        Repeated rows removed (each distinct row is kept once).
    dominated_removed : int
        Distinct rows removed because another row dominates them (no worse in every objective,
        better in one).
    n_used : int
        Rows used: ``n_given − duplicates_removed − dominated_removed``.
    """

    n_given: int
    duplicates_removed: int
    dominated_removed: int
    n_used: int


@dataclass(frozen=True)
class HvUnderflow:
    """A positive hypervolume below the normal float range (0 or subnormal as a float).

    Attributes
    ----------
    hv : float
        The float value returned (0 or subnormal).
    log10_hv : float or None
        ``log10`` of the volume computed without underflow (module docstring), or None when the
        exact power-of-two scaling was not possible.
    points_counted : int
        Points strictly dominating the reference point (each adds a positive volume).
    message : str
        The warning in words.
    kind : str
        ``"hv-underflow"``.
    """

    hv: float
    log10_hv: float | None
    points_counted: int
    message: str
    kind: str = "hv-underflow"


class CleanedReferenceFront(NamedTuple):
    """What :func:`clean_reference_front` returns.

    Attributes
    ----------
    front : ndarray, shape (k, m)
        The distinct non-dominated rows, first occurrences, in their order.
    info : ReferenceFrontFilter
        How many rows were given, repeated and dominated.
    """

    front: FloatArray
    info: ReferenceFrontFilter


def clean_reference_front(z: FloatArray) -> CleanedReferenceFront:
    """The reference front without repeated and dominated rows (first occurrences, in order).

    Examples
    --------
    >>> z, info = clean_reference_front(np.array([[0.0, 1], [1, 0], [0, 1], [1, 1]]))
    >>> z.tolist(), info.duplicates_removed, info.dominated_removed
    ([[0.0, 1.0], [1.0, 0.0]], 1, 1)
    """
    _, first = np.unique(z, axis=0, return_index=True)
    distinct = z[np.sort(first)]
    kept = distinct[nondominated_levels(distinct) == 1]
    n, d = z.shape[0], distinct.shape[0]
    return CleanedReferenceFront(
        kept, ReferenceFrontFilter(n, n - d, d - kept.shape[0], kept.shape[0])
    )


Hypervolume = Callable[[FloatArray, FloatArray], float]
"""A hypervolume of a front with respect to a reference point: :func:`moocore_hypervolume` in
this process, or the services' stoppable one (``app.services.isolated``)."""


def moocore_hypervolume(front: FloatArray, ref: FloatArray) -> float:
    """``moocore.hypervolume`` (one atomic C call: nothing stops it once started)."""
    return float(moocore.hypervolume(front, ref=ref))


def log10_hypervolume(
    front: FloatArray, ref: FloatArray, hypervolume: Hypervolume = moocore_hypervolume
) -> float | None:
    """``log10`` of the hypervolume without underflow (module docstring); None if HV = 0.

    None also when the power-of-two scaling would not be exact (a coordinate would overflow or
    become subnormal) and the float hypervolume is not normal.

    Examples
    --------
    >>> log10_hypervolume(np.array([[0.0, 0.0]]), np.array([1e-200, 1e-200]))
    -400.0
    """
    g = front[(front < ref).all(axis=1)]
    if g.shape[0] == 0:
        return None
    hv = hypervolume(g, ref)
    if hv >= _TINY and np.isfinite(hv):
        return float(np.log10(hv))
    span = (ref - g).max(axis=0)
    _, e = np.frexp(span)
    s = -e.astype(np.int64)  # span · 2^s in [1/2, 1)
    with np.errstate(over="ignore", under="ignore"):
        gs, rs = np.ldexp(g, s), np.ldexp(ref, s)
        exact = (
            np.isfinite(gs).all()
            and np.isfinite(rs).all()
            and bool((np.ldexp(gs, -s) == g).all())
            and bool((np.ldexp(rs, -s) == ref).all())
        )
    if not exact:
        return None
    scaled = hypervolume(gs, rs)
    if not (scaled > 0 and np.isfinite(scaled)):
        return None
    return float(np.log10(scaled) - _LOG10_2 * float(s.sum()))


@dataclass(frozen=True)
class IndicatorResult:
    """Indicator values of one front.

    Attributes
    ----------
    values : dict of str to float
        One value per requested indicator, in the order requested. Smaller is better for every
        indicator except ``hv`` (larger is better).
    settings : dict
        Everything the values depend on: ``orientation`` (``"minimize"``), ``reference_point``
        (list or None), ``p``, ``n_points``, ``n_objectives``, ``n_reference`` (size of the
        reference front used, after filtering, or None), ``normalization`` (``"none"``),
        ``hv_points_counted`` (points strictly dominating the reference point, when ``hv`` is
        requested) and ``larger_is_better`` (the indicators to maximize).
    reference_front_filter : ReferenceFrontFilter or None
        Rows removed from the reference front (None without a reference front).
    log10_hv : float or None
        ``log10`` of the hypervolume, finite below the float range (None without ``hv``, or
        when HV = 0 because no point strictly dominates the reference point).
    hv_underflow : HvUnderflow or None
        Set when a positive hypervolume is below the normal float range.
    """

    values: dict[str, float]
    settings: dict[str, Any] = field(default_factory=dict)
    reference_front_filter: ReferenceFrontFilter | None = None
    log10_hv: float | None = None
    hv_underflow: HvUnderflow | None = None


def _matrix(x: ArrayLike, name: str) -> FloatArray:
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be a 2-D array of numbers", field=name) from exc
    if a.ndim != 2 or a.shape[0] == 0 or a.shape[1] == 0:
        raise InvalidInput(
            f"{name} must have shape (n_points, n_objectives) with both >= 1, got {a.shape}",
            field=name,
        )
    if not np.isfinite(a).all():
        raise InvalidInput(f"{name} must be finite (no NaN or inf)", field=name)
    return a


def _reference_point_iv(x: ArrayLike, m: int) -> FloatArray:
    try:
        r = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(
            "reference_point must be a 1-D array of numbers", field="reference_point"
        ) from exc
    if r.shape != (m,):
        raise InvalidInput(
            f"reference_point must have one value per objective ({m}), got shape {r.shape}",
            field="reference_point",
        )
    if not np.isfinite(r).all():
        raise InvalidInput(
            "reference_point must be finite (no NaN or inf)", field="reference_point"
        )
    return r


def _compute_indicators_iv(
    front: ArrayLike,
    reference_front: ArrayLike | None,
    reference_point: ArrayLike | None,
    indicators: Sequence[str],
    p: float,
) -> tuple[FloatArray, FloatArray | None, FloatArray | None, tuple[str, ...]]:
    if isinstance(indicators, str | bytes) or len(indicators) == 0:
        raise InvalidInput("indicators must be a non-empty list of names", field="indicators")
    names = tuple(dict.fromkeys(choice(n, INDICATORS, "indicators") for n in indicators))
    if not isinstance(p, int | float | np.integer | np.floating) or not (np.isfinite(p) and p > 0):
        raise InvalidInput(f"p must be a finite number > 0, got {p!r}", field="p")
    f = _matrix(front, "front")
    m = f.shape[1]
    if _NEEDS_TWO.intersection(names) and f.shape[0] < 2:
        raise InvalidInput("spacing and spread need a front of at least 2 points", field="front")
    z = None
    if reference_front is not None:
        z = _matrix(reference_front, "reference_front")
        if z.shape[1] != m:
            raise InvalidInput(
                f"reference_front has {z.shape[1]} objectives, front has {m}",
                field="reference_front",
            )
    elif _NEEDS_FRONT.intersection(names):
        needing = sorted(_NEEDS_FRONT.intersection(names))
        raise InvalidInput(f"reference_front is required for {needing}", field="reference_front")
    r = None
    if reference_point is not None:
        r = _reference_point_iv(reference_point, m)
    elif _NEEDS_POINT.intersection(names):
        raise InvalidInput("reference_point is required for 'hv'", field="reference_point")
    if "hv" in names and m > HV_MAX_OBJECTIVES:
        raise InvalidInput(
            f"the exact hypervolume is computed in at most {HV_MAX_OBJECTIVES} objectives "
            f"(moocore); the front has {m}: leave out 'hv'",
            field="indicators",
        )
    return f, z, r, names


def _gd_plus(f: FloatArray, z: FloatArray) -> float:
    # d+(a, z) = ||max(a − z, 0)||, nearest reference point for each front point [2]_
    diff = np.maximum(f[:, None, :] - z[None, :, :], 0.0)
    return float(np.sqrt((diff**2).sum(axis=2)).min(axis=1).mean())


def _power_mean(d: FloatArray, p: float) -> float:
    return float(np.mean(d**p) ** (1.0 / p))


def _spacing(f: FloatArray) -> float:
    # Schott [4]_: L1 nearest-neighbour distances, sample (n − 1) standard deviation
    d = np.partition(squareform(pdist(f, metric="cityblock")), 1, axis=1)[:, 1]
    return float(np.sqrt(((d - d.mean()) ** 2).sum() / (f.shape[0] - 1)))


def _spread(f: FloatArray, z: FloatArray) -> float:
    m = f.shape[1]
    # extreme points of the reference front: smallest value of each objective (ties: lexicographic)
    extremes = np.array([z[np.lexsort(np.roll(z, -k, axis=1).T[::-1])[0]] for k in range(m)])
    if m == 2:
        # Deb's Δ [5]_: consecutive gaps along the sorted front, end gaps to the extremes
        a = f[np.lexsort((f[:, 1], f[:, 0]))]
        gaps = np.sqrt((np.diff(a, axis=0) ** 2).sum(axis=1))
        ends = float(np.linalg.norm(extremes[0] - a[0]) + np.linalg.norm(extremes[1] - a[-1]))
        num = ends + np.abs(gaps - gaps.mean()).sum()
        den = ends + gaps.size * gaps.mean()
    else:
        # Zhou et al. [6]_: nearest-neighbour distances, extremes to their nearest front point
        nn = np.partition(squareform(pdist(f)), 1, axis=1)[:, 1]
        ends = float(cdist(extremes, f).min(axis=1).sum())
        num = ends + np.abs(nn - nn.mean()).sum()
        den = ends + nn.size * nn.mean()
    return float(num / den) if den > 0 else 0.0


def _distance_indicators(f: FloatArray, z: FloatArray, p: float) -> dict[str, Callable[[], float]]:
    def delta_p() -> float:
        d = cdist(f, z)
        return max(_power_mean(d.min(axis=1), p), _power_mean(d.min(axis=0), p))

    return {
        "igd": lambda: float(moocore.igd(f, ref=z)),
        "igd_plus": lambda: float(moocore.igd_plus(f, ref=z)),
        "gd": lambda: float(cdist(f, z).min(axis=1).mean()),
        "gd_plus": lambda: _gd_plus(f, z),
        "spread": lambda: _spread(f, z),
        "delta_p": delta_p,
    }


def compute_indicators(
    front: ArrayLike,
    *,
    reference_front: ArrayLike | None = None,
    reference_point: ArrayLike | None = None,
    indicators: Sequence[str] = INDICATORS,
    p: float = 1.0,
    hypervolume: Hypervolume = moocore_hypervolume,
) -> IndicatorResult:
    """Quality indicators of one approximation front (all objectives minimized).

    ``hypervolume`` computes HV (the default in this process; the services pass one that a
    deadline or a cancellation can stop).

    See the module docstring for the exact definition of each indicator.

    Parameters
    ----------
    front : array_like, shape (n_points, n_objectives)
        Objective vectors of the front to score (minimization); finite.
    reference_front : array_like, shape (n_reference, n_objectives), optional
        Reference (ideally true Pareto) front; required by ``igd``, ``igd_plus``, ``gd``,
        ``gd_plus``, ``spread`` and ``delta_p``.
    reference_point : array_like, shape (n_objectives,), optional
        Hypervolume reference point; required by ``hv``. Used as given: no normalization.
    indicators : sequence of str, optional
        Any of :data:`INDICATORS` (default: all of them).
    p : float, optional
        Exponent of the power means in ``delta_p`` (default 1). Finite and > 0.

    Returns
    -------
    IndicatorResult

    Raises
    ------
    app.domain.errors.InvalidInput
        Non-finite, empty or mis-shaped inputs (``field`` names ``front``, ``reference_front`` or
        ``reference_point``), a missing required reference, an unknown indicator, a bad ``p``, or
        fewer than 2 points for ``spacing`` / ``spread``.

    Examples
    --------
    >>> res = compute_indicators(
    ...     [[1, 3], [2, 2], [3, 1]],
    ...     reference_front=[[0, 3], [3, 0]],
    ...     reference_point=[4, 4],
    ...     indicators=["hv", "gd", "igd", "spacing"],
    ... )
    >>> res.values
    {'hv': 6.0, 'gd': 1.4120226591665965, 'igd': 1.0, 'spacing': 0.0}
    >>> res.settings["reference_point"], res.settings["hv_points_counted"]
    ([4.0, 4.0], 3)
    """
    f, z, r, names = _compute_indicators_iv(front, reference_front, reference_point, indicators, p)
    filtered = None
    if z is not None:
        z, filtered = clean_reference_front(z)
    settings: dict[str, Any] = {
        "orientation": "minimize",
        "normalization": "none",
        "reference_point": None if r is None else r.tolist(),
        "p": float(p),
        "n_points": f.shape[0],
        "n_objectives": f.shape[1],
        "n_reference": None if z is None else z.shape[0],
        "larger_is_better": ["hv"],
    }
    compute: dict[str, Callable[[], float]] = {"spacing": lambda: _spacing(f)}
    if z is not None:
        compute.update(_distance_indicators(f, z, float(p)))
    if r is not None:
        # points not strictly dominating the reference point add no volume
        settings["hv_points_counted"] = int((f < r).all(axis=1).sum())
        compute["hv"] = lambda: hypervolume(f, r)
    values = {n: compute[n]() for n in names}
    log10_hv = underflow = None
    if "hv" in values and r is not None:
        log10_hv = log10_hypervolume(f, r, hypervolume)
        counted = settings["hv_points_counted"]
        if counted > 0 and values["hv"] < _TINY:
            shown = "not computable" if log10_hv is None else f"{log10_hv:.6g}"
            underflow = HvUnderflow(
                hv=values["hv"],
                log10_hv=log10_hv,
                points_counted=counted,
                message=f"the hypervolume is positive ({counted} point(s) strictly dominate the "
                f"reference point) but below the float range: hv = {values['hv']:g}; "
                f"log10_hv = {shown} (computed after exact power-of-two scaling)",
            )
    return IndicatorResult(
        values=values,
        settings=settings,
        reference_front_filter=filtered,
        log10_hv=log10_hv,
        hv_underflow=underflow,
    )
