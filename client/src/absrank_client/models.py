"""Typed results: frozen dataclasses built from the API's JSON answers.

Every result keeps the answer it was built from in ``raw`` (the parsed JSON, nothing dropped)
and converts to a table: ``rows()`` gives a list of flat dicts, ``to_frame()`` a
``pandas.DataFrame`` of the same rows (needs ``pip install 'absrank-client[pandas]'``).

Pairs, cliques and ranks carry algorithm **names**: where the answer gives indices into its
``algorithms`` list, the names are looked up here (and the server's ``a``/``b`` names are used
when it sends them). Every p-value has its ``log10`` beside it: the server's ``log10_<field>``
when the answer has one, else ``log10(p)`` computed here (``None`` when ``p`` is 0). The
strings ``"Infinity"``/``"-Infinity"`` become ``float('inf')``/``float('-inf')``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "AbsolutePair",
    "AlgorithmRank",
    "AlgorithmSummary",
    "AwaitedLadder",
    "BradleyTerry",
    "Comparison",
    "Cpu",
    "CpuList",
    "CrossMachineComparison",
    "EquivalentRuntime",
    "Evaluation",
    "Flip",
    "FriedmanTests",
    "FunctionInfo",
    "FunctionList",
    "HvUnderflow",
    "Indicators",
    "Ladder",
    "LadderLevel",
    "LowPower",
    "OmnibusTest",
    "ParetoRanking",
    "PendingTable",
    "Posthoc",
    "PosthocPair",
    "Progress",
    "Rank",
    "RankSet",
    "ReferenceFrontFilter",
    "RegionScan",
    "Row",
    "Runtime",
    "ScanDelta",
    "ServiceWarning",
    "Table",
    "TableList",
    "TestResult",
]

JSON = Mapping[str, Any]
Cell = str | int | float | bool | list[float] | None
"""A value in a flat result row (``list[float]``: an F test's two degrees of freedom)."""
Row = dict[str, Cell]
"""One row of :meth:`rows` / ``to_frame()``: column name → value."""


@dataclass(frozen=True)
class ServiceWarning:
    """A warning of the service, given once however often it arose.

    Attributes
    ----------
    message : str
        What happened, in words.
    count : int
        How many times it arose (e.g. once per cell of a comparison).
    problems : tuple of str
        The problems (function ids) it concerns, where the service names them.
    """

    message: str
    count: int = 1
    problems: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"[{', '.join(self.problems)}] " if self.problems else ""
        times = f" (x{self.count})" if self.count > 1 else ""
        return f"{where}{self.message}{times}"

    @classmethod
    def parse(cls, item: str | JSON) -> ServiceWarning:
        """From a plain string or a ``{message, count, problems}`` object."""
        if isinstance(item, str):
            return cls(item)
        return cls(
            str(item.get("message", "")),
            int(item.get("count", 1)),
            tuple(str(p) for p in item.get("problems") or ()),
        )


def _warnings(*lists: Sequence[str | JSON] | None) -> tuple[ServiceWarning, ...]:
    return tuple(ServiceWarning.parse(w) for items in lists for w in items or ())


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        raise ImportError(
            "to_frame() needs pandas, which absrank-client does not install by default: "
            "pip install 'absrank-client[pandas]'"
        ) from None
    return pd


def num(x: Any) -> Any:
    """JSON number or the strings ``"Infinity"``/``"-Infinity"`` -> float; None stays None."""
    if x == "Infinity":
        return math.inf
    if x == "-Infinity":
        return -math.inf
    return x


def log10_of(doc: JSON, name: str) -> float | None:
    """``doc['log10_<name>']`` when the server sent it, else ``log10(doc[name])`` (None at 0)."""
    key = f"log10_{name}"
    if key in doc:
        return None if doc[key] is None else float(doc[key])
    p = num(doc.get(name))
    if not isinstance(p, int | float) or isinstance(p, bool) or p <= 0 or math.isnan(p):
        return None
    return math.log10(p)


def _names(algorithms: Sequence[str], indices: Sequence[Any]) -> tuple[str, ...]:
    return tuple(algorithms[i] if isinstance(i, int) else str(i) for i in indices)


class _Tabular:
    """``rows()`` (flat dicts) and ``to_frame()`` (the same as a pandas DataFrame)."""

    def rows(self) -> list[Row]:
        """The result as a list of flat dicts (one per row of :meth:`to_frame`)."""
        raise NotImplementedError

    def to_frame(self) -> Any:
        """The result as a ``pandas.DataFrame`` (rows as in :meth:`rows`)."""
        return _pandas().DataFrame(self.rows())


class _Row(_Tabular):
    """A single item: one row, ``row()``."""

    def row(self) -> Row:
        raise NotImplementedError

    def rows(self) -> list[Row]:
        return [self.row()]


@dataclass(frozen=True)
class _Page(_Tabular):
    """A page of items: ``total`` counts every match, ``items`` this page, one row each."""

    total: int
    items: tuple[Any, ...]
    raw: JSON = field(repr=False)

    @staticmethod
    def _item(raw: JSON) -> Any:
        raise NotImplementedError

    @classmethod
    def parse(cls, raw: JSON) -> Any:
        items = tuple(cls._item(i) for i in raw.get("items", ()))
        return cls(int(raw.get("total", len(items))), items, raw)

    def rows(self) -> list[Row]:
        return [i.row() for i in self.items]


# ---------------------------------------------------------------- functions and tables


@dataclass(frozen=True)
class Progress:
    """Chunks done out of the total (``fraction`` = done/total)."""

    done: int
    total: int
    fraction: float

    @classmethod
    def parse(cls, raw: JSON | None) -> Progress | None:
        if not raw:
            return None
        done, total = int(raw.get("done", 0)), int(raw.get("total", 0))
        fraction = raw.get("fraction")
        return cls(done, total, float(fraction) if fraction is not None else done / max(total, 1))


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
        return {"algorithm": self.algorithm, "runs": self.runs, "aggregate": self.aggregate} | (
            super().row()
        )


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


# ---------------------------------------------------------------- statistical tests


@dataclass(frozen=True)
class TestResult(_Tabular):
    """A single test's answer (wilcoxon, sign, rank-sum, ks, permutation, sign-cross-machine).

    ``p_value`` and ``log10_p_value`` are the test's main p-value; ``result`` is the whole
    ``result`` object of the answer (rank-sum and ks: ``{"rank_sum"|"ks": ..., "a12": ...}``),
    ``a12`` the Vargha–Delaney effect size where the test reports it.
    """

    __test__ = False  # not a pytest class

    test: str
    statistic: float | None
    p_value: float | None
    log10_p_value: float | None
    method: str | None
    degenerate: bool
    reason: str | None
    a12: float | None
    result: JSON
    policies: JSON
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> TestResult:
        result = raw.get("result") or {}
        main = result
        for key in ("rank_sum", "ks"):
            if isinstance(result.get(key), Mapping):
                main = result[key]
        a12 = result.get("a12")
        return cls(
            test=raw.get("test", ""),
            statistic=num(main.get("statistic")),
            p_value=main.get("p_value"),
            log10_p_value=log10_of(main, "p_value"),
            method=main.get("method"),
            degenerate=bool(main.get("degenerate", False)),
            reason=main.get("reason"),
            a12=a12.get("a12") if isinstance(a12, Mapping) else None,
            result=result,
            policies=raw.get("policies") or {},
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        row = {
            "test": self.test,
            "statistic": self.statistic,
            "p_value": self.p_value,
            "log10_p_value": self.log10_p_value,
            "method": self.method,
        }
        if self.a12 is not None:
            row["a12"] = self.a12
        for key in ("p_value_corrected", "decision"):  # the cross-machine sign test
            if key in self.result:
                row[key] = self.result[key]
                if key.startswith("p_"):
                    row[f"log10_{key}"] = log10_of(self.result, key)
        if self.degenerate:
            row["reason"] = self.reason
        return [row]


@dataclass(frozen=True)
class OmnibusTest:
    """One omnibus rank test: Friedman, Iman–Davenport, aligned ranks or Quade."""

    name: str
    statistic: float | None
    df: Any
    p_value: float | None
    log10_p_value: float | None
    method: str | None

    def row(self) -> Row:
        return {
            "test": self.name,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "log10_p_value": self.log10_p_value,
            "method": self.method,
        }


def _omnibus(result: JSON) -> tuple[OmnibusTest, ...]:
    out = []
    for key, name in (
        ("friedman", "friedman"),
        ("aligned_ranks", "aligned-ranks"),
        ("quade", "quade"),
    ):
        doc = result.get(key)
        if not isinstance(doc, Mapping):
            continue
        out.append(
            OmnibusTest(
                name,
                num(doc.get("statistic")),
                doc.get("df"),
                doc.get("p_value"),
                log10_of(doc, "p_value"),
                doc.get("method"),
            )
        )
        if key == "friedman" and "iman_davenport_p_value" in doc:
            out.append(
                OmnibusTest(
                    "iman-davenport",
                    num(doc.get("iman_davenport_statistic")),
                    doc.get("iman_davenport_df"),
                    doc.get("iman_davenport_p_value"),
                    log10_of(doc, "iman_davenport_p_value"),
                    doc.get("method"),
                )
            )
    return tuple(out)


@dataclass(frozen=True)
class FriedmanTests(_Tabular):
    """Friedman (tie-corrected), Iman–Davenport, aligned ranks and Quade on one matrix."""

    algorithms: tuple[str, ...]
    average_ranks: tuple[float, ...]
    tests: tuple[OmnibusTest, ...]
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON, algorithms: Sequence[str] | None = None) -> FriedmanTests:
        result = raw.get("result", raw)
        names = tuple(algorithms or (raw.get("policies") or {}).get("algorithms") or ())
        return cls(
            algorithms=names,
            average_ranks=tuple((result.get("friedman") or {}).get("average_ranks") or ()),
            tests=_omnibus(result),
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def test(self, name: str) -> OmnibusTest:
        """The test called ``name`` (friedman, iman-davenport, aligned-ranks, quade)."""
        for t in self.tests:
            if t.name == name:
                return t
        raise KeyError(name)

    def rows(self) -> list[Row]:
        return [t.row() for t in self.tests]


@dataclass(frozen=True)
class PosthocPair:
    """One post-hoc comparison between algorithms ``a`` and ``b`` (by name)."""

    a: str
    b: str
    rank_difference: float | None
    z: float | None
    p_value: float | None
    log10_p_value: float | None
    p_adjusted: float | None
    log10_p_adjusted: float | None
    significant: bool

    def row(self) -> Row:
        return self.__dict__.copy()


def _expand_group(group: JSON) -> dict[str, list[Any]]:
    """One compact group of pair fields (``code``, ``negated``, ``constant``, ``distinct``)
    as columns: row ``code[p]`` of ``distinct`` (``−1 − c`` with ``negated`` fields negated
    for a negative code) and ``constant`` for every pair."""
    code = list(group.get("code") or ())
    distinct, constant = group.get("distinct") or {}, group.get("constant") or {}
    negated = set(group.get("negated") or ())
    out: dict[str, list[Any]] = {f: [v] * len(code) for f, v in constant.items()}
    for f, col in distinct.items():
        if f in negated:
            out[f] = [col[c] if c >= 0 else -col[-1 - c] for c in code]
        else:
            out[f] = [col[c] if c >= 0 else col[-1 - c] for c in code]
    return out


def _triangle(n_pairs: int) -> tuple[list[int], list[int]]:
    """``(i, j)`` of the upper-triangle order: ``(0, 1), (0, 2), …, (1, 2), …``."""
    k = (1 + math.isqrt(1 + 8 * n_pairs)) // 2 if n_pairs else 0
    i = [x for x in range(k) for _ in range(x + 1, k)]
    j = [y for x in range(k) for y in range(x + 1, k)]
    return i, j


def pair_columns(pairs: Any) -> JSON:
    """A comparison's pairwise family as columns, ``i``, ``j`` and one list per field (nested
    tests as ``{test: {field: [...]}}``), from the compact shape the server sends
    (``order``, ``n_pairs``, ``code``/``distinct``/``constant`` groups; README,
    "Comparisons") or from columns already (comparisons stored before)."""
    if not isinstance(pairs, dict) or "order" not in pairs:
        return pairs if isinstance(pairs, dict) else {}
    if pairs["order"] == "listed":
        i, j = list(pairs["i"]), list(pairs["j"])
    else:
        i, j = _triangle(int(pairs["n_pairs"]))
    out: dict[str, Any] = {"i": i, "j": j}
    skip = {"order", "n_pairs", "i", "j", "code", "negated", "constant", "distinct"}
    if "code" in pairs:
        out.update(_expand_group(pairs))
    for key, value in pairs.items():
        if key in skip:
            continue
        if key == "adjusted" and isinstance(value, dict):
            out.update(_expand_group(value))
        elif isinstance(value, dict) and "code" in value:
            out[key] = _expand_group(value)
        else:
            out[key] = value
    return out


def pair_rows(pairs: Any, algorithms: Sequence[str] | None = None) -> list[JSON]:
    """A list of pairwise results, one object per pair, from any shape the server sends:
    that list itself (``/v1/tests/posthoc``, comparisons stored before the columns), columns
    (one list per field) or a comparison's compact family (``relative.posthoc.pairs``,
    ``absolute.pairwise``: :func:`pair_columns`). Nested columns, such as ``wilcoxon``,
    become one object per pair too, and a field given once, such as ``adjustment``, is every
    pair's. With ``algorithms``, each pair also has its names ``a`` and ``b``."""
    if isinstance(pairs, list):
        return pairs
    if not isinstance(pairs, dict):
        return []
    pairs = pair_columns(pairs)
    n = len(pairs.get("i") or ())

    def entry(value: Any, p: int) -> Any:
        if isinstance(value, list):
            return value[p]
        if isinstance(value, dict):
            return {k: entry(v, p) for k, v in value.items()}
        return value

    rows: list[dict[str, Any]] = [{k: entry(v, p) for k, v in pairs.items()} for p in range(n)]
    if algorithms is not None:
        for r in rows:
            r.setdefault("a", algorithms[r["i"]])
            r.setdefault("b", algorithms[r["j"]])
    return list(rows)


def posthoc_matrices(posthoc: JSON, k: int) -> dict[str, Any]:
    """A comparison's post-hoc ``p_matrix`` and ``log10_p_matrix`` (all pairs: k × k, 1 and
    0 on the diagonal) or ``p_vs_control`` and ``log10_p_vs_control`` (1 and 0 at the
    control), rebuilt from its pairs' adjusted p-values exactly as the server laid them out
    (or as sent, by comparisons stored before)."""
    keys = ("p_matrix", "log10_p_matrix", "p_vs_control", "log10_p_vs_control")
    if any(isinstance(posthoc.get(key), list) for key in keys):
        return {key: posthoc[key] for key in keys if key in posthoc}
    cols = pair_columns(posthoc.get("pairs"))
    i, j = cols.get("i") or [], cols.get("j") or []
    p, lp = cols.get("p_adjusted") or [], cols.get("log10_p_adjusted") or []
    if posthoc.get("comparison") == "vs-control":
        c, lc = [1.0] * k, [0.0] * k
        for y, v, lv in zip(j, p, lp, strict=False):
            c[y], lc[y] = v, lv
        return {
            "p_matrix": None,
            "log10_p_matrix": None,
            "p_vs_control": c,
            "log10_p_vs_control": lc,
        }
    m = [[1.0] * k for _ in range(k)]
    lm: list[list[Any]] = [[0.0] * k for _ in range(k)]
    for x, y, v, lv in zip(i, j, p, lp, strict=False):
        m[x][y] = m[y][x] = v
        lm[x][y] = lm[y][x] = lv
    return {"p_matrix": m, "log10_p_matrix": lm, "p_vs_control": None, "log10_p_vs_control": None}


def bradley_terry_probabilities(bradley_terry: JSON) -> list[list[float]] | None:
    """``P(i ≻ j)``, k × k: as sent (a degenerate fit, comparisons stored before) or rebuilt
    bit for bit from the finite strengths, ``θ_i / (θ_i + θ_j)`` (0.5 on the diagonal), as
    the server computes it when it leaves them out."""
    sent = bradley_terry.get("probabilities")
    if isinstance(sent, list):
        return sent
    s = bradley_terry.get("strengths")
    if not isinstance(s, list) or not all(isinstance(x, float) for x in s):
        return None
    return [[0.5 if a == b else x / (x + y) for b, y in enumerate(s)] for a, x in enumerate(s)]


def pair_names(algorithms: Sequence[str], doc: JSON, key: str = "pair") -> tuple[str, str]:
    """The two names of a pair: the server's ``a``/``b`` when present, else from indices."""
    if isinstance(doc.get("a"), str) and isinstance(doc.get("b"), str):
        return doc["a"], doc["b"]
    if "i" in doc and "j" in doc:
        i, j = doc["i"], doc["j"]
    else:
        i, j = doc[key]
    a, b = _names(algorithms, (i, j))
    return a, b


@dataclass(frozen=True)
class LowPower:
    """Too few problems for the rank post-hoc tests: the standard CD exceeds ``(k − 1) / 2``.

    Only pairs of algorithms whose average ranks differ by more than half the largest possible
    difference could be found significant; ``n_needed`` problems would bring the CD down to
    ``threshold`` (the service's docs/METHODS.md states the rule and its source).
    """

    n_problems: int
    n_algorithms: int
    alpha: float
    comparison: str
    critical_difference: float
    threshold: float
    n_needed: int
    chi2_rough: bool
    message: str

    @classmethod
    def parse(cls, doc: Any) -> LowPower | None:
        if not isinstance(doc, Mapping):
            return None
        return cls(
            n_problems=int(doc["n_problems"]),
            n_algorithms=int(doc["n_algorithms"]),
            alpha=float(doc["alpha"]),
            comparison=str(doc.get("comparison", "")),
            critical_difference=float(doc["critical_difference"]),
            threshold=float(doc["threshold"]),
            n_needed=int(doc["n_needed"]),
            chi2_rough=bool(doc.get("chi2_rough", False)),
            message=str(doc.get("message", "")),
        )


@dataclass(frozen=True)
class Posthoc(_Tabular):
    """A post-hoc procedure's answer: pairs and cliques by algorithm name.

    ``cliques`` are groups of algorithms with no significant difference among them (what a
    critical-difference diagram joins with a bar); ``control`` is a name or None.
    ``low_power`` is set when there are too few problems for the test to find differences;
    ``warnings`` are the answer's (``/v1/tests/posthoc``; a comparison's are its own).
    """

    procedure: str
    comparison: str
    alpha: float
    control: str | None
    algorithms: tuple[str, ...]
    average_ranks: tuple[float, ...]
    critical_difference: float | None
    pairs: tuple[PosthocPair, ...]
    cliques: tuple[tuple[str, ...], ...]
    low_power: LowPower | None
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)
    cd_convention: str = "standard"
    """The critical difference's convention: ``standard`` (Demšar 2006) or ``jing-liu``
    (Jing & Liu's Table I: z at 1 − α/(2k))."""

    @classmethod
    def parse(cls, doc: JSON, algorithms: Sequence[str]) -> Posthoc:
        names = tuple(algorithms)
        control = doc.get("control")
        pairs = []
        for p in pair_rows(doc.get("pairs")):
            a, b = pair_names(names, p)
            pairs.append(
                PosthocPair(
                    a=a,
                    b=b,
                    rank_difference=p.get("rank_difference"),
                    z=num(p.get("z")),
                    p_value=p.get("p_value"),
                    log10_p_value=log10_of(p, "p_value"),
                    p_adjusted=p.get("p_adjusted"),
                    log10_p_adjusted=log10_of(p, "p_adjusted"),
                    significant=bool(p.get("significant", False)),
                )
            )
        return cls(
            procedure=doc.get("procedure", ""),
            comparison=doc.get("comparison", ""),
            alpha=float(doc.get("alpha", 0.05)),
            control=names[control] if isinstance(control, int) else control,
            algorithms=names,
            average_ranks=tuple(doc.get("average_ranks") or ()),
            critical_difference=doc.get("critical_difference"),
            pairs=tuple(pairs),
            cliques=tuple(_names(names, c) for c in doc.get("cliques") or ()),
            low_power=LowPower.parse(doc.get("low_power")),
            warnings=(),
            raw=doc,
            cd_convention=str(doc.get("cd_convention") or "standard"),
        )

    def rows(self) -> list[Row]:
        return [p.row() for p in self.pairs]


@dataclass(frozen=True)
class BradleyTerry(_Tabular):
    """Bradley–Terry strengths by algorithm (``inf`` never loses, 0 never wins)."""

    algorithms: tuple[str, ...]
    strengths: tuple[float, ...]
    components: tuple[tuple[str, ...], ...]
    degenerate: bool
    reason: str | None
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, model: JSON, algorithms: Sequence[str], raw: JSON | None = None) -> BradleyTerry:
        names = tuple(algorithms)
        return cls(
            algorithms=names,
            strengths=tuple(num(s) for s in model.get("strengths") or ()),
            components=tuple(_names(names, c) for c in model.get("components") or ()),
            degenerate=bool(model.get("degenerate", False)),
            reason=model.get("reason"),
            raw=raw if raw is not None else model,
        )

    def rows(self) -> list[Row]:
        return [
            {"algorithm": a, "strength": s}
            for a, s in zip(self.algorithms, self.strengths, strict=False)
        ]


# ---------------------------------------------------------------- comparisons


@dataclass(frozen=True)
class AlgorithmSummary:
    """One algorithm of a comparison: relative and absolute figures side by side."""

    algorithm: str
    average_rank: float | None
    average_absolute_rank: float | None
    mean_log10_v: float | None
    strength: float | None

    def row(self) -> Row:
        return self.__dict__.copy()


@dataclass(frozen=True)
class AbsolutePair:
    """Wilcoxon and sign tests of two algorithms' absolute ranks over the problems."""

    a: str
    b: str
    wilcoxon_p: float | None
    log10_wilcoxon_p: float | None
    sign_p: float | None
    log10_sign_p: float | None
    p_adjusted: float | None
    log10_p_adjusted: float | None
    significant: bool

    def row(self) -> Row:
        return self.__dict__.copy()


@dataclass(frozen=True)
class Flip:
    """A conclusion about the pair ``a``, ``b`` that changes when only ``subset`` is compared."""

    scale: str  # "relative" or "absolute"
    subset: tuple[str, ...]
    a: str
    b: str
    kinds: tuple[str, ...]  # "order" and/or "significance"

    def row(self) -> Row:
        return {
            "scale": self.scale,
            "a": self.a,
            "b": self.b,
            "kinds": ",".join(self.kinds),
            "subset": ",".join(self.subset),
        }


@dataclass(frozen=True)
class PendingTable:
    """A table (or ladder level) a partial comparison waits for."""

    problem: str
    location: str | None
    status: str | None
    progress: Progress | None
    eta_seconds: float | None


def _flips(scale: str, doc: JSON, algorithms: Sequence[str]) -> tuple[Flip, ...]:
    out = []
    for sub in doc.get("subsets") or ():
        subset = tuple(str(s) for s in sub.get("subset") or ())
        for flip in sub.get("flips") or ():
            pair = flip.get("pair") or ()
            a, b = _names(algorithms, pair) if len(pair) == 2 else pair_names(algorithms, flip)
            out.append(Flip(scale, subset, a, b, tuple(flip.get("kinds") or ())))
    return tuple(out)


def _flipped_pairs(doc: JSON, algorithms: Sequence[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for pair in doc.get("flipped_pairs") or ():
        a, b = _names(algorithms, pair)
        out.append((a, b))
    return tuple(out)


@dataclass(frozen=True)
class Comparison(_Tabular):
    """A comparison (``POST /v1/comparisons``): relative and absolute ranks and the NIIA report.

    ``summary`` has one :class:`AlgorithmSummary` per algorithm (``to_frame()`` is that table).
    ``status`` is ``partial`` while tables build (``absolute_status`` ``pending``, ``pending``
    lists them); the client waits for them unless told not to.
    """

    id: str
    location: str
    status: str
    algorithms: tuple[str, ...]
    problems: tuple[str, ...]
    summary: tuple[AlgorithmSummary, ...]
    omnibus: tuple[OmnibusTest, ...]
    posthoc: Posthoc | None
    absolute_status: str | None
    pending: tuple[PendingTable, ...]
    absolute_pairs: tuple[AbsolutePair, ...]
    niia_status: str | None
    flips: tuple[Flip, ...]
    relative_flipped_pairs: tuple[tuple[str, str], ...]
    absolute_flipped_pairs: tuple[tuple[str, str], ...]
    warnings: tuple[ServiceWarning, ...]
    absolute_regions: JSON
    """With ``tables`` given: problem → the region its ranks are relative to (``region``
    ``box`` with ``delta``, ``lower``, ``upper``, or ``domain``); empty otherwise."""
    raw: JSON = field(repr=False)

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def friedman(self) -> OmnibusTest | None:
        """The Friedman test of the relative ranks."""
        return next((t for t in self.omnibus if t.name == "friedman"), None)

    @classmethod
    def parse(cls, raw: JSON) -> Comparison:
        names = tuple(raw.get("algorithms") or ())
        relative = raw.get("relative") or {}
        absolute = raw.get("absolute") or {}
        niia = raw.get("niia") or {}
        k = len(names)

        def column(doc: JSON, key: str) -> list[Any]:
            values = doc.get(key)
            return [num(x) for x in values] if isinstance(values, list) else [None] * k

        avg = column(relative, "average_ranks")
        abs_avg = column(absolute, "average_absolute_rank")
        mean_log = column(absolute, "mean_log10_v")
        strengths = column(relative.get("bradley_terry") or {}, "strengths")
        summary = tuple(
            AlgorithmSummary(n, avg[i], abs_avg[i], mean_log[i], strengths[i])
            for i, n in enumerate(names)
        )
        posthoc = relative.get("posthoc")
        pairs = []
        for p in pair_rows(absolute.get("pairwise")):
            a, b = pair_names(names, p)
            w, s = p.get("wilcoxon") or {}, p.get("sign_test") or {}
            pairs.append(
                AbsolutePair(
                    a,
                    b,
                    w.get("p_value"),
                    log10_of(w, "p_value"),
                    s.get("p_value"),
                    log10_of(s, "p_value"),
                    p.get("p_adjusted"),
                    log10_of(p, "p_adjusted"),
                    bool(p.get("significant", False)),
                )
            )
        pending = tuple(
            PendingTable(
                problem=str(p.get("problem", "")),
                location=p.get("location"),
                status=p.get("table_status"),
                progress=Progress.parse(p.get("progress")),
                eta_seconds=p.get("eta_seconds"),
            )
            for p in absolute.get("pending") or ()
        )
        rel_niia, abs_niia = niia.get("relative") or {}, niia.get("absolute") or {}
        return cls(
            id=raw.get("id", ""),
            location=raw.get("location", ""),
            status=raw.get("status", ""),
            algorithms=names,
            problems=tuple(raw.get("problems") or ()),
            summary=summary,
            omnibus=_omnibus(relative),
            posthoc=Posthoc.parse(posthoc, names) if isinstance(posthoc, Mapping) else None,
            absolute_status=absolute.get("status"),
            pending=pending,
            absolute_pairs=tuple(pairs),
            niia_status=niia.get("status"),
            flips=_flips("relative", rel_niia, names) + _flips("absolute", abs_niia, names),
            relative_flipped_pairs=_flipped_pairs(rel_niia, names),
            absolute_flipped_pairs=_flipped_pairs(abs_niia, names),
            warnings=_warnings(raw.get("warnings"), absolute.get("warnings")),
            absolute_regions=dict(absolute.get("regions") or {}),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [s.row() for s in self.summary]


# ---------------------------------------------------------------- machines


@dataclass(frozen=True)
class Cpu(_Row):
    """A CPU of the registry with its PassMark single-thread score."""

    id: int
    name: str
    score: float
    source: str
    source_date: str
    match: float | None
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> Cpu:
        return cls(
            id=int(raw["id"]),
            name=raw["name"],
            score=float(raw["score"]),
            source=raw.get("source", ""),
            source_date=raw.get("source_date", ""),
            match=raw.get("match"),
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def row(self) -> Row:
        return {
            "id": self.id,
            "name": self.name,
            "score": self.score,
            "source_date": self.source_date,
            "match": self.match,
        }


@dataclass(frozen=True)
class CpuList(_Page):
    """CPUs matching a search, best first."""

    items: tuple[Cpu, ...]
    _item = staticmethod(Cpu.parse)


@dataclass(frozen=True)
class EquivalentRuntime(_Tabular):
    """Equivalent runtimes on M2 of runtimes on M1 (Arza et al.'s model)."""

    t1: tuple[float, ...]
    t2: tuple[float, ...]
    gamma: float
    p_gamma: float
    ratio: float
    s1: float
    s2: float
    warnings: tuple[ServiceWarning, ...]
    limits: str
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> EquivalentRuntime:
        def many(x: Any) -> tuple[float, ...]:
            return tuple(x) if isinstance(x, list) else (x,)

        return cls(
            t1=many(raw["t1"]),
            t2=many(raw["t2"]),
            gamma=raw["gamma"],
            p_gamma=raw["p_gamma"],
            ratio=raw["ratio"],
            s1=raw["s1"],
            s2=raw["s2"],
            warnings=_warnings(raw.get("warnings")),
            limits=raw.get("limits", ""),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [
            {"t1": a, "t2": b, "gamma": self.gamma, "s1": self.s1, "s2": self.s2}
            for a, b in zip(self.t1, self.t2, strict=False)
        ]


@dataclass(frozen=True)
class Runtime:
    """One instance of a cross-machine comparison: A's result and runtime, B's runtime."""

    instance: str
    a: float
    t1: float
    t2: float
    b: float | None


@dataclass(frozen=True)
class CrossMachineComparison(_Tabular):
    """The paper's five steps as one resource; ``test`` once B's results are in."""

    id: str
    location: str
    status: str
    gamma: float
    p_gamma: float
    runtimes: tuple[Runtime, ...]
    test: TestResult | None
    steps: tuple[str, ...]
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> CrossMachineComparison:
        b = {r["instance"]: r.get("b") for r in raw.get("results") or ()}
        test = raw.get("test")
        return cls(
            id=raw["id"],
            location=raw.get("location", ""),
            status=raw.get("status", ""),
            gamma=raw.get("gamma", 1.0),
            p_gamma=raw.get("p_gamma", 0.5),
            runtimes=tuple(
                Runtime(r["instance"], r["a"], r["t1"], r["t2"], b.get(r["instance"]))
                for r in raw.get("runtimes") or ()
            ),
            test=(
                TestResult.parse({"test": "sign-cross-machine", "result": test})
                if isinstance(test, Mapping)
                else None
            ),
            steps=tuple(raw.get("steps") or ()),
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [r.__dict__.copy() for r in self.runtimes]


# ---------------------------------------------------------------- multi-objective


@dataclass(frozen=True)
class ParetoRanking(_Tabular):
    """Pareto-optimal ranking: per rule (olympic, linear, exponential, adaptive, average) the
    overall ``scores`` and ``ranks`` by algorithm; ``problems`` as the server sent them."""

    id: str
    location: str
    algorithms: tuple[str, ...]
    indicators: tuple[str, ...]
    ranks: Mapping[str, tuple[float, ...]]
    scores: Mapping[str, tuple[float, ...]]
    problems: tuple[JSON, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> ParetoRanking:
        overall = raw.get("overall") or {}
        return cls(
            id=raw["id"],
            location=raw.get("location", ""),
            algorithms=tuple(raw.get("algorithms") or ()),
            indicators=tuple(raw.get("indicators") or ()),
            ranks={k: tuple(v) for k, v in (overall.get("ranks") or {}).items()},
            scores={k: tuple(v) for k, v in (overall.get("scores") or {}).items()},
            problems=tuple(raw.get("problems") or ()),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [
            {"algorithm": a}
            | {f"{rule}_rank": ranks[i] for rule, ranks in self.ranks.items()}
            | {f"{rule}_score": scores[i] for rule, scores in self.scores.items()}
            for i, a in enumerate(self.algorithms)
        ]


@dataclass(frozen=True)
class ReferenceFrontFilter:
    """Rows the service removed from the reference front before computing the indicators."""

    n_given: int
    duplicates_removed: int
    dominated_removed: int
    n_used: int

    @classmethod
    def parse(cls, doc: Any) -> ReferenceFrontFilter | None:
        if not isinstance(doc, Mapping):
            return None
        return cls(
            int(doc["n_given"]),
            int(doc["duplicates_removed"]),
            int(doc["dominated_removed"]),
            int(doc["n_used"]),
        )


@dataclass(frozen=True)
class HvUnderflow:
    """A positive hypervolume below the float range: ``hv`` as a float, ``log10_hv`` exact."""

    hv: float
    log10_hv: float | None
    points_counted: int
    message: str

    @classmethod
    def parse(cls, doc: Any) -> HvUnderflow | None:
        if not isinstance(doc, Mapping):
            return None
        log10_hv = doc.get("log10_hv")
        return cls(
            float(doc["hv"]),
            None if log10_hv is None else float(log10_hv),
            int(doc["points_counted"]),
            str(doc.get("message", "")),
        )


@dataclass(frozen=True)
class Indicators(_Tabular):
    """Quality indicators of one front, with every setting echoed in ``settings``.

    ``reference_front_filter`` says how many repeated and dominated rows of the reference front
    were removed (None without one); ``log10_hv`` is finite below the float range and
    ``hv_underflow`` is set when the float ``hv`` underflowed.
    """

    values: Mapping[str, float]
    settings: JSON
    warnings: tuple[ServiceWarning, ...]
    log10_hv: float | None
    reference_front_filter: ReferenceFrontFilter | None
    hv_underflow: HvUnderflow | None
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> Indicators:
        log10_hv = raw.get("log10_hv")
        return cls(
            values={k: num(v) for k, v in (raw.get("values") or {}).items()},
            settings=raw.get("settings") or {},
            warnings=_warnings(raw.get("warnings")),
            log10_hv=None if log10_hv is None else float(log10_hv),
            reference_front_filter=ReferenceFrontFilter.parse(raw.get("reference_front_filter")),
            hv_underflow=HvUnderflow.parse(raw.get("hv_underflow")),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [{"indicator": k, "value": v} for k, v in self.values.items()]


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
