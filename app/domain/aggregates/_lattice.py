r"""The mean of ``r > 4`` runs on lattices shared by the values of a request.

A value's lattice depends on the value only through the octave of ``L = r (t − f*)`` and a tilt
bin, so one chain of convolutions serves every value of the octave and bin (and a value's answer
is the same alone or in any request: bit for bit).

* **Lattice.** ``L = m 2^e`` with ``m ∈ [1/2, 1)`` (``math.frexp``, exact). On grid level ``n``
  (a power of two) the cells have width ``h = 2^{e−1}/n``, so ``K = L/h = 2nm ∈ [n, 2n)``
  (exact: a power-of-two scaling) and every node ``f* + jh`` is the same float for every value of
  the octave (and ``jh = 2j (h/2)`` on the next level: nodes are shared between levels too).
* **Tilt bins.** ``b = ⌊(2m − 1) B⌋`` (:data:`TILT_BINS` = ``B``), ``K ∈ [n(1 + b/B),
  n(1 + (b + 1)/B))``: the chain of bin ``b`` keeps ``n(1 + (b + 1)/B)`` cells and is tilted
  (:func:`._fft.tilt`) for the bin's centre ``K_c = n(1 + (b + 1/2)/B)``, one run's tilted mean at
  ``(K_c − r/2)/r`` cells, computed once on the first grid from the point curve and halved per
  refinement (per cell), as on the per-value lattices.
* **Reads.** With cell ``j``'s mass at ``jh`` (``W`` rounded down) the chain gives the lattice
  CDF ``C(k) = P(Σ j_i <= k)``; then ``C(⌊K⌋ − r) <= P(ΣW <= L) <= C(⌊K⌋)`` rigorously (``W``
  rounded up, down). The midpoint placement is the same chain shifted by ``r/2`` cells: its CDF
  with a continuity correction is ``C`` at half-integer nodes ``y = k + 1/2`` interpolated at
  ``x = K − r/2``; ``K`` is no integer here, so ``ln C`` is interpolated by the cubic through the
  four nodes around ``x`` (its error ``O(h^4)``, below the midpoint rule's own ``O(h^2)``, which
  Richardson extrapolation over the levels ``n``, ``n/2``, ``n/4`` cancels as on the per-value
  lattices; linear interpolation would leave a phase-dependent ``h^2`` term). Where ``K`` is a
  node (``x`` at a node or halfway) this is the per-value lattices' read up to the cubic.
* **Rounding.** The chain is :func:`._fft.power` (tilted, with its bound ``δ`` per entry); the
  tilted cumulative sums ``T_k = Σ_{j<=k} â_j e^{θ(k−j)}`` (``C(k) ∝ T_k e^{−θk}``) come from one
  recursion ``T_k = e^θ T_{k−1} + â_k`` (``scipy.signal.lfilter``) with the bound
  ``δ Σ_{m<=k} e^{θm} + γ_{4(k+2)} T_k`` (non-negative terms: each ``T_k`` carries at most
  ``2(k + 1)`` roundings and ``k`` factors of the rounded ``e^θ``). A value whose reads on a chain
  have a bracket wider than :data:`._mean.FFT_MAX_REL` (``ln``) reads that chain's direct
  convolution instead (computed once per chain, only when needed).

Atoms (``v_c(f*) > 0`` on any curve) keep the per-value lattices (:mod:`._mean`): the atom is not
shifted with the cells, so the three placements need three chains and the midpoint lattice has
half cells whose parity structure the interpolation would not follow.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import signal

from app.domain.aggregates import _fft
from app.domain.aggregates._common import NEG_INF, Inputs, evaluate

TILT_BINS = 4
"""Tilt bins per octave of ``L`` (each its own chain): a power of two."""
U = _fft.U


@dataclass(frozen=True)
class Place:
    """Where a value lies on its shared lattices: octave ``e`` (``L ∈ [2^{e−1}, 2^e)``), tilt
    bin and ``K = L/h`` on the grid level ``n`` it was placed for."""

    octave: int
    bin: int
    cells: float

    @classmethod
    def of(cls, span: float, n: int) -> Place:
        m, e = math.frexp(span)
        b = min(int((2.0 * m - 1.0) * TILT_BINS), TILT_BINS - 1)
        return cls(e, b, math.ldexp(m, n.bit_length()))  # 2nm, exact


def applies(inp: Inputs, spans: np.ndarray, n_max: int) -> bool:
    """Whether the shared lattices apply: no atom at ``f*`` on any curve, every ``L`` positive,
    finite and far from underflow (``h`` stays a normal float)."""
    if not (np.all(np.isfinite(spans)) and np.all(spans > 0)):
        return False
    if np.min(spans) < math.ldexp(1.0, -900 + n_max.bit_length()):
        return False
    at_origin = evaluate(inp, np.array([inp.origin]))[:, 0]
    return bool(np.all(np.isneginf(at_origin)))


def size(n: int, b: int) -> int:
    """Cells (and chain entries) of bin ``b`` on level ``n``."""
    return n + (b + 1) * (n // TILT_BINS)


@dataclass(frozen=True)
class Reads:
    """The per-value reads of one chain (arrays over the values): rigorous lower end, midpoint
    estimate, its rounding bound, rigorous upper end (``ln``, relative to the untilted scale) and
    whether every read's bracket is within ``max_rel``."""

    lower: np.ndarray
    mid: np.ndarray
    mid_error: np.ndarray
    upper: np.ndarray
    good: np.ndarray


def _cubic_weights(u: np.ndarray) -> np.ndarray:
    """Lagrange weights of the nodes ``-1, 0, 1, 2`` at ``u ∈ [0, 1)``: shape ``(m, 4)``."""
    return np.stack(
        [
            -u * (u - 1.0) * (u - 2.0) / 6.0,
            (u + 1.0) * (u - 1.0) * (u - 2.0) / 2.0,
            -(u + 1.0) * u * (u - 2.0) / 2.0,
            (u + 1.0) * u * (u - 1.0) / 6.0,
        ],
        axis=-1,
    )


def read(
    ln_cdf: tuple[np.ndarray, np.ndarray, np.ndarray], k: np.ndarray, runs: int, max_rel: float
) -> Reads:
    """The reads at ``K = k`` (one per value) from ``ln C`` of one chain: ``(lower end, point,
    upper end)`` per entry (module docstring)."""
    lo_c, mid_c, hi_c = ln_cdf
    top = np.floor(k).astype(np.int64)
    low = top - runs
    x = k - 0.5 * runs
    k0 = np.floor(x - 0.5).astype(np.int64)
    u = x - 0.5 - k0
    nodes = k0[:, None] + np.arange(-1, 3)  # C(k) is the node y = k + 1/2
    lv, mv, hv = lo_c[nodes], mid_c[nodes], hi_c[nodes]
    weights = _cubic_weights(u)
    finite = np.all(np.isfinite(mv), axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        cubic = np.sum(weights * np.where(np.isfinite(mv), mv, 0.0), axis=-1)
        # a zero among the nodes (the lattice's lowest sums): linear in C, which handles it
        linear = np.logaddexp(np.log1p(-u) + mv[:, 1], np.log(u) + mv[:, 2])
        mid = np.where(finite, cubic, linear)
        half = np.max(np.maximum(mv - lv, hv - mv), axis=-1)
        lebesgue = np.where(finite, np.sum(np.abs(weights), axis=-1), 1.0)
        mid_error = np.where(np.isfinite(mid), lebesgue * half, 0.0)
        low_at = np.maximum(low, 0)
        width = np.maximum(hi_c[top] - lo_c[top], hi_c[low_at] - lo_c[low_at])
        good = (width <= max_rel) & (np.max(hv - lv, axis=-1) <= max_rel)
    lower = np.where(low >= 0, lo_c[np.maximum(low, 0)], NEG_INF)
    return Reads(lower, mid, np.nan_to_num(mid_error, nan=math.inf), hi_c[top], good)


def fft_cdf(
    vec: np.ndarray, delta: float, theta: float, base: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ln C(k)`` (lower end, point, upper end) of one tilted chain ``vec`` (max 1, entries within
    ``delta``), ``C(k) = Σ_{j<=k} vec_j e^{−θj} e^{base}``."""
    if not math.isfinite(delta) or not math.isfinite(base):
        nan = np.full(vec.size, math.nan)
        return nan, nan, nan
    rho = math.exp(theta)
    cum = signal.lfilter([1.0], [1.0, -rho], vec)
    k = np.arange(vec.size, dtype=np.float64)
    # Σ_{m<=k} e^{θm} <= min(k + 1, 1/(1 − e^θ))
    geo = np.minimum(k + 1.0, 1.0 / -math.expm1(theta)) if theta < 0 else k + 1.0
    err = delta * geo * 1.01 + (4.0 * (k + 2.0)) * U * 1.01 * cum
    shift = base - theta * k
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(cum > err, np.log(np.maximum(cum - err, 0.0)) + shift, NEG_INF)
        mid = np.where(cum > 0, np.log(cum) + shift, NEG_INF)
        hi = np.where(cum + err > 0, np.log(cum + err) + shift, NEG_INF)
    return lo, mid, hi


def direct_cdf(vec: np.ndarray, base: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ln C(k)`` of a directly convolved chain (relative accuracy: no bracket of its own)."""
    with np.errstate(divide="ignore"):
        ln = np.log(np.cumsum(vec)) + base
    return ln, ln, ln
