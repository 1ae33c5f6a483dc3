"""Published ladders of nested regions: the combined v1 curve, as JSON, CSV and plots.

A ladder is named by its function (and the ``log2n``/``seed`` it was requested with, as in
``POST /v1/tables`` with ``"ladder": true``): ``/v1/ladders/{function_id}/curve.json``.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query, Response

from app.api.deps import SessionmakerDep, SettingsDep
from app.api.tables import (
    CACHE_HEADERS,
    NOT_MODIFIED,
    PLOT_DOC,
    DpiQuery,
    IfNoneMatch,
    _ok,
    cached_answer,
)
from app.errors import InvalidInput, TableNotBuilt
from app.schemas.common import ProblemExample, invalid, problem_responses, refused, unknown_function
from app.schemas.table_curves import LadderCurveRead
from app.services import table_publish as publish

router = APIRouter(prefix="/v1/ladders", tags=["tables"])

FunctionPath = Annotated[
    str,
    Path(
        description="a function with known x* and f* and no plateau at f*",
        examples=["classic/sphere/d2"],
    ),
]
Log2nQuery = Annotated[
    int | None,
    Query(ge=4, le=30, description="N = 2^log2n per level, as requested (default: the setting)"),
]
SeedQuery = Annotated[int, Query(ge=0, le=2**63 - 1, description="Sobol seed, as requested")]

NOT_BUILT = ProblemExample(
    TableNotBuilt,
    f"level 0 (table {publish.LADDER_EXAMPLE_ID}) of the nested-region ladder of "
    'classic/sphere/d2 is not built: request the ladder with POST /v1/tables {"function_id": '
    '"classic/sphere/d2", "ladder": true, "seed": 0}',
    "function_id",
    description="A level is not built (request the ladder), or still building "
    "(table-not-ready, with the level's Location)",
    extra=(
        ("table_id", publish.LADDER_EXAMPLE_ID),
        ("level", 0),
        ("table_request", {"function_id": "classic/sphere/d2", "ladder": True, "seed": 0}),
    ),
)
NO_LADDER = refused(
    InvalidInput,
    "classic/step/d2 has a plateau at f* (atom 2.5e-05): its registered mass gives v1 near f*, "
    "nested regions serve a continuous lower tail",
    "function_id",
    description="The function has no ladder (no x*/f*, or a plateau at f*), or a bad option",
)
PROBLEMS = (unknown_function(), NOT_BUILT, NO_LADDER)
ETAG_DOC = 'The ETag is "<SHA-256 of the levels\' data_sha256, newline-joined>".'


@router.get(
    "/{function_id:path}/curve.json",
    response_model=LadderCurveRead,
    summary="Download a ladder's combined nested-region curve (JSON)",
    responses={200: {"headers": CACHE_HEADERS}} | NOT_MODIFIED | problem_responses(*PROBLEMS),
)
def ladder_curve_json(
    function_id: FunctionPath,
    sm: SessionmakerDep,
    settings: SettingsDep,
    log2n: Log2nQuery = None,
    seed: SeedQuery = 0,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """The v1 curve ``regions="nested"`` ranks with: each level's table (id, region, the URL of
    its own curve), and the pieces of the combination, level 0 (highest t) first: piece j
    serves ``t_from <= t < t_below`` with ``v1(t) = exp(ln_volume_fraction)·v1_j(t)``, v1_j
    given by the piece's knots (its served range and one neighbour each side) and tails, the
    same formula as a table's curve.json. 409 while a level builds."""
    lad = publish.published_ladder(sm, settings, function_id, log2n=log2n, seed=seed)
    return cached_answer(
        lad.etag,
        if_none_match,
        lambda: publish.ladder_curve_json(sm, settings, function_id, log2n=log2n, seed=seed)[1],
        "application/json",
    )


ladder_curve_json.__doc__ = (ladder_curve_json.__doc__ or "") + " " + ETAG_DOC


@router.get(
    "/{function_id:path}/curve.csv",
    response_class=Response,
    summary="Download a ladder's combined nested-region curve as CSV",
    responses=_ok("text/csv", "'# key: value' lines, then piece,value,count rows")
    | problem_responses(*PROBLEMS),
)
def ladder_curve_csv(
    function_id: FunctionPath,
    sm: SessionmakerDep,
    settings: SettingsDep,
    log2n: Log2nQuery = None,
    seed: SeedQuery = 0,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """The ladder's curve.json as CSV: its fields as ``# key: value`` lines (each piece's as
    ``pieces.<i>.<field>``), then ``piece,value,count`` rows (each piece's knots)."""
    lad = publish.published_ladder(sm, settings, function_id, log2n=log2n, seed=seed)
    return cached_answer(
        lad.etag,
        if_none_match,
        lambda: publish.ladder_curve_csv(sm, settings, function_id, log2n=log2n, seed=seed)[1],
        "text/csv; charset=utf-8",
    )


@router.get(
    "/{function_id:path}/plot.svg",
    response_class=Response,
    summary="Plot a ladder's combined log10 v1 against t - f* (SVG)",
    responses=_ok("image/svg+xml", "The plot") | problem_responses(*PROBLEMS),
)
def ladder_plot_svg(
    function_id: FunctionPath,
    sm: SessionmakerDep,
    settings: SettingsDep,
    log2n: Log2nQuery = None,
    seed: SeedQuery = 0,
    if_none_match: IfNoneMatch = None,
) -> Response:
    lad = publish.published_ladder(sm, settings, function_id, log2n=log2n, seed=seed)
    return cached_answer(
        lad.etag,
        if_none_match,
        lambda: publish.ladder_plot(sm, settings, function_id, "svg", log2n=log2n, seed=seed)[1],
        "image/svg+xml",
    )


@router.get(
    "/{function_id:path}/plot.png",
    response_class=Response,
    summary="Plot a ladder's combined log10 v1 against t - f* (PNG)",
    responses=_ok("image/png", "The plot")
    | problem_responses(
        unknown_function(),
        NOT_BUILT,
        invalid(
            "dpi", f"Input should be less than or equal to {publish.MAX_DPI}", "less_than_equal"
        ),
    ),
)
def ladder_plot_png(
    function_id: FunctionPath,
    sm: SessionmakerDep,
    settings: SettingsDep,
    log2n: Log2nQuery = None,
    seed: SeedQuery = 0,
    dpi: DpiQuery = publish.DEFAULT_DPI,
    if_none_match: IfNoneMatch = None,
) -> Response:
    lad = publish.published_ladder(sm, settings, function_id, log2n=log2n, seed=seed)
    return cached_answer(
        publish.quoted(f"{lad.digest}-{dpi}"),
        if_none_match,
        lambda: publish.ladder_plot(sm, settings, function_id, "png", dpi, log2n=log2n, seed=seed)[
            1
        ],
        "image/png",
    )


_LADDER_PLOT = (
    " One line per serving level (coloured), the thresholds between them dotted; the deepest "
    "level's lower tail dashed. "
)
ladder_plot_svg.__doc__ = PLOT_DOC + _LADDER_PLOT + ETAG_DOC
ladder_plot_png.__doc__ = PLOT_DOC + _LADDER_PLOT + 'The ETag of a PNG is "<digest>-<dpi>".'
