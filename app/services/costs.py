"""The cost model: CPU-seconds of a request, estimated from the validated request (issue 17).

Every estimator is a pure function of the request (and, for a comparison, of the shape of its
parsed rows) and returns an :class:`app.domain.cost.CostEstimate` whose terms name the
quantities it grows with; the routes pass it to :func:`app.domain.cost.admit`. The constants
below are CPU-seconds on one core of the reference machine, fitted by
``scripts/fit_cost_model.py`` (which prints them; docs/METHODS.md "Cost model" lists the
formulas and the numbers). ``tests/unit/test_cost_model.py`` checks the estimates against
measured CPU time within :data:`STATED_FACTOR`.

The estimates are of the worst case the request allows where it cannot be known beforehand:
a hypervolume is estimated as if every point were non-dominated, a comparison as if every
problem had absolute ranks, a mean of runs as if its value lay where the convolutions are
dearest (:data:`MEAN_AGGREGATE_SECONDS`). Work that depends on stored data (a plateau's atom
makes a mean's convolutions several times dearer) is bounded by the synchronous deadline
instead (:class:`app.domain.cost.WorkControl`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.config import Settings
from app.domain.absrank import check_transform
from app.domain.cost import CostEstimate, CostTerm
from app.errors import InvalidInput
from app.schemas.comparisons import ComparisonCreate
from app.schemas.pareto import IndicatorRequest, ParetoRankingCreate
from app.schemas.ranks import RankRequest

__all__ = [
    "STATED_FACTOR",
    "ComparisonShape",
    "comparison_cost",
    "hypervolume_seconds",
    "indicators_cost",
    "pareto_cost",
    "posthoc_cost",
    "posthoc_seconds",
    "rank_cost",
    "region_scan_chunks",
    "result_set_cost",
]

STATED_FACTOR = 4.0
"""Measured CPU time lies within this factor of the estimate (either way) for the
representative requests of ``tests/unit/test_cost_model.py``."""

# --- constants (scripts/fit_cost_model.py; CPU-seconds on one core) --------------------------

#: Exact hypervolume (moocore) of n non-dominated points in m objectives: A_m · n^E_m seconds,
#: fitted on points of the positive unit sphere (every point non-dominated: the worst case).
HV_POWER: dict[int, tuple[float, float]] = {
    2: (1.2e-7, 1.0),
    3: (2.2e-8, 1.3),
    4: (1.7e-8, 1.62),
    5: (3.6e-8, 1.86),
    6: (5.5e-9, 2.9),
    7: (5.3e-9, 3.52),
    8: (3.2e-10, 4.69),
    9: (3.9e-10, 5.17),
    10: (9.2e-10, 5.43),
}
#: Above 10 objectives the exponent grows by this much per objective (extrapolated: +0.5
#: from 8 to 9, +0.26 from 9 to 10).
HV_EXPONENT_PER_OBJECTIVE = 0.6
#: A bound for small fronts in any dimension: 2^n · n · m of these (measured: 17 s for 18
#: points in 20 objectives, 0.8 s for 14).
HV_SUBSET_SECONDS = 2.0e-7
HV_CALLS = 2
"""moocore.hypervolume calls per front: the value, and ``log10_hv`` (its own call)."""
#: Distance indicators (IGD, IGD+, GD, GD+, Δp): n · r · m; spacing: n² · m.
DISTANCE_SECONDS = 3.0e-9
FIXED_SECONDS = 2.0e-4
"""Per request: validation, the answer (a floor under every estimate)."""
COORDINATE_SECONDS = 2.0e-6
"""Per coordinate of a front or reference front: checks, the provenance's hash, the answer."""

#: Absolute ranks: per value looked up on a curve; per numerical aggregate: a mean of r runs
#: a + b · r + c · r³, a median of an even r a + b · r.
RANK_VALUE_SECONDS = 2.0e-6
MEAN_AGGREGATE_SECONDS = (2.2e-2, 5.0e-4, 7.6e-7)
"""The worst case measured, not a fit: a mean's convolutions refine until its error bound
holds, and the refinements depend on where the value lies on the curve (a value in the
transition of ``v`` from 1 to its tail, around log10 v ∈ [-10, -1], is the dearest). On
classic/sphere/d10 (``values_are = error``, regions auto and domain alike) one mean cost at
most 0.03-0.06 s at r = 16, 0.09-0.15 s at r = 64 and 5.4 s at r = 256, 9-12 s on a loaded
machine (warm ``process_time`` of the request; typical values 0.005-0.02 s, 0.02 s,
0.02-4 s): this envelope is 0.033, 0.25 and 12.9 s there, within 4× above each worst case
(tests/unit/test_cost_model.py). The estimate cannot see the curve, so it takes the worst
case."""
MEDIAN_AGGREGATE_SECONDS = (8.0e-4, 1.0e-6)
ORDER_STATISTIC_SECONDS = (2.0e-7, 2.5e-8)
"""An order statistic ``k`` of ``r`` runs (the best, worst, an odd median, ``order``): per value,
a + b · (r − k + 1) for each of its three logs (the value and the interval's ends): the
binomial tail's ``r − k + 1`` terms, summed in blocks (``ln_binom_sf``). Measured warm on an idle
core: 1.0e-8 s a term at r = 9999 (k = 1 and k = 5000), 1.4e-7 s a value at r = 2; b is 2.5x
the measured term."""
#: Sorting an inline sample: n log2 n of these.
SAMPLE_SECONDS = 1.0e-8

#: Post-hoc families of m pairs (all pairs: k(k − 1)/2; against a control: k − 1):
#: linear · m + quadratic · m² seconds, per method.
POSTHOC_SECONDS: dict[str, tuple[float, float]] = {
    "nemenyi": (2.8e-7, 0.0),
    "bonferroni-dunn": (2.8e-6, 0.0),
    "li": (2.8e-6, 0.0),
    "holm": (3.9e-7, 0.0),
    "hochberg": (3.5e-7, 0.0),
    "finner": (3.8e-7, 0.0),
    "shaffer": (4.7e-7, 0.0),
    "hommel": (1.4e-5, 2.8e-9),
}
POSTHOC_FIXED_SECONDS = 5.0e-4
"""Per post-hoc family: ranks, the omnibus test."""
#: Comparisons: per result row (parse, group, reduce, store), per cell and pair of the answer,
#: per cell ranked absolutely, per pair and problem of the absolute paired tests (Wilcoxon +
#: sign), per pair and problem of the default NIIA report (each pair alone, vectorised).
COMPARISON_FIXED_SECONDS = 0.05
"""Per comparison: provenance, the stored answer's transaction."""
ROW_SECONDS = 4.0e-6
CELL_SECONDS = 2.0e-5
"""Per cell (algorithm × problem) of the relative analysis and its answer."""
PAIR_SECONDS = 2.2e-5
"""Per pair of the post-hoc family in the answer (its columns, the stored JSON)."""
ABSOLUTE_CELL_SECONDS = 2.0e-5
ANSWER_PAIR_SECONDS = 5.0e-5
"""Per pair of ``POST /v1/tests/posthoc``'s answer (one JSON object per pair: 1 s at k = 200)."""
PAIR_PROBLEM_SECONDS = 1.5e-7
NIIA_PAIR_SECONDS = 4.0e-7
#: Pareto rankings: per indicator row; per problem, non-dominated sorting of N runs in m
#: indicators (N² · m of these, moocore.pareto_rank's worst case; epsilon: N² · m as well).
PARETO_ROW_SECONDS = 5.0e-6
PARETO_SORT_SECONDS = 2.0e-9


# --- hypervolume and indicators --------------------------------------------------------------


def hypervolume_seconds(n: int, m: int) -> float:
    """CPU-seconds of one exact hypervolume of ``n`` points in ``m`` objectives (worst case)."""
    if n <= 0:
        return 0.0
    if m in HV_POWER:
        a, e = HV_POWER[m]
    else:
        a, e10 = HV_POWER[10]
        e = e10 + HV_EXPONENT_PER_OBJECTIVE * (m - 10)
    power: float = a * math.pow(n, e)
    subsets: float = HV_SUBSET_SECONDS * math.pow(2.0, min(n, 1000)) * n * m
    return min(power, subsets)


def hv_max_points(m: int, limit_seconds: float) -> int:
    """The largest front whose exact hypervolume (both calls) fits ``limit_seconds``."""
    lo, hi = 1, 1
    while hi < 10**7 and HV_CALLS * hypervolume_seconds(hi * 2, m) <= limit_seconds:
        hi *= 2
    hi *= 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if HV_CALLS * hypervolume_seconds(mid, m) <= limit_seconds:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _front_seconds(
    n: int, m: int, n_ref: int, indicators: Sequence[str], with_point: bool
) -> float:
    seconds = COORDINATE_SECONDS * (n + n_ref) * m
    if "hv" in indicators and with_point:
        seconds += HV_CALLS * hypervolume_seconds(n, m)
    distance = [i for i in indicators if i not in ("hv", "spacing")]
    seconds += DISTANCE_SECONDS * (len(distance) * n * n_ref * m + n_ref * n_ref * m)
    if "spacing" in indicators:
        seconds += DISTANCE_SECONDS * n * n * m
    return seconds


def _hv_split(m: int, limit: float) -> str:
    return (
        f"the exact hypervolume grows exponentially with the objectives: at m = {m} at most "
        f"{hv_max_points(m, limit)} points fit the limit; send fewer points (the front's "
        "non-dominated ones, or a subsample) or fewer objectives, or leave out 'hv'"
    )


def indicators_cost(body: IndicatorRequest, settings: Settings) -> CostEstimate:
    """``POST /v1/indicators``: points × objectives (the hypervolume dominates)."""
    n, m = len(body.front), len(body.front[0])
    n_ref = len(body.reference_front or [])
    seconds = FIXED_SECONDS + _front_seconds(
        n, m, n_ref, body.indicators, body.reference_point is not None
    )
    return CostEstimate(
        "indicators",
        seconds,
        (CostTerm("points", n), CostTerm("objectives", m), CostTerm("reference_points", n_ref)),
        _hv_split(m, settings.sync_cpu_limit_seconds) if "hv" in body.indicators else "",
    )


# --- absolute ranks --------------------------------------------------------------------------


def _aggregate_seconds(aggregate: str, runs: int) -> float:
    if aggregate == "mean":
        a, b, c = MEAN_AGGREGATE_SECONDS
        return a + b * runs + c * float(runs) ** 3
    a, b = MEDIAN_AGGREGATE_SECONDS
    return a + b * runs


def order_statistic_seconds(aggregate: str, runs: int, order: int | None) -> float:
    """CPU-seconds of one value's order statistic of ``runs`` runs (0 for one run, a mean or
    an even median; an invalid ``order`` is refused later, by the ranking)."""
    if runs <= 1 or numerical(aggregate, runs):
        return 0.0
    try:
        k = check_transform(1, runs, aggregate, order)
    except InvalidInput:
        return 0.0
    a, b = ORDER_STATISTIC_SECONDS
    return 3.0 * (a + b * (runs - k + 1))


def numerical(aggregate: str, runs: int) -> bool:
    """Whether an aggregate of ``runs`` runs needs a convolution or an integral."""
    return runs > 1 and (aggregate == "mean" or (aggregate == "median" and runs % 2 == 0))


def rank_cost(req: RankRequest) -> CostEstimate:
    """``POST /v1/absolute-ranks``: values, and numerical aggregates × runs (× grid)."""
    aggregate = req.aggregate or "best"
    seconds = FIXED_SECONDS
    terms: list[CostTerm] = []
    if req.sample is not None:
        s = len(req.sample)
        seconds += SAMPLE_SECONDS * s * math.log2(s + 1)
        terms.append(CostTerm("sample", s))
    if req.values is not None:
        values = len(req.values)
        terms.append(CostTerm("values", values))
        seconds += RANK_VALUE_SECONDS * values
        if numerical(aggregate, req.runs):
            distinct = len(set(req.values))
            seconds += distinct * _aggregate_seconds(aggregate, req.runs)
            terms += [CostTerm("numerical_aggregates", distinct), CostTerm("runs", req.runs)]
        elif req.runs > 1:
            seconds += values * order_statistic_seconds(aggregate, req.runs, req.order)
            terms.append(CostTerm("runs", req.runs))
        field = "values"
    else:
        runs = req.runs_by_algorithm or {}
        total = sum(len(v) for v in runs.values())
        seconds += RANK_VALUE_SECONDS * total
        costly = [len(v) for v in runs.values() if numerical(aggregate, len(v))]
        seconds += sum(_aggregate_seconds(aggregate, r) for r in costly)
        seconds += sum(order_statistic_seconds(aggregate, len(v), req.order) for v in runs.values())
        terms += [
            CostTerm("run_values", total),
            CostTerm("numerical_aggregates", len(costly)),
            CostTerm("max_runs", max(costly, default=0)),
        ]
        field = "runs_by_algorithm"
    return CostEstimate(
        f"absolute-ranks.{field}",
        seconds,
        tuple(terms),
        "send the values in several requests (each numerical aggregate — a mean of r runs, a "
        "median of an even r — is a chain of convolutions or a quadrature; its cost grows with "
        "r; an order statistic of r runs sums up to r terms per value), or send it as a job",
    )


# --- comparisons -----------------------------------------------------------------------------


def posthoc_seconds(method: str, k: int, control: bool = False) -> float:
    """CPU-seconds of one post-hoc family over ``k`` algorithms."""
    m = (k - 1) if control or method in ("bonferroni-dunn", "li") else k * (k - 1) // 2
    lin, quad = POSTHOC_SECONDS.get(method, POSTHOC_SECONDS["hommel"])
    return POSTHOC_FIXED_SECONDS + lin * m + quad * m * m


@dataclass(frozen=True)
class ComparisonShape:
    """What a comparison's cost grows with, known once its rows are parsed."""

    rows: int
    algorithms: int
    problems: int
    numerical_cells: int = 0
    max_runs: int = 1

    @classmethod
    def of_rows(
        cls, rows: Sequence[tuple[str, str, int, float | None]], reduction: str
    ) -> ComparisonShape:
        """The shape of parsed rows ``(algorithm, problem, run, value)``."""
        algorithms: set[str] = set()
        cells: dict[tuple[str, str], int] = {}
        for a, p, _, _ in rows:
            algorithms.add(a)
            cells[(a, p)] = cells.get((a, p), 0) + 1
        problems = {p for _, p in cells}
        costly = [r for r in cells.values() if numerical(reduction, r)]
        return cls(len(rows), len(algorithms), len(problems), len(costly), max(costly, default=1))


def comparison_cost(
    body: ComparisonCreate, shape: ComparisonShape, settings: Settings
) -> CostEstimate:
    """``POST /v1/comparisons``: rows, algorithms k, problems, post-hoc family size k², NIIA
    subsets × post-hoc cost, absolute ranks (cells, paired tests over problems).

    The terms include the estimate's parts (``posthoc_cpu_seconds``, ``niia_cpu_seconds``,
    ``absolute_cpu_seconds``), so that a refusal says where the cost is
    (:func:`comparison_field`)."""
    k, n = shape.algorithms, shape.problems
    control = body.control is not None
    pairs = (k - 1) if control else k * (k - 1) // 2
    absolute = body.absolute != "off"
    posthoc = posthoc_seconds(body.posthoc, k, control)
    base = (
        COMPARISON_FIXED_SECONDS
        + ROW_SECONDS * shape.rows
        + CELL_SECONDS * k * n
        + PAIR_SECONDS * pairs
    )
    absolute_seconds = 0.0
    if absolute:
        absolute_seconds = ABSOLUTE_CELL_SECONDS * k * n + PAIR_PROBLEM_SECONDS * pairs * n
        absolute_seconds += shape.numerical_cells * _aggregate_seconds(
            body.reduction, shape.max_runs
        )
    subsets = body.niia_subsets
    niia_terms: tuple[CostTerm, ...]
    sides = 2 if absolute else 1
    if subsets is None:
        default_pairs = k * (k - 1) // 2
        skipped = default_pairs > settings.max_niia_default_pairs
        niia = 0.0 if skipped else NIIA_PAIR_SECONDS * default_pairs * n * sides
        niia_terms = (CostTerm("niia_pairs", 0 if skipped else default_pairs),)
    else:
        niia = sum(
            sides * posthoc_seconds(body.posthoc, len(set(s)), control)
            + CELL_SECONDS * len(s) * n
            + PAIR_SECONDS * len(s) ** 2
            for s in subsets
        )
        niia_terms = (
            CostTerm("niia_subsets", len(subsets)),
            CostTerm("max_subset_size", max((len(s) for s in subsets), default=0)),
        )
    seconds = base + posthoc + absolute_seconds + niia
    return CostEstimate(
        "comparisons",
        seconds,
        (
            CostTerm("rows", shape.rows),
            CostTerm("algorithms", k),
            CostTerm("problems", n),
            CostTerm("posthoc_pairs", pairs),
            CostTerm("numerical_cells", shape.numerical_cells if absolute else 0),
            *niia_terms,
            CostTerm("posthoc_cpu_seconds", round(posthoc, 3)),
            CostTerm("niia_cpu_seconds", round(niia, 3)),
            CostTerm("absolute_cpu_seconds", round(absolute_seconds, 3)),
        ),
        f"posthoc={body.posthoc!r} over {k} algorithms is a family of {pairs} pairs; compare "
        "fewer algorithms per request, name fewer or smaller niia_subsets, choose a cheaper "
        "post-hoc (nemenyi, holm), set absolute='off', or send it as a job",
    )


def comparison_field(body: ComparisonCreate, estimate: CostEstimate) -> str:
    """The request field that drives a comparison's cost most (from its estimate's parts)."""
    terms = {t.name: t.value for t in estimate.terms}
    parts = {
        "niia_subsets": terms.get("niia_cpu_seconds", 0.0) if body.niia_subsets else 0.0,
        "posthoc": terms.get("posthoc_cpu_seconds", 0.0),
        "absolute": terms.get("absolute_cpu_seconds", 0.0),
    }
    name, seconds = max(parts.items(), key=lambda kv: kv[1])
    if seconds > 0.5 * estimate.cpu_seconds:
        return name
    return "csv" if body.csv is not None else "results"


def posthoc_cost(
    method: str, values: Sequence[Sequence[float | None]], control: bool
) -> CostEstimate:
    """``POST /v1/tests/posthoc``: the family of k(k − 1)/2 pairs (k − 1 against a control)
    over the matrix's cells."""
    n = len(values)
    k = max((len(row) for row in values), default=0)
    pairs = (k - 1) if control or method in ("bonferroni-dunn", "li") else k * (k - 1) // 2
    seconds = (
        FIXED_SECONDS
        + CELL_SECONDS * n * k
        + ANSWER_PAIR_SECONDS * pairs
        + posthoc_seconds(method, k, control)
    )
    return CostEstimate(
        "tests.posthoc",
        seconds,
        (CostTerm("problems", n), CostTerm("algorithms", k), CostTerm("posthoc_pairs", pairs)),
        f"method={method!r} over {k} algorithms is a family of {pairs} pairs; compare fewer "
        "algorithms per request, against a control, or choose a cheaper method (nemenyi, holm)",
    )


# --- Pareto rankings -------------------------------------------------------------------------


def pareto_cost(body: ParetoRankingCreate, settings: Settings) -> CostEstimate:
    """``POST /v1/pareto-rankings``: rows × indicators, non-dominated sorting per problem
    (runs² · indicators), and for fronts their indicators (the hypervolume's points ×
    objectives)."""
    indicators = len(body.indicators)
    seconds = FIXED_SECONDS
    runs: dict[str, int] = {}
    names: set[str] = set()
    if body.scores is not None:
        rows = len(body.scores)
        for s in body.scores:
            runs[s.problem] = runs.get(s.problem, 0) + 1
            names.add(s.indicator)
        indicators = max(len(names), 1)
        per_problem = {p: c // indicators for p, c in runs.items()}
        field = "scores"
    elif body.fronts is not None:
        refs = body.references or {}
        per_problem = {}
        for f in body.fronts:
            ref = refs.get(f.problem)
            seconds += _front_seconds(
                len(f.front),
                len(f.front[0]),
                len((ref.reference_front if ref else None) or []),
                body.indicators,
                ref is not None and ref.reference_point is not None,
            )
            per_problem[f.problem] = per_problem.get(f.problem, 0) + 1
        rows = len(body.fronts) * indicators
        field = "fronts"
    else:
        text = body.csv or ""
        rows = max(text.count("\n"), 1)
        per_problem = {"": rows // max(indicators, 1)}  # unknown split: one problem (worst)
        field = "csv"
    seconds += PARETO_ROW_SECONDS * rows
    seconds += sum(PARETO_SORT_SECONDS * r * r * indicators for r in per_problem.values())
    largest = max(per_problem.values(), default=0)
    return (
        CostEstimate(
            "pareto-rankings",
            seconds,
            (
                CostTerm("rows", rows),
                CostTerm("indicators", indicators),
                CostTerm("problems", len(per_problem)),
                CostTerm("max_runs_per_problem", largest),
            ),
            "rank fewer runs or problems per request (non-dominated sorting grows with the square "
            "of a problem's runs), or send it as a job",
        )
        if field
        else CostEstimate("pareto-rankings", seconds)
    )


def pareto_field(body: ParetoRankingCreate) -> str:
    """The field whose size drives a Pareto ranking's cost."""
    for name in ("scores", "csv", "fronts"):
        if getattr(body, name) is not None:
            return name
    return "scores"


# --- result sets ---------------------------------------------------------------------------

RESULT_SET_BYTE_SECONDS = 1.3e-6
"""Per byte of an uploaded result set (parse, check, store: 2.7 s for 50,000 rows of long
CSV, 2.07 MB; about 5.4e-5 s per row)."""
RESULT_SET_ROW_SECONDS = 5.4e-5
ARCHIVE_EXPANSION = 4.0
"""Bytes of results per byte of a .zip/.tgz upload, assumed (text compresses 3-10×)."""


def result_set_cost(n_bytes: int, *, archive: bool, max_rows: int) -> CostEstimate:
    """``POST /v1/result-sets``: the bytes of the results (a compressed archive counted at
    :data:`ARCHIVE_EXPANSION` times its size), and no more than ``max_rows`` rows
    (``max_upload_rows``: the reader refuses more as it meets them, before storing any)."""
    results = n_bytes * (ARCHIVE_EXPANSION if archive else 1.0)
    seconds = min(RESULT_SET_BYTE_SECONDS * results, RESULT_SET_ROW_SECONDS * max_rows)
    return CostEstimate(
        "result-sets",
        FIXED_SECONDS + seconds,
        (CostTerm("bytes", n_bytes), CostTerm("result_bytes", results)),
        "upload the results in several sets (one per suite, function or dimension), each "
        f"under about {int(2.0 / RESULT_SET_BYTE_SECONDS / 1e5) / 10} MB of results at "
        "the default limit",
    )


# --- region scans ----------------------------------------------------------------------------


def region_scan_chunks(chunks: int, settings: Settings, *, field: str = "deltas") -> None:
    """Refuse a region scan that would queue more than ``max_region_scan_chunks`` chunks."""
    limit = settings.max_region_scan_chunks
    if chunks > limit:
        raise InvalidInput(
            f"this region scan would queue {chunks} chunks; at most max_region_scan_chunks = "
            f"{limit} per request: scan fewer δ values, or smaller tables (log2n), in several "
            "requests",
            field=field,
            extra={
                "chunks": chunks,
                "limit_chunks": limit,
                "limit_setting": "max_region_scan_chunks",
            },
        )
