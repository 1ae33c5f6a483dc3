"""The basic functions of the CEC 2017/2020/2022 organisers' C code and their catalogue.

Each takes the coordinates the C function computes with, ``z`` of shape ``(n, k)`` after
``sr_func`` (shifted, scaled by the function's own rate, rotated), and returns shape ``(n,)``.
:data:`BASICS` records for each the C name, the rate of ``sr_func``, the formula and the local
degree at ``z = 0``. Public face: :mod:`app.domain.functions.cec_common`.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from app.domain.functions._cec_numeric import (
    PI,
    SCHWEFEL_PEAK,
    SCHWEFEL_SHIFT,
    WEIERSTRASS_K,
    E,
    cos_of,
    rotate,
    rowsum,
    sin2_pi,
    sumsq,
    weierstrass_terms,
)
from app.domain.functions.registry import FloatArray, Kernel


def bent_cigar(z: FloatArray) -> FloatArray:
    """``bent_cigar_func``: ``z_1^2 + 10^6 sum_{i>1} z_i^2``; z : (n, k) -> (n,)."""
    return z[:, 0] * z[:, 0] + rowsum(1.0e6 * z[:, 1:] * z[:, 1:])


def sum_diff_pow(z: FloatArray) -> FloatArray:
    """``sum_diff_pow_func``: ``sum_i |z_i|^i`` (1-based ``i``); z : (n, k) -> (n,).

    The code calls ``abs`` on a double; compiled as C++ this is the double overload (``fabs``),
    which is what the reference vectors were made with.
    """
    return rowsum(np.abs(z) ** np.arange(1.0, z.shape[1] + 1.0))


def zakharov(z: FloatArray) -> FloatArray:
    """``zakharov_func``: ``sum z_i^2 + s^2 + s^4``, ``s = sum_i 0.5 i z_i``; z : (n, k) -> (n,)."""
    s = rowsum(0.5 * np.arange(1.0, z.shape[1] + 1.0) * z)
    return sumsq(z) + s * s + s**4


def rosenbrock(z: FloatArray) -> FloatArray:
    """``rosenbrock_func`` after its rate 2.048/100; z : (n, k) -> (n,)."""
    u = z + 1.0
    head, tail = u[:, :-1], u[:, 1:]
    t1 = head * head - tail
    t2 = head - 1.0
    return rowsum(100.0 * t1 * t1 + t2 * t2)


def rastrigin(z: FloatArray) -> FloatArray:
    """``rastrigin_func`` after its rate 5.12/100; z : (n, k) -> (n,).

    Summed as ``sum z^2 + 20 sum sin^2(pi z)`` (:func:`sin2_pi`), the code's ``sum (z^2 - 10
    cos(2 pi z) + 10)`` to a few ulps of 10 per coordinate.
    """
    return sumsq(z) + 20.0 * rowsum(sin2_pi(z))


def schaffer_f7(v: FloatArray) -> FloatArray:
    """``schaffer_F7_func`` on the vector it reads (the scratch ``y``); v : (n, k>=2) -> (n,).

    ``((1/(k-1)) sum_{i<k} (sqrt(s_i) + sqrt(s_i) sin^2(50 s_i^0.2)))^2`` with
    ``s_i = sqrt(v_i^2 + v_{i+1}^2)``.
    """
    k = v.shape[1]
    s = (v[:, :-1] * v[:, :-1] + v[:, 1:] * v[:, 1:]) ** 0.5
    t = np.sin(50.0 * s**0.2)
    root = s**0.5
    total = rowsum(root + root * t * t)
    result: FloatArray = total * total / (k - 1) / (k - 1)
    return result


def levy(z: FloatArray, *, centre: float) -> FloatArray:
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


def _fmod500(a: FloatArray) -> FloatArray:
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


def schwefel(z: FloatArray) -> FloatArray:
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
    result: FloatArray = SCHWEFEL_PEAK * k - rowsum(terms)
    return result


def ellips(z: FloatArray) -> FloatArray:
    """``ellips_func``: ``sum_i 10^(6 (i-1)/(k-1)) z_i^2``; z : (n, k>=2) -> (n,)."""
    k = z.shape[1]
    weights = 10.0 ** (6.0 * np.arange(k) / (k - 1))
    return rowsum(weights * z * z)


def discus(z: FloatArray) -> FloatArray:
    """``discus_func``: ``10^6 z_1^2 + sum_{i>1} z_i^2``; z : (n, k) -> (n,)."""
    return 1.0e6 * z[:, 0] * z[:, 0] + rowsum(z[:, 1:] * z[:, 1:])


def ackley(z: FloatArray) -> FloatArray:
    """``ackley_func``; z : (n, k) -> (n,)."""
    k = z.shape[1]
    sum1 = -0.2 * np.sqrt(sumsq(z) / k)
    sum2 = (k - 2.0 * rowsum(sin2_pi(z))) / k
    result: FloatArray = E - 20.0 * np.exp(sum1) - np.exp(sum2) + 20.0
    return result


@functools.cache
def _weierstrass_offset() -> float:
    # the code's sum2 = sum_k a^k cos(2 pi b^k 0.5), summed in its order (not exactly -2)
    total = 0.0
    for j in range(WEIERSTRASS_K + 1):
        total += 0.5**j * math.cos(2.0 * PI * 3.0**j * 0.5)
    return total


def weierstrass(z: FloatArray) -> FloatArray:
    """``weierstrass_func`` after its rate 0.5/100 (a = 0.5, b = 3, k_max = 20); -> (n,)."""
    result: FloatArray = rowsum(weierstrass_terms(z + 0.5)) - z.shape[1] * _weierstrass_offset()
    return result


def griewank(z: FloatArray) -> FloatArray:
    """``griewank_func`` after its rate 600/100; z : (n, k) -> (n,)."""
    scale = np.sqrt(1.0 + np.arange(z.shape[1]))
    result: FloatArray = 1.0 + sumsq(z) / 4000.0 - np.prod(cos_of(z / scale), axis=1)
    return result


def katsuura(z: FloatArray) -> FloatArray:
    """``katsuura_func`` after its rate 5/100; z : (n, k) -> (n,)."""
    k = z.shape[1]
    temp = np.zeros(z.shape)
    for j in range(1, 33):
        power = 2.0**j
        scaled = power * z
        temp += np.abs(scaled - np.floor(scaled + 0.5)) / power
    factors = (1.0 + np.arange(1.0, k + 1.0) * temp) ** (10.0 / (1.0 * k) ** 1.2)
    scale = 10.0 / k / k
    result: FloatArray = np.prod(factors, axis=1) * scale - scale
    return result


def grie_rosen(z: FloatArray) -> FloatArray:
    """``grie_rosen_func`` (expanded Griewank plus Rosenbrock) after its rate 5/100; -> (n,)."""
    u = z + 1.0
    nxt = np.roll(u, -1, axis=1)  # pairs (i, i+1) and, last, the wrap-around (D, 1)
    t1 = u * u - nxt
    t2 = u - 1.0
    t = 100.0 * t1 * t1 + t2 * t2
    return rowsum(t * t / 4000.0 - np.cos(t) + 1.0)


def escaffer6(z: FloatArray) -> FloatArray:
    """``escaffer6_func`` (expanded Schaffer F6, pairs with wrap-around); -> (n,)."""
    nxt = np.roll(z, -1, axis=1)
    q = z * z + nxt * nxt
    s = np.sin(np.sqrt(q))
    denominator = 1.0 + 0.001 * q
    return rowsum(0.5 + (s * s - 0.5) / (denominator * denominator))


def happycat(z: FloatArray) -> FloatArray:
    """``happycat_func`` after its rate 5/100; z : (n, k) -> (n,)."""
    k = z.shape[1]
    u = z - 1.0
    r2 = sumsq(u)
    total = rowsum(u)
    result: FloatArray = np.abs(r2 - k) ** 0.25 + (0.5 * r2 + total) / k + 0.5
    return result


def hgbat(z: FloatArray) -> FloatArray:
    """``hgbat_func`` after its rate 5/100; z : (n, k) -> (n,)."""
    k = z.shape[1]
    u = z - 1.0
    r2 = sumsq(u)
    total = rowsum(u)
    result: FloatArray = np.abs(r2 * r2 - total * total) ** 0.5 + (0.5 * r2 + total) / k + 0.5
    return result


def lunacek(v: FloatArray, signs: FloatArray, transposed: FloatArray | None = None) -> FloatArray:
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
    result: FloatArray = np.minimum(tmp1, tmp2) + 20.0 * rowsum(sin2_pi(inner))
    return result


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
