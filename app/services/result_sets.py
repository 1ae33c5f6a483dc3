"""The results archive: store one algorithm's results (all or nothing), read them back.

A set arrives as JSON rows, a long CSV, or an uploaded file in one of the field's formats; all
three become :class:`app.domain.results.ImportedResults`, are checked run by run against the
function registry, and are stored in one transaction. The id is the hash of the normalized
content (:mod:`app.domain.archive`): the same content twice is the same set. Storing a set
queues the tables its ranks need (:func:`queue_builds`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

import numpy as np
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain import archive, importers
from app.domain.errors import DomainError, UnknownFunction, UploadLimit, UploadTooLarge
from app.domain.functions import BenchmarkFunction, get_function
from app.domain.importers import UploadedFile, UploadLimits, longcsv
from app.domain.results import ImportedResults, RunResult, Trajectory
from app.errors import Conflict, InvalidInput, NotApplicable, NotFound, PayloadTooLarge
from app.models.result_sets import ResultSet
from app.models.tables import Table
from app.repositories.cpus import CpuRepository
from app.repositories.result_sets import NewRun, PointRow, ResultSetRepository, RunRow
from app.repositories.tables import TableRepository
from app.schemas.result_sets import (
    FunctionSummary,
    NoteRead,
    Queued,
    QueuedLadder,
    QueuedTable,
    ResultSetCreate,
    ResultSetItem,
    ResultSetList,
    ResultSetMetadata,
    ResultSetRead,
    RunRead,
    TrajectoryIn,
    UploadMetadata,
)
from app.services import tables
from app.services.errors import domain_errors_as_problems
from app.services.provenance import provenance
from app.services.ranks import ladder_applies
from app.services.table_cache import AppCaches, LadderCaches, TableCaches

SM = sessionmaker[Session]

#: Metadata fields that are part of a set's content (and of the query of a re-post).
METADATA_FIELDS = tuple(ResultSetMetadata.model_fields)

#: Where a fault of a run lies: ``(index of the run as sent, attribute) -> request field``.
Locate = Callable[[int, str], str]


def location(set_id: str) -> str:
    """The URL path of a stored set."""
    return f"/v1/result-sets/{set_id}"


#: The setting behind each :class:`UploadLimits` field (a 413 names the setting to raise).
UPLOAD_SETTINGS: dict[UploadLimit, str] = {
    "max_upload_bytes": "max_upload_bytes",
    "max_decompressed_bytes": "max_upload_decompressed_bytes",
    "max_files": "max_upload_files",
    "max_rows": "max_upload_rows",
}


@contextmanager
def _limits_named(settings: Settings) -> Iterator[None]:
    """An importer's :class:`UploadTooLarge` with the setting it passed named in its detail."""
    try:
        yield
    except UploadTooLarge as exc:
        name = UPLOAD_SETTINGS[exc.limit]
        raise UploadTooLarge(
            f"{exc} (the limit is the setting {name} = {getattr(settings, name)})",
            limit=exc.limit,
            field=exc.field,
        ) from exc


def upload_limits(settings: Settings) -> UploadLimits:
    """The bounds of one upload, from the settings."""
    return UploadLimits(
        max_upload_bytes=settings.max_upload_bytes,
        max_decompressed_bytes=settings.max_upload_decompressed_bytes,
        max_files=settings.max_upload_files,
        max_rows=settings.max_upload_rows,
    )


@dataclass(frozen=True)
class Stored:
    """The answer of a POST: the set, and whether this request created it."""

    read: ResultSetRead
    created: bool


# ---------------------------------------------------------------------------- inputs


def _json_runs(body: ResultSetCreate) -> list[RunResult]:
    """The rows of a JSON body as runs; a malformed trajectory names its row."""
    runs = []
    for i, row in enumerate(body.results):
        traj = None
        if row.trajectory is not None:
            with domain_errors_as_problems(f"results.{i}.trajectory"):
                traj = Trajectory(tuple(row.trajectory.evaluations), tuple(row.trajectory.best))
        runs.append(RunResult(row.function_id, row.run, row.value, row.budget, traj))
    return runs


def create_from_json(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    body: ResultSetCreate,
    *,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Stored:
    """Store the set of a JSON body (fields ``results.{i}.…`` name a faulty run).

    ``cache`` and ``ladder_cache`` are the application's table and ladder caches
    (``app.state``), for the builds queued (as in every ``create_*`` here)."""
    runs = _json_runs(body)
    _check_size(runs, settings, "results")
    meta = ResultSetMetadata.model_validate(body.model_dump(include=set(METADATA_FIELDS)))
    return _store(
        sm,
        settings,
        dispatcher,
        meta,
        runs,
        (),
        "json",
        lambda i, a: f"results.{i}.{a}",
        AppCaches(cache, ladder_cache),
    )


def create_from_csv(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    meta: ResultSetMetadata,
    data: bytes,
    *,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Stored:
    """Store the set of a ``text/csv`` body (its faults name ``body`` and the line)."""
    with domain_errors_as_problems("body"):
        try:
            with _limits_named(settings):
                imported = longcsv.read(
                    [UploadedFile("body", data)],
                    limits=upload_limits(settings),
                    values_are=meta.values_are,
                )
        except DomainError as exc:  # the body is the file
            if exc.field == "file":
                exc.field = "body"
            raise
    return _store_imported(
        sm,
        settings,
        dispatcher,
        meta,
        imported,
        "csv",
        field="body",
        caches=AppCaches(cache, ladder_cache),
    )


def create_from_upload(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    meta: UploadMetadata,
    *,
    fmt: str,
    filename: str,
    data: bytes,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Stored:
    """Store the set of a ``multipart/form-data`` upload read by the importer of ``fmt``.

    The set's name defaults to the algorithm the files name, ``values_are`` to what the
    importer reports.
    """
    if len(data) > settings.max_upload_bytes:  # the body limit leaves room for the form
        raise InvalidInput(
            f"the file has {len(data)} bytes, over max_upload_bytes = {settings.max_upload_bytes}",
            field="file",
        )
    if meta.name is None and fmt == "csv":  # a long CSV never names its algorithm: say so first
        raise InvalidInput(
            "name: a long CSV does not name the algorithm; send a name field", field="name"
        )
    with domain_errors_as_problems("file"), _limits_named(settings):
        imported = importers.read_upload(
            fmt, filename, data, limits=upload_limits(settings), values_are=meta.values_are
        )
    name = meta.name or imported.algorithm
    if name is None:
        raise InvalidInput(
            "name: the files do not name the algorithm; send a name field", field="name"
        )
    full = ResultSetMetadata.model_validate(
        meta.model_dump() | {"name": name[:200], "values_are": imported.values_are}
    )
    return _store_imported(
        sm,
        settings,
        dispatcher,
        full,
        imported,
        fmt,
        field="file",
        caches=AppCaches(cache, ladder_cache),
    )


def _store_imported(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    meta: ResultSetMetadata,
    imported: ImportedResults,
    source_format: str,
    *,
    field: str,
    caches: AppCaches,
) -> Stored:
    runs = list(imported.runs)
    _check_size(runs, settings, field)
    notes = tuple(NoteRead(code=n.code, message=n.message, file=n.file) for n in imported.notes)
    return _store(
        sm, settings, dispatcher, meta, runs, notes, source_format, lambda i, a: field, caches
    )


# ---------------------------------------------------------------------------- checks


def _check_size(runs: Sequence[RunResult], settings: Settings, field: str) -> None:
    """Runs plus trajectory points within ``max_upload_rows``."""
    n_rows = sum(1 + (len(r.trajectory.evaluations) if r.trajectory else 0) for r in runs)
    if n_rows > settings.max_upload_rows:
        raise PayloadTooLarge(
            f"{n_rows} runs and trajectory points exceed max_upload_rows = "
            f"{settings.max_upload_rows}",
            field=field,
        )


def _check_runs(
    runs: Sequence[RunResult], meta: ResultSetMetadata, locate: Locate
) -> dict[str, BenchmarkFunction]:
    """Check every run against its function; return the functions by id.

    Raises
    ------
    app.errors.InvalidInput
        An unknown function id, a run the archive's rules refuse
        (:func:`app.domain.archive.run_problem`), a duplicate ``(function_id, run)``.
    """
    functions: dict[str, BenchmarkFunction] = {}
    seen: set[tuple[str, int]] = set()
    for i, run in enumerate(runs):
        fn = functions.get(run.function_id)
        if fn is None:
            try:
                fn = functions[run.function_id] = get_function(run.function_id)
            except DomainError as exc:
                raise InvalidInput(str(exc), field=locate(i, "function_id")) from None
        key = (run.function_id, run.run)
        if key in seen:
            raise InvalidInput(
                f"duplicate run {run.run} of {run.function_id}", field=locate(i, "run")
            )
        seen.add(key)
        problem = archive.run_problem(run, fn, meta.values_are)
        if problem is not None:
            attr, message = problem
            raise InvalidInput(f"{run.function_id} run {run.run}: {message}", field=locate(i, attr))
    return functions


def superseded_detail(old: str, newer: str) -> str:
    """The 409 detail of a correction of a set that was corrected already."""
    return (
        f"result set {old} is already superseded by {newer}; a further correction supersedes "
        f"{newer}"
    )


def json_set_id(body: ResultSetCreate) -> str:
    """The id the set of a JSON body gets (no checks, nothing stored)."""
    meta = body.model_dump(include=set(METADATA_FIELDS))
    return archive.set_id(archive.content_sha256(meta, _json_runs(body)))


def _check_references(repo: ResultSetRepository, session: Session, meta: ResultSetMetadata) -> None:
    """``supersedes`` names an archived set not corrected yet; ``cpu_id`` a registered CPU."""
    if meta.supersedes is not None:
        if repo.get(meta.supersedes) is None:
            raise InvalidInput(
                f"supersedes: no result set with id {meta.supersedes[:30]!r}", field="supersedes"
            )
        newer = repo.superseded_by([meta.supersedes]).get(meta.supersedes)
        if newer is not None:
            raise Conflict(superseded_detail(meta.supersedes, newer), field="supersedes")
    if meta.cpu_id is not None and CpuRepository(session).get(meta.cpu_id) is None:
        raise InvalidInput(
            f"no CPU with id {meta.cpu_id} in the registry (GET /v1/cpus)", field="cpu_id"
        )


# ---------------------------------------------------------------------------- storing


def _store(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    meta: ResultSetMetadata,
    runs: list[RunResult],
    notes: Sequence[NoteRead],
    source_format: str,
    locate: Locate,
    caches: AppCaches,
) -> Stored:
    """Check, hash and store a set in one transaction; queue what its ranks need."""
    functions = _check_runs(runs, meta, locate)
    metadata = meta.model_dump(include=set(METADATA_FIELDS))
    sha = archive.content_sha256(metadata, runs)
    set_id = archive.set_id(sha)
    runs = sorted(runs, key=lambda r: (r.function_id, r.run))
    created = True
    try:
        with session_scope(sm) as session:
            repo = ResultSetRepository(session)
            if repo.by_content(sha) is not None:
                created = False
            else:
                _check_references(repo, session, meta)
                repo.add(
                    _row(set_id, sha, meta, runs, functions, notes, source_format),
                    _new_runs(set_id, runs, functions),
                    _points(set_id, runs),
                )
    except IntegrityError:  # the same content stored concurrently: that set is this one
        with session_scope(sm) as session:
            if ResultSetRepository(session).by_content(sha) is None:
                raise
        created = False
    read = get_result_set(sm, set_id)
    if not created:  # its builds were queued when it was stored
        return Stored(read, created)
    queued = queue_builds(
        sm,
        settings,
        dispatcher,
        runs,
        functions,
        meta,
        cache=caches.tables,
        ladder_cache=caches.ladders,
    )
    return Stored(read.model_copy(update={"queued": queued}), created)


def _row(
    set_id: str,
    sha: str,
    meta: ResultSetMetadata,
    runs: Sequence[RunResult],
    functions: dict[str, BenchmarkFunction],
    notes: Sequence[NoteRead],
    source_format: str,
) -> ResultSet:
    return ResultSet(
        id=set_id,
        content_sha256=sha,
        **meta.model_dump(include=set(METADATA_FIELDS)),
        source_format=source_format,
        suites=sorted({fn.suite for fn in functions.values()}),
        n_functions=len(functions),
        n_runs=len(runs),
        has_trajectories=any(r.trajectory is not None for r in runs),
        notes=[n.model_dump() for n in notes],
        provenance=provenance({"content_sha256": sha}, source_format=source_format),
        created_at=datetime.now(UTC),
    )


def _new_runs(
    set_id: str, runs: Sequence[RunResult], functions: dict[str, BenchmarkFunction]
) -> list[NewRun]:
    return [
        NewRun(
            set_id=set_id,
            function_id=r.function_id,
            run=r.run,
            suite=functions[r.function_id].suite,
            dim=functions[r.function_id].dim,
            value=r.value,
            budget=r.budget,
        )
        for r in runs
    ]


def _points(set_id: str, runs: Sequence[RunResult]) -> list[PointRow]:
    return [
        PointRow(set_id, r.function_id, r.run, e, b)
        for r in runs
        if r.trajectory is not None
        for e, b in zip(r.trajectory.evaluations, r.trajectory.best, strict=True)
    ]


# ---------------------------------------------------------------------------- builds


def queue_builds(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    runs: Sequence[RunResult],
    functions: dict[str, BenchmarkFunction],
    meta: ResultSetMetadata,
    *,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Queued:
    """Queue the default table of each function that lacks one, and the ladders values need.

    A ladder of nested regions is queued for a function where ladders apply (known ``x*`` and
    ``f*``, no plateau at ``f*``) and no exact v1 serves the ranks instead, when one of the
    set's values (as ``f``) lies below the domain table's smallest sample ``y_1`` — there the
    domain table only bounds the rank. A domain table still building is decided when it is
    ready (:func:`on_table_ready`). Idempotent: what exists is
    left as it is and not listed. ``cache`` and ``ladder_cache`` are the application's (or the
    worker's) table and ladder caches.
    """
    lowest: dict[str, float] = {}
    for r in runs:
        lowest[r.function_id] = min(lowest.get(r.function_id, math.inf), r.value)
    queued = Queued()
    for fid in sorted(functions):
        fn = functions[fid]
        table = _default_table(sm, settings, dispatcher, fn, queued, cache)
        if not ladder_applies(fn) or fn.analytic is not None:
            continue  # no ladder, or an exact v1 that ranks use instead of one
        offset = fn.f_opt if meta.values_are == "error" and fn.f_opt is not None else 0.0
        if table is None or table.status != "ready" or table.summary is None:
            continue  # decided when the table is ready (on_table_ready, run by the worker)
        if lowest[fid] + offset < float(table.summary["y_1"]):
            _ladder(
                sm,
                settings,
                dispatcher,
                fid,
                "below-samples",
                queued,
                AppCaches(cache, ladder_cache),
            )
    return queued


def on_table_ready(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    table_id: str,
    *,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> bool:
    """After a table became ready: queue its function's ladder if archived values need it.

    Storing a set decides for the tables that are ready then; for a default domain table that
    was still building, the worker that finishes it calls this. Only the default domain table
    of a function where a ladder applies and no exact v1 serves counts; the ladder is queued
    when some archived run's value (as ``f``) lies below the table's smallest sample.
    Idempotent. Returns whether a ladder was requested. ``cache`` and ``ladder_cache`` are
    the worker's (:func:`workers.app.worker_caches`) or the application's (``app.state``).
    """
    view = tables.get_table(sm, table_id)
    default_id = tables.table_id_for(
        tables.spec_hash(tables.table_spec(settings, function_id=view.function_id))
    )
    if view.id != default_id or not view.ready or view.summary is None:
        return False
    fn = get_function(view.function_id)
    if not ladder_applies(fn) or fn.analytic is not None:
        return False
    with session_scope(sm) as session:
        lowest = ResultSetRepository(session).lowest_values(fn.id)
    offset = fn.f_opt if fn.f_opt is not None else math.nan
    as_f = [lowest[k] + (offset if k == "error" else 0.0) for k in lowest]
    if not any(v < float(view.summary["y_1"]) for v in as_f):
        return False
    queued = Queued()
    _ladder(
        sm,
        settings,
        dispatcher,
        fn.id,
        "below-samples",
        queued,
        AppCaches(cache, ladder_cache),
    )
    return bool(queued.ladders)


def _existing_tables(sm: SM, table_ids: Sequence[str]) -> dict[str, Table]:
    """The tables among ``table_ids`` that exist (primary-key reads in one session)."""
    with session_scope(sm) as session:
        repo = TableRepository(session)
        found = {tid: repo.get(tid) for tid in table_ids}
        out = {tid: t for tid, t in found.items() if t is not None}
        for t in out.values():
            session.expunge(t)
        return out


def _default_table(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    fn: BenchmarkFunction,
    queued: Queued,
    cache: TableCaches,
) -> Table | None:
    """The default domain table of ``fn``, requested (and listed in ``queued``) if missing."""
    table_id = tables.table_id_for(tables.spec_hash(tables.table_spec(settings, function_id=fn.id)))
    table = _existing_tables(sm, [table_id]).get(table_id)
    if table is not None:
        return table
    view, created = tables.request_table(sm, settings, dispatcher, function_id=fn.id, cache=cache)
    if created:
        queued.tables.append(
            QueuedTable(
                function_id=fn.id, table_id=view.id, location=view.location, status=view.status
            )
        )
    return _existing_tables(sm, [table_id]).get(table_id)  # an inline dispatcher may be done


def _ladder(
    sm: SM,
    settings: Settings,
    dispatcher: Any,
    fid: str,
    reason: str,
    queued: Queued,
    caches: AppCaches,
) -> None:
    """Request the ladder of ``fid`` when one of its tables is missing; list it in ``queued``."""
    try:
        ids = tables.ladder_table_ids(settings, fid, cache=caches.ladders)
    except (InvalidInput, NotApplicable, UnknownFunction):  # no ladder can be laid out here
        return
    if len(_existing_tables(sm, ids)) == len(ids):
        return
    views = tables.request_ladder(
        sm, settings, dispatcher, fid, cache=caches.tables, ladder_cache=caches.ladders
    )
    queued.ladders.append(
        QueuedLadder(
            function_id=fid,
            reason=reason,  # type: ignore[arg-type]  # a str the model checks against its Literal
            levels=len(views),
            table_ids=[v.id for v in views],
        )
    )


# ---------------------------------------------------------------------------- reading


def _item(row: ResultSet, superseded_by: str | None) -> ResultSetItem:
    return ResultSetItem.model_validate(
        {
            "id": row.id,
            "location": location(row.id),
            "content_sha256": row.content_sha256,
            **{name: getattr(row, name) for name in METADATA_FIELDS},
            "superseded_by": superseded_by,
            "source_format": row.source_format,
            "suites": list(row.suites),
            "n_functions": row.n_functions,
            "n_runs": row.n_runs,
            "has_trajectories": row.has_trajectories,
            "created_at": row.created_at,
        }
    )


def list_result_sets(
    sm: SM,
    *,
    suite: str | None,
    function_id: str | None,
    algorithm: str | None,
    limit: int,
    offset: int,
) -> ResultSetList:
    """Archived sets, newest first, filtered by suite, function and algorithm name."""
    with session_scope(sm) as session:
        repo = ResultSetRepository(session)
        rows, total = repo.list(
            suite=suite, function_id=function_id, name=algorithm, limit=limit, offset=offset
        )
        newer = repo.superseded_by([r.id for r in rows])
        items = [_item(r, newer.get(r.id)) for r in rows]
    return ResultSetList(items=items, total=total, limit=limit, offset=offset)


@dataclass(frozen=True)
class _Loaded:
    row: ResultSet
    superseded_by: str | None
    runs: list[RunRow]
    points: list[PointRow]


def _load(sm: SM, set_id: str) -> _Loaded:
    with session_scope(sm) as session:
        repo = ResultSetRepository(session)
        row = repo.get(set_id)
        if row is None:
            raise NotFound(f"no result set with id {set_id!r}", field="set_id")
        session.expunge(row)
        return _Loaded(
            row,
            repo.superseded_by([set_id]).get(set_id),
            repo.runs(set_ids=[set_id]),
            repo.points(set_ids=[set_id]),
        )


def _run_results(loaded: _Loaded) -> list[RunResult]:
    """The stored runs with their trajectories, by ``(function_id, run)``."""
    by_run: dict[tuple[str, int], list[PointRow]] = {}
    for p in loaded.points:
        by_run.setdefault((p.function_id, p.run), []).append(p)
    out = []
    for r in loaded.runs:
        pts = by_run.get((r.function_id, r.run))
        traj = (
            None
            if not pts
            else Trajectory(tuple(p.evaluations for p in pts), tuple(p.best for p in pts))
        )
        out.append(RunResult(r.function_id, r.run, r.value, r.budget, traj))
    return out


def _summaries(runs: Sequence[RunResult]) -> list[FunctionSummary]:
    groups: dict[str, list[RunResult]] = {}
    for r in runs:
        groups.setdefault(r.function_id, []).append(r)
    out = []
    for fid, group in groups.items():
        fn = get_function(fid)
        values = np.array([r.value for r in group])
        budgets = [r.budget for r in group]
        out.append(
            FunctionSummary(
                function_id=fid,
                suite=fn.suite,
                dim=fn.dim,
                runs=len(group),
                budget_min=min(budgets),
                budget_max=max(budgets),
                value_min=float(values.min()),
                value_median=float(np.median(values)),
                value_max=float(values.max()),
                has_trajectories=any(r.trajectory is not None for r in group),
            )
        )
    return out


def get_result_set(
    sm: SM, set_id: str, *, include_runs: bool = False, max_rows: int | None = None
) -> ResultSetRead:
    """One archived set: metadata, per-function summary, notes (and its runs when asked).

    Raises
    ------
    app.errors.NotFound
        Unknown id.
    app.errors.InvalidInput
        ``include_runs`` for a set with more than ``max_rows`` runs and points
        (``field="include"``; its ``.csv`` has them all).
    """
    loaded = _load(sm, set_id)
    if include_runs and max_rows is not None and len(loaded.runs) + len(loaded.points) > max_rows:
        raise InvalidInput(
            f"set {set_id} has {len(loaded.runs)} runs and {len(loaded.points)} trajectory "
            f"points, over max_inline_rows = {max_rows}; GET {location(set_id)}.csv has them",
            field="include",
        )
    runs = _run_results(loaded)
    row = loaded.row
    return ResultSetRead(
        **dict(_item(row, loaded.superseded_by)),
        notes=row.notes,
        functions=_summaries(runs),
        runs=[_run_read(r) for r in runs] if include_runs else None,
        provenance=row.provenance,
    )


def _run_read(r: RunResult) -> RunRead:
    traj = r.trajectory
    return RunRead(
        function_id=r.function_id,
        run=r.run,
        value=r.value,
        budget=r.budget,
        trajectory=None
        if traj is None
        else TrajectoryIn(evaluations=list(traj.evaluations), best=list(traj.best)),
    )


def result_set_csv(sm: SM, set_id: str) -> tuple[str, str]:
    """The long CSV of a set's runs and its content hash (the CSV's ETag).

    Its comment lines give the query string that re-posts it as the same set
    (``POST /v1/result-sets?...`` with the CSV as a ``text/csv`` body).
    """
    loaded = _load(sm, set_id)
    row = loaded.row
    query = urlencode(
        {name: getattr(row, name) for name in METADATA_FIELDS if getattr(row, name) is not None}
    )
    comments = (
        f"absrank result set {row.id} (content sha256 {row.content_sha256})",
        f"values are {'f(x)' if row.values_are == 'f' else 'errors f(x) - f*'}",
        f"re-post as the same set: POST /v1/result-sets?{query} (Content-Type: text/csv)",
    )
    return longcsv.write(_run_results(loaded), comments=comments), row.content_sha256
