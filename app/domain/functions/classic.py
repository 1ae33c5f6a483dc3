"""Classic analytic benchmark functions, ids ``classic/{name}/d{dim}``.

Every function is written so that each term vanishes exactly at ``x*`` in floating point,
hence ``f(x*) == f*`` bit for bit (for example Ackley as ``-20 expm1(-0.2 r) - e expm1(m - 1)``
instead of ``20 + e - 20 exp(-0.2 r) - exp(m)``, which leaves ``4.4e-16`` at the origin).
Domains are the customary ones of the Virtual Library of Simulation Experiments [1]_ unless
the function's own source fixes one.

References
----------
.. [1] S. Surjanovic, D. Bingham. Virtual Library of Simulation Experiments: Test Functions
   and Datasets. Simon Fraser University, https://www.sfu.ca/~ssurjano/optimization.html.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.domain.functions.registry import (
    BenchmarkFunction,
    FloatArray,
    Kernel,
    LocalStructure,
    Suite,
    format_id,
    power_law,
    register_suite,
)

LISTED_DIMS = (2, 3, 5, 10, 20, 40)
MAX_DIM = 100

SCHWEFEL_X_OPT = 420.96874635998202731
"""Maximiser of ``x sin(sqrt|x|)`` on [0, 500] (root of ``tan u = -u/2``, ``u = sqrt x``)."""
SCHWEFEL_PEAK = 418.98288727243370627
"""``x sin(sqrt x)`` at :data:`SCHWEFEL_X_OPT`, correctly rounded. The often printed
``418.982887272433`` (or ``418.9829``) is below the true peak and makes ``f(x*) < 0``."""
RASTRIGIN_PEAK = 40.35329019383896
"""Maximum of ``x**2 + 10 (1 - cos 2 pi x)`` on [-5.12, 5.12], at ``x = +-4.522993659584519``."""

_SMOOTH = "smooth minimum with positive-definite Hessian: f - f* = q(x - x*) + o(|x - x*|^2)"


@dataclass(frozen=True)
class _Classic:
    title: str
    formula: str
    source: str
    kernel: Kernel
    bounds: tuple[float, float]
    x_opt: float  # every coordinate of the minimiser
    f_max: Callable[[int], float] | None
    local: Callable[[int], LocalStructure]
    analytic: str | None = None
    min_dim: int = 1


_CLASSIC: dict[str, _Classic] = {}


def _classic(name: str, **spec: Any) -> Callable[[Kernel], Kernel]:
    """Register the decorated kernel as ``classic/{name}`` with the given metadata."""

    def register(kernel: Kernel) -> Kernel:
        _CLASSIC[name] = _Classic(kernel=kernel, **spec)
        return kernel

    return register


def _squares(x: FloatArray) -> FloatArray:
    result: FloatArray = np.sum(x * x, axis=1)
    return result


def _ellipsoid_weights(dim: int) -> FloatArray:
    return 10.0 ** (6.0 * np.arange(dim) / max(dim - 1, 1))


@_classic(
    "sphere",
    title="Sphere",
    formula="f(x) = sum_i x_i^2",
    source="K. A. De Jong (1975), An analysis of the behavior of a class of genetic adaptive "
    "systems, PhD thesis, Univ. Michigan, function F1; domain [-5.12, 5.12]^d as in [1] "
    "(Surjanovic & Bingham, Virtual Library of Simulation Experiments)",
    bounds=(-5.12, 5.12),
    x_opt=0.0,
    f_max=lambda d: d * 5.12**2,
    local=power_law(2, "f - f* = |x - x*|^2 exactly"),
    analytic="sphere",
)
def sphere(x: FloatArray) -> FloatArray:
    """Sphere ``sum_i x_i**2``; x : (n, d) -> (n,)."""
    return _squares(x)


@_classic(
    "ellipsoid",
    title="Ellipsoid (condition 1e6)",
    formula="f(x) = sum_i 10^(6 (i-1)/(d-1)) x_i^2  (weight 1 when d = 1)",
    source="N. Hansen, A. Ostermeier (2001), Completely derandomized self-adaptation in "
    "evolution strategies, Evol. Comput. 9(2):159-195, f_elli; domain [-5.12, 5.12]^d as the "
    "sphere's",
    bounds=(-5.12, 5.12),
    x_opt=0.0,
    f_max=lambda d: 5.12**2 * float(np.sum(_ellipsoid_weights(d))),
    local=power_law(2, "f - f* is a positive-definite quadratic form"),
)
def ellipsoid(x: FloatArray) -> FloatArray:
    """Ellipsoid ``sum_i 10**(6 (i-1)/(d-1)) x_i**2``; x : (n, d) -> (n,)."""
    result: FloatArray = np.sum(_ellipsoid_weights(x.shape[1]) * (x * x), axis=1)
    return result


@_classic(
    "rastrigin",
    title="Rastrigin",
    formula="f(x) = 10 d + sum_i (x_i^2 - 10 cos(2 pi x_i))",
    source="L. A. Rastrigin (1974), Systems of Extremal Control, Nauka; d-dimensional form "
    "H. Muehlenbein, M. Schomisch, J. Born (1991), Parallel Computing 17:619-632; domain "
    "[-5.12, 5.12]^d",
    bounds=(-5.12, 5.12),
    x_opt=0.0,
    f_max=lambda d: d * RASTRIGIN_PEAK,
    local=power_law(2, f"{_SMOOTH} (x^2 + 10(1 - cos 2 pi x) = (1 + 20 pi^2) x^2 + O(x^4))"),
)
def rastrigin(x: FloatArray) -> FloatArray:
    """Rastrigin as ``sum_i x_i**2 + 10 (1 - cos(2 pi x_i))``; x : (n, d) -> (n,)."""
    result: FloatArray = np.sum(x * x + 10.0 * (1.0 - np.cos(2.0 * np.pi * x)), axis=1)
    return result


@_classic(
    "rosenbrock",
    title="Rosenbrock",
    formula="f(x) = sum_{i=1}^{d-1} (100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2)",
    source="H. H. Rosenbrock (1960), An automatic method for finding the greatest or least "
    "value of a function, Comput. J. 3(3):175-184; d-dimensional chained form and domain "
    "[-5, 10]^d as in [1] (Surjanovic & Bingham)",
    bounds=(-5.0, 10.0),
    x_opt=1.0,
    f_max=None,
    local=power_law(2, f"{_SMOOTH} (Hessian at x* = 1 is positive definite)"),
    min_dim=2,
)
def rosenbrock(x: FloatArray) -> FloatArray:
    """Chained Rosenbrock; x : (n, d) with d >= 2 -> (n,)."""
    head, tail = x[:, :-1], x[:, 1:]
    result: FloatArray = np.sum(100.0 * (tail - head * head) ** 2 + (1.0 - head) ** 2, axis=1)
    return result


@_classic(
    "ackley",
    title="Ackley",
    formula="f(x) = 20 + e - 20 exp(-0.2 sqrt(mean_i x_i^2)) - exp(mean_i cos(2 pi x_i))",
    source="D. H. Ackley (1987), A Connectionist Machine for Genetic Hillclimbing, Kluwer; "
    "d-dimensional form T. Baeck (1996), Evolutionary Algorithms in Theory and Practice; "
    "domain [-32.768, 32.768]^d as in [1] (Surjanovic & Bingham)",
    bounds=(-32.768, 32.768),
    x_opt=0.0,
    f_max=None,
    local=power_law(1, "cone point: f - f* = 4 |x| / sqrt(d) + O(|x|^2)"),
)
def ackley(x: FloatArray) -> FloatArray:
    """Ackley, written as ``-20 expm1(-0.2 r) - e expm1(m - 1)``; x : (n, d) -> (n,)."""
    radius = np.sqrt(np.mean(x * x, axis=1))
    mean_cos = np.mean(np.cos(2.0 * np.pi * x), axis=1)
    result: FloatArray = -20.0 * np.expm1(-0.2 * radius) - np.e * np.expm1(mean_cos - 1.0)
    return result


@_classic(
    "griewank",
    title="Griewank",
    formula="f(x) = 1 + sum_i x_i^2 / 4000 - prod_i cos(x_i / sqrt(i))",
    source="A. O. Griewank (1981), Generalized descent for global optimization, J. Optim. "
    "Theory Appl. 34(1):11-39; domain [-600, 600]^d",
    bounds=(-600.0, 600.0),
    x_opt=0.0,
    f_max=None,
    local=power_law(2, f"{_SMOOTH} (Hessian diag(1/2000 + 1/i))"),
)
def griewank(x: FloatArray) -> FloatArray:
    """Griewank; x : (n, d) -> (n,)."""
    scale = np.sqrt(np.arange(1.0, x.shape[1] + 1.0))
    result: FloatArray = (_squares(x) / 4000.0 + 1.0) - np.prod(np.cos(x / scale), axis=1)
    return result


@_classic(
    "schwefel226",
    title="Schwefel 2.26",
    formula=f"f(x) = sum_i ({SCHWEFEL_PEAK!r} - x_i sin(sqrt|x_i|))  "
    f"(= 418.9829 d - sum_i x_i sin(sqrt|x_i|)); x*_i = {SCHWEFEL_X_OPT!r}",
    source="H.-P. Schwefel (1981), Numerical Optimization of Computer Models, Wiley, problem "
    "2.26; X. Yao, Y. Liu, G. Lin (1999), Evolutionary programming made faster, IEEE Trans. "
    "Evol. Comput. 3(2):82-102, f8; domain [-500, 500]^d. The constant is the exact peak of "
    "x sin(sqrt x), correctly rounded, so f(x*) = 0",
    bounds=(-500.0, 500.0),
    x_opt=SCHWEFEL_X_OPT,
    f_max=lambda d: 2.0 * SCHWEFEL_PEAK * d,
    local=power_law(2, f"{_SMOOTH} (x sin(sqrt x) has a non-degenerate maximum at x*)"),
)
def schwefel226(x: FloatArray) -> FloatArray:
    """Schwefel 2.26 as ``sum_i (peak - x_i sin(sqrt|x_i|))``; x : (n, d) -> (n,)."""
    result: FloatArray = np.sum(SCHWEFEL_PEAK - x * np.sin(np.sqrt(np.abs(x))), axis=1)
    return result


def _step_local(dim: int) -> LocalStructure:
    return LocalStructure(
        beta=None,
        derivation="plateau minimum: f = 0 exactly on [-0.5, 0.5)^d, so v1(t) = atom = "
        f"200^-d = {200.0**-dim:.6g} for 0 <= t < 1 (next level f = 1); no power law at f* "
        "(the registered atom is used instead)",
        atom=200.0**-dim,
    )


@_classic(
    "step",
    title="Step",
    formula="f(x) = sum_i floor(x_i + 0.5)^2",
    source="X. Yao, Y. Liu, G. Lin (1999), Evolutionary programming made faster, IEEE Trans. "
    "Evol. Comput. 3(2):82-102, f6; domain [-100, 100]^d",
    bounds=(-100.0, 100.0),
    x_opt=0.0,
    f_max=lambda d: 1.0e4 * d,
    local=_step_local,
)
def step(x: FloatArray) -> FloatArray:
    """Step ``sum_i floor(x_i + 0.5)**2``; x : (n, d) -> (n,)."""
    result: FloatArray = np.sum(np.floor(x + 0.5) ** 2, axis=1)
    return result


@_classic(
    "pyramid",
    title="Pyramid (L-infinity cone)",
    formula="f(x) = max_i |x_i|",
    source="Y. Jing, Q. Liu, Absolute Ranking: An Essential Normalization for Benchmarking "
    "Optimization Algorithms, Sec. IV-B (conic functions, analytic v1 = (t / f_max)^d); "
    "domain [-5, 5]^d",
    bounds=(-5.0, 5.0),
    x_opt=0.0,
    f_max=lambda d: 5.0,
    local=power_law(1, "cone: f - f* = max_i |x_i - x*_i| is homogeneous of degree 1"),
    analytic="cone",
)
def pyramid(x: FloatArray) -> FloatArray:
    """Pyramid ``max_i |x_i|``; x : (n, d) -> (n,)."""
    result: FloatArray = np.max(np.abs(x), axis=1)
    return result


def _build(name: str, instance: int | None, dim: int) -> BenchmarkFunction:
    spec = _CLASSIC[name]
    return BenchmarkFunction(
        id=format_id("classic", name, None, dim),
        suite="classic",
        name=name,
        title=spec.title,
        dim=dim,
        instance=None,
        lower=np.full(dim, spec.bounds[0]),
        upper=np.full(dim, spec.bounds[1]),
        x_opt=np.full(dim, spec.x_opt),
        f_opt=0.0,
        f_max=None if spec.f_max is None else spec.f_max(dim),
        local=spec.local(dim),
        source=spec.source,
        formula=spec.formula,
        analytic=spec.analytic,
        kernel=spec.kernel,
    )


SUITE = register_suite(
    Suite(
        name="classic",
        id_form="classic/{name}/d{dim}",
        names=tuple(_CLASSIC),
        dims=LISTED_DIMS,
        accepted_dims=lambda name: range(_CLASSIC[name].min_dim, MAX_DIM + 1),
        instances=None,
        listed_instances=(),
        build=_build,
    )
)
