"""The papers' conventions through HTTP (issue 13 item 5): named, echoed, and off by default.

References are computed here (scipy.stats.norm.ppf with CD = z·sqrt(k(k+1)/(6N)),
scipy.stats.ranksums, scipy.stats.ks_2samp(method="exact")); the ids and request hashes of
requests that do not name a convention are pinned to the values the code before the options
gave (commit c8de836), so adding the options changed no existing id.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy import stats

from app.config import Settings
from app.schemas.comparisons import ComparisonCreate
from app.services.comparisons import comparison_id, normalized_request
from app.services.provenance import canonical_sha256
from tests.support import pair_rows

_VALUES = [
    [0.12, 0.40, 0.05, 0.33, 0.90],
    [1.10, 2.30, 0.90, 2.00, 3.10],
    [5.50, 4.90, 4.80, 6.20, 9.70],
    [0.02, 0.08, 0.01, 0.05, 0.03],
    [12.0, 15.5, 11.0, 14.0, 20.0],
    [0.70, 0.90, 0.75, 0.65, 1.40],
    [0.30, 0.80, 0.20, 0.50, 0.90],
    [2.00, 2.50, 1.90, 2.20, 3.00],
]


def _post(client: TestClient, path: str, body: dict[str, Any], status: int = 200) -> Any:
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    return r.json()


def _jing_liu_cd(alpha: float, k: int, n: int) -> float:
    return float(stats.norm.ppf(1 - alpha / (2 * k))) * math.sqrt(k * (k + 1) / (6 * n))


def _avg_ranks(values: list[list[float]]) -> np.ndarray:
    return np.apply_along_axis(stats.rankdata, 1, np.asarray(values)).mean(axis=0)


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_posthoc_jing_liu_cd_and_its_cliques(client: TestClient, alpha: float) -> None:
    body = {"values": _VALUES, "method": "nemenyi", "alpha": alpha, "cd_convention": "jing-liu"}
    out = _post(client, "/v1/tests/posthoc", body)
    res = out["result"]
    k, n = 5, len(_VALUES)
    assert res["cd_convention"] == "jing-liu"
    assert out["policies"]["cd_convention"] == "jing-liu"
    assert res["critical_difference"] == pytest.approx(_jing_liu_cd(alpha, k, n), rel=1e-12)
    avg = _avg_ranks(_VALUES)
    cd = res["critical_difference"]
    for pair in res["pairs"]:
        assert pair["significant"] == (abs(avg[pair["i"]] - avg[pair["j"]]) > cd)
    for clique in res["cliques"]:  # a clique spans at most CD
        assert max(avg[clique]) - min(avg[clique]) <= cd
    standard = _post(client, "/v1/tests/posthoc", body | {"cd_convention": "standard"})
    assert standard["result"]["cd_convention"] == "standard"
    assert standard["result"]["critical_difference"] != cd


@pytest.mark.parametrize("alpha", [1e-10, 1e-16, 1e-300])
def test_posthoc_jing_liu_critical_value_at_small_alpha(client: TestClient, alpha: float) -> None:
    # the upper quantile norm.isf(α/(2k)), not norm.ppf(1 − α/(2k)) (∞ at α = 1e-16)
    body = {"values": _VALUES, "method": "nemenyi", "alpha": alpha, "cd_convention": "jing-liu"}
    res = _post(client, "/v1/tests/posthoc", body)["result"]
    k, n = 5, len(_VALUES)
    z = float(stats.norm.isf(alpha / (2 * k)))
    assert res["critical_value"] == pytest.approx(z, rel=1e-15)
    cd = z * math.sqrt(k * (k + 1) / (6 * n))
    assert res["critical_difference"] == pytest.approx(cd, rel=1e-14)


def test_posthoc_jing_liu_refused_without_a_cd(client: TestClient) -> None:
    body = {"values": _VALUES, "method": "holm", "cd_convention": "jing-liu"}
    r = client.post("/v1/tests/posthoc", json=body)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["field"] == "cd_convention"


def test_rank_sum_scipy_ranksums_convention(client: TestClient) -> None:
    rng = np.random.default_rng(5)
    for it in range(25):
        x = rng.integers(0, 6, int(rng.integers(2, 15))).astype(float)
        y = rng.integers(0, 6, int(rng.integers(2, 15))).astype(float) + (it % 3)
        for alternative in ("two-sided", "less", "greater"):
            body = {
                "x": x.tolist(),
                "y": y.tolist(),
                "alternative": alternative,
                "convention": "scipy-ranksums",
            }
            out = _post(client, "/v1/tests/rank-sum", body)
            res = out["result"]["rank_sum"]
            ref = stats.ranksums(x, y, alternative=alternative)
            assert res["p_value"] == pytest.approx(ref.pvalue, rel=1e-12)
            assert res["z"] == pytest.approx(ref.statistic, rel=1e-12, abs=1e-12)
            assert res["method"] == "asymptotic"
            assert res["continuity"] is False
            assert res["tie_correction"] is False
            assert "convention 'scipy-ranksums' implies" in res["method_reason"]
            assert "requested" not in res["method_reason"]
            assert out["policies"]["convention"] == "scipy-ranksums"


@pytest.mark.parametrize("method", [None, "auto", "asymptotic"])
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_rank_sum_scipy_ranksums_all_tied(
    client: TestClient, alternative: str, method: str | None
) -> None:
    x, y = [1, 1, 1], [1, 1, 1]
    body = {"x": x, "y": y, "alternative": alternative, "convention": "scipy-ranksums"}
    res = _post(client, "/v1/tests/rank-sum", body | ({"method": method} if method else {}))
    res = res["result"]["rank_sum"]
    ref = stats.ranksums(x, y, alternative=alternative)
    assert (res["z"], res["p_value"]) == (ref.statistic, ref.pvalue) == (0.0, ref.pvalue)
    assert res["method"] == "asymptotic"
    assert res["method_reason"].startswith("convention 'scipy-ranksums' implies")
    assert res["degenerate"] is True
    assert "scipy.stats.ranksums" in res["reason"]
    standard = _post(client, "/v1/tests/rank-sum", {"x": x, "y": y, "alternative": alternative})
    assert standard["result"]["rank_sum"]["p_value"] == 1.0


def test_rank_sum_scipy_ranksums_refuses_exact(client: TestClient) -> None:
    body = {"x": [1, 2, 3], "y": [4, 5, 6], "method": "exact", "convention": "scipy-ranksums"}
    r = client.post("/v1/tests/rank-sum", json=body)
    assert r.status_code == 422
    assert r.json()["field"] == "convention"


def test_ks_scipy_exact_convention_flags_ties(client: TestClient) -> None:
    x, y = [1, 1.01, 3, 4], [1.01, 0.5, 0.25]
    out = _post(client, "/v1/tests/ks", {"x": x, "y": y, "convention": "scipy-exact"})
    res = out["result"]["ks"]
    assert res["p_value"] == pytest.approx(stats.ks_2samp(x, y, method="exact").pvalue, rel=1e-12)
    assert res["ties_ignored"] is True
    assert res["ties"] == "ignore"
    assert any("not exact" in w for w in out["warnings"])
    default = _post(client, "/v1/tests/ks", {"x": x, "y": y})
    assert default["result"]["ks"]["p_value"] == pytest.approx(12 / 35, rel=1e-12)
    assert default["result"]["ks"]["ties_ignored"] is False
    assert default["warnings"] == []
    untied = _post(
        client, "/v1/tests/ks", {"x": [1, 2], "y": [3, 4, 5], "convention": "scipy-exact"}
    )
    assert untied["result"]["ks"]["ties_ignored"] is False
    assert untied["warnings"] == []
    assert untied["result"]["ks"]["p_value"] == pytest.approx(
        stats.ks_2samp([1, 2], [3, 4, 5], method="exact").pvalue, rel=1e-12
    )


def test_request_hashes_without_a_convention_are_unchanged(client: TestClient) -> None:
    # pinned: canonical_sha256 of these requests under c8de836 (before the options existed)
    pins = {
        ("posthoc", "values"): "9a931464526b4b9f78eff4be23ce990190824525f3bea1224f48677bc781c13d",
        ("rank-sum", "x"): "0f1e035a0955c080c8c39f134f26240461d76cc94c1151c6d05d937f74a80e3e",
        ("ks", "x"): "0f1e035a0955c080c8c39f134f26240461d76cc94c1151c6d05d937f74a80e3e",
    }
    bodies = {
        "posthoc": {"values": [[1, 2, 3], [2, 1, 3], [1, 3, 2]]},
        "rank-sum": {"x": [1, 2, 3], "y": [4, 5, 6]},
        "ks": {"x": [1, 2, 3], "y": [4, 5, 6]},
    }
    for (path, _), pin in pins.items():
        out = _post(client, f"/v1/tests/{path}", bodies[path])
        assert out["provenance"]["request_sha256"] == pin
        field = "cd_convention" if path == "posthoc" else "convention"
        explicit = _post(client, f"/v1/tests/{path}", bodies[path] | {field: "standard"})
        assert explicit["provenance"]["request_sha256"] == pin
        named = {"posthoc": "jing-liu", "rank-sum": "scipy-ranksums", "ks": "scipy-exact"}[path]
        other = _post(client, f"/v1/tests/{path}", bodies[path] | {field: named})
        assert other["provenance"]["request_sha256"] != pin


_ROWS = [
    {"algorithm": a, "problem": p, "run": 0, "value": v}
    for a, p, v in [
        ("A", "p1", 1.0),
        ("B", "p1", 2.0),
        ("C", "p1", 3.0),
        ("A", "p2", 1.5),
        ("B", "p2", 1.0),
        ("C", "p2", 4.0),
        ("A", "p3", 0.2),
        ("B", "p3", 0.9),
        ("C", "p3", 0.7),
    ]
]


def test_comparison_id_without_a_convention_is_unchanged() -> None:
    # pinned under c8de836 with Settings(database_url="sqlite://") and the same request
    settings = Settings(database_url="sqlite://")
    for extra in ({}, {"cd_convention": "standard"}):
        body = ComparisonCreate.model_validate({"results": _ROWS, "posthoc": "nemenyi"} | extra)
        payload, _, _ = normalized_request(body, settings)
        assert comparison_id(canonical_sha256(payload)) == "c955a0ce9468ed7cbdd76fb7"
    body = ComparisonCreate.model_validate({"results": _ROWS, "cd_convention": "jing-liu"})
    payload, _, _ = normalized_request(body, settings)
    assert comparison_id(canonical_sha256(payload)) != "c955a0ce9468ed7cbdd76fb7"


def _comparison_values(n: int, k: int, seed: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    vals = rng.random((n, k)) + np.linspace(0.0, 1.2, k)
    return [
        {"algorithm": f"A{j}", "problem": f"p{i}", "run": 0, "value": float(vals[i, j])}
        for i in range(n)
        for j in range(k)
    ]


def test_comparison_jing_liu_posthoc_and_cd_diagram(client: TestClient) -> None:
    rows = _comparison_values(14, 6, seed=2)
    out = _post(client, "/v1/comparisons", {"results": rows, "cd_convention": "jing-liu"}, 201)
    post = out["relative"]["posthoc"]
    assert post["cd_convention"] == "jing-liu"
    assert out["options"]["cd_convention"] == "jing-liu"
    assert post["critical_difference"] == pytest.approx(_jing_liu_cd(0.05, 6, 14), rel=1e-12)
    avg = np.asarray(out["relative"]["average_ranks"])
    for pair in pair_rows(post["pairs"]):
        assert pair["significant"] == (
            abs(avg[pair["i"]] - avg[pair["j"]]) > post["critical_difference"]
        )
    standard = _post(client, "/v1/comparisons", {"results": rows}, 201)
    assert standard["id"] != out["id"]
    assert standard["relative"]["posthoc"]["cd_convention"] == "standard"
    assert "cd_convention" not in standard["options"]
    svg = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg")
    assert svg.status_code == 200
    assert b"Jing &amp; Liu" in svg.content
    holm = client.post(
        "/v1/comparisons", json={"results": rows, "posthoc": "holm", "cd_convention": "jing-liu"}
    )
    assert holm.status_code == 422
    assert holm.json()["field"] == "cd_convention"
