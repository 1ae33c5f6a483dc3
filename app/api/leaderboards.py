"""Leaderboards of archived result sets by absolute rank."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Request, Response

from app.api.deps import (
    DispatcherDep,
    LadderCachesDep,
    MayQueueBuildsDep,
    SessionmakerDep,
    SettingsDep,
    TableCachesDep,
)
from app.api.paper_formats import (
    NOT_ACCEPTABLE,
    TABLE_RESPONSE,
    FormatQuery,
    negotiated,
    table_response,
)
from app.errors import InvalidInput
from app.schemas.common import WRONG_KEY, invalid, problem_responses, unknown_function
from app.schemas.leaderboards import (
    LeaderboardAggregate,
    LeaderboardRead,
    SuiteLeaderboardRead,
)
from app.schemas.ranks import MAX_BUDGET
from app.schemas.stattests import PosthocMethod
from app.services import leaderboard_tables, suite_leaderboards
from app.services import leaderboards as service

router = APIRouter(prefix="/v1/leaderboards", tags=["leaderboards"])

BudgetQuery = Annotated[
    int | None,
    Query(
        ge=1,
        le=MAX_BUDGET,
        description="evaluations per run c; without it, each set at its own final budget",
        examples=[1000],
    ),
]
AggregateQuery = Annotated[
    LeaderboardAggregate,
    Query(description="how each set's runs are aggregated before ranking", examples=["median"]),
]
AlphaQuery = Annotated[
    float, Query(gt=0.0, lt=1.0, description="significance level of the tests", examples=[0.05])
]


@router.get(
    "",
    response_model=SuiteLeaderboardRead,
    summary="Rank archived result sets over a suite and dimension",
    responses=TABLE_RESPONSE
    | problem_responses(
        WRONG_KEY,
        NOT_ACCEPTABLE,
        invalid("dim", "Field required", "missing"),
    ),
)
def suite_leaderboard(
    request: Request,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    may_queue_builds: MayQueueBuildsDep,
    cache: TableCachesDep,
    ladder_cache: LadderCachesDep,
    suite: Annotated[
        str,
        Query(
            min_length=1,
            max_length=32,
            description="a suite (GET /v1/functions)",
            examples=["bbob"],
        ),
    ],
    dim: Annotated[int, Query(ge=1, le=10_000, description="the dimension d", examples=[10])],
    budget: BudgetQuery = None,
    aggregate: AggregateQuery = "median",
    posthoc: Annotated[
        PosthocMethod,
        Query(description="post-hoc family over the fully covering sets", examples=["nemenyi"]),
    ] = "nemenyi",
    alpha: AlphaQuery = 0.05,
    instances: Annotated[
        str,
        Query(
            max_length=200,
            pattern=r"^\d+(-\d+)?(,\d+(-\d+)?)*$",
            description="suites with instances (bbob): which instances' functions make the "
            "board, e.g. 1 or 1-5,71-80 (default 1, the instance of the archive's seeded sets "
            "and default tables); ignored by suites without instances",
            examples=["1"],
        ),
    ] = "1",
    functions: Annotated[
        str | None,
        Query(
            max_length=2000,
            pattern=r"^[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*$",
            description="only these functions of the suite, by the name in their id, e.g. "
            "f15,f16,f17 (default: every registered function at dim)",
            examples=["f15,f16,f17"],
        ),
    ] = None,
    format: FormatQuery = None,
) -> SuiteLeaderboardRead | Response:
    """Rank archived result sets by mean log10 v over a suite's functions at one dimension.

    The board's functions are the suite's registered functions at ``dim`` (of ``instances``,
    for suites with instances; only ``functions`` when given): fixed by the request, never by
    what happens to be archived, so a set's coverage and the family of fully covering sets do
    not change when an unrelated set is stored."""
    fmt = negotiated(request, format)
    if posthoc in ("bonferroni-dunn", "li"):
        raise InvalidInput(
            f"posthoc {posthoc!r} compares against a control; use an all-pairs family",
            field="posthoc",
        )
    board = suite_leaderboards.suite_leaderboard(
        sm,
        settings,
        dispatcher,
        suite=suite,
        dim=dim,
        budget=budget,
        aggregate=aggregate,
        posthoc=posthoc,
        alpha=alpha,
        may_queue_builds=may_queue_builds,
        cache=cache,
        ladder_cache=ladder_cache,
        instances=instances,
        functions=functions,
    )
    if fmt != "json":
        return table_response(leaderboard_tables.suite_table(board), fmt)
    return board


@router.get(
    "/{function_id:path}",
    response_model=LeaderboardRead,
    summary="Rank archived result sets on one function",
    responses=TABLE_RESPONSE
    | problem_responses(
        WRONG_KEY,
        unknown_function(),
        NOT_ACCEPTABLE,
        invalid("budget", "Input should be greater than or equal to 1", "greater_than_equal"),
    ),
)
def function_leaderboard(
    function_id: Annotated[
        str,
        Path(description="a hosted function id", examples=["bbob/f1/i1/d10"]),
    ],
    request: Request,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    may_queue_builds: MayQueueBuildsDep,
    cache: TableCachesDep,
    ladder_cache: LadderCachesDep,
    budget: BudgetQuery = None,
    aggregate: AggregateQuery = "median",
    alpha: AlphaQuery = 0.05,
    format: FormatQuery = None,
) -> LeaderboardRead | Response:
    """Rank every archived result set on a function by the absolute rank of its runs."""
    fmt = negotiated(request, format)
    board = service.function_leaderboard(
        sm,
        settings,
        dispatcher,
        function_id,
        budget=budget,
        aggregate=aggregate,
        alpha=alpha,
        may_queue_builds=may_queue_builds,
        cache=cache,
        ladder_cache=ladder_cache,
    )
    if fmt != "json":
        return table_response(leaderboard_tables.function_table(board), fmt)
    return board
