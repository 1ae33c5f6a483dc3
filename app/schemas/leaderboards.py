"""Schemas of ``/v1/leaderboards``: archived result sets ranked by their absolute rank."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from app.schemas.ranks import Awaited, RankInterval
from app.schemas.stattests import PosthocRead

LeaderboardAggregate = Literal["best", "worst", "median", "lower-median", "mean"]
"""How each set's runs on a function are aggregated before ranking (as ``runs_by_algorithm``)."""

ExclusionReason = Literal[
    "superseded",
    "budget-above-final",
    "no-trajectories",
    "no-record-within-budget",
    "several-published-values",
    "errors-without-f-star",
]
"""Why an archived set with runs on the function is not ranked:

* ``superseded`` — a newer set corrects it (``detail`` names it);
* ``budget-above-final`` — the ``budget`` asked for exceeds the evaluations the set used;
* ``no-trajectories`` — a ``budget`` below the set's final budget needs trajectories;
* ``no-record-within-budget`` — a run's trajectory has no record within ``budget``;
* ``several-published-values`` — a set of published reduced values with more than one value
  on the function (each must be the reduction of all its runs);
* ``errors-without-f-star`` — errors on a function without a known ``f*``."""

RankStatus = Literal["final", "provisional"]


class AbsoluteRankRead(BaseModel):
    """The absolute rank ``v`` of a set's aggregate on one function (lower is better)."""

    v: float = Field(description="may underflow to 0.0 below 1e-308; log10_v is authoritative")
    log10_v: float | None = Field(description="null only when v is exactly 0")
    interval: RankInterval
    method: str = Field(description="as POST /v1/absolute-ranks results[].method")
    source: Literal["table", "nested", "analytic"] = Field(
        description="the default domain table, the nested-region ladder or the exact v1"
    )
    tail: str | None = Field(None, description="the lower-tail model of the table (or None)")
    tables: list[str] = Field(description="ids of the tables the rank came from")
    curve: str | None = Field(
        None,
        description="where to download the v1 curve the rank came from (GET it: the table's or "
        "the ladder's curve.json); null for an exact v1",
    )


class LeaderboardEntry(BaseModel):
    """One archived set on one function."""

    set_id: str
    name: str
    version: str | None
    label: str = Field(description="name and version, with the id when labels clash")
    values_are: Literal["f", "error"]
    budget: int = Field(description="the budget c of its rank (evaluations per run)")
    runs: int = Field(description="r: runs behind its aggregate")
    aggregate: str = Field(description="the aggregate ranked ('best' when r = 1)")
    published: bool = Field(
        description="its stored values are published reductions (value_aggregate of value_runs "
        "runs), not runs"
    )
    value: float = Field(description="the aggregate of its runs, in its own units (values_are)")
    error: float | None = Field(
        None,
        description="the same aggregate as the gap f − f* (null without a known f*): one scale "
        "for every set on the board, whatever its values_are",
    )
    status: RankStatus = Field(
        description="final: no better method is awaited; provisional: the rank (or its "
        "absence) waits for `awaiting`, and will be updated when it is ready"
    )
    awaiting: Awaited | None = None
    absolute: AbsoluteRankRead | None = Field(
        None, description="null while the function's default table is not ready"
    )
    relative_rank: float | None = Field(
        None,
        description="rank of its aggregate value among the listed sets with the requested "
        "aggregate (1 = best, ties averaged); null for a published set of another aggregate",
    )
    tested: bool = Field(description="whether it takes part in the pairwise rank-sum tests")
    note: str | None = None


class ExcludedSet(BaseModel):
    """An archived set with runs on the function that is not ranked, and why."""

    set_id: str
    name: str
    function_id: str
    reason: ExclusionReason
    detail: str


class PairTest(BaseModel):
    """Wilcoxon rank-sum / Mann–Whitney U test of two sets' runs (two-sided)."""

    a: str = Field(description="set id of a")
    b: str = Field(description="set id of b")
    a_label: str
    b_label: str
    statistic: float = Field(description="U of a (pairs with a > b, ties half)")
    a12: float = Field(description="Vargha–Delaney A12 = U / (n_a n_b); below 1/2: a is better")
    p_value: float
    log10_p_value: float
    p_adjusted: float | None = Field(
        description="Holm-adjusted over the family of pairs that can reach alpha; null for a "
        "pair outside it (in_family false)"
    )
    log10_p_adjusted: float | None
    method: str = Field(description="exact or asymptotic null distribution")
    in_family: bool = Field(
        True,
        description="false when even the most extreme outcome of the exact test cannot reach "
        "alpha with these run counts (smallest attainable two-sided p = 2 / C(n_a + n_b, n_a) "
        ">= alpha, e.g. 1 run against 5): such a pair is reported but left out of the Holm "
        "family, so sets with few runs do not dilute the others' tests",
    )
    significant: bool


class Significance(BaseModel):
    """Which pairs of tested sets differ, Holm-adjusted over the pairs that can reach alpha."""

    status: Literal["computed", "skipped"]
    reason: str | None = None
    test: str = "rank-sum (Mann-Whitney U) on the runs' values, two-sided"
    adjustment: str = "holm"
    alpha: float
    pairs: list[PairTest]


class LeaderboardRead(BaseModel):
    """Every archived, not superseded set with runs on one function, by absolute rank."""

    model_config = ConfigDict(extra="forbid")
    function_id: str
    budget: int | None = Field(description="the budget asked for; null: each set's final budget")
    aggregate: LeaderboardAggregate
    entries: list[LeaderboardEntry] = Field(
        description="by absolute rank (log10_v ascending, then set id); entries without a rank last"
    )
    excluded: list[ExcludedSet]
    significance: Significance
    warnings: list[str]
    provenance: dict[str, Any]


class SuiteEntry(BaseModel):
    """One set over a suite and dimension."""

    set_id: str
    name: str
    version: str | None
    label: str
    functions_covered: int = Field(description="functions it has a rank on")
    functions_total: int = Field(
        description="functions of the board (the suite's registered functions at dim, of the "
        "requested instances / functions), whatever is archived"
    )
    full_coverage: bool
    mean_log10_v: float | None = Field(
        description="mean log10 v over the functions it covers; null when some v is 0 (then "
        "functions_at_zero > 0 and the mean is -inf: it reaches the minimum, which random "
        "search never does, on those functions)"
    )
    functions_at_zero: int = Field(
        0, description="covered functions where its rank is v = 0 (log10 v = -inf)"
    )
    provisional: bool = Field(description="some of its ranks are provisional")


class SuiteFamily(BaseModel):
    """The Friedman family and post-hoc over the sets with full coverage (log10 v per function)."""

    model_config = ConfigDict(extra="allow")
    status: Literal["computed", "skipped"]
    reason: str | None = None
    sets: list[str] = Field(description="set ids, the columns of the tests")
    labels: list[str]
    average_ranks: list[float] | None = None
    friedman: dict[str, Any] | None = None
    aligned_ranks: dict[str, Any] | None = None
    quade: dict[str, Any] | None = None
    posthoc: PosthocRead | None = None


class SuiteLeaderboardRead(BaseModel):
    """Archived sets over a suite and dimension: mean log10 v, coverage, Friedman family."""

    model_config = ConfigDict(extra="forbid")
    suite: str
    dim: int
    budget: int | None
    aggregate: LeaderboardAggregate
    functions: list[str] = Field(description="functions with any ranked set, in order")
    entries: list[SuiteEntry] = Field(
        description="full coverage first, then by mean log10 v ascending, then set id"
    )
    excluded: list[ExcludedSet] = Field(description="per function, as GET /v1/leaderboards/{id}")
    family: SuiteFamily
    pending: list[Awaited] = Field(description="default tables that some functions wait for")
    warnings: list[str]
    provenance: dict[str, Any]
