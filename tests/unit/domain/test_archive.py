"""The archive's pure rules: what a run may be, and the content hash that names a set."""

from __future__ import annotations

import dataclasses
import hashlib

import pytest

from app.domain import archive
from app.domain.functions import get_function
from app.domain.results import RunResult, Trajectory

META = {"name": "DE", "values_are": "f", "cpu_score": 2500.0, "version": None}


def test_the_hash_is_sha256_of_this_exact_canonical_text() -> None:
    """Written out by hand: sorted keys, no spaces, floats as repr strings, runs sorted."""
    runs = [
        RunResult("classic/sphere/d2", 1, 0.1 + 0.2, 10, Trajectory((1, 10), (2.0, 0.1 + 0.2))),
        RunResult("classic/sphere/d2", 0, -0.0, 7),
    ]
    text = (
        '{"metadata":{"cpu_score":"2500.0","name":"DE","values_are":"f","version":null},'
        '"runs":[["classic/sphere/d2",0,"0.0",7,null],'
        '["classic/sphere/d2",1,"0.30000000000000004",10,[[1,"2.0"],[10,"0.30000000000000004"]]]]}'
    )
    expected = hashlib.sha256(text.encode()).hexdigest()
    assert archive.content_sha256(META, runs) == expected
    assert archive.set_id(expected) == "r" + expected[:23]
    assert len(archive.set_id(expected)) == 24


def test_the_hash_ignores_run_order_and_sees_every_field() -> None:
    runs = [RunResult("classic/sphere/d2", i, 1.0 + i, 10) for i in range(4)]
    base = archive.content_sha256(META, runs)
    assert archive.content_sha256(META, list(reversed(runs))) == base
    changed = [dataclasses.replace(runs[0], value=float.fromhex("0x1.0000000000001p+0")), *runs[1:]]
    assert archive.content_sha256(META, changed) != base
    assert archive.content_sha256(META | {"name": "DE2"}, runs) != base
    assert archive.content_sha256(META | {"version": "1"}, runs) != base
    with_traj = [dataclasses.replace(runs[0], trajectory=Trajectory((10,), (1.0,))), *runs[1:]]
    assert archive.content_sha256(META, with_traj) != base


def test_values_below_f_star_are_refused_beyond_the_documented_tolerance() -> None:
    fn = get_function("cec2005/f15/d10")  # f* = 120
    tol = archive.F_STAR_ATOL + archive.F_STAR_RTOL * 120
    assert archive.value_problem(120.0 - 0.9 * tol, fn, "f") is None
    assert "below f* = 120.0" in (archive.value_problem(120.0 - 2 * tol, fn, "f") or "")
    assert archive.value_problem(-0.5 * archive.F_STAR_ATOL, fn, "error") is None
    assert "below 0" in (archive.value_problem(-2 * archive.F_STAR_ATOL, fn, "error") or "")
    assert "not finite" in (archive.value_problem(float("inf"), fn, "f") or "")


def test_errors_need_a_known_f_star() -> None:
    fn = dataclasses.replace(get_function("classic/sphere/d2"), f_opt=None)
    assert "no known f*" in (archive.value_problem(1.0, fn, "error") or "")
    assert archive.value_problem(-5.0, fn, "f") is None  # nothing to compare an f with


@pytest.mark.parametrize(
    ("run", "attr", "words"),
    [
        (RunResult("classic/sphere/d2", 0, 1.0, 0), "budget", "below 1"),
        (
            RunResult("classic/sphere/d2", 0, 1.0, 5, Trajectory((1, 6), (2.0, 1.0))),
            "trajectory",
            "beyond the budget",
        ),
        (
            RunResult("classic/sphere/d2", 0, 1.0, 5, Trajectory((1, 5), (2.0, 1.5))),
            "trajectory",
            "is not the run's value",
        ),
        (RunResult("classic/sphere/d2", 0, -1.0, 5), "value", "below f*"),
    ],
)
def test_a_run_names_the_attribute_at_fault(run: RunResult, attr: str, words: str) -> None:
    problem = archive.run_problem(run, get_function("classic/sphere/d2"), "f")
    assert problem is not None
    assert problem[0] == attr
    assert words in problem[1]
