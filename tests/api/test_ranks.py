"""Absolute ranks over HTTP: tables, analytic forms, tails, errors, reproducibility."""

from __future__ import annotations

import math
from pathlib import Path

import cocoex
import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy.special import gammaln

from app.main import create_app
from app.services import tables as table_service
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PROBLEM = "application/problem+json"


def _rank(client: TestClient, **payload: object) -> dict:
    r = client.post("/v1/absolute-ranks", json=payload)
    assert r.status_code == 200, r.text
    return r.json()


def test_values_at_samples_follow_eq28(client: TestClient) -> None:
    """v at a sample value is #{y <= t}/(N+1) (Jing & Liu Eq. 28), checked on the stored table."""
    table = client.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"}).json()
    view, data = table_service.load_table_data(client.app.state.sessionmaker, table["id"])
    ys = data.low_values[[0, 10, 100, 300]]
    body = _rank(client, table_id=table["id"], values=ys.tolist(), tail="linear")
    n = view.n
    for item, y in zip(body["results"], ys, strict=True):
        count = int(np.sum(data.low_values <= y))
        assert item["method"] == "interpolated"
        assert item["v"] == pytest.approx(count / (n + 1), rel=1e-12)
        assert item["interval"]["v_lo"] <= item["v"] <= item["interval"]["v_hi"]


def test_identical_requests_give_identical_bytes(client: TestClient) -> None:
    payload = {"function_id": "bbob/f15/i1/d2", "values": [1000.5, 1003.0, 1050.0], "budget": 7}
    first = client.post("/v1/absolute-ranks", json=payload)
    assert first.status_code == 200
    second = client.post("/v1/absolute-ranks", json=payload)
    assert first.content == second.content
    prov = first.json()["provenance"]
    assert prov["table"]
    assert prov["data_sha256"]
    assert prov["request_sha256"]
    assert prov["versions"]["scipy"]


def test_analytic_sphere_matches_the_ball_formula(client: TestClient) -> None:
    d, w = 10, 5.12
    t = np.array([1e-12, 1e-3, 4.0])  # sqrt(t) <= w: the unclipped formula is exact
    body = _rank(client, function_id="classic/sphere/d10", values=t.tolist())
    expected = (d / 2) * np.log(np.pi * t) - gammaln(d / 2 + 1) - d * np.log(2 * w)
    got = np.array([r["log10_v"] for r in body["results"]])
    np.testing.assert_allclose(got, expected / np.log(10), rtol=1e-9)
    assert {r["method"] for r in body["results"]} == {"analytic"}
    assert body["source"] == {"kind": "analytic", "form": "sphere", "region": "domain"}


def test_tiny_ranks_do_not_underflow(client: TestClient) -> None:
    body = _rank(client, function_id="classic/sphere/d40", values=[1e-300], values_are="error")
    item = body["results"][0]
    assert item["v"] == 0.0
    assert item["log10_v"] < -3000
    assert math.isfinite(item["log10_v"])


def test_below_the_minimum_is_zero(client: TestClient) -> None:
    body = _rank(client, function_id="classic/sphere/d2", values=[-1.0])
    assert body["results"][0]["v"] == 0.0
    assert body["results"][0]["log10_v"] is None


def test_best_of_c_and_order_statistics(client: TestClient) -> None:
    base = _rank(client, function_id="bbob/f15/i1/d2", values=[1010.0])["results"][0]["v"]
    c = 20
    best_of_c = _rank(client, function_id="bbob/f15/i1/d2", values=[1010.0], budget=c)
    assert best_of_c["results"][0]["v"] == pytest.approx(1 - (1 - base) ** c, rel=1e-10)
    median = _rank(
        client, function_id="bbob/f15/i1/d2", values=[1010.0], runs=3, aggregate="median"
    )
    p = base
    assert median["results"][0]["v"] == pytest.approx(3 * p**2 * (1 - p) + p**3, rel=1e-10)


def test_default_table_not_ready_is_409_with_location(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    r = client.post("/v1/absolute-ranks", json={"function_id": "bbob/f3/i1/d5", "values": [1.0]})
    assert r.status_code == 409
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["location"] == r.headers["location"]
    assert body["location"].startswith("/v1/tables/t")
    assert body["progress"]["total"] >= 1
    assert client.get(body["location"]).json()["status"] == "building"


def test_power_tail_refused_on_the_ill_conditioned_ellipsoid(client: TestClient) -> None:
    payload = {"function_id": "classic/ellipsoid/d10", "values": [1.0]}
    refused = client.post("/v1/absolute-ranks", json=payload | {"tail": "power"})
    assert refused.status_code == 409
    assert refused.json()["field"] == "tail"
    auto = _rank(client, **payload)
    assert auto["results"][0]["method"] == "tail-linear"
    assert auto["warnings"]


def test_power_tail_on_the_sampled_sphere_agrees_with_the_exact_form(client: TestClient) -> None:
    t = 1e-4
    sampled = _rank(
        client, function_id="classic/sphere/d5", values=[t], use_analytic=False, tail="power"
    )
    exact = _rank(client, function_id="classic/sphere/d5", values=[t])
    item = sampled["results"][0]
    assert item["method"] == "tail-power"
    assert abs(item["log10_v"] - exact["results"][0]["log10_v"]) < 0.3
    assert item["interval"]["log10_lo"] <= exact["results"][0]["log10_v"]
    assert exact["results"][0]["log10_v"] <= item["interval"]["log10_hi"]
    assert sampled["tail"]["beta"] == 2.5


@pytest.mark.parametrize(
    ("payload", "status", "field"),
    [
        ({"function_id": "classic/sphere/d2", "values": []}, 422, "values"),
        ({"function_id": "classic/sphere/d2", "values": ["NaN"]}, 422, "values.0"),
        ({"function_id": "classic/sphere/d2", "values": [1.0, "-Infinity"]}, 422, "values.1"),
        ({"function_id": "classic/sphere/d2", "values": [[1.0]]}, 422, "values.0"),
        ({"function_id": "classic/sphere/d2", "table_id": "t1", "values": [1.0]}, 422, "body"),
        ({"values": [1.0]}, 422, "body"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "runs": 3}, 422, "body"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "budget": 0}, 422, "budget"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "tail": "magic"}, 422, "tail"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "bogus": 1}, 422, "bogus"),
        ({"function_id": "classic/sphere/d2", "values": [1.0] * 1001}, 422, "values"),
        ({"function_id": "bbob/f1/i1/d7", "values": [1.0]}, 422, "function_id"),
        ({"function_id": "bbob/f30/i1/d2", "values": [1.0]}, 404, "function_id"),
        ({"table_id": "tdeadbeef", "values": [1.0]}, 404, None),
        (
            {"function_id": "classic/sphere/d2", "values": [1.0], "runs": 4, "aggregate": "median"},
            409,
            "aggregate",
        ),
    ],
)
def test_bad_rank_requests(
    client: TestClient, payload: dict, status: int, field: str | None
) -> None:
    r = client.post("/v1/absolute-ranks", json=payload)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == status
    assert body["detail"]
    if field is not None:
        assert body["field"] == field


@pytest.mark.slow
def test_random_search_ranks_itself_at_one_half(tmp_path: Path) -> None:
    """Random search's best-of-c values ranked with the same c average v_c ~ 0.5 (c <= N/1000).

    If v1 were exact, v_c(best of c uniform draws) would be Uniform(0, 1); 400 runs give a standard
    error of 0.0144 for the mean, so +-0.05 is about 3.5 standard errors.
    """
    settings = api_settings(tmp_path, table_chunk_log2=16)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    fn = cocoex.BareProblem("bbob", 15, 10, 1)
    rng = np.random.default_rng(20261130)
    c, runs = 50, 400
    best = [float(fn(rng.uniform(-5, 5, size=(c, 10))).min()) for _ in range(runs)]
    with TestClient(app) as client:
        table = client.post(
            "/v1/tables", json={"function_id": "bbob/f15/i1/d10", "log2n": 16}
        ).json()
        assert table["status"] == "ready"
        body = _rank(client, table_id=table["id"], values=best, budget=c)
    v = np.array([r["v"] for r in body["results"]])
    assert abs(v.mean() - 0.5) < 0.05
