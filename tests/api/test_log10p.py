"""Every p-value in every answer has its ``log10_`` companion, and it agrees with the p-value.

The walker visits the JSON of every ``/v1/tests/*`` worked example (from the OpenAPI document),
a comparison with relative and absolute ranks, and the cross-machine sign test. A key is a
p-value when it is ``p_value``/``p_adjusted``/``p_matrix``/``p_vs_control`` or starts with
``p_`` or ends with ``_p_value``; ``p_gamma`` is a probability parameter of the cross-machine
model, not a p-value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import mpmath as mp
import pytest
from fastapi.testclient import TestClient

from tests.api.test_comparisons import NIIA_VALUES, _rows
from tests.support import pair_rows

P_KEY = re.compile(r"^p_|_p_value$|^p_value")
NOT_P_VALUES = {"p_gamma"}
TINY = 2.2250738585072014e-308


def _p_keys(obj: Any, where: str = "$") -> Iterator[tuple[str, dict[str, Any], str]]:
    """``(path, containing dict, key)`` of every p-value key in ``obj``."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if P_KEY.search(key) and not key.startswith("log10_") and key not in NOT_P_VALUES:
                yield where, obj, key
            yield from _p_keys(value, f"{where}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from _p_keys(value, f"{where}[{i}]")


def _number(x: Any) -> float:
    return {"-Infinity": -math.inf, "Infinity": math.inf}.get(x, x)  # type: ignore[no-any-return]


def _agree(p: Any, log_p: Any, where: str) -> None:
    if isinstance(p, list):
        assert isinstance(log_p, list), where
        for a, b in zip(p, log_p, strict=True):  # raises on different lengths
            _agree(a, b, where)
        return
    if p is None:
        assert log_p is None, where
        return
    lp = _number(log_p)
    assert lp <= 0.0, (where, lp)
    if p == 1.0:
        assert lp == 0.0, (where, lp)
    elif p >= TINY:
        assert 10.0**lp == pytest.approx(p, rel=1e-9), (where, p, lp)
    else:
        assert math.isfinite(lp) or p == 0.0, (where, p, lp)


def check_log10_companions(answer: Any) -> int:
    """Assert every p-value key has an agreeing ``log10_`` sibling; return how many."""
    count = 0
    for where, parent, key in _p_keys(answer):
        companion = f"log10_{key}"
        assert companion in parent, f"{where}.{key} has no {companion}"
        _agree(parent[key], parent[companion], f"{where}.{key}")
        count += 1
    return count


def _examples(client: TestClient) -> Iterator[tuple[str, dict[str, Any]]]:
    spec = client.get("/openapi.json").json()
    for path, item in spec["paths"].items():
        if not path.startswith("/v1/tests/"):
            continue
        ref = item["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
        for body in spec["components"]["schemas"][ref.rsplit("/", 1)[-1]]["examples"]:
            yield path, body


def test_every_worked_example_gives_each_p_value_its_log10(client: TestClient) -> None:
    seen = set()
    for path, body in _examples(client):
        r = client.post(path, json=body)
        assert r.status_code == 200, (path, r.text)
        found = check_log10_companions(r.json())
        assert found > 0 or path.endswith("/bradley-terry"), path  # strengths, no p-values
        seen.add(path)
    assert len(seen) >= 9


@pytest.mark.parametrize(
    "options",
    [
        {"reduction": "best", "values_are": "error"},
        {"reduction": "best", "values_are": "error", "posthoc": "li", "control": "C"},
        {"reduction": "best", "values_are": "error", "posthoc": "shaffer"},
    ],
)
def test_a_comparison_gives_each_p_value_its_log10(
    client: TestClient, options: dict[str, Any]
) -> None:
    r = client.post("/v1/comparisons", json={"results": _rows(NIIA_VALUES, runs=3), **options})
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["absolute"]["status"] == "complete"
    first = pair_rows(out["absolute"]["pairwise"], out["algorithms"])[0]
    assert first["log10_p_adjusted"] <= 0.0
    assert check_log10_companions(_pairs_expanded(out)) > 0
    again = client.get(out["location"])
    assert again.status_code == 200
    check_log10_companions(_pairs_expanded(again.json()))


def _pairs_expanded(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer with its compact pairwise families as one object per pair (the client's
    view), where each p-value sits beside its log10."""
    names = answer["algorithms"]
    answer["absolute"]["pairwise"] = pair_rows(answer["absolute"]["pairwise"], names)
    posthoc = answer["relative"]["posthoc"]
    posthoc["pairs"] = pair_rows(posthoc["pairs"], names)
    return answer


@pytest.mark.parametrize(
    "body",
    [
        {"n": 20, "k": 3, "p_gamma": 0.1},
        {"n": 2000, "k": 3, "p_gamma": 0.1},
        {"a": [0.5, 1.2, 3.3, 0.8], "b": [0.4, 1.0, 3.3, 0.7], "p_gamma": 0.1},
    ],
)
def test_the_cross_machine_sign_test_gives_its_p_values_logs(
    client: TestClient, body: dict[str, Any]
) -> None:
    r = client.post("/v1/tests/sign-cross-machine", json=body)
    assert r.status_code == 200, r.text
    result = r.json()["result"]
    assert check_log10_companions(result) == 2
    if body.get("n") == 2000:  # both underflow; their logs do not
        assert result["p_value"] == 0.0
        assert -600.0 < result["log10_p_value"] < result["log10_p_value_corrected"] < -150.0


def test_the_walker_notices_a_missing_companion() -> None:
    with pytest.raises(AssertionError, match="has no log10_p_adjusted"):
        check_log10_companions({"pairs": [{"p_adjusted": 0.5}]})
    with pytest.raises(AssertionError):
        check_log10_companions({"p_value": 0.5, "log10_p_value": -1.0})


def test_the_issues_underflow_case_through_http(client: TestClient) -> None:
    """10 algorithms × 500 problems, perfectly concordant: χ² = 4500 on 9 df, p ≈ 1e-966."""
    values = [[float(j) for j in range(10)] for _ in range(500)]
    out = client.post("/v1/tests/friedman", json={"values": values}).json()["result"]
    friedman = out["friedman"]
    assert friedman["p_value"] == 0.0
    with mp.workdps(50):
        expected = float(mp.log10(mp.gammainc(mp.mpf(9) / 2, 2250, mp.inf, regularized=True)))
    assert friedman["log10_p_value"] == pytest.approx(expected, rel=1e-9)
    assert friedman["log10_iman_davenport_p_value"] == "-Infinity"  # F = +inf, documented
    check_log10_companions(out)
    z = 9.0 / math.sqrt(10 * 11 / (6.0 * 500))  # algorithms A1 and A10
    with mp.workdps(50):
        raw = float(mp.log10(mp.erfc(mp.mpf(z) / mp.sqrt(2))))  # 2 Φ(−z)
    for method, shift in [("holm", math.log10(45.0)), ("nemenyi", None)]:
        r = client.post("/v1/tests/posthoc", json={"values": values, "method": method})
        result = r.json()["result"]
        pair = next(p for p in result["pairs"] if (p["i"], p["j"]) == (0, 9))
        assert pair["p_value"] == 0.0
        assert pair["p_adjusted"] == 0.0
        assert pair["log10_p_value"] == pytest.approx(raw, rel=1e-12)
        if shift is not None:
            assert pair["log10_p_adjusted"] == pytest.approx(raw + shift, rel=1e-12)
        else:  # the range of 10 normals beyond √2 z: a little above the raw p, below 45 of them
            assert raw < pair["log10_p_adjusted"] < raw + math.log10(45.0)
        assert result["log10_p_matrix"][0][9] == pair["log10_p_adjusted"]
        check_log10_companions(result)
