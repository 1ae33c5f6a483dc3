"""The stoppable hypervolume: the same value as moocore's, and a deadline or a cancellation
stops it (its child process killed) even where moocore's one C call would run for minutes."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import moocore
import numpy as np
import pytest

from app.domain.cost import Cancelled, DeadlineExceeded, WorkControl
from app.services import isolated
from app.services.isolated import stoppable_hypervolume

#: 13 points in 25 objectives: moocore did not finish in minutes (12 points: milliseconds).
RUNAWAY = (13, 25)


def _children() -> list[int]:
    pid = os.getpid()
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out += [int(c) for c in text]
    return out


def _front(n: int, m: int, seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).uniform(size=(n, m))


def test_the_child_computes_moocores_value_bit_for_bit() -> None:
    front, ref = _front(16, 12), np.full(12, 1.1)
    assert not isolated.in_process(front)
    got = stoppable_hypervolume(WorkControl())(front, ref)
    assert got == float(moocore.hypervolume(front, ref=ref))


def test_cheap_fronts_stay_in_the_process() -> None:
    assert isolated.in_process(_front(200, 3))
    assert isolated.in_process(_front(100, 10))
    assert isolated.in_process(_front(12, 31))
    assert not isolated.in_process(_front(13, 11))


@pytest.mark.parametrize("stop", ["deadline", "cancel"])
def test_a_runaway_hypervolume_is_stopped_and_its_child_killed(stop: str) -> None:
    front, ref = _front(*RUNAWAY), np.full(RUNAWAY[1], 1.1)
    control = WorkControl(deadline_seconds=1.5 if stop == "deadline" else None)
    if stop == "cancel":
        threading.Timer(1.5, control.cancel).start()
    before = set(_children())
    start = time.monotonic()
    with pytest.raises(DeadlineExceeded if stop == "deadline" else Cancelled):
        stoppable_hypervolume(control)(front, ref)
    assert time.monotonic() - start < 10
    assert set(_children()) <= before, "the hypervolume's child process is still there"


def test_the_indicators_route_stops_a_runaway_at_its_deadline(tmp_path: Path) -> None:
    from tests.api.conftest import api_settings, app_client

    settings = api_settings(tmp_path, sync_deadline_factor=1.0)
    n, m = RUNAWAY
    body = {
        "front": _front(n, m).tolist(),
        "reference_point": [1.1] * m,
        "indicators": ["hv"],
    }
    for client in app_client(settings):
        start = time.monotonic()
        r = client.post("/v1/indicators", json=body)
        # admitted by the estimate (a few points), stopped at the deadline
        assert r.status_code == 503, r.text
        assert r.json()["type"].endswith("deadline-exceeded")
        assert r.headers["retry-after"]
        assert time.monotonic() - start < 30
