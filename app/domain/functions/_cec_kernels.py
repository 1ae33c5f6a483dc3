"""Specs of CEC 2017/2020/2022 suite functions (rotated, hybrid, composition), their data and
their kernels, as the organisers' ``sr_func``, ``hfNN`` and ``cf_cal`` compute them.

Public face: :mod:`app.domain.functions.cec_common`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from app.domain.functions import cec_data
from app.domain.functions._cec_basic import BASICS, levy, lunacek, schaffer_f7
from app.domain.functions._cec_numeric import INF, in_chunks, rotate, rowsum, sumsq
from app.domain.functions.registry import FloatArray, IndexArray, Kernel


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

    shifts: FloatArray
    rotations: FloatArray | None
    orders: IndexArray | None


class DataNeeds(NamedTuple):
    """How much data a spec reads (:func:`needs`).

    Attributes
    ----------
    components : int
        Shift rows (and matrices, and shuffles) read: ``k`` of a composition, else 1.
    rotation : bool
        Whether it reads ``M_<n>_D<D>.txt``.
    shuffle : bool
        Whether it reads ``shuffle_data_<n>_D<D>.txt``.
    """

    components: int
    rotation: bool
    shuffle: bool


def needs(spec: Spec) -> DataNeeds:
    """``(components, rotation, shuffle)``: how much data a spec reads."""
    if isinstance(spec, Composition):
        shuffle = any(isinstance(c, Hybrid) for c in spec.components)
        return DataNeeds(len(spec.components), True, shuffle)
    if isinstance(spec, Hybrid):
        return DataNeeds(1, True, True)
    return DataNeeds(1, spec.rotate or spec.basic == "lunacek", False)


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


def rotated_kernel(spec: Rotated, shift: FloatArray, rotation: FloatArray | None) -> Kernel:
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


def _piece(name: str, start: int, size: int, shift: FloatArray) -> Kernel:
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
    spec: Hybrid, shift: FloatArray, rotation: FloatArray, order: IndexArray
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

    def kernel(x: FloatArray) -> FloatArray:
        y = rotate(x - shift, transposed)
        total = pieces[0](y)
        for piece in pieces[1:]:
            total = total + piece(y)
        return total

    return kernel


def composition_weights(x: FloatArray, shifts: FloatArray, sigmas: FloatArray) -> FloatArray:
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

    def kernel(x: FloatArray) -> FloatArray:
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

    def biased(x: FloatArray) -> FloatArray:
        return inner(x) + bias

    return in_chunks(biased, data.shifts.shape[1])
