"""The compact pairwise families of a comparison, read back per pair.

The server sends a comparison's pairs (``relative.posthoc.pairs``, ``absolute.pairwise``) as
columns with shared values given once (README, "Comparisons"); these readers turn them into
columns (:func:`pair_columns`), one object per pair (:func:`pair_rows`), the post-hoc p-value
matrices (:func:`posthoc_matrices`) and the Bradley–Terry probabilities
(:func:`bradley_terry_probabilities`), as the server laid them out. Also importable from
:mod:`absrank_client.models`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from absrank_client._models_base import JSON, _names

__all__ = [
    "bradley_terry_probabilities",
    "pair_columns",
    "pair_names",
    "pair_rows",
    "posthoc_matrices",
]


def _expand_group(group: JSON) -> dict[str, list[Any]]:
    """One compact group of pair fields (``code``, ``negated``, ``constant``, ``distinct``)
    as columns: row ``code[p]`` of ``distinct`` (``−1 − c`` with ``negated`` fields negated
    for a negative code) and ``constant`` for every pair."""
    code = list(group.get("code") or ())
    distinct, constant = group.get("distinct") or {}, group.get("constant") or {}
    negated = set(group.get("negated") or ())
    out: dict[str, list[Any]] = {f: [v] * len(code) for f, v in constant.items()}
    for f, col in distinct.items():
        if f in negated:
            out[f] = [col[c] if c >= 0 else -col[-1 - c] for c in code]
        else:
            out[f] = [col[c] if c >= 0 else col[-1 - c] for c in code]
    return out


def _triangle(n_pairs: int) -> tuple[list[int], list[int]]:
    """``(i, j)`` of the upper-triangle order: ``(0, 1), (0, 2), …, (1, 2), …``."""
    k = (1 + math.isqrt(1 + 8 * n_pairs)) // 2 if n_pairs else 0
    i = [x for x in range(k) for _ in range(x + 1, k)]
    j = [y for x in range(k) for y in range(x + 1, k)]
    return i, j


def pair_columns(pairs: Any) -> JSON:
    """A comparison's pairwise family as columns, ``i``, ``j`` and one list per field (nested
    tests as ``{test: {field: [...]}}``), from the compact shape the server sends
    (``order``, ``n_pairs``, ``code``/``distinct``/``constant`` groups; README,
    "Comparisons") or from columns already (comparisons stored before)."""
    if not isinstance(pairs, dict) or "order" not in pairs:
        return pairs if isinstance(pairs, dict) else {}
    if pairs["order"] == "listed":
        i, j = list(pairs["i"]), list(pairs["j"])
    else:
        i, j = _triangle(int(pairs["n_pairs"]))
    out: dict[str, Any] = {"i": i, "j": j}
    skip = {"order", "n_pairs", "i", "j", "code", "negated", "constant", "distinct"}
    if "code" in pairs:
        out.update(_expand_group(pairs))
    for key, value in pairs.items():
        if key in skip:
            continue
        if key == "adjusted" and isinstance(value, dict):
            out.update(_expand_group(value))
        elif isinstance(value, dict) and "code" in value:
            out[key] = _expand_group(value)
        else:
            out[key] = value
    return out


def pair_rows(pairs: Any, algorithms: Sequence[str] | None = None) -> list[JSON]:
    """A list of pairwise results, one object per pair, from any shape the server sends:
    that list itself (``/v1/tests/posthoc``, comparisons stored before the columns), columns
    (one list per field) or a comparison's compact family (``relative.posthoc.pairs``,
    ``absolute.pairwise``: :func:`pair_columns`). Nested columns, such as ``wilcoxon``,
    become one object per pair too, and a field given once, such as ``adjustment``, is every
    pair's. With ``algorithms``, each pair also has its names ``a`` and ``b``."""
    if isinstance(pairs, list):
        return pairs
    if not isinstance(pairs, dict):
        return []
    pairs = pair_columns(pairs)
    n = len(pairs.get("i") or ())

    def entry(value: Any, p: int) -> Any:
        if isinstance(value, list):
            return value[p]
        if isinstance(value, dict):
            return {k: entry(v, p) for k, v in value.items()}
        return value

    rows: list[dict[str, Any]] = [{k: entry(v, p) for k, v in pairs.items()} for p in range(n)]
    if algorithms is not None:
        for r in rows:
            r.setdefault("a", algorithms[r["i"]])
            r.setdefault("b", algorithms[r["j"]])
    return list(rows)


def posthoc_matrices(posthoc: JSON, k: int) -> dict[str, Any]:
    """A comparison's post-hoc ``p_matrix`` and ``log10_p_matrix`` (all pairs: k × k, 1 and
    0 on the diagonal) or ``p_vs_control`` and ``log10_p_vs_control`` (1 and 0 at the
    control), rebuilt from its pairs' adjusted p-values exactly as the server laid them out
    (or as sent, by comparisons stored before)."""
    keys = ("p_matrix", "log10_p_matrix", "p_vs_control", "log10_p_vs_control")
    if any(isinstance(posthoc.get(key), list) for key in keys):
        return {key: posthoc[key] for key in keys if key in posthoc}
    cols = pair_columns(posthoc.get("pairs"))
    i, j = cols.get("i") or [], cols.get("j") or []
    p, lp = cols.get("p_adjusted") or [], cols.get("log10_p_adjusted") or []
    if posthoc.get("comparison") == "vs-control":
        c, lc = [1.0] * k, [0.0] * k
        for y, v, lv in zip(j, p, lp, strict=False):
            c[y], lc[y] = v, lv
        return {
            "p_matrix": None,
            "log10_p_matrix": None,
            "p_vs_control": c,
            "log10_p_vs_control": lc,
        }
    m = [[1.0] * k for _ in range(k)]
    lm: list[list[Any]] = [[0.0] * k for _ in range(k)]
    for x, y, v, lv in zip(i, j, p, lp, strict=False):
        m[x][y] = m[y][x] = v
        lm[x][y] = lm[y][x] = lv
    return {"p_matrix": m, "log10_p_matrix": lm, "p_vs_control": None, "log10_p_vs_control": None}


def bradley_terry_probabilities(bradley_terry: JSON) -> list[list[float]] | None:
    """``P(i ≻ j)``, k × k: as sent (a degenerate fit, comparisons stored before) or rebuilt
    bit for bit from the finite strengths, ``θ_i / (θ_i + θ_j)`` (0.5 on the diagonal), as
    the server computes it when it leaves them out."""
    sent = bradley_terry.get("probabilities")
    if isinstance(sent, list):
        return sent
    s = bradley_terry.get("strengths")
    if not isinstance(s, list) or not all(isinstance(x, float) for x in s):
        return None
    return [[0.5 if a == b else x / (x + y) for b, y in enumerate(s)] for a, x in enumerate(s)]


def pair_names(algorithms: Sequence[str], doc: JSON, key: str = "pair") -> tuple[str, str]:
    """The two names of a pair: the server's ``a``/``b`` when present, else from indices."""
    if isinstance(doc.get("a"), str) and isinstance(doc.get("b"), str):
        return doc["a"], doc["b"]
    if "i" in doc and "j" in doc:
        i, j = doc["i"], doc["j"]
    else:
        i, j = doc[key]
    a, b = _names(algorithms, (i, j))
    return a, b
