"""Shared building blocks of the CEC 2017, 2020 and 2022 organisers' C code.

The three files ``cec17_test_func.cpp``, ``cec20_test_func.cpp`` and ``cec22_test_func.cpp``
are one code family: the same ``sr_func`` (shift, scale, rotate), the same basic functions,
hybrids that rotate once and then shuffle and split the rotated vector, and compositions
weighted by ``cf_cal``. This module translates those pieces into vectorised numpy, one whole
batch ``X`` of shape ``(n, D)`` at a time (no loop over points), and describes each suite
function by a small spec (:class:`Rotated`, :class:`Hybrid`, :class:`Composition`) from which
:func:`build_kernel` makes the kernel.

Where the C code reads a scratch vector it should not, the translation reads the same values
(the code is the definition, see ``shared/data/cec_vectors/README.md``):

- ``schaffer_F7_func`` reads the global ``y`` (the shifted, unrotated vector of a direct call;
  the shuffled vector from index 0 inside a hybrid), not its own ``z``;
- ``step_rastrigin_func`` rounds ``y`` before ``sr_func`` overwrites it, so it is a plain
  Rastrigin;
- ``bi_rastrigin_func`` flips signs by the signs of the first entries of the shift vector it is
  given (the top-level one inside a hybrid).

References
----------
.. [1] N. H. Awad, M. Z. Ali, J. J. Liang, B. Y. Qu, P. N. Suganthan (2016). Problem definitions
   and evaluation criteria for the CEC 2017 special session and competition on single objective
   real-parameter numerical optimization. Technical report, NTU Singapore; organisers' code
   ``cec17_test_func.cpp``.
.. [2] C. T. Yue, K. V. Price, P. N. Suganthan, J. J. Liang, M. Z. Ali, B. Y. Qu, N. H. Awad,
   P. P. Biswas (2019). Problem definitions and evaluation criteria for the CEC 2020 special
   session and competition on single objective bound constrained numerical optimization;
   organisers' code ``cec20_test_func.cpp``.
.. [3] A. Kumar, K. V. Price, A. W. Mohamed, A. A. Hadi, P. N. Suganthan (2021). Problem
   definitions and evaluation criteria for the 2022 special session and competition on single
   objective bound constrained numerical optimization; organisers' code ``cec22_test_func.cpp``.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from app.domain.functions import cec_data
from app.domain.functions.registry import (
    BenchmarkFunction,
    Kernel,
    LocalStructure,
    Suite,
    format_id,
    power_law,
)

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


def rowsum(a: np.ndarray) -> np.ndarray:
    """Sum of each row, (n, k) -> (n,), by one inner loop per row (``einsum("ij->i")``).

    About three times faster than ``np.sum(a, axis=1)`` on rows of 10-50 entries, and, like
    it, every row is reduced by the same loop whatever the other rows.
    """
    return np.einsum("ij->i", a)


def sumsq(a: np.ndarray) -> np.ndarray:
    """Sum of squares of each row, (n, k) -> (n,)."""
    return np.einsum("ij,ij->i", a, a)


GEMM_MULTIPLY_ADDS = 2**18
"""Upper bound on ``rows k m`` of one block of :func:`matmul_rows`: OpenBLAS runs a product of
up to ``65536 * GEMM_MULTITHREAD_THRESHOLD`` (default 4) multiply-adds on one thread."""


@functools.cache
def block_rows(k: int, m: int) -> int:
    """Rows per block of :func:`matmul_rows` for a ``(k, m)`` matrix: a multiple of 16 in
    [16, 256], at most ``GEMM_MULTIPLY_ADDS / (k m)`` when that is at least 16."""
    return min(256, max(16, GEMM_MULTIPLY_ADDS // (k * m) // 16 * 16))


def matmul_rows(v: np.ndarray, matrix: np.ndarray) -> np.ndarray:
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


def rotate(v: np.ndarray, transposed: np.ndarray) -> np.ndarray:
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

    def kernel(x: np.ndarray) -> np.ndarray:
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


def cos_of(a: np.ndarray) -> np.ndarray:
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


def sin_of(a: np.ndarray) -> np.ndarray:
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


def sin2_pi(z: np.ndarray) -> np.ndarray:
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


_WEIERSTRASS_K = 20
_WEIERSTRASS_HALF_C = tuple(2.0 * PI * 3.0**j / 2.0 for j in range(_WEIERSTRASS_K + 1))
"""Half of ``(2.0*PI)*pow(3.0, j)`` (rounded as in the code's ``2.0*PI*pow(b,k)*(x+0.5)``):
``s * c / 2`` is exactly half of the code's rounded argument ``c s``."""
_WEIERSTRASS_TWO_A = tuple(2.0 * 0.5**j for j in range(_WEIERSTRASS_K + 1))
_WEIERSTRASS_SUM_A = math.fsum(0.5**j for j in range(_WEIERSTRASS_K + 1))  # 2 - 2^-20, exact


def weierstrass_terms(shifted: np.ndarray) -> np.ndarray:
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


# --------------------------------------------------------------------------------------------
# Basic functions. Each takes the coordinates the C function computes with, shape (n, k):
# ``z`` after ``sr_func`` (shifted, scaled by the function's own rate, rotated), and returns
# shape (n,). Operation order follows the C code where it is cheap to do so.
# --------------------------------------------------------------------------------------------


def bent_cigar(z: np.ndarray) -> np.ndarray:
    """``bent_cigar_func``: ``z_1^2 + 10^6 sum_{i>1} z_i^2``; z : (n, k) -> (n,)."""
    return z[:, 0] * z[:, 0] + rowsum(1.0e6 * z[:, 1:] * z[:, 1:])


def sum_diff_pow(z: np.ndarray) -> np.ndarray:
    """``sum_diff_pow_func``: ``sum_i |z_i|^i`` (1-based ``i``); z : (n, k) -> (n,).

    The code calls ``abs`` on a double; compiled as C++ this is the double overload (``fabs``),
    which is what the reference vectors were made with.
    """
    return rowsum(np.abs(z) ** np.arange(1.0, z.shape[1] + 1.0))


def zakharov(z: np.ndarray) -> np.ndarray:
    """``zakharov_func``: ``sum z_i^2 + s^2 + s^4``, ``s = sum_i 0.5 i z_i``; z : (n, k) -> (n,)."""
    s = rowsum(0.5 * np.arange(1.0, z.shape[1] + 1.0) * z)
    return sumsq(z) + s * s + s**4


def rosenbrock(z: np.ndarray) -> np.ndarray:
    """``rosenbrock_func`` after its rate 2.048/100; z : (n, k) -> (n,)."""
    u = z + 1.0
    head, tail = u[:, :-1], u[:, 1:]
    t1 = head * head - tail
    t2 = head - 1.0
    return rowsum(100.0 * t1 * t1 + t2 * t2)


def rastrigin(z: np.ndarray) -> np.ndarray:
    """``rastrigin_func`` after its rate 5.12/100; z : (n, k) -> (n,).

    Summed as ``sum z^2 + 20 sum sin^2(pi z)`` (:func:`sin2_pi`), the code's ``sum (z^2 - 10
    cos(2 pi z) + 10)`` to a few ulps of 10 per coordinate.
    """
    return sumsq(z) + 20.0 * rowsum(sin2_pi(z))


def schaffer_f7(v: np.ndarray) -> np.ndarray:
    """``schaffer_F7_func`` on the vector it reads (the scratch ``y``); v : (n, k>=2) -> (n,).

    ``((1/(k-1)) sum_{i<k} (sqrt(s_i) + sqrt(s_i) sin^2(50 s_i^0.2)))^2`` with
    ``s_i = sqrt(v_i^2 + v_{i+1}^2)``.
    """
    k = v.shape[1]
    s = (v[:, :-1] * v[:, :-1] + v[:, 1:] * v[:, 1:]) ** 0.5
    t = np.sin(50.0 * s**0.2)
    root = s**0.5
    total = rowsum(root + root * t * t)
    return total * total / (k - 1) / (k - 1)


def levy(z: np.ndarray, *, centre: float) -> np.ndarray:
    """``levy_func``: Levy on ``w = 1 + (z - centre)/4``; z : (n, k) -> (n,).

    ``centre`` is 1.0 in the 2017 and 2020 code and 0.0 in the 2022 code.
    """
    w = 1.0 + (z - centre) / 4.0
    term1 = np.sin(PI * w[:, 0]) ** 2
    last = w[:, -1]
    term3 = (last - 1.0) ** 2 * (1.0 + np.sin(2.0 * PI * last) ** 2)
    head = w[:, :-1]
    middle = rowsum((head - 1.0) ** 2 * (1.0 + 10.0 * np.sin(PI * head + 1.0) ** 2))
    return term1 + middle + term3


def _fmod500(a: np.ndarray) -> np.ndarray:
    """``fmod(a, 500)`` for ``a >= 0``, exactly, without libm's slow ``fmod``.

    ``k = floor(a / 500)`` is the true quotient or, when ``a / 500`` rounds up onto an integer,
    one more; ``a - 500 k`` is then exact (Sterbenz, ``k >= 1``) and a negative remainder is
    moved up by 500, again exactly. Below 500 the result is ``a`` itself.
    """
    r = a / 500.0
    np.floor(r, out=r)
    r *= 500.0
    np.subtract(a, r, out=r)
    np.add(r, 500.0, out=r, where=r < 0.0)
    return r


def schwefel(z: np.ndarray) -> np.ndarray:
    """``schwefel_func`` (modified Schwefel with the code's fold beyond 500); z : (n, k) -> (n,).

    Per coordinate, with ``u = z + 420.9687462275036``: ``-u sin(sqrt|u|)`` for ``|u| <= 500``,
    else ``-v sin(sqrt|v|) + ((|u| - 500)/100)^2 / k`` with ``v = sign(u) (500 - fmod(|u|,
    500))``, the code's three branches written as one.
    """
    k = z.shape[1]
    u = z + SCHWEFEL_SHIFT
    a = np.abs(u)
    outside = a > 500.0
    folded = _fmod500(a)
    np.subtract(500.0, folded, out=folded)
    np.copysign(folded, u, out=folded)
    v = u  # u becomes v: the folded value where |u| > 500 (fewer live temporaries)
    np.copyto(v, folded, where=outside)
    np.abs(v, out=folded)
    np.sqrt(folded, out=folded)
    # libm's sine, not sin_of: at the optimum k * SCHWEFEL_PEAK - sum(u sin sqrt u) cancels to
    # the code's value (f* exactly, for most dimensions) only with its correctly rounded sine;
    # sin_of's error of about 2e-16 would leave f(x*) - f* near 1e-12
    terms = np.sin(folded, out=folded)
    terms *= v
    excess = a  # max(|u| - 500, 0) / 100, in place of |u|
    excess -= 500.0
    np.maximum(excess, 0.0, out=excess)
    excess /= 100.0
    excess *= excess
    excess /= k
    terms -= excess
    return SCHWEFEL_PEAK * k - rowsum(terms)


def ellips(z: np.ndarray) -> np.ndarray:
    """``ellips_func``: ``sum_i 10^(6 (i-1)/(k-1)) z_i^2``; z : (n, k>=2) -> (n,)."""
    k = z.shape[1]
    weights = 10.0 ** (6.0 * np.arange(k) / (k - 1))
    return rowsum(weights * z * z)


def discus(z: np.ndarray) -> np.ndarray:
    """``discus_func``: ``10^6 z_1^2 + sum_{i>1} z_i^2``; z : (n, k) -> (n,)."""
    return 1.0e6 * z[:, 0] * z[:, 0] + rowsum(z[:, 1:] * z[:, 1:])


def ackley(z: np.ndarray) -> np.ndarray:
    """``ackley_func``; z : (n, k) -> (n,)."""
    k = z.shape[1]
    sum1 = -0.2 * np.sqrt(sumsq(z) / k)
    sum2 = (k - 2.0 * rowsum(sin2_pi(z))) / k
    return E - 20.0 * np.exp(sum1) - np.exp(sum2) + 20.0


@functools.cache
def _weierstrass_offset() -> float:
    # the code's sum2 = sum_k a^k cos(2 pi b^k 0.5), summed in its order (not exactly -2)
    total = 0.0
    for j in range(_WEIERSTRASS_K + 1):
        total += 0.5**j * math.cos(2.0 * PI * 3.0**j * 0.5)
    return total


def weierstrass(z: np.ndarray) -> np.ndarray:
    """``weierstrass_func`` after its rate 0.5/100 (a = 0.5, b = 3, k_max = 20); -> (n,)."""
    return rowsum(weierstrass_terms(z + 0.5)) - z.shape[1] * _weierstrass_offset()


def griewank(z: np.ndarray) -> np.ndarray:
    """``griewank_func`` after its rate 600/100; z : (n, k) -> (n,)."""
    scale = np.sqrt(1.0 + np.arange(z.shape[1]))
    return 1.0 + sumsq(z) / 4000.0 - np.prod(cos_of(z / scale), axis=1)


def katsuura(z: np.ndarray) -> np.ndarray:
    """``katsuura_func`` after its rate 5/100; z : (n, k) -> (n,)."""
    k = z.shape[1]
    temp = np.zeros(z.shape)
    for j in range(1, 33):
        power = 2.0**j
        scaled = power * z
        temp += np.abs(scaled - np.floor(scaled + 0.5)) / power
    factors = (1.0 + np.arange(1.0, k + 1.0) * temp) ** (10.0 / (1.0 * k) ** 1.2)
    scale = 10.0 / k / k
    return np.prod(factors, axis=1) * scale - scale


def grie_rosen(z: np.ndarray) -> np.ndarray:
    """``grie_rosen_func`` (expanded Griewank plus Rosenbrock) after its rate 5/100; -> (n,)."""
    u = z + 1.0
    nxt = np.roll(u, -1, axis=1)  # pairs (i, i+1) and, last, the wrap-around (D, 1)
    t1 = u * u - nxt
    t2 = u - 1.0
    t = 100.0 * t1 * t1 + t2 * t2
    return rowsum(t * t / 4000.0 - np.cos(t) + 1.0)


def escaffer6(z: np.ndarray) -> np.ndarray:
    """``escaffer6_func`` (expanded Schaffer F6, pairs with wrap-around); -> (n,)."""
    nxt = np.roll(z, -1, axis=1)
    q = z * z + nxt * nxt
    s = np.sin(np.sqrt(q))
    denominator = 1.0 + 0.001 * q
    return rowsum(0.5 + (s * s - 0.5) / (denominator * denominator))


def happycat(z: np.ndarray) -> np.ndarray:
    """``happycat_func`` after its rate 5/100; z : (n, k) -> (n,)."""
    k = z.shape[1]
    u = z - 1.0
    r2 = sumsq(u)
    total = rowsum(u)
    return np.abs(r2 - k) ** 0.25 + (0.5 * r2 + total) / k + 0.5


def hgbat(z: np.ndarray) -> np.ndarray:
    """``hgbat_func`` after its rate 5/100; z : (n, k) -> (n,)."""
    k = z.shape[1]
    u = z - 1.0
    r2 = sumsq(u)
    total = rowsum(u)
    return np.abs(r2 * r2 - total * total) ** 0.5 + (0.5 * r2 + total) / k + 0.5


def lunacek(v: np.ndarray, signs: np.ndarray, transposed: np.ndarray | None = None) -> np.ndarray:
    """``bi_rastrigin_func`` (Lunacek bi-Rastrigin); v : (n, k) -> (n,).

    Parameters
    ----------
    v : ndarray, shape (n, k)
        ``x - o`` for a direct call, the group's shuffled coordinates inside a hybrid (before
        the code's own scaling by 10/100).
    signs : ndarray, shape (k,)
        -1.0 where the shift vector the code is given is negative (its first ``k`` entries),
        else 1.0.
    transposed : ndarray, shape (k, k), optional
        ``M.T`` for a direct call (``r_flag = 1``: the cosine term is taken on ``M u``); None
        inside a hybrid.
    """
    k = v.shape[1]
    mu0, d = 2.5, 1.0
    s = 1.0 - 1.0 / (2.0 * (k + 20.0) ** 0.5 - 8.2)
    mu1 = -(((mu0 * mu0 - d) / s) ** 0.5)
    u = 2.0 * (v * (10.0 / 100.0)) * signs
    shifted = u + mu0
    tmp1 = rowsum((shifted - mu0) ** 2)
    tmp2 = rowsum((shifted - mu1) ** 2) * s + d * k
    inner = u if transposed is None else rotate(u, transposed)
    return np.minimum(tmp1, tmp2) + 20.0 * rowsum(sin2_pi(inner))


# --------------------------------------------------------------------------------------------
# Catalogue of the basic functions: C name, rate of sr_func, formula, local degree at z = 0.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Basic:
    """One of the code's basic functions.

    Attributes
    ----------
    c_name : str
        The C function, e.g. ``"rastrigin_func"``.
    title : str
        Readable name.
    rate : float
        The ``sh_rate`` it passes to ``sr_func`` (``z = M (rate (x - o))``).
    formula : str
        Plain-text definition in terms of ``z``.
    kernel : callable
        ``z (n, k) -> (n,)``; None for the two that need more than ``z`` (Schaffer F7, Lunacek).
    degree : float or None
        Homogeneity degree ``p`` of ``g(z) - g(0)`` at ``z = 0`` when ``g - g(0) >= c |z|^p``
        and ``<= C |z|^p`` near 0 for every number of variables (so a group of ``k`` variables
        contributes ``k / p`` to beta); None when no single power law holds there.
    why : str
        Reason for ``degree``.
    """

    c_name: str
    title: str
    rate: float
    formula: str
    kernel: Kernel | None
    degree: float | None
    why: str


_QUADRATIC = "smooth with a positive-definite Hessian at z = 0"

BASICS: dict[str, Basic] = {
    "bent_cigar": Basic(
        "bent_cigar_func",
        "Bent Cigar",
        1.0,
        "z_1^2 + 10^6 sum_{i>1} z_i^2",
        bent_cigar,
        2.0,
        "positive-definite quadratic form",
    ),
    "sum_diff_pow": Basic(
        "sum_diff_pow_func",
        "Sum of Different Power",
        1.0,
        "sum_i |z_i|^i",
        sum_diff_pow,
        None,
        "anisotropic: |z_i|^i has degree i in z_i",
    ),
    "zakharov": Basic(
        "zakharov_func",
        "Zakharov",
        1.0,
        "sum_i z_i^2 + s^2 + s^4, s = sum_i 0.5 i z_i",
        zakharov,
        2.0,
        _QUADRATIC,
    ),
    "rosenbrock": Basic(
        "rosenbrock_func",
        "Rosenbrock",
        2.048 / 100.0,
        "sum_{i<k} (100 (u_i^2 - u_{i+1})^2 + (u_i - 1)^2), u = z + 1",
        rosenbrock,
        2.0,
        _QUADRATIC + " (Rosenbrock's Hessian at u = 1)",
    ),
    "rastrigin": Basic(
        "rastrigin_func",
        "Rastrigin",
        5.12 / 100.0,
        "sum_i (z_i^2 - 10 cos(2 pi z_i) + 10)",
        rastrigin,
        2.0,
        _QUADRATIC + " ((1 + 20 pi^2) z^2 + O(z^4))",
    ),
    "schaffer_f7": Basic(
        "schaffer_F7_func",
        "Schaffer's F7",
        1.0,
        "((1/(k-1)) sum_{i<k} (sqrt(s_i) + sqrt(s_i) sin^2(50 s_i^0.2)))^2, "
        "s_i = sqrt(v_i^2 + v_{i+1}^2), v = the scratch vector y the code reads",
        None,
        1.0,
        "(mean_i sqrt(s_i))^2 is positively homogeneous of degree 1 in v and the factor "
        "(1 + sin^2(50 s^0.2))^2 stays in [1, 4]: degree 1 up to a bounded, slowly oscillating "
        "factor (v1 may deviate from a pure power law by a factor up to 4^k)",
    ),
    "lunacek": Basic(
        "bi_rastrigin_func",
        "Lunacek bi-Rastrigin",
        10.0 / 100.0,
        "min(sum_i u_i^2, k + s sum_i (u_i + 2.5 - mu_1)^2) + 10 (k - sum_i cos(2 pi w_i)), "
        "u = 2 sign(o) (0.1 v), w = M u for a direct call (w = u in a hybrid), "
        "mu_1 = -sqrt((2.5^2 - 1)/s), s = 1 - 1/(2 sqrt(k + 20) - 8.2)",
        None,
        2.0,
        "the first branch of the min is active near u = 0 (the second is >= k): "
        "|u|^2 plus a Rastrigin term, " + _QUADRATIC,
    ),
    "levy": Basic(
        "levy_func",
        "Levy",
        1.0,
        "sin^2(pi w_1) + sum_{i<k} (w_i - 1)^2 (1 + 10 sin^2(pi w_i + 1)) "
        "+ (w_k - 1)^2 (1 + sin^2(2 pi w_k))",
        None,
        2.0,
        "every term is (w_i - 1)^2 times a positive factor, or sin^2(pi w_1): "
        + _QUADRATIC
        + " at w = 1",
    ),
    "schwefel": Basic(
        "schwefel_func",
        "Modified Schwefel",
        1000.0 / 100.0,
        "418.9828872724338 k - sum_i g(u_i), u = z + 420.9687462275036, "
        "g(u) = u sin(sqrt|u|) for |u| <= 500, g(u) = sign(u) (500 - fmod(|u|, 500)) "
        "sin(sqrt(500 - fmod(|u|, 500))) - (|u| - 500)^2 / (10^4 k) beyond",
        schwefel,
        2.0,
        "u sin(sqrt u) has a non-degenerate maximum at u = 420.97: quadratic",
    ),
    "ellips": Basic(
        "ellips_func",
        "High-conditioned Elliptic",
        1.0,
        "sum_i 10^(6 (i-1)/(k-1)) z_i^2",
        ellips,
        2.0,
        "positive-definite quadratic form",
    ),
    "discus": Basic(
        "discus_func",
        "Discus",
        1.0,
        "10^6 z_1^2 + sum_{i>1} z_i^2",
        discus,
        2.0,
        "positive-definite quadratic form",
    ),
    "ackley": Basic(
        "ackley_func",
        "Ackley",
        1.0,
        "20 + e - 20 exp(-0.2 sqrt(mean_i z_i^2)) - exp(mean_i cos(2 pi z_i))",
        ackley,
        1.0,
        "cone point: 4 |z| / sqrt(k) + O(|z|^2)",
    ),
    "weierstrass": Basic(
        "weierstrass_func",
        "Weierstrass",
        0.5 / 100.0,
        "sum_i sum_{j=0}^{20} 0.5^j cos(2 pi 3^j (z_i + 0.5)) - k sum_{j=0}^{20} 0.5^j cos(pi 3^j)",
        weierstrass,
        None,
        "Hoelder-type (exponent log 2 / log 3) above |z| ~ 3^-20, quadratic only below",
    ),
    "griewank": Basic(
        "griewank_func",
        "Griewank",
        600.0 / 100.0,
        "1 + sum_i z_i^2 / 4000 - prod_i cos(z_i / sqrt(i))",
        griewank,
        2.0,
        _QUADRATIC,
    ),
    "katsuura": Basic(
        "katsuura_func",
        "Katsuura",
        5.0 / 100.0,
        "(10/k^2) prod_i (1 + i sum_{j=1}^{32} |2^j z_i - round(2^j z_i)| / 2^j)^(10/k^1.2) "
        "- 10/k^2",
        katsuura,
        None,
        "Takagi-type sums: |z| log(1/|z|)-like, degree 1 only below |z| ~ 2^-33",
    ),
    "grie_rosen": Basic(
        "grie_rosen_func",
        "Expanded Griewank plus Rosenbrock",
        5.0 / 100.0,
        "sum_i (t_i^2/4000 - cos(t_i) + 1), t_i = 100 (u_i^2 - u_{i+1})^2 + (u_i - 1)^2, "
        "u = z + 1, u_{k+1} = u_1",
        grie_rosen,
        4.0,
        "t^2/4000 - cos t + 1 = (1/2 + 1/4000) t^2 + O(t^4) and the Rosenbrock terms t_i are "
        "positive-definite quadratics in (u_i - 1, u_{i+1} - 1) whose sum vanishes only at "
        "u = 1: degree 4",
    ),
    "escaffer6": Basic(
        "escaffer6_func",
        "Expanded Schaffer's F6",
        1.0,
        "sum_i (0.5 + (sin^2(sqrt(q_i)) - 0.5) / (1 + 0.001 q_i)^2), q_i = z_i^2 + z_{i+1}^2, "
        "z_{k+1} = z_1",
        escaffer6,
        2.0,
        "each term is 1.001 q_i + O(q_i^2) and every z_i enters some q_i: quadratic",
    ),
    "happycat": Basic(
        "happycat_func",
        "HappyCat",
        5.0 / 100.0,
        "|r - k|^(1/4) + (0.5 r + sum_i u_i)/k + 0.5, u = z - 1, r = sum_i u_i^2",
        happycat,
        None,
        "its zero set near the optimum is a curved hypersurface (|r - k| = 0 on a sphere "
        "through it): degree 1/4 across it, 2 along it, no single power law of |z|",
    ),
    "hgbat": Basic(
        "hgbat_func",
        "HGBat",
        5.0 / 100.0,
        "|r^2 - (sum_i u_i)^2|^(1/2) + (0.5 r + sum_i u_i)/k + 0.5, u = z - 1, r = sum_i u_i^2",
        hgbat,
        None,
        "its zero set near the optimum is a curved hypersurface (r = |sum_i u_i|): degree "
        "1/2 across it, 2 along it, no single power law of |z|",
    ),
}


# --------------------------------------------------------------------------------------------
# Specs of suite functions and their kernels.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rotated:
    """A basic function called with ``s_flag = 1``: ``g(M (rate (x - o)))``.

    Attributes
    ----------
    basic : str
        Key of :data:`BASICS`.
    rotate : bool
        ``r_flag``: False reads ``z = rate (x - o)`` (also used for Schaffer's F7, which
        reads the unrotated scratch vector although ``r_flag = 1``).
    scale : tuple of float, optional
        ``(a, b)``: a composition component's ``fit = a * fit / b``, as written in the code.
    levy_centre : float
        ``w = 1 + (z - centre) / 4`` for Levy (1.0 in 2017/2020, 0.0 in 2022).
    """

    basic: str
    rotate: bool = True
    scale: tuple[float, float] | None = None
    levy_centre: float = 1.0


@dataclass(frozen=True)
class Hybrid:
    """A hybrid function ``hfNN``: rotate once, shuffle, split into groups, sum the pieces.

    Attributes
    ----------
    c_name : str
        The C function, e.g. ``"hf04"``.
    pieces : tuple of str
        Keys of :data:`BASICS`, one per group, in the code's order.
    fractions : tuple of float
        The code's ``Gp``: group ``g`` has ``ceil(Gp[g] D)`` variables except the remainder
        group, which gets what is left.
    remainder_first : bool
        CEC 2014 style (the 2020 code's hf01, hf05, hf06): the first group gets the remainder;
        otherwise the last one does.
    fixed_sizes : mapping
        ``D -> sizes`` hard-coded by the code (2020: D = 5).
    """

    c_name: str
    pieces: tuple[str, ...]
    fractions: tuple[float, ...]
    remainder_first: bool = False
    fixed_sizes: Mapping[int, tuple[int, ...]] = field(default_factory=dict)

    def sizes(self, dim: int) -> tuple[int, ...]:
        """Group sizes ``G_nx`` the code computes for dimension ``dim``."""
        if dim in self.fixed_sizes:
            return tuple(self.fixed_sizes[dim])
        if self.remainder_first:
            rest = [math.ceil(p * dim) for p in self.fractions[1:]]
            return (dim - sum(rest), *rest)
        head = [math.ceil(p * dim) for p in self.fractions[:-1]]
        return (*head, dim - sum(head))

    def starts(self, dim: int) -> tuple[int, ...]:
        """First index ``G[g]`` of each group in the shuffled vector."""
        sizes = self.sizes(dim)
        return tuple(int(s) for s in np.cumsum((0, *sizes[:-1])))


@dataclass(frozen=True)
class Composition:
    """A composition function ``cfNN`` (weights of ``cf_cal``).

    Attributes
    ----------
    c_name : str
        The C function, e.g. ``"cf01"``.
    components : tuple
        :class:`Rotated` or :class:`Hybrid` components, in the code's order.
    sigmas : tuple of float
        The code's ``delta``.
    biases : tuple of float
        The code's ``bias`` (added to each component's value).
    """

    c_name: str
    components: tuple[Rotated | Hybrid, ...]
    sigmas: tuple[float, ...]
    biases: tuple[float, ...]


Spec = Rotated | Hybrid | Composition


@dataclass(frozen=True)
class CecData:
    """The data one function reads, laid out as the code reads it.

    Attributes
    ----------
    shifts : ndarray, shape (k, D)
        Row ``i``: the first ``D`` entries of row ``i`` of ``shift_data_<n>.txt``.
    rotations : ndarray, shape (k, D, D) or None
        The first ``k D^2`` numbers of ``M_<n>_D<D>.txt``, read in order (``Mr[i*D*D + r*D
        + c]`` is ``rotations[i, r, c]``).
    orders : ndarray, shape (k, D) or None
        0-based shuffle permutations from ``shuffle_data_<n>_D<D>.txt``.
    """

    shifts: np.ndarray
    rotations: np.ndarray | None
    orders: np.ndarray | None


def needs(spec: Spec) -> tuple[int, bool, bool]:
    """``(components, rotation, shuffle)``: how much data a spec reads."""
    if isinstance(spec, Composition):
        shuffle = any(isinstance(c, Hybrid) for c in spec.components)
        return len(spec.components), True, shuffle
    if isinstance(spec, Hybrid):
        return 1, True, True
    return 1, spec.rotate or spec.basic == "lunacek", False


def load_data(year: int, number: int, dim: int, spec: Spec) -> CecData:
    """Read the shift vectors, rotations and shuffles a function uses (cached per file).

    Parameters
    ----------
    year : int
        2017, 2020 or 2022.
    number : int
        The code-internal function number that names the files.
    dim : int
        ``D``.
    spec : Rotated, Hybrid or Composition
        The function.

    Returns
    -------
    CecData

    Raises
    ------
    NotApplicable
        A data file is missing or too short (see :mod:`cec_data`).

    Notes
    -----
    The files hold what the code reads, checked against the reference vectors: a simple or
    hybrid function reads the first ``D`` numbers of the shift file (row 1 holds 100) and the
    first ``D^2`` of ``M_<n>_D<D>.txt`` (one ``D x D`` matrix, row by row); a composition reads
    the first ``D`` entries of each of its ``k`` shift rows and ``k`` stacked matrices, matrix
    ``i`` on file rows ``i D .. i D + D - 1``. The code's loops try to read ``cf_num`` = 10
    (2017, 2020) or 12 (2022) of each, more than some files hold (the 2017 D = 2 files hold 8
    matrices, the 2022 files 10 matrices and 10 shift rows); ``fscanf`` then fails silently on
    entries no component uses, so only the first ``k`` are read here. The composition of hybrids
    (2017 F29, F30) reads ``k`` shuffles of ``D`` entries one after the other.
    """
    k, rotation, shuffle = needs(spec)
    shifts = cec_data.load_vector_rows(year, f"shift_data_{number}.txt", k, dim)
    rotations = None
    if rotation:
        flat = cec_data.load_numbers(year, f"M_{number}_D{dim}.txt", k * dim * dim)
        rotations = flat.reshape(k, dim, dim)
    orders = None
    if shuffle:
        orders = cec_data.load_indices(year, f"shuffle_data_{number}_D{dim}.txt", dim, blocks=k)
    return CecData(shifts, rotations, orders)


def _basic_kernel(basic: str, *, levy_centre: float = 1.0) -> Kernel:
    if basic == "levy":
        return functools.partial(levy, centre=levy_centre)
    kernel = BASICS[basic].kernel
    if kernel is None:
        raise ValueError(f"{basic} needs more than z; build it with rotated_kernel")
    return kernel


def rotated_kernel(spec: Rotated, shift: np.ndarray, rotation: np.ndarray | None) -> Kernel:
    """Kernel of ``g(M (rate (x - o)))`` as ``sr_func`` computes it (``X @ M.T`` per batch).

    Parameters
    ----------
    spec : Rotated
        The basic function and flags.
    shift : ndarray, shape (D,)
        ``o``.
    rotation : ndarray, shape (D, D) or None
        ``M`` (unused when ``spec.rotate`` is False, except by Lunacek).

    Returns
    -------
    callable
        ``X (n, D) -> (n,)``, without the function's bias.
    """
    if spec.basic == "lunacek":
        signs = np.where(shift < 0.0, -1.0, 1.0)
        rot = None if rotation is None or not spec.rotate else np.ascontiguousarray(rotation.T)
        return lambda x: lunacek(x - shift, signs, rot)
    if spec.basic == "schaffer_f7":  # reads y = (x - o) * 1.0, never the rotated z
        return lambda x: schaffer_f7(x - shift)
    kernel = _basic_kernel(spec.basic, levy_centre=spec.levy_centre)
    rate = BASICS[spec.basic].rate
    if spec.rotate:
        if rotation is None:
            raise ValueError(f"{spec.basic}: rotation matrix missing")
        # M (rate v) as v @ (rate M.T): the rate folded into the matrix (a few ulps)
        transposed = np.ascontiguousarray(rate * rotation.T)
        return lambda x: kernel(rotate(x - shift, transposed))
    if rate == 1.0:
        return lambda x: kernel(x - shift)
    return lambda x: kernel((x - shift) * rate)


def _piece(name: str, start: int, size: int, shift: np.ndarray) -> Kernel:
    """One hybrid piece ``fit[g]`` as a function of the whole shuffled vector ``y``."""
    if size < 1:
        raise ValueError(f"hybrid piece {name} gets {size} variables")
    stop = start + size
    if name == "schaffer_f7":
        if size < 2:
            raise ValueError("schaffer_F7_func with one variable returns NaN (0/0)")
        # the code reads the scratch y from index 0, not from its own group
        return lambda y: schaffer_f7(y[:, :size])
    if name == "lunacek":  # signs from the first entries of the shift vector it is given
        signs = np.where(shift[:size] < 0.0, -1.0, 1.0)
        return lambda y: lunacek(y[:, start:stop], signs)
    if name == "ellips" and size < 2:
        raise ValueError("ellips_func with one variable returns NaN: pow(10, 6*0/(1-1))")
    kernel = _basic_kernel(name)
    rate = BASICS[name].rate
    if rate == 1.0:
        return lambda y: kernel(y[:, start:stop])
    return lambda y: kernel(y[:, start:stop] * rate)


def hybrid_kernel(
    spec: Hybrid, shift: np.ndarray, rotation: np.ndarray, order: np.ndarray
) -> Kernel:
    """Kernel of a hybrid: ``y = (M (x - o))[S]``, ``f = sum_g piece_g``.

    Parameters
    ----------
    spec : Hybrid
        Pieces and group fractions.
    shift : ndarray, shape (D,)
        ``o`` (also the sign source of a Lunacek piece).
    rotation : ndarray, shape (D, D)
        ``M``.
    order : ndarray, shape (D,)
        0-based shuffle: ``y[i] = z[order[i]]``.

    Returns
    -------
    callable
        ``X (n, D) -> (n,)``, without the bias.

    Raises
    ------
    ValueError
        If a piece would get no variable, or one variable where the code returns NaN.
    """
    dim = shift.shape[0]
    sizes, starts = spec.sizes(dim), spec.starts(dim)
    pieces = [
        _piece(name, start, size, shift)
        for name, start, size in zip(spec.pieces, starts, sizes, strict=True)
    ]
    # y = z[order] = (M[order]) (x - o): the same dot products, rows taken in shuffled order
    transposed = np.ascontiguousarray(rotation[order].T)

    def kernel(x: np.ndarray) -> np.ndarray:
        y = rotate(x - shift, transposed)
        total = pieces[0](y)
        for piece in pieces[1:]:
            total = total + piece(y)
        return total

    return kernel


def composition_weights(x: np.ndarray, shifts: np.ndarray, sigmas: np.ndarray) -> np.ndarray:
    """Normalised weights of the code's ``cf_cal``.

    ``w_i = exp(-d_i^2 / (2 D sigma_i^2)) / d_i`` with ``d_i = |x - o_i|``, ``w_i = 1e99`` where
    ``d_i = 0``, and equal weights where every ``w_i`` underflows to 0.

    Parameters
    ----------
    x : ndarray, shape (n, D)
        Points.
    shifts : ndarray, shape (k, D)
        Component optima ``o_i``.
    sigmas : ndarray, shape (k,)
        The code's ``delta``.

    Returns
    -------
    ndarray, shape (n, k)
        ``w_i / sum_j w_j``.
    """
    dim = x.shape[1]
    d2 = np.stack([sumsq(x - o) for o in shifts], axis=1)
    at_optimum = d2 == 0.0
    safe = np.where(at_optimum, 1.0, d2)
    w = np.where(at_optimum, INF, np.sqrt(1.0 / safe) * np.exp(-safe / 2.0 / dim / sigmas**2))
    total = rowsum(w)
    flat = np.max(w, axis=1) == 0.0
    if flat.any():
        w[flat] = 1.0
        total[flat] = shifts.shape[0]
    return w / total[:, None]


def composition_kernel(spec: Composition, data: CecData) -> Kernel:
    """Kernel of a composition ``sum_i w_i (lambda_i g_i(x) + bias_i)`` as in ``cf_cal``.

    Parameters
    ----------
    spec : Composition
        Components, ``delta`` and ``bias``.
    data : CecData
        ``k`` shift rows, ``k`` stacked rotations and, for hybrid components, ``k`` shuffles.

    Returns
    -------
    callable
        ``X (n, D) -> (n,)``, without the function's own bias.
    """
    k = len(spec.components)
    shifts = np.ascontiguousarray(data.shifts[:k])
    sigmas = np.asarray(spec.sigmas, dtype=np.float64)
    biases = np.asarray(spec.biases, dtype=np.float64)
    parts: list[Kernel] = []
    for i, component in enumerate(spec.components):
        rotation = None if data.rotations is None else data.rotations[i]
        if isinstance(component, Hybrid):
            if data.orders is None or rotation is None:
                raise ValueError(f"{spec.c_name}: hybrid component needs M and a shuffle")
            parts.append(hybrid_kernel(component, shifts[i], rotation, data.orders[i]))
        else:
            parts.append(_scaled(rotated_kernel(component, shifts[i], rotation), component.scale))

    def kernel(x: np.ndarray) -> np.ndarray:
        weights = composition_weights(x, shifts, sigmas)
        total = np.zeros(x.shape[0])
        for i, part in enumerate(parts):
            total = total + weights[:, i] * (part(x) + biases[i])
        return total

    return kernel


def _scaled(kernel: Kernel, scale: tuple[float, float] | None) -> Kernel:
    if scale is None:
        return kernel
    a, b = scale
    return lambda x: a * kernel(x) / b


def build_kernel(spec: Spec, data: CecData, bias: float) -> Kernel:
    """The function's kernel ``X (n, D) -> (n,)``, bias included.

    Parameters
    ----------
    spec : Rotated, Hybrid or Composition
        The function.
    data : CecData
        Its data (:func:`load_data`).
    bias : float
        ``F*``, added last as the code does (``f[i] += bias``).

    Returns
    -------
    callable
    """
    if isinstance(spec, Composition):
        inner = composition_kernel(spec, data)
    elif isinstance(spec, Hybrid):
        if data.rotations is None or data.orders is None:
            raise ValueError(f"{spec.c_name}: needs M and a shuffle")
        inner = hybrid_kernel(spec, data.shifts[0], data.rotations[0], data.orders[0])
    else:
        rotation = None if data.rotations is None else data.rotations[0]
        inner = rotated_kernel(spec, data.shifts[0], rotation)

    def biased(x: np.ndarray) -> np.ndarray:
        return inner(x) + bias

    return in_chunks(biased, data.shifts.shape[1])


# --------------------------------------------------------------------------------------------
# Formulas and local structure.
# --------------------------------------------------------------------------------------------


def _scaled_z(rate: float, rotate: bool, shift: str = "o") -> str:
    inner = f"x - {shift}" if rate == 1.0 else f"{rate:g} (x - {shift})"
    return f"z = M ({inner})" if rotate else f"z = {inner}"


def describe(spec: Spec) -> str:
    """Plain-text definition of a spec, ``F*`` being its bias."""
    if isinstance(spec, Composition):
        parts = []
        for i, c in enumerate(spec.components, start=1):
            if isinstance(c, Hybrid):
                parts.append(f"g_{i} = {c.c_name} (the hybrid, with o_i, M_i and shuffle block i)")
                continue
            basic = BASICS[c.basic]
            lam = "" if c.scale is None else f"{c.scale[0]:g} * "
            den = "" if c.scale is None else f" / {c.scale[1]:g}"
            z = _scaled_z(basic.rate, c.rotate, "o_i")
            parts.append(f"g_{i} = {lam}{basic.c_name}{den} ({z})")
        return (
            "f(x) = sum_i (w_i / sum_j w_j) (g_i(x) + bias_i) + F*, "
            "w_i = exp(-|x - o_i|^2 / (2 D sigma_i^2)) / |x - o_i| (1e99 at x = o_i), "
            f"sigma = {list(spec.sigmas)}, bias = {list(spec.biases)}; o_i = row i of the shift "
            "file, M_i = matrix i of the M file: " + "; ".join(parts)
        )
    if isinstance(spec, Hybrid):
        groups = "; ".join(
            f"group {g}: {BASICS[name].c_name} = {BASICS[name].formula}"
            + ("" if BASICS[name].rate == 1.0 else f" with z = {BASICS[name].rate:g} y_{g}")
            for g, name in enumerate(spec.pieces, start=1)
        )
        remainder = "first" if spec.remainder_first else "last"
        extra = ""
        if "schaffer_f7" in spec.pieces:
            extra = (
                "; the schaffer_F7_func piece reads the shuffled vector y from index 0 (its "
                "own group's variables are read by no piece)"
            )
        if "lunacek" in spec.pieces:
            extra += "; the bi_rastrigin_func piece takes its signs from the top-level o"
        return (
            "f(x) = sum_g piece_g(y_g) + F*, z = M (x - o), y = z shuffled by S "
            "(y_i = z_(S_i)), split into consecutive groups y_g of ceil(p_g D) variables, "
            f"p = {list(spec.fractions)} (the {remainder} group gets the remainder); each piece "
            "reads its group (z = y_g unless a rate is given): " + groups + extra
        )
    basic = BASICS[spec.basic]
    if spec.basic == "schaffer_f7":
        return f"f(x) = g + F*, g = {basic.formula}; v = x - o (no rotation, no scaling)"
    if spec.basic == "lunacek":
        return f"f(x) = g + F*, g = {basic.formula}; v = x - o"
    formula = basic.formula
    if spec.basic == "levy":
        formula += ", w = " + ("1 + (z - 1)/4" if spec.levy_centre == 1.0 else "1 + z/4")
    return f"f(x) = g + F*, g = {formula}; {_scaled_z(basic.rate, spec.rotate)}, k = D"


def smooth(reason: str) -> Callable[[int], LocalStructure]:
    """``beta = d/2``: smooth minimum with a positive-definite Hessian."""
    return power_law(2, f"smooth non-degenerate minimum: {reason}")


def unknown(reason: str) -> Callable[[int], LocalStructure]:
    """``beta = None`` with the derivation ``unknown: <reason>``."""

    def local(dim: int) -> LocalStructure:
        return LocalStructure(None, f"unknown: {reason}; estimate the tail from samples")

    return local


def hybrid_exponents(spec: Hybrid, dim: int) -> np.ndarray | None:
    """Per shuffled coordinate, the exponent it contributes to beta (None if unknown).

    Coordinate ``j`` of the shuffled vector contributes ``1 / p_j`` where ``p_j`` is the
    smallest degree of the pieces that read it, and 0 if no piece reads it (a free direction:
    Schaffer's F7 reads index 0 onwards, not its own group).

    Returns
    -------
    ndarray, shape (D,) or None
        None when a piece has no single power law.
    """
    sizes, starts = spec.sizes(dim), spec.starts(dim)
    degree = np.full(dim, np.inf)
    for name, start, size in zip(spec.pieces, starts, sizes, strict=True):
        p = BASICS[name].degree
        if p is None:
            return None
        read = slice(0, size) if name == "schaffer_f7" else slice(start, start + size)
        degree[read] = np.minimum(degree[read], p)
    return np.where(np.isinf(degree), 0.0, 1.0 / degree)


def hybrid_local(spec: Hybrid) -> Callable[[int], LocalStructure]:
    """Local structure of a hybrid from its pieces (sum over disjoint groups of size/p)."""

    def local(dim: int) -> LocalStructure:
        exponents = hybrid_exponents(spec, dim)
        sizes = spec.sizes(dim)
        if exponents is None:
            bad = sorted({BASICS[n].title for n in spec.pieces if BASICS[n].degree is None})
            why = "; ".join(
                f"{BASICS[n].title}: {BASICS[n].why}"
                for n in dict.fromkeys(spec.pieces)
                if BASICS[n].degree is None
            )
            return LocalStructure(
                None,
                f"unknown: the {', '.join(bad)} piece(s) have no single power law at the "
                f"optimum ({why}); estimate the tail from samples",
            )
        beta = float(np.sum(exponents))
        detail = ", ".join(
            f"{BASICS[n].title} {s} vars p={BASICS[n].degree:g}"
            for n, s in zip(spec.pieces, sizes, strict=True)
        )
        free = int(np.sum(exponents == 0.0))
        note = (
            f"; {free} shuffled variables (the Schaffer F7 group) are read by no piece: "
            "f is constant along them, so they add 0 and {f = f*} is a flat of that "
            "dimension through x* (measure 0: atom 0)"
            if free
            else ""
        )
        return LocalStructure(
            beta,
            "hybrid: f - f* is a sum of pieces on disjoint groups of the shuffled rotated "
            "vector, each >= c |y_g|^p_g and <= C |y_g|^p_g near 0, so {f - f* <= t} is a "
            "product of t^(1/p) scalings and beta = sum over variables of 1/(smallest degree "
            f"reading it) = {beta:.6g} ({detail}){note}",
        )

    return local


# --------------------------------------------------------------------------------------------
# Suite entries and registration.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CecEntry:
    """One public function of a CEC suite.

    Attributes
    ----------
    number : int
        Public number (``f<number>`` in the id).
    internal : int
        Code-internal number: names the data files and the ``case`` of the test function.
    title : str
        Readable name.
    spec : Rotated, Hybrid or Composition
        The definition.
    bias : float
        ``F*``.
    dims : tuple of int
        Dimensions registered (those of the reference vectors).
    local : callable
        ``dim -> LocalStructure``.
    notes : tuple of str
        Where the code departs from the report, and other facts a user must know.
    flags : tuple of str
        Machine-readable marks.
    optimum : callable, optional
        ``(data, dim) -> x*`` when the minimiser is not the first shift vector.
    dim_notes : mapping
        ``dim -> notes`` added in that dimension only.
    """

    number: int
    internal: int
    title: str
    spec: Spec
    bias: float
    dims: tuple[int, ...]
    local: Callable[[int], LocalStructure]
    notes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    optimum: Callable[[CecData, int], np.ndarray] | None = None
    dim_notes: Mapping[int, tuple[str, ...]] = field(default_factory=dict)


def c_function(spec: Spec) -> str:
    """Name of the C function that evaluates a spec."""
    if isinstance(spec, Hybrid | Composition):
        return spec.c_name
    return BASICS[spec.basic].c_name


def data_files(entry: CecEntry, dim: int) -> str:
    """The data files the code reads for this entry, e.g. ``M_5_D10.txt, shift_data_5.txt``."""
    _, rotation, shuffle = needs(entry.spec)
    n = entry.internal
    files = [f"shift_data_{n}.txt"]
    if rotation:
        files.insert(0, f"M_{n}_D{dim}.txt")
    if shuffle:
        files.append(f"shuffle_data_{n}_D{dim}.txt")
    return ", ".join(files)


def build_function(
    suite: str, year: int, entry: CecEntry, dim: int, source: str
) -> BenchmarkFunction:
    """Load the entry's data in dimension ``dim`` and return its registered function.

    Parameters
    ----------
    suite : str
        Suite name, e.g. ``"cec2017"``.
    year : int
        Selects the data folder.
    entry : CecEntry
        The function.
    dim : int
        A dimension of ``entry.dims``.
    source : str
        Reference text (report, C file and function).

    Returns
    -------
    BenchmarkFunction
        Domain ``[-100, 100]^D``, ``f* = bias``, ``x*`` the first shift vector unless the
        entry says otherwise.

    Raises
    ------
    NotApplicable
        If the data files are not installed.
    """
    data = load_data(year, entry.internal, dim, entry.spec)
    x_opt = data.shifts[0] if entry.optimum is None else entry.optimum(data, dim)
    name = f"f{entry.number}"
    return BenchmarkFunction(
        id=format_id(suite, name, None, dim),
        suite=suite,
        name=name,
        title=entry.title,
        dim=dim,
        instance=None,
        lower=np.full(dim, BOUNDS[0]),
        upper=np.full(dim, BOUNDS[1]),
        x_opt=x_opt,
        f_opt=float(entry.bias),
        f_max=None,
        local=entry.local(dim),
        source=source,
        formula=f"{describe(entry.spec)}; F* = {entry.bias:g}",
        analytic=None,
        kernel=build_kernel(entry.spec, data, float(entry.bias)),
        notes=entry.notes + tuple(entry.dim_notes.get(dim, ())),
        flags=entry.flags,
    )


def cec_builder(
    suite: str, year: int, entries: Mapping[int, CecEntry], source: str, report: str
) -> Callable[[str, int | None, int], BenchmarkFunction]:
    """The ``Suite.build`` of a CEC suite: ``f<k>`` at ``dim`` from its entry.

    ``source`` is a template with the keys ``report``, ``k`` (public number), ``n`` (code-internal
    number), ``c_name``, ``bias`` and ``files``.
    """

    def build(name: str, instance: int | None, dim: int) -> BenchmarkFunction:
        entry = entries[int(name[1:])]
        text = source.format(
            report=report,
            k=entry.number,
            n=entry.internal,
            c_name=c_function(entry.spec),
            bias=entry.bias,
            files=data_files(entry, dim),
        )
        return build_function(suite, year, entry, dim, text)

    return build


def make_suite(
    name: str,
    entries: Mapping[int, CecEntry],
    build: Callable[[str, int | None, int], BenchmarkFunction],
    refused: Mapping[tuple[str, int], str] | None = None,
) -> Suite:
    """A :class:`Suite` over ``entries`` (ids ``<name>/f<k>/d<D>``, no instance).

    Listed dimensions are the union of the entries' dimensions; each function accepts its own.
    """
    by_name = {f"f{k}": e for k, e in entries.items()}
    dims = tuple(sorted({d for e in entries.values() for d in e.dims}))
    return Suite(
        name=name,
        id_form=f"{name}/f{{1..{max(entries)}}}/d{{dim}}",
        names=tuple(by_name),
        dims=dims,
        accepted_dims=lambda fname: by_name[fname].dims,
        instances=None,
        listed_instances=(),
        build=build,
        refused=dict(refused or {}),
    )


def titled(spec: Hybrid | Composition, number: int) -> str:
    """``"Hybrid Function 3 (Bent Cigar, ...)"`` or ``"Composition Function 1 (...)"``."""
    if isinstance(spec, Hybrid):
        names = ", ".join(BASICS[p].title for p in spec.pieces)
        return f"Hybrid Function {number} ({names})"
    names = ", ".join(
        f"Hybrid Function {int(c.c_name[2:])}" if isinstance(c, Hybrid) else BASICS[c.basic].title
        for c in spec.components
    )
    return f"Composition Function {number} ({names})"


COMPOSITION_NOTE = (
    "the composition weights are the code's (cf_cal): w_i = exp(-d_i^2/(2 D sigma_i^2)) / d_i "
    "with d_i = |x - o_i|, the constant 1e99 at x = o_i (so f(o_1) = f* exactly) and equal "
    "weights where all underflow to 0"
)


_WEIGHT_CONE = (
    "composition at x* = o_1: w_1 = exp(-r^2/(2 D sigma_1^2)) / r with r = |x - o_1| dominates, "
    "and f - f* = lambda_1 g_1(x) (1 + O(r)) + K r + O(r^2) with K = sum_(i>1) w_i(o_1) "
    "(lambda_i g_i(o_1) + bias_i) > 0 (the other components' weights times their values, all "
    "biases > 0)"
)


def composition_cone(first: str, degree: float) -> Callable[[int], LocalStructure]:
    """``beta = d``: the weights make ``x* = o_1`` a cone point (degree 1).

    Parameters
    ----------
    first : str
        The first component, for the derivation text.
    degree : float
        Its own degree at ``o_1`` (1 for a cone, 2 for a smooth minimum): ``K r`` dominates it.
    """
    own = (
        "itself a cone (degree 1)"
        if degree == 1
        else f"smooth (degree {degree:g}), so K r dominates it as r -> 0"
    )
    return power_law(
        1,
        f"{_WEIGHT_CONE}; g_1 = {first} is {own}: f - f* = r (K + O(1) bounded) is a cone, "
        "measured degree 1.00 for r from 1e-8 to at least 3e-3 (to 0.1-30 for most, where "
        "g_1's own growth takes over)",
    )


def composition_unknown(first: str, why: str) -> Callable[[int], LocalStructure]:
    """``beta = None`` for a composition whose first component has no single power law."""
    return unknown(f"{_WEIGHT_CONE}; g_1 = {first}: {why}")
