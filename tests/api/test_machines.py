"""Equivalent runtime, the corrected sign test and the guided cross-machine comparison."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

SETUP = {
    "published": [{"instance": f"i{j}", "a": float(100 + j), "t1": 10.0 + j} for j in range(12)],
    "cpu1": "intel xeon E5440",
    "s2": 1921,
    "p_gamma": 0.1,
}


def _post(client: TestClient, path: str, body: dict[str, Any], status: int = 200) -> Any:
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    return r.json()


def test_equivalent_runtime_reference_value(client: TestClient) -> None:
    body = {"t1": 15.0, "s1": 1540, "s2": 1643, "p_gamma": 0.1}
    out = _post(client, "/v1/equivalent-runtime", body)
    assert out["t2"] == pytest.approx(10.101738, abs=1e-6)
    assert out["warnings"] == []
    assert "single-thread" in out["limits"]
    assert out["provenance"]["machines"] == {"s1": 1540.0, "s2": 1643.0}


def test_equivalent_runtime_by_cpu_name_batch_and_warnings(client: TestClient) -> None:
    body = {"t1": [10, 60], "cpu1": "Intel Xeon E5440", "cpu2": "intel core i5-470um"}
    out = _post(client, "/v1/equivalent-runtime", body)
    ratio = (3223.49 - 539) / (3223.49 - 1219)
    assert out["t2"] == pytest.approx([10 * ratio, 60 * ratio])
    assert out["gamma"] == 1.0
    assert out["cpu1"]["score"] == 1219.0
    assert out["warnings"] == []  # 539 is the calibration range's own edge
    out = _post(client, "/v1/equivalent-runtime", {"t1": 1.0, "s1": 400, "s2": 3000})
    assert len(out["warnings"]) == 2


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"t1": 1.0, "s1": 1000}, 422, "s2"),
        ({"t1": 1.0, "s1": 1000, "cpu1": "AMD FX-6300", "s2": 1000}, 422, "s1"),
        ({"t1": 1.0, "s1": 3223.49, "s2": 1000}, 422, "s1"),
        ({"t1": 1.0, "s1": 1000, "s2": 1000, "p_gamma": 0.0001}, 422, "p_gamma"),
        ({"t1": 1.0, "s1": 1000, "s2": 1000, "p_gamma": 0.6}, 422, "p_gamma"),
        ({"t1": [1.0, -2.0], "s1": 1000, "s2": 1000}, 422, "t1.1"),
        ({"t1": 1.0, "cpu1": "Pentium 4 HT", "s2": 1000}, 404, "cpu1"),
    ],
)
def test_equivalent_runtime_refuses_bad_input(
    client: TestClient, body: dict[str, Any], status: int, field: str
) -> None:
    r = client.post("/v1/equivalent-runtime", json=body)
    assert r.status_code == status, r.text
    assert r.json()["field"] == field


def test_corrected_sign_test_reference_values(client: TestClient) -> None:
    res = _post(client, "/v1/tests/sign-cross-machine", {"n": 20, "k": 3, "p_gamma": 0.1})
    result = res["result"]
    assert result["p_value_corrected"] == pytest.approx(0.043596000, abs=1e-9)
    assert result["p_value"] == pytest.approx(0.0012884, abs=1e-7)
    assert result["decision"] == "B is significantly better than A"
    text = str(res)
    assert "A is better" not in text
    ties = _post(
        client,
        "/v1/tests/sign-cross-machine",
        {"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0], "p_gamma": 0.1},
    )["result"]
    assert ties["p_value_corrected"] == 1.0
    assert ties["n_ties"] == 3
    assert ties["degenerate"] is True
    assert ties["decision"] == "no evidence that B is better"


def test_the_five_steps_as_one_resource(client: TestClient) -> None:
    r = client.post("/v1/cross-machine-comparisons", json=SETUP)
    assert r.status_code == 201, r.text
    made = r.json()
    assert r.headers["location"] == made["location"]
    assert made["status"] == "awaiting-results"
    assert len(made["runtimes"]) == 12
    gamma = made["gamma"]
    ratio = (3223.49 - 1921) / (3223.49 - 1219)
    assert made["runtimes"][0]["t2"] == pytest.approx(gamma * 10.0 * ratio)
    assert client.post("/v1/cross-machine-comparisons", json=SETUP).status_code == 200
    # B beats A on 10 instances, ties on 1, loses on 1
    results = [
        {"instance": f"i{j}", "b": float(100 + j) + (0.0 if j == 0 else 1.0 if j == 1 else -1.0)}
        for j in range(12)
    ]
    done = _post(client, made["location"] + "/results", {"results": results})
    assert done["status"] == "complete"
    test = done["test"]
    assert (test["n"], test["k"], test["n_ties"]) == (11, 1, 1)
    assert test["p_value_corrected"] >= test["p_value"]
    assert client.get(made["location"]).json() == done
    again = client.post(made["location"] + "/results", json={"results": results})
    assert again.status_code == 200
    results[2]["b"] = 0.0
    changed = client.post(made["location"] + "/results", json={"results": results})
    assert changed.status_code == 409
    assert changed.json()["field"] == "results"


def test_results_must_pair_with_the_published_table(client: TestClient) -> None:
    made = _post(client, "/v1/cross-machine-comparisons", SETUP, status=201)
    url = made["location"] + "/results"
    for results, field in [
        ([{"instance": "i0", "b": 1.0}], "results"),
        ([{"instance": "nope", "b": 1.0}], "results.0.instance"),
        ([{"instance": "i0", "b": 1.0}, {"instance": "i0", "b": 2.0}], "results.1.instance"),
    ]:
        r = client.post(url, json={"results": results})
        assert r.status_code == 422
        assert r.json()["field"] == field
    assert client.get("/v1/cross-machine-comparisons/xnope").status_code == 404
    dup = SETUP | {"published": SETUP["published"] + [SETUP["published"][0]]}
    r = client.post("/v1/cross-machine-comparisons", json=dup)
    assert r.status_code == 422
    assert r.json()["field"] == "published.12.instance"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"t1": [1.0, "x"], "s1": 1000, "s2": 1000}, "t1.1"),
        ({"t1": "x", "s1": 1000, "s2": 1000}, "t1"),
        ({"t1": [1.0, 1e308], "s1": 3223.48, "s2": 100}, "t1.1"),
        ({"t1": 1e-320, "s1": 100, "s2": 3223.48}, "t1"),
    ],
)
def test_runtime_errors_name_the_runtime(
    client: TestClient, body: dict[str, Any], field: str
) -> None:
    r = client.post("/v1/equivalent-runtime", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field
    assert "np.float64" not in r.json()["detail"]


def test_a_registered_cpu_the_model_cannot_use_is_named(client: TestClient) -> None:
    fast = {"name": "Fast CPU 9000", "score": 4000, "source": "test", "source_date": "2025"}
    made = client.post("/v1/cpus", json=fast).json()
    assert made["warnings"]
    r = client.post("/v1/equivalent-runtime", json={"t1": 1.0, "cpu1": "fast cpu 9000", "s2": 900})
    assert r.status_code == 422
    assert r.json()["field"] == "cpu1"


def test_the_same_scores_are_the_same_comparison(client: TestClient) -> None:
    by_name = _post(client, "/v1/cross-machine-comparisons", SETUP, status=201)
    by_score = {k: v for k, v in SETUP.items() if k != "cpu1"} | {"s1": 1219}
    again = client.post("/v1/cross-machine-comparisons", json=by_score)
    assert again.status_code == 200
    assert again.json()["id"] == by_name["id"]


def test_huge_n_is_fast_and_linear(client: TestClient) -> None:
    out = _post(
        client, "/v1/tests/sign-cross-machine", {"n": 1_000_000, "k": 490_000, "p_gamma": 0.1}
    )
    assert out["result"]["p_value_corrected"] >= out["result"]["p_value"]
