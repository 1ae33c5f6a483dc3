"""Results about functions and their tables: functions, evaluations, tables, ladders,
absolute ranks and region scans (re-exported by :mod:`absrank_client.models`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from absrank_client._models_base import (
    JSON,
    Progress,
    Row,
    ServiceWarning,
    _Page,
    _Row,
    _Tabular,
    _warnings,
)

# ---------------------------------------------------------------- functions and tables


@dataclass(frozen=True)
class FunctionInfo(_Row):
    """A hosted benchmark function (``GET /v1/functions/{id}``)."""

    id: str
    suite: str
    name: str
    title: str
    dim: int
    instance: int | None
    lower: tuple[float, ...]
    upper: tuple[float, ...]
    x_opt: tuple[float, ...] | None
    f_opt: float | None
    f_max: float | None
    analytic: str | None
    noisy: bool
    flags: tuple[str, ...]
    notes: tuple[str, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> FunctionInfo:
        x_opt = raw.get("x_opt")
        return cls(
            id=raw["id"],
            suite=raw.get("suite", ""),
            name=raw.get("name", ""),
            title=raw.get("title", ""),
            dim=int(raw.get("dim", 0)),
            instance=raw.get("instance"),
            lower=tuple(raw.get("lower") or ()),
            upper=tuple(raw.get("upper") or ()),
            x_opt=None if x_opt is None else tuple(x_opt),
            f_opt=raw.get("f_opt"),
            f_max=raw.get("f_max"),
            analytic=raw.get("analytic"),
            noisy=bool(raw.get("noisy", False)),
            flags=tuple(raw.get("flags") or ()),
            notes=tuple(raw.get("notes") or ()),
            raw=raw,
        )

    def row(self) -> Row:
        return {
            "id": self.id,
            "suite": self.suite,
            "title": self.title,
            "dim": self.dim,
            "f_opt": self.f_opt,
            "f_max": self.f_max,
            "analytic": self.analytic,
            "noisy": self.noisy,
        }


@dataclass(frozen=True)
class FunctionList(_Page):
    """A page of functions (``total`` counts every match, ``items`` this page)."""

    items: tuple[FunctionInfo, ...]
    _item = staticmethod(FunctionInfo.parse)


@dataclass(frozen=True)
class Evaluation(_Tabular):
    """Values of a batch of points on a function (``POST .../evaluate``)."""

    function_id: str
    values: tuple[float, ...]
    seed: int | None
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> Evaluation:
        return cls(raw["function_id"], tuple(raw.get("values", ())), raw.get("seed"), raw)

    def rows(self) -> list[Row]:
        return [{"point": i, "value": v} for i, v in enumerate(self.values)]


@dataclass(frozen=True)
class Table(_Row):
    """A table of v1 and its build status (``GET /v1/tables/{id}``).

    ``summary`` holds ``y_1``, ``y_N`` and quantiles once the table is ready.
    """

    id: str
    location: str
    function_id: str
    status: str
    progress: Progress | None
    eta_seconds: float | None
    error: str | None
    n: int
    seed: int
    n_chunks: int
    data_sha256: str | None
    max_interp_error: float | None
    region: JSON | None
    summary: JSON | None
    raw: JSON = field(repr=False)

    @property
    def ready(self) -> bool:
        return self.status == "ready"

    @property
    def failure(self) -> str | None:
        """Why the build failed (status ``failed``)."""
        return self.error

    @classmethod
    def parse(cls, raw: JSON) -> Table:
        return cls(
            id=raw["id"],
            location=raw.get("location", f"/v1/tables/{raw['id']}"),
            function_id=raw.get("function_id", ""),
            status=raw.get("status", ""),
            progress=Progress.parse(raw.get("progress")),
            eta_seconds=raw.get("eta_seconds"),
            error=raw.get("error"),
            n=int(raw.get("n", 0)),
            seed=int(raw.get("seed", 0)),
            n_chunks=int(raw.get("n_chunks", 0)),
            data_sha256=raw.get("data_sha256"),
            max_interp_error=raw.get("max_interp_error"),
            region=(raw.get("spec") or {}).get("region"),
            summary=raw.get("summary"),
            raw=raw,
        )

    def row(self) -> Row:
        summary = self.summary or {}
        return {
            "id": self.id,
            "function_id": self.function_id,
            "region": (self.region or {}).get("kind"),
            "n": self.n,
            "seed": self.seed,
            "status": self.status,
            "done": self.progress.done if self.progress else None,
            "total": self.progress.total if self.progress else None,
            "eta_seconds": self.eta_seconds,
            "y_1": summary.get("y_1"),
            "y_N": summary.get("y_N"),
        }


@dataclass(frozen=True)
class TableList(_Page):
    """A page of tables, newest first."""

    items: tuple[Table, ...]
    _item = staticmethod(Table.parse)


@dataclass(frozen=True)
class LadderLevel:
    """One table of a ladder of nested regions (level 0 = the whole domain)."""

    level: int
    kind: str
    id: str
    location: str
    status: str
    log10_volume_fraction: float
    progress: Progress | None


@dataclass(frozen=True)
class Ladder(_Tabular):
    """The tables of a ladder of nested regions (``POST /v1/tables`` with ``ladder=True``)."""

    function_id: str
    status: str
    progress: Progress | None
    stop: str
    levels: tuple[LadderLevel, ...]
    raw: JSON = field(repr=False)

    @property
    def ready(self) -> bool:
        return self.status == "ready"

    @classmethod
    def parse(cls, raw: JSON) -> Ladder:
        levels = tuple(
            LadderLevel(
                level=int(lv.get("level", i)),
                kind=lv.get("kind", "box"),
                id=lv["id"],
                location=lv.get("location", f"/v1/tables/{lv['id']}"),
                status=lv.get("status", ""),
                log10_volume_fraction=float(lv.get("log10_volume_fraction", 0.0)),
                progress=Progress.parse(lv.get("progress")),
            )
            for i, lv in enumerate(raw.get("levels", ()))
        )
        return cls(
            function_id=raw.get("function_id", ""),
            status=raw.get("status", ""),
            progress=Progress.parse(raw.get("progress")),
            stop=raw.get("stop", ""),
            levels=levels,
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [
            {
                "level": lv.level,
                "kind": lv.kind,
                "id": lv.id,
                "status": lv.status,
                "log10_volume_fraction": lv.log10_volume_fraction,
            }
            for lv in self.levels
        ]


# ---------------------------------------------------------------- absolute ranks


@dataclass(frozen=True)
class Rank:
    """The absolute rank of one value: ``v`` (lower is better) and the authoritative ``log10_v``.

    ``log10_v`` is None exactly when ``v`` is 0 (a value at or below the minimum); ``v`` may
    underflow to 0.0 below about 1e-308 while ``log10_v`` stays finite.
    """

    value: float
    v: float
    log10_v: float | None
    method: str
    v_lo: float | None
    v_hi: float | None
    log10_lo: float | None
    log10_hi: float | None
    provisional: bool = False
    """True: the value lies below the domain table's samples and its rank (the tail model's,
    with no lower end) awaits the function's nested-region ladder (``RankSet.awaiting``)."""

    @classmethod
    def parse(cls, raw: JSON) -> Rank:
        interval = raw.get("interval") or {}
        return cls(
            value=raw["value"],
            v=raw["v"],
            log10_v=raw.get("log10_v"),
            method=raw.get("method", ""),
            v_lo=interval.get("v_lo"),
            v_hi=interval.get("v_hi"),
            log10_lo=interval.get("log10_lo"),
            log10_hi=interval.get("log10_hi"),
            provisional=bool(raw.get("provisional", False)),
        )

    def row(self) -> Row:
        return {
            "value": self.value,
            "v": self.v,
            "log10_v": self.log10_v,
            "method": self.method,
            "log10_lo": self.log10_lo,
            "log10_hi": self.log10_hi,
            "provisional": self.provisional,
        }


@dataclass(frozen=True)
class AlgorithmRank(Rank):
    """One algorithm of ``runs_by_algorithm``: its aggregate's rank and every run's."""

    algorithm: str = ""
    runs: int = 1
    aggregate: str = "best"
    per_run: tuple[Rank, ...] = ()

    @classmethod
    def parse(cls, raw: JSON) -> AlgorithmRank:
        base = Rank.parse(raw)
        return cls(
            **base.__dict__,
            algorithm=raw.get("algorithm", ""),
            runs=int(raw.get("runs", 1)),
            aggregate=raw.get("aggregate", "best"),
            per_run=tuple(Rank.parse(r) for r in raw.get("per_run", ())),
        )

    def row(self) -> Row:
        row: Row = {"algorithm": self.algorithm, "runs": self.runs, "aggregate": self.aggregate}
        return row | super().row()


@dataclass(frozen=True)
class AwaitedLadder:
    """The table or ladder provisional ranks wait for (``location``: GET it to follow the
    build; None while it is not built, then ``table_request`` is the body a key holder POSTs)."""

    kind: str
    status: str
    table_id: str | None
    table_ids: tuple[str, ...]
    location: str | None
    table_request: JSON | None
    detail: str

    @classmethod
    def parse(cls, raw: JSON | None) -> AwaitedLadder | None:
        if not raw:
            return None
        return cls(
            kind=str(raw.get("kind", "")),
            status=str(raw.get("status", "")),
            table_id=raw.get("table_id"),
            table_ids=tuple(raw.get("table_ids") or ()),
            location=raw.get("location"),
            table_request=raw.get("table_request"),
            detail=str(raw.get("detail", "")),
        )


@dataclass(frozen=True)
class RankSet(_Tabular):
    """The answer of ``POST /v1/absolute-ranks``.

    ``ranks`` has one :class:`Rank` per value sent (in order); with ``runs_by_algorithm`` it is
    empty and ``algorithms`` has one :class:`AlgorithmRank` per algorithm (in order). ``source``
    names the table (``source['spec']['region']``), ladder or exact form used.
    """

    function_id: str
    budget: int
    runs: int | None
    aggregate: str
    ranks: tuple[Rank, ...]
    algorithms: tuple[AlgorithmRank, ...]
    source: JSON
    tail: JSON
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)
    awaiting: AwaitedLadder | None = None
    """With provisional ranks: the nested-region ladder they wait for."""

    @property
    def provisional(self) -> bool:
        """Whether some rank (a value's, an algorithm's or a run's) is provisional."""
        return any(r.provisional for r in self.ranks) or any(
            a.provisional or any(r.provisional for r in a.per_run) for a in self.algorithms
        )

    @classmethod
    def parse(cls, raw: JSON) -> RankSet:
        return cls(
            function_id=raw.get("function_id", ""),
            budget=int(raw.get("budget", 1)),
            runs=raw.get("runs"),
            aggregate=raw.get("aggregate", ""),
            ranks=tuple(Rank.parse(r) for r in raw.get("results") or ()),
            algorithms=tuple(AlgorithmRank.parse(a) for a in raw.get("algorithms") or ()),
            source=raw.get("source") or {},
            tail=raw.get("tail") or {},
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
            awaiting=AwaitedLadder.parse(raw.get("awaiting")),
        )

    def by_algorithm(self) -> dict[str, AlgorithmRank]:
        """``{name: AlgorithmRank}`` (runs_by_algorithm answers)."""
        return {a.algorithm: a for a in self.algorithms}

    def rows(self) -> list[Row]:
        if self.algorithms:
            return [a.row() for a in self.algorithms]
        return [r.row() for r in self.ranks]


# ---------------------------------------------------------------- region scans


@dataclass(frozen=True)
class ScanDelta:
    """One δ of a region scan: its table, Eq. 29's e and the algorithms' ranks in its box."""

    delta: float
    table_id: str
    status: str
    volume_fraction: float | None
    e: float | None
    log10_e: float | None
    computable: bool | None
    reason: str | None
    ranks: tuple[JSON, ...]


@dataclass(frozen=True)
class RegionScan(_Tabular):
    """A δ-region scan: per δ the spread e of the ranks; the chosen δ and its follow-up table.

    ``chosen``/``chosen_separating`` are the chosen half-widths (None until ready);
    ``follow_up`` is the server's follow-up block (``table_request`` is a ready
    ``create_table`` body).
    """

    id: str
    location: str
    status: str
    function_id: str
    tail: str
    progress: Progress | None
    tables_ready: int
    tables_total: int
    eta_seconds: float | None
    deltas: tuple[ScanDelta, ...]
    chosen: float | None
    chosen_separating: float | None
    follow_up: JSON | None
    errors: tuple[JSON, ...]
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @property
    def ready(self) -> bool:
        return self.status == "ready"

    @property
    def failure(self) -> str | None:
        """The errors of the scan's tables (status ``failed``)."""
        return "; ".join(f"δ = {e.get('delta')}: {e.get('error')}" for e in self.errors) or None

    @classmethod
    def parse(cls, raw: JSON) -> RegionScan:
        progress = raw.get("progress") or {}
        tables = progress.get("tables") or {}

        def chosen(key: str) -> float | None:
            doc = raw.get(key)
            return doc.get("delta") if isinstance(doc, Mapping) else None

        return cls(
            id=raw["id"],
            location=raw.get("location", ""),
            status=raw.get("status", ""),
            function_id=raw.get("function_id", ""),
            tail=raw.get("tail", "auto"),
            progress=Progress.parse(progress.get("chunks")),
            tables_ready=int(tables.get("ready", 0)),
            tables_total=int(tables.get("total", 0)),
            eta_seconds=raw.get("eta_seconds"),
            deltas=tuple(
                ScanDelta(
                    delta=d["delta"],
                    table_id=d.get("table_id", ""),
                    status=d.get("status", ""),
                    volume_fraction=d.get("volume_fraction"),
                    e=d.get("e"),
                    log10_e=d.get("log10_e"),
                    computable=d.get("computable"),
                    reason=d.get("reason"),
                    ranks=tuple(d.get("ranks") or ()),
                )
                for d in raw.get("deltas") or ()
            ),
            chosen=chosen("chosen"),
            chosen_separating=chosen("chosen_separating"),
            follow_up=raw.get("follow_up"),
            errors=tuple(raw.get("errors") or ()),
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [
            {
                "delta": d.delta,
                "status": d.status,
                "volume_fraction": d.volume_fraction,
                "log10_e": d.log10_e,
                "computable": d.computable,
                "chosen": d.delta == self.chosen,
            }
            for d in self.deltas
        ]
