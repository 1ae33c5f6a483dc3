"""Use case of ``POST /v1/absolute-ranks``: resolve the table (or analytic form), rank, explain."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.domain import absrank, aggregates, notices
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
from app.services import nested, tables, user_tables
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.provenance import provenance
from app.services.regions import rank_context


def _below_minimum_text(count: int, f_opt: float, first: str) -> str:
    """The text of the ``"below-minimum"`` warning, naming the first value ``first``."""
    return (
        f"{count} value(s) lie below f* = {f_opt!r} (first: {first}); "
        "no point of the domain reaches them"
    )


def _int(data: Mapping[str, notices.JSONValue], key: str) -> int:
    x = data[key]
    assert isinstance(x, int)
    return x


def _float(data: Mapping[str, notices.JSONValue], key: str) -> float:
    x = data[key]
    assert isinstance(x, int | float)
    return float(x)


#: Warnings that point at one value (``data["index"]``), by code: their text naming it ``where``.
_LOCATED: dict[str, Callable[[Mapping[str, notices.JSONValue], str], str]] = {
    "numerical-error": lambda d, where: aggregates.numerical_error_warning(
        _int(d, "count"), _float(d, "threshold_log10"), where
    ),
    "below-minimum": lambda d, where: _below_minimum_text(
        _int(d, "count"), _float(d, "f_opt"), where
    ),
}


@dataclass(frozen=True)
class RankWarning:
    """One warning of an absolute-rank answer.

    Attributes
    ----------
    message : str
        What it says for this request (the text ``POST /v1/absolute-ranks`` answers).
    general : str or None
        The same warning without this request's function and numbers: answers that rank many
        functions (comparisons) give it once, with a count, in this wording. ``None``: the
        message is its own identity.
    code : str
        Stable identity (the domain warning's code, e.g. ``"numerical-error"``,
        ``"below-minimum"``, ``"ladder-hint"``; ``"rank"`` for the service's other remarks).
    data : Mapping of str to JSONValue
        The numbers it was made from; ``index`` is the position in ``values`` of the value it
        points at (see :meth:`located`).
    """

    message: str
    general: str | None = None
    code: str = "rank"
    data: Mapping[str, notices.JSONValue] = field(default_factory=dict)

    @classmethod
    def of(cls, w: notices.Warning) -> RankWarning:
        """A domain warning as it is answered."""
        return cls(w.message, code=w.code, data=w.data)

    @property
    def index(self) -> int | None:
        """The position in ``values`` of the value the warning points at, if any."""
        x = self.data.get("index")
        return x if isinstance(x, int) and self.code in _LOCATED else None

    def located(self, name: Callable[[int], str]) -> str:
        """The message, with the value it points at (``values[i]``) called ``name(i)``
        (e.g. ``lambda i: f"algorithm {names[i]!r}"``); the message itself otherwise."""
        i = self.index
        if i is None:
            return self.message
        return _LOCATED[self.code](self.data, name(i))


@dataclass(frozen=True)
class _Source:
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


def _table_source(view: tables.TableView, data: absrank.TableData) -> _Source:
    region = view.spec["region"]
    whole_domain = region["kind"] == "domain"
    return _Source(
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


def _resolve(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    req: RankRequest,
    *,
    may_queue_builds: bool,
) -> tuple[BenchmarkFunction, _Source]:
    if req.sample is not None:
        return _sample_source(settings, req)
    if req.table_id is not None:
        view, data = tables.load_table_data(sm, req.table_id)
        return user_tables.function_of(view), _table_source(view, data)
    assert req.function_id is not None
    fn = find_function(req.function_id)
    if req.use_analytic and fn.analytic is not None:
        return fn, _Source(
            kind="analytic",
            whole_domain=True,
            lower=fn.lower,
            upper=fn.upper,
            description={"kind": "analytic", "form": fn.analytic, "region": "domain"},
        )
    if req.regions == "nested" and not ladder_applies(fn):
        raise InvalidInput(
            f"{fn.id} has no nested-region ladder: ladders need a known x* and f* and no "
            f"plateau at f* (atom {fn.local.atom}); use regions='domain' or 'auto'",
            field="regions",
        )
    if req.regions != "domain" and ladder_applies(fn):
        nested = _nested_source(sm, settings, dispatcher, req, fn, may_queue=may_queue_builds)
        if nested is not None:
            return fn, nested
    source = _default_table_source(sm, settings, dispatcher, fn, may_queue=may_queue_builds)
    if req.regions == "auto" and ladder_applies(fn):
        source = _ladder_for_deep_values(
            sm, settings, dispatcher, req, fn, source, may_queue=may_queue_builds
        )
    return fn, source


def _sample_source(settings: Settings, req: RankRequest) -> tuple[BenchmarkFunction, _Source]:
    """An inline sample: Eq. 28 on it directly (exact, nothing stored)."""
    assert req.sample is not None
    data = user_tables.inline_sample_data(settings, req.sample)
    fn = user_tables.sample_function(req.f_opt, req.f_max)
    return fn, _Source(
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
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    req: RankRequest,
    fn: BenchmarkFunction,
    *,
    may_queue: bool,
) -> _Source | None:
    """The ladder's curve; ``None`` (use the domain table) when ``auto`` finds it not ready.

    Raises
    ------
    app.errors.TableNotBuilt, app.errors.TableNotReady
        ``regions='nested'`` and the ladder is missing (and may not be queued) or building.
    """

    def load() -> tuple[absrank.V1Curve, list[tables.TableView]]:
        return _load_ladder(sm, settings, req, fn)

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
            tables.request_ladder(sm, settings, dispatcher, fn.id)
        try:  # an inline dispatcher (tests, tiny ladders) may have built it already
            curve, views = load()
        except (TableNotBuilt, TableNotReady) as again:
            again.field = "regions"
            raise
    return _ladder_source(settings, fn, curve, views)


def _load_ladder(
    sm: sessionmaker[Session], settings: Settings, req: RankRequest, fn: BenchmarkFunction
) -> tuple[absrank.V1Curve, list[tables.TableView]]:
    """The ladder's curve and tables; never queues (:func:`app.services.nested.ladder_curve`)."""
    with domain_errors_as_problems():
        return nested.ladder_curve(
            sm, settings, fn.id, tail=req.tail, k_anchor=req.tail_k, confidence=req.confidence
        )


def _ladder_source(
    settings: Settings,
    fn: BenchmarkFunction,
    curve: absrank.V1Curve,
    views: list[tables.TableView],
) -> _Source:
    return _Source(
        kind="nested",
        whole_domain=True,
        lower=fn.lower,
        upper=fn.upper,
        description={
            "kind": "nested",
            "ladder": tables.describe_ladder(settings, views),
            "table_ids": [v.id for v in views],
            "data_sha256": [v.data_sha256 for v in views],
            "relative_to": "domain",
        },
        curve=curve,
    )


def _deep_values(fn: BenchmarkFunction, req: RankRequest, y1: float) -> np.ndarray:
    """The values sent (as ``f``) in ``(f*, y_1)``: where a tail model extrapolates (at or below
    ``f*`` the rank is exact, at or above ``y_1`` the table interpolates)."""
    assert fn.f_opt is not None
    sent = (
        req.values
        if req.values is not None
        else [v for runs in (req.runs_by_algorithm or {}).values() for v in runs]
    )
    x = np.asarray(sent, dtype=np.float64)
    t = x + _offset(fn, req)
    return t[(t < y1) & _above_minimum(fn, req, x)]


def _ladder_for_deep_values(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    req: RankRequest,
    fn: BenchmarkFunction,
    table: _Source,
    *,
    may_queue: bool,
) -> _Source:
    """``regions='auto'`` without a ready ladder: when values lie below the domain table's
    lowest sample (and above ``f*``), queue the ladder (if the caller may queue builds) and
    rank from it if it is ready (an inline dispatcher builds it at once); else the domain
    table, its values there marked provisional and the ladder named as ``awaiting``."""
    assert table.data is not None
    y1 = float(table.data.values[0])
    if _deep_values(fn, req, y1).size == 0:
        return table  # nothing needs the ladder: today's answer, nothing queued
    try:
        if may_queue:
            with domain_errors_as_problems():
                tables.request_ladder(sm, settings, dispatcher, fn.id)
        curve, views = _load_ladder(sm, settings, req, fn)
    except (InvalidInput, NotApplicable):  # no ladder can be laid out for this function
        return table
    except (TableNotBuilt, TableNotReady) as exc:
        return replace(
            table,
            awaiting=_awaited_ladder(settings, fn, exc, may_queue=may_queue),
            provisional_below=y1,
        )
    return _ladder_source(settings, fn, curve, views)


def _awaited_ladder(
    settings: Settings, fn: BenchmarkFunction, exc: AppError, *, may_queue: bool
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
        table_ids=tables.ladder_table_ids(settings, fn.id),
        location=exc.extra.get("location"),
        table_request=request if status in ("not-built", "failed") else None,
        detail=detail,
    )


def _default_table_source(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    fn: BenchmarkFunction,
    *,
    may_queue: bool,
) -> _Source:
    """The default full-domain table (queued when missing and allowed; 409 while it builds)."""
    default_id = tables.table_id_for(
        tables.spec_hash(tables.table_spec(settings, function_id=fn.id))
    )
    ready = tables.cached_ready_table(sm, default_id)
    if ready is not None:  # the hot path: no SQL
        return _table_source(*ready)
    if may_queue:
        with domain_errors_as_problems():
            view, _ = tables.request_table(sm, settings, dispatcher, function_id=fn.id)
    else:
        view = _existing_default_table(sm, settings, fn)
    try:
        view, data = tables.load_table_data(sm, view.id)  # re-read: a worker may have finished
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


def _offset(fn: BenchmarkFunction, req: RankRequest) -> float:
    """What to add to the values sent to get values of ``f`` (``f*`` for errors)."""
    if req.values_are != "error":
        return 0.0
    if fn.f_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known f*, so errors cannot be ranked", field="values_are"
        )
    return float(fn.f_opt)


def _metric_values(fn: BenchmarkFunction, req: RankRequest) -> np.ndarray:
    t = np.asarray(req.values, dtype=np.float64)
    return t + _offset(fn, req) if req.values_are == "error" else t


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _items(
    values: list[float], res: absrank.RankResult, provisional: np.ndarray | None = None
) -> list[dict[str, Any]]:
    """One ``RankItem`` per value; ``provisional`` (a mask) marks the ranks that await the
    ladder: their interval has no lower end, and they say ``provisional: true``."""

    def interval(lo: float, hi: float) -> dict[str, Any]:
        return {
            "log10_lo": _finite_or_none(lo),
            "log10_hi": _finite_or_none(hi),
            "v_lo": 10.0**lo if math.isfinite(lo) else 0.0,
            "v_hi": 10.0**hi if math.isfinite(hi) else 0.0,
        }

    columns = zip(
        values,
        res.v.tolist(),
        res.log10_v.tolist(),
        res.method.tolist(),
        res.log10_lo.tolist(),
        res.log10_hi.tolist(),
        strict=True,
    )
    out = [
        {
            "value": value,
            "v": v,
            "log10_v": _finite_or_none(log10_v),
            "method": method,
            "interval": interval(lo, hi),
        }
        for value, v, log10_v, method, lo, hi in columns
    ]
    if provisional is not None:
        for item, marked in zip(out, provisional.tolist(), strict=True):
            if marked:  # a tail model bounds v only from above: no lower end (METHODS.md)
                item["interval"] |= {"log10_lo": None, "v_lo": 0.0}
                item["provisional"] = True
    return out


def _provisional(
    source: _Source, fn: BenchmarkFunction, req: RankRequest, sent: np.ndarray
) -> np.ndarray | None:
    """Which values sent await the ladder: those in ``(f*, y_1)`` (``None``: none do); an error
    is above ``f*`` when it is positive (``f* + e`` may round to ``f*``)."""
    if source.provisional_below is None:
        return None
    t = sent + _offset(fn, req)
    return (t < source.provisional_below) & _above_minimum(fn, req, sent)


#: A value sent as ``f`` whose gap ``t − f*`` is resolved more coarsely than this (relative)
#: by float64 (half an ulp of ``t``) is flagged: fewer than 6 significant digits of the gap.
GAP_RESOLUTION = 1e-6


def _above_minimum(fn: BenchmarkFunction, req: RankRequest, sent: np.ndarray) -> np.ndarray:
    """Which values sent lie above ``f*``: errors ``e > 0`` (not ``f* + e > f*``, which an error
    below ``ulp(f*)/2`` fails), values of ``f`` ``t > f*``."""
    assert fn.f_opt is not None
    return sent > 0.0 if req.values_are == "error" else sent > fn.f_opt


def _resolution_warnings(
    req: RankRequest, fn: BenchmarkFunction, sent: list[float]
) -> list[RankWarning]:
    """Say so when values of ``f`` carry their gap ``t − f*`` with fewer than 6 digits.

    A value ``t`` sent as ``f`` holds the gap ``t − f*`` only to half an ulp of ``t`` (about
    ``ulp(f*)/2`` near ``f*``): above :data:`GAP_RESOLUTION` relative, the rank of ``t`` is that of
    the rounded gap, and ``t == f*`` for a gap below ``ulp(f*)/2``. Errors
    (``values_are='error'``) are ranked as the gaps themselves and keep their digits
    (docs/METHODS.md, "Values and errors"), so they are not flagged.
    """
    if req.values_are == "error" or fn.f_opt is None:
        return []
    t = np.asarray(sent, dtype=np.float64)
    gap = t - fn.f_opt
    with np.errstate(invalid="ignore"):
        lossy = (gap > 0) & np.isfinite(t) & (0.5 * np.spacing(np.abs(t)) > GAP_RESOLUTION * gap)
    if not lossy.any():
        return []
    ulp = float(np.spacing(abs(fn.f_opt)))
    first = float(t[lossy][0])
    return [
        RankWarning(
            f"{int(lossy.sum())} value(s) (first: {first!r}) lie so close to "
            f"f* = {fn.f_opt!r} (float64 resolution {ulp:.3g} there) that their gap t - f* has "
            "fewer than 6 significant digits: they are ranked at that rounded gap; send the "
            "errors t - f* themselves with values_are='error' to keep their digits",
            code="gap-resolution",
            data={"count": int(lossy.sum()), "first": first, "f_opt": fn.f_opt, "ulp": ulp},
        )
    ]


def _below_minimum_warnings(
    req: RankRequest, fn: BenchmarkFunction, t: np.ndarray
) -> list[RankWarning]:
    """Say so when values lie below the known minimum (likely a sign error or a wrong f*)."""
    if fn.f_opt is None:
        return []
    # errors: the sign of the error itself (f* + e < f* misses errors above -ulp(f*)/2)
    sent = np.asarray(req.values, dtype=np.float64) if req.values_are == "error" else None
    below = np.flatnonzero(sent < 0.0 if sent is not None else t < fn.f_opt)
    if below.size == 0:
        return []
    first = int(below[0])
    out = [
        RankWarning(
            _below_minimum_text(int(below.size), float(fn.f_opt), f"values[{first}]"),
            code="below-minimum",
            data={"count": int(below.size), "index": first, "f_opt": float(fn.f_opt)},
        )
    ]
    if req.tail == "paper":
        out.append(
            RankWarning(
                "tail='paper' reproduces exp(t - y_1)/(N+1) as published: it is positive below "
                "f*, where the true v is 0",
                code="paper-tail-below-minimum",
            )
        )
    return out


def _anchor_warnings(req: RankRequest, tail: absrank.RankTail) -> list[RankWarning]:
    """Say so when the power tail's anchor is not the ``tail_k`` asked for."""
    k = tail.anchor_k
    if k is None or k == req.tail_k:
        return []
    cap = tail.requested_k
    if cap is not None and cap < req.tail_k:
        why = f"the table keeps {cap} exact lowest samples, so k is capped at {cap}"
        if k != cap:
            why += f", then lowered to {k} (see the other warning)"
    else:
        why = "the anchor was lowered (see the other warning)"
    return [
        RankWarning(
            f"tail_k = {req.tail_k} was requested; the power tail is anchored at k = {k}: {why}",
            code="anchor-differs",
            data={"tail_k": req.tail_k, "k": k, "requested_k": cap},
        )
    ]


def rank_values(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    req: RankRequest,
    *,
    may_queue_builds: bool | None = None,
) -> dict[str, Any]:
    """Turn metric values into absolute ranks ``v`` (Jing & Liu, SPEC §3).

    With ``req.values`` every value is ranked as an aggregate of ``req.runs`` runs. With
    ``req.runs_by_algorithm`` each algorithm's runs are aggregated here (``best``/``worst``/
    ``lower-median``: a run; ``median``: the middle run, or the mean of the two middle runs;
    ``mean``: correctly rounded ``fsum``/r), the aggregate is ranked with ``runs`` = that
    algorithm's ``r`` (an order statistic exactly, the mean and an even median by
    :func:`app.domain.aggregates.aggregate_ranks`), and every run is ranked alone (runs = 1).

    Parameters
    ----------
    sm, settings, dispatcher
        Database, configuration and task queue.
    req : RankRequest
        The validated request.
    may_queue_builds : bool, optional
        Whether a missing default table may be queued (the caller holds a valid API key, or
        the deployment has none). Default: only when ``settings.api_keys`` is empty.

    Returns
    -------
    dict
        The body of :class:`app.schemas.ranks.RankResponse`.

    Raises
    ------
    app.errors.NotFound
        Unknown function or table id.
    app.errors.TableNotReady
        The table is still being built or failed (409 with its ``Location`` and progress).
    app.errors.TableNotBuilt
        The default table does not exist and the caller may not queue it (409).
    app.errors.InvalidInput
        Too many values (``max_rank_values`` in all; ``max_numerical_aggregates`` distinct
        values for a mean or an even median), too many algorithms (``max_algorithms``), errors
        for a function without f*.
    app.errors.NotApplicable
        The requested tail or aggregate does not apply (e.g. a power tail on a clipped
        sublevel set, a mean or an even median without a known f*).
    """
    body, _ = rank_values_warned(sm, settings, dispatcher, req, may_queue_builds=may_queue_builds)
    return body


def rank_values_warned(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    req: RankRequest,
    *,
    may_queue_builds: bool | None = None,
) -> tuple[dict[str, Any], list[RankWarning]]:
    """:func:`rank_values`, with its warnings as :class:`RankWarning` (``body["warnings"]``
    holds their messages)."""
    _check_limits(req, settings)
    if may_queue_builds is None:
        may_queue_builds = not settings.api_keys
    fn, source = _resolve(sm, settings, dispatcher, req, may_queue_builds=may_queue_builds)
    ctx = rank_context(fn, source.lower, source.upper, whole_domain=source.whole_domain)
    if req.runs_by_algorithm is not None:
        body, warnings = _rank_runs(fn, source, ctx, req, req.runs_by_algorithm)
    else:
        body, warnings = _rank_values(fn, source, ctx, req)
    warnings += _ladder_hint(fn, source, req)
    if req.regions == "nested" and source.kind == "analytic":
        warnings.append(
            RankWarning(
                f"regions='nested': {fn.id} has an exact v1 ({fn.analytic}), used instead of a "
                "ladder (use_analytic=false uses the ladder)",
                general="regions='nested': these functions have an exact v1, used instead of a "
                "ladder (use_analytic=false uses the ladder)",
                code="nested-analytic",
            )
        )
    body["warnings"] = [w.message for w in warnings]
    if source.awaiting is not None:
        body["awaiting"] = source.awaiting.model_dump(mode="json")
    body["provenance"] = provenance(
        _request_payload(req),
        table=source.description.get("table_id"),
        data_sha256=source.description.get("data_sha256"),
    )
    return body, warnings


LADDER_HINT = (
    "values lie below the lowest sample of the function's domain table, where a tail model "
    "extrapolates; its nested-region ladder ranks them without extrapolation: send "
    "regions='nested' (queues the ladders)"
)
"""The general wording of the warning that a ladder would rank values without a tail model
(leaderboards, which say so per entry with ``awaiting``, leave it out)."""


PROVISIONAL = (
    "values lie below the lowest sample of the function's domain table, where a tail model "
    "extrapolates: their ranks are provisional (the tail model's, with no lower end) until the "
    "function's nested-region ladder is ready (awaiting); send the same request again then"
)
"""The general wording of the warning on provisional ranks (``regions='auto'``)."""
PROVISIONAL_NEEDS_KEY = (
    "values lie below the lowest sample of the function's domain table, where a tail model "
    "extrapolates: their ranks are provisional (the tail model's, with no lower end); the "
    "function's nested-region ladder would rank them, and only a holder of an API key may "
    'queue it (POST /v1/tables with "ladder": true and an X-API-Key header)'
)
"""Its wording when the caller may not queue the ladder and it is not built."""


def _provisional_warning(
    fn: BenchmarkFunction, source: _Source, req: RankRequest
) -> list[RankWarning]:
    """Say which values are provisional, what they wait for and who may queue it."""
    assert source.awaiting is not None
    assert source.data is not None
    assert source.provisional_below is not None
    deep = _deep_values(fn, req, source.provisional_below).size
    awaited = source.awaiting
    head = (
        f"{deep} value(s) lie below the lowest of the domain table's {source.data.n} samples "
        f"(y_1 = {source.provisional_below!r}), where a tail model extrapolates: their ranks "
        "are provisional (the tail model's, with no lower end)"
    )
    if awaited.status == "not-built":
        return [
            RankWarning(
                f"{head}; {awaited.detail}", general=PROVISIONAL_NEEDS_KEY, code="provisional"
            )
        ]
    return [
        RankWarning(
            f"{head} until the nested-region ladder of {fn.id} is ready ({awaited.status}: "
            f"follow {awaited.location}); send the same request again then",
            general=PROVISIONAL,
            code="provisional",
        )
    ]


def _ladder_hint(fn: BenchmarkFunction, source: _Source, req: RankRequest) -> list[RankWarning]:
    """Say so when values below the domain table's samples used a tail model."""
    if source.data is None or not source.whole_domain or req.function_id is None:
        return []
    if not ladder_applies(fn):
        return []
    if source.awaiting is not None:
        return _provisional_warning(fn, source, req)
    sent = (
        req.values
        if req.values is not None
        else [v for runs in (req.runs_by_algorithm or {}).values() for v in runs]
    )
    lowest = float(source.data.values[0])
    below = sum(1 for v in sent if v + _offset(fn, req) < lowest)
    if below == 0:
        return []
    return [
        RankWarning(
            f"{below} value(s) lie below the lowest of the table's {source.data.n} samples "
            f"(y_1 = {lowest!r}), where a tail model extrapolates; the function's nested-region "
            "ladder ranks them without extrapolation: send regions='nested' (queues "
            f'it) or POST /v1/tables {{"function_id": "{fn.id}", "ladder": true}}',
            general=LADDER_HINT,
            code="ladder-hint",
        )
    ]


def _request_payload(req: RankRequest) -> dict[str, Any]:
    """The normalized request (absent values/runs_by_algorithm/sample/f_opt/f_max are left
    out of the hash)."""
    optional = ("values", "runs_by_algorithm", "sample", "f_opt", "f_max")
    absent = {k for k in optional if getattr(req, k) is None}
    return req.model_dump(mode="json", exclude=absent)


def numerical(aggregate: str, runs: int) -> bool:
    """Whether the rank of an aggregate of ``runs`` runs needs a convolution or an integral."""
    return runs > 1 and (aggregate == "mean" or (aggregate == "median" and runs % 2 == 0))


def _check_limits(req: RankRequest, settings: Settings) -> None:
    """Request sizes (``settings.max_rank_values``, ``max_algorithms``), before any work."""
    if req.values is not None:
        if len(req.values) > settings.max_rank_values:
            raise InvalidInput(
                f"at most {settings.max_rank_values} values per request", field="values"
            )
        if numerical(req.aggregate or "best", req.runs):
            distinct = len(set(req.values))
            if distinct > settings.max_numerical_aggregates:
                raise InvalidInput(
                    f"at most {settings.max_numerical_aggregates} distinct values per request with "
                    f"aggregate={req.aggregate!r} over {req.runs} runs (each is a convolution or "
                    f"an integral); got {distinct}",
                    field="values",
                )
        return
    runs = req.runs_by_algorithm
    assert runs is not None
    total = sum(len(v) for v in runs.values())
    if total > settings.max_rank_values:
        raise InvalidInput(
            f"at most {settings.max_rank_values} run values per request (all algorithms "
            f"together); got {total}",
            field="runs_by_algorithm",
        )
    if len(runs) > settings.max_algorithms:
        raise InvalidInput(
            f"at most {settings.max_algorithms} algorithms per request; got {len(runs)}",
            field="runs_by_algorithm",
        )
    costly = sum(numerical(req.aggregate or "best", len(v)) for v in runs.values())
    if costly > settings.max_numerical_aggregates:
        raise InvalidInput(
            f"at most {settings.max_numerical_aggregates} algorithms per request with "
            f"aggregate={req.aggregate!r} over more than one run; got {costly}",
            field="runs_by_algorithm",
        )


def _rank_values(
    fn: BenchmarkFunction, source: _Source, ctx: absrank.RankContext, req: RankRequest
) -> tuple[dict[str, Any], list[RankWarning]]:
    """``values``: every value is one aggregate of ``req.runs`` runs."""
    assert req.values is not None
    t = _metric_values(fn, req)
    aggregate = req.aggregate or "best"
    with domain_errors_as_problems():
        curve = _curve(fn, source, ctx, req)
        # errors are ranked as the gaps t − f* themselves (f* + e would round their digits away)
        res = absrank.ranks_from_curve(
            np.asarray(req.values, dtype=np.float64) if req.values_are == "error" else t,
            curve,
            budget=req.budget,
            runs=req.runs,
            aggregate=aggregate,
            order=req.order,
            values_are=req.values_are,
        )
    return {
        "function_id": fn.id,
        "source": source.description,
        "budget": req.budget,
        "runs": req.runs,
        "aggregate": aggregate,
        "results": _items(
            req.values, res, _provisional(source, fn, req, np.asarray(req.values, dtype=float))
        ),
        "algorithms": None,
        "tail": res.tail.as_json(),
    }, (
        [RankWarning.of(w) for w in res.warnings]
        + _anchor_warnings(req, res.tail)
        + _below_minimum_warnings(req, fn, t)
        + _resolution_warnings(req, fn, req.values)
    )


# --------------------------------------------------------------------------------------------
# runs_by_algorithm
# --------------------------------------------------------------------------------------------


def _sorted_pick(x: list[float], k: int) -> float:
    """The ``k``-th smallest (1-based)."""
    return sorted(x)[k - 1]


def _mean(x: list[float]) -> float:
    total = math.fsum(x)  # correctly rounded: the same mean in any order
    return total / len(x) if math.isfinite(total) else math.fsum(v / len(x) for v in x)


def _median(x: list[float]) -> float:
    s, r = sorted(x), len(x)
    return s[r // 2] if r % 2 else 0.5 * s[r // 2 - 1] + 0.5 * s[r // 2]


#: The aggregate value of one algorithm's runs, as the service computes it.
AGGREGATE_VALUE = {
    "best": min,
    "worst": max,
    "median": _median,
    "lower-median": lambda x: _sorted_pick(x, (len(x) + 1) // 2),
    "mean": _mean,
}


def _curve(
    fn: BenchmarkFunction, source: _Source, ctx: absrank.RankContext, req: RankRequest
) -> absrank.V1Curve:
    """``v1`` of the request's table, ladder or analytic form (the input of every aggregate)."""
    if source.curve is not None:
        return source.curve
    if source.data is None:
        assert fn.analytic is not None
        return absrank.analytic_curve(fn.analytic, ctx)
    return absrank.table_curve(
        source.data, ctx, tail=req.tail, k_anchor=req.tail_k, confidence=req.confidence
    )


@contextmanager
def _naming_algorithm(name: str) -> Iterator[None]:
    """Domain errors of one algorithm's rank name ``runs_by_algorithm.<name>`` for ``runs``."""
    try:
        with domain_errors_as_problems():
            yield
    except AppError as exc:
        if exc.field in ("runs", "values"):
            exc.field = f"runs_by_algorithm.{name}"
        raise


def _algorithm_transform(res: absrank.RankResult) -> dict[str, object]:
    """The transform of one algorithm's rank, with its numerical block (one value) unwrapped."""
    out = res.tail.transform.as_json()
    block = res.tail.aggregate
    if block is not None:
        out["aggregate_method"] = block.as_json(index=0)
    return out


def _rank_algorithm(
    name: str, runs: list[float], curve: absrank.V1Curve, req: RankRequest, offset: float
) -> tuple[dict[str, Any], list[notices.Warning]]:
    """The rank of one algorithm's aggregate (``runs = len(runs)``) and its domain warnings
    (about ``values[0]``, the aggregate: :func:`_for_algorithms` names the algorithm)."""
    r = len(runs)
    aggregate = (req.aggregate or "best") if r > 1 else "best"
    value = float(AGGREGATE_VALUE[aggregate](runs))
    with _naming_algorithm(name):
        res = absrank.ranks_from_curve(
            np.array([value if req.values_are == "error" else value + offset]),
            curve,
            budget=req.budget,
            runs=r,
            aggregate=aggregate,
            values_are=req.values_are,
        )
    item = _items([value], res)[0]
    entry = {"algorithm": name, "runs": r, "aggregate": aggregate} | item
    entry["transform"] = _algorithm_transform(res)
    return entry, list(res.warnings)


def _for_algorithms(warning: RankWarning, names: list[str]) -> str:
    """A domain warning that several algorithms' aggregates got, once: it points at the first
    algorithm and counts and lists the others (at most 10 names)."""
    text = warning.located(lambda _: f"runs_by_algorithm.{names[0]}")
    if len(names) == 1:
        return text
    return f"{text} (the same for {len(names)} algorithms: {_listed(names)})"


def _listed(names: list[str], at_most: int = 10) -> str:
    """``"A, B, C"``, the first ``at_most`` names then ``...``."""
    return ", ".join(names[:at_most]) + (", ..." if len(names) > at_most else "")


def _rank_runs(
    fn: BenchmarkFunction,
    source: _Source,
    ctx: absrank.RankContext,
    req: RankRequest,
    runs_by_algorithm: dict[str, list[float]],
) -> tuple[dict[str, Any], list[RankWarning]]:
    """``runs_by_algorithm``: each algorithm's aggregate, and each run alone."""
    offset = _offset(fn, req)
    names = list(runs_by_algorithm)
    flat = [x for name in names for x in runs_by_algorithm[name]]
    with domain_errors_as_problems():
        curve = _curve(fn, source, ctx, req)
        sent = np.asarray(flat, dtype=np.float64)
        single = absrank.ranks_from_curve(
            sent if req.values_are == "error" else sent + offset,
            curve,
            budget=req.budget,
            values_are=req.values_are,
        )
    deep = _provisional(source, fn, req, sent)
    per_run = _items(flat, single, deep)
    warnings = [RankWarning.of(w) for w in single.warnings]
    algorithms: list[dict[str, Any]] = []
    # a domain warning's text -> the warning and the algorithms that got it
    by_warning: dict[str, tuple[notices.Warning, list[str]]] = {}
    start = 0
    for name in names:
        runs = runs_by_algorithm[name]
        entry, extra = _rank_algorithm(name, runs, curve, req, offset)
        entry["per_run"] = per_run[start : start + len(runs)]
        if deep is not None and _aggregate_awaits(entry, deep[start : start + len(runs)]):
            entry["interval"] |= {"log10_lo": None, "v_lo": 0.0}
            entry["provisional"] = True
        start += len(runs)
        algorithms.append(entry)
        for w in extra:
            by_warning.setdefault(w.message, (w, []))[1].append(name)
    for w, got in by_warning.values():
        text = _for_algorithms(RankWarning.of(w), got)
        if text not in (said.message for said in warnings):
            warnings.append(RankWarning(text, code=w.code))
    tail = single.tail.curve_json()
    return {
        "function_id": fn.id,
        "source": source.description,
        "budget": req.budget,
        "runs": None,
        "aggregate": req.aggregate or "best",
        "results": [],
        "algorithms": algorithms,
        "tail": tail,
    }, (
        warnings
        + _anchor_warnings(req, single.tail)
        + _runs_below_minimum_warnings(
            fn, runs_by_algorithm, offset, errors=req.values_are == "error"
        )
        + _resolution_warnings(req, fn, [v for runs in runs_by_algorithm.values() for v in runs])
    )


def _aggregate_awaits(entry: dict[str, Any], runs_deep: np.ndarray) -> bool:
    """Whether an algorithm's aggregate rank awaits the ladder: its value is one of the deep
    runs (an order statistic), or some run is deep and the aggregate is a mean or an even
    median (whose rank integrates ``v1`` below the value)."""
    if not runs_deep.any():
        return False
    return bool(numerical(entry["aggregate"], entry["runs"])) or any(
        item["value"] == entry["value"] and item.get("provisional") for item in entry["per_run"]
    )


def _runs_below_minimum_warnings(
    fn: BenchmarkFunction,
    runs_by_algorithm: dict[str, list[float]],
    offset: float,
    *,
    errors: bool = False,
) -> list[RankWarning]:
    """Runs below the known minimum (likely a sign error or a wrong f*): one warning that
    counts the runs and names the algorithms."""
    if fn.f_opt is None:
        return []
    below = {
        # errors (offset f*): the sign of the error itself, not f* + e < f*
        name: [i for i, x in enumerate(runs) if (x < 0.0 if errors else x + offset < fn.f_opt)]
        for name, runs in runs_by_algorithm.items()
    }
    names = [name for name, idx in below.items() if idx]
    if not names:
        return []
    first = names[0]
    where = (
        f"runs_by_algorithm.{first}"
        if len(names) == 1
        else f"{len(names)} algorithms ({_listed(names)})"
    )
    count = sum(len(idx) for idx in below.values())
    return [
        RankWarning(
            f"{count} run(s) of {where} lie below f* = "
            f"{fn.f_opt!r} (first: runs_by_algorithm.{first}.{below[first][0]}); no point of the "
            "domain reaches them",
            code="runs-below-minimum",
            data={"count": count, "algorithms": tuple(names), "f_opt": fn.f_opt},
        )
    ]
