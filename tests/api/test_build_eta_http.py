"""eta_seconds over HTTP: null before the first chunk finishes, a number after (issue 11)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from tests.api.conftest import InlineDispatcher, api_settings


def _run(dispatcher: InlineDispatcher, count: int) -> None:
    dispatcher.hold = False
    for table_id, index in list(dispatcher.chunks[:count]):
        dispatcher.enqueue_chunk(table_id, index)
    dispatcher.hold = True


def test_a_building_table_has_an_eta_after_its_first_chunk(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    first = client.post("/v1/tables", json={"function_id": "bbob/f1/i1/d2", "log2n": 12})
    assert first.status_code == 202
    assert first.json()["eta_seconds"] is None
    _run(dispatcher, 1)
    table = client.get(first.headers["location"]).json()
    assert table["status"] == "building"
    assert table["progress"]["done"] == 1
    assert table["eta_seconds"] is not None
    assert table["eta_seconds"] > 0


def test_a_building_ladder_has_an_eta(tmp_path: Path) -> None:
    from app.main import create_app
    from tests.support import migrate

    settings: Settings = api_settings(tmp_path, nested_levels=3, nested_factor=2.0)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    ladder = {"function_id": "classic/sphere/d2", "ladder": True, "log2n": 11}
    with TestClient(app) as client:
        dispatcher.hold = True
        body = client.post("/v1/tables", json=ladder).json()
        assert body["status"] == "building"
        assert body["eta_seconds"] is None
        _run(dispatcher, 1)
        body = client.post("/v1/tables", json=ladder).json()
        assert body["progress"]["done"] == 1
        assert body["eta_seconds"] is not None
        assert body["eta_seconds"] > 0
        _run(dispatcher, len(dispatcher.chunks))
        ready = client.post("/v1/tables", json=ladder).json()
        assert ready["status"] == "ready"
        assert ready["eta_seconds"] is None


def test_a_region_scan_has_an_eta_after_its_first_chunk(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    scan = {
        "function_id": "classic/rastrigin/d2",
        "values": [{"algorithm": "A", "value": 0.5}, {"algorithm": "B", "value": 2.0}],
        "deltas": [0.05, 0.5],
        "log2n": 12,
    }
    first = client.post("/v1/region-scans", json=scan)
    assert first.status_code == 202, first.text
    body = first.json()
    assert body["eta_seconds"] is None
    _run(dispatcher, 1)
    now = client.get(body["location"]).json()
    assert now["status"] == "building"
    assert now["progress"]["chunks"]["done"] == 1
    assert now["eta_seconds"] is not None
    assert now["eta_seconds"] > 0
