"""The results archive: store one algorithm's results (immutable), list and read them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel, ValidationError
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from app.api.deps import (
    JSON_TYPES,
    ContentTypes,
    DispatcherDep,
    LadderCachesDep,
    OffsetQuery,
    SessionmakerDep,
    SettingsDep,
    TableCachesDep,
    requires,
    stored_id_path,
)
from app.api.tables import CSV_TYPE as CSV_BODY_TYPE
from app.api.tables import IfNoneMatch, cached_answer
from app.api.work import admit_sync, parse_body
from app.domain.results import FORMATS
from app.errors import Conflict, InvalidInput, PayloadTooLarge
from app.schemas.common import (
    JSON_MEDIA_TYPES,
    KEY_REQUIRED,
    LIMIT_TOO_SMALL,
    ProblemExample,
    invalid,
    not_accepted,
    problem_responses,
    refused,
    unknown_function,
    unknown_id,
)
from app.schemas.result_sets import (
    ResultSetCreate,
    ResultSetList,
    ResultSetMetadata,
    ResultSetRead,
    UploadMetadata,
)
from app.services import costs
from app.services import result_sets as service
from app.services import table_publish as publish

#: FastAPI's type of a route's ``responses``.
OpenApiResponses = dict[int | str, dict[str, Any]]

M = TypeVar("M", bound=BaseModel)

router = APIRouter(prefix="/v1/result-sets", tags=["result sets"])

CSV_TYPE = "text/csv"
FORM_TYPE = "multipart/form-data"
META = tuple(ResultSetMetadata.model_fields)
_REF = "#/components/schemas/ResultSetCreate"
_CSV_EXAMPLE = (
    "function_id,run,value,budget\nclassic/sphere/d2,0,0.0012,1000\n"
    "classic/sphere/d2,1,0.0031,1000\n"
)


def _meta_schema(name: str) -> dict[str, Any]:
    props = ResultSetMetadata.model_json_schema()["properties"][name]
    return {k: v for k, v in props.items() if k not in ("title",)}


REQUEST_BODY = {
    "required": True,
    "description": "JSON (ResultSetCreate); or a long CSV (function_id,run,value,budget and "
    "optionally evaluations for trajectory points) as text/csv with the metadata as query "
    "parameters; or multipart/form-data with the file in field file, its format in field "
    "format, and the metadata fields beside them",
    "content": {
        "application/json": {"schema": {"$ref": _REF}},
        CSV_TYPE: {"schema": {"type": "string"}, "example": _CSV_EXAMPLE},
        FORM_TYPE: {
            "schema": {
                "type": "object",
                "required": ["file", "format"],
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "format": {"type": "string", "enum": list(FORMATS)},
                    **{name: _meta_schema(name) for name in META},
                },
            }
        },
    },
}


def _query_parameters() -> list[dict[str, Any]]:
    return [
        {
            "name": name,
            "in": "query",
            "required": name in ("name", "values_are"),
            "description": f"text/csv bodies only: {_meta_schema(name).get('description', name)}",
            "schema": {k: v for k, v in _meta_schema(name).items() if k != "description"},
        }
        for name in META
    ]


def _validated(model: type[M], data: dict[str, Any], where: str) -> M:
    """``model`` from form or query strings; its errors name the field (422)."""
    try:
        return model.model_validate(data, strict=False)
    except ValidationError as exc:
        raise RequestValidationError(
            [{**e, "loc": (where, *e.get("loc", ()))} for e in exc.errors(include_url=False)]
        ) from None


def _csv_metadata(request: Request) -> ResultSetMetadata:
    params = request.query_params
    data: dict[str, Any] = {}
    for name in params:
        if name not in META:
            raise InvalidInput(f"unknown query parameter {name[:40]!r}", field=name[:40])
        if len(params.getlist(name)) > 1:
            raise InvalidInput(f"query parameter {name!r} is given more than once", field=name)
        data[name] = params[name]
    return _validated(ResultSetMetadata, data, "query")


async def _form(request: Request) -> tuple[UploadMetadata, str, str, bytes]:
    """The metadata, format, file name and bytes of a multipart upload (its temp files closed)."""
    try:
        form = await request.form(max_files=1, max_fields=len(META) + 2)
    except HTTPException as exc:  # python-multipart could not parse the body
        raise InvalidInput(f"multipart body: {exc.detail}", field="body") from None
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidInput("send the results as a file in the form field 'file'", field="file")
        fmt = form.get("format")
        if not isinstance(fmt, str) or fmt not in FORMATS:
            raise InvalidInput(
                f"format must be one of {', '.join(FORMATS)}"
                + (f", got {fmt[:40]!r}" if isinstance(fmt, str) else ""),
                field="format",
            )
        data: dict[str, Any] = {}
        for name, value in form.multi_items():
            if name in ("file", "format"):
                continue
            if name not in META or not isinstance(value, str):
                raise InvalidInput(f"unknown form field {name[:40]!r}", field=name[:40])
            if value != "":
                data[name] = value
        meta = _validated(UploadMetadata, data, "body")
        content = await upload.read()
        return meta, fmt, upload.filename or "upload", content
    finally:
        await form.close()


_UNKNOWN_FUNCTION = refused(
    InvalidInput,
    unknown_function().detail,
    "results.0.function_id",
    description="A run the archive refuses: unknown function, non-finite value, an error below "
    "0 or an f below f*, budget < 1, a duplicate run, an inconsistent trajectory, values_are "
    "'error' without a known f*, too many rows, an unknown supersedes id; a file's faults name "
    "the file and line",
)

#: A set and its correction (the 409 example: a second correction of the first).
EXAMPLE_SET = ResultSetCreate.model_validate(
    {
        "name": "DE",
        "values_are": "f",
        "results": [{"function_id": "classic/sphere/d2", "run": 0, "value": 0.5, "budget": 10}],
    }
)
EXAMPLE_CORRECTION = EXAMPLE_SET.model_copy(
    update={"version": "2", "supersedes": service.json_set_id(EXAMPLE_SET)}
)
_SUPERSEDED = refused(
    Conflict,
    service.superseded_detail(
        service.json_set_id(EXAMPLE_SET), service.json_set_id(EXAMPLE_CORRECTION)
    ),
    "supersedes",
    description="The set named by supersedes was corrected already (correct the newest)",
)
_TOO_LARGE = ProblemExample(
    PayloadTooLarge,
    "request body exceeds max_upload_bytes = 67108864",
    "body",
    description="The body exceeds max_upload_bytes (text/csv and multipart/form-data) or "
    "max_request_bytes (JSON)",
)
_UNKNOWN = unknown_id("set_id", "result set", "r0c9e4b1a2f3d5e6a7b8c9d0")

if TYPE_CHECKING:
    SetIdPath = str
else:
    SetIdPath = stored_id_path(
        "set_id",
        "a result set id (r + 23 hex digits), as in the Location header of POST /v1/result-sets",
        "r0c9e4b1a2f3d5e6a7b8c9d0",
    )


@router.post(
    "",
    response_model=ResultSetRead,
    status_code=201,
    dependencies=[
        requires("result_sets"),
        Depends(ContentTypes(*JSON_TYPES, CSV_TYPE, FORM_TYPE)),
    ],
    openapi_extra={"requestBody": REQUEST_BODY, "parameters": _query_parameters()},
    responses=OpenApiResponses(
        {
            200: {"model": ResultSetRead, "description": "The same content is archived already"},
            201: {
                "description": "Stored; its URL is in the Location header",
                "headers": {"Location": {"schema": {"type": "string"}}},
            },
        }
    )
    | problem_responses(
        KEY_REQUIRED,
        _SUPERSEDED,
        _TOO_LARGE,
        not_accepted(*JSON_MEDIA_TYPES, CSV_TYPE, FORM_TYPE),
        _UNKNOWN_FUNCTION,
    ),
    summary="Archive one algorithm's results (JSON, long CSV or a COCO/IOH/nevergrad file)",
)
async def create_result_set(
    request: Request,
    sm: SessionmakerDep,
    settings: SettingsDep,
    dispatcher: DispatcherDep,
    cache: TableCachesDep,
    ladder_cache: LadderCachesDep,
) -> Response:
    """Archive one algorithm's results; the same content again answers the existing set."""
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if media_type == FORM_TYPE:
        upload, fmt, filename, data = await _form(request)
        archive = fmt != "csv" or filename.endswith((".zip", ".tgz", ".tar.gz"))
        admit_sync(
            costs.result_set_cost(len(data), archive=archive, max_rows=settings.max_upload_rows),
            settings,
            field="file",
        )
        stored = await run_in_threadpool(
            service.create_from_upload,
            sm,
            settings,
            dispatcher,
            upload,
            fmt=fmt,
            filename=filename,
            data=data,
            cache=cache,
            ladder_cache=ladder_cache,
        )
    elif media_type == CSV_TYPE:
        meta = _csv_metadata(request)
        raw = await request.body()
        admit_sync(
            costs.result_set_cost(len(raw), archive=False, max_rows=settings.max_upload_rows),
            settings,
            field="body",
        )
        stored = await run_in_threadpool(
            service.create_from_csv,
            sm,
            settings,
            dispatcher,
            meta,
            raw,
            cache=cache,
            ladder_cache=ladder_cache,
        )
    else:
        if request.query_params:
            raise InvalidInput(
                "the metadata goes in the JSON body; query parameters are for text/csv bodies",
                field=next(iter(request.query_params))[:40],
            )
        raw = await request.body()
        admit_sync(
            costs.result_set_cost(len(raw), archive=False, max_rows=settings.max_upload_rows),
            settings,
            field="results",
        )
        body = await parse_body(request, ResultSetCreate, ("results",))
        stored = await run_in_threadpool(
            service.create_from_json,
            sm,
            settings,
            dispatcher,
            body,
            cache=cache,
            ladder_cache=ladder_cache,
        )
    return Response(
        stored.read.model_dump_json(),
        status_code=201 if stored.created else 200,
        media_type="application/json",
        headers={"Location": stored.read.location},
    )


@router.get(
    "",
    response_model=ResultSetList,
    summary="List archived result sets, newest first",
    responses=problem_responses(LIMIT_TOO_SMALL),
)
def list_result_sets(
    sm: SessionmakerDep,
    offset: OffsetQuery = 0,
    suite: Annotated[
        str | None,
        Query(
            max_length=32, description="sets covering a function of this suite", examples=["bbob"]
        ),
    ] = None,
    function_id: Annotated[
        str | None,
        Query(
            max_length=200,
            description="sets with runs on this function",
            examples=["bbob/f1/i1/d10"],
        ),
    ] = None,
    algorithm: Annotated[
        str | None,
        Query(max_length=200, description="sets of this algorithm (its name)", examples=["DE"]),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=500, description="items per page", examples=[50])] = 50,
) -> ResultSetList:
    """List archived result sets, newest first, with the total of the filter."""
    return service.list_result_sets(
        sm, suite=suite, function_id=function_id, algorithm=algorithm, limit=limit, offset=offset
    )


@router.get(
    "/{set_id}.csv",
    response_class=Response,
    summary="A result set's runs as a long CSV (re-importable)",
    responses=OpenApiResponses(
        {
            200: {
                "content": {"text/csv": {}},
                "description": "function_id,run,[evaluations,]value,"
                "budget; posting it back with the metadata of its comment lines gives the same id",
            },
            304: {"description": "If-None-Match holds the ETag"},
        }
    )
    | problem_responses(_UNKNOWN),
)
def result_set_csv(
    set_id: SetIdPath, sm: SessionmakerDep, if_none_match: IfNoneMatch = None
) -> Response:
    """Return a set's runs (and trajectory points) as the archive's long CSV."""
    text, sha = service.result_set_csv(sm, set_id)
    return cached_answer(publish.quoted(sha), if_none_match, text.encode, CSV_BODY_TYPE)


IncludeQuery = Annotated[
    Literal["runs"] | None,
    Query(
        description="runs: also the runs and their trajectories (bounded by max_inline_rows)",
        examples=["runs"],
    ),
]


@router.get(
    "/{set_id}",
    response_model=ResultSetRead,
    summary="Show an archived result set",
    responses=OpenApiResponses({304: {"description": "If-None-Match holds the ETag"}})
    | problem_responses(
        _UNKNOWN,
        invalid("include", "Input should be 'runs'", "literal_error"),
    ),
)
def get_result_set(
    set_id: SetIdPath,
    sm: SessionmakerDep,
    settings: SettingsDep,
    include: IncludeQuery = None,
    if_none_match: IfNoneMatch = None,
) -> Response:
    """Show an archived set: metadata, per-function summary, and its runs on request."""
    read = service.get_result_set(
        sm, set_id, include_runs=include == "runs", max_rows=settings.max_inline_rows
    )
    # the content never changes; superseded_by appears once, when a correction is archived
    tag = read.content_sha256 + (f".{read.superseded_by}" if read.superseded_by else "")
    headers = {"ETag": f'"{tag}{"+runs" if include else ""}"', "Cache-Control": "no-cache"}
    if publish.etag_matches(if_none_match, headers["ETag"]):
        return Response(status_code=304, headers=headers)
    return Response(read.model_dump_json(), media_type="application/json", headers=headers)
