"""Constants and names the region-scan modules share (:mod:`app.services.region_scans`)."""

from __future__ import annotations

from sqlalchemy.orm import Session, sessionmaker

from app.domain import delta_regions as regionscan

SM = sessionmaker[Session]

#: ``N = 2^15`` cheap tables and a ``2^20`` follow-up, as in Jing & Liu §V.
DEFAULT_LOG2N = 15
DEFAULT_FOLLOW_UP_LOG2N = 20
#: How ranks are computed on each box; part of a scan's identity (bump ``version`` whenever the
#: computation of the answer changes). A request's ``tail`` other than the default replaces
#: ``tail`` in its copy (:func:`_method`), so default scans keep their hash and id.
METHOD = {
    "version": 1,
    "tail": "auto",
    "tail_k": 100,
    "distinct": "ranks are distinct when their log10 v differ (exact floating-point comparison)",
}
TIE_RULE = (
    "the δ with the largest e (compared as log10 e) is chosen; of equal e, the larger δ (its box "
    "clips fewer sublevel sets and leaves fewer values above its largest sample)"
)
SEPARATING_RULE = (
    "the same rule among the δ whose ranks keep every distinct metric value apart (as many "
    "distinct ranks as distinct values)"
)
SCALE_NOTE = (
    "ranks from different regions are different scales: on each δ, v is the probability that a "
    "uniform point of THAT box [x* - δ, x* + δ] ∩ domain does at least as well, not a point of "
    "the domain; compare e across δ, never the ranks themselves"
)
PAPER_TAIL_NOTE = (
    "tail='paper': Eq. 28 exactly as published (Jing & Liu, Table V): v = exp(t - y_1)/(N+1) "
    "below each box's lowest sample y_1 and 1 - exp(-ln(N+1) t/y_N) above its largest y_N; "
    "these tails are not scale-invariant (multiply f by 1000 and they change) and are positive "
    "below f*, where the true v is 0"
)
DEFAULT_GRID_NOTE = (
    f"default δ grid: geometric from {regionscan.DEFAULT_GRID_LOW:g} to "
    f"{regionscan.DEFAULT_GRID_HIGH:g} x the domain's largest half-width "
    f"({regionscan.DEFAULT_GRID_COUNT} values, fewer when max_region_scan_deltas is smaller)"
)


def scan_id_for(request_sha256: str) -> str:
    """Stable id of a scan: ``r`` + the first 23 hex digits of its request hash."""
    return "r" + request_sha256[:23]


def location(scan_id: str) -> str:
    """URL path of a scan."""
    return f"/v1/region-scans/{scan_id}"
