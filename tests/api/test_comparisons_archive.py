"""POST /v1/comparisons with result_sets: my runs against archived sets in one request."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.domain.functions import get_function
from tests.archive_support import store_set

P = ["classic/sphere/d2", "bbob/f1/i1/d2", "bbob/f1/i2/d2"]


def _sm(client: TestClient) -> sessionmaker[Session]:
    return client.app.state.sessionmaker  # type: ignore[attr-defined, no-any-return]


def _mine(values: dict[str, list[float]]) -> list[dict[str, Any]]:
    return [
        {"algorithm": "mine", "problem": p, "run": i, "value": v}
        for p, runs in values.items()
        for i, v in enumerate(runs)
    ]


def test_archived_sets_join_as_algorithms_named_by_label(client: TestClient) -> None:
    sm = _sm(client)
    de = store_set(sm, "DE", {p: [0.01, 0.02] for p in P}, version="1.0", values_are="error")
    f_runs = {p: [get_function(p).f_opt + 0.5] for p in P}  # f values: converted through f*
    rs = store_set(sm, "RS", f_runs)
    rs2 = store_set(sm, "RS", {p: [get_function(p).f_opt + 0.7] for p in P})
    store_set(sm, "other", {"classic/rastrigin/d2": [1.0]})  # not on these problems: no rows
    body = {
        "results": _mine({p: [0.001, 0.002] for p in P}),
        "values_are": "error",
        "budget": 1000,
        "result_sets": [de, rs, rs2],
    }
    r = client.post("/v1/comparisons", json=body)
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["algorithms"] == ["mine", "DE 1.0", f"RS [{rs}]", f"RS [{rs2}]"]
    matrix = out["matrix"]  # mean per cell, problems x algorithms
    assert matrix[0][1] == pytest.approx(0.015)
    assert matrix[0][2] == pytest.approx(0.5, rel=1e-12)
    assert out["options"]["result_sets"] == [de, rs, rs2]
    # the same request again is the same comparison
    again = client.post("/v1/comparisons", json=body)
    assert again.status_code == 200
    assert again.json()["id"] == out["id"]


def test_the_same_rows_sent_by_hand_give_the_same_ranks(client: TestClient) -> None:
    sm = _sm(client)
    de = store_set(sm, "DE", {p: [0.01, 0.02] for p in P}, values_are="error")
    mine = _mine({p: [0.001, 0.002] for p in P})
    by_hand = mine + [
        {"algorithm": "DE", "problem": p, "run": i, "value": v}
        for p in P
        for i, v in enumerate([0.01, 0.02])
    ]
    common = {"values_are": "error", "budget": 1000}
    a = client.post("/v1/comparisons", json={"results": mine, "result_sets": [de], **common})
    b = client.post("/v1/comparisons", json={"results": by_hand, **common})
    assert a.json()["absolute"]["log10_v"] == b.json()["absolute"]["log10_v"]
    assert a.json()["relative"]["average_ranks"] == b.json()["relative"]["average_ranks"]


@pytest.mark.parametrize(
    ("make", "extra", "field"),
    [
        (None, {}, "result_sets.1"),  # unknown id
        ("short", {}, "result_sets.0"),  # used 10 evaluations, the comparison's budget is 1000
        ("published", {}, "result_sets.0"),
        ("twice", {}, "result_sets.1"),
        ("elsewhere", {}, "result_sets.0"),
    ],
)
def test_sets_that_cannot_join_are_422_naming_the_index(
    client: TestClient, make: str | None, extra: dict[str, Any], field: str
) -> None:
    sm = _sm(client)
    if make == "short":
        sid = store_set(sm, "S", {p: [0.1] for p in P}, values_are="error", budget=10)
    elif make == "published":
        sid = store_set(
            sm,
            "C",
            {p: [0.1] for p in P},
            values_are="error",
            value_aggregate="mean",
            value_runs=25,
        )
    elif make == "elsewhere":  # no run on the request's problems
        sid = store_set(sm, "E", {"classic/rastrigin/d2": [1.0]})
    else:
        sid = store_set(sm, "ok", {p: [0.1] for p in P}, values_are="error")
    ids = {None: [sid, "rnope"], "twice": [sid, sid]}.get(make, [sid])
    r = client.post(
        "/v1/comparisons",
        json={
            "results": _mine({p: [0.001] for p in P}),
            "values_are": "error",
            "budget": 1000,
            "result_sets": ids,
            **extra,
        },
    )
    assert r.status_code == 422, r.text
    assert r.json()["field"] == field


def test_a_set_posted_to_the_archive_joins_a_comparison(client: TestClient) -> None:
    rows = [
        {"function_id": p, "run": i, "value": v, "budget": 1000}
        for p in P
        for i, v in enumerate([0.01, 0.02])
    ]
    made = client.post(
        "/v1/result-sets",
        json={"name": "DE", "version": "1.0", "values_are": "error", "results": rows},
    )
    assert made.status_code == 201, made.text
    body = {
        "results": _mine({p: [0.001, 0.002] for p in P}),
        "values_are": "error",
        "budget": 1000,
        "result_sets": [made.json()["id"]],
    }
    out = client.post("/v1/comparisons", json=body).json()
    assert out["algorithms"] == ["mine", "DE 1.0"]
    assert out["absolute"]["status"] == "complete"
