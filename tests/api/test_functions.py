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
        ([[0.0, 1.0], [1.0]], "points.1"),
        ([[0.0, 1.0, 2.0]], "points.0"),
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
            json_body = body["content"].get("application/json")
            if json_body is None:  # a file upload (text/plain, text/csv): each type its example
                for kind, media in body["content"].items():
                    assert media.get("example") or media.get("examples"), (method, path, kind)
                continue
            ref = json_body["schema"]["$ref"].rsplit("/", 1)[-1]
            assert schemas[ref].get("examples"), f"{method} {path}: request schema has no example"


HUGE = "9" * 5000  # beyond Python's 4300-digit limit for int(str)


@pytest.mark.parametrize(
    "path",
    [
        f"/v1/functions/classic/sphere/d{HUGE}",
        f"/v1/functions/bbob/f1/i{HUGE}/d2",
        f"/v1/functions/bbob/f1/i1/d{HUGE}",
        "/v1/functions/classic/" + "s" * 500 + "/d2",
    ],
)
def test_huge_ids_are_404_without_echoing_them(client: TestClient, path: str) -> None:
    for r in (client.get(path), client.post(path + "/evaluate", json={"points": [[0.0, 0.0]]})):
        assert r.status_code == 404, r.text[:300]
        assert r.headers["content-type"].startswith(PROBLEM)
        body = r.json()
        assert body["field"] == "function_id"
        assert len(body["detail"]) < 300
        assert len(body["instance"]) <= 200


def test_out_of_range_numbers_in_ids_are_422(client: TestClient) -> None:
    r = client.get("/v1/functions/bbob/f1/i99999999999/d2")
    assert r.status_code == 422
    assert r.json()["field"] == "function_id"


def test_unknown_suite_filter_is_422(client: TestClient) -> None:
    r = client.get("/v1/functions", params={"suite": "nosuch"})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == "suite"
    assert "bbob" in r.json()["detail"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"offset": 9223372036854775808}, "offset"),
        ({"offset": 10**9 + 1}, "offset"),
        ({"limit": 10**30}, "limit"),
        ({"dim": HUGE}, "dim"),
    ],
)
def test_paging_parameters_are_bounded(client: TestClient, params: dict, field: str) -> None:
    r = client.get("/v1/functions", params=params)
    assert r.status_code == 422
    assert r.json()["field"] == field


def test_explicit_dimension_lists_every_hosted_function_there(client: TestClient) -> None:
    d4 = client.get("/v1/functions", params={"dim": 4}).json()
    assert d4["total"] == 9
    assert {f["id"] for f in d4["items"]} >= {"classic/sphere/d4", "classic/rosenbrock/d4"}
    d1 = client.get("/v1/functions", params={"dim": 1}).json()
    assert "rosenbrock" not in {f["name"] for f in d1["items"]}
    assert d1["total"] == 8
    assert client.get("/v1/functions", params={"dim": 4, "suite": "bbob"}).json()["total"] == 0
    assert client.get("/v1/functions", params={"dim": 101}).json()["total"] == 0
    d10 = client.get("/v1/functions", params={"dim": 10, "limit": 5000}).json()
    suites = [f["suite"] for f in d10["items"]]
    assert suites.count("classic") == 9
    assert suites.count("bbob") == 24 * 15
    # the CEC suites at d = 10: every (function, dimension) pair of the organisers' vectors
    assert suites.count("cec2005") == 25 + 4  # and the noise-free ids of F4, F17, F24, F25
    assert d10["total"] == len(suites)
    # every listed id resolves
    for f in d4["items"]:
        assert client.get(f"/v1/functions/{f['id']}").status_code == 200


def test_overflowing_values_are_422_naming_the_point(client: TestClient) -> None:
    r = client.post(
        "/v1/functions/classic/rastrigin/d2/evaluate",
        json={"points": [[0.0, 0.0], [1e308, 1e308]]},
    )
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["field"] == "points"
    assert "points[1]" in body["detail"]
    assert body["index"] == 1


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"points": [[True, False]]}, "points.0.0"),
        ({"points": [[0, "1"]]}, "points.0.1"),
        ({"points": [[0.0, 0.0]], "extra": 1}, "extra"),
    ],
)
def test_evaluate_is_strict(client: TestClient, payload: dict, field: str) -> None:
    r = client.post("/v1/functions/classic/sphere/d2/evaluate", json=payload)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field


def test_evaluate_accepts_json_integers(client: TestClient) -> None:
    r = client.post("/v1/functions/classic/sphere/d2/evaluate", json={"points": [[1, 2]]})
    assert r.status_code == 200
    assert r.json()["values"] == [5.0]


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE"])
def test_evaluate_with_another_method_is_405(client: TestClient, method: str) -> None:
    r = client.request(method, "/v1/functions/classic/sphere/d2/evaluate")
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["status"] == 405
    assert r.json()["field"] == "method"
