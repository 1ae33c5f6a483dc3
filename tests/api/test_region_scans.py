"""δ-region scans over HTTP (SPEC §3.5): 202 + Location, progress, the answer checked against
POST /v1/absolute-ranks on each box table, stored bytes, failures and errors."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.domain.delta_regions import geometric_mean_difference
from app.domain.functions import get_function
from app.main import create_app
from app.schemas.region_scans import RegionScanRead
from app.services import region_scans as service
from app.services import table_build
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PROBLEM = "application/problem+json"
FN = "classic/rastrigin/d2"
VALUES = [
    {"algorithm": "DE", "value": 0.01},
    {"algorithm": "PSO", "value": 0.8},
    {"algorithm": "CMA-ES", "value": 1e-6},
    {"algorithm": "random", "value": 4.5},
    {"algorithm": "bad", "value": 30.0},
]
SCAN = {"function_id": FN, "values": VALUES, "deltas": [0.05, 0.5, 5.12], "log2n": 10}


def _post(client: TestClient, body: dict[str, Any], **kw: Any) -> Any:
    return client.post("/v1/region-scans", json=body, **kw)


def _ranks_on(client: TestClient, table_id: str, values: list[float], **kw: Any) -> dict:
    r = client.post("/v1/absolute-ranks", json={"table_id": table_id, "values": values, **kw})
    assert r.status_code == 200, r.text
    return r.json()


def _check_against_absolute_ranks(client: TestClient, scan: dict, **rank_options: Any) -> None:
    """Every δ's ranks equal POST /v1/absolute-ranks on its table; e and the choice follow."""
    values = [a["value"] for a in scan["algorithms"]]
    log10_es = []
    for entry in scan["deltas"]:
        ranks = _ranks_on(client, entry["table_id"], values, **rank_options)
        assert ranks["source"]["relative_to"] == "box"
        assert ranks["source"]["spec"]["region"] == entry["region"]
        assert [r["log10_v"] for r in entry["ranks"]] == [x["log10_v"] for x in ranks["results"]]
        assert [r["method"] for r in entry["ranks"]] == [x["method"] for x in ranks["results"]]
        log10_v = [-math.inf if x["log10_v"] is None else x["log10_v"] for x in ranks["results"]]
        spread = geometric_mean_difference(log10_v)
        assert entry["log10_e"] == spread.log10_e
        assert entry["distinct_ranks"] == spread.k == len(entry["distinct_log10_v"])
        log10_es.append(spread.log10_e)
    best = max(x for x in log10_es if x is not None)
    chosen = scan["chosen"]
    assert chosen["log10_e"] == best
    assert chosen["delta"] == max(
        e["delta"] for e, x in zip(scan["deltas"], log10_es, strict=True) if x == best
    )
    assert scan["deltas"][chosen["index"]]["delta"] == chosen["delta"]


# --------------------------------------------------------------------------- the job


def test_scan_is_a_job_202_then_ready_and_stored(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    first = _post(client, SCAN)
    assert first.status_code == 202, first.text
    body = first.json()
    location = first.headers["location"]
    assert location == body["location"] == f"/v1/region-scans/{body['id']}"
    assert body["id"].startswith("r")
    assert len(body["id"]) == 24
    assert body["status"] == "building"
    assert body["progress"] == {
        "tables": {"ready": 0, "total": 3},
        "chunks": {"done": 0, "total": 3, "fraction": 0.0},
    }
    assert body["errors"] == []
    assert body["chosen"] is None
    assert body["follow_up"] is None
    assert [e["delta"] for e in body["deltas"]] == [0.05, 0.5, 5.12]
    assert [e["volume_fraction"] for e in body["deltas"]] == pytest.approx(
        [(0.1 / 10.24) ** 2, (1.0 / 10.24) ** 2, 1.0], rel=1e-12
    )
    assert all(e["ranks"] is None and e["status"] == "building" for e in body["deltas"])
    assert any("different scales" in n for n in body["notes"])
    RegionScanRead.model_validate(body)
    # the same request again is the same scan (still building)
    again = _post(client, SCAN)
    assert again.status_code == 202
    assert again.headers["location"] == location
    # a worker builds the tables
    dispatcher.hold = False
    for table_id, index in list(dispatcher.chunks):
        dispatcher.enqueue_chunk(table_id, index)
    ready = client.get(location)
    assert ready.status_code == 200
    scan = ready.json()
    RegionScanRead.model_validate(scan)
    assert scan["status"] == "ready"
    assert scan["progress"]["tables"] == {"ready": 3, "total": 3}
    assert scan["progress"]["chunks"]["fraction"] == 1.0
    assert scan["eta_seconds"] is None
    _check_against_absolute_ranks(client, scan)
    # stored: later reads and identical posts give the same bytes
    assert client.get(location).content == ready.content
    repeat = _post(client, SCAN)
    assert repeat.status_code == 200
    assert repeat.content == ready.content
    assert scan["provenance"]["request_sha256"].startswith(scan["id"][1:])
    assert [t["table_id"] for t in scan["provenance"]["tables"]] == [
        e["table_id"] for e in scan["deltas"]
    ]


def test_follow_up_is_a_tables_request_with_its_future_id(client: TestClient) -> None:
    r = _post(client, SCAN)
    assert r.status_code == 200, r.text  # the inline worker built everything
    scan = r.json()
    follow = scan["follow_up"]
    request = follow["table_request"]
    assert set(request) == {"function_id", "delta", "log2n", "seed"}
    assert request["delta"] == scan["chosen"]["delta"]
    # default 20, capped by this deployment's table_max_log2n = 16, and said so
    assert request["log2n"] == 16
    assert follow["log2n_capped"] is True
    assert any("capped at 16" in n for n in scan["notes"])
    table = client.post("/v1/tables", json=request)
    assert table.status_code in (200, 202)
    assert table.json()["id"] == follow["table_id"]
    assert table.headers["location"] == follow["location"]


def test_identical_requests_share_one_scan(client: TestClient) -> None:
    a = _post(client, SCAN).json()
    as_mapping = {
        **SCAN,
        "values": {v["algorithm"]: v["value"] for v in VALUES},
        "deltas": [5.12, 0.05, 0.5],  # the grid is a set: any order
    }
    b = _post(client, as_mapping)
    assert b.status_code == 200
    assert b.json()["id"] == a["id"]
    other_seed = _post(client, {**SCAN, "seed": 1}).json()
    assert other_seed["id"] != a["id"]
    assert other_seed["deltas"][0]["table_id"] != a["deltas"][0]["table_id"]


def test_budget_ranks_best_of_c(client: TestClient) -> None:
    scan = _post(client, {**SCAN, "budget": 100}).json()
    assert scan["status"] == "ready"
    assert scan["budget"] == 100
    assert "c = 100" in scan["rank_of"]
    _check_against_absolute_ranks(client, scan, budget=100)
    plain = _post(client, SCAN).json()
    assert plain["rank_of"].startswith("v1")
    assert scan["deltas"][0]["ranks"][0]["log10_v"] > plain["deltas"][0]["ranks"][0]["log10_v"]


def test_errors_are_ranked_as_gaps(client: TestClient) -> None:
    """bbob/f1/i1/d2 (f* = 79.48, ulp 1.4e-14): 1e-16 and 3e-16 are both f* as values of f, but
    keep distinct ranks as errors, equal to POST /v1/absolute-ranks with values_are='error'."""
    fn = "bbob/f1/i1/d2"
    f_opt = get_function(fn).f_opt
    assert f_opt is not None
    assert f_opt + 1e-16 == f_opt + 3e-16 == f_opt
    errors = [1e-16, 3e-16, 1e-4, 0.5, 3.0]
    by_error = _post(
        client,
        {
            "function_id": fn,
            "values": {"D": 1e-16, "E": 3e-16, "A": 1e-4, "B": 0.5, "C": 3.0},
            "values_are": "error",
            "deltas": [0.5, 2.0],
            "log2n": 10,
        },
    ).json()
    assert by_error["status"] == "ready"
    for entry in by_error["deltas"]:
        ranks = _ranks_on(client, entry["table_id"], errors, values_are="error")
        assert [r["log10_v"] for r in entry["ranks"]] == [x["log10_v"] for x in ranks["results"]]
        low = [r["log10_v"] for r in entry["ranks"][:2]]
        assert None not in low
        assert low[0] < low[1]
    assert [a["value"] for a in by_error["algorithms"]] == errors  # echoed as given


def test_default_grid_is_geometric_over_the_half_width(client: TestClient) -> None:
    r = _post(
        client, {"function_id": "classic/sphere/d2", "values": {"A": 1e-3, "B": 1.0}, "log2n": 10}
    )
    assert r.status_code == 200, r.text
    scan = r.json()
    deltas = [e["delta"] for e in scan["deltas"]]
    assert len(deltas) == 8
    assert deltas[0] == pytest.approx(5.12e-3)
    assert deltas[-1] == pytest.approx(5.12)
    np.testing.assert_allclose(np.diff(np.log(deltas)), math.log(1000) / 7, rtol=1e-12)
    assert scan["grid"]["kind"] == "default"
    assert any("default δ grid" in n for n in scan["notes"])


def test_equal_values_are_not_computable(client: TestClient) -> None:
    r = _post(client, {**SCAN, "values": {"A": 2.0, "B": 2.0}})
    assert r.status_code == 200, r.text
    scan = r.json()
    for entry in scan["deltas"]:
        assert entry["computable"] is False
        assert entry["e"] is None
        assert entry["log10_e"] is None
        assert "fewer than 2 distinct" in entry["reason"]
    assert scan["chosen"] is None
    assert scan["follow_up"] is None
    assert any("none can be chosen" in w for w in scan["warnings"])


def test_merged_ranks_are_flagged_and_a_separating_choice_offered(client: TestClient) -> None:
    # the tiny box holds only CMA-ES's value: the others all sit above its largest sample
    scan = _post(client, {**SCAN, "deltas": [0.002, 5.12]}).json()
    tiny, wide = scan["deltas"]
    assert tiny["distinct_ranks"] < len(VALUES) == wide["distinct_ranks"]
    assert [r["method"] for r in tiny["ranks"]].count("upper-tail") == 4
    assert tiny["distinct_v"][-1] == tiny["ranks"][0]["v"] == 1024 / 1025  # N/(N+1)
    assert scan["chosen"]["delta"] == 0.002  # one big gap beats four small ones (Eq. 29)
    assert any("chosen_separating" in w for w in scan["warnings"])
    assert scan["chosen_separating"]["delta"] == 5.12


def test_failed_table_fails_the_scan_and_a_repost_retries(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("disk full")

    monkeypatch.setattr(table_build, "compute_chunk", broken)
    r = _post(client, SCAN)
    assert r.status_code == 202, r.text
    scan = r.json()
    assert scan["status"] == "failed"
    assert len(scan["errors"]) == 3
    assert "disk full" in scan["errors"][0]["error"]
    assert any("post the same request again" in n for n in scan["notes"])
    assert client.get(scan["location"]).json()["status"] == "failed"
    monkeypatch.undo()
    retried = _post(client, SCAN)
    assert retried.status_code == 200, retried.text
    assert retried.json()["status"] == "ready"
    assert retried.json()["id"] == scan["id"]
    assert retried.json()["errors"] == []


def test_progress_sums_chunks(client: TestClient, dispatcher: InlineDispatcher) -> None:
    dispatcher.hold = True
    scan = _post(client, {**SCAN, "log2n": 12}).json()  # 4 chunks of 2^10 per table
    assert scan["progress"]["chunks"]["total"] == 12
    dispatcher.hold = False
    for table_id, index in dispatcher.chunks[:2]:
        dispatcher.enqueue_chunk(table_id, index)
    now = client.get(scan["location"]).json()
    assert now["status"] == "building"
    assert now["progress"]["chunks"]["done"] == 2
    assert now["progress"]["tables"]["ready"] == 0
    assert now["eta_seconds"] is None or now["eta_seconds"] >= 0
    assert now["deltas"][0]["progress"]["done"] == 2


# --------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("change", "status", "field"),
    [
        ({"function_id": "bbob/f99/i1/d2"}, 404, "function_id"),
        ({"values": []}, 422, "values"),
        ({"values": {}}, 422, "values"),
        ({"values": [{"algorithm": "A", "value": "1.0"}]}, 422, "values.0.value"),
        ({"values": {"A": 1.0, "B": True}}, 422, "values.B"),
        (
            {"values": [{"algorithm": "A", "value": 1.0}, {"algorithm": "A", "value": 2.0}]},
            422,
            "values.1.algorithm",
        ),
        ({"deltas": []}, 422, "deltas"),
        ({"deltas": [0.0, 1.0]}, 422, "deltas.0"),
        ({"deltas": [0.5, -1.0]}, 422, "deltas.1"),
        ({"deltas": [0.5, 0.5]}, 422, "deltas.1"),
        ({"deltas": [0.5, 1e-12]}, 422, "deltas.1"),  # the box would be degenerate
        ({"deltas": [0.01 * (i + 1) for i in range(33)]}, 422, "deltas"),
        ({"deltas": {"min": 0.01, "max": 1.0, "count": 33}}, 422, "deltas.count"),
        ({"deltas": {"min": 1.0, "max": 0.5, "count": 3}}, 422, "deltas.max"),
        ({"deltas": {"min": 1e-13, "max": 1.0, "count": 3}}, 422, "deltas"),
        ({"log2n": 17}, 422, "log2n"),
        ({"log2n": 3}, 422, "log2n"),
        ({"follow_up_log2n": 17}, 422, "follow_up_log2n"),
        ({"seed": -1}, 422, "seed"),
        ({"budget": 0}, 422, "budget"),
        ({"values_are": "rank"}, 422, "values_are"),
        ({"tail": "exp"}, 422, "tail"),  # tail is auto, power, linear or paper
    ],
)
def test_bad_requests_name_the_field(
    client: TestClient, change: dict, status: int, field: str
) -> None:
    r = _post(client, {**SCAN, **change})
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == field
    assert client.get("/v1/tables").json()["total"] == 0  # nothing queued


def test_non_finite_values_are_refused(client: TestClient) -> None:
    raw = json.dumps({**SCAN, "values": {"A": 1.0, "B": math.nan}})
    r = client.post("/v1/region-scans", content=raw, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "values.B"


def test_function_without_minimiser_is_refused(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    fn = get_function(FN)
    no_x = dataclasses.replace(fn, x_opt=None)
    monkeypatch.setattr(service, "find_function", lambda _id: no_x)
    r = _post(client, SCAN)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "function_id"
    assert "x*" in r.json()["detail"]


def test_unknown_scan_is_404(client: TestClient) -> None:
    for scan_id in ("r0000", "r" + "0" * 100):
        r = client.get(f"/v1/region-scans/{scan_id}")
        assert r.status_code == 404
        assert r.headers["content-type"].startswith(PROBLEM)
        assert r.json()["field"] == "scan_id"


def test_api_key_rule_is_that_of_post_tables(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, api_keys=["s3cret"])
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        denied = _post(c, SCAN)
        assert denied.status_code == 401
        assert denied.json()["field"] == "X-API-Key"
        assert _post(c, SCAN, headers={"X-API-Key": "nope"}).status_code == 401
        assert c.get("/v1/tables").json()["total"] == 0
        ok = _post(c, SCAN, headers={"X-API-Key": "s3cret"})
        assert ok.status_code == 200, ok.text
        assert c.get(ok.headers["location"]).status_code == 200  # reads stay anonymous


def test_uncapped_follow_up_and_the_delta_limit_setting(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, table_max_log2n=20, max_region_scan_deltas=2)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        too_many = _post(c, SCAN)
        assert too_many.status_code == 422
        assert too_many.json()["field"] == "deltas"
        assert "at most 2" in too_many.json()["detail"]
        scan = _post(c, {**SCAN, "deltas": [0.5, 5.12]}).json()
        assert scan["follow_up"]["table_request"]["log2n"] == 20
        assert scan["follow_up"]["log2n_capped"] is False
        assert not any("capped" in n for n in scan["notes"])
        # the default grid shrinks to the limit
        default = _post(c, {"function_id": FN, "values": {"A": 0.1, "B": 1.0}, "log2n": 10})
        assert [e["delta"] for e in default.json()["deltas"]] == pytest.approx([0.00512, 5.12])


def test_openapi_documents_the_endpoints(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    post = spec["paths"]["/v1/region-scans"]["post"]
    assert post["description"]
    assert {"202", "401", "404", "422"} <= set(post["responses"])
    schema = spec["components"]["schemas"]["RegionScanCreate"]
    assert schema["examples"][0]["function_id"] == FN
    assert spec["paths"]["/v1/region-scans/{scan_id}"]["get"]["description"]
