"""The 24 noiseless BBOB functions of COCO, ids ``bbob/f{1..24}/i{instance}/d{dim}``.

Definitions are those of Hansen et al. [1]_; values come from COCO's own C core through
``cocoex.BareProblem``, which evaluates a whole ``(n, d)`` batch per call. ``cocoex`` checks
neither the width nor the finiteness of the array and crashes for f15-type rotations at
``d >= 55``, so only validated arrays reach it (:meth:`BenchmarkFunction.evaluate`) and only
COCO's dimensions are accepted. Problem objects are cached per process; COCO keeps scratch
buffers inside them, so calls are serialised by a lock: parallelise with processes.

Instances: any ``1 <= instance <= MAX_INSTANCE``. COCO derives an instance's random seeds
from ``function + 10000 * instance`` (plus up to 1000000) held in a C ``long``; up to
``MAX_INSTANCE`` every seed fits 32 bits, so the instance is the same on every platform
(``long`` is 32-bit on Windows) and in IOHexperimenter, whose seeds overflow from instance
214749 on (cocoex itself refuses instances >= 2**31).

Local structure: ``beta`` is registered when ``f - f*`` is a power of the distance to ``x*``
(possibly anisotropic, possibly times a bounded oscillating factor such as ``T_osz``'s) for
every ``f - f*`` from COCO's final target ``1e-8`` down to 0. Where the exponent changes with
scale in that range (f16, f23) ``beta`` is None. Every value is measured numerically in
``tests/unit/domain/test_functions_bbob.py``.

References
----------
.. [1] N. Hansen, S. Finck, R. Ros, A. Auger (2009). Real-parameter black-box optimization
   benchmarking 2009: noiseless functions definitions. INRIA Research Report RR-6829.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass

import cocoex
import numpy as np

from app.domain.functions.registry import (
    BenchmarkFunction,
    FloatArray,
    LocalStructure,
    Suite,
    format_id,
    power_law,
    register_suite,
)

DIMS = (2, 3, 5, 10, 20, 40)
LISTED_INSTANCES = tuple(range(1, 16))
MAX_INSTANCE = 214648  # (2**31 - 1 - 1000000 - 24) // 10000
BOUNDS = (-5.0, 5.0)

_SOURCE = (
    "N. Hansen, S. Finck, R. Ros, A. Auger (2009), Real-parameter black-box optimization "
    "benchmarking 2009: noiseless functions definitions, INRIA RR-6829, function f{fid}; "
    "evaluated by COCO's C core (coco-experiment, cocoex.BareProblem), cross-checked with "
    "IOHexperimenter (ioh)"
)
_NOTATION = "  [T_osz, T_asy^b, Lambda^a, f_pen, rotations R and Q, f_opt and x_opt as in RR-6829]"
_TOSZ = (
    "T_osz(u) = u exp(0.049 (sin(c1 log|u|) + sin(c2 log|u|))) only adds a bounded "
    "log-periodic factor in [exp(-0.098), exp(0.098)]"
)
_QUADRATIC = "smooth non-degenerate minimum, f - f* quadratic at leading order"
_RASTRIGIN = (
    "Rastrigin term 10 (1 - cos 2 pi z) + z^2 = (1 + 20 pi^2) z^2 + O(z^4) and "
    "T_asy^b(u) = u + O(u^1.5 log u): quadratic inside the central basin; " + _TOSZ
)
_SCHAFFER = (
    "(mean_i sqrt(s_i))^2 with s_i = |(z_i, z_i+1)| is positively homogeneous of degree 1 and "
    "the factor (1 + sin^2(50 s_i^0.2))^2 stays in [1, 4] (it tends to 1 only for s < 1e-14), "
    "so f - f* = |x - x*| times a bounded factor. Measured: mean degree 1.00-1.02 over "
    "|x - x*| in [1e-12, 0.1], (f - f*)/|x - x*| varies by less than 10^0.7 over "
    "[1e-13, 1e-2], but the local degree is 1.05-1.11 over [1e-13, 1e-7] as the factor "
    "relaxes: v1 may deviate from a pure t^d law by up to a factor 4^d"
)
_GALLAGHER = (
    "10 - 10 exp(-q / (2 D)) = 5 q / D + O(q^2) with q positive definite at the best peak, "
    "through T_osz (bounded log-periodic factor), then squared: degree 4 ("
    "f21/f22 grow as s^4)"
)


def _linear_slope(dim: int) -> LocalStructure:
    return LocalStructure(
        float(dim),
        "x* is a corner of [-5, 5]^d and inside the box f - f* = sum_i |s_i| (5 - |x_i|), "
        "linear (degree 1) in every inward direction: {f - f* <= t} is a corner simplex of "
        "volume t^d / (d! prod_i |s_i|) for t - f* <= 10, so beta = d = " + str(dim),
    )


def _step_ellipsoid(dim: int) -> LocalStructure:
    return LocalStructure(
        1.0,
        "tilted plateau, not an atom: with z_hat = Lambda^10 R (x - x*), while every "
        "|z_hat_i| < 0.05 the rounded z is 0 and f - f* = 0.1 |z_hat_1| / 10^4 (measured), so "
        "{f - f* <= t} is a slab |z_hat_1| <= 10^5 (t - f*) through that plateau box: v1 is "
        "exactly linear (beta = 1) for t - f* <= 5e-7, then constant (the plateau box volume) "
        "up to the first step at t - f* >= 1e-3. {f = f*} is a hyperplane piece: atom = 0",
    )


def _sharp_ridge(dim: int) -> LocalStructure:
    beta = dim - 0.5
    return LocalStructure(
        beta,
        "sharp ridge z_1^2 + 100 |z_2..d| with z = Q Lambda^10 R (x - x*): scaling z_1 by "
        "s^(1/2) and z_2..z_d by s multiplies f - f* by s exactly, so {f - f* <= t} has extent "
        f"t^(1/2) along the ridge and t across it: beta = 1/2 + (d - 1) = {beta:g}",
    )


def _different_powers(dim: int) -> LocalStructure:
    beta = float(np.sum(2.0 / (2.0 + 4.0 * np.arange(dim) / (dim - 1))))
    return LocalStructure(
        beta,
        "sqrt(sum_i |z_i|^p_i), p_i = 2 + 4 (i - 1)/(d - 1), z = R (x - x*): scaling z_i by "
        "s^(2/p_i) multiplies f - f* by s exactly, so {f - f* <= t} has extent t^(2/p_i) "
        f"along z_i and beta = sum_i 2/p_i = {beta:.6g}",
    )


def _weierstrass(dim: int) -> LocalStructure:
    return LocalStructure(
        None,
        "no single power law: for |x - x*| above about 1e-5 the Weierstrass sum is Hoelder "
        "with exponent log 2 / log 3 and is cubed, so f - f* grows about as |x - x*|^1.89 "
        "(beta ~ d/1.89, with log-periodic wiggles); the sum stops at k = 11, so below that "
        "it is smooth and f - f* ~ |x - x*|^6 (beta = d/6), but only for f - f* below about "
        "1e-10, under COCO's final target 1e-8 and at the limit of double precision "
        "(measured). Estimate the tail from samples",
    )


def _katsuura(dim: int) -> LocalStructure:
    return LocalStructure(
        None,
        "no single power law in reach: for |z_i| < 2^-33 every 2^j z_i rounds to 0, the inner "
        "sum is 32 |z_i| and f - f* ~ (3200/D^3.2) sum_i i |z_i| (degree 1, beta = d), but "
        "only for f - f* below about 1e-7 (d = 2) to 2e-9 (d = 40), mostly under COCO's final "
        "target 1e-8; above, the Takagi-type sum is |z| log(1/|z|)-like and the measured "
        "degree drifts (0.92-0.94 over |x - x*| in [1e-9, 1e-3]). Estimate the tail from "
        "samples",
    )


@dataclass(frozen=True)
class _Bbob:
    title: str
    formula: str
    local: Callable[[int], LocalStructure]


_BBOB: dict[int, _Bbob] = {
    1: _Bbob("Sphere", "f = |z|^2 + f_opt, z = x - x_opt", power_law(2, "f - f* = |x - x*|^2")),
    2: _Bbob(
        "Ellipsoid (separable)",
        "f = sum_i 10^(6 (i-1)/(D-1)) z_i^2 + f_opt, z = T_osz(x - x_opt)",
        power_law(2, f"{_QUADRATIC}; {_TOSZ}"),
    ),
    3: _Bbob(
        "Rastrigin (separable)",
        "f = 10 (D - sum_i cos(2 pi z_i)) + |z|^2 + f_opt, "
        "z = Lambda^10 T_asy^0.2(T_osz(x - x_opt))",
        power_law(2, _RASTRIGIN),
    ),
    4: _Bbob(
        "Bueche-Rastrigin",
        "f = 10 (D - sum_i cos(2 pi z_i)) + sum_i z_i^2 + 100 f_pen(x) + f_opt, "
        "z_i = s_i T_osz(x_i - x_opt_i), s_i = 10 * 10^((i-1)/(2(D-1))) if z_i > 0 and i odd, "
        "else 10^((i-1)/(2(D-1)))",
        power_law(2, f"{_RASTRIGIN}; the orthant-wise scaling s_i keeps it homogeneous"),
    ),
    5: _Bbob(
        "Linear slope",
        "f = sum_i (5 |s_i| - s_i z_i) + f_opt, z_i = x_i if x_opt_i x_i < 5^2 else x_opt_i, "
        "s_i = sign(x_opt_i) 10^((i-1)/(D-1)), x_opt = 5 * (random signs)",
        _linear_slope,
    ),
    6: _Bbob(
        "Attractive sector",
        "f = T_osz(sum_i (s_i z_i)^2)^0.9 + f_opt, z = Q Lambda^10 R (x - x_opt), "
        "s_i = 10^2 if z_i x_opt_i > 0 else 1",
        power_law(1.8, f"(sum_i (s_i z_i)^2)^0.9, orthant-wise quadratic to the 0.9; {_TOSZ}"),
    ),
    7: _Bbob(
        "Step ellipsoid",
        "f = 0.1 max(|z_hat_1| / 10^4, sum_i 10^(2 (i-1)/(D-1)) z_i^2) + f_pen(x) + f_opt, "
        "z_hat = Lambda^10 R (x - x_opt), z_tilde_i = floor(0.5 + z_hat_i) if |z_hat_i| > 0.5 "
        "else floor(0.5 + 10 z_hat_i) / 10, z = Q z_tilde",
        _step_ellipsoid,
    ),
    8: _Bbob(
        "Rosenbrock (original)",
        "f = sum_{i<D} (100 (z_i^2 - z_{i+1})^2 + (z_i - 1)^2) + f_opt, "
        "z = max(1, sqrt(D)/8) (x - x_opt) + 1",
        power_law(2, f"{_QUADRATIC} (Rosenbrock Hessian at z = 1 is positive definite)"),
    ),
    9: _Bbob(
        "Rosenbrock (rotated)",
        "f = sum_{i<D} (100 (z_i^2 - z_{i+1})^2 + (z_i - 1)^2) + f_opt, "
        "z = max(1, sqrt(D)/8) R x + 1/2",
        power_law(2, f"{_QUADRATIC} (Rosenbrock Hessian at z = 1 is positive definite)"),
    ),
    10: _Bbob(
        "Ellipsoid (rotated)",
        "f = sum_i 10^(6 (i-1)/(D-1)) z_i^2 + f_opt, z = T_osz(R (x - x_opt))",
        power_law(2, f"{_QUADRATIC}; {_TOSZ}"),
    ),
    11: _Bbob(
        "Discus",
        "f = 10^6 z_1^2 + sum_{i>1} z_i^2 + f_opt, z = T_osz(R (x - x_opt))",
        power_law(2, f"{_QUADRATIC}; {_TOSZ}"),
    ),
    12: _Bbob(
        "Bent cigar",
        "f = z_1^2 + 10^6 sum_{i>1} z_i^2 + f_opt, z = R T_asy^0.5(R (x - x_opt))",
        power_law(2, f"{_QUADRATIC} (T_asy^0.5(u) = u + O(u^1.5 log u))"),
    ),
    13: _Bbob(
        "Sharp ridge",
        "f = z_1^2 + 100 sqrt(sum_{i>1} z_i^2) + f_opt, z = Q Lambda^10 R (x - x_opt)",
        _sharp_ridge,
    ),
    14: _Bbob(
        "Different powers",
        "f = sqrt(sum_i |z_i|^(2 + 4 (i-1)/(D-1))) + f_opt, z = R (x - x_opt)",
        _different_powers,
    ),
    15: _Bbob(
        "Rastrigin (rotated)",
        "f = 10 (D - sum_i cos(2 pi z_i)) + |z|^2 + f_opt, "
        "z = R Lambda^10 Q T_asy^0.2(T_osz(R (x - x_opt)))",
        power_law(2, _RASTRIGIN),
    ),
    16: _Bbob(
        "Weierstrass",
        "f = 10 ((1/D) sum_i sum_{k=0}^{11} 2^-k cos(2 pi 3^k (z_i + 1/2)) - f_0)^3 "
        "+ (10/D) f_pen(x) + f_opt, z = R Lambda^(1/100) Q T_osz(R (x - x_opt)), "
        "f_0 = sum_{k=0}^{11} 2^-k cos(pi 3^k)",
        _weierstrass,
    ),
    17: _Bbob(
        "Schaffers F7",
        "f = ((1/(D-1)) sum_{i<D} (sqrt(s_i) + sqrt(s_i) sin^2(50 s_i^(1/5))))^2 "
        "+ 10 f_pen(x) + f_opt, z = Lambda^10 Q T_asy^0.5(R (x - x_opt)), "
        "s_i = sqrt(z_i^2 + z_{i+1}^2)",
        power_law(1, _SCHAFFER),
    ),
    18: _Bbob(
        "Schaffers F7 (moderately ill-conditioned)",
        "as f17 with z = Lambda^1000 Q T_asy^0.5(R (x - x_opt))",
        power_law(1, _SCHAFFER),
    ),
    19: _Bbob(
        "Composite Griewank-Rosenbrock F8F2",
        "f = (10/(D-1)) sum_{i<D} (s_i/4000 - cos(s_i)) + 10 + f_opt, "
        "z = max(1, sqrt(D)/8) R x + 0.5, s_i = 100 (z_i^2 - z_{i+1})^2 + (z_i - 1)^2",
        power_law(
            2,
            "s/4000 - cos s + 1 = s/4000 + s^2/2 + O(s^4) with s_i the Rosenbrock terms, "
            "quadratic at z = 1: f - f* is quadratic while f - f* is below about 1e-6; above, "
            "the s^2/2 term makes it grow about as |x - x*|^4 (measured)",
        ),
    ),
    20: _Bbob(
        "Schwefel x sin(sqrt(x))",
        "f = -(1/(100 D)) sum_i z_i sin(sqrt|z_i|) + 4.189828872724339 + 100 f_pen(z/100) "
        "+ f_opt, x_hat = 2 (random signs) * x, z_hat_1 = x_hat_1, z_hat_{i+1} = x_hat_{i+1} "
        "+ 0.25 (x_hat_i - 2 |x_opt_i|), z = 100 (Lambda^10 (z_hat - 2|x_opt|) + 2|x_opt|), "
        "x_opt = 4.2096874633/2 * (random signs)",
        power_law(2, "z sin(sqrt|z|) has a non-degenerate maximum at |z| = 420.97: quadratic"),
    ),
    21: _Bbob(
        "Gallagher's Gaussian 101-me peaks",
        "f = T_osz(10 - max_{i=1..101} w_i exp(-(1/(2D)) (x - y_i)^T R^T C_i R (x - y_i)))^2 "
        "+ f_pen(x) + f_opt, w_1 = 10, w_i = 1.1 + 8 (i-2)/99",
        power_law(4, _GALLAGHER),
    ),
    22: _Bbob(
        "Gallagher's Gaussian 21-hi peaks",
        "f = T_osz(10 - max_{i=1..21} w_i exp(-(1/(2D)) (x - y_i)^T R^T C_i R (x - y_i)))^2 "
        "+ f_pen(x) + f_opt, w_1 = 10, w_i = 1.1 + 8 (i-2)/19",
        power_law(4, _GALLAGHER),
    ),
    23: _Bbob(
        "Katsuura",
        "f = (10/D^2) prod_i (1 + i sum_{j=1}^{32} |2^j z_i - [2^j z_i]| / 2^j)^(10/D^1.2) "
        "- 10/D^2 + f_pen(x) + f_opt, z = Q Lambda^100 R (x - x_opt)",
        _katsuura,
    ),
    24: _Bbob(
        "Lunacek bi-Rastrigin",
        "f = min(sum_i (x_hat_i - mu_0)^2, D + s sum_i (x_hat_i - mu_1)^2) "
        "+ 10 (D - sum_i cos(2 pi z_i)) + 10^4 f_pen(x) + f_opt, x_hat = 2 sign(x_opt) x, "
        "z = Q Lambda^100 R (x_hat - mu_0), mu_0 = 2.5, mu_1 = -sqrt((mu_0^2 - 1)/s), "
        "s = 1 - 1/(2 sqrt(D + 20) - 8.2)",
        power_law(2, f"{_QUADRATIC} (first branch 4 |x - x*|^2 plus a Rastrigin term)"),
    ),
}


@functools.lru_cache(maxsize=1024)
def _problem(fid: int, dim: int, instance: int) -> cocoex.BareProblem:
    return cocoex.BareProblem("bbob", fid, dim, instance)


_COCO_LOCK = threading.Lock()


def _evaluate(fid: int, dim: int, instance: int, x: FloatArray) -> FloatArray:
    """Evaluate a validated C-contiguous float64 (n, dim) batch in COCO; returns (n,)."""
    with _COCO_LOCK:
        return np.asarray(_problem(fid, dim, instance)(x), dtype=np.float64)


def _build(name: str, instance: int | None, dim: int) -> BenchmarkFunction:
    if instance is None:  # the registry validates ids before building
        raise ValueError("bbob functions need an instance")
    fid = int(name[1:])
    spec = _BBOB[fid]
    problem = _problem(fid, dim, instance)
    return BenchmarkFunction(
        id=format_id("bbob", name, instance, dim),
        suite="bbob",
        name=name,
        title=spec.title,
        dim=dim,
        instance=instance,
        lower=np.full(dim, BOUNDS[0]),
        upper=np.full(dim, BOUNDS[1]),
        x_opt=np.array(problem.best_parameter(), dtype=np.float64),
        f_opt=float(problem.best_value()),
        f_max=None,
        local=spec.local(dim),
        source=_SOURCE.format(fid=fid),
        formula=spec.formula + _NOTATION,
        analytic="sphere" if fid == 1 else None,
        kernel=functools.partial(_evaluate, fid, dim, instance),
    )


SUITE = register_suite(
    Suite(
        name="bbob",
        id_form="bbob/f{1..24}/i{instance}/d{dim}",
        names=tuple(f"f{fid}" for fid in _BBOB),
        dims=DIMS,
        accepted_dims=lambda name: DIMS,
        instances=range(1, MAX_INSTANCE + 1),
        listed_instances=LISTED_INSTANCES,
        build=_build,
    )
)
