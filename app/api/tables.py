"""v_f tables: request (built by workers), inspect, list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, Query, Request, Response
from starlette.concurrency import run_in_threadpool

from app.api.deps import (
    ApiKeyDep,
    ContentTypes,
    DispatcherDep,
    JsonBody,
    LadderCachesDep,
    OffsetQuery,
    SessionmakerDep,
    SettingsDep,
    TableCachesDep,
    TableIdPath,
)
from app.api.figures import (
    BAD_DPI,
    BAD_SIZE,
    FIGURE_DOC,
    OPTIONS_ETAG_DOC,
    RasterOptions,
    VectorOptions,
)
from app.api.http_hygiene import refuses_method
from app.api.quotas import chunk_charge
from app.config import Settings
from app.errors import (
    InvalidInput,
    MethodNotAllowed,
    PayloadTooLarge,
    TableNotReady,
    UnsupportedMediaType,
)
from app.schemas.common import (
    KEY_REQUIRED,
    ProblemExample,
    body_problems,
    invalid,
    problem_responses,
    refused,
    unknown_function,
    unknown_id,
)
from app.schemas.table_curves import QuantileList, TableCurveRead
from app.schemas.tables import (
    USER_NAME_PATTERN,
    LadderRead,
    Progress,
    TableCreate,
    TableList,
    TableRead,
)
from app.services import plots, user_tables
from app.services import table_publish as publish
from app.services import tables as service
from app.services.errors import domain_errors_as_problems
from app.services.table_cache import LadderCaches, TableCaches

router = APIRouter(prefix="/v1/tables", tags=["tables"])

Responses = dict[int | str, dict[str, Any]]
"""OpenAPI ``responses=`` entries by status."""


def openapi_responses(entries: Responses) -> Responses:
    """``entries`` as :data:`Responses` (a literal typed for ``|`` with the other entries)."""
    return entries


def _read(view: service.TableView) -> TableRead:
    return TableRead(
        id=view.id,
        location=view.location,
        function_id=view.function_id,
        status=view.status,
        progress=Progress(**view.progress),
        eta_seconds=view.eta_seconds,
        error=view.error,
        spec=view.spec,
        spec_hash=view.spec_hash,
        n=view.n,
        seed=view.seed,
        chunk_size=view.chunk_size,
        n_chunks=view.n_chunks,
        created_at=view.created_at,
        started_at=view.started_at,
        finished_at=view.finished_at,
        data_sha256=view.data_sha256,
        max_interp_error=view.max_interp_error,
        summary=view.summary,
        provenance=view.provenance,
    )


def _statement(body: TableCreate) -> user_tables.UserSampleStatement:
    return user_tables.UserSampleStatement(
        name=body.name,
        f_opt=body.f_opt,
        f_max=body.f_max,
        dim=body.dim,
        sampled_by=body.sampled_by,
        sampling=body.sampling,
    )


def _create_ladder(
    body: TableCreate,
    response: Response,
    sm: service.SM,
    settings: Settings,
    dispatcher: service.Dispatcher,
    *,
    cache: TableCaches,
    ladder_cache: LadderCaches,
    charge: service.ChunkCharge,
) -> LadderRead:
    assert body.function_id is not None  # create_table answered samples already
    with domain_errors_as_problems():
        views = service.request_ladder(
            sm,
            settings,
            dispatcher,
            body.function_id,
            log2n=body.log2n,
            seed=body.seed,
            cache=cache,
            ladder_cache=ladder_cache,
            charge=charge,
        )
    views = [service.get_table(sm, v.id) for v in views]  # an inline dispatcher may be done
    described = service.describe_ladder(settings, views, cache=ladder_cache)
    ladder = LadderRead.model_validate(described)
    waiting = [v for v in views if not v.ready]
    if waiting:
        response.headers["Location"] = waiting[0].location
    response.status_code = 202 if waiting else 200
    return ladder


@router.post(
    "",
    response_model=TableRead | LadderRead,
    status_code=202,
    dependencies=[ApiKeyDep, JsonBody],
    responses=openapi_responses(
        {
            200: {
                "model": TableRead | LadderRead,
                "description": "The table (every table of the ladder) exists and is ready",
            },
            202: {
                "description": "The table is queued or building (for a ladder: some level is); the "
                "Location header names it (the first level still building)",
                "headers": {
                    "Location": {
                        "description": "/v1/tables/{id}: poll it for progress",
                        "schema": {"type": "string"},
                    }
                },
            },
        }
    )
    | problem_responses(
        KEY_REQUIRED,
        unknown_function(),
        *body_problems(
            invalid("log2n", "Input should be less than or equal to 30", "less_than_equal")
        ),
    ),
    summary="Request a v_f table (or a ladder of nested regions)",
)
def create_table(
    request: Request,
    body: TableCreate,
    response: Response,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    cache: TableCachesDep,
    ladder_cache: LadderCachesDep,
) -> TableRead | LadderRead:
    """Request a table; 202 + Location while it builds, 200 when the same spec is ready.

    ``delta`` samples the box around x* instead of the domain: one number for the cube
    ``[x* - δ, x* + δ]^d ∩ domain``, or d numbers for ``Π_i [x*_i - δ_i, x*_i + δ_i] ∩ domain``
    (422 naming ``delta`` for a list of the wrong length, ``delta.i`` for a bad entry).

    With ``"ladder": true`` (and no ``delta``) request the ladder of nested regions of a function
    with known x* instead: the whole domain (the default table when ``log2n`` and
    ``seed`` are the defaults) and boxes ``[x* - h_j, x* + h_j] ∩ domain`` shaped like the
    function's local sublevel sets (the bounding box ``a`` of a quadratic form fitted to
    ``(f - f*)^(2/p)`` near x*, the cube when the fit fails), ``h_j,i = min(R, σ_j·a_i)``,
    ``σ_j = σ_0 / nested_factor^j``: the short axes shrink first. Levels are added until the
    box's volume fraction reaches ``10^nested_min_log10_volume``, at most ``nested_levels``.
    Each level is an ordinary table of ``2^log2n`` points queued like any other, all at once.
    The answer lists every level (id, location, status, progress, half-widths), the shape
    (half-widths, degree, fit residual, fallback reason) and why the ladder has that many
    levels; 200 when all are ready, else 202 with the Location of the first level still
    building. A function without x* (or with a plateau at f*) is refused with 422 on
    ``function_id``.

    With ``samples`` instead of ``function_id``: your own function, by values of f at
    uniform points of its domain. The table (Eq. 28 on the sorted values; tails as for any
    table, those needing f* only with a stated ``f_opt``) is built at once and answered with
    200 under the id ``user/<19 hex digits>`` of its content (the same values and statement
    give the same id and bytes). ``name``, ``f_opt``, ``f_max``, ``dim``, ``sampled_by`` and
    ``sampling`` are recorded as stated, not verified; nothing is evaluated.
    ``POST /v1/tables/samples`` takes the values as a file.
    """
    if body.samples is not None:
        view, _ = user_tables.create_user_table(sm, settings, body.samples, _statement(body))
        response.headers["Location"] = view.location
        response.status_code = 200
        return _read(view)
    assert body.function_id is not None
    if body.ladder:
        return _create_ladder(
            body,
            response,
            sm,
            settings,
            dispatcher,
            cache=cache,
            ladder_cache=ladder_cache,
            charge=chunk_charge(request),
        )
    with domain_errors_as_problems():
        view, _ = service.request_table(
            sm,
            settings,
            dispatcher,
            function_id=body.function_id,
            delta=body.delta,
            log2n=body.log2n,
            seed=body.seed,
            cache=cache,
            charge=chunk_charge(request),
        )
    view = service.get_table(sm, view.id)  # an inline dispatcher may have finished it already
    response.headers["Location"] = view.location
    response.status_code = 200 if view.ready else 202
    return _read(view)


@router.get(
    "",
    response_model=TableList,
    summary="List tables, newest first",
    responses=problem_responses(
        invalid(
            "status",
            "String should match pattern '^(building|merging|ready|failed)$'",
            "string_pattern_mismatch",
        )
    ),
)
def list_tables(
    sm: SessionmakerDep,
    function_id: Annotated[
        str | None,
        Query(
            max_length=200, description="only tables of this function", examples=["bbob/f15/i1/d10"]
        ),
    ] = None,
    status: Annotated[
        str | None,
        Query(
            pattern="^(building|merging|ready|failed)$",
            description="only tables in this status",
            examples=["ready"],
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=1000, description="page size", examples=[100])] = 100,
    offset: OffsetQuery = 0,
) -> TableList:
    """List tables, newest first, filtered by function and status."""
    views, total = service.list_tables(
        sm, function_id=function_id, status=status, limit=limit, offset=offset
    )
    return TableList(total=total, items=[_read(v) for v in views])


# ---------------------------------------------------------------------------- published curves

TABLE_EXAMPLE = "t3f1c0d9a8b7e6f5a4b3c2d1"
UNKNOWN_TABLE = unknown_id("table_id", "table", TABLE_EXAMPLE)
#: The 409 of a table still building (the docs test holds the build of this spec).
NOT_READY = ProblemExample(
    TableNotReady,
    f"table {publish.NOT_READY_EXAMPLE_ID} is building (0/4 chunks done)",
    "table_id",
    description="The table is building, merging or failed: the Location header names it "
    "(poll it for progress)",
    extra=(
        ("table_id", publish.NOT_READY_EXAMPLE_ID),
        ("table_status", "building"),
        ("location", f"/v1/tables/{publish.NOT_READY_EXAMPLE_ID}"),
    ),
)
CACHE_HEADERS: dict[str, Any] = {
    "ETag": {"description": '"<data_sha256>" of the table', "schema": {"type": "string"}},
    "Cache-Control": {"description": publish.IMMUTABLE, "schema": {"type": "string"}},
}
NOT_MODIFIED: Responses = {304: {"description": "If-None-Match names the ETag: nothing changed"}}
IfNoneMatch = Annotated[
    str | None,
    Header(
        description="an ETag from an earlier answer: 304 if it still holds",
        # ASCII (a header value): the data_sha256 of an earlier answer, quoted
        examples=['"3f1c0d9a8b7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0"'],
    ),
]
JSON_TYPE, CSV_TYPE = "application/json", "text/csv; charset=utf-8"
SVG_TYPE, PDF_TYPE, PNG_TYPE = "image/svg+xml", "application/pdf", "image/png"
PLOT_DOC = (
    "log10 v1 against t - f* on a log axis (t on a linear axis when f* is unknown): the "
    "samples' range [y_1, y_N] shaded, the lower tail dashed, the upper tail dotted (7 x 4.6 in "
    "unless width/height say otherwise). Identical requests give identical bytes." + FIGURE_DOC
)


def cached_answer(
    etag: str, if_none_match: str | None, make: Callable[[], bytes], media_type: str
) -> Response:
    """``make()`` with ``ETag`` and immutable ``Cache-Control``; 304 if ``If-None-Match`` holds."""
    headers = {"ETag": etag, "Cache-Control": publish.IMMUTABLE}
    if publish.etag_matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    return Response(make(), media_type=media_type, headers=headers)


def _table_answer(
    sm: service.SM,
    table_id: str,
    if_none_match: str | None,
    make: Callable[[], tuple[object, bytes]],
    media_type: str,
    *,
    variant: str = "",
    cache: TableCaches,
) -> Response:
    """A ready table's derived bytes under its ETag (``variant`` tells PNG resolutions apart)."""
    pub = publish.published_table(sm, table_id, cache=cache)
    etag = publish.quoted(f"{pub.view.data_sha256}{variant}")
    return cached_answer(etag, if_none_match, lambda: make()[1], media_type)


def ok_responses(media_type: str, description: str) -> dict[int | str, dict[str, Any]]:
    return (
        openapi_responses(
            {
                200: {
                    "description": description,
                    "headers": CACHE_HEADERS,
                    "content": {media_type: {"schema": {"type": "string"}}},
                }
            }
        )
        | NOT_MODIFIED
    )


@router.get(
    "/{table_id:path}/curve.json",
    response_model=TableCurveRead,
    summary="Download a ready table's curve: knots, counts, tail models (JSON)",
    responses=openapi_responses({200: {"headers": CACHE_HEADERS}})
    | NOT_MODIFIED
    | problem_responses(UNKNOWN_TABLE, NOT_READY),
)
def table_curve_json(
    table_id: TableIdPath,
    sm: SessionmakerDep,
    cache: TableCachesDep,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """The stored representation and the v1 model the service ranks with by default.

    Knots with exact counts, N, k_exact, max_interp_error, region, spec, spec_hash,
    data_sha256, f* and f_max, and the tail models of ``POST /v1/absolute-ranks`` with its
    defaults (tail=auto, tail_k=100, confidence=0.95): the lower tail (power/linear/paper, beta
    with its source and standard error, the anchor k, y_k and c_k, how it was chosen) and the
    upper tail. ``formula`` says how v1(t) follows; docs/METHODS.md states it in full.
    """
    return _table_answer(
        sm,
        table_id,
        if_none_match,
        lambda: publish.table_curve_json(sm, table_id, cache=cache),
        JSON_TYPE,
        cache=cache,
    )


@router.get(
    "/{table_id:path}/curve.csv",
    response_class=Response,
    summary="Download a ready table's curve as CSV (commented header, value,count)",
    responses=ok_responses("text/csv", "'# key: value' lines (JSON values), then value,count rows")
    | problem_responses(UNKNOWN_TABLE, NOT_READY),
)
def table_curve_csv(
    table_id: TableIdPath,
    sm: SessionmakerDep,
    cache: TableCachesDep,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """The curve as CSV: every field of curve.json but the knots as ``# key: value`` (value as
    JSON, nested fields as ``lower_tail.beta``), then ``value,count`` rows: enough to recompute
    v1(t) offline."""
    return _table_answer(
        sm,
        table_id,
        if_none_match,
        lambda: publish.table_curve_csv(sm, table_id, cache=cache),
        CSV_TYPE,
        cache=cache,
    )


@router.get(
    "/{table_id:path}/quantiles",
    response_model=QuantileList,
    summary="Quantiles t with v1(t) = v of a ready table's curve",
    responses=openapi_responses({200: {"headers": CACHE_HEADERS}})
    | problem_responses(
        UNKNOWN_TABLE,
        NOT_READY,
        refused(InvalidInput, "v.0: every v must be in (0, 1], got 0.0", "v"),
    ),
)
def table_quantiles(
    table_id: TableIdPath,
    sm: SessionmakerDep,
    cache: TableCachesDep,
    response: Response,
    v: Annotated[
        list[float],
        Query(
            description=f"levels in (0, 1]; repeat the parameter (?v=0.02&v=0.05), at most "
            f"{publish.MAX_QUANTILES}",
            examples=[[0.02, 0.05]],
        ),
    ],
) -> QuantileList:
    """``q(v) = inf{t : v1(t) >= v}`` of the published curve (the inverse of curve.json's v1,
    tails included; the power law inverted exactly in log space). Where v1 jumps or is flat the
    left end is returned; ``t`` is null for a v the curve never reaches (above N/(N+1) with a
    flat upper tail). ``error`` is t - f*, accurate in the tail."""
    pub, answer = publish.table_quantiles(sm, table_id, v, cache=cache)
    response.headers["ETag"] = pub.etag
    response.headers["Cache-Control"] = publish.IMMUTABLE
    return answer


def _table_plot(
    sm: service.SM,
    table_id: str,
    fmt: str,
    options: plots.FigureOptions,
    if_none_match: str | None,
    cache: TableCaches,
) -> Response:
    """A ready table's plot in ``fmt``; the ETag tells its options apart."""
    return _table_answer(
        sm,
        table_id,
        if_none_match,
        lambda: publish.table_plot(sm, table_id, fmt, options, cache=cache),
        plots.MEDIA_TYPES[fmt],
        variant=options.variant(fmt),
        cache=cache,
    )


@router.get(
    "/{table_id:path}/plot.svg",
    response_class=Response,
    summary="Plot log10 v1 of a ready table against t - f* (SVG)",
    responses=ok_responses(SVG_TYPE, "The plot")
    | problem_responses(UNKNOWN_TABLE, NOT_READY, BAD_SIZE),
)
def table_plot_svg(
    table_id: TableIdPath,
    sm: SessionmakerDep,
    cache: TableCachesDep,
    options: VectorOptions,
    if_none_match: IfNoneMatch = None,
) -> Response:
    return _table_plot(sm, table_id, "svg", options, if_none_match, cache)


@router.get(
    "/{table_id:path}/plot.pdf",
    response_class=Response,
    summary="Plot log10 v1 of a ready table against t - f* (PDF)",
    responses=ok_responses(PDF_TYPE, "The plot")
    | problem_responses(UNKNOWN_TABLE, NOT_READY, BAD_SIZE),
)
def table_plot_pdf(
    table_id: TableIdPath,
    sm: SessionmakerDep,
    cache: TableCachesDep,
    options: VectorOptions,
    if_none_match: IfNoneMatch = None,
) -> Response:
    return _table_plot(sm, table_id, "pdf", options, if_none_match, cache)


@router.get(
    "/{table_id:path}/plot.png",
    response_class=Response,
    summary="Plot log10 v1 of a ready table against t - f* (PNG)",
    responses=ok_responses(PNG_TYPE, "The plot")
    | problem_responses(UNKNOWN_TABLE, NOT_READY, BAD_DPI),
)
def table_plot_png(
    table_id: TableIdPath,
    sm: SessionmakerDep,
    cache: TableCachesDep,
    options: RasterOptions,
    if_none_match: IfNoneMatch = None,
) -> Response:
    return _table_plot(sm, table_id, "png", options, if_none_match, cache)


table_plot_svg.__doc__ = PLOT_DOC + ' The ETag is "<data_sha256>".' + OPTIONS_ETAG_DOC
table_plot_pdf.__doc__ = table_plot_svg.__doc__
table_plot_png.__doc__ = (
    PLOT_DOC + ' The ETag of a PNG is "<data_sha256>-<dpi>".' + OPTIONS_ETAG_DOC
)


# ---------------------------------------------------------------------------- your own samples

TEXT_TYPES = ("text/csv", "text/plain")
SAMPLES_PATH = "/v1/tables/samples"
#: The query parameters of ``POST /v1/tables/samples``; any other is refused (422 naming it).
SAMPLES_QUERY = ("name", "f_opt", "f_max", "dim", "sampled_by", "sampling", "column", "filename")
_SAMPLES_BODY = {
    "required": True,
    "content": {
        media: {"schema": {"type": "string"}, "example": "1.0\n3.0\n4.0\n6.0\n"}
        for media in TEXT_TYPES
    },
}
_BAD_LINE = refused(
    InvalidInput,
    "samples.txt line 3: 'abc' is not a number",
    "file",
    description="A line that is no finite number (named by file and line), a missing or "
    "duplicated CSV column, fewer than 2 or more than max_user_samples values, a sample below "
    "the stated f_opt; an unknown or repeated query parameter (named)",
)


def _declared_query_only(request: Request) -> None:
    """Refuse an unknown or repeated query parameter (JSON bodies are strict alike)."""
    params = request.query_params
    for name in params:
        if name not in SAMPLES_QUERY:
            raise InvalidInput(
                f"unknown query parameter {name[:40]!r}; the parameters are "
                f"{', '.join(SAMPLES_QUERY)}",
                field=name[:40],
            )
        if len(params.getlist(name)) > 1:
            raise InvalidInput(f"query parameter {name!r} is given more than once", field=name)


_SAMPLES_TOO_LARGE = ProblemExample(
    PayloadTooLarge,
    "request body exceeds max_upload_bytes = 67108864",
    "body",
    description="The body exceeds max_upload_bytes (text/csv, text/plain) or max_request_bytes",
)
_NOT_TEXT = ProblemExample(
    UnsupportedMediaType,
    f"Content-Type 'application/json' is not accepted here; send {' or '.join(TEXT_TYPES)}",
    "content-type",
    description="The body is not text/csv or text/plain (JSON samples go to POST /v1/tables)",
)


@router.post(
    "/samples",
    response_model=TableRead,
    dependencies=[ApiKeyDep, Depends(ContentTypes(*TEXT_TYPES))],
    openapi_extra={"requestBody": _SAMPLES_BODY},
    responses=openapi_responses(
        {
            200: {
                "description": "The table is ready; its URL is in the Location header",
                "headers": {"Location": {"schema": {"type": "string"}}},
            }
        }
    )
    | problem_responses(KEY_REQUIRED, _SAMPLES_TOO_LARGE, _NOT_TEXT, _BAD_LINE),
    summary="Build a table of your own function from a file of its samples",
)
async def create_user_table_from_file(
    request: Request,
    response: Response,
    sm: SessionmakerDep,
    settings: SettingsDep,
    name: Annotated[
        str | None,
        Query(
            pattern=USER_NAME_PATTERN,
            description="your function's name (its function_id is user/<name>)",
            examples=["my-problem"],
        ),
    ] = None,
    f_opt: Annotated[
        float | None,
        Query(
            allow_inf_nan=False,
            description="the minimum f*, as you state it (not verified)",
            examples=[0.0],
        ),
    ] = None,
    f_max: Annotated[
        float | None,
        Query(
            allow_inf_nan=False,
            description="the maximum of f over the domain, as stated",
            examples=[10.0],
        ),
    ] = None,
    dim: Annotated[
        int | None,
        Query(ge=1, le=1_000_000, description="the domain's dimension, as stated", examples=[5]),
    ] = None,
    sampled_by: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=200,
            description="who sampled the values, as stated",
            examples=["A. Researcher"],
        ),
    ] = None,
    sampling: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=2000,
            description="how the points were drawn, as stated",
            examples=["uniform on [0, 1]^5, numpy default_rng(1)"],
        ),
    ] = None,
    column: Annotated[
        str | None,
        Query(
            min_length=1,
            max_length=200,
            description="the CSV column holding the values (the first line is then a header); "
            "without it every line holds one value",
            examples=["f"],
        ),
    ] = None,
    filename: Annotated[
        str,
        Query(
            min_length=1,
            max_length=200,
            description="the file's name, used in error messages",
            examples=["samples.txt"],
        ),
    ] = "upload",
) -> TableRead:
    """Build a table of your own function from a file: one value of f per line, or a CSV column.

    Blank lines and lines starting with ``#`` are skipped. Everything else is as for
    ``POST /v1/tables`` with ``samples`` (the same values and statement give the same table
    as the JSON request); a bad line is a 422 naming the file and the line.
    """
    _declared_query_only(request)
    raw = await request.body()
    statement = user_tables.UserSampleStatement(
        name=name, f_opt=f_opt, f_max=f_max, dim=dim, sampled_by=sampled_by, sampling=sampling
    )

    def build() -> service.TableView:
        values = user_tables.sample_file_values(settings, raw, filename=filename, column=column)
        view, _ = user_tables.create_user_table(
            sm, settings, values, statement, field="file", source="file"
        )
        return view

    view = await run_in_threadpool(build)
    response.headers["Location"] = view.location
    return _read(view)


@router.api_route("/samples", methods=["GET", "HEAD"], include_in_schema=False)
@refuses_method  # the path's Allow: POST (app.api.http_hygiene)
def samples_need_post() -> None:
    """Answer 405 (the GET route below would otherwise take ``samples`` for a table id)."""
    raise MethodNotAllowed(
        "send a sample file with POST (text/plain or text/csv); GET /v1/tables/{table_id} "
        "shows a table",
        field="method",
    )


@router.get(
    "/{table_id:path}",
    response_model=TableRead,
    summary="Show a table: status, progress, ETA, spec, provenance",
    responses=problem_responses(unknown_id("table_id", "table", "t3f1c0d9a8b7e6f5a4b3c2d1")),
)
def get_table(table_id: TableIdPath, sm: SessionmakerDep) -> TableRead:
    """Show a table: status, progress (chunks), ETA, spec, quantiles, provenance.

    A table of your own samples (``user/…``) is ready from the start; its spec records the
    samples' hash, N and what was stated (``stated``: name, f*, f_max, dimension, who
    sampled and how), not verified.
    """
    return _read(service.get_table(sm, table_id))
