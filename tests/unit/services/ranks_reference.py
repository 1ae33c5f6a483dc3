"""The per-value implementation of the absolute-ranks items, kept as the test oracle.

This is ``app.services.ranks._values.rank_items`` and the endpoint's ``to_json(out)`` as they
were before the items became columns (:class:`app.services.ranks.RankColumns`): one dict per
value, serialized by ``pydantic_core.to_json``. The property tests compare the columns' bytes
with these.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from pydantic import TypeAdapter
from pydantic_core import to_json

from app.domain import absrank

_COLUMNS = TypeAdapter(
    tuple[list[float], list[float], list[float], list[str], list[float], list[float]]
)


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def reference_rank_items(
    values: list[float], res: absrank.RankResult, provisional: np.ndarray | None = None
) -> list[dict[str, Any]]:
    """One ``RankItem`` dict per value (the implementation the columns replace)."""

    def interval(lo: float, hi: float) -> dict[str, Any]:
        return {
            "log10_lo": _finite_or_none(lo),
            "log10_hi": _finite_or_none(hi),
            "v_lo": 10.0**lo if math.isfinite(lo) else 0.0,
            "v_hi": 10.0**hi if math.isfinite(hi) else 0.0,
        }

    raw = (
        values,
        res.v.tolist(),
        res.log10_v.tolist(),
        res.method.tolist(),
        res.log10_lo.tolist(),
        res.log10_hi.tolist(),
    )
    _COLUMNS.validate_python(raw)
    out = [
        {
            "value": value,
            "v": v,
            "log10_v": _finite_or_none(log10_v),
            "method": method,
            "interval": interval(lo, hi),
        }
        for value, v, log10_v, method, lo, hi in zip(*raw, strict=True)
    ]
    if provisional is not None:
        for item, marked in zip(out, provisional.tolist(), strict=True):
            if marked:
                item["interval"] |= {"log10_lo": None, "v_lo": 0.0}
                item["provisional"] = True
    return out


def reference_bytes(body: dict[str, Any]) -> bytes:
    """The endpoint's bytes as they were: ``to_json`` of the plain body."""
    return to_json(body)
