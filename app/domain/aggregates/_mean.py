"""The mean of ``r`` runs: exact power form, or direct convolutions on a grid."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.domain.aggregates._common import (
    MAX_MEAN_RUNS,
    MEAN_GRID,
    MEAN_TARGET,
    NEG_INF,
    POWER_CHECK,
    POWER_REL_TOL,
    ROUNDING,
    Inputs,
    Numeric,
    Value,
    evaluate,
    ln_diff,
    ln_or_neg_inf,
    tolerance,
)
from app.domain.errors import NotApplicable

# --------------------------------------------------------------------------------------------
# Mean of r runs
# --------------------------------------------------------------------------------------------


def _fold(mass: np.ndarray, runs: int, size: int) -> tuple[np.ndarray, float]:
    """``runs``-fold direct convolution of ``mass``, truncated to its first ``size`` entries.

    Repeated squaring; after every product the vector is scaled to a maximum of 1 and the
    scale kept in log space: the true result is ``vector · exp(ln_scale)`` (``-inf`` when
    nothing is left below the truncation, e.g. every run is above ``L/2`` and ``r = 2``).
    """
    result: np.ndarray | None = None
    ln_result = 0.0
    base = mass[:size].copy()
    ln_base = 0.0
    remaining = runs
    while True:
        if remaining & 1:
            if result is None:
                result, ln_result = base.copy(), ln_base
            else:
                result, ln_top = _rescaled(np.convolve(result, base)[:size])
                ln_result += ln_base + ln_top
        remaining >>= 1
        if not remaining:
            break
        base, ln_top = _rescaled(np.convolve(base, base)[:size])
        ln_base = 2.0 * ln_base + ln_top
    assert result is not None
    return result, ln_result


def _rescaled(vec: np.ndarray) -> tuple[np.ndarray, float]:
    """``vec`` divided by its maximum, and ``ln`` of that maximum (``-inf`` if all zero)."""
    top = float(vec.max())
    return (vec / top, math.log(top)) if top > 0 else (vec, NEG_INF)


@dataclass(frozen=True)
class _Masses:
    """The law of ``W = Z − f*`` on ``n`` cells of width ``h = L/n``, scaled.

    ``cells[j]·exp(ln_scale) = P(jh < W <= (j+1)h)`` and ``atom·exp(ln_scale) = P(W = 0)``.
    """

    cells: np.ndarray
    atom: float
    ln_scale: float

    @classmethod
    def from_cdf(cls, ln_f: np.ndarray) -> _Masses:
        """From ``ln v_c`` at the ``n + 1`` grid nodes ``f* + jh``."""
        ln_cells = ln_diff(ln_f[1:], ln_f[:-1])
        scale = max(float(np.max(ln_cells)), float(ln_f[0]))
        if not math.isfinite(scale):
            return cls(np.zeros(ln_cells.size), 0.0, NEG_INF)
        with np.errstate(under="ignore"):
            return cls(np.exp(ln_cells - scale), math.exp(float(ln_f[0]) - scale), scale)

    def halved(self) -> _Masses:
        """The same law on ``n/2`` cells (neighbours merged)."""
        return _Masses(self.cells[0::2] + self.cells[1::2], self.atom, self.ln_scale)


def _lattice_sums(masses: _Masses, runs: int) -> tuple[list[float], list[float]]:
    """``P(ΣW <= L)`` with every cell's mass at its right end, centre and left end.

    Returns the three sums of scaled lattice probabilities and their ``ln`` scales.
    """
    n = masses.cells.size
    if masses.atom == 0.0:
        # one chain (cells at their left ends): the midpoints and right ends shift every run by
        # h/2 and h, i.e. the lattice sum by r/2 and r cells
        vec, ln_fold = _fold(masses.cells, runs, n + 1)
        cum = np.concatenate(([0.0], np.cumsum(vec)))  # cum[j] = sum of vec[:j]
        lower = cum[n - runs + 1] if n >= runs else 0.0
        j = n - runs // 2
        # odd r: L is a cell boundary of the midpoint lattice; even r: its centre (half mass)
        mid = cum[n - (runs - 1) // 2] if runs % 2 else cum[j] + 0.5 * vec[j]
        return [lower, mid, cum[n + 1]], [ln_fold] * 3
    # an atom at 0 is not shifted: three chains, the midpoints on a lattice of half cells
    left = masses.cells.copy()
    left[0] += masses.atom
    right = np.concatenate(([masses.atom], masses.cells))
    halves = np.zeros(2 * n)
    halves[0] = masses.atom
    halves[1::2] = masses.cells
    v_left, ln_left = _fold(left, runs, n + 1)
    v_right, ln_right = _fold(right, runs, n + 1)
    v_half, ln_half = _fold(halves, runs, 2 * n + 1)
    mid = float(np.sum(v_half[: 2 * n])) + 0.5 * float(v_half[2 * n])
    return [float(np.sum(v_right)), mid, float(np.sum(v_left))], [ln_right, ln_half, ln_left]


def _mean_reads(masses: _Masses, runs: int) -> tuple[float, float, float]:
    """``ln P(ΣW <= L)``: rigorous lower bound, midpoint estimate, rigorous upper bound."""
    if not math.isfinite(masses.ln_scale):
        return NEG_INF, NEG_INF, NEG_INF
    sums, scales = _lattice_sums(masses, runs)
    lower, mid, upper = (
        ln_or_neg_inf(float(s)) + ln + runs * masses.ln_scale
        for s, ln in zip(sums, scales, strict=True)
    )
    return lower, mid, upper


def _mean_numeric(ln_f: np.ndarray, runs: int) -> Numeric:
    """Convolution estimate of ``ln P(mean <= t)`` from ``ln v_c`` at the grid nodes."""
    masses = _Masses.from_cdf(ln_f)
    lower, mid, upper = _mean_reads(masses, runs)
    half = masses.halved()
    levels = (mid, _mean_reads(half, runs)[1], _mean_reads(half.halved(), runs)[1])
    return Numeric.from_levels(levels, lower, upper)


def _power_ends(inp: Inputs, span: float) -> list[tuple[float, float]] | None:
    """``(ln v1(f* + L), β)`` of the point, low and high curves when each is a power law of
    ``t − f*`` on ``[f*, f* + L]``; ``None`` otherwise.

    The point must lie in ``curve.power``'s range. The interval ends are fitted through
    ``f* + L`` and ``f* + 1e-4 L`` and checked at ``f* + 1e-2 L`` (a table's power tail and the
    analytic forms give exact power laws there).
    """
    power = inp.curve.power
    if power is None or inp.curve.atom > 0 or power.f_opt != inp.f_star:
        return None
    limit = power.limit - inp.f_star if inp.gaps else power.limit  # in the values' units
    if not inp.origin + span < limit:
        return None
    x = inp.origin + span * np.array([1.0, *POWER_CHECK])
    # the offsets the curve sees (x − f* is exact near f*, Sterbenz): no rounding amplification
    with np.errstate(divide="ignore"):
        ln_ratio = np.log((x - inp.origin) / (x[0] - inp.origin))
    curve = inp.curve
    # gaps (errors) are evaluated as gaps: curve.evaluate would read them as values of f
    ln_v, ln_lo, ln_hi, _ = curve.evaluate_errors(x) if inp.gaps else curve.evaluate(x)
    out: list[tuple[float, float]] = []
    for which, ln in enumerate((ln_v, ln_lo, ln_hi)):
        if which > 0 and np.isneginf(ln[0]):
            out.append((NEG_INF, 1.0))  # this end is 0 on the whole range
            continue
        beta = power.beta if which == 0 else float(ln[-1] - ln[0]) / float(ln_ratio[-1])
        with np.errstate(invalid="ignore"):
            off = np.abs(ln - (ln[0] + beta * ln_ratio))
        if not (beta > 0 and np.all(off <= 1e-9 * max(1.0, abs(float(ln[0]))))):
            return None
        out.append((float(ln[0]), beta))
    return out


def _mean_power(inp: Inputs, t: float) -> Value | None:
    """``mean-power`` (module docstring), or ``None`` where it does not apply."""
    r, c = inp.runs, inp.budget
    ends = _power_ends(inp, r * (t - inp.origin))
    if ends is None:
        return None
    # c·v1·(1 − ε) <= v_c <= c·v1 on [f*, f* + L], ε = (c − 1)·v1(f* + L)/2
    eps = [(c - 1) * math.exp(ln) / 2.0 for ln, _ in ends]
    if r * max(eps) > POWER_REL_TOL:
        return None
    with np.errstate(invalid="ignore"):
        ln_g = [
            r * (math.log(c) + ln + math.lgamma(beta + 1.0)) - math.lgamma(r * beta + 1.0)
            for ln, beta in ends
        ]
    low_g = [g + r * math.log1p(-e) for g, e in zip(ln_g, eps, strict=True)]
    mid, half_width = 0.5 * (ln_g[0] + low_g[0]), 0.5 * (ln_g[0] - low_g[0])
    point = Numeric(mid, half_width + ROUNDING * max(1.0, abs(mid)), low_g[0], ln_g[0])
    lo, hi = Numeric.exact(low_g[1]), Numeric.exact(ln_g[2])
    return Value.combine([point, lo, hi], "mean-power", 0)


def _mean_convolution(inp: Inputs, t: float) -> Value:
    """``mean-convolution`` (``mean-exact`` where ``(t, f* + L]`` carries no probability).

    The grid starts at ``max(MEAN_GRID[0], 16 r)`` cells and is doubled (old nodes reused) while
    the largest error estimate exceeds :func:`tolerance`, up to ``max(MEAN_GRID[1], 16 r)``.
    """
    r = inp.runs
    span = r * (t - inp.origin)
    ln_at = evaluate(inp, np.array([t, inp.origin + span]))
    saturated = ln_at[:, 0] >= ln_at[:, 1]  # v_c(t) = v_c(f* + L): P = v_c(t)^r
    exact = [Numeric.exact(r * float(ln_at[k, 0])) for k in range(3)]
    if np.all(saturated):
        return Value.combine(exact, "mean-exact", 0)
    if r > MAX_MEAN_RUNS:
        raise NotApplicable(
            f"the mean of {r} runs is computed by convolution only up to {MAX_MEAN_RUNS} runs; "
            f"the value {t!r} lies outside the power-law tail, where the exact form holds for "
            "any r",
            field="runs",
        )
    n = MEAN_GRID[0]
    while n < 16 * r:
        n *= 2
    ln_f = evaluate(inp, inp.origin + span * (np.arange(n + 1) / n))
    while True:
        # P(mean <= t) >= P(every run <= t) = v_c(t)^r: exact where v_c(t) rounds to 1
        ests = [
            exact[k] if saturated[k] else _mean_numeric(ln_f[k], r).at_least(exact[k].point)
            for k in range(3)
        ]
        done = max(e.error for e in ests) <= tolerance(ests, MEAN_TARGET)
        if done or n >= max(MEAN_GRID[1], 16 * r):
            break
        n *= 2
        finer = np.empty((3, n + 1))
        finer[:, 0::2] = ln_f  # j/n == 2j/(2n) exactly: the old nodes are reused
        odd = inp.origin + span * (np.arange(1, n, 2) / n)
        finer[:, 1::2] = evaluate(inp, odd)
        ln_f = finer
    return Value.combine(ests, "mean-exact" if saturated[0] else "mean-convolution", n)


def mean_values(inp: Inputs, t: np.ndarray) -> list[Value]:
    """``P(mean of r runs <= t)`` for each ``t`` (module docstring)."""
    out: list[Value] = []
    for value in t.tolist():
        if value < inp.origin:
            out.append(Value.zero())
        elif value == inp.origin:  # all runs on the plateau (0 without an atom)
            ln_atom = evaluate(inp, np.array([value]))[:, 0]
            exact = [Numeric.exact(inp.runs * float(x)) for x in ln_atom]
            out.append(Value.combine(exact, "mean-exact", 0))
        else:
            power = _mean_power(inp, value)
            out.append(power if power is not None else _mean_convolution(inp, value))
    return out
