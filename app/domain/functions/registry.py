"""Registry of benchmark functions.

A benchmark function is a pure, vectorised ``f(X)``: ``X`` has shape ``(n, d)`` and the result
shape ``(n,)``. Each one is registered under a stable id

- ``{suite}/{name}/d{dim}`` for suites without instances (``classic/sphere/d10``);
- ``{suite}/{name}/i{instance}/d{dim}`` for instanced suites (``bbob/f15/i1/d10``);

together with its domain box, known optimum, formula, source and the local structure of its
minimum (the tail exponent ``beta`` of ``v1`` at ``f*``, SPEC §3.4). Suites register themselves
with :func:`register_suite` when their module is imported; the package ``__init__`` imports all
of them. Evaluation counting and budgets live outside the functions.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from app.domain.errors import InvalidInput, NotApplicable, UnknownFunction

FloatArray = npt.NDArray[np.float64]
"""A float64 array: points ``(n, d)``, values ``(n,)``, shifts, matrices."""
IndexArray = npt.NDArray[np.int64]
"""An array of 0-based indices (shuffle permutations)."""

Kernel = Callable[[FloatArray], FloatArray]
"""Raw vectorised implementation: validated ``(n, d)`` float64 array -> ``(n,)`` float64."""
NoiseKernel = Callable[[FloatArray, FloatArray], FloatArray]
"""Noisy implementation: validated ``(n, d)`` points and one standard normal per point,
``(n,)`` -> ``(n,)`` float64. Every hosted noisy function draws exactly one ``N(0, 1)`` per point
(CEC 2005 F4, F17, F24, F25), so its noise is fully given by those normals."""

ANALYTIC_KINDS = ("sphere", "cone")

MAX_ID_LENGTH = 200
"""Longest accepted function id; longer strings are refused before they are parsed."""
MAX_ID_DIGITS = 18
"""Most digits in an id's dimension or instance (far above any hosted one, far below the
4300 digits at which Python refuses to convert a string to an int)."""
_SHOWN_ID_LENGTH = 60

_ID = re.compile(
    r"(?P<suite>[a-z][a-z0-9]{0,31})/(?P<name>[a-z][a-z0-9_]{0,31})"
    rf"(?:/i(?P<instance>[0-9]{{1,{MAX_ID_DIGITS}}}))?/d(?P<dim>[0-9]{{1,{MAX_ID_DIGITS}}})"
)


@dataclass(frozen=True)
class LocalStructure:
    """Shape of ``v1(t) = P(f(U) <= t)``, ``U ~ U(domain)``, just above ``f*``.

    Attributes
    ----------
    beta : float or None
        Tail exponent: ``v1(t) - atom ~ C (t - f*)**beta`` as ``t -> f*``. ``None`` when no
        single power law holds (the tail is then estimated from samples).
    derivation : str
        Why ``beta`` has this value, including the range of ``t - f*`` where it holds.
    atom : float
        Probability mass of the minimising plateau ``{f = f*}`` under ``U(domain)``; 0.0 when
        the minimum is not a plateau.
    """

    beta: float | None
    derivation: str
    atom: float = 0.0

    def __post_init__(self) -> None:
        if self.beta is not None and not (math.isfinite(self.beta) and self.beta >= 0):
            raise ValueError(f"beta must be finite and >= 0, got {self.beta}")
        if not 0.0 <= self.atom <= 1.0:
            raise ValueError(f"atom must lie in [0, 1], got {self.atom}")


def power_law(degree: float, reason: str) -> Callable[[int], LocalStructure]:
    """Local structure of a minimum where ``f - f*`` grows as ``||x - x*||**degree``.

    If ``f(x* + s u) - f* = s**p g(u)`` with ``g > 0`` on the unit sphere (possibly times a
    bounded factor, such as the log-periodic one of BBOB's ``T_osz``), the sublevel set
    ``{f - f* <= t}`` is a star-shaped body of radius ``(t / g(u))**(1/p)`` and its volume is
    ``t**(d/p) / d * int g(u)**(-d/p) du``, so ``beta = d / p``.

    Parameters
    ----------
    degree : float
        Homogeneity degree ``p > 0`` of ``f - f*`` at ``x*``.
    reason : str
        Why ``f - f*`` has this degree (goes into the derivation string).

    Returns
    -------
    callable
        ``dim -> LocalStructure`` with ``beta = dim / degree``.
    """

    def local(dim: int) -> LocalStructure:
        beta = dim / degree
        return LocalStructure(
            beta, f"{reason}; degree p = {degree:g}, so beta = d/p = {dim}/{degree:g} = {beta:.6g}"
        )

    return local


@dataclass(frozen=True, eq=False)
class BenchmarkFunction:
    """A registered benchmark function ``f: [lower, upper] -> R`` (minimised).

    Instances are immutable (their arrays are read-only) and shared between callers;
    equality is identity, compare ``id`` to compare definitions.

    Attributes
    ----------
    id : str
        Stable identifier, e.g. ``"bbob/f15/i1/d10"`` or ``"classic/sphere/d10"``.
    suite : str
        ``"bbob"`` or ``"classic"``.
    name : str
        Name within the suite, e.g. ``"f15"`` or ``"sphere"``.
    title : str
        Human-readable name, e.g. ``"Rastrigin (rotated)"``.
    dim : int
        Dimension ``d``.
    instance : int or None
        Instance number for instanced suites (BBOB), else None.
    lower, upper : ndarray, shape (d,)
        Domain box ``[lower, upper]``.
    x_opt : ndarray, shape (d,), or None
        A known global minimiser.
    f_opt : float or None
        The known global minimum ``f*``.
    f_max : float or None
        The maximum of ``f`` over the domain, when known.
    local : LocalStructure
        Tail exponent and plateau mass of ``v1`` at ``f*``.
    source : str
        Reference for the definition (paper, equation or function number, code).
    formula : str
        The definition in plain text.
    analytic : {"sphere", "cone"} or None
        Which analytic ``v1`` applies on boxes, if any.
    kernel : callable
        The raw vectorised implementation; call :meth:`evaluate`, which validates first. For
        a noisy function this is its noise-free part (used for ``f(x*)`` and checks only).
    notes : tuple of str
        Facts a user must know about the definition, e.g. where the organisers' code departs
        from their technical report (the code is followed).
    flags : tuple of str
        Machine-readable marks, e.g. ``"excluded-by-organisers"``, ``"noisy"``.
    noise : callable or None
        For a noisy function, ``(X, normals) -> values`` with one standard normal per point;
        call :meth:`evaluate_noisy` or :meth:`evaluate_with_normals`. None for a deterministic
        function.
    """

    id: str
    suite: str
    name: str
    title: str
    dim: int
    instance: int | None
    lower: FloatArray
    upper: FloatArray
    x_opt: FloatArray | None
    f_opt: float | None
    f_max: float | None
    local: LocalStructure
    source: str
    formula: str
    analytic: str | None
    kernel: Kernel = field(repr=False)
    notes: tuple[str, ...] = ()
    flags: tuple[str, ...] = ()
    noise: NoiseKernel | None = field(default=None, repr=False)

    @property
    def noisy(self) -> bool:
        """Whether evaluations carry random noise (use :meth:`evaluate_noisy`)."""
        return self.noise is not None

    def __post_init__(self) -> None:
        for name in ("lower", "upper", "x_opt"):
            value = getattr(self, name)
            if value is None:
                continue
            array = np.array(value, dtype=np.float64)
            if array.shape != (self.dim,):
                raise ValueError(f"{name} must have shape ({self.dim},), got {array.shape}")
            array.flags.writeable = False
            object.__setattr__(self, name, array)
        if self.analytic is not None and self.analytic not in ANALYTIC_KINDS:
            raise ValueError(f"analytic must be one of {ANALYTIC_KINDS} or None")

    def evaluate(self, X: object) -> FloatArray:
        """Evaluate the function on a batch of points.

        Parameters
        ----------
        X : array_like, shape (n, d)
            Points, one per row, real numbers (converted to C-contiguous float64). Points
            outside the domain box are evaluated as the formula says; ``n = 0`` is allowed.

        Returns
        -------
        ndarray, shape (n,)
            Function values, float64. Rows are evaluated independently: a point's value
            does not depend on the other rows of the batch. A value beyond the float64
            range (far outside the domain) is ``inf``, without a warning.

        Raises
        ------
        InvalidInput
            With ``field="points"``, if ``X`` is not a 2-D array of real numbers with
            ``d`` columns or contains NaN or infinity. Nothing is evaluated then.
        """
        if self.noise is not None:
            raise InvalidInput(
                f"{self.id} is noisy: its values depend on a random seed (give one), or use its "
                "noise-free id",
                field="seed",
            )
        return self._run(self.kernel, X)

    def evaluate_noise_free(self, X: object) -> FloatArray:
        """Evaluate without noise: :meth:`evaluate` for a deterministic function, the noise-free
        part (``kernel``) of a noisy one — e.g. to probe the shape of its minimum.

        Raises
        ------
        InvalidInput
            Invalid points (``field="points"``).
        """
        return self._run(self.kernel, X)

    def evaluate_noisy(self, X: object, rng: np.random.Generator) -> FloatArray:
        """Evaluate a noisy function, drawing its noise from ``rng``.

        Parameters
        ----------
        X : array_like, shape (n, d)
            As in :meth:`evaluate`.
        rng : numpy.random.Generator
            Source of the noise; the same generator state gives the same values.

        Returns
        -------
        ndarray, shape (n,)

        Raises
        ------
        InvalidInput
            Invalid points (``field="points"``), or the function is not noisy
            (``field="seed"``).
        """
        points = _validated_points(X, self.dim)
        if self.noise is None:
            raise InvalidInput(f"{self.id} is deterministic: it takes no seed", field="seed")
        return self.evaluate_with_normals(points, rng.standard_normal(int(points.shape[0])))

    def evaluate_with_normals(self, X: object, normals: FloatArray) -> FloatArray:
        """Evaluate a noisy function with its noise given: one ``N(0, 1)`` draw per point.

        Tables draw the normals per Sobol index block, so a point's noise does not depend on
        how the table is cut into chunks; :meth:`evaluate_noisy` draws them from a generator in
        row order (so there a point's noise depends on its row).

        Parameters
        ----------
        X : array_like, shape (n, d)
            As in :meth:`evaluate`.
        normals : array_like, shape (n,)
            Standard normal draws, row by row.

        Returns
        -------
        ndarray, shape (n,)

        Raises
        ------
        InvalidInput
            Invalid points (``field="points"``), normals of the wrong shape or not finite
            (``field="normals"``), or the function is not noisy (``field="seed"``).
        """
        if self.noise is None:
            raise InvalidInput(f"{self.id} is deterministic: it takes no seed", field="seed")
        points = _validated_points(X, self.dim)
        z = np.asarray(normals, dtype=np.float64)
        if z.shape != (points.shape[0],) or not np.isfinite(z).all():
            raise InvalidInput(
                f"normals must be {points.shape[0]} finite numbers, one per point", field="normals"
            )
        noise = self.noise
        return self._run(lambda p: noise(p, z), points)

    def _run(self, kernel: Kernel, X: object) -> FloatArray:
        points = _validated_points(X, self.dim)
        if points.shape[0] == 0:
            return np.empty(0, dtype=np.float64)
        with np.errstate(over="ignore"):
            return kernel(points)


def _validated_points(X: object, dim: int) -> FloatArray:
    try:
        array = np.asarray(X)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"points must be a rectangular array: {exc}", field="points") from exc
    if array.dtype.kind not in "iuf":
        raise InvalidInput(f"points must be real numbers, got dtype {array.dtype}", field="points")
    if array.ndim != 2 or array.shape[1] != dim:
        raise InvalidInput(
            f"points must have shape (n, {dim}), one point per row; got shape {array.shape}",
            field="points",
        )
    if not np.isfinite(array).all():
        raise InvalidInput("points must be finite: NaN and infinity are rejected", field="points")
    # C-contiguous, float64 and writable: cocoex reads the raw buffer and refuses read-only ones.
    points = np.ascontiguousarray(array, dtype=np.float64)
    return points if points.flags.writeable else points.copy()


@dataclass(frozen=True)
class Suite:
    """A family of benchmark functions sharing one id grammar.

    Attributes
    ----------
    name : str
        Suite name, the first segment of its ids.
    id_form : str
        Id template shown in error messages, e.g. ``"classic/{name}/d{dim}"``.
    names : tuple of str
        Function names, in listing order.
    dims : tuple of int
        Dimensions listed by :func:`list_functions` (``SUPPORTED_DIMS[name]``).
    accepted_dims : callable
        ``name -> range or tuple``: the dimensions :func:`get_function` accepts.
    instances : range or None
        Accepted instance numbers; None when the ids carry no instance.
    listed_instances : tuple of int
        Instances listed by :func:`list_functions`.
    build : callable
        ``(name, instance, dim) -> BenchmarkFunction``, called with validated arguments.
    refused : mapping
        ``(name, dim) -> reason`` for pairs the suite accepts in general but refuses, e.g. a
        definition that returns NaN for every input there.
    """

    name: str
    id_form: str
    names: tuple[str, ...]
    dims: tuple[int, ...]
    accepted_dims: Callable[[str], range | tuple[int, ...]]
    instances: range | None
    listed_instances: tuple[int, ...]
    build: Callable[[str, int | None, int], BenchmarkFunction]
    refused: Mapping[tuple[str, int], str] = field(default_factory=dict)


_SUITES: dict[str, Suite] = {}

SUPPORTED_DIMS: dict[str, tuple[int, ...]] = {}
"""Dimensions listed per suite when no dimension is asked for. ``get_function`` accepts
exactly these for BBOB and any ``d`` in 1..100 for ``classic`` (2..100 for Rosenbrock);
``list_functions(dim=d)`` lists every function accepted in dimension ``d``."""


def register_suite(suite: Suite) -> Suite:
    """Make a suite's functions reachable through :func:`get_function`.

    Parameters
    ----------
    suite : Suite
        The suite; its name must not be registered yet.

    Returns
    -------
    Suite
        The same suite.

    Raises
    ------
    ValueError
        If a suite with the same name is already registered.
    """
    if suite.name in _SUITES:
        raise ValueError(f"suite {suite.name!r} is already registered")
    _SUITES[suite.name] = suite
    SUPPORTED_DIMS[suite.name] = suite.dims
    return suite


def format_id(suite: str, name: str, instance: int | None, dim: int) -> str:
    """Return the canonical id, e.g. ``format_id("bbob", "f3", 1, 5) == "bbob/f3/i1/d5"``."""
    middle = "" if instance is None else f"/i{instance}"
    return f"{suite}/{name}{middle}/d{dim}"


def get_function(function_id: str) -> BenchmarkFunction:
    """Return the benchmark function registered under an id.

    Parameters
    ----------
    function_id : str
        Canonical id: ``{suite}/{name}/d{dim}`` or ``{suite}/{name}/i{instance}/d{dim}``
        (numbers without leading zeros).

    Returns
    -------
    BenchmarkFunction
        Shared, immutable (cached per id in-process).

    Raises
    ------
    UnknownFunction
        If the id is malformed, not canonical, or names no registered suite or function.
    InvalidInput
        With ``field="function_id"``, if the function exists but not in this dimension
        or instance.
    """
    if not isinstance(function_id, str):
        raise UnknownFunction(
            f"function id must be a string, got {type(function_id).__name__}", field="function_id"
        )
    return _get_function(function_id)


@functools.lru_cache(maxsize=4096)
def _get_function(function_id: str) -> BenchmarkFunction:
    suite, name, instance, dim = _parse(function_id)
    return suite.build(name, instance, dim)


def shown_id(function_id: str) -> str:
    """Return ``repr(function_id)``, cut to about 60 characters for error messages.

    Examples
    --------
    >>> shown_id("classic/sphere/d2")
    "'classic/sphere/d2'"
    >>> shown_id("x" * 100)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'... (100 characters)"
    """
    if len(function_id) <= _SHOWN_ID_LENGTH:
        return repr(function_id)
    return f"{function_id[:_SHOWN_ID_LENGTH]!r}... ({len(function_id)} characters)"


def _parse(function_id: str) -> tuple[Suite, str, int | None, int]:
    if len(function_id) > MAX_ID_LENGTH:
        raise UnknownFunction(
            f"{shown_id(function_id)} is not a function id: ids have at most "
            f"{MAX_ID_LENGTH} characters",
            field="function_id",
        )
    match = _ID.fullmatch(function_id)
    if match is None:
        raise UnknownFunction(
            f"{shown_id(function_id)} is not a function id; expected e.g. 'classic/sphere/d10', "
            f"'bbob/f15/i1/d10' or 'cec2017/f5/d10' (lower case; dimensions and instances of at "
            f"most {MAX_ID_DIGITS} digits)",
            field="function_id",
        )
    suite = _SUITES.get(match["suite"])
    if suite is None:
        raise UnknownFunction(
            f"unknown suite {match['suite']!r} in {shown_id(function_id)}; "
            f"hosted: {', '.join(sorted(_SUITES))}",
            field="function_id",
        )
    name, instance_text = match["name"], match["instance"]
    if name not in suite.names or (instance_text is None) != (suite.instances is None):
        raise UnknownFunction(
            f"no function {shown_id(function_id)}; {suite.name} ids read {suite.id_form} "
            f"with name in {', '.join(suite.names)}",
            field="function_id",
        )
    dim = _canonical_number(match["dim"], function_id)
    instance = None if instance_text is None else _canonical_number(instance_text, function_id)
    accepted = suite.accepted_dims(name)
    if dim not in accepted:
        raise InvalidInput(
            f"{suite.name}/{name} is not available in dimension {dim}; "
            f"dimensions: {_describe(accepted)}",
            field="function_id",
        )
    reason = suite.refused.get((name, dim))
    if reason is not None:
        raise InvalidInput(
            f"{suite.name}/{name} is refused in dimension {dim}: {reason}", field="function_id"
        )
    if suite.instances is not None and instance not in suite.instances:
        raise InvalidInput(
            f"{suite.name} instance {instance} is out of range; instances: "
            f"{_describe(suite.instances)}",
            field="function_id",
        )
    return suite, name, instance, dim


def _canonical_number(text: str, function_id: str) -> int:
    if text != str(int(text)):
        raise UnknownFunction(
            f"{shown_id(function_id)} is not canonical: write numbers without leading zeros",
            field="function_id",
        )
    return int(text)


def _describe(values: range | tuple[int, ...]) -> str:
    if isinstance(values, range):
        return f"{values.start}..{values.stop - 1}"
    return ", ".join(map(str, values))


def list_functions(*, suite: str | None = None, dim: int | None = None) -> list[BenchmarkFunction]:
    """List the registered functions in their listed (or the asked) dimension and instances.

    Parameters
    ----------
    suite : str, optional
        Only this suite.
    dim : int, optional
        Only this dimension. Every function that :func:`get_function` accepts in dimension
        ``dim`` is listed (classic: ``1 <= dim <= 100``, from each function's own minimum,
        e.g. 2 for Rosenbrock; BBOB: 2, 3, 5, 10, 20, 40), in the suite's listed instances.
        Without ``dim``, each suite's listed dimensions (``SUPPORTED_DIMS``).

    Returns
    -------
    list of BenchmarkFunction
        Sorted by suite name, then in each suite's name, instance and dimension order.

    Raises
    ------
    InvalidInput
        With ``field="suite"``, if ``suite`` is not a registered suite.
    """
    if suite is not None and suite not in _SUITES:
        raise InvalidInput(
            f"unknown suite {suite!r}; hosted: {', '.join(sorted(_SUITES))}", field="suite"
        )
    chosen = [_SUITES[suite]] if suite is not None else [_SUITES[s] for s in sorted(_SUITES)]
    return [
        get_function(format_id(s.name, name, instance, d))
        for s in chosen
        for name in s.names
        for instance in s.listed_instances or (None,)
        for d in _listed_dims(s, name, dim)
    ]


def _listed_dims(suite: Suite, name: str, dim: int | None) -> tuple[int, ...]:
    accepted = suite.accepted_dims(name)
    dims = suite.dims if dim is None else (dim,)
    return tuple(d for d in dims if d in accepted and (name, d) not in suite.refused)


def local_degree(function: BenchmarkFunction, directions: FloatArray, scales: FloatArray) -> float:
    """Measure the homogeneity degree of ``f - f*`` at the minimiser along rays.

    For each direction ``u`` fits ``log(f(x* + s u) - f*) = p_u log(s) + c_u`` by least
    squares over the scales and returns the median of the ``p_u``. For ``f - f* = s**p g(u)``
    every ``p_u`` equals ``p``; a bounded log-periodic factor (BBOB's ``T_osz``) biases a fit by
    at most ``2 * max|log factor| / log(s_max / s_min)``. The median ignores the few rays that
    run along a curved valley, where the ray leaves the valley faster than the sublevel set
    does. With :func:`power_law`, ``beta = d / p``.

    Parameters
    ----------
    function : BenchmarkFunction
        Must have ``x_opt`` and ``f_opt``.
    directions : ndarray, shape (k, d)
        Ray directions ``u`` (any non-zero length; the scales multiply them as given).
    scales : ndarray, shape (m,)
        Positive step lengths ``s``, at least two distinct.

    Returns
    -------
    float
        The median fitted degree ``p``.

    Raises
    ------
    NotApplicable
        If the optimum is unknown, or ``f - f* <= 0`` at a probe point (a plateau, or a
        step below the float resolution of ``f*``).
    """
    if function.x_opt is None or function.f_opt is None:
        raise NotApplicable(f"{function.id} has no known optimum")
    steps = np.asarray(scales, dtype=np.float64)
    units = np.asarray(directions, dtype=np.float64)
    probes = function.x_opt + steps[:, None, None] * units[None, :, :]
    excess = function.evaluate(probes.reshape(-1, function.dim)) - function.f_opt
    if not (excess > 0).all():
        raise NotApplicable(f"f - f* <= 0 at some probe point of {function.id}")
    log_excess = np.log(excess.reshape(steps.size, units.shape[0]))
    log_steps = np.log(steps) - np.log(steps).mean()
    slopes = log_steps @ log_excess / (log_steps @ log_steps)
    return float(np.median(slopes))
