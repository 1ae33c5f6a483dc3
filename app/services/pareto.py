"""Use cases of ``/v1/pareto-rankings`` and ``/v1/indicators`` (Ibrahim et al. 2024; SPEC §7).

Rows of indicator values (JSON or CSV), or runs' final fronts turned into indicator values,
are grouped by problem into runs × indicators matrices; each problem's runs are sorted into
non-dominated levels, counted per algorithm and level, and ranked by the four rules and their
average; the count matrices are summed level by level over problems for the overall ranking.
"""

from __future__ import annotations

import csv
import io
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain import indicators as indicators_domain
from app.domain import pareto
from app.errors import InvalidInput, NotFound
from app.repositories.pareto import ParetoRankingRepository
from app.schemas.pareto import IndicatorRequest, ParetoRankingCreate
from app.services.errors import domain_errors_as_problems
from app.services.provenance import canonical_sha256, provenance
from app.services.serialize import jsonable

CSV_COLUMNS = ("problem", "algorithm", "run", "indicator", "value")
#: Runs per problem: non-dominated sorting is fast, the epsilon variant is O(n²).
MAX_RUNS = {"pareto": 100_000, "epsilon": 5_000}

Row = tuple[str, str, int, str, float]


def indicators(body: IndicatorRequest) -> dict[str, Any]:
    """Quality indicators of one front (every setting echoed)."""
    with domain_errors_as_problems("front"):
        res = indicators_domain.compute_indicators(
            body.front,
            reference_front=body.reference_front,
            reference_point=body.reference_point,
            indicators=tuple(body.indicators),
            p=body.p,
        )
    return {
        "values": jsonable(res.values),
        "settings": jsonable(res.settings),
        "provenance": provenance(body.model_dump(mode="json")),
    }


def _csv_rows(text: str, max_rows: int) -> list[Row]:
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff")))
    header = [h.strip().lower() for h in next(reader, [])]
    if sorted(header) != sorted(CSV_COLUMNS):
        raise InvalidInput(
            f"csv header must name the columns {', '.join(CSV_COLUMNS)}", field="csv"
        )
    pos = [header.index(c) for c in CSV_COLUMNS]
    rows: list[Row] = []
    for line, fields in enumerate(reader, start=2):
        if not fields or all(not f.strip() for f in fields):
            continue
        if len(fields) != len(CSV_COLUMNS) or len(rows) >= max_rows:
            raise InvalidInput(
                f"csv line {line}: expected {len(CSV_COLUMNS)} fields (at most {max_rows} rows)",
                field="csv",
            )
        p, a, r, i, v = (fields[k].strip() for k in pos)
        try:
            run, value = int(r), float(v)
        except ValueError:
            raise InvalidInput(
                f"csv line {line}: run or value is not a number", field="csv"
            ) from None
        if not np.isfinite(value) or not (p and a and i) or "_" in v:
            raise InvalidInput(f"csv line {line}: empty name or non-finite value", field="csv")
        rows.append((p, a, run, i, value))
    if not rows:
        raise InvalidInput("csv has no rows", field="csv")
    return rows


def _front_rows(body: ParetoRankingCreate) -> list[Row]:
    assert body.fronts is not None
    refs = body.references or {}
    rows: list[Row] = []
    for n, run in enumerate(body.fronts):
        ref = refs.get(run.problem)
        with domain_errors_as_problems(f"fronts.{n}.front"):
            res = indicators_domain.compute_indicators(
                run.front,
                reference_front=None if ref is None else ref.reference_front,
                reference_point=None if ref is None else ref.reference_point,
                indicators=tuple(body.indicators),
            )
        rows += [(run.problem, run.algorithm, run.run, i, v) for i, v in res.values.items()]
    return rows


def _rows(body: ParetoRankingCreate, settings: Settings) -> tuple[list[Row], str]:
    given = [name for name in ("scores", "csv", "fronts") if getattr(body, name) is not None]
    if len(given) != 1:
        raise InvalidInput("give exactly one of scores, csv and fronts", field="scores")
    field = given[0]
    if field == "csv":
        return _csv_rows(body.csv or "", settings.max_result_rows), field
    items = getattr(body, field)
    if len(items) > settings.max_result_rows:
        raise InvalidInput(f"at most {settings.max_result_rows} rows", field=field)
    if field == "fronts":
        return _front_rows(body), field
    return [(r.problem, r.algorithm, r.run, r.indicator, r.value) for r in body.scores or []], field


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


def _group(rows: list[Row], field: str) -> tuple[dict, list[str], list[str]]:
    problems: dict[str, dict[tuple[str, int], dict[str, float]]] = {}
    algorithms: dict[str, None] = {}
    names: dict[str, None] = {}
    for pos, (p, a, r, i, v) in enumerate(rows):
        cell = problems.setdefault(p, {}).setdefault((a, r), {})
        if i in cell:
            raise InvalidInput(
                f"duplicate value of indicator {i!r} for run {r} of {a!r} on {p!r} (row {pos})",
                field=f"{field}.{pos}" if field != "csv" else field,
            )
        cell[i] = v
        algorithms.setdefault(a)
        names.setdefault(i)
    if len(algorithms) < 2:
        raise InvalidInput("a ranking needs at least 2 algorithms", field=field)
    return problems, list(algorithms), list(names)


def _rank_problem(
    problem: str,
    cells: dict,
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
        full[algorithms.index(name)] = row
    present = [algorithms.index(a) for a in order]
    with domain_errors_as_problems(field):
        ranking = pareto.rank_algorithms(full[sorted(present)]) if len(present) > 1 else None
    out = {
        "problem": problem,
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
    sm: sessionmaker[Session], settings: Settings, body: ParetoRankingCreate
) -> tuple[dict[str, Any], bool]:
    """Rank the algorithms per problem and overall; store the answer under an id.

    Raises
    ------
    app.errors.InvalidInput
        Malformed rows, duplicate or missing indicator values, fewer than 2 algorithms, unknown
        indicators in ``orientation``, too many rows or runs; the field is named.
    """
    rows, field = _rows(body, settings)
    payload = {
        "options": body.model_dump(mode="json", exclude={"scores", "csv", "fronts"}),
        "rows": [list(r) for r in rows],
    }
    digest = canonical_sha256(payload)
    rid = "p" + digest[:23]
    with session_scope(sm) as session:
        stored = ParetoRankingRepository(session).get(rid)
        if stored is not None:
            return stored.result, False
    problems, algorithms, names = _group(rows, field)
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
    for problem, cells in problems.items():
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
    return result, True


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
