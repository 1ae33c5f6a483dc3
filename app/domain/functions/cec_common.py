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

The pieces live in private modules, re-exported here (import them from this module):
``_cec_numeric`` (row sums, fixed-shape BLAS blocks, blocked evaluation, sine and cosine from
the tangent), ``_cec_basic`` (the basic functions and :data:`BASICS`) and ``_cec_kernels`` (the
specs, :func:`load_data` and the kernels); this module keeps the formulas, the local structure
and the suite entries.

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

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from app.domain.functions._cec_basic import (
    BASICS,
    Basic,
    ackley,
    bent_cigar,
    discus,
    ellips,
    escaffer6,
    grie_rosen,
    griewank,
    happycat,
    hgbat,
    katsuura,
    levy,
    lunacek,
    rastrigin,
    rosenbrock,
    schaffer_f7,
    schwefel,
    sum_diff_pow,
    weierstrass,
    zakharov,
)
from app.domain.functions._cec_kernels import (
    CecData,
    Composition,
    DataNeeds,
    Hybrid,
    Rotated,
    Spec,
    build_kernel,
    composition_kernel,
    composition_weights,
    hybrid_kernel,
    load_data,
    needs,
    rotated_kernel,
)
from app.domain.functions._cec_numeric import (
    BOUNDS,
    CHUNK_ELEMENTS,
    FAST_TAN,
    GEMM_MULTIPLY_ADDS,
    INF,
    PI,
    SCHWEFEL_PEAK,
    SCHWEFEL_SHIFT,
    E,
    block_rows,
    chunk_rows,
    cos_of,
    in_chunks,
    matmul_rows,
    rotate,
    rowsum,
    sin2_pi,
    sin_of,
    sumsq,
    weierstrass_terms,
)
from app.domain.functions.registry import (
    BenchmarkFunction,
    FloatArray,
    LocalStructure,
    Suite,
    format_id,
    power_law,
)

__all__ = [
    "BASICS",
    "BOUNDS",
    "CHUNK_ELEMENTS",
    "COMPOSITION_NOTE",
    "FAST_TAN",
    "GEMM_MULTIPLY_ADDS",
    "INF",
    "PI",
    "SCHWEFEL_PEAK",
    "SCHWEFEL_SHIFT",
    "Basic",
    "CecData",
    "CecEntry",
    "Composition",
    "DataNeeds",
    "E",
    "Hybrid",
    "Rotated",
    "Spec",
    "ackley",
    "bent_cigar",
    "block_rows",
    "build_function",
    "build_kernel",
    "c_function",
    "cec_builder",
    "chunk_rows",
    "composition_cone",
    "composition_kernel",
    "composition_unknown",
    "composition_weights",
    "cos_of",
    "data_files",
    "describe",
    "discus",
    "ellips",
    "escaffer6",
    "grie_rosen",
    "griewank",
    "happycat",
    "hgbat",
    "hybrid_exponents",
    "hybrid_kernel",
    "hybrid_local",
    "in_chunks",
    "katsuura",
    "levy",
    "load_data",
    "lunacek",
    "make_suite",
    "matmul_rows",
    "needs",
    "rastrigin",
    "rosenbrock",
    "rotate",
    "rotated_kernel",
    "rowsum",
    "schaffer_f7",
    "schwefel",
    "sin2_pi",
    "sin_of",
    "smooth",
    "sum_diff_pow",
    "sumsq",
    "titled",
    "unknown",
    "weierstrass",
    "weierstrass_terms",
    "zakharov",
]

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


def hybrid_exponents(spec: Hybrid, dim: int) -> FloatArray | None:
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
    optimum: Callable[[CecData, int], FloatArray] | None = None
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
