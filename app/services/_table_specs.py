"""Table specs: what a table is (function, region, N, seed, sampler, versions, representation).

A spec is validated and normalized once (:func:`table_spec`); its canonical SHA-256
(:func:`spec_hash`) names the table (:func:`table_id_for`), so asking twice for the same spec
gives the same table. Public names are re-exported by :mod:`app.services.tables`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any, Protocol

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.domain import sampling
from app.domain.functions import BenchmarkFunction, get_function
from app.domain.tablebuild import NOISE_BLOCK, NOISE_STREAM, TaskSpan
from app.errors import InvalidInput
from app.services.errors import domain_errors_as_problems
from app.services.provenance import canonical_sha256, library_versions

REPRESENTATION_VERSION = 1
#: Smallest table: 2^4 samples.
MIN_LOG2N = 4
#: What ``summary.quantiles`` are (``summary.quantiles_are`` of every table read): order
#: statistics of the samples, not the inverse of the published curve.
SUMMARY_QUANTILES_ARE = (
    "sample order statistics: t = y_(r), the r-th smallest sample, r = ceil(v (N + 1)) clamped "
    "to [1, N] (so y_1 for every v <= 1/(N + 1)); not the inverse of the published curve v1 "
    "(Eq. 28 interpolated between the samples, with its tails below y_1 and above y_N), which "
    "GET /v1/tables/{table_id}/quantiles gives"
)
#: Distributions whose versions enter the spec (they decide the sampled values).
SPEC_PACKAGES = {"numpy": "numpy", "scipy": "scipy", "cocoex": "coco-experiment"}
MAX_SEED = 2**63 - 1
MAX_LIST_LIMIT = 1000

SM = sessionmaker[Session]


class Dispatcher(Protocol):
    """Where services send work; implemented by ``workers.tasks.HueyDispatcher``."""

    def enqueue_span(self, span: TaskSpan) -> None:
        """Queue a task on chunks of a table (it hands on what it does not take)."""

    def enqueue_merge(self, table_id: str) -> None:
        """Queue the merge of a table."""


# ---------------------------------------------------------------------------- spec


def table_location(table_id: str) -> str:
    """Return the URL path of a table."""
    return f"/v1/tables/{table_id}"


def spec_versions() -> dict[str, str]:
    """Versions of the libraries that determine a table's sampled values.

    Returns
    -------
    dict
        ``{"numpy": ..., "scipy": ..., "cocoex": ...}`` from ``importlib.metadata``.
    """
    installed = library_versions()
    return {key: installed.get(dist, "absent") for key, dist in SPEC_PACKAGES.items()}


def sampler_description() -> str:
    """How the Sobol engine is seeded (``seed=`` and ``rng=`` give different points)."""
    return f"scipy.stats.qmc.Sobol(scramble=True, {sampling.SOBOL_SEED_KEYWORD}=seed)"


def table_spec(
    settings: Settings,
    *,
    function_id: str,
    delta: float | Sequence[float] | None = None,
    log2n: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """Validate a table request and return its normalized spec.

    Parameters
    ----------
    settings : Settings
        Supplies the default and maximum ``log2n`` and the representation parameters.
    function_id : str
        A registered function, e.g. ``"bbob/f15/i1/d10"``.
    delta : float or sequence of float, optional
        Half-width of the box ``[x* - δ, x* + δ]`` clipped to the domain: one number (the cube
        ``[x* - δ, x* + δ]^d``, spec unchanged) or ``d`` positive numbers ``δ_i`` (the box
        ``Π_i [x*_i - δ_i, x*_i + δ_i]``, recorded as a list); ``None`` samples the whole
        domain.
    log2n : int, optional
        ``N = 2^log2n`` samples; default ``settings.table_default_log2n``.
    seed : int, default 0
        Sobol scrambling seed, ``0 <= seed < 2^63``.

    Returns
    -------
    dict
        JSON-ready spec: ``function_id``, ``region`` (``kind``, ``delta`` for boxes, resolved
        ``lower``/``upper``), ``n``, ``seed``, ``sampler``, ``versions``, ``representation``.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        Bad ``delta`` (also one whose clipped box is narrower than ``1e-9`` x the domain's
        width in some coordinate), ``log2n`` or ``seed``, or a box around an unknown
        minimiser. ``field`` is ``"delta"``, or ``"delta.i"`` for coordinate ``i`` of a list
        (the list's length is ``"delta"``).
    """
    with domain_errors_as_problems("function_id"):
        fn = get_function(function_id)
    log2n = settings.table_default_log2n if log2n is None else log2n
    if isinstance(log2n, bool) or not isinstance(log2n, int):
        raise InvalidInput("log2n must be an integer", field="log2n")
    if not MIN_LOG2N <= log2n <= settings.table_max_log2n:
        raise InvalidInput(
            f"log2n must be between {MIN_LOG2N} and {settings.table_max_log2n}", field="log2n"
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise InvalidInput("seed must be an integer in [0, 2^63 - 1]", field="seed")
    region: dict[str, Any]
    if delta is None:
        region = {"kind": "domain", "lower": as_floats(fn.lower), "upper": as_floats(fn.upper)}
    else:
        region = _box_region(fn, delta)
    spec: dict[str, Any] = {
        "function_id": fn.id,
        "region": region,
        "n": 2**log2n,
        "seed": int(seed),
        "sampler": sampler_description(),
        "versions": spec_versions(),
        "representation": {
            "version": REPRESENTATION_VERSION,
            "k_exact": settings.table_k_exact,
            "n_knots": settings.table_n_knots,
        },
    }
    if fn.noisy:
        spec["noise"] = (
            "one N(0, 1) per point: Sobol index i takes draw i mod B of numpy.random.default_rng("
            f"SeedSequence([{NOISE_STREAM:#x}, seed, i // B])), B = {NOISE_BLOCK}"
        )
    return spec


def _box_delta(fn: BenchmarkFunction, delta: object) -> float | list[float]:
    """``delta`` as a float or a list of ``d`` floats, each finite and > 0."""
    if isinstance(delta, bool):
        raise InvalidInput("delta must be a finite number > 0 or a list of them", field="delta")
    if isinstance(delta, int | float | np.number):
        value = float(delta)
        if not math.isfinite(value) or value <= 0:
            raise InvalidInput("delta must be a finite number > 0", field="delta")
        return value
    if not isinstance(delta, Sequence | np.ndarray) or isinstance(delta, str):
        raise InvalidInput("delta must be a finite number > 0 or a list of them", field="delta")
    values = list(delta)
    if len(values) != fn.dim:
        raise InvalidInput(
            f"delta must be one number or {fn.dim} numbers (one per coordinate of {fn.id}), "
            f"got {len(values)}",
            field="delta",
        )
    out = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, int | float | np.number):
            raise InvalidInput(f"delta.{i} must be a number, got {v!r}", field=f"delta.{i}")
        value = float(v)
        if not math.isfinite(value) or value <= 0:
            raise InvalidInput(f"delta.{i} must be a finite number > 0", field=f"delta.{i}")
        out.append(value)
    return out


def _box_region(fn: BenchmarkFunction, delta: object) -> dict[str, Any]:
    """The region ``{"kind": "box", "delta", "lower", "upper"}`` of a (per-coordinate) box."""
    half = _box_delta(fn, delta)
    per_coordinate = isinstance(half, list)
    if fn.x_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known minimiser x*, so a box region [x*-δ, x*+δ] is undefined",
            field="delta",
        )
    with domain_errors_as_problems("delta"):
        lower, upper = sampling.region_box(fn.lower, fn.upper, fn.x_opt, half)
    # a side under 1e-9 of the domain's collapses the Sobol points onto a few floats
    # (or onto x* itself, where every sample is f*): the table would be degenerate
    domain_width = fn.upper - fn.lower
    thin = np.flatnonzero(upper - lower < 1e-9 * domain_width)
    if thin.size:
        i = int(thin[0])
        if per_coordinate:
            assert isinstance(half, list)
            raise InvalidInput(
                f"delta.{i} = {half[i]:g} is too small: the box clipped to the domain is "
                f"{upper[i] - lower[i]:g} wide in coordinate {i}, less than 1e-9 x the domain's "
                f"width {domain_width[i]:g} there, so the table would be degenerate; use "
                f"delta.{i} >= {1e-9 * float(domain_width[i]):g}",
                field=f"delta.{i}",
            )
        raise InvalidInput(
            f"delta = {half:g} is too small: the box [x* - delta, x* + delta] clipped to "
            f"the domain is {upper[i] - lower[i]:g} wide in coordinate {i}, less than "
            f"1e-9 x the domain's width {domain_width[i]:g} there, so the table would be "
            f"degenerate; use delta >= {1e-9 * float(domain_width.max()):g}",
            field="delta",
        )
    return {"kind": "box", "delta": half, "lower": as_floats(lower), "upper": as_floats(upper)}


def spec_hash(spec: Mapping[str, Any]) -> str:
    """Return the SHA-256 (hex) of the canonical JSON of a spec."""
    return canonical_sha256(spec)


def table_id_for(spec_sha256: str) -> str:
    """Return the table id of a spec hash: ``"t"`` + its first 23 hex digits (24 characters)."""
    return "t" + spec_sha256[:23]


def chunk_size_for(settings: Settings, n: int) -> int:
    """Return ``B = min(2^settings.table_chunk_log2, n)``."""
    return min(1 << settings.table_chunk_log2, n)


def as_floats(a: Iterable[Any]) -> list[float]:
    """``a`` flattened to a list of Python floats (JSON-ready)."""
    return [float(v) for v in np.asarray(a, dtype=np.float64).ravel()]


def utc_now() -> datetime:
    """The current time, UTC."""
    return datetime.now(UTC)
