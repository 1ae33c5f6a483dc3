"""`absrank migrate` + `absrank serve` as a user runs them: real processes on loopback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _descendants(pid: int) -> set[int]:
    out = subprocess.run(["ps", "-e", "-o", "pid=,ppid="], capture_output=True, text=True).stdout
    children: dict[int, list[int]] = {}
    for line in out.splitlines():
        p, pp = (int(x) for x in line.split())
        children.setdefault(pp, []).append(p)
    found, todo = set(), [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            found.add(c)
            todo.append(c)
    return found


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split()[2] == "Z")


@pytest.mark.slow
def test_serve_builds_a_table_and_ranks_then_stops_cleanly(tmp_path: Path) -> None:
    port = _free_port()
    env = os.environ | {
        "ABSRANK_DATABASE_URL": f"sqlite:///{tmp_path / 'absrank.db'}",
        "ABSRANK_QUEUE_URL": f"sqlite:///{tmp_path / 'queue.db'}",
        "ABSRANK_PORT": str(port),
        "ABSRANK_DEFAULT_TABLES": "false",
        "ABSRANK_TABLE_DEFAULT_LOG2N": "12",
        "ABSRANK_TABLE_CHUNK_LOG2": "10",
    }
    cli = [sys.executable, "-m", "app.cli"]
    subprocess.run([*cli, "migrate"], env=env, cwd=ROOT, check=True, capture_output=True)
    log = (tmp_path / "serve.log").open("wb")
    server = subprocess.Popen(
        [*cli, "serve"],
        env=env,
        cwd=ROOT,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    workers: set[int] = set()
    try:
        base = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=base, timeout=10) as client:
            deadline = time.monotonic() + 60
            while True:
                try:
                    if client.get("/healthz").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, "server did not start"
                time.sleep(0.3)
            workers = _descendants(server.pid)
            assert workers, "no embedded worker"
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
        while any(_alive(p) for p in workers):
            assert time.monotonic() < deadline, "embedded worker outlived absrank serve"
            time.sleep(0.3)
    finally:
        for pid in {server.pid} | workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
        server.wait(timeout=10)
        log.close()
