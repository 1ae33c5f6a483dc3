r"""``r``-fold convolution powers by FFT, with a rigorous bound on the FFT's rounding error.

An FFT convolution's rounding error is absolute, relative to the norms of its inputs, not to
each entry: a tiny entry next to large ones is lost. Two devices keep the reads of
:mod:`._mean` accurate and their error bounded:

* **Exponential tilting.** ``(a e^{θj}) * (b e^{θj}) = (a * b) e^{θk}``, so the chain is run on
  ``x_j e^{θj}`` and the reads untilt it. ``θ <= 0`` is chosen so that one tilted run has mean
  ``(n − r/2)/r`` cells (the saddle point of the midpoint read): the tilted ``r``-fold sum is
  centred on the reads, where its entries are near its maximum and the absolute error is
  small relative to them (Keich 2005, sFFT; Wilson & Keich 2016).
* **A running error bound.** Every vector ``â`` of the chain carries ``δ`` with
  ``|â_k − a_k| <= δ`` for every ``k`` (``a`` the exact tilted, scaled vector). A product
  ``ĉ = clip(fl(â ⊛ b̂), 0)[:m]`` then satisfies

  .. math:: |ĉ_k − (a * b)_k| <= ε_{FFT}(â, b̂) + δ_a \|b̂\|_1 + δ_b (\|â\|_1 + m δ_a)

  (the clip only moves an entry towards the non-negative true value), with the FFT bound from
  Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., Thm. 24.2 (computed FFT:
  ``‖ŷ − y‖_2 <= ρ‖y‖_2``, ``ρ = log2(N) η/(1 − log2(N) η)``, ``η = μ + γ_4(√2 + μ)``) and
  Lemma 3.5 (complex products, ``√2 γ_2``), for zero-padded length ``N`` (a 5-smooth size; the
  inverse's scaling by ``1/N`` adds one rounding per entry, ``u‖â‖_2‖b̂‖_2``): with
  ``S = ‖â‖_2‖b̂‖_1 + ‖â‖_1‖b̂‖_2`` and ``Q = √N ‖â‖_2‖b̂‖_2``
  (``‖F b‖_∞ <= ‖b‖_1``, ``‖F b‖_2 = √N ‖b‖_2``),

  .. math:: ε_{FFT} <= [ρ(2 + ρ) + √2 γ_2 (1 + ρ)^2] S + ρ(1 + ρ)(ρ + √2 γ_2 (1 + ρ)) Q.

  ``ρ`` is taken :data:`FFT_SAFETY` times larger than Higham's radix-2 value (pocketfft runs
  radix-4 and real-data passes; the twiddle error ``μ`` is taken as ``4u``); the tests check the
  bound against exact integer convolutions with a wide margin.

The reads ``Σ_k w_k ĉ_k e^{−θk}`` are then bracketed by ``± δ Σ_k w_k e^{−θk}`` plus the
summation's own rounding: :func:`read` returns the value and its absolute error bound.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import fft as sfft

U = 2.0**-53  # unit roundoff of float64
FFT_SAFETY = 4.0
"""Factor on Higham's ``ρ`` (radix-2) for pocketfft's radix-4 and real-data passes."""
_MU = 4.0 * U  # error of the computed twiddle factors
_TINY = 1e-300  # floor of every absolute bound: underflowed entries
NEG_INF = -math.inf


def _gamma(k: int) -> float:
    return k * U / (1.0 - k * U)


def fft_error(
    n_fft: int, a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray
) -> np.ndarray:
    """Bound on ``max_k |fl(a ⊛ b)_k − (a * b)_k|`` for ``a, b`` given by (upper bounds on) their
    1- and 2-norms (module docstring), zero-padded FFT of length ``n_fft``; row-wise."""
    lg = math.log2(n_fft)
    eta = _MU + _gamma(4) * (math.sqrt(2.0) + _MU)
    x = FFT_SAFETY * lg * eta
    rho = x / (1.0 - x)
    g2 = math.sqrt(2.0) * _gamma(2)
    s = a2 * b1 + a1 * b2
    q = math.sqrt(n_fft) * a2 * b2
    c_s = rho * (2.0 + rho) + g2 * (1.0 + rho) ** 2
    c_q = rho * (1.0 + rho) * (rho + g2 * (1.0 + rho))
    # + the inverse's scaling by 1/N (one rounding of each entry, |c_k| <= ‖a‖_2‖b‖_2)
    out: np.ndarray = (c_s * s + c_q * q + U * a2 * b2) * (1.0 + 4.0 * U) + _TINY
    return out


def _norms(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds on ``‖x‖_1`` and ``‖x‖_2`` of non-negative rows (summation rounding)."""
    grow = 1.0 + 2.0 * (x.shape[-1] + 2) * U
    return np.sum(x, axis=-1) * grow, np.sqrt(np.einsum("ij,ij->i", x, x) * grow) * grow


def _rescaled(vec: np.ndarray, delta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows divided by their maximum, ``ln`` of it, and the bound scaled with them (plus the
    division's rounding); a row that is all zero keeps its zeros and gets an infinite bound."""
    top = np.max(vec, axis=-1)
    dead = ~(top > 0)
    safe = np.where(dead, 1.0, top)
    with np.errstate(divide="ignore"):
        ln_top = np.where(dead, NEG_INF, np.log(safe))
    bound = np.where(dead | ~(delta / safe + U < 1.0), math.inf, delta / safe + U)
    return vec / safe[:, None], ln_top, bound


def tilted(ln_x: np.ndarray, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``x_j e^{θj}`` from ``ln x``, each scaled to a maximum of 1: the rows, ``ln`` of their
    scales (``x_j e^{θj} = vec_j e^{scale}``) and the bound ``δ`` on their entries' rounding."""
    m = ln_x.shape[-1]
    z = ln_x + theta[:, None] * np.arange(m)
    top = np.max(z, axis=-1)
    live = np.isfinite(top)
    safe = np.where(live, top, 0.0)
    with np.errstate(under="ignore"):
        vec = np.where(live[:, None], np.exp(z - safe[:, None]), 0.0)
    # exp of an argument with absolute error (|ln x| + |θ| m + |top|)·2u, plus exp's own ulp
    span = np.max(np.where(np.isfinite(ln_x), np.abs(ln_x), 0.0), axis=-1)
    delta = (3.0 + 2.0 * (span + np.abs(theta) * m + np.abs(safe))) * U + _TINY
    return vec, np.where(live, top, NEG_INF), delta


def tilt(ln_x: np.ndarray, target: float, steps: int = 10) -> np.ndarray:
    """Per row, ``θ <= 0`` with mean ``target`` of the law ``∝ x_j e^{θj}`` (``0`` where the mean
    already is at most ``target``; at least ``-64``). Bisection on ``ln|θ|`` over
    ``[1e-9, 64]``: a few digits suffice, since any ``θ`` keeps the bounds rigorous."""
    j = np.arange(ln_x.shape[-1], dtype=np.float64)

    def mean(theta: np.ndarray) -> np.ndarray:
        z = ln_x + theta[:, None] * j
        top = np.max(z, axis=-1, keepdims=True)
        with np.errstate(under="ignore", invalid="ignore"):
            w = np.exp(z - np.where(np.isfinite(top), top, 0.0))
            out: np.ndarray = (w @ j) / np.sum(w, axis=-1)
        return out

    rows = ln_x.shape[0]
    need = mean(np.zeros(rows)) > target  # NaN (an empty row) is False: θ = 0
    lo, hi = np.full(rows, math.log(1e-9)), np.full(rows, math.log(64.0))
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        big = mean(-np.exp(mid)) <= target  # |θ| = e^mid tilts far enough
        hi, lo = np.where(big, mid, hi), np.where(big, lo, mid)
    return np.where(need, -np.exp(hi), 0.0)


def _fft_len(m: int) -> int:
    """Zero-padded length: no wrap-around of the first ``m`` entries of a product."""
    return int(sfft.next_fast_len(2 * m - 1, real=True))


def power(
    vec: np.ndarray, delta: np.ndarray, runs: int, size: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``runs``-fold convolution power of each row of ``vec`` (scaled to max 1, entries within
    ``delta`` of the exact rows), truncated to ``size``: the rows (max 1), ``ln`` of their scales
    and their bounds.

    Repeated squaring with FFT products; ``δ`` follows every product (module docstring). A row's
    bound is ``inf`` when nothing above it is left (the caller then convolves it directly).
    """
    m = size
    base = np.zeros((vec.shape[0], m))
    base[:, : min(m, vec.shape[1])] = vec[:, :m]
    n_fft = _fft_len(m)
    ln_base, d_base = np.zeros(vec.shape[0]), np.asarray(delta, dtype=np.float64)
    result: np.ndarray | None = None
    ln_result, d_result = np.zeros(vec.shape[0]), np.zeros(vec.shape[0])
    remaining = runs
    while True:
        f_base = sfft.rfft(base, n_fft, axis=-1)
        b1, b2 = _norms(base)
        if remaining & 1:
            if result is None:
                result, ln_result, d_result = base.copy(), ln_base.copy(), d_base.copy()
            else:
                r1, r2 = _norms(result)
                prod = sfft.irfft(sfft.rfft(result, n_fft, axis=-1) * f_base, n_fft, axis=-1)
                with np.errstate(invalid="ignore"):  # inf·0 of a dead row: NaN, an inf bound
                    err = (
                        fft_error(n_fft, r1, r2, b1, b2)
                        + d_result * b1
                        + d_base * (r1 + m * d_result)
                    )
                result, ln_top, d_result = _rescaled(np.maximum(prod[:, :m], 0.0), err)
                ln_result = ln_result + ln_base + ln_top
        remaining >>= 1
        if not remaining:
            break
        sq = sfft.irfft(f_base * f_base, n_fft, axis=-1)
        with np.errstate(invalid="ignore"):  # as above: _rescaled makes a NaN bound infinite
            err = fft_error(n_fft, b1, b2, b1, b2) + 2.0 * d_base * b1 + m * d_base * d_base
        base, ln_top, d_base = _rescaled(np.maximum(sq[:, :m], 0.0), err)
        ln_base = 2.0 * ln_base + ln_top
    assert result is not None
    return result, ln_result, d_result


def read(
    vec: np.ndarray, delta: np.ndarray, theta: np.ndarray, count: int, half: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ln`` of ``Σ_{k < count} c_k`` (plus ``c_count/2`` with ``half``) of the untilted rows
    ``c_k = vec_k e^{−θk}`` (relative to the chain's scale): rigorous lower end, estimate,
    rigorous upper end (from ``|vec_k − exact_k| <= δ`` and the summation's rounding)."""
    rows = vec.shape[0]
    last = count if half else count - 1
    if last < 0:
        neg = np.full(rows, NEG_INF)
        return neg, neg.copy(), neg.copy()
    k = np.arange(last + 1, dtype=np.float64)
    with np.errstate(under="ignore"):
        w = np.exp(theta[:, None] * (last - k))  # <= 1 for θ <= 0, largest at the last index
    if half:
        w[:, -1] *= 0.5
    s = np.einsum("ij,ij->i", vec[:, : last + 1], w)
    wsum = np.sum(w, axis=-1)
    rounding = (last + 4 + 2.0 * np.abs(theta) * (last + 1)) * U * s * 1.01
    err = delta * wsum * (1.0 + 2.0 * (last + 2) * U) + rounding
    shift = -theta * last
    with np.errstate(divide="ignore", invalid="ignore"):
        lo = np.where(s > err, np.log(np.maximum(s - err, 0.0)) + shift, NEG_INF)
        mid = np.where(s > 0, np.log(s) + shift, NEG_INF)
        hi = np.where(s + err > 0, np.log(s + err) + shift, NEG_INF)
    return lo, mid, hi
