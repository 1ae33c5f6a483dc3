"""The client's jobs: ``compare(as_job=True)``, submit, poll, wait, fetch, cancel; and the CLI's
``job status|wait|cancel`` — against the real app (jobs run inline unless held)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from absrank_client import Client, Conflict, InvalidInput, JobFailed, JobTimeout
from typer.testing import CliRunner

from tests.api.conftest import InlineDispatcher

ROWS = [
    {"algorithm": a, "problem": p, "run": r, "value": v * (1 + r)}
    for a, v in (("A", 1e-3), ("B", 4e-2), ("C", 2e-2))
    for p in ("classic/sphere/d2", "classic/rastrigin/d2", "classic/rosenbrock/d2")
    for r in range(2)
]
BODY: dict[str, Any] = {"results": ROWS, "values_are": "error"}


def test_compare_as_a_job_is_the_same_comparison(client: Client) -> None:
    as_job = client.compare(ROWS, values_are="error", as_job=True, view="full")
    direct = client.compare(ROWS, values_are="error", view="full")
    assert as_job.raw == direct.raw
    assert as_job.complete


def test_submit_poll_wait_and_fetch(client: Client) -> None:
    job = client.submit_job("/v1/comparisons", BODY, params={"view": "full"})
    assert (job.kind, job.status, job.done) == ("comparisons", "done", True)
    assert client.job(job.id) == job
    assert client.wait_job(job.id).done
    answer = client.job_answer(job.id)
    assert answer == client.get_comparison(answer["id"], view="full").raw
    with pytest.raises(Conflict) as refused:
        client.cancel_job(job.id)
    assert refused.value.type.endswith("/job-finished")


def test_a_held_job_times_out_then_is_cancelled(
    client: Client, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    job = client.submit_job("/v1/comparisons", BODY)
    assert job.status == "queued"
    assert not job.finished
    with pytest.raises(JobTimeout):
        client.wait_job(job.id, timeout=0.05)
    cancelled = client.cancel_job(job.id)
    assert cancelled.status == "cancelled"
    assert client.cancel_job(job.id).status == "cancelled"  # again: 204, then its status
    with pytest.raises(JobFailed, match="cancelled"):
        client.wait_job(job.id)


def test_a_failed_job_raises_its_problem(client: Client) -> None:
    job = client.submit_job("/v1/comparisons", BODY | {"control": "Z"})
    assert job.status == "failed"
    assert job.problem is not None
    with pytest.raises(InvalidInput) as failed:
        client.wait_job(job.id)
    assert failed.value.field == job.problem["field"]


def test_the_cli_shows_waits_for_and_cancels_jobs(
    cli_app: object, client: Client, dispatcher: InlineDispatcher, tmp_path: Path
) -> None:
    runner = CliRunner()
    done = client.submit_job("/v1/pareto-rankings", {"scores": _scores()})
    out = runner.invoke(cli_app, ["job", "status", done.id, "--format", "json"])  # type: ignore[arg-type]
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["status"] == "done"
    answer = tmp_path / "answer.json"
    out = runner.invoke(cli_app, ["job", "wait", done.id, "--answer", str(answer)])  # type: ignore[arg-type]
    assert out.exit_code == 0, out.output
    assert json.loads(answer.read_text()) == client.job_answer(done.id)
    out = runner.invoke(cli_app, ["job", "cancel", done.id])  # type: ignore[arg-type]
    assert out.exit_code == 2  # 409: done, the answer is kept
    assert "409 Job finished" in out.output

    dispatcher.hold = True
    held = client.submit_job("/v1/pareto-rankings", {"scores": _scores(2)})
    out = runner.invoke(cli_app, ["job", "cancel", held.id])  # type: ignore[arg-type]
    assert out.exit_code == 0, out.output
    assert "cancelled" in out.stdout


def _scores(runs: int = 1) -> list[dict[str, Any]]:
    return [
        {"problem": "zdt1", "algorithm": alg, "run": r, "indicator": ind, "value": val + r}
        for alg, hv, igd in (("NSGA-II", 0.65, 0.02), ("MOEA/D", 0.60, 0.05))
        for r in range(runs)
        for ind, val in (("hv", hv), ("igd", igd))
    ]


def test_a_request_the_server_makes_a_job_is_answered_as_if_at_once(
    client: Client, settings: Any
) -> None:
    """Above the synchronous budget the server answers 202 with a job nobody asked for; the
    client waits for it and returns the comparison, the same as the job's own answer."""
    rows = [{**row, "value": row["value"] * 3} for row in ROWS]  # not stored yet
    body = {"results": rows, "values_are": "error"}
    settings.sync_cpu_limit_seconds = 1e-9  # every comparison is now above the budget
    try:
        raw = client._http.post(client._url("/v1/comparisons"), json=body)
        assert raw.status_code == 202, raw.text[:200]
        assert "preference-applied" not in raw.headers
        followed = client.compare(rows, values_are="error")
    finally:
        settings.sync_cpu_limit_seconds = 2.0
    job_id = raw.headers["location"].rsplit("/", 1)[1]
    assert followed.complete
    assert followed.raw["id"] == client.job_answer(job_id)["id"]  # the same comparison
    assert followed.raw["view"] == "summary"  # compare()'s view, asked through the job
