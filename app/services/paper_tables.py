"""Tables for papers: one typed table, rendered as CSV, GitHub Markdown or booktabs LaTeX.

A :class:`PaperTable` (frozen) is built from an answer (:func:`comparison_table` here;
:mod:`app.services.leaderboard_tables` and :mod:`app.services.stattest_tables` for the
leaderboards and the tests, whose rows are algorithms: :class:`Column`, :func:`best`,
:func:`column_rows`) and rendered by :func:`render` in one of :data:`FORMATS`; every route that
offers tables uses these two steps (and ``app.api.paper_formats``), so the formats cannot differ
between resources.

Rules (docs/METHODS.md, "Tables for papers"):

* rows are the problems, columns the algorithms; a cell is the reduced value (the comparison's
  ``matrix``); the best (lowest) value of each problem is **bold** (every tied best);
* the row ``average rank`` (Friedman) marks with a dagger (``†``; ``\\dagger`` in LaTeX) each
  algorithm significantly worse than the best-ranked one by the comparison's post-hoc at its
  alpha; the rows ``log10 v <problem>`` give the absolute ranks, and ``mean log10 v`` marks with
  a double dagger (``‡``) each algorithm significantly worse than the best by the absolute
  ranks' adjusted paired Wilcoxon tests; a legend line says so;
* numbers are written with 4 significant digits (``%.4g``) in Markdown and LaTeX and in full
  (``repr``) in CSV, so that CSV parses back to the JSON's floats;
* provenance: a ``% provenance: ...`` line in LaTeX, an HTML comment in Markdown, and the
  ``X-Absrank-Provenance`` header for every format (CSV has no comment syntax in RFC 4180).

Identical input gives identical bytes (no dates, fixed formats, ``\\n`` line ends except the
``\\r\\n`` RFC 4180 asks of CSV).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from app.errors import AppError, InvalidInput

#: The formats a table is offered in, by ``?format=`` name and by media type.
FORMATS: Final = ("csv", "markdown", "latex")
MEDIA_TYPES: Final = {
    "csv": "text/csv",
    "markdown": "text/markdown",
    "latex": "application/x-latex",
}
FORMAT_OF_MEDIA: Final = {v: k for k, v in MEDIA_TYPES.items()}
JSON_MEDIA: Final = "application/json"
DAGGER, DDAGGER = "†", "‡"
_LATEX_MARK = {DAGGER: r"$^\dagger$", DDAGGER: r"$^\ddagger$"}


class NotAcceptable(AppError):
    """None of the media types the Accept header lists is offered here."""

    status = 406
    title = "Not acceptable"
    type = "not-acceptable"


@dataclass(frozen=True)
class Cell:
    """One table cell.

    Attributes
    ----------
    value : float, int or None
        The number (None: empty cell); an ``int`` (a count, a budget) is written exactly.
    bold : bool
        The best value of its row.
    mark : str
        ``""``, :data:`DAGGER` or :data:`DDAGGER` (see the module's rules).
    """

    value: float | int | None
    bold: bool = False
    mark: str = ""


@dataclass(frozen=True)
class Row:
    """A labelled row of cells, one per column."""

    label: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class PaperTable:
    """A table as a paper shows it.

    Attributes
    ----------
    stub : str
        Header of the label column.
    columns : tuple of str
        Column headers (algorithm names).
    blocks : tuple of tuple of Row
        Groups of rows, separated by a rule in LaTeX.
    legend : tuple of str
        Lines explaining bold and the marks.
    provenance : str
        One line: which answer the table shows.
    """

    stub: str
    columns: tuple[str, ...]
    blocks: tuple[tuple[Row, ...], ...]
    legend: tuple[str, ...]
    provenance: str


def _q_of(params: Sequence[str]) -> float:
    for p in params:
        if p.startswith("q="):
            try:
                return float(p[2:])
            except ValueError:
                return 0.0
    return 1.0


def _media_ranges(accept: str) -> list[tuple[float, int, str]]:
    """``(−q, position, media type)`` of each range of an Accept header with q > 0."""
    out = []
    for n, part in enumerate(accept.split(",")):
        media, *params = (p.strip() for p in part.split(";"))
        q = _q_of(params)
        if q > 0 and media:
            out.append((-q, n, media.lower()))
    return out


def negotiate(accept: str | None, fmt: str | None, offered: Sequence[str] = FORMATS) -> str:
    """The format asked for: ``"json"`` or one of ``offered``.

    ``fmt`` (the ``format`` query parameter) wins over ``accept``; an Accept header is read as a
    list of media ranges (``q=0`` excluded; among listed types the highest q, then the first);
    ``*/*`` and ``application/*`` give JSON.

    Raises
    ------
    InvalidInput
        ``fmt`` is not ``json`` or one of ``offered`` (``field="format"``).
    NotAcceptable
        No listed media type is offered (406).
    """
    if fmt is not None:
        if fmt != "json" and fmt not in offered:
            raise InvalidInput(
                f"format must be one of json, {', '.join(offered)}; got {fmt[:40]!r}",
                field="format",
            )
        return fmt
    if not accept:
        return "json"
    ranges = sorted(_media_ranges(accept))
    for _q, _n, media in ranges:
        if media in (JSON_MEDIA, "*/*", "application/*", "application/problem+json"):
            return "json"
        if media in FORMAT_OF_MEDIA and FORMAT_OF_MEDIA[media] in offered:
            return FORMAT_OF_MEDIA[media]
        text = next((f for f in offered if MEDIA_TYPES[f].startswith("text/")), None)
        if media == "text/*" and text is not None:
            return text
    listed = ", ".join([JSON_MEDIA, *(MEDIA_TYPES[f] for f in offered)])
    raise NotAcceptable(
        f"Accept {accept[:80]!r} lists no media type offered here; offered: {listed}",
        field="accept",
    )


# --- building ----------------------------------------------------------------------------------


def _number(x: Any) -> float | None:
    if x is None:
        return None
    if isinstance(x, str):  # "Infinity" / "-Infinity" in JSON answers
        return {"Infinity": math.inf, "-Infinity": -math.inf}.get(x)
    return float(x)


def _best_row(label: str, values: Sequence[float | None], marks: Sequence[str] = ()) -> Row:
    present = [v for v in values if v is not None and not math.isnan(v)]
    best = min(present) if present else None
    return Row(
        label,
        tuple(
            Cell(v, bold=v is not None and v == best, mark=marks[i] if marks else "")
            for i, v in enumerate(values)
        ),
    )


@dataclass(frozen=True)
class Column:
    """One column of a table whose rows are algorithms (leaderboards, tests).

    Attributes
    ----------
    header : str
    values : tuple of (float, int or None)
        One per row.
    bold : tuple of bool
        Per row, whether the value is the column's best (empty: none bold); see :func:`best`.
    marks : tuple of str
        Per row, ``""``, :data:`DAGGER` or :data:`DDAGGER` (empty: none).
    """

    header: str
    values: tuple[float | int | None, ...]
    bold: tuple[bool, ...] = ()
    marks: tuple[str, ...] = ()


def best(
    values: Sequence[float | int | None],
    *,
    highest: bool = False,
    among: Sequence[bool] | None = None,
) -> tuple[bool, ...]:
    """Per value, whether it is the best (the lowest, or the highest with ``highest``; every
    tied best) of the values present (not None, not NaN) and, with ``among``, eligible."""
    ok = [
        v is not None and not math.isnan(v) and (among is None or among[i])
        for i, v in enumerate(values)
    ]
    present = [v for v, keep in zip(values, ok, strict=True) if keep and v is not None]
    if not present:
        return (False,) * len(values)
    target = max(present) if highest else min(present)
    return tuple(keep and v == target for v, keep in zip(values, ok, strict=True))


def column_rows(labels: Sequence[str], columns: Sequence[Column]) -> tuple[Row, ...]:
    """Rows ``labels`` (one per algorithm) of ``columns``, transposed into :class:`Row` s."""
    return tuple(
        Row(
            label,
            tuple(
                Cell(
                    c.values[i],
                    bold=bool(c.bold) and c.bold[i],
                    mark=c.marks[i] if c.marks else "",
                )
                for c in columns
            ),
        )
        for i, label in enumerate(labels)
    )


def provenance_line(what: str, provenance: Mapping[str, Any]) -> str:
    """The table's provenance: service version, what the answer is, the request's SHA-256."""
    return (
        f"absrank {provenance.get('service_version', '')} {what} "
        f"request_sha256 {provenance.get('request_sha256', '')}"
    )


def pair_significance(family: Mapping[str, Any], k: int) -> list[tuple[int, int, bool]]:
    """``(i, j, significant)`` per pair of a compact family (``relative.posthoc.pairs``, or
    ``absolute.pairwise`` with its ``adjusted`` group)."""
    group = family.get("adjusted", family)
    if family["order"] == "listed":
        ii, jj = list(family["i"]), list(family["j"])
    else:
        ii = [i for i in range(k) for _ in range(i + 1, k)]
        jj = [j for i in range(k) for j in range(i + 1, k)]
    out = []
    for p, code in enumerate(group["code"]):
        if "significant" in group["constant"]:
            sig = bool(group["constant"]["significant"])
        else:
            sig = bool(group["distinct"]["significant"][code if code >= 0 else -1 - code])
        out.append((ii[p], jj[p], sig))
    return out


def worse_than_best(
    scores: Sequence[float | None], family: Mapping[str, Any], k: int
) -> tuple[int | None, tuple[bool, ...]]:
    """The best algorithm by ``scores`` (lowest; first on ties) and, per algorithm, whether the
    family says it differs significantly from that best (the best itself: False)."""
    present = [(s, i) for i, s in enumerate(scores) if s is not None]
    if not present:
        return None, (False,) * k
    best = min(present)[1]
    worse = [False] * k
    for i, j, sig in pair_significance(family, k):
        if sig and best in (i, j):
            worse[j if i == best else i] = True
    return best, tuple(worse)


def comparison_table(answer: Mapping[str, Any]) -> PaperTable:
    """The paper table of a comparison's full answer (``view=full``: it needs ``matrix``)."""
    algorithms = tuple(answer["algorithms"])
    problems = list(answer["problems"])
    k = len(algorithms)
    options = answer["options"]
    values = [
        _best_row(p, [_number(x) for x in row])
        for p, row in zip(problems, answer["matrix"], strict=True)
    ]
    rel = answer["relative"]
    post = rel["posthoc"]
    ranks = [float(r) for r in rel["average_ranks"]]
    _b, worse = worse_than_best(ranks, post["pairs"], k)
    rank_row = _best_row("average rank", ranks, [DAGGER if w else "" for w in worse])
    blocks: list[tuple[Row, ...]] = [tuple(values), (rank_row,)]
    legend = [
        f"Cells: {options['reduction']} of the runs; bold: best per problem (lowest).",
        f"{DAGGER}: average rank significantly worse than the best-ranked algorithm "
        f"({post['procedure']} post-hoc, alpha = {post['alpha']}).",
    ]
    ab = answer["absolute"]
    if ab.get("status") == "complete" and ab.get("log10_v") is not None:
        logs = [
            _best_row(f"log10 v {p}", [_number(x) for x in row])
            for p, row in zip(problems, ab["log10_v"], strict=True)
        ]
        mean = [_number(x) for x in ab["mean_log10_v"]]
        marks = [""] * k
        if ab.get("pairwise") is not None:
            _b, worse_abs = worse_than_best(mean, ab["pairwise"], k)
            marks = [DDAGGER if w else "" for w in worse_abs]
            legend.append(
                f"{DDAGGER}: mean log10 v significantly worse than the best by paired Wilcoxon "
                f"tests on v ({ab['pairwise']['adjustment']}-adjusted, alpha = {post['alpha']})."
            )
        blocks.append((*logs, _best_row("mean log10 v", mean, marks)))
        legend.append("log10 v: absolute rank (lower is better; v = 0 shown empty).")
    provenance = provenance_line(f"comparison {answer['id']}", answer.get("provenance", {}))
    return PaperTable("problem", algorithms, tuple(blocks), tuple(legend), provenance)


# --- rendering ---------------------------------------------------------------------------------

_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",  # OT1 prints < and > as ¡ and ¿
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    """``text`` as LaTeX text: the ten special characters and ``<``, ``>`` escaped, the rest kept
    (unicode names stay as they are: compile with a UTF-8 engine or inputenc)."""
    return "".join(_LATEX_ESCAPES.get(c, c) for c in text)


def markdown_escape(text: str) -> str:
    """``text`` as a GitHub table cell: ``|`` and ``\\`` escaped, line breaks as spaces."""
    text = text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")
    # Markdown renders inline HTML: a name is text, never markup
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _short(v: float | int | None) -> str:
    if isinstance(v, int):
        return str(v)
    if v is None or math.isnan(v):
        return ""
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:.4g}"


def cell_text(v: float | int | None) -> str:
    """A cell's number as the Markdown and HTML tables print it (4 significant digits)."""
    return _short(v)


def _full(v: float | int | None) -> str:
    if isinstance(v, int):
        return str(v)
    if v is None or math.isnan(v):
        return ""
    return repr(float(v))


def render_csv(table: PaperTable) -> bytes:
    """RFC 4180 CSV (``\\r\\n``, quoted as needed): header ``stub,columns…``, full precision
    (parses back to the JSON's floats); a row with marks is followed by the row
    ``<label> <mark>`` of 1 (marked) and 0, so every value cell stays a number."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\r\n")
    w.writerow([table.stub, *table.columns])
    for block in table.blocks:
        for row in block:
            w.writerow([row.label, *(_full(c.value) for c in row.cells)])
            if any(c.mark for c in row.cells):
                mark = next(c.mark for c in row.cells if c.mark)
                w.writerow([f"{row.label} {mark}", *(str(int(bool(c.mark))) for c in row.cells)])
    return out.getvalue().encode()


def render_markdown(table: PaperTable) -> bytes:
    """A GitHub pipe table: bold as ``**x**``, marks appended, legend and provenance below."""
    lines = [f"<!-- provenance: {table.provenance.replace('--', '- -')} -->"]
    head = [table.stub, *table.columns]
    lines.append("| " + " | ".join(markdown_escape(h) for h in head) + " |")
    lines.append("|" + "|".join([" --- "] + [" ---: "] * len(table.columns)) + "|")
    for block in table.blocks:
        for row in block:
            cells = []
            for c in row.cells:
                text = _short(c.value)
                if text and c.bold:
                    text = f"**{text}**"
                cells.append(text + c.mark)
            lines.append("| " + " | ".join([markdown_escape(row.label), *cells]) + " |")
    lines.append("")
    lines.extend(
        f"{line}  " if i < len(table.legend) - 1 else line for i, line in enumerate(table.legend)
    )
    return ("\n".join(lines) + "\n").encode()


def render_latex(table: PaperTable) -> bytes:
    """A booktabs ``tabular`` (``\\usepackage{booktabs}``): ``\\toprule``, a ``\\midrule``
    between blocks, ``\\bottomrule``; bold as ``\\textbf``, marks as ``$^\\dagger$``."""
    lines = [f"% provenance: {table.provenance}"]
    lines.append(r"\begin{tabular}{l" + "r" * len(table.columns) + "}")
    lines.append(r"\toprule")
    lines.append(" & ".join(latex_escape(h) for h in (table.stub, *table.columns)) + r" \\")
    for block in table.blocks:
        lines.append(r"\midrule")
        for row in block:
            cells = []
            for c in row.cells:
                text = _short(c.value)
                if text.startswith("-"):
                    text = "$-$" + text[1:]
                if text and c.bold:
                    text = rf"\textbf{{{text}}}"
                cells.append(text + _LATEX_MARK.get(c.mark, ""))
            lines.append(" & ".join([latex_escape(row.label), *cells]) + r" \\")
    lines.append(r"\bottomrule")
    span = len(table.columns) + 1
    for line in table.legend:
        text = latex_escape(line).replace(DAGGER, r"$^\dagger$").replace(DDAGGER, r"$^\ddagger$")
        lines.append(rf"\multicolumn{{{span}}}{{l}}{{\footnotesize {text}}} \\")
    lines.append(r"\end{tabular}")
    return ("\n".join(lines) + "\n").encode()


_RENDERERS = {"csv": render_csv, "markdown": render_markdown, "latex": render_latex}


def render(table: PaperTable, fmt: str) -> bytes:
    """``table`` in ``fmt`` (one of :data:`FORMATS`), as bytes (UTF-8)."""
    return _RENDERERS[fmt](table)


def headers(table: PaperTable) -> dict[str, str]:
    """The response headers of a rendered table (provenance, ASCII-safe)."""
    return {"X-Absrank-Provenance": table.provenance.encode("ascii", "replace").decode()}
