"""Region scans with a ``tail`` option (issue 13 item 5): ``tail='paper'`` is Eq. 28 as
published (Jing & Liu, Table V), checked against ``exp(t − y_1)/(N+1)`` and
``1 − exp(−ln(N+1)·t/y_N)`` computed here from each box table's stored ``y_1``, ``y_N`` (GET
/v1/tables/{id}), with Eq. 29's ``e`` recomputed here from those ``v``. Requests that leave
``tail`` out keep the scan id the code gave before the option existed (pinned under 25885de,
the branch point of this work, and equal under main 76b65cc).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.schemas.region_scans import RegionScanCreate, RegionScanRead
from app.services import region_scans as service

FN = "classic/rastrigin/d2"  # f* = 0, max ~ 80.7 on [-5.12, 5.12]^2
# below f* (A, B), below every box's lowest sample (C), inside the samples (D), above every
# box's largest sample (E)
VALUES = {"A": -2.0, "B": -0.5, "C": 1e-9, "D": 2.0, "E": 100.0}
SCAN = {"function_id": FN, "values": VALUES, "deltas": [0.2, 0.5, 5.12], "log2n": 10}
PINNED_DEFAULT_ID = "r0a458aaef5f6d7d242b6f6d"
"""The id of ``SCAN_PIN`` with ``Settings(database_url="sqlite://")`` under 25885de."""
SCAN_PIN = {
    "function_id": FN,
    "values": {"DE": 0.01, "PSO": 0.8, "CMA-ES": 1e-6, "random": 4.5, "bad": 30.0},
    "deltas": [0.05, 0.5, 5.12],
    "log2n": 10,
}


def _post(client: TestClient, body: dict[str, Any], status: int = 200) -> dict[str, Any]:
    r = client.post("/v1/region-scans", json=body)
    assert r.status_code == status, r.text
    return r.json()


def _eq29_log10_e(v: list[float]) -> float:
    """Eq. 29 written out: geometric mean of the gaps of the ordered distinct ranks."""
    distinct = sorted(set(v))
    gaps = [b - a for a, b in itertools.pairwise(distinct)]
    return sum(math.log10(g) for g in gaps) / len(gaps)


def test_paper_tail_is_eq28_as_published_on_every_box(client: TestClient) -> None:
    scan = _post(client, {**SCAN, "tail": "paper"})
    RegionScanRead.model_validate(scan)
    assert scan["status"] == "ready"
    assert scan["tail"] == "paper"
    assert any("Table V" in n for n in scan["notes"])
    assert any("tail='paper'" in w and "true v is 0" in w for w in scan["warnings"])
    names = list(VALUES)
    for entry in scan["deltas"]:
        table = client.get(f"/v1/tables/{entry['table_id']}").json()
        y_1, y_n, n = table["summary"]["y_1"], table["summary"]["y_N"], table["n"]
        assert n == 1024
        assert VALUES["C"] < y_1 < VALUES["D"] < y_n < VALUES["E"]
        ranks = {r["algorithm"]: r for r in entry["ranks"]}
        assert [r["algorithm"] for r in entry["ranks"]] == names
        v: dict[str, float] = {}
        for name in ("A", "B", "C"):
            v[name] = math.exp(VALUES[name] - y_1) / (n + 1)
            assert ranks[name]["method"] == "tail-paper"
            assert ranks[name]["v"] == pytest.approx(v[name], rel=1e-12)
        v["E"] = 1.0 - math.exp(-math.log(n + 1) * VALUES["E"] / y_n)
        assert ranks["E"]["method"] == "upper-tail"
        assert ranks["E"]["v"] == pytest.approx(v["E"], rel=1e-12)
        # inside the samples Eq. 28 interpolates: the same as POST /v1/absolute-ranks
        direct = client.post(
            "/v1/absolute-ranks",
            json={"table_id": entry["table_id"], "values": [VALUES["D"]], "tail": "paper"},
        )
        assert direct.status_code == 200, direct.text
        assert ranks["D"]["method"] == "interpolated"
        v["D"] = direct.json()["results"][0]["v"]
        assert ranks["D"]["v"] == v["D"]
        assert entry["tail"]["mode"] == "paper"
        assert entry["distinct_ranks"] == 5
        assert entry["log10_e"] == pytest.approx(_eq29_log10_e(list(v.values())), rel=1e-9)
    best = max(range(3), key=lambda i: (scan["deltas"][i]["log10_e"], scan["deltas"][i]["delta"]))
    assert scan["chosen"]["index"] == best


def test_paper_tail_differs_from_the_default_and_shares_its_tables(client: TestClient) -> None:
    paper = _post(client, {**SCAN, "tail": "paper"})
    default = _post(client, SCAN)
    assert default["tail"] == "auto"
    assert default["id"] != paper["id"]
    assert [e["table_id"] for e in default["deltas"]] == [e["table_id"] for e in paper["deltas"]]
    # the default (auto) gives v = 0 below f* = 0; the paper's tail does not
    assert all(e["ranks"][0]["v"] == 0.0 for e in default["deltas"])
    assert all(e["ranks"][0]["v"] > 0.0 for e in paper["deltas"])
    assert paper["provenance"]["method"]["tail"] == "paper"
    assert default["provenance"]["method"]["tail"] == "auto"
    assert _post(client, {**SCAN, "tail": "auto"})["id"] == default["id"]


def test_linear_tail_ranks_equal_absolute_ranks_with_that_tail(client: TestClient) -> None:
    scan = _post(client, {**SCAN, "tail": "linear"})
    assert scan["tail"] == "linear"
    for entry in scan["deltas"]:
        r = client.post(
            "/v1/absolute-ranks",
            json={"table_id": entry["table_id"], "values": list(VALUES.values()), "tail": "linear"},
        )
        assert r.status_code == 200, r.text
        assert [x["log10_v"] for x in entry["ranks"]] == [x["log10_v"] for x in r.json()["results"]]
        assert [x["method"] for x in entry["ranks"]] == [x["method"] for x in r.json()["results"]]


def test_default_scan_id_is_unchanged_by_the_option() -> None:
    settings = Settings(database_url="sqlite://")
    for extra in ({}, {"tail": "auto"}):
        body = RegionScanCreate.model_validate(SCAN_PIN | extra)
        assert service._plan(settings, body).scan_id == PINNED_DEFAULT_ID
    paper = RegionScanCreate.model_validate(SCAN_PIN | {"tail": "paper"})
    assert service._plan(settings, paper).scan_id != PINNED_DEFAULT_ID
