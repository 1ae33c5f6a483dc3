"""Fixed ``values_are='f'`` rank cases whose answers were recorded from the main checkout.

``python tests/unit/domain/fpath_cases.py OUT.json`` with ``PYTHONPATH`` pointing at a checkout
writes that checkout's answers (every float as ``float.hex``). ``fpath_main.json`` was recorded
this way from main at commit c8de836 (before ranks of errors were ranked as gaps), from /tmp
with ``PYTHONPATH=/work/main``; ``test_gaps.py`` recomputes the same cases with this checkout and
requires them bit for bit. Only public domain functions that exist in both are used.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import numpy as np

from app.domain import absrank, sampling
from app.domain.absrank import RankContext
from app.domain.nested import NestedLevel, ladder_boxes, nested_curve

F_STAR = -450.0
X_OPT = np.array([0.3, -1.2, 2.0])
LOWER, UPPER = np.full(3, -5.0), np.full(3, 5.0)


def _sphere(X: np.ndarray) -> np.ndarray:
    return np.sum((X - X_OPT) ** 2, axis=1) + F_STAR


def _table(lower: np.ndarray, upper: np.ndarray, n: int = 4096) -> absrank.TableData:
    chunk = sampling.evaluate_chunk(_sphere, lower, upper, 0, 0, n, 256)
    values, low_x, _ = sampling.merge_chunk_results([chunk], 256)
    return absrank.build_table_data(values, low_x, k_exact=256, n_knots=512)


def _ctx(lower: np.ndarray, upper: np.ndarray, beta: float | None) -> RankContext:
    return RankContext(F_STAR, None, 0.0, beta, "test", X_OPT, lower, upper)


def _queries(table: absrank.TableData) -> np.ndarray:
    gaps = 10.0 ** np.arange(-15.0, 3.0, 0.5)
    inside = np.quantile(table.values, [0.0, 0.001, 0.3, 0.9, 1.0])
    return np.concatenate((F_STAR + gaps, inside, [F_STAR, F_STAR - 1e-9, 200.0]))


def _dump(res: absrank.RankResult) -> dict[str, Any]:
    return {
        "log10_v": [float(x).hex() for x in res.log10_v],
        "log10_lo": [float(x).hex() for x in res.log10_lo],
        "log10_hi": [float(x).hex() for x in res.log10_hi],
        "method": [str(m) for m in res.method],
    }


def cases() -> dict[str, Any]:
    """Every case's answer (JSON-ready, floats as hex)."""
    table = _table(LOWER, UPPER)
    t = _queries(table)
    out: dict[str, Any] = {}
    for tail, beta in (("auto", 1.5), ("power", None), ("linear", 1.5), ("paper", 1.5)):
        q = t[t <= table.values[-1]] if tail == "paper" else t  # its upper tail needs y_N > 0
        res = absrank.absolute_ranks(q, table, _ctx(LOWER, UPPER, beta), tail=tail)
        out[f"table-{tail}-{beta}"] = _dump(res)
    res = absrank.absolute_ranks(t, table, _ctx(LOWER, UPPER, 1.5), budget=7, runs=5)
    out["table-best-of-7-5-runs"] = _dump(res)
    analytic = absrank.analytic_ranks(t, "sphere", _ctx(LOWER, UPPER, 1.5))
    out["analytic-sphere"] = _dump(analytic)
    levels = []
    for box in ladder_boxes(LOWER, UPPER, X_OPT, factor=8.0, levels=3):
        level_table = _table(box.lower, box.upper)
        ctx = _ctx(box.lower, box.upper, 1.5)
        levels.append(NestedLevel(level_table, ctx, box.ln_volume_fraction, box.delta))
    curve = nested_curve(levels)
    out["nested"] = _dump(absrank.ranks_from_curve(t, curve))
    few = F_STAR + np.array([1e-6, 1e-2, 3.0])
    table_curve = absrank.table_curve(table, _ctx(LOWER, UPPER, 1.5))
    for aggregate, runs in (("mean", 3), ("median", 4)):
        for name, c in (("table", table_curve), ("nested", curve)):
            res = absrank.ranks_from_curve(few, c, runs=runs, aggregate=aggregate, budget=3)
            out[f"{name}-{aggregate}-{runs}"] = _dump(res)
    return out


if __name__ == "__main__":
    with open(sys.argv[1], "w") as fh:
        json.dump(cases(), fh, indent=0, sort_keys=True)
