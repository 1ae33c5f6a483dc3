"""Ladder use cases: nested regions ``Ω = R_0 ⊃ R_1 ⊃ … ⊃ R_L`` around ``x*``, one table each.

The maths (box shapes, plans, nested curves) is :mod:`app.domain.nested`; this module turns a
function and the settings into the specs of a ladder's tables (:func:`ladder_specs`), requests
them (:func:`request_ladder`), describes a ladder (:func:`describe_ladder`) and loads it once
every level is ready (:func:`ready_ladder`) or into its nested ``v1`` curve
(:func:`ladder_curve`, through :func:`app.services.ladder_levels.nested_curve_for`), with the
spec regions' geometry (:func:`region_ln_volume_fraction`, :func:`kept_provenance`). Plans and
table ids are kept in the application's :class:`app.services.table_cache.LadderCaches`, ready
tables in its :class:`app.services.table_cache.TableCaches` (``ladder_cache=`` / ``cache=``,
passed by every caller).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any, NamedTuple

import numpy as np

from app.config import Settings
from app.domain import nested
from app.domain.curves import V1Curve
from app.domain.functions import BenchmarkFunction, get_function
from app.domain.tablebuild import oriented_geometry, region_intersected
from app.errors import InvalidInput, NotFound, TableNotBuilt, TableNotReady
from app.services._table_requests import (
    ChunkCharge,
    ReadyTable,
    TableView,
    build_clock,
    cached_ready_table,
    load_table_data,
    recently_missing,
    remember_missing,
    request_spec,
    unstored_chunks,
)
from app.services._table_specs import (
    SM,
    Dispatcher,
    as_floats,
    spec_hash,
    table_id_for,
    table_spec,
    utc_now,
)
from app.services.errors import domain_errors_as_problems
from app.services.eta import build_eta
from app.services.functions import find_function
from app.services.ladder_levels import nested_curve_for, region_ln_volume_fraction
from app.services.table_cache import LadderCaches, TableCaches

__all__ = [
    "LadderCurve",
    "LadderPlanned",
    "describe_ladder",
    "kept_provenance",
    "ladder_curve",
    "ladder_degree",
    "ladder_plan",
    "ladder_shape_of",
    "ladder_specs",
    "ladder_table_ids",
    "oriented_geometry",
    "ready_ladder",
    "region_intersected",
    "region_ln_volume_fraction",
    "request_ladder",
]


def _ladder_function(function_id: str) -> BenchmarkFunction:
    """The function of a ladder request; refuse those without ``f*``/``x*`` or with an atom."""
    with domain_errors_as_problems("function_id"):
        fn = get_function(function_id)
    if fn.x_opt is None or fn.f_opt is None:
        raise InvalidInput(
            f"{fn.id} has no known minimiser x* and minimum f*: a ladder of nested boxes around "
            "x* is undefined",
            field="function_id",
        )
    if fn.local.atom > 0:
        raise InvalidInput(
            f"{fn.id} has a plateau at f* (atom {fn.local.atom:g}): its registered mass gives v1 "
            "near f*, nested regions serve a continuous lower tail",
            field="function_id",
        )
    return fn


def ladder_degree(fn: BenchmarkFunction) -> float | None:
    """``p = d/β`` of the registered local structure, ``None`` (so 2) when ``β`` is unknown."""
    beta = fn.local.beta
    return fn.dim / beta if beta is not None and beta > 0 else None


@functools.lru_cache(maxsize=256)
def ladder_shape_of(fn: BenchmarkFunction) -> nested.LadderShape:
    """The box shape of ``fn``'s ladders (:func:`app.domain.nested.ladder_shape`), cached.

    Computed from ``fn`` alone (about ``2d²·140`` evaluations near ``x*``; 0.01-0.4 s in
    10-D, 1-2 s for BBOB functions in 40-D), once per function and process. A noisy function's
    shape is that of its noise-free part (the noise only scales ``f − f*``).
    """
    with domain_errors_as_problems("function_id"):
        return nested.ladder_shape(
            fn.evaluate_noise_free, fn.x_opt, fn.f_opt, fn.lower, fn.upper, degree=ladder_degree(fn)
        )


def _plan(
    fn: BenchmarkFunction,
    shape: nested.LadderShape,
    factor: float,
    max_levels: int,
    min_log10_volume: float,
) -> nested.LadderPlan:
    with domain_errors_as_problems("function_id"):
        return nested.plan_ladder(
            fn.lower,
            fn.upper,
            fn.x_opt,
            factor=factor,
            max_levels=max_levels,
            min_log10_volume=min_log10_volume,
            shape=np.asarray(shape),
            orientation=shape.orientation,
            intersect=True,
        )


class LadderPlanned(NamedTuple):
    """A ladder's function, box shape and boxes (:func:`ladder_plan`).

    Attributes
    ----------
    fn : BenchmarkFunction
    shape : LadderShape
        From :func:`ladder_shape_of` (the cube, with its reason, when the fit fails).
    plan : LadderPlan
        :func:`app.domain.nested.plan_ladder`'s boxes and why the ladder stops.
    """

    fn: BenchmarkFunction
    shape: nested.LadderShape
    plan: nested.LadderPlan


def ladder_plan(settings: Settings, function_id: str, *, cache: LadderCaches) -> LadderPlanned:
    """The function, box shape and boxes of its ladder under ``settings``.

    Parameters
    ----------
    settings : Settings
        ``nested_factor``, ``nested_levels`` (the cap) and ``nested_min_log10_volume``.
    function_id : str
        A registered function with known ``x*`` and ``f*`` and no atom at ``f*``.
    cache : LadderCaches
        Where the plan is kept (the application's ``app.state.ladder_caches``, a worker's).

    Returns
    -------
    LadderPlanned
        ``(fn, shape, plan)``; ``plan`` is :func:`app.domain.nested.plan_ladder`:
        ``R_0 = Ω`` and ``L`` boxes
        ``[x* − h_j, x* + h_j] ∩ Ω``, ``h_{j,i} = min(R, σ_j·a_i)``,
        ``σ_j = σ_0/nested_factor^j``, up to the volume target, the cap or the thinness limit.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        No ``x*``/``f*`` or an atom (``field="function_id"``).
    """
    fn = _ladder_function(function_id)
    shape = ladder_shape_of(fn)
    key = (
        fn,
        shape,
        float(settings.nested_factor),
        int(settings.nested_levels),
        float(settings.nested_min_log10_volume),
    )
    plans = cache.plans
    plan = plans.get_or_make(key, lambda: _plan(*key))
    return LadderPlanned(fn, shape, plan)


def ladder_specs(
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: LadderCaches,
) -> list[dict[str, Any]]:
    """Validate a ladder request and return the specs of its tables.

    Parameters
    ----------
    settings : Settings
        ``nested_factor``, ``nested_levels``, ``nested_min_log10_volume`` (:func:`ladder_plan`)
        and everything :func:`table_spec` uses.
    function_id : str
        A registered function with known ``x*`` and ``f*`` and no atom at ``f*``.
    log2n : int, optional
        ``N = 2^log2n`` samples per level; default ``settings.table_default_log2n``.
    seed : int, default 0
        Sobol seed of every level.
    cache : LadderCaches
        As in :func:`ladder_plan`.

    Returns
    -------
    list of dict
        ``L + 1`` specs from :func:`table_spec`: level 0 is the whole domain (the default
        table's spec, and hash, when ``log2n`` and ``seed`` are the defaults); level ``j >= 1``
        is the per-coordinate box ``delta = h_j`` (:func:`ladder_plan`) whose region also
        records ``ladder = {"sigma": σ_j, "shape": {...}}`` (method, model, half-widths ``a``,
        degree, fit residual, fallback reason), so the hash changes with the shape; or an
        oriented box (``kind="oriented"``), with ``intersect="domain"`` when it leaves the
        domain (the level is ``B ∩ Ω``: its table keeps only the points inside the domain,
        :func:`app.domain.sampling.evaluate_intersected_chunk`). Every level's box is known
        before any table is built: the levels build in parallel.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        No ``x*``/``f*`` or an atom (``field="function_id"``); bad ``log2n``/``seed``.
    """
    fn, shape, plan = ladder_plan(settings, function_id, cache=cache)
    specs = [table_spec(settings, function_id=fn.id, log2n=log2n, seed=seed)]
    for box in plan.boxes[1:]:
        assert box.half_widths is not None
        if box.axes is not None:
            spec = table_spec(settings, function_id=fn.id, log2n=log2n, seed=seed)
            spec["region"] = _oriented_region(fn, box)
        else:
            spec = table_spec(
                settings,
                function_id=fn.id,
                delta=as_floats(box.half_widths),
                log2n=log2n,
                seed=seed,
            )
        spec["region"]["ladder"] = {"sigma": float(box.delta or 0.0), "shape": shape.spec()}
        specs.append(spec)
    return specs


def _oriented_region(fn: BenchmarkFunction, box: nested.LadderBox) -> dict[str, Any]:
    """The region ``{"kind": "oriented", ...}`` of an oriented ladder box (inside the domain).

    ``center`` is ``x*``, ``axes`` the rows ``Q[:, k]`` (the box's axes, rounded by
    :func:`app.domain.nested.ladder_shape`), ``half_widths`` the ``h_k`` along them; the points
    are ``center + ((2U − 1)·h) @ Qᵀ`` (:func:`app.domain.sampling.oriented_box_points`), and
    ``lower``/``upper`` is the box's axis-aligned bounding box. An intersected level
    (:attr:`app.domain.nested.LadderBox.intersect`) adds ``"intersect": "domain"`` (the region
    is the box ∩ the domain: points outside the domain are drawn but never evaluated; the
    measured share kept is in the table's provenance, ``kept``) and its bounding box is clipped
    to the domain.
    """
    assert box.axes is not None
    assert box.half_widths is not None
    assert fn.x_opt is not None
    region: dict[str, Any] = {
        "kind": "oriented",
        "center": as_floats(fn.x_opt),
        "axes": [as_floats(col) for col in np.asarray(box.axes).T],
        "half_widths": as_floats(box.half_widths),
        "lower": as_floats(box.lower),
        "upper": as_floats(box.upper),
    }
    if box.intersect:
        region["intersect"] = "domain"
    return region


def kept_provenance(n_box: int, n_kept: int) -> dict[str, Any]:
    """The measured share of an intersected level's box kept inside the domain (provenance)."""
    lo, hi = nested.kept_share_interval(n_box, n_kept, 0.95)
    return {
        "n_box": n_box,
        "n_kept": n_kept,
        "share": n_kept / n_box,
        "share_interval_95": [lo, hi],
        "method": "share of the table's n_box scrambled Sobol points of the oriented box inside "
        "the domain (f evaluated only there), Clopper-Pearson 95% interval; the ranks combine "
        "it with the level's own interval (Bonferroni, app.domain.nested.nested_curve)",
    }


def ladder_table_ids(
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: LadderCaches,
) -> list[str]:
    """Return the table ids of a ladder, level 0 first (see :func:`ladder_specs`).

    Kept per function and the settings that decide the specs (in ``cache``, the application's
    ladder caches): ``regions='auto'`` asks for them on every rank request, and hashing some
    twenty specs costs milliseconds.
    """
    _, shape, _ = ladder_plan(settings, function_id, cache=cache)  # validates; kept
    key = (
        function_id,
        shape,
        log2n,
        seed,
        *(getattr(settings, name) for name in LADDER_SETTINGS),
    )

    def make() -> tuple[str, ...]:
        specs = ladder_specs(settings, function_id, log2n=log2n, seed=seed, cache=cache)
        return tuple(table_id_for(spec_hash(spec)) for spec in specs)

    return list(cache.ids.get_or_make(key, make))


LADDER_SETTINGS = (
    "table_default_log2n",
    "table_max_log2n",
    "table_k_exact",
    "table_n_knots",
    "nested_factor",
    "nested_levels",
    "nested_min_log10_volume",
)
"""The settings a ladder's specs depend on (with the function, ``log2n`` and ``seed``)."""


def request_ladder(
    sm: SM,
    settings: Settings,
    dispatcher: Dispatcher,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    ladder_cache: LadderCaches,
    charge: ChunkCharge | None = None,
) -> list[TableView]:
    """Return the tables of a ladder of nested regions, queueing the missing ones.

    Every level is validated before any table is created; each level is then requested like
    any table (idempotent: an existing table is returned, a failed one retried), and all of
    them are queued at once.

    Parameters
    ----------
    sm, settings, dispatcher, cache
        As in :func:`app.services.tables.request_table`.
    charge : callable, optional
        Charged the chunks of every level not stored yet, at once before any is queued.
    function_id, log2n, seed
        As in :func:`ladder_specs`.
    ladder_cache : LadderCaches
        As ``cache`` in :func:`ladder_plan`.

    Returns
    -------
    list of TableView
        ``L + 1`` views, level 0 (the domain) first.

    Raises
    ------
    app.errors.NotFound, app.errors.InvalidInput
        From :func:`ladder_specs`.
    """
    specs = ladder_specs(settings, function_id, log2n=log2n, seed=seed, cache=ladder_cache)
    if charge is not None:
        levels = [(table_id_for(spec_hash(spec)), int(spec["n"])) for spec in specs]
        charge(unstored_chunks(sm, settings, levels))
    return [request_spec(sm, settings, dispatcher, spec, cache=cache).view for spec in specs]


def describe_ladder(
    settings: Settings,
    views: Sequence[TableView],
    *,
    now: datetime | None = None,
    cache: LadderCaches,
) -> dict[str, Any]:
    """Return the status, progress, shape and levels of a ladder (the body of ``LadderRead``).

    Parameters
    ----------
    settings : Settings
        The ladder settings (echoed, with why the ladder has ``L`` levels).
    views : sequence of TableView
        The ladder's tables, level 0 first (:func:`request_ladder`).

    Returns
    -------
    dict
        ``function_id``, ``status`` (``ready`` when every level is, ``failed`` if one failed,
        else ``building``), ``progress`` (chunks over all levels), ``eta_seconds``
        (:func:`build_eta` over the levels; ``now`` is its clock), ``n``, ``seed``,
        ``nested_factor``, ``nested_levels`` (``L``, boxes below the domain),
        ``nested_levels_cap``, ``nested_min_log10_volume``, ``stop`` and ``stop_detail`` (why
        ``L``: ``volume``, ``levels`` or ``thin``), ``deepest_log10_volume_fraction``, ``shape``
        (:meth:`app.domain.nested.LadderShape.describe`: half-widths ``a``, degree, model, fit
        residual, fallback reason, probes, condition, fill share) and one entry per level:
        ``level``, ``kind`` (``domain``, ``box`` or ``oriented``: a box along the fitted form's
        axes, used for rotated forms where it fits in the domain), ``delta`` (``None`` for the
        domain, else the ``d`` half-widths ``h_j``, along the box's own axes when oriented),
        ``sigma``, ``log10_volume_fraction``, ``id``, ``location``, ``status``, ``progress``.
    """
    fn, shape, plan = ladder_plan(settings, views[0].function_id, cache=cache)
    levels = []
    for level, view in enumerate(views):
        region = view.spec["region"]
        ln_fraction = region_ln_volume_fraction(fn, region)
        oriented = region["kind"] == "oriented"
        levels.append(
            {
                "level": level,
                "kind": "oriented ∩ domain" if region_intersected(region) else region["kind"],
                "delta": region["half_widths"] if oriented else region.get("delta"),
                "sigma": region.get("ladder", {}).get("sigma"),
                "log10_volume_fraction": ln_fraction / math.log(10.0),
                "id": view.id,
                "location": view.location,
                "status": view.status,
                "progress": view.progress,
            }
        )
    statuses = {view.status for view in views}
    status = "ready" if statuses == {"ready"} else "failed" if "failed" in statuses else "building"
    done = sum(view.progress["done"] for view in views)
    total = sum(view.progress["total"] for view in views)
    return {
        "function_id": fn.id,
        "ladder": True,
        "status": status,
        "nested_factor": settings.nested_factor,
        "nested_levels": len(views) - 1,
        "nested_levels_cap": settings.nested_levels,
        "nested_min_log10_volume": settings.nested_min_log10_volume,
        "stop": plan.stop,
        "stop_detail": plan.stop_detail,
        "deepest_log10_volume_fraction": levels[-1]["log10_volume_fraction"],
        "shape": shape.describe(),
        "n": views[0].n,
        "seed": views[0].seed,
        "progress": {"done": done, "total": total, "fraction": done / total if total else 1.0},
        "eta_seconds": build_eta([build_clock(v) for v in views], now or utc_now()),
        "levels": levels,
    }


def ready_ladder(
    sm: SM,
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> list[ReadyTable] | None:
    """Return every level's view and data when the whole ladder is ready, else ``None``.

    Ready tables come from ``cache`` when loaded before (no SQL, as
    :func:`app.services.tables.cached_ready_table`); the others are loaded once and kept.

    Parameters
    ----------
    sm, settings
        Database and configuration.
    function_id, log2n, seed
        As in :func:`ladder_specs`.
    cache, ladder_cache : TableCaches, LadderCaches
        The application's table and ladder caches (``app.state``, a worker's).

    Returns
    -------
    list of ReadyTable or None
        Level 0 first; ``None`` if some level is missing, building, merging or failed.

    Raises
    ------
    app.errors.NotFound, app.errors.InvalidInput
        From :func:`ladder_specs`.
    """
    out: list[ReadyTable] = []
    ids = ladder_table_ids(settings, function_id, log2n=log2n, seed=seed, cache=ladder_cache)
    for table_id in ids:
        cached = cached_ready_table(sm, table_id, cache=cache)
        if cached is not None:
            out.append(cached)
            continue
        try:
            out.append(load_table_data(sm, table_id, cache=cache))
        except (NotFound, TableNotReady):
            return None
    return out


class LadderCurve(NamedTuple):
    """A function's nested curve with the tables it was made from (:func:`ladder_curve`).

    Attributes
    ----------
    curve : V1Curve
        ``v1`` on the domain (:func:`app.domain.nested.nested_curve`).
    views : list of TableView
        The ladder's tables, level 0 first (for provenance).
    """

    curve: V1Curve
    views: list[TableView]


def ladder_curve(
    sm: SM,
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    tail: str = "auto",
    k_anchor: int = 100,
    confidence: float = 0.95,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> LadderCurve:
    """The nested ``v1`` curve of a function from its stored ladder; never queues.

    Parameters
    ----------
    sm, settings
        Database and configuration (``nested_factor``, ``nested_levels``,
        ``nested_min_log10_volume``: they decide the ladder's boxes, so its table ids).
    function_id : str
    log2n, seed
        As in :func:`ladder_specs`.
    tail, k_anchor, confidence
        As in :func:`app.services.ladder_levels.nested_curve_for`.
    cache, ladder_cache : TableCaches, LadderCaches
        As in :func:`ready_ladder` (a level found missing is remembered in ``cache``).

    Returns
    -------
    LadderCurve
        ``(curve, views)``: the curve and the ladder's tables, level 0 first.

    Raises
    ------
    app.errors.NotFound
        Unknown function.
    app.errors.InvalidInput
        No ``x*``/``f*``, an atom, bad options.
    app.errors.TableNotBuilt
        A level's table does not exist (409; ``extra.table_request`` is the ladder request).
    app.errors.TableNotReady
        A level is building, merging or failed (409 with its ``Location`` and progress).
    app.errors.NotApplicable
        As in :func:`app.services.ladder_levels.nested_curve_for`.
    """
    fn = find_function(function_id)
    ids = ladder_table_ids(settings, fn.id, log2n=log2n, seed=seed, cache=ladder_cache)
    ladder: list[ReadyTable] = []
    for level, table_id in enumerate(ids):
        ready = cached_ready_table(sm, table_id, cache=cache)
        if ready is None:
            ready = _load_level(sm, fn, table_id, level, log2n=log2n, seed=seed, cache=cache)
        ladder.append(ready)
    curve = nested_curve_for(fn, ladder, tail=tail, k_anchor=k_anchor, confidence=confidence)
    return LadderCurve(curve, [view for view, _ in ladder])


def _load_level(
    sm: SM,
    fn: BenchmarkFunction,
    table_id: str,
    level: int,
    *,
    log2n: int | None,
    seed: int,
    cache: TableCaches,
) -> ReadyTable:
    """Level ``level`` of ``fn``'s ladder, loaded; its absence or build as the ladder's 409."""
    request: dict[str, object] = {"function_id": fn.id, "ladder": True, "seed": seed}
    if log2n is not None:
        request["log2n"] = log2n
    try:
        if recently_missing(sm, table_id, cache=cache):
            raise NotFound(f"table {table_id} does not exist", field="table_id")
        return load_table_data(sm, table_id, cache=cache)
    except NotFound:
        remember_missing(sm, table_id, cache=cache)
        raise TableNotBuilt(
            f"level {level} (table {table_id}) of the nested-region ladder of {fn.id} is not "
            f"built: request the ladder with POST /v1/tables {json.dumps(request)}",
            field="function_id",
            extra={"table_id": table_id, "level": level, "table_request": request},
        ) from None
    except TableNotReady as exc:
        exc.field = "function_id"
        exc.detail = f"level {level} of the nested-region ladder of {fn.id}: {exc.detail}"
        exc.extra["level"] = level
        raise
