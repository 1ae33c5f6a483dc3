"""The cost model (app/services/costs.py) against measured CPU time, endpoint by endpoint.

For representative requests of each computing endpoint, the CPU time of the service call
(``time.process_time``, this thread; OpenBLAS is pinned to one thread by ``app``'s numerical
baseline) must lie within :data:`app.services.costs.STATED_FACTOR` (4×) of the estimate, either
way, once it is large enough to measure (> 20 ms); below that only the estimate's upper side
is checked (an estimate may not be 4× too low). The estimates are worst cases where the work
depends on the data (a hypervolume of non-dominated points), and the requests here are those
worst cases.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.api.work import admit_sync
from app.config import Settings
from app.db import make_engine, make_sessionmaker
from app.domain.cost import CostTooHigh
from app.errors import InvalidInput
from app.schemas.comparisons import ComparisonCreate
from app.schemas.pareto import IndicatorRequest, ParetoRankingCreate
from app.schemas.ranks import RankRequest
from app.services import comparisons, costs, pareto
from app.services.table_cache import AppCaches
from tests.support import migrate

FACTOR = costs.STATED_FACTOR
MEASURABLE = 0.02


def cpu(work: Callable[[], Any]) -> float:
    t0 = time.process_time()
    work()
    return time.process_time() - t0


def within(estimate: float, measured: float) -> None:
    assert measured <= FACTOR * estimate, (estimate, measured)
    if measured > MEASURABLE:
        assert estimate <= FACTOR * measured, (estimate, measured)


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    path: Path = tmp_path_factory.mktemp("cost") / "cost.db"
    return Settings(  # type: ignore[call-arg]
        environment="test",
        database_url=f"sqlite:///{path}",
        queue_url="memory://",
        max_result_rows=2_000_000,
    )


@pytest.fixture(scope="module")
def sm(settings: Settings) -> Iterator[sessionmaker[Session]]:
    migrate(settings.database_url)
    engine = make_engine(settings.database_url)
    yield make_sessionmaker(engine)
    engine.dispose()


def sphere(n: int, m: int, seed: int = 0) -> list[list[float]]:
    x = np.random.default_rng(seed).random((n, m)) + 1e-3
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).tolist()


# --- indicators ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "m"), [(3000, 3), (3000, 4), (1500, 5), (300, 6), (110, 7), (60, 8), (40, 9), (28, 10)]
)
def test_hypervolume_estimate_matches_measured(settings: Settings, n: int, m: int) -> None:
    body = IndicatorRequest(front=sphere(n, m), reference_point=[1.1] * m, indicators=["hv"])
    estimate = costs.indicators_cost(body, settings)
    within(estimate.cpu_seconds, cpu(lambda: pareto.indicators(body)))


def test_distance_indicators_estimate_matches_measured(settings: Settings) -> None:
    body = IndicatorRequest(
        front=sphere(3000, 3),
        reference_front=sphere(3000, 3, seed=1),
        indicators=["igd", "igd_plus", "gd", "gd_plus", "spacing", "spread", "delta_p"],
    )
    estimate = costs.indicators_cost(body, settings)
    within(estimate.cpu_seconds, cpu(lambda: pareto.indicators(body)))


def test_the_issue_s_hypervolume_is_refused_with_the_points_that_fit(settings: Settings) -> None:
    """200 points × 10 objectives (no answer after 120 s in the issue): refused at once."""
    body = IndicatorRequest(front=sphere(200, 10), reference_point=[1.1] * 10, indicators=["hv"])
    estimate = costs.indicators_cost(body, settings)
    assert estimate.cpu_seconds > 60
    assert costs.hv_max_points(10, 2.0) < 60
    assert "at most" in estimate.how_to_split


# --- absolute ranks: the aggregates ----------------------------------------------------------


def smooth_curve() -> Any:
    import scripts.fit_cost_model as fit

    return fit.smooth_curve()


@pytest.mark.parametrize(("aggregate", "runs"), [("mean", 25), ("mean", 256), ("median", 64)])
def test_aggregate_estimate_matches_measured(aggregate: str, runs: int) -> None:
    """On a smooth table curve: a median's estimate within 4× either way; a mean's is its
    worst case (:func:`test_a_mean_s_estimate_is_its_worst_case`), so only not too low."""
    from app.domain.aggregates import aggregate_ranks

    curve = smooth_curve()
    t = np.sort(np.random.default_rng(3).uniform(0.01, 1.5, 40))
    req = RankRequest(
        function_id="classic/sphere/d3", values=t.tolist(), runs=runs, aggregate=aggregate
    )
    estimate = costs.rank_cost(req)
    measured = cpu(lambda: aggregate_ranks(t, curve, budget=1, runs=runs, aggregate=aggregate))
    if aggregate == "mean":
        assert measured <= estimate.cpu_seconds, (estimate.cpu_seconds, measured)
    else:
        within(estimate.cpu_seconds, measured)


#: The dearest means found on classic/sphere/d10 (errors; regions auto = domain there):
#: (runs, the mean, budget); measured 0.03-0.06 s, 0.09-0.15 s and 1.5-3.8 s (up to 12.4 s at
#: other values near it: costs.MEAN_AGGREGATE_SECONDS).
WORST_MEANS = [
    (16, 10.0, 10_000),
    (64, 1.0, 10_000),
    pytest.param(256, 80.0, 1, marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def rank_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.api.conftest import app_client

    path: Path = tmp_path_factory.mktemp("ranks") / "ranks.db"
    s = Settings(  # type: ignore[call-arg]
        environment="test", database_url=f"sqlite:///{path}", queue_url="memory://"
    )
    yield from app_client(s)


@pytest.mark.parametrize(("runs", "mean", "budget"), WORST_MEANS)
@pytest.mark.parametrize("regions", ["auto", "domain"])
def test_a_mean_s_estimate_is_its_worst_case(
    rank_client: Any, runs: int, mean: float, budget: int, regions: str
) -> None:
    """One algorithm's mean of r runs at a value where its convolutions are dearest: the
    request's estimate lies within 4× of its measured CPU (r = 256: at or above it)."""
    body = {
        "function_id": "classic/sphere/d10",
        "values_are": "error",
        "aggregate": "mean",
        "budget": budget,
        "regions": regions,
        "runs_by_algorithm": {"a": [mean] * runs},
    }
    estimate = costs.rank_cost(RankRequest.model_validate(body))
    warm = {**body, "runs_by_algorithm": {"a": [2.0 * mean] * 2}}
    assert rank_client.post("/v1/absolute-ranks", json=warm).status_code == 200
    measured = cpu(lambda: rank_client.post("/v1/absolute-ranks", json=body))
    if runs > 64:  # the dearest means of 256 runs vary 2-12 s with the value's digits
        assert measured <= estimate.cpu_seconds, (estimate.cpu_seconds, measured)
    else:
        within(estimate.cpu_seconds, measured)


def test_the_issue_s_aggregates_are_refused() -> None:
    """200 means of 256 runs (288 s in the issue)."""
    req = RankRequest(
        function_id="classic/sphere/d3",
        values=[0.1 + i * 1e-3 for i in range(200)],
        runs=256,
        aggregate="mean",
    )
    assert costs.rank_cost(req).cpu_seconds > 2.0


@pytest.mark.parametrize(("algorithms", "runs"), [(200, 64), (50, 256)])
def test_the_reported_runs_by_algorithm_are_above_the_synchronous_budget(
    algorithms: int, runs: int
) -> None:
    """Means over runs_by_algorithm that were admitted at the default 2 s and took 39.8 s and
    14 s: their worst-case estimate is above it (they become jobs)."""
    req = RankRequest(
        function_id="classic/sphere/d10",
        values_are="error",
        aggregate="mean",
        runs_by_algorithm={f"a{i}": [50.0 + i * 0.1] * runs for i in range(algorithms)},
    )
    assert costs.rank_cost(req).cpu_seconds > 10 * Settings().sync_cpu_limit_seconds


# --- comparisons -----------------------------------------------------------------------------


def comparison_rows(k: int, n: int, runs: int = 1, seed: int = 0) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    return [
        {"algorithm": f"a{a}", "problem": f"p{p}", "run": r, "value": float(rng.random())}
        for p in range(n)
        for a in range(k)
        for r in range(runs)
    ]


@pytest.mark.parametrize(
    ("k", "n", "runs", "options"),
    [
        (20, 30, 1, {}),
        (50, 30, 1, {"posthoc": "holm"}),
        (100, 30, 1, {"posthoc": "hommel"}),
        (200, 30, 1, {"posthoc": "nemenyi"}),
        (20, 100, 50, {"reduction": "mean"}),
        (40, 30, 1, {"posthoc": "hommel", "niia_subsets": "many"}),
    ],
)
def test_comparison_estimate_matches_measured(
    settings: Settings,
    sm: sessionmaker[Session],
    k: int,
    n: int,
    runs: int,
    options: dict[str, Any],
) -> None:
    if options.get("niia_subsets") == "many":
        options = {**options, "niia_subsets": [[f"a{i}" for i in range(k - 1)]] * 10}
    body = ComparisonCreate(
        results=comparison_rows(k, n, runs, seed=k + n + runs), absolute="off", **options
    )
    seen: list[costs.CostEstimate] = []
    caches = AppCaches.from_settings(settings)

    def work() -> None:
        comparisons.create_comparison(
            sm,
            settings,
            None,
            body,
            may_queue_builds=False,
            cache=caches.tables,
            ladder_cache=caches.ladders,
            admission=seen.append,
        )

    measured = cpu(work)
    within(seen[0].cpu_seconds, measured)


def test_the_issue_s_comparison_is_refused_naming_the_subsets(settings: Settings) -> None:
    """400k rows, Hommel and 100 NIIA subsets (no answer in 200 s in the issue)."""
    body = ComparisonCreate.model_construct(
        posthoc="hommel",
        niia_subsets=[[f"a{i}" for i in range(200)]] * 100,
        absolute="auto",
        control=None,
        reduction="mean",
        csv=None,
    )
    shape = costs.ComparisonShape(rows=400_000, algorithms=200, problems=2000)
    estimate = costs.comparison_cost(body, shape, settings)
    assert estimate.cpu_seconds > 100
    assert costs.comparison_field(body, estimate) == "niia_subsets"
    field = costs.comparison_field(body, estimate)
    with pytest.raises(CostTooHigh) as caught:
        admit_sync(estimate, settings, field=field)
    assert caught.value.field == "niia_subsets"
    assert caught.value.extra["limit_cpu_seconds"] == settings.sync_cpu_limit_seconds
    assert "send it as a job" in caught.value.detail


# --- Pareto rankings -------------------------------------------------------------------------


def score_rows(algorithms: int, runs: int, indicators: int, problems: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(algorithms * runs)
    return [
        {"problem": f"p{p}", "algorithm": f"a{a}", "run": r, "indicator": f"i{i}", "value": v}
        for p in range(problems)
        for a in range(algorithms)
        for r in range(runs)
        for i, v in enumerate(rng.random(indicators).tolist())
    ]


@pytest.mark.parametrize(
    ("algorithms", "runs", "indicators", "problems"),
    [(10, 31, 10, 45), (20, 100, 4, 10), (50, 100, 3, 2)],
)
def test_pareto_estimate_matches_measured(
    settings: Settings,
    sm: sessionmaker[Session],
    algorithms: int,
    runs: int,
    indicators: int,
    problems: int,
) -> None:
    body = ParetoRankingCreate(scores=score_rows(algorithms, runs, indicators, problems))
    estimate = costs.pareto_cost(body, settings)
    within(estimate.cpu_seconds, cpu(lambda: pareto.create(sm, settings, body)))


def test_pareto_of_fronts_estimate_matches_measured(
    settings: Settings, sm: sessionmaker[Session]
) -> None:
    fronts = [
        {"problem": "p", "algorithm": f"a{a}", "run": r, "front": sphere(150, 6, seed=a * 10 + r)}
        for a in range(3)
        for r in range(4)
    ]
    body = ParetoRankingCreate(
        fronts=fronts,
        references={"p": {"reference_point": [1.1] * 6}},
        indicators=["hv"],
    )
    estimate = costs.pareto_cost(body, settings)
    within(estimate.cpu_seconds, cpu(lambda: pareto.create(sm, settings, body)))


# --- region scans ----------------------------------------------------------------------------


def test_region_scan_chunks_over_the_limit_are_refused(settings: Settings) -> None:
    costs.region_scan_chunks(settings.max_region_scan_chunks, settings)
    with pytest.raises(InvalidInput) as caught:
        costs.region_scan_chunks(8192, settings)
    assert caught.value.field == "deltas"
    assert caught.value.extra["limit_chunks"] == settings.max_region_scan_chunks


# --- statistical tests -----------------------------------------------------------------------


@pytest.mark.parametrize(("method", "k"), [("hommel", 200), ("shaffer", 200), ("nemenyi", 100)])
def test_posthoc_test_estimate_matches_measured(settings: Settings, method: str, k: int) -> None:
    from app.schemas.stattests import PosthocRequest
    from app.services import stattests

    values = np.random.default_rng(k).random((30, k)).tolist()
    body = PosthocRequest(values=values, method=method)
    estimate = costs.posthoc_cost(method, values, control=False)
    within(estimate.cpu_seconds, cpu(lambda: stattests.posthoc(body, settings)))


@pytest.mark.parametrize(("aggregate", "runs"), [("mean", 64), ("mean", 3), ("median", 8)])
def test_aggregates_stop_at_their_next_check(aggregate: str, runs: int) -> None:
    """A cancelled control stops a mean's convolutions or a median's quadrature at its next
    step (Cancelled), and a live one changes no number."""
    from app.domain.aggregates import aggregate_ranks
    from app.domain.cost import Cancelled, WorkControl

    curve = smooth_curve()
    t = np.sort(np.random.default_rng(4).uniform(0.05, 1.0, 8))
    control = WorkControl()
    control.cancel()
    with pytest.raises(Cancelled):
        aggregate_ranks(t, curve, budget=1, runs=runs, aggregate=aggregate, control=control)
    live = aggregate_ranks(
        t, curve, budget=1, runs=runs, aggregate=aggregate, control=WorkControl()
    )
    plain = aggregate_ranks(t, curve, budget=1, runs=runs, aggregate=aggregate)
    assert live.log10_v.tobytes() == plain.log10_v.tobytes()


@pytest.mark.parametrize(
    ("n", "runs", "aggregate", "order"),
    [(2000, 9999, "order", 5000), (20_000, 9, "median", None), (200, 5000, "best", None)],
)
def test_order_statistic_estimate_matches_measured(
    n: int, runs: int, aggregate: str, order: int | None
) -> None:
    """An order statistic of r runs (the binomial tail's r − k + 1 terms per value, for the
    value and both interval ends): the request's estimate within 4× either way of the ranking's
    CPU on a table curve."""
    from app.domain.absrank import ranks_from_curve

    curve = smooth_curve()
    t = np.sort(np.random.default_rng(5).uniform(0.01, 1.5, n))
    req = RankRequest(
        function_id="classic/sphere/d3",
        values=t.tolist(),
        runs=runs,
        aggregate=aggregate,
        order=order,
    )
    estimate = costs.rank_cost(req)
    measured = cpu(lambda: ranks_from_curve(t, curve, runs=runs, aggregate=aggregate, order=order))
    within(estimate.cpu_seconds, measured)


def test_the_fresh_user_s_order_statistic_is_a_job() -> None:
    """10^5 values of the 5000th of 9999 runs ran 65 s synchronously before the order
    statistic was estimated: now above the synchronous limit (a job), within the job limit."""
    req = RankRequest(
        function_id="bbob/f15/i1/d10",
        values=[1000.0 + 1e-3 * i for i in range(100_000)],
        runs=9999,
        aggregate="order",
        order=5000,
        budget=10**15,
    )
    seconds = costs.rank_cost(req).cpu_seconds
    s = Settings()
    assert s.sync_cpu_limit_seconds < seconds <= s.job_cpu_limit_seconds


def test_order_statistics_stop_at_their_next_block() -> None:
    """A cancelled control stops an order statistic's sums before their next block; a live
    one changes no number."""
    from app.domain.absrank import ranks_from_curve
    from app.domain.cost import Cancelled, WorkControl

    curve = smooth_curve()
    t = np.sort(np.random.default_rng(6).uniform(0.05, 1.0, 500))
    options: dict[str, Any] = {"runs": 999, "aggregate": "order", "order": 17}
    control = WorkControl()
    control.cancel()
    with pytest.raises(Cancelled):
        ranks_from_curve(t, curve, control=control, **options)
    seen: list[tuple[float, float]] = []
    live = ranks_from_curve(
        t, curve, control=WorkControl(on_progress=lambda d, n: seen.append((d, n))), **options
    )
    plain = ranks_from_curve(t, curve, **options)
    assert live.log10_v.tobytes() == plain.log10_v.tobytes()
    # a job's progress: the three passes (the value, the interval's ends) in one count
    done = [d for d, _ in seen]
    assert done == sorted(done)
    assert len(set(done)) == len(done) >= 3
    assert {n for _, n in seen} == {3.0 * t.size}


# --- result sets -----------------------------------------------------------------------------


def test_result_set_upload_estimate_matches_measured(
    settings: Settings, sm: sessionmaker[Session]
) -> None:
    from app.schemas.result_sets import ResultSetMetadata
    from app.services import result_sets
    from workers.inline import InlineDispatcher

    lines = [f"classic/sphere/d2,{i},{0.001 * (i % 997) + 1e-6},1000" for i in range(20_000)]
    raw = ("function_id,run,value,budget\n" + "\n".join(lines) + "\n").encode()
    dispatcher = InlineDispatcher(settings)
    dispatcher.hold = True  # the table builds it queues are the workers' work, not the upload's
    caches = AppCaches.from_settings(settings)
    estimate = costs.result_set_cost(len(raw), archive=False, max_rows=settings.max_upload_rows)

    def work() -> None:
        result_sets.create_from_csv(
            sm,
            settings,
            dispatcher,
            ResultSetMetadata(name="DE", values_are="f"),
            raw,
            cache=caches.tables,
            ladder_cache=caches.ladders,
        )

    within(estimate.cpu_seconds, cpu(work))


# --- the documented requests -----------------------------------------------------------------


def _examples(model: type[Any]) -> list[dict[str, Any]]:
    examples = model.model_json_schema().get("examples", [])
    assert examples, f"{model.__name__} documents no example"
    return list(examples)


def test_every_documented_example_is_estimated_under_the_default_limit(
    settings: Settings,
) -> None:
    """The request examples of the OpenAPI document are admitted at the defaults (2 s)."""
    from app.schemas.stattests import PosthocRequest
    from app.services import results_input

    limit = Settings().sync_cpu_limit_seconds
    estimates = []
    for ex in _examples(IndicatorRequest):
        estimates.append(costs.indicators_cost(IndicatorRequest.model_validate(ex), settings))
    for ex in _examples(ParetoRankingCreate):
        estimates.append(costs.pareto_cost(ParetoRankingCreate.model_validate(ex), settings))
    for ex in _examples(RankRequest):
        estimates.append(costs.rank_cost(RankRequest.model_validate(ex)))
    for ex in _examples(PosthocRequest):
        body = PosthocRequest.model_validate(ex)
        estimates.append(costs.posthoc_cost(body.method, body.values, body.control is not None))
    for ex in _examples(ComparisonCreate):
        body = ComparisonCreate.model_validate(ex)
        rows = (
            results_input.parse_csv(body.csv, max_rows=10**6)
            if body.csv is not None
            else [(r.algorithm, r.problem, r.run, r.value) for r in body.results or []]
        )
        shape = costs.ComparisonShape.of_rows(rows, body.reduction)
        estimates.append(costs.comparison_cost(body, shape, settings))
    assert len(estimates) >= 5
    assert all(0 < e.cpu_seconds <= limit for e in estimates), [
        (e.operation, e.cpu_seconds) for e in estimates if e.cpu_seconds > limit
    ]
