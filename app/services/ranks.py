"""Use case of ``POST /v1/absolute-ranks``: resolve the table (or analytic form), rank, explain."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.domain import absrank
from app.domain.functions import BenchmarkFunction
from app.errors import InvalidInput, NotFound, TableNotBuilt, TableNotReady
from app.schemas.ranks import RankRequest
from app.services import tables
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.provenance import provenance


@dataclass(frozen=True)
class _Source:
    """Where the ranks come from: a stored table or an exact formula."""

    kind: str  # "table" | "analytic"
    whole_domain: bool  # False for a δ-box table: v is relative to the box
    lower: np.ndarray
    upper: np.ndarray
    description: dict[str, Any]
    data: absrank.TableData | None = None


def _region_fraction(fn: BenchmarkFunction, lower: np.ndarray, upper: np.ndarray) -> float:
    """Leb(region ∩ Ω) / Leb(Ω)."""
    return float(np.prod((upper - lower) / (fn.upper - fn.lower)))


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
    if req.table_id is not None:
        view, data = tables.load_table_data(sm, req.table_id)
        return find_function(view.function_id), _table_source(view, data)
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
    default_id = tables.table_id_for(
        tables.spec_hash(tables.table_spec(settings, function_id=fn.id))
    )
    ready = tables.cached_ready_table(sm, default_id)
    if ready is not None:  # the hot path: no SQL
        return fn, _table_source(*ready)
    if may_queue_builds:
        with domain_errors_as_problems():
            view, _ = tables.request_table(sm, settings, dispatcher, function_id=fn.id)
    else:
        view = _existing_default_table(sm, settings, fn)
    try:
        view, data = tables.load_table_data(sm, view.id)  # re-read: a worker may have finished
    except TableNotReady as exc:  # 409 + Location while it builds
        raise _naming_function_id(exc, fn, may_queue_builds=may_queue_builds) from None
    return fn, _table_source(view, data)


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


def _metric_values(fn: BenchmarkFunction, req: RankRequest) -> np.ndarray:
    t = np.asarray(req.values, dtype=np.float64)
    if req.values_are == "error":
        if fn.f_opt is None:
            raise InvalidInput(
                f"{fn.id} has no known f*, so errors cannot be ranked", field="values_are"
            )
        t = t + fn.f_opt
    return t


def _finite_or_none(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _items(values: list[float], res: absrank.RankResult) -> list[dict[str, Any]]:
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
    return [
        {
            "value": value,
            "v": v,
            "log10_v": _finite_or_none(log10_v),
            "method": method,
            "interval": interval(lo, hi),
        }
        for value, v, log10_v, method, lo, hi in columns
    ]


def _below_minimum_warnings(req: RankRequest, fn: BenchmarkFunction, t: np.ndarray) -> list[str]:
    """Say so when values lie below the known minimum (likely a sign error or a wrong f*)."""
    if fn.f_opt is None:
        return []
    below = np.flatnonzero(t < fn.f_opt)
    if below.size == 0:
        return []
    out = [
        f"{below.size} value(s) lie below f* = {fn.f_opt!r} (first: values[{int(below[0])}]); "
        "no point of the domain reaches them"
    ]
    if req.tail == "paper":
        out.append(
            "tail='paper' reproduces exp(t - y_1)/(N+1) as published: it is positive below f*, "
            "where the true v is 0"
        )
    return out


def _anchor_warnings(req: RankRequest, tail: dict[str, Any]) -> list[str]:
    """Say so when the power tail's anchor is not the ``tail_k`` asked for."""
    k = tail.get("k")
    if k is None or k == req.tail_k:
        return []
    cap = tail.get("requested_k")
    if isinstance(cap, int) and cap < req.tail_k:
        why = f"the table keeps {cap} exact lowest samples, so k is capped at {cap}"
        if k != cap:
            why += f", then lowered to {k} (see the other warning)"
    else:
        why = "the anchor was lowered (see the other warning)"
    return [f"tail_k = {req.tail_k} was requested; the power tail is anchored at k = {k}: {why}"]


def rank_values(
    sm: sessionmaker[Session],
    settings: Settings,
    dispatcher: Any,
    req: RankRequest,
    *,
    may_queue_builds: bool | None = None,
) -> dict[str, Any]:
    """Turn metric values into absolute ranks ``v`` (Jing & Liu, SPEC §3).

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
        Too many values, errors for a function without f*.
    app.errors.NotApplicable
        The requested tail or aggregate does not apply (e.g. a power tail on a clipped
        sublevel set).
    """
    if len(req.values) > settings.max_rank_values:
        raise InvalidInput(f"at most {settings.max_rank_values} values per request", field="values")
    if may_queue_builds is None:
        may_queue_builds = not settings.api_keys
    fn, source = _resolve(sm, settings, dispatcher, req, may_queue_builds=may_queue_builds)
    t = _metric_values(fn, req)
    aggregate = req.aggregate or "best"
    ctx = absrank.RankContext(
        f_opt=fn.f_opt,
        # a box region's maximum is not the domain's: use the flat upper tail there
        f_max=fn.f_max if source.whole_domain else None,
        atom=fn.local.atom,
        beta=fn.local.beta,
        beta_derivation=fn.local.derivation,
        x_opt=fn.x_opt,
        region_lower=source.lower,
        region_upper=source.upper,
        domain_volume_fraction=_region_fraction(fn, source.lower, source.upper),
    )
    options: dict[str, Any] = {
        "budget": req.budget,
        "runs": req.runs,
        "aggregate": aggregate,
        "order": req.order,
    }
    with domain_errors_as_problems():
        if source.data is None:
            assert fn.analytic is not None
            res = absrank.analytic_ranks(t, fn.analytic, ctx, **options)
        else:
            res = absrank.absolute_ranks(
                t,
                source.data,
                ctx,
                tail=req.tail,
                k_anchor=req.tail_k,
                confidence=req.confidence,
                **options,
            )
    request_payload = req.model_dump(mode="json")
    return {
        "function_id": fn.id,
        "source": source.description,
        "budget": req.budget,
        "runs": req.runs,
        "aggregate": aggregate,
        "results": _items(req.values, res),
        "tail": res.tail,
        "warnings": list(res.warnings)
        + _anchor_warnings(req, res.tail)
        + _below_minimum_warnings(req, fn, t),
        "provenance": provenance(
            request_payload,
            table=source.description.get("table_id"),
            data_sha256=source.description.get("data_sha256"),
        ),
    }
