"""The ``aggregate`` block of ``RankResult.tail``: methods, grid and numerical errors."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from app.domain.aggregates._common import (
    LN10,
    MAX_MEAN_RUNS,
    MEAN_GRID,
    MEAN_TARGET,
    MEDIAN_GRID,
    MEDIAN_TARGET,
    METHODS,
    POWER_REL_TOL,
    Value,
)
from app.domain.aggregates._mean import DIRECT_RUNS
from app.domain.errors import InvalidInput

_DESCRIPTIONS = {
    "mean": {
        "definition": "v = P((Z_1 + ... + Z_r)/r <= t) = P(W_1 + ... + W_r <= r (t - f*)), "
        "W = Z - f*, Z with CDF v_c = 1 - (1 - v1)^c",
        "mean-power": "(C_c Gamma(beta+1))^r (r (t - f*))^(r beta) / Gamma(r beta + 1), "
        "exact where v_c = C_c (t - f*)^beta on [f*, f* + r (t - f*)]",
        "mean-convolution": "r - 1 direct convolutions (repeated squaring) of the cell masses "
        "of W on a uniform grid over [0, r (t - f*)]; cell masses at left/right ends bound v "
        "rigorously, midpoints + Richardson extrapolation give the point",
        "mean-exact": "t = f* (all runs on the plateau, v = v_c(f*)^r) or no probability "
        "between t and f* + r (t - f*) (v = v_c(t)^r)",
        "normal_approximation": "never used",
    },
    "mean-fft": {
        "mean-convolution": "r - 1 convolutions (repeated squaring) of the cell masses of W on a "
        "uniform lattice of width h = 2^(e-1)/n (L = r (t - f*) in [2^(e-1), 2^e), so the "
        "request's values of one octave share it; cells = L/h, between n and 2n; per-value "
        "grids over [0, L] on a curve with an atom at f*), by FFT of the exponentially tilted "
        "masses with a rigorous rounding bound (direct convolution where that bound exceeds "
        "1e-6); cell masses at left/right ends bound v rigorously, midpoints (the lattice CDF "
        "interpolated at L by a cubic in ln) + Richardson extrapolation give the point",
    },
    "median": {
        "definition": "v = P((Z_(k) + Z_(k+1))/2 <= t), k = r/2, Z with CDF F = v_c "
        "= 1 - (1 - v1)^c",
        "median-integral": "P(Bin(r, F(t)) >= k+1) + C(r, k) * integral over [f*, t] of "
        "[(1 - F(t))^k - (1 - F(2t - x))^k] d[F(x)^k] (joint density of two order "
        "statistics, David & Nagaraja 2.2), trapezoid on nodes geometric near f* and near t, "
        "Richardson extrapolation; g non-increasing, so left/right sums bound it rigorously",
        "median-exact": "t = f*: P(Bin(r, v_c(f*)) >= k + 1)",
    },
}


def _finite(values: list[float]) -> list[float | None]:
    return [x / LN10 if math.isfinite(x) else None for x in values]


@dataclass(frozen=True)
class AggregateInfo:
    """The numerical method of a mean or an even median: ``RankResult.tail.aggregate``.

    Attributes
    ----------
    statistic : {"mean", "median"}
    definition : str
        What ``v`` is, as a formula.
    methods : Mapping of str to str
        Each method used (``mean-power``, ``median-integral``, ...) and what it computes.
    normal_approximation : str or None
        ``"never used"`` for the mean (``None``: the median, which leaves the key out).
    grid : Mapping of str to JSON
        The grid's first and largest size, its target error and method limits.
    cells : tuple of int, shape (n,)
        Cells of the final grid per value (0 where exact).
    numerical_error_log10 : tuple of float or None, shape (n,)
        Estimated numerical error of ``log10 v`` per value.
    max_numerical_error_log10 : float or None
        Their maximum.
    bracket_log10 : tuple of (float or None, float or None), shape (n,)
        Rigorous numerical bracket of ``log10 v`` per value.
    error_estimate : str
        How the error and the bracket are obtained.
    """

    statistic: str
    definition: str
    methods: Mapping[str, str]
    normal_approximation: str | None
    grid: Mapping[str, object]
    cells: tuple[int, ...]
    numerical_error_log10: tuple[float | None, ...]
    max_numerical_error_log10: float | None
    bracket_log10: tuple[tuple[float | None, ...], ...]
    error_estimate: str

    def as_json(self, index: int | None = None) -> dict[str, object]:
        """The JSON block; with ``index``, the per-value entries of that value alone."""

        def per(x: tuple[object, ...]) -> object:
            if index is not None:
                item = x[index]
                return list(item) if isinstance(item, tuple) else item
            return [list(v) if isinstance(v, tuple) else v for v in x]

        out: dict[str, object] = {
            "statistic": self.statistic,
            "definition": self.definition,
            "methods": dict(self.methods),
        }
        if self.normal_approximation is not None:
            out["normal_approximation"] = self.normal_approximation
        out |= {
            "grid": dict(self.grid),
            "cells": per(self.cells),
            "numerical_error_log10": per(self.numerical_error_log10),
            "max_numerical_error_log10": self.max_numerical_error_log10,
            "bracket_log10": per(self.bracket_log10),
            "error_estimate": self.error_estimate,
        }
        return out


def numerical_error_warning(count: int, threshold_log10: float, first: str) -> str:
    """The text of the ``"numerical-error"`` warning, naming the first value ``first``."""
    return (
        f"{count} value(s) have a numerical error above {threshold_log10:.3g} in "
        f"log10 v even on the largest grid (first: {first}); see "
        "tail.aggregate.numerical_error_log10 (the interval includes it)"
    )


def aggregate_info(
    kind: str, est: list[Value], inverse: np.ndarray, runs: int = 0
) -> AggregateInfo:
    """The ``aggregate`` block of ``RankResult.tail`` (per-value lists in input order); ``runs``
    above :data:`._mean.DIRECT_RUNS` describes the mean's FFT convolutions."""
    per = [est[i] for i in inverse.tolist()]
    used = sorted({e.method for e in per} & set(METHODS))
    errors = _finite([e.error for e in per])
    grid: dict[str, object] = (
        {
            "start_cells": MEAN_GRID[0],
            "max_cells": MEAN_GRID[1],
            "target_ln": MEAN_TARGET,
            "power_rel_tol": POWER_REL_TOL,
            "max_convolution_runs": MAX_MEAN_RUNS,
        }
        if kind == "mean"
        else {
            "start_cells": MEDIAN_GRID[0],
            "max_cells": MEDIAN_GRID[1],
            "target_ln": MEDIAN_TARGET,
            "nodes": "x = f* + (t - f*) expit(z), z uniform on [-40, 40]",
        }
    )
    desc = dict(_DESCRIPTIONS[kind])
    if kind == "mean" and runs > DIRECT_RUNS:
        desc |= _DESCRIPTIONS["mean-fft"]
    return AggregateInfo(
        statistic=kind,
        definition=desc["definition"],
        methods={m: desc[m] for m in used},
        normal_approximation=desc["normal_approximation"] if kind == "mean" else None,
        grid=grid,
        cells=tuple(e.cells for e in per),
        numerical_error_log10=tuple(errors),
        max_numerical_error_log10=_finite([max((e.error for e in per), default=0.0)])[0],
        bracket_log10=tuple(tuple(_finite(list(e.bracket))) for e in per),
        error_estimate="numerical_error_log10: |R_n - R_n/2| of the Richardson-extrapolated "
        "estimates on n and n/2 cells (convolution, integral), half the Bonferroni range "
        "r (c - 1) v1/2 (mean-power with c > 1), else rounding; bracket_log10 is rigorous for the "
        "curve as given; each interval end is its curve's estimate widened by its error, never "
        "beyond the rigorous bracket",
    )


def statistic(aggregate: str, runs: int) -> str | None:
    """``"mean"``/``"median"`` when the aggregate is no order statistic, else ``None``."""
    if aggregate == "mean" and runs > 1:
        return "mean"
    if aggregate == "median" and runs % 2 == 0:
        return "median"
    return None


def int_option(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or int(value) < 1:
        raise InvalidInput(f"{name} must be an integer >= 1, got {value!r}", field=name)
    return int(value)
