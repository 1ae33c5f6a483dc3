"""Tables for papers of the leaderboards: one row per result set, in the leaderboard's order.

Built from the typed answers (:class:`LeaderboardRead`, :class:`SuiteLeaderboardRead`) and
rendered by :func:`app.services.paper_tables.render`, like a comparison's table (docs/METHODS.md,
"Tables for papers"):

* function board: ``rank`` (competition ranking by ``log10 v``: tied sets share the rank, the
  next one skips), ``log10 v`` (bold: the lowest; ``-inf`` where v = 0; † the sets whose
  Holm-adjusted rank-sum test against the best-ranked set is significant), the aggregate as
  ``error`` (f − f*, one scale for every set) or ``f`` (without a known f*), ``runs`` and
  ``budget``;
* suite board: ``rank`` (full coverage first, then mean log10 v, as the board sorts),
  ``mean log10 v`` (bold: the lowest among the sets covering every function), ``average rank``
  (the Friedman family over those sets; bold the lowest, † significantly different from the
  best-ranked by the post-hoc) and ``functions`` (covered, of the board's).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from app.schemas.leaderboards import (
    LeaderboardEntry,
    LeaderboardRead,
    PairTest,
    SuiteEntry,
    SuiteLeaderboardRead,
)
from app.schemas.stattests import FriedmanRead, PosthocPair
from app.services.paper_tables import (
    DAGGER,
    Column,
    PaperTable,
    best,
    column_rows,
    provenance_line,
)


def competition_ranks(keys: Sequence[tuple[bool, float] | None]) -> tuple[int | None, ...]:
    """``1 + `` the number of keys strictly before each key (None: no rank, ``(1, 2, 2, 4)``)."""
    present = [k for k in keys if k is not None]
    return tuple(None if k is None else 1 + sum(o < k for o in present) for k in keys)


def _log10(entry: LeaderboardEntry) -> float | None:
    if entry.absolute is None:
        return None
    lv = entry.absolute.log10_v
    return -math.inf if lv is None else lv


def _differs_from(
    first: str | None, ids: Sequence[str], pairs: Sequence[tuple[str, str, bool]]
) -> tuple[str, ...]:
    """Per id, :data:`DAGGER` when its pair with ``first`` is significant."""
    marked = set()
    for a, b, significant in pairs:
        if significant and first in (a, b):
            marked.add(b if a == first else a)
    return tuple(DAGGER if i in marked else "" for i in ids)


def _rank_sum_pairs(pairs: Sequence[PairTest]) -> list[tuple[str, str, bool]]:
    return [(p.a, p.b, p.significant) for p in pairs]


def function_table(board: LeaderboardRead) -> PaperTable:
    """The paper table of a function's leaderboard (rows: its entries, in order)."""
    entries = board.entries
    logs = [_log10(e) for e in entries]
    ids = [e.set_id for e in entries]
    first = next((e.set_id for e, lv in zip(entries, logs, strict=True) if lv is not None), None)
    sig = board.significance
    tested = sig.status == "computed" and any(e.tested and e.set_id == first for e in entries)
    marks = _differs_from(first, ids, _rank_sum_pairs(sig.pairs)) if tested else ()
    with_error = any(e.error is not None for e in entries)
    values = [e.error if with_error else e.value for e in entries]
    columns = [
        Column("rank", competition_ranks([None if v is None else (False, v) for v in logs])),
        Column("log10 v", tuple(logs), best(logs), marks),
        Column("error" if with_error else "f", tuple(values), best(values)),
        Column("runs", tuple(e.runs for e in entries)),
        Column("budget", tuple(e.budget for e in entries)),
    ]
    scale = "f − f*" if with_error else "f (no known f*)"
    legend = [
        f"log10 v: absolute rank of each set's {board.aggregate} of its runs at its budget "
        f"(lower is better; -inf: v = 0); {columns[2].header}: that aggregate as {scale}; "
        "bold: the lowest.",
        _significance_line(board, tested) if first is not None else "",
        *_status_lines(entries),
    ]
    return PaperTable(
        "result set",
        tuple(c.header for c in columns),
        (column_rows([e.label for e in entries], columns),),
        tuple(line for line in legend if line),
        provenance_line(f"leaderboard {board.function_id}", board.provenance),
    )


def _significance_line(board: LeaderboardRead, tested: bool) -> str:
    sig = board.significance
    if sig.status != "computed":
        return f"Rank-sum tests: skipped ({sig.reason})."
    if not tested:
        return "The best-ranked set takes no part in the rank-sum tests: no marks."
    return (
        f"{DAGGER}: differs significantly from the best-ranked set (two-sided rank-sum tests on "
        f"the runs, {sig.adjustment}-adjusted, alpha = {sig.alpha})."
    )


def _status_lines(entries: Sequence[LeaderboardEntry]) -> list[str]:
    provisional = [e.label for e in entries if e.status == "provisional"]
    unranked = [e.label for e in entries if e.absolute is None]
    out = []
    if provisional:
        out.append(f"Provisional (a better method is awaited): {', '.join(provisional)}.")
    if unranked:
        out.append(f"No rank yet (table not ready): {', '.join(unranked)}.")
    return out


def _mean(e: SuiteEntry) -> float | None:
    return -math.inf if e.functions_at_zero else e.mean_log10_v


def suite_table(board: SuiteLeaderboardRead) -> PaperTable:
    """The paper table of a suite leaderboard (rows: its entries, in order)."""
    entries = board.entries
    ids = [e.set_id for e in entries]
    means = [_mean(e) for e in entries]
    full = [e.full_coverage for e in entries]
    family = board.family
    ranks_of = dict(zip(family.sets, family.average_ranks or (), strict=False))
    avg = [ranks_of.get(i) for i in ids]
    post = family.posthoc
    marks: tuple[str, ...] = ()
    if post is not None and post.pairs:
        shown = [a for a in avg if a is not None]
        first = next(i for i in ids if ranks_of.get(i) == min(shown))
        marks = _differs_from(first, ids, _posthoc_pairs(post.pairs, family.sets))
    keys = [None if m is None else (not f, m) for m, f in zip(means, full, strict=True)]
    n = len(board.functions)
    columns = [
        Column("rank", competition_ranks(keys)),
        Column("mean log10 v", tuple(means), best(means, among=full)),
        Column("average rank", tuple(avg), best(avg), marks),
        Column(f"functions (of {n})", tuple(e.functions_covered for e in entries)),
    ]
    legend = [
        "mean log10 v: over the functions each set covers (lower is better; -inf: v = 0 on "
        "some function); bold: the lowest among the sets covering every function; rank: full "
        "coverage first, then mean log10 v.",
        *_family_lines(board, bool(marks)),
    ]
    what = f"suite leaderboard {board.suite} d{board.dim}"
    return PaperTable(
        "result set",
        tuple(c.header for c in columns),
        (column_rows([e.label for e in entries], columns),),
        tuple(legend),
        provenance_line(what, board.provenance),
    )


def _posthoc_pairs(
    pairs: Sequence[PosthocPair], sets: Sequence[str]
) -> list[tuple[str, str, bool]]:
    return [(sets[p.i], sets[p.j], p.significant) for p in pairs]


def _family_lines(board: SuiteLeaderboardRead, marked: bool) -> list[str]:
    family = board.family
    k = len(family.sets)
    if family.status != "computed" or family.friedman is None:
        return [f"average rank: not computed ({family.reason})."]
    fr = FriedmanRead.model_validate(family.friedman)
    out = [
        f"average rank: Friedman over the {k} sets covering all {len(board.functions)} "
        f"functions (log10 v per function): chi2 = {_g(fr.statistic)}, p = {_g(fr.p_value)}; "
        f"Iman-Davenport F = {_g(fr.iman_davenport_statistic)}, "
        f"p = {_g(fr.iman_davenport_p_value)}; bold: the lowest."
    ]
    post = family.posthoc
    if post is not None and marked:
        out.append(
            f"{DAGGER}: differs significantly from the best-ranked set ({post.procedure} "
            f"post-hoc, alpha = {post.alpha})."
        )
    elif post is not None:
        out.append(f"The {post.procedure} post-hoc's pairs are not listed ({family.reason}).")
    if post is not None and post.low_power is not None:
        lp = post.low_power
        out.append(
            f"Low power: CD = {lp.critical_difference:.4g} > (k - 1)/2 = {lp.threshold:.4g}; "
            f"N >= {lp.n_needed} functions are needed."
        )
    return out


def _g(x: object) -> str:
    """A number of an answer, ``%.4g`` (``Infinity`` strings as they are)."""
    return f"{x:.4g}" if isinstance(x, int | float) else str(x)
