"""The web page: browse functions and their v_f plots, leaderboards, and make a report from a
results CSV or archived result sets (README, "The web page").

Every page is rendered on the server from the services the API uses (the same comparison, the
same paper table, the same figures: the page's images and download links are the API's own
URLs), so what a person sees is what ``curl`` gets. The one script (``static/absrank.js``)
only asks again for a report whose tables are still building; without it a button does.
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlencode

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.routing import APIRoute
from fastapi.templating import Jinja2Templates
from pydantic import BaseModel, ConfigDict
from sqlalchemy import exc as sa_exc
from starlette.datastructures import FormData, UploadFile
from starlette.exceptions import HTTPException

from app.api.deps import (
    SessionmakerDep,
    SettingsDep,
    app_rank_env,
    may_queue_builds_for,
    may_write_for,
)
from app.api.figures import RasterOptions
from app.api.problems import app_error_response, as_unavailable, problem_response
from app.api.work import admit_sync, sync_control
from app.config import Settings, WriteKind
from app.errors import AppError, ServiceUnavailable
from app.schemas.anytime import ProfileRequest, RuntimeDistributionRequest
from app.schemas.comparisons import ComparisonRead
from app.schemas.result_sets import ResultSetItem
from app.services import anytime, comparison_summary, costs, paper_tables, plots, suite_leaderboards
from app.services import comparisons as comparison_service
from app.services import functions as function_service
from app.services import result_sets as result_set_service
from app.services import tables as table_service
from app.web.forms import (
    LABELS,
    POSTHOC_CHOICES,
    FormProblem,
    FormValues,
    comparison_request,
    read_archive_form,
    read_form,
)

HERE = Path(__file__).resolve().parent
STATIC_DIR = HERE / "static"
templates = Jinja2Templates(directory=str(HERE / "templates"))  # autoescapes HTML
templates.env.filters["cell"] = paper_tables.cell_text
templates.env.globals["urlencode"] = urlencode

router = APIRouter(include_in_schema=False)

#: The pages load only what absrank serves: no CDN, no inline script, forms post to itself.
PAGE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'"
)
PAGE_HEADERS = {
    "Content-Security-Policy": PAGE_CSP,
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
#: How many archived result sets the form offers (newest first), and functions a list shows.
OFFERED_SETS = 100
LISTED_FUNCTIONS = 500
FIGURES = ("ecdf", "fixed-budget", "anytime-rank")
FigureName = Literal["ecdf", "fixed-budget", "anytime-rank"]
FigureFormat = Literal["svg", "pdf", "png"]


def _suites() -> list[str]:
    return sorted({f.suite for f in function_service.search_functions(suite=None, dim=None)})


def _page(
    request: Request, template: str, context: dict[str, Any], status_code: int = 200
) -> HTMLResponse:
    headers = PAGE_HEADERS
    if status_code == 503:  # the database or the queue is down: say when to ask again
        retry = getattr(request.app.state.settings, "retry_after_seconds", 30)
        headers = {**PAGE_HEADERS, "Retry-After": str(retry)}
    return templates.TemplateResponse(
        request, template, context, status_code=status_code, headers=headers
    )


def _offered_sets(sm: SessionmakerDep) -> list[ResultSetItem]:
    listed = result_set_service.list_result_sets(
        sm, suite=None, function_id=None, algorithm=None, limit=OFFERED_SETS, offset=0
    )
    return [s for s in listed.items if s.superseded_by is None]


def _home(
    request: Request,
    sm: SessionmakerDep,
    values: FormValues,
    problem: FormProblem | None = None,
    archived: ResultSetItem | None = None,
    archived_before: bool = False,
) -> HTMLResponse:
    context = {
        "archived": archived,
        "archived_before": archived_before,
        "formats": ARCHIVE_FORMATS,
        "title": "Start",
        "sets": _offered_sets(sm),
        "posthoc_choices": POSTHOC_CHOICES,
        "values": values,
        "problem": problem,
        "suites": _suites(),
    }
    return _page(request, "home.html", context, problem.status if problem else 200)


ARCHIVE_FORMATS = (
    ("coco", "COCO experiment folder (zipped)"),
    ("iohprofiler", "IOHprofiler output (zipped)"),
    ("nevergrad", "nevergrad benchmark CSV"),
    ("csv", "long CSV (function_id,run,value,budget)"),
)


@router.get("/", response_class=HTMLResponse)
def home(
    request: Request,
    sm: SessionmakerDep,
    archived: str | None = None,
    again: str | None = None,
) -> HTMLResponse:
    """The start page: the report form (a set just archived is ticked), the archive form,
    links to functions and leaderboards."""
    if archived is None:
        return _home(request, sm, {})
    stored = next((s for s in _offered_sets(sm) if s.id == archived), None)
    return _home(
        request,
        sm,
        {"result_sets": [archived]} if stored else {},
        archived=stored,
        archived_before=again == "1",
    )


def _check_write(
    request: Request, settings: Settings, write: WriteKind, field: str, refusal: str
) -> None:
    """Refuse a form's ``write`` (401 next to ``field``) unless the write policy allows it."""
    if not may_write_for(settings, request.headers.get("x-api-key"), write):
        raise FormProblem(field, refusal, 401)


@router.post("/archive", response_class=HTMLResponse)
async def archive(request: Request, sm: SessionmakerDep, settings: SettingsDep) -> Response:
    """Archive one algorithm's results file (as ``POST /v1/result-sets`` with a form) and go
    back to the start page with the new set ticked; a refusal names the form's field."""
    values: FormValues = {}
    try:
        values, upload = await _archive_values(request, settings)
        form = read_archive_form(values)
        _check_write(
            request,
            settings,
            "result_sets",
            "archive_file",
            "this deployment archives results only with an API key: send the file to "
            "POST /v1/result-sets with the X-API-Key header",
        )
        state = request.app.state
        archive = form.archive_format != "csv" or upload[0].endswith((".zip", ".tgz", ".gz"))
        admit_sync(
            costs.result_set_cost(
                len(upload[1]), archive=archive, max_rows=settings.max_upload_rows
            ),
            settings,
            field="file",
        )
        stored = await anyio.to_thread.run_sync(
            lambda: result_set_service.create_from_upload(
                sm,
                settings,
                state.dispatcher,
                form.metadata(),
                fmt=form.archive_format,
                filename=upload[0],
                data=upload[1],
                cache=state.table_caches,
                ladder_cache=state.ladder_caches,
            )
        )
    except FormProblem as problem:
        return _home(request, sm, values, problem)
    except AppError as exc:
        field = (exc.field or "file").split(".")[0]
        name = f"archive_{field}" if f"archive_{field}" in LABELS else "archive_file"
        message = str(exc).removeprefix(f"{field}: ")
        return _home(request, sm, values, FormProblem(name, message, exc.status))
    again = "" if stored.created else "&again=1"
    return RedirectResponse(
        f"/?archived={stored.read.id}{again}#sets", status_code=303, headers=PAGE_HEADERS
    )


async def _archive_values(
    request: Request, settings: Settings
) -> tuple[FormValues, tuple[str, bytes]]:
    """The archive form's fields, and the file's name and bytes."""
    async with _form(request, settings, 20, "archive_file") as form:
        values: FormValues = {}
        upload: tuple[str, bytes] | None = None
        for key, item in form.multi_items():
            if isinstance(item, UploadFile):
                raw = await item.read()
                if raw:
                    upload = (item.filename or "upload", raw)
            else:
                values[key] = item
        if upload is None:
            raise FormProblem("archive_file", "choose a file to archive")
        return values, upload


@asynccontextmanager
async def _form(
    request: Request, settings: Settings, fields: int, file_field: str
) -> AsyncIterator[FormData]:
    """The posted form (its files closed afterwards), whose only file is ``file_field``; a
    body python-multipart cannot read, or a file in another field, is a refusal naming it."""
    try:
        form = await request.form(
            max_files=4, max_fields=fields, max_part_size=settings.max_upload_bytes
        )
    except HTTPException as exc:
        raise FormProblem("csv", f"the form could not be read: {exc.detail}") from None
    try:
        for key, item in form.multi_items():
            if isinstance(item, UploadFile) and key != file_field:
                default = "archive_file" if file_field.startswith("archive_") else "csv"
                name = key if key in LABELS else default
                raise FormProblem(name, f"{key!r} takes text, not a file")
        yield form
    finally:
        await form.close()


async def _form_values(request: Request, settings: Settings) -> FormValues:
    """The posted form as strings (the uploaded file read as UTF-8 text into ``csv``)."""
    async with _form(request, settings, 200, "csv_file") as form:
        values: FormValues = {"result_sets": []}
        for key, item in form.multi_items():
            if isinstance(item, UploadFile):
                raw = await item.read()
                if not raw:
                    continue
                try:
                    values["csv"] = raw.decode("utf-8-sig")
                except UnicodeDecodeError as exc:
                    raise FormProblem(
                        "csv", f"the file {item.filename!r} is not UTF-8 (byte {exc.start})"
                    ) from None
                values["csv_file"] = item.filename or "upload"
            elif key == "result_sets":
                sets = values["result_sets"]
                assert isinstance(sets, list)
                sets.append(item)
            elif key == "csv" and "csv_file" in values:
                continue  # the file wins over the pasted text
            else:
                values[key] = item
        values.pop("csv_file", None)
        return values


@router.post("/report", response_class=HTMLResponse)
async def make_report(request: Request, sm: SessionmakerDep, settings: SettingsDep) -> Response:
    """Compute the comparison of the form (as ``POST /v1/comparisons``) and show its report;
    a refused form comes back with the message next to its field (422)."""
    values: FormValues = {}
    try:
        values = await _form_values(request, settings)
        form = read_form(values)
        body = comparison_request(form, settings)
        _check_write(
            request,
            settings,
            "comparisons",
            "csv",
            "this deployment stores comparisons only with an API key: send them to "
            "POST /v1/comparisons with the X-API-Key header",
        )
        state = request.app.state
        out, _created = await anyio.to_thread.run_sync(
            lambda: comparison_service.create_comparison(
                sm,
                settings,
                state.dispatcher,
                body,
                may_queue_builds=may_queue_builds_for(settings, request.headers.get("x-api-key")),
                view="summary",
                cache=state.table_caches,
                ladder_cache=state.ladder_caches,
                admission=lambda estimate: admit_sync(
                    estimate, settings, field=costs.comparison_field(body, estimate)
                ),
                control=sync_control(settings, state.dispatcher),
            )
        )
    except FormProblem as problem:
        return _home(request, sm, values, problem)
    except AppError as exc:
        field = FORM_FIELD_OF.get((exc.field or "csv").split(".")[0], "csv")
        return _home(request, sm, values, FormProblem(field, str(exc), exc.status))
    comparison = ComparisonRead.model_validate(out)
    if comparison.status == "partial":
        context = {
            "title": "Tables are building",
            "comparison": comparison,
            "values": values,
            "pending": [
                _Pending.model_validate(p).problem for p in comparison.absolute.pending or []
            ],
        }
        return _page(request, "pending.html", context, 202)
    return RedirectResponse(f"/report/{comparison.id}", status_code=303, headers=PAGE_HEADERS)


#: The form field a refusal of the comparison is about (the API names its own fields).
FORM_FIELD_OF: dict[str, str] = {
    "csv": "csv",
    "body": "csv",
    "results": "csv",
    "missing": "csv",
    "control": "posthoc",
    "posthoc": "posthoc",
    "alpha": "alpha",
    "budget": "budget",
    "value_runs": "value_runs",
    "values_are": "values_are",
    "reduction": "reduction",
    "result_sets": "result_sets",
}


class _Pending(BaseModel):
    """A problem whose absolute ranks wait (``absolute.pending``; its other fields unread)."""

    model_config = ConfigDict(extra="ignore")
    problem: str


class _Conclusion(BaseModel):
    order: int
    significant: bool | None


class _Flip(BaseModel):
    pair: tuple[str, str]
    kinds: list[str]
    full: _Conclusion
    subset: _Conclusion


class _Subset(BaseModel):
    subset: list[str]
    pairs_compared: int
    flips: list[_Flip]


class _StoredOptions(BaseModel):
    """The options of a stored comparison that the report reads."""

    reduction: str
    values_are: Literal["error", "f"]
    budget: int
    value_runs: int | None = None
    result_sets: list[str] | None = None


def _niia_sides(comparison: ComparisonRead) -> list[tuple[str, list[str], list[_Subset]]]:
    """Per kind of ranks: the flipped pairs and the subsets where conclusions flip."""
    sides = []
    for name, side in (
        ("relative", comparison.niia.relative),
        ("absolute", comparison.niia.absolute),
    ):
        if side is None or side.subsets is None:
            continue
        subsets = [_Subset.model_validate(s) for s in side.subsets]
        pairs = [f"{a} vs {b}" for a, b in side.flipped_pairs or []]
        sides.append((name, pairs, [s for s in subsets if s.flips]))
    return sides


def _profile_request(comparison: ComparisonRead) -> tuple[ProfileRequest | None, str]:
    """The performance profile of the cells' values (the cost of solver s on problem p is
    its value, lower better; a missing cell is a failure), or why there is none."""
    matrix = comparison.matrix or []
    values = [[None if x is None else float(x) for x in row] for row in matrix]
    present = [x for row in values for x in row if x is not None and math.isfinite(x)]
    if not present:
        return None, "no cell has a value"
    if min(present) <= 0:
        return None, (
            "a performance profile needs positive costs (ratios to the best); some cells are "
            "0 or negative — send f − f* with errors above 0, or use POST /v1/profiles with "
            "kind=accuracy and the initial errors"
        )
    return (
        ProfileRequest(
            kind="performance",
            solvers=comparison.algorithms,
            problems=comparison.problems,
            costs=values,
        ),
        "",
    )


def _runtime_request(
    options: _StoredOptions, comparison: ComparisonRead
) -> RuntimeDistributionRequest | None:
    if not options.result_sets:
        return None
    return RuntimeDistributionRequest(
        result_sets=options.result_sets,
        function_ids=list(comparison.problems),
    )


@router.get("/report/{comparison_id}", response_class=HTMLResponse)
def report(
    comparison_id: str, request: Request, sm: SessionmakerDep, settings: SettingsDep
) -> Response:
    """A stored comparison as a report: summary, paper table, CD diagrams, NIIA flips,
    profiles and (for archived sets with trajectories) runtime ECDFs, each with downloads."""
    try:
        answer = comparison_service.get_comparison(sm, comparison_id, view="full")
    except AppError as exc:
        return _page(request, "error.html", {"title": "Not found", "message": str(exc)}, exc.status)
    comparison = ComparisonRead.model_validate(answer)
    options = _StoredOptions.model_validate(comparison.options)
    profile, no_profile = _profile_request(comparison)
    runtime_note = ""
    runtime = _runtime_request(options, comparison)
    if runtime is not None:
        try:
            anytime.runtime_distributions(app_rank_env(request, False), runtime)
        except AppError as exc:
            runtime, runtime_note = None, str(exc)
    else:
        runtime_note = (
            "runtime ECDFs, fixed-budget views and anytime absolute ranks need runs with "
            "trajectories: pick archived result sets (COCO, IOHprofiler or JSON with "
            "trajectories) on the start page"
        )
    summary = comparison_summary.summarize(answer)
    context = {
        "title": f"Report {comparison.id}",
        "comparison": comparison,
        "options": options,
        "table": paper_tables.comparison_table(answer),
        "summary": summary,
        "niia": _niia_sides(comparison),
        "has_absolute": comparison.absolute.status == "complete",
        "profile": profile is not None,
        "no_profile": no_profile,
        "runtime": runtime is not None,
        "runtime_note": runtime_note,
        "figures": FIGURES,
        "warnings": [*comparison.warnings, *(comparison.absolute.warnings or [])],
    }
    return _page(request, "report.html", context)


def _figure_options(
    request: Request, fmt: str, options: plots.FigureOptions
) -> plots.FigureOptions:
    """The options as the API's figure routes take them: ``dpi`` for PNG only."""
    if fmt != "png" and "dpi" in request.query_params:
        raise FormProblem("dpi", f"dpi applies to PNG figures; a {fmt.upper()} is vector", 422)
    return options


def _figure_response(drawn: plots.Rendered, fmt: str) -> Response:
    return Response(
        drawn.content,
        media_type=plots.MEDIA_TYPES[fmt],
        headers=drawn.header() | {"X-Content-Type-Options": "nosniff"},
    )


@router.get("/report/{comparison_id}/profile.{fmt}")
def report_profile(
    comparison_id: str,
    fmt: FigureFormat,
    sm: SessionmakerDep,
    settings: SettingsDep,
    request: Request,
    options: RasterOptions,
) -> Response:
    """The report's performance profile (as ``POST /v1/profiles/plot.{fmt}`` draws it)."""
    comparison = ComparisonRead.model_validate(comparison_service.get_comparison(sm, comparison_id))
    body, why = _profile_request(comparison)
    if body is None:
        raise FormProblem("comparison_id", why, 409)
    return _figure_response(
        anytime.profile_figure(body, settings, fmt, _figure_options(request, fmt, options)), fmt
    )


@router.get("/report/{comparison_id}/{figure}.{fmt}")
def report_runtime_figure(
    comparison_id: str,
    figure: FigureName,
    fmt: FigureFormat,
    request: Request,
    sm: SessionmakerDep,
    settings: SettingsDep,
    options: RasterOptions,
) -> Response:
    """The report's runtime ECDF, fixed-budget or anytime-rank figure (as
    ``POST /v1/runtime-distributions/plot.{fmt}?figure=…`` draws it for the archived sets)."""
    comparison = ComparisonRead.model_validate(comparison_service.get_comparison(sm, comparison_id))
    options_read = _StoredOptions.model_validate(comparison.options)
    body = _runtime_request(options_read, comparison)
    if body is None:
        raise FormProblem("comparison_id", "this comparison has no archived result sets", 409)
    env = app_rank_env(request, False)
    drawn = anytime.runtime_figure(
        anytime.runtime_distributions(env, body),
        figure,
        fmt,
        _figure_options(request, fmt, options),
    )
    return _figure_response(drawn, fmt)


def _dimension(request: Request, text: str | None, title: str) -> int | HTMLResponse | None:
    """A page's ``dim`` query parameter, or the page that refuses it (HTML, 422)."""
    if text is None or text.strip() == "":
        return None
    if text.strip().isdigit() and 1 <= int(text) <= 100_000:
        return int(text)
    message = f"dim: the dimension is a whole number from 1 to 100000, got {text[:40]!r}"
    return _page(request, "error.html", {"title": title, "message": message}, 422)


@router.get("/functions", response_class=HTMLResponse)
def function_list(
    request: Request, suite: str | None = None, dim: str | None = None
) -> HTMLResponse:
    """The hosted functions, filtered by suite and dimension."""
    d = _dimension(request, dim, "Functions")
    if isinstance(d, HTMLResponse):
        return d
    found = function_service.search_functions(suite=(suite or "")[:32] or None, dim=d)
    context = {
        "title": "Functions",
        "functions": found[:LISTED_FUNCTIONS],
        "total": len(found),
        "suite": suite or "",
        "dim": d,
        "suites": _suites(),
    }
    return _page(request, "functions.html", context)


@router.get("/functions/{function_id:path}", response_class=HTMLResponse)
def function_page(function_id: str, request: Request, sm: SessionmakerDep) -> HTMLResponse:
    """One function: what it is, and the v_f plot of each of its ready tables."""
    try:
        fn = function_service.find_function(function_id)
    except AppError as exc:
        return _page(request, "error.html", {"title": "Not found", "message": str(exc)}, exc.status)
    page = table_service.list_tables(sm, function_id=fn.id, status="ready", limit=20, offset=0)
    context = {"title": fn.id, "fn": fn, "tables": page.items, "total": page.total}
    return _page(request, "function.html", context)


@router.get("/leaderboards", response_class=HTMLResponse)
def leaderboard_page(
    request: Request,
    sm: SessionmakerDep,
    settings: SettingsDep,
    suite: str | None = None,
    dim: str | None = None,
    functions: str | None = None,
) -> HTMLResponse:
    """The suite leaderboard of archived sets (as ``GET /v1/leaderboards``), in a table."""
    d = _dimension(request, dim, "Leaderboards")
    if isinstance(d, HTMLResponse):
        return d
    functions = functions.strip() if functions else None
    if functions and not re.fullmatch(r"[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*", functions[:2000]):
        message = f"functions: names separated by commas (e.g. f15,f16,f17), got {functions[:40]!r}"
        return _page(request, "error.html", {"title": "Leaderboards", "message": message}, 422)
    context: dict[str, Any] = {
        "title": "Leaderboards",
        "suites": _suites(),
        "suite": suite or "",
        "dim": d,
        "functions": functions or "",
        "board": None,
        "message": "",
    }
    if suite and d:
        state = request.app.state
        try:
            context["board"] = suite_leaderboards.suite_leaderboard(
                sm,
                settings,
                state.dispatcher,
                suite=suite[:32],
                dim=d,
                budget=None,
                aggregate="median",
                posthoc="nemenyi",
                alpha=0.05,
                may_queue_builds=False,
                cache=state.table_caches,
                ladder_cache=state.ladder_caches,
                instances="1",
                functions=functions or None,
            )
        except AppError as exc:
            context["message"] = str(exc)
            return _page(request, "leaderboards.html", context, exc.status)
    return _page(request, "leaderboards.html", context)


def install_pages(app: Any) -> None:
    """Serve the pages and their static files (``/static``) from ``app``."""
    from fastapi.staticfiles import StaticFiles

    app.include_router(router)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR)), name="static")

    async def _form_problem(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, FormProblem)
        return problem_response(
            status=exc.status,
            type_="not-applicable" if exc.status == 409 else "invalid-input",
            title="Not applicable" if exc.status == 409 else "Invalid input",
            detail=exc.message,
            instance=request.url.path,
            field=exc.field,
        )

    app.add_exception_handler(FormProblem, _form_problem)

    pages = {route.endpoint for route in router.routes if isinstance(route, APIRoute)}

    async def _unavailable(request: Request, exc: Exception) -> Response:
        """A page answers an unavailable database or queue with an HTML 503 (Retry-After);
        the API's routes with their problem+json."""
        error = as_unavailable(request, exc)
        if request.scope.get("endpoint") not in pages:
            return await app_error_response(request, error)
        context = {"title": error.title, "message": error.detail}
        return _page(request, "error.html", context, error.status)

    for cls in (ServiceUnavailable, sa_exc.DBAPIError, sa_exc.TimeoutError):
        app.add_exception_handler(cls, _unavailable)


__all__ = ["install_pages", "router"]
