"""Critical-difference diagrams (Demšar 2006, Fig. 1–2) as SVG, PDF, PNG, from cliques only.

The diagram never decides significance itself: it draws the average ranks and the cliques
(groups of algorithms with no significant difference) that the post-hoc result already holds,
so the picture and the numbers cannot disagree.

Output goes through :mod:`app.services.plots` (text kept as text in SVG, fonts embedded in PDF,
PNG at 300 dpi by default, Latin/Greek/CJK font fallback) and is deterministic: the same input
gives the same bytes.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from app.services import plots

if TYPE_CHECKING:
    from matplotlib.axes import Axes


def _nice_step(span: int, most: int = 10) -> int:
    """The smallest 1, 2 or 5 × 10^n step giving at most ``most`` intervals over ``span``."""
    scale = 1
    while True:
        for m in (1, 2, 5):
            if span <= most * m * scale:
                return m * scale
        scale *= 10


@dataclass(frozen=True)
class Axis:
    """The scale the algorithms are placed on: ``lo`` (drawn left: best) to ``hi``, with
    ``ticks`` (values and their labels) and a ``label`` under the axis (none for ranks)."""

    lo: float
    hi: float
    ticks: tuple[tuple[float, str], ...]
    label: str = ""

    @classmethod
    def ranks(cls, k: int) -> Axis:
        """Average ranks 1..k (Demšar's axis)."""
        if k <= 20:
            return cls(1.0, float(max(k, 2)), tuple((float(r), str(r)) for r in range(1, k + 1)))
        step = _nice_step(k - 1)  # 1 and round ranks: labels that never run together
        ticks = [1, *range(step, k + 1, step)]
        return cls(1.0, float(k), tuple((float(r), str(r)) for r in ticks))

    @classmethod
    def decades(cls, values: Sequence[float], label: str) -> Axis:
        """Whole decades around ``values`` (``log10`` values; ``-inf`` is drawn at the left
        end, one decade below the finite ones)."""
        finite = [x for x in values if math.isfinite(x)] or [0.0]
        lo, hi = math.floor(min(finite)), math.ceil(max(finite))
        if any(not math.isfinite(x) for x in values):
            lo -= 1
        if hi == lo:
            lo, hi = lo - 1, hi + 1
        step = _nice_step(hi - lo)
        first = -(-lo // step) * step  # round decades: multiples of a 1-2-5 step
        ticks = tuple((float(t), str(t)) for t in range(first, hi + 1, step))
        return cls(float(lo), float(hi), ticks, label)

    def x(self, value: float) -> float:
        """The figure's x (2 at ``lo`` to 8 at ``hi``); ``-inf`` at ``lo``."""
        if not math.isfinite(value):
            value = self.lo if value < 0 else self.hi
        return 2.0 + 6.0 * (value - self.lo) / max(self.hi - self.lo, 1e-300)


def cd_diagram_svg(
    names: Sequence[str],
    average_ranks: Sequence[float],
    cliques: Sequence[Sequence[int]],
    *,
    critical_difference: float | None,
    title: str,
    fmt: str = "svg",
    control: int | None = None,
    options: plots.FigureOptions = plots.DEFAULT_OPTIONS,
    axis: Axis | None = None,
    note: str = "",
) -> plots.Rendered:
    """Draw a CD diagram.

    Parameters
    ----------
    names : sequence of str, length k
        Algorithm names.
    average_ranks : sequence of float, length k
        Average ranks, 1 = best, drawn on an axis from 1 (left) to k.
    cliques : sequence of sequence of int
        Groups of algorithm indices not significantly different (from the post-hoc result);
        each is drawn as a thick bar joining its members.
    critical_difference : float or None
        Drawn as a reference interval above the axis when given (Nemenyi, Bonferroni–Dunn).
    title : str
        Caption (method, α, N).
    fmt : {"svg", "pdf", "png"}, optional
        Output format.
    control : int or None, optional
        Index of the control of a vs-control post-hoc: its label is marked "(control)", and the
        one clique is the control with the algorithms not significantly different from it.
    options : FigureOptions, optional
        Resolution (PNG), size (default 7 in wide, as tall as the rows need) and font size.
    axis : Axis, optional
        The scale ``average_ranks`` are on (default: ranks 1..k, :meth:`Axis.ranks`); the
        absolute variant places mean ``log10 v`` on :meth:`Axis.decades`.
    note : str, optional
        A second caption line (a warning), drawn under the title.

    Returns
    -------
    plots.Rendered
        The document, and the characters of the labels and title no installed font draws.
    """
    k = len(names)
    order = sorted(range(k), key=lambda i: (average_ranks[i], i))
    left = order[: math.ceil(k / 2)]
    right = order[math.ceil(k / 2) :]
    rows = max(len(left), len(right))
    note_lines = textwrap.wrap(note, 100)
    note_height = 0.2 * len(note_lines)
    height = 1.6 + 0.28 * rows + 0.18 * len(cliques) + note_height
    scale = Axis.ranks(k) if axis is None else axis
    labels = [_shown(n) + (" (control)" if i == control else "") for i, n in enumerate(names)]
    with plots.figure_context(options) as figure:
        fig = figure(figsize=options.size(7.0, height))
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_axis_off()
        ax.set_xlim(-0.5, 10.5)
        ax.set_ylim(height, 0.0)

        x_of = scale.x
        _axis(ax, scale)
        if critical_difference is not None and math.isfinite(critical_difference):
            cd = min(critical_difference, k - 1)
            ax.plot([x_of(1), x_of(1 + cd)], [0.35, 0.35], color="black", linewidth=1.2)
            ax.text(x_of(1 + cd / 2), 0.28, f"CD = {critical_difference:.3f}", ha="center")
        y_cliques = 1.05
        for n, clique in enumerate(cliques):
            ranks = [average_ranks[i] for i in clique]
            y = y_cliques + 0.18 * n
            ax.plot(
                [x_of(min(ranks)) - 0.05, x_of(max(ranks)) + 0.05],
                [y, y],
                color="black",
                linewidth=3.0,
                solid_capstyle="round",
            )
        y0 = y_cliques + 0.18 * len(cliques) + 0.2
        for row, i in enumerate(left):
            _label(ax, x_of(average_ranks[i]), y0 + 0.28 * row, 1.6, labels[i], average_ranks[i])
        for row, i in enumerate(reversed(right)):
            _label(ax, x_of(average_ranks[i]), y0 + 0.28 * row, 8.4, labels[i], average_ranks[i])
        if note_lines:
            ax.text(
                5.0,
                height - 0.1,
                "\n".join(note_lines),
                ha="center",
                fontsize=options.scaled(8.0),
                color="darkred",
                parse_math=False,
            )
        ax.text(
            5.0,
            height - 0.1 - note_height,
            title,
            ha="center",
            fontsize=options.scaled(8.0),
            color="dimgray",
            parse_math=False,
        )
        content = plots.save(fig, fmt, dpi=options.dpi)
    return plots.Rendered(content, plots.missing_glyphs([*labels, title, note]))


def _axis(ax: Axes, axis: Axis) -> None:
    x_of: Callable[[float], float] = axis.x
    ax.plot([x_of(axis.lo), x_of(axis.hi)], [0.8, 0.8], color="black", linewidth=1.0)
    for value, text in axis.ticks:
        ax.plot([x_of(value), x_of(value)], [0.8, 0.72], color="black", linewidth=1.0)
        ax.text(x_of(value), 0.68, text, ha="center", va="bottom")
    if axis.label:
        ax.text(x_of(axis.hi) + 0.3, 0.8, axis.label, ha="left", va="center", parse_math=False)


def _label(ax: Axes, x: float, y: float, x_text: float, name: str, rank: float) -> None:
    ax.plot([x, x, x_text], [0.8, y, y], color="gray", linewidth=0.8)
    ha = "right" if x_text < x else "left"
    pad = -0.05 if ha == "right" else 0.05
    # parse_math=False: names are user text, never mathtext ("$x$" stays "$x$")
    ax.text(x_text + pad, y, f"{name} ({rank:.2f})", ha=ha, va="center", parse_math=False)


MAX_LABEL = 32


def _shown(name: str) -> str:
    """A name as drawn: at most ``MAX_LABEL`` characters (the full names are in the JSON)."""
    return name if len(name) <= MAX_LABEL else name[: MAX_LABEL - 1] + "…"
