"""How a comparison's answer is presented: its warnings, grouped, and its views.

The analysis lives in :mod:`app.services.comparisons`; this module shapes what is sent: each
distinct warning once with a count (:func:`grouped_warnings`), and the ``view=summary`` of a
stored answer (:func:`summary`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import JsonValue

from app.services.comparison_pairs import (
    CompactPairs,
    FamilyColumns,
    compact_columns,
    stored_columns,
)


@dataclass(frozen=True)
class CellWarning:
    """One warning of a comparison before grouping: its text, and the problem it concerns."""

    message: str
    problem: str | None = None


@dataclass(frozen=True)
class GroupedWarning:
    """A comparison's warning as sent: given once, however often it arose.

    Attributes
    ----------
    message : str
        The warning; it never names a problem (``problems`` does).
    count : int
        How many times it arose (cells, tables).
    problems : tuple of str
        The problems it concerns, in order of first occurrence.
    """

    message: str
    count: int
    problems: tuple[str, ...]


def grouped_warnings(items: list[CellWarning]) -> list[GroupedWarning]:
    """Each distinct warning once: ``message``, ``count`` (occurrences), ``problems`` (in order).

    Warnings are grouped by their identity (the message, which never names the problem: the
    problem is a field of its own), in order of first occurrence.
    """
    groups: dict[str, tuple[int, list[str]]] = {}
    for w in items:
        count, problems = groups.get(w.message, (0, []))
        if w.problem is not None and w.problem not in problems:
            problems = [*problems, w.problem]
        groups[w.message] = (count + 1, problems)
    return [GroupedWarning(m, c, tuple(p)) for m, (c, p) in groups.items()]


VIEWS = ("full", "summary")

#: What ``view=summary`` leaves out (per cell, per run or per table detail), by section.
SUMMARY_OMITS: dict[str, tuple[str, ...]] = {
    "": ("n_runs", "matrix"),
    "relative": ("ranks",),
    "relative.posthoc": ("p_matrix", "p_vs_control"),
    "relative.bradley_terry": ("probabilities",),
    "absolute": ("v", "log10_v", "method", "tables"),
}


def _without(section: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in section.items() if k not in keys}


def summary(comparison: dict[str, Any]) -> dict[str, Any]:
    """The ``view=summary`` of a comparison: what a paper's table needs (README, comparisons).

    Leaves out :data:`SUMMARY_OMITS` and the table specs in ``provenance.tables`` (their ids
    and kinds stay); everything else (averages, omnibus tests, post-hoc pairs and cliques,
    Bradley–Terry strengths, average absolute ranks, pairwise tests, NIIA, warnings) is kept.
    """
    out = _without(comparison, SUMMARY_OMITS[""])
    relative = _without(comparison["relative"], SUMMARY_OMITS["relative"])
    for name in ("posthoc", "bradley_terry"):
        relative[name] = _without(relative[name], SUMMARY_OMITS[f"relative.{name}"])
    out["relative"] = relative
    out["absolute"] = _without(comparison["absolute"], SUMMARY_OMITS["absolute"])
    prov = dict(comparison["provenance"])
    if isinstance(prov.get("tables"), dict):
        prov["tables"] = {p: _without(t, ("spec",)) for p, t in prov["tables"].items()}
    out["provenance"] = prov
    return out


def _family(pairs: object, *, absolute: bool) -> FamilyColumns | None:
    """A family as columns: computed (:class:`FamilyColumns`) or stored (one object per pair
    before issue 15, columns in its first step: :func:`stored_columns`); ``None``: compact."""
    if isinstance(pairs, FamilyColumns):
        return pairs
    if isinstance(pairs, list | dict):
        return stored_columns(pairs, absolute=absolute)
    return None


def _laid_out(pairs: FamilyColumns, k: int) -> tuple[list[list[JsonValue]], list[list[JsonValue]]]:
    m: list[list[JsonValue]] = [[1.0] * k for _ in range(k)]
    lm: list[list[JsonValue]] = [[0.0] * k for _ in range(k)]
    p, lp = pairs.fields["p_adjusted"], pairs.fields["log10_p_adjusted"]
    for x, y, v, lv in zip(pairs.i, pairs.j, p, lp, strict=True):
        m[x][y] = m[y][x] = v
        lm[x][y] = lm[y][x] = lv
    return m, lm


def _posthoc_matrices_follow(posthoc: Mapping[str, object], pairs: FamilyColumns, k: int) -> bool:
    """Whether ``p_matrix`` / ``p_vs_control`` (and their log10) are the pairs' adjusted
    p-values laid out by index (1 and 0 on the diagonal / at the control), as the client
    rebuilds them (``absrank_client.models.posthoc_matrices``)."""
    p, lp = pairs.fields["p_adjusted"], pairs.fields["log10_p_adjusted"]
    if isinstance(posthoc.get("p_matrix"), list) or isinstance(posthoc.get("log10_p_matrix"), list):
        m, lm = _laid_out(pairs, k)
        if posthoc.get("p_matrix") != m or posthoc.get("log10_p_matrix") != lm:
            return False
    if isinstance(posthoc.get("p_vs_control"), list):
        c: list[JsonValue] = [1.0] * k
        lc: list[JsonValue] = [0.0] * k
        for y, v, lv in zip(pairs.j, p, lp, strict=True):
            c[y], lc[y] = v, lv
        if posthoc.get("p_vs_control") != c or posthoc.get("log10_p_vs_control") != lc:
            return False
    return True


def _probabilities_follow(strengths: object, probabilities: object) -> bool:
    """Whether the Bradley–Terry ``probabilities`` are ``θ_i / (θ_i + θ_j)`` of the finite
    ``strengths`` (0.5 on the diagonal), bit for bit, as the client rebuilds them."""
    if not isinstance(probabilities, list) or not isinstance(strengths, list):
        return False
    if not all(isinstance(x, float) for x in strengths):
        return False
    a = np.asarray(strengths, dtype=np.float64)
    with np.errstate(all="ignore"):
        m = a[:, None] / (a[:, None] + a[None, :])
    np.fill_diagonal(m, 0.5)
    return bool(m.tolist() == probabilities)


def _stored(pairs: CompactPairs) -> dict[str, JsonValue]:
    """A compact family as the answer stores it (JSON; ``i``/``j`` only when listed)."""
    out: dict[str, JsonValue] = pairs.model_dump()
    return out


def compact(comparison: dict[str, Any]) -> dict[str, Any]:
    """A comparison (computed, or stored) in the compact shape of issue 15
    (:mod:`app.services.comparison_pairs`): the post-hoc pairs and the absolute pairwise tests
    as distinct rows and codes; ``p_matrix``, ``log10_p_matrix``, ``p_vs_control``,
    ``log10_p_vs_control`` and the Bradley–Terry ``probabilities`` left out where the client
    rebuilds them exactly (kept otherwise, e.g. probabilities of a degenerate fit). Answers
    stored in an earlier shape (one object per pair, columns) are converted; compact ones are
    returned as they are.

    ``comparison`` is the answer's JSON document (as stored: the repository's JSON column),
    with its families as :class:`FamilyColumns` (the absolute pairwise tests:
    :class:`app.services.comparison_pairs.AbsoluteColumns`) when it was just computed; those
    of the result are JSON (:class:`app.schemas.comparisons.ComparisonPosthocPairs`,
    :class:`app.schemas.comparisons.AbsolutePairs` dumped)."""
    k = len(comparison.get("algorithms") or ())
    relative = comparison.get("relative") or {}
    posthoc = relative.get("posthoc") or {}
    absolute = comparison.get("absolute") or {}
    pairs = _family(posthoc.get("pairs"), absolute=False)
    pairwise = _family(absolute.get("pairwise"), absolute=True)
    out = dict(comparison)
    if pairs is not None:
        new_posthoc = dict(posthoc)
        if _posthoc_matrices_follow(posthoc, pairs, k):
            for key in ("p_matrix", "log10_p_matrix", "p_vs_control", "log10_p_vs_control"):
                new_posthoc.pop(key, None)
        new_posthoc["pairs"] = _stored(compact_columns(pairs, k))
        bt = dict(relative.get("bradley_terry") or {})
        if _probabilities_follow(bt.get("strengths"), bt.get("probabilities")):
            del bt["probabilities"]
        out["relative"] = {**relative, "posthoc": new_posthoc, "bradley_terry": bt}
    if pairwise is not None:
        out["absolute"] = {**absolute, "pairwise": _stored(compact_columns(pairwise, k))}
    return out
