"""Schemas of ``POST /v1/absolute-ranks``."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.schemas.common import STRICT_REQUEST, FiniteFloat, FunctionId, field_error

Tail = Literal["auto", "power", "linear", "paper"]
Regions = Literal["auto", "domain", "nested"]
Aggregate = Literal["best", "worst", "median", "lower-median", "order", "mean"]
"""How ``r`` runs were summarised: an order statistic (best, worst, median of an odd ``r``,
lower-median = ``ceil(r/2)``-th best, order = ``k``-th best), the median of an even ``r`` (mean of
the two middle runs) or the mean."""
RUNS_AGGREGATES = ("best", "worst", "median", "lower-median", "mean")
"""Aggregates that ``runs_by_algorithm`` computes from the runs (``order`` needs one ``k``)."""

MAX_BUDGET = 10**15
"""Largest budget c (evaluations per run) accepted."""
MAX_RUNS = 10_000
MAX_TAIL_K = 100_000
MAX_TABLE_ID_LENGTH = 64
MAX_ALGORITHM_NAME_LENGTH = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

RunValues = Annotated[
    list[FiniteFloat],
    Field(
        min_length=1,
        max_length=MAX_RUNS,
        description=f"metric values of the algorithm's runs (one per run, at most {MAX_RUNS})",
    ),
]


class RankRequest(BaseModel):
    """Metric values to turn into absolute ranks ``v``."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "function_id": "bbob/f15/i1/d10",
                    "values": [1012.5, 1040.0, 1100.25],
                    "budget": 1000,
                    "tail": "auto",
                },
                {"function_id": "classic/sphere/d10", "values": [1e-8, 0.5], "values_are": "error"},
                {
                    "function_id": "classic/sphere/d10",
                    "runs_by_algorithm": {
                        "DE": [2.1e-9, 4.0e-9, 1.2e-8, 3.3e-9],
                        "PSO": [0.012, 0.4, 0.03, 0.0071],
                        "random search": [21.5],
                    },
                    "values_are": "error",
                    "budget": 10000,
                    "aggregate": "mean",
                },
            ]
        },
    )
    function_id: FunctionId | None = Field(
        None,
        description="a hosted function; its default table (full domain, N=2^16, seed 0) is used",
    )
    table_id: str | None = Field(
        None,
        min_length=1,
        max_length=MAX_TABLE_ID_LENGTH,
        description="a specific table (e.g. a δ-box or a larger N); exactly one of function_id "
        "and table_id",
    )
    sample: list[FiniteFloat] | None = Field(
        None,
        min_length=2,
        description="your own function instead of a hosted one: values of f at N points drawn "
        "uniformly from its domain (at most the setting max_inline_sample); the values are "
        "ranked against it by Eq. 28 directly (exact, nothing stored; POST /v1/tables with "
        "samples stores a table instead). Exactly one of function_id, table_id and sample",
        examples=[[1.0, 3.0, 4.0, 6.0]],
    )
    f_opt: FiniteFloat | None = Field(
        None,
        description="with sample: the minimum f* of your function, as you state it (not "
        "verified); enables the tails that need f* and values_are='error'",
    )
    f_max: FiniteFloat | None = Field(
        None,
        description="with sample: the maximum of f over the domain, as stated (upper tail "
        "linear to (f_max, 1))",
    )
    values: list[FiniteFloat] | None = Field(
        None,
        min_length=1,
        description="metric values t (best f found per run, or an aggregate of `runs` runs; or "
        "errors, see values_are); exactly one of values and runs_by_algorithm",
    )
    runs_by_algorithm: dict[str, RunValues] | None = Field(
        None,
        min_length=1,
        description="the runs of each algorithm: {name: [one value per run]} (lists may differ "
        "in length r). The service aggregates each list (see aggregate) and ranks the aggregate "
        "with runs = its r, and ranks every run alone (runs = 1, the same budget). Names: "
        f"1-{MAX_ALGORITHM_NAME_LENGTH} characters, no control characters",
        examples=[{"DE": [2.1e-9, 4.0e-9, 1.2e-8, 3.3e-9], "PSO": [0.012, 0.4]}],
    )
    values_are: Literal["f", "error"] = Field(
        "f", description="'error' means t - f*; f* is added before ranking"
    )
    budget: int = Field(
        1, ge=1, le=MAX_BUDGET, description="c: evaluations per run (best-of-c, Eq. 19)"
    )
    runs: int = Field(
        1,
        ge=1,
        le=MAX_RUNS,
        description="r: runs aggregated into each value (with runs_by_algorithm r is the length "
        "of each list: leave runs out)",
    )
    aggregate: Aggregate | None = Field(
        None,
        description="how the r runs were (values) or are to be (runs_by_algorithm) aggregated: "
        "best, worst, median (even r: mean of the two middle runs), lower-median "
        "(ceil(r/2)-th best), order (k-th best; values only) or mean; required when r > 1",
    )
    order: int | None = Field(
        None,
        ge=1,
        le=MAX_RUNS,
        description="k for aggregate='order' (k-th best of r); required then, and <= runs",
    )
    tail: Tail = Field("auto", description="lower-tail model below the samples")
    tail_k: int = Field(
        100,
        ge=2,
        le=MAX_TAIL_K,
        description="anchor order statistic of the power tail (capped by the table's stored "
        "lowest samples; the response warns when the anchor differs)",
    )
    confidence: float = Field(0.95, gt=0.0, lt=1.0, description="level of every interval")
    use_analytic: bool = Field(
        True, description="with function_id: use the exact v1 where one exists (sphere, cone)"
    )
    regions: Regions = Field(
        "auto",
        description="with function_id: 'domain' = the default full-domain table; 'nested' = the "
        "function's nested-region ladder (ranks far below 1/N without "
        "extrapolation; queued when missing, 409 while it builds); 'auto' = the ladder when it "
        "is ready, else the domain table, and when a value lies below the table's lowest "
        "sample the ladder is queued and those values are marked provisional until it is ready",
    )

    @model_validator(mode="after")
    def _cross_field_rules(self) -> RankRequest:
        self._sample_rules()
        if self.function_id is None and self.table_id is None and self.sample is None:
            raise field_error("function_id", "give exactly one of function_id, table_id or sample")
        if self.function_id is not None and self.table_id is not None:
            raise field_error("table_id", "give either function_id or table_id, not both")
        if self.table_id is not None and self.regions == "nested":
            raise field_error(
                "regions", "regions='nested' needs a function_id (a table_id is one region)"
            )
        if self.runs_by_algorithm is not None:
            self._runs_rules(self.runs_by_algorithm)
            return self
        if self.values is None:
            raise field_error("values", "give exactly one of values or runs_by_algorithm")
        if self.runs > 1 and self.aggregate is None:
            raise field_error(
                "aggregate",
                "aggregate is required when runs > 1 (best, worst, median, lower-median, order "
                "or mean)",
            )
        if self.aggregate == "order" and self.order is None:
            raise field_error("order", "order is required when aggregate='order'")
        if self.order is not None and self.order > self.runs:
            raise field_error("order", f"order must not exceed runs ({self.runs})")
        return self

    def _sample_rules(self) -> None:
        """``sample`` replaces function_id/table_id; ``f_opt``/``f_max`` only go with it."""
        if self.sample is None:
            stated = next((f for f in ("f_opt", "f_max") if getattr(self, f) is not None), None)
            if stated is not None:
                raise field_error(stated, f"{stated} describes an inline sample: send sample too")
            return
        other = next((f for f in ("function_id", "table_id") if getattr(self, f) is not None), None)
        if other is not None:
            raise field_error(other, f"give either {other} or sample, not both")
        if self.regions == "nested":
            raise field_error("regions", "regions='nested' needs a function_id")
        if self.f_opt is not None and self.f_max is not None and self.f_max < self.f_opt:
            raise field_error("f_max", "f_max must be >= f_opt")
        # as POST /v1/tables with samples: a statement the sample contradicts is bad input
        if self.f_opt is not None and min(self.sample) < self.f_opt:
            raise field_error(
                "f_opt",
                f"the smallest sample {min(self.sample)!r} is below the stated f* {self.f_opt!r}",
            )
        if self.f_max is not None and max(self.sample) > self.f_max:
            raise field_error(
                "f_max",
                f"the largest sample {max(self.sample)!r} is above the stated f_max {self.f_max!r}",
            )

    def _runs_rules(self, runs: dict[str, list[float]]) -> None:
        """``runs_by_algorithm``: names, and the options that it replaces."""
        if self.values is not None:
            raise field_error(
                "runs_by_algorithm", "give either values or runs_by_algorithm, not both"
            )
        for name in runs:
            if not name or len(name) > MAX_ALGORITHM_NAME_LENGTH or _CONTROL.search(name):
                shown = name if len(name) <= 40 else name[:40] + "..."
                raise field_error(
                    "runs_by_algorithm",
                    f"algorithm names must have 1 to {MAX_ALGORITHM_NAME_LENGTH} characters and "
                    f"no control characters; got {shown!r} ({len(name)} characters)",
                )
        if self.runs != 1:
            raise field_error(
                "runs", "with runs_by_algorithm, r is the length of each list: leave runs out"
            )
        if self.order is not None or self.aggregate == "order":
            raise field_error(
                "aggregate",
                "aggregate='order' needs one k for all algorithms; with runs_by_algorithm use "
                f"one of {', '.join(RUNS_AGGREGATES)}",
            )
        if self.aggregate is None and any(len(v) > 1 for v in runs.values()):
            raise field_error(
                "aggregate",
                "aggregate is required when an algorithm has more than one run (one of "
                f"{', '.join(RUNS_AGGREGATES)})",
            )


class Awaited(BaseModel):
    """A table or ladder that a provisional answer waits for (poll ``location``, or send the
    same request again)."""

    kind: Literal["default-table", "ladder"]
    status: str = Field(description="not-built, queued, building, merging or failed")
    table_id: str | None = Field(
        None, description="the table awaited (for a ladder: the first level not ready)"
    )
    table_ids: list[str] | None = Field(
        None, description="a ladder's tables, level 0 (the domain) first"
    )
    location: str | None = Field(None, description="where to follow the build (GET it)")
    table_request: dict[str, Any] | None = Field(
        None, description="the POST /v1/tables body that builds it (when it is not built)"
    )
    detail: str


class RankInterval(BaseModel):
    """An interval for ``v`` at the request's confidence level.

    A provisional rank (``provisional: true``) has no lower end: ``log10_lo`` is null and
    ``v_lo`` is 0 (a tail model bounds the true ``v`` only from above).
    """

    log10_lo: float | None
    log10_hi: float | None
    v_lo: float
    v_hi: float


_V = "may underflow to 0.0 below 1e-308; log10_v is authoritative"
_LOG10_V = "null only when v is exactly 0: t below f*, or t = f* without an atom"
_METHOD = (
    "interpolated | tail-power | tail-linear | tail-paper | analytic | atom | "
    "upper-tail | at-or-below-minimum (nested-<one of these> on a ladder); over runs that "
    "are no order statistic: mean-power | mean-convolution | mean-exact | median-integral | "
    "median-exact"
)
_PROVISIONAL = (
    "true: the value lies below the lowest sample y_1 of the domain table and "
    "above f*, where a tail model extrapolates, and the function's nested-region ladder "
    "that ranks it without extrapolation is awaited (see the response's `awaiting`); v is "
    "the tail model's meanwhile and the interval has no lower end. Sent only when true"
)


class RankItem(BaseModel):
    """The absolute rank of one value (lower is better)."""

    value: float
    v: float = Field(description=_V)
    log10_v: float | None = Field(description=_LOG10_V)
    method: str = Field(description=_METHOD)
    interval: RankInterval
    provisional: bool = Field(
        False,
        exclude_if=lambda v: not v,  # sent only when true: final answers keep their bytes
        description=_PROVISIONAL,
    )


class AlgorithmRank(BaseModel):
    """One algorithm of ``runs_by_algorithm``: the rank of its aggregate and of every run.

    ``value`` is the aggregate of its runs (in the units sent: an error when values_are='error');
    ``v`` ranks it among aggregates of ``runs`` uniform-random-search runs of the same budget.
    """

    # RankItem's fields after algorithm, runs and aggregate, provisional last: the order the
    # answer has always had (not a subclass of RankItem, whose fields would come first)

    algorithm: str
    runs: int = Field(description="r: the number of runs sent for this algorithm")
    aggregate: str = Field(description="how its runs were aggregated ('best' when r = 1)")
    value: float
    v: float = Field(description=_V)
    log10_v: float | None = Field(description=_LOG10_V)
    method: str = Field(description=_METHOD)
    interval: RankInterval
    transform: dict[str, Any] = Field(
        description="budget, runs, aggregate and order of this rank; with mean or an even "
        "median also the numerical method, grid and error ('aggregate' block)"
    )
    per_run: list[RankItem] = Field(
        description="every run ranked alone (runs = 1, the same budget), in the order sent"
    )
    provisional: bool = Field(
        False,
        exclude_if=lambda v: not v,  # sent only when true: final answers keep their bytes
        description=_PROVISIONAL,
    )


class RankResponse(BaseModel):
    """Absolute ranks with their provenance."""

    model_config = ConfigDict(
        # the open blocks (source, tail, provenance) are sent as the service built them: a
        # non-finite float there is written as it always was (Infinity), not as null
        ser_json_inf_nan="constants",
        json_schema_extra={
            "examples": [
                {
                    "function_id": "classic/sphere/d2",
                    "source": {"kind": "analytic", "form": "sphere", "region": "domain"},
                    "budget": 1,
                    "runs": 1,
                    "aggregate": "best",
                    "results": [
                        {
                            "value": 1.0,
                            "v": 0.0299,
                            "log10_v": -1.524,
                            "method": "analytic",
                            "interval": {
                                "log10_lo": -1.524,
                                "log10_hi": -1.524,
                                "v_lo": 0.0299,
                                "v_hi": 0.0299,
                            },
                        }
                    ],
                    "algorithms": None,
                    "tail": {"mode": "analytic", "kind": "sphere"},
                    "warnings": [],
                    "provenance": {"service": "absrank", "request_sha256": "9f2c..."},
                },
                {
                    "function_id": "classic/sphere/d2",
                    "source": {"kind": "analytic", "form": "sphere", "region": "domain"},
                    "budget": 1,
                    "runs": None,
                    "aggregate": "mean",
                    "results": [],
                    "algorithms": [
                        {
                            "algorithm": "DE",
                            "runs": 2,
                            "aggregate": "mean",
                            "value": 0.015,
                            "v": 4.04e-7,
                            "log10_v": -6.394,
                            "method": "mean-power",
                            "interval": {
                                "log10_lo": -6.394,
                                "log10_hi": -6.394,
                                "v_lo": 4.04e-7,
                                "v_hi": 4.04e-7,
                            },
                            "transform": {
                                "budget": 1,
                                "runs": 2,
                                "aggregate": "mean",
                                "order": None,
                                "aggregate_method": {"statistic": "mean", "cells": 0},
                            },
                            "per_run": [
                                {
                                    "value": 0.01,
                                    "v": 3.0e-4,
                                    "log10_v": -3.523,
                                    "method": "analytic",
                                    "interval": {
                                        "log10_lo": -3.523,
                                        "log10_hi": -3.523,
                                        "v_lo": 3.0e-4,
                                        "v_hi": 3.0e-4,
                                    },
                                },
                                {
                                    "value": 0.02,
                                    "v": 5.99e-4,
                                    "log10_v": -3.222,
                                    "method": "analytic",
                                    "interval": {
                                        "log10_lo": -3.222,
                                        "log10_hi": -3.222,
                                        "v_lo": 5.99e-4,
                                        "v_hi": 5.99e-4,
                                    },
                                },
                            ],
                        }
                    ],
                    "tail": {"mode": "analytic", "kind": "sphere"},
                    "warnings": [],
                    "provenance": {"service": "absrank", "request_sha256": "51ab..."},
                },
            ]
        },
    )
    function_id: str
    source: dict[str, Any]
    budget: int
    runs: int | None = Field(
        None, description="r of every value; null with runs_by_algorithm (see algorithms[].runs)"
    )
    aggregate: str
    results: list[RankItem] = Field(
        description="one per value sent in values, in order; empty with runs_by_algorithm"
    )
    algorithms: list[AlgorithmRank] | None = Field(
        None, description="with runs_by_algorithm: one per algorithm, in the order sent"
    )
    tail: dict[str, Any] = Field(
        description="the models behind v1 (tail, beta, anchor, ...) and, with values, the "
        "transform; with runs_by_algorithm each algorithm has its own transform"
    )
    warnings: list[str]
    awaiting: Awaited | None = Field(
        None,
        exclude_if=lambda v: v is None,  # sent only with provisional results
        description="with provisional results: the nested-region ladder they wait for (queued "
        "when the caller may queue builds); send the same request again once it is ready. "
        "Sent only then",
    )
    provenance: dict[str, Any]
