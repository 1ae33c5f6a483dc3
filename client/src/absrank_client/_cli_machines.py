"""``absrank-client cpus``, ``cpu-register``, ``equivalent-runtime`` and ``cross-machine``:
machines and runtimes (registered by :mod:`absrank_client.cli`)."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer

from absrank_client._cli_base import (
    Format,
    FormatOption,
    _client,
    _emit,
    _fmt,
    _handled,
    _note,
)

__all__ = ["cpu_register", "cpus", "cross_machine", "equivalent_runtime"]


@_handled
def cpus(
    query: Annotated[str | None, typer.Argument(help="part of a CPU name (fuzzy)")] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    fmt: FormatOption = Format.table,
) -> None:
    """Find CPUs of the registry (PassMark single-thread scores)."""
    with _client() as client:
        _emit(client.search_cpus(query, limit=limit), fmt, "CPUs")


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
