"""Absolute ranks on nested regions (SPEC §3.4): ``regions`` auto | nested | domain on
``POST /v1/absolute-ranks`` and ``POST /v1/comparisons``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from tests.api.conftest import InlineDispatcher, api_settings

FN = "classic/ellipsoid/d2"  # x* known, no atom, no analytic form: ladders apply
DEEP = 1e-9  # an error far below any of the 2^12 samples of the domain table


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return api_settings(tmp_path, nested_levels=6, nested_factor=4.0)


def _ranks(client: TestClient, status: int = 200, **body: Any) -> dict[str, Any]:
    payload = {"function_id": FN, "values": [DEEP, 1e-3, 1.0], "values_are": "error"} | body
    r = client.post("/v1/absolute-ranks", json=payload)
    assert r.status_code == status, r.text
    return r.json()


def test_domain_uses_the_domain_table_and_says_the_ladder_would_do_better(
    client: TestClient,
) -> None:
    out = _ranks(client, regions="domain")
    assert out["source"]["kind"] == "table"
    assert out["results"][0]["method"].startswith("tail-")
    assert any("nested-region ladder" in w for w in out["warnings"])
    assert not any(r.get("provisional") for r in out["results"])


def test_nested_queues_the_ladder_then_ranks_deep_values_without_extrapolation(
    client: TestClient,
) -> None:
    out = _ranks(client, regions="nested")  # the inline dispatcher builds it in the request
    assert out["source"]["kind"] == "nested"
    assert out["source"]["relative_to"] == "domain"
    levels = out["source"]["ladder"]["levels"]
    assert len(levels) >= 2
    assert out["source"]["table_ids"] == [lv["id"] for lv in levels]
    deep = out["results"][0]
    assert deep["method"].startswith("nested-")
    assert deep["log10_v"] is not None
    # the 2-D ellipsoid: v1(f* + s) = π s / (sqrt(w_1 w_2) · area(Ω)) while unclipped
    assert all(r["interval"]["v_lo"] <= r["v"] <= r["interval"]["v_hi"] for r in out["results"])
    assert [r["log10_v"] for r in out["results"]] == sorted(r["log10_v"] for r in out["results"])
    # once the ladder is ready, auto uses it: the same ranks
    auto = _ranks(client)
    assert auto["source"]["kind"] == "nested"
    assert auto["results"] == out["results"]
    assert not any("nested-region ladder" in w for w in auto["warnings"])
    # identical requests, identical bytes
    again = client.post(
        "/v1/absolute-ranks",
        json={"function_id": FN, "values": [DEEP, 1e-3, 1.0], "values_are": "error"},
    )
    assert again.json() == auto


def test_nested_ranks_agree_with_the_exact_ellipsoid_area(client: TestClient) -> None:
    import math

    import numpy as np

    from app.domain.functions import get_function

    fn = get_function(FN)
    w = fn.evaluate(np.eye(2))
    area = float(np.prod(fn.upper - fn.lower))
    s = np.array([1e-9, 1e-7, 1e-5])
    out = _ranks(client, regions="nested", values=s.tolist())
    exact = np.log10(math.pi * s / (math.sqrt(w[0] * w[1]) * area))
    got = np.array([r["log10_v"] for r in out["results"]])
    np.testing.assert_allclose(got, exact, atol=0.15)


def test_nested_while_building_is_409_naming_regions(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    _ranks(client, regions="domain")  # the domain table exists
    dispatcher.hold = True
    r = client.post(
        "/v1/absolute-ranks",
        json={"function_id": FN, "values": [DEEP], "values_are": "error", "regions": "nested"},
    )
    assert r.status_code == 409, r.text
    problem = r.json()
    assert problem["field"] == "regions"
    assert r.headers["content-type"].startswith("application/problem+json")
    # auto does not wait for it: the domain table, deep values provisional
    auto = _ranks(client)
    assert auto["source"]["kind"] == "table"
    assert auto["results"][0]["provisional"] is True


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"table_id": "t" + "0" * 23, "function_id": None, "regions": "nested"}, 422, "regions"),
        ({"function_id": "classic/step/d2", "regions": "nested"}, 422, "regions"),
        ({"regions": "everywhere"}, 422, "regions"),
    ],
)
def test_bad_regions(client: TestClient, body: dict[str, Any], status: int, field: str) -> None:
    out = _ranks(client, status=status, **body)
    assert out["field"] == field, out


def test_comparison_with_nested_regions(client: TestClient) -> None:
    rows = [
        {"algorithm": alg, "problem": prob, "run": run, "value": value * (1 + run)}
        for prob in (FN, "classic/rastrigin/d2")
        for alg, value in (("A", 1e-8), ("B", 1e-4), ("C", 0.5))
        for run in range(3)
    ]
    body = {"results": rows, "reduction": "mean", "values_are": "error", "regions": "nested"}
    r = client.post("/v1/comparisons", json=body)
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["status"] == "complete"
    assert {t["kind"] for t in out["absolute"]["tables"].values()} == {"nested"}
    methods = {m for row in out["absolute"]["method"] for m in row}
    assert methods <= {"mean-convolution", "mean-power", "mean-exact"}
