"""Basic functions of CEC 2005, vectorised translations of the organisers' C code [1]_.

Each function takes the transformed points ``z`` (shift, scale and rotation already applied) as an
array of shape ``(n, d)`` and returns shape ``(n,)``, with no loop over points. Expressions follow
the C code (``def1.c``, ``def4.c``), so that float64 results agree with it to a few ulps; the code's
``pow(u, 2.0)`` is written ``u * u`` (what GCC compiles it to). For speed, row sums are
``einsum`` loops (:func:`~app.domain.functions.cec_common.rowsum`), and sines and cosines come
from :func:`~app.domain.functions.cec_common.cos_of`,
:func:`~app.domain.functions.cec_common.sin_of` and
:func:`~app.domain.functions.cec_common.sin2_pi` (numpy's vectorised tangent where it has one,
instead of libm's one-at-a-time sin and cos): the same values to a few 1e-16, and each row's
value still depends on that row only.

References
----------
.. [1] S. Tiwari (2005), C code of the CEC 2005 benchmark functions (``def1.c`` basic functions,
   ``def4.c`` expanded and composed ones), as packaged in the R package ``cec2005benchmark``
   (yasserglez/cec2005benchmark, ``src/``).
"""

from __future__ import annotations

import functools

import numpy as np

from app.domain.functions.cec_common import (
    cos_of,
    rowsum,
    sin2_pi,
    sin_of,
    sumsq,
    weierstrass_terms,
)
from app.domain.functions.registry import FloatArray

__all__ = [
    "ackley",
    "elliptic",
    "expanded_f8f2",
    "expanded_schaffer_f6",
    "griewank",
    "nc_rastrigin",
    "nc_round",
    "nc_schaffer_f6",
    "rastrigin",
    "rosenbrock",
    "round_to_half",
    "schwefel_12",
    "sphere",
    "weierstrass",
]


@functools.cache
def _elliptic_weights(dim: int) -> FloatArray:
    return np.power(1.0e6, np.arange(dim) / (dim - 1.0))


@functools.cache
def _griewank_divisors(dim: int) -> FloatArray:
    result: FloatArray = np.sqrt(1.0 + np.arange(dim))
    return result


def sphere(z: FloatArray) -> FloatArray:
    """Sphere ``sum_i z_i^2`` (``calc_sphere``); z : (n, d) -> (n,)."""
    return sumsq(z)


def schwefel_12(z: FloatArray) -> FloatArray:
    """Schwefel's problem 1.2 ``sum_i (sum_{j<=i} z_j)^2`` (``calc_schwefel``); (n, d) -> (n,)."""
    partial = np.cumsum(z, axis=1)
    return sumsq(partial)


def elliptic(z: FloatArray) -> FloatArray:
    """High-conditioned elliptic ``sum_i z_i^2 (10^6)^((i-1)/(d-1))`` (F3); (n, d) -> (n,)."""
    terms = z * z
    terms *= _elliptic_weights(z.shape[1])
    return rowsum(terms)


def rosenbrock(z: FloatArray) -> FloatArray:
    """Rosenbrock ``sum_{i<d} 100 (z_i^2 - z_{i+1})^2 + (z_i - 1)^2``; (n, d) -> (n,).

    ``calc_rosenbrock``; minimum 0 at ``z = 1``.
    """
    head, tail = z[:, :-1], z[:, 1:]
    valley = head * head
    valley -= tail
    valley *= valley
    valley *= 100.0
    step = head - 1.0
    step *= step  # the code's 1.0 * (step * step): multiplying by 1.0 is exact
    valley += step
    return rowsum(valley)


def griewank(z: FloatArray) -> FloatArray:
    """Griewank ``1 + sum_i z_i^2 / 4000 - prod_i cos(z_i / sqrt(i))``; (n, d) -> (n,).

    ``calc_griewank``, ``i`` 1-based.
    """
    s = sumsq(z)
    p = np.prod(cos_of(z / _griewank_divisors(z.shape[1])), axis=1)
    result: FloatArray = 1.0 + s / 4000.0 - p
    return result


def ackley(z: FloatArray) -> FloatArray:
    """Ackley ``20 + e - 20 exp(-0.2 sqrt(mean z^2)) - exp(mean cos(2 pi z))``; (n, d) -> (n,).

    ``calc_ackley``, written in the code's order, which leaves a rounding residue of about
    ``-4.4e-16`` at ``z = 0`` instead of 0 (kept on purpose: it is the code's value). The sum of
    ``cos(2 pi z_i)`` is taken as ``d - 2 sum sin^2(pi z_i)`` (exactly ``d`` at ``z = 0``).
    """
    dim = z.shape[1]
    sum1 = -0.2 * np.sqrt(sumsq(z) / dim)
    sum2 = (dim - 2.0 * rowsum(sin2_pi(z))) / dim
    result: FloatArray = 20.0 + np.e - 20.0 * np.exp(sum1) - np.exp(sum2)
    return result


def rastrigin(z: FloatArray) -> FloatArray:
    """Rastrigin ``sum_i z_i^2 - 10 cos(2 pi z_i) + 10`` (``calc_rastrigin``); (n, d) -> (n,).

    Summed as ``sum z_i^2 + 20 sum sin^2(pi z_i)``: the same to a few ulps of 10 per coordinate.
    """
    return sumsq(z) + 20.0 * rowsum(sin2_pi(z))


def weierstrass(z: FloatArray) -> FloatArray:
    """Raw Weierstrass sum ``sum_i sum_{k=0}^{20} 0.5^k cos(2 pi 3^k (z_i + 0.5))``; (n, d) -> (n,).

    ``calc_weierstrass``; the benchmark functions use ``weierstrass(z) - weierstrass(0)``. The
    loop runs over the 21 terms ``k`` (not over points), so memory stays ``O(n d)``; each cosine
    is taken of the code's rounded argument ``(2 pi 3^k) (z + 0.5)``
    (:func:`~app.domain.functions.cec_common.weierstrass_terms`).
    """
    return rowsum(weierstrass_terms(z + 0.5))


def _schaffer_f6(x: FloatArray, y: FloatArray) -> FloatArray:
    r2 = x * x + y * y
    s = sin_of(np.sqrt(r2))
    temp1 = s * s
    temp2 = 1.0 + 0.001 * r2
    return 0.5 + (temp1 - 0.5) / (temp2 * temp2)


def expanded_schaffer_f6(z: FloatArray) -> FloatArray:
    """Expanded Schaffer F6 ``sum_i F6(z_i, z_{i+1})``, wrap pair ``(z_d, z_1)``; (n, d) -> (n,).

    ``F6(u, v) = 0.5 + (sin^2 sqrt(u^2 + v^2) - 0.5) / (1 + 0.001 (u^2 + v^2))^2`` (F14).
    """
    return rowsum(_schaffer_f6(z, np.roll(z, -1, axis=1)))


def expanded_f8f2(z: FloatArray) -> FloatArray:
    """Expanded Griewank of Rosenbrock ``sum_i F8(F2(z_i, z_{i+1}))``, wrap pair; (n, d) -> (n,).

    ``F2(u, v) = 100 (u^2 - v)^2 + (u - 1)^2`` and ``F8(t) = t^2 / 4000 - cos(t) + 1``.
    """
    nxt = np.roll(z, -1, axis=1)
    valley = z * z - nxt
    step = z - 1.0
    temp = 100.0 * (valley * valley) + 1.0 * (step * step)
    return rowsum((temp * temp) / 4000.0 - cos_of(temp) + 1.0)


def round_to_half(z: FloatArray) -> FloatArray:
    """The code's rounding to the nearest multiple of 1/2, halves away from zero (elementwise).

    ``a = (int)(2 z)``; ``a / 2`` if ``|2 z - a| < 0.5``, else ``(a -+ 1) / 2``. The C cast
    overflows for ``|2 z| >= 2^31``; here the truncation is exact for every float.
    """
    twice = 2.0 * z
    a = np.trunc(twice)
    away = np.where(twice <= 0.0, (a - 1.0) / 2.0, (a + 1.0) / 2.0)
    return np.where(np.abs(twice - a) < 0.5, a / 2.0, away)


def nc_round(z: FloatArray) -> FloatArray:
    """The code's "non-continuous" coordinates: ``z`` if ``|z| < 0.5``, else rounded to halves.

    Elementwise, any shape; used on the transformed coordinates (``nc_schaffer``,
    ``nc_rastrigin``).
    """
    return np.where(np.abs(z) >= 0.5, round_to_half(z), z)


def nc_schaffer_f6(z: FloatArray) -> FloatArray:
    """Expanded Schaffer F6 of the rounded coordinates (``nc_schaffer``, F24's 7th piece)."""
    return expanded_schaffer_f6(nc_round(z))


def nc_rastrigin(z: FloatArray) -> FloatArray:
    """Rastrigin of the rounded coordinates (``nc_rastrigin``, F24's 8th piece)."""
    return rastrigin(nc_round(z))
