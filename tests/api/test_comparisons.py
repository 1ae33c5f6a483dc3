"""POST/GET /v1/comparisons: JSON and CSV input, relative and absolute ranks, NIIA, CD diagram."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient

from tests.api.conftest import InlineDispatcher
from tests.support import pair_rows

# A beats B on p1, p2 and loses on p3; C is best on p1, p2 and second on p3. With C present,
# A and B tie on average rank; alone, A is better: a relative-rank NIIA flip.
NIIA_VALUES = {
    "classic/sphere/d2": {"A": 0.2, "B": 0.3, "C": 0.1},
    "classic/rastrigin/d2": {"A": 2.0, "B": 3.0, "C": 1.0},
    "classic/rosenbrock/d2": {"A": 3.0, "B": 1.0, "C": 2.0},
}


def _rows(values: dict[str, dict[str, float]], runs: int = 1) -> list[dict[str, Any]]:
    return [
        {"algorithm": alg, "problem": prob, "run": r, "value": v * (1 + 0.1 * r)}
        for prob, cells in values.items()
        for alg, v in cells.items()
        for r in range(runs)
    ]


def _csv(rows: list[dict[str, Any]]) -> str:
    lines = ["algorithm,problem,run,value"]
    lines += [f"{r['algorithm']},{r['problem']},{r['run']},{r['value']!r}" for r in rows]
    return "\n".join(lines) + "\n"


def _create(client: TestClient, body: dict[str, Any], status: int = 201) -> dict[str, Any]:
    r = client.post("/v1/comparisons", json=body)
    assert r.status_code == status, r.text
    assert r.headers["location"] == r.json()["location"]
    return r.json()


def test_relative_and_absolute_ranks_with_the_niia_report(client: TestClient) -> None:
    body = {"results": _rows(NIIA_VALUES, runs=3), "reduction": "best", "values_are": "error"}
    out = _create(client, body)
    assert out["status"] == "complete"
    assert out["algorithms"] == ["A", "B", "C"]
    rel = out["relative"]
    assert rel["average_ranks"] == pytest.approx([7 / 3, 7 / 3, 4 / 3])
    assert rel["friedman"]["p_value"] <= 1.0
    assert rel["posthoc"]["procedure"] == "nemenyi"
    absolute = out["absolute"]
    assert absolute["status"] == "complete"
    assert len(absolute["v"]) == 3
    assert len(absolute["v"][0]) == 3
    assert all(0.0 <= v <= 1.0 for row in absolute["v"] for v in row)
    assert absolute["tables"]["classic/sphere/d2"]["kind"] == "analytic"
    assert absolute["pairwise"]["n_pairs"] == 3  # compact: distinct rows, a code per pair
    assert absolute["pairwise"]["order"] == "upper-triangle"
    assert len(pair_rows(absolute["pairwise"])) == 3
    assert absolute["warnings"]  # budget 1: v1 ranks, and it says so
    niia = out["niia"]
    assert ["A", "B"] in niia["relative"]["flipped_pairs"]
    ab = next(s for s in niia["relative"]["subsets"] if s["subset"] == ["A", "B"])
    assert ab["flips"][0]["kinds"] == ["order"]
    for report in niia["absolute"]["subsets"]:  # absolute ranks cannot flip order
        assert all("order" not in f["kinds"] for f in report["flips"])
    assert out["provenance"]["comparison_id"] == out["id"]


def test_identical_requests_share_an_id_and_bytes(client: TestClient) -> None:
    body = {"results": _rows(NIIA_VALUES), "reduction": "mean", "posthoc": "holm"}
    first = client.post("/v1/comparisons", json=body)
    again = client.post("/v1/comparisons", json=body)
    assert first.status_code == 201
    assert again.status_code == 200
    assert first.content == again.content
    got = client.get(first.headers["location"])
    assert got.status_code == 200
    assert got.content == first.content


def test_csv_body_and_json_rows_give_the_same_comparison(client: TestClient) -> None:
    rows = _rows(NIIA_VALUES)
    as_json = _create(client, {"results": rows, "reduction": "median", "alpha": 0.1})
    r = client.post(
        "/v1/comparisons?reduction=median&alpha=0.1",
        content=_csv(rows),
        headers={"content-type": "text/csv"},
    )
    assert r.status_code == 200, r.text  # the same request: already stored
    assert r.json()["id"] == as_json["id"]
    embedded = client.post(
        "/v1/comparisons", json={"csv": _csv(rows), "reduction": "median", "alpha": 0.1}
    )
    assert embedded.json()["id"] == as_json["id"]
    with_bom = client.post(
        "/v1/comparisons?reduction=median&alpha=0.1",
        content=("\ufeff" + _csv(rows)).encode(),
        headers={"content-type": "text/csv; charset=utf-8"},
    )
    assert with_bom.json()["id"] == as_json["id"]


def test_mean_and_even_median_reductions_get_absolute_ranks_of_their_aggregate(
    client: TestClient,
) -> None:
    for reduction in ("mean", "median"):
        out = _create(
            client,
            {
                "results": _rows(NIIA_VALUES, runs=2),
                "reduction": reduction,
                "values_are": "error",
                "budget": 10,
            },
        )
        absolute = out["absolute"]
        assert absolute["status"] == "complete", absolute
        methods = {m for row in absolute["method"] for m in row if m is not None}
        assert methods
        assert all(m.startswith("mean" if reduction == "mean" else "median") for m in methods)
        # the same cells ranked directly: a comparison is POST /v1/absolute-ranks per problem
        problem = out["problems"][0]
        cells = out["matrix"][0]
        direct = client.post(
            "/v1/absolute-ranks",
            json={
                "function_id": problem,
                "values": cells,
                "values_are": "error",
                "budget": 10,
                "runs": 2,
                "aggregate": reduction,
            },
        )
        assert direct.status_code == 200, direct.text
        got = [item["log10_v"] for item in direct.json()["results"]]
        assert absolute["log10_v"][0] == got


def test_value_runs_ranks_published_means_as_means_of_that_many_runs(client: TestClient) -> None:
    body = {"results": _rows(NIIA_VALUES), "reduction": "mean", "values_are": "error"}
    plain = _create(client, body)
    published = _create(client, body | {"value_runs": 25, "budget": 1000})
    assert published["id"] != plain["id"]
    assert published["n_runs"] == [[25] * len(row) for row in published["n_runs"]]
    assert published["absolute"]["status"] == "complete"
    assert published["absolute"]["log10_v"] != plain["absolute"]["log10_v"]
    # relative ranks do not depend on how many runs each value summarises
    assert published["relative"]["average_ranks"] == plain["relative"]["average_ranks"]
    several = client.post(
        "/v1/comparisons", json={**body, "results": _rows(NIIA_VALUES, runs=2), "value_runs": 25}
    )
    assert several.status_code == 422
    problem = several.json()
    assert problem["field"] == "value_runs"
    assert "one value" in problem["detail"]


def test_one_run_per_cell_has_absolute_ranks_whatever_the_reduction(client: TestClient) -> None:
    out = _create(client, {"results": _rows(NIIA_VALUES), "values_are": "error"})  # mean
    assert out["absolute"]["status"] == "complete"


def test_unequal_run_counts_warn_that_v_compares_different_aggregates(
    client: TestClient,
) -> None:
    rows = [
        {"algorithm": alg, "problem": prob, "run": r, "value": 0.1 + 0.01 * r}
        for prob in ("classic/sphere/d2", "classic/rastrigin/d2")
        for alg, runs in (("A", 3), ("B", 7))
        for r in range(runs)
    ]
    out = _create(client, {"results": rows, "reduction": "best", "values_are": "error"})
    (different,) = [w for w in out["absolute"]["warnings"] if "different r" in w["message"]]
    assert different["count"] == 2  # one per problem, given once
    assert different["problems"] == ["classic/sphere/d2", "classic/rastrigin/d2"]


def test_ranks_warnings_name_the_algorithm(client: TestClient) -> None:
    values = {
        "classic/sphere/d2": {"A": -1e-3, "B": 0.0, "C": 1e-3},
        "classic/rastrigin/d2": {"A": 1.0, "B": 2.0, "C": 3.0},
    }
    out = _create(client, {"results": _rows(values), "values_are": "error", "reduction": "best"})
    below = [w["message"] for w in out["absolute"]["warnings"] if "below f*" in w["message"]]
    assert below
    assert "algorithm 'A'" in below[0]
    assert "values[" not in below[0]


def test_free_problem_names_get_relative_ranks_only(client: TestClient) -> None:
    values = {f"p{i}": {"A": 1.0 + i, "B": 2.0 + i % 3, "C": 0.5 * i} for i in range(6)}
    out = _create(client, {"results": _rows(values), "posthoc": "shaffer"})
    assert out["absolute"]["status"] == "unavailable"
    assert "not a hosted function" in out["absolute"]["reason"]
    assert out["relative"]["posthoc"]["procedure"] == "shaffer"


def test_cd_diagram_is_drawn_from_the_stored_cliques(client: TestClient) -> None:
    values = {
        f"p{j}": dict(zip("ABCDE", (-5.2, -6.0, -2.1, -1.7, -6.4), strict=True)) for j in range(10)
    }
    out = _create(client, {"results": _rows(values)})
    svg = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg")
    assert svg.status_code == 200
    assert svg.headers["content-type"] == "image/svg+xml"
    assert svg.content.startswith(b"<?xml")
    assert svg.content == client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg").content
    post = out["relative"]["posthoc"]
    pairs = pair_rows(post["pairs"])
    significant = {tuple(sorted((p["i"], p["j"]))) for p in pairs if p["significant"]}
    for clique in post["cliques"]:
        assert not any((a, b) in significant for a in clique for b in clique if a < b)
    png = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.png")
    assert png.content.startswith(b"\x89PNG")


def test_missing_policies(client: TestClient) -> None:
    rows = _rows(NIIA_VALUES) + _rows({"p4": {"A": 1.0, "B": 2.0}})
    r = client.post("/v1/comparisons", json={"results": rows})
    assert r.status_code == 422
    assert r.json()["field"] == "results"
    assert "no result" in r.json()["detail"]
    out = _create(client, {"results": rows, "missing": "drop-problem"})
    assert out["missing"]["dropped_problems"] == ["p4"]
    low_power = out["relative"]["posthoc"]["low_power"]  # N = 3 problems are too few
    assert out["warnings"] == [
        {
            "message": "problems with missing cells were dropped (drop-problem)",
            "count": 1,
            "problems": ["p4"],
        },
        {"message": low_power["message"], "count": 1, "problems": []},
    ]
    out = _create(client, {"results": rows, "missing": "worst-rank"})
    assert out["relative"]["ranks"][3][2] == 3.0
    rows[0]["value"] = None
    r = client.post("/v1/comparisons", json={"results": rows, "missing": "reject"})
    assert r.status_code == 422
    assert r.json()["field"] == "results.0.value"


def test_unknown_ids_are_404(client: TestClient) -> None:
    for path in ("/v1/comparisons/cnope", "/v1/comparisons/" + "c" * 300 + "/cd-diagram.svg"):
        r = client.get(path)
        assert r.status_code == 404
        assert r.json()["field"] == "comparison_id"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"csv": "algo,problem,run,value\nA,p,0,1\n"}, "csv"),
        ({"csv": "algorithm,problem,run,value\nA,p,0\n"}, "csv"),
        ({"csv": "algorithm,problem,run,value\nA,p,x,1\n"}, "csv"),
        ({"csv": "algorithm,problem,run,value\nA,p,0,abc\n"}, "csv"),
        ({"csv": ""}, "csv"),
        ({}, "results"),
        ({"results": [], "csv": "x"}, "results"),
        ({"results": _rows({"p1": {"A": 1.0}, "p2": {"A": 2.0}})}, "results"),
        ({"results": _rows({"p1": {"A": 1.0, "B": 2.0}})}, "results"),
        ({"results": _rows(NIIA_VALUES), "control": "Z"}, "control"),
        ({"results": _rows(NIIA_VALUES), "posthoc": "li"}, "control"),
        ({"results": _rows(NIIA_VALUES), "niia_subsets": [["A", "Z"]]}, "niia_subsets.0"),
        ({"results": _rows(NIIA_VALUES), "alpha": 1.5}, "alpha"),
        ({"results": _rows(NIIA_VALUES), "reduction": "mode"}, "reduction"),
    ],
)
def test_bad_input_is_a_problem_naming_the_field(
    client: TestClient, body: dict[str, Any], field: str
) -> None:
    r = client.post("/v1/comparisons", json=body)
    assert 400 <= r.status_code < 500, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["field"] == field


def test_duplicate_runs_are_refused(client: TestClient) -> None:
    rows = _rows(NIIA_VALUES)
    rows.append(dict(rows[0]))
    r = client.post("/v1/comparisons", json={"results": rows})
    assert r.status_code == 422
    assert r.json()["field"] == f"results.{len(rows) - 1}.run"


def test_csv_query_options_are_checked(client: TestClient) -> None:
    csv = _csv(_rows(NIIA_VALUES))
    headers = {"content-type": "text/csv"}
    r = client.post("/v1/comparisons?bogus=1", content=csv, headers=headers)
    assert r.status_code == 422
    assert r.json()["field"] == "bogus"
    r = client.post("/v1/comparisons?alpha=2", content=csv, headers=headers)
    assert r.status_code == 422
    assert r.json()["field"] == "alpha"
    r = client.post("/v1/comparisons?niia_subset=A,B,C", content=csv, headers=headers)
    assert r.status_code == 201, r.text
    assert r.json()["niia"]["relative"]["subsets"][0]["subset"] == ["A", "B", "C"]
    r = client.post("/v1/comparisons", content=b"\xff\xfe", headers=headers)
    assert r.status_code == 422
    assert r.json()["field"] == "body"  # a text/csv request has no 'csv' field
    bad = "algorithm,problem,run,value\nA,p1,0,1\nA,p1,0,2\nB,p1,0,1\nA,p2,0,x\n"
    r = client.post("/v1/comparisons", content=bad, headers=headers)
    assert r.status_code == 422
    assert r.json()["field"] == "body"
    assert "csv line 5" in r.json()["detail"]
    dup = "Algorithm,Problem,run,value\nA,p1,0,1\nA,p1,0,2\nB,p1,0,1\n"
    r = client.post("/v1/comparisons", content=dup, headers=headers)
    assert r.status_code == 422
    assert r.json()["field"] == "body"
    assert "(data row 2 of the csv)" in r.json()["detail"]
    r = client.post("/v1/comparisons", content="Algorithm,Problem,Run\nA,p,0\n", headers=headers)
    assert "(got Algorithm, Problem, Run)" in r.json()["detail"]  # as written, not lower-cased
    r = client.post("/v1/comparisons", content=csv, headers={"content-type": "text/plain"})
    assert r.status_code == 415


def test_too_many_algorithms_is_422(client: TestClient, settings: Any) -> None:
    k = settings.max_algorithms + 1
    rows = [
        {"algorithm": f"a{i}", "problem": p, "run": 0, "value": float(i)}
        for i in range(k)
        for p in ("p1", "p2")
    ]
    r = client.post("/v1/comparisons", json={"results": rows})
    assert r.status_code == 422
    assert r.json()["field"] == "results"


def test_absolute_ranks_wait_for_tables_then_complete(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True  # tables are queued but not built
    values = {
        "classic/rastrigin/d2": {"A": 2.0, "B": 3.0},
        "classic/rosenbrock/d2": {"A": 3.0, "B": 1.0},
    }
    body = {"results": _rows(values), "reduction": "best"}
    out = _create(client, body)
    assert out["status"] == "partial"
    assert out["absolute"]["status"] == "pending"
    assert {p["problem"] for p in out["absolute"]["pending"]} == set(values)
    assert out["niia"]["absolute"]["status"] == "pending"
    dispatcher.hold = False
    for table_id, index in list(dispatcher.chunks):
        dispatcher.enqueue_chunk(table_id, index)
    for table_id in {t for t, _ in dispatcher.chunks}:
        dispatcher.enqueue_merge(table_id)
    again = _create(client, body, status=201)  # recomputed now that the tables exist
    assert again["id"] == out["id"]
    assert again["status"] == "complete"
    assert client.get(out["location"]).json()["status"] == "complete"


def test_a_csv_sent_as_json_says_the_body_is_not_json(client: TestClient) -> None:
    r = client.post(
        "/v1/comparisons",
        content=_csv(_rows(NIIA_VALUES)),
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422
    assert r.json()["field"] == "body"
    assert r.json()["detail"].startswith("body: invalid JSON: ")


def test_niia_default_pairs_are_bounded(client: TestClient, settings: Any) -> None:
    k = 12
    rows = [
        {"algorithm": f"a{i}", "problem": p, "run": 0, "value": float((i * 7 + j) % k)}
        for i in range(k)
        for j, p in enumerate(("p1", "p2", "p3"))
    ]
    settings.max_niia_default_pairs = 10
    out = _create(client, {"results": rows})
    assert out["niia"]["status"] == "skipped"
    assert "niia_subsets" in out["niia"]["reason"]
    out = _create(client, {"results": rows, "niia_subsets": [["a0", "a1", "a2"]]})
    assert out["niia"]["status"] == "complete"


def test_labels_are_plain_text_in_the_cd_diagram(client: TestClient) -> None:
    values = {f"p{j}": {"$$": 1.0 + j, "$\\sqrt{$": 2.0, "B" * 200: 3.0} for j in range(3)}
    out = _create(client, {"results": _rows(values)})
    for suffix in ("svg", "png"):
        r = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.{suffix}")
        assert r.status_code == 200


def test_names_with_control_characters_are_refused(client: TestClient) -> None:
    rows = _rows(NIIA_VALUES)
    rows[0]["algorithm"] = "A\x00"
    r = client.post("/v1/comparisons", json={"results": rows})
    assert r.status_code == 422
    assert r.json()["field"] == "results.0.algorithm"
    r = client.post("/v1/comparisons", json={"csv": "algorithm,problem,run,value\nA\x01,p,0,1\n"})
    assert r.status_code == 422
    assert r.json()["field"] == "csv"
