"""Edge cases found by a fresh-user pass over issue 6: box atoms, work limits, field names."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from tests.api.conftest import api_settings


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return api_settings(tmp_path, max_numerical_aggregates=5)


def test_a_box_inside_a_plateau_counts_its_own_samples_not_the_domains_atom(
    client: TestClient,
) -> None:
    made = client.post(
        "/v1/tables", json={"function_id": "classic/step/d2", "delta": 0.1, "log2n": 10}
    )
    assert made.status_code in (200, 202), made.text
    out = client.post(
        "/v1/absolute-ranks", json={"table_id": made.json()["id"], "values": [0.0]}
    ).json()
    # every point of [-0.1, 0.1]^2 has f = 0: v(0) relative to the box is N/(N+1), not 200^-2
    assert out["results"][0]["v"] == pytest.approx(1024 / 1025)


def test_comparisons_refuse_more_numerical_cells_than_the_setting(client: TestClient) -> None:
    rows = [
        {"algorithm": f"A{j}", "problem": p, "run": 0, "value": 0.1 * (j + 1)}
        for p in ("classic/rastrigin/d2", "classic/ellipsoid/d2")
        for j in range(3)
    ]
    r = client.post(
        "/v1/comparisons",
        json={"results": rows, "reduction": "mean", "value_runs": 4, "values_are": "error"},
    )
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "value_runs"
    assert "at most 5" in r.json()["detail"]
    # best-of over the runs is an order statistic: no limit
    r = client.post(
        "/v1/comparisons",
        json={"results": rows, "reduction": "best", "value_runs": 4, "values_are": "error"},
    )
    assert r.status_code == 201, r.text


def test_a_comparison_names_value_runs_when_the_mean_has_too_many_runs(
    client: TestClient,
) -> None:
    rows = [
        {"algorithm": a, "problem": "classic/rastrigin/d2", "run": 0, "value": v}
        for a, v in (("A", 0.5), ("B", 1.0))
    ] + [
        {"algorithm": a, "problem": "classic/ellipsoid/d2", "run": 0, "value": v}
        for a, v in (("A", 1.0), ("B", 0.5))
    ]
    r = client.post(
        "/v1/comparisons",
        json={"results": rows, "reduction": "mean", "value_runs": 1000, "values_are": "f"},
    )
    assert r.status_code == 409, r.text
    assert r.json()["field"] == "value_runs"


def test_repeated_query_options_are_refused(client: TestClient) -> None:
    csv = "algorithm,problem,run,value\nA,p1,0,1\nB,p1,0,2\nA,p2,0,2\nB,p2,0,1\n"
    r = client.post(
        "/v1/comparisons?reduction=mean&reduction=best",
        content=csv,
        headers={"content-type": "text/csv"},
    )
    assert r.status_code == 422
    assert r.json()["field"] == "reduction"


def test_runs_lists_are_limited_like_runs(client: TestClient) -> None:
    r = client.post(
        "/v1/absolute-ranks",
        json={
            "function_id": "classic/sphere/d2",
            "runs_by_algorithm": {"A": [1.0] * 10_001},
            "aggregate": "best",
        },
    )
    assert r.status_code == 422
    assert r.json()["field"].startswith("runs_by_algorithm")


def _rank(client: TestClient, body: dict) -> dict:
    r = client.post("/v1/absolute-ranks", json={"function_id": "cec2017/f1/d2"} | body)
    assert r.status_code == 200, r.text
    return r.json()


def test_errors_below_the_resolution_of_f_star_keep_their_digits(client: TestClient) -> None:
    # CEC 2017 F1: f* = 100, ulp(100) = 1.4e-14; errors are ranked as the gaps themselves
    out = _rank(client, {"values": [1e-15, 1e-3], "values_are": "error", "regions": "domain"})
    assert not any("significant digits" in w for w in out["warnings"]), out["warnings"]
    assert not any("below f*" in w for w in out["warnings"]), out["warnings"]
    low = out["results"][0]["log10_v"]
    assert low is not None  # not f* itself: the error 1e-15 keeps its digits
    assert low < out["results"][1]["log10_v"]


def test_f_values_within_ulps_of_f_star_are_flagged(client: TestClient) -> None:
    ulp = 2.0**-46  # ulp(100)
    near, far = 100.0 + 3 * ulp, 100.0 + 1e-3
    out = _rank(client, {"values": [far, near], "regions": "domain"})
    flagged = [w for w in out["warnings"] if "significant digits" in w]
    assert len(flagged) == 1, out["warnings"]
    assert flagged[0].startswith(f"1 value(s) (first: {near!r})")  # 1e-3 keeps 10 digits


def test_negative_errors_below_the_resolution_of_f_star_are_below_the_minimum(
    client: TestClient,
) -> None:
    # f* + (-1e-20) == f*: the error itself says it lies below the minimum
    out = _rank(client, {"values": [-1e-20, 1e-3], "values_are": "error", "regions": "domain"})
    assert any("1 value(s) lie below f*" in w for w in out["warnings"]), out["warnings"]
    runs = {"A": [1e-3, -1e-20], "B": [1e-2, 1e-3]}
    body = {"runs_by_algorithm": runs, "aggregate": "best", "values_are": "error"}
    out = _rank(client, body | {"regions": "domain"})
    assert any("1 run(s) of runs_by_algorithm.A lie below f*" in w for w in out["warnings"])
