"""Trajectories checked and kept as numpy arrays give the answers of the pure-Python code.

``Trajectory`` was a frozen dataclass of two tuples, checked by Python loops; it now checks numpy
arrays and keeps them, and ``Trajectory.from_arrays`` builds its tuples only when they are read.

The references below are the code this replaced (commit 29d0909): the constructor's checks as
Python loops over the tuples, ``first_hits`` and the fixed-budget row from ``np.asarray`` of the
tuples, and the request digest over Python lists of every record.
"""

from __future__ import annotations

import hashlib
import math
import pickle
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.anytime import DEFAULT_TARGETS, first_hits, fixed_budget
from app.domain.errors import InvalidInput
from app.domain.results import RunResult, Trajectory
from app.schemas.anytime import RuntimeDistributionRequest
from app.services.anytime import Algorithm, _payload
from app.services.provenance import float64_sha256

records = st.lists(
    st.tuples(
        st.integers(-2, 60),
        st.one_of(
            st.floats(-1e3, 1e3, allow_nan=False),
            st.sampled_from([0.0, 1e-8, 1.0, 10.0, math.nan]),
        ),
    ),
    min_size=1,
    max_size=30,
)


def reference_valid(evaluations: tuple[int, ...], best: tuple[float, ...]) -> bool:
    """The constructor's checks before (Python loops over the tuples), verbatim."""
    pairs = zip(evaluations, evaluations[1:], strict=False)  # noqa: RUF007 - as it was
    if evaluations[0] < 1 or any(b <= a for a, b in pairs):
        return False
    return not any(b > a for a, b in zip(best, best[1:], strict=False))  # noqa: RUF007


def reference_first_hits(trajectory: Trajectory, targets: np.ndarray) -> np.ndarray:
    evaluations = np.asarray(trajectory.evaluations, dtype=float)
    index = np.searchsorted(-np.asarray(trajectory.best, dtype=float), -targets, side="left")
    return np.where(
        index < evaluations.size, evaluations[np.minimum(index, evaluations.size - 1)], np.inf
    )


def reference_fixed_row(trajectory: Trajectory, budgets: np.ndarray) -> np.ndarray:
    best = np.asarray(trajectory.best, dtype=float)
    index = np.searchsorted(trajectory.evaluations, budgets, side="right") - 1
    return np.where(index >= 0, best[np.maximum(index, 0)], np.nan)


def valid_records(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[float, ...]]:
    steps = draw(st.lists(st.integers(1, 50), min_size=1, max_size=40))
    drops = draw(st.lists(st.floats(0, 5), min_size=len(steps), max_size=len(steps)))
    evaluations = tuple(int(x) for x in np.cumsum(steps))
    best = tuple(float(x) for x in 10.0 ** (2 - np.cumsum(drops)))
    return evaluations, best


@given(records)
def test_the_checks_accept_and_refuse_as_before(pairs: list[tuple[int, float]]) -> None:
    evaluations = tuple(e for e, _ in pairs)
    best = tuple(b for _, b in pairs)
    if reference_valid(evaluations, best):
        made = Trajectory(evaluations, best)
        assert (made.evaluations, made.best) == (evaluations, best)
        np.testing.assert_array_equal(made.arrays.evaluations, evaluations)
        np.testing.assert_array_equal(made.arrays.best, best)
        lazy = Trajectory.from_arrays(np.array(evaluations), np.array(best))
        assert lazy.evaluations == evaluations  # the tuples, when read
        np.testing.assert_array_equal(lazy.best, best)  # (nan != nan: compared as arrays)
        assert all(type(e) is int for e in lazy.evaluations)
        again = pickle.loads(pickle.dumps(made))
        np.testing.assert_array_equal(again.arrays.best, best)
        if not any(math.isnan(b) for b in best):
            assert lazy == made == again
            assert hash(lazy) == hash(made)
        with pytest.raises(AttributeError):
            made.best = (0.0,)  # type: ignore[misc]
    else:
        with pytest.raises(InvalidInput):
            Trajectory(evaluations, best)
        with pytest.raises(InvalidInput):
            Trajectory.from_arrays(np.array(evaluations), np.array(best))


@given(st.composite(valid_records)(), st.lists(st.integers(1, 2000), min_size=1, max_size=8))
def test_runtimes_and_fixed_budgets_equal_the_tuple_code(
    pair: tuple[tuple[int, ...], tuple[float, ...]], budgets: list[int]
) -> None:
    evaluations, best = pair
    made = Trajectory.from_arrays(np.array(evaluations), np.array(best))
    targets = np.concatenate([DEFAULT_TARGETS, np.asarray(best[:3])])
    np.testing.assert_array_equal(
        first_hits(made, targets), reference_first_hits(Trajectory(evaluations, best), targets)
    )
    wanted = np.unique(budgets)
    run = RunResult("f", 0, best[-1], evaluations[-1], made)
    (view,) = fixed_budget([run], wanted)
    np.testing.assert_array_equal(view.best[0], reference_fixed_row(made, wanted))


def _runs_of(payload: dict[str, object]) -> list[dict[str, Any]]:
    runs = payload["runs"]
    assert isinstance(runs, list)
    return runs


@given(st.lists(st.composite(valid_records)(), min_size=1, max_size=5))
def test_the_request_digest_is_the_one_of_the_lists(
    pairs: list[tuple[tuple[int, ...], tuple[float, ...]]],
) -> None:
    runs = tuple(
        RunResult("f", k, b[-1], e[-1], Trajectory.from_arrays(np.array(e), np.array(b)))
        for k, (e, b) in enumerate(pairs)
    )
    body = RuntimeDistributionRequest(result_sets=["x"])
    got = _runs_of(_payload(body, [Algorithm("A", runs, "algorithms.0")]))[0]
    assert got["evaluations"] == float64_sha256([x for e, _ in pairs for x in e])
    assert got["errors"] == float64_sha256([x for _, b in pairs for x in b])
    assert got["lengths"] == [len(e) for e, _ in pairs]
    empty = hashlib.sha256(b"").hexdigest()
    none = _runs_of(_payload(body, [Algorithm("B", (), "algorithms.0")]))[0]
    assert none["evaluations"] == none["errors"] == empty
