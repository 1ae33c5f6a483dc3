"""Schemas of ``/v1/pareto-rankings`` and ``/v1/indicators``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict

from app.schemas.common import STRICT_REQUEST, FiniteFloat
from app.schemas.stattests import NAME, Number

IndicatorName = Literal["hv", "igd", "igd_plus", "gd", "gd_plus", "spacing", "spread", "delta_p"]
Point = Annotated[list[FiniteFloat], Field(min_length=1, max_length=50)]
Front = Annotated[list[Point], Field(min_length=1, description="points × objectives, minimized")]

_INDICATOR_EXAMPLE: JsonDict = {
    "front": [[0.1, 0.9], [0.4, 0.5], [0.9, 0.1]],
    "reference_front": [[0.0, 1.0], [0.25, 0.5], [0.5, 0.25], [1.0, 0.0]],
    "reference_point": [1.1, 1.1],
    "indicators": ["hv", "igd", "igd_plus"],
}


class IndicatorRequest(BaseModel):
    """One front and its problem's references: the indicators to compute."""

    model_config = STRICT_REQUEST | ConfigDict(json_schema_extra={"examples": [_INDICATOR_EXAMPLE]})
    front: Front
    reference_front: Front | None = Field(None, description="needed by igd, gd, spread, delta_p, …")
    reference_point: Point | None = Field(
        None, description="needed by hv (explicit: never per-set normalization)"
    )
    indicators: list[IndicatorName] = Field(
        default=["hv", "igd", "igd_plus", "gd", "gd_plus", "spacing", "spread", "delta_p"],
        min_length=1,
    )
    p: float = Field(1.0, gt=0.0, le=100.0, allow_inf_nan=False, description="p of delta_p")


class ReferenceFrontFilterRead(BaseModel):
    """Rows removed from the reference front before the indicators used it."""

    n_given: int = Field(ge=1, description="rows sent")
    duplicates_removed: int = Field(ge=0, description="repeated rows removed (kept once)")
    dominated_removed: int = Field(
        ge=0, description="distinct rows removed because another row dominates them"
    )
    n_used: int = Field(ge=1, description="non-dominated distinct rows the indicators used")


class HvUnderflowRead(BaseModel):
    """A positive hypervolume below the normal float range, and its log10 without underflow."""

    kind: Literal["hv-underflow"] = "hv-underflow"
    hv: float = Field(description="the float value (0 or subnormal)")
    log10_hv: float | None = Field(
        description="log10 of the volume after exact power-of-two scaling (None: not possible)"
    )
    points_counted: int = Field(ge=1, description="points strictly dominating the reference point")
    message: str


class IndicatorRead(BaseModel):
    """Indicator values of one front, every setting echoed, and what was filtered or lost."""

    model_config = ConfigDict(extra="allow")
    values: dict[str, float] = Field(description="one value per requested indicator")
    settings: dict[str, Any]
    log10_hv: float | None = Field(
        description="log10 of hv, finite below the float range (None without hv or at HV = 0)"
    )
    reference_front_filter: ReferenceFrontFilterRead | None = Field(
        description="repeated and dominated rows removed from the reference front (None "
        "without one); the indicators use the rest"
    )
    hv_underflow: HvUnderflowRead | None = Field(
        description="set when a positive hv is below the float range (see log10_hv)"
    )
    warnings: list[str]
    provenance: dict[str, Any]


class ScoreRow(BaseModel):
    """One run's value of one quality indicator."""

    model_config = STRICT_REQUEST
    problem: NAME
    algorithm: NAME
    run: int = Field(ge=0, le=10**9)
    indicator: NAME
    value: FiniteFloat


class FrontRow(BaseModel):
    """One run's final front."""

    model_config = STRICT_REQUEST
    problem: NAME
    algorithm: NAME
    run: int = Field(ge=0, le=10**9)
    front: Front


class References(BaseModel):
    """A problem's reference front and reference point (for indicators from fronts)."""

    model_config = STRICT_REQUEST
    reference_front: Front | None = None
    reference_point: Point | None = None


class ParetoRankingCreate(BaseModel):
    """Rank algorithms by Pareto levels of their runs' indicator vectors (Ibrahim et al.)."""

    model_config = STRICT_REQUEST | ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "scores": [
                        {"problem": p, "algorithm": a, "run": r, "indicator": i, "value": v}
                        for p, a, r, i, v in [
                            ("zdt1", "NSGA-II", 0, "hv", 0.65),
                            ("zdt1", "NSGA-II", 0, "igd", 0.02),
                            ("zdt1", "NSGA-II", 1, "hv", 0.64),
                            ("zdt1", "NSGA-II", 1, "igd", 0.03),
                            ("zdt1", "MOEA/D", 0, "hv", 0.66),
                            ("zdt1", "MOEA/D", 0, "igd", 0.04),
                            ("zdt1", "MOEA/D", 1, "hv", 0.60),
                            ("zdt1", "MOEA/D", 1, "igd", 0.05),
                        ]
                    ],
                    "orientation": {"hv": "max", "igd": "min"},
                }
            ]
        }
    )
    scores: list[ScoreRow] | None = Field(
        None, description="indicator values; give exactly one of scores, csv and fronts"
    )
    csv: str | None = Field(
        None,
        max_length=64 * 1024 * 1024,
        description="the same rows as CSV with header problem,algorithm,run,indicator,value",
    )
    fronts: list[FrontRow] | None = Field(None, description="final fronts of the runs")
    references: dict[NAME, References] | None = Field(
        None, description="with fronts: per problem, its reference front and reference point"
    )
    indicators: list[IndicatorName] = Field(
        default=["hv", "igd_plus"], min_length=1, description="with fronts: indicators to compute"
    )
    orientation: dict[NAME, Literal["min", "max"]] = Field(
        default_factory=dict,
        description="per indicator (default min); from fronts hv is max and the others min",
    )
    dominance: Literal["pareto", "epsilon"] = Field(
        "pareto", description="plain Pareto dominance, or the epsilon-dominance variant"
    )


class RunLevel(BaseModel):
    """One run's non-dominated level on a problem (1 = on the first front)."""

    algorithm: str
    run: int
    level: int


class Specialist(BaseModel):
    """A run that is best on some indicators alone (it may still be dominated)."""

    algorithm: str
    run: int
    indicators: list[str] = Field(description="the indicators on which it is best")


class RuleRanking(BaseModel):
    """Scores and ranks of the algorithms under each counting rule (olympic, linear, ...)."""

    model_config = ConfigDict(extra="allow")
    algorithms: list[str] | None = Field(
        None, description="the algorithms ranked (those with runs on the problem)"
    )
    counts: list[list[int]] | None = Field(
        None, description="algorithms × levels: runs of each algorithm on each level"
    )
    scores: dict[str, list[Number]] = Field(description="per rule, one score per algorithm")
    ranks: dict[str, list[float]] = Field(description="per rule, midranks (1 = best)")


class ProblemRanking(BaseModel):
    """One problem: each run's level, the level counts, the ranking and the specialists."""

    model_config = ConfigDict(extra="allow")
    problem: str
    warnings: list[str]
    runs: list[RunLevel]
    counts: list[list[int]] = Field(description="algorithms × levels (every algorithm)")
    ranking: RuleRanking | None = Field(description="null with fewer than 2 algorithms")
    specialists: list[Specialist]


class ParetoRankingRead(BaseModel):
    """A stored Pareto ranking: levels per run, count matrices, rule scores and ranks."""

    model_config = ConfigDict(extra="allow")
    id: str
    location: str
    algorithms: list[str]
    indicators: list[str]
    orientation: dict[str, Literal["min", "max"]] = Field(
        description="per indicator, whether lower or higher is better"
    )
    dominance: str = Field(description="the dominance relation between runs")
    tie_rule: str = Field(description="how runs of equal level tie")
    problems: list[ProblemRanking]
    overall: RuleRanking = Field(description="the level counts summed over problems, ranked")
    provenance: dict[str, Any]
