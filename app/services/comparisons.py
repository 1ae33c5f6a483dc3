"""Use case of ``/v1/comparisons``: relative ranks, absolute ranks and the NIIA report.

Flow: rows (JSON or CSV) → cells of runs → per-cell reduction → declared missing policy →
relative analysis (Friedman family, post-hoc, cliques, Bradley–Terry) → absolute analysis
(every cell's absolute rank from the problem's table, when every problem is a hosted function)
→ NIIA report (which pairwise conclusions flip between the full set and each subset) → stored
under an id derived from the normalized request.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app import errors
from app.config import Settings
from app.db import session_scope
from app.domain import missing as missing_policy
from app.domain import niia, ranktests
from app.domain.cost import NO_CONTROL, CostEstimate, WorkControl
from app.domain.ranking import rank_rows
from app.repositories.comparisons import ComparisonRepository
from app.schemas.comparisons import ComparisonCreate
from app.services import costs, plots, results_input
from app.services._comparison_absolute import (
    MIXED_SCALES,
    AbsoluteInputs,
    AbsoluteTested,
    ProblemRegion,
    absolute_niia,
    absolute_ranks,
    check_given_tables,
    result_columns,
)
from app.services._comparison_common import (
    ABSOLUTE_ADJUSTMENT,
    CONTROL_METHODS,
    data_field,
    request_problems,
)
from app.services.cd_diagram import Axis, cd_diagram_svg
from app.services.comparison_answers import (
    CellWarning,
    compact,
    grouped_warnings,
    summary,
)
from app.services.comparison_archive import archived_rows
from app.services.comparison_pairs import FamilyColumns, int_column, stored_absolute_family
from app.services.provenance import canonical_sha256, provenance
from app.services.serialize import jsonable
from app.services.stattests import named_bradley_terry, named_posthoc, value_based
from app.services.stored import Stored
from app.services.table_cache import LadderCaches, TableCaches

__all__ = [
    "ABSOLUTE_ADJUSTMENT",
    "CONTROL_METHODS",
    "METHODS_VERSION",
    "MIXED_SCALES",
    "RESULT_SETTINGS",
    "ProblemRegion",
    "cd_diagram",
    "check_given_tables",
    "comparison_id",
    "create_comparison",
    "get_comparison",
    "location",
    "normalized_request",
]

#: Settings that change a comparison's answer (its tests, its default tables' specs, its NIIA
#: report): part of its identity, so a changed deployment never serves a stale comparison.
RESULT_SETTINGS = (
    "wilcoxon_exact_max_n",
    "table_default_log2n",
    "table_k_exact",
    "table_n_knots",
    "max_niia_default_pairs",
)


def comparison_id(request_sha256: str) -> str:
    """Stable id of a comparison: ``c`` + the first 23 hex digits of its request hash."""
    return "c" + request_sha256[:23]


def location(cid: str) -> str:
    """URL path of a stored comparison."""
    return f"/v1/comparisons/{cid}"


# ---------------------------------------------------------------------------------------------
# input


def _rows(body: ComparisonCreate, settings: Settings) -> tuple[list[results_input.Row], str]:
    if (body.results is None) == (body.csv is None):
        raise errors.InvalidInput("give exactly one of results and csv", field="results")
    if body.csv is not None:
        return results_input.parse_csv(body.csv, max_rows=settings.max_result_rows), "csv"
    assert body.results is not None
    if len(body.results) > settings.max_result_rows:
        raise errors.InvalidInput(
            f"at most {settings.max_result_rows} result rows", field="results"
        )
    return [(r.algorithm, r.problem, r.run, r.value) for r in body.results], "results"


METHODS_VERSION = 3
"""Bumped when the same request gets a different answer (2: absolute ranks of means over runs
and of even medians, nested regions; 3: names beside indices, warnings as objects with a count,
par-k cells ranked v = 1): a stored comparison is found by request hash, so a request answered
by older methods is computed anew under a new id."""


def _options(body: ComparisonCreate) -> dict[str, Any]:
    options = body.model_dump(mode="json", exclude={"results", "csv"})
    for absent in ("value_runs", "result_sets", "tables"):  # old requests keep their hash
        if options.get(absent) is None:
            options.pop(absent, None)
    if options.get("cd_convention") == "standard":  # added later: the default keeps the hash
        options.pop("cd_convention")
    return options


def normalized_request(
    body: ComparisonCreate, settings: Settings, sm: sessionmaker[Session] | None = None
) -> tuple[dict[str, Any], list[results_input.Row], str]:
    """The request as hashed and stored: options + rows (CSV and JSON rows hash alike), the
    archived sets' rows (``result_sets``, read through ``sm``) after the request's own."""
    rows, field = _rows(body, settings)
    if body.result_sets:
        assert sm is not None
        rows += archived_rows(sm, body, rows)
        if len(rows) > settings.max_result_rows:
            raise errors.InvalidInput(
                f"at most {settings.max_result_rows} result rows, the archived sets' included",
                field="result_sets",
            )
    payload = {
        "options": _options(body),
        "rows": [list(r) for r in rows],
        "settings": {k: getattr(settings, k) for k in RESULT_SETTINGS},
        "methods_version": METHODS_VERSION,
    }
    return payload, rows, field


# ---------------------------------------------------------------------------------------------
# relative ranks


def _control_index(body: ComparisonCreate, algorithms: tuple[str, ...]) -> int | None:
    if body.control is None:
        if body.posthoc in CONTROL_METHODS:
            raise errors.InvalidInput(
                f"posthoc {body.posthoc!r} compares against a control: name it in control",
                field="control",
            )
        return None
    if body.control not in algorithms:
        raise errors.InvalidInput(
            f"control {body.control!r} is not one of the algorithms", field="control"
        )
    return algorithms.index(body.control)


def _significance(result: ranktests.PosthocResult, k: int) -> np.ndarray:
    sig = np.full((k, k), None, dtype=object)
    for pair in result.pairs:
        sig[pair.i, pair.j] = sig[pair.j, pair.i] = bool(pair.significant)
    return sig


def _posthoc(matrix: np.ndarray, body: ComparisonCreate, control: int | None) -> Any:
    with request_problems("posthoc"):
        return ranktests.posthoc(
            matrix,
            method=body.posthoc,
            alpha=body.alpha,
            control=control,
            rtol=body.rtol,
            cd_convention=body.cd_convention,
        )


def _relative(
    matrix: np.ndarray, body: ComparisonCreate, control: int | None, algorithms: tuple[str, ...]
) -> tuple[dict[str, Any], ranktests.PosthocResult]:
    rtol = body.rtol
    with request_problems(data_field(body)):
        ranks = rank_rows(matrix, rtol=rtol)
        fried = ranktests.friedman(matrix, rtol=rtol)
        aligned = value_based(ranktests.friedman_aligned_ranks, matrix, rtol)
        quade = value_based(ranktests.quade, matrix, rtol)
        bt = ranktests.bradley_terry(ranktests.pairwise_wins(matrix, rtol=rtol))
    post = _posthoc(matrix, body, control)
    out = {
        "ranks": ranks,
        "average_ranks": fried.average_ranks,
        "friedman": fried,
        "aligned_ranks": aligned,
        "quade": quade,
        "posthoc": _posthoc_answer(post, algorithms),
        "bradley_terry": named_bradley_terry(bt, algorithms),
    }
    return out, post


def _posthoc_answer(post: ranktests.PosthocResult, names: tuple[str, ...]) -> dict[str, Any]:
    """The post-hoc family as :func:`app.services.stattests.named_posthoc` gives it, its pairs
    as columns (:class:`app.services.comparison_pairs.FamilyColumns`: one list per field of
    :class:`app.domain.ranktests.PairComparison`; compacted with the answer, :func:`compact`)."""
    out = named_posthoc(dataclasses.replace(post, pair_columns=ranktests.PairColumns.none()), names)
    columns = result_columns(ranktests.PairComparison, post.pairs)
    i, j = columns.pop("i"), columns.pop("j")
    out["pairs"] = FamilyColumns(int_column(i), int_column(j), columns)
    return out


def _relative_niia(
    matrix: np.ndarray, body: ComparisonCreate, control: int | None, post: ranktests.PosthocResult
) -> tuple[
    niia.Analysis,
    Callable[[list[int]], niia.Analysis],
    Callable[[np.ndarray, np.ndarray], niia.PairAnalyses],
]:
    """The NIIA report's analyses of the relative ranks (:func:`app.domain.niia.niia_report`):
    the full set's (the comparison's own post-hoc ``post``), any subset's (its own post-hoc),
    and those of pairs alone, all at once (:func:`app.domain.ranktests.posthoc_pairs_alone`)."""
    k = matrix.shape[1]
    full = niia.Analysis(np.asarray(post.average_ranks), _significance(post, k))

    def analyse(members: list[int]) -> niia.Analysis:
        sub = matrix[:, members]
        sub_control = members.index(control) if control in members else None
        if control is not None and sub_control is None:
            avg = rank_rows(sub, rtol=body.rtol).mean(axis=0)
            return niia.Analysis(avg, np.full((len(members),) * 2, None, dtype=object))
        post = _posthoc(sub, body, sub_control)
        return niia.Analysis(np.asarray(post.average_ranks), _significance(post, len(members)))

    def analyse_pairs(i: np.ndarray, j: np.ndarray) -> niia.PairAnalyses:
        with request_problems("posthoc"):
            res = ranktests.posthoc_pairs_alone(
                matrix,
                i,
                j,
                method=body.posthoc,
                alpha=body.alpha,
                control=control,
                rtol=body.rtol,
                cd_convention=body.cd_convention,
            )
        return niia.PairAnalyses(res.average_i, res.average_j, res.significant)

    return full, analyse, analyse_pairs


# ---------------------------------------------------------------------------------------------
# NIIA


def _check_subset_count(body: ComparisonCreate, settings: Settings) -> None:
    """At most ``max_niia_subsets`` named subsets (checked before the cost admission too, so
    an over-long list is a 422 at once, not a job that fails with it)."""
    if body.niia_subsets is not None and len(body.niia_subsets) > settings.max_niia_subsets:
        raise errors.InvalidInput(
            f"at most {settings.max_niia_subsets} NIIA subsets", field="niia_subsets"
        )


def _subsets(
    body: ComparisonCreate, algorithms: tuple[str, ...], settings: Settings
) -> list[list[int]]:
    if body.niia_subsets is None:
        k = len(algorithms)
        return [[i, j] for i in range(k) for j in range(i + 1, k)]
    _check_subset_count(body, settings)
    out = []
    for s, subset in enumerate(body.niia_subsets):
        unknown = [a for a in subset if a not in algorithms]
        if unknown:
            raise errors.InvalidInput(
                f"subset {s} names unknown algorithm(s) {unknown[:5]}", field=f"niia_subsets.{s}"
            )
        out.append([algorithms.index(a) for a in subset])
    return out


def _niia_side(
    subsets: list[list[int]],
    analyses: tuple[
        niia.Analysis,
        Callable[[list[int]], niia.Analysis],
        Callable[[np.ndarray, np.ndarray], niia.PairAnalyses],
    ],
    algorithms: tuple[str, ...],
    control: WorkControl = NO_CONTROL,
) -> dict[str, Any]:
    full, analyse, analyse_pairs = analyses
    done = [0]

    def checked(members: list[int]) -> niia.Analysis:
        control.check(done[0], len(subsets))
        done[0] += 1
        return analyse(members)

    with request_problems("niia_subsets"):
        _, reports = niia.niia_report(full, subsets, checked, analyse_pairs)
    named = [
        {
            "subset": [algorithms[i] for i in r.members],
            "pairs_compared": r.pairs_compared,
            "flips": [
                {
                    "pair": [algorithms[f.pair[0]], algorithms[f.pair[1]]],
                    "kinds": list(f.kinds),
                    "full": f.full,
                    "subset": f.subset,
                }
                for f in r.flips
            ],
        }
        for r in reports
    ]
    flipped = sorted(
        {(algorithms[f.pair[0]], algorithms[f.pair[1]]) for r in reports for f in r.flips}
    )
    return {"subsets": named, "flipped_pairs": [list(p) for p in flipped]}


def _niia(
    matrix: np.ndarray,
    post: ranktests.PosthocResult,
    tested: AbsoluteTested | None,
    absolute: dict[str, Any],
    body: ComparisonCreate,
    control: int | None,
    algorithms: tuple[str, ...],
    settings: Settings,
    work_control: WorkControl = NO_CONTROL,
) -> dict[str, Any]:
    k = len(algorithms)
    if body.niia_subsets is None and k * (k - 1) // 2 > settings.max_niia_default_pairs:
        return {
            "status": "skipped",
            "reason": f"{k * (k - 1) // 2} pairs exceed max_niia_default_pairs = "
            f"{settings.max_niia_default_pairs}; name the subsets to check in niia_subsets",
        }
    subsets = _subsets(body, algorithms, settings)
    rel = _niia_side(
        subsets, _relative_niia(matrix, body, control, post), algorithms, work_control
    )
    out: dict[str, Any] = {
        "status": "complete",
        "subsets": "each pair alone" if body.niia_subsets is None else "as requested",
        "conclusion": "order by average (rank or absolute rank) and, separately, significance "
        f"at alpha = {body.alpha} under the post-hoc family",
        "problems": "held fixed: every subset is analysed on the full analysis's problems "
        "(after the missing policy), so only the set of algorithms changes",
        "relative": rel,
    }
    if tested is None:
        out["absolute"] = {k: absolute[k] for k in ("status", "reason") if k in absolute}
    else:
        out["absolute"] = _niia_side(
            subsets, absolute_niia(tested, body, control, settings), algorithms, work_control
        )
    return out


# ---------------------------------------------------------------------------------------------
# the use cases


def _analyse(
    body: ComparisonCreate,
    rows: list[results_input.Row],
    field: str,
    ctx: AbsoluteInputs,
) -> tuple[dict[str, Any], list[str]]:
    settings = ctx.settings
    table = results_input.group_rows(rows, settings, field=field)
    reduced = results_input.reduce_runs(table, body.reduction, policy=body.missing, field=field)
    with request_problems("missing"):
        matrix, kept, report = missing_policy.apply_matrix_policy(
            reduced.matrix, policy=body.missing, par_k=body.par_k, problems=table.problems
        )
    check_given_tables(ctx.sm, body, table.problems)
    problems = [p for p, keep in zip(table.problems, kept, strict=True) if keep]
    if len(problems) < 2:
        raise errors.NotApplicable(
            f"{len(problems)} problem(s) left after dropping problems with missing cells; "
            "a comparison needs at least 2",
            field="missing",
        )
    control = _control_index(body, table.algorithms)
    ctx.control.check()
    relative, post = _relative(matrix, body, control, table.algorithms)
    ctx.control.check()
    n_runs = _effective_runs(body, reduced.n_runs[kept], problems, table.algorithms)
    absolute, tested = absolute_ranks(
        ctx, body, problems, matrix, n_runs, control, table.algorithms
    )
    cell_warnings = _warnings(body, reduced, report, table.problems)
    if post.low_power is not None:
        cell_warnings.append(CellWarning(post.low_power.message))
    warnings = jsonable(grouped_warnings(cell_warnings))
    result = {
        "algorithms": list(table.algorithms),
        "problems": problems,
        "options": _options(body),
        "missing": {
            "policy": report.policy,
            "missing_runs": reduced.missing_runs,
            "missing_cells": report.n_missing,
            "dropped_problems": [table.problems[i] for i in report.dropped],
            "filled_cells": report.filled,
            "par_k": report.par_k,
        },
        "n_runs": n_runs,
        "matrix": matrix,
        "relative": relative,
        "absolute": absolute,
        "niia": _niia(
            matrix, post, tested, absolute, body, control, table.algorithms, settings, ctx.control
        ),
        "warnings": warnings,
    }
    return _jsonable_around_pairs(result), [str(p["problem"]) for p in absolute.get("pending", [])]


def _jsonable_around_pairs(result: dict[str, Any]) -> dict[str, Any]:
    """``jsonable(result)`` without walking the pairwise families: they stay
    :class:`app.services.comparison_pairs.FamilyColumns` (of JSON-ready columns:
    :func:`app.services._comparison_absolute.result_columns`; 19,900 pairs at k = 200) for
    :func:`compact`, which gives the stored JSON."""
    posthoc = result["relative"]["posthoc"]
    absolute = result["absolute"]
    pairs, pairwise = posthoc["pairs"], absolute.get("pairwise")
    posthoc["pairs"] = None
    if pairwise is not None:
        absolute["pairwise"] = None
    out: dict[str, Any] = jsonable(result)
    posthoc["pairs"] = out["relative"]["posthoc"]["pairs"] = pairs
    if pairwise is not None:
        absolute["pairwise"] = out["absolute"]["pairwise"] = pairwise
    return out


def _effective_runs(
    body: ComparisonCreate,
    n_runs: np.ndarray,
    problems: list[str],
    algorithms: tuple[str, ...],
) -> np.ndarray:
    """Runs behind each cell: as sent, or ``value_runs`` for already-reduced (published) values.

    Raises
    ------
    app.errors.InvalidInput
        ``value_runs`` with a cell that has more than one value (``field="value_runs"``).
    """
    if body.value_runs is None:
        return n_runs
    if bool((n_runs > 1).any()):
        i, j = (int(x) for x in np.argwhere(n_runs > 1)[0])
        raise errors.InvalidInput(
            f"value_runs = {body.value_runs} says every value already is the {body.reduction} "
            f"of that many runs, so each cell must hold one value; algorithm "
            f"{algorithms[j]!r} on problem {problems[i]!r} has {int(n_runs[i, j])}",
            field="value_runs",
        )
    return np.where(n_runs > 0, body.value_runs, 0)


def _warnings(
    body: ComparisonCreate,
    reduced: results_input.Reduced,
    report: missing_policy.MissingReport,
    problems: tuple[str, ...],
) -> list[CellWarning]:
    out = [
        CellWarning("problems with missing cells were dropped (drop-problem)", problems[i])
        for i in report.dropped
    ]
    runs = reduced.n_runs[reduced.n_runs > 0]
    if runs.size and runs.min() != runs.max():
        out.append(
            CellWarning(
                f"cells have different numbers of runs ({int(runs.min())} to {int(runs.max())}); "
                f"each cell's {body.reduction} uses its own runs"
            )
        )
    return out


def create_comparison(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    body: ComparisonCreate,
    *,
    may_queue_builds: bool,
    view: str = "full",
    cache: TableCaches,
    ladder_cache: LadderCaches,
    admission: Callable[[CostEstimate], object] | None = None,
    control: WorkControl = NO_CONTROL,
) -> Stored:
    """Analyse a results table and store the answer under an id.

    ``admission`` is given the work's estimate (:func:`app.services.costs.comparison_cost`,
    from the parsed rows) before the analysis starts, and refuses by raising
    (:class:`app.domain.cost.CostTooHigh`); a stored answer is returned without it. ``control``
    is checked between the analysis's steps: problems ranked, NIIA subsets.

    ``view`` (``full`` or ``summary``, :func:`summary`) shapes the answer only: the stored
    comparison and its id are the same for both. ``cache`` and ``ladder_cache`` are the
    application's table and ladder caches (``app.state``), for the absolute ranks.

    Returns
    -------
    comparison : dict
        The body of :class:`app.schemas.comparisons.ComparisonRead`.
    created : bool
        Whether this call computed it (``False``: the identical request was answered before).

    Raises
    ------
    app.errors.InvalidInput
        Malformed rows or CSV, missing values under ``reject``, unknown control or subset
        names, invalid options, more rows, algorithms, problems, cells or subsets than the
        settings allow; the field is named.
    app.errors.NotApplicable
        Fewer than 2 problems left after the missing policy.
    """
    payload, rows, field = normalized_request(body, settings, sm)
    digest = canonical_sha256(payload)
    cid = comparison_id(digest)
    with session_scope(sm) as session:
        stored = ComparisonRepository(session).get(cid)
        if stored is not None and stored.status == "complete":
            return Stored(_read(cid, stored.status, stored.result, view), False)
    if admission is not None:
        _check_subset_count(body, settings)
        admission(
            costs.comparison_cost(
                body, costs.ComparisonShape.of_rows(rows, body.reduction), settings
            )
        )
    ctx = AbsoluteInputs(
        sm, settings, dispatcher, may_queue_builds, cache, ladder_cache, control
    )
    result, pending = _analyse(body, rows, field, ctx)
    result = compact(result)
    status = "partial" if pending else "complete"
    result["provenance"] = provenance(
        payload,
        comparison_id=cid,
        settings=payload["settings"],
        tables={
            p: {"table_id": s.get("table_id"), "spec": s.get("spec"), "kind": s.get("kind")}
            for p, s in (result["absolute"].get("tables") or {}).items()
        },
    )
    with session_scope(sm) as session:
        ComparisonRepository(session).save(
            comparison_id=cid,
            request_sha256=digest,
            status=status,
            request=payload,
            result=result,
        )
    return Stored(_read(cid, status, result, view), True)


def _read(cid: str, status: str, result: dict[str, Any], view: str = "full") -> dict[str, Any]:
    result = compact(result)  # stored before the compact pairs: converted
    full = {"id": cid, "location": location(cid), "status": status, "view": view, **result}
    return summary(full) if view == "summary" else full


def get_comparison(sm: sessionmaker[Session], cid: str, *, view: str = "full") -> dict[str, Any]:
    """A stored comparison (``view``: ``full`` or ``summary``, :func:`summary`).

    Raises
    ------
    app.errors.NotFound
        No comparison has this id.
    """
    with session_scope(sm) as session:
        stored = ComparisonRepository(session).get(cid)
        if stored is None:
            raise errors.NotFound(f"no comparison with id {cid[:40]!r}", field="comparison_id")
        return _read(cid, stored.status, stored.result, view)


def cd_diagram(
    sm: sessionmaker[Session],
    cid: str,
    *,
    fmt: str = "svg",
    options: plots.FigureOptions = plots.DEFAULT_OPTIONS,
    ranks: str = "relative",
) -> plots.Rendered:
    """The CD diagram of a stored comparison (``fmt`` and ``options`` as
    :func:`app.services.cd_diagram.cd_diagram_svg`): with ``ranks = "relative"`` the average
    Friedman ranks and the post-hoc's cliques; with ``"absolute"`` the mean ``log10 v`` and the
    cliques of the adjusted Wilcoxon tests on v (:func:`_absolute_cd`).

    Raises
    ------
    app.errors.NotFound
        No comparison has this id.
    app.errors.Conflict
        ``ranks = "absolute"`` and the comparison has no complete absolute ranks.
    """
    comp = get_comparison(sm, cid)
    if ranks == "absolute":
        return _absolute_cd(comp, fmt, options)
    post = comp["relative"]["posthoc"]
    cd = post.get("critical_difference")
    joins = (
        "the bar joins the control with the algorithms not significantly different from it"
        if post["comparison"] == "vs-control"
        else "bars join algorithms not significantly different"
    )
    convention = post.get("cd_convention", "standard")
    named = "" if convention == "standard" else ", CD of Jing & Liu (Table I: z at 1 − α/(2k))"
    title = (
        f"{post['procedure']} ({post['comparison']}), alpha = {post['alpha']}{named}, "
        f"N = {len(comp['problems'])} problems; {joins}"
    )
    return cd_diagram_svg(
        comp["algorithms"],
        [float(r) for r in comp["relative"]["average_ranks"]],
        post["cliques"],
        critical_difference=float(cd) if isinstance(cd, int | float) else None,
        title=title,
        fmt=fmt,
        control=post.get("control"),
        options=options,
    )


def _absolute_cd(comp: dict[str, Any], fmt: str, options: plots.FigureOptions) -> plots.Rendered:
    """The CD diagram over absolute ranks: the algorithms at their mean ``log10 v`` (lower is
    better) and bars joining those the comparison's adjusted Wilcoxon tests on v (its
    ``absolute.pairwise`` family) do not separate — :func:`app.domain.ranktests.rank_cliques`
    over that family, as the relative diagram's over the post-hoc (vs a control: the control
    with those not significantly different from it). Ranking the v of each problem would only
    repeat the Friedman ranks (v orders a problem's cells as their values do), so the absolute
    diagram shows what the relative one cannot: distances in decades of v. No critical
    difference exists for these tests; the note warns when N is too small for any pair to be
    significant (:func:`app.domain.ranktests.wilcoxon_floor_warning`)."""
    absolute = comp["absolute"]
    if absolute.get("status") != "complete":
        raise errors.Conflict(
            "this comparison has no complete absolute ranks (absolute status "
            f"{absolute.get('status')!r}); the CD diagram over them needs tables for every "
            "problem",
            field="ranks",
        )
    names = list(comp["algorithms"])
    k = len(names)
    columns = stored_absolute_family(absolute["pairwise"], k)
    sig = np.zeros((k, k), dtype=bool)
    sig[columns.i, columns.j] = sig[columns.j, columns.i] = [
        bool(x) for x in columns.fields["significant"]
    ]
    mean = [-np.inf if x is None else float(x) for x in absolute["mean_log10_v"]]
    control = comp["relative"]["posthoc"].get("control")
    if control is None:
        cliques = ranktests.rank_cliques(sig, mean)
    else:
        others = np.array([x for x in range(k) if x != control], dtype=np.intp)
        group = [control, *(int(x) for x in others[~sig[control, others]])]
        cliques = (tuple(sorted(group, key=lambda x: (mean[x], x))),) if len(group) > 1 else ()
    options_ = comp["options"]
    n = len(comp["problems"])
    warning = ranktests.wilcoxon_floor_warning(
        n, len(columns.i), alpha=float(options_["alpha"]), adjustment=columns.adjustment
    )
    joins = (
        "the bar joins the control with the algorithms not significantly different from it"
        if control is not None
        else "bars join algorithms not significantly different"
    )
    title = (
        f"absolute ranks: Wilcoxon signed-rank on v, {columns.adjustment}-adjusted, "
        f"alpha = {options_['alpha']}, N = {n} problems, budget = {absolute.get('budget')}; "
        f"{joins}"
    )
    drawn = cd_diagram_svg(
        names,
        mean,
        [list(c) for c in cliques],
        critical_difference=None,
        title=title,
        fmt=fmt,
        control=control,
        options=options,
        axis=Axis.decades(mean, "mean log10 v"),
        note="" if warning is None else warning.message,
    )
    return drawn if warning is None else dataclasses.replace(drawn, warnings=(warning.kind,))
