"""Domain results → JSON types: dataclasses, numpy scalars and arrays, infinities."""

from __future__ import annotations

import dataclasses
import math
from functools import cache
from typing import Any

import numpy as np
from pydantic import TypeAdapter

INF_STRINGS = {math.inf: "Infinity", -math.inf: "-Infinity"}


def jsonable(obj: Any) -> Any:
    """Convert a domain result to plain JSON types.

    Frozen dataclasses become dicts, tuples and arrays become lists, numpy scalars become Python
    numbers, ``±inf`` becomes ``"Infinity"`` / ``"-Infinity"`` (JSON has no infinity) and NaN
    becomes ``None`` (domain results never carry NaN; this is a last guard).
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "iub" or (obj.dtype.kind == "f" and np.isfinite(obj).all()):
            return obj.tolist()  # plain numbers already: skip the per-element walk
        return jsonable(obj.tolist())
    if isinstance(obj, np.bool_ | bool):
        return bool(obj)
    if isinstance(obj, np.integer | int):
        return int(obj)
    if isinstance(obj, np.floating | float):
        x = float(obj)
        if math.isnan(x):
            return None
        return INF_STRINGS.get(x, x)
    return obj


def finite_or_none(values: Any) -> np.ndarray:
    """A float array with JSON ``null`` (None) as NaN: the missing-value marker of requests."""
    return np.array([math.nan if v is None else v for v in values], dtype=np.float64)


@cache
def adapter(model: Any) -> TypeAdapter[Any]:
    """The TypeAdapter of a response model, built once per model (a model is a type)."""
    return TypeAdapter(model)


def dump(model: Any, content: object) -> bytes:
    """``content`` validated by ``model`` and serialized as JSON bytes: what
    ``app.api.responses.model_response`` sends, and what a job stores as its answer."""
    ta = adapter(model)
    return ta.dump_json(ta.validate_python(content), exclude_unset=True)
