"""Use case of ``GET /v1/leaderboards?suite=&dim=``: archived sets over a suite and dimension.

Every function's board is :func:`app.services.leaderboards.build_board` (the same ranks as the
function leaderboard); per set, the mean ``log10 v`` over the functions it covers; over the
sets that cover every function, the Friedman family and a post-hoc on ``log10 v``.
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain import ranktests
from app.errors import InvalidInput
from app.repositories.result_sets import ResultSetRepository
from app.schemas.leaderboards import SuiteEntry, SuiteFamily, SuiteLeaderboardRead
from app.schemas.ranks import Awaited
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function, search_functions
from app.services.leaderboard_cache import cached_answer, keep_answer
from app.services.leaderboard_inputs import Archive, labels, read_archive
from app.services.leaderboards import Board, RankInputs, build_board, check_cost
from app.services.provenance import provenance
from app.services.serialize import jsonable
from app.services.stattests import named_posthoc, value_based
from app.services.table_cache import LadderCaches, TableCaches


def _family(
    matrix: np.ndarray,
    cols: list[str],
    names: dict[str, str],
    posthoc: str,
    alpha: float,
    max_listed: int,
) -> SuiteFamily:
    """Friedman, aligned ranks, Quade and the post-hoc on ``matrix`` (functions × sets); the
    post-hoc's pairs and p-value matrices only up to ``max_listed`` sets (k(k-1)/2 pairs)."""
    shown = [names[c] for c in cols]
    if len(cols) < 2 or matrix.shape[0] < 2:
        return SuiteFamily(
            status="skipped",
            reason=f"{len(cols)} set(s) with full coverage on {matrix.shape[0]} function(s); "
            "the Friedman family needs at least 2 of each",
            sets=cols,
            labels=shown,
        )
    with domain_errors_as_problems("suite"):
        fried = ranktests.friedman(matrix)
        post = ranktests.posthoc(matrix, method=posthoc, alpha=alpha)
    note = None
    if len(cols) > max_listed:
        post = dataclasses.replace(
            post,
            pair_columns=ranktests.PairColumns.none(),
            p_matrix=None,
            log10_p_matrix=None,
        )
        note = (
            f"{len(cols)} sets exceed leaderboard_max_tested_sets = {max_listed}: the post-hoc's "
            "pairs and p-value matrices are left out (its cliques and average ranks stay)"
        )
    return SuiteFamily(
        status="computed",
        reason=note,
        average_ranks=[float(x) for x in fried.average_ranks],
        friedman=jsonable(fried),
        aligned_ranks=jsonable(value_based(ranktests.friedman_aligned_ranks, matrix, 0.0)),
        quade=jsonable(value_based(ranktests.quade, matrix, 0.0)),
        posthoc=named_posthoc(post, shown),  # type: ignore[arg-type]  # JSON the model validates
        sets=cols,
        labels=shown,
    )


def _numbers(spec: str) -> set[int]:
    """``"1-5,71"`` → ``{1, 2, 3, 4, 5, 71}`` (the API's pattern has checked the syntax)."""
    out: set[int] = set()
    for part in spec.split(","):
        lo, _, hi = part.partition("-")
        first, last = int(lo), int(hi or lo)
        if last < first or last - first > 100_000:
            raise InvalidInput(f"instances range {part!r} is empty or too long", field="instances")
        out.update(range(first, last + 1))
    return out


def board_functions(suite: str, dim: int, instances: str, functions: str | None) -> tuple[str, ...]:
    """The function ids a suite board covers: registered at ``dim``, of ``instances`` (suites
    with instances), only ``functions`` when given; ordered by id.

    Raises
    ------
    app.errors.InvalidInput
        Unknown suite (``suite``), no function at that dimension (``dim``), a name in
        ``functions`` the suite does not have (``functions``).
    """
    registered = search_functions(suite=suite, dim=dim)
    if not registered:
        raise InvalidInput(f"suite {suite!r} has no function at dim = {dim}", field="dim")
    if any(f.instance is not None for f in registered):
        wanted = _numbers(instances)
        listed = {f.instance for f in registered if f.instance is not None}
        missing = sorted(wanted - listed)
        if missing:
            raise InvalidInput(
                f"suite {suite!r} lists instances {min(listed)}-{max(listed)} at dim = {dim}; "
                f"instance {missing[0]} is not among them",
                field="instances",
            )
        registered = [f for f in registered if f.instance in wanted]
    if functions is not None:
        names = functions.split(",")
        known = {f.id.split("/")[1] for f in registered}
        unknown = [n for n in names if n not in known]
        if unknown:
            raise InvalidInput(
                f"suite {suite!r} has no function {unknown[0]!r} at dim = {dim} (names as in "
                f"the ids, e.g. {sorted(known)[0]!r})",
                field="functions",
            )
        registered = [f for f in registered if f.id.split("/")[1] in names]
    if not registered:
        raise InvalidInput(
            f"no function of {suite!r} at dim = {dim} has these instances", field="instances"
        )
    return tuple(sorted(f.id for f in registered))


def suite_leaderboard(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    *,
    suite: str,
    dim: int,
    budget: int | None,
    aggregate: str,
    posthoc: str = "nemenyi",
    alpha: float = 0.05,
    may_queue_builds: bool,
    instances: str = "1",
    functions: str | None = None,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> SuiteLeaderboardRead:
    """Mean log10 v per set over a suite's functions at ``dim``, coverage, Friedman family.

    Raises
    ------
    app.errors.InvalidInput
        Unknown suite; too many sets for the tests or too many numerical aggregates.
    """
    universe = board_functions(suite, dim, instances, functions)
    request = {
        "suite": suite,
        "dim": dim,
        "budget": budget,
        "aggregate": aggregate,
        "posthoc": posthoc,
        "alpha": alpha,
        "instances": instances,
        "functions": functions,
    }
    key, hit = cached_answer(sm, settings, request)
    if isinstance(hit, SuiteLeaderboardRead):
        return hit
    with session_scope(sm) as session:
        repo = ResultSetRepository(session)
        archive = read_archive(
            repo, repo.run_columns(suite=suite, dim=dim), with_points=budget is not None
        )
    by_function: dict[str, list[str]] = defaultdict(list)
    for fid, sid in archive.runs:
        if fid in universe:
            by_function[fid].append(sid)
    check_cost(len(archive.sets), aggregate, [len(g.runs) for g in archive.runs.values()], settings)
    names = labels(list(archive.sets.values()))
    ctx = RankInputs(sm, settings, dispatcher, may_queue_builds, cache, ladder_cache)
    boards = [
        build_board(
            ctx,
            find_function(fid),
            archive,
            by_function[fid],
            names,
            budget=budget,
            aggregate=aggregate,
        )
        for fid in sorted(by_function)
    ]
    answer = _suite_answer(boards, archive, names, request, settings, universe)
    if not answer.pending and not any(e.provisional for e in answer.entries):
        keep_answer(key, answer, settings)
    return answer


def _log10_by_set(boards: list[Board]) -> dict[str, dict[str, float]]:
    """Set id → function id → log10 v (``-inf`` for v = 0) where the set has a rank."""
    logs: dict[str, dict[str, float]] = defaultdict(dict)
    for b in boards:
        for e in b.entries:
            if e.absolute is not None:
                lv = e.absolute.log10_v
                logs[e.set_id][b.function_id] = -math.inf if lv is None else lv
    return logs


def _entry_key(e: SuiteEntry, covered: bool) -> tuple[bool, float, str]:
    """Full coverage first, then mean log10 v (``None``: v = 0 somewhere, first), then id."""
    mean = e.mean_log10_v
    if mean is None:
        mean = -math.inf if covered else math.inf
    return (not e.full_coverage, mean, e.set_id)


def _suite_answer(
    boards: list[Board],
    archive: Archive,
    names: dict[str, str],
    request: dict[str, Any],
    settings: Settings,
    universe: tuple[str, ...],
) -> SuiteLeaderboardRead:
    functions = list(universe)
    logs = _log10_by_set(boards)
    provisional = {e.set_id for b in boards for e in b.entries if e.status == "provisional"}
    entries = []
    for sid in sorted({e.set_id for b in boards for e in b.entries}):
        got = logs.get(sid, {})
        mean = math.fsum(got.values()) / len(got) if got else math.nan
        s = archive.sets[sid]
        entries.append(
            SuiteEntry(
                set_id=sid,
                name=s.name,
                version=s.version,
                label=names[sid],
                functions_covered=len(got),
                functions_total=len(functions),
                full_coverage=len(got) == len(functions),
                mean_log10_v=mean if math.isfinite(mean) else None,
                functions_at_zero=sum(v == -math.inf for v in got.values()),
                provisional=sid in provisional,
            )
        )
    entries.sort(key=lambda e: _entry_key(e, bool(logs.get(e.set_id))))
    full = [e.set_id for e in entries if e.full_coverage][: settings.max_algorithms]
    matrix = np.array([[logs[s][f] for s in full] for f in functions], dtype=np.float64)
    pending: list[Awaited] = []
    for b in boards:
        pending += [a for a in b.pending if all(p.table_id != a.table_id for p in pending)]
    return SuiteLeaderboardRead(
        suite=request["suite"],
        dim=request["dim"],
        budget=request["budget"],
        aggregate=request["aggregate"],
        functions=functions,
        entries=entries,
        excluded=[x for b in boards for x in b.excluded],
        family=_family(
            matrix.reshape(len(functions), len(full)),
            full,
            names,
            request["posthoc"],
            request["alpha"],
            settings.leaderboard_max_tested_sets,
        ),
        pending=pending,
        warnings=list(dict.fromkeys(w for b in boards for w in b.warnings)),
        provenance=provenance(request, sets=sorted(archive.sets)),
    )
