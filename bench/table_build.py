"""Table build throughput: real huey workers end to end vs raw ``cocoex`` batch evaluation.

(a) One worker process (``absrank worker --workers 1``: a real huey consumer on a temp SQLite
    queue, with a temp SQLite database migrated by ``absrank migrate``) builds a table of ``N``
    points in chunks of 2^16; the time runs from ``request_table`` (the service the API calls)
    to the table being ready (``tables.created_at`` -> ``finished_at``, cross-checked by
    polling). Side by side, in this process, ``cocoex.BareProblem`` evaluates the very same
    points (the table's Sobol points, generated before the clock starts) in batches of 2^16.
    Ratio = end-to-end points/s / raw points/s (the raw run brackets the build: once before,
    once after, mean wall); goal >= 0.70, for f1, f15 and f21 at d = 10.
(b) Two worker processes vs one (``--workers 2`` vs ``--workers 1``) on a 2^22 table:
    speedup = wall(1) / wall(2), goal >= 1.5; parallel efficiency = (sum of the chunks'
    recorded CPU seconds / wall) / workers.

Usage::

    .venv/bin/python bench/table_build.py            # full: N = 2^20, big table 2^22
    .venv/bin/python bench/table_build.py --quick    # N = 2^18, big table 2^20
    .venv/bin/python bench/table_build.py --profile  # cProfile of in-process chunk + merge
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import io
import os
import pstats
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import _common as c
import numpy as np

CHUNK = 2**16
DIM = 10
FUNCTIONS = (1, 15, 21)
GOAL_RATIO = 0.70
GOAL_SPEEDUP = 1.5
POLL = 0.05


def fid_id(fid: int) -> str:
    return f"bbob/f{fid}/i1/d{DIM}"


# ---------------------------------------------------------------------------- raw peer


def raw_rate(fid: int, n: int, seed: int) -> dict[str, float]:
    """Points/s of ``cocoex.BareProblem`` on the table's own points, batches of 2^16."""
    import cocoex

    from app.domain import sampling

    problem = cocoex.BareProblem("bbob", fid, DIM, 1)
    lower, upper = np.full(DIM, -5.0), np.full(DIM, 5.0)
    batches = [
        np.ascontiguousarray(
            sampling.scale_to_box(sampling.sobol_chunk(DIM, seed, j, CHUNK), lower, upper)
        )
        for j in range(n // CHUNK)
    ]
    problem(batches[0][:16])  # touch the problem once outside the clock
    t0, cpu0 = time.perf_counter(), time.process_time()
    for X in batches:
        problem(X)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return {"points": n, "wall": wall, "cpu": cpu, "rate": n / wall}


def _raw_proc(fid: int, n: int, seed: int, barrier: Any, out: Any) -> None:
    import cocoex

    problem = cocoex.BareProblem("bbob", fid, DIM, 1)
    X = np.random.default_rng(seed).uniform(-5.0, 5.0, (n, DIM))
    problem(X[:16])
    barrier.wait()
    t0 = time.perf_counter()  # CLOCK_MONOTONIC: comparable across processes
    for j in range(0, n, CHUNK):
        problem(X[j : j + CHUNK])
    out.put((t0, time.perf_counter()))


def raw_parallel(fid: int, n: int, procs: int) -> float:
    """Wall seconds for ``procs`` processes to evaluate ``n`` points in all with raw cocoex.

    The machine's own parallel ceiling, measured side by side with the workers: on a small VM
    two vCPUs may not give two cores' worth of work.
    """
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    barrier, out = ctx.Barrier(procs), ctx.Queue()
    ps = [
        ctx.Process(target=_raw_proc, args=(fid, n // procs, i, barrier, out)) for i in range(procs)
    ]
    for p in ps:
        p.start()
    try:
        spans = [out.get(timeout=600) for _ in ps]
    finally:
        for p in ps:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
                p.join()
    return max(e for _, e in spans) - min(s for s, _ in spans)


# ---------------------------------------------------------------------------- e2e


@dataclass
class Build:
    function_id: str
    n: int
    workers: int
    wall: float  # tables.created_at -> finished_at (request -> ready)
    polled: float  # request -> ready as observed by polling every POLL s
    pickup: float  # created_at -> first chunk claimed
    chunk_span: float  # first chunk claimed -> last chunk finished
    merge: float  # last chunk finished -> ready
    merge_seconds: float  # provenance: the merge itself
    chunk_cpu: float  # sum of the chunks' recorded CPU seconds (Sobol + evaluation + lowest)
    chunk_wall_sum: float  # sum over chunks of finished_at - started_at
    per_worker: dict[str, int]
    attempts: int  # chunk claims in all (== chunks: nothing ran twice)
    provenance_chunk_cpu: float  # the same CPU sum as merge() recorded it in the provenance
    rate: float

    @property
    def efficiency(self) -> float:
        return self.chunk_cpu / self.wall / self.workers


class Queue:
    """A deployment's DB sessionmaker and a dispatcher on its SQLite huey queue."""

    def __init__(self, dep: c.Deployment) -> None:
        from app.db import make_engine, make_sessionmaker
        from workers.app import make_huey
        from workers.tasks import HueyDispatcher

        self.dep = dep
        self.settings = dep.settings()
        self.engine = make_engine(self.settings.database_url)
        self.sm = make_sessionmaker(self.engine)
        self.huey = make_huey(self.settings)
        self.dispatcher = HueyDispatcher(self.huey)

    def close(self) -> None:
        self.huey.storage.close()
        self.engine.dispose()


#: ``--worker-cmd``: replaces ``absrank worker --workers N`` (``{python}``, ``{workers}``)
WORKER_CMD: str | None = None


@contextlib.contextmanager
def consumer(dep: c.Deployment, workers: int, tag: str) -> Iterator[Any]:
    """``absrank worker --workers N`` on the deployment, stopped (SIGTERM, then SIGKILL) at exit."""
    import shlex

    log = dep.root / f"worker-{tag}.log"
    argv = [c.ABSRANK, "worker", "--workers", str(workers)]
    if WORKER_CMD:
        argv = shlex.split(WORKER_CMD.format(python=c.PYTHON, workers=workers))
    with c.child(argv, env=dep.env(), log=log) as proc:
        yield proc, log


def build(q: Queue, fid: int, log2n: int, seed: int, workers: int, log: Any) -> Build:
    """Request a table through the service and wait until a worker made it ready."""
    from sqlalchemy import select

    from app.models.tables import TableChunk
    from app.repositories.tables import as_utc as utc
    from app.services import tables as svc
    from app.services.table_cache import TableCaches

    t0 = time.perf_counter()
    view, created = svc.request_table(
        q.sm,
        q.settings,
        q.dispatcher,
        function_id=fid_id(fid),
        log2n=log2n,
        seed=seed,
        cache=TableCaches.from_settings(q.settings),
    )
    if not created:
        raise RuntimeError(f"table {view.id} existed already: use a fresh seed")
    polled = None
    deadline = t0 + 900
    while time.perf_counter() < deadline:
        v = svc.get_table(q.sm, view.id)
        if v.status == "ready":
            polled = time.perf_counter() - t0
            break
        if v.status == "failed":
            raise RuntimeError(f"table failed: {v.error}")
        if log[0].poll() is not None:
            raise RuntimeError(f"the worker exited ({log[0].returncode}):\n{c.tail(log[1])}")
        time.sleep(POLL)
    if polled is None:
        raise TimeoutError(f"table {view.id} not ready:\n{c.tail(log[1])}")
    v = svc.get_table(q.sm, view.id)
    with q.sm() as s:
        rows = s.execute(
            select(
                TableChunk.started_at,
                TableChunk.finished_at,
                TableChunk.cpu_seconds,
                TableChunk.worker,
                TableChunk.attempts,
            ).where(TableChunk.table_id == view.id)
        ).all()

    first = min(utc(r[0]) for r in rows)
    last = max(utc(r[1]) for r in rows)
    per_worker: dict[str, int] = {}
    for r in rows:
        per_worker[r[3]] = per_worker.get(r[3], 0) + 1
    wall = (v.finished_at - v.created_at).total_seconds()
    prov = v.provenance or {}
    return Build(
        function_id=v.function_id,
        n=v.n,
        workers=workers,
        wall=wall,
        polled=polled,
        pickup=(first - v.created_at).total_seconds(),
        chunk_span=(last - first).total_seconds(),
        merge=(v.finished_at - last).total_seconds(),
        merge_seconds=float(prov.get("build", {}).get("merge_seconds", float("nan"))),
        chunk_cpu=float(sum(r[2] for r in rows)),
        chunk_wall_sum=float(sum((utc(r[1]) - utc(r[0])).total_seconds() for r in rows)),
        per_worker=per_worker,
        attempts=int(sum(r[4] for r in rows)),
        provenance_chunk_cpu=float(prov.get("build", {}).get("chunk_cpu_seconds", float("nan"))),
        rate=v.n / wall,
    )


_seed = iter(range(1000, 10**6))


def next_seed() -> int:
    return next(_seed)


def warm_up(q: Queue, workers: int, log: Any) -> None:
    """One small table per consumer start, so worker start-up stays off the clock."""
    build(q, 15, 16 + max(workers, 2), next_seed(), workers, log)


# ---------------------------------------------------------------------------- parts


def part_a(log2n: int, repeats: int) -> dict[str, Any]:
    n = 2**log2n
    print(
        f"\n(a) one worker process, end to end vs raw cocoex.BareProblem, N = 2^{log2n}, "
        f"chunks of 2^16, d = {DIM}, {repeats} repeat(s), interleaved"
    )
    out: dict[str, Any] = {"log2n": log2n, "repeats": repeats, "functions": {}}
    out["loadavg_before"] = os.getloadavg()
    with c.deployment("build-a") as dep:
        q = Queue(dep)
        try:
            with consumer(dep, 1, "a") as log:
                warm_up(q, 1, log)
                runs: dict[int, list[tuple[dict[str, float], Build]]] = {f: [] for f in FUNCTIONS}
                for _ in range(repeats):
                    for fid in FUNCTIONS:
                        seed = next_seed()
                        # the peer brackets the build (before and after): drift on a shared
                        # machine hits both sides of the ratio alike
                        before = raw_rate(fid, n, seed)
                        e2e = build(q, fid, log2n, seed, 1, log)
                        after = raw_rate(fid, n, seed)
                        wall = (before["wall"] + after["wall"]) / 2
                        raw = {
                            "points": n,
                            "wall": wall,
                            "rate": n / wall,
                            "before": before,
                            "after": after,
                        }
                        runs[fid].append((raw, e2e))
        finally:
            q.close()
    header = (
        f"{'function':<18}{'raw Mpt/s':>10}{'e2e Mpt/s':>10}{'ratio':>20}"
        f"{'steady':>8}{'pickup s':>9}{'merge s':>8}  goal >= {GOAL_RATIO:.0%}"
    )
    print(header)
    for fid, pairs in runs.items():
        ratios = [e.rate / r["rate"] for r, e in pairs]
        # chunks only (no pickup, no merge): what the worker loop sustains
        steady = [e.n / e.chunk_span / r["rate"] for r, e in pairs]
        raw_m = c.median([r["rate"] for r, _ in pairs]) / 1e6
        e2e_m = c.median([e.rate for _, e in pairs]) / 1e6
        ok = c.median(ratios) >= GOAL_RATIO
        print(
            f"{fid_id(fid):<18}{raw_m:>10.2f}{e2e_m:>10.2f}{c.spread(ratios):>20}"
            f"{c.median(steady):>8.2f}{c.median([e.pickup for _, e in pairs]):>9.2f}"
            f"{c.median([e.merge for _, e in pairs]):>8.2f}  {c.verdict(ok)}"
        )
        out["functions"][fid_id(fid)] = {
            "ratio_median": c.median(ratios),
            "ratios": ratios,
            "steady_ratio_median": c.median(steady),
            "goal_met": ok,
            "raw": [r for r, _ in pairs],
            "e2e": [asdict(e) for _, e in pairs],
        }
    print("  ratio = (N / request->ready wall) / (N / raw batch wall), median [min-max];")
    print("  steady = same ratio over first-claim -> last-chunk-finished only (no pickup, merge)")
    return out


def part_b(log2n: int, repeats: int, fid: int) -> dict[str, Any]:
    print(
        f"\n(b) two worker processes vs one, {fid_id(fid)}, N = 2^{log2n} "
        f"({2**log2n // CHUNK} chunks of 2^16), {repeats} repeat(s), interleaved"
    )
    walls: dict[int, list[Build]] = {1: [], 2: []}
    ceiling: list[float] = []
    raw_n = max(2**18, 2**log2n // 4)
    with c.deployment("build-b") as dep:
        q = Queue(dep)
        try:
            for rep in range(repeats):
                for workers in (1, 2) if rep % 2 == 0 else (2, 1):
                    with consumer(dep, workers, f"b{rep}w{workers}") as log:
                        warm_up(q, workers, log)
                        walls[workers].append(build(q, fid, log2n, next_seed(), workers, log))
                ceiling.append(raw_parallel(fid, raw_n, 1) / raw_parallel(fid, raw_n, 2))
        finally:
            q.close()
    speedups = [one.wall / two.wall for one, two in zip(walls[1], walls[2], strict=True)]
    eff = {w: [b.efficiency for b in bs] for w, bs in walls.items()}
    ok = c.median(speedups) >= GOAL_SPEEDUP
    for w, bs in walls.items():
        print(
            f"  {w} worker(s): wall {c.spread([b.wall for b in bs])} s, "
            f"chunk CPU {c.spread([b.chunk_cpu for b in bs])} s, "
            f"efficiency {c.spread(eff[w])}, merge {c.spread([b.merge for b in bs])} s, "
            f"chunks per worker {[sorted(b.per_worker.values()) for b in bs]}"
        )
    print(
        f"  speedup wall(1)/wall(2) = {c.spread(speedups)}  goal >= {GOAL_SPEEDUP}x  "
        f"{c.verdict(ok)}"
    )
    print("  efficiency = (sum of chunk cpu_seconds / request->ready wall) / workers")
    print(
        f"  machine ceiling: 2 raw cocoex processes vs 1 on 2^{raw_n.bit_length() - 1} points "
        f"= {c.spread(ceiling)}x; workers' speedup / ceiling = "
        f"{c.spread([a / b for a, b in zip(speedups, ceiling, strict=True)])}"
    )
    return {
        "ceiling_speedup": ceiling,
        "loadavg_after": os.getloadavg(),
        "function_id": fid_id(fid),
        "log2n": log2n,
        "speedup_median": c.median(speedups),
        "speedups": speedups,
        "goal_met": ok,
        "efficiency_median": {str(w): c.median(v) for w, v in eff.items()},
        "builds": {str(w): [asdict(b) for b in bs] for w, bs in walls.items()},
    }


# ---------------------------------------------------------------------------- profile


class _NoDispatch:
    def enqueue_chunk(self, table_id: str, index: int) -> None:
        pass

    def enqueue_merge(self, table_id: str) -> None:
        pass


def profile(fid: int, log2n: int, top: int = 18) -> None:
    """cProfile of the worker's code path in-process: ``run_chunk`` for every chunk + merge."""
    from app.services import tables as svc
    from app.services.table_cache import TableCaches

    print(
        f"\nprofile: in-process run_chunk x {2**log2n // CHUNK} + merge, {fid_id(fid)}, "
        f"N = 2^{log2n}"
    )
    with c.deployment("build-prof") as dep:
        settings = dep.settings()
        from app.db import make_engine, make_sessionmaker

        engine = make_engine(settings.database_url)
        sm = make_sessionmaker(engine)
        try:
            svc.request_table(
                sm,
                settings,
                _NoDispatch(),
                function_id=fid_id(fid),
                log2n=12,
                cache=TableCaches.from_settings(settings),
            )
            view, _ = svc.request_table(
                sm,
                settings,
                _NoDispatch(),
                function_id=fid_id(fid),
                log2n=log2n,
                seed=7,
                cache=TableCaches.from_settings(settings),
            )
            prof = cProfile.Profile()
            t0 = time.perf_counter()
            prof.enable()
            for index in range(view.n_chunks):
                svc.run_chunk(sm, settings, view.id, index)
            prof.disable()
            wall = time.perf_counter() - t0
        finally:
            engine.dispose()
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("tottime").print_stats(top)
    print(f"  wall {wall:.2f} s = {2**log2n / wall / 1e6:.2f} Mpt/s (in-process, no queue)")
    print("\n".join(line for line in buf.getvalue().splitlines() if line.strip())[:6000])


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="N = 2^18 and a 2^20 big table, 1 repeat")
    p.add_argument("--repeats", type=int, default=None, help="interleaved repeats (default 3/1)")
    p.add_argument("--big-function", type=int, default=15, help="BBOB function of part (b)")
    p.add_argument("--only", choices=("a", "b"), default=None)
    p.add_argument("--profile", action="store_true", help="cProfile the in-process chunk path")
    p.add_argument(
        "--worker-cmd",
        default=None,
        help="run workers with this command instead of `absrank worker --workers N` "
        "({python}, {workers} substituted), e.g. to measure a patched build",
    )
    args = p.parse_args(argv)
    global WORKER_CMD
    WORKER_CMD = args.worker_cmd
    c.exit_on_sigterm()
    log2n, big = (18, 20) if args.quick else (20, 22)
    if args.profile:
        profile(1, log2n)
        profile(15, min(log2n, 18))
        return {}
    repeats = args.repeats or (1 if args.quick else 3)
    results: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "machine": c.machine(),
        "worker_cmd": args.worker_cmd,
    }
    t0 = time.perf_counter()
    if args.only in (None, "a"):
        results["a"] = part_a(log2n, repeats)
    if args.only in (None, "b"):
        results["b"] = part_b(big, max(1, repeats - 1) if not args.quick else 1, args.big_function)
    results["seconds"] = time.perf_counter() - t0
    name = f"table_build-{results['mode']}" + (f"-{args.only}" if args.only else "")
    name += "-custom" if args.worker_cmd else ""
    path = c.save(name, results)
    print(f"\n(total {results['seconds']:.0f} s; raw results in {path.relative_to(c.ROOT)})")
    return results


if __name__ == "__main__":
    main()
