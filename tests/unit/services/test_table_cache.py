"""The table caches are objects: sized by settings, owned by each app (``app.state``)."""

from __future__ import annotations

import time
from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.services import table_cache
from app.services.table_cache import (
    AppCaches,
    ExpiringKeys,
    LadderCaches,
    LRUCache,
    TableCaches,
)
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


def test_caches_made_from_the_same_settings_share_nothing() -> None:
    settings = Settings()
    one, two = AppCaches.from_settings(settings), AppCaches.from_settings(settings)
    assert one.tables is not two.tables
    assert one.ladders is not two.ladders
    one.tables.missing.add("t0")
    one.ladders.ids.put(("f",), ("t0",))
    assert not two.tables.missing.has("t0")
    assert two.ladders.ids.get(("f",)) is None
    assert not hasattr(table_cache, "caches_of")  # no module-level registry to fall back on


def test_two_apps_never_share_caches(tmp_path: Path) -> None:
    seen = []
    for name in ("one", "two"):
        settings = api_settings(tmp_path / name)
        with TestClient(create_app(settings, dispatcher=object())) as client:
            state = client.app.state  # type: ignore[attr-defined]
            assert isinstance(state.table_caches, TableCaches)
            assert isinstance(state.ladder_caches, LadderCaches)
            assert state.table_caches.ready.maxsize == settings.table_ready_cache_size
            state.table_caches.missing.add("t-" + name)
            seen.append((state.table_caches, state.ladder_caches))
    assert seen[0][0] is not seen[1][0]
    assert seen[0][1] is not seen[1][1]
    assert not seen[1][0].missing.has("t-one")


def test_the_routers_use_the_apps_caches_and_no_other(tmp_path: Path) -> None:
    """Ranks, tables and ladders keep what they load in their app's ``app.state`` caches; a
    second app's caches stay empty."""
    from tests.support import migrate
    from workers.inline import InlineDispatcher

    settings = api_settings(tmp_path / "one", nested_levels=2)
    settings.ensure_dirs()
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app  # type: ignore[assignment]  # FastAPI has the state the dispatcher reads
    other_settings = api_settings(tmp_path / "two", nested_levels=2)
    other_settings.ensure_dirs()
    migrate(other_settings.database_url)
    other = create_app(other_settings, dispatcher=InlineDispatcher(other_settings))
    fid = "classic/sphere/d2"
    with TestClient(app) as client, TestClient(other):
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
        mine: AppCaches = AppCaches(app.state.table_caches, app.state.ladder_caches)
        for level in ladder.json()["levels"]:
            assert mine.tables.ready.get(level["id"]) is not None
        assert len(mine.tables.published) > 0
        assert len(mine.ladders.plans) > 0
        assert len(mine.ladders.ids) > 0
        theirs: AppCaches = AppCaches(other.state.table_caches, other.state.ladder_caches)
        assert len(theirs.tables.ready) == len(theirs.tables.published) == 0
        assert len(theirs.ladders.plans) == len(theirs.ladders.ids) == 0
