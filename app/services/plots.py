"""The one figure-output path of every plot, and the ``v1`` curves of tables and ladders.

Every figure is drawn on a bare :class:`matplotlib.figure.Figure` (no pyplot, no screen) inside
:func:`figure_context`, which holds a lock (rcParams are process-global) and applies the rc of
the request's :class:`FigureOptions`; :func:`save` writes it as

* SVG with text kept as text (``svg.fonttype: none``: searchable, editable; a viewer supplies
  the font named in the ``font-family`` list),
* PDF with the fonts embedded as TrueType subsets (``pdf.fonttype: 42``),
* PNG at the options' ``dpi`` (recorded in its ``pHYs`` chunk).

The SVG id salt is fixed and the date and software stamps dropped, so identical input gives
identical bytes in every format.

Fonts: :data:`FONT_FAMILY` is a fallback list (matplotlib >= 3.6 falls back per glyph): DejaVu
Sans (matplotlib's own; Latin, Greek, Cyrillic, symbols), then Noto Sans CJK (Debian's
``fonts-noto-cjk``) for Chinese, Japanese and Korean names. A family not installed is left out;
:func:`missing_glyphs` names the characters no installed family draws (the API sends them in
the ``Absrank-Missing-Glyphs`` header), so a figure is always drawn and never silently wrong.

:func:`v1_plot` draws ``log10 v1(t)`` against ``t − f*`` on a logarithmic axis (``t`` itself on a
linear axis when ``f*`` is unknown: the paper's tail ``exp(t − y_1)/(N+1)`` is then a straight
line), the samples' range ``[y_1, y_N]`` shaded, the tails dashed (lower) and dotted (upper).
"""

from __future__ import annotations

import functools
import io
import math
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.domain.curves import TableCurve, V1Curve

_LOCK = threading.Lock()
FORMATS = ("svg", "pdf", "png")
MEDIA_TYPES = {"svg": "image/svg+xml", "pdf": "application/pdf", "png": "image/png"}
#: PNG resolution (dots per inch): default and bounds of the ``dpi`` option.
DEFAULT_DPI, MIN_DPI, MAX_DPI = 300, 50, 600
#: Bounds of the ``width`` and ``height`` options (inches).
MIN_INCHES, MAX_INCHES = 1, 20
#: Base font size (points): default and bounds of the ``font_size`` option.
DEFAULT_FONT_SIZE, MIN_FONT_SIZE, MAX_FONT_SIZE = 10, 5, 24
#: Font fallback list: Latin and Greek (DejaVu Sans), then CJK (Debian's fonts-noto-cjk).
FONT_FAMILY = ("DejaVu Sans", "Noto Sans CJK JP")
#: rcParams of every plot: a fixed SVG id salt (ids are otherwise random per process), text as
#: text in SVG, TrueType fonts embedded in PDF.
BASE_RC: dict[str, Any] = {
    "svg.hashsalt": "absrank",
    "svg.fonttype": "none",
    "pdf.fonttype": 42,
    "font.size": float(DEFAULT_FONT_SIZE),
}
#: Stamps left out of each format (dates and software versions would change the bytes).
_METADATA: dict[str, dict[str, None]] = {
    "svg": {"Date": None},
    "pdf": {"CreationDate": None, "ModDate": None, "Producer": None, "Creator": None},
    "png": {"Software": None},
}
#: Knots drawn per piece at most (evenly spaced in rank; the curve between is linear anyway).
MAX_DRAWN_KNOTS = 1500
#: Points of each drawn tail; the lower tail spans this many decades of ``t − f*`` below ``y_1``.
TAIL_POINTS, TAIL_DECADES = 200, 3.0
LN10 = math.log(10.0)


@dataclass(frozen=True)
class FigureOptions:
    """How a figure is written, as a request asks (hashable: part of cache keys).

    Attributes
    ----------
    dpi : int
        PNG resolution (SVG and PDF are vector: it does not change them).
    width, height : float or None
        Figure size in inches (``None``: the figure's own); the saved figure is then trimmed to
        its drawn content (0.1 in pad), so the file is about this size.
    font_size : float
        Base font size in points; titles and legends keep their proportion to it.
    """

    dpi: int = DEFAULT_DPI
    width: float | None = None
    height: float | None = None
    font_size: float = DEFAULT_FONT_SIZE

    def __post_init__(self) -> None:
        if not MIN_DPI <= self.dpi <= MAX_DPI:
            raise ValueError(f"dpi must be in [{MIN_DPI}, {MAX_DPI}]")
        for name in ("width", "height"):
            value = getattr(self, name)
            if value is not None and not MIN_INCHES <= value <= MAX_INCHES:
                raise ValueError(f"{name} must be in [{MIN_INCHES}, {MAX_INCHES}] inches")
        if not MIN_FONT_SIZE <= self.font_size <= MAX_FONT_SIZE:
            raise ValueError(f"font_size must be in [{MIN_FONT_SIZE}, {MAX_FONT_SIZE}] points")

    def size(self, width: float, height: float) -> tuple[float, float]:
        """The figure size: the options' where given, else the figure's own ``width, height``."""
        return (
            self.width if self.width is not None else width,
            self.height if self.height is not None else height,
        )

    def scaled(self, points: float) -> float:
        """A font size given for the default base size, scaled to ``font_size``."""
        return points * self.font_size / DEFAULT_FONT_SIZE

    def variant(self, fmt: str) -> str:
        """The ETag suffix telling these options apart: ``-<dpi>`` for PNG, then ``-w…``,
        ``-h…``, ``-f…`` for each option that differs from its default."""
        out = f"-{self.dpi}" if fmt == "png" else ""
        if self.width is not None:
            out += f"-w{self.width:g}"
        if self.height is not None:
            out += f"-h{self.height:g}"
        if self.font_size != DEFAULT_FONT_SIZE:
            out += f"-f{self.font_size:g}"
        return out

    def rc(self) -> dict[str, Any]:
        """The rcParams of a figure drawn with these options."""
        return BASE_RC | {"font.size": float(self.font_size), "font.family": list(font_families())}


DEFAULT_OPTIONS = FigureOptions()


@dataclass(frozen=True)
class Rendered:
    """A saved figure and the characters of its text no installed font draws.

    Attributes
    ----------
    content : bytes
    missing_glyphs : tuple of str
        Sorted, distinct; empty when every character has a glyph (see :func:`missing_glyphs`).
    warnings : tuple of str
        The codes of the warnings the figure states in its caption (e.g. ``low-power``).
    """

    content: bytes
    missing_glyphs: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    def header(self) -> dict[str, str]:
        """The ``Absrank-Missing-Glyphs`` header (``U+XXXX`` code points) and the
        ``Absrank-Warnings`` header (codes), each only when not empty."""
        out = {}
        if self.missing_glyphs:
            glyphs = " ".join(f"U+{ord(c):04X}" for c in self.missing_glyphs)
            out[MISSING_GLYPHS_HEADER] = glyphs
        if self.warnings:
            out[WARNINGS_HEADER] = " ".join(self.warnings)
        return out


MISSING_GLYPHS_HEADER = "Absrank-Missing-Glyphs"
WARNINGS_HEADER = "Absrank-Warnings"


@functools.lru_cache(maxsize=16)
def _coverage(family: str) -> frozenset[int] | None:
    """The code points the font matplotlib finds for ``family`` draws; ``None``: not installed."""
    from matplotlib import font_manager
    from matplotlib.ft2font import FT2Font

    try:
        path = font_manager.findfont(
            font_manager.FontProperties(family=family), fallback_to_default=False
        )
    except ValueError:
        return None
    return frozenset(FT2Font(path).get_charmap())


def font_families() -> tuple[str, ...]:
    """The families of :data:`FONT_FAMILY` that are installed (at least matplotlib's own)."""
    found = tuple(f for f in FONT_FAMILY if _coverage(f) is not None)
    return found or ("DejaVu Sans",)


def missing_glyphs(texts: Iterable[str]) -> tuple[str, ...]:
    """The characters of ``texts`` that no installed family of :data:`FONT_FAMILY` draws.

    Spaces, control and format characters are not drawn and never missing. Sorted, distinct.
    """
    covered = [c for f in font_families() if (c := _coverage(f)) is not None]
    chars = {ch for text in texts for ch in text}
    return tuple(
        sorted(
            ch
            for ch in chars
            if not ch.isspace()
            and unicodedata.category(ch) not in ("Cc", "Cf")
            and not any(ord(ch) in c for c in covered)
        )
    )


_PRELOADED = threading.Event()


def preload() -> None:
    """Import matplotlib and draw a tiny SVG once per process (its backend, font list and
    text engine warmed), so that a first figure request does not pay for them. Idempotent;
    the API calls it in a background thread at start (``preload_figures``)."""
    if _PRELOADED.is_set():
        return
    figure_bytes(lambda figure: figure(figsize=(1, 1)).add_subplot().figure, "svg", DEFAULT_OPTIONS)
    _PRELOADED.set()


@contextmanager
def figure_context(options: FigureOptions) -> Iterator[Any]:
    """Lock the process-wide rcParams, apply the options' rc, and yield :class:`Figure`.

    matplotlib is imported on first use (0.4 s): the API starts without it.
    """
    import matplotlib as mpl
    from matplotlib.figure import Figure

    rc_params = options.rc()  # valid rcParams names
    with _LOCK, mpl.rc_context(rc_params):  # type: ignore[arg-type]  # stubs want Literal keys
        yield Figure


def save(fig: Any, fmt: str, *, dpi: float, bbox_inches: str | None = "tight") -> bytes:
    """The figure's bytes in ``fmt`` (one of :data:`FORMATS`), without date or software stamps."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS}")
    buf = io.BytesIO()
    fig.savefig(
        buf,
        format=fmt,
        metadata=_METADATA[fmt],
        dpi=dpi,
        bbox_inches=bbox_inches,
        pad_inches=0.1,
    )
    return buf.getvalue()


def figure_bytes(draw: Callable[[Any], Any], fmt: str, options: FigureOptions) -> bytes:
    """Draw with ``draw(Figure) -> fig`` under the options' rc and return the saved bytes."""
    with figure_context(options) as figure:
        return save(draw(figure), fmt, dpi=options.dpi)


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
    series: Sequence[Series],
    *,
    f_opt: float | None,
    title: str,
    fmt: str,
    options: FigureOptions = DEFAULT_OPTIONS,
) -> bytes:
    """Draw ``log10 v1`` of one table (one series) or of a ladder (one series per level).

    Parameters
    ----------
    series : sequence of Series
        Level 0 (highest ``t``) first.
    f_opt : float or None
        ``f*``: the x axis is ``t − f*`` on a log scale; ``None``: ``t`` on a linear scale.
    title : str
    fmt : {"svg", "pdf", "png"}
    options : FigureOptions, optional
        Resolution (PNG), size (default 7 × 4.6 in) and base font size.

    Returns
    -------
    bytes
    """

    many = len(series) > MAX_LEGEND_LEVELS

    def draw(figure: Any) -> Any:
        fig = figure(figsize=options.size(7.0, 4.6))
        ax = fig.add_axes((0.11, 0.12, 0.74 if many else 0.86, 0.78))
        colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf"]
        if many:  # one colour per level from a sequential map, named by a colour bar
            from matplotlib import colormaps
            from matplotlib.colors import to_hex

            cmap = colormaps["viridis"].resampled(len(series))
            colors = [to_hex(cmap(i)) for i in range(len(series))]
        shown: set[str] = set()
        for i, s in enumerate(series):
            color = colors[i % len(colors)] if len(series) > 1 else "#1f77b4"
            for part, t in _grid(s, f_opt).items():
                ln_v = s.curve.evaluate(t)[0]
                ok = np.isfinite(ln_v)
                x = (t - f_opt) if f_opt is not None else t
                label = _PART[part] if len(series) == 1 else None
                if len(series) > 1 and not many and part == "samples" and s.label not in shown:
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
        ax.set_title(title, fontsize=options.scaled(9.0), loc="left")
        ax.grid(True, which="major", color="0.85", lw=0.5)
        ax.legend(loc="lower right", fontsize=options.scaled(8.0), frameon=False)
        if many:
            _level_bar(fig, series, colors, options)
        return fig

    return figure_bytes(draw, fmt, options)


#: A ladder with more levels than this names them on a colour bar, not one legend line each.
MAX_LEGEND_LEVELS = 8


def _level_bar(
    fig: Any, series: Sequence[Series], colors: list[str], options: FigureOptions
) -> None:
    """A colour bar of the ladder's levels, ticked with a few levels' region volumes."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import BoundaryNorm, ListedColormap

    n = len(series)
    norm = BoundaryNorm(np.arange(n + 1) - 0.5, n)
    cax = fig.add_axes((0.88, 0.12, 0.025, 0.78))
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=ListedColormap(colors)), cax=cax)
    step = max(1, n // 5)
    ticks = list(range(0, n, step))
    if n - 1 - ticks[-1] >= step / 2:  # the deepest level, unless its label would overlap
        ticks.append(n - 1)
    bar.set_ticks(ticks)
    bar.set_ticklabels(
        [f"{k}: 10^{series[k].ln_volume_fraction / LN10:.3g}" for k in ticks],
        fontsize=options.scaled(7.0),
    )
    bar.set_label("level: region volume fraction", fontsize=options.scaled(8.0))


@dataclass(frozen=True, eq=False)
class StepCurve:
    """One drawn step function (an ECDF or a profile): breakpoints and levels.

    Attributes
    ----------
    x : ndarray of float, shape (k,)
        Breakpoints, increasing.
    y : ndarray of float, shape (k + 1,)
        ``y[0]`` before ``x[0]``, ``y[i]`` between ``x[i-1]`` and ``x[i]``, ``y[k]`` after.
    label : str

    Drawn ``where="post"``: the level on ``(x[i], x[i+1])`` is ``y[i+1]`` whichever end of the
    interval is closed (the jump is vertical either way).
    """

    x: np.ndarray
    y: np.ndarray
    label: str


def step_plot(
    curves: Sequence[StepCurve],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    log_x: bool,
    x_range: tuple[float, float] | None,
    fmt: str,
    options: FigureOptions = DEFAULT_OPTIONS,
) -> bytes:
    """Draw step functions (runtime ECDFs, performance/data/accuracy profiles) as exact steps.

    Each curve is drawn from ``x_range[0]`` to ``x_range[1]`` (default: its breakpoints padded
    by one step) through its breakpoints, nothing interpolated.
    """

    def draw(figure: Any) -> Any:
        fig = figure(figsize=options.size(6.0, 4.0))
        ax = fig.add_axes((0.12, 0.13, 0.62, 0.77))
        xs = np.concatenate([c.x for c in curves if c.x.size] or [np.array([1.0])])
        lo, hi = x_range if x_range is not None else (float(xs.min()), float(xs.max()))
        if not lo < hi:
            lo, hi = (lo / 2, hi * 2) if log_x and lo > 0 else (lo - 1, hi + 1)
        styles = _distinct_styles(len(curves))
        for c, style in zip(curves, styles, strict=True):
            x = np.concatenate(([lo], c.x[(c.x > lo) & (c.x < hi)], [hi]))
            y = c.y[np.searchsorted(c.x, x, side="right")]
            ax.step(x, y, where="post", lw=1.4, label=c.label, **style)
        if log_x:
            ax.set_xscale("log")
        ax.set_xlim(lo, hi)
        ax.set_ylim(-0.02, 1.02)
        _finish(ax, xlabel, ylabel, title, options)
        return fig

    return figure_bytes(draw, fmt, options)


def _finish(ax: Any, xlabel: str, ylabel: str, title: str, options: FigureOptions) -> None:
    """The labels, title, grid and legend (right of the axes) of a curves figure."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=options.scaled(9.0), loc="left")
    ax.grid(True, which="major", color="0.85", lw=0.5)
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.02, 1.0),
        fontsize=options.scaled(8.0),
        frameon=False,
    )


@dataclass(frozen=True, eq=False)
class BandCurve:
    """A median line with a band (e.g. quartiles) over budgets."""

    x: np.ndarray
    middle: np.ndarray
    low: np.ndarray
    high: np.ndarray
    label: str


def _distinct_styles(n: int) -> list[dict[str, str]]:
    """Line styles that keep ``n`` curves apart: matplotlib's 10 default colours alone up to
    10 curves (nothing set), then each colour again with a dashed, dotted, dash-dot line."""
    if n <= 10:
        return [{} for _ in range(n)]
    dashes = ("-", "--", ":", "-.")
    return [{"color": f"C{i % 10}", "linestyle": dashes[(i // 10) % 4]} for i in range(n)]


def band_plot(
    curves: Sequence[BandCurve],
    *,
    xlabel: str,
    ylabel: str,
    title: str,
    log_y: bool,
    fmt: str,
    options: FigureOptions = DEFAULT_OPTIONS,
) -> bytes:
    """Draw medians over budgets (log x axis) with their bands; ``nan`` points are left out."""

    def draw(figure: Any) -> Any:
        fig = figure(figsize=options.size(6.0, 4.0))
        ax = fig.add_axes((0.12, 0.13, 0.62, 0.77))
        styles = _distinct_styles(len(curves))
        for c, style in zip(curves, styles, strict=True):
            ok = np.isfinite(c.middle) & (c.middle > 0 if log_y else True)
            style = {"linestyle": "-", **style}
            (line,) = ax.plot(c.x[ok], c.middle[ok], lw=1.4, label=c.label, **style)
            band = np.isfinite(c.low) & np.isfinite(c.high) & (c.low > 0 if log_y else True)
            ax.fill_between(c.x[band], c.low[band], c.high[band], color=line.get_color(), alpha=0.2)
        ax.set_xscale("log")
        if log_y:
            ax.set_yscale("log")
        _finish(ax, xlabel, ylabel, title, options)
        return fig

    return figure_bytes(draw, fmt, options)
