"""Published tables: a ready table's curve, its quantiles and plots, and those of a ladder.

What ``GET /v1/tables/{id}/curve.json`` (and ``.csv``) publishes is the stored representation
(knots with exact counts) plus the point-estimate ``v1`` model the service ranks with by default:
the table's region context (:func:`app.services.regions.rank_context`, as ``POST
/v1/absolute-ranks`` with ``table_id`` uses it) and :func:`app.domain.absrank.table_curve` with the
rank request's default tail options. A ladder's combined curve comes from
:func:`app.services.ladders.ladder_curve` (as ``regions="nested"`` ranks with it): piecewise its
serving levels' curves, each scaled by its volume fraction. Ready tables never change, so
each answer is cached per table (or ladder) and content hash.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar, cast

import numpy as np
from pydantic import BaseModel
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.domain import absrank, quantiles
from app.domain.curves import LowerTail, TableCurve, UpperTail, V1Curve, info_json
from app.domain.functions import BenchmarkFunction
from app.errors import InvalidInput
from app.schemas.ranks import RankRequest
from app.schemas.table_curves import (
    CURVE_FORMAT_VERSION,
    Knots,
    LadderCurveLevel,
    LadderCurveRead,
    LadderPiece,
    LowerTailRead,
    QuantileItem,
    QuantileList,
    TableCurveRead,
    TailOptions,
    UpperTailRead,
)
from app.services import ladders, plots, tables, user_tables
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.provenance import provenance
from app.services.regions import rank_context
from app.services.table_cache import LadderCaches, TableCaches

SM = sessionmaker[Session]
LN10 = math.log(10.0)

#: The rank options the published curve answers (the defaults of ``POST /v1/absolute-ranks``).
OPTIONS = TailOptions(
    tail=RankRequest.model_fields["tail"].default,
    k_anchor=RankRequest.model_fields["tail_k"].default,
    confidence=RankRequest.model_fields["confidence"].default,
)
#: Most ``v`` levels in one quantile request.
MAX_QUANTILES = 1000
#: Dots per inch of a PNG plot: default and bounds.
DEFAULT_DPI, MIN_DPI, MAX_DPI = plots.DEFAULT_DPI, plots.MIN_DPI, plots.MAX_DPI
#: ``Cache-Control`` of everything derived from a ready table.
IMMUTABLE = "public, max-age=31536000, immutable"
_FLAT_GROUPS = ("options", "lower_tail", "upper_tail")


# ---------------------------------------------------------------------------- caching


T = TypeVar("T")
S = TypeVar("S")


class Answer(NamedTuple, Generic[S, T]):
    """What a publishing use case answers: its source and the answer derived from it.

    Attributes
    ----------
    source : Published or PublishedLadder
        The ready table (ladder) it comes from: ETag, ``Location``, headers.
    body : model or bytes
        The answer (a model, or its bytes as JSON, CSV, SVG or PNG).
    """

    source: S
    body: T


def _kept(cache: TableCaches, key: tuple[Any, ...], make: Callable[[], T]) -> T:
    """``make()``, kept in the application's cache of derived answers (keyed by content).

    The cache (``TableCaches.published``) holds answers of several types; the key's first
    item names the kind, so what is kept under ``key`` is what ``make`` returns.
    """
    return cast(T, cache.published.get_or_make(key, make))


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an ``If-None-Match`` header names ``etag`` (or is ``*``); weak tags compare too."""
    if not if_none_match:
        return False
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags


def quoted(digest: str) -> str:
    """The ETag of a content hash: ``"<hex>"``."""
    return f'"{digest}"'


# ---------------------------------------------------------------------------- one table


@dataclass(frozen=True, eq=False)
class Published:
    """A ready table with the curve the service ranks it with by default.

    Attributes
    ----------
    view : TableView
    data : TableData
    fn : BenchmarkFunction
    curve : V1Curve
        :func:`app.domain.absrank.table_curve` with :data:`OPTIONS` (``curve.table`` set).
    """

    view: tables.TableView
    data: absrank.TableData
    fn: BenchmarkFunction
    curve: V1Curve

    @property
    def model(self) -> TableCurve:
        """The published point-estimate model."""
        assert self.curve.table is not None
        return self.curve.table

    @property
    def etag(self) -> str:
        """``"<data_sha256>"``."""
        assert self.view.data_sha256 is not None
        return quoted(self.view.data_sha256)


def published_table(sm: SM, table_id: str, *, cache: TableCaches) -> Published:
    """A ready table and its default curve.

    Raises
    ------
    app.errors.NotFound
        Unknown id.
    app.errors.TableNotReady
        Building, merging or failed (409 with ``Location`` and progress).
    app.errors.NotApplicable
        The table contradicts the function's registered ``f*``/``f_max``.
    """
    view, data = tables.load_table_data(sm, table_id, cache=cache)

    def make() -> Published:
        fn = user_tables.function_of(view)
        region = view.spec["region"]
        lower = np.asarray(region["lower"], dtype=np.float64)
        upper = np.asarray(region["upper"], dtype=np.float64)
        ctx = rank_context(fn, lower, upper, whole_domain=region["kind"] == "domain")
        with domain_errors_as_problems():
            curve = absrank.table_curve(
                data,
                ctx,
                tail=OPTIONS.tail,
                k_anchor=OPTIONS.k_anchor,
                confidence=OPTIONS.confidence,
            )
        return Published(view, data, fn, curve)

    return _kept(cache, ("published", view.id, view.data_sha256), make)


def _obtained(low: LowerTail, warnings: Sequence[object]) -> str:
    if low.kind == "power":
        return (
            f"tail='auto': the power law through (y_{low.k}, c_{low.k}/(N+1)) with "
            f"{low.beta_source} beta; the largest anchor k <= {low.requested_k} (halving, down "
            f"to {absrank.MIN_ANCHOR}) whose sublevel set {{f <= y_k}} is not clipped by the "
            "region and whose lower samples pass the power-law tests"
        )
    if low.kind == "linear":
        why = (
            "the function has a plateau at f* (registered atom)"
            if low.atom > 0
            else "the power tail was refused (see warnings)"
        )
        return f"tail='auto': linear from (f*, atom) to (y_1, v_top) because {why}"
    return "tail='auto': f* is unknown, so Eq. 28's own tail exp(t - y_1)/(N+1)"


def _lower_read(low: LowerTail, info: dict[str, Any], warnings: Sequence[object]) -> LowerTailRead:
    return LowerTailRead(
        kind=low.kind,
        limit=low.limit,
        f_opt=low.f_opt,
        v_top=low.v_top,
        beta=low.beta,
        beta_se=low.beta_se,
        beta_interval=None if low.beta_interval is None else list(low.beta_interval),
        beta_source=low.beta_source,
        beta_derivation=low.beta_derivation,
        k=low.k,
        requested_k=low.requested_k,
        anchor_count=low.anchor_count,
        atom=low.atom,
        validity=info.get("validity") if low.kind == "power" else None,
        obtained=_obtained(low, warnings),
    )


def _upper_read(up: UpperTail) -> UpperTailRead:
    return UpperTailRead(kind=up.kind, y_n=up.y_n, f_max=up.f_max)


def _knots(values: np.ndarray, counts: np.ndarray) -> Knots:
    return Knots.model_construct(value=values.tolist(), count=counts.tolist())


def _region_fraction(fn: BenchmarkFunction, region: dict[str, Any]) -> float:
    with domain_errors_as_problems("table_id"):
        return tables.region_ln_volume_fraction(fn, region) / LN10


def table_curve(sm: SM, table_id: str, *, cache: TableCaches) -> Answer[Published, TableCurveRead]:
    """The published curve of a ready table (the body of ``curve.json``)."""
    pub = published_table(sm, table_id, cache=cache)

    def make() -> TableCurveRead:
        view, model, curve = pub.view, pub.model, pub.curve
        region = view.spec["region"]
        assert view.data_sha256 is not None
        assert view.max_interp_error is not None
        return TableCurveRead(
            table_id=view.id,
            location=view.location,
            function_id=view.function_id,
            n=model.n,
            k_exact=pub.data.k_exact,
            n_knots=int(model.values.size),
            max_interp_error=view.max_interp_error,
            y_1=float(model.values[0]),
            y_n=float(model.values[-1]),
            region=region,
            relative_to="domain" if region["kind"] == "domain" else "box",
            log10_volume_fraction=_region_fraction(pub.fn, region),
            spec=view.spec,
            spec_hash=view.spec_hash,
            data_sha256=view.data_sha256,
            f_opt=pub.fn.f_opt,
            f_max=pub.fn.f_max,
            atom=model.atom,
            options=OPTIONS,
            lower_tail=_lower_read(model.lower, info_json(curve.info), curve.warnings),
            upper_tail=_upper_read(model.upper),
            low_points=int(pub.data.low_x.shape[0]),
            warnings=[str(w) for w in curve.warnings],
            knots=_knots(model.values, model.counts),
            provenance=provenance(
                {"table_id": view.id, "options": OPTIONS.model_dump()},
                table=view.id,
                data_sha256=view.data_sha256,
            ),
        )

    return Answer(pub, _kept(cache, ("curve", pub.view.id, pub.view.data_sha256), make))


def table_curve_json(sm: SM, table_id: str, *, cache: TableCaches) -> Answer[Published, bytes]:
    """``curve.json`` as bytes (cached: a 16384-knot curve is serialized once)."""
    pub, read = table_curve(sm, table_id, cache=cache)
    body = _kept(cache, ("json", pub.view.id, pub.view.data_sha256), read.model_dump_json)
    return Answer(pub, body.encode())


def _as_json(model: BaseModel, exclude: set[str]) -> dict[str, Any]:
    """The model's fields as its JSON form has them (the same serializer, so CSV = JSON)."""
    out: dict[str, Any] = json.loads(model.model_dump_json(exclude=exclude))
    return out


def _scalars(prefix: str, obj: dict[str, Any]) -> Iterable[tuple[str, Any]]:
    for key, value in obj.items():
        name = f"{prefix}{key}"
        if key in _FLAT_GROUPS and isinstance(value, dict):
            yield from _scalars(name + ".", value)
        else:
            yield name, value


def _header(title: str, fields: Iterable[tuple[str, Any]]) -> list[str]:
    lines = [
        f"# {title}",
        "# every line '# key: value' holds one field of the JSON form, value as JSON; "
        "v1(t) follows from them and the rows by 'formula'",
    ]
    lines += [f"# {key}: {json.dumps(value, allow_nan=False)}" for key, value in fields]
    return lines


def _rows(values: np.ndarray, counts: np.ndarray, prefix: str = "") -> list[str]:
    return [f"{prefix}{v!r},{c}" for v, c in zip(values.tolist(), counts.tolist(), strict=True)]


def table_curve_csv(sm: SM, table_id: str, *, cache: TableCaches) -> Answer[Published, bytes]:
    """``curve.csv``: ``# key: value`` lines (every field but the knots), then ``value,count``."""
    pub, read = table_curve(sm, table_id, cache=cache)

    def make() -> bytes:
        fields = _as_json(read, {"knots"})
        model = pub.model
        lines = _header(f"absrank table curve, format {CURVE_FORMAT_VERSION}", _scalars("", fields))
        lines += ["value,count", *_rows(model.values, model.counts)]
        return ("\n".join(lines) + "\n").encode()

    return Answer(pub, _kept(cache, ("csv", pub.view.id, pub.view.data_sha256), make))


def table_quantiles(
    sm: SM, table_id: str, v: Sequence[float], *, cache: TableCaches
) -> Answer[Published, QuantileList]:
    """``q(v) = inf{t : v1(t) >= v}`` of the published curve at each level.

    Raises
    ------
    app.errors.InvalidInput
        No level, more than :data:`MAX_QUANTILES`, or one outside ``(0, 1]`` (``field="v"``).
    """
    if not v:
        raise InvalidInput("give at least one level: ?v=0.02&v=0.05", field="v")
    if len(v) > MAX_QUANTILES:
        raise InvalidInput(f"at most {MAX_QUANTILES} levels v per request", field="v")
    bad = [i for i, x in enumerate(v) if not (math.isfinite(x) and 0.0 < x <= 1.0)]
    if bad:
        raise InvalidInput(f"v.{bad[0]}: every v must be in (0, 1], got {v[bad[0]]!r}", field="v")
    pub = published_table(sm, table_id, cache=cache)
    with domain_errors_as_problems("v"):
        q = quantiles.table_quantiles(pub.model, np.asarray(v, dtype=np.float64))
    items = [
        QuantileItem(
            v=level,
            t=None if math.isnan(t) else t,
            error=None if math.isnan(e) else e,
            method=m,
        )
        for level, t, e, m in zip(v, q.t.tolist(), q.error.tolist(), q.method.tolist(), strict=True)
    ]
    assert pub.view.data_sha256 is not None
    return Answer(
        pub, QuantileList(table_id=pub.view.id, data_sha256=pub.view.data_sha256, items=items)
    )


def table_plot(
    sm: SM,
    table_id: str,
    fmt: str,
    options: plots.FigureOptions = plots.DEFAULT_OPTIONS,
    *,
    cache: TableCaches,
) -> Answer[Published, bytes]:
    """``log10 v1`` against ``t − f*`` (:func:`app.services.plots.v1_plot`), cached."""
    pub = published_table(sm, table_id, cache=cache)

    def make() -> bytes:
        series = [plots.Series(pub.curve, pub.model, -math.inf, math.inf, 0.0, "table")]
        title = f"{pub.view.function_id}  table {pub.view.id}  N = {pub.view.n}"
        return plots.v1_plot(
            series, f_opt=pub.model.lower.f_opt, title=title, fmt=fmt, options=options
        )

    key = ("plot", pub.view.id, pub.view.data_sha256, fmt, options)
    return Answer(pub, _kept(cache, key, make))


# ---------------------------------------------------------------------------- ladders


@dataclass(frozen=True, eq=False)
class PublishedLadder:
    """A ready ladder with the combined curve ``regions='nested'`` ranks with."""

    fn: BenchmarkFunction
    views: list[tables.TableView]
    curve: V1Curve

    @property
    def digest(self) -> str:
        """SHA-256 of the levels' ``data_sha256``, newline-joined."""
        joined = "\n".join(v.data_sha256 or "" for v in self.views)
        return hashlib.sha256(joined.encode()).hexdigest()

    @property
    def etag(self) -> str:
        """``"<digest>"``."""
        return quoted(self.digest)


def published_ladder(
    sm: SM,
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> PublishedLadder:
    """The ladder of ``function_id`` and its combined curve; never queues.

    Raises
    ------
    app.errors.NotFound, app.errors.InvalidInput
        Unknown function; no ``x*``/``f*`` or an atom; bad ``log2n``/``seed``.
    app.errors.TableNotBuilt, app.errors.TableNotReady
        A level is missing, or building/failed (409, naming the level).
    """
    fn = find_function(function_id)
    with domain_errors_as_problems():
        ids = tables.ladder_table_ids(settings, fn.id, log2n=log2n, seed=seed, cache=ladder_cache)

    def make() -> PublishedLadder:
        curve, views = ladders.ladder_curve(
            sm,
            settings,
            fn.id,
            log2n=log2n,
            seed=seed,
            tail=OPTIONS.tail,
            k_anchor=OPTIONS.k_anchor,
            confidence=OPTIONS.confidence,
            cache=cache,
            ladder_cache=ladder_cache,
        )
        return PublishedLadder(fn, views, curve)

    ready = [tables.cached_ready_table(sm, i, cache=cache) for i in ids]
    if any(r is None for r in ready):
        return make()  # raises the 409 of the first level not ready, or loads them
    key = ("ladder", *(r.view.data_sha256 for r in ready if r is not None))
    return _kept(cache, key, make)


def _trim(values: np.ndarray, t_from: float, t_below: float) -> slice:
    """Knots covering ``[t_from, t_below)``, with one neighbour each side."""
    first = max(int(np.searchsorted(values, t_from, "right")) - 1, 0)
    last = min(int(np.searchsorted(values, t_below, "left")), values.size - 1)
    return slice(first, last + 1)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def ladder_curve(
    sm: SM,
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Answer[PublishedLadder, LadderCurveRead]:
    """The published combined curve of a ready ladder (the body of the ladder's ``curve.json``)."""
    lad = published_ladder(
        sm,
        settings,
        function_id,
        log2n=log2n,
        seed=seed,
        cache=cache,
        ladder_cache=ladder_cache,
    )

    def make() -> LadderCurveRead:
        infos: Any = info_json(lad.curve.info)["levels"]
        levels = []
        for j, view in enumerate(lad.views):
            assert view.data_sha256 is not None
            levels.append(
                LadderCurveLevel(
                    level=j,
                    table_id=view.id,
                    location=view.location,
                    curve=f"{view.location}/curve.json",
                    data_sha256=view.data_sha256,
                    region=view.spec["region"],
                    log10_volume_fraction=_region_fraction(lad.fn, view.spec["region"]),
                    used=bool(infos[j]["used"]),
                    skipped=infos[j]["skipped"],
                )
            )
        pieces = []
        for piece in lad.curve.pieces:
            m = piece.curve
            cut = _trim(m.values, piece.t_from, piece.t_below)
            level_info = infos[piece.level].get("curve", {})
            pieces.append(
                LadderPiece(
                    level=piece.level,
                    table_id=lad.views[piece.level].id,
                    t_from=_finite(piece.t_from),
                    t_below=_finite(piece.t_below),
                    ln_volume_fraction=piece.ln_volume_fraction,
                    n=m.n,
                    lower_tail=_lower_read(m.lower, level_info, []),
                    upper_tail=_upper_read(m.upper),
                    atom=m.atom,
                    knots=_knots(m.values[cut], m.counts[cut]),
                )
            )
        assert lad.fn.f_opt is not None
        return LadderCurveRead(
            function_id=lad.fn.id,
            n=lad.views[0].n,
            seed=lad.views[0].seed,
            f_opt=lad.fn.f_opt,
            etag=lad.digest,
            options=OPTIONS,
            levels=levels,
            pieces=pieces,
            warnings=[str(w) for w in lad.curve.warnings],
            provenance=provenance(
                {"function_id": lad.fn.id, "log2n": log2n, "seed": seed, "ladder": True},
                table=[v.id for v in lad.views],
                data_sha256=[v.data_sha256 for v in lad.views],
            ),
        )

    return Answer(lad, _kept(cache, ("ladder-curve", lad.digest, log2n, seed), make))


def ladder_curve_json(
    sm: SM,
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Answer[PublishedLadder, bytes]:
    """The ladder's ``curve.json`` as bytes."""
    lad, read = ladder_curve(
        sm,
        settings,
        function_id,
        log2n=log2n,
        seed=seed,
        cache=cache,
        ladder_cache=ladder_cache,
    )
    body = _kept(cache, ("ladder-json", lad.digest, log2n, seed), read.model_dump_json)
    return Answer(lad, body.encode())


def ladder_curve_csv(
    sm: SM,
    settings: Settings,
    function_id: str,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Answer[PublishedLadder, bytes]:
    """The ladder's ``curve.csv``: ``# key: value`` lines (``pieces.<i>.<field>`` per piece),
    then ``piece,value,count`` rows (each piece's knots)."""
    lad, read = ladder_curve(
        sm,
        settings,
        function_id,
        log2n=log2n,
        seed=seed,
        cache=cache,
        ladder_cache=ladder_cache,
    )

    def make() -> bytes:
        fields = list(_scalars("", _as_json(read, {"pieces"})))
        rows = ["piece,value,count"]
        for i, piece in enumerate(read.pieces):
            fields += _scalars(f"pieces.{i}.", _as_json(piece, {"knots"}))
            rows += _rows(np.asarray(piece.knots.value), np.asarray(piece.knots.count), f"{i},")
        title = f"absrank ladder curve, format {CURVE_FORMAT_VERSION}"
        return ("\n".join(_header(title, fields) + rows) + "\n").encode()

    return Answer(lad, _kept(cache, ("ladder-csv", lad.digest, log2n, seed), make))


def ladder_plot(
    sm: SM,
    settings: Settings,
    function_id: str,
    fmt: str,
    options: plots.FigureOptions = plots.DEFAULT_OPTIONS,
    *,
    log2n: int | None = None,
    seed: int = 0,
    cache: TableCaches,
    ladder_cache: LadderCaches,
) -> Answer[PublishedLadder, bytes]:
    """The combined curve, coloured by serving level, with the thresholds marked."""
    lad = published_ladder(
        sm,
        settings,
        function_id,
        log2n=log2n,
        seed=seed,
        cache=cache,
        ladder_cache=ladder_cache,
    )

    def make() -> bytes:
        series = [
            plots.Series(
                lad.curve,
                p.curve,
                p.t_from,
                p.t_below,
                p.ln_volume_fraction,
                f"level {p.level} (volume 10^{p.ln_volume_fraction / LN10:.3g})",
            )
            for p in lad.curve.pieces
        ]
        title = (
            f"{lad.fn.id}  nested-region ladder, {len(lad.views)} tables of N = {lad.views[0].n}"
        )
        return plots.v1_plot(series, f_opt=lad.fn.f_opt, title=title, fmt=fmt, options=options)

    key = ("ladder-plot", lad.digest, log2n, seed, fmt, options)
    return Answer(lad, _kept(cache, key, make))


#: Ids quoted in the documented examples (the docs test provokes them under its settings).
NOT_READY_EXAMPLE_ID = "t0ba6e9ae13860a88ec4d24c"
LADDER_EXAMPLE_ID = "td7188be36b2710e8e3e7174"
