"""Use case of ``POST /v1/rank-spread``: Jing & Liu's Eq. 29 on ranks the user sends."""

from __future__ import annotations

import math

import numpy as np

from app.config import Settings
from app.domain import delta_regions
from app.errors import InvalidInput
from app.schemas.spread import RankSpreadRead, RankSpreadRequest
from app.services.errors import domain_errors_as_problems

DEFINITION = (
    "e = (prod_{i=2..k} (v_i - v_{i-1}))^(1/(k-1)) over the k ordered distinct ranks "
    "v_1 < ... < v_k (Jing & Liu Eq. 29), computed in log space"
)


def rank_spread(settings: Settings, req: RankSpreadRequest) -> RankSpreadRead:
    """The spread ``e`` of the ranks sent (``delta_regions.geometric_mean_difference``).

    Raises
    ------
    app.errors.InvalidInput
        More than ``max_rank_values`` ranks (``field`` ``v`` or ``log10_v``).
    """
    field = "v" if req.v is not None else "log10_v"
    sent = req.v if req.v is not None else req.log10_v
    assert sent is not None
    if len(sent) > settings.max_rank_values:
        raise InvalidInput(f"at most {settings.max_rank_values} ranks per request", field=field)
    if req.v is not None:
        with np.errstate(divide="ignore"):
            log10_v = np.log10(np.asarray(req.v, dtype=np.float64))
    else:
        log10_v = np.array([-math.inf if x is None else x for x in sent], dtype=np.float64)
    with domain_errors_as_problems(field):
        s = delta_regions.geometric_mean_difference(log10_v)
    return RankSpreadRead(
        definition=DEFINITION,
        computable=s.computable,
        k=s.k,
        n=len(sent),
        log10_v=[None if math.isinf(x) else float(x) for x in s.log10_v.tolist()],
        log10_e=s.log10_e,
        e=s.e,
        reason=s.reason,
    )
