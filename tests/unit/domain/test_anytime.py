"""Runtimes, ERT, simulated restarts, ECDFs, the fixed-budget view: hand examples, properties."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.domain.anytime import (
    DEFAULT_TARGETS,
    RuntimeTable,
    default_samples,
    first_hits,
    fixed_budget,
    runtime_ecdf,
    runtime_table,
    runtime_tables,
    simulated_restarts,
)
from app.domain.errors import InvalidInput
from app.domain.results import RunResult, Trajectory


def run(
    evaluations: list[int], best: list[float], budget: int, fid: str = "bbob/f1/i1/d2", k: int = 0
) -> RunResult:
    return RunResult(fid, k, best[-1], budget, Trajectory(tuple(evaluations), tuple(best)))


# three runs on one function, targets 10, 1, 0.1 (errors):
#   run 0 reaches 10 at 1, 1 at 5, never 0.1 (budget 20)
#   run 1 reaches 10 at 3, 1 at 3, 0.1 at 8 (budget 8)
#   run 2 reaches 10 at 7, never 1 (budget 30)
RUNS = [
    run([1, 5, 20], [10.0, 1.0, 0.5], 20, k=0),
    run([1, 3, 8], [50.0, 0.9, 0.1], 8, k=1),
    run([2, 7], [11.0, 10.0], 30, k=2),
]
TARGETS = [10.0, 1.0, 0.1]


def test_first_hits_use_the_first_record_at_or_below_the_target() -> None:
    assert RUNS[0].trajectory is not None
    hits = first_hits(RUNS[0].trajectory, np.array([100.0, 10.0, 5.0, 1.0, 0.5, 0.4]))
    np.testing.assert_array_equal(hits, [1, 1, 5, 5, 20, np.inf])


def test_ert_by_hand() -> None:
    table = runtime_table("f", RUNS, TARGETS)
    np.testing.assert_array_equal(table.successes, [3, 2, 1])
    # 10: (1 + 3 + 7) / 3; 1: (5 + 3 + 30) / 2; 0.1: (20 + 8 + 30) / 1
    np.testing.assert_allclose(table.ert, [11 / 3, 19, 58], rtol=1e-15)
    assert runtime_table("f", RUNS, [1e-9]).ert[0] == np.inf


def test_targets_keep_their_order_and_repeats() -> None:
    table = runtime_table("f", RUNS, [0.1, 10.0, 0.1])
    np.testing.assert_allclose(table.ert, [58, 11 / 3, 58])
    assert runtime_table("f", RUNS).targets.shape == (51,)
    assert DEFAULT_TARGETS[0] == 100
    assert DEFAULT_TARGETS[-1] == 1e-8


def test_instances_pool_into_one_function() -> None:
    runs = [run([1], [1.0], 5, "bbob/f1/i1/d2"), run([2], [1.0], 5, "bbob/f1/i2/d2")]
    (pooled,) = runtime_tables(runs, targets=[1.0], pool_instances=True)
    assert pooled.function_id == "bbob/f1/d2"
    assert pooled.n_runs == 2
    assert len(runtime_tables(runs, targets=[1.0])) == 2
    with pytest.raises(InvalidInput):
        runtime_tables(runs, function_ids=["bbob/f2/d2"])


def test_refuses_runs_without_trajectories_or_past_their_budget() -> None:
    with pytest.raises(InvalidInput, match="trajectory"):
        runtime_table("f", [RunResult("f", 0, 1.0, 3)])
    with pytest.raises(InvalidInput, match="budget"):
        runtime_table("f", [run([1, 9], [2.0, 1.0], 5)])
    with pytest.raises(InvalidInput, match="targets"):
        runtime_table("f", RUNS, [-1.0])


def test_ecdf_by_hand() -> None:
    ecdf = runtime_ecdf([runtime_table("f", RUNS, TARGETS).runtimes.T])
    # runtimes: 10 -> 1, 3, 7; 1 -> 5, 3; 0.1 -> 8; 3 misses of 9 pairs
    np.testing.assert_array_equal(ecdf.x, [1, 3, 5, 7, 8])
    np.testing.assert_array_equal(ecdf.counts, [0, 1, 3, 4, 5, 6])
    assert ecdf.total == 9
    assert ecdf.count(2.999) == 1
    assert ecdf.count(3) == 3  # right-continuous
    assert ecdf(3).item() == pytest.approx(3 / 9, abs=0)


def test_ecdf_pools_functions_and_scales_by_dimension() -> None:
    a = np.array([[2.0, np.inf]])
    b = np.array([[4.0, 6.0]])
    ecdf = runtime_ecdf([a, b], scale=[2, 2])
    np.testing.assert_array_equal(ecdf.x, [1, 2, 3])
    np.testing.assert_array_equal(ecdf.counts, [0, 1, 2, 3])
    assert ecdf.total == 4
    with pytest.raises(InvalidInput):
        runtime_ecdf([a, np.ones((1, 3))])


def test_fixed_budget_by_hand() -> None:
    (view,) = fixed_budget(RUNS, [1, 4, 8, 25], levels=[0.0, 0.5, 1.0])
    nan = np.nan
    np.testing.assert_array_equal(
        view.best, [[10, 10, 1, 0.5], [50, 0.9, 0.1, 0.1], [nan, 11, 10, 10]]
    )
    np.testing.assert_array_equal(view.ended, [[0, 0, 0, 1], [0, 0, 0, 1], [0, 0, 0, 0]])
    np.testing.assert_array_equal(view.quantiles[:, 0], [10, 30, 50])  # run 2 has no record yet
    np.testing.assert_array_equal(view.quantiles[:, 1], [0.9, 10, 11])
    np.testing.assert_array_equal(view.quantiles[:, 3], [0.1, 0.5, 10])
    with pytest.raises(InvalidInput):
        fixed_budget(RUNS, [0])


def test_results_are_read_only() -> None:
    table = runtime_table("f", RUNS, TARGETS)
    with pytest.raises(ValueError, match="read-only"):
        table.ert[0] = 1.0


# -- simulated restarts: properties ---------------------------------------------------------


@st.composite
def tables(draw: st.DrawFn, *, all_successful: bool = False) -> RuntimeTable:
    n = draw(st.integers(1, 8))
    runs = []
    for k in range(n):
        budget = draw(st.integers(1, 500))
        hit = draw(st.integers(1, budget)) if all_successful or draw(st.booleans()) else None
        if hit is None:
            runs.append(run([budget], [2.0], budget, k=k))  # never reaches 1
        else:
            runs.append(run([hit], [0.5], budget, k=k))
    return runtime_table("f", runs, [1.0, 1e-3])  # the second target: no run reaches it


@given(tables(), st.integers(0, 2**32 - 1))
def test_simulated_restarts_are_deterministic_given_the_seed(
    table: RuntimeTable, seed: int
) -> None:
    first = simulated_restarts(table, rng=np.random.default_rng(seed))
    again = simulated_restarts(table, rng=np.random.default_rng(seed))
    np.testing.assert_array_equal(first.runtimes, again.runtimes)
    assert first.n_samples == default_samples(table.n_runs) >= 45
    assert np.all(np.isinf(first.runtimes[1]))  # no run reached 1e-3


@given(tables(all_successful=True), st.integers(1, 4), st.integers(0, 2**32 - 1))
def test_with_every_run_successful_the_draws_are_the_runs(
    table: RuntimeTable, blocks: int, seed: int
) -> None:
    n = table.n_runs
    sim = simulated_restarts(table, n_samples=blocks * n, rng=np.random.default_rng(seed))
    want = np.sort(np.tile(table.runtimes[:, 0], blocks))
    np.testing.assert_array_equal(np.sort(sim.runtimes[0]), want)


@given(tables(), st.integers(0, 2**32 - 1))
def test_simulated_runtimes_are_sums_of_failed_budgets_and_one_success(
    table: RuntimeTable, seed: int
) -> None:
    sim = simulated_restarts(table, n_samples=200, rng=np.random.default_rng(seed))
    hits = table.runtimes[:, 0]
    ok = np.isfinite(hits)
    if not ok.any():
        assert np.all(np.isinf(sim.runtimes[0]))
        return
    fails = table.budgets[~ok]
    if fails.size == 0:
        assert set(sim.runtimes[0].tolist()) <= set(hits.tolist())
        return
    # every value is a success plus a non-negative combination of the failed budgets: check
    # the residue modulo gcd(failed budgets) and the bounds
    g = int(np.gcd.reduce(fails))
    residues = {int(h) % g for h in hits[ok]}
    assert all(int(v) % g in residues for v in sim.runtimes[0])
    assert sim.runtimes[0].min() >= hits[ok].min()


@given(tables(), st.integers(0, 2**32 - 1))
def test_the_bootstrap_mean_approximates_the_ert(table: RuntimeTable, seed: int) -> None:
    ert = table.ert[0]
    if not np.isfinite(ert):
        return
    sim = simulated_restarts(table, n_samples=20_000, rng=np.random.default_rng(seed))
    sample = sim.runtimes[0]
    se = sample.std() / np.sqrt(sample.size)
    assert abs(sample.mean() - ert) <= 6 * se + 1e-9 * ert


@st.composite
def runs_with_gaps(draw: st.DrawFn) -> list[RunResult]:
    """Runs whose first records come at different evaluations (nan before them)."""
    out = []
    for k in range(draw(st.integers(1, 7))):
        start = draw(st.integers(1, 30))
        steps = draw(st.lists(st.integers(1, 9), min_size=1, max_size=5))
        evaluations = (start + np.cumsum([0, *steps[1:]])).tolist()
        best = sorted((draw(st.floats(0, 1e3)) for _ in steps), reverse=True)
        out.append(run(evaluations, best, evaluations[-1] + draw(st.integers(0, 5)), k=k))
    return out


@given(runs_with_gaps(), st.lists(st.floats(0, 1), min_size=1, max_size=4))
def test_fixed_budget_quantiles_equal_numpys_nanquantile(
    runs: list[RunResult], levels: list[float]
) -> None:
    budgets = np.arange(1, 60, 3)
    (view,) = fixed_budget(runs, budgets, levels=levels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-nan columns
        want = np.nanquantile(view.best, levels, axis=0)
    np.testing.assert_allclose(view.quantiles, want, rtol=1e-12, atol=1e-300)
    for r, one in enumerate(runs):
        assert one.trajectory is not None
        for b, value in zip(budgets, view.best[r], strict=True):
            got = one.trajectory.best_at(int(b))  # the model's own reading
            assert (np.isnan(value) and got is None) or value == got
