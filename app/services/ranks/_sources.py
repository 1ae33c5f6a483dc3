"""Where ranks come from: the request's table, sample, ladder or exact form (:class:`Source`)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.domain import absrank
from app.domain.cost import NO_CONTROL, WorkControl
from app.domain.functions import BenchmarkFunction
from app.errors import (
    AppError,
    InvalidInput,
    NotApplicable,
    NotFound,
    TableNotBuilt,
    TableNotReady,
)
from app.schemas.ranks import Awaited, RankRequest
from app.services import ladders, tables, user_tables
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.table_cache import LadderCaches, TableCaches


@dataclass(frozen=True)
class RankEnv:
    """What a rank request needs from the application: where its tables are, and whether it
    may queue them (the one argument of the use case besides the request).

    Attributes
    ----------
    sm : sessionmaker
        The database.
    settings : Settings
    dispatcher : object
        Receives ``enqueue_span``/``enqueue_merge`` for tables this request queues.
    cache : TableCaches
        The application's table caches (``app.state.table_caches``, a worker's).
    ladder_cache : LadderCaches
        The application's ladder caches, likewise.
    may_queue_builds : bool, optional
        Whether a missing default table or ladder may be queued (the caller holds a valid API
        key, or the deployment has none). Default: only when ``settings.api_keys`` is empty
        (:attr:`queues_builds`).
    control : WorkControl, optional
        The request's deadline (:class:`app.domain.cost.WorkControl`), checked by the
        convolutions and quadratures of means and even medians of ``values``.
    """

    sm: sessionmaker[Session]
    settings: Settings
    dispatcher: Any
    cache: TableCaches
    ladder_cache: LadderCaches
    may_queue_builds: bool | None = None
    control: WorkControl = NO_CONTROL
    """Checked between the steps of numerical aggregates (a synchronous request's deadline)."""

    @property
    def queues_builds(self) -> bool:
        """:attr:`may_queue_builds`, its default resolved."""
        if self.may_queue_builds is None:
            return not self.settings.api_keys
        return self.may_queue_builds


@dataclass(frozen=True)
class Source:
    """Where the ranks come from: a stored table or an exact formula."""

    kind: str  # "table" | "analytic" | "nested"
    whole_domain: bool  # False for a δ-box table: v is relative to the box
    lower: np.ndarray
    upper: np.ndarray
    description: dict[str, Any]
    data: absrank.TableData | None = None
    curve: absrank.V1Curve | None = None  # nested regions: the ladder's combined v1
    warnings: tuple[str, ...] = ()
    # regions='auto' while the ladder is not ready: values (as f) in (f*, y_1) are provisional
    awaiting: Awaited | None = None
    provisional_below: float | None = None


def _table_source(view: tables.TableView, data: absrank.TableData) -> Source:
    region = view.spec["region"]
    whole_domain = region["kind"] == "domain"
    return Source(
        kind="table",
        whole_domain=whole_domain,
        lower=np.asarray(region["lower"], dtype=np.float64),
        upper=np.asarray(region["upper"], dtype=np.float64),
        description={
            "kind": "table",
            "table_id": view.id,
            "location": view.location,
            "spec": view.spec,
            "data_sha256": view.data_sha256,
            "max_interp_error": view.max_interp_error,
            # v is P(f(U) <= t) for U uniform on this region: box ranks are their own scale
            "relative_to": "domain" if whole_domain else "box",
        },
        data=data,
    )


class Resolved(NamedTuple):
    """The function a rank request names and where its ranks come from (:func:`resolve`).

    Attributes
    ----------
    fn : BenchmarkFunction
        The registered function, a user table's or an inline sample's.
    source : Source
    """

    fn: BenchmarkFunction
    source: Source


def resolve(store: RankEnv, req: RankRequest) -> Resolved:
    """The function and source of ``req``: its sample, table, exact form, ladder or the default
    table (queued when missing and ``store.queues_builds``)."""
    settings = store.settings
    may_queue_builds = store.queues_builds
    if req.sample is not None:
        return Resolved(*_sample_source(settings, req))
    if req.table_id is not None:
        view, data = tables.load_table_data(store.sm, req.table_id, cache=store.cache)
        return Resolved(user_tables.function_of(view), _table_source(view, data))
    assert req.function_id is not None
    fn = find_function(req.function_id)
    if req.use_analytic and fn.analytic is not None:
        return Resolved(
            fn,
            Source(
                kind="analytic",
                whole_domain=True,
                lower=fn.lower,
                upper=fn.upper,
                description={"kind": "analytic", "form": fn.analytic, "region": "domain"},
            ),
        )
    if req.regions == "nested" and not ladder_applies(fn):
        raise InvalidInput(
            f"{fn.id} has no nested-region ladder: ladders need a known x* and f* and no "
            f"plateau at f* (atom {fn.local.atom}); use regions='domain' or 'auto'",
            field="regions",
        )
    if req.regions != "domain" and ladder_applies(fn):
        nested = _nested_source(store, req, fn, may_queue=may_queue_builds)
        if nested is not None:
            return Resolved(fn, nested)
    source = _default_table_source(store, fn, may_queue=may_queue_builds)
    if req.regions == "auto" and ladder_applies(fn):
        source = _ladder_for_deep_values(store, req, fn, source, may_queue=may_queue_builds)
    return Resolved(fn, source)


def reads_database(store: RankEnv, req: RankRequest) -> bool:
    """Whether :func:`resolve` may open a session for ``req``, asked of the caches up front.

    ``False`` when every table it reads is in ``store.cache`` (ready, or a ladder level known
    missing) and it queues nothing: the answer needs no I/O (the route ranks such requests on
    the event loop). ``True`` when a table must be read, or a missing default table or ladder
    may be queued. An inline sample, an exact form, or a request that fails before any table
    (unknown function) reads nothing. The caches are asked as they are now: a table another
    thread evicts before it is used is read again (correct, only not free of I/O).
    """
    cache = store.cache
    if req.sample is not None:
        return False
    if req.table_id is not None:
        return cache.ready.get(req.table_id) is None
    assert req.function_id is not None
    try:
        fn = find_function(req.function_id)
    except AppError:
        return False
    if req.use_analytic and fn.analytic is not None:
        return False
    ladders_apply = req.regions != "domain" and ladder_applies(fn)
    ladder = _cached_ladder(store, fn) if ladders_apply else "none"
    if req.regions == "nested":
        # a missing ladder is queued (or refused); without a ladder: a problem at once
        return ladder == "unread" or (ladder == "missing" and store.queues_builds)
    if ladder == "unread":
        return True
    default = cache.ready.get(_default_table_id(store.settings, fn))
    if default is None:
        return True
    if not ladders_apply or ladder == "ready":
        return False
    # 'auto' without a ladder: values below y_1 queue it, when the caller may
    y1 = float(default.data.values[0])
    return store.queues_builds and deep_values(fn, req, y1).size > 0


def _cached_ladder(store: RankEnv, fn: BenchmarkFunction) -> str:
    """What the caches know of ``fn``'s ladder, as :func:`app.services.ladders.ladder_curve`
    reads it (level 0 first, up to the first level not ready): ``ready`` (every level cached),
    ``missing`` (a level known missing: no SQL before it), ``unread`` (a level to read from
    the database) or ``none`` (no ladder can be laid out for ``fn``)."""
    try:
        ids = ladders.ladder_table_ids(store.settings, fn.id, cache=store.ladder_cache)
    except AppError:
        return "none"
    for table_id in ids:
        if store.cache.ready.get(table_id) is None:
            return "missing" if store.cache.missing.has(table_id) else "unread"
    return "ready"


def _default_table_id(settings: Settings, fn: BenchmarkFunction) -> str:
    """The id of ``fn``'s default table (full domain, the default N, seed 0)."""
    return tables.table_id_for(tables.spec_hash(tables.table_spec(settings, function_id=fn.id)))


def _sample_source(settings: Settings, req: RankRequest) -> tuple[BenchmarkFunction, Source]:
    """An inline sample: Eq. 28 on it directly (exact, nothing stored)."""
    assert req.sample is not None
    data = user_tables.inline_sample_data(settings, req.sample)
    fn = user_tables.sample_function(req.f_opt, req.f_max)
    return fn, Source(
        kind="sample",
        whole_domain=True,
        lower=fn.lower,
        upper=fn.upper,
        description={
            "kind": "sample",
            "n": data.n,
            "f_opt": req.f_opt,
            "f_max": req.f_max,
            "stated": user_tables.STATED,
            "relative_to": "domain",
        },
        data=data,
    )


def ladder_applies(fn: BenchmarkFunction) -> bool:
    """Nested regions need ``x*`` and ``f*`` and no plateau at ``f*``."""
    return fn.x_opt is not None and fn.f_opt is not None and fn.local.atom == 0.0


def _nested_source(
    store: RankEnv, req: RankRequest, fn: BenchmarkFunction, *, may_queue: bool
) -> Source | None:
    """The ladder's curve; ``None`` (use the domain table) when ``auto`` finds it not ready.

    Raises
    ------
    app.errors.TableNotBuilt, app.errors.TableNotReady
        ``regions='nested'`` and the ladder is missing (and may not be queued) or building.
    """

    def load() -> ladders.LadderCurve:
        return _load_ladder(store, req, fn)

    try:
        curve, views = load()
    except (InvalidInput, NotApplicable) as exc:
        if req.regions == "auto":  # no ladder can be laid out for this function
            return None
        exc.field = "regions"
        raise
    except (TableNotBuilt, TableNotReady) as exc:
        if req.regions == "auto":
            return None
        exc.field = "regions"
        if not (isinstance(exc, TableNotBuilt) and may_queue):
            raise
        with domain_errors_as_problems():
            _request_ladder(store, fn)
        try:  # an inline dispatcher (tests, tiny ladders) may have built it already
            curve, views = load()
        except (TableNotBuilt, TableNotReady) as again:
            again.field = "regions"
            raise
    return _ladder_source(store, fn, curve, views)


def _request_ladder(store: RankEnv, fn: BenchmarkFunction) -> None:
    """Queue the missing tables of ``fn``'s ladder (:func:`app.services.ladders.request_ladder`)."""
    ladders.request_ladder(
        store.sm,
        store.settings,
        store.dispatcher,
        fn.id,
        cache=store.cache,
        ladder_cache=store.ladder_cache,
    )


def _load_ladder(store: RankEnv, req: RankRequest, fn: BenchmarkFunction) -> ladders.LadderCurve:
    """The ladder's curve and tables; never queues (:func:`app.services.ladders.ladder_curve`)."""
    with domain_errors_as_problems():
        return ladders.ladder_curve(
            store.sm,
            store.settings,
            fn.id,
            tail=req.tail,
            k_anchor=req.tail_k,
            confidence=req.confidence,
            cache=store.cache,
            ladder_cache=store.ladder_cache,
        )


def _ladder_source(
    store: RankEnv,
    fn: BenchmarkFunction,
    curve: absrank.V1Curve,
    views: list[tables.TableView],
) -> Source:
    return Source(
        kind="nested",
        whole_domain=True,
        lower=fn.lower,
        upper=fn.upper,
        description={
            "kind": "nested",
            "ladder": ladders.describe_ladder(store.settings, views, cache=store.ladder_cache),
            "table_ids": [v.id for v in views],
            "data_sha256": [v.data_sha256 for v in views],
            "relative_to": "domain",
        },
        curve=curve,
    )


def deep_values(fn: BenchmarkFunction, req: RankRequest, y1: float) -> np.ndarray:
    """The values sent (as ``f``) in ``(f*, y_1)``: where a tail model extrapolates (at or below
    ``f*`` the rank is exact, at or above ``y_1`` the table interpolates)."""
    assert fn.f_opt is not None
    sent = (
        req.values
        if req.values is not None
        else [v for runs in (req.runs_by_algorithm or {}).values() for v in runs]
    )
    x = np.asarray(sent, dtype=np.float64)
    t = x + value_offset(fn, req)
    out_: np.ndarray = t[(t < y1) & above_minimum(fn, req, x)]
    return out_


def _ladder_for_deep_values(
    store: RankEnv,
    req: RankRequest,
    fn: BenchmarkFunction,
    table: Source,
    *,
    may_queue: bool,
) -> Source:
    """``regions='auto'`` without a ready ladder: when values lie below the domain table's
    lowest sample (and above ``f*``), queue the ladder (if the caller may queue builds) and
    rank from it if it is ready (an inline dispatcher builds it at once); else the domain
    table, its values there marked provisional and the ladder named as ``awaiting``."""
    assert table.data is not None
    y1 = float(table.data.values[0])
    if deep_values(fn, req, y1).size == 0:
        return table  # nothing needs the ladder: today's answer, nothing queued
    try:
        if may_queue:
            with domain_errors_as_problems():
                _request_ladder(store, fn)
        curve, views = _load_ladder(store, req, fn)
    except (InvalidInput, NotApplicable):  # no ladder can be laid out for this function
        return table
    except (TableNotBuilt, TableNotReady) as exc:
        return replace(
            table,
            awaiting=_awaited_ladder(store, fn, exc, may_queue=may_queue),
            provisional_below=y1,
        )
    return _ladder_source(store, fn, curve, views)


def _awaited_ladder(
    store: RankEnv, fn: BenchmarkFunction, exc: AppError, *, may_queue: bool
) -> Awaited:
    """The ladder a provisional answer waits for, from the problem that its level raised."""
    request = {"function_id": fn.id, "ladder": True}
    built = isinstance(exc, TableNotReady)
    status = str(exc.extra.get("table_status", "building")) if built else "not-built"
    if not built and not may_queue:
        detail = (
            f"the nested-region ladder of {fn.id} is not built, and only a holder of an API key "
            f'may queue it: POST /v1/tables {{"function_id": "{fn.id}", "ladder": true}} '
            "with an X-API-Key header"
        )
    elif status == "failed":
        detail = (
            f"{exc.detail}; a holder of an API key may retry it with POST /v1/tables "
            f'{{"function_id": "{fn.id}", "ladder": true}}'
        )
    else:
        detail = exc.detail or ""
    return Awaited(
        kind="ladder",
        status=status,
        table_id=exc.extra.get("table_id"),
        table_ids=ladders.ladder_table_ids(store.settings, fn.id, cache=store.ladder_cache),
        location=exc.extra.get("location"),
        table_request=request if status in ("not-built", "failed") else None,
        detail=detail,
    )


def _default_table_source(store: RankEnv, fn: BenchmarkFunction, *, may_queue: bool) -> Source:
    """The default full-domain table (queued when missing and allowed; 409 while it builds)."""
    sm, settings, cache = store.sm, store.settings, store.cache
    ready = tables.cached_ready_table(sm, _default_table_id(settings, fn), cache=cache)
    if ready is not None:  # the hot path: no SQL
        return _table_source(*ready)
    if may_queue:
        with domain_errors_as_problems():
            view, _ = tables.request_table(
                sm, settings, store.dispatcher, function_id=fn.id, cache=cache
            )
    else:
        view = _existing_default_table(sm, settings, fn)
    try:
        # re-read: a worker may have finished
        view, data = tables.load_table_data(sm, view.id, cache=cache)
    except TableNotReady as exc:  # 409 + Location while it builds
        raise _naming_function_id(exc, fn, may_queue_builds=may_queue) from None
    return _table_source(view, data)


def _existing_default_table(
    sm: sessionmaker[Session], settings: Settings, fn: BenchmarkFunction
) -> tables.TableView:
    """The default table of ``fn`` if it exists; never creates it (anonymous requests).

    Raises
    ------
    app.errors.TableNotBuilt
        No such table: a key-holder must request it.
    """
    spec = tables.table_spec(settings, function_id=fn.id)
    table_id = tables.table_id_for(tables.spec_hash(spec))
    try:
        return tables.get_table(sm, table_id)
    except NotFound:
        raise TableNotBuilt(
            f"the default table of {fn.id} (full domain, N = {spec['n']}, seed 0; id {table_id}) "
            "is not built, and only a holder of an API key may queue it: POST /v1/tables "
            f'{{"function_id": "{fn.id}"}} with an X-API-Key header',
            field="function_id",
            extra={"table_id": table_id, "table_request": {"function_id": fn.id}},
        ) from None


def _naming_function_id(
    error: TableNotReady, fn: BenchmarkFunction, *, may_queue_builds: bool
) -> TableNotReady:
    """The 409 of a default table that is building or failed: the request named a function."""
    error.field = "function_id"
    if error.extra.get("table_status") == "failed" and not may_queue_builds:
        error.detail = (
            f"the default table {error.extra.get('table_id')} of {fn.id} failed "
            f"({error.extra.get('error')}); a holder of an API key may retry it with "
            f'POST /v1/tables {{"function_id": "{fn.id}"}}'
        )
    return error


def value_offset(fn: BenchmarkFunction, req: RankRequest) -> float:
    """What to add to the values sent to get values of ``f`` (``f*`` for errors)."""
    if req.values_are != "error":
        return 0.0
    if fn.f_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known f*, so errors cannot be ranked", field="values_are"
        )
    return float(fn.f_opt)


def above_minimum(fn: BenchmarkFunction, req: RankRequest, sent: np.ndarray) -> np.ndarray:
    """Which values sent lie above ``f*``: errors ``e > 0`` (not ``f* + e > f*``, which an error
    below ``ulp(f*)/2`` fails), values of ``f`` ``t > f*``."""
    assert fn.f_opt is not None
    return sent > 0.0 if req.values_are == "error" else sent > fn.f_opt
