"""The bounded loopback load test: the service cannot be tied up by what its limits allow.

A real ``absrank serve`` (its own process, default limits, a fresh SQLite database, no worker)
receives :data:`REQUESTS` mixed requests from :data:`CONCURRENCY` concurrent clients: cheap
ranks and listings, stat tests, comparisons, indicators, the heaviest requests the defaults
still answer synchronously, requests the cost model must refuse or queue, and hostile bodies.
Meanwhile a probe asks ``GET /healthz`` every :data:`PROBE_INTERVAL` seconds. It asserts:

- no answer but the intended ones: every request names the statuses it may get (its success,
  its refusal, 429 from the rate limits); no 5xx, no dropped connection;
- ``/healthz`` stays fast: its p99 under :data:`HEALTH_P99_SECONDS` throughout;
- the server's memory comes back: its RSS after the load within 20% of its RSS after a warm-up
  round (the same requests once each, so that what is imported or cached once is in both).

The counts and times are bounded (the whole test stops by itself in a few minutes at worst)
and only loopback is used.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.api.test_bad_inputs import CATALOGUE, Bad
from tests.support import free_port

REQUESTS = 2000
CONCURRENCY = 32
PROBE_INTERVAL = 0.05
HEALTH_P99_SECONDS = 0.100
RSS_GROWTH = 0.20
#: Upper bound of the whole load (the test fails rather than hang past it).
LOAD_TIMEOUT = 600.0
SEED = 20261206

SPHERE = "classic/sphere/d10"
OK = (200,)
STORED = (200, 201)
RATE_LIMITED = (429,)


@dataclass(frozen=True)
class Call:
    """One request of the mix and the statuses it may answer."""

    kind: str
    method: str
    path: str
    statuses: tuple[int, ...]
    json: object | None = None
    content: bytes | None = None
    content_type: str | None = None
    files: dict[str, tuple[str, bytes]] | None = None
    data: dict[str, str] | None = None
    params: dict[str, str] | None = None


def _matrix(rng: random.Random, rows: int, cols: int) -> list[list[float]]:
    return [[round(rng.uniform(0, 10), 6) for _ in range(cols)] for _ in range(rows)]


def _comparison(rng: random.Random, algorithms: int, problems: int, runs: int) -> dict[str, object]:
    rows = [
        {
            "algorithm": f"A{a}",
            "problem": f"p{p}",
            "run": r,
            "value": round(rng.uniform(0, 5) + 0.1 * a, 6),
        }
        for a in range(algorithms)
        for p in range(problems)
        for r in range(runs)
    ]
    return {"results": rows, "absolute": "off"}


def _front(rng: random.Random, n: int, m: int) -> list[list[float]]:
    return [[round(rng.uniform(0, 1), 6) for _ in range(m)] for _ in range(n)]


def _bad(bad: Bad) -> Call:
    return Call(
        f"bad:{bad.name}",
        bad.method,
        bad.path,
        (*bad.statuses, *RATE_LIMITED),
        content=bad.content,
        content_type=bad.content_type or None,
        files=bad.files,
        data=bad.data or None,
        params=bad.params or None,
    )


def mix(rng: random.Random) -> list[tuple[float, Call]]:
    """The weighted request kinds (each a fresh, seeded request)."""
    heavy_points = 100
    calls: list[tuple[float, Call]] = [
        (
            30,
            Call(
                "ranks",
                "POST",
                "/v1/absolute-ranks",
                (*OK, *RATE_LIMITED),
                json={
                    "function_id": SPHERE,
                    "values_are": "error",
                    "values": [rng.uniform(1e-6, 50) for _ in range(rng.choice((1, 10, 1000)))],
                },
            ),
        ),
        (8, Call("functions", "GET", "/v1/functions", (*OK, *RATE_LIMITED))),
        (4, Call("function", "GET", f"/v1/functions/{SPHERE}", (*OK, *RATE_LIMITED))),
        (4, Call("page", "GET", "/", (*OK, *RATE_LIMITED))),
        (6, Call("not found", "GET", "/v1/tables/t000000000000000000000000", (404, 429))),
        (
            8,
            Call(
                "friedman",
                "POST",
                "/v1/tests/friedman",
                (*OK, *RATE_LIMITED),
                json={"values": _matrix(rng, 30, 8)},
            ),
        ),
        (
            4,
            Call(
                "wilcoxon",
                "POST",
                "/v1/tests/wilcoxon",
                (*OK, *RATE_LIMITED),
                json={
                    "x": [rng.uniform(0, 1) for _ in range(400)],
                    "y": [rng.uniform(0, 1.1) for _ in range(400)],
                },
            ),
        ),
        (
            5,
            Call(
                "evaluate",
                "POST",
                "/v1/functions/classic/rastrigin/d2/evaluate",
                (*OK, *RATE_LIMITED),
                json={"points": [[rng.uniform(-5, 5), rng.uniform(-5, 5)] for _ in range(100)]},
            ),
        ),
        (
            5,
            Call(
                "comparison",
                "POST",
                "/v1/comparisons",
                (*STORED, *RATE_LIMITED),
                json=_comparison(rng, 5, 6, 3),
            ),
        ),
        (
            0.5,
            Call(
                "comparison (heavy)",
                "POST",
                "/v1/comparisons",
                (*STORED, 202, 422, *RATE_LIMITED),
                json=_comparison(rng, 40, 30, 5),
            ),
        ),
        (
            4,
            Call(
                "hypervolume",
                "POST",
                "/v1/indicators",
                (*OK, *RATE_LIMITED),
                json={
                    "front": _front(rng, 50, 3),
                    "reference_point": [1.1, 1.1, 1.1],
                    "indicators": ["hv"],
                },
            ),
        ),
        (
            0.5,
            Call(
                "hypervolume (heavy)",
                "POST",
                "/v1/indicators",
                (*OK, 202, 413, 422, *RATE_LIMITED),
                json={
                    "front": _front(rng, heavy_points, 8),
                    "reference_point": [1.1] * 8,
                    "indicators": ["hv"],
                },
            ),
        ),
        (
            0.5,
            Call(
                "hypervolume (refused)",
                "POST",
                "/v1/indicators",
                (413, 422, *RATE_LIMITED),
                json={
                    "front": _front(rng, 200, 10),
                    "reference_point": [1.1] * 10,
                    "indicators": ["hv"],
                },
            ),
        ),
        (
            0.5,
            Call(
                "aggregates (heavy)",
                "POST",
                "/v1/absolute-ranks",
                (*OK, 202, 413, 422, *RATE_LIMITED),
                json={
                    "function_id": SPHERE,
                    "values_are": "error",
                    "aggregate": "mean",
                    "runs": 64,
                    "values": [rng.uniform(1, 30) for _ in range(50)],
                },
            ),
        ),
        (
            1,
            Call(
                "table request",
                "POST",
                "/v1/tables",
                (200, 201, 202, 401, 409, 422, *RATE_LIMITED),
                json={"function_id": "bbob/f1/i1/d2", "log2n": 12},
            ),
        ),
    ]
    return calls + [(10 / len(CATALOGUE), _bad(b)) for b in CATALOGUE]


def _rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no VmRSS for {pid}")


@contextmanager
def running_server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    """``absrank serve`` in its own process (default limits), stopped by its PID: its URL
    and PID."""
    port = free_port()
    env = {
        **os.environ,
        "ABSRANK_ENVIRONMENT": "test",
        "ABSRANK_DATABASE_URL": f"sqlite:///{tmp_path / 'load.db'}",
        "ABSRANK_QUEUE_URL": f"sqlite:///{tmp_path / 'queue.db'}",
        "ABSRANK_PRELOAD_FIGURES": "false",
        # one client address sends everything here: the per-address quotas (600 requests a
        # minute, tests/api/test_quotas.py) would answer most of the load with cheap 429s
        "ABSRANK_ANONYMOUS_REQUESTS_PER_MINUTE": "0",
        "ABSRANK_ANONYMOUS_CPU_SECONDS_PER_HOUR": "0",
    }
    exe = [sys.executable, "-m", "app.cli"]
    subprocess.run([*exe, "migrate"], env=env, check=True, capture_output=True, timeout=120)
    log = (tmp_path / "serve.log").open("wb")
    process = subprocess.Popen(
        [
            *exe,
            "serve",
            "--port",
            str(port),
            "--no-embedded-worker",
            "--no-default-tables",
            "--no-seed",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()[-2000:]
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code < 500:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "absrank serve did not start within 60 s"
            time.sleep(0.1)
        yield url, process.pid
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=10)
        log.close()


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, int]]:
    with running_server(tmp_path) as running:
        yield running


async def _send(client: httpx.AsyncClient, call: Call) -> int:
    headers = {"content-type": call.content_type} if call.content_type else None
    response = await client.request(
        call.method,
        call.path,
        json=call.json,
        content=call.content,
        files=call.files,
        data=call.data,
        params=call.params,
        headers=headers,
    )
    return response.status_code


async def _load(url: str, calls: list[Call]) -> tuple[list[str], list[float]]:
    unexpected: list[str] = []
    health: list[float] = []
    done = asyncio.Event()
    limits = httpx.Limits(max_connections=CONCURRENCY + 2, max_keepalive_connections=CONCURRENCY)
    timeout = httpx.Timeout(120.0)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=timeout) as client:

        async def probe() -> None:
            async with httpx.AsyncClient(base_url=url, timeout=timeout) as own:
                while not done.is_set():
                    start = time.perf_counter()
                    response = await own.get("/healthz")
                    health.append(time.perf_counter() - start)
                    if response.status_code != 200:
                        unexpected.append(f"/healthz -> {response.status_code}")
                    await asyncio.sleep(PROBE_INTERVAL)

        gate = asyncio.Semaphore(CONCURRENCY)

        async def one(call: Call) -> None:
            async with gate:
                try:
                    status = await _send(client, call)
                except httpx.TransportError as error:
                    unexpected.append(f"{call.kind}: {type(error).__name__} {error}")
                    return
                if status not in call.statuses:
                    unexpected.append(f"{call.kind}: {status}")

        prober = asyncio.create_task(probe())
        try:
            await asyncio.wait_for(asyncio.gather(*(one(c) for c in calls)), LOAD_TIMEOUT)
        finally:
            done.set()
            await prober
    return unexpected, health


def _plan(seed: int, count: int) -> list[Call]:
    rng = random.Random(seed)
    plan: list[Call] = []
    for _ in range(count):
        weighted = mix(rng)
        plan.append(rng.choices([c for _, c in weighted], [w for w, _ in weighted])[0])
    return plan


@dataclass(frozen=True)
class LoadRun:
    """What one load run measured (``bench/service_load.py`` prints it)."""

    requests: int
    seconds: float
    unexpected: tuple[str, ...]
    warmup_unexpected: tuple[str, ...]
    health_seconds: tuple[float, ...]
    rss_start: int
    rss_end: int

    def health_quantile(self, q: float) -> float:
        ordered = sorted(self.health_seconds)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run_load(url: str, pid: int, requests: int = REQUESTS, seed: int = SEED) -> LoadRun:
    """A warm-up round (every kind once), then ``requests`` mixed requests at
    :data:`CONCURRENCY` while the probe asks ``/healthz``."""
    rng = random.Random(seed)
    warm, _ = asyncio.run(_load(url, [call for _, call in mix(rng)]))
    rss_start = _rss_bytes(pid)
    start = time.perf_counter()
    unexpected, health = asyncio.run(_load(url, _plan(seed, requests)))
    seconds = time.perf_counter() - start
    time.sleep(1.0)
    return LoadRun(
        requests, seconds, tuple(unexpected), tuple(warm), tuple(health), rss_start, _rss_bytes(pid)
    )


@pytest.mark.slow
def test_mixed_load_leaves_the_service_answering(server: tuple[str, int]) -> None:
    run = run_load(*server)
    assert not run.warmup_unexpected, run.warmup_unexpected[:20]
    assert not run.unexpected, f"{len(run.unexpected)} unexpected answers: {run.unexpected[:20]}"
    assert len(run.health_seconds) >= 20, "the probe barely ran"
    p99 = run.health_quantile(0.99)
    assert p99 < HEALTH_P99_SECONDS, (
        f"/healthz p99 {p99 * 1000:.0f} ms over {len(run.health_seconds)} probes"
    )
    assert run.rss_end <= run.rss_start * (1 + RSS_GROWTH), (
        f"RSS {run.rss_start / 2**20:.0f} MiB after warm-up, "
        f"{run.rss_end / 2**20:.0f} MiB after the load"
    )
