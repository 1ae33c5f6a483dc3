"""Typed leaderboards: ``GET /v1/leaderboards/{function_id}`` and ``GET /v1/leaderboards``.

As everywhere in :mod:`absrank_client.models`: frozen dataclasses, ``raw`` keeps the answer,
``rows()``/``to_frame()`` give one flat row per set, every p-value has its ``log10`` beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from absrank_client._models_base import JSON, Row, ServiceWarning, _Tabular, _warnings, log10_of
from absrank_client.models import AwaitedLadder, Posthoc

__all__ = [
    "Awaited",
    "Excluded",
    "Leaderboard",
    "LeaderboardEntry",
    "LeaderboardPair",
    "SuiteLeaderboard",
    "SuiteLeaderboardEntry",
]


Awaited = AwaitedLadder
"""A table or ladder a provisional entry waits for (one type with the ranks' awaited ladder)."""


@dataclass(frozen=True)
class LeaderboardEntry:
    """One archived set on one function: its absolute rank beside its relative rank.

    ``status`` is ``"final"`` or ``"provisional"`` (then ``awaiting`` says what for, and
    ``log10_v`` is a tail-model bound or ``None`` while the function's table builds).
    ``curve`` is the path of the published v1 curve the rank came from (``client.request("GET",
    entry.curve)``), None for an exact v1.
    """

    set_id: str
    label: str
    name: str
    version: str | None
    budget: int
    runs: int
    aggregate: str
    published: bool
    value: float
    error: float | None
    status: str
    log10_v: float | None
    v: float | None
    log10_lo: float | None
    log10_hi: float | None
    method: str | None
    source: str | None
    curve: str | None
    relative_rank: float | None
    tested: bool
    awaiting: Awaited | None
    note: str | None

    @classmethod
    def parse(cls, raw: JSON) -> LeaderboardEntry:
        absolute = raw.get("absolute") or {}
        interval = absolute.get("interval") or {}
        return cls(
            set_id=str(raw["set_id"]),
            label=str(raw.get("label", raw["set_id"])),
            name=str(raw.get("name", "")),
            version=raw.get("version"),
            budget=int(raw.get("budget", 1)),
            runs=int(raw.get("runs", 1)),
            aggregate=str(raw.get("aggregate", "")),
            published=bool(raw.get("published", False)),
            value=float(raw["value"]),
            error=raw.get("error"),
            status=str(raw.get("status", "final")),
            log10_v=absolute.get("log10_v"),
            v=absolute.get("v"),
            log10_lo=interval.get("log10_lo"),
            log10_hi=interval.get("log10_hi"),
            method=absolute.get("method"),
            source=absolute.get("source"),
            curve=absolute.get("curve"),
            relative_rank=raw.get("relative_rank"),
            tested=bool(raw.get("tested", False)),
            awaiting=Awaited.parse(raw.get("awaiting")),
            note=raw.get("note"),
        )

    @property
    def final(self) -> bool:
        """Whether no better method is awaited for this rank."""
        return self.status == "final"

    def row(self) -> Row:
        return {
            "label": self.label,
            "log10_v": self.log10_v,
            "log10_lo": self.log10_lo,
            "log10_hi": self.log10_hi,
            "relative_rank": self.relative_rank,
            "value": self.value,
            "f - f*": self.error,
            "runs": self.runs,
            "aggregate": self.aggregate,
            "budget": self.budget,
            "method": self.method,
            "status": self.status,
            "set_id": self.set_id,
        }


@dataclass(frozen=True)
class LeaderboardPair:
    """A rank-sum test of two sets' runs (Holm-adjusted over all pairs), by label."""

    a: str
    b: str
    p_value: float
    log10_p_value: float | None
    p_adjusted: float | None
    log10_p_adjusted: float | None
    in_family: bool
    significant: bool

    @classmethod
    def parse(cls, raw: JSON) -> LeaderboardPair:
        return cls(
            a=str(raw.get("a_label", raw.get("a"))),
            b=str(raw.get("b_label", raw.get("b"))),
            p_value=float(raw["p_value"]),
            log10_p_value=log10_of(raw, "p_value"),
            p_adjusted=None if raw.get("p_adjusted") is None else float(raw["p_adjusted"]),
            log10_p_adjusted=log10_of(raw, "p_adjusted"),
            in_family=bool(raw.get("in_family", True)),
            significant=bool(raw.get("significant", False)),
        )


@dataclass(frozen=True)
class Excluded:
    """A set with runs on the function that is not ranked: ``reason`` is a stable code."""

    set_id: str
    name: str
    function_id: str
    reason: str
    detail: str

    @classmethod
    def parse(cls, raw: JSON) -> Excluded:
        return cls(
            set_id=str(raw["set_id"]),
            name=str(raw.get("name", "")),
            function_id=str(raw.get("function_id", "")),
            reason=str(raw.get("reason", "")),
            detail=str(raw.get("detail", "")),
        )


@dataclass(frozen=True)
class Leaderboard(_Tabular):
    """The answer of ``GET /v1/leaderboards/{function_id}``: entries by absolute rank."""

    function_id: str
    budget: int | None
    aggregate: str
    entries: tuple[LeaderboardEntry, ...]
    excluded: tuple[Excluded, ...]
    pairs: tuple[LeaderboardPair, ...]
    significance_status: str
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> Leaderboard:
        sig = raw.get("significance") or {}
        return cls(
            function_id=str(raw.get("function_id", "")),
            budget=raw.get("budget"),
            aggregate=str(raw.get("aggregate", "")),
            entries=tuple(LeaderboardEntry.parse(e) for e in raw.get("entries") or ()),
            excluded=tuple(Excluded.parse(x) for x in raw.get("excluded") or ()),
            pairs=tuple(LeaderboardPair.parse(p) for p in sig.get("pairs") or ()),
            significance_status=str(sig.get("status", "")),
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    @property
    def final(self) -> bool:
        """Whether every entry's rank is final."""
        return all(e.final for e in self.entries)

    def rows(self) -> list[Row]:
        return [e.row() for e in self.entries]


@dataclass(frozen=True)
class SuiteLeaderboardEntry:
    """One set over a suite and dimension: mean log10 v over the functions it covers."""

    set_id: str
    label: str
    mean_log10_v: float | None
    functions_covered: int
    functions_total: int
    full_coverage: bool
    provisional: bool
    functions_at_zero: int = 0

    @classmethod
    def parse(cls, raw: JSON) -> SuiteLeaderboardEntry:
        return cls(
            set_id=str(raw["set_id"]),
            label=str(raw.get("label", raw["set_id"])),
            mean_log10_v=raw.get("mean_log10_v"),
            functions_covered=int(raw.get("functions_covered", 0)),
            functions_total=int(raw.get("functions_total", 0)),
            full_coverage=bool(raw.get("full_coverage", False)),
            provisional=bool(raw.get("provisional", False)),
            functions_at_zero=int(raw.get("functions_at_zero", 0)),
        )

    def row(self) -> Row:
        return {
            "label": self.label,
            "mean_log10_v": "-inf"
            if self.mean_log10_v is None and self.functions_at_zero
            else self.mean_log10_v,
            "functions_at_zero": self.functions_at_zero,
            "functions_covered": self.functions_covered,
            "functions_total": self.functions_total,
            "full_coverage": self.full_coverage,
            "provisional": self.provisional,
            "set_id": self.set_id,
        }


@dataclass(frozen=True)
class SuiteLeaderboard(_Tabular):
    """The answer of ``GET /v1/leaderboards?suite=&dim=``.

    ``posthoc`` is the post-hoc over the sets with full coverage (by label), or None when the
    family was skipped (``family_reason`` says why).
    """

    suite: str
    dim: int
    budget: int | None
    aggregate: str
    functions: tuple[str, ...]
    entries: tuple[SuiteLeaderboardEntry, ...]
    excluded: tuple[Excluded, ...]
    friedman_p: float | None
    posthoc: Posthoc | None
    family_reason: str | None
    warnings: tuple[ServiceWarning, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> SuiteLeaderboard:
        fam = raw.get("family") or {}
        post = fam.get("posthoc")
        fried = fam.get("friedman") or {}
        return cls(
            suite=str(raw.get("suite", "")),
            dim=int(raw.get("dim", 0)),
            budget=raw.get("budget"),
            aggregate=str(raw.get("aggregate", "")),
            functions=tuple(raw.get("functions") or ()),
            entries=tuple(SuiteLeaderboardEntry.parse(e) for e in raw.get("entries") or ()),
            excluded=tuple(Excluded.parse(x) for x in raw.get("excluded") or ()),
            friedman_p=fried.get("p_value"),
            posthoc=Posthoc.parse(post, fam.get("labels") or ()) if post else None,
            family_reason=fam.get("reason"),
            warnings=_warnings(raw.get("warnings")),
            raw=raw,
        )

    def rows(self) -> list[Row]:
        return [e.row() for e in self.entries]
