"""``absrank-client``: the command line of the absrank client.

Exit codes: 0 success; 2 bad input (usage errors, unreadable files, and 4xx problems such as
422 or 404); 1 server errors, timeouts and connection errors. Errors print the problem's
title, detail and field on stderr, never a traceback. Long waits draw a progress bar on stderr.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import math
import sys
from collections.abc import Callable, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table as RichTable

from absrank_client.client import DEFAULT_HTTP_TIMEOUT, Client
from absrank_client.errors import (
    AbsrankError,
    ConnectionFailed,
    JobFailed,
    JobTimeout,
    ProblemError,
)
from absrank_client.models import Comparison, Posthoc, RankSet, Row, _Tabular, pair_rows

__all__ = ["app", "client_factory", "main"]

app = typer.Typer(
    name="absrank-client",
    help="Absolute ranks, statistical tests and comparisons from an absrank server.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

F = TypeVar("F", bound=Callable[..., Any])


class Format(StrEnum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


ClientFactory = Callable[[str | None, str | None, float], Client]


def _default_factory(url: str | None, api_key: str | None, timeout: float) -> Client:
    return Client(url, api_key, timeout=timeout)


client_factory: ClientFactory = _default_factory
"""How commands build their :class:`Client` (tests inject one wired to the real app)."""


class _State:
    url: str | None = None
    api_key: str | None = None
    timeout: float = DEFAULT_HTTP_TIMEOUT


_state = _State()


@app.callback()
def _options(
    url: Annotated[
        str | None,
        typer.Option(envvar="ABSRANK_URL", help="server URL [default: http://127.0.0.1:8000]"),
    ] = None,
    api_key: Annotated[
        str | None, typer.Option(envvar="ABSRANK_API_KEY", help="sent as X-API-Key")
    ] = None,
    http_timeout: Annotated[
        float, typer.Option(help="seconds one HTTP request may take")
    ] = DEFAULT_HTTP_TIMEOUT,
) -> None:
    _state.url, _state.api_key, _state.timeout = url, api_key, http_timeout


def _client() -> Client:
    return client_factory(_state.url, _state.api_key, _state.timeout)


_err = Console(stderr=True, highlight=False, soft_wrap=True)


def _note(text: str) -> None:
    """A line on stderr (warnings, files written), printed verbatim."""
    _err.print(text, markup=False)


def _fail(message: str, code: int) -> typer.Exit:
    _err.print(f"[bold red]error:[/] {escape(message)}")
    return typer.Exit(code)


def _problem_text(exc: ProblemError) -> str:
    lines = [f"{exc.status} {exc.title}"]
    if exc.detail:
        lines.append(f"  detail: {exc.detail}")
    if exc.field:
        lines.append(f"  field: {exc.field}")
    for e in exc.errors[1:]:
        lines.append(f"  also: {e.get('field')}: {e.get('message')}")
    return "\n".join(lines)


def _handled(func: F) -> F:
    """Turn every client error into a message on stderr and an exit code."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except ProblemError as exc:
            raise _fail(_problem_text(exc), 2 if 400 <= exc.status < 500 else 1) from None
        except (JobTimeout, JobFailed, ConnectionFailed) as exc:
            raise _fail(str(exc), 1) from None
        except AbsrankError as exc:
            raise _fail(str(exc), 1) from None
        except (ValueError, TypeError, OSError) as exc:
            raise _fail(str(exc), 2) from None

    return wrapper  # type: ignore[return-value]


# ------------------------------------------------------------------ rendering


def _fmt(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        if x.is_integer() and abs(x) < 1e15:
            return str(int(x))
        if 1e-3 <= abs(x) < 1e6:
            return f"{x:.4f}"
        return f"{x:.4g}"
    if isinstance(x, list | tuple):
        return ", ".join(_fmt(v) for v in x)
    return str(x)


def _stdout() -> Console:
    return Console(width=None if sys.stdout.isatty() else 200, highlight=False, soft_wrap=False)


def _write_rows(rows: list[Row], fmt: Format, title: str | None = None) -> None:
    if not rows:
        if fmt in (Format.table, Format.markdown):
            typer.echo(f"{title + ': ' if title else ''}(none)")
        return
    columns = list(dict.fromkeys(k for r in rows for k in r))
    if fmt is Format.csv:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for r in rows:
            writer.writerow({k: "" if r.get(k) is None else r.get(k) for k in columns})
        typer.echo(buffer.getvalue(), nl=False)
    elif fmt is Format.markdown:
        if title:
            typer.echo(f"\n**{title}**\n")
        typer.echo("| " + " | ".join(columns) + " |")
        typer.echo("|" + "|".join("---" for _ in columns) + "|")
        for r in rows:
            typer.echo(
                "| " + " | ".join(_fmt(r.get(k)).replace("|", "\\|") for k in columns) + " |"
            )
    else:
        if title:
            typer.echo(title)
        table = RichTable(show_edge=False)
        for c in columns:
            table.add_column(c, overflow="fold", justify="left" if c in _TEXT else "right")
        for r in rows:
            table.add_row(*(_fmt(r.get(k)) for k in columns))
        _stdout().print(table)


_TEXT = {
    "algorithm",
    "a",
    "b",
    "id",
    "name",
    "test",
    "method",
    "status",
    "kinds",
    "subset",
    "function_id",
    "suite",
    "title",
    "decision",
    "reason",
    "scale",
    "instance",
    "indicator",
    "region",
    "kind",
    "source_date",
    "analytic",
}


def _emit(result: _Tabular, fmt: Format, title: str | None = None) -> None:
    if fmt is Format.json:
        typer.echo(json.dumps(result.raw, indent=2, sort_keys=False, ensure_ascii=False))  # type: ignore[attr-defined]
    else:
        _write_rows(result.rows(), fmt, title)


def _line(text: str, fmt: Format) -> None:
    typer.echo(f"{text}\n" if fmt is Format.markdown else text)


def _emit_comparison(cmp: Comparison, fmt: Format) -> None:
    if fmt in (Format.json, Format.csv):
        _emit(cmp, fmt)
        return
    _line(
        f"comparison {cmp.id} ({cmp.status}): {len(cmp.algorithms)} algorithms, "
        f"{len(cmp.problems)} problems",
        fmt,
    )
    rows = [
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


FormatOption = Annotated[Format, typer.Option("--format", "-f", help="output format")]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", help="seconds to wait for tables / jobs")
]
NoWait = Annotated[bool, typer.Option("--no-wait", help="return at once, even if unfinished")]
NoProgress = Annotated[bool, typer.Option("--no-progress", help="no progress bar on stderr")]


def _floats(text: str) -> list[float | None]:
    out: list[float | None] = []
    for part in text.replace(";", ",").split(","):
        part = part.strip()
        if not part:
            continue
        out.append(None if part.lower() in ("na", "nan", "null", "none") else float(part))
    return out


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


@app.command()
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
        Path | None, typer.Option(help="write the critical-difference diagram (.svg or .png)")
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
            kind = "png" if cd_diagram.suffix.lower() == ".png" else "svg"
            client.cd_diagram(cmp, format=kind, path=cd_diagram)
            _note(f"critical-difference diagram written to {cd_diagram}")
    _emit_comparison(cmp, fmt)


def _read_values(path: Path) -> list[float]:
    """One value per line (blank lines and ``#`` comments skipped), as ``user-table`` reads."""
    out: list[float] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        try:
            out.append(float(text))
        except ValueError:
            raise ValueError(f"{path}:{number}: not a number: {text!r}") from None
    if not out:
        raise ValueError(f"{path}: no values")
    return out


def _emit_ranks(ranks: RankSet, fmt: Format, title: str) -> None:
    _emit(ranks, fmt, title)
    if fmt is not Format.json:
        if ranks.provisional and ranks.awaiting is not None:
            _note(
                "provisional (column provisional = True): tail-model ranks with no lower end, "
                f"awaiting the nested-region ladder ({ranks.awaiting.status}): "
                f"{ranks.awaiting.detail}"
            )
        for w in ranks.warnings:
            _note(f"warning: {w}")


@app.command()
@_handled
def rank(
    function_id: Annotated[
        str | None,
        typer.Argument(
            help="a hosted function id (leave out with --table-id or --sample: "
            "the arguments are then all values)"
        ),
    ] = None,
    values: Annotated[list[float] | None, typer.Argument(help="metric values to rank")] = None,
    table_id: Annotated[
        str | None,
        typer.Option(help="rank against this table (any table id, e.g. user/... of user-table)"),
    ] = None,
    sample: Annotated[
        Path | None,
        typer.Option(help="rank against your own sample: a file, one value per line (Eq. 28)"),
    ] = None,
    f_opt: Annotated[float | None, typer.Option(help="with --sample: f*, as you state it")] = None,
    f_max: Annotated[
        float | None, typer.Option(help="with --sample: max of f, as you state it")
    ] = None,
    results: Annotated[
        Path | None, typer.Option(help="long-format CSV of runs (algorithm,problem,run,value)")
    ] = None,
    budget: Annotated[int | None, typer.Option(help="evaluations per run (best-of-c)")] = None,
    runs: Annotated[int | None, typer.Option(help="runs aggregated into each value")] = None,
    aggregate: Annotated[
        str | None, typer.Option(help="best, worst, median, lower-median, order, mean")
    ] = None,
    values_are: Annotated[str | None, typer.Option(help="f or error (f - f*)")] = None,
    tail: Annotated[str | None, typer.Option(help="auto, power, linear or paper")] = None,
    regions: Annotated[str | None, typer.Option(help="auto, domain or nested")] = None,
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_wait: Annotated[
        bool,
        typer.Option(
            "--no-wait", help="print the first answer, provisional ranks included; do not wait"
        ),
    ] = False,
    no_progress: NoProgress = False,
) -> None:
    """Absolute ranks v of values (or of each algorithm's runs with --results).

    Against a hosted function (FUNCTION_ID), a table (--table-id) or your own sample
    (--sample). Provisional ranks (awaiting a ladder) are waited for unless --no-wait; when
    --timeout runs out after provisional ranks arrived they are printed with a note (exit 0).
    """
    if table_id is not None and sample is not None:
        raise ValueError("give one of --table-id and --sample")
    if (table_id is not None or sample is not None) and function_id is not None:
        try:  # no function id then: the first argument is a value
            values = [float(function_id), *(values or [])]
            function_id = None
        except ValueError:
            pass
    if function_id is None and table_id is None and sample is None and results is None:
        raise ValueError("give a function id, --table-id or --sample")
    if (f_opt is not None or f_max is not None) and sample is None:
        raise ValueError("--f-opt and --f-max state the --sample's f* and max")
    if not values and results is None:
        raise ValueError("give values to rank, or --results with the runs")
    with _client() as client:
        try:
            ranks = client.ranks(
                function_id,
                values or None,
                table_id=table_id,
                sample=None if sample is None else _read_values(sample),
                f_opt=f_opt,
                f_max=f_max,
                results=results,
                budget=budget,
                runs=runs,
                aggregate=aggregate,
                values_are=values_are,  # type: ignore[arg-type]
                tail=tail,
                regions=regions,  # type: ignore[arg-type]
                wait=not no_wait,
                timeout=timeout,
                progress=not no_progress,
            )
        except JobTimeout as exc:
            if not isinstance(exc.last, RankSet):
                raise
            ranks = exc.last
            _note(f"timed out: {exc}; printing the provisional ranks received")
    where = f"sample {sample.name}" if sample is not None else ranks.function_id or table_id
    _emit_ranks(ranks, fmt, f"absolute ranks on {where} (lower is better)")


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


def _check_conventions(name: str, convention: str | None, cd_convention: str | None) -> None:
    if convention is not None and name not in ("rank-sum", "ks"):
        raise ValueError(f"--convention is for rank-sum and ks, not {name}")
    if cd_convention is not None and name != "posthoc":
        raise ValueError(f"--cd-convention is for posthoc, not {name}")


@app.command("test")
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
    fmt: FormatOption = Format.table,
) -> None:
    """Run one statistical test on a matrix or on two samples."""
    _check_conventions(name, convention, cd_convention)
    with _client() as client:
        if name in _MATRIX_TESTS:
            if matrix is None:
                raise ValueError(f"test {name} needs --matrix (a wide CSV)")
            values, algorithms, problems = _read_matrix(matrix)
            if name == "friedman":
                _emit(client.friedman(values, algorithms, problems), fmt, "Friedman family")
            elif name == "posthoc":
                result = client.posthoc(
                    values,
                    method or "nemenyi",
                    algorithms=algorithms,
                    problems=problems,
                    alpha=alpha,
                    control=control,
                    cd_convention=cd_convention,
                )
                _emit_posthoc(result, fmt)
            else:
                _emit(client.bradley_terry(values, algorithms, problems), fmt, "Bradley-Terry")
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
            options: dict[str, Any] = {"alternative": alternative}
            if name != "sign":
                options["method"] = method
            if convention is not None:
                options["convention"] = convention
            call = getattr(client, name.replace("-", "_"))
            result = call(xs, ys, **options)
        else:
            known = sorted(_MATRIX_TESTS | _SAMPLE_TESTS | {"sign-cross-machine"})
            raise ValueError(f"unknown test {name!r}; one of {', '.join(known)}")
        _emit(result, fmt, result.test)


@app.command("user-table")
@_handled
def user_table(
    samples: Annotated[
        Path, typer.Argument(help="your function's samples: one value per line, or a CSV")
    ],
    column: Annotated[
        str | None, typer.Option(help="the CSV column holding the values (header line)")
    ] = None,
    name: Annotated[str | None, typer.Option(help="your function's name")] = None,
    f_opt: Annotated[float | None, typer.Option(help="f*, as you state it")] = None,
    f_max: Annotated[float | None, typer.Option(help="max of f, as you state it")] = None,
    dim: Annotated[int | None, typer.Option(help="the domain's dimension, as stated")] = None,
    sampled_by: Annotated[str | None, typer.Option(help="who sampled, as stated")] = None,
    sampling: Annotated[str | None, typer.Option(help="how the points were drawn")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Build a table of your own function from a file of its samples (ready at once)."""
    with _client() as client:
        result = client.user_table(
            file=samples,
            column=column,
            name=name,
            f_opt=f_opt,
            f_max=f_max,
            dim=dim,
            sampled_by=sampled_by,
            sampling=sampling,
        )
    _emit(result, fmt, "table")


@app.command()
@_handled
def table(
    function_id: Annotated[str, typer.Argument(help="a hosted function id, or a table id")],
    delta: Annotated[
        list[float] | None, typer.Option(help="box half-width (once, or d times)")
    ] = None,
    log2n: Annotated[int | None, typer.Option(help="N = 2^log2n samples")] = None,
    seed: Annotated[int | None, typer.Option(help="Sobol seed")] = None,
    ladder: Annotated[bool, typer.Option(help="the ladder of nested regions")] = False,
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_wait: NoWait = False,
    no_progress: NoProgress = False,
) -> None:
    """Request a table of v1 (or a ladder) and wait until it is built; a table id shows it."""
    with _client() as client:
        if (function_id.startswith("t") and "/" not in function_id) or function_id.startswith(
            "user/"
        ):
            _emit(client.get_table(function_id), fmt, "table")
            return
        if ladder:
            result: Any = client.create_ladder(
                function_id,
                log2n=log2n,
                seed=seed,
                wait=not no_wait,
                timeout=timeout,
                progress=not no_progress,
            )
            title = f"ladder of {function_id}: {result.status}"
        else:
            d: Any = None if not delta else (delta[0] if len(delta) == 1 else delta)
            result = client.create_table(
                function_id,
                delta=d,
                log2n=log2n,
                seed=seed,
                wait=not no_wait,
                timeout=timeout,
                progress=not no_progress,
            )
            title = "table"
    _emit(result, fmt, title)


class CurveFormat(StrEnum):
    json = "json"
    csv = "csv"


@app.command("table-curve")
@_handled
def table_curve(
    table: Annotated[str, typer.Argument(help="a table id, or a function id with --ladder")],
    fmt: Annotated[CurveFormat, typer.Option("--format", help="json or csv")] = CurveFormat.json,
    out: Annotated[Path | None, typer.Option("-o", "--output", help="write to this file")] = None,
    ladder: Annotated[bool, typer.Option(help="the ladder of this function id")] = False,
) -> None:
    """Download a ready table's curve (knots, counts, tail models), or a ladder's."""
    with _client() as client:
        if fmt == CurveFormat.csv:
            text = client.ladder_curve_csv(table) if ladder else client.table_curve_csv(table)
        else:
            curve: Any = client.ladder_curve(table) if ladder else client.table_curve(table)
            text = json.dumps(curve.raw, indent=1) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text)
        _note(f"curve written to {out}")


@app.command("table-plot")
@_handled
def table_plot(
    table: Annotated[str, typer.Argument(help="a table id, or a function id with --ladder")],
    out: Annotated[Path, typer.Option("-o", "--output", help="file: .svg or .png")],
    dpi: Annotated[int | None, typer.Option(help="PNG resolution (default 300)")] = None,
    ladder: Annotated[bool, typer.Option(help="the ladder of this function id")] = False,
) -> None:
    """Plot log10 v1 against t - f* of a ready table (or ladder) to an SVG or PNG file."""
    kind: Any = "png" if out.suffix.lower() == ".png" else "svg"
    with _client() as client:
        if ladder:
            client.ladder_plot(table, format=kind, dpi=dpi, path=out)
        else:
            client.table_plot(table, format=kind, dpi=dpi, path=out)
    _note(f"plot written to {out}")


@app.command()
@_handled
def quantiles(
    table: Annotated[str, typer.Argument(help="a table id")],
    v: Annotated[list[float], typer.Option("-v", help="a level in (0, 1]; repeat it")],
    fmt: FormatOption = Format.table,
) -> None:
    """Quantiles t = q(v) of a ready table's curve (v1(t) = v)."""
    with _client() as client:
        _emit(client.table_quantiles(table, v), fmt, f"quantiles of {table}")


@app.command()
@_handled
def tables(
    function_id: Annotated[str | None, typer.Option(help="only this function")] = None,
    status: Annotated[str | None, typer.Option(help="building, merging, ready or failed")] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """List tables, newest first."""
    with _client() as client:
        _emit(client.list_tables(function_id, status, limit=limit), fmt, "tables")


@app.command()
@_handled
def functions(
    suite: Annotated[str | None, typer.Option(help="classic, bbob, cec2005, ...")] = None,
    dim: Annotated[int | None, typer.Option(help="dimension")] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """List hosted benchmark functions."""
    with _client() as client:
        result = client.list_functions(suite, dim, limit=limit)
    _emit(result, fmt, f"functions ({result.total} in all)")


@app.command()
@_handled
def function(
    function_id: Annotated[str, typer.Argument(help="a hosted function id")],
    fmt: FormatOption = Format.table,
) -> None:
    """Describe one function."""
    with _client() as client:
        _emit(client.get_function(function_id), fmt, function_id)


@app.command()
@_handled
def cpus(
    query: Annotated[str | None, typer.Argument(help="part of a CPU name (fuzzy)")] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Find CPUs of the registry (PassMark single-thread scores)."""
    with _client() as client:
        _emit(client.search_cpus(query, limit=limit), fmt, "CPUs")


@app.command("cpu-register")
@_handled
def cpu_register(
    name: Annotated[str, typer.Argument()],
    score: Annotated[float, typer.Argument(help="PassMark single-thread score")],
    source: Annotated[str, typer.Option(help="where the score comes from")],
    source_date: Annotated[str, typer.Option(help="YYYY, YYYY-MM or YYYY-MM-DD")],
    fmt: FormatOption = Format.table,
) -> None:
    """Register a CPU (operators; needs --api-key where the deployment has keys)."""
    with _client() as client:
        _emit(client.register_cpu(name, score, source=source, source_date=source_date), fmt)


@app.command("equivalent-runtime")
@_handled
def equivalent_runtime(
    t1: Annotated[list[float], typer.Argument(help="runtime(s) on machine M1")],
    s1: Annotated[float | None, typer.Option(help="M1's score")] = None,
    cpu1: Annotated[str | None, typer.Option(help="M1 by name")] = None,
    s2: Annotated[float | None, typer.Option(help="M2's score")] = None,
    cpu2: Annotated[str | None, typer.Option(help="M2 by name")] = None,
    p_gamma: Annotated[float | None, typer.Option(help="tolerated P(t2 too long)")] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Equivalent runtimes on M2 of runtimes on M1 (Arza et al.)."""
    with _client() as client:
        result = client.equivalent_runtime(
            t1[0] if len(t1) == 1 else t1, s1=s1, cpu1=cpu1, s2=s2, cpu2=cpu2, p_gamma=p_gamma
        )
    _emit(result, fmt, f"equivalent runtimes (gamma = {_fmt(result.gamma)})")
    if fmt is not Format.json:
        for w in result.warnings:
            _note(f"warning: {w}")


def _read_csv_dicts(path: Path, needed: Sequence[str]) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as fh:
        reader = csv.DictReader(line for line in fh if not line.startswith("#"))
        rows = [{k.strip(): (v or "").strip() for k, v in r.items() if k} for r in reader]
    missing = [c for c in needed if rows and c not in rows[0]]
    if not rows or missing:
        raise ValueError(f"{path}: needs the columns {', '.join(needed)}")
    return rows


@app.command("cross-machine")
@_handled
def cross_machine(
    published: Annotated[Path, typer.Argument(help="A's published table: instance,a,t1 CSV")],
    s1: Annotated[float | None, typer.Option()] = None,
    cpu1: Annotated[str | None, typer.Option()] = None,
    s2: Annotated[float | None, typer.Option()] = None,
    cpu2: Annotated[str | None, typer.Option()] = None,
    p_gamma: Annotated[float | None, typer.Option()] = None,
    results: Annotated[
        Path | None, typer.Option(help="B's results: instance,b CSV (runs the sign test)")
    ] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """A cross-machine comparison: runtimes for B; with --results, the corrected sign test."""
    rows = [
        {"instance": r["instance"], "a": float(r["a"]), "t1": float(r["t1"])}
        for r in _read_csv_dicts(published, ("instance", "a", "t1"))
    ]
    with _client() as client:
        cmp = client.create_cross_machine(rows, s1=s1, cpu1=cpu1, s2=s2, cpu2=cpu2, p_gamma=p_gamma)
        if results is not None:
            b = {r["instance"]: float(r["b"]) for r in _read_csv_dicts(results, ("instance", "b"))}
            cmp = client.submit_cross_machine_results(cmp, b)
    _emit(cmp, fmt, f"cross-machine comparison {cmp.id} ({cmp.status})")
    if cmp.test is not None and fmt in (Format.table, Format.markdown):
        _emit(cmp.test, fmt, "corrected sign test")


@app.command()
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


@app.command("region-scan")
@_handled
def region_scan(
    function_id: Annotated[str, typer.Argument(help="a function with known x*")],
    values: Annotated[list[str], typer.Argument(help="ALGORITHM=VALUE ...")],
    deltas: Annotated[str | None, typer.Option(help="comma-separated half-widths")] = None,
    log2n: Annotated[int | None, typer.Option()] = None,
    budget: Annotated[int | None, typer.Option()] = None,
    values_are: Annotated[str | None, typer.Option(help="f or error")] = None,
    tail: Annotated[
        str | None,
        typer.Option(help="auto, power, linear, or paper (Eq. 28 as published: Table V)"),
    ] = None,
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_wait: NoWait = False,
    no_progress: NoProgress = False,
) -> None:
    """Scan box half-widths δ and choose the one that spreads the ranks best (Eq. 29)."""
    pairs = {}
    for item in values:
        name, sep, value = item.rpartition("=")
        if not sep or not name:
            raise ValueError(f"expected ALGORITHM=VALUE, got {item!r}")
        pairs[name] = float(value)
    with _client() as client:
        scan = client.region_scan(
            function_id,
            pairs,
            deltas=None if deltas is None else _floats(deltas),  # type: ignore[arg-type]
            log2n=log2n,
            budget=budget,
            values_are=values_are,  # type: ignore[arg-type]
            tail=tail,  # type: ignore[arg-type]
            wait=not no_wait,
            timeout=timeout,
            progress=not no_progress,
        )
    tail = "" if scan.tail == "auto" else f", tail = {scan.tail}"
    _emit(scan, fmt, f"region scan {scan.id} ({scan.status}{tail}); chosen δ = {_fmt(scan.chosen)}")


@app.command()
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
    fmt: FormatOption = Format.table,
) -> None:
    """Archived result sets by absolute rank: on one function, or over --suite at --dim."""
    if (function_id is None) == (suite is None) or (suite is not None and dim is None):
        raise ValueError("give a function id, or --suite and --dim")
    with _client() as client:
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


from absrank_client import archive_cli as _archive_cli  # noqa: E402, F401 (registers commands)


def main(argv: Sequence[str] | None = None) -> None:
    """Console-script entry point."""
    app(args=list(argv) if argv is not None else None, prog_name="absrank-client")


if __name__ == "__main__":  # pragma: no cover
    main()
