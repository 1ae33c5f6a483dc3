"""CEC 2005 F1-F25, ids ``cec2005/f{1..25}/d{10,30}``.

Definitions are those of the organisers' C code [2]_ (by S. Tiwari), which accompanies the
technical report [1]_; where the two differ, the code is followed and the function's ``notes``
say so. :mod:`app.domain.functions.cec2005_model` translates the code into vectorised numpy
(one batch per call, no loop over points) and reads the organisers' data files from ``opfunu``
(:mod:`app.domain.functions.cec_data`); nothing is read when this module is imported, only when
a function is first built. Every function reproduces the reference vectors
(``shared/data/cec_vectors/cec2005.csv``, made with the R packaging of that code) to
``1e-9 * max(1, |f|)``.

Noise: F4, F17, F24 and F25 are noisy in the competition. Each is registered twice:
``cec2005/f4/d10`` is the competition's noisy function (evaluate it with a seed, flag
``"noisy"``), ``cec2005/f4_noisefree/d10`` the same function with the noise switched off, the
organisers' verification setting (flag ``"noise-free"``).

Local structure: ``beta`` is registered where ``f - f*`` is a power of the distance to ``x*``
near ``x*`` (checked with :func:`~app.domain.functions.registry.local_degree` in
``tests/unit/domain/test_cec2005.py``), else None.

References
----------
.. [1] P. N. Suganthan, N. Hansen, J. J. Liang, K. Deb, Y.-P. Chen, A. Auger, S. Tiwari (2005).
   Problem definitions and evaluation criteria for the CEC 2005 special session on
   real-parameter optimization. Nanyang Technological University, Singapore, and KanGAL
   report 2005005, IIT Kanpur.
.. [2] S. Tiwari (2005), C code of the CEC 2005 benchmark functions; R package
   ``cec2005benchmark`` 1.0.5 (yasserglez/cec2005benchmark, ``src/def1.c`` ... ``def4.c``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from app.domain.functions.cec2005_model import model
from app.domain.functions.registry import (
    BenchmarkFunction,
    LocalStructure,
    Suite,
    format_id,
    power_law,
    register_suite,
)

__all__ = ["DIMS", "NOISY", "SUITE"]

DIMS = (10, 30)
"""Dimensions hosted: those of the reference vectors (the data files also cover 2 and 50)."""
NOISY = (4, 17, 24, 25)
"""Functions that are noisy in the competition; each also has a ``f<k>_noisefree`` id."""
NOISE_FREE_SUFFIX = "_noisefree"

_SOURCE = (
    "P. N. Suganthan, N. Hansen, J. J. Liang, K. Deb, Y.-P. Chen, A. Auger, S. Tiwari (2005), "
    "Problem definitions and evaluation criteria for the CEC 2005 special session on "
    "real-parameter optimization, NTU Singapore and KanGAL report 2005005, IIT Kanpur, function "
    "F{fid}; translated from the organisers' C code by S. Tiwari ({cfunc} in def4.c, initialize_"
    "{cinit} in def3.c), as packaged in the R package cec2005benchmark 1.0.5 "
    "(yasserglez/cec2005benchmark); data: the organisers' files as shipped by opfunu "
    "(cec_based/data_2005)"
)
_PRECISION = (
    "Computed in float64. The organisers' C code declares long double; the R packaging that "
    "produced the reference vectors computes in double. Rotations and matrix products are "
    "summed in the code's order (not by BLAS, so a point's value does not depend on its "
    "batch); other sums use numpy's order. Measured against the vectors: at most 2e-14 "
    "relative"
)
_NOISE = (
    "Competition definition: the code draws one N(0, 1) (randomnormaldeviate()) per evaluation; "
    "here one N(0, 1) per point, from numpy.random.default_rng(seed), in row order. The "
    "organisers' generator (SPRNG; R's norm_rand in the R package) is not reproduced, so noisy "
    "values match the competition in distribution only. {id} is the noise-free function"
)
_NOISE_FREE = (
    "Noise switched off (N = 0): the organisers' verification setting, used for their check "
    "files test_data_func{fid}.txt and for absrank's reference vectors. Not the competition "
    "function, which is {id}"
)
_COMPOSITION = (
    "F = sum_{{i=1}}^{{10}} w_i (2000 f_i(z_i)/f_max_i + 100 (i - 1)) + f_bias, "
    "z_i = ((x - o_i)/lambda_i) M_i, f_max_i = f_i((5/lambda_i) (1, ..., 1) M_i), "
    "w_i = exp(-|x - o_i|^2/(2 D sigma_i^2)), every w_i but the largest times "
    "(1 - max_j w_j^10), then normalised to sum 1; o_i = rows 1..10 of the shift file; {rest}"
)
_EDGE = "edited onto the bounds by the code (the report's x*, reproduced by the vectors)"

_QUADRATIC = "smooth minimum with positive-definite Hessian: f - f* quadratic at leading order"
_RASTRIGIN = "z^2 + 10 (1 - cos 2 pi z) = (1 + 20 pi^2) z^2 + O(z^4): quadratic"
_WEIGHTS = (
    "near o_1 the weight w_1 is the largest and every other weight carries the factor "
    "1 - w_1^10 = 5 |x - o_1|^2/(D sigma_1^2) + O(|x - o_1|^4), so the other pieces and the "
    "biases 100 (i - 1) add a non-negative quadratic term, never a linear one"
)
_NOISE_BETA = (
    "the noise multiplies f - f* by (1 + {eta} |N|), independent of x, so "
    "v1(t) = E[v1_0(f* + (t - f*)/(1 + {eta} |N|))] = E[(1 + {eta} |N|)^-beta] C (t - f*)^beta: "
    "the noisy function keeps the exponent of the noise-free one, with a constant smaller by "
    "a factor in (0, 1)"
)
_ACKLEY = (
    "Ackley at z = 0: 20 (1 - exp(-0.2 |z|/sqrt(D))) = 4 |z|/sqrt(D) + O(|z|^2) is a cone "
    "(degree 1); its cosine term adds only O(|z|^2)"
)
_WEIERSTRASS_UNKNOWN = (
    "unknown: no single power law near x*. {first}The k <= 20 Weierstrass sum is smooth, so f - f* "
    "is quadratic, but only while 3^20 |z| << 1: measured degree 1.8-2.0 for |x - x*| in "
    "[1e-12, 1e-10], f - f* below about {low}. Above, the sum is Hoelder with exponent "
    "log 2/log 3 = 0.63 (self-similar under z -> 3 z, f -> 2 f) and the measured degree is "
    "0.63-0.66 for |x - x*| in [1e-9, 1e-2] (f - f* up to about {high}), i.e. beta ~ D log 3/"
    "log 2 there, with log-periodic wiggles. Estimate the tail from samples"
)


def _unknown(reason: str) -> Callable[[int], LocalStructure]:
    def local(dim: int) -> LocalStructure:
        return LocalStructure(None, reason)

    return local


@dataclass(frozen=True)
class _Cec2005:
    title: str
    formula: str
    bounds: tuple[float, float]
    local: Callable[[int], LocalStructure]
    notes: tuple[str, ...] = ()


_CEC2005: dict[int, _Cec2005] = {
    1: _Cec2005(
        "Shifted Sphere",
        "f = sum_i z_i^2 - 450, z = x - o",
        (-100.0, 100.0),
        power_law(2, "f - f* = |x - x*|^2 exactly"),
    ),
    2: _Cec2005(
        "Shifted Schwefel's Problem 1.2",
        "f = sum_i (sum_{j<=i} z_j)^2 - 450, z = x - o",
        (-100.0, 100.0),
        power_law(
            2, "f - f* = |L (x - x*)|^2, L the lower-triangular matrix of ones: positive definite"
        ),
    ),
    3: _Cec2005(
        "Shifted Rotated High Conditioned Elliptic",
        "f = sum_i (10^6)^((i-1)/(D-1)) z_i^2 - 450, z = (x - o) M",
        (-100.0, 100.0),
        power_law(2, "f - f* is a positive-definite quadratic form of x - x* (condition 1e6)"),
    ),
    4: _Cec2005(
        "Shifted Schwefel's Problem 1.2 with Noise in Fitness",
        "f = (sum_i (sum_{j<=i} z_j)^2) (1 + 0.4 |N(0, 1)|) - 450, z = x - o",
        (-100.0, 100.0),
        power_law(
            2,
            "noise-free part as F2, |L (x - x*)|^2 positive definite; "
            + _NOISE_BETA.format(eta=0.4),
        ),
    ),
    5: _Cec2005(
        "Schwefel's Problem 2.6 with Global Optimum on Bounds",
        "f = max_i |A_i x - B_i| - 310, B = A o, A a D x D integer matrix",
        (-100.0, 100.0),
        power_law(
            1,
            "f - f* = max_i |A_i (x - x*)| is positively homogeneous of degree 1 exactly (A "
            "non-singular). x* lies on the boundary of the box, which restricts {f - f* <= t} "
            "to the box's tangent cone at x*: a fixed fraction of the polytope, same exponent",
        ),
        (
            f"x*: o = line 1 of schwefel_206_data (data_schwefel_206.txt), {_EDGE}: "
            "o_i = -100 for i <= ceil(D/4), o_i = 100 for i >= floor(3D/4) (1-based)",
            "A is lines 11..10+D of schwefel_206_data (first D columns), not lines 2..D+1 as the "
            "data-file notes say: the code reads nfunc = 10 shift rows before A. Per the "
            "reference vectors' README, the organisers' check values (test_data_func5.txt) agree "
            "with the code and A from line 2 misses them by 8 %",
        ),
    ),
    6: _Cec2005(
        "Shifted Rosenbrock",
        "f = sum_{i<D} (100 (z_i^2 - z_{i+1})^2 + (z_i - 1)^2) + 390, z = x - o + 1",
        (-100.0, 100.0),
        power_law(2, f"{_QUADRATIC} (Rosenbrock's Hessian at z = 1 is positive definite)"),
        ("The code stores o - 1 and evaluates at x - (o - 1); x* is the file's o (z = 1)",),
    ),
    7: _Cec2005(
        "Shifted Rotated Griewank's Function without Bounds",
        "f = sum_i z_i^2/4000 - prod_i cos(z_i/sqrt(i)) + 1 - 180, z = (x - o) M",
        (-600.0, 600.0),
        power_law(2, "Griewank = sum_i z_i^2 (1/4000 + 1/(2 i)) + O(|z|^4) at z = 0: quadratic"),
        (
            "No bounds in the competition (the report initialises in [0, 600]^D, with x* "
            "outside that range). absrank's domain is [-600, 600]^D, Griewank's customary "
            "box, which contains x* (its coordinates lie in [-588.4, -11.9]); ranks are "
            "relative to this domain. The reference vectors sample [0, 600]^D",
        ),
    ),
    8: _Cec2005(
        "Shifted Rotated Ackley's Function with Global Optimum on Bounds",
        "f = 20 + e - 20 exp(-0.2 sqrt(sum_i z_i^2/D)) - exp(sum_i cos(2 pi z_i)/D) - 140, "
        "z = (x - o) M",
        (-32.0, 32.0),
        power_law(
            1,
            f"{_ACKLEY}. Measured degree 1.000 for |x - x*| <= 1e-6 (f - f* below 6e-5 at "
            "D = 10, 2e-5 at D = 30), 1.01-1.04 over [1e-5, 1e-3]. x* lies on the boundary "
            "(odd coordinates at -32): same exponent, smaller constant",
        ),
        (f"x*: o = ackley_func_data, {_EDGE}: o_i = -32 for odd i (1-based)",),
    ),
    9: _Cec2005(
        "Shifted Rastrigin",
        "f = sum_i (z_i^2 - 10 cos(2 pi z_i) + 10) - 330, z = x - o",
        (-5.0, 5.0),
        power_law(2, _RASTRIGIN),
    ),
    10: _Cec2005(
        "Shifted Rotated Rastrigin",
        "f = sum_i (z_i^2 - 10 cos(2 pi z_i) + 10) - 330, z = (x - o) M",
        (-5.0, 5.0),
        power_law(2, _RASTRIGIN),
    ),
    11: _Cec2005(
        "Shifted Rotated Weierstrass",
        "f = sum_i sum_{k=0}^{20} 0.5^k cos(2 pi 3^k (z_i + 0.5)) "
        "- D sum_{k=0}^{20} 0.5^k cos(pi 3^k) + 90, z = (x - o) M",
        (-0.5, 0.5),
        _unknown(_WEIERSTRASS_UNKNOWN.format(first="", low="1e-5", high="5")),
    ),
    12: _Cec2005(
        "Schwefel's Problem 2.13",
        "f = sum_i (A_i sin(alpha) + B_i cos(alpha) - A_i sin(x) - B_i cos(x))^2 - 460, "
        "A, B D x D integer matrices",
        (-math.pi, math.pi),
        power_law(
            2,
            "f - f* = |J (x - alpha)|^2 + O(|x - alpha|^3), J = A diag(cos alpha) - "
            "B diag(sin alpha) non-singular (measured degree 2.000): quadratic. Other global "
            "minimisers (see notes) are non-degenerate zeros too, so v1 sums t^(D/2) terms",
        ),
        (
            "A is lines 1..D, B lines 101..100+D and x* = alpha line 201 of schwefel_213_data "
            "(first D columns each)",
            "x* = alpha is not the only global minimiser: at D = 10, local least squares from "
            "300 random starts found 6 other points of [-pi, pi]^10 where f = f* (A sin x + "
            "B cos x = A sin alpha + B cos alpha has several solutions)",
        ),
    ),
    13: _Cec2005(
        "Shifted Expanded Griewank's plus Rosenbrock's Function (F8F2)",
        "f = sum_i F8(F2(z_i, z_{i+1})) - 130 (cyclic, z_{D+1} = z_1), "
        "F2(u, v) = 100 (u^2 - v)^2 + (u - 1)^2, F8(t) = t^2/4000 - cos(t) + 1, z = x - o + 1",
        (-3.0, 1.0),
        power_law(
            4,
            "F2 = 100 (2 e_i - e_{i+1})^2 + e_i^2 + O(|e|^3) with e = z - 1 is a quadratic and "
            "F8(t) = (1/2 + 1/4000) t^2 + O(t^4) squares it: f - f* = 0.50025 sum_i F2_i^2 + "
            "higher order, positive and homogeneous of degree 4. Measured degree 4.00 over "
            "|x - x*| in [1e-3, 1e-2]; below 1e-4, f - f* is under the float64 resolution of "
            "f* = -130 (2.8e-14)",
        ),
        ("The code stores o - 1 and evaluates at x - (o - 1); x* is the file's o (z = 1)",),
    ),
    14: _Cec2005(
        "Shifted Rotated Expanded Scaffer's F6",
        "f = sum_i F(z_i, z_{i+1}) - 300 (cyclic), F(u, v) = 0.5 + (sin^2(sqrt(u^2 + v^2)) "
        "- 0.5)/(1 + 0.001 (u^2 + v^2))^2, z = (x - o) M",
        (-100.0, 100.0),
        power_law(2, "F(u, v) = 1.001 (u^2 + v^2) + O(r^4), so f - f* = 2.002 |z|^2 + O(|z|^4)"),
    ),
}

_CF1 = (
    "f_1,2 Rastrigin, f_3,4 Weierstrass (minus its value at 0), f_5,6 Griewank, f_7,8 Ackley, "
    "f_9,10 Sphere; sigma_i = 1; lambda = (1, 1, 10, 10, 1/12, 1/12, 5/32, 5/32, 1/20, 1/20); "
    "f_bias = 120"
)
_CF2 = (
    "f_1,2 Ackley, f_3,4 Rastrigin, f_5,6 Sphere, f_7,8 Weierstrass, f_9,10 Griewank; "
    "sigma = (1, 2, 1.5, 1.5, 1, 1, 1.5, 1.5, 2, 2); lambda = (5/16, 5/32, 2, 1, 1/10, 1/20, "
    "20, 10, 1/6, 1/12); o_10 = 0; M_i from hybrid_func2_M_D; f_bias = 10"
)
_CF3 = (
    "f_1,2 expanded Scaffer F6, f_3,4 Rastrigin, f_5,6 F8F2, f_7,8 Weierstrass, f_9,10 "
    "Griewank; sigma = (1, 1, 1, 1, 1, 2, 2, 2, 2, 2); lambda = (1/4, 1/20, 5, 1, 5, 1, 50, "
    "10, 1/8, 1/40); f_bias = 360"
)
_CF4 = (
    "f_1 Weierstrass, f_2 expanded Scaffer F6, f_3 F8F2, f_4 Ackley, f_5 Rastrigin, f_6 "
    "Griewank, f_7 non-continuous expanded Scaffer F6, f_8 non-continuous Rastrigin (z_j -> "
    "round(2 z_j)/2 where |z_j| >= 0.5), f_9 high-conditioned elliptic, f_10 Sphere times "
    "(1 + 0.1 |N(0, 1)|); sigma_i = 2; lambda = (10, 1/4, 1, 5/32, 1, 1/20, 1/10, 1, 1/20, "
    "1/20); M_i from hybrid_func4_M_D; f_bias = 260"
)
_F24_FIRST = (
    "The first piece is the Weierstrass function of ((x - o_1)/10) M_1 (as F11); the other "
    "pieces enter with weights O(|x - o_1|^2) only. "
)
_ORIGIN = "The code sets the 10th optimum o_10 to the origin, as the report says"
_ACKLEY_RESIDUE = (
    "f(x*) = f* - 4.1e-14, as in the code: its Ackley 20 + e - 20 exp(..) - exp(..) leaves "
    "-4.4e-16 at z = 0, scaled by 2000/f_max_1 (kept, not rounded away)"
)
_F24_NORM = (
    "The code also computes f_max of the noisy sphere piece with its own noise, "
    "(1 + 0.1 |N|) drawn once when it initialises, i.e. one random scale per run; absrank "
    "fixes it at the noise-free value (N = 0), so the function does not depend on a "
    "start-up draw"
)


def _composition_local(first: str) -> Callable[[int], LocalStructure]:
    return power_law(2, f"first piece {first}: quadratic at o_1; {_WEIGHTS}")


def _cf2_local(extra: str) -> Callable[[int], LocalStructure]:
    return power_law(
        1,
        f"first piece Ackley of ((x - o_1)/lambda_1) M_1: {_ACKLEY}; {_WEIGHTS}, of higher "
        f"order. {extra}. f(x*) is 4.1e-14 below f* (rounding), negligible from f - f* = 1e-12",
    )


_CEC2005.update(
    {
        15: _Cec2005(
            "Hybrid Composition Function 1",
            _COMPOSITION.format(rest=_CF1 + "; M_i = I (no rotation)"),
            (-5.0, 5.0),
            _composition_local(f"Rastrigin of x - o_1, {_RASTRIGIN}"),
        ),
        16: _Cec2005(
            "Rotated Hybrid Composition Function 1",
            _COMPOSITION.format(rest=_CF1 + "; M_i from hybrid_func1_M_D"),
            (-5.0, 5.0),
            _composition_local(f"Rastrigin of (x - o_1) M_1, {_RASTRIGIN}"),
        ),
        17: _Cec2005(
            "Rotated Hybrid Composition Function 1 with Noise in Fitness",
            "F = (F16(x) - 120) (1 + 0.2 |N(0, 1)|) + 120",
            (-5.0, 5.0),
            power_law(
                2,
                f"noise-free part as F16 (first piece Rastrigin, quadratic; {_WEIGHTS}); "
                + _NOISE_BETA.format(eta=0.2),
            ),
        ),
        18: _Cec2005(
            "Rotated Hybrid Composition Function 2",
            _COMPOSITION.format(rest=_CF2),
            (-5.0, 5.0),
            _cf2_local("Measured degree 1.000 for |x - x*| <= 1e-6, 1.00-1.08 up to 1e-2"),
            (_ORIGIN, _ACKLEY_RESIDUE),
        ),
        19: _Cec2005(
            "Rotated Hybrid Composition Function 2 with a Narrow Basin for the Global Optimum",
            _COMPOSITION.format(rest=_CF2 + ", except sigma_1 = 0.1, lambda_1 = 0.1 * 5/32"),
            (-5.0, 5.0),
            _cf2_local(
                "Measured degree 1.000 for |x - x*| <= 1e-7, 1.00-1.01 over [1e-6, 1e-4], "
                "1.04-1.07 over [1e-5, 1e-3] (the narrow basin, lambda_1 = 5/320, shortens "
                "the linear range)"
            ),
            (_ORIGIN, _ACKLEY_RESIDUE),
        ),
        20: _Cec2005(
            "Rotated Hybrid Composition Function 2 with the Global Optimum on the Bounds",
            _COMPOSITION.format(rest=_CF2 + ", except o_1,2j = 5 (j = 1..floor(D/2))"),
            (-5.0, 5.0),
            _cf2_local(
                "Measured degree 1.000 for |x - x*| <= 1e-6, 1.00-1.08 up to 1e-2. x* lies "
                "on the boundary (even coordinates at 5): same exponent, smaller constant"
            ),
            (
                f"x*: o_1 = line 1 of hybrid_func2_data, {_EDGE}: o_1,i = 5 for even i (1-based)",
                _ORIGIN,
                _ACKLEY_RESIDUE,
            ),
        ),
        21: _Cec2005(
            "Rotated Hybrid Composition Function 3",
            _COMPOSITION.format(rest=_CF3 + "; M_i from hybrid_func3_M_D"),
            (-5.0, 5.0),
            _composition_local("expanded Scaffer F6 of 4 (x - o_1) M_1, 2.002 |z|^2 + O(|z|^4)"),
        ),
        22: _Cec2005(
            "Rotated Hybrid Composition Function 3 with High Condition Number Matrix",
            _COMPOSITION.format(rest=_CF3 + "; M_i from hybrid_func3_HM_D (high condition)"),
            (-5.0, 5.0),
            _composition_local(
                "expanded Scaffer F6 of 4 (x - o_1) M_1 with an ill-conditioned M_1: "
                "2.002 |z|^2 + O(|z|^4), measured degree 2.00 over |x - x*| in [1e-9, 1e-2]"
            ),
        ),
        23: _Cec2005(
            "Non-Continuous Rotated Hybrid Composition Function 3",
            "F = F21(y), y_i = x_i if |x_i - o_1,i| < 0.5, else round(2 x_i)/2 (halves away "
            "from zero); the weights are taken at y too",
            (-5.0, 5.0),
            _composition_local(
                "as F21: within 0.5 of o_1 in every coordinate nothing is rounded and F23 = F21, "
                "and rounded points stay at least 0.25 from o_1 in some coordinate"
            ),
            (
                "Rounding as in the code: a = (int)(2 x), a/2 if |2 x - a| < 0.5, else "
                "(a -+ 1)/2; the code's int cast overflows for |x| >= 2^30, here it is exact",
            ),
        ),
        24: _Cec2005(
            "Rotated Hybrid Composition Function 4",
            _COMPOSITION.format(rest=_CF4),
            (-5.0, 5.0),
            _unknown(_WEIERSTRASS_UNKNOWN.format(first=_F24_FIRST, low="2e-3", high="3e2")),
            (_F24_NORM,),
        ),
        25: _Cec2005(
            "Rotated Hybrid Composition Function 4 without Bounds",
            _COMPOSITION.format(rest=_CF4) + " (F24 without bounds)",
            (-5.0, 5.0),
            _unknown(_WEIERSTRASS_UNKNOWN.format(first=_F24_FIRST, low="2e-3", high="3e2")),
            (
                "No bounds in the competition (the report initialises in [2, 5]^D, with x* "
                "outside that range). absrank's domain is F24's [-5, 5]^D, which contains x* "
                "(its coordinates lie in [-4.5, 0]); with it, F25 is F24. The reference vectors "
                "sample [2, 5]^D",
                _F24_NORM,
            ),
        ),
    }
)


def _names() -> tuple[str, ...]:
    names: list[str] = []
    for fid in _CEC2005:
        names.append(f"f{fid}")
        if fid in NOISY:
            names.append(f"f{fid}{NOISE_FREE_SUFFIX}")
    return tuple(names)


def _source(fid: int) -> str:
    c_name = "f24_f25" if fid in (24, 25) else f"f{fid}"
    return _SOURCE.format(fid=fid, cfunc=f"calc_benchmark_func_{c_name}", cinit=c_name)


def _build(name: str, instance: int | None, dim: int) -> BenchmarkFunction:
    noise_free = name.endswith(NOISE_FREE_SUFFIX)
    fid = int(name.removesuffix(NOISE_FREE_SUFFIX)[1:])
    spec = _CEC2005[fid]
    built = model(fid, dim)
    flags: tuple[str, ...] = ()
    notes, title = spec.notes, spec.title
    if fid in NOISY:
        other_name = f"f{fid}" if noise_free else name + NOISE_FREE_SUFFIX
        other = format_id("cec2005", other_name, None, dim)
        if noise_free:
            notes = (_NOISE_FREE.format(fid=fid, id=other), *notes)
            flags, title = ("noise-free",), f"{title} (noise switched off)"
        else:
            notes = (_NOISE.format(id=other), *notes)
            flags = ("noisy",)
    return BenchmarkFunction(
        id=format_id("cec2005", name, None, dim),
        suite="cec2005",
        name=name,
        title=title,
        dim=dim,
        instance=None,
        lower=np.full(dim, spec.bounds[0]),
        upper=np.full(dim, spec.bounds[1]),
        x_opt=built.x_opt,
        f_opt=built.bias,
        f_max=None,
        local=spec.local(dim),
        source=_source(fid),
        formula=spec.formula + ("  [noise switched off: N = 0]" if noise_free else ""),
        analytic="sphere" if fid == 1 else None,
        kernel=built.kernel,
        notes=(*notes, _PRECISION),
        flags=flags,
        noise=None if noise_free else built.noisy,
    )


SUITE = register_suite(
    Suite(
        name="cec2005",
        id_form="cec2005/{name}/d{dim}",
        names=_names(),
        dims=DIMS,
        accepted_dims=lambda name: DIMS,
        instances=None,
        listed_instances=(),
        build=_build,
    )
)
