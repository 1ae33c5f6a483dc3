"""Published ``v1`` curves of tables and ladders, and their quantiles (typed results).

:class:`TableCurve` is ``GET /v1/tables/{id}/curve.json``: the knots with exact counts and the
tail models the service ranks with by default; :meth:`TableCurve.v1` recomputes ``v1(t)`` from
them (the formula of the answer's ``formula`` field), so ranks can be computed offline.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from absrank_client._models_base import JSON, Row, _Tabular

__all__ = [
    "LadderCurve",
    "LadderPiece",
    "LowerTail",
    "Quantile",
    "QuantileList",
    "TableCurve",
    "UpperTail",
]


@dataclass(frozen=True)
class LowerTail:
    """The lower-tail model: ``v1(t)`` for ``t < limit`` (kind power, linear or paper)."""

    kind: str
    limit: float
    f_opt: float | None
    v_top: float
    beta: float | None
    beta_se: float | None
    beta_source: str | None
    k: int | None
    anchor_count: int | None
    atom: float
    obtained: str

    @classmethod
    def parse(cls, raw: JSON) -> LowerTail:
        return cls(
            kind=raw["kind"],
            limit=float(raw["limit"]),
            f_opt=raw.get("f_opt"),
            v_top=float(raw["v_top"]),
            beta=raw.get("beta"),
            beta_se=raw.get("beta_se"),
            beta_source=raw.get("beta_source"),
            k=raw.get("k"),
            anchor_count=raw.get("anchor_count"),
            atom=float(raw.get("atom", 0.0)),
            obtained=raw.get("obtained", ""),
        )


@dataclass(frozen=True)
class UpperTail:
    """The upper-tail model: ``v1(t)`` for ``t > y_N`` (kind flat or linear-to-f_max)."""

    kind: str
    y_n: float
    f_max: float | None

    @classmethod
    def parse(cls, raw: JSON) -> UpperTail:
        return cls(raw["kind"], float(raw["y_n"]), raw.get("f_max"))


def _v1(
    t: float,
    n: int,
    values: Sequence[float],
    counts: Sequence[int],
    lower: LowerTail,
    upper: UpperTail,
    atom: float,
) -> float:
    """``v1(t)`` of one table model (see the answer's ``formula``)."""
    f_opt = lower.f_opt
    if f_opt is not None and lower.kind != "paper":
        if t < f_opt or (t == f_opt and atom == 0.0):
            return 0.0
        if t == f_opt:
            return atom
    if t < lower.limit:
        if lower.kind == "power":
            assert lower.beta is not None
            assert f_opt is not None
            v = lower.v_top * ((t - f_opt) / (lower.limit - f_opt)) ** lower.beta
        elif lower.kind == "linear":
            assert f_opt is not None
            v = atom + (lower.v_top - atom) * (t - f_opt) / (lower.limit - f_opt)
        else:
            v = math.exp(t - values[0]) / (n + 1.0)
    elif t <= upper.y_n:
        j = min(max(bisect.bisect_right(values, t) - 1, 0), len(values) - 2)
        if len(values) == 1:
            c = float(counts[0])
        else:
            x0, x1 = values[j], values[j + 1]
            c = counts[j] + (counts[j + 1] - counts[j]) * (t - x0) / (x1 - x0)
        v = c / (n + 1.0)
    elif upper.kind == "linear-to-f_max" and upper.f_max is not None and upper.f_max > upper.y_n:
        v = (n + min((t - upper.y_n) / (upper.f_max - upper.y_n), 1.0)) / (n + 1.0)
    elif upper.kind == "linear-to-f_max":
        v = 1.0
    else:
        v = n / (n + 1.0)
    out: float = max(v, atom) if atom > 0 else v
    return out


@dataclass(frozen=True)
class TableCurve(_Tabular):
    """A ready table's published curve (``GET /v1/tables/{id}/curve.json``).

    ``rows()`` gives one row per knot (``value``, ``count``).
    """

    table_id: str
    function_id: str
    n: int
    n_knots: int
    max_interp_error: float
    data_sha256: str
    f_opt: float | None
    f_max: float | None
    atom: float
    lower_tail: LowerTail
    upper_tail: UpperTail
    values: tuple[float, ...]
    counts: tuple[int, ...]
    formula: str
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> TableCurve:
        return cls(
            table_id=raw["table_id"],
            function_id=raw.get("function_id", ""),
            n=int(raw["n"]),
            n_knots=int(raw["n_knots"]),
            max_interp_error=float(raw["max_interp_error"]),
            data_sha256=raw["data_sha256"],
            f_opt=raw.get("f_opt"),
            f_max=raw.get("f_max"),
            atom=float(raw.get("atom", 0.0)),
            lower_tail=LowerTail.parse(raw["lower_tail"]),
            upper_tail=UpperTail.parse(raw["upper_tail"]),
            values=tuple(float(v) for v in raw["knots"]["value"]),
            counts=tuple(int(c) for c in raw["knots"]["count"]),
            formula=raw.get("formula", ""),
            raw=raw,
        )

    def v1(self, t: float) -> float:
        """``v1(t)`` recomputed from the published fields (the point estimate)."""
        return _v1(
            float(t),
            self.n,
            self.values,
            self.counts,
            self.lower_tail,
            self.upper_tail,
            self.atom,
        )

    def rows(self) -> list[Row]:
        return [{"value": v, "count": c} for v, c in zip(self.values, self.counts, strict=True)]


@dataclass(frozen=True)
class Quantile:
    """``t = q(v) = inf{t : v1(t) >= v}`` (``None`` where v1 never reaches v)."""

    v: float
    t: float | None
    error: float | None
    method: str


@dataclass(frozen=True)
class QuantileList(_Tabular):
    """Quantiles of a table's curve (``GET /v1/tables/{id}/quantiles``)."""

    table_id: str
    items: tuple[Quantile, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> QuantileList:
        items = tuple(
            Quantile(float(i["v"]), i.get("t"), i.get("error"), i.get("method", ""))
            for i in raw.get("items", ())
        )
        return cls(raw.get("table_id", ""), items, raw)

    def rows(self) -> list[Row]:
        return [{"v": q.v, "t": q.t, "error": q.error, "method": q.method} for q in self.items]


@dataclass(frozen=True)
class LadderPiece:
    """One serving level: ``v1(t) = exp(ln_volume_fraction)·v1_level(t)`` on its range."""

    level: int
    table_id: str
    t_from: float | None
    t_below: float | None
    ln_volume_fraction: float
    n: int
    lower_tail: LowerTail
    upper_tail: UpperTail
    atom: float
    values: tuple[float, ...]
    counts: tuple[int, ...]

    def serves(self, t: float) -> bool:
        """Whether ``t_from <= t < t_below``."""
        return (self.t_from is None or t >= self.t_from) and (
            self.t_below is None or t < self.t_below
        )


@dataclass(frozen=True)
class LadderCurve(_Tabular):
    """A ladder's combined curve (``GET /v1/ladders/{function_id}/curve.json``)."""

    function_id: str
    f_opt: float
    etag: str
    pieces: tuple[LadderPiece, ...]
    level_ids: tuple[str, ...]
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON) -> LadderCurve:
        pieces = tuple(
            LadderPiece(
                level=int(p["level"]),
                table_id=p["table_id"],
                t_from=p.get("t_from"),
                t_below=p.get("t_below"),
                ln_volume_fraction=float(p["ln_volume_fraction"]),
                n=int(p["n"]),
                lower_tail=LowerTail.parse(p["lower_tail"]),
                upper_tail=UpperTail.parse(p["upper_tail"]),
                atom=float(p.get("atom", 0.0)),
                values=tuple(float(v) for v in p["knots"]["value"]),
                counts=tuple(int(c) for c in p["knots"]["count"]),
            )
            for p in raw.get("pieces", ())
        )
        ids = tuple(lv["table_id"] for lv in raw.get("levels", ()))
        return cls(raw["function_id"], float(raw["f_opt"]), raw.get("etag", ""), pieces, ids, raw)

    def v1(self, t: float) -> float:
        """``v1(t)`` of the combined curve, from the serving piece."""
        for p in self.pieces:
            if p.serves(float(t)):
                v = _v1(float(t), p.n, p.values, p.counts, p.lower_tail, p.upper_tail, p.atom)
                return v * math.exp(p.ln_volume_fraction)
        raise ValueError(f"no piece serves t = {t!r}")

    def rows(self) -> list[Row]:
        return [
            {
                "level": p.level,
                "table_id": p.table_id,
                "t_from": p.t_from,
                "t_below": p.t_below,
                "ln_volume_fraction": p.ln_volume_fraction,
                "lower_tail": p.lower_tail.kind,
                "knots": len(p.values),
            }
            for p in self.pieces
        ]
