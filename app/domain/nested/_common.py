"""Constants and argument checks shared by the modules of :mod:`app.domain.nested`."""

from __future__ import annotations

import math

import numpy as np

from app.domain import absrank, sampling
from app.domain.errors import InvalidInput, NotApplicable

LN10 = math.log(10.0)
#: A sample farther from ``x*`` than this share of the way to a face of ``R_j`` (a face inside the
#: outer region) counts as lying outside ``R_j`` (the margin of :data:`absrank.CLIP_SHARE`).
CLIP_SHARE = absrank.CLIP_SHARE
#: A level serves only if at least this many of its own samples lie below its threshold ``τ*_j``:
#: a box that sees (almost) none of the sublevel sets it would serve adds only extrapolation, and
#: is the signature of a box that misses the minimiser (a wrong ``x*``).
MIN_INNER_SAMPLES = 10
#: Lower-tail modes accepted for the deepest level (the paper's tail ignores ``f*``).
TAIL_MODES = ("auto", "power", "linear")


def check_int(value: object, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise InvalidInput(f"{name} must be an integer >= {minimum}, got {value!r}", field=name)
    return int(value)


def domain_and_opt(
    lower: np.ndarray, upper: np.ndarray, x_opt: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    lo, hi = sampling.region_box(lower, upper, None, None)
    if x_opt is None:
        raise NotApplicable("nested regions need a known minimiser x*", field="x_opt")
    x = np.asarray(x_opt, dtype=np.float64)
    if x.shape != lo.shape or not np.all(np.isfinite(x)):
        raise InvalidInput(f"x_opt must be a finite array of shape {lo.shape}", field="x_opt")
    if np.any(x < lo) or np.any(x > hi):
        raise InvalidInput("x_opt must lie in the domain", field="x_opt")
    return lo, hi, x


def largest_reach(lo: np.ndarray, hi: np.ndarray, x: np.ndarray) -> float:
    """``R``: the largest distance from ``x*`` to a face of ``Ω`` (over both faces, all axes)."""
    return float(np.max(np.maximum(x - lo, hi - x)))
