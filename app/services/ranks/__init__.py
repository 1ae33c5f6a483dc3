"""Use case of ``POST /v1/absolute-ranks``: resolve the table (or analytic form), rank, explain.

Layout: :mod:`._sources` (which table, sample, ladder or exact form), :mod:`._values` (the
``values`` path and the answer's items), :mod:`._runs` (``runs_by_algorithm``),
:mod:`._warnings` (:class:`RankWarning`, built from codes and data).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.domain.validation import float64_array
from app.schemas.ranks import RankRequest
from app.services.provenance import float64_sha256, provenance
from app.services.ranks._columns import RankAnswer, RankColumns
from app.services.ranks._runs import AGGREGATE_VALUE, rank_runs
from app.services.ranks._sources import RankEnv, ladder_applies, reads_database, resolve
from app.services.ranks._values import check_limits, numerical, rank_value_list
from app.services.ranks._warnings import (
    GAP_RESOLUTION,
    LADDER_HINT,
    PROVISIONAL,
    PROVISIONAL_NEEDS_KEY,
    RankWarning,
    WarnedRanks,
    ladder_hint,
)
from app.services.regions import rank_context

__all__ = [
    "AGGREGATE_VALUE",
    "GAP_RESOLUTION",
    "LADDER_HINT",
    "PROVISIONAL",
    "PROVISIONAL_NEEDS_KEY",
    "RankAnswer",
    "RankColumns",
    "RankEnv",
    "RankWarning",
    "WarnedRanks",
    "check_limits",
    "ladder_applies",
    "numerical",
    "rank_answer",
    "rank_values",
    "rank_values_warned",
    "reads_database",
]


def rank_values(env: RankEnv, req: RankRequest) -> dict[str, Any]:
    """Turn metric values into absolute ranks ``v`` (Jing & Liu, SPEC §3).

    With ``req.values`` every value is ranked as an aggregate of ``req.runs`` runs. With
    ``req.runs_by_algorithm`` each algorithm's runs are aggregated here (``best``/``worst``/
    ``lower-median``: a run; ``median``: the middle run, or the mean of the two middle runs;
    ``mean``: correctly rounded ``fsum``/r), the aggregate is ranked with ``runs`` = that
    algorithm's ``r`` (an order statistic exactly, the mean and an even median by
    :func:`app.domain.aggregates.aggregate_ranks`), and every run is ranked alone (runs = 1).

    Parameters
    ----------
    env : RankEnv
        Database, configuration, task queue, the application's caches and whether a missing
        default table or ladder may be queued.
    req : RankRequest
        The validated request.

    Returns
    -------
    dict
        The body of :class:`app.schemas.ranks.RankResponse`.

    Raises
    ------
    app.errors.NotFound
        Unknown function or table id.
    app.errors.TableNotReady
        The table is still being built or failed (409 with its ``Location`` and progress).
    app.errors.TableNotBuilt
        The default table does not exist and the caller may not queue it (409).
    app.errors.InvalidInput
        Too many values (``max_rank_values`` in all; ``max_numerical_aggregates`` distinct
        values for a mean or an even median), too many algorithms (``max_algorithms``), errors
        for a function without f*.
    app.errors.NotApplicable
        The requested tail or aggregate does not apply (e.g. a power tail on a clipped
        sublevel set, a mean or an even median without a known f*).
    """
    return rank_values_warned(env, req).body


def rank_values_warned(env: RankEnv, req: RankRequest) -> WarnedRanks:
    """:func:`rank_values`, with its warnings as :class:`RankWarning` (``body["warnings"]``
    holds their messages)."""
    answer, warnings = _rank(env, req)
    return WarnedRanks(answer.plain(), warnings)


def rank_answer(env: RankEnv, req: RankRequest) -> RankAnswer:
    """:func:`rank_values` with the per-value items as columns (what the endpoint sends:
    :meth:`RankAnswer.json` is ``to_json(rank_values(...))`` without a dict per value)."""
    return _rank(env, req)[0]


def _rank(env: RankEnv, req: RankRequest) -> tuple[RankAnswer, list[RankWarning]]:
    check_limits(req, env.settings)
    fn, source = resolve(env, req)
    ctx = rank_context(fn, source.lower, source.upper, whole_domain=source.whole_domain)
    # the values as float64, converted once: ranked, and hashed into the provenance
    sent = None if req.values is None else float64_array(req.values)
    if req.runs_by_algorithm is not None:
        body, warnings = rank_runs(fn, source, ctx, req, req.runs_by_algorithm, control=env.control)
    else:
        body, warnings = rank_value_list(fn, source, ctx, req, env.cache, sent, control=env.control)
    warnings += ladder_hint(fn, source, req)
    if req.regions == "nested" and source.kind == "analytic":
        warnings.append(
            RankWarning(
                f"regions='nested': {fn.id} has an exact v1 ({fn.analytic}), used instead of a "
                "ladder (use_analytic=false uses the ladder)",
                general="regions='nested': these functions have an exact v1, used instead of a "
                "ladder (use_analytic=false uses the ladder)",
                code="nested-analytic",
            )
        )
    body["warnings"] = [w.message for w in warnings]
    if source.awaiting is not None:
        body["awaiting"] = source.awaiting.model_dump(mode="json")
    body["provenance"] = provenance(
        _request_payload(req, sent),
        table=source.description.get("table_id"),
        data_sha256=source.description.get("data_sha256"),
    )
    return RankAnswer(body), warnings


FLOAT_LISTS = ("values", "sample")
"""The request's lists of floats, hashed by their bytes (:func:`_request_payload`)."""


def _request_payload(req: RankRequest, values: np.ndarray | None = None) -> dict[str, Any]:
    """The normalized request, as hashed into ``provenance.request_sha256`` (canonical JSON).

    Absent values/runs_by_algorithm/sample/f_opt/f_max are left out. Every list of floats
    (``values``, ``sample``, each algorithm's runs) is replaced by ``{"float64_sha256": ...}``,
    the SHA-256 of its numbers as little-endian binary64 (:func:`float64_sha256`): the same
    function of the request as the list's JSON text, without writing 10^5 floats as text.
    ``values``: ``req.values`` already as float64 (hashed as they are, not converted again).
    """
    optional = ("values", "runs_by_algorithm", "sample", "f_opt", "f_max")
    absent = {k for k in optional if getattr(req, k) is None}
    out = req.model_dump(mode="json", exclude=absent | {*FLOAT_LISTS, "runs_by_algorithm"})
    for name in FLOAT_LISTS:
        sent = getattr(req, name)
        if sent is not None:
            out[name] = _digest(values if name == "values" and values is not None else sent)
    if req.runs_by_algorithm is not None:
        out["runs_by_algorithm"] = {k: _digest(v) for k, v in req.runs_by_algorithm.items()}
    return out


def _digest(values: list[float] | np.ndarray) -> dict[str, str]:
    return {"float64_sha256": float64_sha256(values)}
