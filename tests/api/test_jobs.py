"""Jobs (issue 17 §2) on SQLite and PostgreSQL: ``Prefer: respond-async``, the same job for
the same request, progress, cancellation mid-way, stored answers and problems, worker death."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from starlette.requests import Request

from app.api.jobs import prefers_async
from app.db import session_scope
from app.domain.cost import WorkControl
from app.main import create_app
from app.repositories.jobs import JobRepository
from app.services import jobs
from app.services._table_specs import utc_now
from app.services.job_kinds import COMPARISONS, EXECUTORS
from tests.api.conftest import BACKENDS, api_settings
from tests.support import count_checks, migrate
from workers.inline import InlineDispatcher

ASYNC = {"Prefer": "respond-async"}
# three problems with exact v1 or cheap tables; A and B tie on average rank
VALUES = {
    "classic/sphere/d2": {"A": 0.2, "B": 0.3, "C": 0.1},
    "classic/rastrigin/d2": {"A": 2.0, "B": 3.0, "C": 1.0},
    "classic/rosenbrock/d2": {"A": 3.0, "B": 1.0, "C": 2.0},
}


def comparison(runs: int = 3, **options: Any) -> dict[str, Any]:
    rows = [
        {"algorithm": a, "problem": p, "run": r, "value": v * (1 + 0.1 * r)}
        for p, cells in VALUES.items()
        for a, v in cells.items()
        for r in range(runs)
    ]
    return {"results": rows, "reduction": "best", "values_are": "error", **options}


class App:
    """A test client, its app's dispatcher and what a job run needs."""

    def __init__(self, client: TestClient, dispatcher: InlineDispatcher) -> None:
        self.client = client
        self.dispatcher = dispatcher

    @property
    def sm(self) -> Any:
        return self.client.app.state.sessionmaker  # type: ignore[attr-defined]

    def env(self) -> jobs.JobEnv:
        return self.dispatcher.job_env()


@pytest.fixture(params=BACKENDS)
def make_app(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., App]]:
    """``make_app(hold=False, **settings)``: the app on a fresh database of the backend."""
    stack: list[TestClient] = []

    def make(*, hold: bool = False, **overrides: object) -> App:
        if request.param == "postgres":
            overrides.setdefault("database_url", request.getfixturevalue("pg_url_factory")())
        folder = tmp_path / f"app{len(stack)}"
        folder.mkdir()
        settings = api_settings(folder, **overrides)
        migrate(settings.database_url)
        dispatcher = InlineDispatcher(settings)
        dispatcher.hold = hold
        app = create_app(settings, dispatcher=dispatcher)
        dispatcher.app = app
        client = TestClient(app)
        client.__enter__()
        stack.append(client)
        return App(client, dispatcher)

    yield make
    for client in stack:
        client.__exit__(None, None, None)


def accepted(r: Any) -> dict[str, Any]:
    assert r.status_code == 202, r.text
    job = r.json()
    assert r.headers["location"] == job["location"] == f"/v1/jobs/{job['id']}"
    assert r.headers["preference-applied"] == "respond-async"
    assert job["answer"] == job["location"] + "/answer"
    return job


def test_a_comparison_job_answers_the_bytes_of_the_synchronous_route(
    make_app: Callable[..., App],
) -> None:
    sync, asynchronous = make_app(), make_app()  # two databases: nothing shared
    direct = sync.client.post("/v1/comparisons", json=comparison())
    assert direct.status_code == 201, direct.text
    job = accepted(asynchronous.client.post("/v1/comparisons", json=comparison(), headers=ASYNC))
    assert job["kind"] == "comparisons"
    assert job["status"] == "done"  # the inline dispatcher ran it
    assert job["attempt"] == 1
    answer = asynchronous.client.get(job["answer"])
    assert answer.status_code == 200
    assert answer.headers["content-type"] == "application/json"
    assert answer.headers["cache-control"] == "public, max-age=31536000, immutable"
    assert answer.content == direct.content
    # the job stored the comparison, as the route does: the route now answers it as stored
    again = asynchronous.client.post("/v1/comparisons", json=comparison())
    assert again.status_code == 200
    assert again.content == direct.content


def test_the_identical_request_is_the_same_job_and_runs_once(make_app: Callable[..., App]) -> None:
    app = make_app()
    first = accepted(app.client.post("/v1/comparisons", json=comparison(), headers=ASYNC))
    second = accepted(
        app.client.post(
            "/v1/comparisons", json=comparison(), headers={"Prefer": "wait=5, Respond-Async"}
        )
    )
    assert second["id"] == first["id"]
    assert app.dispatcher.jobs == [first["id"]]  # queued once, answered from the store after
    other = accepted(app.client.post("/v1/comparisons", json=comparison(2), headers=ASYNC))
    assert other["id"] != first["id"]
    summary = accepted(
        app.client.post("/v1/comparisons?view=summary", json=comparison(), headers=ASYNC)
    )
    assert summary["id"] != first["id"]  # another answer, another job
    assert b'"view":"summary"' in app.client.get(summary["answer"]).content


def test_pareto_and_rank_jobs_answer_the_synchronous_bytes(make_app: Callable[..., App]) -> None:
    app = make_app()
    scores = [
        {"problem": f"p{p}", "algorithm": f"A{a}", "run": r, "indicator": i, "value": v}
        for p in range(2)
        for a in range(3)
        for r in range(3)
        for i, v in (("hv", 0.1 * a + 0.01 * r + 0.03 * p), ("igd", 1.0 - 0.1 * a + 0.02 * r))
    ]
    pareto = {"scores": scores, "orientation": {"hv": "max"}}
    ranks = {"function_id": "classic/sphere/d2", "values": [0.5, 0.01, 1e-6], "runs": 3}
    ranks["aggregate"] = "mean"
    for path, body, kind in (
        ("/v1/pareto-rankings", pareto, "pareto-rankings"),
        ("/v1/absolute-ranks", ranks, "absolute-ranks"),
    ):
        job = accepted(app.client.post(path, json=body, headers=ASYNC))
        assert (job["kind"], job["status"]) == (kind, "done")
        direct = app.client.post(path, json=body)
        assert direct.status_code in (200, 201), direct.text
        assert app.client.get(job["answer"]).content == direct.content


def test_a_failure_is_stored_as_the_problem_the_route_answers(
    make_app: Callable[..., App],
) -> None:
    app = make_app()
    body = comparison(control="Z")  # no such algorithm
    direct = app.client.post("/v1/comparisons", json=body)
    assert direct.status_code == 422, direct.text
    job = accepted(app.client.post("/v1/comparisons", json=body, headers=ASYNC))
    assert job["status"] == "failed"
    problem = direct.json()
    stored = job["problem"]
    for key in ("type", "title", "status", "detail", "field"):
        assert stored[key] == problem[key]
    replay = app.client.get(job["answer"])
    assert replay.status_code == 422
    assert replay.headers["content-type"] == "application/problem+json"
    assert {k: v for k, v in replay.json().items() if k != "instance"} == {
        k: v for k, v in problem.items() if k != "instance"
    }
    # a failed job is not cancelled (its problem is kept), but the same request runs again
    assert app.client.delete(job["location"]).status_code == 409
    accepted(app.client.post("/v1/comparisons", json=body, headers=ASYNC))
    assert app.dispatcher.jobs == [job["id"], job["id"]]


class Steps:
    """An executor of ``steps`` checks of the control, ``pause`` seconds apart."""

    def __init__(self, steps: int = 2000, pause: float = 0.005) -> None:
        self.steps, self.pause = steps, pause
        self.done = 0
        self.stopped = threading.Event()

    def __call__(self, run: jobs.JobRun) -> jobs.JobAnswer:
        try:
            for i in range(self.steps):
                run.control.check(i, self.steps)
                self.done = i
                time.sleep(self.pause)
        finally:
            self.stopped.set()
        return jobs.JobAnswer(b'{"steps":%d}' % self.steps)


def _submit_held(app: App, body: dict[str, Any]) -> str:
    r = app.client.post("/v1/comparisons", json=body, headers=ASYNC)
    job = accepted(r)
    assert job["status"] == "queued"
    assert r.headers["retry-after"] == "1"
    return str(job["id"])


def _until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out"
        time.sleep(0.01)


def test_progress_eta_and_a_cancel_that_stops_the_work_mid_way(
    make_app: Callable[..., App],
) -> None:
    app = make_app(hold=True, job_check_seconds=0.02)
    job_id = _submit_held(app, comparison())
    steps = Steps()
    outcome: list[str] = []
    worker = threading.Thread(
        target=lambda: outcome.append(jobs.run_job(app.env(), job_id, {COMPARISONS: steps}))
    )
    worker.start()

    def status() -> dict[str, Any]:
        return app.client.get(f"/v1/jobs/{job_id}").json()

    _until(lambda: (status().get("progress") or {}).get("done", 0) >= 20)
    seen = status()
    assert seen["status"] == "running"
    assert seen["progress"]["total"] == steps.steps
    assert seen["eta_seconds"] is not None
    assert seen["eta_seconds"] > 0
    assert seen["started_at"] is not None
    not_yet = app.client.get(f"/v1/jobs/{job_id}/answer")
    assert not_yet.status_code == 409
    assert not_yet.json()["type"].endswith("/job-not-done")
    assert not_yet.headers["location"] == f"/v1/jobs/{job_id}"

    cancelled = app.client.delete(f"/v1/jobs/{job_id}")
    assert cancelled.status_code == 202
    assert cancelled.json()["status"] == "cancelled"
    assert steps.stopped.wait(10)  # stopped at its next check, not after its 2000 steps
    worker.join(10)
    assert outcome == ["cancelled"]
    assert steps.done < steps.steps - 1
    assert status()["status"] == "cancelled"
    assert app.client.delete(f"/v1/jobs/{job_id}").status_code == 204
    assert app.client.get(f"/v1/jobs/{job_id}/answer").status_code == 409

    # sent again, the cancelled job is queued again and runs to its end
    _submit_held(app, comparison())
    quick = Steps(steps=3, pause=0)
    assert jobs.run_job(app.env(), job_id, {COMPARISONS: quick}) == "done"
    done = status()
    assert (done["status"], done["attempt"]) == ("done", 2)
    assert app.client.get(done["answer"]).content == b'{"steps":3}'
    refused = app.client.delete(f"/v1/jobs/{job_id}")
    assert refused.status_code == 409
    assert refused.json()["type"].endswith("/job-finished")
    assert app.client.get(done["answer"]).content == b'{"steps":3}'  # kept


def test_a_job_whose_worker_died_is_run_again(make_app: Callable[..., App]) -> None:
    app = make_app(hold=True, job_lease_seconds=30)
    job_id = _submit_held(app, comparison())
    # a worker claimed it 31 s ago, then died: its 30 s lease was never renewed
    start = utc_now() - timedelta(seconds=31)
    with session_scope(app.sm) as session:
        attempt = JobRepository(session).claim(
            job_id, now=start, lease_until=start + timedelta(seconds=30)
        )
    assert attempt == 1
    assert app.client.get(f"/v1/jobs/{job_id}").json()["status"] == "running"
    # while the lease held, it was left alone, and a duplicate message found nothing to claim
    before = start + timedelta(seconds=29)
    assert jobs.redispatch_jobs(app.sm, app.dispatcher.settings, app.dispatcher, now=before) == 0
    assert jobs.run_job(app.env(), job_id, {}, now=before) == "skipped"

    app.dispatcher.hold = False
    assert jobs.redispatch_jobs(app.sm, app.dispatcher.settings, app.dispatcher) == 1
    later = utc_now()
    done = app.client.get(f"/v1/jobs/{job_id}").json()
    assert (done["status"], done["attempt"]) == ("done", 2)
    direct = app.client.post("/v1/comparisons", json=comparison())
    assert app.client.get(done["answer"]).content == direct.content
    # the dead worker's claim, were it to wake up, writes nothing
    with session_scope(app.sm) as session:
        assert not JobRepository(session).finish(
            job_id, attempt, answer=b"{}", final=True, now=later
        )


def test_a_lost_message_is_sent_again(make_app: Callable[..., App]) -> None:
    app = make_app(hold=True, job_lease_seconds=30)
    job_id = _submit_held(app, comparison())
    later = utc_now() + timedelta(seconds=31)
    assert jobs.redispatch_jobs(app.sm, app.dispatcher.settings, app.dispatcher, now=later) == 1
    assert app.dispatcher.jobs == [job_id, job_id]
    # just re-sent: not again within the lease
    assert jobs.redispatch_jobs(app.sm, app.dispatcher.settings, app.dispatcher, now=later) == 0


class DeadQueue:
    def enqueue_job(self, job_id: str) -> None:
        raise ConnectionError("the queue is down")


def test_a_job_whose_enqueue_failed_is_sent_by_the_redispatcher(
    make_app: Callable[..., App],
) -> None:
    app = make_app(hold=True)
    request = b'{"steps":1}'
    with pytest.raises(ConnectionError):
        jobs.submit(app.sm, DeadQueue(), COMPARISONS, request, owner=None, may_queue_builds=False)
    job_id, _ = jobs.job_id_for(COMPARISONS, request)
    assert jobs.status(app.sm, job_id).status == "queued"  # stored, not dispatched
    assert jobs.redispatch_jobs(app.sm, app.dispatcher.settings, app.dispatcher) == 1
    assert app.dispatcher.jobs == [job_id]


def test_unknown_jobs_are_404(make_app: Callable[..., App]) -> None:
    app = make_app()
    for method, path in (
        ("GET", "/v1/jobs/j000"),
        ("GET", "/v1/jobs/j000/answer"),
        ("DELETE", "/v1/jobs/j000"),
    ):
        r = app.client.request(method, path)
        assert r.status_code == 404
        assert r.json()["field"] == "job_id"


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([], False),
        ([("prefer", "respond-async")], True),
        ([("prefer", "wait=10, RESPOND-ASYNC; x=1")], True),
        ([("prefer", "return=minimal"), ("prefer", "respond-async")], True),
        ([("prefer", "return=minimal")], False),
        ([("prefer", "respond-asyncx")], False),
    ],
)
def test_prefer_is_parsed_as_rfc_7240_says(headers: list[tuple[str, str]], expected: bool) -> None:
    scope = {
        "type": "http",
        "headers": [(k.encode(), v.encode()) for k, v in headers],
        "method": "POST",
        "path": "/",
    }
    assert prefers_async(Request(scope)) is expected


def test_the_control_of_a_job_is_throttled() -> None:
    """``should_stop`` and ``on_progress`` touch the database at most once per
    ``job_check_seconds`` (a fake clock; counted calls)."""
    calls: list[str] = []

    class Claim(jobs._Claim):  # the throttling of the real class, counted
        def _renew(self) -> None:
            calls.append("poll")

    now = [0.0]
    settings = api_settings(Path("/nonexistent"), job_check_seconds=1.0)
    claim = Claim(None, settings, "j0", 1, clock=lambda: now[0])  # type: ignore[arg-type]
    control = WorkControl(should_stop=claim.should_stop)
    for step in range(1000):
        now[0] = step * 0.01  # 10 s of checks, 100 per second
        control.check()
    assert calls.count("poll") == 10


def test_a_cancelled_rank_job_stops_inside_its_aggregates(
    make_app: Callable[..., App], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An absolute-ranks job of means over ``runs_by_algorithm`` (each check of its
    convolutions "takes" 20 ms): DELETE stops it at its next check, not after its 50 means."""
    app = make_app(hold=True, job_check_seconds=0.02)
    checks = count_checks(monkeypatch, 0.02)
    body = {
        "function_id": "classic/sphere/d10",
        "values_are": "error",
        "aggregate": "mean",
        "runs_by_algorithm": {f"a{i}": [60.0 + 0.4 * i] * 8 for i in range(50)},
    }
    job = accepted(app.client.post("/v1/absolute-ranks", json=body, headers=ASYNC))
    outcome: list[str] = []
    worker = threading.Thread(
        target=lambda: outcome.append(jobs.run_job(app.env(), job["id"], EXECUTORS))
    )
    worker.start()
    _until(lambda: checks[0] >= 5)
    assert app.client.delete(job["location"]).status_code == 202
    worker.join(10)
    assert outcome == ["cancelled"]
    seen = checks[0]
    assert seen < 50
    time.sleep(0.3)
    assert checks[0] == seen
