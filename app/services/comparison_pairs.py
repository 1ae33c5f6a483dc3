"""The compact shape of a comparison's pairwise results (issue 15): one row per *distinct*
result and a small integer code per pair.

A comparison of k algorithms has up to k(k − 1)/2 pairs (19,900 at k = 200), but far fewer
distinct results: the sign test of a pair depends only on its counts, the exact signed-rank
test on ``(n_effective, statistic)``, Nemenyi's p-values on ``|R_i − R_j|``. So each family is
sent as (:class:`app.schemas.comparisons.PairCodes`):

* ``order``: ``upper-triangle`` — pair ``p`` is the p-th ``(i, j)``, ``i < j``, row by row
  (``(0, 1), (0, 2), …, (0, k−1), (1, 2), …``); or ``listed`` — pair ``p`` is ``(i[p], j[p])``
  (families against a control);
* per group of fields (the post-hoc pairs: one group, at the top; the absolute pairwise
  tests: ``wilcoxon``, ``sign_test`` and ``adjusted``, the family's adjusted p-values):
  ``constant``, fields equal for every pair, given once (``"method": "exact"``);
  ``distinct``, the other fields, one list per field, one entry per distinct result; and
  ``code``, per pair, the row of ``distinct`` it has; a negative code ``c`` means row
  ``−1 − c`` with the ``negated`` fields (``rank_difference``, ``z``: odd in ``(i, j)``)
  negated — used only where that reproduces the pair's values exactly.

Lossless: every value keeps its JSON text (full float precision); the client
(``absrank_client.models.pair_rows``) expands it back to the columns, and
:func:`expand_pairs` does the same here (tests check ``expand(compact(x)) == x``).
"""

from __future__ import annotations

import json
import math
from typing import Any

#: Fields of the post-hoc pairs that change sign when ``i`` and ``j`` swap.
ODD_FIELDS = ("rank_difference", "z")
_INDEX = ("i", "j", "a", "b")


def _negated(value: Any) -> Any:
    return -value if isinstance(value, float) and math.isfinite(value) else None


def _group(flat: dict[str, list[Any]]) -> dict[str, Any]:
    """Per-pair columns as ``code``, ``negated``, ``constant``, ``distinct``."""
    names = list(flat)
    odd = [names.index(f) for f in ODD_FIELDS if f in flat]
    rows: dict[str, int] = {}
    table: list[tuple[Any, ...]] = []
    code: list[int] = []
    for values in zip(*(flat[f] for f in names), strict=True):
        key = json.dumps(values)
        row = rows.get(key)
        if row is not None:
            code.append(row)
            continue
        if odd:
            mirror = list(values)
            for o in odd:
                mirror[o] = _negated(values[o])
            if all(mirror[o] is not None for o in odd):
                row = rows.get(json.dumps(tuple(mirror)))
                if row is not None:
                    code.append(-1 - row)
                    continue
        rows[key] = len(table)
        code.append(len(table))
        table.append(values)
    mirrored = any(c < 0 for c in code)
    constant: dict[str, Any] = {}
    distinct: dict[str, list[Any]] = {}
    for c, f in enumerate(names):
        col = [r[c] for r in table]
        if len({json.dumps(v) for v in col}) == 1 and not (mirrored and c in odd):
            constant[f] = col[0]
        else:
            distinct[f] = col
    negated = [names[o] for o in odd if names[o] in distinct]
    return {"code": code, "negated": negated, "constant": constant, "distinct": distinct}


#: The groups of the absolute pairwise tests: each nested test, and the family's adjustment.
ADJUSTED = ("p_adjusted", "log10_p_adjusted", "significant")


def compact_columns(columns: dict[str, Any], k: int) -> dict[str, Any]:
    """Columns (``i``, ``j``, ``a``, ``b`` and one list per field, nested tests as
    ``{test: {field: [...]}}``) in the compact shape: one group of the flat fields (post-hoc
    pairs), or one group per nested test plus ``adjusted`` (absolute pairwise tests)."""
    i, j = list(columns["i"]), list(columns["j"])
    triangle = [(x, y) for x in range(k) for y in range(x + 1, k)]
    listed = triangle != list(zip(i, j, strict=True))
    out: dict[str, Any] = {"order": "listed" if listed else "upper-triangle", "n_pairs": len(i)}
    if listed:
        out["i"], out["j"] = i, j
    nested = {key: v for key, v in columns.items() if isinstance(v, dict)}
    flat = {key: v for key, v in columns.items() if isinstance(v, list) and key not in _INDEX}
    once = {key: v for key, v in columns.items() if not isinstance(v, (dict, list))}
    if nested:
        for key, cols in nested.items():
            out[key] = _group(cols)
        out["adjusted"] = _group(flat)
    else:
        out.update(_group(flat))
    out.update(once)
    return out


def pair_indices(pairs: dict[str, Any], k: int) -> tuple[list[int], list[int]]:
    """``(i, j)`` of every pair of a compact family."""
    if pairs.get("order") == "listed":
        return list(pairs["i"]), list(pairs["j"])
    tri = [(x, y) for x in range(k) for y in range(x + 1, k)]
    return [t[0] for t in tri], [t[1] for t in tri]


def _expand(group: dict[str, Any]) -> dict[str, list[Any]]:
    code, distinct, constant = group["code"], group["distinct"], group["constant"]
    negated = set(group.get("negated", ()))
    out: dict[str, list[Any]] = {f: [v] * len(code) for f, v in constant.items()}
    for f, col in distinct.items():
        if f in negated:
            out[f] = [col[c] if c >= 0 else -col[-1 - c] for c in code]
        else:
            out[f] = [col[c] if c >= 0 else col[-1 - c] for c in code]
    return out


def expand_pairs(pairs: dict[str, Any], algorithms: list[str]) -> dict[str, Any]:
    """A compact family back in the columns shape (``i``, ``j``, ``a``, ``b``, one list per
    field, nested tests as ``{test: {field: [...]}}``); the inverse of
    :func:`compact_columns` (up to the order of the keys)."""
    i, j = pair_indices(pairs, len(algorithms))
    out: dict[str, Any] = {"i": i, "j": j, "a": [algorithms[x] for x in i]}
    out["b"] = [algorithms[x] for x in j]
    skip = {"order", "n_pairs", "i", "j", "code", "negated", "constant", "distinct"}
    if "code" in pairs:
        out.update(_expand(pairs))
    for key, value in pairs.items():
        if key in skip:
            continue
        if key == "adjusted" and isinstance(value, dict):
            out.update(_expand(value))
        elif isinstance(value, dict):
            out[key] = _expand(value)
        else:
            out[key] = value
    return out
