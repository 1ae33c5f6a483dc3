"""Comparisons over δ-box tables (issue 13 item 5; Jing & Liu Table VI in one request).

``tables: {problem: table_id}`` ranks every cell of a problem on that table: the comparison's
``absolute.log10_v`` is checked against ``POST /v1/absolute-ranks`` with the same ``table_id``
(per cell, with its runs and reduction), each problem's region is stated, the mixed scales are
warned about once, and refusals name ``tables.<problem>``. A request without ``tables`` keeps
the comparison id the code gave before the option existed (pinned under 25885de, the branch
point of this work, and equal under main 76b65cc, with ``Settings(database_url="sqlite://")``).
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.schemas.comparisons import ComparisonCreate, ComparisonRead
from app.services.comparisons import MIXED_SCALES, comparison_id, normalized_request
from app.services.provenance import canonical_sha256
from tests.api.conftest import InlineDispatcher

RASTRIGIN, ELLIPSOID, SPHERE = "classic/rastrigin/d2", "classic/ellipsoid/d2", "classic/sphere/d2"
CELLS = {
    RASTRIGIN: {"A": 0.02, "B": 0.9, "C": 3.0},
    ELLIPSOID: {"A": 5.0, "B": 0.01, "C": 0.4},
    SPHERE: {"A": 0.3, "B": 0.02, "C": 1e-4},
}
RUNS = 2
BUDGET = 50


def _rows(cells: dict[str, dict[str, float]], runs: int = RUNS) -> list[dict[str, Any]]:
    return [
        {"algorithm": a, "problem": p, "run": r, "value": v * (1 + 0.5 * r)}
        for p, by_alg in cells.items()
        for a, v in by_alg.items()
        for r in range(runs)
    ]


def _box_table(client: TestClient, function_id: str, delta: float, status: int = 200) -> dict:
    r = client.post("/v1/tables", json={"function_id": function_id, "delta": delta, "log2n": 10})
    assert r.status_code == status, r.text
    return r.json()


def _compare(client: TestClient, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    r = client.post("/v1/comparisons", json=body)
    assert r.status_code == status, r.text
    return r.json()


def _null_as_minus_inf(xs: list[float | None]) -> list[float]:
    return [-math.inf if x is None else x for x in xs]


def test_cells_are_ranked_on_the_given_tables_as_absolute_ranks_ranks_them(
    client: TestClient,
) -> None:
    box_r = _box_table(client, RASTRIGIN, 0.5)
    box_e = _box_table(client, ELLIPSOID, 1.0)
    given = {RASTRIGIN: box_r["id"], ELLIPSOID: box_e["id"]}
    body = {"results": _rows(CELLS), "reduction": "best", "budget": BUDGET, "tables": given}
    out = _compare(client, body)
    ComparisonRead.model_validate(out)
    assert out["status"] == "complete"
    assert out["options"]["tables"] == given
    absolute = out["absolute"]
    assert absolute["status"] == "complete"
    algorithms = out["algorithms"]
    for i, problem in enumerate(out["problems"]):
        best = [min(CELLS[problem][a] * (1 + 0.5 * r) for r in range(RUNS)) for a in algorithms]
        source = {"table_id": given[problem]} if problem in given else {"function_id": problem}
        r = client.post(
            "/v1/absolute-ranks",
            json={
                **source,
                "values": best,
                "runs": RUNS,
                "aggregate": "best",
                "budget": BUDGET,
            },
        )
        assert r.status_code == 200, r.text
        direct = r.json()["results"]
        assert absolute["log10_v"][i] == [x["log10_v"] for x in direct]
        assert absolute["method"][i] == [x["method"] for x in direct]
        # the comparison's v is 10^log10_v: equal to the last bits
        assert absolute["v"][i] == pytest.approx([x["v"] for x in direct], rel=1e-14)
    v = absolute["v"]
    assert absolute["average_absolute_rank"] == pytest.approx(
        [sum(row[j] for row in v) / len(v) for j in range(len(algorithms))], rel=1e-15
    )
    # each problem's region, as the tables' specs say
    regions = absolute["regions"]
    for problem, table in ((RASTRIGIN, box_r), (ELLIPSOID, box_e)):
        region = table["spec"]["region"]
        assert regions[problem] == {
            "region": "box",
            "source": "table",
            "table_id": table["id"],
            "delta": region["delta"],
            "lower": region["lower"],
            "upper": region["upper"],
        }
        assert absolute["tables"][problem]["table_id"] == table["id"]
    assert regions[SPHERE]["region"] == "domain"
    assert regions[SPHERE]["source"] == "analytic"
    # the mixed scales said once, naming the box problems
    mixed = [w for w in absolute["warnings"] if w["message"] == MIXED_SCALES]
    assert len(mixed) == 1
    assert mixed[0]["problems"] == [RASTRIGIN, ELLIPSOID]
    # the same request is the same comparison; without tables it is another one
    assert _compare(client, body, 200)["id"] == out["id"]
    default = _compare(client, {k: v for k, v in body.items() if k != "tables"})
    assert default["id"] != out["id"]
    assert "regions" not in default["absolute"]
    assert "tables" not in default["options"]
    assert not any(w["message"] == MIXED_SCALES for w in default["absolute"]["warnings"])
    # box ranks are not the domain's: the ranks differ where the box is smaller than the domain
    i = out["problems"].index(RASTRIGIN)
    assert absolute["log10_v"][i] != default["absolute"]["log10_v"][i]
    # the summary view keeps the regions
    summary = client.post("/v1/comparisons?view=summary", json=body).json()
    assert summary["absolute"]["regions"] == regions


def test_a_domain_table_given_is_relative_to_the_domain(client: TestClient) -> None:
    table = client.post("/v1/tables", json={"function_id": RASTRIGIN, "log2n": 10}).json()
    out = _compare(client, {"results": _rows(CELLS, runs=1), "tables": {RASTRIGIN: table["id"]}})
    region = out["absolute"]["regions"][RASTRIGIN]
    assert region == {
        "region": "domain",
        "source": "table",
        "table_id": table["id"],
        "delta": None,
        "lower": None,
        "upper": None,
    }
    assert not any(w["message"] == MIXED_SCALES for w in out["absolute"]["warnings"])


def test_a_region_scans_box_tables_compose_table_vi(client: TestClient) -> None:
    # one scan per problem (Table V), then the comparison on the chosen boxes (Table VI)
    chosen = {}
    for problem in (RASTRIGIN, ELLIPSOID):
        scan = client.post(
            "/v1/region-scans",
            json={
                "function_id": problem,
                "values": {a: CELLS[problem][a] for a in ("A", "B", "C")},
                "deltas": [0.1, 1.0],
                "log2n": 10,
            },
        ).json()
        assert scan["status"] == "ready"
        chosen[problem] = scan["deltas"][scan["chosen"]["index"]]
    body = {
        "results": _rows({p: CELLS[p] for p in chosen}, runs=1),
        "tables": {p: e["table_id"] for p, e in chosen.items()},
    }
    out = _compare(client, body)
    for i, problem in enumerate(out["problems"]):
        entry = chosen[problem]
        scan_v = {r["algorithm"]: r["log10_v"] for r in entry["ranks"]}
        assert out["absolute"]["log10_v"][i] == [scan_v[a] for a in out["algorithms"]]
        assert out["absolute"]["regions"][problem]["delta"] == entry["delta"]


def test_regions_is_not_used_for_a_problem_with_a_table(client: TestClient) -> None:
    given = {p: _box_table(client, p, 0.5)["id"] for p in (RASTRIGIN, ELLIPSOID)}
    before = client.get("/v1/tables").json()["total"]
    cells = {p: CELLS[p] for p in given}
    out = _compare(client, {"results": _rows(cells, runs=1), "regions": "nested", "tables": given})
    assert out["status"] == "complete"  # no ladder was waited for
    assert client.get("/v1/tables").json()["total"] == before  # nor queued
    for i, problem in enumerate(out["problems"]):
        r = client.post(
            "/v1/absolute-ranks",
            json={"table_id": given[problem], "values": [cells[problem][a] for a in "ABC"]},
        )
        assert _null_as_minus_inf(out["absolute"]["log10_v"][i]) == _null_as_minus_inf(
            [x["log10_v"] for x in r.json()["results"]]
        )


@pytest.mark.parametrize(
    ("tables", "detail"),
    [
        ({RASTRIGIN: "t000000000000000000000000"}, "no table with id"),
        ({RASTRIGIN: "<ellipsoid>"}, "is a table of classic/ellipsoid/d2"),
        ({"classic/ackley/d2": "<rastrigin>"}, "not a problem of this comparison"),
    ],
)
def test_refusals_name_the_problems_field(
    client: TestClient, tables: dict[str, str], detail: str
) -> None:
    ids = {
        "<rastrigin>": _box_table(client, RASTRIGIN, 0.5)["id"],
        "<ellipsoid>": _box_table(client, ELLIPSOID, 0.5)["id"],
    }
    given = {p: ids.get(t, t) for p, t in tables.items()}
    r = client.post("/v1/comparisons", json={"results": _rows(CELLS, runs=1), "tables": given})
    assert r.status_code == 422, r.text
    problem = r.json()
    assert problem["field"] == f"tables.{next(iter(tables))}"
    assert detail in problem["detail"]


def test_tables_with_absolute_off_is_refused(client: TestClient) -> None:
    table = _box_table(client, RASTRIGIN, 0.5)
    r = client.post(
        "/v1/comparisons",
        json={
            "results": _rows(CELLS, runs=1),
            "tables": {RASTRIGIN: table["id"]},
            "absolute": "off",
        },
    )
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "tables"


def test_a_table_not_ready_is_409_naming_the_problem(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    table = _box_table(client, RASTRIGIN, 0.25, status=202)
    r = client.post(
        "/v1/comparisons",
        json={"results": _rows(CELLS, runs=1), "tables": {RASTRIGIN: table["id"]}},
    )
    assert r.status_code == 409, r.text
    assert r.json()["field"] == f"tables.{RASTRIGIN}"
    assert r.json()["table_id"] == table["id"]
    assert r.headers["location"] == table["location"]


def test_tables_in_a_csv_query_is_refused(client: TestClient) -> None:
    r = client.post(
        "/v1/comparisons?tables=x",
        content="algorithm,problem,run,value\nA,p1,0,1\nB,p1,0,2\nA,p2,0,1\nB,p2,0,2\n",
        headers={"content-type": "text/csv"},
    )
    assert r.status_code == 422
    assert r.json()["field"] == "tables"


def test_comparison_id_without_tables_is_unchanged() -> None:
    settings = Settings(database_url="sqlite://")
    rows = [
        {"algorithm": a, "problem": p, "run": r, "value": v * (1 + 0.5 * r)}
        for p in (SPHERE, RASTRIGIN, "bbob/f1/i1/d2")
        for a, v in (("A", 0.01), ("B", 0.3), ("C", 2.0))
        for r in range(2)
    ]
    pins = (
        ({}, "cfc8d9832354b2d08d442b9d"),
        ({"regions": "domain"}, "c7a7431b469e77c250f52c4e"),
        ({"values_are": "error", "budget": 100}, "ca50f8d40c6eb3967199e709"),
        ({"tables": None}, "cfc8d9832354b2d08d442b9d"),
    )
    for extra, pin in pins:
        body = ComparisonCreate.model_validate({"results": rows} | extra)
        payload, _, _ = normalized_request(body, settings)
        assert comparison_id(canonical_sha256(payload)) == pin
    body = ComparisonCreate.model_validate(
        {"results": rows, "tables": {RASTRIGIN: "t0123456789abcdef0123456"}}
    )
    payload, _, _ = normalized_request(body, settings)
    assert comparison_id(canonical_sha256(payload)) != pins[0][1]


def test_your_own_functions_tables_rank_their_problems(client: TestClient) -> None:
    """A problem that is not hosted gets absolute ranks from the user table given for it (the
    re-check pass: it came back 'unavailable'); v equals Eq. 28 on the samples (Fig. 9)."""
    made = []
    for name, samples in (("mine-a", [1.0, 3.0, 4.0, 6.0]), ("mine-b", [0.0, 2.0, 8.0, 10.0])):
        r = client.post("/v1/tables", json={"samples": samples, "name": name})
        assert r.status_code in (200, 201), r.text
        made.append(r.json())
    problems = [t["function_id"] for t in made]
    cells = {problems[0]: {"A": 2.0, "B": 5.0}, problems[1]: {"A": 9.0, "B": 1.0}}
    given = {p: t["id"] for p, t in zip(problems, made, strict=True)}
    out = _compare(client, {"results": _rows(cells, runs=1), "tables": given})
    absolute = out["absolute"]
    assert absolute["status"] == "complete", absolute
    i = out["problems"].index(problems[0])
    j = [out["algorithms"].index(a) for a in ("A", "B")]
    # Fig. 9: v(2) = 0.3, v(5) = 0.7 (linear between the counts 1/5, 2/5 and 3/5, 4/5)
    assert [absolute["v"][i][k] for k in j] == pytest.approx([0.3, 0.7], rel=1e-12)
    # a problem that is neither hosted nor given a table still has no absolute ranks
    other = _compare(
        client, {"results": _rows(cells, runs=1), "tables": {problems[0]: given[problems[0]]}}
    )
    assert other["absolute"]["status"] == "unavailable"
