"""Function registry over HTTP."""

from __future__ import annotations

import cocoex
import numpy as np
import pytest
from fastapi.testclient import TestClient

PROBLEM = "application/problem+json"


def test_list_filters_by_suite_and_dimension(client: TestClient) -> None:
    r = client.get("/v1/functions", params={"suite": "bbob", "dim": 10, "limit": 5000})
    assert r.status_code == 200
    body = r.json()
    assert body["total"] == 24 * 15
    assert {f["dim"] for f in body["items"]} == {10}
    assert {f["suite"] for f in body["items"]} == {"bbob"}
    classic = client.get("/v1/functions", params={"suite": "classic", "dim": 5}).json()
    names = {f["name"] for f in classic["items"]}
    assert {"sphere", "ellipsoid", "rastrigin", "rosenbrock", "ackley", "griewank"} <= names
    assert {"schwefel226", "step", "pyramid"} <= names


def test_get_function_metadata(client: TestClient) -> None:
    r = client.get("/v1/functions/bbob/f15/i1/d10")
    assert r.status_code == 200
    f = r.json()
    p = cocoex.BareProblem("bbob", 15, 10, 1)
    assert f["f_opt"] == p.best_value()
    assert f["x_opt"] == list(np.asarray(p.best_parameter(), dtype=float))
    assert f["lower"] == [-5.0] * 10
    assert f["local_structure"]["beta"] == 5.0


def test_evaluate_matches_cocoex(client: TestClient) -> None:
    rng = np.random.default_rng(3)
    X = rng.uniform(-5, 5, size=(7, 10))
    r = client.post("/v1/functions/bbob/f21/i3/d10/evaluate", json={"points": X.tolist()})
    assert r.status_code == 200
    expected = cocoex.BareProblem("bbob", 21, 10, 3)(X)
    np.testing.assert_array_equal(np.asarray(r.json()["values"]), expected)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/v1/functions/bbob/f25/i1/d10", 404),
        ("/v1/functions/nosuite/x/d2", 404),
        ("/v1/functions/classic/sphere/d0", 422),
        ("/v1/functions/bbob/f1/i1/d7", 422),
    ],
)
def test_unknown_or_bad_ids_are_problems(client: TestClient, path: str, status: int) -> None:
    r = client.get(path)
    assert r.status_code == status
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["status"] == status
    assert body["detail"]
    assert body["instance"] == path


@pytest.mark.parametrize(
    ("points", "field"),
    [
        ([], "points"),
        ([[0.0, 1.0], [1.0]], "points"),
        ([[0.0, 1.0, 2.0]], "points"),
        ([[1.0, "NaN"]], "points.0.1"),
        ([[1.0, "Infinity"]], "points.0.1"),
    ],
)
def test_evaluate_rejects_bad_points(client: TestClient, points: list, field: str) -> None:
    r = client.post("/v1/functions/classic/sphere/d2/evaluate", json={"points": points})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == field


def test_evaluate_over_limit(client: TestClient) -> None:
    r = client.post("/v1/functions/classic/sphere/d2/evaluate", json={"points": [[0.0, 0.0]] * 101})
    assert r.status_code == 422
    assert r.json()["field"] == "points"
    assert "100" in r.json()["detail"]


def test_nan_literal_in_raw_json_is_rejected(client: TestClient) -> None:
    r = client.post(
        "/v1/functions/classic/sphere/d2/evaluate",
        content=b'{"points": [[NaN, 1.0]]}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422
    assert r.headers["content-type"].startswith(PROBLEM)


def test_oversized_body_is_413(client: TestClient) -> None:
    body = b'{"points": [' + b",".join([b"[0.0, 0.0]"] * 40000) + b"]}"
    r = client.post(
        "/v1/functions/classic/sphere/d2/evaluate",
        content=body,
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413
    assert r.json()["field"] == "body"


def test_healthz(client: TestClient) -> None:
    r = client.get("/healthz")
    assert r.status_code == 200
    assert r.json()["status"] == "ok"


def test_openapi_documents_every_endpoint_with_an_example(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            assert op.get("description"), (method, path)
            body = op.get("requestBody")
            if body is None:
                continue
            ref = body["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
            assert schemas[ref].get("examples"), f"{method} {path}: request schema has no example"
