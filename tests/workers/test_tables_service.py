"""Table building through the services and tasks: idempotent chunks, one merge, recovery."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from huey import Huey
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import session_scope
from app.domain import absrank
from app.errors import InvalidInput, NotFound, TableNotReady
from app.models import Table, TableChunk
from app.repositories import TableRepository
from app.services import table_build
from app.services import tables as svc
from app.services.table_cache import TableCaches
from workers.tasks import HueyDispatcher

SM = sessionmaker[Session]
FUNCTION = "classic/sphere/d5"


def _later(seconds: float) -> datetime:
    return datetime.now(UTC) + timedelta(seconds=seconds)


def _chunks(sm: SM, table_id: str) -> list[TableChunk]:
    with session_scope(sm) as s:
        stmt = select(TableChunk).where(TableChunk.table_id == table_id).order_by(TableChunk.index)
        return list(s.execute(stmt).scalars())


def _stored(sm: SM, table_id: str) -> bytes:
    with session_scope(sm) as s:
        blob = TableRepository(s).get_data(table_id)
    assert blob is not None
    return blob


def _run_all(sm: SM, settings: Settings, pairs: list[tuple[str, int]]) -> list[str]:
    return [svc.run_chunk(sm, settings, t, i) for t, i in pairs]


# ---------------------------------------------------------------- spec and identity


def test_spec_is_normalized_and_hash_ignores_chunking(make_settings: Callable[..., Settings]):
    a = svc.table_spec(make_settings(table_chunk_log2=8), function_id=FUNCTION, log2n=12)
    b = svc.table_spec(make_settings(table_chunk_log2=11), function_id=FUNCTION, log2n=12)
    assert a == b
    assert svc.spec_hash(a) == svc.spec_hash(b)
    assert a["n"] == 4096
    assert a["region"]["kind"] == "domain"
    assert set(a["versions"]) == {"numpy", "scipy", "cocoex"}
    assert a["sampler"] == "scipy.stats.qmc.Sobol(scramble=True, rng=seed)"
    table_id = svc.table_id_for(svc.spec_hash(a))
    assert len(table_id) == 24
    assert table_id.startswith("t")
    other = svc.table_spec(make_settings(), function_id=FUNCTION, log2n=12, seed=1)
    assert svc.spec_hash(other) != svc.spec_hash(a)


def test_box_region_is_clipped_to_the_domain(settings: Settings):
    spec = svc.table_spec(settings, function_id=FUNCTION, delta=0.5)
    region = spec["region"]
    assert region["kind"] == "box"
    assert region["delta"] == 0.5
    assert len(region["lower"]) == 5
    assert all(lo < hi for lo, hi in zip(region["lower"], region["upper"], strict=True))
    assert svc.spec_hash(spec) != svc.spec_hash(svc.table_spec(settings, function_id=FUNCTION))


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"log2n": 3}, "log2n"),
        ({"log2n": 17}, "log2n"),
        ({"seed": -1}, "seed"),
        ({"delta": 0.0}, "delta"),
        ({"delta": float("nan")}, "delta"),
    ],
)
def test_invalid_requests_name_the_field(settings: Settings, kwargs: dict[str, Any], field: str):
    with pytest.raises(InvalidInput) as info:
        svc.table_spec(settings, function_id=FUNCTION, **kwargs)
    assert info.value.field == field


def test_unknown_function_is_not_found(settings: Settings):
    with pytest.raises(NotFound):
        svc.table_spec(settings, function_id="classic/nosuch/d5")


# ---------------------------------------------------------------- request, view, list


def test_request_twice_returns_the_same_table(sm: SM, settings: Settings, recorder: Any):
    view, created = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    assert created
    assert view.status == "building"
    assert (view.n, view.chunk_size, view.n_chunks) == (4096, 1024, 4)
    assert view.location == f"/v1/tables/{view.id}"
    assert recorder.chunks == [(view.id, i) for i in range(4)]
    again, created_again = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    assert not created_again
    assert again.id == view.id
    assert len(recorder.chunks) == 4  # nothing re-enqueued
    items, total = svc.list_tables(sm)
    assert total == 1
    assert [t.id for t in items] == [view.id]
    assert svc.list_tables(sm, status="ready") == ([], 0)
    assert svc.list_tables(sm, function_id="classic/other/d5") == ([], 0)
    with pytest.raises(InvalidInput):
        svc.list_tables(sm, status="bogus")
    with pytest.raises(NotFound):
        svc.get_table(sm, "tdoesnotexist")


def test_not_ready_is_a_409_with_location_and_progress(sm: SM, settings: Settings, recorder: Any):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    svc.run_chunk(sm, settings, view.id, 0)
    with pytest.raises(TableNotReady) as info:
        svc.load_table_data(sm, view.id, cache=TableCaches.from_settings(settings))
    err = info.value
    assert err.status == 409
    assert err.headers == {"Location": view.location}
    assert err.extra["progress"] == {"done": 1, "total": 4, "fraction": 0.25}
    assert err.extra["table_status"] == "building"
    assert svc.get_table(sm, view.id).eta_seconds is not None
    with pytest.raises(NotFound):
        svc.load_table_data(sm, "tdoesnotexist", cache=TableCaches.from_settings(settings))


# ---------------------------------------------------------------- building


def test_inline_build_equals_one_shot_and_merges_once(
    sm: SM, settings: Settings, inline_huey: Huey
):
    view, created = svc.request_table(
        sm,
        settings,
        HueyDispatcher(inline_huey),
        function_id=FUNCTION,
        cache=TableCaches.from_settings(settings),
    )
    assert created
    ready = svc.get_table(sm, view.id)  # memory:// ran every chunk inline
    assert ready.status == "ready"
    assert ready.progress == {"done": 4, "total": 4, "fraction": 1.0}
    blob = _stored(sm, view.id)
    assert blob == svc.compute_table_data(ready.spec)  # one chunk of size N
    assert ready.data_sha256 is not None
    assert ready.summary is not None
    assert ready.summary["y_1"] <= ready.summary["quantiles"][0]["t"] <= ready.summary["y_N"]
    prov = ready.provenance
    assert prov is not None
    assert prov["n"] == 4096
    assert prov["seed"] == 0
    assert prov["versions"] == ready.spec["versions"]
    assert prov["sobol_seed_keyword"] == "rng"
    assert prov["build"]["chunk_cpu_seconds"] > 0
    assert prov["workers"]
    chunks = _chunks(sm, view.id)
    assert [(c.status, c.attempts) for c in chunks] == [("done", 1)] * 4
    with session_scope(sm) as s:  # blobs dropped once merged
        assert list(TableRepository(s).iter_chunk_blobs(view.id)) == []
    _, data = svc.load_table_data(sm, view.id, cache=TableCaches.from_settings(settings))
    assert data.n == 4096
    assert absrank.encode_table_data(data) == blob


def test_any_chunking_gives_identical_bytes(settings: Settings):
    spec = svc.table_spec(settings, function_id=FUNCTION, log2n=13)
    one_shot = svc.compute_table_data(spec)
    for size in (2**6, 2**9, 2**12):
        assert svc.compute_table_data(spec, chunk_size=size) == one_shot


def test_duplicate_chunk_runs_change_nothing(sm: SM, settings: Settings, recorder: Any):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    assert svc.run_chunk(sm, settings, view.id, 0) == "done"
    assert svc.run_chunk(sm, settings, view.id, 0) == "skipped-done"
    assert _run_all(sm, settings, recorder.chunks[1:]) == ["done", "done", "merged"]
    before = svc.get_table(sm, view.id)
    blob = _stored(sm, view.id)
    # every message delivered again, and late merge messages: nothing changes
    assert set(_run_all(sm, settings, recorder.chunks)) == {"skipped-ready"}
    assert not svc.merge(sm, settings, view.id)
    after = svc.get_table(sm, view.id)
    assert after == before
    assert _stored(sm, view.id) == blob
    assert [c.attempts for c in _chunks(sm, view.id)] == [1, 1, 1, 1]


def test_result_of_a_slow_duplicate_is_discarded(
    sm: SM, settings: Settings, recorder: Any, monkeypatch: pytest.MonkeyPatch
):
    """Two workers compute the same chunk (lease expired); the second write is a no-op."""
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    real = table_build.compute_chunk

    def compute_while_someone_else_finishes(spec: Any, index: int, size: int) -> Any:
        monkeypatch.setattr(table_build, "compute_chunk", real)
        with session_scope(sm) as s:  # the other worker claims after our lease expired
            TableRepository(s).release_chunk(view.id, index)
        assert svc.run_chunk(sm, settings, view.id, index) == "done"
        return real(spec, index, size)

    monkeypatch.setattr(table_build, "compute_chunk", compute_while_someone_else_finishes)
    assert svc.run_chunk(sm, settings, view.id, 0) == "duplicate"
    assert _chunks(sm, view.id)[0].attempts == 2


def test_live_lease_skips_a_duplicate_message(sm: SM, settings: Settings, recorder: Any):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    now = datetime.now(UTC)
    with session_scope(sm) as s:
        assert TableRepository(s).claim_chunk(
            view.id, 2, now=now, lease_until=now + timedelta(seconds=60), worker="other:1"
        )
    assert svc.run_chunk(sm, settings, view.id, 2) == "skipped-leased"


# ---------------------------------------------------------------- recovery


def test_lost_message_is_recovered_by_redispatch(sm: SM, settings: Settings, recorder: Any):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    lost = recorder.chunks.pop(2)  # this message never reaches a worker
    assert _run_all(sm, settings, recorder.chunks) == ["done"] * 3
    assert svc.get_table(sm, view.id).status == "building"
    again = type(recorder)()
    assert svc.redispatch(sm, settings, again) == {
        "chunks_expired": 0,
        "chunks_lost": 0,
        "merges": 0,
    }  # not yet: it was dispatched less than a lease ago
    counts = svc.redispatch(sm, settings, again, now=_later(settings.chunk_lease_seconds + 1))
    assert counts == {"chunks_expired": 0, "chunks_lost": 1, "merges": 0}
    assert again.chunks == [lost]
    # re-sent at most once per lease period
    assert svc.redispatch(sm, settings, again, now=_later(settings.chunk_lease_seconds + 1)) == {
        "chunks_expired": 0,
        "chunks_lost": 0,
        "merges": 0,
    }
    assert _run_all(sm, settings, again.chunks) == ["merged"]
    assert _stored(sm, view.id) == svc.compute_table_data(view.spec)


def test_expired_lease_is_recovered(sm: SM, settings: Settings, recorder: Any):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    now = datetime.now(UTC)
    with session_scope(sm) as s:  # a worker claimed chunk 1 and was killed
        TableRepository(s).claim_chunk(
            view.id, 1, now=now, lease_until=now + timedelta(seconds=2), worker="dead:1"
        )
    assert _run_all(sm, settings, recorder.chunks) == ["done", "skipped-leased", "done", "done"]
    again = type(recorder)()
    assert svc.redispatch(sm, settings, again)["chunks_expired"] == 0
    counts = svc.redispatch(sm, settings, again, now=now + timedelta(seconds=3))
    assert counts == {"chunks_expired": 1, "chunks_lost": 0, "merges": 0}
    assert _run_all(sm, settings, again.chunks) == ["merged"]
    assert [c.attempts for c in _chunks(sm, view.id)] == [1, 2, 1, 1]


def test_merge_that_never_ran_is_redispatched(
    sm: SM, settings: Settings, recorder: Any, monkeypatch: pytest.MonkeyPatch
):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    monkeypatch.setattr(table_build, "merge", lambda *a, **k: False)  # the completing worker dies
    assert _run_all(sm, settings, recorder.chunks) == ["done"] * 4
    monkeypatch.undo()
    assert svc.get_table(sm, view.id).status == "building"
    again = type(recorder)()
    assert svc.redispatch(sm, settings, again)["merges"] == 1
    assert again.merges == [view.id]
    assert svc.merge(sm, settings, view.id)
    assert not svc.merge(sm, settings, view.id)
    assert svc.get_table(sm, view.id).status == "ready"
    assert svc.redispatch(sm, settings, again)["merges"] == 0


def test_merge_with_expired_lease_is_taken_over(sm: SM, settings: Settings, recorder: Any):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    with session_scope(sm) as s:  # every chunk done; the merger claims and dies
        repo = TableRepository(s)
        for index in range(4):
            result = svc.compute_chunk(view.spec, index, view.chunk_size)
            repo.finish_chunk(
                view.id,
                index,
                values=result.values.astype("<f8").tobytes(),
                low_index=result.low_index.astype("<i8").tobytes(),
                low_x=result.low_x.astype("<f8").tobytes(),
                cpu_seconds=0.0,
                worker="w:1",
                now=datetime.now(UTC),
            )
        now = datetime.now(UTC)
        assert repo.claim_merge(view.id, now=now, lease_until=now + timedelta(seconds=2))
    assert not svc.merge(sm, settings, view.id)  # lease still held
    again = type(recorder)()
    assert svc.redispatch(sm, settings, again)["merges"] == 0
    assert svc.redispatch(sm, settings, again, now=_later(3))["merges"] == 1
    with session_scope(sm) as s:
        table = s.get(Table, view.id)
        assert table is not None
        table.merge_lease_until = datetime.now(UTC) - timedelta(seconds=1)
    assert svc.merge(sm, settings, view.id)
    assert _stored(sm, view.id) == svc.compute_table_data(view.spec)


# ---------------------------------------------------------------- failures


def test_version_mismatch_fails_the_table_then_retry_rebuilds(
    sm: SM, settings: Settings, recorder: Any, monkeypatch: pytest.MonkeyPatch
):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    real = svc.spec_versions()
    monkeypatch.setattr(table_build, "spec_versions", lambda: {**real, "scipy": "0.0.1"})
    assert svc.run_chunk(sm, settings, view.id, 0) == "failed"
    failed = svc.get_table(sm, view.id)
    assert failed.status == "failed"
    assert failed.error is not None
    assert "scipy" in failed.error
    assert "0.0.1" in failed.error
    with pytest.raises(TableNotReady, match="failed"):
        svc.load_table_data(sm, view.id, cache=TableCaches.from_settings(settings))
    assert svc.run_chunk(sm, settings, view.id, 1) == "skipped-failed"
    monkeypatch.undo()
    again = type(recorder)()
    retried, created = svc.request_table(
        sm, settings, again, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )
    assert not created
    assert retried.status == "building"
    assert again.chunks == [(view.id, i) for i in range(4)]
    _run_all(sm, settings, again.chunks)
    assert svc.get_table(sm, view.id).status == "ready"


def test_evaluation_error_fails_the_table(
    sm: SM, settings: Settings, recorder: Any, monkeypatch: pytest.MonkeyPatch
):
    view, _ = svc.request_table(
        sm, settings, recorder, function_id=FUNCTION, cache=TableCaches.from_settings(settings)
    )

    def boom(*args: Any) -> Any:
        raise FloatingPointError("overflow in f")

    monkeypatch.setattr(table_build, "compute_chunk", boom)
    assert svc.run_chunk(sm, settings, view.id, 3) == "failed"
    table = svc.get_table(sm, view.id)
    assert table.status == "failed"
    assert table.error == "chunk 3: FloatingPointError: overflow in f"


def test_combine_chunks_rejects_missing_and_repeated_chunks(settings: Settings):
    spec = svc.table_spec(settings, function_id=FUNCTION, log2n=6)
    results = [svc.compute_chunk(spec, i, 16) for i in range(4)]
    blobs = [
        svc.ChunkBlobs(
            i,
            r.values.astype("<f8").tobytes(),
            r.low_index.astype("<i8").tobytes(),
            r.low_x.astype("<f8").tobytes(),
        )
        for i, r in enumerate(results)
    ]
    values, low_x = svc.combine_chunks(blobs[::-1], n=64, chunk_size=16, dim=5, k=10)
    assert np.array_equal(values, np.concatenate([r.values for r in results]))
    assert low_x.shape == (10, 5)
    with pytest.raises(ValueError, match="missing"):
        svc.combine_chunks(blobs[:3], n=64, chunk_size=16, dim=5, k=10)
    with pytest.raises(ValueError, match="repeated"):
        svc.combine_chunks([*blobs, blobs[0]], n=64, chunk_size=16, dim=5, k=10)
