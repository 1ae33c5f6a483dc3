"""Anytime analysis: runtimes, ERT, runtime ECDFs, fixed budgets, the anytime absolute rank,
and performance/data/accuracy profiles, as JSON and as figures.

Figures are the same POST body sent to ``…/plot.svg``, ``…/plot.pdf`` or ``…/plot.png`` (the
format in the path, as every figure route of the API), with the shared query options
(``width``, ``height``, ``font_size``; ``dpi`` for PNG) and, for runtime distributions, which
figure (``figure=ecdf|fixed-budget|anytime-rank``).
"""

from __future__ import annotations

from typing import Annotated, Any

import anyio
from fastapi import APIRouter, Query, Response

from app.api.deps import JsonBody, RankEnvDep, SettingsDep
from app.api.figures import FIGURE_DOC, GLYPH_DOC, GLYPH_HEADERS, RasterOptions, VectorOptions
from app.api.responses import model_response
from app.errors import InvalidInput
from app.schemas.anytime import (
    FigureKind,
    ProfileRead,
    ProfileRequest,
    RuntimeDistributionRead,
    RuntimeDistributionRequest,
)
from app.schemas.common import (
    WRONG_KEY,
    body_problems,
    problem_responses,
    refused,
)
from app.services import anytime as service
from app.services import plots

OpenApiResponses = dict[int | str, dict[str, Any]]

router = APIRouter(prefix="/v1", tags=["anytime"])

_UNSORTED = refused(
    InvalidInput,
    "evaluations must be strictly increasing: 5 after 10 (record 1)",
    "algorithms.0.runs.0.evaluations",
    description="A malformed trajectory, an archived set without trajectories, a function "
    "no algorithm ran (the field names which)",
)
_NOT_A_PROFILE = refused(InvalidInput, "kind='data' needs costs", "costs")

FigureQuery = Annotated[
    FigureKind,
    Query(
        description="which figure: runtime ECDFs, the fixed-budget view, the anytime rank",
        examples=["ecdf"],
    ),
]


def _runtime_problems() -> OpenApiResponses:
    # 413 is also the answer to more records (field algorithms or result_sets), runs × targets
    # (targets, simulated_restarts) or budgets than max_anytime_* allow: the detail names it
    return problem_responses(WRONG_KEY, *body_problems(_UNSORTED))


@router.post(
    "/runtime-distributions",
    response_model=RuntimeDistributionRead,
    dependencies=[JsonBody],
    summary="ERT, runtime ECDFs, fixed budgets and anytime absolute ranks of trajectories",
    responses=_runtime_problems(),
)
async def runtime_distributions(body: RuntimeDistributionRequest, env: RankEnvDep) -> Response:
    """Per (algorithm, function, target): ERT (aRT, COCO), successes and runs; the runtime ECDF
    as exact breakpoints (and from simulated restarts, seeded); the best-so-far at fixed
    budgets; and log10 v_c of each run's best-so-far at budget c against the function's
    published table (the anytime absolute rank)."""

    def answer() -> Response:
        return model_response(
            RuntimeDistributionRead, service.runtime_distributions(env, body).read
        )

    return await anyio.to_thread.run_sync(answer)


def _runtime_figure(
    body: RuntimeDistributionRequest,
    env: Any,
    figure: FigureKind,
    fmt: str,
    options: plots.FigureOptions,
) -> Response:
    drawn = service.runtime_figure(service.runtime_distributions(env, body), figure, fmt, options)
    return Response(drawn.content, media_type=plots.MEDIA_TYPES[fmt], headers=drawn.header())


def _figure_responses(fmt: str) -> OpenApiResponses:
    ok: dict[str, Any] = {
        "content": {plots.MEDIA_TYPES[fmt]: {}},
        "description": fmt.upper(),
        "headers": GLYPH_HEADERS,
    }
    return OpenApiResponses({200: ok}) | _runtime_problems()


_RUNTIME_FIGURE_DOC = (
    "Draw runtime ECDFs, the fixed-budget view (median best-so-far error, quartile band) or "
    "the anytime absolute rank (median log10 v_c, quartile band) of the same body as POST "
    "/v1/runtime-distributions." + FIGURE_DOC + GLYPH_DOC
)


@router.post(
    "/runtime-distributions/plot.svg",
    response_class=Response,
    dependencies=[JsonBody],
    summary="Runtime ECDF, fixed-budget or anytime-rank figure as SVG",
    responses=_figure_responses("svg"),
)
async def runtime_plot_svg(
    body: RuntimeDistributionRequest,
    env: RankEnvDep,
    options: VectorOptions,
    figure: FigureQuery = "ecdf",
) -> Response:
    return await anyio.to_thread.run_sync(_runtime_figure, body, env, figure, "svg", options)


@router.post(
    "/runtime-distributions/plot.pdf",
    response_class=Response,
    dependencies=[JsonBody],
    summary="Runtime ECDF, fixed-budget or anytime-rank figure as PDF",
    responses=_figure_responses("pdf"),
)
async def runtime_plot_pdf(
    body: RuntimeDistributionRequest,
    env: RankEnvDep,
    options: VectorOptions,
    figure: FigureQuery = "ecdf",
) -> Response:
    return await anyio.to_thread.run_sync(_runtime_figure, body, env, figure, "pdf", options)


@router.post(
    "/runtime-distributions/plot.png",
    response_class=Response,
    dependencies=[JsonBody],
    summary="Runtime ECDF, fixed-budget or anytime-rank figure as PNG",
    responses=_figure_responses("png"),
)
async def runtime_plot_png(
    body: RuntimeDistributionRequest,
    env: RankEnvDep,
    options: RasterOptions,
    figure: FigureQuery = "ecdf",
) -> Response:
    return await anyio.to_thread.run_sync(_runtime_figure, body, env, figure, "png", options)


runtime_plot_svg.__doc__ = runtime_plot_pdf.__doc__ = runtime_plot_png.__doc__ = _RUNTIME_FIGURE_DOC


@router.post(
    "/profiles",
    response_model=ProfileRead,
    dependencies=[JsonBody],
    summary="Performance, data or accuracy profiles as exact step functions",
    responses=problem_responses(*body_problems(_NOT_A_PROFILE)),
)
def profiles(body: ProfileRequest, settings: SettingsDep) -> Response:
    """Dolan & Moré performance profiles (failures = ∞, log2 τ axis), Moré & Wild data profiles
    (t/(n_p+1)) or accuracy profiles (digits gained, capped at M = 16) as exact breakpoints."""
    return model_response(ProfileRead, service.profiles(body, settings))


def _profile_figure(
    body: ProfileRequest, settings: Any, fmt: str, options: plots.FigureOptions
) -> Response:
    drawn = service.profile_figure(body, settings, fmt, options)
    return Response(drawn.content, media_type=plots.MEDIA_TYPES[fmt], headers=drawn.header())


def _profile_responses(fmt: str) -> OpenApiResponses:
    ok: dict[str, Any] = {
        "content": {plots.MEDIA_TYPES[fmt]: {}},
        "description": fmt.upper(),
        "headers": GLYPH_HEADERS,
    }
    return OpenApiResponses({200: ok}) | problem_responses(*body_problems(_NOT_A_PROFILE))


@router.post(
    "/profiles/plot.svg",
    response_class=Response,
    dependencies=[JsonBody],
    summary="Profile figure as SVG",
    responses=_profile_responses("svg"),
)
def profile_plot_svg(
    body: ProfileRequest, settings: SettingsDep, options: VectorOptions
) -> Response:
    return _profile_figure(body, settings, "svg", options)


@router.post(
    "/profiles/plot.pdf",
    response_class=Response,
    dependencies=[JsonBody],
    summary="Profile figure as PDF",
    responses=_profile_responses("pdf"),
)
def profile_plot_pdf(
    body: ProfileRequest, settings: SettingsDep, options: VectorOptions
) -> Response:
    return _profile_figure(body, settings, "pdf", options)


@router.post(
    "/profiles/plot.png",
    response_class=Response,
    dependencies=[JsonBody],
    summary="Profile figure as PNG",
    responses=_profile_responses("png"),
)
def profile_plot_png(
    body: ProfileRequest, settings: SettingsDep, options: RasterOptions
) -> Response:
    return _profile_figure(body, settings, "png", options)


profile_plot_svg.__doc__ = profile_plot_pdf.__doc__ = profile_plot_png.__doc__ = (
    "Draw the profiles of the same body as POST /v1/profiles as exact steps (performance "
    "profiles on a log2 τ axis)." + FIGURE_DOC + GLYPH_DOC
)
