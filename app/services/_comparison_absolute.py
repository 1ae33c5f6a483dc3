"""Absolute ranks of a comparison's cells (Jing & Liu), their paired tests and regions.

Each problem's cells are ranked as ``POST /v1/absolute-ranks`` ranks them (one request per runs
count); the matrix of v then gets Wilcoxon and sign tests per pair, adjusted by the post-hoc
family (:data:`app.services._comparison_common.ABSOLUTE_ADJUSTMENT`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from pydantic import JsonValue
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app import errors
from app.config import Settings
from app.db import session_scope
from app.domain import niia, paired, ranktests
from app.domain.cost import NO_CONTROL, WorkControl
from app.models.tables import Table
from app.schemas.comparisons import ComparisonCreate
from app.schemas.ranks import Awaited, RankRequest
from app.services import tables
from app.services._comparison_common import (
    ABSOLUTE_ADJUSTMENT,
    REQUEST_FIELDS,
    data_field,
    request_problems,
)
from app.services._comparison_pairs import PairTests, all_pair_tests
from app.services.comparison_answers import CellWarning, grouped_warnings
from app.services.comparison_pairs import AbsoluteColumns
from app.services.functions import find_function
from app.services.ranks import RankEnv, numerical, rank_values_warned
from app.services.serialize import jsonable
from app.services.table_cache import LadderCaches, TableCaches


@dataclass
class AbsoluteInputs:
    """What the absolute ranks need: database, configuration, task queue, permission, and the
    application's table and ladder caches (``app.state``)."""

    sm: sessionmaker[Session]
    settings: Settings
    dispatcher: Any
    may_queue_builds: bool
    cache: TableCaches
    ladder_cache: LadderCaches
    control: WorkControl = NO_CONTROL
    """Checked between problems (and by the NIIA report between subsets)."""


@dataclass(frozen=True)
class ProblemRegion:
    """The region a problem's absolute ranks are relative to (``absolute.regions``).

    ``region`` is ``"domain"`` (the function's default table, ladder or exact form, or a
    full-domain table given in ``tables``) or ``"box"`` (a δ-box table given in ``tables``:
    ``v`` is the probability that a uniform point of that box does at least as well).
    """

    region: str
    source: str
    table_id: str | None
    delta: float | list[float] | None
    lower: list[float] | None
    upper: list[float] | None


MIXED_SCALES = (
    "absolute ranks from different regions are different scales: these problems are ranked "
    "on the δ-box tables given in tables, each v relative to its own box (absolute.regions), "
    "not to the domain; average_absolute_rank, mean_log10_v and the paired tests over "
    "problems therefore average ranks of different scales (Jing & Liu §V: one box per problem, "
    "Table VI)"
)


def _problem_region(source: dict[str, Any]) -> ProblemRegion:
    kind = str(source.get("kind"))
    region = (source.get("spec") or {}).get("region")
    if source.get("relative_to") != "box" or not isinstance(region, dict):
        return ProblemRegion("domain", kind, source.get("table_id"), None, None, None)
    return ProblemRegion(
        "box",
        kind,
        source.get("table_id"),
        region.get("delta"),
        list(region["lower"]),
        list(region["upper"]),
    )


def check_given_tables(
    sm: sessionmaker[Session], body: ComparisonCreate, problems: Sequence[str]
) -> None:
    """Refuse ``tables`` entries that cannot give their problem's absolute ranks.

    Raises
    ------
    app.errors.InvalidInput
        ``tables`` with ``absolute='off'``; a key that is no problem of the comparison; an
        unknown table id, or a table of another function (``field="tables.<problem>"``).
    app.errors.TableNotReady
        A given table is building, merging or failed (409, ``field="tables.<problem>"``).
    """
    if not body.tables:
        return
    if body.absolute == "off":
        raise errors.InvalidInput(
            "tables names the tables of absolute ranks, which absolute='off' turns off",
            field="tables",
        )
    for problem, table_id in body.tables.items():
        field = f"tables.{problem}"
        if problem not in problems:
            raise errors.InvalidInput(
                f"{problem[:80]!r} is not a problem of this comparison", field=field
            )
        try:
            view = tables.get_table(sm, table_id)
        except errors.NotFound:
            raise errors.InvalidInput(f"no table with id {table_id[:40]!r}", field=field) from None
        if view.function_id != problem:
            raise errors.InvalidInput(
                f"table {view.id} is a table of {view.function_id}, not of problem "
                f"{problem[:80]!r}: a problem's ranks come from a table of its own function",
                field=field,
            )
        if not view.ready:
            exc = tables.not_ready_error(view)
            exc.field = field
            raise exc


def _absolute_unavailable(reason: str) -> dict[str, Any]:
    return {"status": "unavailable", "reason": reason}


def _absolute_blocker(
    body: ComparisonCreate, problems: list[str], n_runs: np.ndarray
) -> str | None:
    if body.absolute == "off":
        return "absolute ranks were turned off (absolute='off')"
    given = body.tables or {}
    for p in problems:
        if p in given:  # ranked on the table given for it (checked: a table of this problem)
            continue
        try:
            find_function(p)
        except errors.NotFound:
            return f"problem {p!r} is not a hosted function id, so it has no absolute-rank table"
        except errors.InvalidInput as exc:
            return f"problem {p!r} has no absolute-rank table: {exc.detail}"
    return None


def _check_numerical_cells(body: ComparisonCreate, n_runs: np.ndarray, settings: Settings) -> None:
    """Refuse before any work when too many cells need a convolution or an integral.

    Raises
    ------
    app.errors.InvalidInput
        More cells than ``settings.max_numerical_aggregates`` whose absolute rank is a mean of
        r > 1 runs or an even-r median (``field`` = ``value_runs`` or ``reduction``).
    """
    costly = sum(numerical(body.reduction, int(r)) for r in n_runs.ravel() if r > 0)
    if costly > settings.max_numerical_aggregates:
        raise errors.InvalidInput(
            f"{costly} cells need the absolute rank of a {body.reduction} over several runs (a "
            f"convolution or an integral each); at most {settings.max_numerical_aggregates} per "
            "comparison: split the comparison, use absolute='off', or reduction='best'",
            field="value_runs" if body.value_runs is not None else "reduction",
        )


@dataclass
class _RankedProblem:
    """One problem's absolute ranks: log10 v (NaN for a missing cell), method, source, warnings."""

    log10_v: np.ndarray
    method: list[str | None]
    source: dict[str, Any]
    warnings: list[CellWarning]
    awaiting: Awaited | None = None  # regions='auto': the ladder provisional cells wait for


def _rank_cells(
    ctx: AbsoluteInputs,
    body: ComparisonCreate,
    problem: str,
    values: np.ndarray,
    n_runs: np.ndarray,
    algorithms: tuple[str, ...],
) -> _RankedProblem:
    """Absolute ranks of one problem's cells (``POST /v1/absolute-ranks`` per runs count)."""
    out = _RankedProblem(np.full(values.size, np.nan), [None] * values.size, {}, [])
    # a given table ranks every cell of the problem (one region: never the ladder as well)
    table_id = (body.tables or {}).get(problem)
    for r in sorted({int(x) for x in n_runs if x > 0}):
        cols = np.flatnonzero((n_runs == r) & np.isfinite(values))
        if cols.size == 0:
            continue
        aggregate = None if r == 1 else body.reduction  # mean, median (any r) or best
        regions = body.regions if table_id is None else "auto"
        req = RankRequest(
            function_id=problem if table_id is None else None,
            table_id=table_id,
            values=[float(v) for v in values[cols]],
            values_are=body.values_are,
            budget=body.budget,
            runs=r,
            aggregate=aggregate,
            regions=regions,
        )

        def rank(req: RankRequest) -> Any:
            env = RankEnv(
                ctx.sm,
                ctx.settings,
                ctx.dispatcher,
                ctx.cache,
                ctx.ladder_cache,
                ctx.may_queue_builds,
            )
            return rank_values_warned(env, req)

        try:
            if regions == "auto" and table_id is None and not ladder_stored(ctx.sm, problem):
                # no ladder: 'auto' ranks on the domain table unless values lie below its
                # lowest sample (the ladder hint says so), which the 'auto' request then handles
                res, warnings = rank(req.model_copy(update={"regions": "domain"}))
                if any(w.code == "ladder-hint" for w in warnings):
                    res, warnings = rank(req)
            else:
                res, warnings = rank(req)
        except errors.AppError as exc:
            if exc.field is not None and exc.field.split(".")[0] not in REQUEST_FIELDS:
                # runs, values, ...: the comparison's cells come from its rows (or value_runs)
                runs = exc.field == "runs" and body.value_runs is not None
                exc.field = "value_runs" if runs else data_field(body)
            raise
        for col, item in zip(cols, res["results"], strict=True):
            out.log10_v[col] = -np.inf if item["log10_v"] is None else item["log10_v"]
            out.method[col] = item["method"]
        out.source = res["source"]
        if "awaiting" in res:
            out.awaiting = Awaited.model_validate(res["awaiting"])

        def named(i: int, cols: np.ndarray = cols) -> str:
            return f"algorithm {algorithms[int(cols[i])]!r}"

        out.warnings += [
            CellWarning(w.general or f"runs = {r}: {w.located(named)}", problem)
            for w in warnings
        ]
    present = n_runs[n_runs > 0]
    if present.size and present.min() != present.max():
        out.warnings.append(
            CellWarning(
                f"cells have different numbers of runs, so their v are {body.reduction}-of-r "
                "ranks for different r: a better value may get a worse v than a cell with more "
                "runs",
                problem,
            )
        )
    return out


def ladder_stored(sm: sessionmaker[Session], function_id: str) -> bool:
    """Whether a level below the domain of some nested-region ladder of ``function_id`` is
    stored (any status): one indexed query on the function's tables.

    Every ladder has at least one level below the domain, and every such level's spec carries
    ``region.ladder`` (:func:`app.services.ladders.ladder_specs`), so ``False`` means that no
    ladder of the function can be complete: ``regions='auto'`` then ranks on the domain table,
    as it does after laying out the ladder (a shape fit, tens of milliseconds the first time)
    only to find its first level missing.
    """
    with session_scope(sm) as session:
        specs = session.execute(select(Table.spec).where(Table.function_id == function_id))
        return any(
            isinstance(region := (spec or {}).get("region"), dict) and "ladder" in region
            for (spec,) in specs
        )


def _absolute_matrix(
    ctx: AbsoluteInputs,
    body: ComparisonCreate,
    problems: list[str],
    matrix: np.ndarray,
    n_runs: np.ndarray,
    algorithms: tuple[str, ...],
) -> tuple[list[_RankedProblem], list[dict[str, Any]]]:
    ranked: list[_RankedProblem] = []
    pending: list[dict[str, Any]] = []
    for i, problem in enumerate(problems):
        ctx.control.check(i, len(problems))
        try:
            row = _rank_cells(ctx, body, problem, matrix[i], n_runs[i], algorithms)
        except (errors.TableNotReady, errors.TableNotBuilt) as exc:
            pending.append({"problem": problem, "detail": exc.detail, **jsonable(exc.extra)})
            continue
        if row.awaiting is not None:  # provisional cells: the comparison waits for the ladder
            pending.append(_pending_ladder(problem, row.awaiting))
            continue
        # a missing cell (no run, or a missing run) has v = 1 under worst-rank and par-k alike:
        # par-k's k × (the problem's worst present value) depends on the other algorithms, and
        # an absolute rank must not (docs/METHODS.md, missing values)
        missing = n_runs[i] == 0
        row.log10_v[missing] = 0.0
        for col in np.flatnonzero(missing):
            row.method[col] = f"missing ({body.missing}: v = 1)"
        ranked.append(row)
    return ranked, pending


def _pending_ladder(problem: str, awaited: Awaited) -> dict[str, Any]:
    """A ``pending`` entry for a problem whose cells lie below its domain table's samples and
    wait for its nested-region ladder (as ``POST /v1/absolute-ranks`` names it in
    ``awaiting``)."""
    return {
        "problem": problem,
        "detail": awaited.detail,
        "kind": "ladder",
        "table_id": awaited.table_id,
        "table_ids": awaited.table_ids,
        "table_status": awaited.status,
        "location": awaited.location,
        "table_request": awaited.table_request,
    }


def _null_minus_inf(a: np.ndarray) -> list[Any]:
    """log10 v as JSON: ``null`` where v = 0 (as ``POST /v1/absolute-ranks`` answers)."""
    return [None if x == -np.inf else x for x in a.tolist()]


def pair_tests(
    v: np.ndarray, body: ComparisonCreate, control: int | None, settings: Settings
) -> list[PairTests]:
    """Wilcoxon and sign tests on the absolute ranks of every pair ``i < j`` (or every pair
    with the control), in that order."""
    k = v.shape[1]
    pairs = [
        (i, j) for i in range(k) for j in range(i + 1, k) if control is None or control in (i, j)
    ]
    with request_problems(data_field(body)):
        return all_pair_tests(
            v, pairs, zero_method=body.zero_method, exact_max_n=settings.wilcoxon_exact_max_n
        )


def result_columns(cls: type, results: Sequence[object]) -> dict[str, list[JsonValue]]:
    """The results (frozen dataclasses of type ``cls``) as columns: one list per field, each
    value as :func:`app.services.serialize.jsonable` gives it (JSON-ready: the answer leaves
    these columns out of its final conversion, ``comparisons._jsonable_around_pairs``)."""
    return {
        f.name: _json_column([getattr(r, f.name) for r in results])
        for f in dataclasses.fields(cls)
    }


_PLAIN = (frozenset({int}), frozenset({bool}), frozenset({str}), frozenset({str, type(None)}))


def _json_column(values: list[Any]) -> list[JsonValue]:
    """``jsonable(values)`` without its walk where the column is plain already."""
    types = frozenset(map(type, values))
    if not types or types in _PLAIN or types == frozenset({type(None)}):
        return values
    if types <= {float, np.float64}:
        a = np.asarray(values, dtype=np.float64)
        if np.isfinite(a).all():
            out: list[JsonValue] = a.tolist()
            return out
    converted: list[JsonValue] = jsonable(values)
    return converted


def pairwise_absolute(
    v: np.ndarray,
    body: ComparisonCreate,
    control: int | None,
    settings: Settings,
    names: Sequence[str] | None = None,
) -> tuple[AbsoluteColumns | None, np.ndarray, list[PairTests]]:
    """Wilcoxon and sign tests on the absolute ranks of every pair (or every pair with the
    control), adjusted by the post-hoc's family; the significance matrix, and with ``names``
    the tests themselves as columns (:class:`app.services.comparison_pairs.AbsoluteColumns`,
    pairs in the order of ``i``, ``j``; compacted with the answer as
    :class:`app.schemas.comparisons.AbsolutePairs`); and the unadjusted tests (the NIIA
    report reuses them)."""
    k = v.shape[1]
    tests = pair_tests(v, body, control, settings)
    with request_problems(data_field(body)):
        p = np.array([t.wilcoxon.p_value for t in tests], dtype=np.float64)
        log_p = np.array([t.wilcoxon.log10_p_value for t in tests], dtype=np.float64)
        adjusted = ranktests.adjusted_family(p, log_p, method=ABSOLUTE_ADJUSTMENT[body.posthoc])
    i = np.array([t.i for t in tests], dtype=np.intp)
    j = np.array([t.j for t in tests], dtype=np.intp)
    significant = np.asarray(adjusted.p) < body.alpha  # bool per pair
    sig = np.full((k, k), None, dtype=object)
    sig[i, j] = sig[j, i] = [bool(x) for x in significant]
    if names is None:
        return None, sig, tests
    out = AbsoluteColumns(
        i=i.tolist(),
        j=j.tolist(),
        fields={
            "p_adjusted": _json_column(np.asarray(adjusted.p, dtype=np.float64).tolist()),
            "log10_p_adjusted": _json_column(
                np.asarray(adjusted.log10_p, dtype=np.float64).tolist()
            ),
            "significant": significant.tolist(),
        },
        wilcoxon=result_columns(paired.WilcoxonResult, [t.wilcoxon for t in tests]),
        sign_test=result_columns(paired.SignTestResult, [t.sign_test for t in tests]),
        adjustment=ABSOLUTE_ADJUSTMENT[body.posthoc],
    )
    return out, sig, tests


def absolute_ranks(
    ctx: AbsoluteInputs,
    body: ComparisonCreate,
    problems: list[str],
    matrix: np.ndarray,
    n_runs: np.ndarray,
    control: int | None,
    algorithms: tuple[str, ...],
) -> tuple[dict[str, Any], AbsoluteTested | None]:
    blocker = _absolute_blocker(body, problems, n_runs)
    if blocker is not None:
        return _absolute_unavailable(blocker), None
    _check_numerical_cells(body, n_runs, ctx.settings)
    ranked, pending = _absolute_matrix(ctx, body, problems, matrix, n_runs, algorithms)
    if pending:
        return {
            "status": "pending",
            "reason": "some problems' tables (or the nested-region ladders that values below "
            "their tables' samples need) are not ready; POST the same request again later",
            "pending": pending,
        }, None
    log10 = np.vstack([r.log10_v for r in ranked])
    v = np.power(10.0, log10)
    pairs, significant, tests = pairwise_absolute(v, body, control, ctx.settings, algorithms)
    warnings = [w for r in ranked for w in r.warnings]
    regions = [_problem_region(r.source) for r in ranked]
    warnings += [
        CellWarning(MIXED_SCALES, p)
        for p, reg in zip(problems, regions, strict=True)
        if reg.region == "box"
    ]
    if body.budget == 1:
        warnings.insert(
            0,
            CellWarning(
                "budget = 1: these are v1 ranks (one uniform random sample); give the "
                "evaluations per run as budget for best-of-c ranks (Jing & Liu Eq. 19)"
            ),
        )
    given = {} if not body.tables else {"regions": dict(zip(problems, regions, strict=True))}
    return {
        "status": "complete",
        **given,
        "budget": body.budget,
        "v": v,
        "log10_v": [_null_minus_inf(row) for row in log10],
        "method": [r.method for r in ranked],
        "average_absolute_rank": v.mean(axis=0),
        "mean_log10_v": _null_minus_inf(log10.mean(axis=0)),
        "order_by": "average_absolute_rank (mean of v over problems; lower is better); "
        "log10_v and mean_log10_v are null where v = 0",
        "pairwise": pairs,
        "tables": {p: r.source for p, r in zip(problems, ranked, strict=True)},
        "warnings": jsonable(grouped_warnings(warnings)),
    }, AbsoluteTested(v, significant, tests)


class AbsoluteTested(NamedTuple):
    """The absolute ranks ``v`` (problems × algorithms) with their paired tests, for the NIIA
    report: the significance matrix of the full set and the unadjusted tests of its pairs."""

    v: np.ndarray
    significant: np.ndarray
    tests: list[PairTests]


def absolute_niia(
    tested: AbsoluteTested, body: ComparisonCreate, control: int | None, settings: Settings
) -> tuple[
    niia.Analysis,
    Callable[[list[int]], niia.Analysis],
    Callable[[np.ndarray, np.ndarray], niia.PairAnalyses],
]:
    """The NIIA report's analyses of the absolute ranks (:func:`app.domain.niia.niia_report`):
    the full set's (the comparison's own tests), any subset's (its paired tests, adjusted within
    the subset), and those of pairs alone, which reuse the full set's tests: a pair alone has
    the same two columns, so the same Wilcoxon test, adjusted as a family of one."""
    v = tested.v
    method = ABSOLUTE_ADJUSTMENT[body.posthoc]
    full = niia.Analysis(v.mean(axis=0), tested.significant)

    def analyse(members: list[int]) -> niia.Analysis:
        sub = v[:, members]
        sub_control = members.index(control) if control in members else None
        if control is not None and sub_control is None:
            return niia.Analysis(sub.mean(axis=0), np.full((len(members),) * 2, None, object))
        _, sig, _ = pairwise_absolute(sub, body, sub_control, settings)
        return niia.Analysis(sub.mean(axis=0), sig)

    by_pair = {(t.i, t.j): t.wilcoxon for t in tested.tests}

    def analyse_pairs(i: np.ndarray, j: np.ndarray) -> niia.PairAnalyses:
        avg_i, avg_j = np.empty(i.size), np.empty(i.size)
        sig = np.full(i.size, None, dtype=object)
        verdict: dict[tuple[float, float], bool] = {}
        with request_problems(data_field(body)):
            for p, (a, b) in enumerate(zip(i.tolist(), j.tolist(), strict=True)):
                avg_i[p], avg_j[p] = v[:, [a, b]].mean(axis=0)
                if control is not None and control not in (a, b):
                    continue
                w = by_pair[(a, b)]
                key = (w.p_value, w.log10_p_value)
                if key not in verdict:
                    adjusted = ranktests.adjusted_family(
                        np.array([w.p_value]), np.array([w.log10_p_value]), method=method
                    )
                    verdict[key] = bool(adjusted.p[0] < body.alpha)
                sig[p] = verdict[key]
        return niia.PairAnalyses(avg_i, avg_j, sig)

    return full, analyse, analyse_pairs
