"""Plots of ``v1`` curves (tables, ladders) and the deterministic matplotlib setup of all plots.

Every figure is drawn on a bare :class:`matplotlib.figure.Figure` (the Agg canvas for PNG, the
SVG backend for SVG: no pyplot, no screen) inside :func:`figure_bytes`, which holds a lock
(rcParams are process-global), fixes the SVG id salt and drops the date and software stamps, so
identical input gives identical bytes.

:func:`v1_plot` draws ``log10 v1(t)`` against ``t − f*`` on a logarithmic axis (``t`` itself on a
linear axis when ``f*`` is unknown: the paper's tail ``exp(t − y_1)/(N+1)`` is then a straight
line), the samples' range ``[y_1, y_N]`` shaded, the tails dashed (lower) and dotted (upper).
"""

from __future__ import annotations

import io
import math
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.domain.curves import TableCurve, V1Curve

_LOCK = threading.Lock()
#: rcParams of every plot: a fixed SVG id salt (ids are otherwise random per process).
BASE_RC: dict[str, Any] = {"svg.hashsalt": "absrank", "font.size": 10.0}
#: v_f plots keep text as text in SVG (searchable, selectable; a viewer supplies the font).
TEXT_RC: dict[str, Any] = BASE_RC | {"svg.fonttype": "none"}
FORMATS = ("svg", "png")
#: Knots drawn per piece at most (evenly spaced in rank; the curve between is linear anyway).
MAX_DRAWN_KNOTS = 1500
#: Points of each drawn tail; the lower tail spans this many decades of ``t − f*`` below ``y_1``.
TAIL_POINTS, TAIL_DECADES = 200, 3.0
LN10 = math.log(10.0)


@contextmanager
def figure_context(rc: Mapping[str, Any] = BASE_RC) -> Iterator[Any]:
    """Lock the process-wide rcParams, apply ``rc``, and yield :class:`Figure`.

    matplotlib is imported on first use (0.4 s): the API starts without it.
    """
    import matplotlib as mpl
    from matplotlib.figure import Figure

    rc_params = dict(rc)  # valid rcParams names (BASE_RC and its callers')
    with _LOCK, mpl.rc_context(rc_params):  # type: ignore[arg-type]  # stubs want Literal keys
        yield Figure


def save(fig: Any, fmt: str, *, dpi: float, bbox_inches: str | None = "tight") -> bytes:
    """The figure's bytes, without date (SVG) or software (PNG) stamps."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    buf = io.BytesIO()
    meta = {"Date": None} if fmt == "svg" else {"Software": None}
    fig.savefig(buf, format=fmt, metadata=meta, dpi=dpi, bbox_inches=bbox_inches, pad_inches=0.1)
    return buf.getvalue()


def figure_bytes(
    draw: Callable[[Any], Any], fmt: str, *, dpi: float, rc: Mapping[str, Any]
) -> bytes:
    """Draw with ``draw(Figure) -> fig`` under ``rc`` and return the saved bytes."""
    with figure_context(rc) as figure:
        return save(draw(figure), fmt, dpi=dpi)


@dataclass(frozen=True, eq=False)
class Series:
    """One drawn piece of a ``v1`` curve.

    Attributes
    ----------
    curve : V1Curve
        Evaluates ``ln v1`` (for a ladder: the combined curve).
    model : TableCurve
        The table model of the piece (its samples' range and tail limits).
    t_from, t_below : float
        The piece serves ``t_from <= t < t_below``.
    ln_volume_fraction : float
        ``ln`` of the piece's volume fraction (0 for a single table; shown in the label).
    label : str
    """

    curve: V1Curve
    model: TableCurve
    t_from: float
    t_below: float
    ln_volume_fraction: float
    label: str


def _grid(s: Series, f_opt: float | None) -> dict[str, np.ndarray]:
    """``t`` points of a piece per part: ``lower`` tail, ``samples``, ``upper`` tail."""
    m = s.model
    limit, y_n = m.lower.limit, float(m.values[-1])
    step = max(1, math.ceil(m.values.size / MAX_DRAWN_KNOTS))
    knots = np.unique(np.concatenate((m.values[::step], [limit, y_n])))
    parts: dict[str, np.ndarray] = {"samples": knots[(knots >= limit) & (knots <= y_n)]}
    if f_opt is not None and limit > f_opt:
        e_top = limit - f_opt
        e = np.geomspace(e_top * 10.0 ** (-TAIL_DECADES), e_top, TAIL_POINTS)
        parts["lower"] = f_opt + e[:-1]
    elif f_opt is None:
        width = max(y_n - float(m.values[0]), 1.0)
        parts["lower"] = np.linspace(limit - 0.1 * width, limit, TAIL_POINTS)[:-1]
    if m.upper.kind == "linear-to-f_max" and m.upper.f_max is not None and m.upper.f_max > y_n:
        end = m.upper.f_max
    else:
        end = y_n + (y_n - (f_opt if f_opt is not None else float(m.values[0])))
    parts["upper"] = np.linspace(y_n, end, TAIL_POINTS)[1:]
    out = {}
    for name, t in parts.items():
        t = t[(t >= s.t_from) & (t < s.t_below)]
        if f_opt is not None:
            t = t[t > f_opt]
        if t.size:
            out[name] = t
    return out


_STYLE = {"samples": "-", "lower": "--", "upper": ":"}
_PART = {"samples": "Eq. 28 on the knots", "lower": "lower tail", "upper": "upper tail"}


def v1_plot(
    series: Sequence[Series], *, f_opt: float | None, title: str, fmt: str, dpi: float
) -> bytes:
    """Draw ``log10 v1`` of one table (one series) or of a ladder (one series per level).

    Parameters
    ----------
    series : sequence of Series
        Level 0 (highest ``t``) first.
    f_opt : float or None
        ``f*``: the x axis is ``t − f*`` on a log scale; ``None``: ``t`` on a linear scale.
    title : str
    fmt : {"svg", "png"}
    dpi : float
        Resolution of a PNG (SVG is vector; the value only sets its nominal size).

    Returns
    -------
    bytes
    """

    def draw(figure: Any) -> Any:
        fig = figure(figsize=(7.0, 4.6))
        ax = fig.add_axes((0.11, 0.12, 0.86, 0.78))
        colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
        shown: set[str] = set()
        for i, s in enumerate(series):
            color = colors[i % len(colors)] if len(series) > 1 else "#1f77b4"
            for part, t in _grid(s, f_opt).items():
                ln_v = s.curve.evaluate(t)[0]
                ok = np.isfinite(ln_v)
                x = (t - f_opt) if f_opt is not None else t
                label = _PART[part] if len(series) == 1 else None
                if len(series) > 1 and part == "samples" and s.label not in shown:
                    label = s.label
                    shown.add(s.label)
                ax.plot(x[ok], ln_v[ok] / LN10, _STYLE[part], color=color, lw=1.4, label=label)
            if len(series) > 1 and math.isfinite(s.t_from) and f_opt is not None:
                ax.axvline(s.t_from - f_opt, color="gray", lw=0.6, ls=":")
        if len(series) == 1:
            m = series[0].model
            lo, hi = float(m.values[0]), float(m.values[-1])
            if f_opt is not None:
                lo, hi = lo - f_opt, hi - f_opt
            if hi > 0 or f_opt is None:
                left = lo if lo > 0 or f_opt is None else hi * 1e-300
                ax.axvspan(
                    left,
                    hi,
                    facecolor="0.9",
                    edgecolor="0.75",
                    zorder=0,
                    label="samples [y_1, y_N]",
                )
        else:
            ax.plot([], [], "--", color="black", lw=1.0, label="lower tail of the deepest level")
        if f_opt is not None:
            ax.set_xscale("log")
            ax.set_xlabel(f"t − f*  (f* = {f_opt:.10g})")
        else:
            ax.set_xlabel("t  (f* unknown: linear axis)")
        ax.set_ylabel("log10 v1(t)")
        ax.set_title(title, fontsize=9.0, loc="left")
        ax.grid(True, which="major", color="0.85", lw=0.5)
        ax.legend(loc="lower right", fontsize=8.0, frameon=False)
        return fig

    return figure_bytes(draw, fmt, dpi=dpi, rc=TEXT_RC)
