"""Issue 13 item 6 over HTTP: dirty reference fronts, underflowing HV, too few problems.

References computed here: moocore's IGD / IGD+ on the reference front cleaned by hand, the exact
log10 of a 2-D hypervolume (a product of powers of ten), and the standard Nemenyi CD with
``scipy.stats.studentized_range`` (df = ∞).
"""

from __future__ import annotations

import math
from typing import Any

import moocore
import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy import stats


def _post(client: TestClient, path: str, body: dict[str, Any], status: int = 200) -> Any:
    r = client.post(path, json=body)
    assert r.status_code == status, r.text
    return r.json()


def test_indicators_filter_the_reference_front_and_say_so(client: TestClient) -> None:
    clean = [[0.0, 1.0], [0.25, 0.5], [0.5, 0.25], [1.0, 0.0]]
    dirty = [*clean, [0.25, 0.5], [0.0, 1.0], [0.6, 0.6], [1.0, 1.0], [1.0, 1.0]]
    front = [[0.1, 0.9], [0.4, 0.5], [0.9, 0.1]]
    out = _post(
        client,
        "/v1/indicators",
        {"front": front, "reference_front": dirty, "indicators": ["igd", "igd_plus"]},
    )
    f, z = np.asarray(front), np.asarray(clean)
    assert out["values"]["igd"] == pytest.approx(float(moocore.igd(f, ref=z)), rel=1e-12)
    assert out["values"]["igd_plus"] == pytest.approx(float(moocore.igd_plus(f, ref=z)), rel=1e-12)
    assert out["reference_front_filter"] == {
        "n_given": 9,
        "duplicates_removed": 3,
        "dominated_removed": 2,
        "n_used": 4,
    }
    assert any("3 repeated and 2 dominated" in w for w in out["warnings"])
    tidy = _post(
        client, "/v1/indicators", {"front": front, "reference_front": clean, "indicators": ["igd"]}
    )
    assert tidy["reference_front_filter"]["n_used"] == 4
    assert not any("repeated" in w for w in tidy["warnings"])


def test_indicators_hv_underflow_has_its_log10(client: TestClient) -> None:
    body = {"front": [[-1e-200, -2e-200]], "reference_point": [0.0, 0.0], "indicators": ["hv"]}
    out = _post(client, "/v1/indicators", body)
    want = math.log10(2.0) - 400.0  # HV = 1e-200 · 2e-200
    assert out["values"]["hv"] == 0.0
    assert out["log10_hv"] == pytest.approx(want, abs=1e-12)
    w = out["hv_underflow"]
    assert w["kind"] == "hv-underflow"
    assert w["log10_hv"] == pytest.approx(want, abs=1e-12)
    assert w["points_counted"] == 1
    assert w["message"] in out["warnings"]
    normal = _post(client, "/v1/indicators", body | {"front": [[-0.5, -0.25]]})
    assert normal["hv_underflow"] is None
    assert normal["log10_hv"] == pytest.approx(math.log10(0.125), abs=1e-15)


def _nemenyi_cd(alpha: float, k: int, n: int) -> float:
    q = float(stats.studentized_range.isf(alpha, k, math.inf))
    return q / math.sqrt(2) * math.sqrt(k * (k + 1) / (6 * n))


def _needed(alpha: float, k: int) -> int:
    n = 1
    while _nemenyi_cd(alpha, k, n) > (k - 1) / 2:
        n += 1
    return n


def _matrix(n: int, k: int, seed: int) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    return (rng.random((n, k)) + np.linspace(0.0, 1.0, k)).tolist()


def test_posthoc_warns_on_three_problems_and_eleven_algorithms(client: TestClient) -> None:
    out = _post(client, "/v1/tests/posthoc", {"values": _matrix(3, 11, 0), "method": "nemenyi"})
    low = out["result"]["low_power"]
    cd = _nemenyi_cd(0.05, 11, 3)
    needed = _needed(0.05, 11)
    assert low["kind"] == "low-power"
    assert (low["n_problems"], low["n_algorithms"], low["alpha"]) == (3, 11, 0.05)
    assert low["critical_difference"] == pytest.approx(cd, rel=1e-9)
    assert out["result"]["critical_difference"] == pytest.approx(cd, rel=1e-9)
    assert low["threshold"] == 5.0
    assert low["n_needed"] == needed == 10
    assert low["message"] in out["warnings"]
    for part in ("N = 3", "k = 11", "alpha = 0.05", "CD = 8.72", "N >= 10"):
        assert part in low["message"]
    many = _post(client, "/v1/tests/posthoc", {"values": _matrix(40, 11, 1), "method": "holm"})
    assert many["result"]["low_power"] is None
    assert many["warnings"] == []


def test_comparison_warns_on_too_few_problems(client: TestClient) -> None:
    rows = [
        {"algorithm": f"A{j}", "problem": f"p{i}", "run": 0, "value": v}
        for i, row in enumerate(_matrix(3, 11, 2))
        for j, v in enumerate(row)
    ]
    out = _post(client, "/v1/comparisons", {"results": rows}, 201)
    low = out["relative"]["posthoc"]["low_power"]
    assert low["n_needed"] == _needed(0.05, 11)
    assert any(w["message"] == low["message"] and w["problems"] == [] for w in out["warnings"])
    rows = [
        {"algorithm": f"A{j}", "problem": f"p{i}", "run": 0, "value": v}
        for i, row in enumerate(_matrix(12, 4, 3))
        for j, v in enumerate(row)
    ]
    enough = _post(client, "/v1/comparisons", {"results": rows}, 201)
    assert enough["relative"]["posthoc"]["low_power"] is None
    assert not any("too few problems" in w["message"] for w in enough["warnings"])
