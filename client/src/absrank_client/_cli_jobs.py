"""``absrank-client job status|wait|cancel ID``: the server's jobs (registered by
:mod:`absrank_client.cli`)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from absrank_client._cli_base import (
    Format,
    FormatOption,
    NoProgress,
    TimeoutOption,
    _client,
    _emit,
    _handled,
    _note,
)

__all__ = ["job"]


class JobAction(StrEnum):
    status = "status"
    wait = "wait"
    cancel = "cancel"


@_handled
def job(
    action: Annotated[JobAction, typer.Argument(help="status, wait (until done) or cancel")],
    job_id: Annotated[str, typer.Argument(help="a job id (j + 23 hex digits)")],
    answer: Annotated[
        Path | None, typer.Option(help="wait: also write the job's answer (JSON) to this file")
    ] = None,
    fmt: FormatOption = Format.table,
    timeout: TimeoutOption = 1800.0,
    no_progress: NoProgress = False,
) -> None:
    """Show, wait for or cancel a job (a request sent with Prefer: respond-async)."""
    with _client() as client:
        if action is JobAction.status:
            result = client.job(job_id)
        elif action is JobAction.cancel:
            result = client.cancel_job(job_id)
        else:
            result = client.wait_job(job_id, timeout=timeout, progress=not no_progress)
            if answer is not None:
                client.job_answer(job_id, answer)
                _note(f"wrote {answer}")
        _emit(result, fmt, f"job {result.id}: {result.status}")
