"""Validation of the numerical core's scalar options; each failure names its request field."""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np

from app.domain.errors import InvalidInput

VALUES_ARE = ("f", "error")
"""What ranked values are: objective values ``f`` or errors (gaps ``t - f*``)."""


def positive_int(value: object, name: str, *, minimum: int = 1) -> int:
    """``value`` as an int, refused unless it is an integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise InvalidInput(f"{name} must be an integer, got {value!r}", field=name)
    if int(value) < minimum:
        raise InvalidInput(f"{name} must be >= {minimum}, got {value}", field=name)
    return int(value)


def float64_array(values: Sequence[float]) -> np.ndarray:
    """A list of Python floats as a float64 array, read-only, converted in one C call
    (``struct.pack``: each entry is ``PyFloat_AsDouble`` of it, as ``np.asarray`` does; about
    half of ``np.asarray``'s time on a list of floats)."""
    packed = struct.pack(f"{len(values)}d", *values)
    return np.frombuffer(packed, dtype=np.float64)


def finite_1d(values: object, name: str) -> np.ndarray:
    """``values`` as a finite one-dimensional float64 array."""
    arr = np.atleast_1d(np.asarray(values, dtype=np.float64))
    if arr.ndim != 1:
        raise InvalidInput(f"{name} must be one-dimensional, got shape {arr.shape}", field=name)
    if np.count_nonzero(np.isfinite(arr)) != arr.size:
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise InvalidInput(f"{name} must be finite; entry {bad} is {arr[bad]}", field=name)
    return arr


def check_values_are(values_are: str) -> bool:
    """Whether the values are errors (gaps to ``f*``)."""
    if values_are not in VALUES_ARE:
        raise InvalidInput(
            f"values_are must be one of {list(VALUES_ARE)}, got {values_are!r}", field="values_are"
        )
    return values_are == "error"


def check_confidence(confidence: float) -> float:
    """``confidence`` as a float in (0, 1)."""
    if isinstance(confidence, bool) or not isinstance(confidence, int | float | np.floating):
        raise InvalidInput(f"confidence must be a number, got {confidence!r}", field="confidence")
    if not 0.0 < confidence < 1.0:
        raise InvalidInput(f"confidence must be in (0, 1), got {confidence!r}", field="confidence")
    return float(confidence)
