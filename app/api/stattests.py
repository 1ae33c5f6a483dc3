"""Single statistical tests for users who already have the matrix or the two samples."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from app.api.deps import JsonBody, SettingsDep
from app.api.paper_formats import (
    NOT_ACCEPTABLE,
    TABLE_RESPONSE,
    FormatQuery,
    negotiated,
    table_response,
)
from app.api.responses import dump, model_response
from app.api.work import admit_sync
from app.config import Settings
from app.errors import InvalidInput, NotApplicable
from app.schemas.common import (
    ProblemExample,
    body_problems,
    invalid,
    problem_responses,
    refused,
)
from app.schemas.machines import CrossMachineSignRequest
from app.schemas.stattests import (
    BradleyTerryRequest,
    BradleyTerryResponse,
    FriedmanRequest,
    FriedmanResponse,
    KSRequest,
    KSResponse,
    PermutationRequest,
    PermutationResponse,
    PosthocRequest,
    PosthocResponse,
    RankSumRequest,
    RankSumResponse,
    SignRequest,
    SignResponse,
    TestResponse,
    WilcoxonRequest,
    WilcoxonResponse,
)
from app.services import costs, machines, stattest_tables
from app.services import stattests as service
from app.services.paper_tables import PaperTable

router = APIRouter(prefix="/v1/tests", tags=["statistical tests"])

Answer = TypeVar("Answer", bound=BaseModel)


def _answered(
    model: type[Answer],
    answer: Answer,
    fmt: str,
    table: Callable[[Answer], PaperTable],
) -> Response:
    """``answer`` as JSON (validated by ``model``) or as its paper table in ``fmt``."""
    if fmt != "json":
        return table_response(table(answer), fmt)
    return model_response(model, answer)


#: The 422 of the two-sample tests: an empty sample.
_EMPTY_X = invalid("x", "List should have at least 1 item after validation, not 0", "too_short")
#: The 422 of the paired tests: samples of different lengths.
_UNPAIRED = refused(InvalidInput, "paired samples must have equal lengths: x has 2, y has 1", "y")


def _exact_refused(detail: str) -> ProblemExample:
    """The 409 of a test asked for its exact distribution beyond the configured limit."""
    return refused(
        NotApplicable,
        detail,
        "method",
        description="method='exact' was asked for beyond the exact method's limit",
    )


@router.post(
    "/friedman",
    summary="Friedman, Iman–Davenport, aligned ranks and Quade",
    responses=TABLE_RESPONSE
    | problem_responses(
        NOT_ACCEPTABLE,
        *body_problems(
            refused(
                InvalidInput,
                "at least 2 problems (rows) are needed; 1 left after the missing policy",
                "values",
            )
        ),
    ),
    response_model=FriedmanResponse,
    dependencies=[JsonBody],
)
def friedman(
    body: FriedmanRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Run Friedman (tie-corrected), Iman–Davenport, aligned-ranks and Quade tests on a matrix."""
    fmt = negotiated(request, format)
    return _answered(
        FriedmanResponse, service.friedman(body, settings), fmt, stattest_tables.friedman_table
    )


@router.post(
    "/posthoc",
    summary="Post-hoc tests on Friedman ranks: all pairs or against a control",
    responses=TABLE_RESPONSE
    | problem_responses(
        NOT_ACCEPTABLE,
        *body_problems(refused(InvalidInput, "control 'DE' is not an algorithm", "control")),
    ),
    response_model=PosthocResponse,
    dependencies=[JsonBody],
)
def posthoc(
    body: PosthocRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Compare Friedman ranks pairwise (Nemenyi CD, Shaffer, ...) or against a control."""
    fmt = negotiated(request, format)
    estimate = costs.posthoc_cost(body.method, body.values, body.control is not None)
    admit_sync(estimate, settings, field="values")
    return _answered(
        PosthocResponse, service.posthoc(body, settings), fmt, stattest_tables.posthoc_table
    )


@router.post(
    "/bradley-terry",
    summary="Bradley–Terry strengths from pairwise wins",
    responses=TABLE_RESPONSE
    | problem_responses(
        NOT_ACCEPTABLE,
        *body_problems(refused(InvalidInput, "algorithms has 1 names for 2 entries", "algorithms")),
    ),
    response_model=BradleyTerryResponse,
    dependencies=[JsonBody],
)
def bradley_terry(
    body: BradleyTerryRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Fit Bradley–Terry strengths to the pairwise wins over problems."""
    fmt = negotiated(request, format)
    return _answered(
        BradleyTerryResponse,
        service.bradley_terry(body, settings),
        fmt,
        stattest_tables.bradley_terry_table,
    )


@router.post(
    "/wilcoxon",
    summary="Wilcoxon signed-rank test on paired values",
    responses=TABLE_RESPONSE
    | problem_responses(
        NOT_ACCEPTABLE,
        _exact_refused(
            "exact Wilcoxon distribution requested for n_effective=500 nonzero differences, "
            "beyond the exact limit of 400; use method='auto' or 'asymptotic'"
        ),
        *body_problems(_UNPAIRED),
    ),
    response_model=WilcoxonResponse,
    dependencies=[JsonBody],
)
def wilcoxon(
    body: WilcoxonRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Run the Wilcoxon signed-rank test on paired values (exact with ties and zeros)."""
    fmt = negotiated(request, format)
    return _answered(
        WilcoxonResponse, service.wilcoxon(body, settings), fmt, stattest_tables.wilcoxon_table
    )


@router.post(
    "/sign",
    summary="Exact sign test on paired values",
    responses=TABLE_RESPONSE | problem_responses(NOT_ACCEPTABLE, *body_problems(_UNPAIRED)),
    response_model=SignResponse,
    dependencies=[JsonBody],
)
def sign(
    body: SignRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Run the exact sign test on paired values (ties dropped and counted)."""
    fmt = negotiated(request, format)
    return _answered(SignResponse, service.sign(body, settings), fmt, stattest_tables.sign_table)


@router.post(
    "/rank-sum",
    summary="Wilcoxon rank-sum / Mann–Whitney U test, with A12",
    responses=TABLE_RESPONSE
    | problem_responses(
        NOT_ACCEPTABLE,
        _exact_refused(
            "exact rank-sum distribution requested but cells=3.76e+11 > limit 5e+07 (beyond "
            "the exact limit); use method='auto' or 'asymptotic'"
        ),
        *body_problems(_EMPTY_X),
    ),
    response_model=RankSumResponse,
    dependencies=[JsonBody],
)
def rank_sum(
    body: RankSumRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Run the Wilcoxon rank-sum / Mann–Whitney U test on two samples, with A12."""
    fmt = negotiated(request, format)
    return _answered(
        RankSumResponse, service.rank_sum(body, settings), fmt, stattest_tables.rank_sum_table
    )


@router.post(
    "/ks",
    summary="Two-sample Kolmogorov–Smirnov test",
    responses=TABLE_RESPONSE
    | problem_responses(
        NOT_ACCEPTABLE,
        _exact_refused(
            "exact KS test requested but lattice points=1.025e+07 > limit 1e+07 (beyond the "
            "exact limit); use method='auto' or 'asymptotic'"
        ),
        *body_problems(_EMPTY_X),
    ),
    response_model=KSResponse,
    dependencies=[JsonBody],
)
def ks(
    body: KSRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Run the two-sample Kolmogorov–Smirnov test (exact, conditional on ties, when feasible)."""
    fmt = negotiated(request, format)
    return _answered(KSResponse, service.ks(body, settings), fmt, stattest_tables.ks_table)


@router.post(
    "/permutation",
    summary="Permutation test on the difference of medians or means",
    responses=TABLE_RESPONSE
    | problem_responses(
        NOT_ACCEPTABLE,
        _exact_refused(
            "the exact test is infeasible: C(200, 100) = ~10^59.0 splits exceed "
            "exact_max_splits = 1000000"
        ),
        *body_problems(_EMPTY_X),
    ),
    response_model=PermutationResponse,
    dependencies=[JsonBody],
)
def permutation(
    body: PermutationRequest, settings: SettingsDep, request: Request, format: FormatQuery = None
) -> Response:
    """Run a permutation test on the difference of medians or means of two samples."""
    fmt = negotiated(request, format)
    return _answered(
        PermutationResponse,
        service.permutation_test(body, settings),
        fmt,
        stattest_tables.permutation_table,
    )


#: path -> (request model, use case): the OpenAPI document shows, for each test, the real answer
#: to its first request example (computed once, when the document is generated).
ANSWERED_EXAMPLES: dict[str, tuple[type[BaseModel], type[BaseModel], Callable[..., object]]] = {
    "/v1/tests/friedman": (FriedmanRequest, FriedmanResponse, service.friedman),
    "/v1/tests/posthoc": (PosthocRequest, PosthocResponse, service.posthoc),
    "/v1/tests/bradley-terry": (BradleyTerryRequest, BradleyTerryResponse, service.bradley_terry),
    "/v1/tests/wilcoxon": (WilcoxonRequest, WilcoxonResponse, service.wilcoxon),
    "/v1/tests/sign": (SignRequest, SignResponse, service.sign),
    "/v1/tests/rank-sum": (RankSumRequest, RankSumResponse, service.rank_sum),
    "/v1/tests/ks": (KSRequest, KSResponse, service.ks),
    "/v1/tests/permutation": (PermutationRequest, PermutationResponse, service.permutation_test),
    "/v1/tests/sign-cross-machine": (
        CrossMachineSignRequest,
        TestResponse,
        lambda body, _settings: machines.sign_cross_machine(body),
    ),
}


def response_examples(settings: Settings) -> dict[str, Any]:
    """``{path: answer}`` of each test's first request example, as the API answers it."""
    out = {}
    for path, (model, response, use_case) in ANSWERED_EXAMPLES.items():
        example = model.model_json_schema()["examples"][0]
        out[path] = json.loads(dump(response, use_case(model.model_validate(example), settings)))
    return out
