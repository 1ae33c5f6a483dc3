"""The ranking of ``POST /v1/absolute-ranks`` at the numpy limit: a floor, not an implementation.

The least numpy work that gives absrank's numbers for values on a stored table, from ``y_1``
(the linear tail below it, no atom) to ``y_N``: the values sorted, one ``searchsorted`` and one
``interp`` over the stored knots, ``log``, the Clopper–Pearson ends of the bracketed count
read per knot (arrays of the table's size, computed once per table with absrank's own
``Eq28``: whether the count at a knot is exact, and the three limits of each knot), the
linear tail below ``y_1``, ``exp`` and the three ``log10`` columns, put back in the order sent,
and the method name per value. No checks, no provenance, no warnings, no quota, no object per
value, nothing above ``y_N``, no other tail.

Used by ``bench/bare_app.py`` (``--floor``: the peer that ranks at this limit, over HTTP) and
``bench/ranks_asgi.py`` (its ``bare+floor`` side): what absrank would cost if the ranking were
all it did, measured beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.domain import absrank
from app.domain.absrank._eq28 import Eq28

LN10 = math.log(10.0)


@dataclass(frozen=True)
class Floor:
    """One table's arrays for :meth:`rank` (built once per table, as a cache would keep)."""

    knots: np.ndarray
    counts: np.ndarray
    static_exact: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    upper_next: np.ndarray
    f_opt: float
    y_1: float
    ln_n1: float
    ln_top: float
    ln_span: float
    upper_zero: float

    @classmethod
    def of(cls, data: absrank.TableData, f_opt: float, confidence: float = 0.95) -> Floor:
        eq = Eq28(data, 1.0 - confidence, f_opt)
        every = np.arange(data.values.size)
        nxt = np.minimum(every + 1, every.size - 1)
        return cls(
            knots=data.values,
            counts=eq.counts,
            static_exact=eq.static_exact,
            lower=eq.cp.lower(every),
            upper=eq.cp.upper(every),
            upper_next=eq.cp.upper_below(every)[nxt],
            f_opt=f_opt,
            y_1=eq.y_min,
            ln_n1=eq.ln_n1,
            ln_top=math.log(float(data.counts[0]) / (data.n + 1.0)),
            ln_span=math.log(eq.y_min - f_opt),
            upper_zero=eq.ln_cp_upper_zero(),
        )

    def rank(self, t: np.ndarray) -> absrank.RankResult:
        """The ranks of ``t`` (float64, finite, in ``(f*, y_N]``) in absrank's result type."""
        order = np.argsort(t)
        x = t[order]
        a = int(x.searchsorted(self.y_1))
        j = self.knots.searchsorted(x, side="right") - 1
        np.maximum(j, 0, out=j)
        ln_v = np.log(np.interp(x, self.knots, self.counts)) - self.ln_n1
        exact = (self.knots[j] == x) | self.static_exact[j]
        lo = np.minimum(self.lower[j], ln_v)
        hi = np.maximum(np.where(exact, self.upper[j], self.upper_next[j]), ln_v)
        if a:
            ln_v[:a] = self.ln_top + (np.log(x[:a] - self.f_opt) - self.ln_span)
            lo[:a] = -np.inf
            hi[:a] = np.maximum(self.upper_zero, ln_v[:a])
        cols = np.empty((4, x.size))
        cols[:, order] = (ln_v / LN10, np.exp(ln_v), lo / LN10, hi / LN10)
        method = np.full(x.size, "interpolated", dtype=object)
        if a:
            method[order[:a]] = "tail-linear"
        return absrank.RankResult(
            log10_v=cols[0],
            v=cols[1],
            method=method,
            log10_lo=cols[2],
            log10_hi=cols[3],
            tail=None,  # type: ignore[arg-type]
        )
