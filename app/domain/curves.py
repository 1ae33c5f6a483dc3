"""Curves ``v1(t)`` of one run: the common input of ranks and their aggregates over runs.

A table with its tail model (:func:`app.domain.absrank.table_curve`), an exact form
(:func:`app.domain.absrank.analytic_curve`) or a ladder of nested regions
(:mod:`app.domain.nested`) each reduce to a :class:`V1Curve`; best-of-``c``, order statistics,
means and medians over ``r`` runs (:mod:`app.domain.aggregates`) only ever see the curve.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["PowerLaw", "V1Curve"]


@dataclass(frozen=True)
class PowerLaw:
    """A lower tail ``v1(t) = exp(ln_c)·(t − f*)^β`` for ``f* < t < limit`` (point estimate).

    Attributes
    ----------
    f_opt : float
        ``f*`` (units of ``f``).
    ln_c : float
        ``ln C`` (``C`` in units of ``f^−β``).
    beta : float
        The exponent ``β > 0``.
    limit : float
        The law is used for ``t < limit`` (the anchor ``y_k``, or where an analytic form stops
        being a pure power).
    """

    f_opt: float
    ln_c: float
    beta: float
    limit: float


@dataclass(frozen=True, eq=False)
class V1Curve:
    """``v1(t)`` of one run as a function of ``t``: the input of every aggregate.

    A table with its tail model (:func:`table_curve`), an exact form (:func:`analytic_curve`) or a
    ladder of nested regions (:mod:`app.domain.nested`) all reduce to this.

    Attributes
    ----------
    evaluate : callable
        ``t (n,) -> (ln_v, ln_lo, ln_hi, method)``: natural logs of ``v1`` and of its interval
        ends (``-inf`` where 0), and the method per value (one of :data:`METHODS`).
    info : dict
        JSON-ready description of the models used (``RankResult.tail``).
    warnings : list of str
        Fallbacks taken while building the curve.
    f_opt : float or None
        Lower end of the support of ``f(U)`` when known (``v1 = 0`` below it).
    power : PowerLaw or None
        The lower tail as a pure power law, where one is used (exact aggregates of the mean
        rely on it, SPEC §3.1).
    atom : float
        ``v1(f*)`` (plateau mass), 0.0 if none.
    """

    evaluate: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]
    info: dict[str, Any]
    warnings: list[str]
    f_opt: float | None
    power: PowerLaw | None = None
    atom: float = 0.0
