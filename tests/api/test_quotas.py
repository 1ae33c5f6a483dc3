"""Quotas and rate limits (issue 17 §3): requests per minute, CPU-seconds per hour and queued
chunks per key or client address, 429 problem+json with Retry-After, on memory and on the real
Redis; health routes and static files exempt; X-Forwarded-For trusted only from proxies."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
import redis
from fastapi.testclient import TestClient
from limits.aio.storage import memory as limits_memory

from app.api.keys import Identity
from app.api.quotas import Quotas
from app.config import Settings, key_sha256
from tests.api.conftest import api_app

REDIS_URL = "redis://127.0.0.1:6379/0"
KEY = "lab-key"
KEYS = [{"sha256": key_sha256(KEY), "role": "submit", "name": "lab"}, "op-plain"]
CHEAP = "/v1/functions?limit=1"


_app = api_app


def _client(tmp_path: Path, **overrides: object) -> TestClient:
    return TestClient(api_app(tmp_path, **overrides))


def _assert_429(r: object, name: str, limit: float, window: int, setting: str) -> int:
    assert r.status_code == 429, r.text  # type: ignore[attr-defined]
    assert r.headers["content-type"] == "application/problem+json"  # type: ignore[attr-defined]
    retry = int(r.headers["retry-after"])  # type: ignore[attr-defined]
    assert 1 <= retry <= window
    problem = r.json()  # type: ignore[attr-defined]
    assert problem["type"].endswith("/too-many-requests")
    assert problem["status"] == 429
    assert (problem["limit_name"], problem["limit"], problem["window_seconds"]) == (
        name,
        limit,
        window,
    )
    assert problem["limit_setting"] == setting
    assert problem["retry_after_seconds"] == retry
    return retry


@pytest.fixture
def redis_prefix() -> Iterator[str]:
    """A unique Redis key prefix; every key under it is deleted afterwards."""
    prefix = f"absrank-test-{uuid.uuid4().hex}"
    yield prefix
    client = redis.Redis.from_url(REDIS_URL)
    try:
        for key in client.scan_iter(f"{prefix}*"):
            client.delete(key)
    finally:
        client.close()


def test_requests_per_minute_on_memory(tmp_path: Path) -> None:
    with _client(tmp_path, anonymous_requests_per_minute=3) as c:
        assert [c.get(CHEAP).status_code for _ in range(3)] == [200, 200, 200]
        r = c.get(CHEAP)
        _assert_429(r, "requests", 3, 60, "anonymous_requests_per_minute")
        assert "retry in" in r.json()["detail"]
        # other routes share the quota (it is the sender's, not the route's)
        assert c.post("/v1/absolute-ranks", json={}).status_code == 429


@pytest.mark.parametrize("strategy", ["moving-window", "fixed-window", "sliding-window-counter"])
def test_requests_per_minute_on_the_real_redis(
    tmp_path: Path, redis_prefix: str, strategy: str
) -> None:
    overrides = {
        "anonymous_requests_per_minute": 2,
        "rate_limit_storage_url": REDIS_URL,
        "rate_limit_key_prefix": redis_prefix,
        "rate_limit_strategy": strategy,
    }
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = _app(tmp_path / "a", **overrides), _app(tmp_path / "b", **overrides)
    with TestClient(first) as a, TestClient(second) as b:
        assert a.get(CHEAP).status_code == 200
        assert b.get(CHEAP).status_code == 200  # another API process: one shared count
        _assert_429(a.get(CHEAP), "requests", 2, 60, "anonymous_requests_per_minute")
        _assert_429(b.get(CHEAP), "requests", 2, 60, "anonymous_requests_per_minute")
    assert first.state.quotas._primary is None  # the lifespan closed its Redis client
    stored = redis.Redis.from_url(REDIS_URL)
    try:
        assert list(stored.scan_iter(f"{redis_prefix}*"))  # counted in Redis, under the prefix
    finally:
        stored.close()


def test_a_redis_outage_fails_open_to_memory(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    dead = "redis://127.0.0.1:9/0"  # the discard port: nothing listens
    app = _app(tmp_path, anonymous_requests_per_minute=2, rate_limit_storage_url=dead)
    with caplog.at_level(logging.WARNING, logger="app.api.quotas"), TestClient(app) as c:
        codes = [c.get(CHEAP).status_code for _ in range(3)]
    assert codes == [200, 200, 429]  # answered, and still limited (in this process's memory)
    warnings = [r for r in caplog.records if "rate-limit storage" in r.getMessage()]
    assert len(warnings) == 1  # one warning, not one per request
    assert "127.0.0.1:9/0" in warnings[0].getMessage()


def test_health_routes_and_static_files_are_exempt(tmp_path: Path) -> None:
    with _client(tmp_path, anonymous_requests_per_minute=1) as c:
        assert c.get(CHEAP).status_code == 200
        assert c.get(CHEAP).status_code == 429
        for _ in range(3):
            assert c.get("/healthz").status_code == 200
            assert c.get("/static/absrank.css").status_code == 200


def test_addresses_are_counted_apart(tmp_path: Path) -> None:
    app = _app(tmp_path, anonymous_requests_per_minute=1)
    with TestClient(app, client=("192.0.2.1", 1000)) as one:
        two = TestClient(app, client=("192.0.2.2", 1000))
        assert one.get(CHEAP).status_code == 200
        assert one.get(CHEAP).status_code == 429
        assert two.get(CHEAP).status_code == 200  # another address has its own quota
        assert two.get(CHEAP).status_code == 429


def test_x_forwarded_for_is_not_trusted_by_default(tmp_path: Path) -> None:
    with _client(tmp_path, anonymous_requests_per_minute=1) as c:
        assert c.get(CHEAP, headers={"X-Forwarded-For": "198.51.100.1"}).status_code == 200
        # a new X-Forwarded-For each time does not make a new client
        assert c.get(CHEAP, headers={"X-Forwarded-For": "198.51.100.2"}).status_code == 429


def test_x_forwarded_for_names_the_client_behind_a_trusted_proxy(tmp_path: Path) -> None:
    app = _app(tmp_path, anonymous_requests_per_minute=1, trusted_proxies=["10.0.0.0/8"])
    with TestClient(app, client=("10.1.2.3", 1000)) as proxy:
        # the proxy appends the peer it saw; what the client wrote before it is not trusted
        first = {"X-Forwarded-For": "203.0.113.9, 198.51.100.1"}
        assert proxy.get(CHEAP, headers=first).status_code == 200
        spoofed = {"X-Forwarded-For": "203.0.113.10, 198.51.100.1"}
        assert proxy.get(CHEAP, headers=spoofed).status_code == 429  # the same client
        other = {"X-Forwarded-For": "198.51.100.2"}
        assert proxy.get(CHEAP, headers=other).status_code == 200
        chained = {"X-Forwarded-For": "198.51.100.3, 10.9.9.9"}  # through two trusted proxies
        assert proxy.get(CHEAP, headers=chained).status_code == 200
    untrusted = TestClient(app, client=("192.0.2.7", 1000))
    assert untrusted.get(CHEAP, headers=other).status_code == 200  # its own address...
    assert untrusted.get(CHEAP, headers={"X-Forwarded-For": "1.1.1.1"}).status_code == 429


def test_keys_have_their_own_quota_and_operators_none(tmp_path: Path) -> None:
    with _client(
        tmp_path, api_keys=KEYS, anonymous_requests_per_minute=1, key_requests_per_minute=2
    ) as c:
        assert c.get(CHEAP).status_code == 200
        assert c.get(CHEAP).status_code == 429
        key = {"X-API-Key": KEY}
        assert [c.get(CHEAP, headers=key).status_code for _ in range(2)] == [200, 200]
        r = c.get(CHEAP, headers=key)
        _assert_429(r, "requests", 2, 60, "key_requests_per_minute")
        assert "key 'lab'" in r.json()["detail"]
        operator = {"X-API-Key": "op-plain"}
        assert {c.get(CHEAP, headers=operator).status_code for _ in range(5)} == {200}
        # a wrong key counts against its address (and is a 401 where a key matters)
        assert c.get(CHEAP, headers={"X-API-Key": "wrong"}).status_code == 429


def test_the_window_frees_at_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    now = [1_000_000.0]
    fake = SimpleNamespace(time=lambda: now[0], monotonic=time.monotonic)
    monkeypatch.setattr(limits_memory, "time", fake)  # the clock of limits' memory storage
    app = _app(tmp_path, anonymous_requests_per_minute=2, rate_limit_strategy="fixed-window")
    app.state.quotas.clock = fake.time
    with TestClient(app) as c:
        assert [c.get(CHEAP).status_code for _ in range(2)] == [200, 200]
        now[0] += 20
        retry = _assert_429(c.get(CHEAP), "requests", 2, 60, "anonymous_requests_per_minute")
        assert retry == 40  # the fixed window opened 20 s ago
        now[0] += retry - 1
        assert c.get(CHEAP).status_code == 429
        now[0] += 1.5
        assert c.get(CHEAP).status_code == 200  # a new window


def test_moving_window_frees_a_request_a_minute_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [2_000_000.0]
    fake = SimpleNamespace(time=lambda: now[0], monotonic=time.monotonic)
    monkeypatch.setattr(limits_memory, "time", fake)
    app = _app(tmp_path, anonymous_requests_per_minute=2)
    app.state.quotas.clock = fake.time
    with TestClient(app) as c:
        assert c.get(CHEAP).status_code == 200
        now[0] += 30
        assert c.get(CHEAP).status_code == 200
        now[0] += 10
        assert _assert_429(c.get(CHEAP), "requests", 2, 60, "anonymous_requests_per_minute") == 20
        now[0] += 21  # the first request left the window, the second is still in it
        assert c.get(CHEAP).status_code == 200
        assert c.get(CHEAP).status_code == 429


def test_cpu_seconds_are_charged_the_handler_time(tmp_path: Path) -> None:
    app = _app(tmp_path, anonymous_cpu_seconds_per_hour=1000)

    @app.get("/test-slow")
    def slow() -> dict[str, bool]:
        time.sleep(0.3)
        return {"ok": True}

    with TestClient(app) as c:
        quotas: Quotas = app.state.quotas
        cpu = quotas.anonymous.cpu
        assert cpu is not None

        async def used() -> int:
            limiters, _ = quotas._limiters()
            stats = await limiters.window.get_window_stats(cpu.item, "address:testclient")
            return cpu.item.amount - stats.remaining

        assert c.get("/test-slow").status_code == 200
        charged_ms = c.portal.call(used)  # type: ignore[union-attr]
        assert 300 <= charged_ms < 3000  # the handler's 0.3 s, in milliseconds (generous bound)


def test_cpu_seconds_per_hour_refuse_once_used_up(tmp_path: Path) -> None:
    with _client(tmp_path, anonymous_cpu_seconds_per_hour=0.001) as c:
        assert c.get(CHEAP).status_code == 200  # runs: its cost is known after it
        r = c.get(CHEAP)
        _assert_429(r, "cpu_seconds", 0.001, 3600, "anonymous_cpu_seconds_per_hour")


def test_charge_cpu_counts_a_jobs_estimate(tmp_path: Path) -> None:
    app = _app(tmp_path, api_keys=KEYS, key_cpu_seconds_per_hour=10)
    lab = {"X-API-Key": KEY}
    with TestClient(app) as c:
        assert c.get(CHEAP, headers=lab).status_code == 200
        identity = Identity("testclient", "lab", "submit")
        c.portal.call(app.state.quotas.charge_cpu, identity, 12.5)  # type: ignore[union-attr]
        _assert_429(c.get(CHEAP, headers=lab), "cpu_seconds", 10, 3600, "key_cpu_seconds_per_hour")
        assert c.get(CHEAP).status_code == 200  # anonymous: another quota


def test_a_queued_job_is_charged_to_its_senders_cpu_seconds(tmp_path: Path) -> None:
    """A job's work is charged when it is queued (its estimate; a comparison asked for as a
    job, whose rows the worker reads: the synchronous limit), so jobs cannot get round the
    hour's CPU-seconds; the same request again queues nothing and costs nothing."""
    rows = [
        {"algorithm": a, "problem": p, "run": 0, "value": v}
        for a, v in (("A", 0.1), ("B", 0.2))
        for p in ("p1", "p2", "p3")
    ]
    prefer = {"prefer": "respond-async"}
    with _client(tmp_path, anonymous_cpu_seconds_per_hour=3.0) as c:
        first = c.post("/v1/comparisons", json={"results": rows}, headers=prefer)
        assert first.status_code == 202, first.text  # charged 2 s (sync_cpu_limit_seconds)
        again = c.post("/v1/comparisons", json={"results": rows}, headers=prefer)
        assert again.status_code == 202  # the same job: nothing queued, nothing charged
        other = [{**r, "value": r["value"] * 2} for r in rows]
        second = c.post("/v1/comparisons", json={"results": other}, headers=prefer)
        assert second.status_code == 202  # admitted (1 s left), then charged: 4 s used
        _assert_429(c.get(CHEAP), "cpu_seconds", 3.0, 3600, "anonymous_cpu_seconds_per_hour")


def test_queued_chunks_are_limited_and_nothing_is_stored_over_the_quota(tmp_path: Path) -> None:
    # test settings: 2^12 points a table in chunks of 2^10, so 4 chunks a table
    with _client(tmp_path, anonymous_chunks_per_hour=6) as c:
        first = c.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"})
        assert first.status_code in (200, 202)
        assert c.get("/v1/tables").json()["total"] == 1
        again = c.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"})
        assert again.status_code in (200, 202)  # an existing table queues nothing
        r = c.post("/v1/tables", json={"function_id": "classic/rastrigin/d2", "seed": 1})
        _assert_429(r, "chunks", 6, 3600, "anonymous_chunks_per_hour")
        assert "asks for 4" in r.json()["detail"]
        assert c.get("/v1/tables").json()["total"] == 1  # no row of the refused table
        values = [{"algorithm": "A", "value": 1.0}, {"algorithm": "B", "value": 2.0}]
        scan = {"function_id": "classic/rastrigin/d2", "values": values, "log2n": 12}
        _assert_429(c.post("/v1/region-scans", json=scan), "chunks", 6, 3600,
                    "anonymous_chunks_per_hour")  # fmt: skip
        assert c.get("/v1/tables").json()["total"] == 1


def test_a_region_scan_is_charged_all_its_new_tables_at_once(tmp_path: Path) -> None:
    values = [{"algorithm": "A", "value": 1.0}, {"algorithm": "B", "value": 2.0}]
    # 3 tables of 2^11 points in chunks of 2^10: 6 chunks, over a quota of 5
    scan = {"function_id": "classic/rastrigin/d2", "values": values, "log2n": 11,
            "deltas": [0.1, 0.5, 1.0]}  # fmt: skip
    with _client(tmp_path, anonymous_chunks_per_hour=5) as c:
        r = c.post("/v1/region-scans", json=scan)
        _assert_429(r, "chunks", 5, 3600, "anonymous_chunks_per_hour")
        assert "asks for 6" in r.json()["detail"]
        assert c.get("/v1/tables").json()["total"] == 0  # not one of its tables was queued
        two = c.post("/v1/region-scans", json={**scan, "deltas": [0.1, 0.5]})
        assert two.status_code in (200, 202), two.text
        assert c.get("/v1/tables").json()["total"] == 2


def test_a_request_for_more_chunks_than_the_quota_says_so(tmp_path: Path) -> None:
    with _client(tmp_path, anonymous_chunks_per_hour=2) as c:
        r = c.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"})
        assert _assert_429(r, "chunks", 2, 3600, "anonymous_chunks_per_hour") == 3600
        assert c.get("/v1/tables").json()["total"] == 0


def test_the_memory_check_costs_microseconds(tmp_path: Path) -> None:
    quotas = Quotas(Settings(environment="test", anonymous_requests_per_minute=10**9))
    identity = Identity("192.0.2.1")

    async def run(n: int) -> float:
        await quotas.admit(identity)  # the storage is made on first use
        start = time.perf_counter()
        for _ in range(n):
            await quotas.admit(identity)
        return (time.perf_counter() - start) / n

    per_check = asyncio.run(run(2000))
    assert per_check < 0.001  # generous: about 10-30 µs on one core


def test_a_ladder_is_charged_all_its_new_levels_at_once(tmp_path: Path) -> None:
    body = {"function_id": "classic/sphere/d2", "ladder": True, "log2n": 10}
    with _client(tmp_path, anonymous_chunks_per_hour=3, nested_levels=4) as c:
        r = c.post("/v1/tables", json=body)  # 1 + levels tables of one chunk each
        _assert_429(r, "chunks", 3, 3600, "anonymous_chunks_per_hour")
        assert c.get("/v1/tables").json()["total"] == 0  # no level was queued
    (tmp_path / "more").mkdir()
    with _client(tmp_path / "more", anonymous_chunks_per_hour=5, nested_levels=4) as c:
        assert c.post("/v1/tables", json=body).status_code in (200, 202)
        assert c.get("/v1/tables").json()["total"] == 5
        assert c.post("/v1/tables", json=body).status_code == 200  # all stored: costs nothing
