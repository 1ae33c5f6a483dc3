"""Numerical primitives of the CEC 2005-2022 translations: row sums, fixed-shape BLAS blocks,
blocked evaluation, and sine and cosine from numpy's vectorised tangent.

Every helper is row-wise and independent of the batch it is given (a point's value never
depends on the other rows, their number or its position), which the tests check through the
functions. Public face: :mod:`app.domain.functions.cec_common`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from app.domain.functions.registry import FloatArray, Kernel

INF = 1.0e99
"""Weight the code's ``cf_cal`` gives a component at its own optimum (``x == o_i``)."""
E = 2.7182818284590452353602874713526625
PI = 3.1415926535897932384626433832795029
SCHWEFEL_SHIFT = 4.209687462275036e002
"""The code's ``z += 4.209687462275036e+002`` in ``schwefel_func``."""
SCHWEFEL_PEAK = 4.189828872724338e002
"""The code's truncated ``4.189828872724338e+002``; the exact peak of ``u sin(sqrt u)`` is
418.98288727243370627, so ``f(o) - f*`` is a few ulps of ``418.98 D`` instead of 0."""
BOUNDS = (-100.0, 100.0)
"""Search range ``[-100, 100]^D`` of every CEC 2017/2020/2022 function."""
CHUNK_ELEMENTS = 16_000
"""Coordinates per block of rows evaluated together (:func:`chunk_rows`). Temporaries of at most
125 kB stay in cache and below glibc's 128 KiB ``mmap`` threshold: larger ones are mapped and
unmapped at each allocation (or the heap trimmed and grown again), one page fault per 4 kB,
which costs more than the arithmetic (cec2017/f5/d30 with 1,024-row blocks: 1,400 faults and
340 ns per point against none and 200 ns with 256 rows)."""


def rowsum(a: FloatArray) -> FloatArray:
    """Sum of each row, (n, k) -> (n,), by one inner loop per row (``einsum("ij->i")``).

    About three times faster than ``np.sum(a, axis=1)`` on rows of 10-50 entries, and, like
    it, every row is reduced by the same loop whatever the other rows.
    """
    result: FloatArray = np.einsum("ij->i", a)
    return result


def sumsq(a: FloatArray) -> FloatArray:
    """Sum of squares of each row, (n, k) -> (n,)."""
    result: FloatArray = np.einsum("ij,ij->i", a, a)
    return result


GEMM_MULTIPLY_ADDS = 2**18
"""Upper bound on ``rows k m`` of one block of :func:`matmul_rows`: OpenBLAS runs a product of
up to ``65536 * GEMM_MULTITHREAD_THRESHOLD`` (default 4) multiply-adds on one thread."""


@functools.cache
def block_rows(k: int, m: int) -> int:
    """Rows per block of :func:`matmul_rows` for a ``(k, m)`` matrix: a multiple of 16 in
    [16, 256], at most ``GEMM_MULTIPLY_ADDS / (k m)`` when that is at least 16."""
    return min(256, max(16, GEMM_MULTIPLY_ADDS // (k * m) // 16 * 16))


def matmul_rows(v: FloatArray, matrix: FloatArray) -> FloatArray:
    """``v @ matrix`` by BLAS in blocks of a fixed number of rows; (n, k) -> (n, m).

    Every row goes through a ``(B, k) @ (k, m)`` product of the same shape, ``B =
    block_rows(k, m)``: whole blocks of ``v`` as they are, the last rows copied into a
    zero-padded block. BLAS picks its kernels and its summation order by the shape of a product
    (a single ``(n, k) @ (k, m)`` product gives different last bits for different ``n``); with
    one shape per matrix, a row's result does not depend on ``n``, on the other rows or on its
    position in the block, which the tests check for every function (values of a batch equal
    the one-by-one values bit for bit). The sums are BLAS's (fused multiply-adds), not the C
    code's loop order: they agree with it to a few ulps.

    Parameters
    ----------
    v : ndarray, shape (n, k)
        Rows.
    matrix : ndarray, shape (k, m)
        C-contiguous.

    Returns
    -------
    ndarray, shape (n, m)
    """
    v = np.ascontiguousarray(v)
    matrix = np.ascontiguousarray(matrix)
    n, k = v.shape
    m = matrix.shape[1]
    rows = block_rows(k, m)
    out = np.empty((n, m))
    full = n - n % rows
    for start in range(0, full, rows):
        np.matmul(v[start : start + rows], matrix, out=out[start : start + rows])
    if full < n:
        padded = np.zeros((rows, k))
        padded[: n - full] = v[full:]
        out[full:] = np.matmul(padded, matrix)[: n - full]
    return out


def rotate(v: FloatArray, transposed: FloatArray) -> FloatArray:
    """``z = M v`` for every row of ``v``, as the code's ``rotatefunc``; (n, D) -> (n, D).

    ``v @ M.T`` by :func:`matmul_rows` (fixed-shape blocks: a point's value never depends on
    its batch).

    Parameters
    ----------
    v : ndarray, shape (n, D)
        Rows to rotate.
    transposed : ndarray, shape (D, D)
        ``M.T``, C-contiguous.

    Returns
    -------
    ndarray, shape (n, D)
    """
    return matmul_rows(v, transposed)


@functools.cache
def chunk_rows(dim: int) -> int:
    """Rows per block of :func:`in_chunks` in dimension ``dim``: about ``CHUNK_ELEMENTS / dim``,
    rounded down to a multiple of ``block_rows(dim, dim)`` (whole blocks of the rotations)."""
    rows = max(16, CHUNK_ELEMENTS // dim)
    block = block_rows(dim, dim)
    return rows // block * block if rows >= block else rows


def in_chunks(inner: Kernel, dim: int) -> Kernel:
    """``inner`` applied to blocks of :func:`chunk_rows` rows, results concatenated.

    Every operation of the kernels is row-wise, so the values do not depend on the blocking (nor
    on the other rows); the blocks keep the temporaries in cache.
    """
    rows = chunk_rows(dim)

    def kernel(x: FloatArray) -> FloatArray:
        n = x.shape[0]
        if n <= rows:
            return inner(x)
        out = np.empty(n)
        for start in range(0, n, rows):
            out[start : start + rows] = inner(x[start : start + rows])
        return out

    return kernel


# --------------------------------------------------------------------------------------------
# Sine and cosine from the tangent. numpy's float64 sin and cos call libm one element at a time
# (4-15 ns, 20-80 ns for arguments beyond 1e8); on x86-64 machines with AVX-512 its float64 tan
# is vectorised (Intel's SVML: 1.2 ns up to |x| ~ 6.5e4, 4.6 ns beyond, within 0.56 ulp
# everywhere, and an element's value does not depend on its neighbours, its position or the
# array's length, which the tests check through the functions). The half-angle formulas then give
# sin and cos within about 2e-16 (absolute) of libm, 3-4 times faster. Elsewhere numpy's tan is
# libm's (12-50 ns here with numpy's AVX-512 dispatch switched off by NPY_DISABLE_CPU_FEATURES),
# slower than sin and cos, so the helpers call libm's sin and cos instead (FAST_TAN).
# --------------------------------------------------------------------------------------------


def _numpy_tan_is_vectorised() -> bool:
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # pragma: no cover - numpy moved it
        return False
    return bool(__cpu_features__.get("AVX512_SKX", False))


FAST_TAN = _numpy_tan_is_vectorised()
"""Whether numpy dispatches its float64 tan to SVML (AVX-512 on x86-64): then sin and cos are
taken from tan; otherwise from libm. Fixed per process (and machine), so a point's value never
depends on the batch."""


def cos_of(a: FloatArray) -> FloatArray:
    """``cos(a)`` elementwise, new array: ``(1 - t^2) / (1 + t^2)``, ``t = tan(a / 2)`` with
    :data:`FAST_TAN`, else libm's cosine.

    Near ``a = pi`` (mod ``2 pi``) ``t`` is large but finite (at most about 1e19 for a double
    argument), and the quotient tends to -1 as it should.
    """
    if not FAST_TAN:
        return np.cos(a)
    t = np.multiply(a, 0.5)
    np.tan(t, out=t)
    t *= t
    denominator = t + 1.0
    np.subtract(1.0, t, out=t)
    t /= denominator
    return t


def sin_of(a: FloatArray) -> FloatArray:
    """``sin(a)`` elementwise, new array: ``2 t / (1 + t^2)``, ``t = tan(a / 2)`` with
    :data:`FAST_TAN`, else libm's sine."""
    if not FAST_TAN:
        return np.sin(a)
    t = np.multiply(a, 0.5)
    np.tan(t, out=t)
    denominator = t * t
    denominator += 1.0
    t += t
    t /= denominator
    return t


def sin2_pi(z: FloatArray) -> FloatArray:
    """``sin^2(pi z) = (1 - cos(2 pi z)) / 2`` elementwise, new array.

    With :data:`FAST_TAN`, ``t^2 / (1 + t^2)``, ``t = tan(pi z)``: like the code's
    ``cos(2.0*PI*z)`` it rounds the product ``pi z`` first (an absolute error of up to ``1e-16 pi
    |z|`` in the argument). Otherwise ``sin(pi u)^2`` with ``u = z - rint(z)`` (exact, in [-1/2,
    1/2], where libm's sine is fastest). Either way the relative error is a few ulps, also near
    ``z = 0`` where ``1 - cos`` would cancel, and ``z = 0`` gives exactly 0.
    """
    if not FAST_TAN:
        t = np.rint(z)
        np.subtract(z, t, out=t)
        t *= PI
        np.sin(t, out=t)
        t *= t
        return t
    t = np.multiply(z, PI)
    np.tan(t, out=t)
    t *= t
    denominator = t + 1.0
    t /= denominator
    return t


WEIERSTRASS_K = 20
_WEIERSTRASS_HALF_C = tuple(2.0 * PI * 3.0**j / 2.0 for j in range(WEIERSTRASS_K + 1))
"""Half of ``(2.0*PI)*pow(3.0, j)`` (rounded as in the code's ``2.0*PI*pow(b,k)*(x+0.5)``):
``s * c / 2`` is exactly half of the code's rounded argument ``c s``."""
_WEIERSTRASS_TWO_A = tuple(2.0 * 0.5**j for j in range(WEIERSTRASS_K + 1))
_WEIERSTRASS_SUM_A = math.fsum(0.5**j for j in range(WEIERSTRASS_K + 1))  # 2 - 2^-20, exact


def weierstrass_terms(shifted: FloatArray) -> FloatArray:
    """``sum_{j=0}^{20} 0.5^j cos(2 pi 3^j s)`` elementwise, ``s = z + 0.5``; new array.

    Each cosine is taken of the code's rounded argument ``(2 pi 3^j) s``; with :data:`FAST_TAN`
    through ``t = tan(c s / 2)``: ``a cos = 2 a / (1 + t^2) - a``, the ``- a`` summed once (``2 -
    2^-20``), about 90 ns per coordinate instead of libm's 550 (its reduction of arguments up to
    ``2e11`` is slow).
    """
    total = np.zeros(shifted.shape)
    t = np.empty(shifted.shape)
    if not FAST_TAN:  # libm: total += a cos(c s), in the code's order
        for half_c, two_a in zip(_WEIERSTRASS_HALF_C, _WEIERSTRASS_TWO_A, strict=True):
            np.multiply(shifted, 2.0 * half_c, out=t)
            np.cos(t, out=t)
            t *= two_a / 2.0
            total += t
        return total
    for half_c, two_a in zip(_WEIERSTRASS_HALF_C, _WEIERSTRASS_TWO_A, strict=True):
        np.multiply(shifted, half_c, out=t)
        np.tan(t, out=t)
        t *= t
        t += 1.0
        np.divide(two_a, t, out=t)
        total += t
    total -= _WEIERSTRASS_SUM_A
    return total
