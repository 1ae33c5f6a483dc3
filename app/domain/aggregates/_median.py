"""The median of an even ``r``: the Stieltjes integral of two middle order statistics."""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from app.domain import absrank
from app.domain.aggregates._common import (
    LN10,
    MEDIAN_BATCH,
    MEDIAN_GRID,
    MEDIAN_TARGET,
    MEDIAN_ZMAX,
    NEG_INF,
    Inputs,
    Numeric,
    Value,
    best_of_c,
    evaluate,
    ln1m_exp,
    ln_diff,
    ln_sum,
    tolerance,
)

# --------------------------------------------------------------------------------------------
# Median of an even number of runs
# --------------------------------------------------------------------------------------------


def _median_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``u`` and ``1 − u`` at the ``n + 1`` quadrature nodes, ``u = expit(z)``, ``z`` uniform."""
    z = MEDIAN_ZMAX * (2.0 * np.arange(n + 1) / n - 1.0)
    u, v = special.expit(z), special.expit(-z)
    u[0], v[0], u[-1], v[-1] = 0.0, 1.0, 1.0, 0.0
    return u, v


def _median_sums(
    ln_fx: np.ndarray, ln_ft: np.ndarray, ln_fy: np.ndarray, k: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``ln ∫ g d[F^k]`` over ``[f*, t]``: rigorous lower bound, trapezoid, rigorous upper bound.

    ``ln_fx``, ``ln_fy``: ``ln F`` at ``x_i`` and at ``2t − x_i``, shape ``(m, n + 1)``;
    ``ln_ft``: ``ln F(t)``, shape ``(m, 1)`` with ``F(t) < 1``.
    """
    ln_h = k * ln_fx
    ln_dh = ln_diff(ln_h[:, 1:], ln_h[:, :-1])
    ln_1mt = ln1m_exp(ln_ft)
    with np.errstate(invalid="ignore"):
        ln_q = np.minimum(ln_diff(ln_fy, ln_ft) - ln_1mt, 0.0)
    # g = (1 − F(t))^k (1 − (1 − q)^k) with r − k = k, the second factor a best-of-k transform
    ln_g = k * ln_1mt + best_of_c(ln_q, k)
    ln_g = np.where(np.isneginf(ln_q), NEG_INF, ln_g)
    atom = ln_h[:, 0] + ln_g[:, 0]  # F(f*)^k g(f*): the plateau's mass
    with np.errstate(invalid="ignore"):
        ln_mean = np.logaddexp(ln_g[:, :-1], ln_g[:, 1:]) - math.log(2.0)
    lower = np.logaddexp(ln_sum(ln_g[:, 1:] + ln_dh), atom)
    trapezoid = np.logaddexp(ln_sum(ln_mean + ln_dh), atom)
    upper = np.logaddexp(ln_sum(ln_g[:, :-1] + ln_dh), atom)
    return lower, trapezoid, upper


def _median_curve(ln_f: np.ndarray, ln_ft: np.ndarray, runs: int) -> list[Numeric]:
    """``ln P(M <= t)`` on one curve for ``m`` values, from ``ln F`` at the nodes.

    ``ln_f``: shape ``(m, 2(n + 1))``, ``ln F`` at the ``x`` nodes then at the ``2t − x`` nodes;
    ``ln_ft``: ``ln F(t)``, shape ``(m,)``. ``F(t) = 1`` gives ``P = 1`` exactly.
    """
    k = runs // 2
    n1 = ln_f.shape[1] // 2
    ln_comb = math.lgamma(runs + 1.0) - 2.0 * math.lgamma(k + 1.0)
    ln_b = absrank.log10_order_statistic_cdf(ln_ft / LN10, runs, k + 1) * LN10
    ft = ln_ft[:, None]
    with np.errstate(all="ignore"):  # rows with F(t) = 1 are replaced below
        levels = [
            [
                np.logaddexp(ln_b, ln_comb + x)
                for x in _median_sums(ln_f[:, :n1][:, ::s], ft, ln_f[:, n1:][:, ::s], k)
            ]
            for s in (1, 2, 4)
        ]
    return [
        Numeric.exact(0.0)
        if ln_ft[i] == 0.0
        else Numeric.from_levels(
            (float(levels[0][1][i]), float(levels[1][1][i]), float(levels[2][1][i])),
            float(levels[0][0][i]),
            float(levels[0][2][i]),
        )
        for i in range(ln_ft.size)
    ]


def _median_level(inp: Inputs, t: np.ndarray, ln_ft: np.ndarray, n: int) -> list[list[Numeric]]:
    """Quadrature with ``n`` cells for values ``t > f*``: per curve, per value."""
    u, v = _median_nodes(n)
    gap = (t - inp.origin)[:, None]
    x = inp.origin + gap * u
    x[:, -1] = t
    y = t[:, None] + gap * v
    ln_f = evaluate(inp, np.concatenate((x, y), axis=1))
    return [_median_curve(ln_f[w], ln_ft[w], inp.runs) for w in range(3)]


def median_values(inp: Inputs, t: np.ndarray) -> list[Value]:
    """``P(median of an even r runs <= t)`` for each ``t`` (module docstring)."""
    r, k = inp.runs, inp.runs // 2
    ln_ft = evaluate(inp, np.maximum(t, inp.origin))  # (3, m)
    out: dict[int, Value] = {}
    for i in np.flatnonzero(t <= inp.origin).tolist():
        if t[i] < inp.origin:
            out[i] = Value.zero()
        else:  # both middle runs on the plateau: P(Bin(r, v_c(f*)) >= k + 1)
            ln_b = absrank.log10_order_statistic_cdf(ln_ft[:, i] / LN10, r, k + 1) * LN10
            out[i] = Value.combine([Numeric.exact(float(x)) for x in ln_b], "median-exact", 0)
    todo = np.flatnonzero(t > inp.origin)
    n = MEDIAN_GRID[0]
    while todo.size:
        keep: list[int] = []
        for start in range(0, todo.size, MEDIAN_BATCH):
            inp.control.check()
            batch = todo[start : start + MEDIAN_BATCH]
            ests = _median_level(inp, t[batch], ln_ft[:, batch], n)
            for j, i in enumerate(batch.tolist()):
                three = [e[j] for e in ests]
                done = max(e.error for e in three) <= tolerance(three, MEDIAN_TARGET)
                if done or n >= MEDIAN_GRID[1]:
                    out[i] = Value.combine(three, "median-integral", n)
                else:
                    keep.append(i)
        todo = np.array(keep, dtype=np.int64)
        n *= 2
    return [out[i] for i in range(t.size)]
