"""POST /v1/pareto-rankings and /v1/indicators over HTTP."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.domain import pareto


def _scores(seed: int = 0, problems: int = 3, algs: int = 3, runs: int = 5) -> list[dict]:
    rng = np.random.default_rng(seed)
    return [
        {"problem": f"p{p}", "algorithm": f"A{a}", "run": r, "indicator": ind, "value": float(v)}
        for p in range(problems)
        for a in range(algs)
        for r in range(runs)
        for ind, v in (("hv", rng.random() + 0.1 * a), ("igd", rng.random()))
    ]


def test_ranking_matches_the_domain_and_is_stored(client: TestClient) -> None:
    rows = _scores()
    r = client.post("/v1/pareto-rankings", json={"scores": rows, "orientation": {"hv": "max"}})
    assert r.status_code == 201, r.text
    out = r.json()
    assert r.headers["location"] == out["location"]
    assert out["orientation"] == {"hv": "max", "igd": "min"}
    matrices = []
    for prob in out["problems"]:
        runs = [x for x in rows if x["problem"] == prob["problem"]]
        keys = sorted({(x["algorithm"], x["run"]) for x in runs})
        f = np.array(
            [
                [
                    next(
                        x["value"]
                        for x in runs
                        if (x["algorithm"], x["run"]) == k and x["indicator"] == i
                    )
                    for i in ("hv", "igd")
                ]
                for k in keys
            ]
        )
        levels = pareto.nondominated_levels(f, maximize=[True, False])
        assert [x["level"] for x in prob["runs"]] == levels.tolist()
        counts, _ = pareto.level_counts(levels, [k[0] for k in keys])
        assert np.array(prob["counts"]).tolist() == counts.tolist()
        matrices.append(counts)
    overall = pareto.rank_algorithms(pareto.sum_counts(matrices))
    for rule in pareto.RULES:
        assert out["overall"]["ranks"][rule] == pytest.approx(overall.ranks[rule].tolist())
    again = client.post("/v1/pareto-rankings", json={"scores": rows, "orientation": {"hv": "max"}})
    assert again.status_code == 200
    assert again.content == r.content
    assert client.get(out["location"]).json() == out


def test_paper_counts_through_the_api(client: TestClient) -> None:
    # one indicator: levels follow the order, so counts are built directly from values
    rows = []
    for alg, per_level in (("a1", (20, 10, 1)), ("a2", (15, 14, 2))):
        run = 0
        for level, n in enumerate(per_level):
            for _ in range(n):
                rows.append(
                    {
                        "problem": "p",
                        "algorithm": alg,
                        "run": run,
                        "indicator": "e",
                        "value": float(level),
                    }
                )
                run += 1
    out = client.post("/v1/pareto-rankings", json={"scores": rows}).json()
    scores = out["overall"]["scores"]
    assert scores["linear"] == [81.0, 75.0]
    assert scores["exponential"] == [25.25, 22.5]
    assert [round(x, 2) for x in scores["adaptive"]] == [1.58, 1.42]
    assert all(out["overall"]["ranks"][rule] == [1.0, 2.0] for rule in pareto.RULES)


def test_csv_and_fronts_inputs(client: TestClient) -> None:
    rows = _scores(seed=1)
    text = "problem,algorithm,run,indicator,value\n" + "".join(
        f"{x['problem']},{x['algorithm']},{x['run']},{x['indicator']},{x['value']!r}\n"
        for x in rows
    )
    by_csv = client.post("/v1/pareto-rankings", json={"csv": text, "orientation": {"hv": "max"}})
    by_json = client.post(
        "/v1/pareto-rankings", json={"scores": rows, "orientation": {"hv": "max"}}
    )
    assert by_csv.json()["id"] == by_json.json()["id"]
    fronts = [
        {
            "problem": "zdt",
            "algorithm": alg,
            "run": r,
            "front": [[0.1 + d, 0.9 + d], [0.5 + d, 0.4 + d], [0.9 + d, 0.1 + d]],
        }
        for alg, d in (("good", 0.0), ("bad", 0.2))
        for r in range(3)
    ]
    refs = {
        "zdt": {
            "reference_front": [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]],
            "reference_point": [2.0, 2.0],
        }
    }
    out = client.post("/v1/pareto-rankings", json={"fronts": fronts, "references": refs}).json()
    assert out["orientation"] == {"hv": "max", "igd_plus": "min"}
    assert out["overall"]["ranks"]["average"] == [1.0, 2.0]


def test_indicators_endpoint(client: TestClient) -> None:
    body = {
        "front": [[0.1, 0.9], [0.4, 0.5], [0.9, 0.1]],
        "reference_front": [[0.0, 1.0], [0.25, 0.5], [0.5, 0.25], [1.0, 0.0]],
        "reference_point": [1.1, 1.1],
        "indicators": ["hv", "igd", "igd_plus"],
    }
    out = client.post("/v1/indicators", json=body).json()
    assert set(out["values"]) == {"hv", "igd", "igd_plus"}
    assert out["settings"]["normalization"] == "none"
    r = client.post("/v1/indicators", json=body | {"reference_point": None})
    assert r.status_code == 422
    assert r.json()["field"] == "reference_point"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "scores"),
        ({"scores": _scores()[:-1]}, "scores"),
        ({"scores": [*_scores(), _scores()[0]]}, f"scores.{len(_scores())}"),
        ({"scores": _scores(algs=1)}, "scores"),
        (
            {"scores": [x for x in _scores() if (x["problem"], x["algorithm"]) != ("p1", "A2")]},
            "scores",
        ),
        ({"scores": _scores(), "orientation": {"nope": "max"}}, "orientation"),
        ({"csv": "a,b\n1,2\n"}, "csv"),
        ({"scores": _scores(), "dominance": "strong"}, "dominance"),
    ],
)
def test_bad_input_names_the_field(client: TestClient, body: dict[str, Any], field: str) -> None:
    r = client.post("/v1/pareto-rankings", json=body)
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field


def test_unknown_ranking_is_404(client: TestClient) -> None:
    assert client.get("/v1/pareto-rankings/pnope").status_code == 404


def test_fresh_user_findings(client: TestClient) -> None:
    huge = {
        "front": [[1e308, 1e308], [1, 2]],
        "reference_point": [1.7e308, 1.7e308],
        "indicators": ["hv"],
    }
    r = client.post("/v1/indicators", json=huge)
    assert r.status_code == 422
    assert r.json()["field"] == "front"
    dominated = {"front": [[1.0, 1.0]], "reference_point": [0.5, 0.5], "indicators": ["hv"]}
    assert client.post("/v1/indicators", json=dominated).json()["warnings"]
    base = "problem,algorithm,run,indicator,value\n"
    for bad in ("p,A,-1,hv,1\np,B,0,hv,2\n", "p\x00,A,0,hv,1\np\x00,B,0,hv,2\n"):
        r = client.post("/v1/pareto-rankings", json={"csv": base + bad})
        assert r.status_code == 422
        assert r.json()["field"] == "csv"
    front = [[0.1, 0.9], [0.9, 0.1]]
    fronts = [
        {"problem": "p", "algorithm": a, "run": r, "front": front}
        for a, r in (("A", 0), ("A", 0), ("B", 0))
    ]
    refs = {"p": {"reference_front": front, "reference_point": [2.0, 2.0]}}
    r = client.post("/v1/pareto-rankings", json={"fronts": fronts, "references": refs})
    assert r.status_code == 422
    assert r.json()["field"] == "fronts.1"
    r = client.post(
        "/v1/pareto-rankings",
        json={"fronts": fronts[1:], "references": {"q": refs["p"]}},
    )
    assert r.status_code == 422
    assert r.json()["field"].startswith("references.p.")
    bad_ref = {"p": {"reference_front": [[0.1, 0.2, 0.3]], "reference_point": [2.0, 2.0]}}
    r = client.post("/v1/pareto-rankings", json={"fronts": fronts[1:], "references": bad_ref})
    assert r.status_code == 422
    assert r.json()["field"] == "references.p.reference_front"
