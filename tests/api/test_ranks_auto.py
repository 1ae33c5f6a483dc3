"""``regions='auto'`` queues the nested-region ladder that values below the domain table's
samples need, answers meanwhile with provisional ranks (no lower end), and with the ladder's
ranks once it is ready; comparisons stay partial until then (docs/METHODS.md, regions)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.schemas.ranks import RankResponse
from app.services import tables
from app.services.table_cache import LadderCaches
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

FN = "classic/ellipsoid/d2"  # x* known, no atom, no analytic form: ladders apply
DEEP = 1e-9  # an error far below any of the 2^12 samples of the domain table
VALUES = [DEEP, 0.0, 100.0, 1e4]  # deep, at f* (exact), and two within the samples


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return api_settings(tmp_path, nested_levels=6, nested_factor=4.0)


def _post(client: TestClient, headers: dict[str, str] | None = None, **body: Any) -> Any:
    payload = {"function_id": FN, "values": VALUES, "values_are": "error"} | body
    r = client.post("/v1/absolute-ranks", json=payload, headers=headers or {})
    assert r.status_code == 200, r.text
    RankResponse.model_validate(r.json())  # the service's JSON is the declared model
    return r


def _ranks(client: TestClient, **body: Any) -> dict[str, Any]:
    return dict(_post(client, **body).json())


def _y1(settings: Settings, client: TestClient) -> float:
    default = tables.table_id_for(tables.spec_hash(tables.table_spec(settings, function_id=FN)))
    state = client.app.state  # type: ignore[attr-defined]
    _, data = tables.load_table_data(state.sessionmaker, default, cache=state.table_caches)
    return float(data.values[0])


def _release(dispatcher: InlineDispatcher) -> None:
    """The worker catches up: every held chunk, in order (the last chunk of a table merges)."""
    dispatcher.hold = False
    held, dispatcher.chunks = dispatcher.chunks, []
    for table_id, index in held:
        dispatcher.enqueue_chunk(table_id, index)


def test_values_within_the_samples_queue_nothing_and_answer_as_the_domain_table(
    client: TestClient, dispatcher: InlineDispatcher, settings: Settings
) -> None:
    within = [100.0, 1e3, 1e4]
    _ranks(client, values=within, regions="domain")  # builds the default table
    built = list(dispatcher.chunks)
    auto = _post(client, values=within)
    assert dispatcher.chunks == built  # nothing queued
    assert b"provisional" not in auto.content
    assert b"awaiting" not in auto.content
    out = auto.json()
    assert out["source"]["kind"] == "table"
    assert min(within) > _y1(settings, client)
    domain = _ranks(client, values=within, regions="domain")
    assert {k: v for k, v in out.items() if k != "provenance"} == {
        k: v for k, v in domain.items() if k != "provenance"
    }
    ladder = tables.ladder_table_ids(settings, FN, cache=LadderCaches.from_settings(settings))
    assert not {tid for tid, _ in dispatcher.chunks} & set(ladder[1:])


def test_deep_values_are_provisional_while_the_queued_ladder_builds_then_final(
    client: TestClient, dispatcher: InlineDispatcher, settings: Settings
) -> None:
    domain = _ranks(client, regions="domain")  # the default table is built (inline)
    y1 = _y1(settings, client)
    assert DEEP < y1 < 100.0
    dispatcher.hold = True  # queue, do not build: a worker would take its time
    dispatcher.chunks = []
    out = _ranks(client)
    ladder = tables.ladder_table_ids(settings, FN, cache=LadderCaches.from_settings(settings))
    queued = {tid for tid, _ in dispatcher.chunks}
    assert queued == set(ladder[1:])  # every level below the domain, queued by this request
    assert out["source"]["kind"] == "table"
    deep, at_min, mid, high = out["results"]
    assert deep["provisional"] is True
    assert deep["method"] == domain["results"][0]["method"]
    assert deep["v"] == domain["results"][0]["v"]  # the tail model's value meanwhile
    assert deep["interval"]["log10_lo"] is None
    assert deep["interval"]["v_lo"] == 0.0
    assert deep["interval"]["v_hi"] == domain["results"][0]["interval"]["v_hi"]
    for item, ref in zip((at_min, mid, high), domain["results"][1:], strict=True):
        assert "provisional" not in item  # at f* (exact) and within the samples: final
        assert item == ref
    awaiting = out["awaiting"]
    assert awaiting["kind"] == "ladder"
    assert awaiting["status"] == "building"
    assert awaiting["table_ids"] == ladder
    assert awaiting["table_id"] in ladder[1:]
    assert awaiting["location"] == f"/v1/tables/{awaiting['table_id']}"
    assert client.get(awaiting["location"]).status_code == 200  # the client can poll it
    assert any("provisional" in w and "y_1" in w for w in out["warnings"])
    # asking again while it builds queues nothing more
    before = len(dispatcher.chunks)
    assert _ranks(client)["results"][0]["provisional"] is True
    assert len(dispatcher.chunks) == before
    _release(dispatcher)
    final = _ranks(client)
    assert final["source"]["kind"] == "nested"
    assert final["source"]["table_ids"] == ladder
    assert "awaiting" not in final
    assert not any(r.get("provisional") for r in final["results"])
    assert final["results"][0]["method"].startswith("nested-")
    assert final["results"][0]["interval"]["log10_lo"] is not None
    assert final["results"] == _ranks(client, regions="nested")["results"]


def test_an_inline_dispatcher_builds_the_ladder_in_the_request(
    client: TestClient, dispatcher: InlineDispatcher, settings: Settings
) -> None:
    out = _ranks(client)
    assert out["source"]["kind"] == "nested"
    assert "awaiting" not in out
    assert out["results"][0]["method"].startswith("nested-")
    assert {tid for tid, _ in dispatcher.chunks} >= set(
        tables.ladder_table_ids(settings, FN, cache=LadderCaches.from_settings(settings))
    )
    assert out["results"] == _ranks(client, regions="nested")["results"]


def test_runs_by_algorithm_marks_deep_runs_and_the_aggregates_that_use_them(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    _ranks(client, regions="domain")
    dispatcher.hold = True
    runs = {"deep": [DEEP, 100.0, 200.0], "shallow": [50.0, 100.0, 200.0], "mean": [DEEP, 1e3, 2e3]}
    best = _ranks(client, values=None, runs_by_algorithm=runs, aggregate="median")
    by = {a["algorithm"]: a for a in best["algorithms"]}
    assert [r.get("provisional", False) for r in by["deep"]["per_run"]] == [True, False, False]
    assert by["deep"]["per_run"][0]["interval"]["v_lo"] == 0.0
    assert "provisional" not in by["deep"]  # its median (100) lies within the samples
    assert "provisional" not in by["shallow"]
    worst = _ranks(client, values=None, runs_by_algorithm={"deep": [DEEP]}, aggregate="best")
    assert worst["algorithms"][0]["provisional"] is True
    mean = _ranks(client, values=None, runs_by_algorithm=runs, aggregate="mean")
    by = {a["algorithm"]: a for a in mean["algorithms"]}
    assert by["mean"]["provisional"] is True  # a mean's rank integrates v1 below its value
    assert by["mean"]["interval"]["log10_lo"] is None
    assert "provisional" not in by["shallow"]
    assert mean["awaiting"]["kind"] == "ladder"


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[tuple[TestClient, InlineDispatcher, Settings]]:
    settings = api_settings(tmp_path, api_keys=["s3cret"], nested_levels=6, nested_factor=4.0)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        yield c, dispatcher, settings


def test_anonymous_callers_on_a_keyed_deployment_queue_nothing_and_are_told_how(
    keyed: tuple[TestClient, InlineDispatcher, Settings],
) -> None:
    client, dispatcher, settings = keyed
    key = {"X-API-Key": "s3cret"}
    _post(client, headers=key, regions="domain")  # a key holder built the default table
    built = list(dispatcher.chunks)
    out = _post(client).json()  # anonymous
    assert dispatcher.chunks == built  # no ladder queued
    assert out["source"]["kind"] == "table"
    assert out["results"][0]["provisional"] is True
    assert out["results"][0]["interval"]["log10_lo"] is None
    awaiting = out["awaiting"]
    assert awaiting["status"] == "not-built"
    assert awaiting["location"] is None
    assert awaiting["table_request"] == {"function_id": FN, "ladder": True}
    assert awaiting["table_ids"] == tables.ladder_table_ids(
        settings, FN, cache=LadderCaches.from_settings(settings)
    )
    (said,) = [w for w in out["warnings"] if "provisional" in w]
    assert "API key" in said
    assert '"ladder": true' in said
    keyed_out = _post(client, headers=key).json()  # a key holder queues it (built inline)
    assert keyed_out["source"]["kind"] == "nested"
    assert _post(client).json()["source"]["kind"] == "nested"  # then everyone gets it


def _rows(deep: float) -> list[dict[str, Any]]:
    """Errors on FN (A's may lie below the samples) and on the 2-D Rastrigin (within them)."""
    values = {FN: (deep, 100.0, 1e4), "classic/rastrigin/d2": (5.0, 20.0, 40.0)}
    return [
        {"algorithm": alg, "problem": prob, "run": run, "value": value * (1 + run)}
        for prob, row in values.items()
        for alg, value in zip("ABC", row, strict=True)
        for run in range(3)
    ]


def test_a_comparison_stays_partial_while_a_cell_is_provisional_then_completes(
    client: TestClient, dispatcher: InlineDispatcher, settings: Settings
) -> None:
    body = {"results": _rows(DEEP), "reduction": "median", "values_are": "error"}
    _ranks(client, regions="domain")
    client.post(
        "/v1/absolute-ranks",
        json={"function_id": "classic/rastrigin/d2", "values": [1.0], "regions": "domain"},
    )
    dispatcher.hold = True
    r = client.post("/v1/comparisons", json=body)
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["status"] == "partial"
    assert out["absolute"]["status"] == "pending"
    (pending,) = out["absolute"]["pending"]
    assert pending["problem"] == FN
    assert pending["kind"] == "ladder"
    assert pending["table_ids"] == tables.ladder_table_ids(
        settings, FN, cache=LadderCaches.from_settings(settings)
    )
    assert pending["table_status"] == "building"
    assert pending["location"].startswith("/v1/tables/t")
    _release(dispatcher)
    again = client.post("/v1/comparisons", json=body).json()
    assert again["id"] == out["id"]
    assert again["status"] == "complete"
    assert again["absolute"]["tables"][FN]["kind"] == "nested"
    assert client.get(out["location"]).json()["status"] == "complete"


def test_a_comparison_within_the_samples_completes_without_ladders(
    client: TestClient, dispatcher: InlineDispatcher, settings: Settings
) -> None:
    dispatcher.hold = False
    body = {"results": _rows(50.0), "reduction": "median", "values_are": "error"}
    out = client.post("/v1/comparisons", json=body).json()
    assert out["status"] == "complete"
    assert {t["kind"] for t in out["absolute"]["tables"].values()} == {"table"}
    ladder = set(
        tables.ladder_table_ids(settings, FN, cache=LadderCaches.from_settings(settings))[1:]
    )
    assert not {tid for tid, _ in dispatcher.chunks} & ladder
