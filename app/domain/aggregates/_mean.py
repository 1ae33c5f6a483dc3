"""The mean of ``r`` runs: exact power form, or convolutions on a grid (direct or tilted FFT)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.domain.aggregates import _fft, _lattice
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

DIRECT_RUNS = 4
"""Means of at most this many runs are convolved directly (at most 2 products per chain: already
fast, and the answers stay bit for bit those of the direct method); more runs by FFT."""
FFT_ROWS = 64
"""Chains transformed together (rows of one FFT call): bounds the memory of large requests."""
FFT_MAX_REL = 1e-6
"""Largest width (``ln``) of an FFT read's rounding bracket; a chain above it is convolved
directly."""

# --------------------------------------------------------------------------------------------
# Mean of r runs
# --------------------------------------------------------------------------------------------


def _reference_fold(mass: np.ndarray, runs: int, size: int) -> tuple[np.ndarray, float]:
    """``runs``-fold direct convolution of ``mass``, truncated to its first ``size`` entries.

    Repeated squaring; after every product the vector is scaled to a maximum of 1 and the
    scale kept in log space: the true result is ``vector · exp(ln_scale)`` (``-inf`` when
    nothing is left below the truncation, e.g. every run is above ``L/2`` and ``r = 2``).
    Every entry is a sum of non-negative products (relative accuracy): the path for
    ``r <= DIRECT_RUNS`` and the fallback of the FFT chain, and the tests' oracle.
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


def _reference_lattice_sums(masses: _Masses, runs: int) -> tuple[list[float], list[float]]:
    """``P(ΣW <= L)`` with every cell's mass at its right end, centre and left end, by direct
    convolution.

    Returns the three sums of scaled lattice probabilities and their ``ln`` scales.
    """
    n = masses.cells.size
    if masses.atom == 0.0:
        # one chain (cells at their left ends): the midpoints and right ends shift every run by
        # h/2 and h, i.e. the lattice sum by r/2 and r cells
        vec, ln_fold = _reference_fold(masses.cells, runs, n + 1)
        cum = np.concatenate(([0.0], np.cumsum(vec)))  # cum[j] = sum of vec[:j]
        lower = cum[n - runs + 1] if n >= runs else 0.0
        j = n - runs // 2
        # odd r: L is a cell boundary of the midpoint lattice; even r: its centre (half mass)
        mid = cum[n - (runs - 1) // 2] if runs % 2 else cum[j] + 0.5 * vec[j]
        return [lower, mid, cum[n + 1]], [ln_fold] * 3
    # an atom at 0 is not shifted: three chains, the midpoints on a lattice of half cells
    left, right, halves = _chains(masses)
    v_left, ln_left = _reference_fold(left, runs, n + 1)
    v_right, ln_right = _reference_fold(right, runs, n + 1)
    v_half, ln_half = _reference_fold(halves, runs, 2 * n + 1)
    mid = float(np.sum(v_half[: 2 * n])) + 0.5 * float(v_half[2 * n])
    return [float(np.sum(v_right)), mid, float(np.sum(v_left))], [ln_right, ln_half, ln_left]


def _chains(masses: _Masses) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """With an atom: the left-end, right-end and half-cell lattices of one run."""
    n = masses.cells.size
    left = masses.cells.copy()
    left[0] += masses.atom
    right = np.concatenate(([masses.atom], masses.cells))
    halves = np.zeros(2 * n)
    halves[0] = masses.atom
    halves[1::2] = masses.cells
    return left, right, halves


def _reference_reads(masses: _Masses, runs: int) -> tuple[float, float, float]:
    """``ln P(ΣW <= L)`` by direct convolution: rigorous lower bound, midpoint, upper bound."""
    if not math.isfinite(masses.ln_scale):
        return NEG_INF, NEG_INF, NEG_INF
    sums, scales = _reference_lattice_sums(masses, runs)
    lower, mid, upper = (
        ln_or_neg_inf(float(s)) + ln + runs * masses.ln_scale
        for s, ln in zip(sums, scales, strict=True)
    )
    return lower, mid, upper


def _ln(x: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        out: np.ndarray = np.log(x)
    return out


@dataclass(frozen=True)
class _Reads:
    """``ln P(ΣW <= L)`` on one grid: rigorous lower bound, midpoint estimate and its rounding
    bound (``ln``), rigorous upper bound."""

    lower: float
    mid: float
    mid_error: float
    upper: float


def _fft_chains(
    ln_mass: np.ndarray, runs: int, size: int, theta: np.ndarray, reads: list[tuple[int, bool]]
) -> tuple[list[tuple[np.ndarray, np.ndarray, np.ndarray]], np.ndarray]:
    """Tilted FFT chains of the rows ``e^{ln_mass}`` and their reads ``(count, half)``
    (:func:`._fft.read`), ``ln`` relative to the untilted scale, and which rows are good: the
    others' bound exceeds :data:`FFT_MAX_REL` on some read (the caller convolves them directly)."""
    if ln_mass.shape[0] > FFT_ROWS:  # chunks small enough to stay in cache along the chain
        parts = [
            _fft_chains(ln_mass[i : i + FFT_ROWS], runs, size, theta[i : i + FFT_ROWS], reads)
            for i in range(0, ln_mass.shape[0], FFT_ROWS)
        ]
        joined = [
            tuple(np.concatenate([p[0][j][w] for p in parts]) for w in range(3))
            for j in range(len(reads))
        ]
        return joined, np.concatenate([p[1] for p in parts])  # type: ignore[return-value]
    vec, ln_tilt, delta = _fft.tilted(ln_mass, theta)
    out_vec, ln_fold, bound = _fft.power(vec, delta, runs, size)
    good = np.isfinite(ln_tilt) & np.isfinite(bound)
    base = ln_fold + runs * np.where(np.isfinite(ln_tilt), ln_tilt, 0.0)
    out = []
    for count, half in reads:
        lo, mid, hi = _fft.read(out_vec, np.where(good, bound, 0.0), theta, count, half)
        if count > 0 or half:
            with np.errstate(invalid="ignore"):
                good &= hi - lo <= FFT_MAX_REL
        out.append((lo + base, mid + base, hi + base))
    return out, good


def _mean_reads(masses: _Masses, runs: int, theta: float) -> _Reads:
    """``ln P(ΣW <= L)`` on one lattice (:func:`_reads_rows`; the atom's three chains here)."""
    if not math.isfinite(masses.ln_scale):
        return _Reads(NEG_INF, NEG_INF, 0.0, NEG_INF)
    if runs <= DIRECT_RUNS:
        return _Reads(*_direct(masses, runs))
    n = masses.cells.size
    scale = runs * masses.ln_scale
    if masses.atom == 0.0:
        got = _reads_rows(
            masses.cells[None, :], np.array([masses.ln_scale]), runs, np.array([theta])
        )
        return got[0]
    left, right, halves = _chains(masses)
    th = np.array([theta])
    (g_right,), ok_r = _fft_chains(_ln(right)[None, :], runs, n + 1, th, [(n + 1, False)])
    (g_half,), ok_h = _fft_chains(_ln(halves)[None, :], runs, 2 * n + 1, 0.5 * th, [(2 * n, True)])
    (g_left,), ok_l = _fft_chains(_ln(left)[None, :], runs, n + 1, th, [(n + 1, False)])
    if not (ok_r[0] and ok_h[0] and ok_l[0]):
        return _Reads(*_direct(masses, runs))
    lo, up = float(g_right[0][0]), float(g_left[2][0])
    m_lo, mid, m_hi = (float(x[0]) for x in g_half)
    error = max(mid - m_lo, m_hi - mid) if math.isfinite(mid) else 0.0
    return _Reads(lo + scale, mid + scale, error, up + scale)


def _reads_rows(
    cells: np.ndarray, ln_scale: np.ndarray, runs: int, theta: np.ndarray
) -> list[_Reads]:
    """``ln P(ΣW <= L)`` of rows of cell masses without an atom (one chain each, all rows at
    once): rigorous lower bound, midpoint estimate, rigorous upper bound, by tilted FFT chains
    with their rounding bound folded into the bracket (lower end of the lower read, upper end of
    the upper read) and into the midpoint's error; rows whose bound exceeds
    :data:`FFT_MAX_REL` (``ln``) are convolved directly."""
    rows, n = cells.shape
    lower_count = n - runs + 1 if n >= runs else 0
    mid_read = (n - (runs - 1) // 2, False) if runs % 2 else (n - runs // 2, True)
    live = np.isfinite(ln_scale)
    got, good = _fft_chains(
        _ln(cells), runs, n + 1, theta, [(lower_count, False), mid_read, (n + 1, False)]
    )
    (lo, _, _), (m_lo, mid, m_hi), (_, _, up) = got
    out: list[_Reads] = []
    for i in range(rows):
        if not live[i]:
            out.append(_Reads(NEG_INF, NEG_INF, 0.0, NEG_INF))
        elif not good[i]:
            out.append(_Reads(*_direct(_Masses(cells[i], 0.0, float(ln_scale[i])), runs)))
        else:
            scale = runs * float(ln_scale[i])
            mi = float(mid[i])
            error = max(mi - float(m_lo[i]), float(m_hi[i]) - mi) if math.isfinite(mi) else 0.0
            out.append(_Reads(float(lo[i]) + scale, mi + scale, error, float(up[i]) + scale))
    return out


def _direct(masses: _Masses, runs: int) -> tuple[float, float, float, float]:
    lower, mid, upper = _reference_reads(masses, runs)
    return lower, mid, 0.0, upper


def _masses_rows(ln_f: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`_Masses.from_cdf` of rows: cells, atoms, ``ln`` scales."""
    ln_cells = ln_diff(ln_f[:, 1:], ln_f[:, :-1])
    scale = np.maximum(np.max(ln_cells, axis=-1), ln_f[:, 0])
    live = np.isfinite(scale)
    safe = np.where(live, scale, 0.0)
    with np.errstate(under="ignore"):
        cells = np.where(live[:, None], np.exp(ln_cells - safe[:, None]), 0.0)
        atom = np.where(live, np.exp(ln_f[:, 0] - safe), 0.0)
    return cells, atom, np.where(live, scale, NEG_INF)


def _numeric(levels: list[_Reads]) -> Numeric:
    """Richardson extrapolation (:meth:`Numeric.from_levels`) of the reads on ``n``, ``n/2`` and
    ``n/4`` cells, its error widened by the FFT's rounding bounds of the midpoint reads."""
    fine = levels[0]
    est = Numeric.from_levels(tuple(x.mid for x in levels), fine.lower, fine.upper)  # type: ignore[arg-type]
    rounding = max(x.mid_error for x in levels)
    if rounding == 0.0:
        return est
    # R_n = M_n + (M_n − M_{n/2})/3 and R_{n/2}: each moves by at most 2 of the reads' bounds
    return Numeric(est.point, est.error + 4.0 * rounding, est.lower, est.upper)


def _mean_numeric_rows(ln_f: np.ndarray, runs: int, theta: np.ndarray) -> list[Numeric]:
    """Convolution estimates of ``ln P(mean <= t)`` from rows of ``ln v_c`` at the grid nodes
    (``theta``: the rows' tilts per cell, :func:`_tilt_rows`)."""
    if runs <= DIRECT_RUNS:
        return [_mean_numeric(row, runs) for row in ln_f]
    cells, atom, ln_scale = _masses_rows(ln_f)
    with_atom = atom > 0
    per_level: list[list[_Reads]] = []
    for step in (1, 2, 4):
        reads = _reads_rows(cells, ln_scale, runs, step * theta) if not with_atom.all() else []
        if with_atom.any():
            by_row = dict(enumerate(reads))
            for i in np.flatnonzero(with_atom).tolist():
                m = _Masses(cells[i], float(atom[i]), float(ln_scale[i]))
                by_row[i] = _mean_reads(m, runs, step * float(theta[i]))
            reads = [by_row[i] for i in range(ln_f.shape[0])]
        per_level.append(reads)
        cells = cells[:, 0::2] + cells[:, 1::2]
    return [_numeric([lv[i] for lv in per_level]) for i in range(ln_f.shape[0])]


def _tilt_rows(ln_f: np.ndarray, runs: int) -> np.ndarray:
    """``θ`` per cell of the finest grid (:func:`._fft.tilt`) for rows of ``ln v_c``: one run's
    tilted mean at ``(n − r/2)/r`` cells, the midpoint read's saddle point."""
    if runs <= DIRECT_RUNS:
        return np.zeros(ln_f.shape[0])
    cells, atom, _ = _masses_rows(ln_f)
    cells[:, 0] += atom
    n = cells.shape[1]
    return _fft.tilt(_ln(cells), (n - 0.5 * runs) / runs)


def _mean_numeric(ln_f: np.ndarray, runs: int) -> Numeric:
    """Convolution estimate of ``ln P(mean <= t)`` from ``ln v_c`` at the grid nodes, by direct
    convolution (the path for ``r <= DIRECT_RUNS``, and the tests' oracle)."""
    masses = _Masses.from_cdf(ln_f)
    lower, mid, upper = _reference_reads(masses, runs)
    half = masses.halved()
    levels = (mid, _reference_reads(half, runs)[1], _reference_reads(half.halved(), runs)[1])
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


SHARED_LATTICES = True
"""Means of more than :data:`DIRECT_RUNS` runs on the lattices shared by the request's values
(:mod:`._lattice`); ``False``: per-value lattices for every value (the previous path, kept for
atoms, as the shared path's oracle and as the benchmark's peer)."""


def _mean_convolutions(inp: Inputs, ts: list[float]) -> list[Value]:
    """``mean-convolution`` of every value ``t > f*`` outside the power path (``mean-exact``
    where ``(t, f* + L]`` carries no probability), all values' chains at once.

    The grid of each value starts at ``max(MEAN_GRID[0], 16 r)`` cells and is doubled (old nodes
    reused) while the value's largest error estimate exceeds :func:`tolerance`, up to
    ``max(MEAN_GRID[1], 16 r)``. For ``r > DIRECT_RUNS`` without an atom the lattices are shared
    (:mod:`._lattice`: one chain per octave of ``L``, tilt bin, curve and level); otherwise every
    value has its own lattice on ``[0, L]``, and the values still refining share every FFT call
    of a level.
    """
    r = inp.runs
    t = np.asarray(ts, dtype=np.float64)
    span = r * (t - inp.origin)
    ln_at = evaluate(inp, np.stack([t, inp.origin + span], axis=-1))  # (3, m, 2)
    saturated = ln_at[:, :, 0] >= ln_at[:, :, 1]  # v_c(t) = v_c(f* + L): P = v_c(t)^r
    exact = [[Numeric.exact(r * float(ln_at[k, i, 0])) for k in range(3)] for i in range(t.size)]
    out: dict[int, Value] = {}
    for i in range(t.size):
        if np.all(saturated[:, i]):
            out[i] = Value.combine(exact[i], "mean-exact", 0)
        elif r > MAX_MEAN_RUNS:
            raise NotApplicable(
                f"the mean of {r} runs is computed by convolution only up to {MAX_MEAN_RUNS} "
                f"runs; the value {ts[i]!r} lies outside the power-law tail, where the exact "
                "form holds for any r",
                field="runs",
            )
    todo = np.array([i for i in range(t.size) if i not in out], dtype=np.int64)
    n = MEAN_GRID[0]
    while n < 16 * r:
        n *= 2
    n_max = max(MEAN_GRID[1], 16 * r)
    judge = _Judge(saturated, exact, n_max)
    if todo.size:
        shared = (
            SHARED_LATTICES
            and r > DIRECT_RUNS
            and n_max & (n_max - 1) == 0
            and _lattice.applies(inp, span[todo], n_max)
        )
        refine = _shared_refinement if shared else _per_value_refinement
        out |= refine(inp, span, todo, n, judge)
    return [out[i] for i in range(t.size)]


@dataclass(frozen=True)
class _Judge:
    """Whether a value's estimates on a grid are final: each curve's estimate raised to the
    rigorous ``v_c(t)^r`` (exact where the curve saturates), done when the largest error is within
    :func:`tolerance` or on the largest grid."""

    saturated: np.ndarray
    exact: list[list[Numeric]]
    n_max: int

    def __call__(self, i: int, numeric: list[Numeric | None], n: int, cells: int) -> Value | None:
        """``numeric``: the estimate of each curve (``None`` where it saturates)."""
        # P(mean <= t) >= P(every run <= t) = v_c(t)^r: exact where v_c(t) rounds to 1
        ests = [
            self.exact[i][k]
            if self.saturated[k, i]
            else _given(numeric[k]).at_least(self.exact[i][k].point)
            for k in range(3)
        ]
        done = max(e.error for e in ests) <= tolerance(ests, MEAN_TARGET)
        if not (done or n >= self.n_max):
            return None
        method = "mean-exact" if self.saturated[0, i] else "mean-convolution"
        return Value.combine(ests, method, cells)


def _given(x: Numeric | None) -> Numeric:
    assert x is not None
    return x


def _per_value_refinement(
    inp: Inputs, span: np.ndarray, todo: np.ndarray, n: int, judge: _Judge
) -> dict[int, Value]:
    """Every value on its own lattice of ``n`` cells on ``[0, L]``, refined while needed."""
    r = inp.runs
    saturated = judge.saturated
    out: dict[int, Value] = {}
    ln_f = evaluate(inp, inp.origin + span[todo, None] * (np.arange(n + 1) / n))  # (3, m, n + 1)
    theta: np.ndarray | None = None
    while todo.size:
        inp.control.check()
        if theta is None:  # tilts from the point curve on the first grid, per cell
            theta = _tilt_rows(ln_f[0], r)
        # rows: (curve, value) pairs that are not saturated
        rows = [(k, j) for j in range(todo.size) for k in range(3) if not saturated[k, todo[j]]]
        stacked = np.array([ln_f[k, j] for k, j in rows]).reshape(len(rows), n + 1)
        tilts = np.array([theta[j] for _, j in rows], dtype=np.float64)
        numeric = dict(zip(rows, _mean_numeric_rows(stacked, r, tilts), strict=True))
        keep: list[int] = []
        for j, i in enumerate(todo.tolist()):
            value = judge(i, [numeric.get((k, j)) for k in range(3)], n, n)
            if value is None:
                keep.append(j)
            else:
                out[i] = value
        if not keep:
            break
        kept = np.array(keep, dtype=np.int64)
        todo, theta = todo[kept], 0.5 * theta[kept]  # per cell of the finer grid
        n *= 2
        finer = np.empty((3, kept.size, n + 1))
        finer[:, :, 0::2] = ln_f[:, kept]  # j/n == 2j/(2n) exactly: the old nodes are reused
        odd = inp.origin + span[todo, None] * (np.arange(1, n, 2) / n)
        finer[:, :, 1::2] = evaluate(inp, odd)
        ln_f = finer
    return out


def _shared_refinement(
    inp: Inputs, span: np.ndarray, todo: np.ndarray, n: int, judge: _Judge
) -> dict[int, Value]:
    """The values on the lattices they share (:mod:`._lattice`), refined while needed: on every
    level one chain per octave, tilt bin, curve and level of the extrapolation."""
    first = n
    places = {i: _lattice.Place.of(float(span[i]), n) for i in todo.tolist()}
    thetas: dict[tuple[int, int], float] = {}
    out: dict[int, Value] = {}
    left = todo.tolist()
    while left:
        groups: dict[tuple[int, int], list[int]] = {}
        for i in left:
            groups.setdefault((places[i].octave, places[i].bin), []).append(i)
        keep: list[int] = []
        for key, members in sorted(groups.items()):
            inp.control.check()
            if key not in thetas:  # on the first grid (every value starts there)
                thetas[key] = _bin_tilt(inp, key, first)
            theta = thetas[key] * (first / n)  # per cell of this grid (exact: powers of two)
            k_cells = np.array([places[i].cells for i in members]) * (n / first)
            numeric = _shared_numeric(inp, key, n, theta, k_cells, judge.saturated[:, members])
            for j, i in enumerate(members):
                value = judge(i, [numeric[k][j] for k in range(3)], n, int(k_cells[j]))
                if value is None:
                    keep.append(i)
                else:
                    out[i] = value
        left = sorted(keep)
        n *= 2
    return out


def _octave_ln_f(inp: Inputs, key: tuple[int, int], n: int) -> np.ndarray:
    """``ln v_c`` of the three curves at the nodes ``f* + jh`` of bin ``key`` on level ``n``."""
    octave, tilt_bin = key
    h = math.ldexp(1.0, octave - n.bit_length())  # 2^{e−1}/n
    return evaluate(inp, inp.origin + np.arange(_lattice.size(n, tilt_bin) + 1) * h)


def _bin_tilt(inp: Inputs, key: tuple[int, int], n: int) -> float:
    """``θ`` of a tilt bin on level ``n`` from the point curve: one run's tilted mean at
    ``(K_c − r/2)/r`` cells, ``K_c`` the bin's centre."""
    cells, _, _ = _masses_rows(_octave_ln_f(inp, key, n)[:1])
    centre = n * (1.0 + (key[1] + 0.5) / _lattice.TILT_BINS)
    return float(_fft.tilt(_ln(cells), (centre - 0.5 * inp.runs) / inp.runs)[0])


def _shared_numeric(
    inp: Inputs,
    key: tuple[int, int],
    n: int,
    theta: float,
    k_cells: np.ndarray,
    saturated: np.ndarray,
) -> list[list[Numeric]]:
    """Per curve, the estimates of the members of one bin (``K = k_cells``) on level ``n``:
    the chains on ``n``, ``n/2`` and ``n/4`` cells per ``h`` (neighbours merged), read at every
    member, Richardson-extrapolated (:func:`_numeric`)."""
    r = inp.runs
    cells, _, ln_scale = _masses_rows(_octave_ln_f(inp, key, n))
    per_level: list[list[list[_Reads]]] = []
    for step in (1, 2, 4):
        size = cells.shape[1]
        vec, ln_tilt, delta = _fft.tilted(_ln(cells), np.full(3, step * theta))
        out_vec, ln_fold, bound = _fft.power(vec, delta, r, size)
        curves: list[list[_Reads]] = []
        for k in range(3):
            want = ~saturated[k]
            reads = [_Reads(NEG_INF, NEG_INF, 0.0, NEG_INF)] * k_cells.size
            if want.any() and math.isfinite(float(ln_scale[k])):
                scale = r * float(ln_scale[k])
                base = float(ln_fold[k] + r * ln_tilt[k]) + scale
                ln_cdf = _lattice.fft_cdf(out_vec[k], float(bound[k]), step * theta, base)
                got = _lattice.read(ln_cdf, k_cells / step, r, FFT_MAX_REL)
                bad = want & ~got.good
                if bad.any():  # this chain convolved directly, read by these members only
                    direct, ln_direct = _reference_fold(cells[k], r, size)
                    exact_cdf = _lattice.direct_cdf(direct, ln_direct + scale)
                    fixed = _lattice.read(exact_cdf, k_cells[bad] / step, r, math.inf)
                    for name in ("lower", "mid", "upper"):
                        getattr(got, name)[bad] = getattr(fixed, name)
                    got.mid_error[bad] = 0.0
                reads = [
                    _Reads(
                        float(got.lower[j]),
                        float(got.mid[j]),
                        float(got.mid_error[j]),
                        float(got.upper[j]),
                    )
                    for j in range(k_cells.size)
                ]
            curves.append(reads)
        per_level.append(curves)
        cells = cells[:, 0::2] + cells[:, 1::2]
    return [
        [_numeric([per_level[s][k][j] for s in range(3)]) for j in range(k_cells.size)]
        for k in range(3)
    ]


def mean_values(inp: Inputs, t: np.ndarray) -> list[Value]:
    """``P(mean of r runs <= t)`` for each ``t`` (module docstring)."""
    out: dict[int, Value] = {}
    convolve: list[int] = []
    for i, value in enumerate(t.tolist()):
        if value < inp.origin:
            out[i] = Value.zero()
        elif value == inp.origin:  # all runs on the plateau (0 without an atom)
            ln_atom = evaluate(inp, np.array([value]))[:, 0]
            exact = [Numeric.exact(inp.runs * float(x)) for x in ln_atom]
            out[i] = Value.combine(exact, "mean-exact", 0)
        else:
            power = _mean_power(inp, value)
            if power is None:
                convolve.append(i)
            else:
                out[i] = power
    if convolve:
        values = t[convolve].tolist()
        out |= dict(zip(convolve, _mean_convolutions(inp, values), strict=True))
    return [out[i] for i in range(t.size)]
