"""A ready ladder's tables as domain levels, and their nested curve (no database).

:func:`app.services.ladders.request_ladder` queues the tables ``R_0 = Ω ⊃ R_1 ⊃ … ⊃ R_L``;
once they are loaded (:func:`app.services.ladders.ladder_curve`,
:func:`app.services.ladders.ready_ladder`), :func:`ladder_levels` turns them into
:class:`app.domain.nested.NestedLevel` (each ranked in its own region's context,
:func:`app.services.regions.rank_context`) and :func:`nested_curve_for` combines them with
:func:`app.domain.nested.nested_curve` into one ``v1`` curve on the domain, ready for
:func:`app.domain.absrank.ranks_from_curve`. The maths is :mod:`app.domain.nested`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from app.domain import absrank, nested
from app.domain.curves import V1Curve
from app.domain.functions import BenchmarkFunction
from app.domain.tablebuild import oriented_geometry, region_intersected
from app.errors import InvalidInput
from app.services._table_requests import TableView
from app.services.errors import domain_errors_as_problems
from app.services.regions import rank_context

__all__ = [
    "Ladder",
    "LevelRegion",
    "ladder_levels",
    "nested_curve_for",
    "region_ln_volume_fraction",
]

Ladder = Sequence[tuple[TableView, absrank.TableData]]
"""A loaded ladder: ``(view, data)`` per level, level 0 (the domain) first."""


@dataclass(frozen=True, eq=False)
class LevelRegion:
    """A ladder level's stored spec region, parsed (the stored JSON, and its hash, unchanged).

    Attributes
    ----------
    kind : {"domain", "box", "oriented"}
        The whole domain, an axis-aligned box, or an oriented box.
    lower, upper : ndarray, shape (d,)
        The box (an oriented box's axis-aligned bounding box, clipped to the domain when
        intersected).
    delta : float, list of float, or None
        The stored ``delta`` of a box (``None`` for the domain and oriented boxes).
    sigma : float or None
        The ladder scale ``σ_j`` (``region.ladder.sigma``; ``None`` outside a ladder).
    axes : ndarray, shape (d, d), or None
        ``Q`` with the box's axes as columns (the stored rows transposed), oriented boxes only.
    half_widths : ndarray, shape (d,), or None
        ``h`` along the axes, oriented boxes only.
    stored_half_widths : list of float or None
        ``h`` as stored (echoed as the level's ``delta``), oriented boxes only.
    intersected : bool
        ``True`` for ``B ∩ Ω`` (``"intersect": "domain"``): the table kept the points of the
        oriented box ``B`` inside the domain.
    """

    kind: Literal["domain", "box", "oriented"]
    lower: np.ndarray
    upper: np.ndarray
    delta: float | list[float] | None = None
    sigma: float | None = None
    axes: np.ndarray | None = None
    half_widths: np.ndarray | None = None
    stored_half_widths: list[float] | None = None
    intersected: bool = False

    @classmethod
    def from_spec(cls, region: Mapping[str, Any]) -> LevelRegion:
        """Parse a stored spec region (``spec["region"]`` of a table)."""
        oriented = region["kind"] == "oriented"
        axes = half = None
        if oriented:
            _, axes, half = oriented_geometry(region)
        return cls(
            kind=region["kind"],
            lower=np.asarray(region["lower"], dtype=np.float64),
            upper=np.asarray(region["upper"], dtype=np.float64),
            delta=None if oriented else region.get("delta"),
            sigma=region.get("ladder", {}).get("sigma"),
            axes=axes,
            half_widths=half,
            stored_half_widths=region["half_widths"] if oriented else None,
            intersected=region_intersected(region),
        )


def ladder_levels(fn: BenchmarkFunction, ladder: Ladder) -> list[nested.NestedLevel]:
    """The domain-level description of a ready ladder: one :class:`NestedLevel` per table.

    Parameters
    ----------
    fn : BenchmarkFunction
        The function every table samples.
    ladder : sequence of (TableView, TableData)
        Level 0 (the whole domain) first, e.g. from :func:`app.services.ladders.ready_ladder`.

    Returns
    -------
    list of NestedLevel
        Each with :func:`app.services.regions.rank_context` on the table's region (``f_max`` only
        for the domain), ``ln(Leb(R_j)/Leb(Ω))`` and ``delta`` (the box's half-widths, one per
        coordinate for a ladder level; for an oriented level, region kind ``"oriented"``, its
        half-widths along its axes, with ``axes`` and ``half_widths`` set and the context's
        region its bounding box; an intersected one, ``intersect="domain"``, also ``kept``:
        its table's ``n`` points of the spec's ``n`` inside the domain, whose share enters the
        volume fraction), labelled with the table's id, location, data hash and
        the ladder scale ``sigma`` (``None`` for a table that is not a ladder level).

    Raises
    ------
    app.errors.InvalidInput
        A table of another function, or not ready (``field="function_id"``).
    """
    levels = []
    for view, data in ladder:
        if view.function_id != fn.id or not view.ready:
            raise InvalidInput(
                f"table {view.id} ({view.function_id}, {view.status}) is not a ready table of "
                f"{fn.id}",
                field="function_id",
            )
        region = LevelRegion.from_spec(view.spec["region"])
        with domain_errors_as_problems("function_id"):
            ln_fraction = region_ln_volume_fraction(fn, view.spec["region"])
        ctx = rank_context(fn, region.lower, region.upper, whole_domain=region.kind == "domain")
        kept = None
        if region.intersected:
            # B ∩ Ω: the table holds the points of B inside Ω; their share measures the volume
            kept = nested.KeptShare(int(view.spec["n"]), int(data.n), fn.lower, fn.upper)
            ln_fraction += math.log(kept.share)
        if region.kind == "oriented":
            # the region is the oriented box; lower/upper only its bounding box
            ctx = dataclasses.replace(ctx, domain_volume_fraction=math.exp(ln_fraction))
        levels.append(
            nested.NestedLevel(
                table=data,
                ctx=ctx,
                ln_volume_fraction=ln_fraction,
                delta=region.stored_half_widths if region.axes is not None else region.delta,
                axes=region.axes,
                half_widths=region.half_widths,
                kept=kept,
                label={
                    "table_id": view.id,
                    "location": view.location,
                    "data_sha256": view.data_sha256,
                    "sigma": region.sigma,
                },
            )
        )
    return levels


def nested_curve_for(
    fn: BenchmarkFunction,
    ladder: Ladder,
    *,
    tail: str = "auto",
    k_anchor: int = 100,
    confidence: float = 0.95,
) -> V1Curve:
    """``v1`` of ``fn`` on its domain from a ready ladder (:func:`app.domain.nested.nested_curve`).

    Parameters
    ----------
    fn : BenchmarkFunction
    ladder : sequence of (TableView, TableData)
        Level 0 (the domain) first.
    tail : {"auto", "power", "linear"}, optional
        Lower tail of the deepest serving level.
    k_anchor : int, optional
        Anchor rank of the power tails.
    confidence : float, optional
        Level of the intervals.

    Returns
    -------
    V1Curve
        ``info["method"] == "nested"``; every level's info carries its ``table_id``.

    Raises
    ------
    app.errors.InvalidInput
        Malformed ladder or options (``field`` names it).
    app.errors.NotApplicable
        ``tail="power"`` refused on the deepest level, an atom, a table contradicting ``f*``.
    """
    levels = ladder_levels(fn, ladder)
    with domain_errors_as_problems():
        return nested.nested_curve(levels, tail=tail, k_anchor=k_anchor, confidence=confidence)


def region_ln_volume_fraction(fn: BenchmarkFunction, region: Mapping[str, Any]) -> float:
    """``ln(Leb(region)/Leb(Ω))`` of a spec region: a box, the domain or an oriented box.

    For an intersected region (``B ∩ Ω``) this is the box ``B``'s (capped at 0); the share of
    ``B`` inside ``Ω`` is measured by its table (:func:`app.services.ladders.kept_provenance`).
    """
    if region.get("kind") == "domain":  # also a user table's, whose domain is not known
        return 0.0
    if region.get("kind") == "oriented":
        _, axes, half = oriented_geometry(region)
        ln_det = float(np.linalg.slogdet(axes)[1])
        ln = float(np.sum(np.log(2.0 * half)) + ln_det - np.sum(np.log(fn.upper - fn.lower)))
        return min(ln, 0.0)
    return nested.ln_volume_fraction(
        fn.lower, fn.upper, np.asarray(region["lower"]), np.asarray(region["upper"])
    )
