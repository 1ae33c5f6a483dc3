"""POST /v1/tests/*: the issue's reference values through HTTP, and bad input as problems."""

from __future__ import annotations

import math
from typing import Any

import pytest
from fastapi.testclient import TestClient

CONCORDANT = [[v + 0.01 * j for v in (-5.2, -6.0, -2.1, -1.7, -6.4)] for j in range(1, 11)]


def _ok(client: TestClient, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = client.post(f"/v1/tests/{path}", json=body)
    assert r.status_code == 200, r.text
    out = r.json()
    assert out["provenance"]["request_sha256"]
    assert {"numpy", "scipy", "statsmodels"} <= set(out["provenance"]["versions"])
    return out


def _problem(client: TestClient, path: str, body: Any, status: int = 422) -> dict[str, Any]:
    r = client.post(f"/v1/tests/{path}", json=body)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    return r.json()


def test_friedman_perfect_concordance_gives_infinite_f_not_nan(client: TestClient) -> None:
    out = _ok(client, "friedman", {"values": CONCORDANT})
    fr = out["result"]["friedman"]
    assert fr["statistic"] == pytest.approx(40.0)
    assert fr["p_value"] == pytest.approx(4.3284e-8, rel=1e-3)
    assert fr["iman_davenport_statistic"] == "Infinity"
    assert fr["iman_davenport_p_value"] == 0.0
    assert fr["degenerate"] is True
    assert fr["reason"]
    assert "NaN" not in str(out)


def test_nemenyi_cd_is_q_over_sqrt2(client: TestClient) -> None:
    rows = [[float((i + j) % 5) for j in range(5)] for i in range(10)]
    out = _ok(client, "posthoc", {"values": rows, "method": "nemenyi", "alpha": 0.05})
    assert out["result"]["critical_difference"] == pytest.approx(1.929, abs=5e-4)


def test_posthoc_on_concordant_data_never_joins_significant_pairs(client: TestClient) -> None:
    out = _ok(client, "posthoc", {"values": CONCORDANT, "method": "nemenyi"})
    res = out["result"]
    significant = {(p["i"], p["j"]) for p in res["pairs"] if p["significant"]}
    for clique in res["cliques"]:
        for a in clique:
            for b in clique:
                assert (min(a, b), max(a, b)) not in significant


def test_control_methods_need_a_known_control(client: TestClient) -> None:
    body = {"values": CONCORDANT, "method": "bonferroni-dunn"}
    assert _problem(client, "posthoc", body)["field"] == "control"
    body = {"values": CONCORDANT, "method": "holm", "control": "nobody"}
    assert _problem(client, "posthoc", body)["field"] == "control"
    named = {"values": CONCORDANT, "algorithms": list("ABCDE"), "method": "li", "control": "C"}
    out = _ok(client, "posthoc", named)
    assert out["result"]["comparison"] == "vs-control"


@pytest.mark.parametrize("zero_method", ["pratt", "wilcox", "zsplit"])
def test_all_zero_differences_are_degenerate_p_one(client: TestClient, zero_method: str) -> None:
    x = [1.0, 2.0, 3.0, 4.0]
    out = _ok(client, "wilcoxon", {"x": x, "y": x, "zero_method": zero_method})
    res = out["result"]
    assert res["p_value"] == 1.0
    assert res["n_effective"] == 0
    assert res["degenerate"] is True
    sign = _ok(client, "sign", {"x": x, "y": x})["result"]
    assert sign["p_value"] == 1.0
    assert sign["degenerate"] is True


def test_signed_rank_exact_references(client: TestClient) -> None:
    d = [-1, -2, 3, 4, -5, 6, 7, 8, -9, -10, 11, -12]
    assert _ok(client, "wilcoxon", {"x": d})["result"]["p_value"] == 1.0
    res = _ok(client, "wilcoxon", {"x": list(range(1, 56))})["result"]
    assert res["method"] == "exact"
    assert res["p_value"] == pytest.approx(2 / 2**55, rel=1e-9)


def test_sign_test_references(client: TestClient) -> None:
    res = _ok(client, "sign", {"x": [1, 1, 1, 1, 1], "y": [2, 2, 2, 2, 2]})["result"]
    assert res["p_value"] == pytest.approx(0.0625, rel=1e-12)
    res = _ok(client, "sign", {"x": [0.0] * 60, "y": [1.0] * 60})["result"]
    assert res["p_value"] == pytest.approx(2 / 2**60, rel=1e-9)


def test_rank_sum_exact_with_ties(client: TestClient) -> None:
    x = list(range(1, 11))
    y = list(range(2, 25, 2))
    less = _ok(client, "rank-sum", {"x": x, "y": y, "alternative": "less"})["result"]
    assert less["rank_sum"]["p_value"] == pytest.approx(0.0060017, abs=5e-7)
    assert less["rank_sum"]["method"] == "exact"
    assert 0.0 <= less["a12"]["a12"] <= 0.5
    two = _ok(client, "rank-sum", {"x": x, "y": y})["result"]["rank_sum"]
    assert two["p_value"] == pytest.approx(0.011889, abs=5e-6)
    mirrored = _ok(client, "rank-sum", {"x": y, "y": x, "alternative": "greater"})["result"]
    assert mirrored["rank_sum"]["p_value"] == pytest.approx(less["rank_sum"]["p_value"])


@pytest.mark.parametrize(
    ("x", "y", "p"),
    [
        ([0], [1], 1.0),
        ([0], [1, 2], 2 / 3),
        ([1, 2], [3, 4, 5, 6], 2 / 15),
        ([1, 1.01, 3, 4], [1.01, 0.5, 0.25], 12 / 35),
    ],
)
def test_ks_exact_references(client: TestClient, x: list[float], y: list[float], p: float) -> None:
    res = _ok(client, "ks", {"x": x, "y": y})["result"]["ks"]
    assert res["p_value"] == pytest.approx(p, rel=1e-9)
    assert res["method"] == "exact"


def test_permutation_references(client: TestClient) -> None:
    body = {"x": [1, 2, 3], "y": [4, 5, 6], "statistic": "mean", "method": "exact"}
    assert _ok(client, "permutation", body)["result"]["p_value"] == pytest.approx(0.1)
    body = {"x": [0.1, 0.3, 0.5], "y": [0.2, 0.4, 0.6], "statistic": "mean", "method": "exact"}
    assert _ok(client, "permutation", body)["result"]["p_value"] == pytest.approx(14 / 20)
    body = {"x": [76, 72], "y": [70, 75], "statistic": "mean", "alternative": "greater"}
    res = _ok(client, "permutation", body)["result"]
    assert res["statistic"] == pytest.approx(1.5)
    assert res["p_value"] == pytest.approx(2 / 6)


def test_monte_carlo_permutation_is_seeded_and_never_zero(client: TestClient) -> None:
    body = {
        "x": [1, 2, 3, 4, 5],
        "y": [6, 7, 8, 9, 10],
        "statistic": "mean",
        "method": "monte_carlo",
        "n_resamples": 9,
        "seed": 3,
    }
    first = client.post("/v1/tests/permutation", json=body)
    again = client.post("/v1/tests/permutation", json=body)
    assert first.content == again.content  # identical requests, identical bytes
    res = first.json()["result"]
    assert res["p_value"] >= 0.1
    assert res["method"] == "monte_carlo"
    assert res["p_value_paper"] is not None


def test_missing_values_follow_the_declared_policy(client: TestClient) -> None:
    body = {"x": [1.0, None, 3.0], "y": [4.0, 5.0, 6.0]}
    prob = _problem(client, "rank-sum", body)
    assert prob["field"] == "x.1"
    out = _ok(client, "rank-sum", body | {"missing": "drop"})
    assert out["policies"]["dropped_x"] == [1]
    prob = _problem(client, "friedman", {"values": [[1.0, None], [2.0, 1.0], [1.0, 2.0]]})
    assert prob["field"] == "values.0.1"


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("friedman", {"values": [[1.0, 2.0], [1.0]]}, "values.1"),
        ("friedman", {"values": [[1.0], [2.0]]}, "values.0"),
        ("friedman", {"values": [[1.0, 2.0, 3.0]]}, "values"),
        ("friedman", {"values": [[1.0, 2.0], [2.0, 1.0]], "algorithms": ["A"]}, "algorithms"),
        ("friedman", {"values": [[1.0, 2.0], [2.0, 1.0]], "algorithms": ["A", "A"]}, "algorithms"),
        ("friedman", {"values": []}, "values"),
        ("wilcoxon", {"x": [1.0, 2.0], "y": [1.0]}, "y"),
        ("wilcoxon", {"x": [1.0], "zero_method": "none"}, "zero_method"),
        ("rank-sum", {"x": [], "y": [1.0]}, "x"),
        ("permutation", {"x": [1.0], "y": [2.0], "n_resamples": 10**9}, "n_resamples"),
        ("permutation", {"x": [1.0], "y": [2.0], "statistic": "mode"}, "statistic"),
        ("ks", {"x": [1.0], "y": [2.0], "extra": 1}, "extra"),
    ],
)
def test_bad_input_names_the_field(
    client: TestClient, path: str, body: dict[str, Any], field: str
) -> None:
    r = client.post(f"/v1/tests/{path}", json=body)
    assert 400 <= r.status_code < 500, r.text
    assert r.json()["field"] == field


def test_nan_and_infinity_literals_are_refused(client: TestClient) -> None:
    for literal in ("NaN", "Infinity", "-Infinity"):
        r = client.post(
            "/v1/tests/rank-sum",
            content=f'{{"x": [1.0, {literal}], "y": [2.0]}}',
            headers={"content-type": "application/json"},
        )
        assert r.status_code == 422, r.text
        assert r.json()["field"] == "x.1"


def test_sizes_over_the_limits_are_422(client: TestClient, settings: Any) -> None:
    n = settings.max_sample_size + 1
    r = client.post("/v1/tests/sign", json={"x": [1.0] * n})
    assert r.status_code == 422
    assert r.json()["field"] == "x"


def test_every_p_value_is_a_probability(client: TestClient) -> None:
    x, y = [3.1, 0.2, 5.5, 1.0, 2.2, 9.0], [1.1, 0.3, 4.0, 1.5, 2.0, 8.0]
    for path, body in [
        ("wilcoxon", {"x": x, "y": y}),
        ("sign", {"x": x, "y": y}),
        ("rank-sum", {"x": x, "y": y}),
        ("ks", {"x": x, "y": y}),
        ("permutation", {"x": x, "y": y}),
    ]:
        text = client.post(f"/v1/tests/{path}", json=body).text
        for key, value in _walk(client.post(f"/v1/tests/{path}", json=body).json()):
            if key.startswith("p_value") and value is not None:
                assert 0.0 <= value <= 1.0, (path, key, value, text)
                assert not math.isnan(value)


def _walk(obj: Any, key: str = ""):  # type: ignore[no-untyped-def]
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _walk(v, k)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v, key)
    else:
        yield key, obj


def test_bradley_terry_strengths_at_zero_and_infinity(client: TestClient) -> None:
    rows = [[1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [1.0, 2.0, 3.0], [1.0, 3.0, 2.0]]
    out = _ok(client, "bradley-terry", {"values": rows, "algorithms": ["A", "B", "C"]})
    model = out["result"]["model"]
    assert model["strengths"][0] == "Infinity"  # A never loses
    assert model["degenerate"] is True
    assert model["reason"]
    finite = [s for s in model["strengths"] if isinstance(s, float)]
    assert finite == pytest.approx([1.0, 1.0])  # B and C split: geometric mean 1
    assert out["result"]["wins"][0] == [0.0, 4.0, 4.0]


@pytest.mark.parametrize("path", ["rank-sum", "ks", "permutation"])
def test_constant_samples_are_degenerate_not_errors(client: TestClient, path: str) -> None:
    out = _ok(client, path, {"x": [2.0, 2.0, 2.0], "y": [2.0, 2.0]})
    res = out["result"]
    res = res.get("rank_sum") or res.get("ks") or res
    assert res["p_value"] == 1.0
    assert res["degenerate"] is True


def test_value_based_tests_scale_huge_values_instead_of_overflowing(client: TestClient) -> None:
    rows = [[1e308, 1.7e308, -1.7e308], [1.7e308, -1e308, 1e308], [1.0, 2.0, 3.0]]
    big = _ok(client, "friedman", {"values": rows})["result"]
    scaled = [[v / 2.0**600 for v in row] for row in rows]
    small = _ok(client, "friedman", {"values": scaled})["result"]
    for test in ("friedman", "aligned_ranks", "quade"):
        assert big[test]["statistic"] == pytest.approx(small[test]["statistic"])
        assert 0.0 <= big[test]["p_value"] <= 1.0


def test_value_based_tests_step_aside_for_infinite_cells(client: TestClient) -> None:
    rows = [[1.0, None, 3.0], [2.0, 1.0, 3.0], [1.0, 2.0, 3.0]]
    out = _ok(client, "friedman", {"values": rows, "missing": "worst-rank"})["result"]
    assert out["aligned_ranks"]["computed"] is False
    assert out["quade"]["reason"]


def test_permutation_on_large_samples_reports_the_split_count_in_log10(
    client: TestClient,
) -> None:
    x = list(range(1000))
    body = {"x": x, "y": [v + 0.5 for v in x], "statistic": "mean", "n_resamples": 100}
    res = _ok(client, "permutation", body)["result"]
    assert res["method"] == "monte_carlo"
    assert res["n_splits"] is None
    assert res["log10_n_splits"] == pytest.approx(600.311, abs=1e-3)  # C(2000, 1000)
    body["method"] = "exact"
    r = client.post("/v1/tests/permutation", json=body)
    assert r.status_code == 409
    assert r.json()["field"] == "method"


def test_openapi_shows_each_tests_real_answer_to_its_example(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    paths = [p for p in spec["paths"] if p.startswith("/v1/tests/")]
    assert len(paths) == 9  # 8 tests + the cross-machine sign test
    for path in paths:
        op = spec["paths"][path]["post"]
        request = op["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        model = spec["components"]["schemas"][request.rsplit("/", 1)[-1]]
        body = model["examples"][0]
        shown = op["responses"]["200"]["content"]["application/json"]["example"]
        assert client.post(path, json=body).json() == shown, path
