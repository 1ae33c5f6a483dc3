"""The API's start keeps glibc's allocator from faulting in fresh pages for every large block
(``app.heap.keep_large_blocks``): the buffers of a large answer, made and freed again and
again, are served from the heap after the first time. Counted in minor page faults
(``getrusage``), not in time; with ``ABSRANK_MALLOC_TUNING=0`` they are faulted in every time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CHURN = """
import json, resource
from app.heap import keep_large_blocks
tuned = keep_large_blocks()
def churn():  # the buffers of a large answer: an array, its bytes, a copy, a list, a join
    n = 700_000
    numbers = bytes(8 * n)
    grown = numbers + numbers + numbers
    texts = [b"ab"] * n
    joined = b"".join(texts)
    del numbers, grown, texts, joined
churn()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    churn()
print(json.dumps({"tuned": tuned,
                  "faults": resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before}))
"""
PAGES = 5 * (3 * 8 * 700_000) // 4096  # the copy's pages alone, once per churn


def _churn(tuning: str) -> dict[str, object]:
    env = {"ABSRANK_MALLOC_TUNING": tuning, "PATH": "/usr/bin:/bin"}
    out = subprocess.run(
        [sys.executable, "-c", CHURN], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_large_blocks_come_from_the_heap_after_the_first_time() -> None:
    tuned, default = _churn("1"), _churn("0")
    assert tuned["tuned"] is True
    assert default["tuned"] is False
    assert isinstance(tuned["faults"], int)
    assert isinstance(default["faults"], int)
    assert default["faults"] > PAGES  # glibc's default: fresh pages every time
    assert tuned["faults"] < PAGES // 10  # the heap's pages, reused


def test_the_api_start_sets_the_allocator(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    import app.main
    from tests.api.conftest import api_settings
    from tests.support import migrate

    calls: list[bool] = []

    def record() -> bool:
        calls.append(True)
        return True

    monkeypatch.setattr(app.main, "keep_large_blocks", record)
    settings = api_settings(tmp_path)
    migrate(settings.database_url)
    with TestClient(app.main.create_app(settings)):
        pass
    assert calls == [True]
