"""NIIA of the leaderboard's absolute column, as a property (no database: exact v1 functions).

For any archive and any new set, every other set's absolute rank is bit-identical with and
without the new set, so no pairwise absolute order among the others changes; the relative
column of the same boards is only a ranking of values, checked against scipy's rankdata.
"""

from __future__ import annotations

from typing import Any

import hypothesis.strategies as st
from hypothesis import given, settings
from scipy import stats

from app.config import Settings
from app.domain.functions import get_function
from app.services.leaderboard_inputs import Archive, ArchivedSet, RunGroup, labels
from app.services.leaderboards import RankInputs, build_board
from app.services.table_cache import AppCaches

FUNCTIONS = ("bbob/f1/i1/d2", "classic/sphere/d3")
AGGREGATES = ("best", "median", "worst", "lower-median")

errors_ = st.floats(min_value=1e-9, max_value=1.0, allow_nan=False)
a_set = st.tuples(
    st.sampled_from(FUNCTIONS),
    st.lists(errors_, min_size=1, max_size=7),
    st.sampled_from((1, 10, 1000)),
)


def _archive(sets: list[tuple[str, list[float], int]]) -> Archive:
    found, runs = {}, {}
    for k, (fid, values, budget) in enumerate(sets):
        sid = f"r{k:023d}"
        found[sid] = ArchivedSet(sid, f"S{k}", None, "error", None, None, False)
        n = len(values)
        runs[(fid, sid)] = RunGroup(tuple(range(n)), tuple(values), (budget,) * n)
    return Archive(found, {}, runs, {})


def _boards(sets: list[tuple[str, list[float], int]], aggregate: str) -> dict[str, Any]:
    archive = _archive(sets)
    # exact v1 (sphere): no table is read, so no database is needed
    settings = Settings(environment="test")
    caches = AppCaches.from_settings(settings)
    ctx = RankInputs(None, settings, None, False, caches.tables, caches.ladders)  # type: ignore[arg-type]
    names = labels(list(archive.sets.values()))
    out = {}
    for fid in FUNCTIONS:
        ids = [sid for f, sid in archive.runs if f == fid]
        if ids:
            out[fid] = build_board(
                ctx, get_function(fid), archive, ids, names, budget=None, aggregate=aggregate
            )
    return out


@settings(max_examples=40, deadline=None)
@given(
    old=st.lists(a_set, min_size=2, max_size=6),
    new=a_set,
    aggregate=st.sampled_from(AGGREGATES),
)
def test_a_new_set_changes_no_other_sets_absolute_rank(
    old: list[tuple[str, list[float], int]],
    new: tuple[str, list[float], int],
    aggregate: str,
) -> None:
    before = _boards(old, aggregate)
    after = _boards([*old, new], aggregate)
    for fid, board in before.items():
        now = {e.set_id: e for e in after[fid].entries}
        for e in board.entries:
            assert now[e.set_id].absolute == e.absolute  # bit-identical floats
        ranked = [e.set_id for e in board.entries]
        still = [s for s in (e.set_id for e in after[fid].entries) if s in set(ranked)]
        assert still == ranked  # the others keep their order
        values = [e.value for e in after[fid].entries]
        # ranked as the errors sent (gaps t − f*): f* + e would tie errors that differ below
        # ulp(f*), e.g. 1.0 and 0.9999999999999999 next to f* = 79.48
        midranks = stats.rankdata(values)
        assert [e.relative_rank for e in after[fid].entries] == midranks.tolist()


def test_errors_closer_than_the_optimums_ulp_are_ranked_apart() -> None:
    """The case hypothesis found: f* + 1.0 == f* + 0.9999999999999999 for bbob f1's f*, but the
    leaderboard ranks the errors themselves."""
    fid = "bbob/f1/i1/d2"
    board = _boards([(fid, [1.0], 1), (fid, [1.0], 1), (fid, [0.9999999999999999], 1)], "best")
    assert [e.relative_rank for e in board[fid].entries] == [2.5, 2.5, 1.0]
