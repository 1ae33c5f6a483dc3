"""``absrank-client compare``, ``test``, ``pareto`` and ``leaderboard``: comparing algorithms
(registered by :mod:`absrank_client.cli`)."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from absrank_client._cli_base import (
    Format,
    FormatOption,
    NoProgress,
    NoWait,
    TimeoutOption,
    _client,
    _emit,
    _floats,
    _fmt,
    _handled,
    _line,
    _note,
    _write_rows,
    figure_format,
)
from absrank_client.client import Client
from absrank_client.models import Comparison, Posthoc, Row
from absrank_client.pairs import pair_rows

__all__ = ["compare", "leaderboard", "pareto", "run_test"]


def _emit_comparison(cmp: Comparison, fmt: Format) -> None:
    if fmt in (Format.json, Format.csv):
        _emit(cmp, fmt)
        return
    _line(
        f"comparison {cmp.id} ({cmp.status}): {len(cmp.algorithms)} algorithms, "
        f"{len(cmp.problems)} problems",
        fmt,
    )
    rows: list[Row] = [
        {
            "algorithm": s.algorithm,
            "average rank": s.average_rank,
            "average v": s.average_absolute_rank,
            "average log10 v": s.mean_log10_v,
            "Bradley-Terry": s.strength,
        }
        for s in cmp.summary
    ]
    rows.sort(key=lambda r: (r["average rank"] is None, r["average rank"] or 0.0))
    _write_rows(rows, fmt, "algorithms (lower is better; average v and log10 v: absolute ranks)")
    for t in cmp.omnibus:
        _line(
            f"{t.name}: statistic {_fmt(t.statistic)}, df {_fmt(t.df)}, p = {_fmt(t.p_value)}, "
            f"log10_p = {_fmt(t.log10_p_value)} ({t.method})",
            fmt,
        )
    if cmp.posthoc is not None:
        _emit_cliques(cmp.posthoc, fmt)
    if cmp.absolute_status == "pending":
        pending = ", ".join(p.problem for p in cmp.pending) or "-"
        _line(f"absolute ranks: pending (tables building for: {pending})", fmt)
    elif cmp.absolute_status not in (None, "complete"):
        reason = (cmp.raw.get("absolute") or {}).get("reason") or ""
        _line(f"absolute ranks: {cmp.absolute_status} {f'({reason})' if reason else ''}", fmt)
    boxes = [
        f"{p} (box δ = {_fmt(r.get('delta'))})"
        for p, r in cmp.absolute_regions.items()
        if r.get("region") == "box"
    ]
    if boxes:
        _line(
            "absolute ranks relative to their own δ-box (their own scale): " + ", ".join(boxes),
            fmt,
        )
    if cmp.absolute_pairs:
        significant = [p for p in cmp.absolute_pairs if p.significant]
        adjustment = next(
            (
                p.get("adjustment")
                for p in pair_rows((cmp.raw.get("absolute") or {}).get("pairwise"))
            ),
            None,
        )
        _line(
            f"pairwise Wilcoxon tests on absolute ranks ({adjustment or 'adjusted'}): "
            f"{len(significant)} of {len(cmp.absolute_pairs)} pairs significant at alpha = "
            f"{_fmt(cmp.posthoc.alpha if cmp.posthoc else None)}",
            fmt,
        )
        if significant:
            _write_rows(
                [
                    {
                        "a": p.a,
                        "b": p.b,
                        "wilcoxon p": p.wilcoxon_p,
                        "log10 p": p.log10_wilcoxon_p,
                        "sign p": p.sign_p,
                        "p adjusted": p.p_adjusted,
                    }
                    for p in significant
                ],
                fmt,
            )
    _write_rows(
        [f.row() for f in cmp.flips],
        fmt,
        "NIIA: conclusions that flip when only the subset is compared",
    )
    for w in cmp.warnings:
        _line(f"warning: {w}", fmt)


def _emit_posthoc(result: Posthoc, fmt: Format) -> None:
    """``absrank test posthoc``: the pairs, the cliques and the answer's warnings (stderr)."""
    _emit(result, fmt, f"post-hoc {result.procedure}")
    if fmt in (Format.table, Format.markdown):
        _emit_cliques(result, fmt)
    if fmt is not Format.json:
        for w in result.warnings:
            _note(f"warning: {w}")


_CD_CONVENTIONS = {"jing-liu": "Jing & Liu's CD, Table I: z at 1 - alpha/(2k)"}
"""How the cliques line names a critical difference that is not the standard one."""


def _emit_cliques(posthoc: Posthoc, fmt: Format) -> None:
    cd = (
        f", critical difference {_fmt(posthoc.critical_difference)}"
        if posthoc.critical_difference is not None
        else ""
    )
    if cd and posthoc.cd_convention != "standard":
        cd += f" ({_CD_CONVENTIONS.get(posthoc.cd_convention, posthoc.cd_convention)})"
    _line(f"post-hoc {posthoc.procedure} at alpha = {_fmt(posthoc.alpha)}{cd}", fmt)
    if posthoc.cliques:
        for clique in posthoc.cliques:
            _line(f"  clique (no significant difference): {', '.join(clique)}", fmt)
    significant = [f"{p.a} vs {p.b}" for p in posthoc.pairs if p.significant]
    _line(f"  significant pairs: {', '.join(significant) or 'none'}", fmt)


def _pairs(items: list[str], form: str) -> dict[str, str]:
    """``KEY=VALUE`` items (the key may hold ``=``: split at the last one) as a mapping."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.rpartition("=")
        if not sep or not key or not value:
            raise ValueError(f"expected {form}, got {item!r}")
        if key in out:
            raise ValueError(f"{key!r} is given twice")
        out[key] = value
    return out


# ------------------------------------------------------------------ commands


@_handled
def compare(
    results: Annotated[Path, typer.Argument(help="long-format CSV: algorithm,problem,run,value")],
    budget: Annotated[int | None, typer.Option(help="evaluations per run (best-of-c)")] = None,
    values_are: Annotated[str | None, typer.Option(help="f or error (f - f*)")] = None,
    reduction: Annotated[str | None, typer.Option(help="mean, median or best per cell")] = None,
    value_runs: Annotated[
        int | None, typer.Option(help="each value already summarises this many runs")
    ] = None,
    posthoc: Annotated[str | None, typer.Option(help="nemenyi, holm, shaffer, ...")] = None,
    control: Annotated[str | None, typer.Option(help="control algorithm")] = None,
    alpha: Annotated[float | None, typer.Option(help="significance level")] = None,
    cd_convention: Annotated[
        str | None, typer.Option(help="standard, or jing-liu (Table I: z at 1 - alpha/(2k))")
    ] = None,
    missing: Annotated[str | None, typer.Option(help="reject, drop-problem, ...")] = None,
    regions: Annotated[str | None, typer.Option(help="auto, domain or nested")] = None,
    absolute: Annotated[str | None, typer.Option(help="auto or off")] = None,
    niia_subset: Annotated[
        list[str] | None, typer.Option(help="a NIIA subset A,B,C (repeatable)")
    ] = None,
    result_set: Annotated[
        list[str] | None,
        typer.Option(help="an archived result set id whose runs join (repeatable)"),
    ] = None,
    table: Annotated[
        list[str] | None,
        typer.Option(
            help="PROBLEM=TABLE_ID: rank that problem on this ready table, e.g. a region "
            "scan's δ-box (repeatable; a box's ranks are its own scale)"
        ),
    ] = None,
    cd_diagram: Annotated[
        Path | None, typer.Option(help="write the critical-difference diagram (.svg, .pdf or .png)")
    ] = None,
    paper_table: Annotated[
        Path | None,
        typer.Option(
            help="write the comparison as a table for a paper: .tex (booktabs LaTeX), .md "
            "(Markdown) or .csv, by the file's suffix"
        ),
    ] = None,
    summary: Annotated[
        Path | None,
        typer.Option(help="write the written summary: .md (Markdown), or text otherwise"),
    ] = None,
    view: Annotated[
        str, typer.Option(help="summary, or full (every cell's v, method and table; for json)")
    ] = "summary",
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_wait: NoWait = False,
    no_progress: NoProgress = False,
) -> None:
    """Compare algorithms: relative ranks, absolute ranks, post-hoc cliques, NIIA flips."""
    if not results.is_file():
        raise ValueError(f"{results}: no such file")
    table_format = None if paper_table is None else _table_format(paper_table)
    with _client() as client:
        cmp = client.compare(
            results,
            budget=budget,
            values_are=values_are,  # type: ignore[arg-type]
            reduction=reduction,  # type: ignore[arg-type]
            value_runs=value_runs,
            posthoc=posthoc,
            control=control,
            alpha=alpha,
            cd_convention=cd_convention,
            missing=missing,
            regions=regions,  # type: ignore[arg-type]
            absolute=absolute,  # type: ignore[arg-type]
            niia_subsets=[s.split(",") for s in niia_subset] if niia_subset else None,
            result_sets=result_set or None,
            tables=_pairs(table, "PROBLEM=TABLE_ID") if table else None,
            view=view,  # type: ignore[arg-type]
            wait=not no_wait,
            timeout=timeout,
            progress=not no_progress,
        )
        if cd_diagram is not None:
            client.cd_diagram(cmp, format=figure_format(cd_diagram), path=cd_diagram)
            _note(f"critical-difference diagram written to {cd_diagram}")
        if paper_table is not None and table_format is not None:
            client.comparison_table(cmp, format=table_format, path=paper_table)
            _note(f"table for a paper written to {paper_table}")
        if summary is not None:
            md = summary.suffix.lower() == ".md"
            text = client.comparison_summary(cmp, format="markdown" if md else "text")
            summary.write_text(text, encoding="utf-8")
            _note(f"written summary written to {summary}")
    _emit_comparison(cmp, fmt)


_TABLE_SUFFIXES: dict[str, Literal["csv", "markdown", "latex"]] = {
    ".tex": "latex",
    ".md": "markdown",
    ".csv": "csv",
}


def _table_format(path: Path) -> Literal["csv", "markdown", "latex"]:
    """The paper table's format from a file's suffix (.tex, .md, .csv)."""
    try:
        return _TABLE_SUFFIXES[path.suffix.lower()]
    except KeyError:
        raise ValueError(f"{path}: a paper table is .tex, .md or .csv") from None


_MATRIX_TESTS = {"friedman", "posthoc", "bradley-terry"}
_SAMPLE_TESTS = {"wilcoxon", "sign", "rank-sum", "ks", "permutation"}


def _read_matrix(path: Path) -> tuple[list[list[float | None]], list[str], list[str]]:
    """A wide CSV: header ``problem,<algorithm>...``, one row per problem."""
    with path.open(encoding="utf-8") as fh:
        rows = [r for r in csv.reader(line for line in fh if not line.startswith("#")) if r]
    if len(rows) < 2:
        raise ValueError(f"{path}: needs a header (problem,<algorithms>...) and rows")
    header, body = rows[0], rows[1:]
    algorithms = [h.strip() for h in header[1:]]
    values = [_floats(",".join(r[1:])) for r in body]
    return values, algorithms, [r[0].strip() for r in body]


PaperTableOption = Annotated[
    Path | None,
    typer.Option(
        help="write the answer as a table for a paper instead of printing it: .tex (booktabs "
        "LaTeX), .md (Markdown) or .csv, by the file's suffix"
    ),
]


def _check_conventions(name: str, convention: str | None, cd_convention: str | None) -> None:
    if convention is not None and name not in ("rank-sum", "ks"):
        raise ValueError(f"--convention is for rank-sum and ks, not {name}")
    if cd_convention is not None and name != "posthoc":
        raise ValueError(f"--cd-convention is for posthoc, not {name}")


def _run_matrix_test(
    client: Client,
    name: str,
    matrix: Path | None,
    posthoc_options: dict[str, Any],
    paper_table: Path | None,
    fmt: Format,
) -> None:
    """``absrank-client test`` of a matrix test (``posthoc_options``: the post-hoc's only)."""
    if matrix is None:
        raise ValueError(f"test {name} needs --matrix (a wide CSV)")
    values, algorithms, problems = _read_matrix(matrix)
    options = posthoc_options if name == "posthoc" else {}
    if paper_table is not None:
        table_format = _table_format(paper_table)
        client.test_table(
            name, values, algorithms, problems, format=table_format, path=paper_table, **options
        )
        _note(f"table for a paper written to {paper_table}")
    elif name == "friedman":
        _emit(client.friedman(values, algorithms, problems), fmt, "Friedman family")
    elif name == "posthoc":
        _emit_posthoc(
            client.posthoc(values, algorithms=algorithms, problems=problems, **options), fmt
        )
    else:
        _emit(client.bradley_terry(values, algorithms, problems), fmt, "Bradley-Terry")


@_handled
def run_test(
    name: Annotated[
        str,
        typer.Argument(
            help="friedman, posthoc, bradley-terry (with --matrix), wilcoxon, sign, rank-sum, "
            "ks, permutation (with --x/--y), sign-cross-machine (--n/--k or --x/--y as a/b)"
        ),
    ],
    matrix: Annotated[
        Path | None, typer.Option(help="wide CSV: problem,<algorithm>,... one row per problem")
    ] = None,
    x: Annotated[str | None, typer.Option(help="sample x, comma-separated")] = None,
    y: Annotated[str | None, typer.Option(help="sample y, comma-separated")] = None,
    method: Annotated[str | None, typer.Option(help="post-hoc procedure / exact or not")] = None,
    alpha: Annotated[float | None, typer.Option()] = None,
    control: Annotated[str | None, typer.Option()] = None,
    alternative: Annotated[str | None, typer.Option(help="two-sided, less, greater")] = None,
    n: Annotated[int | None, typer.Option(help="sign-cross-machine: non-tied instances")] = None,
    k: Annotated[int | None, typer.Option(help="sign-cross-machine: instances A won")] = None,
    p_gamma: Annotated[float | None, typer.Option(help="sign-cross-machine: p_gamma")] = None,
    convention: Annotated[
        str | None,
        typer.Option(help="rank-sum: scipy-ranksums; ks: scipy-exact (default: the service's)"),
    ] = None,
    cd_convention: Annotated[
        str | None,
        typer.Option(help="posthoc: standard, or jing-liu (Table I: z at 1 - alpha/(2k))"),
    ] = None,
    paper_table: PaperTableOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Run one statistical test on a matrix or on two samples."""
    _check_conventions(name, convention, cd_convention)
    table_format = None if paper_table is None else _table_format(paper_table)
    if table_format is not None and name not in _MATRIX_TESTS | _SAMPLE_TESTS:
        raise ValueError(f"--paper-table is for the matrix and sample tests, not {name}")
    with _client() as client:
        if name in _MATRIX_TESTS:
            options: dict[str, Any] = {
                "method": method or "nemenyi",
                "alpha": alpha,
                "control": control,
                "cd_convention": cd_convention,
            }
            _run_matrix_test(client, name, matrix, options, paper_table, fmt)
            return
        xs = None if x is None else _floats(x)
        ys = None if y is None else _floats(y)
        if name == "sign-cross-machine":
            if p_gamma is None:
                raise ValueError("sign-cross-machine needs --p-gamma")
            result = client.sign_cross_machine(xs, ys, n=n, k=k, p_gamma=p_gamma, alpha=alpha)  # type: ignore[arg-type]
        elif name in _SAMPLE_TESTS:
            if xs is None:
                raise ValueError(f"test {name} needs --x (and --y)")
            options = {"alternative": alternative}
            if name != "sign":
                options["method"] = method
            if convention is not None:
                options["convention"] = convention
            if paper_table is not None and table_format is not None:
                client.test_table(
                    name, x=xs, y=ys, format=table_format, path=paper_table, **options
                )
                _note(f"table for a paper written to {paper_table}")
                return
            call = getattr(client, name.replace("-", "_"))
            result = call(xs, ys, **options)
        else:
            known = sorted(_MATRIX_TESTS | _SAMPLE_TESTS | {"sign-cross-machine"})
            raise ValueError(f"unknown test {name!r}; one of {', '.join(known)}")
        _emit(result, fmt, result.test)


@_handled
def pareto(
    scores: Annotated[Path, typer.Argument(help="CSV problem,algorithm,run,indicator,value")],
    maximize: Annotated[
        list[str] | None, typer.Option("--max", help="an indicator to maximize (repeatable)")
    ] = None,
    dominance: Annotated[str | None, typer.Option(help="pareto or epsilon")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Pareto-optimal ranking of multi-objective algorithms over indicator vectors."""
    with _client() as client:
        result = client.create_pareto_ranking(
            scores,
            orientation=dict.fromkeys(maximize or (), "max") or None,
            dominance=dominance,  # type: ignore[arg-type]
        )
    _emit(result, fmt, f"Pareto ranking {result.id} (rank 1 is best)")


@_handled
def leaderboard(
    function_id: Annotated[
        str | None, typer.Argument(help="a hosted function id (or --suite and --dim)")
    ] = None,
    suite: Annotated[str | None, typer.Option(help="a suite, e.g. bbob (with --dim)")] = None,
    dim: Annotated[int | None, typer.Option(help="dimension (with --suite)")] = None,
    budget: Annotated[
        int | None, typer.Option(help="evaluations per run (default: each set's final budget)")
    ] = None,
    aggregate: Annotated[
        str, typer.Option(help="best, worst, median, lower-median or mean of each set's runs")
    ] = "median",
    posthoc: Annotated[str | None, typer.Option(help="suite: nemenyi, holm, ...")] = None,
    instances: Annotated[
        str | None, typer.Option(help="suite: instances of its functions, e.g. 1-5 (default 1)")
    ] = None,
    functions: Annotated[
        str | None, typer.Option(help="suite: only these functions, e.g. f15,f16,f17")
    ] = None,
    paper_table: PaperTableOption = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Archived result sets by absolute rank: on one function, or over --suite at --dim."""
    if (function_id is None) == (suite is None) or (suite is not None and dim is None):
        raise ValueError("give a function id, or --suite and --dim")
    table_format = None if paper_table is None else _table_format(paper_table)
    with _client() as client:
        if paper_table is not None and table_format is not None:
            if function_id is not None:
                client.leaderboard_table(
                    function_id,
                    budget,
                    aggregate,  # type: ignore[arg-type]
                    format=table_format,
                    path=paper_table,
                )
            else:
                client.suite_leaderboard_table(
                    str(suite),
                    int(dim or 0),
                    budget=budget,
                    aggregate=aggregate,  # type: ignore[arg-type]
                    posthoc=posthoc,
                    instances=instances,
                    functions=functions,
                    format=table_format,
                    path=paper_table,
                )
            _note(f"table for a paper written to {paper_table}")
            return
        if function_id is not None:
            board = client.leaderboard(function_id, budget, aggregate)  # type: ignore[arg-type]
            _emit(board, fmt, f"leaderboard of {board.function_id} (log10 v: lower is better)")
            if fmt is not Format.json:
                for e in board.entries:
                    if not e.final and e.awaiting is not None:
                        _note(f"{e.label}: provisional, awaiting {e.awaiting.detail}")
                significant = [f"{p.a} vs {p.b}" for p in board.pairs if p.significant]
                if significant:
                    _note("significantly different (rank-sum, Holm): " + "; ".join(significant))
            return
        suite_board = client.suite_leaderboard(
            str(suite),
            int(dim or 0),
            budget=budget,
            aggregate=aggregate,  # type: ignore[arg-type]
            posthoc=posthoc,
            instances=instances,
            functions=functions,
        )
    _emit(suite_board, fmt, f"leaderboard of {suite} d{dim} (mean log10 v: lower is better)")
    if fmt is not Format.json:
        if suite_board.posthoc is not None:
            _emit_cliques(suite_board.posthoc, fmt)
        elif suite_board.family_reason:
            _note(suite_board.family_reason)
