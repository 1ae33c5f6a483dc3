"""Tables over HTTP: idempotent requests, 202/200 + Location, progress, errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PROBLEM = "application/problem+json"


def test_same_spec_twice_gives_the_same_table_202_then_200(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    spec = {"function_id": "bbob/f1/i1/d2", "log2n": 12, "seed": 3}
    dispatcher.hold = True
    first = client.post("/v1/tables", json=spec)
    assert first.status_code == 202
    location = first.headers["location"]
    assert location == f"/v1/tables/{first.json()['id']}"
    again = client.post("/v1/tables", json=spec)
    assert again.status_code == 202
    assert again.headers["location"] == location
    progress = client.get(location).json()
    assert progress["status"] == "building"
    assert progress["progress"] == {"done": 0, "total": 4, "fraction": 0.0}
    # a worker runs the queued chunks (in order, as a queue would)
    dispatcher.hold = False
    for table_id, index in list(dispatcher.chunks[:4]):
        dispatcher.enqueue_chunk(table_id, index)
    ready = client.post("/v1/tables", json=spec)
    assert ready.status_code == 200
    assert ready.headers["location"] == location
    body = ready.json()
    assert body["status"] == "ready"
    assert body["progress"]["done"] == 4
    assert body["spec"]["sampler"].endswith("rng=seed)")
    assert body["spec"]["versions"]["scipy"]
    assert body["provenance"]["seed"] == 3
    assert body["summary"]["y_1"] <= body["summary"]["y_N"]


def test_different_seed_is_a_different_table(client: TestClient) -> None:
    a = client.post("/v1/tables", json={"function_id": "classic/sphere/d2", "seed": 0}).json()
    b = client.post("/v1/tables", json={"function_id": "classic/sphere/d2", "seed": 1}).json()
    assert a["id"] != b["id"]
    assert a["data_sha256"] != b["data_sha256"]
    listed = client.get("/v1/tables", params={"function_id": "classic/sphere/d2"}).json()
    assert {t["id"] for t in listed["items"]} == {a["id"], b["id"]}
    assert listed["total"] == 2


def test_delta_box_region_is_recorded(client: TestClient) -> None:
    r = client.post("/v1/tables", json={"function_id": "classic/rastrigin/d2", "delta": 0.25})
    assert r.status_code == 200
    region = r.json()["spec"]["region"]
    assert region == {"kind": "box", "delta": 0.25, "lower": [-0.25, -0.25], "upper": [0.25, 0.25]}
    ranks = client.post(
        "/v1/absolute-ranks", json={"table_id": r.json()["id"], "values": [1.0]}
    ).json()
    assert ranks["source"]["relative_to"] == "box"
    assert ranks["source"]["spec"]["region"] == region


@pytest.mark.parametrize(
    ("payload", "status", "field"),
    [
        ({"function_id": "bbob/f99/i1/d2"}, 404, "function_id"),
        ({"function_id": "bbob/f1/i1/d2", "log2n": 30}, 422, "log2n"),
        ({"function_id": "bbob/f1/i1/d2", "log2n": 3}, 422, "log2n"),
        ({"function_id": "bbob/f1/i1/d2", "delta": -1.0}, 422, "delta"),
        ({"function_id": "bbob/f1/i1/d2", "delta": "NaN"}, 422, "delta"),
        ({"function_id": "bbob/f1/i1/d2", "seed": -1}, 422, "seed"),
        ({"function_id": "bbob/f1/i1/d2", "n": 1024}, 422, "n"),
        ({}, 422, "function_id"),
    ],
)
def test_bad_table_requests(client: TestClient, payload: dict, status: int, field: str) -> None:
    r = client.post("/v1/tables", json=payload)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == field
    assert client.get("/v1/tables").json()["total"] == 0  # nothing half written


def test_unknown_table_is_404(client: TestClient) -> None:
    r = client.get("/v1/tables/t0000")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith(PROBLEM)


def test_api_key_required_when_configured(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, api_keys=["s3cret"])
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        spec = {"function_id": "classic/sphere/d2"}
        denied = c.post("/v1/tables", json=spec)
        assert denied.status_code == 401
        assert denied.json()["field"] == "X-API-Key"
        assert denied.headers["www-authenticate"] == 'ApiKey header="X-API-Key"'
        wrong = c.post("/v1/tables", json=spec, headers={"X-API-Key": "nope"})
        assert wrong.status_code == 401
        ok = c.post("/v1/tables", json=spec, headers={"X-API-Key": "s3cret"})
        assert ok.status_code == 200
        # reads stay anonymous
        assert c.get(ok.headers["location"]).status_code == 200


HUGE = "9" * 5000  # beyond Python's 4300-digit limit for int(str)


@pytest.mark.parametrize(
    ("function_id", "status"),
    [
        (f"classic/sphere/d{HUGE}", 422),  # longer than any id: refused by the schema
        (f"bbob/f1/i{HUGE}/d2", 422),
        ("classic/sphere/d" + "9" * 150, 404),  # short enough, but no id has such numbers
        ("bbob/f1/i" + "9" * 150 + "/d2", 404),
    ],
)
def test_huge_function_ids(client: TestClient, function_id: str, status: int) -> None:
    r = client.post("/v1/tables", json={"function_id": function_id})
    assert r.status_code == status, r.text[:300]
    assert r.json()["field"] == "function_id"
    assert len(r.json()["detail"]) < 300
    assert client.get("/v1/tables").json()["total"] == 0


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"offset": 9223372036854775808}, "offset"),
        ({"offset": 10**9 + 1}, "offset"),
        ({"limit": 9223372036854775808}, "limit"),
    ],
)
def test_paging_is_bounded(client: TestClient, params: dict, field: str) -> None:
    r = client.get("/v1/tables", params=params)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == field


@pytest.mark.parametrize(
    ("function_id", "delta"),
    [
        ("classic/sphere/d2", 1e-300),
        ("classic/sphere/d2", 1e-9),  # 2e-9 wide < 1e-9 x 10.24
        ("bbob/f1/i1/d2", 1e-12),
        ("bbob/f3/i1/d2", 1e-300),  # x* = -2.34...: x* ± 1e-300 rounds to x*, zero width
    ],
)
def test_degenerate_delta_box_is_refused(
    client: TestClient, function_id: str, delta: float
) -> None:
    r = client.post("/v1/tables", json={"function_id": function_id, "delta": delta})
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["field"] == "delta"
    assert "too small" in body["detail"]
    assert client.get("/v1/tables").json()["total"] == 0


def test_smallest_sensible_delta_is_accepted(client: TestClient) -> None:
    r = client.post("/v1/tables", json={"function_id": "classic/sphere/d2", "delta": 1e-8})
    assert r.status_code == 200, r.text
    assert r.json()["summary"]["y_N"] > 0


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"function_id": "classic/sphere/d2", "delta": "0.5"}, "delta"),
        ({"function_id": "classic/sphere/d2", "delta": True}, "delta"),
        ({"function_id": "classic/sphere/d2", "log2n": "12"}, "log2n"),
        ({"function_id": "classic/sphere/d2", "log2n": 12.0}, "log2n"),
        ({"function_id": "classic/sphere/d2", "seed": True}, "seed"),
        ({"function_id": "classic/sphere/d2", "seed": 2**63}, "seed"),
        ({"function_id": 12}, "function_id"),
    ],
)
def test_table_requests_are_strict(client: TestClient, payload: dict, field: str) -> None:
    r = client.post("/v1/tables", json=payload)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field
    assert client.get("/v1/tables").json()["total"] == 0


def test_integer_delta_is_a_float(client: TestClient) -> None:
    r = client.post("/v1/tables", json={"function_id": "classic/sphere/d2", "delta": 1})
    assert r.status_code == 200, r.text
    assert r.json()["spec"]["region"]["delta"] == 1.0
