"""`absrank migrate` + `absrank serve` as a user runs them: real processes on loopback."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import httpx
import pytest

from tests.support import alive, served


@pytest.mark.slow
def test_serve_builds_a_table_and_ranks_then_stops_cleanly(tmp_path: Path) -> None:
    with served(tmp_path) as running:
        server, workers = running.process, running.workers
        assert workers, "no embedded worker"
        with httpx.Client(base_url=running.url, timeout=10) as client:
            r = client.post("/v1/tables", json={"function_id": "bbob/f21/i1/d5"})
            assert r.status_code == 202
            location = r.headers["location"]
            deadline = time.monotonic() + 120
            while client.get(location).json()["status"] != "ready":
                assert time.monotonic() < deadline, "table not built by the embedded worker"
                time.sleep(0.5)
            table = client.get(location).json()
            assert table["progress"] == {"done": 4, "total": 4, "fraction": 1.0}
            ranks = client.post(
                "/v1/absolute-ranks",
                json={"table_id": table["id"], "values": [table["summary"]["y_1"] + 1.0]},
            )
            assert ranks.status_code == 200
            assert 0.0 < ranks.json()["results"][0]["v"] < 1.0
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)
        deadline = time.monotonic() + 30
        while any(alive(p) for p in workers):
            assert time.monotonic() < deadline, "embedded worker outlived absrank serve"
            time.sleep(0.3)
