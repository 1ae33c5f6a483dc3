"""Results about machines: CPUs, equivalent runtimes and cross-machine comparisons
(re-exported by :mod:`absrank_client.models`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from absrank_client._models_base import JSON, Row, ServiceWarning, _Page, _Row, _Tabular, _warnings
from absrank_client._models_stats import TestResult


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
