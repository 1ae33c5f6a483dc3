"""Issue 17 §4 over HTTP: a database or queue that does not answer is a 503 with Retry-After
(problem+json from the API, an HTML page from the web pages), and ``/healthz`` names it."""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from tests.api.conftest import api_settings
from tests.db.test_failure_answers import unused_port
from tests.support import migrate
from workers.app import make_huey
from workers.inline import InlineDispatcher
from workers.tasks import HueyDispatcher

SPEC = {"function_id": "bbob/f1/i1/d2", "log2n": 12, "seed": 5}
PROBLEM = "application/problem+json"


def _client(settings: Settings, dispatcher: object) -> TestClient:
    return TestClient(create_app(settings, dispatcher=dispatcher))


@contextlib.contextmanager
def serving(tmp_path: Path, queue_url: str, **overrides: object) -> Iterator[TestClient]:
    """The real app on a migrated SQLite database, its queue a real huey on ``queue_url``."""
    settings = api_settings(tmp_path, queue_url=queue_url, **overrides)
    migrate(settings.database_url)
    dispatcher = HueyDispatcher(make_huey(settings), retry_after=settings.retry_after_seconds)
    with _client(settings, dispatcher) as client:
        yield client


def dead_redis_url() -> str:
    return f"redis://127.0.0.1:{unused_port()}/0"


@pytest.fixture
def dead_redis(tmp_path: Path) -> Iterator[TestClient]:
    """The app with its queue a RedisHuey on a port nothing listens on."""
    with serving(
        tmp_path, dead_redis_url(), queue_timeout_seconds=0.5, retry_after_seconds=11
    ) as client:
        yield client


def test_a_dead_queue_is_a_503_and_the_table_waits_in_the_database(
    dead_redis: TestClient,
) -> None:
    r = dead_redis.post("/v1/tables", json=SPEC)
    assert r.status_code == 503
    assert r.headers["content-type"] == PROBLEM
    assert r.headers["retry-after"] == "11"
    body = r.json()
    assert body["type"].endswith("/queue-unavailable")
    assert body["dependency"] == "queue"
    assert body["error"] == "ConnectionError"
    assert "127.0.0.1" not in r.text  # the queue's address is the operator's (in the log)
    # the table is there, building, with nothing marked sent: the re-dispatcher sends it
    (item,) = dead_redis.get("/v1/tables").json()["items"]
    assert item["status"] == "building"


def test_healthz_names_the_queue_that_is_down(dead_redis: TestClient) -> None:
    r = dead_redis.get("/healthz")
    assert r.status_code == 503
    assert r.headers["retry-after"] == "11"
    body = r.json()
    assert body["status"] == "degraded"
    assert body["database"] == {"status": "ok"}
    assert body["queue"]["status"] == "down"
    assert body["queue"]["error"] == "ConnectionError"
    live = dead_redis.get("/healthz/live")
    assert live.status_code == 200
    assert live.json()["status"] == "ok"


def _live_redis() -> str:
    """The test Redis (``ABSRANK_TEST_REDIS_URL``; skipped when it does not answer)."""
    url = os.environ.get("ABSRANK_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    try:
        redis.Redis.from_url(url, socket_connect_timeout=3).ping()
    except redis.RedisError as exc:
        pytest.skip(f"no Redis at {url}: {exc}")
    return url


@pytest.mark.parametrize("queue", ["sqlite", "redis"])
def test_healthz_is_ok_when_both_answer(tmp_path: Path, queue: str) -> None:
    queue_url = f"sqlite:///{tmp_path / 'queue.db'}" if queue == "sqlite" else _live_redis()
    with serving(tmp_path, queue_url, queue_name=f"health-{tmp_path.name}") as client:
        r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {
        "status": "ok",
        "version": r.json()["version"],
        "database": {"status": "ok"},
        "queue": {"status": "ok"},
    }
    assert "retry-after" not in r.headers


def test_a_database_locked_past_its_timeout_is_a_503(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, database_busy_timeout_seconds=0.3, retry_after_seconds=4)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    holder = sqlite3.connect(tmp_path / "api.db", isolation_level=None)
    try:
        with _client(settings, dispatcher) as client:
            dispatcher.app = client.app
            holder.execute("BEGIN EXCLUSIVE")
            r = client.post("/v1/tables", json=SPEC)
            holder.rollback()
            after = client.post("/v1/tables", json=SPEC)
    finally:
        holder.close()
    assert r.status_code == 503
    assert r.headers["content-type"] == PROBLEM
    assert r.headers["retry-after"] == "4"
    body = r.json()
    assert body["type"].endswith("/database-unavailable")
    assert body["dependency"] == "database"
    assert body["error"] == "OperationalError"
    assert body["detail"] == "the database is unavailable (OperationalError); try again in 4 s"
    assert after.status_code in (200, 202)  # nothing half done: the same request succeeds


@pytest.fixture
def dead_database(tmp_path: Path) -> Iterator[TestClient]:
    """The app on a PostgreSQL URL whose port nothing listens on."""
    settings = api_settings(
        tmp_path,
        database_url=f"postgresql+psycopg://postgres@127.0.0.1:{unused_port()}/absrank",
        database_connect_timeout_seconds=1,
        retry_after_seconds=9,
    )
    with _client(settings, InlineDispatcher(settings)) as client:
        yield client


def test_a_database_that_is_down_is_a_503_problem(dead_database: TestClient) -> None:
    r = dead_database.get("/v1/tables")
    assert r.status_code == 503
    assert r.headers["content-type"] == PROBLEM
    assert r.headers["retry-after"] == "9"
    assert r.json()["type"].endswith("/database-unavailable")
    health = dead_database.get("/healthz")
    assert health.status_code == 503
    assert health.headers["retry-after"] == "9"
    assert health.json()["status"] == "down"
    assert health.json()["database"]["error"] == "OperationalError"


def test_a_page_answers_a_database_that_is_down_with_an_html_503(
    dead_database: TestClient,
) -> None:
    r = dead_database.get("/")
    assert r.status_code == 503
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["retry-after"] == "9"
    assert "Service unavailable" in r.text
    assert "database is unavailable" in r.text


def test_a_queue_that_accepts_but_never_answers_does_not_hang_healthz(tmp_path: Path) -> None:
    # a listening socket nobody reads: the connection opens, the reply never comes
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        url = f"redis://127.0.0.1:{port}/0"
        with serving(tmp_path, url, queue_timeout_seconds=0.5) as client:
            start = time.monotonic()
            r = client.get("/healthz")
            elapsed = time.monotonic() - start
    assert r.status_code == 503
    assert r.json()["queue"]["error"] == "TimeoutError"
    assert elapsed < 10  # generous: the socket timeout is 0.5 + 1 s


def test_a_report_form_answers_a_dead_queue_with_an_html_503(dead_redis: TestClient) -> None:
    from tests.api.test_web_pages import MEANS, MEANS_FORM

    # its tables (rastrigin, rosenbrock) would be queued: the queue does not answer
    r = dead_redis.post("/report", data={"csv": MEANS, **MEANS_FORM}, follow_redirects=False)
    assert r.status_code == 503
    assert r.headers["content-type"].startswith("text/html")
    assert r.headers["retry-after"] == "11"
    assert "task queue is unavailable" in r.text


def test_a_production_healthz_names_the_error_class_only(tmp_path: Path) -> None:
    url = dead_redis_url()
    with serving(tmp_path, url, environment="production", queue_timeout_seconds=0.5) as client:
        r = client.get("/healthz")
    assert r.status_code == 503
    assert r.json()["queue"] == {"status": "down", "error": "ConnectionError"}


def test_a_region_scan_on_a_dead_queue_stores_no_scan(
    dead_redis: TestClient, tmp_path: Path
) -> None:
    from tests.api.test_region_scans import SCAN

    r = dead_redis.post("/v1/region-scans", json=SCAN)
    assert r.status_code == 503
    assert r.json()["type"].endswith("/queue-unavailable")
    # its first table waits in the database, none of its chunks sent; no scan names it yet
    tables = dead_redis.get("/v1/tables").json()
    assert tables["total"] == 1
    assert tables["items"][0]["status"] == "building"
    with sqlite3.connect(tmp_path / "api.db") as db:
        assert db.execute("SELECT count(*) FROM region_scans").fetchone() == (0,)
        undispatched = db.execute("SELECT count(*) FROM table_chunks WHERE dispatched_at IS NULL")
        assert undispatched.fetchone() == (tables["items"][0]["n_chunks"],)
