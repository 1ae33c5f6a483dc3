"""Use cases of the function registry."""

from __future__ import annotations

import numpy as np

from app.domain.functions import BenchmarkFunction, get_function, list_functions
from app.errors import InvalidInput
from app.services.errors import domain_errors_as_problems


def find_function(function_id: str) -> BenchmarkFunction:
    """Return a registered function.

    Raises
    ------
    app.errors.NotFound
        Unknown id.
    app.errors.InvalidInput
        Known function at an unsupported dimension or malformed id.
    """
    with domain_errors_as_problems("function_id"):
        return get_function(function_id)


def search_functions(*, suite: str | None, dim: int | None) -> list[BenchmarkFunction]:
    """List registered functions, optionally filtered by suite and dimension.

    Raises
    ------
    app.errors.InvalidInput
        Unknown suite (``field="suite"``).
    """
    with domain_errors_as_problems("suite"):
        return list_functions(suite=suite, dim=dim)


def evaluate(
    function_id: str,
    points: list[list[float]],
    *,
    max_points: int,
    max_values: int | None = None,
    seed: int | None = None,
) -> np.ndarray:
    """Evaluate a batch of points.

    Parameters
    ----------
    function_id : str
    points : list of list of float, shape (n, d)
    max_points : int
        The deployment's limit on ``n``.
    max_values : int, optional
        The deployment's limit on ``n · d`` (the coordinates the body carries): at large ``d``
        it caps ``n`` below ``max_points``, so that every allowed request fits the body limit.
    seed : int, optional
        Noise seed, required for (and only accepted by) noisy functions:
        ``numpy.random.default_rng(seed)`` draws the noise of the rows in order.

    Raises
    ------
    app.errors.InvalidInput
        Ragged, empty, non-finite, wrong-width or over-limit ``points``, or a point where
        ``f`` overflows float64 (far outside the domain): JSON has no number for that value.
    """
    fn = find_function(function_id)
    if len(points) == 0:
        raise InvalidInput("points must hold at least one point", field="points")
    if len(points) > max_points:
        raise InvalidInput(f"at most {max_points} points per request", field="points")
    if max_values is not None and len(points) * fn.dim > max_values:
        raise InvalidInput(
            f"at most {max_values // fn.dim} points per request at d = {fn.dim} "
            f"(max_evaluate_values = {max_values} coordinates); send the points in several "
            "requests",
            field="points",
        )
    bad = next((i for i, p in enumerate(points) if len(p) != fn.dim), None)
    if bad is not None:
        raise InvalidInput(
            f"every point must have {fn.dim} coordinates; points[{bad}] has {len(points[bad])}",
            field=f"points.{bad}",
        )
    X = np.asarray(points, dtype=np.float64)
    # far outside the domain a kernel may meet inf (cos(inf) is NaN): refused just below
    with domain_errors_as_problems("points"), np.errstate(invalid="ignore"):
        if seed is None:
            values = fn.evaluate(X)
        else:
            values = fn.evaluate_noisy(X, np.random.default_rng(seed))
    overflowed = np.flatnonzero(~np.isfinite(values))
    if overflowed.size:
        i = int(overflowed[0])
        raise InvalidInput(
            f"f is not finite at points[{i}] ({values[i]}; {overflowed.size} such point(s) in "
            "all): the value overflows float64 there, far outside the domain, and JSON has no "
            "number for it",
            field="points",
            extra={"index": i},
        )
    return values
