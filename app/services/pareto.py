"""Use cases of ``/v1/pareto-rankings`` and ``/v1/indicators`` (Ibrahim et al. 2024).

Rows of indicator values (JSON or CSV), or runs' final fronts turned into indicator values,
are grouped by problem into runs × indicators matrices; each problem's runs are sorted into
non-dominated levels, counted per algorithm and level, and ranked by the four rules and their
average; the count matrices are summed level by level over problems for the overall ranking.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain import indicators as indicators_domain
from app.domain import pareto
from app.domain.cost import NO_CONTROL, WorkControl
from app.domain.errors import DomainError
from app.errors import InvalidInput, NotFound
from app.repositories.pareto import ParetoRankingRepository
from app.schemas.pareto import IndicatorRead, IndicatorRequest, ParetoRankingCreate
from app.services.errors import domain_errors_as_problems
from app.services.isolated import stoppable_hypervolume
from app.services.provenance import canonical_sha256, provenance
from app.services.results_input import csv_name, csv_run, read_csv
from app.services.serialize import jsonable
from app.services.stored import Stored

CSV_COLUMNS = ("problem", "algorithm", "run", "indicator", "value")
#: Runs per problem: non-dominated sorting is fast, the epsilon variant is O(n²).
MAX_RUNS = {"pareto": 100_000, "epsilon": 5_000}

Row = tuple[str, str, int, str, float]


def indicators(body: IndicatorRequest, *, control: WorkControl = NO_CONTROL) -> IndicatorRead:
    """Quality indicators of one front (every setting echoed).

    ``control`` is checked before and after the work; the hypervolume, one atomic library
    call, runs where ``control`` can stop it (:mod:`app.services.isolated`), the other
    indicators are bounded by the cost model (``app.services.costs.indicators_cost``).

    The reference front is used without its repeated and dominated rows
    (``reference_front_filter`` says how many were removed); ``log10_hv`` is finite below the
    float range and ``hv_underflow`` says when the float ``hv`` underflowed.
    """
    control.check()
    with domain_errors_as_problems("front"):
        res = indicators_domain.compute_indicators(
            body.front,
            reference_front=body.reference_front,
            reference_point=body.reference_point,
            indicators=tuple(body.indicators),
            p=body.p,
            hypervolume=stoppable_hypervolume(control),
        )
    control.check()
    warnings = []
    if "hv" in res.values and res.settings.get("hv_points_counted") == 0:
        warnings.append(
            "no point of the front strictly dominates the reference point: HV = 0 carries no "
            "information; choose a reference point dominated by the fronts"
        )
    if res.hv_underflow is not None:
        warnings.append(res.hv_underflow.message)
    filtered = res.reference_front_filter
    if filtered is not None and filtered.n_used < filtered.n_given:
        warnings.append(
            f"the reference front had {filtered.duplicates_removed} repeated and "
            f"{filtered.dominated_removed} dominated row(s), removed: the indicators use its "
            f"{filtered.n_used} non-dominated distinct rows"
        )
    return IndicatorRead(
        values=jsonable(_finite(res.values, "front")),
        settings=jsonable(res.settings),
        log10_hv=res.log10_hv,
        reference_front_filter=jsonable(filtered),
        hv_underflow=jsonable(res.hv_underflow),
        warnings=warnings,
        provenance=provenance(body.model_dump(mode="json")),
    )


def _csv_rows(text: str, max_rows: int) -> list[Row]:
    def row(fields: list[str], where: str) -> Row:
        p, a, r, i, v = fields
        try:
            value = float(v)
        except ValueError:
            raise InvalidInput(f"{where}: value {v[:40]!r} is not a number", field="csv") from None
        if not np.isfinite(value) or "_" in v:
            raise InvalidInput(f"{where}: value {v[:40]!r} is not a finite number", field="csv")
        return (
            csv_name(p, where, "problem"),
            csv_name(a, where, "algorithm"),
            csv_run(r, where),
            csv_name(i, where, "indicator"),
            value,
        )

    return read_csv(text, CSV_COLUMNS, row, max_rows=max_rows)


def _located(exc: DomainError, n: int, problem: str) -> InvalidInput:
    """A domain error of one front, located at the request field it comes from."""
    field = exc.field or "front"
    where = f"fronts.{n}.front" if field == "front" else f"references.{problem}.{field}"
    return InvalidInput(f"fronts.{n} (problem {problem!r}): {exc}", field=where)


def _front_rows(body: ParetoRankingCreate, control: WorkControl) -> tuple[list[Row], list[int]]:
    """Indicator rows of every front, and for each row the index of its front."""
    assert body.fronts is not None
    refs = body.references or {}
    rows: list[Row] = []
    origin: list[int] = []
    for n, run in enumerate(body.fronts):
        control.check(n, len(body.fronts))
        ref = refs.get(run.problem)
        try:
            res = indicators_domain.compute_indicators(
                run.front,
                reference_front=None if ref is None else ref.reference_front,
                reference_point=None if ref is None else ref.reference_point,
                indicators=tuple(body.indicators),
                hypervolume=stoppable_hypervolume(control),
            )
        except DomainError as exc:
            raise _located(exc, n, run.problem) from exc
        values = _finite(res.values, f"fronts.{n}")
        rows += [(run.problem, run.algorithm, run.run, i, v) for i, v in values.items()]
        origin += [n] * len(values)
    return rows, origin


def _finite(values: dict[str, float], field: str) -> dict[str, float]:
    """Indicator values, refused when one leaves the float range (e.g. HV of huge boxes)."""
    bad = [k for k, v in values.items() if not np.isfinite(v)]
    if bad:
        raise InvalidInput(
            f"indicator(s) {bad} overflow the float range for these values; rescale the objectives",
            field=field,
        )
    return values


def _rows(
    body: ParetoRankingCreate, settings: Settings, control: WorkControl
) -> tuple[list[Row], str, list[int]]:
    given = [name for name in ("scores", "csv", "fronts") if getattr(body, name) is not None]
    if len(given) != 1:
        raise InvalidInput("give exactly one of scores, csv and fronts", field="scores")
    field = given[0]
    if field == "csv":
        rows = _csv_rows(body.csv or "", settings.max_result_rows)
        return rows, field, list(range(len(rows)))
    items = getattr(body, field)
    if len(items) > settings.max_result_rows:
        raise InvalidInput(f"at most {settings.max_result_rows} rows", field=field)
    if field == "fronts":
        rows, origin = _front_rows(body, control)
        return rows, field, origin
    rows = [(r.problem, r.algorithm, r.run, r.indicator, r.value) for r in body.scores or []]
    return rows, field, list(range(len(rows)))


def _orientation(body: ParetoRankingCreate, names: list[str]) -> list[bool]:
    unknown = sorted(set(body.orientation) - set(names))
    if unknown:
        raise InvalidInput(
            f"orientation names unknown indicator(s) {unknown[:5]}", field="orientation"
        )
    default = {"hv": "max"} if body.fronts is not None else {}
    return [body.orientation.get(n, default.get(n, "min")) == "max" for n in names]


def _problem_matrix(
    cells: dict[tuple[str, int], dict[str, float]], names: list[str], problem: str, field: str
) -> tuple[np.ndarray, list[tuple[str, int]]]:
    runs = sorted(cells, key=lambda ar: (ar[0], ar[1]))
    matrix = np.empty((len(runs), len(names)))
    for i, key in enumerate(runs):
        missing = [n for n in names if n not in cells[key]]
        if missing:
            raise InvalidInput(
                f"problem {problem!r}: run {key[1]} of {key[0]!r} lacks indicator(s) "
                f"{missing[:5]}; every run needs every indicator",
                field=field,
            )
        matrix[i] = [cells[key][n] for n in names]
    return matrix, runs


#: Per problem, per (algorithm, run), the indicator values by name.
Cells = dict[str, dict[tuple[str, int], dict[str, float]]]


def _group(rows: list[Row], field: str, origin: list[int]) -> tuple[Cells, list[str], list[str]]:
    problems: Cells = {}
    algorithms: dict[str, None] = {}
    names: dict[str, None] = {}
    for pos, (p, a, r, i, v) in enumerate(rows):
        cell = problems.setdefault(p, {}).setdefault((a, r), {})
        if i in cell:
            raise InvalidInput(
                f"duplicate value of indicator {i!r} for run {r} of {a!r} on {p!r} "
                f"({field} item {origin[pos]})",
                field=f"{field}.{origin[pos]}" if field != "csv" else field,
            )
        cell[i] = v
        algorithms.setdefault(a)
        names.setdefault(i)
    if len(algorithms) < 2:
        raise InvalidInput("a ranking needs at least 2 algorithms", field=field)
    return problems, list(algorithms), list(names)


def _rank_problem(
    problem: str,
    cells: dict[tuple[str, int], dict[str, float]],
    names: list[str],
    maximize: list[bool],
    body: ParetoRankingCreate,
    algorithms: list[str],
    field: str,
) -> tuple[dict[str, Any], np.ndarray]:
    matrix, runs = _problem_matrix(cells, names, problem, field)
    if len(runs) > MAX_RUNS[body.dominance]:
        raise InvalidInput(
            f"problem {problem!r} has {len(runs)} runs; at most {MAX_RUNS[body.dominance]} with "
            f"dominance={body.dominance!r}",
            field=field,
        )
    with domain_errors_as_problems(field):
        levels = pareto.nondominated_levels(matrix, maximize=maximize, dominance=body.dominance)
        counts, order = pareto.level_counts(levels, [a for a, _ in runs])
        spec = pareto.specialists(matrix, maximize=maximize)
    full = np.zeros((len(algorithms), counts.shape[1]), dtype=np.int64)
    for row, name in zip(counts, order, strict=True):
        full[algorithms.index(str(name))] = row
    present = [algorithms.index(str(a)) for a in order]
    with domain_errors_as_problems(field):
        ranking = pareto.rank_algorithms(full[sorted(present)]) if len(present) > 1 else None
    warnings = [
        f"problem {problem!r}: {n} is the same for every run ({matrix[0, j]:g}), so it cannot "
        "separate the algorithms"
        + (" (is the reference point dominated by every front?)" if n == "hv" else "")
        for j, n in enumerate(names)
        if len(runs) > 1 and bool(np.all(matrix[:, j] == matrix[0, j]))
    ]
    out = {
        "problem": problem,
        "warnings": warnings,
        "runs": [
            {"algorithm": a, "run": r, "level": int(lv)}
            for (a, r), lv in zip(runs, levels, strict=True)
        ],
        "counts": full,
        "ranking": None
        if ranking is None
        else {
            "algorithms": [algorithms[i] for i in sorted(present)],
            "scores": ranking.scores,
            "ranks": ranking.ranks,
        },
        "specialists": [
            {
                "algorithm": a,
                "run": r,
                "indicators": [n for n, s in zip(names, row, strict=True) if s],
            }
            for (a, r), row in zip(runs, spec, strict=True)
            if row.any()
        ],
    }
    return out, full


def create(
    sm: sessionmaker[Session],
    settings: Settings,
    body: ParetoRankingCreate,
    *,
    control: WorkControl = NO_CONTROL,
) -> Stored:
    """Rank the algorithms per problem and overall; store the answer under an id.

    ``control`` is checked between fronts and between problems (progress: problems done).

    Raises
    ------
    app.errors.InvalidInput
        Malformed rows, duplicate or missing indicator values, fewer than 2 algorithms, unknown
        indicators in ``orientation``, too many rows or runs; the field is named.
    """
    rows, field, origin = _rows(body, settings, control)
    payload = {
        "options": body.model_dump(mode="json", exclude={"scores", "csv", "fronts"}),
        "rows": [list(r) for r in rows],
    }
    digest = canonical_sha256(payload)
    rid = "p" + digest[:23]
    with session_scope(sm) as session:
        stored = ParetoRankingRepository(session).get(rid)
        if stored is not None:
            return Stored(stored.result, False)
    problems, algorithms, names = _group(rows, field, origin)
    for problem, cells in problems.items():
        absent = [a for a in algorithms if not any(key[0] == a for key in cells)]
        if absent:
            raise InvalidInput(
                f"problem {problem!r} has no run of {absent[:5]}; the counts are added level by "
                "level over problems, so every algorithm needs runs on every problem",
                field=field,
            )
    maximize = _orientation(body, names)
    per_problem, matrices = [], []
    for done, (problem, cells) in enumerate(problems.items()):
        control.check(done, len(problems))
        out, counts = _rank_problem(problem, cells, names, maximize, body, algorithms, field)
        per_problem.append(out)
        matrices.append(counts)
    with domain_errors_as_problems(field):
        summed = pareto.sum_counts(matrices)
        overall = pareto.rank_algorithms(summed)
    result = jsonable(
        {
            "id": rid,
            "location": f"/v1/pareto-rankings/{rid}",
            "algorithms": algorithms,
            "indicators": names,
            "orientation": {n: "max" if m else "min" for n, m in zip(names, maximize, strict=True)},
            "dominance": body.dominance,
            "tie_rule": "tied scores share the average of the ranks they span (midranks)",
            "problems": per_problem,
            "overall": {"counts": summed, "scores": overall.scores, "ranks": overall.ranks},
        }
    )
    result["provenance"] = provenance(payload, ranking_id=rid)
    with session_scope(sm) as session:
        ParetoRankingRepository(session).add(rid=rid, digest=digest, request=payload, result=result)
    return Stored(result, True)


def get(sm: sessionmaker[Session], rid: str) -> dict[str, Any]:
    """A stored ranking.

    Raises
    ------
    app.errors.NotFound
        No ranking has this id.
    """
    with session_scope(sm) as session:
        stored = ParetoRankingRepository(session).get(rid)
        if stored is None:
            raise NotFound(f"no Pareto ranking with id {rid[:40]!r}", field="ranking_id")
        return stored.result
