"""The warnings of an absolute-rank answer (:class:`RankWarning`), built from codes and data."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from app.domain import absrank, aggregates, notices
from app.domain.functions import BenchmarkFunction
from app.schemas.ranks import RankRequest
from app.services.ranks._sources import Source, deep_values, ladder_applies, value_offset


def _below_minimum_text(count: int, f_opt: float, first: str) -> str:
    """The text of the ``"below-minimum"`` warning, naming the first value ``first``."""
    return (
        f"{count} value(s) lie below f* = {f_opt!r} (first: {first}); "
        "no point of the domain reaches them"
    )


def _int(data: Mapping[str, notices.JSONValue], key: str) -> int:
    x = data[key]
    assert isinstance(x, int)
    return x


def _float(data: Mapping[str, notices.JSONValue], key: str) -> float:
    x = data[key]
    assert isinstance(x, int | float)
    return float(x)


#: Warnings that point at one value (``data["index"]``), by code: their text naming it ``where``.
_LOCATED: dict[str, Callable[[Mapping[str, notices.JSONValue], str], str]] = {
    "numerical-error": lambda d, where: aggregates.numerical_error_warning(
        _int(d, "count"), _float(d, "threshold_log10"), where
    ),
    "below-minimum": lambda d, where: _below_minimum_text(
        _int(d, "count"), _float(d, "f_opt"), where
    ),
}


@dataclass(frozen=True)
class RankWarning:
    """One warning of an absolute-rank answer.

    Attributes
    ----------
    message : str
        What it says for this request (the text ``POST /v1/absolute-ranks`` answers).
    general : str or None
        The same warning without this request's function and numbers: answers that rank many
        functions (comparisons) give it once, with a count, in this wording. ``None``: the
        message is its own identity.
    code : str
        Stable identity (the domain warning's code, e.g. ``"numerical-error"``,
        ``"below-minimum"``, ``"ladder-hint"``; ``"rank"`` for the service's other remarks).
    data : Mapping of str to JSONValue
        The numbers it was made from; ``index`` is the position in ``values`` of the value it
        points at (see :meth:`located`).
    """

    message: str
    general: str | None = None
    code: str = "rank"
    data: Mapping[str, notices.JSONValue] = field(default_factory=dict)

    @classmethod
    def of(cls, w: notices.Warning) -> RankWarning:
        """A domain warning as it is answered."""
        return cls(w.message, code=w.code, data=w.data)

    @property
    def index(self) -> int | None:
        """The position in ``values`` of the value the warning points at, if any."""
        x = self.data.get("index")
        return x if isinstance(x, int) and self.code in _LOCATED else None

    def located(self, name: Callable[[int], str]) -> str:
        """The message, with the value it points at (``values[i]``) called ``name(i)``
        (e.g. ``lambda i: f"algorithm {names[i]!r}"``); the message itself otherwise."""
        i = self.index
        if i is None:
            return self.message
        return _LOCATED[self.code](self.data, name(i))


GAP_RESOLUTION = 1e-6


def resolution_warnings(
    req: RankRequest, fn: BenchmarkFunction, sent: list[float] | np.ndarray
) -> list[RankWarning]:
    """Say so when values of ``f`` carry their gap ``t − f*`` with fewer than 6 digits.

    A value ``t`` sent as ``f`` holds the gap ``t − f*`` only to half an ulp of ``t`` (about
    ``ulp(f*)/2`` near ``f*``): above :data:`GAP_RESOLUTION` relative, the rank of ``t`` is that of
    the rounded gap, and ``t == f*`` for a gap below ``ulp(f*)/2``. Errors
    (``values_are='error'``) are ranked as the gaps themselves and keep their digits
    (docs/METHODS.md, "Values and errors"), so they are not flagged.
    """
    if req.values_are == "error" or fn.f_opt is None:
        return []
    t = np.asarray(sent, dtype=np.float64)
    gap = t - fn.f_opt
    with np.errstate(invalid="ignore"):
        lossy = 0.5 * np.spacing(np.abs(t)) > GAP_RESOLUTION * gap
        lossy &= gap > 0
        lossy &= np.isfinite(t)
    if not np.count_nonzero(lossy):
        return []
    ulp = float(np.spacing(abs(fn.f_opt)))
    first = float(t[lossy][0])
    return [
        RankWarning(
            f"{int(lossy.sum())} value(s) (first: {first!r}) lie so close to "
            f"f* = {fn.f_opt!r} (float64 resolution {ulp:.3g} there) that their gap t - f* has "
            "fewer than 6 significant digits: they are ranked at that rounded gap; send the "
            "errors t - f* themselves with values_are='error' to keep their digits",
            code="gap-resolution",
            data={"count": int(lossy.sum()), "first": first, "f_opt": fn.f_opt, "ulp": ulp},
        )
    ]


def below_minimum_warnings(
    req: RankRequest, fn: BenchmarkFunction, t: np.ndarray
) -> list[RankWarning]:
    """Say so when values lie below the known minimum (likely a sign error or a wrong f*)."""
    if fn.f_opt is None:
        return []
    # errors: the sign of the error itself (f* + e < f* misses errors above -ulp(f*)/2)
    sent = np.asarray(req.values, dtype=np.float64) if req.values_are == "error" else None
    below = np.flatnonzero(sent < 0.0 if sent is not None else t < fn.f_opt)
    if below.size == 0:
        return []
    first = int(below[0])
    out = [
        RankWarning(
            _below_minimum_text(int(below.size), float(fn.f_opt), f"values[{first}]"),
            code="below-minimum",
            data={"count": int(below.size), "index": first, "f_opt": float(fn.f_opt)},
        )
    ]
    if req.tail == "paper":
        out.append(
            RankWarning(
                "tail='paper' reproduces exp(t - y_1)/(N+1) as published: it is positive below "
                "f*, where the true v is 0",
                code="paper-tail-below-minimum",
            )
        )
    return out


def anchor_warnings(req: RankRequest, tail: absrank.RankTail) -> list[RankWarning]:
    """Say so when the power tail's anchor is not the ``tail_k`` asked for."""
    k = tail.anchor_k
    if k is None or k == req.tail_k:
        return []
    cap = tail.requested_k
    if cap is not None and cap < req.tail_k:
        why = f"the table keeps {cap} exact lowest samples, so k is capped at {cap}"
        if k != cap:
            why += f", then lowered to {k} (see the other warning)"
    else:
        why = "the anchor was lowered (see the other warning)"
    return [
        RankWarning(
            f"tail_k = {req.tail_k} was requested; the power tail is anchored at k = {k}: {why}",
            code="anchor-differs",
            data={"tail_k": req.tail_k, "k": k, "requested_k": cap},
        )
    ]


LADDER_HINT = (
    "values lie below the lowest sample of the function's domain table, where a tail model "
    "extrapolates; its nested-region ladder ranks them without extrapolation: send "
    "regions='nested' (queues the ladders)"
)
"""The general wording of the warning that a ladder would rank values without a tail model
(leaderboards, which say so per entry with ``awaiting``, leave it out)."""


PROVISIONAL = (
    "values lie below the lowest sample of the function's domain table, where a tail model "
    "extrapolates: their ranks are provisional (the tail model's, with no lower end) until the "
    "function's nested-region ladder is ready (awaiting); send the same request again then"
)
"""The general wording of the warning on provisional ranks (``regions='auto'``)."""
PROVISIONAL_NEEDS_KEY = (
    "values lie below the lowest sample of the function's domain table, where a tail model "
    "extrapolates: their ranks are provisional (the tail model's, with no lower end); the "
    "function's nested-region ladder would rank them, and only a holder of an API key may "
    'queue it (POST /v1/tables with "ladder": true and an X-API-Key header)'
)
"""Its wording when the caller may not queue the ladder and it is not built."""


def _provisional_warning(
    fn: BenchmarkFunction, source: Source, req: RankRequest
) -> list[RankWarning]:
    """Say which values are provisional, what they wait for and who may queue it."""
    assert source.awaiting is not None
    assert source.data is not None
    assert source.provisional_below is not None
    deep = deep_values(fn, req, source.provisional_below).size
    awaited = source.awaiting
    head = (
        f"{deep} value(s) lie below the lowest of the domain table's {source.data.n} samples "
        f"(y_1 = {source.provisional_below!r}), where a tail model extrapolates: their ranks "
        "are provisional (the tail model's, with no lower end)"
    )
    if awaited.status == "not-built":
        return [
            RankWarning(
                f"{head}; {awaited.detail}", general=PROVISIONAL_NEEDS_KEY, code="provisional"
            )
        ]
    return [
        RankWarning(
            f"{head} until the nested-region ladder of {fn.id} is ready ({awaited.status}: "
            f"follow {awaited.location}); send the same request again then",
            general=PROVISIONAL,
            code="provisional",
        )
    ]


def ladder_hint(fn: BenchmarkFunction, source: Source, req: RankRequest) -> list[RankWarning]:
    """Say so when values below the domain table's samples used a tail model."""
    if source.data is None or not source.whole_domain or req.function_id is None:
        return []
    if not ladder_applies(fn):
        return []
    if source.awaiting is not None:
        return _provisional_warning(fn, source, req)
    sent = (
        req.values
        if req.values is not None
        else [v for runs in (req.runs_by_algorithm or {}).values() for v in runs]
    )
    lowest = float(source.data.values[0])
    below = sum(1 for v in sent if v + value_offset(fn, req) < lowest)
    if below == 0:
        return []
    return [
        RankWarning(
            f"{below} value(s) lie below the lowest of the table's {source.data.n} samples "
            f"(y_1 = {lowest!r}), where a tail model extrapolates; the function's nested-region "
            "ladder ranks them without extrapolation: send regions='nested' (queues "
            f'it) or POST /v1/tables {{"function_id": "{fn.id}", "ladder": true}}',
            general=LADDER_HINT,
            code="ladder-hint",
        )
    ]


def listed(names: list[str], at_most: int = 10) -> str:
    """``"A, B, C"``, the first ``at_most`` names then ``...``."""
    return ", ".join(names[:at_most]) + (", ..." if len(names) > at_most else "")


def runs_below_minimum_warnings(
    fn: BenchmarkFunction,
    runs_by_algorithm: dict[str, list[float]],
    offset: float,
    *,
    errors: bool = False,
) -> list[RankWarning]:
    """Runs below the known minimum (likely a sign error or a wrong f*): one warning that
    counts the runs and names the algorithms."""
    if fn.f_opt is None:
        return []
    below = {
        # errors (offset f*): the sign of the error itself, not f* + e < f*
        name: [i for i, x in enumerate(runs) if (x < 0.0 if errors else x + offset < fn.f_opt)]
        for name, runs in runs_by_algorithm.items()
    }
    names = [name for name, idx in below.items() if idx]
    if not names:
        return []
    first = names[0]
    where = (
        f"runs_by_algorithm.{first}"
        if len(names) == 1
        else f"{len(names)} algorithms ({listed(names)})"
    )
    count = sum(len(idx) for idx in below.values())
    return [
        RankWarning(
            f"{count} run(s) of {where} lie below f* = "
            f"{fn.f_opt!r} (first: runs_by_algorithm.{first}.{below[first][0]}); no point of the "
            "domain reaches them",
            code="runs-below-minimum",
            data={"count": count, "algorithms": tuple(names), "f_opt": fn.f_opt},
        )
    ]


class WarnedRanks(NamedTuple):
    """A rank answer with its warnings (:func:`app.services.ranks.rank_values_warned`).

    Attributes
    ----------
    body : dict
        The body of :class:`app.schemas.ranks.RankResponse`
        (:func:`app.services.ranks.rank_values`).
    warnings : list of RankWarning
        Its warnings, coded (``body["warnings"]`` holds their messages).
    """

    body: dict[str, Any]
    warnings: list[RankWarning]
