"""Rules of the results archive that do not depend on HTTP or storage.

What a stored run must satisfy (:func:`run_problem`), the tolerance below ``f*``
(:func:`optimum_tolerance`), and the content hash that names a result set
(:func:`content_sha256`, :func:`set_id`). Pure: the service and the importers share them.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence

from app.domain.functions import BenchmarkFunction
from app.domain.results import RunResult, ValuesAre

__all__ = [
    "F_STAR_ATOL",
    "F_STAR_RTOL",
    "content_sha256",
    "normalized_content",
    "optimum_tolerance",
    "run_problem",
    "set_id",
    "value_problem",
]

#: A value may lie this far below ``f*`` (an error below 0) and still be accepted: published
#: figures are rounded, and ``f − f*`` computed in floating point can be a few ulps negative.
#: Tolerance ``= F_STAR_ATOL + F_STAR_RTOL·|f*|`` (f values) and ``F_STAR_ATOL`` (errors).
F_STAR_ATOL = 1e-8
F_STAR_RTOL = 1e-12


def optimum_tolerance(fn: BenchmarkFunction, values_are: ValuesAre) -> float:
    """How far below ``f*`` (an ``f`` value) or below 0 (an error) a value is accepted."""
    if values_are == "error" or fn.f_opt is None:
        return F_STAR_ATOL
    return F_STAR_ATOL + F_STAR_RTOL * abs(fn.f_opt)


def value_problem(value: float, fn: BenchmarkFunction, values_are: ValuesAre) -> str | None:
    """Why ``value`` cannot be a result on ``fn`` (``None`` when it can).

    A value must be finite; an error must be ``>= 0`` and needs a known ``f*``; an ``f`` value
    must not lie below ``f*`` (both within :func:`optimum_tolerance`).
    """
    if not math.isfinite(value):
        return f"value {value!r} is not finite"
    tol = optimum_tolerance(fn, values_are)
    if values_are == "error":
        if fn.f_opt is None:
            return f"{fn.id} has no known f*, so its values cannot be errors; send values_are='f'"
        if value < -tol:
            return f"error {value!r} is below 0 (f − f* must be >= -{tol:g})"
    elif fn.f_opt is not None and value < fn.f_opt - tol:
        return f"value {value!r} is below f* = {fn.f_opt!r} of {fn.id} (tolerance {tol:g})"
    return None


def run_problem(
    run: RunResult, fn: BenchmarkFunction, values_are: ValuesAre
) -> tuple[str, str] | None:
    """Why ``run`` cannot be stored, as ``(attribute, message)``; ``None`` when it can.

    ``attribute`` is ``"budget"``, ``"value"`` or ``"trajectory"``. The budget is ``>= 1``; a
    trajectory's evaluations stay within the budget and its last best-so-far value equals the
    run's value (so every point, being no lower, satisfies the value's rules too).
    """
    if run.budget < 1:
        return "budget", f"budget {run.budget} is below 1"
    problem = value_problem(run.value, fn, values_are)
    if problem is not None:
        return "value", problem
    traj = run.trajectory
    if traj is None:
        return None
    if not all(math.isfinite(b) for b in traj.best):
        return "trajectory", "trajectory values must be finite"
    if traj.evaluations[-1] > run.budget:
        return "trajectory", (
            f"the trajectory reaches {traj.evaluations[-1]} evaluations, beyond the budget "
            f"{run.budget}"
        )
    if traj.best[-1] != run.value:
        return "trajectory", (
            f"the trajectory's last best-so-far value {traj.best[-1]!r} is not the run's value "
            f"{run.value!r}"
        )
    return None


def _num(value: float) -> str:
    """A float as its shortest round-trip text (``-0.0`` as ``0.0``)."""
    return repr(float(value) + 0.0)


def normalized_content(
    metadata: Mapping[str, str | int | float | None], runs: Sequence[RunResult]
) -> dict[str, object]:
    """The content a set's id is the hash of: its metadata and its runs in a canonical form.

    Runs are sorted by ``(function_id, run)``; each is ``[function_id, run, value, budget,
    trajectory]`` with floats as their shortest round-trip text (``repr``), and a trajectory as
    ``[[evaluations, best], ...]`` or ``null``. Floats in ``metadata`` are written the same way.
    How the set arrived (JSON, CSV, an archive) is not part of it.
    """
    meta = {k: _num(v) if isinstance(v, float) else v for k, v in sorted(metadata.items())}
    rows = [
        [
            r.function_id,
            r.run,
            _num(r.value),
            r.budget,
            None
            if r.trajectory is None
            else [
                [e, _num(b)]
                for e, b in zip(r.trajectory.evaluations, r.trajectory.best, strict=True)
            ],
        ]
        for r in sorted(runs, key=lambda r: (r.function_id, r.run))
    ]
    return {"metadata": meta, "runs": rows}


def content_sha256(
    metadata: Mapping[str, str | int | float | None], runs: Sequence[RunResult]
) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of :func:`normalized_content`."""
    text = json.dumps(
        normalized_content(metadata, runs),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(text.encode()).hexdigest()


def set_id(sha256: str) -> str:
    """A result set's id: ``"r"`` and the first 23 hex digits of its content hash."""
    return "r" + sha256[:23]
