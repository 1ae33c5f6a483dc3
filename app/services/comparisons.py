"""Use case of ``/v1/comparisons``: relative ranks, absolute ranks and the NIIA report.

Flow: rows (JSON or CSV) → cells of runs → per-cell reduction → declared missing policy →
relative analysis (Friedman family, post-hoc, cliques, Bradley–Terry) → absolute analysis
(every cell's absolute rank from the problem's table, when every problem is a hosted function)
→ NIIA report (which pairwise conclusions flip between the full set and each subset) → stored
under an id derived from the normalized request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app import errors
from app.config import Settings
from app.db import session_scope
from app.domain import missing as missing_policy
from app.domain import niia, paired, ranktests
from app.domain.ranking import rank_rows
from app.repositories.comparisons import ComparisonRepository
from app.schemas.comparisons import ComparisonCreate
from app.schemas.ranks import Awaited, RankRequest
from app.services import results_input, tables
from app.services.cd_diagram import cd_diagram_svg
from app.services.comparison_answers import CellWarning, grouped_warnings, summary
from app.services.comparison_archive import archived_rows
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.provenance import canonical_sha256, provenance
from app.services.ranks import numerical, rank_values_warned
from app.services.serialize import jsonable
from app.services.stattests import named_bradley_terry, named_posthoc, value_based

#: Settings that change a comparison's answer (its tests, its default tables' specs, its NIIA
#: report): part of its identity, so a changed deployment never serves a stale comparison.
RESULT_SETTINGS = (
    "wilcoxon_exact_max_n",
    "table_default_log2n",
    "table_k_exact",
    "table_n_knots",
    "max_niia_default_pairs",
)

#: Post-hoc family → the adjustment of pairwise Wilcoxon p-values on absolute ranks.
ABSOLUTE_ADJUSTMENT = {
    "nemenyi": "holm",
    "shaffer": "shaffer",
    "holm": "holm",
    "hochberg": "hochberg",
    "hommel": "hommel",
    "finner": "finner",
    "bonferroni-dunn": "bonferroni",
    "li": "li",
}
CONTROL_METHODS = ("bonferroni-dunn", "li")
_VALUES_INDEX = re.compile(r"values\[(\d+)\]")
_REQUEST_FIELDS = frozenset(ComparisonCreate.model_fields)


def _problems(default_field: str) -> AbstractContextManager[None]:
    """Domain errors as problems naming only fields of ``ComparisonCreate`` (else the default)."""
    return domain_errors_as_problems(default_field, request_fields=_REQUEST_FIELDS)


def _data_field(body: ComparisonCreate) -> str:
    """The request field that holds the results: ``csv`` or ``results``."""
    return "csv" if body.csv is not None else "results"


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
    with _problems("posthoc"):
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
    with _problems(_data_field(body)):
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
        "posthoc": named_posthoc(post, algorithms),
        "bradley_terry": named_bradley_terry(bt, algorithms),
    }
    return out, post


def _relative_analyse(
    body: ComparisonCreate, control: int | None
) -> Callable[[np.ndarray, list[int]], niia.Analysis]:
    def analyse(sub: np.ndarray, members: list[int]) -> niia.Analysis:
        sub_control = members.index(control) if control in members else None
        if control is not None and sub_control is None:
            avg = rank_rows(sub, rtol=body.rtol).mean(axis=0)
            return niia.Analysis(avg, np.full((len(members),) * 2, None, dtype=object))
        post = _posthoc(sub, body, sub_control)
        return niia.Analysis(np.asarray(post.average_ranks), _significance(post, len(members)))

    return analyse


# ---------------------------------------------------------------------------------------------
# absolute ranks


@dataclass
class _AbsoluteInputs:
    sm: sessionmaker[Session]
    settings: Settings
    dispatcher: Any
    may_queue_builds: bool


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
    ctx: _AbsoluteInputs,
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
        req = RankRequest(
            function_id=problem if table_id is None else None,
            table_id=table_id,
            values=[float(v) for v in values[cols]],
            values_are=body.values_are,
            budget=body.budget,
            runs=r,
            aggregate=aggregate,
            regions=body.regions if table_id is None else "auto",
        )
        try:
            res, warnings = rank_values_warned(
                ctx.sm, ctx.settings, ctx.dispatcher, req, may_queue_builds=ctx.may_queue_builds
            )
        except errors.AppError as exc:
            if exc.field is not None and exc.field.split(".")[0] not in _REQUEST_FIELDS:
                # runs, values, ...: the comparison's cells come from its rows (or value_runs)
                runs = exc.field == "runs" and body.value_runs is not None
                exc.field = "value_runs" if runs else _data_field(body)
            raise
        for col, item in zip(cols, res["results"], strict=True):
            out.log10_v[col] = -np.inf if item["log10_v"] is None else item["log10_v"]
            out.method[col] = item["method"]
        out.source = res["source"]
        if "awaiting" in res:
            out.awaiting = Awaited.model_validate(res["awaiting"])

        def named(m: re.Match[str], cols: np.ndarray = cols) -> str:
            return f"algorithm {algorithms[int(cols[int(m.group(1))])]!r}"

        out.warnings += [
            CellWarning(w.general or f"runs = {r}: {_VALUES_INDEX.sub(named, w.message)}", problem)
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


def _absolute_matrix(
    ctx: _AbsoluteInputs,
    body: ComparisonCreate,
    problems: list[str],
    matrix: np.ndarray,
    n_runs: np.ndarray,
    algorithms: tuple[str, ...],
) -> tuple[list[_RankedProblem], list[dict[str, Any]]]:
    ranked: list[_RankedProblem] = []
    pending: list[dict[str, Any]] = []
    for i, problem in enumerate(problems):
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


def _pairwise_absolute(
    v: np.ndarray,
    body: ComparisonCreate,
    control: int | None,
    settings: Settings,
    names: Sequence[str] | None = None,
) -> tuple[list[dict[str, Any]], np.ndarray]:
    """Wilcoxon and sign tests on the absolute ranks of every pair (or every pair with the
    control), adjusted by the post-hoc's family; the significance matrix, and with ``names``
    the tests themselves, each named ``a``, ``b`` beside ``i``, ``j`` (the NIIA report needs
    only the significance)."""
    k = v.shape[1]
    pairs = [
        (i, j) for i in range(k) for j in range(i + 1, k) if control is None or control in (i, j)
    ]
    tests = []
    with _problems(_data_field(body)):
        for i, j in pairs:
            w = paired.wilcoxon_signed_rank(
                v[:, i],
                v[:, j],
                zero_method=body.zero_method,
                exact_max_n=settings.wilcoxon_exact_max_n,
            )
            s = paired.sign_test(v[:, i], v[:, j])
            tests.append((i, j, w, s))
        p = np.array([t[2].p_value for t in tests], dtype=np.float64)
        log_p = np.array([t[2].log10_p_value for t in tests], dtype=np.float64)
        adjusted = ranktests.adjusted_family(p, log_p, method=ABSOLUTE_ADJUSTMENT[body.posthoc])
    sig = np.full((k, k), None, dtype=object)
    out = []
    for (i, j, w, s), p_adj, log_adj in zip(tests, adjusted.p, adjusted.log10_p, strict=True):
        significant = bool(p_adj < body.alpha)
        sig[i, j] = sig[j, i] = significant
        if names is None:
            continue
        out.append(
            {
                "pair": [i, j],
                "i": i,
                "j": j,
                "a": names[i],
                "b": names[j],
                "wilcoxon": w,
                "sign_test": s,
                "p_adjusted": float(p_adj),
                "log10_p_adjusted": float(log_adj),
                "adjustment": ABSOLUTE_ADJUSTMENT[body.posthoc],
                "significant": significant,
            }
        )
    return out, sig


def _absolute(
    ctx: _AbsoluteInputs,
    body: ComparisonCreate,
    problems: list[str],
    matrix: np.ndarray,
    n_runs: np.ndarray,
    control: int | None,
    algorithms: tuple[str, ...],
) -> tuple[dict[str, Any], np.ndarray | None]:
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
    pairs, _ = _pairwise_absolute(v, body, control, ctx.settings, algorithms)
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
    }, v


def _absolute_analyse(
    body: ComparisonCreate, control: int | None, settings: Settings
) -> Callable[[np.ndarray, list[int]], niia.Analysis]:
    def analyse(sub: np.ndarray, members: list[int]) -> niia.Analysis:
        sub_control = members.index(control) if control in members else None
        if control is not None and sub_control is None:
            return niia.Analysis(sub.mean(axis=0), np.full((len(members),) * 2, None, object))
        _, sig = _pairwise_absolute(sub, body, sub_control, settings)
        return niia.Analysis(sub.mean(axis=0), sig)

    return analyse


# ---------------------------------------------------------------------------------------------
# NIIA


def _subsets(body: ComparisonCreate, algorithms: tuple[str, ...], settings: Settings) -> list:
    if body.niia_subsets is None:
        k = len(algorithms)
        return [[i, j] for i in range(k) for j in range(i + 1, k)]
    if len(body.niia_subsets) > settings.max_niia_subsets:
        raise errors.InvalidInput(
            f"at most {settings.max_niia_subsets} NIIA subsets", field="niia_subsets"
        )
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
    matrix: np.ndarray,
    subsets: list[list[int]],
    analyse: Callable[[np.ndarray, list[int]], niia.Analysis],
    algorithms: tuple[str, ...],
) -> dict[str, Any]:
    with _problems("niia_subsets"):
        _, reports = niia.niia_check(matrix, subsets, analyse)
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
    v: np.ndarray | None,
    absolute: dict[str, Any],
    body: ComparisonCreate,
    control: int | None,
    algorithms: tuple[str, ...],
    settings: Settings,
) -> dict[str, Any]:
    k = len(algorithms)
    if body.niia_subsets is None and k * (k - 1) // 2 > settings.max_niia_default_pairs:
        return {
            "status": "skipped",
            "reason": f"{k * (k - 1) // 2} pairs exceed max_niia_default_pairs = "
            f"{settings.max_niia_default_pairs}; name the subsets to check in niia_subsets",
        }
    subsets = _subsets(body, algorithms, settings)
    rel = _niia_side(matrix, subsets, _relative_analyse(body, control), algorithms)
    out: dict[str, Any] = {
        "status": "complete",
        "subsets": "each pair alone" if body.niia_subsets is None else "as requested",
        "conclusion": "order by average (rank or absolute rank) and, separately, significance "
        f"at alpha = {body.alpha} under the post-hoc family",
        "problems": "held fixed: every subset is analysed on the full analysis's problems "
        "(after the missing policy), so only the set of algorithms changes",
        "relative": rel,
    }
    if v is None:
        out["absolute"] = {k: absolute[k] for k in ("status", "reason") if k in absolute}
    else:
        out["absolute"] = _niia_side(
            v, subsets, _absolute_analyse(body, control, settings), algorithms
        )
    return out


# ---------------------------------------------------------------------------------------------
# the use cases


def _analyse(
    body: ComparisonCreate,
    rows: list[results_input.Row],
    field: str,
    ctx: _AbsoluteInputs,
) -> tuple[dict[str, Any], list[str]]:
    settings = ctx.settings
    table = results_input.group_rows(rows, settings, field=field)
    reduced = results_input.reduce_runs(table, body.reduction, policy=body.missing, field=field)
    with _problems("missing"):
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
    relative, post = _relative(matrix, body, control, table.algorithms)
    n_runs = _effective_runs(body, reduced.n_runs[kept], problems, table.algorithms)
    absolute, v = _absolute(ctx, body, problems, matrix, n_runs, control, table.algorithms)
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
        "niia": _niia(matrix, v, absolute, body, control, table.algorithms, settings),
        "warnings": warnings,
    }
    return jsonable(result), [str(p["problem"]) for p in absolute.get("pending", [])]


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
) -> tuple[dict[str, Any], bool]:
    """Analyse a results table and store the answer under an id.

    ``view`` (``full`` or ``summary``, :func:`summary`) shapes the answer only: the stored
    comparison and its id are the same for both.

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
            return _read(cid, stored.status, stored.result, view), False
    ctx = _AbsoluteInputs(sm, settings, dispatcher, may_queue_builds)
    result, pending = _analyse(body, rows, field, ctx)
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
    return _read(cid, status, result, view), True


def _read(cid: str, status: str, result: dict[str, Any], view: str = "full") -> dict[str, Any]:
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


def cd_diagram(sm: sessionmaker[Session], cid: str, *, fmt: str = "svg") -> bytes:
    """The CD diagram of a stored comparison, drawn from its post-hoc cliques.

    Raises
    ------
    app.errors.NotFound
        No comparison has this id.
    """
    comp = get_comparison(sm, cid)
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
    )
