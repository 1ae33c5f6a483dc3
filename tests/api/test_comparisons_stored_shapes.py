"""GET /v1/comparisons/{id} of answers stored in the pairwise shapes before the compact one
(one object per pair, before issue 15; one list per field, its first step): the same bytes as
the answer stored compact."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import update

from app.models.comparisons import Comparison
from tests.support import pair_rows
from tests.unit.services._reference_compact import pairs_as_columns

VALUES = {
    "classic/sphere/d2": {"A": 0.2, "B": 0.3, "C": 0.1, "D": 0.25},
    "classic/rastrigin/d2": {"A": 2.0, "B": 3.0, "C": 1.0, "D": 2.5},
    "classic/rosenbrock/d2": {"A": 3.0, "B": 1.0, "C": 2.0, "D": 0.5},
}


def _stored(client: TestClient, cid: str) -> dict[str, Any]:
    with client.app.state.sessionmaker() as session:  # type: ignore[attr-defined]
        result: dict[str, Any] = session.get(Comparison, cid).result
        return copy.deepcopy(result)


def _store(client: TestClient, cid: str, result: dict[str, Any]) -> None:
    with client.app.state.sessionmaker() as session:  # type: ignore[attr-defined]
        session.execute(update(Comparison).where(Comparison.id == cid).values(result=result))
        session.commit()


def _as_rows(result: dict[str, Any]) -> dict[str, Any]:
    """The answer with one object per pair, as the client reads the compact families."""
    names = result["algorithms"]
    out = copy.deepcopy(result)
    posthoc = out["relative"]["posthoc"]
    posthoc["pairs"] = pair_rows(posthoc["pairs"], names)
    out["absolute"]["pairwise"] = pair_rows(out["absolute"]["pairwise"], names)
    return out


@pytest.mark.parametrize("options", [{}, {"posthoc": "bonferroni-dunn", "control": "C"}])
def test_answers_stored_in_earlier_shapes_read_as_the_compact_one(
    client: TestClient, options: dict[str, Any]
) -> None:
    rows = [
        {"algorithm": alg, "problem": prob, "run": 0, "value": v}
        for prob, cells in VALUES.items()
        for alg, v in cells.items()
    ]
    r = client.post("/v1/comparisons", json={"results": rows, "values_are": "error", **options})
    assert r.status_code == 201, r.text
    cid = r.json()["id"]
    assert r.json()["absolute"]["status"] == "complete"
    compact_bytes = client.get(f"/v1/comparisons/{cid}").content
    compact = _stored(client, cid)
    old_rows = _as_rows(compact)
    assert isinstance(old_rows["absolute"]["pairwise"], list)
    old_columns = pairs_as_columns(old_rows)  # the dict-based conversion (the oracle)
    assert "order" not in old_columns["absolute"]["pairwise"]
    for old in (old_rows, old_columns):
        _store(client, cid, old)
        assert client.get(f"/v1/comparisons/{cid}").content == compact_bytes
        summary = client.get(f"/v1/comparisons/{cid}?view=summary")
        _store(client, cid, compact)
        assert summary.content == client.get(f"/v1/comparisons/{cid}?view=summary").content
