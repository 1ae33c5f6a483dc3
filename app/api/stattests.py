"""Single statistical tests for users who already have the matrix or the two samples."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Response
from pydantic import BaseModel
from pydantic_core import to_json

from app.api.deps import JsonBody, SettingsDep
from app.config import Settings
from app.schemas.common import BODY_PROBLEMS, problem_responses
from app.schemas.machines import CrossMachineSignRequest
from app.schemas.stattests import (
    BradleyTerryRequest,
    FriedmanRequest,
    KSRequest,
    PermutationRequest,
    PosthocRequest,
    RankSumRequest,
    SignRequest,
    TestResponse,
    WilcoxonRequest,
)
from app.services import machines
from app.services import stattests as service

router = APIRouter(prefix="/v1/tests", tags=["statistical tests"])

_ROUTE = {
    "response_model": TestResponse,
    "dependencies": [JsonBody],
    "responses": problem_responses(409, *BODY_PROBLEMS),
}


def _json(body: dict) -> Response:  # type: ignore[type-arg]
    return Response(to_json(body), media_type="application/json")


@router.post("/friedman", **_ROUTE)
def friedman(body: FriedmanRequest, settings: SettingsDep) -> Response:
    """Run Friedman (tie-corrected), Iman–Davenport, aligned-ranks and Quade tests on a matrix."""
    return _json(service.friedman(body, settings))


@router.post("/posthoc", **_ROUTE)
def posthoc(body: PosthocRequest, settings: SettingsDep) -> Response:
    """Compare Friedman ranks pairwise (Nemenyi CD, Shaffer, ...) or against a control."""
    return _json(service.posthoc(body, settings))


@router.post("/bradley-terry", **_ROUTE)
def bradley_terry(body: BradleyTerryRequest, settings: SettingsDep) -> Response:
    """Fit Bradley–Terry strengths to the pairwise wins over problems."""
    return _json(service.bradley_terry(body, settings))


@router.post("/wilcoxon", **_ROUTE)
def wilcoxon(body: WilcoxonRequest, settings: SettingsDep) -> Response:
    """Run the Wilcoxon signed-rank test on paired values (exact with ties and zeros)."""
    return _json(service.wilcoxon(body, settings))


@router.post("/sign", **_ROUTE)
def sign(body: SignRequest, settings: SettingsDep) -> Response:
    """Run the exact sign test on paired values (ties dropped and counted)."""
    return _json(service.sign(body, settings))


@router.post("/rank-sum", **_ROUTE)
def rank_sum(body: RankSumRequest, settings: SettingsDep) -> Response:
    """Run the Wilcoxon rank-sum / Mann–Whitney U test on two samples, with A12."""
    return _json(service.rank_sum(body, settings))


@router.post("/ks", **_ROUTE)
def ks(body: KSRequest, settings: SettingsDep) -> Response:
    """Run the two-sample Kolmogorov–Smirnov test (exact, conditional on ties, when feasible)."""
    return _json(service.ks(body, settings))


@router.post("/permutation", **_ROUTE)
def permutation(body: PermutationRequest, settings: SettingsDep) -> Response:
    """Run a permutation test on the difference of medians or means of two samples."""
    return _json(service.permutation_test(body, settings))


#: path -> (request model, use case): the OpenAPI document shows, for each test, the real answer
#: to its first request example (computed once, when the document is generated).
ANSWERED_EXAMPLES: dict[str, tuple[type[BaseModel], Callable[..., dict[str, Any]]]] = {
    "/v1/tests/friedman": (FriedmanRequest, service.friedman),
    "/v1/tests/posthoc": (PosthocRequest, service.posthoc),
    "/v1/tests/bradley-terry": (BradleyTerryRequest, service.bradley_terry),
    "/v1/tests/wilcoxon": (WilcoxonRequest, service.wilcoxon),
    "/v1/tests/sign": (SignRequest, service.sign),
    "/v1/tests/rank-sum": (RankSumRequest, service.rank_sum),
    "/v1/tests/ks": (KSRequest, service.ks),
    "/v1/tests/permutation": (PermutationRequest, service.permutation_test),
    "/v1/tests/sign-cross-machine": (
        CrossMachineSignRequest,
        lambda body, _settings: machines.sign_cross_machine(body),
    ),
}


def response_examples(settings: Settings) -> dict[str, Any]:
    """``{path: answer}`` of each test's first request example, as the API answers it."""
    out = {}
    for path, (model, use_case) in ANSWERED_EXAMPLES.items():
        example = (model.model_config.get("json_schema_extra") or {})["examples"][0]
        out[path] = use_case(model.model_validate(example), settings)
    return out
