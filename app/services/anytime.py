"""Use cases of ``POST /v1/runtime-distributions`` and ``POST /v1/profiles``.

Runs with trajectories (inline per algorithm, or archived result sets) become
:class:`~app.domain.results.RunResult` objects in errors ``f − f*``; :mod:`app.domain.anytime`
computes runtimes, ERT, runtime ECDFs, simulated restarts and the fixed-budget view; the
anytime absolute rank ranks each run's best-so-far at budget ``c`` as ``log10 v_c`` through the
rank service (:func:`app.services.ranks.rank_answer`, one request per algorithm, function and
budget, ``budget = c``). Sizes are bounded by ``max_anytime_records`` (records),
``max_anytime_cells`` (runs × targets, samples × targets) and ``max_anytime_rank_budgets``.

Simulated restarts of algorithm ``a`` (0-based, request order) on function ``f`` (0-based,
analysis order) draw from ``numpy.random.default_rng(SeedSequence([seed, a, f]))``: the same
request gives the same samples, and adding an algorithm leaves the others' samples unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from app import errors
from app.config import Settings
from app.db import session_scope
from app.domain import anytime
from app.domain.anytime.runtimes import targets_of
from app.domain.anytime.steps import StepFunction
from app.domain.results import RunResult, Trajectory
from app.repositories.result_sets import ResultSetRepository
from app.schemas.anytime import (
    AlgorithmRunsIn,
    AnytimeRankRead,
    AnytimeWarning,
    FigureKind,
    FunctionAnalysis,
    PooledEcdf,
    ProfileCurve,
    ProfileRead,
    ProfileRequest,
    QuantilesRead,
    RuntimeDistributionRead,
    RuntimeDistributionRequest,
    StepRead,
)
from app.schemas.ranks import RankRequest
from app.services import plots
from app.services.functions import find_function
from app.services.leaderboard_inputs import ArchivedSet, labels
from app.services.provenance import float64_sha256, provenance
from app.services.ranks import RankEnv, rank_answer

__all__ = [
    "Algorithm",
    "Analysis",
    "default_budgets",
    "profiles",
    "runtime_distributions",
]


@dataclass(frozen=True)
class Algorithm:
    """One algorithm's runs, in errors ``f − f*``, with the field a refusal names."""

    name: str
    runs: tuple[RunResult, ...]
    field: str


@dataclass(frozen=True)
class Analysis:
    """The answer and what its figures draw (the domain's step functions and views)."""

    read: RuntimeDistributionRead
    ecdfs: tuple[tuple[str, str, StepFunction], ...]


# --- the runs -------------------------------------------------------------------------------


def _f_opt(function_id: str, field: str) -> float:
    try:
        fn = find_function(function_id)
    except errors.NotFound as exc:
        raise errors.InvalidInput(
            f"values_are='f' needs a hosted function to subtract f*: {exc.detail}", field=field
        ) from None
    if fn.f_opt is None:
        raise errors.InvalidInput(
            f"values_are='f': {function_id} has no known f*; send errors f − f*", field=field
        )
    return float(fn.f_opt)


def _inline(body: RuntimeDistributionRequest, items: Sequence[AlgorithmRunsIn]) -> list[Algorithm]:
    out: list[Algorithm] = []
    seen: set[str] = set()
    for i, item in enumerate(items):
        where = f"algorithms.{i}"
        if item.algorithm in seen:
            raise errors.InvalidInput(
                f"algorithm {item.algorithm!r} is named twice", field=f"{where}.algorithm"
            )
        seen.add(item.algorithm)
        numbers: dict[str, int] = {}
        runs = []
        for j, run in enumerate(item.runs):
            at = f"{where}.runs.{j}"
            evals = np.asarray(run.evaluations, dtype=np.int64)
            values = np.asarray(run.values, dtype=float)
            if values.size != evals.size:
                raise errors.InvalidInput(
                    f"{values.size} values for {evals.size} evaluations", field=f"{at}.values"
                )
            if (evals[1:] <= evals[:-1]).any():
                k = int(np.argmax(np.diff(evals) <= 0)) + 1
                raise errors.InvalidInput(
                    f"evaluations must be strictly increasing: {int(evals[k])} after "
                    f"{int(evals[k - 1])} (record {k})",
                    field=f"{at}.evaluations",
                )
            if body.values_are == "f":
                values = values - _f_opt(run.function_id, f"{at}.function_id")
            if body.records == "observed":
                values = np.minimum.accumulate(values)
            elif (values[1:] > values[:-1]).any():
                k = int(np.argmax(np.diff(values) > 0)) + 1
                raise errors.InvalidInput(
                    f"best-so-far values must not increase (record {k}); send "
                    "records='observed' for observed values",
                    field=f"{at}.values",
                )
            if values[-1] < 0:
                raise errors.InvalidInput(
                    "errors f − f* must be >= 0 (values_are='error' means f − f*)",
                    field=f"{at}.values",
                )
            budget = int(evals[-1]) if run.budget is None else run.budget
            if budget < evals[-1]:
                raise errors.InvalidInput(
                    f"budget {budget} is below the last record's evaluations {int(evals[-1])}",
                    field=f"{at}.budget",
                )
            number = numbers.get(run.function_id, 0)
            numbers[run.function_id] = number + 1
            trajectory = Trajectory.from_arrays(evals, values)
            runs.append(RunResult(run.function_id, number, float(values[-1]), budget, trajectory))
        out.append(Algorithm(item.algorithm, tuple(runs), where))
    return out


def _archived(env: RankEnv, ids: Sequence[str], settings: Settings) -> list[Algorithm]:
    with session_scope(env.sm) as session:
        repo = ResultSetRepository(session)
        rows = {r.id: r for r in repo.sets(list(ids))}
        sets = []
        for i, sid in enumerate(ids):
            field = f"result_sets.{i}"
            row = rows.get(sid)
            if row is None:
                raise errors.InvalidInput(f"no result set with id {sid[:40]!r}", field=field)
            if sid in ids[:i]:
                raise errors.InvalidInput(f"set {sid} is named twice", field=field)
            if not row.has_trajectories:
                raise errors.InvalidInput(
                    f"set {sid} holds no trajectories (final values only): anytime analysis "
                    "needs evaluations → best-so-far",
                    field=field,
                )
            if row.value_aggregate is not None:
                raise errors.InvalidInput(
                    f"set {sid} holds published {row.value_aggregate}s, not runs", field=field
                )
            sets.append(
                ArchivedSet(
                    row.id,
                    row.name,
                    row.version,
                    row.values_are,
                    row.value_aggregate,
                    row.value_runs,
                    row.has_trajectories,
                )
            )
        runs = {sid: repo.runs(set_ids=[sid]) for sid in ids}
        points = {sid: repo.points(set_ids=[sid]) for sid in ids}
    n_records = sum(len(p) for p in points.values())
    _check("result_sets", n_records, settings.max_anytime_records, "max_anytime_records")
    names = labels(sets)
    out = []
    for i, s in enumerate(sets):
        field = f"result_sets.{i}"
        by_run: dict[tuple[str, int], list[tuple[int, float]]] = {}
        for p in points[s.id]:
            by_run.setdefault((p.function_id, p.run), []).append((p.evaluations, p.best))
        got = []
        for r in runs[s.id]:
            pts = by_run.get((r.function_id, r.run))
            if not pts:
                raise errors.InvalidInput(
                    f"set {s.id}: run {r.run} on {r.function_id} has no trajectory", field=field
                )
            offset = 0.0 if s.values_are == "error" else _f_opt(r.function_id, field)
            trajectory = Trajectory(tuple(e for e, _ in pts), tuple(b - offset for _, b in pts))
            got.append(RunResult(r.function_id, r.run, r.value - offset, r.budget, trajectory))
        out.append(Algorithm(names[s.id], tuple(got), field))
    return out


def _check(field: str, count: int, limit: int, setting: str, what: str = "records") -> None:
    if count > limit:
        raise errors.PayloadTooLarge(f"{count} {what} exceed {setting} = {limit}", field=field)


# --- the analysis ---------------------------------------------------------------------------


def default_budgets(largest: int) -> NDArray[np.int64]:
    """``1, 2, 5, 10, 20, 50, …`` below ``largest``, then ``largest`` itself."""
    grid = [m * 10**k for k in range(16) for m in (1, 2, 5) if m * 10**k < largest]
    return np.array([*grid, largest], dtype=np.int64)


def _optional(values: NDArray[np.float64]) -> list[float | None]:
    return [float(v) if np.isfinite(v) else None for v in values.tolist()]


def _step(step: StepFunction) -> StepRead:
    return StepRead(
        x=step.x.tolist(),
        counts=step.counts.tolist(),
        total=step.total,
        continuity=step.continuity,
    )


def _groups(
    algorithms: Sequence[Algorithm], body: RuntimeDistributionRequest
) -> list[tuple[Algorithm, list[tuple[str, list[RunResult]]]]]:
    """Per algorithm its (function, runs), filtered by ``function_ids`` (a function no
    algorithm has is refused)."""
    out = []
    for alg in algorithms:
        groups = anytime.group_runs(alg.runs, pool_instances=body.pool_instances)
        if body.function_ids is not None:
            by_id = dict(groups)
            groups = tuple((f, by_id[f]) for f in body.function_ids if f in by_id)
        out.append((alg, list(groups)))
    if body.function_ids is not None:
        have = {f for _, groups in out for f, _ in groups}
        for k, f in enumerate(body.function_ids):
            if f not in have:
                raise errors.InvalidInput(f"no runs on {f}", field=f"function_ids.{k}")
    return out


def _sizes(
    grouped: Sequence[tuple[Algorithm, list[tuple[str, list[RunResult]]]]],
    body: RuntimeDistributionRequest,
    n_targets: int,
    settings: Settings,
) -> None:
    cells = sum(len(runs) for _, groups in grouped for _, runs in groups) * n_targets
    _check("targets", cells, settings.max_anytime_cells, "max_anytime_cells", "runs × targets")
    if body.simulated_restarts is not None:
        n_groups = sum(len(groups) for _, groups in grouped)
        samples = n_groups * body.simulated_restarts * n_targets
        _check(
            "simulated_restarts",
            samples,
            settings.max_anytime_cells,
            "max_anytime_cells",
            "samples × targets",
        )


def _budgets(
    body: RuntimeDistributionRequest, runs: Iterator[RunResult], limit: int
) -> NDArray[np.int64]:
    if body.budgets is None:
        budgets = default_budgets(max(r.budget for r in runs))
    else:
        budgets = np.asarray(body.budgets, dtype=np.int64)
        if np.any(np.diff(budgets) <= 0):
            raise errors.InvalidInput("budgets must be strictly increasing", field="budgets")
    _check("budgets", budgets.size, limit, "max_anytime_rank_budgets", "budgets")
    return budgets


def runtime_distributions(env: RankEnv, body: RuntimeDistributionRequest) -> Analysis:
    """ERT, runtime ECDFs, fixed budgets and the anytime absolute rank of the runs sent.

    Raises
    ------
    app.errors.InvalidInput
        A malformed trajectory (its field: ``algorithms.<i>.runs.<j>.evaluations`` ...), an
        unknown or trajectory-less result set (``result_sets.<i>``), a function no algorithm
        ran (``function_ids.<k>``), unsorted budgets.
    app.errors.PayloadTooLarge
        More records, runs × targets or budgets than the settings allow (the field and the
        setting named).
    """
    settings = env.settings
    if (body.algorithms is None) == (body.result_sets is None):
        raise errors.InvalidInput(
            "give exactly one of algorithms or result_sets", field="algorithms"
        )
    if body.algorithms is not None:
        n_records = sum(len(r.evaluations) for a in body.algorithms for r in a.runs)
        _check("algorithms", n_records, settings.max_anytime_records, "max_anytime_records")
        algorithms = _inline(body, body.algorithms)
    else:
        algorithms = _archived(env, body.result_sets or [], settings)
    targets = targets_of(body.targets)
    grouped = _groups(algorithms, body)
    _sizes(grouped, body, targets.size, settings)
    budgets = _budgets(
        body,
        (r for _, g in grouped for _, runs in g for r in runs),
        settings.max_anytime_rank_budgets,
    )
    warnings: list[AnytimeWarning] = []
    tables: dict[str, object] = {}
    functions: list[FunctionAnalysis] = []
    pooled: list[PooledEcdf] = []
    ecdfs: list[tuple[str, str, StepFunction]] = []
    for a, (alg, groups) in enumerate(grouped):
        samples = []
        for f, (function_id, runs) in enumerate(groups):
            table = anytime.runtime_table(function_id, runs, targets)
            ecdf = anytime.runtime_ecdf([table.runtimes.T])
            ecdfs.append((alg.name, function_id, ecdf))
            simulated = None
            if body.simulated_restarts is not None:
                rng = np.random.default_rng(np.random.SeedSequence([body.seed, a, f]))
                sim = anytime.simulated_restarts(table, n_samples=body.simulated_restarts, rng=rng)
                simulated = anytime.runtime_ecdf([sim.runtimes])
            samples.append(table.runtimes.T if simulated is None else sim.runtimes)
            (view,) = anytime.fixed_budget(
                runs, budgets, function_ids=[function_id], pool_instances=body.pool_instances
            )
            rank = None
            if body.absolute_ranks:
                rank = _anytime_rank(env, alg.name, function_id, view, warnings, tables)
            functions.append(_analysis(alg.name, table, ecdf, simulated, view, rank))
        pooled += _pooled(alg.name, [f for f, _ in groups], samples, body, warnings)
    read = RuntimeDistributionRead(
        targets=targets.tolist(),
        budgets=budgets.tolist(),
        algorithms=[a.name for a in algorithms],
        functions=functions,
        pooled=pooled,
        warnings=warnings,
        provenance=provenance(_payload(body, algorithms), rank_tables=tables),
    )
    return Analysis(read, tuple(ecdfs))


def _analysis(
    algorithm: str,
    table: anytime.RuntimeTable,
    ecdf: StepFunction,
    simulated: StepFunction | None,
    view: anytime.FixedBudget,
    rank: AnytimeRankRead | None,
) -> FunctionAnalysis:
    return FunctionAnalysis(
        algorithm=algorithm,
        function_id=table.function_id,
        runs=table.n_runs,
        budgets_used=table.budgets.tolist(),
        successes=table.successes.tolist(),
        ert=_optional(table.ert),
        ecdf=_step(ecdf),
        simulated_ecdf=None if simulated is None else _step(simulated),
        fixed_budget=QuantilesRead(
            levels=view.levels.tolist(), values=[_optional(row) for row in view.quantiles]
        ),
        anytime_rank=rank,
    )


def _pooled(
    algorithm: str,
    function_ids: list[str],
    samples: list[NDArray[np.float64]],
    body: RuntimeDistributionRequest,
    warnings: list[AnytimeWarning],
) -> list[PooledEcdf]:
    """One algorithm's runtime ECDF over all its functions and targets (cocopp's
    ``pprldmany``, on evaluations): every (function, target, sample) weighs the same, so the
    functions need as many samples each — simulated restarts always, runs when equal."""
    if len(function_ids) < 2:
        return []
    if len({s.shape[1] for s in samples}) > 1:
        warnings.append(
            AnytimeWarning(
                code="ecdf-not-pooled",
                message="the functions have different numbers of runs: send "
                "simulated_restarts for an ECDF pooled over them",
                algorithm=algorithm,
            )
        )
        return []
    source: Literal["runs", "simulated-restarts"] = (
        "runs" if body.simulated_restarts is None else "simulated-restarts"
    )
    step = anytime.runtime_ecdf(samples)
    return [
        PooledEcdf(algorithm=algorithm, function_ids=function_ids, source=source, ecdf=_step(step))
    ]


def _anytime_rank(
    env: RankEnv,
    algorithm: str,
    function_id: str,
    view: anytime.FixedBudget,
    warnings: list[AnytimeWarning],
    tables: dict[str, object],
) -> AnytimeRankRead | None:
    """``log10 v_c`` of each run's best-so-far at each budget ``c`` (``None`` + a warning when
    the function has no published table or the rank service cannot answer); ``tables`` gets
    the table each function was ranked against (the answer's ``provenance.rank_tables``)."""
    per_run = np.full(view.best.shape, np.nan)
    methods: set[str] = set()
    notes: set[str] = set()
    try:
        find_function(function_id)
        for b, c in enumerate(view.budgets.tolist()):
            column = view.best[:, b]
            has = ~np.isnan(column)
            if not has.any():
                continue
            req = RankRequest(
                function_id=function_id,
                values=column[has].tolist(),
                values_are="error",
                budget=int(c),
            )
            answer = rank_answer(env, req)
            cols = answer.results
            if cols is None:  # pragma: no cover - values always give columns
                continue
            per_run[has, b] = cols.log10_v
            methods.update(cols.method.tolist())
            envelope = answer.envelope()
            notes.update(envelope.warnings)
            # what the rank service ranked against: its provenance's table id (None for an
            # exact form) and that table's data digest, per function
            tables[function_id] = {k: envelope.provenance.get(k) for k in ("table", "data_sha256")}
            if cols.provisional is not None:
                notes.add("some ranks are provisional: they await the function's ladder")
    except errors.AppError as exc:
        warnings.append(
            AnytimeWarning(
                code="anytime-rank-unavailable",
                message=f"no anytime absolute rank: {exc.detail}",
                algorithm=algorithm,
                function_id=function_id,
            )
        )
        return None
    warnings += [
        AnytimeWarning(code="rank-warning", message=m, algorithm=algorithm, function_id=function_id)
        for m in sorted(notes)
    ]
    finite = np.where(np.isfinite(per_run), per_run, np.nan)
    levels = view.levels
    quantiles = _quantiles(finite, levels)
    return AnytimeRankRead(
        methods=sorted(methods),
        per_run=[_optional(row) for row in per_run],
        quantiles=QuantilesRead(
            levels=levels.tolist(), values=[_optional(row) for row in quantiles]
        ),
    )


def _quantiles(values: NDArray[np.float64], levels: NDArray[np.float64]) -> NDArray[np.float64]:
    """``numpy.quantile`` (linear) of each column's non-``nan`` entries; ``nan`` if none."""
    out = np.full((levels.size, values.shape[1]), np.nan)
    for b in range(values.shape[1]):
        column = values[:, b]
        column = column[~np.isnan(column)]
        if column.size:
            out[:, b] = np.quantile(column, levels)
    return out


def _payload(
    body: RuntimeDistributionRequest, algorithms: Sequence[Algorithm]
) -> dict[str, object]:
    """The request as hashed into ``provenance.request_sha256``: options as sent, each
    algorithm's runs as digests of their binary64 numbers (not 10^6 floats as JSON text)."""
    out: dict[str, object] = body.model_dump(mode="json", exclude={"algorithms"})
    runs = []
    for alg in algorithms:
        arrays = [t.arrays for r in alg.runs if (t := r.trajectory) is not None]
        runs.append(
            {
                "algorithm": alg.name,
                "function_ids": [r.function_id for r in alg.runs],
                "budgets": [r.budget for r in alg.runs],
                "lengths": [a.best.size for a in arrays],
                "evaluations": float64_sha256(_joined([a.evaluations for a in arrays])),
                "errors": float64_sha256(_joined([a.best for a in arrays])),
            }
        )
    out["runs"] = runs
    return out


def _joined(parts: list[NDArray[np.generic]]) -> NDArray[np.float64]:
    """The runs' records end to end, as binary64 (what :func:`float64_sha256` hashes)."""
    if not parts:
        return np.empty(0)
    return np.concatenate(parts).astype(np.float64)


# --- profiles -------------------------------------------------------------------------------


def _matrix(
    rows: Sequence[Sequence[float | None]], n_solvers: int, field: str, failure: float
) -> NDArray[np.float64]:
    for p, row in enumerate(rows):
        if len(row) != n_solvers:
            raise errors.InvalidInput(
                f"row {p} has {len(row)} entries for {n_solvers} solvers", field=f"{field}.{p}"
            )
    return np.array([[failure if v is None else v for v in row] for row in rows], dtype=float)


def build_profile(body: ProfileRequest, settings: Settings) -> anytime.Profile:
    """The domain's profile of the request's matrix (fields checked, sizes bounded)."""
    needed = {"performance": "costs", "data": "costs", "accuracy": "final_errors"}[body.kind]
    rows = body.costs if needed == "costs" else body.final_errors
    if rows is None:
        raise errors.InvalidInput(f"kind={body.kind!r} needs {needed}", field=needed)
    _check(
        needed,
        len(rows) * len(body.solvers),
        settings.max_matrix_cells,
        "max_matrix_cells",
        "problems × solvers",
    )
    if body.problems is not None and len(body.problems) != len(rows):
        raise errors.InvalidInput(
            f"{len(body.problems)} problem names for {len(rows)} rows", field="problems"
        )
    if len(set(body.solvers)) != len(body.solvers):
        raise errors.InvalidInput("solver names must be distinct", field="solvers")
    if body.kind == "performance":
        return anytime.performance_profile(
            _matrix(rows, len(body.solvers), needed, np.inf), solvers=body.solvers
        )
    if body.kind == "data":
        if body.dims is None or len(body.dims) != len(rows):
            raise errors.InvalidInput("data profiles need one dimension per problem", field="dims")
        return anytime.data_profile(
            _matrix(rows, len(body.solvers), needed, np.inf),
            np.asarray(body.dims, dtype=np.int64),
            solvers=body.solvers,
        )
    if body.initial_errors is None or len(body.initial_errors) != len(rows):
        raise errors.InvalidInput(
            "accuracy profiles need one initial error per problem", field="initial_errors"
        )
    return anytime.accuracy_profile(
        _matrix(rows, len(body.solvers), needed, np.nan),
        body.initial_errors,
        solvers=body.solvers,
        max_digits=body.max_digits,
    )


def profiles(body: ProfileRequest, settings: Settings) -> ProfileRead:
    """Performance, data or accuracy profiles as exact step functions."""
    prof = build_profile(body, settings)
    n_problems = prof.values.shape[0]
    return ProfileRead(
        kind=prof.kind,
        axis=prof.axis,
        problems=body.problems or [f"p{p}" for p in range(n_problems)],
        curves=[
            ProfileCurve(solver=s, step=_step(step), values=_optional(prof.values[:, k]))
            for k, (s, step) in enumerate(zip(prof.solvers, prof.steps, strict=True))
        ],
        provenance=provenance(body.model_dump(mode="json")),
    )


# --- figures --------------------------------------------------------------------------------


def _label(item: FunctionAnalysis, many_functions: bool) -> str:
    return f"{item.algorithm} · {item.function_id}" if many_functions else item.algorithm


def _array(values: Sequence[float | None]) -> NDArray[np.float64]:
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def runtime_figure(
    analysis: Analysis, figure: FigureKind, fmt: str, options: plots.FigureOptions
) -> plots.Rendered:
    """The runtime ECDFs, the fixed-budget view or the anytime absolute rank, drawn.

    One curve per (algorithm, function); bands are the quartiles over runs.
    """
    read = analysis.read
    many = len({f.function_id for f in read.functions}) > 1
    labels_ = [_label(item, many) for item in read.functions]
    title = f"{len(read.targets)} targets" if figure == "ecdf" else "quartiles over runs"
    if figure == "ecdf":
        curves = [
            plots.StepCurve(step.x, step.y, label)
            for (_, _, step), label in zip(analysis.ecdfs, labels_, strict=True)
        ]
        if read.pooled and len(read.pooled) == len(read.algorithms):
            # every algorithm pooled over its functions: one curve each (cocopp's pprldmany)
            curves = [
                plots.StepCurve(
                    np.asarray(p.ecdf.x), np.asarray(p.ecdf.counts) / p.ecdf.total, p.algorithm
                )
                for p in read.pooled
            ]
            labels_ = [p.algorithm for p in read.pooled]
            title = f"{len(read.targets)} targets × {len(read.pooled[0].function_ids)} functions"
        content = plots.step_plot(
            curves,
            xlabel="evaluations",
            ylabel="fraction of (target, run) pairs reached",
            title=f"runtime ECDF over {title}",
            log_x=True,
            x_range=(1.0, float(max(max(f.budgets_used) for f in read.functions))),
            fmt=fmt,
            options=options,
        )
    else:
        x = np.asarray(read.budgets, dtype=float)
        bands = []
        for item, label in zip(read.functions, labels_, strict=True):
            rank = item.anytime_rank
            q = item.fixed_budget if figure == "fixed-budget" else None
            if figure == "anytime-rank" and rank is not None:
                q = rank.quantiles
            if q is None:
                continue
            low, middle, high = (_array(q.values[k]) for k in _quartiles(item))
            bands.append(plots.BandCurve(x, middle, low, high, label))
        content = plots.band_plot(
            bands,
            xlabel="budget c (evaluations)",
            ylabel="best-so-far f − f*" if figure == "fixed-budget" else "log10 v_c (anytime rank)",
            title=f"{'fixed-budget view' if figure == 'fixed-budget' else 'anytime absolute rank'}"
            f", median and {title}",
            log_y=figure == "fixed-budget",
            fmt=fmt,
            options=options,
        )
    return plots.Rendered(content, plots.missing_glyphs(labels_))


def _quartiles(item: FunctionAnalysis) -> tuple[int, int, int]:
    """Rows of the levels 0.25, 0.5, 0.75 (the default levels hold them)."""
    levels = item.fixed_budget.levels
    return levels.index(0.25), levels.index(0.5), levels.index(0.75)


def profile_figure(
    body: ProfileRequest, settings: Settings, fmt: str, options: plots.FigureOptions
) -> plots.Rendered:
    """The profiles drawn as exact steps (performance: on a ``log2 τ`` axis)."""
    prof = build_profile(body, settings)
    finite = prof.values[np.isfinite(prof.values)]
    if prof.kind == "performance":
        shift = [np.log2(s.x) for s in prof.steps]
        top = float(np.log2(finite.max())) if finite.size else 1.0
        x_range, xlabel = (0.0, max(top * 1.05, 1.0)), "log2 τ (performance ratio)"
        ylabel = "ρ_s(τ): fraction of problems within τ of the best"
    elif prof.kind == "data":
        shift = [s.x for s in prof.steps]
        top = float(finite.max()) if finite.size else 1.0
        x_range, xlabel = (0.0, top * 1.05), "κ: simplex gradients, evaluations / (n_p + 1)"
        ylabel = "d_s(κ): fraction of problems solved"
    else:
        shift = [s.x for s in prof.steps]
        x_range, xlabel = (0.0, body.max_digits), "τ: digits of accuracy gained"
        ylabel = "R_s(τ): fraction of problems with γ ≥ τ"
    curves = [
        plots.StepCurve(x, step.y, name)
        for x, step, name in zip(shift, prof.steps, prof.solvers, strict=True)
    ]
    content = plots.step_plot(
        curves,
        xlabel=xlabel,
        ylabel=ylabel,
        title=f"{prof.kind} profile, {prof.values.shape[0]} problems",
        log_x=False,
        x_range=x_range,
        fmt=fmt,
        options=options,
    )
    return plots.Rendered(content, plots.missing_glyphs(prof.solvers))
