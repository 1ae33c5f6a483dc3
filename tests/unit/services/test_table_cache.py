"""The table caches are objects: sized by settings, owned per sessionmaker / settings object."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import sessionmaker

from app.config import Settings
from app.main import create_app
from app.services import _table_requests, ladders, table_cache
from app.services.table_cache import ExpiringKeys, LadderCaches, LRUCache, TableCaches
from tests.api.conftest import api_settings


def test_lru_keeps_the_most_recent_entries() -> None:
    cache: LRUCache[str, int] = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # "b" is now the oldest
    cache.put("c", 3)
    assert cache.get("b") is None
    assert (cache.get("a"), cache.get("c")) == (1, 3)
    calls: list[str] = []
    assert cache.get_or_make("d", lambda: calls.append("d") or 4) == 4
    assert cache.get_or_make("d", lambda: calls.append("again") or 5) == 4
    assert calls == ["d"]
    assert len(cache) == 2
    off: LRUCache[str, int] = LRUCache(0)
    off.put("a", 1)
    assert off.get("a") is None


def test_expiring_keys_forget_after_their_ttl() -> None:
    keys: ExpiringKeys[str] = ExpiringKeys(0.05, 2)
    keys.add("t1")
    assert keys.has("t1")
    keys.discard("t1")
    assert not keys.has("t1")
    keys.add("t2")
    time.sleep(0.06)
    assert not keys.has("t2")
    keys.add("t3")
    keys.add("t4")
    keys.add("t5")  # full: everything is forgotten first
    assert not keys.has("t3")
    assert keys.has("t5")


def test_sizes_come_from_the_settings() -> None:
    settings = Settings(
        table_ready_cache_size=3,
        table_missing_ttl_seconds=1.5,
        table_missing_cache_size=7,
        table_publish_cache_size=5,
        ladder_plan_cache_size=11,
        ladder_ids_cache_size=13,
    )
    caches = TableCaches.from_settings(settings)
    assert (caches.ready.maxsize, caches.published.maxsize) == (3, 5)
    assert (caches.missing.ttl, caches.missing.maxsize) == (1.5, 7)
    ladders = LadderCaches.from_settings(settings)
    assert (ladders.plans.maxsize, ladders.ids.maxsize) == (11, 13)
    defaults = TableCaches.from_settings(None)
    assert defaults.ready.maxsize == Settings.model_fields["table_ready_cache_size"].default


def test_each_sessionmaker_and_settings_object_has_its_own_caches() -> None:
    one, two = sessionmaker(), sessionmaker()
    assert table_cache.caches_of(one) is table_cache.caches_of(one)
    assert table_cache.caches_of(one) is not table_cache.caches_of(two)
    table_cache.caches_of(one).missing.add("t0")
    assert not table_cache.caches_of(two).missing.has("t0")
    mine = table_cache.attach(two, TableCaches.from_settings(None))
    assert table_cache.caches_of(two) is mine
    a, b = Settings(), Settings()
    assert table_cache.ladder_caches_of(a) is table_cache.ladder_caches_of(a)
    assert table_cache.ladder_caches_of(a) is not table_cache.ladder_caches_of(b)
    held = weakref.ref(table_cache.ladder_caches_of(a))
    del a
    gc.collect()
    assert held() is None  # gone with its owner


def test_two_apps_never_share_caches(tmp_path: Path) -> None:
    seen = []
    for name in ("one", "two"):
        settings = api_settings(tmp_path / name)
        with TestClient(create_app(settings, dispatcher=object())) as client:
            state = client.app.state  # type: ignore[attr-defined]
            assert table_cache.caches_of(state.sessionmaker) is state.table_caches
            assert table_cache.ladder_caches_of(settings) is state.ladder_caches
            state.table_caches.missing.add("t-" + name)
            seen.append(state.table_caches)
    assert seen[0] is not seen[1]
    assert not seen[1].missing.has("t-one")


def test_the_routers_pass_the_apps_caches_not_the_registry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ranks, tables and ladders get their caches from ``app.state`` (never ``caches_of``)."""
    from tests.support import migrate
    from workers.inline import InlineDispatcher

    def refuse(owner: object) -> None:
        raise AssertionError("a router's service looked its caches up in the registry")

    settings = api_settings(tmp_path, nested_levels=2)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app  # type: ignore[assignment]  # FastAPI has the state the dispatcher reads
    fid = "classic/sphere/d2"
    with TestClient(app) as client:
        monkeypatch.setattr(table_cache, "caches_of", refuse)
        monkeypatch.setattr(table_cache, "ladder_caches_of", refuse)
        monkeypatch.setattr(_table_requests, "caches_of", refuse)
        monkeypatch.setattr(ladders, "ladder_caches_of", refuse)
        ladder = client.post("/v1/tables", json={"function_id": fid, "ladder": True})
        assert ladder.status_code == 200
        for regions in ("nested", "auto", "domain"):
            # sphere has an exact v1: use_analytic=false ranks from its tables
            body: dict[str, object] = {"function_id": fid, "values": [1e-9, 0.1]}
            body |= {"regions": regions, "use_analytic": False}
            assert client.post("/v1/absolute-ranks", json=body).status_code == 200
        table_id = ladder.json()["levels"][1]["id"]
        for path in (
            f"/v1/ladders/{fid}/curve.json",
            f"/v1/ladders/{fid}/curve.csv",
            f"/v1/tables/{table_id}/curve.json",
            f"/v1/tables/{table_id}/quantiles?v=0.5",
        ):
            assert client.get(path).status_code == 200, path
        assert app.state.table_caches.ready.get(table_id) is not None
