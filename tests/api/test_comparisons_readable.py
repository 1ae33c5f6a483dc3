"""Readable comparison answers: par-k with missing runs, names beside indices, view=summary,
repeated warnings given once with a count (issue 11)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.schemas.comparisons import ComparisonRead
from app.schemas.stattests import BradleyTerryRead, PosthocRead
from tests.support import pair_rows

PROBLEMS = ("classic/sphere/d2", "classic/rastrigin/d2", "classic/ackley/d2")
#: Three runs per cell; C's run 1 on rastrigin is missing (NA).
VALUES = {
    "classic/sphere/d2": {"A": 0.01, "B": 0.02, "C": 0.04},
    "classic/rastrigin/d2": {"A": 1.0, "B": 2.0, "C": 1.5},
    "classic/ackley/d2": {"A": 0.5, "B": 0.3, "C": 0.4},
}


def _csv(missing: tuple[str, str, int] | None = ("C", "classic/rastrigin/d2", 1)) -> str:
    lines = ["algorithm,problem,run,value"]
    for prob, cells in VALUES.items():
        for alg, v in cells.items():
            for run in range(3):
                value = "NA" if (alg, prob, run) == missing else repr(v * (1 + 0.1 * run))
                lines.append(f"{alg},{prob},{run},{value}")
    return "\n".join(lines) + "\n"


def _post_csv(client: TestClient, query: str, text: str) -> Any:
    return client.post(
        f"/v1/comparisons?{query}", content=text, headers={"content-type": "text/csv"}
    )


@pytest.mark.parametrize("reduction", ["mean", "median", "best"])
def test_par_k_with_a_missing_run_is_answered_like_worst_rank(
    client: TestClient, reduction: str
) -> None:
    query = f"reduction={reduction}&values_are=error"
    par_k = _post_csv(client, f"missing=par-k&{query}", _csv())
    assert par_k.status_code == 201, par_k.text
    worst = _post_csv(client, f"missing=worst-rank&{query}", _csv())
    assert worst.status_code == 201, worst.text
    out, ref = par_k.json(), worst.json()
    i, j = out["problems"].index("classic/rastrigin/d2"), out["algorithms"].index("C")
    # relative side: the cell is par_k × the problem's worst present value, so ranks last
    present = [v for col, v in enumerate(out["matrix"][i]) if col != j]
    assert out["matrix"][i][j] == pytest.approx(10.0 * max(present), rel=1e-15)
    assert out["relative"]["ranks"] == ref["relative"]["ranks"]
    assert out["missing"] == ref["missing"] | {"policy": "par-k", "par_k": 10.0}
    # absolute side: the missing cell has v = 1, the others the same v as under worst-rank
    absolute = out["absolute"]
    assert absolute["status"] == "complete", absolute
    assert absolute["v"][i][j] == 1.0
    assert absolute["log10_v"][i][j] == 0.0
    assert absolute["method"][i][j] == "missing (par-k: v = 1)"
    assert ref["absolute"]["method"][i][j] == "missing (worst-rank: v = 1)"
    assert absolute["v"] == ref["absolute"]["v"]
    assert absolute["pairwise"]["adjusted"] == ref["absolute"]["pairwise"]["adjusted"]
    # the same rows as JSON give the same comparison
    rows = [
        {"algorithm": a, "problem": p, "run": int(r), "value": None if v == "NA" else float(v)}
        for a, p, r, v in (line.split(",") for line in _csv().splitlines()[1:])
    ]
    as_json = client.post(
        "/v1/comparisons",
        json={"results": rows, "missing": "par-k", "reduction": reduction, "values_are": "error"},
    )
    assert as_json.status_code == 200, as_json.text
    assert as_json.json()["id"] == out["id"]


def test_par_k_with_absolute_ranks_off(client: TestClient) -> None:
    r = _post_csv(client, "missing=par-k&reduction=mean&absolute=off", _csv())
    assert r.status_code == 201, r.text
    assert r.json()["absolute"]["status"] == "unavailable"


def test_par_k_refusals_name_request_fields_and_problems(client: TestClient) -> None:
    lines = _csv(None).splitlines()
    text = "\n".join(
        line.rsplit(",", 1)[0] + ",NA" if ",classic/sphere/d2," in line else line for line in lines
    )
    r = _post_csv(client, "missing=par-k", text + "\n")
    assert r.status_code == 422, r.text
    problem = r.json()
    assert problem["field"] == "missing"
    assert "'classic/sphere/d2'" in problem["detail"]
    negative = _csv().replace("A,classic/rastrigin/d2,0,1.0", "A,classic/rastrigin/d2,0,-1.0")
    r = _post_csv(client, "missing=par-k&reduction=best", negative)  # best: A has -1.0
    assert r.status_code == 422
    assert r.json()["field"] == "missing"
    assert "'classic/rastrigin/d2'" in r.json()["detail"]


@pytest.mark.parametrize("endpoint", ["friedman", "posthoc", "bradley-terry"])
def test_matrix_tests_accept_par_k(client: TestClient, endpoint: str) -> None:
    values = [[0.1, 0.2, None], [1.0, 2.0, 1.5], [0.5, 0.3, 0.4], [0.2, 0.1, 0.3]]
    par_k = client.post(f"/v1/tests/{endpoint}", json={"values": values, "missing": "par-k"})
    assert par_k.status_code == 200, par_k.text
    assert par_k.json()["policies"]["filled_cells"] == 1
    filled = [row.copy() for row in values]
    filled[0][2] = 10.0 * 0.2  # what par-k means: k × the problem's worst present value
    same = client.post(f"/v1/tests/{endpoint}", json={"values": filled})
    assert par_k.json()["result"] == same.json()["result"]
    empty = [[None, None, None], *values[1:]]
    r = client.post(
        f"/v1/tests/{endpoint}",
        json={"values": empty, "missing": "par-k", "problems": ["f1", "f2", "f3", "f4"]},
    )
    assert r.status_code == 422
    assert r.json()["field"] == "values.0"  # row 0 of the request's values
    assert "'f1'" in r.json()["detail"]


# ---------------------------------------------------------------------------------------------
# names beside indices


def test_posthoc_answers_name_pairs_cliques_and_control(client: TestClient) -> None:
    names = ["DE", "PSO", "RS", "CMA"]
    values = [[0.1 * (p + 1), 0.2 + p, 3.0 + p, 0.05 * p + 0.3] for p in range(8)]
    for extra in ({"method": "nemenyi"}, {"method": "holm", "control": "PSO"}):
        r = client.post("/v1/tests/posthoc", json={"values": values, "algorithms": names} | extra)
        assert r.status_code == 200, r.text
        result = PosthocRead.model_validate(r.json()["result"])
        for pair in result.pairs:
            assert (pair.a, pair.b) == (names[pair.i], names[pair.j])
        assert result.clique_names == [[names[m] for m in c] for c in result.cliques]
        assert result.control_name == (None if result.control is None else names[result.control])
    assert result.control_name == "PSO"
    bt = client.post("/v1/tests/bradley-terry", json={"values": values, "algorithms": names})
    model = BradleyTerryRead.model_validate(bt.json()["result"]["model"])
    assert [s.algorithm for s in model.strengths_by_algorithm] == names
    assert [s.strength for s in model.strengths_by_algorithm] == model.strengths


def test_comparison_pairs_are_named(client: TestClient) -> None:
    r = _post_csv(client, "missing=worst-rank&values_are=error&posthoc=holm&control=B", _csv())
    assert r.status_code == 201, r.text
    out = ComparisonRead.model_validate(r.json())
    names = out.algorithms
    assert out.relative.posthoc.control_name == "B"
    pairs = out.relative.posthoc.pairs  # compact: vs the control, listed
    assert pairs.order == "listed"
    assert pairs.i is not None
    assert pairs.j is not None
    assert pairs.n_pairs == len(pairs.i) == len(pairs.code) == len(names) - 1
    rows = pair_rows(r.json()["relative"]["posthoc"]["pairs"], names)
    assert [p["a"] for p in rows] == [names[i] for i in pairs.i]
    assert all("p_adjusted" in p and "significant" in p for p in rows)
    assert out.relative.posthoc.clique_names == [
        [names[m] for m in c] for c in out.relative.posthoc.cliques
    ]
    tests = out.absolute.pairwise
    assert tests is not None
    assert tests.i
    assert tests.order == "listed"
    rows = pair_rows(r.json()["absolute"]["pairwise"], names)
    assert all("B" in (p["a"], p["b"]) for p in rows)  # vs control
    assert len(tests.wilcoxon.code) == len(tests.sign_test.code) == len(tests.i) == len(rows)
    assert all("p_value" in p["wilcoxon"] and "p_value" in p["sign_test"] for p in rows)
    bt = out.relative.bradley_terry
    assert [s.algorithm for s in bt.strengths_by_algorithm] == names


# ---------------------------------------------------------------------------------------------
# view=summary


def test_summary_view_keeps_the_paper_table_and_the_id(client: TestClient) -> None:
    full = _post_csv(client, "missing=worst-rank&values_are=error", _csv())
    assert full.status_code == 201
    summary = _post_csv(client, "missing=worst-rank&values_are=error&view=summary", _csv())
    assert summary.status_code == 200  # the same stored comparison
    f, s = full.json(), summary.json()
    assert s["id"] == f["id"]
    assert (f["view"], s["view"]) == ("full", "summary")
    assert client.get(f"{f['location']}?view=summary").content == summary.content
    assert client.get(f["location"]).content == full.content
    ComparisonRead.model_validate(s)
    for key in ("matrix", "n_runs"):
        assert key not in s
    assert "ranks" not in s["relative"]
    assert "p_matrix" not in s["relative"]["posthoc"]
    assert "p_matrix" not in f["relative"]["posthoc"]  # the client rebuilds it from the pairs
    assert "probabilities" not in s["relative"]["bradley_terry"]
    for key in ("v", "log10_v", "method", "tables"):
        assert key not in s["absolute"]
    assert all("spec" not in t for t in s["provenance"]["tables"].values())
    # what a paper's table needs is there, unchanged
    assert s["relative"]["average_ranks"] == f["relative"]["average_ranks"]
    for key in ("friedman", "aligned_ranks", "quade"):
        assert s["relative"][key] == f["relative"][key]
    for key in ("pairs", "cliques", "clique_names"):
        assert s["relative"]["posthoc"][key] == f["relative"]["posthoc"][key]
    for key in ("average_absolute_rank", "mean_log10_v", "pairwise", "warnings"):
        assert s["absolute"][key] == f["absolute"][key]
    for key in ("algorithms", "problems", "status", "warnings", "niia", "missing", "options"):
        assert s[key] == f[key]
    assert len(summary.content) < len(full.content)


def test_summary_view_with_json_bodies_and_bad_views(client: TestClient) -> None:
    rows = [
        {"algorithm": a, "problem": p, "run": 0, "value": v}
        for p, cells in VALUES.items()
        for a, v in cells.items()
    ]
    r = client.post("/v1/comparisons?view=summary", json={"results": rows})
    assert r.status_code == 201, r.text
    assert r.json()["view"] == "summary"
    assert "matrix" not in r.json()
    bad = client.post("/v1/comparisons?view=short", json={"results": rows})
    assert bad.status_code == 422
    assert bad.json()["field"] == "view"
    in_body = client.post("/v1/comparisons", json={"results": rows, "view": "summary"})
    assert in_body.status_code == 422  # a view of the answer, not part of the request
    got = client.get(f"{r.json()['location']}?view=short")
    assert got.status_code == 422
    twice = client.post("/v1/comparisons?view=full&view=summary", json={"results": rows})
    assert twice.status_code == 422
    assert twice.json()["field"] == "view"


# ---------------------------------------------------------------------------------------------
# warnings once, with a count


def test_a_warning_per_problem_is_given_once_with_its_problems(client: TestClient) -> None:
    lines = ["algorithm,problem,run,value"]
    for p in PROBLEMS:
        lines += [f"A,{p},{r},{0.1 + 0.01 * r}" for r in range(3)]
        lines += [f"B,{p},{r},{0.2 + 0.01 * r}" for r in range(5)]
    r = _post_csv(client, "reduction=best&values_are=error", "\n".join(lines) + "\n")
    assert r.status_code == 201, r.text
    warnings = r.json()["absolute"]["warnings"]
    messages = [w["message"] for w in warnings]
    assert len(messages) == len(set(messages))
    (runs,) = [w for w in warnings if "different r" in w["message"]]
    assert runs["count"] == len(PROBLEMS)
    assert runs["problems"] == list(PROBLEMS)
    assert not any(p in runs["message"] for p in PROBLEMS)
    (budget,) = [w for w in warnings if w["message"].startswith("budget = 1")]
    assert budget == budget | {"count": 1, "problems": []}
    top, low_power = r.json()["warnings"]  # and 2 algorithms on few problems: low power
    assert low_power["message"] == r.json()["relative"]["posthoc"]["low_power"]["message"]
    assert top["count"] == 1
    assert "(3 to 5)" in top["message"]
    assert json.loads(r.content) == r.json()


def test_the_ladder_hint_of_many_problems_is_one_warning(client: TestClient) -> None:
    # values far below the 2^12 samples of each domain table: every problem gets the hint
    problems = ["classic/ellipsoid/d2", "classic/rosenbrock/d2"]
    lines = ["algorithm,problem,run,value"]
    lines += [f"{a},{p},0,{v}" for p in problems for a, v in (("A", 1e-9), ("B", 1.0))]
    r = _post_csv(client, "values_are=error&regions=domain&budget=1", "\n".join(lines) + "\n")
    assert r.status_code == 201, r.text
    hints = [w for w in r.json()["absolute"]["warnings"] if "nested-region ladder" in w["message"]]
    assert len(hints) == 1
    assert hints[0]["count"] == 2
    assert hints[0]["problems"] == problems
    direct = client.post(
        "/v1/absolute-ranks",
        json={
            "function_id": problems[0],
            "values": [1e-9],
            "values_are": "error",
            "regions": "domain",
        },
    )
    (text,) = [w for w in direct.json()["warnings"] if "nested-region ladder" in w]
    assert problems[0] in text  # POST /v1/absolute-ranks keeps its own, specific wording


def test_runs_below_f_star_of_several_algorithms_are_one_warning(client: TestClient) -> None:
    runs = {"A": [-1e-3, 0.1], "B": [0.2, -2e-3, -3e-3], "C": [0.5]}
    r = client.post(
        "/v1/absolute-ranks",
        json={
            "function_id": "classic/sphere/d2",
            "runs_by_algorithm": runs,
            "values_are": "error",
            "aggregate": "best",
        },
    )
    assert r.status_code == 200, r.text
    below = [w for w in r.json()["warnings"] if "lie below f*" in w]
    assert below == [
        "3 run(s) of 2 algorithms (A, B) lie below f* = 0.0 (first: runs_by_algorithm.A.0); "
        "no point of the domain reaches them"
    ]
