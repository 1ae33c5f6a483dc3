"""Anytime analysis and profiles: ERT, runtime ECDFs, fixed budgets, the anytime absolute rank,
performance/data/accuracy profiles (re-exported by :mod:`absrank_client.models`)."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from absrank_client._models_base import JSON, Row, _Tabular


def _opt(values: list[float | None] | None) -> tuple[float, ...]:
    """``null`` (never reached, no record, a failure) as ``nan``."""
    return tuple(math.nan if v is None else float(v) for v in values or ())


@dataclass(frozen=True)
class Step:
    """A step function ``F(t) = counts[i] / total`` with its exact breakpoints ``x``.

    ``continuity`` ``"right"``: ``F(x[i]) = counts[i+1] / total`` (ECDFs, performance and data
    profiles); ``"left"``: ``F(x[i]) = counts[i] / total`` (accuracy profiles).
    """

    x: tuple[float, ...]
    counts: tuple[int, ...]
    total: int
    continuity: str

    @classmethod
    def parse(cls, raw: JSON) -> Step:
        return cls(
            x=tuple(float(v) for v in raw["x"]),
            counts=tuple(int(c) for c in raw["counts"]),
            total=int(raw["total"]),
            continuity=str(raw["continuity"]),
        )

    def __call__(self, t: float) -> float:
        """``F(t)``, exactly as the server defines it."""
        find = bisect_right if self.continuity == "right" else bisect_left
        return self.counts[find(self.x, t)] / self.total


@dataclass(frozen=True)
class Quantiles:
    """Quantiles over runs at each budget: ``values[k][b]`` at level ``levels[k]`` (``nan``:
    no run has a record at that budget)."""

    levels: tuple[float, ...]
    values: tuple[tuple[float, ...], ...]

    @classmethod
    def parse(cls, raw: JSON) -> Quantiles:
        return cls(tuple(raw["levels"]), tuple(_opt(row) for row in raw["values"]))

    def at(self, level: float) -> tuple[float, ...]:
        """The row of one level (e.g. 0.5: the medians)."""
        return self.values[self.levels.index(level)]


@dataclass(frozen=True)
class AnytimeRank:
    """``log10 v_c`` of each run's best-so-far at each budget (``per_run[r][b]``) and its
    quantiles over runs; ``methods`` says how ``v1`` was obtained."""

    methods: tuple[str, ...]
    per_run: tuple[tuple[float, ...], ...]
    quantiles: Quantiles

    @classmethod
    def parse(cls, raw: JSON) -> AnytimeRank:
        return cls(
            tuple(raw["methods"]),
            tuple(_opt(row) for row in raw["per_run"]),
            Quantiles.parse(raw["quantiles"]),
        )


@dataclass(frozen=True)
class FunctionRuntimes:
    """One algorithm on one function: ERT per target (``inf``: never reached), successes,
    the runtime ECDF (and from simulated restarts), the fixed-budget view, the anytime rank."""

    algorithm: str
    function_id: str
    runs: int
    budgets_used: tuple[int, ...]
    successes: tuple[int, ...]
    ert: tuple[float, ...]
    ecdf: Step
    simulated_ecdf: Step | None
    fixed_budget: Quantiles
    anytime_rank: AnytimeRank | None

    @classmethod
    def parse(cls, raw: JSON) -> FunctionRuntimes:
        sim, rank = raw.get("simulated_ecdf"), raw.get("anytime_rank")
        return cls(
            algorithm=raw["algorithm"],
            function_id=raw["function_id"],
            runs=int(raw["runs"]),
            budgets_used=tuple(raw["budgets_used"]),
            successes=tuple(raw["successes"]),
            ert=tuple(math.inf if v is None else float(v) for v in raw["ert"]),
            ecdf=Step.parse(raw["ecdf"]),
            simulated_ecdf=None if sim is None else Step.parse(sim),
            fixed_budget=Quantiles.parse(raw["fixed_budget"]),
            anytime_rank=None if rank is None else AnytimeRank.parse(rank),
        )


@dataclass(frozen=True)
class PooledEcdf:
    """One algorithm's runtime ECDF over all its functions and targets (``source``: the runs'
    own runtimes, or simulated restarts)."""

    algorithm: str
    function_ids: tuple[str, ...]
    source: str
    ecdf: Step

    @classmethod
    def parse(cls, raw: JSON) -> PooledEcdf:
        return cls(
            raw["algorithm"], tuple(raw["function_ids"]), raw["source"], Step.parse(raw["ecdf"])
        )


@dataclass(frozen=True)
class RuntimeDistributions(_Tabular):
    """The answer of ``POST /v1/runtime-distributions``; :meth:`rows` has one row per
    (algorithm, function, target): ERT, successes, runs."""

    targets: tuple[float, ...]
    budgets: tuple[int, ...]
    algorithms: tuple[str, ...]
    functions: tuple[FunctionRuntimes, ...]
    pooled: tuple[PooledEcdf, ...]
    warnings: tuple[str, ...]
    raw: JSON = field(repr=False)
    request: JSON = field(default_factory=dict, repr=False)
    """The body that was sent (what :meth:`Client.runtime_plot` draws again)."""

    @classmethod
    def parse(cls, raw: JSON, request: JSON | None = None) -> RuntimeDistributions:
        return cls(
            targets=tuple(raw["targets"]),
            budgets=tuple(raw["budgets"]),
            algorithms=tuple(raw["algorithms"]),
            functions=tuple(FunctionRuntimes.parse(f) for f in raw["functions"]),
            pooled=tuple(PooledEcdf.parse(p) for p in raw.get("pooled") or ()),
            warnings=tuple(f"{w['code']}: {w['message']}" for w in raw.get("warnings") or ()),
            raw=raw,
            request=dict(request or {}),
        )

    def rows(self) -> list[Row]:
        return [
            {
                "algorithm": f.algorithm,
                "function_id": f.function_id,
                "target": t,
                "ert": e,
                "successes": s,
                "runs": f.runs,
            }
            for f in self.functions
            for t, e, s in zip(self.targets, f.ert, f.successes, strict=True)
        ]


@dataclass(frozen=True)
class ProfileCurve:
    """One solver's profile: its step function and the per-problem values behind it."""

    solver: str
    step: Step
    values: tuple[float, ...]


@dataclass(frozen=True)
class Profiles(_Tabular):
    """The answer of ``POST /v1/profiles``; :meth:`rows` lists every breakpoint per solver."""

    kind: str
    axis: str
    problems: tuple[str, ...]
    curves: tuple[ProfileCurve, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> Profiles:
        return cls(
            kind=raw["kind"],
            axis=raw["axis"],
            problems=tuple(raw["problems"]),
            curves=tuple(
                ProfileCurve(c["solver"], Step.parse(c["step"]), _opt(c["values"]))
                for c in raw["curves"]
            ),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        out: list[Row] = []
        for c in self.curves:
            after = 1 if c.step.continuity == "right" else 0
            out += [
                {"solver": c.solver, "x": x, "fraction": c.step.counts[i + after] / c.step.total}
                for i, x in enumerate(c.step.x)
            ]
        return out
