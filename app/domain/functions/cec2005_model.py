"""CEC 2005 F1-F25: the organisers' data files and the vectorised functions built from them.

A numpy translation of the organisers' C code [1]_ (``def2.c`` transforms and weights, ``def3.c``
initialisation, ``def4.c`` the 25 functions) as packaged in ``yasserglez/cec2005benchmark``,
which runs it with ``nfunc = 10`` for every function. The data are the organisers' text files as
shipped by ``opfunu`` (:mod:`app.domain.functions.cec_data`), whose names differ from the C
code's: ``sphere_func_data.txt`` is ``data_sphere.txt``, ``schwefel_206_data.txt`` is
``data_schwefel_206.txt``, ``hybrid_func1_data.txt`` is ``data_hybrid_func1.txt``, ... (the
``*_M_D<d>.txt`` matrices keep their names). Only the reading positions of the C code are
reproduced here; what they imply is listed in :mod:`app.domain.functions.cec2005`.

Conventions of the C code kept here:

- ``transform(x, i)`` maps a point to ``z = ((x - o_i) / lambda_i) M_i`` with ``z`` a *row*
  vector (``trans_x[j] = sum_i M[i][j] t[i]``), i.e. ``Z = ((X - o_i) / lambda_i) @ M_i``.
  Identity matrices (no rotation) are skipped: multiplying by them is exact. A point's value
  never depends on the rest of its batch: the simple functions' products are BLAS products in
  blocks of a fixed shape (:func:`~app.domain.functions.cec_common.matmul_rows`, the C loops'
  sums to a few ulps); F11 and the composition functions keep the C loops' order
  (:func:`row_product`), because their Weierstrass pieces take ``cos(2 pi 3^20 z)``, which turns
  a one-ulp change of ``z`` into up to 1e-7 of ``f`` (on the organisers' reference points, BLAS
  products there give up to 3e-11 relative error on F22 and 1e-12 on F24; the code's order,
  below 1e-15).
- Kernels run on blocks of rows (:func:`~app.domain.functions.cec_common.in_chunks`) so that
  their temporaries stay in cache; noisy functions draw the noise of the whole batch first, one
  ``N(0, 1)`` per row in row order.
- Composition functions: ``f = global_bias + sum_i w_i (C f_i(z_i) / f_max_i + 100 (i - 1))`` with
  ``C = 2000``, ``f_max_i = f_i((5 / lambda_i) 1 @ M_i)`` (no shift), and weights
  ``w_i = exp(-|x - o_i|^2 / (2 d sigma_i^2))``, every weight but the largest multiplied by
  ``1 - max^10``, normalised to sum 1 (``1/10`` each if they all underflow).

References
----------
.. [1] S. Tiwari (2005), C code of the CEC 2005 benchmark functions; R package
   ``cec2005benchmark`` 1.0.5 (yasserglez/cec2005benchmark, ``src/def1.c`` ... ``def4.c``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from app.domain.functions import cec2005_basic as basic
from app.domain.functions.cec_common import (
    chunk_rows,
    cos_of,
    in_chunks,
    matmul_rows,
    sin_of,
    sumsq,
)
from app.domain.functions.cec_data import load_matrix, load_vector_rows
from app.domain.functions.registry import FloatArray, Kernel, NoiseKernel

__all__ = ["COMPOSITION_C", "Model", "composition_terms", "model", "row_product"]

YEAR = 2005
COMPOSITION_C = 2000.0
"""The code's ``C``: every composition piece is scaled to ``C`` at its ``f_max`` point."""
PIECES = 10
"""``nfunc``: pieces per composition function; also the number of shift rows the code reads."""

BasicFunction = Callable[[FloatArray], FloatArray]
NoiseGiven = Callable[[FloatArray, FloatArray], FloatArray]
"""``(X, normals) -> values``: a noisy function given one ``N(0, 1)`` draw per row."""


@dataclass(frozen=True)
class Model:
    """One CEC 2005 function in one dimension, ready to evaluate.

    Attributes
    ----------
    x_opt : ndarray, shape (d,)
        The optimum the code uses (after its edits; see the suite's notes).
    bias : float
        ``f_bias``, the value at ``x_opt``.
    kernel : callable
        ``(n, d) -> (n,)``, the noise-free function (noise switched off, as in the organisers'
        verification setting).
    noisy : callable or None
        ``(X, rng) -> (n,)`` for F4, F17, F24 and F25: the competition's noisy function, drawing
        one ``N(0, 1)`` per point from ``rng`` in row order; None for the other functions.
    """

    x_opt: FloatArray
    bias: float
    kernel: Kernel
    noisy: NoiseKernel | None = None


def row_product(z: FloatArray, matrix: FloatArray) -> FloatArray:
    """``z @ matrix`` summed as the C code's loops do, in the same order for every row.

    ``out[:, j] = sum_i z[:, i] matrix[i, j]``, accumulated over ``i = 0, 1, ...`` one
    coordinate at a time (a loop over the ``d`` coordinates, not over points), multiplying and
    adding separately as the code does. Unlike a single BLAS product, whose blocking and kernels
    depend on the number of rows, the value of a row does not depend on the other rows. Used by
    F11 and the composition functions; the simple functions use the faster
    :func:`~app.domain.functions.cec_common.matmul_rows` (about 10 times faster at ``d = 30``).

    Parameters
    ----------
    z : ndarray, shape (n, k)
    matrix : ndarray, shape (k, m)

    Returns
    -------
    ndarray, shape (n, m)
    """
    columns = np.ascontiguousarray(z.T)  # (k, n): one contiguous row per coordinate
    out = np.multiply.outer(matrix[0], columns[0])  # (m, n)
    term = np.empty_like(out)
    for i in range(1, matrix.shape[0]):
        np.multiply.outer(matrix[i], columns[i], out=term)
        out += term
    return np.ascontiguousarray(out.T)


# --- data files ---------------------------------------------------------------------------------


def _shift(name: str, dim: int) -> FloatArray:
    """First ``dim`` numbers of a shift file: the code's ``o[0]`` (``o`` rows 2..10 are unused)."""
    return np.array(load_vector_rows(YEAR, name, 1, dim)[0])


def _shifts(stem: str, dim: int) -> FloatArray:
    """The 10 optima of a composition function: first ``dim`` entries of rows 1..10."""
    return np.array(load_vector_rows(YEAR, f"data_{stem}.txt", PIECES, dim))


def _rotation(stem: str, dim: int) -> FloatArray:
    matrix = load_matrix(YEAR, f"{stem}_M_D{dim}.txt")
    if matrix.shape != (dim, dim):
        raise ValueError(f"{stem}_M_D{dim}.txt has shape {matrix.shape}, expected ({dim}, {dim})")
    return matrix


def _rotations(prefix: str, dim: int) -> FloatArray:
    """The 10 matrices of a composition: rows ``i d .. (i + 1) d - 1`` of ``<prefix>_D<d>.txt``."""
    name = f"{prefix}_D{dim}.txt"
    stacked = load_matrix(YEAR, name)
    if stacked.shape != (PIECES * dim, dim):
        raise ValueError(f"{name} has shape {stacked.shape}, expected ({PIECES * dim}, {dim})")
    return stacked.reshape(PIECES, dim, dim)


@functools.cache
def _weierstrass_zero(dim: int) -> float:
    return float(basic.weierstrass(np.zeros((1, dim)))[0])


def _weierstrass_piece(z: FloatArray) -> FloatArray:
    """``W(z) - W(0)``: the code subtracts ``calc_weierstrass(norm_x)`` with ``norm_x = 0``."""
    return basic.weierstrass(z) - _weierstrass_zero(z.shape[1])


# --- F1-F14 -------------------------------------------------------------------------------------


def _shifted(
    function: BasicFunction,
    shift: FloatArray,
    bias: float,
    rotation: FloatArray | None = None,
    *,
    x_opt: FloatArray | None = None,
    code_order: bool = False,
) -> Model:
    """``f(x) = function((x - shift) @ rotation) + bias``; ``x_opt`` defaults to ``shift``.

    The product is :func:`matmul_rows`, or :func:`row_product` with ``code_order``.
    """
    product = row_product if code_order else matmul_rows

    def kernel(X: FloatArray) -> FloatArray:
        z = X - shift
        if rotation is not None:
            z = product(z, rotation)
        return function(z) + bias

    return Model(shift if x_opt is None else x_opt, bias, kernel)


def _noisy_schwefel(dim: int) -> Model:
    """F4: ``schwefel_12(x - o) (1 + 0.4 |N(0, 1)|) - 450``, one ``N`` per point."""
    shift = _shift("data_schwefel_102.txt", dim)
    bias = -450.0

    def kernel(X: FloatArray) -> FloatArray:
        return basic.schwefel_12(X - shift) + bias

    def noisy(X: FloatArray, normals: FloatArray) -> FloatArray:
        factor = 1.0 + 0.4 * np.abs(normals)
        return basic.schwefel_12(X - shift) * factor + bias

    return Model(shift, bias, kernel, _drawing(noisy, dim))


def _schwefel_206(dim: int) -> Model:
    """F5: ``max_i |A_i x - B_i| - 310`` with ``B = A o``.

    The code reads ``nfunc = 10`` shift rows (each to the end of its line) before ``A``, so
    ``A`` is lines 11..10+d of the file (first ``d`` columns), and edits ``o`` (line 1) onto the
    bounds: ``o_i = -100`` for ``i <= ceil(d/4)``, ``o_i = 100`` for ``i >= floor(3d/4)``
    (1-based). ``A x`` and ``B`` are summed in the same order, so ``f(o) = f*`` exactly.
    """
    data = load_matrix(YEAR, "data_schwefel_206.txt")
    if data.shape[0] < PIECES + dim or data.shape[1] < dim:
        raise ValueError(f"data_schwefel_206.txt has shape {data.shape}")
    shift = np.array(data[0, :dim])
    shift[: -(-dim // 4)] = -100.0
    shift[(3 * dim) // 4 - 1 :] = 100.0
    a_t = np.ascontiguousarray(data[PIECES : PIECES + dim, :dim].T)
    offset = matmul_rows(shift[None, :], a_t)[0]  # the same product as the kernel's: f(o) = f*
    bias = -310.0

    def kernel(X: FloatArray) -> FloatArray:
        result: FloatArray = np.max(np.abs(matmul_rows(X, a_t) - offset), axis=1) + bias
        return result

    return Model(shift, bias, kernel)


def _schwefel_213(dim: int) -> Model:
    """F12: ``sum_i (A_i sin(alpha) + B_i cos(alpha) - A_i sin(x) - B_i cos(x))^2 - 460``.

    ``A`` is lines 1..d, ``B`` lines 101..100+d and ``alpha`` line 201 of the file (first ``d``
    columns each); ``x* = alpha``. The sums are two matrix products (:func:`matmul_rows`), the
    code's interleaved sums to a few ulps; ``x = alpha`` gives the target's bits, so ``f = f*``.
    """
    data = load_matrix(YEAR, "data_schwefel_213.txt")
    if data.shape[0] < 201 or data.shape[1] < dim:
        raise ValueError(f"data_schwefel_213.txt has shape {data.shape}")
    a_t = np.ascontiguousarray(data[:dim, :dim].T)
    b_t = np.ascontiguousarray(data[100 : 100 + dim, :dim].T)
    alpha = np.array(data[200, :dim])

    def mixed(x: FloatArray) -> FloatArray:
        out = matmul_rows(sin_of(x), a_t)
        out += matmul_rows(cos_of(x), b_t)
        return out

    target = mixed(alpha[None, :])
    bias = -460.0

    def kernel(X: FloatArray) -> FloatArray:
        residual = target - mixed(X)
        return sumsq(residual) + bias

    return Model(alpha, bias, kernel)


def _plus_one(function: BasicFunction, name: str, bias: float, dim: int) -> Model:
    """F6/F13: the code stores ``o - 1`` and evaluates ``function(x - (o - 1))``; ``x* = o``."""
    shift = _shift(name, dim)
    return _shifted(function, shift - 1.0, bias, x_opt=shift)


def _ackley_on_bounds(dim: int) -> Model:
    """F8: rotated Ackley with ``o_i = -32`` at the odd 1-based indices."""
    shift = _shift("data_ackley.txt", dim)
    shift[0 : 2 * (dim // 2) : 2] = -32.0
    return _shifted(basic.ackley, shift, -140.0, _rotation("ackley", dim))


def _weierstrass(dim: int) -> Model:
    """F11: ``W(z) - W(0) + 90``, ``z = (x - o) @ M`` in the code's order (see the module)."""
    return _shifted(
        _weierstrass_piece,
        _shift("data_weierstrass.txt", dim),
        90.0,
        _rotation("weierstrass", dim),
        code_order=True,
    )


def _simple(
    function: BasicFunction, data: str, bias: float, rotation: str | None = None
) -> Callable[[int], Model]:
    def build(dim: int) -> Model:
        matrix = None if rotation is None else _rotation(rotation, dim)
        return _shifted(function, _shift(data, dim), bias, matrix)

    return build


# --- F15-F25 ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Composition:
    pieces: tuple[BasicFunction, ...]
    shifts: FloatArray  # (10, d)
    rotations: FloatArray | None  # (10, d, d); None: identity matrices (F15)
    lambdas: tuple[float, ...]
    sigmas: tuple[float, ...]
    global_bias: float
    scales: FloatArray  # C / f_max_i, (10,)

    def transformed(self, X: FloatArray, i: int) -> FloatArray:
        z = X - self.shifts[i]
        z /= self.lambdas[i]
        return z if self.rotations is None else row_product(z, self.rotations[i])

    def values(self, X: FloatArray, last_factor: FloatArray | None = None) -> FloatArray:
        """Normalised piece values ``C f_i(z_i) / f_max_i``, shape (n, 10).

        ``last_factor`` multiplies the raw value of the 10th piece (F24/F25's noisy sphere)
        before the normalisation, as the code does.
        """
        columns = []
        for i, piece in enumerate(self.pieces):
            raw = piece(self.transformed(X, i))
            if last_factor is not None and i == PIECES - 1:
                raw = raw * last_factor
            columns.append(raw * self.scales[i])
        return np.stack(columns, axis=1)

    def weights(self, X: FloatArray) -> FloatArray:
        """``calc_weight``: shape (n, 10), each row sums to 1."""
        dim = X.shape[1]
        raw = np.empty((X.shape[0], PIECES))
        for i, sigma in enumerate(self.sigmas):
            raw[:, i] = np.exp(-sumsq(X - self.shifts[i]) / (2.0 * dim * sigma * sigma))
        top = np.max(raw, axis=1, keepdims=True)
        raw = np.where(raw != top, raw * (1.0 - top**10.0), raw)
        total = np.sum(raw, axis=1, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(total == 0.0, 1.0 / PIECES, raw / total)

    def weighted_sum(self, weights: FloatArray, values: FloatArray, start: float) -> FloatArray:
        """``start + sum_i w_i (v_i + 100 i)``, accumulated in the code's order."""
        total = np.full(weights.shape[0], start)
        for i in range(PIECES):
            total = total + weights[:, i] * (values[:, i] + 100.0 * i)
        return total

    def __call__(self, X: FloatArray) -> FloatArray:
        return self.weighted_sum(self.weights(X), self.values(X), self.global_bias)


def _composition(
    pieces: Sequence[BasicFunction],
    shifts: FloatArray,
    rotations: FloatArray | None,
    lambdas: Sequence[float],
    sigmas: Sequence[float],
    global_bias: float,
) -> _Composition:
    dim = shifts.shape[1]
    norms = []
    for i, piece in enumerate(pieces):
        # transform_norm(i): z = (5 / lambda_i) 1 @ M_i, no shift
        z = np.full((1, dim), 5.0 / lambdas[i])
        if rotations is not None:
            z = row_product(z, rotations[i])
        norms.append(float(piece(z)[0]))
    return _Composition(
        tuple(pieces),
        shifts,
        rotations,
        tuple(lambdas),
        tuple(sigmas),
        global_bias,
        COMPOSITION_C / np.array(norms),
    )


_W = _weierstrass_piece
_CF1: tuple[Kernel, ...] = (
    basic.rastrigin,
    basic.rastrigin,
    _W,
    _W,
    basic.griewank,
    basic.griewank,
)
_CF1 += (basic.ackley, basic.ackley, basic.sphere, basic.sphere)
_CF1_LAMBDAS = (1.0, 1.0, 10.0, 10.0, 1.0 / 12.0, 1.0 / 12.0, 5.0 / 32.0, 5.0 / 32.0, 0.05, 0.05)
_CF2: tuple[Kernel, ...] = (
    basic.ackley,
    basic.ackley,
    basic.rastrigin,
    basic.rastrigin,
    basic.sphere,
    basic.sphere,
)
_CF2 += (_W, _W, basic.griewank, basic.griewank)
_CF2_SIGMAS = (1.0, 2.0, 1.5, 1.5, 1.0, 1.0, 1.5, 1.5, 2.0, 2.0)
_CF2_LAMBDAS = (5.0 / 16.0, 5.0 / 32.0, 2.0, 1.0, 0.1, 0.05, 20.0, 10.0, 1.0 / 6.0, 1.0 / 12.0)
_CF3: tuple[Kernel, ...] = (
    basic.expanded_schaffer_f6,
    basic.expanded_schaffer_f6,
    basic.rastrigin,
    basic.rastrigin,
)
_CF3 += (basic.expanded_f8f2, basic.expanded_f8f2, _W, _W, basic.griewank, basic.griewank)
_CF3_SIGMAS = (1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0)
_CF3_LAMBDAS = (0.25, 0.05, 5.0, 1.0, 5.0, 1.0, 50.0, 10.0, 0.125, 0.025)
_CF4: tuple[Kernel, ...] = (
    _W,
    basic.expanded_schaffer_f6,
    basic.expanded_f8f2,
    basic.ackley,
    basic.rastrigin,
)
_CF4 += (basic.griewank, basic.nc_schaffer_f6, basic.nc_rastrigin, basic.elliptic, basic.sphere)
_CF4_LAMBDAS = (10.0, 0.25, 1.0, 5.0 / 32.0, 1.0, 0.05, 0.1, 1.0, 0.05, 0.05)


def _model_of(composition: _Composition) -> Model:
    return Model(composition.shifts[0], composition.global_bias, composition)


def _cf1(dim: int, *, rotated: bool) -> _Composition:
    """F15 (no rotation: the code's matrices stay identities) and F16/F17."""
    rotations = _rotations("hybrid_func1_M", dim) if rotated else None
    sigmas = (1.0,) * PIECES
    return _composition(_CF1, _shifts("hybrid_func1", dim), rotations, _CF1_LAMBDAS, sigmas, 120.0)


def _noisy_cf1(dim: int) -> Model:
    """F17: ``(F16(x) - 120) (1 + 0.2 |N(0, 1)|) + 120``, one ``N`` per point."""
    composition = _cf1(dim, rotated=True)

    def kernel(X: FloatArray) -> FloatArray:
        inner = composition.weighted_sum(composition.weights(X), composition.values(X), 0.0)
        return inner + composition.global_bias

    def noisy(X: FloatArray, normals: FloatArray) -> FloatArray:
        factor = 1.0 + 0.2 * np.abs(normals)
        inner = composition.weighted_sum(composition.weights(X), composition.values(X), 0.0)
        return inner * factor + composition.global_bias

    return Model(composition.shifts[0], composition.global_bias, kernel, _drawing(noisy, dim))


def _cf2(dim: int, variant: int) -> _Composition:
    """F18 (variant 18), F19 (narrow first basin), F20 (first optimum on the bounds)."""
    shifts = _shifts("hybrid_func2", dim)
    if variant == 20:
        shifts[0, 1 : 2 * (dim // 2) : 2] = 5.0
    shifts[PIECES - 1] = 0.0
    sigmas, lambdas = _CF2_SIGMAS, _CF2_LAMBDAS
    if variant == 19:
        sigmas = (0.1, *sigmas[1:])
        lambdas = (0.5 / 32.0, *lambdas[1:])
    return _composition(_CF2, shifts, _rotations("hybrid_func2_M", dim), lambdas, sigmas, 10.0)


def _cf3(dim: int, *, matrices: str) -> _Composition:
    """F21 (``hybrid_func3_M``) and F22 (``hybrid_func3_HM``, high condition numbers)."""
    return _composition(
        _CF3,
        _shifts("hybrid_func3", dim),
        _rotations(matrices, dim),
        _CF3_LAMBDAS,
        _CF3_SIGMAS,
        360.0,
    )


def _non_continuous_cf3(dim: int) -> Model:
    """F23: F21 at ``x~_i = x_i`` if ``|x_i - o_1i| < 0.5`` else ``round(2 x_i) / 2``.

    The rounded point also sets the weights (``calc_weight(temp_x4)``).
    """
    composition = _cf3(dim, matrices="hybrid_func3_M")
    first = composition.shifts[0]

    def kernel(X: FloatArray) -> FloatArray:
        rounded = np.where(np.abs(X - first) >= 0.5, basic.round_to_half(X), X)
        return composition(rounded)

    return Model(first, composition.global_bias, kernel)


def _cf4(dim: int) -> _Composition:
    shifts, rotations = _shifts("hybrid_func4", dim), _rotations("hybrid_func4_M", dim)
    return _composition(_CF4, shifts, rotations, _CF4_LAMBDAS, (2.0,) * PIECES, 260.0)


def _noisy_cf4(dim: int) -> Model:
    """F24/F25: the 10th piece is ``sphere(z) (1 + 0.1 |N(0, 1)|)``, one ``N`` per point.

    ``f_max`` of that piece is taken noise-free (the code draws a noise for it once, when it
    initialises; see the suite notes).
    """
    composition = _cf4(dim)

    def noisy(X: FloatArray, normals: FloatArray) -> FloatArray:
        factor = 1.0 + 0.1 * np.abs(normals)
        values = composition.values(X, last_factor=factor)
        return composition.weighted_sum(composition.weights(X), values, composition.global_bias)

    return Model(composition.shifts[0], composition.global_bias, composition, _drawing(noisy, dim))


def _drawing(given: NoiseGiven, dim: int) -> NoiseKernel:
    """``(X, normals) -> values``: ``given`` on blocks of :func:`chunk_rows` rows, with one
    ``N(0, 1)`` per row (drawn by the caller: a generator in row order, or a table's per-index
    streams)."""
    rows = chunk_rows(dim)

    def noisy(X: FloatArray, normals: FloatArray) -> FloatArray:
        n = X.shape[0]
        if n <= rows:
            return given(X, normals)
        out = np.empty(n)
        for start in range(0, n, rows):
            stop = start + rows
            out[start:stop] = given(X[start:stop], normals[start:stop])
        return out

    return noisy


_BUILDERS: dict[int, Callable[[int], Model]] = {
    1: _simple(basic.sphere, "data_sphere.txt", -450.0),
    2: _simple(basic.schwefel_12, "data_schwefel_102.txt", -450.0),
    3: _simple(basic.elliptic, "data_high_cond_elliptic_rot.txt", -450.0, "elliptic"),
    4: _noisy_schwefel,
    5: _schwefel_206,
    6: functools.partial(_plus_one, basic.rosenbrock, "data_rosenbrock.txt", 390.0),
    7: _simple(basic.griewank, "data_griewank.txt", -180.0, "griewank"),
    8: _ackley_on_bounds,
    9: _simple(basic.rastrigin, "data_rastrigin.txt", -330.0),
    10: _simple(basic.rastrigin, "data_rastrigin.txt", -330.0, "rastrigin"),
    11: _weierstrass,
    12: _schwefel_213,
    13: functools.partial(_plus_one, basic.expanded_f8f2, "data_EF8F2.txt", -130.0),
    14: _simple(basic.expanded_schaffer_f6, "data_E_ScafferF6.txt", -300.0, "E_ScafferF6"),
    15: lambda dim: _model_of(_cf1(dim, rotated=False)),
    16: lambda dim: _model_of(_cf1(dim, rotated=True)),
    17: _noisy_cf1,
    18: lambda dim: _model_of(_cf2(dim, 18)),
    19: lambda dim: _model_of(_cf2(dim, 19)),
    20: lambda dim: _model_of(_cf2(dim, 20)),
    21: lambda dim: _model_of(_cf3(dim, matrices="hybrid_func3_M")),
    22: lambda dim: _model_of(_cf3(dim, matrices="hybrid_func3_HM")),
    23: _non_continuous_cf3,
    24: _noisy_cf4,
    25: _noisy_cf4,
}

_COMPOSITIONS: dict[int, Callable[[int], _Composition]] = {
    15: lambda dim: _cf1(dim, rotated=False),
    16: lambda dim: _cf1(dim, rotated=True),
    17: lambda dim: _cf1(dim, rotated=True),
    18: lambda dim: _cf2(dim, 18),
    19: lambda dim: _cf2(dim, 19),
    20: lambda dim: _cf2(dim, 20),
    21: lambda dim: _cf3(dim, matrices="hybrid_func3_M"),
    22: lambda dim: _cf3(dim, matrices="hybrid_func3_HM"),
    23: lambda dim: _cf3(dim, matrices="hybrid_func3_M"),
    24: _cf4,
    25: _cf4,
}


@functools.lru_cache(maxsize=128)
def model(fid: int, dim: int) -> Model:
    """Build CEC 2005 function ``F<fid>`` in dimension ``dim`` from the organisers' data files.

    Parameters
    ----------
    fid : int
        Function number, 1..25.
    dim : int
        Dimension; the data files cover 2, 10, 30 and 50 (absrank lists 10 and 30).

    Returns
    -------
    Model
        Cached per ``(fid, dim)``; its arrays are shared, do not modify them.

    Raises
    ------
    KeyError
        ``fid`` is not in 1..25.
    app.domain.errors.NotApplicable
        The data files are not installed (see :func:`app.domain.functions.cec_data.data_dir`).
    """
    built = _BUILDERS[fid](dim)
    return Model(built.x_opt, built.bias, in_chunks(built.kernel, dim), built.noisy)


def composition_terms(fid: int, dim: int, X: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Weights and normalised piece values of a composition function (F15-F25), noise-free.

    ``F(x) = global_bias + sum_i w_i(x) (v_i(x) + 100 (i - 1))``. For diagnostics and tests:
    the noise of F24/F25 adds ``w_10 v_10 0.1 |N|`` to ``F``.

    Parameters
    ----------
    fid : int
        15..25.
    dim : int
        Dimension.
    X : ndarray, shape (n, dim)
        Points (validated by the caller).

    Returns
    -------
    weights, values : ndarray, shape (n, 10)
        ``w_i(x)`` (rows sum to 1) and ``v_i(x) = 2000 f_i(z_i) / f_max_i``. For F23 they are
        taken at the point before its rounding (the function itself uses the rounded point).

    Raises
    ------
    KeyError
        ``fid`` is not a composition function.
    """
    composition = _COMPOSITIONS[fid](dim)
    return composition.weights(X), composition.values(X)
