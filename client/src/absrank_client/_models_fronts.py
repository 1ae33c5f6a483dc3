"""Multi-objective results: Pareto-optimal rankings and the quality indicators of a front
(re-exported by :mod:`absrank_client.models`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from absrank_client._models_base import JSON, Row, ServiceWarning, _Tabular, _warnings, num


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
        out: list[Row] = []
        for i, a in enumerate(self.algorithms):
            row: Row = {"algorithm": a}
            row |= {f"{rule}_rank": ranks[i] for rule, ranks in self.ranks.items()}
            row |= {f"{rule}_score": scores[i] for rule, scores in self.scores.items()}
            out.append(row)
        return out


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
