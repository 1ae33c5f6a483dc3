"""Request and response models of ``POST /v1/runtime-distributions`` and ``POST /v1/profiles``.

Trajectories are sent per algorithm: runs of ``(evaluations, value)`` records on a function.
Values are errors ``f − f*`` (``values_are='error'``, the units of every target) or ``f``
(converted through the hosted function's ``f*``); records are the best-so-far, or observed
values whose running minimum is taken (``records='observed'``). The shape checks that need no
setting (sorted evaluations, equal lengths) are the service's, so that a refusal names the
run's field (``algorithms.0.runs.2.evaluations``) with the same detail whatever the backend.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.common import STRICT_REQUEST, FiniteFloat
from app.schemas.ranks import MAX_BUDGET

Name = Annotated[str, Field(min_length=1, max_length=200)]
Evaluations = Annotated[int, Field(ge=1, le=MAX_BUDGET)]
Precision = Annotated[float, Field(ge=0.0, allow_inf_nan=False)]

_EXAMPLE: dict[str, Any] = {
    "algorithms": [
        {
            "algorithm": "DE",
            "runs": [
                {
                    "function_id": "classic/sphere/d2",
                    "evaluations": [1, 10, 100],
                    "values": [5.0, 0.5, 1e-3],
                },
                {
                    "function_id": "classic/sphere/d2",
                    "evaluations": [1, 20, 100],
                    "values": [4.0, 0.05, 0.01],
                },
            ],
        }
    ],
    "targets": [1.0, 0.1, 0.01],
    "budgets": [10, 100],
}


class TrajectoryRunIn(BaseModel):
    """One run: its records ``(evaluations, value)`` on one function."""

    model_config = STRICT_REQUEST
    function_id: Name = Field(
        description="the function (a hosted id such as bbob/f1/i1/d10 gives the anytime absolute "
        "rank; any other name gets ERT, ECDF and fixed budgets only)",
        examples=["bbob/f1/i1/d2"],
    )
    evaluations: list[Evaluations] = Field(
        min_length=1, description="evaluation counts of the records, strictly increasing"
    )
    values: list[FiniteFloat] = Field(
        min_length=1,
        description="one value per record: best-so-far (records='best-so-far', non-increasing) "
        "or observed (records='observed'); errors f − f* or f (values_are)",
    )
    budget: Evaluations | None = Field(
        None,
        description="evaluations the run used (an unsuccessful run's cost in the ERT); default "
        "its last record's evaluations",
    )


class AlgorithmRunsIn(BaseModel):
    """The runs of one algorithm."""

    model_config = STRICT_REQUEST
    algorithm: Name
    runs: list[TrajectoryRunIn] = Field(min_length=1)


class RuntimeDistributionRequest(BaseModel):
    """Trajectories (inline or archived) and the targets and budgets to analyse them at."""

    model_config = STRICT_REQUEST | ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})
    algorithms: list[AlgorithmRunsIn] | None = Field(
        None, min_length=1, description="inline trajectories, per algorithm"
    )
    result_sets: list[Name] | None = Field(
        None,
        min_length=1,
        description="archived result sets (POST /v1/result-sets), one algorithm each; every run "
        "must hold a trajectory",
    )
    values_are: Literal["error", "f"] = Field(
        "error",
        description="inline values: 'error' = f − f*; 'f' = f(x), f* of the hosted function is "
        "subtracted (archived sets carry their own)",
    )
    records: Literal["best-so-far", "observed"] = Field(
        "best-so-far",
        description="inline values: the best-so-far (non-increasing), or observed values whose "
        "running minimum is taken",
    )
    targets: list[Precision] | None = Field(
        None,
        min_length=1,
        description="precisions Δf = f − f*; default COCO's 51 targets 10^2, 10^1.8, …, 10^-8",
    )
    function_ids: list[Name] | None = Field(
        None, min_length=1, description="analyse only these functions (after pooling), in order"
    )
    pool_instances: bool = Field(
        False, description="pool bbob/f1/i1/d2, bbob/f1/i2/d2 … as bbob/f1/d2 (COCO's data sets)"
    )
    simulated_restarts: int | None = Field(
        None,
        ge=1,
        le=10_000,
        description="samples per target of simulated restarts (COCO's bootstrap); the ECDF is "
        "then also given from them. Default: none",
    )
    seed: int = Field(0, ge=0, le=2**63 - 1, description="seed of the simulated restarts")
    budgets: list[Evaluations] | None = Field(
        None,
        min_length=1,
        description="budgets c of the fixed-budget view and the anytime absolute rank, "
        "increasing; default 1, 2, 5, 10, 20, 50, … up to the largest run budget",
    )
    absolute_ranks: bool = Field(
        True, description="rank the best-so-far at each budget c as log10 v_c (hosted functions)"
    )


class StepRead(BaseModel):
    """A step function ``F(t) = counts[i] / total`` with its exact breakpoints ``x``."""

    x: list[float] = Field(description="breakpoints, strictly increasing")
    counts: list[int] = Field(
        description="counts[0] before x[0], counts[i] between x[i-1] and x[i], counts[k] after"
    )
    total: int = Field(description="the denominator")
    continuity: Literal["right", "left"] = Field(
        description="right: F(x[i]) = counts[i+1]/total; left: F(x[i]) = counts[i]/total"
    )


class QuantilesRead(BaseModel):
    """Quantiles over runs at each budget (``null``: no run has a record there)."""

    levels: list[float]
    values: list[list[float | None]] = Field(description="one row per level, one entry per budget")


class AnytimeRankRead(BaseModel):
    """``log10 v_c`` of each run's best-so-far at budget ``c``, and its quantiles over runs."""

    methods: list[str] = Field(
        description="how v1 was obtained (analytic, Eq. 28 on the table, a tail), distinct"
    )
    per_run: list[list[float | None]] = Field(
        description="one row per run, one entry per budget (null: no record yet, or v = 0)"
    )
    quantiles: QuantilesRead


class FunctionAnalysis(BaseModel):
    """One algorithm on one function."""

    algorithm: str
    function_id: str
    runs: int
    budgets_used: list[int] = Field(description="evaluations each run used")
    successes: list[int] = Field(description="runs that reached each target")
    ert: list[float | None] = Field(
        description="expected running time (aRT, COCO) per target; null = no run reached it"
    )
    ecdf: StepRead = Field(description="runtime ECDF over the targets, from the runs")
    simulated_ecdf: StepRead | None = Field(
        None, description="runtime ECDF from simulated restarts (when asked)"
    )
    fixed_budget: QuantilesRead = Field(description="best-so-far error at each budget")
    anytime_rank: AnytimeRankRead | None = Field(
        None, description="the anytime absolute rank (hosted functions, absolute_ranks=true)"
    )


class PooledEcdf(BaseModel):
    """One algorithm's runtime ECDF over all its functions and targets (each (function,
    target, sample) weighs the same; x in evaluations)."""

    algorithm: str
    function_ids: list[str]
    source: Literal["runs", "simulated-restarts"] = Field(
        description="the runs' own runtimes (every function has as many runs), or simulated "
        "restarts"
    )
    ecdf: StepRead


class AnytimeWarning(BaseModel):
    """A warning, typed: a stable code, the text, and what it concerns."""

    code: str
    message: str
    algorithm: str | None = None
    function_id: str | None = None


class RuntimeDistributionRead(BaseModel):
    """ERT, runtime ECDFs, the fixed-budget view and the anytime absolute rank."""

    targets: list[float]
    budgets: list[int]
    algorithms: list[str]
    functions: list[FunctionAnalysis]
    pooled: list[PooledEcdf] = Field(
        description="per algorithm with two functions or more: the ECDF over all of them"
    )
    warnings: list[AnytimeWarning]
    provenance: dict[str, Any]


ProfileKindField = Literal["performance", "data", "accuracy"]

_PROFILE_EXAMPLE: dict[str, Any] = {
    "kind": "performance",
    "problems": ["p1", "p2", "p3"],
    "solvers": ["A", "B"],
    "costs": [[10, 20], [30, 15], [5, None]],
}


class ProfileRequest(BaseModel):
    """A (problems × solvers) matrix and which profile to draw from it."""

    model_config = STRICT_REQUEST | ConfigDict(json_schema_extra={"examples": [_PROFILE_EXAMPLE]})
    kind: ProfileKindField
    solvers: list[Name] = Field(min_length=1, description="column names, distinct")
    problems: list[Name] | None = Field(None, min_length=1, description="row names (echoed)")
    costs: list[list[Annotated[float, Field(gt=0, allow_inf_nan=False)] | None]] | None = Field(
        None,
        min_length=1,
        description="performance and data: t_{p,s} > 0, evaluations to solve p; null = failure",
    )
    dims: list[Annotated[int, Field(ge=1, le=100_000)]] | None = Field(
        None, min_length=1, description="data: the dimension n_p of each problem"
    )
    final_errors: list[list[Annotated[float, Field(ge=0, allow_inf_nan=False)] | None]] | None = (
        Field(
            None,
            min_length=1,
            description="accuracy: f(x̄) − f* >= 0 per problem and solver; null = failure",
        )
    )
    initial_errors: list[Annotated[float, Field(gt=0, allow_inf_nan=False)]] | None = Field(
        None, min_length=1, description="accuracy: f(x_0) − f* > 0 per problem"
    )
    max_digits: float = Field(
        16.0, gt=0, le=300, description="accuracy: M, the cap on digits gained"
    )


class ProfileCurve(BaseModel):
    """One solver's profile."""

    solver: str
    step: StepRead
    values: list[float | None] = Field(
        description="per problem: r_{p,s} (performance), t/(n_p+1) (data) or γ (accuracy); "
        "null = failure"
    )


class ProfileRead(BaseModel):
    """Profiles as exact step functions."""

    kind: ProfileKindField
    axis: Literal["log2", "linear"] = Field(description="the x axis of the figure")
    problems: list[str]
    curves: list[ProfileCurve]
    provenance: dict[str, Any]


FigureKind = Literal["ecdf", "fixed-budget", "anytime-rank"]
