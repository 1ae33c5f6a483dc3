"""POST /v1/absolute-ranks with runs per algorithm (SPEC §3.1): aggregates, per-run ranks."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.domain import absrank
from app.main import create_app
from app.schemas.ranks import RankResponse
from app.services.functions import find_function
from app.services.regions import rank_context
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PROBLEM = "application/problem+json"
SPHERE = "classic/sphere/d5"
RUNS = {
    "DE": [0.12, 0.03, 0.5, 0.07],  # r = 4
    "PSO": [1.5, 0.9, 2.0],  # r = 3
    "random": [6.0],  # r = 1
}


def _post(client: TestClient, **payload: object) -> dict:
    r = client.post("/v1/absolute-ranks", json=payload)
    assert r.status_code == 200, r.text
    body = r.json()
    # the endpoint serializes the service's dict directly: it must keep the documented shape
    assert RankResponse.model_validate(body).model_dump(mode="json") == body
    return body


def _sphere_curve(function_id: str = SPHERE) -> absrank.V1Curve:
    fn = find_function(function_id)
    ctx = rank_context(fn, fn.lower, fn.upper, whole_domain=True)
    return absrank.analytic_curve("sphere", ctx)


def _by_name(body: dict) -> dict[str, dict]:
    return {a["algorithm"]: a for a in body["algorithms"]}


def test_mean_of_runs_per_algorithm_on_the_analytic_sphere(client: TestClient) -> None:
    body = _post(client, function_id=SPHERE, runs_by_algorithm=RUNS, budget=50, aggregate="mean")
    assert body["runs"] is None
    assert body["results"] == []
    assert body["aggregate"] == "mean"
    assert [a["algorithm"] for a in body["algorithms"]] == list(RUNS)  # the order sent
    curve = _sphere_curve()
    for name, runs in RUNS.items():
        item = _by_name(body)[name]
        r = len(runs)
        assert item["runs"] == r
        assert item["value"] == pytest.approx(sum(runs) / r, rel=1e-15)
        aggregate = "mean" if r > 1 else "best"
        assert item["aggregate"] == aggregate
        ref = absrank.ranks_from_curve(
            np.array([item["value"]]), curve, budget=50, runs=r, aggregate=aggregate
        )
        assert item["log10_v"] == pytest.approx(ref.log10_v[0], rel=1e-12)
        assert item["interval"]["log10_lo"] <= item["log10_v"] <= item["interval"]["log10_hi"]
        assert item["transform"]["runs"] == r
        assert item["transform"]["budget"] == 50
        # every run ranked alone, runs = 1, the same budget
        single = absrank.ranks_from_curve(np.array(runs), curve, budget=50)
        assert [p["value"] for p in item["per_run"]] == runs
        np.testing.assert_allclose(
            [p["log10_v"] for p in item["per_run"]], single.log10_v, rtol=1e-12
        )
        assert {p["method"] for p in item["per_run"]} == {"analytic"}
    de = _by_name(body)["DE"]
    assert de["method"] in {"mean-power", "mean-convolution"}
    numerics = de["transform"]["aggregate_method"]
    assert numerics["statistic"] == "mean"
    assert isinstance(numerics["cells"], int)
    assert numerics["numerical_error_log10"] < 1e-3
    assert _by_name(body)["random"]["method"] == "analytic"  # r = 1: the single-run rank
    assert "transform" not in body["tail"]  # each algorithm has its own
    assert body["tail"]["kind"] == "sphere"
    assert body["provenance"]["request_sha256"]


def test_per_run_and_aggregate_ranks_match_the_values_form(client: TestClient) -> None:
    body = _post(client, function_id=SPHERE, runs_by_algorithm=RUNS, aggregate="mean")
    de = _by_name(body)["DE"]
    values = _post(client, function_id=SPHERE, values=[de["value"]], runs=4, aggregate="mean")
    assert values["results"][0]["log10_v"] == de["log10_v"]
    assert values["results"][0]["method"] == de["method"]
    assert values["algorithms"] is None
    one_by_one = _post(client, function_id=SPHERE, values=RUNS["DE"])
    assert [p["v"] for p in de["per_run"]] == [x["v"] for x in one_by_one["results"]]


def test_even_median_is_the_mean_of_the_two_middle_runs(client: TestClient) -> None:
    runs = {"A": [0.4, 0.1, 0.3, 0.9, 0.2, 0.6], "B": [0.5, 0.05]}
    body = _post(client, function_id=SPHERE, runs_by_algorithm=runs, aggregate="median")
    curve = _sphere_curve()
    for name, x in runs.items():
        item = _by_name(body)[name]
        assert item["value"] == pytest.approx(statistics.median(x), rel=1e-15)
        assert item["method"] == "median-integral"
        k = len(x) // 2
        t = np.array([item["value"]])
        # Z_(k) <= M <= Z_(k+1): the rank lies between those of the two middle order statistics
        lower = absrank.ranks_from_curve(t, curve, runs=len(x), aggregate="order", order=k)
        upper = absrank.ranks_from_curve(t, curve, runs=len(x), aggregate="order", order=k + 1)
        assert upper.log10_v[0] <= item["log10_v"] <= lower.log10_v[0]
        assert item["transform"]["aggregate_method"]["statistic"] == "median"
    # a median of two runs is their mean
    mean = _post(client, function_id=SPHERE, runs_by_algorithm={"B": runs["B"]}, aggregate="mean")
    b = _by_name(body)["B"]
    assert mean["algorithms"][0]["log10_v"] == pytest.approx(b["log10_v"], abs=1e-5)


@pytest.mark.parametrize(
    ("aggregate", "pick"),
    [("best", min), ("worst", max), ("lower-median", lambda x: sorted(x)[1])],
)
def test_order_statistic_aggregates_pick_a_run(client: TestClient, aggregate: str, pick) -> None:
    runs = {"A": [0.4, 0.1, 0.3, 0.9]}
    body = _post(client, function_id=SPHERE, runs_by_algorithm=runs, aggregate=aggregate)
    item = body["algorithms"][0]
    assert item["value"] == pick(runs["A"])
    assert item["method"] == "analytic"  # an order statistic: exact binomial sum
    assert item["transform"]["order"] == {"best": 1, "worst": 4, "lower-median": 2}[aggregate]
    assert "aggregate_method" not in item["transform"]


def test_errors_are_ranked_with_f_opt_added(client: TestClient) -> None:
    """bbob/f1 is an off-centre sphere with f* = 79.48: errors and f values give one rank."""
    errors = {"A": [1e-6, 4e-6, 2e-6], "B": [0.5, 0.25]}
    fn = find_function("bbob/f1/i1/d2")
    as_error = _post(
        client,
        function_id="bbob/f1/i1/d2",
        runs_by_algorithm=errors,
        values_are="error",
        aggregate="mean",
    )
    as_f = _post(
        client,
        function_id="bbob/f1/i1/d2",
        runs_by_algorithm={k: [x + fn.f_opt for x in v] for k, v in errors.items()},
        aggregate="mean",
    )
    for a, b in zip(as_error["algorithms"], as_f["algorithms"], strict=True):
        assert a["value"] == pytest.approx(b["value"] - fn.f_opt, abs=1e-12)
        assert a["log10_v"] == pytest.approx(b["log10_v"], abs=1e-6)
        assert [p["value"] for p in a["per_run"]] == errors[a["algorithm"]]
    assert as_error["algorithms"][0]["method"] == "mean-power"  # deep in the tail
    assert as_error["algorithms"][0]["log10_v"] < -10


def test_runs_on_a_sampled_table(client: TestClient) -> None:
    runs = {"A": [0.9, 2.5, 1.1, 4.0], "B": [12.0, 20.0]}
    body = _post(
        client, function_id="classic/rastrigin/d2", runs_by_algorithm=runs, aggregate="mean"
    )
    assert body["source"]["kind"] == "table"
    assert body["provenance"]["table"] == body["source"]["table_id"]
    for item in body["algorithms"]:
        assert item["method"] in {"mean-convolution", "mean-power"}
        assert item["interval"]["log10_lo"] < item["log10_v"] < item["interval"]["log10_hi"]
        assert all(
            p["method"] in {"interpolated", "tail-power", "tail-linear"} for p in item["per_run"]
        )
    a, b = _by_name(body)["A"], _by_name(body)["B"]
    assert a["log10_v"] < b["log10_v"]  # a better mean, a better rank


def test_single_runs_need_no_aggregate(client: TestClient) -> None:
    body = _post(client, function_id=SPHERE, runs_by_algorithm={"A": [0.1], "B": [0.2]})
    assert body["aggregate"] == "best"
    assert [a["runs"] for a in body["algorithms"]] == [1, 1]
    assert body["algorithms"][0]["log10_v"] == body["algorithms"][0]["per_run"][0]["log10_v"]


def test_identical_requests_give_identical_bytes(client: TestClient) -> None:
    payload = {"function_id": SPHERE, "runs_by_algorithm": RUNS, "aggregate": "median"}
    first = client.post("/v1/absolute-ranks", json=payload)
    second = client.post("/v1/absolute-ranks", json=payload)
    assert first.status_code == 200
    assert first.content == second.content


def test_values_with_runs_accept_mean_and_lower_median(client: TestClient) -> None:
    mean = _post(client, function_id=SPHERE, values=[1e-6, 2.0], runs=25, aggregate="mean")
    assert [r["method"] for r in mean["results"]] == ["mean-power", "mean-convolution"]
    assert mean["tail"]["aggregate"]["statistic"] == "mean"
    lower = _post(client, function_id=SPHERE, values=[0.2], runs=4, aggregate="lower-median")
    order = _post(client, function_id=SPHERE, values=[0.2], runs=4, aggregate="order", order=2)
    assert lower["results"][0]["log10_v"] == order["results"][0]["log10_v"]


LONG = "x" * 201
BAD = [
    ({"runs_by_algorithm": {"A": []}}, "runs_by_algorithm.A"),
    ({"runs_by_algorithm": {"A": [1.0, "NaN"]}, "aggregate": "mean"}, "runs_by_algorithm.A.1"),
    ({"runs_by_algorithm": {"A": [1.0, "1.5"]}, "aggregate": "mean"}, "runs_by_algorithm.A.1"),
    ({"runs_by_algorithm": {"A": 1.0}}, "runs_by_algorithm.A"),
    ({"runs_by_algorithm": {}}, "runs_by_algorithm"),
    ({"runs_by_algorithm": {"": [1.0]}}, "runs_by_algorithm"),
    ({"runs_by_algorithm": {LONG: [1.0]}}, "runs_by_algorithm"),
    ({"runs_by_algorithm": {"A\nB": [1.0]}}, "runs_by_algorithm"),
    ({"runs_by_algorithm": {"A": [1.0, 2.0]}}, "aggregate"),
    ({"runs_by_algorithm": {"A": [1.0, 2.0]}, "aggregate": "order", "order": 1}, "aggregate"),
    ({"runs_by_algorithm": {"A": [1.0, 2.0]}, "aggregate": "mean", "runs": 2}, "runs"),
    ({"runs_by_algorithm": {"A": [1.0]}, "values": [1.0]}, "runs_by_algorithm"),
    ({}, "values"),
    (  # 1001 run values in all > max_rank_values
        {"runs_by_algorithm": {"A": [1.0] * 600, "B": [2.0] * 401}, "aggregate": "mean"},
        "runs_by_algorithm",
    ),
    ({"runs_by_algorithm": {f"A{i}": [1.0] for i in range(51)}}, "runs_by_algorithm"),
]


@pytest.mark.parametrize(("extra", "field"), BAD)
def test_bad_runs_are_422_naming_the_field(client: TestClient, extra: dict, field: str) -> None:
    r = client.post("/v1/absolute-ranks", json={"function_id": SPHERE} | extra)
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["field"] == field
    assert body["detail"]
    assert "Value error" not in body["detail"]
    assert len(body["detail"]) < 400  # a long name is not echoed in full


def test_non_finite_literals_in_runs_are_422(client: TestClient) -> None:
    r = client.post(
        "/v1/absolute-ranks",
        content=b'{"function_id": "classic/sphere/d2", "runs_by_algorithm": {"A": [1.0, Infinity]},'
        b' "aggregate": "mean"}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422
    assert r.json()["field"] == "runs_by_algorithm.A.1"


def test_mean_of_runs_needs_a_known_minimum(client: TestClient) -> None:
    """The paper's lower tail is positive down to -inf: no mean or even median over it."""
    r = client.post(
        "/v1/absolute-ranks",
        json={
            "function_id": "classic/rastrigin/d2",
            "runs_by_algorithm": {"A": [3.0, 4.0]},
            "aggregate": "mean",
            "tail": "paper",
        },
    )
    assert r.status_code == 409, r.text
    assert r.json()["field"] == "aggregate"
    assert "f*" in r.json()["detail"]


def test_too_many_numerical_aggregates_in_values(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, max_rank_values=5000)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    values = [1e-3 * (i + 1) for i in range(settings.max_numerical_aggregates + 1)]
    with TestClient(app) as c:
        payload = {"function_id": SPHERE, "values": values, "runs": 4}
        r = c.post("/v1/absolute-ranks", json=payload | {"aggregate": "mean"})
        assert r.status_code == 422
        assert r.json()["field"] == "values"
        assert str(settings.max_numerical_aggregates) in r.json()["detail"]
        # order statistics cost microseconds: no such limit
        r = c.post("/v1/absolute-ranks", json=payload | {"aggregate": "lower-median"})
        assert r.status_code == 200


def test_openapi_documents_runs_by_algorithm(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    request = schemas["RankRequest"]
    assert "runs_by_algorithm" in request["properties"]
    assert any("runs_by_algorithm" in ex for ex in request["examples"])
    assert set(request["properties"]["aggregate"]["anyOf"][0]["enum"]) >= {"mean", "lower-median"}
    assert "per_run" in schemas["AlgorithmRank"]["properties"]
    for example in schemas["RankResponse"]["examples"]:
        RankResponse.model_validate(example)
    assert any(ex.get("algorithms") for ex in schemas["RankResponse"]["examples"])


def test_every_request_example_is_answered(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    for example in spec["components"]["schemas"]["RankRequest"]["examples"]:
        _post(client, **example)


def test_a_warning_about_the_curve_is_given_once_not_again_per_algorithm(
    client: TestClient,
) -> None:
    """The power tail refused on the ill-conditioned ellipsoid is a fact about the curve: the
    per-run ranking says it, and the algorithms' aggregates must not repeat it."""
    body = _post(
        client,
        function_id="classic/ellipsoid/d10",
        regions="domain",
        values_are="error",
        budget=1000,
        aggregate="mean",
        runs_by_algorithm={"DE": [1.0, 1.2, 1.4], "RS": [1.1, 1.3, 1.5]},
    )
    messages = [w if isinstance(w, str) else w["message"] for w in body["warnings"]]
    assert messages, "the ellipsoid's power tail is refused: a warning is expected"
    assert len(messages) == len(set(messages))
    firsts = [m.split(" (the same for ")[0] for m in messages]
    assert len(firsts) == len(set(firsts)), messages
