"""Tasks that take several chunks along: the same chunks, rows and table bytes as one task per
chunk, for any chunk size; the faster merge (SIMD sort) against the old one kept as oracle."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import make_engine, make_sessionmaker, session_scope
from app.domain import absrank, sampling, tablebuild
from app.domain.functions import get_function
from app.models import TableChunk
from app.repositories import ChunkBlobs, TableRepository
from app.services import table_build
from app.services import tables as svc
from app.services.table_cache import TableCaches
from tests.support import migrate
from tests.workers.conftest import RecordingDispatcher, small_settings

SM = sessionmaker[Session]
FUNCTION = "classic/sphere/d5"


# ---------------------------------------------------------------- the old merge, as oracle


def _reference_build_table(
    chunks: Iterable[tablebuild.StoredChunk],
    *,
    n: int,
    chunk_size: int,
    dim: int,
    k_exact: int,
    n_knots: int,
    intersected: bool,
) -> tuple[absrank.TableData, np.ndarray]:
    """``build_table`` before the SIMD sort: the Sobol-order samples straight to
    ``build_table_data`` (its stable sort)."""
    values, low_x = tablebuild.combine_chunks(
        chunks, n=n, chunk_size=chunk_size, dim=dim, k=min(k_exact, n)
    )
    if intersected:
        values = values[np.isfinite(values)]
        low_x = np.ascontiguousarray(low_x[: min(low_x.shape[0], values.size)])
    return absrank.build_table_data(values, low_x, k_exact=k_exact, n_knots=n_knots), values


def _reference_summarize(values: np.ndarray) -> tablebuild.SampleSummary:
    """``summarize`` before ``sorted_values``: order statistics by partition."""
    return tablebuild.summarize(values)


def _reference_merge_chunk_results(
    results: list[sampling.ChunkResult], k_low: int
) -> sampling.MergedTable:
    """``merge_chunk_results`` before it selected the candidates: one lexsort of them all."""
    size = results[0].values.size
    k = min(k_low, size * len(results))
    values = np.concatenate([r.values for r in results])
    cand_index = np.concatenate([r.low_index + j * size for j, r in enumerate(results)])
    cand_x = np.concatenate([r.low_x for r in results])
    order = np.lexsort((cand_index, values[cand_index]))[:k]
    return sampling.MergedTable(values, cand_x[order], values[cand_index[order]])


_floats = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.5, np.inf, 1e-300, -1e-300]),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)


@hsettings(max_examples=300, deadline=None)
@given(st.lists(_floats, min_size=1, max_size=300))
def test_stable_sorted_is_the_stable_sort_byte_for_byte(xs: list[float]) -> None:
    values = np.array(xs, dtype=np.float64)
    assert tablebuild.stable_sorted(values).tobytes() == np.sort(values, kind="stable").tobytes()


@hsettings(max_examples=200, deadline=None)
@given(st.lists(_floats.filter(np.isfinite), min_size=1, max_size=400))
def test_summary_from_the_sorted_samples_is_the_partitions(xs: list[float]) -> None:
    values = np.array(xs, dtype=np.float64)
    fast = tablebuild.summarize(values, sorted_values=tablebuild.stable_sorted(values))
    ref = _reference_summarize(values)
    assert repr(fast.as_json()) == repr(ref.as_json())  # repr: -0.0 and 0.0 differ


def _blobs(results: list[sampling.ChunkResult]) -> list[ChunkBlobs]:
    return [
        ChunkBlobs(
            i,
            np.ascontiguousarray(r.values, dtype="<f8").tobytes(),
            np.ascontiguousarray(r.low_index, dtype="<i8").tobytes(),
            np.ascontiguousarray(r.low_x, dtype="<f8").tobytes(),
        )
        for i, r in enumerate(results)
    ]


@hsettings(max_examples=60, deadline=None)
@given(
    log2b=st.integers(2, 6),
    chunks=st.integers(1, 8),
    dim=st.integers(1, 3),
    k_exact=st.integers(1, 40),
    n_knots=st.integers(1, 40),
    seed=st.integers(0, 2**16),
    grid=st.sampled_from([0.0, 0.25, 1.0]),
    intersected=st.booleans(),
)
def test_build_table_equals_the_old_merge(
    log2b: int,
    chunks: int,
    dim: int,
    k_exact: int,
    n_knots: int,
    seed: int,
    grid: float,
    intersected: bool,
) -> None:
    """Random samples with ties and signed zeros (rounded to a grid), +inf when intersected."""
    size = 2**log2b
    chunks = 2 ** (chunks.bit_length() - 1)
    n = size * chunks
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=n)
    values = np.round(raw / grid) * grid if grid else raw
    values = np.where(rng.random(n) < 0.2, -values, values)  # -0.0 among the +0.0
    if intersected:
        values[rng.random(n) < 0.3] = np.inf
        values[0] = 1.0
    results = []
    for j in range(chunks):
        v = values[j * size : (j + 1) * size].copy()
        low = sampling._lowest(v, min(k_exact, size))
        results.append(sampling.ChunkResult(v, low, rng.normal(size=(low.size, dim))))
    kwargs: dict[str, Any] = {
        "n": n,
        "chunk_size": size,
        "dim": dim,
        "k_exact": k_exact,
        "n_knots": n_knots,
        "intersected": intersected,
    }
    built = tablebuild.build_table(_blobs(results), **kwargs)
    ref_data, ref_values = _reference_build_table(_blobs(results), **kwargs)
    assert absrank.encode_table_data(built.data) == absrank.encode_table_data(ref_data)
    assert built.values.tobytes() == ref_values.tobytes()
    fast = tablebuild.summarize(built.values, sorted_values=built.sorted_values)
    assert repr(fast.as_json()) == repr(_reference_summarize(ref_values).as_json())


@hsettings(max_examples=200, deadline=None)
@given(
    log2b=st.integers(0, 5),
    chunks=st.integers(1, 6),
    k_low=st.integers(0, 70),
    grid=st.sampled_from([0.0, 0.5]),
    seed=st.integers(0, 2**16),
)
def test_merge_chunk_results_equals_the_full_lexsort(
    log2b: int, chunks: int, k_low: int, grid: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    size = 2**log2b
    results = []
    for _ in range(chunks):
        raw = rng.normal(size=size)
        v = np.round(raw / grid) * grid if grid else raw
        v = np.where(rng.random(size) < 0.3, -v, v)
        low = sampling._lowest(v, min(k_low, size))
        results.append(sampling.ChunkResult(v, low, rng.normal(size=(low.size, 3))))
    got = sampling.merge_chunk_results(results, k_low)
    ref = _reference_merge_chunk_results(results, k_low)
    for a, b in zip(got, ref, strict=True):
        assert a.shape == b.shape
        assert a.tobytes() == b.tobytes()


# ---------------------------------------------------------------- one engine, many chunks


@pytest.mark.parametrize(("first", "count"), [(0, 1), (0, 5), (3, 1), (3, 4), (7, 2)])
def test_sobol_chunks_are_the_chunks_byte_for_byte(first: int, count: int) -> None:
    got = list(sampling.sobol_chunks(4, 11, first, 64, count))
    assert len(got) == count
    for offset, unit in enumerate(got):
        assert unit.tobytes() == sampling.sobol_chunk(4, 11, first + offset, 64).tobytes()


def _domain_spec(function_id: str, seed: int = 3) -> dict[str, Any]:
    fn = get_function(function_id)
    return {
        "function_id": function_id,
        "region": {"kind": "domain", "lower": fn.lower.tolist(), "upper": fn.upper.tolist()},
        "seed": seed,
        "representation": {"k_exact": 16},
    }


def _intersected_spec() -> dict[str, Any]:
    fn = get_function("bbob/f3/i1/d3")
    theta = 0.4
    axes = [[np.cos(theta), np.sin(theta), 0.0], [-np.sin(theta), np.cos(theta), 0.0], [0, 0, 1]]
    return {
        "function_id": "bbob/f3/i1/d3",
        "region": {
            "kind": "oriented",
            "intersect": "domain",
            "center": [4.6, 0.0, -4.8],  # near two faces: some points fall outside
            "axes": axes,
            "half_widths": [1.0, 0.5, 0.75],
            "lower": fn.lower.tolist(),
            "upper": fn.upper.tolist(),
        },
        "seed": 5,
        "representation": {"k_exact": 16},
    }


def _oriented_spec() -> dict[str, Any]:
    spec = _intersected_spec()
    spec["region"] = {**spec["region"], "center": [0.5, 0.0, -0.2]}
    del spec["region"]["intersect"]
    return spec


@pytest.mark.parametrize(
    "spec",
    [
        _domain_spec("bbob/f1/i1/d10"),
        _domain_spec("classic/rastrigin/d2"),
        _domain_spec("cec2005/f4/d10"),  # noisy: normals by Sobol index
        _oriented_spec(),
        _intersected_spec(),
    ],
    ids=["bbob-f1", "rastrigin", "noisy", "oriented", "intersected"],
)
def test_compute_chunks_equal_compute_chunk(spec: dict[str, Any]) -> None:
    if spec["region"].get("intersect"):
        whole = table_build.compute_chunk(spec, 0, 1024).values
        assert np.isinf(whole).any()
        assert np.isfinite(whole).any()
    for first, count in ((0, 4), (2, 3)):
        got = list(table_build.compute_chunks(spec, first, count, 256))
        for offset, r in enumerate(got):
            ref = table_build.compute_chunk(spec, first + offset, 256)
            assert r.values.tobytes() == ref.values.tobytes()
            assert r.low_index.tobytes() == ref.low_index.tobytes()
            assert r.low_x.tobytes() == ref.low_x.tobytes()


def test_task_chunks_fits_the_target() -> None:
    assert table_build.task_chunks(0.0, 1e-6, 1024) == 1  # disabled
    assert table_build.task_chunks(0.5, None, 1024) == 1  # cost unknown yet
    assert table_build.task_chunks(0.5, 1e-5, 1024) == 48
    assert table_build.task_chunks(0.5, 1e-8, 1024) == table_build.MAX_TASK_CHUNKS
    assert table_build.task_chunks(0.5, 1.0, 1024) == 1  # an expensive function: one chunk


# ---------------------------------------------------------------- through the database


def _sm(tmp_path: Path, name: str) -> tuple[SM, Any]:
    url = f"sqlite:///{tmp_path / name}"
    migrate(url)
    engine = make_engine(url)
    return make_sessionmaker(engine), engine


def _chunk_rows(sm: SM, table_id: str) -> list[tuple[int, str, int]]:
    with session_scope(sm) as s:
        stmt = (
            select(TableChunk.index, TableChunk.status, TableChunk.attempts)
            .where(TableChunk.table_id == table_id)
            .order_by(TableChunk.index)
        )
        return [(int(i), str(st_), int(a)) for i, st_, a in s.execute(stmt)]


def _build(
    sm: SM,
    settings: Settings,
    task_seconds: float,
    log2n: int = 14,
    costs: table_build.TaskCosts | None = None,
) -> tuple[Any, list[str]]:
    rec = RecordingDispatcher()
    view, created = svc.request_table(
        sm,
        settings,
        rec,
        function_id=FUNCTION,
        log2n=log2n,
        cache=TableCaches.from_settings(settings),
    )
    assert created
    outcomes = [
        svc.run_chunk(sm, settings, t, i, task_seconds=task_seconds, costs=costs)
        for t, i in rec.chunks
    ]
    return svc.get_table(sm, view.id), outcomes


def _assert_one_shot_bytes(sm: SM, table_id: str, spec: dict[str, Any]) -> None:
    """The stored table data are the bytes of the in-process one-shot build."""
    with session_scope(sm) as s:
        blob = TableRepository(s).get_data(table_id)
    assert blob == svc.compute_table_data(spec)


def _request(sm: SM, settings: Settings, dispatcher: Any, log2n: int) -> svc.TableView:
    """Request a new table of :data:`FUNCTION` (its chunks go to ``dispatcher``)."""
    view, created = svc.request_table(
        sm,
        settings,
        dispatcher,
        function_id=FUNCTION,
        log2n=log2n,
        cache=TableCaches.from_settings(settings),
    )
    assert created
    return view


def _cheap() -> table_build.TaskCosts:
    """Costs as if the function were nearly free: a task takes MAX_TASK_CHUNKS chunks."""
    return table_build.TaskCosts({FUNCTION: 1e-9})


def test_a_task_takes_the_next_chunks_along(tmp_path: Path) -> None:
    settings = small_settings(tmp_path, table_chunk_log2=10, table_max_log2n=16)
    sm, engine = _sm(tmp_path, "a.db")
    try:
        costs = table_build.TaskCosts()  # a worker process's: nothing known yet
        ready, outcomes = _build(sm, settings, task_seconds=30.0, costs=costs)
        # cold: the first task takes its own chunk and measures it; the next takes the rest
        assert outcomes[:2] == ["done", "merged"]
        assert set(outcomes[2:]) == {"skipped-ready"}
        assert ready.status == "ready"
        assert [a for _, _, a in _chunk_rows(sm, ready.id)] == [1] * 16
        # warm (the cost is known): one task builds the whole table
        assert costs.seconds_per_point[FUNCTION] > 0
        _, again = _build(sm, settings, task_seconds=30.0, log2n=15, costs=costs)
        assert again[0] == "merged"
        _assert_one_shot_bytes(sm, ready.id, ready.spec)
    finally:
        engine.dispose()


def test_messages_of_chunks_taken_along_are_skipped(tmp_path: Path) -> None:
    settings = small_settings(tmp_path, table_chunk_log2=10)
    sm, engine = _sm(tmp_path, "b.db")
    try:
        cheap = _cheap()
        rec = RecordingDispatcher()
        view = _request(sm, settings, rec, 14)
        # chunk 3's message arrives first: it takes 4..15 along, and 0..2 stay for theirs
        assert svc.run_chunk(sm, settings, view.id, 3, task_seconds=1.0, costs=cheap) == "done"
        assert [s for _, s, _ in _chunk_rows(sm, view.id)] == ["pending"] * 3 + ["done"] * 13
        assert (
            svc.run_chunk(sm, settings, view.id, 7, task_seconds=1.0, costs=cheap) == "skipped-done"
        )
        assert svc.run_chunk(sm, settings, view.id, 0, task_seconds=1.0, costs=cheap) == "merged"
        assert [a for _, _, a in _chunk_rows(sm, view.id)] == [1] * 16
        _assert_one_shot_bytes(sm, view.id, view.spec)
    finally:
        engine.dispose()


def test_a_failing_chunk_taken_along_fails_the_table_and_frees_the_leases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = small_settings(tmp_path, table_chunk_log2=10)
    sm, engine = _sm(tmp_path, "c.db")
    try:
        cheap = _cheap()
        rec = RecordingDispatcher()
        view = _request(sm, settings, rec, 13)
        real = tablebuild.compute_chunk

        def broken(*args: Any, **kwargs: Any) -> sampling.ChunkResult:
            if kwargs["index"] == 5:
                raise FloatingPointError("overflow in f")
            return real(*args, **kwargs)

        monkeypatch.setattr(tablebuild, "compute_chunk", broken)
        assert svc.run_chunk(sm, settings, view.id, 2, task_seconds=1.0, costs=cheap) == "failed"
        failed = svc.get_table(sm, view.id)
        assert failed.status == "failed"
        assert failed.error == "chunk 5: FloatingPointError: overflow in f"
        with session_scope(sm) as s:
            chunks = s.execute(
                select(TableChunk.status, TableChunk.lease_until).where(
                    TableChunk.table_id == view.id
                )
            ).all()
        assert {(status, lease) for status, lease in chunks} == {
            ("pending", None)
        }  # nothing half written
        monkeypatch.setattr(tablebuild, "compute_chunk", real)
        retried, _ = svc.request_table(
            sm,
            settings,
            rec,
            function_id=FUNCTION,
            log2n=13,
            cache=TableCaches.from_settings(settings),
        )
        assert retried.status == "building"
        assert svc.run_chunk(sm, settings, view.id, 0, task_seconds=1.0, costs=cheap) == "merged"
    finally:
        engine.dispose()


@pytest.mark.parametrize("task_seconds", [0.0, 1.0])
def test_same_table_bytes_for_every_chunk_size_and_task_size(
    tmp_path: Path, task_seconds: float
) -> None:
    """The same request under different chunk sizes: same table id, same data_sha256."""
    digests = set()
    ids = set()
    for log2b in (8, 10, 12, 14):
        settings = small_settings(tmp_path, table_chunk_log2=log2b)
        sm, engine = _sm(tmp_path, f"size{log2b}-{task_seconds}.db")
        try:
            ready, _ = _build(sm, settings, task_seconds=task_seconds, costs=_cheap())
            assert ready.status == "ready"
            assert ready.chunk_size == 2**log2b
            with session_scope(sm) as s:
                blob = TableRepository(s).get_data(ready.id)
            assert blob is not None
            assert ready.data_sha256 == hashlib.sha256(blob).hexdigest()
            digests.add(ready.data_sha256)
            ids.add(ready.id)
        finally:
            engine.dispose()
    assert len(ids) == 1
    assert len(digests) == 1


# ---------------------------------------------------------------- span messages


def test_task_span_pickles_through_the_queue_and_splits() -> None:
    from workers.app import huey
    from workers.tasks import build_span

    span = tablebuild.TaskSpan("t0123", 3, 5)
    data = huey.serialize_task(build_span.s(span))  # the bytes a queue stores
    assert isinstance(data, bytes)
    again = huey.deserialize_task(data)
    assert again.name == "build_span"
    assert again.args == (span,)
    assert span.stop(64) == 8
    assert span.stop(6) == 6
    assert span.after(5, 64) == tablebuild.TaskSpan("t0123", 6, 2)
    assert span.after(7, 64) is None
    assert tablebuild.TaskSpan("t0123", 60, None).stop(64) == 64
    with pytest.raises(ValueError, match="bad task span"):
        tablebuild.TaskSpan("t0123", 0, 0)
    assert tablebuild.spans_of("t", [0, 1, 2, 5, 7, 8]) == [
        tablebuild.TaskSpan("t", 0, 3),
        tablebuild.TaskSpan("t", 5, 1),
        tablebuild.TaskSpan("t", 7, 2),
    ]


class _Queue:
    """A dispatcher that keeps the spans in a FIFO (what huey would deliver)."""

    def __init__(self) -> None:
        self.spans: list[tablebuild.TaskSpan] = []
        self.merges: list[str] = []

    def enqueue_span(self, span: tablebuild.TaskSpan) -> None:
        self.spans.append(span)

    def enqueue_merge(self, table_id: str) -> None:
        self.merges.append(table_id)


@pytest.mark.parametrize("share", [1, 2, 3])
def test_a_table_is_one_message_and_tasks_hand_on_the_rest(tmp_path: Path, share: int) -> None:
    """A new table is queued as one span; each task claims its part and queues the rest before
    it computes: every chunk is claimed once, the last task merges, the bytes are the one-shot
    build's."""
    settings = small_settings(tmp_path, table_chunk_log2=10)
    sm, engine = _sm(tmp_path, f"hand-on-{share}.db")
    try:
        queue = _Queue()
        view = _request(sm, settings, queue, 14)
        assert queue.spans == [tablebuild.TaskSpan(view.id, 0, 16)]
        # cheap, but a task takes at most 1/(2·share) of the chunks left
        costs = _cheap()
        outcomes, taken = [], []
        while queue.spans:
            span = queue.spans.pop(0)
            before = {r[0] for r in _chunk_rows(sm, view.id) if r[2]}
            outcomes.append(
                table_build.run_span(
                    sm, settings, span, task_seconds=1.0, share=share, costs=costs, dispatcher=queue
                )
            )
            taken.append(len({r[0] for r in _chunk_rows(sm, view.id) if r[2]} - before))
        assert outcomes[-1] == "merged"
        assert outcomes.count("merged") == 1
        assert set(outcomes[:-1]) <= {"done"}
        assert sum(taken) == 16
        if share == 1:
            assert taken == [16]
        else:
            assert taken[0] == -(-16 // (2 * share))  # the first task's part
            assert taken == sorted(taken, reverse=True)  # the last tasks get smaller
        assert [a for _, _, a in _chunk_rows(sm, view.id)] == [1] * 16
        ready = svc.get_table(sm, view.id)
        with session_scope(sm) as s:
            blob = TableRepository(s).get_data(view.id)
            assert list(TableRepository(s).iter_chunk_blobs(view.id)) == []
        assert blob == svc.compute_table_data(ready.spec)
    finally:
        engine.dispose()


def test_a_span_whose_chunks_are_taken_is_skipped_and_the_last_task_merges_in_memory(
    tmp_path: Path,
) -> None:
    settings = small_settings(tmp_path, table_chunk_log2=10)
    sm, engine = _sm(tmp_path, "skip.db")
    try:
        queue = _Queue()
        view = _request(sm, settings, queue, 12)
        span = tablebuild.TaskSpan(view.id, 0, 4)
        # a one-chunk task on chunk 1 (a re-dispatched message), then the span's task
        assert table_build.run_span(sm, settings, tablebuild.TaskSpan(view.id, 1)) == "done"
        assert table_build.run_span(sm, settings, tablebuild.TaskSpan(view.id, 1)) == "skipped-done"
        # the span's task takes 0, 2, 3 (the chunks not done): its results are never stored as
        # chunk blobs, the table is merged from them in memory and chunk 1's stored blob
        got = table_build.run_span(
            sm, settings, span, task_seconds=1.0, costs=_cheap(), dispatcher=queue
        )
        assert got == "merged"
        assert queue.spans == [span]  # nothing handed on
        assert table_build.run_span(sm, settings, span, dispatcher=queue) == "skipped-ready"
        assert [a for _, _, a in _chunk_rows(sm, view.id)] == [1] * 4
        _assert_one_shot_bytes(sm, view.id, view.spec)
        assert table_build.run_span(sm, settings, tablebuild.TaskSpan(view.id, 4)) in {
            "unknown",
            "skipped-ready",
        }
    finally:
        engine.dispose()


def test_the_task_that_finishes_last_merges_in_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Task A claims chunks 0-1; task B claims 2-3 and stores them while A computes; A, the last,
    stores no blob of its chunks: it merges them in memory with B's."""
    settings = small_settings(tmp_path, table_chunk_log2=10)
    sm, engine = _sm(tmp_path, "last.db")
    try:
        view = _request(sm, settings, _Queue(), 12)
        cheap = _cheap()
        real_compute, real_finish = table_build._compute, TableRepository.finish_chunks
        stored: list[tuple[list[int], bool]] = []
        b_outcome: list[str] = []

        def compute(claimed: Any) -> Any:
            out = real_compute(claimed)
            if claimed.indices == (0, 1):  # task B runs while A computes
                b = tablebuild.TaskSpan(view.id, 2, 2)
                b_outcome.append(
                    table_build.run_span(sm, settings, b, task_seconds=1.0, costs=cheap)
                )
            return out

        def finish(self: TableRepository, table_id: str, chunks: Any, **kw: Any) -> list[int]:
            stored.append(([c.index for c in chunks], kw.get("store_blobs", True)))
            return real_finish(self, table_id, chunks, **kw)

        monkeypatch.setattr(table_build, "_compute", compute)
        monkeypatch.setattr(TableRepository, "finish_chunks", finish)
        a = tablebuild.TaskSpan(view.id, 0, 2)
        assert table_build.run_span(sm, settings, a, task_seconds=1.0, costs=cheap) == "merged"
        assert b_outcome == ["done"]
        assert stored == [([2, 3], True), ([0, 1], False)]
        _assert_one_shot_bytes(sm, view.id, view.spec)
    finally:
        engine.dispose()


def test_a_claim_lost_to_a_race_reads_again_and_hands_on_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another worker leases the chunks a task read as free before its UPDATE: the task reads
    again, takes the next free ones and hands on what follows them (nothing waits for a
    re-dispatch)."""
    settings = small_settings(tmp_path, table_chunk_log2=10)
    sm, engine = _sm(tmp_path, "race.db")
    try:
        queue = _Queue()
        view = _request(sm, settings, queue, 14)
        real = TableRepository.claim_chunks
        calls: list[list[int]] = []

        def racing(self: TableRepository, table_id: str, indices: Any, **kw: Any) -> list[int]:
            calls.append(list(indices))
            if len(calls) == 1:  # the other worker wins these
                with session_scope(sm) as s:
                    assert real(TableRepository(s), table_id, indices, **(kw | {"worker": "o"}))
            return real(self, table_id, indices, **kw)

        monkeypatch.setattr(TableRepository, "claim_chunks", racing)
        span = tablebuild.TaskSpan(view.id, 0, 16)
        cheap = table_build.TaskCosts({FUNCTION: 1e-9})
        got = table_build.run_span(
            sm, settings, span, task_seconds=1.0, share=2, costs=cheap, dispatcher=queue
        )
        assert got == "done"
        assert calls == [[0, 1, 2, 3], [4, 5, 6, 7]]  # 16 open chunks: 1/(2·2) of them
        assert queue.spans == [span, tablebuild.TaskSpan(view.id, 8, 8)]
        rows = _chunk_rows(sm, view.id)
        assert [s for _, s, _ in rows[:8]] == ["pending"] * 4 + ["done"] * 4
    finally:
        engine.dispose()


def test_a_task_sizes_its_part_by_the_chunks_no_task_holds(tmp_path: Path) -> None:
    """Guided self-scheduling: with ``share`` workers a task takes ``ceil(free / (2·share))``
    chunks, ``free`` = the chunks no task holds; counting another worker's leased chunks too
    would make the last tasks up to twice too long while the others have nothing left."""
    from datetime import timedelta

    from app.services._table_specs import utc_now

    settings = small_settings(tmp_path, table_chunk_log2=10)
    sm, engine = _sm(tmp_path, "guided.db")
    try:
        queue = _Queue()
        view = _request(sm, settings, queue, 14)  # 16 chunks
        now = utc_now()
        with session_scope(sm) as s:  # another worker holds the first 8
            got = TableRepository(s).claim_chunks(
                view.id, range(8), now=now, lease_until=now + timedelta(hours=1), worker="other"
            )
        assert got == list(range(8))
        before = {r[0] for r in _chunk_rows(sm, view.id) if r[2]}
        outcome = table_build.run_span(
            sm,
            settings,
            tablebuild.TaskSpan(view.id, 8, 8),
            task_seconds=1.0,
            share=2,
            costs=_cheap(),
            dispatcher=queue,
        )
        assert outcome == "done"
        taken = {r[0] for r in _chunk_rows(sm, view.id) if r[2]} - before
        assert len(taken) == -(-8 // (2 * 2))  # 2 of the 8 free chunks, not 16 / 4 = 4
    finally:
        engine.dispose()
