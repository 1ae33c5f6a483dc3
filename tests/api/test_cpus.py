"""GET/POST /v1/cpus: the seeded registry, fuzzy search, operator writes."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

SEEDED = {
    "Intel Core i5-470UM": 539.0,
    "Intel Celeron N4100": 1012.0,
    "AMD A9-9420": 1344.0,
    "AMD FX-6300": 1486.0,
    "Intel Core i7-2760QM": 1559.0,
    "Intel Core i7-6700HQ": 1921.0,
    "Intel Core i7-7500U": 1955.0,
    "AMD Ryzen 7 1800X": 2185.0,
    "Intel Xeon E5440": 1219.0,
}
NEW = {
    "name": "Intel Core i7-8700K",
    "score": 2760,
    "source": "PassMark single-thread rating, read by hand",
    "source_date": "2026-11-30",
}


def test_the_paper_machines_are_seeded(client: TestClient) -> None:
    body = client.get("/v1/cpus", params={"limit": 100}).json()
    assert body["total"] == len(SEEDED)
    assert {c["name"]: c["score"] for c in body["items"]} == SEEDED
    assert all("arXiv:2305.07345" in c["source"] for c in body["items"])


def test_fuzzy_search_puts_the_best_match_first(client: TestClient) -> None:
    for q, best in [
        ("i7-6700hq", "Intel Core i7-6700HQ"),
        ("  RYZEN   7 ", "AMD Ryzen 7 1800X"),
        ("xeon e5440", "Intel Xeon E5440"),
        ("i7 6700HQ", "Intel Core i7-6700HQ"),
        ("celeron n4010", "Intel Celeron N4100"),
    ]:
        items = client.get("/v1/cpus", params={"q": q}).json()["items"]
        assert items, q
        assert items[0]["name"] == best, (q, items[:3])
        assert items == sorted(items, key=lambda c: -c["match"])
    assert client.get("/v1/cpus", params={"q": "zzzz qqqq"}).json()["items"] == []


def test_operators_add_cpus_and_duplicates_conflict(client: TestClient) -> None:
    r = client.post("/v1/cpus", json=NEW)
    assert r.status_code == 201, r.text
    assert r.headers["location"] == f"/v1/cpus/{r.json()['id']}"
    assert client.get(r.headers["location"]).json()["score"] == 2760
    again = client.post("/v1/cpus", json=NEW | {"name": "intel  core I7-8700k"})
    assert again.status_code == 409
    assert again.json()["field"] == "name"


def test_bad_cpus_are_refused(client: TestClient) -> None:
    for change, field in [
        ({"score": 0}, "score"),
        ({"score": -5}, "score"),
        ({"source_date": "30/11/2026"}, "source_date"),
        ({"name": "x"}, "name"),
        ({"name": "CPU\x00"}, "name"),
    ]:
        r = client.post("/v1/cpus", json=NEW | change)
        assert r.status_code == 422, change
        assert r.json()["field"] == field
    assert client.get("/v1/cpus/999").status_code == 404
    assert client.get("/v1/cpus/0").status_code == 422


def test_writes_need_a_key_when_the_deployment_has_keys(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, api_keys=["s3cret"])
    migrate(settings.database_url)
    app = create_app(settings, dispatcher=InlineDispatcher(settings))
    with TestClient(app) as c:
        assert c.post("/v1/cpus", json=NEW).status_code == 401
        assert c.get("/v1/cpus").status_code == 200  # reads stay anonymous
        ok = c.post("/v1/cpus", json=NEW, headers={"x-api-key": "s3cret"})
        assert ok.status_code == 201


def test_names_dates_and_sources_are_real(client: TestClient) -> None:
    for change, field in [
        ({"name": "   "}, "name"),
        ({"name": "CPU\u200b X"}, "name"),
        ({"source": "   "}, "source"),
        ({"source_date": "2023-13-45"}, "source_date"),
        ({"source_date": "2023-02-30"}, "source_date"),
        ({"source_date": "2023-00"}, "source_date"),
        ({"source_date": "0000"}, "source_date"),
        ({"source_date": "2099-01-01"}, "source_date"),
        ({"source_date": "٢٠٢٣"}, "source_date"),
    ]:
        r = client.post("/v1/cpus", json=NEW | change)
        assert r.status_code == 422, change
        assert r.json()["field"] == field, change
    r = client.post("/v1/cpus", json=NEW | {"name": "  Intel   Core i7-8700K "})
    assert r.status_code == 201
    assert r.json()["name"] == "Intel Core i7-8700K"


def test_typos_still_find_the_cpu(client: TestClient) -> None:
    for q, best in [
        ("intle xeon", "Intel Xeon E5440"),
        ("i76700hq", "Intel Core i7-6700HQ"),
        ("E-5440", "Intel Xeon E5440"),
        ("xoen e5440", "Intel Xeon E5440"),
    ]:
        items = client.get("/v1/cpus", params={"q": q}).json()["items"]
        assert items, q
        assert items[0]["name"] == best, (q, items[:2])
