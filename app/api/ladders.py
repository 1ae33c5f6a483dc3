"""Published ladders of nested regions: the combined v1 curve, as JSON, CSV and plots.

A ladder is named by its function (and the ``log2n``/``seed`` it was requested with, as in
``POST /v1/tables`` with ``"ladder": true``): ``/v1/ladders/{function_id}/curve.json``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response

from app.api.deps import LadderCachesDep, SessionmakerDep, SettingsDep, TableCachesDep
from app.api.figures import BAD_DPI, OPTIONS_ETAG_DOC, RasterOptions, VectorOptions
from app.api.tables import (
    CACHE_HEADERS,
    CSV_TYPE,
    JSON_TYPE,
    NOT_MODIFIED,
    PDF_TYPE,
    PLOT_DOC,
    PNG_TYPE,
    SVG_TYPE,
    IfNoneMatch,
    cached_answer,
    ok_responses,
    openapi_responses,
)
from app.config import Settings
from app.errors import InvalidInput, TableNotBuilt
from app.schemas.common import ProblemExample, problem_responses, refused, unknown_function
from app.schemas.table_curves import LadderCurveRead
from app.services import plots
from app.services import table_publish as publish
from app.services.table_cache import LadderCaches, TableCaches
from app.services.table_publish import SM, PublishedLadder

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
    Query(
        ge=4,
        le=30,
        description="N = 2^log2n per level, as requested (default: the setting)",
        examples=[16],
    ),
]
SeedQuery = Annotated[
    int, Query(ge=0, le=2**63 - 1, description="Sobol seed, as requested", examples=[0])
]

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


@dataclass(frozen=True)
class LadderRef:
    """Which ladder: the function and the ``log2n``/``seed`` it was requested with."""

    function_id: str
    log2n: int | None
    seed: int


def ladder_ref(
    function_id: FunctionPath, log2n: Log2nQuery = None, seed: SeedQuery = 0
) -> LadderRef:
    """The ladder a request names."""
    return LadderRef(function_id, log2n, seed)


LadderDep = Annotated[LadderRef, Depends(ladder_ref)]
Make = Callable[..., tuple[PublishedLadder, bytes]]


@dataclass(frozen=True)
class LadderStore:
    """Where a request's ladders are: the database, the settings and the app's caches."""

    sm: SM
    settings: Settings
    cache: TableCaches
    ladder_cache: LadderCaches


def ladder_store(
    sm: SessionmakerDep,
    settings: SettingsDep,
    cache: TableCachesDep,
    ladder_cache: LadderCachesDep,
) -> LadderStore:
    """The request's :class:`LadderStore` (the caches from ``app.state``)."""
    return LadderStore(sm, settings, cache, ladder_cache)


StoreDep = Annotated[LadderStore, Depends(ladder_store)]


def _answer(
    ref: LadderRef,
    store: LadderStore,
    if_none_match: str | None,
    make: Make,
    media_type: str,
    *args: object,
    variant: str = "",
) -> Response:
    """A ready ladder's derived bytes under its ETag; 409 while a level is not ready."""
    sm, settings, cache, ladder_cache = store.sm, store.settings, store.cache, store.ladder_cache
    lad = publish.published_ladder(
        sm,
        settings,
        ref.function_id,
        log2n=ref.log2n,
        seed=ref.seed,
        cache=cache,
        ladder_cache=ladder_cache,
    )

    def body() -> bytes:
        return make(
            sm,
            settings,
            ref.function_id,
            *args,
            log2n=ref.log2n,
            seed=ref.seed,
            cache=cache,
            ladder_cache=ladder_cache,
        )[1]

    return cached_answer(publish.quoted(lad.digest + variant), if_none_match, body, media_type)


@router.get(
    "/{function_id:path}/curve.json",
    response_model=LadderCurveRead,
    summary="Download a ladder's combined nested-region curve (JSON)",
    responses=openapi_responses({200: {"headers": CACHE_HEADERS}})
    | NOT_MODIFIED
    | problem_responses(*PROBLEMS),
)
def ladder_curve_json(
    ref: LadderDep, store: StoreDep, if_none_match: IfNoneMatch = None
) -> Response:
    """The v1 curve ``regions="nested"`` ranks with: each level's table (id, region, the URL of
    its own curve), and the pieces of the combination, level 0 (highest t) first: piece j
    serves ``t_from <= t < t_below`` with ``v1(t) = exp(ln_volume_fraction)·v1_j(t)``, v1_j
    given by the piece's knots (its served range and one neighbour each side) and tails, the
    same formula as a table's curve.json. 409 while a level builds."""
    return _answer(ref, store, if_none_match, publish.ladder_curve_json, JSON_TYPE)


ladder_curve_json.__doc__ = (ladder_curve_json.__doc__ or "") + " " + ETAG_DOC


@router.get(
    "/{function_id:path}/curve.csv",
    response_class=Response,
    summary="Download a ladder's combined nested-region curve as CSV",
    responses=ok_responses("text/csv", "'# key: value' lines, then piece,value,count rows")
    | problem_responses(*PROBLEMS),
)
def ladder_curve_csv(
    ref: LadderDep, store: StoreDep, if_none_match: IfNoneMatch = None
) -> Response:
    """The ladder's curve.json as CSV: its fields as ``# key: value`` lines (each piece's as
    ``pieces.<i>.<field>``), then ``piece,value,count`` rows (each piece's knots)."""
    return _answer(ref, store, if_none_match, publish.ladder_curve_csv, CSV_TYPE)


def _ladder_plot(
    ref: LadderRef,
    store: LadderStore,
    fmt: str,
    options: plots.FigureOptions,
    if_none_match: str | None,
) -> Response:
    """A ready ladder's plot in ``fmt``; the ETag tells its options apart."""
    return _answer(
        ref,
        store,
        if_none_match,
        publish.ladder_plot,
        plots.MEDIA_TYPES[fmt],
        fmt,
        options,
        variant=options.variant(fmt),
    )


@router.get(
    "/{function_id:path}/plot.svg",
    response_class=Response,
    summary="Plot a ladder's combined log10 v1 against t - f* (SVG)",
    responses=ok_responses(SVG_TYPE, "The plot") | problem_responses(*PROBLEMS),
)
def ladder_plot_svg(
    ref: LadderDep, store: StoreDep, options: VectorOptions, if_none_match: IfNoneMatch = None
) -> Response:
    return _ladder_plot(ref, store, "svg", options, if_none_match)


@router.get(
    "/{function_id:path}/plot.pdf",
    response_class=Response,
    summary="Plot a ladder's combined log10 v1 against t - f* (PDF)",
    responses=ok_responses(PDF_TYPE, "The plot") | problem_responses(*PROBLEMS),
)
def ladder_plot_pdf(
    ref: LadderDep, store: StoreDep, options: VectorOptions, if_none_match: IfNoneMatch = None
) -> Response:
    return _ladder_plot(ref, store, "pdf", options, if_none_match)


@router.get(
    "/{function_id:path}/plot.png",
    response_class=Response,
    summary="Plot a ladder's combined log10 v1 against t - f* (PNG)",
    responses=ok_responses(PNG_TYPE, "The plot")
    | problem_responses(unknown_function(), NOT_BUILT, BAD_DPI),
)
def ladder_plot_png(
    ref: LadderDep, store: StoreDep, options: RasterOptions, if_none_match: IfNoneMatch = None
) -> Response:
    return _ladder_plot(ref, store, "png", options, if_none_match)


_LADDER_PLOT = (
    " One line per serving level (coloured), the thresholds between them dotted; the deepest "
    "level's lower tail dashed. "
)
ladder_plot_svg.__doc__ = PLOT_DOC + _LADDER_PLOT + ETAG_DOC + OPTIONS_ETAG_DOC
ladder_plot_pdf.__doc__ = ladder_plot_svg.__doc__
ladder_plot_png.__doc__ = (
    PLOT_DOC + _LADDER_PLOT + 'The ETag of a PNG is "<digest>-<dpi>".' + OPTIONS_ETAG_DOC
)
