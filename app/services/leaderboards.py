"""Use cases of ``/v1/leaderboards``: archived result sets ranked by their absolute rank.

Flow: one indexed query for the runs (of a function, or of a suite and dimension) → each set's
values at the budget (final values, or best-so-far within ``budget`` from its trajectories) →
its aggregate → absolute ranks by :func:`app.services.ranks.rank_values_warned`, one call per
``(function, budget, runs, aggregate)`` group for all sets → the relative column and the
pairwise rank-sum tests (function) or the Friedman family (suite).

An entry's absolute rank depends on its own runs and the function's tables only, never on the
other sets (docs/METHODS.md, leaderboards): adding a set changes no other set's rank.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from pydantic import TypeAdapter
from sqlalchemy.orm import Session, sessionmaker

from app import errors
from app.config import Settings
from app.db import session_scope
from app.domain import exactfloat, ranktests, twosample
from app.domain.functions import BenchmarkFunction
from app.repositories.result_sets import ResultSetRepository
from app.schemas.leaderboards import (
    AbsoluteRankRead,
    ExcludedSet,
    LeaderboardEntry,
    LeaderboardRead,
    PairTest,
    Significance,
)
from app.schemas.ranks import Awaited, RankItem, RankRequest
from app.services import tables
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.leaderboard_cache import cached_answer, keep_answer
from app.services.leaderboard_inputs import (
    Archive,
    Candidate,
    Exclusion,
    candidate,
    labels,
    read_archive,
)
from app.services.provenance import provenance
from app.services.ranks import (
    LADDER_HINT,
    RankEnv,
    ladder_applies,
    numerical,
    rank_values_warned,
)
from app.services.table_cache import LadderCaches, TableCaches


@dataclass
class Board:
    """One function's leaderboard before the pairwise tests."""

    function_id: str
    entries: list[LeaderboardEntry]
    excluded: list[ExcludedSet]
    candidates: dict[str, Candidate]
    warnings: list[str] = field(default_factory=list)
    pending: list[Awaited] = field(default_factory=list)


@dataclass(frozen=True)
class RankInputs:
    """What ranking needs beyond the sets: database, configuration, task queue, permission,
    and the application's table and ladder caches (``app.state``)."""

    sm: sessionmaker[Session]
    settings: Settings
    dispatcher: Any
    may_queue_builds: bool
    cache: TableCaches
    ladder_cache: LadderCaches


# ---------------------------------------------------------------------------------------------
# absolute ranks of one function's candidates


def _awaited(exc: errors.AppError, kind: str) -> Awaited:
    extra = exc.extra
    built = isinstance(exc, errors.TableNotReady)
    return Awaited(
        kind=kind,  # type: ignore[arg-type]  # a str the model checks against its Literal
        status=str(extra.get("table_status", "building")) if built else "not-built",
        table_id=extra.get("table_id"),
        location=extra.get("location"),
        table_request=extra.get("table_request"),
        detail=exc.detail or "",
    )


#: The rank service's items, read as its own response model (validated once per rank call).
_RANK_ITEMS = TypeAdapter(list[RankItem])


def _absolute(item: RankItem, source: dict[str, Any], tail: dict[str, Any]) -> AbsoluteRankRead:
    kind = source["kind"]
    ids = source.get("table_ids") or ([source["table_id"]] if source.get("table_id") else [])
    # model_construct: the rank service's values are already validated (and this runs per
    # set and function of a suite leaderboard)
    return AbsoluteRankRead.model_construct(
        v=item.v,
        log10_v=item.log10_v,
        interval=item.interval,
        method=item.method,
        source=kind,
        tail=None if kind == "analytic" else (tail.get("lower") or tail.get("mode")),
        tables=list(ids),
        curve=_curve_location(source, ids),
    )


def _curve_location(source: dict[str, Any], ids: list[str]) -> str | None:
    """The published curve of a rank's source (``/v1/tables/{id}`` or ``/v1/ladders/{fn}``)."""
    if source["kind"] == "table" and ids:
        return f"/v1/tables/{ids[0]}/curve.json"
    if source["kind"] == "nested":
        return f"/v1/ladders/{source['ladder']['function_id']}/curve.json"
    return None


@dataclass
class _Ranked:
    absolute: AbsoluteRankRead | None = None
    awaiting: Awaited | None = None
    note: str | None = None


def _rank_group(
    ctx: RankInputs,
    fn: BenchmarkFunction,
    group: list[Candidate],
    regions: str,
    names: dict[str, str],
    warnings: list[str],
) -> tuple[list[RankItem], dict[str, Any], dict[str, Any]]:
    """One rank call for candidates of the same budget, runs, aggregate and units (errors are
    sent as errors, ranked as the gaps ``t − f*``)."""
    first = group[0]
    req = RankRequest(
        function_id=fn.id,
        values=[c.sent for c in group],
        values_are="error" if first.errors else "f",
        runs=first.runs,
        aggregate=None if first.runs == 1 else first.aggregate,  # type: ignore[arg-type]  # a str the model checks against its Literal
        budget=first.budget,
        regions=regions,  # type: ignore[arg-type]  # a str the model checks against its Literal
    )
    env = RankEnv(
        ctx.sm,
        ctx.settings,
        ctx.dispatcher,
        ctx.cache,
        ctx.ladder_cache,
        may_queue_builds=ctx.may_queue_builds if regions == "domain" else False,
    )
    body, said = rank_values_warned(env, req)

    def named(i: int) -> str:
        return f"set {names[group[i].set.id]!r}"

    for w in said:
        if w.general == LADDER_HINT:  # the entry's status and `awaiting` say it
            continue
        text = w.general or w.located(named)
        if text not in warnings:
            warnings.append(text)
    return _RANK_ITEMS.validate_python(body["results"]), body["source"], body["tail"]


def _lowest_sample(ctx: RankInputs, source: dict[str, Any]) -> float | None:
    """``y_1`` of a whole-domain table source (values below it use a tail model)."""
    if source["kind"] != "table" or source.get("relative_to") != "domain":
        return None
    _, data = tables.load_table_data(ctx.sm, source["table_id"], cache=ctx.cache)
    return float(data.values[0])


def _rank_candidates(
    ctx: RankInputs,
    fn: BenchmarkFunction,
    cands: list[Candidate],
    names: dict[str, str],
    board: Board,
) -> dict[str, _Ranked]:
    """Absolute ranks: the domain table (or exact v1) first; the ladder for values below the
    table's samples, provisional while it is not ready."""
    groups: dict[tuple[int, int, str, bool], list[Candidate]] = defaultdict(list)
    for c in cands:
        groups[(c.budget, c.runs, c.aggregate, c.errors)].append(c)
    out: dict[str, _Ranked] = {}
    for key in sorted(groups):
        group = groups[key]
        try:
            items, source, tail = _rank_group(ctx, fn, group, "domain", names, board.warnings)
        except (errors.TableNotReady, errors.TableNotBuilt) as exc:
            awaited = _awaited(exc, "default-table")
            if all(a.table_id != awaited.table_id for a in board.pending):
                board.pending.append(awaited)
            out.update({c.set.id: _Ranked(awaiting=awaited) for c in group})
            continue
        except errors.NotApplicable as exc:
            out.update({c.set.id: _Ranked(note=exc.detail) for c in group})
            continue
        y1 = _lowest_sample(ctx, source) if ladder_applies(fn) else None
        deep = []
        for c, item in zip(group, items, strict=True):
            out[c.set.id] = _Ranked(absolute=_absolute(item, source, tail))
            # v = v1(f*): exact; an error at or below 0 (f* + e may round to f* from above)
            at_minimum = c.value <= 0.0 if c.errors else _at_or_below(c.value_f, fn.f_opt)
            if y1 is not None and c.value_f < y1 and not at_minimum:
                deep.append(c)
        if deep:
            _rank_on_ladder(ctx, fn, deep, names, board, out)
    return out


def _rank_on_ladder(
    ctx: RankInputs,
    fn: BenchmarkFunction,
    deep: list[Candidate],
    names: dict[str, str],
    board: Board,
    out: dict[str, _Ranked],
) -> None:
    """Values below the domain table's samples: the ladder's rank when it is ready; else the
    domain table's tail-model rank stays, provisional, naming the ladder it waits for."""
    try:
        items, source, tail = _rank_group(ctx, fn, deep, "nested", names, board.warnings)
    except (errors.TableNotReady, errors.TableNotBuilt) as exc:
        awaited = _awaited(exc, "ladder")
        if all(a.table_id != awaited.table_id for a in board.pending):
            board.pending.append(awaited)
        for c in deep:
            out[c.set.id].awaiting = awaited
        return
    except (errors.InvalidInput, errors.NotApplicable) as exc:
        for c in deep:
            out[c.set.id].note = f"no ladder applies: {exc.detail}"
        return
    for c, item in zip(deep, items, strict=True):
        out[c.set.id].absolute = _absolute(item, source, tail)


# ---------------------------------------------------------------------------------------------
# one function's board


def _sort_key(e: LeaderboardEntry) -> tuple[int, float, str]:
    if e.absolute is None:
        return (1, 0.0, e.set_id)
    log10 = e.absolute.log10_v
    return (0, -math.inf if log10 is None else log10, e.set_id)


def _at_or_below(value_f: float, f_opt: float | None) -> bool:
    return f_opt is not None and value_f <= f_opt


def _gap_units(c: Candidate, f_opt: float | None) -> int:
    """The aggregate's gap ``t − f*`` exactly, in units of ``2^-1074`` (:mod:`exactfloat`): the
    error itself for errors, ``U(t) − U(f*)`` for values of ``f`` (``t`` itself without ``f*``)."""
    if c.errors:
        return exactfloat.units(np.array([c.value]))[0]
    t = exactfloat.units(np.array([c.value_f]))[0]
    return t if f_opt is None else t - exactfloat.units(np.array([f_opt]))[0]


def _relative_ranks(
    cands: dict[str, Candidate], aggregate: str, f_opt: float | None = None
) -> dict[str, float]:
    """Midranks of the aggregate values among the sets with the requested aggregate, compared
    exactly as gaps ``t − f*`` (errors as sent, values of ``f`` minus ``f*``): errors that differ
    below ``ulp(f*)`` stay apart (``f* + e`` would tie them)."""
    comparable = [
        c for c in cands.values() if not c.published or c.aggregate in (aggregate, "best")
    ]
    if not comparable:
        return {}
    ranks = exactfloat.midranks_exact([_gap_units(c, f_opt) for c in comparable])
    return {c.set.id: float(r) for c, r in zip(comparable, ranks.tolist(), strict=True)}


def _pair_runs(a: Candidate, b: Candidate) -> tuple[np.ndarray, np.ndarray]:
    """Two sets' runs in units that keep their order: two error sets as errors (``f* + e``
    would tie errors that differ below ``ulp(f*)``), two sets of ``f`` values as sent, a mixed
    pair as gaps ``t − f*`` (the ``f`` values' ``fl(t − f*)`` is exact near ``f*``)."""
    x, y = np.asarray(a.values), np.asarray(b.values)
    if a.errors == b.errors:
        return x, y
    f_opt = (a if a.errors else b).offset  # an error set's offset is f*
    return (x, y - f_opt) if a.errors else (x - f_opt, y)


def _note(c: Candidate, aggregate: str) -> str | None:
    if not c.published:
        return None
    s = c.set
    text = (
        f"published values: each is the {s.value_aggregate} of {s.value_runs} runs, ranked as "
        "such; no runs, so it takes no part in the rank-sum tests"
    )
    if c.aggregate not in (aggregate, "best"):
        text += f"; not comparable with the {aggregate}s of the other sets (no relative rank)"
    return text


def build_board(
    ctx: RankInputs,
    fn: BenchmarkFunction,
    archive: Archive,
    set_ids: Sequence[str],
    names: dict[str, str],
    *,
    budget: int | None,
    aggregate: str,
) -> Board:
    """Rank the sets ``set_ids`` (all with runs on ``fn``) on ``fn``."""
    board = Board(fn.id, [], [], {})
    for sid in sorted(set_ids):
        s = archive.sets[sid]
        if sid in archive.superseded:
            board.excluded.append(
                ExcludedSet(
                    set_id=sid,
                    name=s.name,
                    function_id=fn.id,
                    reason="superseded",
                    detail=f"superseded by {archive.superseded[sid]}",
                )
            )
            continue
        got = candidate(s, fn, archive.runs[(fn.id, sid)], archive.points, budget, aggregate)
        if isinstance(got, Exclusion):
            board.excluded.append(
                ExcludedSet(
                    set_id=sid,
                    name=s.name,
                    function_id=fn.id,
                    reason=got.reason,  # type: ignore[arg-type]  # a str the model checks against its Literal
                    detail=got.detail,
                )
            )
        else:
            board.candidates[sid] = got
    ranked = _rank_candidates(ctx, fn, list(board.candidates.values()), names, board)
    relative = _relative_ranks(board.candidates, aggregate, fn.f_opt)
    for sid, c in board.candidates.items():
        r = ranked[sid]
        note = "; ".join(x for x in (_note(c, aggregate), r.note) if x) or None
        board.entries.append(
            LeaderboardEntry.model_construct(
                set_id=sid,
                name=c.set.name,
                version=c.set.version,
                label=names[sid],
                values_are=c.set.values_are,  # type: ignore[arg-type]  # a str the model checks against its Literal
                budget=c.budget,
                runs=c.runs,
                aggregate=c.aggregate,
                published=c.published,
                value=c.value,
                error=_as_error(c.value, c.set.values_are, fn),
                status="provisional" if r.awaiting is not None else "final",
                awaiting=r.awaiting,
                absolute=r.absolute,
                relative_rank=relative.get(sid),
                tested=not c.published,
                note=note,
            )
        )
    board.entries.sort(key=_sort_key)
    return board


def _as_error(value: float, values_are: str, fn: BenchmarkFunction) -> float | None:
    """An aggregate as ``f − f*`` (``None`` for an ``f`` without a known ``f*``)."""
    if values_are == "error":
        return value
    return None if fn.f_opt is None else value - fn.f_opt


def check_cost(boards_cands: int, aggregate: str, runs: Sequence[int], settings: Settings) -> None:
    """Refuse before ranking when too many aggregates need a convolution or an integral."""
    costly = sum(numerical(aggregate, r) for r in runs)
    if costly > settings.max_numerical_aggregates:
        raise errors.InvalidInput(
            f"{costly} of the {boards_cands} sets' aggregates need a convolution or an integral "
            f"(aggregate={aggregate!r} over several runs); at most "
            f"{settings.max_numerical_aggregates} per leaderboard: use an order statistic "
            "(best, median of an odd r, lower-median, worst)",
            field="aggregate",
        )


# ---------------------------------------------------------------------------------------------
# pairwise tests


def significance(board: Board, settings: Settings, alpha: float) -> Significance:
    """Rank-sum tests of every pair of tested sets, Holm-adjusted over the family."""
    tested = [e for e in board.entries if e.tested]
    limit = settings.leaderboard_max_tested_sets
    if len(tested) > limit:
        return Significance(
            status="skipped",
            reason=f"{len(tested)} sets with runs exceed leaderboard_max_tested_sets = {limit}",
            alpha=alpha,
            pairs=[],
        )
    runs = {
        e.set_id: np.asarray(board.candidates[e.set_id].values) + board.candidates[e.set_id].offset
        for e in tested
    }
    pairs = [(a, b) for i, a in enumerate(tested) for b in tested[i + 1 :]]
    compared = [
        _pair_runs(board.candidates[a.set_id], board.candidates[b.set_id]) for a, b in pairs
    ]
    # a pair whose run counts cannot give p < alpha (smallest exact two-sided p = 2/C(n, n_a))
    # is decided by its sizes alone, before any value is seen: left out of the Holm family
    reachable = [
        2.0 / math.comb(runs[a.set_id].size + runs[b.set_id].size, runs[a.set_id].size) < alpha
        for a, b in pairs
    ]
    with domain_errors_as_problems("function_id"):
        results = [twosample.rank_sum(x, y) for x, y in compared]
        family = [k for k, ok in enumerate(reachable) if ok]
        adjusted = (
            ranktests.adjusted_family(
                [results[k].p_value for k in family],
                [results[k].log10_p_value for k in family],
                method="holm",
            )
            if family
            else None
        )
    position = {k: j for j, k in enumerate(family)}
    out = []
    for k, ((a, b), res) in enumerate(zip(pairs, results, strict=True)):
        j = position.get(k)
        p_adj = None if j is None or adjusted is None else float(adjusted.p[j])
        out.append(
            PairTest(
                a=a.set_id,
                b=b.set_id,
                a_label=a.label,
                b_label=b.label,
                statistic=res.statistic,
                a12=res.a12,
                p_value=res.p_value,
                log10_p_value=res.log10_p_value,
                p_adjusted=p_adj,
                log10_p_adjusted=None
                if j is None or adjusted is None
                else float(adjusted.log10_p[j]),
                method=res.method,
                in_family=j is not None,
                significant=p_adj is not None and p_adj < alpha,
            )
        )
    return Significance(status="computed", alpha=alpha, pairs=out)


# ---------------------------------------------------------------------------------------------
# the use cases


def function_leaderboard(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    function_id: str,
    *,
    budget: int | None,
    aggregate: str,
    alpha: float = 0.05,
    may_queue_builds: bool,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> LeaderboardRead:
    """Rank every archived, not superseded set with runs on ``function_id``.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        Too many aggregates that need a convolution or an integral (``field="aggregate"``).
    """
    fn = find_function(function_id)
    request = {"function_id": fn.id, "budget": budget, "aggregate": aggregate, "alpha": alpha}
    key, hit = cached_answer(sm, settings, request)
    if isinstance(hit, LeaderboardRead):
        return hit
    with session_scope(sm) as session:
        repo = ResultSetRepository(session)
        archive = read_archive(
            repo,
            repo.run_columns(function_id=fn.id),
            with_points=budget is not None,
            function_ids=(fn.id,),
        )
    ids = sorted({sid for _, sid in archive.runs})
    check_cost(len(ids), aggregate, [len(archive.runs[(fn.id, i)].runs) for i in ids], settings)
    names = labels(list(archive.sets.values()))
    ctx = RankInputs(sm, settings, dispatcher, may_queue_builds, cache, ladder_cache)
    board = build_board(ctx, fn, archive, ids, names, budget=budget, aggregate=aggregate)
    answer = LeaderboardRead(
        function_id=fn.id,
        budget=budget,
        aggregate=aggregate,  # type: ignore[arg-type]  # a str the model checks against its Literal
        entries=board.entries,
        excluded=board.excluded,
        significance=significance(board, settings, alpha),
        warnings=board.warnings,
        provenance=provenance(
            request,
            sets=ids,
            tables=sorted({t for e in board.entries if e.absolute for t in e.absolute.tables}),
        ),
    )
    if all(e.status == "final" for e in board.entries):
        keep_answer(key, answer, settings)
    return answer
