"""Absolute ranks of metric values."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.routing import APIRoute
from pydantic import ValidationError

from app.api.deps import JsonBody, RankEnvDep, SettingsDep, rank_env
from app.api.jobs import ACCEPTED, prefers_async, submit_as_job
from app.api.responses import JSON
from app.api.work import admit_sync, run_controlled, sync_control
from app.domain.cost import Mode, WorkControl
from app.errors import TableNotBuilt
from app.schemas.common import (
    WRONG_KEY,
    ProblemExample,
    body_problems,
    invalid,
    problem_responses,
    unknown_function,
)
from app.schemas.ranks import RankRequest, RankResponse
from app.schemas.spread import RankSpreadRead, RankSpreadRequest
from app.services import costs, job_kinds
from app.services.ranks import RankAnswer, RankEnv, check_limits, rank_answer, reads_database
from app.services.spread import rank_spread

RANKS_PATH = "/v1/absolute-ranks"

FAST_CONTENT_TYPES = frozenset({"application/json", "application/json; charset=utf-8"})
"""``Content-Type`` headers, exactly as sent, whose bodies :class:`RankRoute` parses itself."""

Handler = Callable[[Request], Coroutine[Any, Any, Response]]


class RankRoute(APIRoute):
    """The routes of this router; ``POST /v1/absolute-ranks`` with a fast path for its body.

    FastAPI's handler reads the body, parses it with ``json.loads``, validates the objects by
    a ``TypeAdapter`` of :class:`RankRequest` and solves the dependency (:data:`RankEnvDep`)
    and its header parameter: about 250 µs of CPU for 1,000 values, as much again as the
    ranking (``bench/ranks_asgi.py``). A JSON body (``Content-Type`` in
    :data:`FAST_CONTENT_TYPES`) is validated here from its bytes instead
    (``RankRequest.model_validate_json``) and the dependency called directly. Anything that
    path does not accept (a body that does not validate, another media type, an app with
    dependency overrides, which only FastAPI's handler applies) is handed to FastAPI's
    handler, which answers as it always has (the body is read once, then cached by the
    request): a problem's bytes come from one path only. A body the fast path accepts is one
    FastAPI's would accept as the same model (``tests/api/test_ranks_fast.py`` checks both on
    bodies made to differ).
    """

    def get_route_handler(self) -> Handler:
        framework = super().get_route_handler()
        if self.path != RANKS_PATH or self.methods != {"POST"}:
            return framework
        endpoint = self.endpoint

        async def handler(request: Request) -> Response:
            if (
                request.headers.get("content-type") in FAST_CONTENT_TYPES
                and not request.app.dependency_overrides
            ):
                raw = await request.body()
                try:
                    body = RankRequest.model_validate_json(raw)
                except ValidationError:
                    pass  # FastAPI's handler answers (its 422, or its 400 for non-UTF-8)
                else:
                    env = await rank_env(request, request.headers.get("x-api-key"))
                    out: Response = await endpoint(request=request, body=body, env=env)
                    return out
            return await framework(request)

        return handler


router = APIRouter(prefix="/v1", tags=["absolute ranks"], route_class=RankRoute)

ON_LOOP_UP_TO = 10_000
"""Requests with at most this many values (and nothing to aggregate, see :func:`_light`) are
ranked on the event loop (no thread hop) when they need no database
(:func:`app.services.ranks.reads_database`); the others run in a thread."""


def _light(body: RankRequest) -> bool:
    """Whether a warm answer is cheap enough for the event loop: at most ON_LOOP_UP_TO values
    looked up on a stored curve. Runs to aggregate (a mean or median of r runs is a chain of
    convolutions or a quadrature per value: seconds at r = 256; an order statistic of r runs
    sums up to r terms per value: seconds for 10^4 values of 10^4 runs) and inline samples
    (sorted per request) always run in the thread pool, under the request's control (its
    deadline, a disconnect), so they never hold up other requests."""
    if body.values is None or body.sample is not None or len(body.values) > ON_LOOP_UP_TO:
        return False
    return body.runs == 1


def rank_response(answer: RankAnswer) -> Response:
    """``answer`` checked against :class:`RankResponse` and sent as the service built it.

    The envelope (everything but the per-value items: source, tail, warnings, transform and
    the rest of each algorithm's entry) is validated by ``RankResponse`` itself
    (:meth:`RankAnswer.envelope`). The items are typed columns
    (:class:`app.services.ranks.RankColumns` checks them as it is made; the ``per_run`` items
    of ``runs_by_algorithm`` are made from such columns): validating one model per value would
    cost ~45% of the endpoint, the envelope ~2% (bench/ranks_load.py prints both). The bytes
    are ``to_json`` of the plain answer, those the endpoint has always sent (``RankResponse``
    declares the same key order), written from the columns.
    """
    answer.envelope()  # raises if the service built another shape
    return Response(answer.json(), media_type=JSON)


@router.post(
    "/absolute-ranks",
    response_model=RankResponse,
    summary="Turn metric values into absolute ranks v",
    responses=ACCEPTED
    | problem_responses(
        WRONG_KEY,
        unknown_function(),
        ProblemExample(
            TableNotBuilt,
            "the default table of bbob/f15/i1/d10 (full domain, N = 4096, seed 0; id "
            "tc2cbef50782a58a4af9a2f8) is not built, and only a holder of an API key may queue "
            'it: POST /v1/tables {"function_id": "bbob/f15/i1/d10"} with an X-API-Key header',
            "function_id",
            description="The table is not built (an anonymous request where keys are "
            "configured) or still building (table-not-ready, with its Location), or the tail "
            "or aggregate asked for does not apply to this function (not-applicable)",
            extra=(
                ("table_id", "tc2cbef50782a58a4af9a2f8"),
                ("table_request", {"function_id": "bbob/f15/i1/d10"}),
            ),
        ),
        *body_problems(invalid("values.0", "Input should be a valid number", "float_type")),
    ),
)
async def absolute_ranks(
    request: Request,
    body: RankRequest,
    env: RankEnvDep,
) -> Response:
    """Turn metric values into absolute ranks v (lower is better; log10_v is authoritative)."""
    # The service returns plain JSON types in RankResponse's shape, checked by the model
    # (the per-value items as columns, see rank_response) and sent as built. A light request
    # whose tables are all cached (asked before starting) does no I/O: it runs on the event
    # loop; one that reads the database or queues a build (or is large) runs in a thread.

    def answer() -> Response:
        return rank_response(rank_answer(env, body))

    # the request's size limits first (counts): a request over them is a 422 now, not a job
    # that fails with it (the cost of a mean makes many of them jobs)
    check_limits(body, env.settings)
    estimate = costs.rank_cost(body)  # microseconds: counts of the request's lists
    field = estimate.operation.rsplit(".", 1)[1]
    mode = admit_sync(estimate, env.settings, field=field, job=True)
    if mode is Mode.JOB or prefers_async(request):  # a job (README "Jobs")
        return await submit_as_job(
            request,
            job_kinds.ABSOLUTE_RANKS,
            body,
            may_queue_builds=env.queues_builds,
            cost_seconds=estimate.cpu_seconds,
        )
    if _light(body) and not reads_database(env, body):
        return answer()
    # in a thread, under the synchronous deadline (checked by the aggregates' convolutions and
    # between the blocks of an order statistic's sums), cancelled if the client disconnects
    return await run_controlled(
        request, sync_control(env.settings, env.dispatcher), _controlled_answer, env, body
    )


def _controlled_answer(env: RankEnv, body: RankRequest, *, control: WorkControl) -> Response:
    return rank_response(rank_answer(dataclasses.replace(env, control=control), body))


@router.post(
    "/rank-spread",
    response_model=RankSpreadRead,
    dependencies=[JsonBody],
    summary="Spread e of absolute ranks you send (Jing & Liu Eq. 29)",
    responses=problem_responses(
        *body_problems(invalid("v.0", "Input should be less than or equal to 1", "less_than_equal"))
    ),
)
def spread_of_ranks(body: RankSpreadRequest, settings: SettingsDep) -> RankSpreadRead:
    """Compute the geometric mean difference e of ordered distinct absolute ranks (Eq. 29).

    ``e = (Π_{i=2..k} (v_i − v_{i−1}))^{1/(k−1)}`` over the ``k`` distinct ranks sorted
    ascending (duplicates count once; order does not matter); computed in log space, so
    ``log10_e`` stays exact where ``e`` underflows. Fewer than 2 distinct ranks: not
    computable, with the reason.
    """
    return rank_spread(settings, body)
