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
from app.schemas.ranks import RankResponse
from app.services import tables as table_service
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PROBLEM = "application/problem+json"


def _rank(client: TestClient, **payload: object) -> dict:
    r = client.post("/v1/absolute-ranks", json=payload)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/json"
    body = r.json()
    # the endpoint serializes the service's dict directly: it must keep the documented shape
    assert RankResponse.model_validate(body).model_dump(mode="json") == body
    return body


def test_values_at_samples_follow_eq28(client: TestClient) -> None:
    """v at a sample value is #{y <= t}/(N+1) (Jing & Liu Eq. 28), checked on the stored table."""
    table = client.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"}).json()
    state = client.app.state
    view, data = table_service.load_table_data(
        state.sessionmaker, table["id"], cache=state.table_caches
    )
    ys = data.low_values[[0, 10, 100, 300]]
    body = _rank(client, table_id=table["id"], values=ys.tolist(), tail="linear")
    n = view.n
    for item, y in zip(body["results"], ys, strict=True):
        count = int(np.sum(data.low_values <= y))
        assert item["method"] == "interpolated"
        assert item["v"] == pytest.approx(count / (n + 1), rel=1e-12)
        assert item["interval"]["v_lo"] <= item["v"] <= item["interval"]["v_hi"]


def test_identical_requests_give_identical_bytes(client: TestClient) -> None:
    payload = {
        "function_id": "bbob/f15/i1/d2",
        "values": [1000.5, 1003.0, 1050.0],
        "budget": 7,
        "regions": "domain",  # the domain table's own tail (auto would use the ladder)
    }
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
    assert body["results"][0]["method"] == "at-or-below-minimum"


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
    assert body["type"].endswith("/table-not-ready")
    assert body["field"] == "function_id"  # the request named a function, not a table
    assert body["location"] == r.headers["location"]
    assert body["location"].startswith("/v1/tables/t")
    assert body["progress"]["total"] >= 1
    assert client.get(body["location"]).json()["status"] == "building"


def test_power_tail_refused_on_the_ill_conditioned_ellipsoid(client: TestClient) -> None:
    payload = {"function_id": "classic/ellipsoid/d10", "values": [1.0], "regions": "domain"}
    refused = client.post("/v1/absolute-ranks", json=payload | {"tail": "power"})
    assert refused.status_code == 409
    assert refused.json()["field"] == "tail"
    auto = _rank(client, **payload)
    assert auto["results"][0]["method"] == "tail-linear"
    assert auto["warnings"]


def test_power_tail_on_the_sampled_sphere_agrees_with_the_exact_form(client: TestClient) -> None:
    t = 1e-4
    sampled = _rank(
        client,
        function_id="classic/sphere/d5",
        values=[t],
        use_analytic=False,
        tail="power",
        regions="domain",
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
        ({"function_id": "classic/sphere/d2", "table_id": "t1", "values": [1.0]}, 422, "table_id"),
        ({"values": [1.0]}, 422, "function_id"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "runs": 3}, 422, "aggregate"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "budget": 0}, 422, "budget"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "tail": "magic"}, 422, "tail"),
        ({"function_id": "classic/sphere/d2", "values": [1.0], "bogus": 1}, 422, "bogus"),
        ({"function_id": "classic/sphere/d2", "values": [1.0] * 1001}, 422, "values"),
        ({"function_id": "bbob/f1/i1/d7", "values": [1.0]}, 422, "function_id"),
        ({"function_id": "bbob/f30/i1/d2", "values": [1.0]}, 404, "function_id"),
        ({"table_id": "tdeadbeef", "values": [1.0]}, 404, None),
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


def test_table_not_ready_names_table_id_for_table_requests(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    table = client.post("/v1/tables", json={"function_id": "bbob/f3/i1/d5"}).json()
    r = client.post("/v1/absolute-ranks", json={"table_id": table["id"], "values": [1.0]})
    assert r.status_code == 409
    assert r.json()["field"] == "table_id"


HUGE = "9" * 5000  # beyond Python's 4300-digit limit for int(str)


@pytest.mark.parametrize(
    ("function_id", "status"),
    [
        (f"classic/sphere/d{HUGE}", 422),
        (f"bbob/f1/i{HUGE}/d2", 422),
        ("classic/sphere/d" + "9" * 150, 404),
        ("bbob/f1/i1/d" + "9" * 150, 404),
    ],
)
def test_huge_function_ids(client: TestClient, function_id: str, status: int) -> None:
    r = client.post("/v1/absolute-ranks", json={"function_id": function_id, "values": [1.0]})
    assert r.status_code == status, r.text[:300]
    assert r.json()["field"] == "function_id"
    assert len(r.json()["detail"]) < 300


def _keyed_client(tmp_path: Path) -> tuple[TestClient, InlineDispatcher]:
    settings = api_settings(tmp_path, api_keys=["s3cret"])
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    return TestClient(app), dispatcher


def test_anonymous_ranks_never_queue_a_build_when_keys_are_configured(tmp_path: Path) -> None:
    client, dispatcher = _keyed_client(tmp_path)
    key = {"X-API-Key": "s3cret"}
    payload = {"function_id": "classic/rastrigin/d2", "values": [1.0]}
    with client as c:
        missing = c.post("/v1/absolute-ranks", json=payload)
        assert missing.status_code == 409, missing.text
        body = missing.json()
        assert body["type"].endswith("/table-not-built")
        assert body["field"] == "function_id"
        assert "POST /v1/tables" in body["detail"]
        assert "classic/rastrigin/d2" in body["detail"]
        assert body["table_request"] == {"function_id": "classic/rastrigin/d2"}
        assert "location" not in missing.headers
        assert c.get("/v1/tables").json()["total"] == 0  # no row created
        assert dispatcher.chunks == []  # nothing queued

        wrong = c.post("/v1/absolute-ranks", json=payload, headers={"X-API-Key": "nope"})
        assert wrong.status_code == 401
        assert wrong.headers["www-authenticate"] == 'ApiKey header="X-API-Key"'
        assert c.get("/v1/tables").json()["total"] == 0

        dispatcher.hold = True  # a key-holder queues the table; anonymous users may wait for it
        queued = c.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"}, headers=key)
        assert queued.status_code == 202
        assert body["table_id"] == queued.json()["id"]
        building = c.post("/v1/absolute-ranks", json=payload)
        assert building.status_code == 409
        assert building.json()["type"].endswith("/table-not-ready")
        assert building.headers["location"] == queued.headers["location"]
        assert building.json()["field"] == "function_id"

        dispatcher.hold = False
        for table_id, index in list(dispatcher.chunks):
            dispatcher.enqueue_chunk(table_id, index)
        ready = c.post("/v1/absolute-ranks", json=payload)
        assert ready.status_code == 200, ready.text
        assert ready.json()["source"]["table_id"] == queued.json()["id"]
        # exact forms need no table and stay anonymous
        exact = c.post(
            "/v1/absolute-ranks", json={"function_id": "classic/sphere/d2", "values": [1.0]}
        )
        assert exact.status_code == 200
        assert c.get("/v1/tables").json()["total"] == 1


def test_key_holders_still_queue_the_default_table(tmp_path: Path) -> None:
    client, _ = _keyed_client(tmp_path)
    with client as c:
        r = c.post(
            "/v1/absolute-ranks",
            json={"function_id": "classic/rastrigin/d2", "values": [1.0]},
            headers={"X-API-Key": "s3cret"},
        )
        assert r.status_code == 200, r.text  # the inline dispatcher builds it at once
        assert c.get("/v1/tables").json()["total"] == 1


CROSS_FIELD = [  # each names its field, not "body"
    ({"runs": 3, "aggregate": "order"}, "order"),
    ({"runs": 3, "aggregate": "order", "order": 4}, "order"),
    ({"runs": 3, "order": 2}, "aggregate"),
    ({"order": 2}, "order"),
]
LAX_COERCIONS = [  # strict: no bool or string for a number
    ({"values": [1.0, True]}, "values.1"),
    ({"values": [1.0, "1.5"]}, "values.1"),
    ({"values": ["NaN"]}, "values.0"),
    ({"values": ["Infinity"]}, "values.0"),
    ({"budget": "5"}, "budget"),
    ({"budget": True}, "budget"),
    ({"budget": 5.0}, "budget"),
    ({"runs": "3", "aggregate": "best"}, "runs"),
    ({"use_analytic": "false"}, "use_analytic"),
    ({"confidence": "0.9"}, "confidence"),
    ({"tail_k": True}, "tail_k"),
]
UPPER_BOUNDS = [
    ({"budget": 10**400}, "budget"),
    ({"budget": 10**15 + 1}, "budget"),
    ({"tail_k": 100_001}, "tail_k"),
    ({"runs": 10_001, "aggregate": "best"}, "runs"),
    ({"runs": 3, "aggregate": "order", "order": 10**30}, "order"),
]


@pytest.mark.parametrize(("extra", "field"), CROSS_FIELD + LAX_COERCIONS + UPPER_BOUNDS)
def test_payload_errors_name_their_field(client: TestClient, extra: dict, field: str) -> None:
    payload = {"function_id": "classic/sphere/d2", "values": [1.0]} | extra
    r = client.post("/v1/absolute-ranks", json=payload)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field
    assert "Value error" not in r.json()["detail"]


def test_nan_and_infinity_literals_are_422(client: TestClient) -> None:
    for literal in (b"NaN", b"Infinity", b"-Infinity"):
        r = client.post(
            "/v1/absolute-ranks",
            content=b'{"function_id": "classic/sphere/d2", "values": [1.0, ' + literal + b"]}",
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 422
        assert r.json()["field"] == "values.1"


def test_json_integers_are_accepted_as_values(client: TestClient) -> None:
    body = _rank(client, function_id="classic/sphere/d2", values=[0, 1], confidence=0.9)
    assert [r["value"] for r in body["results"]] == [0.0, 1.0]


def test_largest_budget_is_accepted(client: TestClient) -> None:
    body = _rank(client, function_id="classic/sphere/d2", values=[1e-30], budget=10**15)
    assert body["budget"] == 10**15
    assert body["results"][0]["log10_v"] is not None


def test_capped_tail_k_is_reported(client: TestClient) -> None:
    # the test tables keep k_exact = 512 lowest samples: an anchor of 5000 is capped
    payload = {
        "function_id": "classic/sphere/d5",
        "values": [1e-4],
        "use_analytic": False,
        "tail": "power",
    }
    body = _rank(client, **payload, tail_k=5000)
    k = body["tail"]["k"]
    assert k < 5000
    assert any("tail_k = 5000" in w and f"k = {k}" in w for w in body["warnings"]), body["warnings"]
    plain = _rank(client, **payload, tail_k=k)
    assert plain["tail"]["k"] == k
    assert not any("tail_k" in w for w in plain["warnings"])


def test_values_below_f_opt_warn_and_the_paper_tail_says_it_is_positive_there(
    client: TestClient,
) -> None:
    body = _rank(client, function_id="bbob/f21/i1/d2", values=[0.0, 1000.0], tail="paper")
    assert body["results"][0]["method"] == "tail-paper"
    assert body["results"][0]["v"] > 0  # as published
    assert any("below f*" in w for w in body["warnings"])
    assert any("tail='paper'" in w for w in body["warnings"])
    auto = _rank(client, function_id="bbob/f21/i1/d2", values=[0.0])
    assert auto["results"][0]["method"] == "at-or-below-minimum"
    assert any("below f*" in w for w in auto["warnings"])


def test_box_table_upper_tail_does_not_use_the_domain_maximum(client: TestClient) -> None:
    table = client.post(
        "/v1/tables", json={"function_id": "classic/pyramid/d2", "delta": 0.5}
    ).json()
    body = _rank(client, table_id=table["id"], values=[4.0])  # above the box, below f_max = 5
    item = body["results"][0]
    assert item["method"] == "upper-tail"
    assert body["tail"]["upper"] == "flat"
    assert item["interval"]["v_hi"] == 1.0
