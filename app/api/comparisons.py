"""Comparisons of several algorithms on several problems: relative and absolute ranks, NIIA."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any, Literal

import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

from app.api.deps import (
    JSON_TYPES,
    ContentTypes,
    DispatcherDep,
    LadderCachesDep,
    MayQueueBuildsDep,
    SessionmakerDep,
    SettingsDep,
    TableCachesDep,
    requires,
    stored_id_path,
)
from app.api.figures import (
    BAD_DPI,
    BAD_SIZE,
    FIGURE_DOC,
    GLYPH_DOC,
    GLYPH_HEADERS,
    RasterOptions,
    VectorOptions,
)
from app.api.http_hygiene import stored
from app.api.jobs import ACCEPTED, prefers_async, submit_as_job
from app.api.paper_formats import (
    NOT_ACCEPTABLE,
    TABLE_CONTENT,
    FormatQuery,
    negotiated,
    table_response,
)
from app.api.responses import model_response
from app.api.tables import NOT_MODIFIED, IfNoneMatch
from app.api.work import (
    RunAsJob,
    admit_sync,
    run_controlled,
    sync_control,
    validate_json_batched,
)
from app.domain.cost import CostEstimate, Mode
from app.errors import AppError, InvalidInput, NotApplicable
from app.schemas.common import (
    JSON_MEDIA_TYPES,
    TOO_LARGE,
    WRONG_KEY,
    ProblemExample,
    not_accepted,
    problem_responses,
    refused,
    unknown_id,
)
from app.schemas.comparisons import ComparisonCreate, ComparisonRead
from app.schemas.jobs import ComparisonJob
from app.services import comparison_summary, costs, job_kinds, paper_tables, plots
from app.services import comparisons as service
from app.services import table_publish as publish
from app.services.comparison_answers import VIEWS

#: FastAPI's type of a route's ``responses``.
OpenApiResponses = dict[int | str, dict[str, Any]]

router = APIRouter(prefix="/v1/comparisons", tags=["comparisons"])

CSV_TYPE = "text/csv"
VIEW = "view"
FORMAT = "format"
#: Query parameters that choose how the answer is sent, not what is computed.
PRESENTATION = (VIEW, FORMAT)
#: Options a text/csv request takes as query parameters (niia_subset is repeatable: "A,B,C";
#: the mapping ``tables`` goes in JSON bodies only).
QUERY_OPTIONS = tuple(
    name
    for name in ComparisonCreate.model_fields
    if name not in ("results", "csv", "niia_subsets", "tables")
)

_REF = "#/components/schemas/ComparisonCreate"
_CSV_EXAMPLE = "algorithm,problem,run,value\nA,p1,0,1.0\nB,p1,0,2.0\nA,p2,0,3.5\nB,p2,0,1.5\n"


def _query_parameters() -> list[dict[str, Any]]:
    """OpenAPI query parameters of a ``text/csv`` request: the options of ComparisonCreate."""
    props = ComparisonCreate.model_json_schema()["properties"]
    params = [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": f"text/csv bodies only: {props[name].get('description', name)}",
            # the default is the example (Swagger UI pre-fills examples: an optional option
            # without a default, i.e. control, gets none)
            "schema": {k: v for k, v in props[name].items() if k not in ("description", "title")}
            | (
                {}
                if ComparisonCreate.model_fields[name].default is None
                else {"examples": [ComparisonCreate.model_fields[name].default]}
            ),
        }
        for name in QUERY_OPTIONS
    ]
    params.append(
        {
            "name": VIEW,
            "in": "query",
            "required": False,
            "description": "JSON and text/csv bodies: full (default) or summary (without "
            "per-cell, per-run and per-table detail); the stored comparison is the same",
            "schema": {"type": "string", "enum": ["full", "summary"], "examples": ["full"]},
        }
    )
    params.append(
        {
            "name": FORMAT,
            "in": "query",
            "required": False,
            "description": "json (default), or a paper table: csv, markdown, latex (as Accept: "
            "text/csv, text/markdown, application/x-latex)",
            "schema": {
                "type": "string",
                "enum": ["json", *paper_tables.FORMATS],
                "examples": ["latex"],
            },
        }
    )
    params.append(
        {
            "name": "niia_subset",
            "in": "query",
            "required": False,
            "description": "text/csv bodies only, repeatable: one NIIA subset as comma-separated "
            "algorithm names",
            "schema": {"type": "array", "items": {"type": "string"}, "examples": [["A,B,C"]]},
            "style": "form",
            "explode": True,
        }
    )
    return params


REQUEST_BODY = {
    "required": True,
    "content": {
        "application/json": {"schema": {"$ref": _REF}},
        CSV_TYPE: {
            "schema": {"type": "string"},
            "example": _CSV_EXAMPLE,
        },
    },
    "description": "JSON (ComparisonCreate), or CSV rows algorithm,problem,run,value with the "
    "options as query parameters (e.g. ?reduction=median&posthoc=holm&niia_subset=A,B,C)",
}


def view_of(request: Request) -> str:
    """The ``view`` query parameter: ``full`` (default) or ``summary``.

    Raises
    ------
    app.errors.InvalidInput
        Another value, or the parameter given twice (``field="view"``).
    """
    given = request.query_params.getlist(VIEW)
    if len(given) > 1:
        raise InvalidInput(f"query parameter 'view' is given {len(given)} times", field=VIEW)
    view = given[0] if given else "full"
    if view not in VIEWS:
        raise InvalidInput(f"view must be one of {', '.join(VIEWS)}, got {view[:40]!r}", field=VIEW)
    return view


def _query_options(request: Request) -> dict[str, Any]:
    params = request.query_params
    data: dict[str, Any] = {}
    for name in params:
        if name in PRESENTATION:
            continue
        if name == "niia_subset":
            data["niia_subsets"] = [v.split(",") for v in params.getlist(name)]
        elif name in QUERY_OPTIONS:
            if len(params.getlist(name)) > 1:
                raise InvalidInput(
                    f"query parameter {name!r} is given {len(params.getlist(name))} times; give "
                    "it once",
                    field=name,
                )
            data[name] = params[name]
        else:
            raise InvalidInput(f"unknown query parameter {name[:40]!r}", field=name[:40])
    return data


@contextmanager
def _csv_body_as_body(request: Request) -> Iterator[None]:
    """A ``text/csv`` request has no ``csv`` field: its errors name the ``body`` instead."""
    try:
        yield
    except AppError as exc:
        media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if media_type == CSV_TYPE and exc.field is not None and exc.field.split(".")[0] == "csv":
            exc.field = "body" + exc.field[len("csv") :]
        raise


async def _parse(request: Request) -> ComparisonCreate:
    raw = await request.body()
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    try:
        if media_type == CSV_TYPE:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InvalidInput(
                    f"the CSV is not UTF-8 (byte {exc.start})", field="body"
                ) from None
            data = _query_options(request) | {"csv": text}
            return await anyio.to_thread.run_sync(
                functools.partial(ComparisonCreate.model_validate, data, strict=False)
            )
        options = [name for name in request.query_params if name not in PRESENTATION]
        if options:
            raise InvalidInput(
                "options go in the JSON body; query parameters (except view) are for text/csv "
                "bodies",
                field=options[0][:40],
            )
        # validated in a worker thread, its rows in batches: a 6.7 MB body would hold the
        # event loop for seconds
        return await anyio.to_thread.run_sync(
            validate_json_batched, raw, ComparisonCreate, ("results",)
        )
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": ("body", *e.get("loc", ()))} for e in exc.errors(include_url=False)]
        ) from None


ViewQuery = Annotated[
    Literal["full", "summary"],
    Query(
        description="summary: without per-cell, per-run and per-table detail (README)",
        examples=["full"],
    ),
]

if TYPE_CHECKING:
    ComparisonIdPath = str
else:
    ComparisonIdPath = stored_id_path(
        "comparison_id",
        "a comparison id (c + 23 hex digits), as in the Location header of POST /v1/comparisons",
        "c9b5b14d7503e343dc256353",
    )


@router.post(
    "",
    response_model=ComparisonRead,
    status_code=201,
    dependencies=[requires("comparisons"), Depends(ContentTypes(*JSON_TYPES, CSV_TYPE))],
    openapi_extra={"requestBody": REQUEST_BODY, "parameters": _query_parameters()},
    responses=OpenApiResponses(
        {
            200: {
                "model": ComparisonRead,
                "description": "The identical request was answered before",
                "content": TABLE_CONTENT,
            },
            201: {
                "description": "Computed and stored; its URL is in the Location header",
                "content": {"application/json": {}} | TABLE_CONTENT,
                "headers": {"Location": {"schema": {"type": "string"}}},
            },
        }
    )
    | ACCEPTED
    | problem_responses(
        WRONG_KEY,
        refused(
            NotApplicable,
            "the mean of 1000 runs is computed by convolution only up to 256 runs; the value "
            "0.5 lies outside the power-law tail, where the exact form holds for any r",
            "value_runs",
            description="The method asked for does not apply to these data (e.g. absolute "
            "ranks of a mean of many runs outside the power-law tail), or a table given in "
            "tables is not ready (field tables.<problem>); problems whose default tables or "
            "ladders are not ready are answered as pending, not refused",
        ),
        TOO_LARGE,
        not_accepted(*JSON_MEDIA_TYPES, CSV_TYPE),
        refused(InvalidInput, "a comparison needs at least 2 problems, got 1", "results"),
    ),
    summary="Compare algorithms over problems: relative and absolute ranks, NIIA",
)
async def create_comparison(
    request: Request,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    may_queue_builds: MayQueueBuildsDep,
    cache: TableCachesDep,
    ladder_cache: LadderCachesDep,
) -> Response:
    """Compare algorithms over problems: relative and absolute ranks, post-hoc, NIIA report."""
    view = view_of(request)
    fmt = _format_of(request)
    if fmt != "json":
        view = "full"  # a paper table needs the per-cell values
    with _csv_body_as_body(request):
        body = await _parse(request)
        job = ComparisonJob(comparison=body, view="summary" if view == "summary" else "full")
        if fmt == "json" and prefers_async(request):  # a paper table is answered at once
            return await submit_as_job(
                request, job_kinds.COMPARISONS, job, may_queue_builds=may_queue_builds
            )

        def admission(estimate: CostEstimate) -> None:
            field = costs.comparison_field(body, estimate)
            if admit_sync(estimate, settings, field=field, job=fmt == "json") is Mode.JOB:
                raise RunAsJob(estimate)  # above the synchronous budget: the workers answer

        try:
            out, created = await run_controlled(
                request,
                sync_control(settings, dispatcher),
                service.create_comparison,
                sm,
                settings,
                dispatcher,
                body,
                may_queue_builds=may_queue_builds,
                view=view,
                cache=cache,
                ladder_cache=ladder_cache,
                admission=admission,
            )
        except RunAsJob as above:
            return await submit_as_job(
                request,
                job_kinds.COMPARISONS,
                job,
                may_queue_builds=may_queue_builds,
                cost_seconds=above.estimate.cpu_seconds,
            )
    if fmt != "json":
        return _table_response(out, fmt, 201 if created else 200, {"Location": out["location"]})
    return model_response(
        ComparisonRead,
        out,
        status_code=201 if created else 200,
        headers={"Location": out["location"]},
    )


def _format_of(request: Request) -> str:
    """The answer's format (``?format=`` or Accept; :func:`paper_tables.negotiate`)."""
    given = request.query_params.getlist(FORMAT)
    if len(given) > 1:
        raise InvalidInput(f"query parameter 'format' is given {len(given)} times", field=FORMAT)
    return paper_tables.negotiate(request.headers.get("accept"), given[0] if given else None)


def _table_response(
    answer: dict[str, Any], fmt: str, status_code: int = 200, headers: dict[str, str] | None = None
) -> Response:
    """A comparison's full answer as a paper table in ``fmt`` (docs/METHODS.md)."""
    return table_response(paper_tables.comparison_table(answer), fmt, status_code, headers)


_UNKNOWN = unknown_id("comparison_id", "comparison", "c9b5b14d7503e343dc256353")


@router.get(
    "/{comparison_id}",
    response_model=ComparisonRead,
    summary="Show a stored comparison",
    responses=OpenApiResponses({200: {"content": TABLE_CONTENT}})
    | problem_responses(_UNKNOWN, NOT_ACCEPTABLE),
)
def get_comparison(
    comparison_id: ComparisonIdPath,
    request: Request,
    sm: SessionmakerDep,
    view: ViewQuery = "full",
    format: FormatQuery = None,
) -> Response:
    """Show a stored comparison (JSON; a paper table with Accept or ``format``)."""
    fmt = negotiated(request, format)
    if fmt != "json":
        full = service.get_comparison(sm, comparison_id, view="full")
        return _table_response(full, fmt, headers=_cache_control(full))
    answer = service.get_comparison(sm, comparison_id, view=view)
    # the format follows Accept too: a cache keys the answer by it
    headers = _cache_control(answer) | {"Vary": "Accept"}
    return model_response(ComparisonRead, answer, headers=headers)


def _cache_control(answer: dict[str, Any]) -> dict[str, str]:
    """Immutable once complete; a partial comparison is recomputed when asked again."""
    return stored(answer["status"] == "complete")


@router.get(
    "/{comparison_id}/summary",
    response_class=Response,
    summary="A written summary of a stored comparison",
    responses=OpenApiResponses(
        {
            200: {
                "content": {"text/plain": {}, "text/markdown": {}},
                "description": "One paragraph: tests and why, significant pairs, NIIA flips, "
                "what absolute ranks support",
            }
        }
    )
    | problem_responses(_UNKNOWN),
)
def get_summary(
    comparison_id: ComparisonIdPath,
    request: Request,
    sm: SessionmakerDep,
    format: Annotated[
        Literal["text", "markdown"] | None,
        Query(description="text (default) or markdown; as Accept: text/plain, text/markdown"),
    ] = None,
) -> Response:
    """Summarize a stored comparison in one paragraph (text or Markdown)."""
    fmt = format
    if fmt is None:
        accept = (request.headers.get("accept") or "").lower()
        fmt = "markdown" if "text/markdown" in accept and "text/plain" not in accept else "text"
    answer = service.get_comparison(sm, comparison_id)
    summary = comparison_summary.summarize(answer)
    return Response(
        comparison_summary.render(summary, fmt),
        media_type=comparison_summary.MEDIA_TYPES[fmt],
        headers={"X-Absrank-Provenance": summary.provenance, "Vary": "Accept"}
        | _cache_control(answer),
    )


CdRanks = Annotated[
    Literal["relative", "absolute"],
    Query(
        description="relative (default): average Friedman ranks and the post-hoc's cliques, "
        "with its CD; absolute: mean log10 v on a decade axis and the cliques of the "
        "adjusted Wilcoxon tests on v (409 when the comparison has no complete absolute "
        "ranks; a caption line and Absrank-Warnings: low-power when N is too small for any "
        "pair to be significant)",
        examples=["absolute"],
    ),
]


def _cd_diagram(
    sm: SessionmakerDep,
    comparison_id: str,
    fmt: str,
    options: plots.FigureOptions,
    if_none_match: str | None,
    ranks: str = "relative",
) -> Response:
    """The CD diagram in ``fmt``, with the missing-glyphs header when a name has no font.

    ``ETag``: the SHA-256 of the bytes (identical requests draw identical bytes), with
    ``Cache-Control: no-cache`` (revalidate: a new server version may draw differently); 304
    when ``If-None-Match`` holds it."""
    drawn = service.cd_diagram(sm, comparison_id, fmt=fmt, options=options, ranks=ranks)
    etag = publish.quoted(hashlib.sha256(drawn.content).hexdigest())
    headers = drawn.header() | {"ETag": etag, "Cache-Control": "no-cache"}
    if publish.etag_matches(if_none_match, etag):
        return Response(status_code=304, headers=headers)
    return Response(drawn.content, media_type=plots.MEDIA_TYPES[fmt], headers=headers)


def _cd_responses(fmt: str, bad: ProblemExample) -> OpenApiResponses:
    media = plots.MEDIA_TYPES[fmt]
    headers = GLYPH_HEADERS | _CD_CACHE_HEADERS
    ok: dict[str, Any] = {"content": {media: {}}, "description": fmt.upper(), "headers": headers}
    return OpenApiResponses({200: ok, **NOT_MODIFIED}) | problem_responses(_UNKNOWN, bad)


_CD_CACHE_HEADERS: dict[str, Any] = {
    plots.WARNINGS_HEADER: {
        "description": "codes (space-separated) of the warnings the diagram states in its "
        "caption (low-power, ranks=absolute); absent when there are none",
        "schema": {"type": "string"},
    },
    "ETag": {"description": '"<SHA-256 of the bytes>"', "schema": {"type": "string"}},
    "Cache-Control": {"description": "no-cache (revalidate)", "schema": {"type": "string"}},
}


_CD_DOC = (
    "Draw the critical-difference diagram of a comparison from its post-hoc cliques (7 in wide,"
    " as tall as its rows need, unless width/height say otherwise)." + FIGURE_DOC + GLYPH_DOC
)


@router.get(
    "/{comparison_id}/cd-diagram.svg",
    response_class=Response,
    summary="CD diagram as SVG",
    responses=_cd_responses("svg", BAD_SIZE),
)
def cd_diagram_svg(
    comparison_id: ComparisonIdPath,
    sm: SessionmakerDep,
    options: VectorOptions,
    if_none_match: IfNoneMatch = None,
    ranks: CdRanks = "relative",
) -> Response:
    return _cd_diagram(sm, comparison_id, "svg", options, if_none_match, ranks)


@router.get(
    "/{comparison_id}/cd-diagram.pdf",
    response_class=Response,
    summary="CD diagram as PDF",
    responses=_cd_responses("pdf", BAD_SIZE),
)
def cd_diagram_pdf(
    comparison_id: ComparisonIdPath,
    sm: SessionmakerDep,
    options: VectorOptions,
    if_none_match: IfNoneMatch = None,
    ranks: CdRanks = "relative",
) -> Response:
    return _cd_diagram(sm, comparison_id, "pdf", options, if_none_match, ranks)


@router.get(
    "/{comparison_id}/cd-diagram.png",
    response_class=Response,
    summary="CD diagram as PNG",
    responses=_cd_responses("png", BAD_DPI),
)
def cd_diagram_png(
    comparison_id: ComparisonIdPath,
    sm: SessionmakerDep,
    options: RasterOptions,
    if_none_match: IfNoneMatch = None,
    ranks: CdRanks = "relative",
) -> Response:
    return _cd_diagram(sm, comparison_id, "png", options, if_none_match, ranks)


cd_diagram_svg.__doc__ = cd_diagram_pdf.__doc__ = cd_diagram_png.__doc__ = _CD_DOC
