"""Schemas of ``/v1/comparisons``: results of several algorithms on several problems."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from app.schemas.common import STRICT_REQUEST, FiniteFloat
from app.schemas.ranks import MAX_TABLE_ID_LENGTH, Regions
from app.schemas.stattests import (
    CD_CONVENTION_DESCRIPTION,
    NAME,
    CDConvention,
    MatrixMissing,
    NamedStrength,
    Number,
    PosthocMethod,
)

Reduction = Literal["mean", "median", "best"]

MAX_CSV_CHARS = 64 * 1024 * 1024
MAX_RESULT_SETS = 50
"""Archived result sets per comparison (each joins as one algorithm)."""


class ResultRow(BaseModel):
    """One run: the metric value of ``algorithm`` on ``problem`` in run ``run``."""

    model_config = STRICT_REQUEST
    algorithm: NAME
    problem: NAME = Field(
        description="a hosted function id (absolute ranks then apply) or any free name"
    )
    run: int = Field(ge=0, le=10**9, description="run number (unique per algorithm and problem)")
    value: FiniteFloat | None = Field(description="metric value; null = missing run")


ComparisonOptions = dict[str, Any]

_EXAMPLE_ROWS: list[JsonValue] = [
    {"algorithm": alg, "problem": prob, "run": run, "value": value}
    for alg, prob, base in (
        ("DE", "classic/sphere/d2", 1e-3),
        ("PSO", "classic/sphere/d2", 5e-3),
        ("RS", "classic/sphere/d2", 2e-2),
        ("DE", "classic/rastrigin/d2", 0.5),
        ("PSO", "classic/rastrigin/d2", 0.9),
        ("RS", "classic/rastrigin/d2", 1.5),
        ("DE", "classic/rosenbrock/d2", 0.01),
        ("PSO", "classic/rosenbrock/d2", 0.002),
        ("RS", "classic/rosenbrock/d2", 0.3),
    )
    for run, value in enumerate((base, 2 * base, 1.5 * base))
]


class ComparisonCreate(BaseModel):
    """Results of algorithms on problems (long format), and how to analyse them."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "results": _EXAMPLE_ROWS,
                    "reduction": "best",
                    "values_are": "error",
                    "budget": 1000,
                    "posthoc": "nemenyi",
                    "alpha": 0.05,
                },
                {
                    "csv": "algorithm,problem,run,value\nA,p1,0,1.0\nB,p1,0,2.0\nC,p1,0,3.0\n"
                    "A,p2,0,1.5\nB,p2,0,1.0\nC,p2,0,4.0\nA,p3,0,0.2\nB,p3,0,0.9\nC,p3,0,0.7\n",
                    "reduction": "mean",
                    "posthoc": "holm",
                },
            ]
        }
    )
    results: list[ResultRow] | None = Field(
        None, description="long format rows; give exactly one of results and csv"
    )
    csv: str | None = Field(
        None,
        max_length=MAX_CSV_CHARS,
        description="the same rows as CSV with header algorithm,problem,run,value "
        "(empty, NA or NaN value = missing)",
    )
    reduction: Reduction = Field(
        "mean", description="per-cell reduction of the runs: mean, median or best (minimum)"
    )
    missing: MatrixMissing = Field(
        "reject",
        description="a cell is missing when it has no run or a null run: reject (422), "
        "drop-problem, worst-rank, par-k",
    )
    par_k: float = Field(10.0, gt=1.0, le=1e6, description="k of the par-k policy")
    alpha: float = Field(0.05, gt=0.0, lt=1.0, description="significance level")
    posthoc: PosthocMethod = Field("nemenyi", description="post-hoc family (see /v1/tests/posthoc)")
    control: NAME | None = Field(
        None, description="control algorithm (bonferroni-dunn and li need one)"
    )
    cd_convention: CDConvention = Field(
        "standard",
        description=CD_CONVENTION_DESCRIPTION + "; applies to the relative ranks' post-hoc, its "
        "CD diagram and the NIIA report's significance (absolute ranks' paired tests keep "
        "their adjustment)",
    )
    rtol: float = Field(
        0.0,
        ge=0.0,
        le=1e-3,
        allow_inf_nan=False,
        description="values within rtol·max(|a|,|b|) tie when ranking",
    )
    values_are: Literal["f", "error"] = Field(
        "f", description="for absolute ranks: 'error' means f − f*"
    )
    budget: int = Field(
        1, ge=1, le=10**15, description="evaluations per run, c (absolute ranks, best-of-c)"
    )
    value_runs: int | None = Field(
        None,
        ge=1,
        le=10_000,
        description="each value already is the reduction (mean, median, best) of this many runs, "
        "as in published tables of mean errors; send one value per cell. Absolute ranks then "
        "rank the reduction of value_runs best-of-budget runs",
    )
    regions: Regions = Field(
        "auto",
        description="absolute ranks: 'nested' = each function's nested-region ladder (queued "
        "when missing, the comparison is partial while it builds), 'domain' = the default "
        "full-domain table, 'auto' = the ladder where it is ready; where values lie below the "
        "table's lowest sample it is queued and the comparison is partial until it is ready",
    )
    tables: (
        dict[NAME, Annotated[str, Field(min_length=1, max_length=MAX_TABLE_ID_LENGTH)]] | None
    ) = Field(
        None,
        min_length=1,
        description="absolute ranks of a problem from this table instead of the function's "
        "default table or ladder: {problem: table_id}, e.g. the δ-box table a region scan "
        "chose (Jing & Liu Table VI). The table must be ready and of that problem's "
        "function; every cell of the problem is ranked on it (regions is not used for it), "
        "and a box's ranks are relative to the box, their own scale (the answer says which "
        "region each problem's ranks are relative to). JSON bodies only",
        examples=[{"classic/rastrigin/d2": "t3f5a0c2e9b8d7f6a5b4c3d2"}],
    )
    absolute: Literal["auto", "off"] = Field(
        "auto", description="auto: absolute ranks when every problem is a hosted function id"
    )
    zero_method: Literal["pratt", "wilcox", "zsplit"] = Field(
        "pratt", description="Wilcoxon zero method of the paired tests on absolute ranks"
    )
    result_sets: list[Annotated[str, Field(min_length=1, max_length=64)]] | None = Field(
        None,
        min_length=1,
        max_length=MAX_RESULT_SETS,
        description="ids of archived result sets whose runs on the problems of results/csv "
        "(with results: [], the sets alone, on every function all of them have runs on) "
        "join as extra algorithms (named 'name version', with ' [id]' where names clash); "
        "their runs are taken at budget (final values at their final budget, best so far from "
        "trajectories below it) and converted to values_are through f*",
    )
    niia_subsets: list[Annotated[list[NAME], Field(min_length=2)]] | None = Field(
        None,
        min_length=1,
        description="algorithm subsets to compare against the full set (default: every pair alone)",
    )


class ComparisonWarning(BaseModel):
    """One warning, given once however often it arose (one per problem, per runs count, ...)."""

    message: str = Field(description="what it says (never names the problem: see problems)")
    count: int = Field(ge=1, description="how many times it arose (problems, runs counts, ...)")
    problems: list[str] = Field(
        description="the problems it concerns, in order; empty for a warning about the whole "
        "comparison"
    )


class PairGroup(BaseModel):
    """Fields of a family of pairs, compact: distinct results once, a code per pair.

    Pair ``p`` has ``constant[f]`` for every field of ``constant`` and
    ``distinct[f][code[p]]`` for every field of ``distinct``; a negative ``code[p] = c``
    stands for row ``−1 − c`` with the fields listed in ``negated`` (odd in ``(i, j)``:
    ``rank_difference``, ``z``) negated. Lossless (full float precision).
    """

    code: list[int] = Field(
        description="per pair, its row of distinct (negative c: row −1 − c, negated fields negated)"
    )
    negated: list[str] = Field(description="fields negated in a negative code's row")
    constant: dict[str, JsonValue] = Field(description="fields equal for every pair, once")
    distinct: dict[str, list[JsonValue]] = Field(
        description="the other fields: one list per field, one entry per distinct result"
    )


def _absent(value: object) -> bool:
    return value is None


class PairOrder(BaseModel):
    """Which pair entry ``p`` of a family is.

    ``upper-triangle``: the p-th ``(i, j)`` with ``i < j``, row by row (``(0, 1), (0, 2), …,
    (0, k−1), (1, 2), …``; ``i``/``j`` absent); ``listed``: ``(i[p], j[p])`` (a family against
    a control). Names are ``algorithms[i]``, ``algorithms[j]``. The client's ``pair_rows``
    (``Comparison.absolute_pairs``, ``posthoc.pairs``) expands a family pair by pair, with
    ``i``, ``j``, ``a``, ``b`` (docs: README, "Comparisons").
    """

    order: Literal["upper-triangle", "listed"] = Field(description="which pair entry p is")
    n_pairs: int = Field(ge=0, description="number of pairs")
    i: list[int] | None = Field(
        None, exclude_if=_absent, description="order listed: first algorithm of each pair"
    )
    j: list[int] | None = Field(
        None, exclude_if=_absent, description="order listed: second algorithm of each pair"
    )


class AbsolutePairs(PairOrder):
    """Paired tests of algorithms' absolute ranks v over the problems (every pair ``i < j``,
    or every pair with the control), compact: one :class:`PairGroup` per test and one for
    the family's adjustment. At k = 200 the 19,900 pairs have about a thousand distinct
    Wilcoxon results and a hundred sign tests."""

    wilcoxon: PairGroup = Field(
        description="Wilcoxon signed-rank test of v_i − v_j: statistic, p_value, "
        "log10_p_value, method, method_reason, alternative, zero_method, zero_tol, n, "
        "n_zeros, n_effective, z, continuity, degenerate, reason"
    )
    sign_test: PairGroup = Field(
        description="sign test of v_i − v_j: statistic, p_value, log10_p_value, method, "
        "method_reason, alternative, zero_tol, n, n_less, n_greater, n_ties, n_effective, "
        "degenerate, reason"
    )
    adjusted: PairGroup = Field(
        description="p_adjusted (Wilcoxon p adjusted within the family), log10_p_adjusted "
        "(no underflow), significant (p_adjusted < alpha)"
    )
    adjustment: str = Field(description="the family's adjustment (every pair's)")


class AbsoluteRegion(BaseModel):
    """The region one problem's absolute ranks are relative to (with ``tables`` given)."""

    region: Literal["box", "domain"] = Field(
        description="box: a δ-box table given in tables, v relative to that box (its own "
        "scale); domain: the function's domain (default table, ladder, exact form, or a "
        "full-domain table given in tables)"
    )
    source: str = Field(description="table | nested | analytic: what ranked the problem")
    table_id: str | None = Field(description="the table that ranked it (null: ladder, exact form)")
    delta: float | list[float] | None = Field(description="the box half-width δ (box only)")
    lower: list[float] | None = Field(description="the box's lower corner (box only)")
    upper: list[float] | None = Field(description="the box's upper corner (box only)")


class AbsoluteRead(BaseModel):
    """Absolute ranks of the cells (``status`` complete), or why not (pending, unavailable).

    ``view=summary`` leaves out ``v``, ``log10_v``, ``method`` and ``tables``.
    """

    model_config = ConfigDict(extra="allow")
    status: Literal["complete", "pending", "unavailable"]
    reason: str | None = None
    pending: list[dict[str, Any]] | None = Field(
        None, description="status pending: per problem, the table or ladder it waits for"
    )
    regions: dict[str, AbsoluteRegion] | None = Field(
        None,
        description="with tables given: per problem, the region its ranks are relative to "
        "(absent otherwise: every problem is then ranked relative to its domain)",
    )
    budget: int | None = Field(None, description="c: evaluations per run (best-of-c)")
    v: list[list[float]] | None = Field(None, description="problems × algorithms (full view)")
    log10_v: list[list[float | Literal["-Infinity"] | None]] | None = Field(
        None, description="authoritative log10 v, problems × algorithms (full view)"
    )
    method: list[list[str]] | None = Field(
        None, description="what ranked each cell, problems × algorithms (full view)"
    )
    average_absolute_rank: list[float] | None = None
    mean_log10_v: list[float | None] | None = None
    order_by: str | None = None
    pairwise: AbsolutePairs | None = Field(
        None, description="the paired tests of every pair, compact (distinct rows, codes)"
    )
    tables: dict[str, dict[str, Any]] | None = Field(
        None, description="per problem, the table, ladder or exact form that ranked it (full view)"
    )
    warnings: list[ComparisonWarning] | None = None


class ComparisonPosthocPairs(PairGroup, PairOrder):
    """The post-hoc comparisons of pairs of algorithms, compact (:class:`PairOrder`,
    :class:`PairGroup`), in the family's order (all pairs ``i < j``, or the control ``i``
    against each other ``j``).

    Fields per pair, as ``/v1/tests/posthoc`` lists them pair by pair: ``rank_difference``
    (R_i − R_j, average ranks), ``z``, ``p_value``, ``p_adjusted``, ``log10_p_value``,
    ``log10_p_adjusted``, ``significant`` (p_adjusted < alpha). ``p_matrix`` (k × k, 1 on the
    diagonal, ``p_adjusted`` of pair (i, j) at [i][j] and [j][i]) and ``p_vs_control`` (1 at
    the control) are these values laid out by index: the client rebuilds them
    (``absrank_client.models.posthoc_matrices``).
    """


class ComparisonLowPower(BaseModel):
    """Too few problems for the rank post-hoc tests to find differences (docs/METHODS.md).

    Set when the standard CD (Nemenyi for all pairs, Bonferroni–Dunn against a control)
    exceeds ``(k − 1) / 2``, half the largest possible difference of average ranks. The
    fields of :class:`app.schemas.stattests.LowPowerRead`, in the order a comparison sends.
    """

    n_problems: int = Field(description="N")
    n_algorithms: int = Field(description="k")
    alpha: float
    comparison: Literal["all-pairs", "vs-control"]
    critical_difference: float = Field(description="the standard CD at this N")
    threshold: float = Field(description="(k − 1) / 2")
    n_needed: int = Field(description="the smallest N with CD <= (k − 1) / 2")
    chi2_rough: bool = Field(
        description="not (N > 10 and k > 5): Friedman's chi-square approximation is rough "
        "(Demšar 2006's rule of thumb)"
    )
    message: str
    kind: Literal["low-power"] = "low-power"


class ComparisonPosthocRead(BaseModel):
    """A comparison's post-hoc family, with algorithm names beside every index.

    The fields of :class:`app.schemas.stattests.PosthocRead` and the family's numbers, in the
    order a comparison sends them. ``p_matrix`` / ``p_vs_control`` and their log10 (adjusted
    p-values by index) are not sent: ``pairs`` carry the same numbers (and answers stored
    before, with the matrices, read the same way).
    """

    model_config = ConfigDict(extra="allow")
    procedure: str
    comparison: Literal["all-pairs", "vs-control"]
    alpha: float
    control: int | None = Field(description="index of the control algorithm")
    average_ranks: list[float]
    n_problems: int
    n_algorithms: int
    critical_difference: float | None = None
    critical_value: float | None = None
    pairs: ComparisonPosthocPairs = Field(description="the family's pairs, compact")
    p_matrix: list[list[float | None]] | None = None
    p_vs_control: list[float | None] | None = None
    log10_p_matrix: list[list[Number | None]] | None = None
    log10_p_vs_control: list[Number | None] | None = None
    cliques: list[list[int]] = Field(
        description="maximal groups not significantly different, as algorithm indices"
    )
    method: str | None = None
    degenerate: bool | None = None
    reason: str | None = None
    cd_convention: str | None = None
    low_power: ComparisonLowPower | None = Field(
        None, description="set when N is too small for the test to find differences (the rule)"
    )
    control_name: str | None = Field(description="name of the control algorithm")
    clique_names: list[list[str]] = Field(description="the same cliques, as algorithm names")


class ComparisonBradleyTerry(BaseModel):
    """Bradley–Terry strengths (by index, and named in ``strengths_by_algorithm``)."""

    model_config = ConfigDict(extra="allow")
    strengths: list[Number]
    probabilities: list[list[float]] | None = Field(
        None,
        description="P(i beats j), algorithms × algorithms: sent only when it is not "
        "strengths[i] / (strengths[i] + strengths[j]) (0.5 on the diagonal), e.g. a "
        "degenerate fit; otherwise the client rebuilds it bit for bit "
        "(absrank_client.models.bradley_terry_probabilities)",
    )
    components: list[list[int]] | None = None
    iterations: int | None = None
    converged: bool | None = None
    iteration: str | None = None
    zermelo_max_relative_difference: float | None = None
    degenerate: bool | None = None
    reason: str | None = None
    strengths_by_algorithm: list[NamedStrength]


class RelativeRead(BaseModel):
    """Relative (Friedman) ranks; ``view=summary`` leaves out the rank matrix ``ranks``."""

    model_config = ConfigDict(extra="allow")
    ranks: list[list[float]] | None = Field(
        None, description="problems × algorithms midranks (full view)"
    )
    average_ranks: list[float]
    friedman: dict[str, Any]
    aligned_ranks: dict[str, Any]
    quade: dict[str, Any]
    posthoc: ComparisonPosthocRead
    bradley_terry: ComparisonBradleyTerry


class MissingRead(BaseModel):
    """How the declared missing policy was applied (docs/METHODS.md, missing values)."""

    policy: str = Field(description="the policy of the request's missing")
    missing_runs: int = Field(description="runs given as null")
    missing_cells: int = Field(description="cells without a (non-null) run")
    dropped_problems: list[str] = Field(description="problems left out (drop-problem)")
    filled_cells: int = Field(description="cells filled in (worst-rank, par-k)")
    par_k: float | None = Field(description="k of par-k (null for the other policies)")


class NiiaSide(BaseModel):
    """The NIIA report of one kind of ranks: which pairwise conclusions flip per subset.

    ``status``/``reason`` instead when the side cannot be computed (no absolute ranks).
    """

    model_config = ConfigDict(extra="allow")
    subsets: list[dict[str, Any]] | None = Field(
        None, description="per subset: its algorithms, the pairs compared and the flips"
    )
    flipped_pairs: list[list[str]] | None = None
    status: str | None = None
    reason: str | None = None


class NiiaRead(BaseModel):
    """The NIIA report (Jing & Liu): conclusions of the full set against algorithm subsets."""

    model_config = ConfigDict(extra="allow")
    status: str
    reason: str | None = None
    subsets: str | None = Field(None, description="which subsets were compared")
    conclusion: str | None = None
    problems: str | None = None
    relative: NiiaSide | None = None
    absolute: NiiaSide | None = None


class ComparisonRead(BaseModel):
    """A stored comparison: relative ranks, absolute ranks, NIIA report, provenance.

    Infinite numbers are the strings ``"Infinity"`` / ``"-Infinity"``. ``view=summary``
    leaves out ``matrix``, ``n_runs``, ``relative.ranks``,
    the Bradley–Terry probabilities, the per-cell absolute ranks and the table specs.
    """

    model_config = ConfigDict(extra="allow")
    id: str
    location: str
    status: Literal["complete", "partial"] = Field(
        description="partial: absolute ranks wait for tables or ladders (absolute.pending); "
        "POST the same request again later"
    )
    view: Literal["full", "summary"] = Field(description="the view asked for (?view=)")
    algorithms: list[str]
    problems: list[str]
    options: dict[str, Any]
    missing: MissingRead
    n_runs: list[list[int]] | None = Field(
        None, description="runs behind each cell, problems × algorithms (full view)"
    )
    matrix: list[list[Any]] | None = Field(
        None, description="reduced values, problems × algorithms (full view)"
    )
    relative: RelativeRead
    absolute: AbsoluteRead
    niia: NiiaRead
    warnings: list[ComparisonWarning]
    provenance: dict[str, Any]
