"""The ETA of table builds: remaining chunks at the pace observed so far (pure; no I/O).

:func:`build_eta` serves single tables, ladders and region scans
(:mod:`app.services.tables`, :mod:`app.services.region_scans`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

__all__ = ["BuildClock", "build_eta"]


@dataclass(frozen=True)
class BuildClock:
    """What an ETA needs of one table: status, chunk counts and when it was built (UTC).

    Attributes
    ----------
    status : str
        ``building`` | ``merging`` | ``ready`` | ``failed``.
    done, total : int
        Finished chunks and all chunks.
    created : datetime
        When the table was requested.
    first_started : datetime or None
        Earliest claim of any of its chunks (``None`` before the first claim).
    """

    status: str
    done: int
    total: int
    created: datetime
    first_started: datetime | None


def build_eta(clocks: Sequence[BuildClock], now: datetime) -> float | None:
    """Seconds until every chunk of the tables still building is done, at the observed rate.

    The rate is chunks finished per wall-clock second since the first of them started, pooled
    over the tables still building and the tables of the same build that are ready (a
    ladder's or a region scan's tables whose first chunk started after the earliest request
    of a table still building; tables built before, e.g. cached levels, are not its pace):
    ``rate = done / (now - t0)`` with ``t0`` their earliest first-chunk start, and
    ``eta = remaining / rate``. Wall time counts every worker, queue waits between chunks and
    stalls as they happen (a stalled build's ETA grows); the wait before the first claim is
    not a pace of this build.

    Returns
    -------
    float or None
        ``None`` when nothing is building or before the first chunk finishes; ``0.0`` when
        every chunk is done (merging).
    """
    building = [c for c in clocks if c.status in ("building", "merging")]
    if not building:
        return None
    since = min(c.created for c in building)
    pooled = building + [
        c
        for c in clocks
        if c.status == "ready" and c.first_started is not None and c.first_started >= since
    ]
    starts = [c.first_started for c in pooled if c.first_started is not None]
    done = sum(c.done for c in pooled)
    if not starts or done == 0:
        return None
    remaining = sum(c.total - c.done for c in building)
    if remaining <= 0:
        return 0.0
    return remaining * max((now - min(starts)).total_seconds(), 0.0) / done
