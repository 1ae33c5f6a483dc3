"""The compact pairwise shape as it was built before its typed contracts (the dict-based
implementation of ``app.services.comparison_pairs`` and ``comparison_answers.compact`` /
``pairs_as_columns`` at commit 8c820c2), kept verbatim as the test oracle of the typed one:
tests/unit/services/test_comparison_pairs.py checks that both give the same JSON bytes."""

# ruff: noqa
from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

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


def pairs_as_columns(comparison: dict[str, Any]) -> dict[str, Any]:
    """A stored comparison with its pairwise results as columns (the answer's shape since
    issue 15): answers stored before, with one object per pair in ``relative.posthoc.pairs``
    and ``absolute.pairwise``, are read in the columns a new computation gives (the same
    numbers, one list per field), so their ids and requests stay what they were."""
    relative = comparison.get("relative") or {}
    posthoc = relative.get("posthoc") or {}
    absolute = comparison.get("absolute") or {}
    old_posthoc = isinstance(posthoc.get("pairs"), list)
    old_absolute = isinstance(absolute.get("pairwise"), list)
    if not (old_posthoc or old_absolute):
        return comparison
    out = dict(comparison)
    if old_posthoc:
        rows = posthoc["pairs"]
        keys = (
            *("i", "j", "a", "b", "rank_difference", "z", "p_value", "p_adjusted"),
            *("log10_p_value", "log10_p_adjusted", "significant"),
        )
        out["relative"] = {
            **relative,
            "posthoc": {**posthoc, "pairs": {key: [r[key] for r in rows] for key in keys}},
        }
    if old_absolute:
        rows = absolute["pairwise"]
        columns: dict[str, Any] = {key: [r[key] for r in rows] for key in ("i", "j", "a", "b")}
        for test in ("wilcoxon", "sign_test"):
            fields = list(rows[0][test]) if rows else []
            columns[test] = {f: [r[test][f] for r in rows] for f in fields}
        for key in ("p_adjusted", "log10_p_adjusted"):
            columns[key] = [r[key] for r in rows]
        columns["adjustment"] = rows[0]["adjustment"] if rows else None
        columns["significant"] = [r["significant"] for r in rows]
        out["absolute"] = {**absolute, "pairwise": columns}
    return out


def _posthoc_matrices_follow(posthoc: dict[str, Any], pairs: dict[str, Any], k: int) -> bool:
    """Whether ``p_matrix`` / ``p_vs_control`` (and their log10) are the pairs' adjusted
    p-values laid out by index (1 and 0 on the diagonal / at the control), as the client
    rebuilds them (``absrank_client.models.posthoc_matrices``)."""
    p, lp = pairs["p_adjusted"], pairs["log10_p_adjusted"]
    if isinstance(posthoc.get("p_matrix"), list) or isinstance(posthoc.get("log10_p_matrix"), list):
        m = [[1.0] * k for _ in range(k)]
        lm: list[list[Any]] = [[0.0] * k for _ in range(k)]
        for x, y, v, lv in zip(pairs["i"], pairs["j"], p, lp, strict=True):
            m[x][y] = m[y][x] = v
            lm[x][y] = lm[y][x] = lv
        if posthoc.get("p_matrix") != m or posthoc.get("log10_p_matrix") != lm:
            return False
    if isinstance(posthoc.get("p_vs_control"), list):
        c, lc = [1.0] * k, [0.0] * k
        for y, v, lv in zip(pairs["j"], p, lp, strict=True):
            c[y], lc[y] = v, lv
        if posthoc.get("p_vs_control") != c or posthoc.get("log10_p_vs_control") != lc:
            return False
    return True


def _probabilities_follow(bt: dict[str, Any]) -> bool:
    """Whether the Bradley–Terry ``probabilities`` are ``θ_i / (θ_i + θ_j)`` of the finite
    ``strengths`` (0.5 on the diagonal), bit for bit, as the client rebuilds them."""
    s, probs = bt.get("strengths"), bt.get("probabilities")
    if not isinstance(probs, list) or not all(isinstance(x, float) for x in s or ()):
        return False
    a = np.asarray(s, dtype=np.float64)
    with np.errstate(all="ignore"):
        m = a[:, None] / (a[:, None] + a[None, :])
    np.fill_diagonal(m, 0.5)
    return bool(m.tolist() == probs)


def compact(comparison: dict[str, Any]) -> dict[str, Any]:
    """A comparison (result or read) in the compact shape of issue 15
    (:mod:`app.services.comparison_pairs`): the post-hoc pairs and the absolute pairwise tests
    as distinct rows and codes; ``p_matrix``, ``log10_p_matrix``, ``p_vs_control``,
    ``log10_p_vs_control`` and the Bradley–Terry ``probabilities`` left out where the client
    rebuilds them exactly (kept otherwise, e.g. probabilities of a degenerate fit). Answers in
    the columns shape (stored before) are converted; compact ones are returned as they are."""
    k = len(comparison.get("algorithms") or ())
    relative = comparison.get("relative") or {}
    posthoc = relative.get("posthoc") or {}
    absolute = comparison.get("absolute") or {}
    pairs, pairwise = posthoc.get("pairs"), absolute.get("pairwise")
    out = dict(comparison)
    if isinstance(pairs, dict) and "order" not in pairs:
        new_posthoc = dict(posthoc)
        if _posthoc_matrices_follow(posthoc, pairs, k):
            for key in ("p_matrix", "log10_p_matrix", "p_vs_control", "log10_p_vs_control"):
                new_posthoc.pop(key, None)
        new_posthoc["pairs"] = compact_columns(pairs, k)
        bt = dict(relative.get("bradley_terry") or {})
        if _probabilities_follow(bt):
            del bt["probabilities"]
        out["relative"] = {**relative, "posthoc": new_posthoc, "bradley_terry": bt}
    if isinstance(pairwise, dict) and "order" not in pairwise:
        out["absolute"] = {**absolute, "pairwise": compact_columns(pairwise, k)}
    return out
