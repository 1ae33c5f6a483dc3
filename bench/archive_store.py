"""Storing a result set: the archive's whole path against a bare bulk insert of the same rows.

A set of 24 BBOB functions (d = 10) × RUNS runs × POINTS trajectory points is sent as the long
CSV to :func:`app.services.result_sets.create_from_csv` (parse, check every run against the
registry, hash, one transaction) on SQLite and on PostgreSQL; the reference is SQLAlchemy
core's ``executemany`` of the same run and point rows into the same tables. Builds are queued
into a dispatcher that keeps nothing (the queueing is timed apart: the first request of a
process lays out each function's ladder once).

Usage::

    .venv/bin/python bench/archive_store.py [--runs 200] [--points 30] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import delete, insert

from app.config import Settings
from app.db import make_engine, make_sessionmaker, session_scope
from app.models.result_sets import ResultRun, ResultSet, TrajectoryPoint
from app.schemas.result_sets import ResultSetMetadata
from app.services import result_sets
from app.services.table_cache import AppCaches
from tests.support import migrate, pg_admin_url, pg_databases

FUNCTIONS = [f"bbob/f{i}/i1/d10" for i in range(1, 25)]


class Nowhere:
    """A dispatcher that queues nothing."""

    def enqueue_span(self, span: object) -> None:
        """Drop the chunks."""

    def enqueue_merge(self, table_id: str) -> None:
        """Drop the merge."""


def long_csv(runs: int, points: int) -> bytes:
    lines = ["function_id,run,evaluations,value,budget"]
    for fid in FUNCTIONS:
        for r in range(runs):
            lines += [
                f"{fid},{r},{2**k},{1e4 + 1e4 / (k + 1) + r * 1e-3!r},{2 ** (points - 1)}"
                for k in range(points)
            ]
    return ("\n".join(lines) + "\n").encode()


def raw_insert(url: str, runs: int, points: int) -> float:
    """Seconds for SQLAlchemy core to insert the same rows (no parsing, no checks)."""
    engine = make_engine(url)
    sid = "r" + "f" * 23
    run_rows = [
        {"set_id": sid, "function_id": fid, "run": r, "suite": "bbob", "dim": 10,
         "value": 1.0, "budget": 2 ** (points - 1)}
        for fid in FUNCTIONS for r in range(runs)
    ]  # fmt: skip
    point_rows = [
        {"set_id": sid, "function_id": fid, "run": r, "evaluations": 2**k, "best": 1.0}
        for fid in FUNCTIONS for r in range(runs) for k in range(points)
    ]  # fmt: skip
    sm = make_sessionmaker(engine)
    start = time.perf_counter()
    with session_scope(sm) as s:
        s.add(ResultSet(
            id=sid, content_sha256="f" * 64, name="raw", values_are="f", source_format="csv",
            suites=["bbob"], n_functions=24, n_runs=len(run_rows), notes=[], provenance={},
            created_at=datetime.now(UTC),
        ))  # fmt: skip
        s.flush()
        for i in range(0, len(run_rows), 5000):
            s.execute(insert(ResultRun), run_rows[i : i + 5000])
        for i in range(0, len(point_rows), 5000):
            s.execute(insert(TrajectoryPoint), point_rows[i : i + 5000])
    took = time.perf_counter() - start
    with engine.begin() as conn:
        conn.execute(delete(ResultSet))
    engine.dispose()
    return took


def archive_store(url: str, data: bytes, repeat: int) -> tuple[list[float], list[float]]:
    """Seconds of create_from_csv per repetition (a new name each time), and of its queueing."""
    settings = Settings(environment="bench", database_url=url, queue_url="memory://")
    engine = make_engine(url)
    sm = make_sessionmaker(engine)
    caches = AppCaches.from_settings(settings)
    totals, queues = [], []
    queue = result_sets.queue_builds
    spent: list[float] = []

    def timed_queue(*args: object, **kwargs: object) -> object:
        t0 = time.perf_counter()
        out = queue(*args, **kwargs)  # type: ignore[arg-type]
        spent.append(time.perf_counter() - t0)
        return out

    result_sets.queue_builds = timed_queue  # type: ignore[assignment]
    try:
        for i in range(repeat):
            meta = ResultSetMetadata(name=f"bench-{i}-{os.getpid()}", values_are="f")
            t0 = time.perf_counter()
            stored = result_sets.create_from_csv(
                sm,
                settings,
                Nowhere(),
                meta,
                data,
                cache=caches.tables,
                ladder_cache=caches.ladders,
            )
            totals.append(time.perf_counter() - t0)
            queues.append(spent.pop())
            assert stored.created
    finally:
        result_sets.queue_builds = queue  # type: ignore[assignment]
        with engine.begin() as conn:
            conn.execute(delete(ResultSet))
        engine.dispose()
    return totals, queues


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--points", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = long_csv(args.runs, args.points)
    n_runs = len(FUNCTIONS) * args.runs
    print(
        f"set: {n_runs} runs, {n_runs * args.points} trajectory points, "
        f"CSV {len(data) / 1e6:.1f} MB"
    )
    with tempfile.TemporaryDirectory() as tmp, pg_databases(pg_admin_url()) as create:
        for label, url in (
            ("sqlite", f"sqlite:///{Path(tmp) / 'bench.db'}"),
            ("postgres", create()),
        ):
            migrate(url)
            totals, queues = archive_store(url, data, args.repeat)
            raw = statistics.median(
                raw_insert(url, args.runs, args.points) for _ in range(args.repeat)
            )
            store = [t - q for t, q in zip(totals, queues, strict=True)]
            med = statistics.median(store)
            print(
                f"{label:8s} archive (parse+check+hash+store) median {med:.2f} s "
                f"({(n_runs * (1 + args.points)) / med / 1e3:.0f}k rows/s); raw insert "
                f"{raw:.2f} s; ratio {med / raw:.2f}; queueing "
                + ", ".join(f"{q:.2f}" for q in queues)
                + " s"
            )


if __name__ == "__main__":
    main()
