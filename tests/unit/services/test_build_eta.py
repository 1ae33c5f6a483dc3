"""ETA of table builds (app.services.eta.build_eta) on a controllable clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from app.services.eta import BuildClock, build_eta

T0 = datetime(2026, 12, 1, 12, 0, 0, tzinfo=UTC)


def _at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def _building(done: int, total: int, started: float | None = 0.0) -> BuildClock:
    return BuildClock("building", done, total, _at(-1), None if started is None else _at(started))


def _ready(total: int, created: float, started: float) -> BuildClock:
    return BuildClock("ready", total, total, _at(created), _at(started))


def test_null_before_the_first_chunk_finishes() -> None:
    assert build_eta([_building(0, 8, started=None)], _at(5)) is None  # queued, unclaimed
    assert build_eta([_building(0, 8)], _at(5)) is None  # claimed, not finished


def test_remaining_over_the_rate_since_the_first_chunk_started() -> None:
    # 2 of 8 chunks in 10 s: 0.2 chunk/s, 6 left -> 30 s
    assert build_eta([_building(2, 8)], _at(10)) == pytest.approx(30.0)
    # a stall: the same progress 20 s later means a slower rate, a later end (never 0)
    assert build_eta([_building(2, 8)], _at(30)) == pytest.approx(90.0)


def test_merging_has_no_chunk_left_and_done_tables_have_no_eta() -> None:
    assert build_eta([BuildClock("merging", 8, 8, _at(-1), _at(0))], _at(9)) == 0.0
    assert build_eta([_ready(8, -1, 0)], _at(10)) is None
    assert build_eta([BuildClock("failed", 3, 8, _at(-1), _at(0))], _at(10)) is None
    assert build_eta([], _at(10)) is None


def test_a_group_pools_the_tables_built_in_its_window() -> None:
    # a ladder or a scan requested at -1 s: level 0 (4 chunks) was built from 0 s to 20 s,
    # level 1 has 1 of 4 done at 30 s, level 2 waits: 5 chunks in 30 s, 3 + 4 left -> 42 s
    clocks = [_ready(4, -1, 0), _building(1, 4, started=21), _building(0, 4, started=None)]
    assert build_eta(clocks, _at(30)) == pytest.approx(7 * 30 / 5)
    # between levels (the next one claimed, none of its chunks done): still an ETA
    between = [_ready(4, -1, 0), _building(0, 4, started=20.5)]
    assert build_eta(between, _at(21)) == pytest.approx(4 * 21 / 4)
    # a table built long before (a cached level) is not part of this build's pace
    cached = [_ready(4, -9000, -8999), _building(1, 4, started=0)]
    assert build_eta(cached, _at(10)) == pytest.approx(3 * 10 / 1)
