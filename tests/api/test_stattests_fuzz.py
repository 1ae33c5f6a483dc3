"""Bounded fuzzing of POST /v1/tests/* on the ASGI app (no network): never a 500, p in [0, 1]."""

from __future__ import annotations

import math
from typing import Any

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

NUMBERS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324, 1.0, 1.0 + 2**-52]),
    st.integers(-(10**6), 10**6),
)
CELLS = st.one_of(NUMBERS, st.none())
SAMPLE = st.lists(CELLS, min_size=0, max_size=12)
MATRIX = st.integers(1, 6).flatmap(
    lambda k: st.lists(st.lists(CELLS, min_size=k, max_size=k), min_size=0, max_size=8)
)
OPTIONS = st.fixed_dictionaries(
    {},
    optional={
        "missing": st.sampled_from(["reject", "drop", "drop-problem", "worst-rank", "par-k"]),
        "alternative": st.sampled_from(["two-sided", "less", "greater"]),
    },
)


def _p_values(obj: Any, key: str = "") -> list[float]:
    if isinstance(obj, dict):
        return [p for k, v in obj.items() for p in _p_values(v, k)]
    if isinstance(obj, list):
        return [p for v in obj for p in _p_values(v, key)]
    if key.startswith("p_") and isinstance(obj, float):
        return [obj]
    return []


def _check(client: TestClient, path: str, body: dict[str, Any]) -> None:
    r = client.post(f"/v1/tests/{path}", json=body)
    assert r.status_code < 500, (path, body, r.text)
    if r.status_code == 200:
        for p in _p_values(r.json()):
            assert 0.0 <= p <= 1.0, (path, body, p)
            assert not math.isnan(p)
    else:
        assert r.json()["field"], (path, body, r.text)


# the stateless endpoints keep nothing between examples, so one client serves them all
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(x=SAMPLE, y=SAMPLE, options=OPTIONS, path=st.sampled_from(["rank-sum", "ks", "permutation"]))
def test_two_sample_tests_never_fail(
    client: TestClient, x: list, y: list, options: dict, path: str
) -> None:
    body = {"x": x, "y": y} | options
    if body.get("missing") not in (None, "reject", "drop"):
        body.pop("missing")
    if path == "permutation":
        body["n_resamples"] = 200
    _check(client, path, body)


# the stateless endpoints keep nothing between examples, so one client serves them all
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    x=SAMPLE,
    y=st.one_of(st.none(), SAMPLE),
    options=OPTIONS,
    path=st.sampled_from(["wilcoxon", "sign"]),
)
def test_paired_tests_never_fail(
    client: TestClient, x: list, y: list | None, options: dict, path: str
) -> None:
    body: dict[str, Any] = {"x": x} | options
    if y is not None:
        body["y"] = y
    if body.get("missing") not in (None, "reject", "drop"):
        body.pop("missing")
    _check(client, path, body)


# the stateless endpoints keep nothing between examples, so one client serves them all
@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=MATRIX,
    options=OPTIONS,
    path=st.sampled_from(["friedman", "posthoc", "bradley-terry"]),
    method=st.sampled_from(["nemenyi", "holm", "shaffer", "finner", "hommel"]),
)
def test_matrix_tests_never_fail(
    client: TestClient, values: list, options: dict, path: str, method: str
) -> None:
    body: dict[str, Any] = {"values": values} | options
    body.pop("alternative", None)
    if body.get("missing") == "drop":
        body.pop("missing")
    if path == "posthoc":
        body["method"] = method
    _check(client, path, body)
