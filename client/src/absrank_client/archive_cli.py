"""``absrank-client upload``, ``result-sets`` and ``result-set``: the results archive
(registered by :mod:`absrank_client.cli`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from absrank_client._cli_base import Format, FormatOption, _client, _emit, _handled, _note
from absrank_client.archive import _FunctionTable

__all__ = ["result_set", "result_sets", "upload"]


class UploadFormat(StrEnum):
    coco = "coco"
    iohprofiler = "iohprofiler"
    nevergrad = "nevergrad"
    csv = "csv"


OutputOption = Annotated[
    Format, typer.Option("--output", "-o", help="output format (--format is the upload's)")
]


@_handled
def upload(
    path: Annotated[Path, typer.Argument(help="results file: .zip/.tgz archive or CSV")],
    upload_format: Annotated[
        UploadFormat | None,
        typer.Option(
            "--format", help="coco, iohprofiler, nevergrad or csv (default: a long CSV body)"
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="the algorithm's name")] = None,
    values_are: Annotated[str | None, typer.Option(help="f or error")] = None,
    version: Annotated[str | None, typer.Option()] = None,
    description: Annotated[str | None, typer.Option()] = None,
    reference: Annotated[str | None, typer.Option(help="DOI or URL")] = None,
    contact: Annotated[str | None, typer.Option()] = None,
    cpu_id: Annotated[int | None, typer.Option(help="a CPU id of the registry")] = None,
    cpu_score: Annotated[float | None, typer.Option(help="PassMark single-thread")] = None,
    value_aggregate: Annotated[str | None, typer.Option(help="mean or median")] = None,
    value_runs: Annotated[int | None, typer.Option(help="runs behind each value")] = None,
    supersedes: Annotated[str | None, typer.Option(help="id of the set this corrects")] = None,
    out: OutputOption = Format.table,
) -> None:
    """Archive one algorithm's results (needs --api-key where the deployment has keys)."""
    if not path.is_file():
        raise ValueError(f"no file {path}")
    with _client() as client:
        rs = client.create_result_set(
            path,
            format=None if upload_format is None else upload_format.value,
            name=name,
            values_are=values_are,  # type: ignore[arg-type]
            version=version,
            description=description,
            reference=reference,
            contact=contact,
            cpu_id=cpu_id,
            cpu_score=cpu_score,
            value_aggregate=value_aggregate,  # type: ignore[arg-type]
            value_runs=value_runs,
            supersedes=supersedes,
        )
    _note(f"result set {rs.id} ({'stored' if rs.created else 'archived already'}): {rs.location}")
    if rs.queued is not None and (rs.queued.tables or rs.queued.ladders):
        _note(f"queued {len(rs.queued.tables)} tables, {len(rs.queued.ladders)} ladders")
    _emit(_FunctionTable(rs), out, f"{rs.name}: {rs.n_runs} runs on {rs.n_functions} functions")


@_handled
def result_sets(
    suite: Annotated[str | None, typer.Option(help="bbob, cec2005, ...")] = None,
    function_id: Annotated[str | None, typer.Option(help="only sets with runs on it")] = None,
    algorithm: Annotated[str | None, typer.Option(help="the algorithm's name")] = None,
    limit: Annotated[int | None, typer.Option()] = None,
    offset: Annotated[int | None, typer.Option()] = None,
    out: FormatOption = Format.table,
) -> None:
    """List archived result sets, newest first."""
    with _client() as client:
        page = client.result_sets(
            suite=suite, function_id=function_id, algorithm=algorithm, limit=limit, offset=offset
        )
    _emit(page, out, f"result sets ({page.total} in all)")


@_handled
def result_set(
    set_id: Annotated[str, typer.Argument(help="a result set id (r + 23 hex digits)")],
    csv: Annotated[
        Path | None, typer.Option(help="also write its runs as a long CSV to this file")
    ] = None,
    out: FormatOption = Format.table,
) -> None:
    """Show an archived result set: metadata and per-function summary."""
    with _client() as client:
        rs = client.result_set(set_id)
        if csv is not None:
            client.result_set_csv(set_id, csv)
            _note(f"wrote {csv}")
    if out is Format.json:
        _emit(rs, out)
        return
    _note(
        f"{rs.id}: {rs.name} {rs.version or ''} ({rs.values_are}; from {rs.source_format})"
        + (f", superseded by {rs.superseded_by}" if rs.superseded_by else "")
    )
    _emit(_FunctionTable(rs), out, f"{rs.n_runs} runs on {rs.n_functions} functions")
