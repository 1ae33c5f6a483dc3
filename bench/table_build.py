"""Table build throughput: real huey workers behind the real API vs raw ``cocoex`` evaluation.

Every build is timed as a client sees it (P1): the clock starts at ``POST /v1/tables`` (the
real API, ``absrank serve --no-embedded-worker``, on a temp SQLite database migrated by
``absrank migrate``) and stops when the table became ready (its ``finished_at``, on the same
machine's clock), so it includes the request, the queue dispatch (a temp SQLite huey queue,
``absrank worker``), every chunk task and the merge. ``GET /v1/tables/{id}`` polled every POLL
s until it first answers ``ready`` cross-checks it (printed beside it: the poll's granularity
adds up to POLL s, a quarter of a cheap 2^20 table's build, to what a client waits).
The peer: ``cocoex.BareProblem``
evaluating the very same points (the table's Sobol points, generated and scaled before the
clock starts) in batches of 2^16, in this process, once before and once after the build (mean
wall: drift on a shared machine hits both sides alike).

(a) One worker process, BBOB f1, f15, f21 at d = 10, N = 2^20 (f1 also at 2^22: a cheap
    function's table is short, and the fixed latencies of a request weigh on it): ratio =
    end-to-end points/s / raw points/s. Cold: the first table of the function in a fresh
    deployment and worker process (nothing known about its cost: the first task takes one
    chunk and measures it); warm: the next tables (the worker knows the cost per point).
    Goals: f1 >= 0.5, f15 and f21 >= 0.8 (warm; cold printed beside them).
(b) Two worker processes on one 2^22 table of f15 vs the machine's own two-process ceiling
    measured beside them: two raw ``cocoex`` processes at once, before and after the build.
    Ratio = (N / request->ready wall) / (points / wall of the two raw processes); goal >= 0.9.
    One worker vs one raw process, and the speedup wall(1)/wall(2), are printed too, and each
    worker's timeline from the chunk rows (first claim, busy, gaps between its tasks, waiting
    for the other's last task; idle worker-seconds in all) and the merge's own seconds.

Usage::

    .venv/bin/python bench/table_build.py            # full: N = 2^20 (f1 also 2^22), 3 repeats
    .venv/bin/python bench/table_build.py --quick    # N = 2^18 (f1 also 2^20), big 2^20, 1 repeat
    .venv/bin/python bench/table_build.py --profile  # cProfile of in-process chunk tasks + merge
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import io
import itertools
import os
import pstats
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import _common as c
import numpy as np

CHUNK = 2**16
DIM = 10
FUNCTIONS = (1, 15, 21)
#: end-to-end / raw cocoex, per function (warm)
GOALS = {1: 0.5, 15: 0.8, 21: 0.8}
#: two workers / two raw cocoex processes
GOAL_TWO = 0.9
POLL = 0.05
#: seconds between a build and the raw peer measured after it (the worker's after-ready work:
#: ladder hooks, the SQLite WAL checkpoint)
SETTLE = 0.5


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
class Timeline:
    """One worker's tasks on a table, seconds from ``created_at``."""

    first_claim: float  # request -> its first claim (queue pickup)
    busy: float  # sum of its tasks' claim -> finish
    gaps: float  # between the end of one of its tasks and its next claim
    tail: float  # its last task's end -> the table's last chunk done
    tasks: int


def timeline(rows: list[tuple[datetime, datetime, str]], origin: datetime) -> dict[str, Timeline]:
    """Per worker: ``(started_at, finished_at, worker)`` of every chunk, grouped by task (a
    task's chunks share their claim time)."""
    last = max(f for _, f, _ in rows)
    tasks: dict[str, dict[datetime, datetime]] = {}
    for start, finish, worker in rows:
        mine = tasks.setdefault(worker, {})
        mine[start] = max(mine.get(start, finish), finish)
    out = {}
    for worker, spans in tasks.items():
        ordered = sorted(spans.items())
        gaps = sum(
            max(0.0, (s2 - f1).total_seconds()) for (_, f1), (s2, _) in itertools.pairwise(ordered)
        )
        out[worker] = Timeline(
            first_claim=(ordered[0][0] - origin).total_seconds(),
            busy=sum((f - s).total_seconds() for s, f in ordered),
            gaps=gaps,
            tail=(last - max(f for _, f in ordered)).total_seconds(),
            tasks=len(ordered),
        )
    return out


@dataclass
class Build:
    function_id: str
    n: int
    workers: int
    ready: float  # POST /v1/tables sent -> the table's finished_at (the P1 clock)
    polled: float  # POST /v1/tables -> GET first answers ready (the poll's cross-check)
    post: float  # the POST itself (request -> 202)
    db_wall: float  # tables.created_at -> finished_at (inside the service)
    pickup: float  # created_at -> first chunk claimed (queue dispatch)
    chunk_span: float  # first chunk claimed -> last chunk finished
    merge: float  # last chunk finished -> ready
    merge_seconds: float  # provenance: the merge itself
    merge_cpu: float  # provenance: its CPU seconds
    chunk_cpu: float  # sum of the chunks' recorded CPU seconds (Sobol + evaluation + lowest)
    tasks: int  # chunk tasks that did work (distinct (worker, claim time))
    per_worker: dict[str, int]
    attempts: int  # chunk claims in all (== chunks: nothing ran twice)
    rate: float  # n / ready
    timeline: dict[str, Timeline]  # per worker: when it worked on the table

    @property
    def idle(self) -> float:
        """Worker-seconds with no task of the table between request and last chunk done
        (first pickup, gaps between tasks, waiting for the other worker's last task)."""
        return sum(t.first_claim + t.gaps + t.tail for t in self.timeline.values())

    @property
    def efficiency(self) -> float:
        return self.chunk_cpu / self.ready / self.workers


class Stack:
    """A deployment's API server (real HTTP), its DB sessionmaker, and worker consumers."""

    def __init__(self, dep: c.Deployment, server: Any, url: str) -> None:
        import httpx

        from app.db import make_engine, make_sessionmaker

        self.dep = dep
        self.server = server
        self.url = url
        self.settings = dep.settings()
        self.engine = make_engine(self.settings.database_url)
        self.sm = make_sessionmaker(self.engine)
        self.http = httpx.Client(base_url=url, timeout=60)

    def close(self) -> None:
        self.http.close()
        self.engine.dispose()


@contextlib.contextmanager
def stack(prefix: str) -> Iterator[Stack]:
    """A fresh migrated deployment with ``absrank serve`` on a free port (stopped at exit)."""
    import signal

    import httpx

    with c.deployment(prefix) as dep:
        port = c.free_port()
        argv = [
            c.ABSRANK,
            "serve",
            "--no-embedded-worker",
            "--no-default-tables",
            "--no-seed",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ]
        log = dep.root / "api.log"
        url = f"http://127.0.0.1:{port}"
        with c.child(argv, env=dep.env(), log=log, stop_signal=signal.SIGINT) as proc:

            def up() -> bool:
                if proc.poll() is not None:
                    raise RuntimeError(f"the API exited:\n{c.tail(log)}")
                with contextlib.suppress(httpx.HTTPError):
                    return httpx.get(url + "/healthz", timeout=2).status_code == 200
                return False

            c.wait_until(up, timeout=90, interval=0.2, what="the API")
            st = Stack(dep, proc, url)
            try:
                yield st
            finally:
                st.close()


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


def build(st: Stack, fid: int, log2n: int, seed: int, workers: int, log: Any) -> Build:
    """POST a table to the API and poll it until a worker made it ready."""
    from sqlalchemy import select

    from app.models.tables import TableChunk
    from app.repositories.tables import as_utc as utc
    from app.services import tables as svc

    body = {"function_id": fid_id(fid), "log2n": log2n, "seed": seed}
    w0, t0 = time.time(), time.perf_counter()
    r = st.http.post("/v1/tables", json=body)
    post = time.perf_counter() - t0
    if r.status_code != 202:
        raise RuntimeError(f"POST /v1/tables: {r.status_code} {r.text[:300]} (fresh seed?)")
    table_id = r.json()["id"]
    polled = None
    deadline = t0 + 900
    while time.perf_counter() < deadline:
        time.sleep(POLL)
        got = st.http.get(f"/v1/tables/{table_id}")
        status = got.json()["status"] if got.status_code == 200 else None
        if status == "ready":
            polled = time.perf_counter() - t0
            break
        if status == "failed":
            raise RuntimeError(f"table failed: {got.json().get('error')}")
        if log[0].poll() is not None:
            raise RuntimeError(f"the worker exited ({log[0].returncode}):\n{c.tail(log[1])}")
    if polled is None:
        raise TimeoutError(f"table {table_id} not ready:\n{c.tail(log[1])}")
    v = svc.get_table(st.sm, table_id)
    with st.sm() as s:
        rows = s.execute(
            select(
                TableChunk.started_at,
                TableChunk.finished_at,
                TableChunk.cpu_seconds,
                TableChunk.worker,
                TableChunk.attempts,
            ).where(TableChunk.table_id == table_id)
        ).all()
    first = min(utc(r[0]) for r in rows)
    last = max(utc(r[1]) for r in rows)
    per_worker: dict[str, int] = {}
    for row in rows:
        per_worker[row[3]] = per_worker.get(row[3], 0) + 1
    prov = v.provenance or {}
    return Build(
        function_id=v.function_id,
        n=v.n,
        workers=workers,
        ready=utc(v.finished_at).timestamp() - w0,
        polled=polled,
        post=post,
        db_wall=(v.finished_at - v.created_at).total_seconds(),
        pickup=(first - v.created_at).total_seconds(),
        chunk_span=(last - first).total_seconds(),
        merge=(v.finished_at - last).total_seconds(),
        merge_seconds=float(prov.get("build", {}).get("merge_seconds", float("nan"))),
        merge_cpu=float(prov.get("build", {}).get("merge_cpu_seconds", float("nan"))),
        chunk_cpu=float(sum(r[2] for r in rows)),
        tasks=len({(r[3], r[0]) for r in rows}),
        per_worker=per_worker,
        attempts=int(sum(r[4] for r in rows)),
        rate=v.n / (utc(v.finished_at).timestamp() - w0),
        timeline=timeline([(utc(r[0]), utc(r[1]), r[3]) for r in rows], v.created_at),
    )


_seed = iter(range(1000, 10**6))


def next_seed() -> int:
    return next(_seed)


def warm_up(st: Stack, workers: int, log: Any) -> None:
    """One small f15 table per consumer start, so worker start-up stays off the clock."""
    build(st, 15, 16 + max(workers, 2), next_seed(), workers, log)


def _bracketed(fid: int, n: int, seed: int, run: Any) -> tuple[dict[str, Any], Any]:
    """Raw cocoex on the table's points before and after ``run()`` (mean wall)."""
    before = raw_rate(fid, n, seed)
    out = run()
    after = raw_rate(fid, n, seed)
    wall = (before["wall"] + after["wall"]) / 2
    cpu = (before["cpu"] + after["cpu"]) / 2
    raw = {"points": n, "wall": wall, "cpu": cpu, "rate": n / wall}
    return {**raw, "before": before, "after": after}, out


# ---------------------------------------------------------------------------- parts


def part_a(log2n: int, repeats: int) -> dict[str, Any]:
    cases = [(fid, log2n) for fid in FUNCTIONS] + [(1, log2n + 2)]
    print(
        f"\n(a) one worker, POST -> ready vs raw cocoex.BareProblem on the same points, d = {DIM}, "
        f"chunks of 2^16, {repeats} repeat(s) (a fresh deployment and worker each), cold then warm"
    )
    out: dict[str, Any] = {"log2n": log2n, "repeats": repeats, "cases": {}}
    out["loadavg_before"] = os.getloadavg()
    runs: dict[str, dict[str, list[tuple[dict[str, Any], Build]]]] = {
        f"{fid_id(f)} 2^{m}": {"cold": [], "warm": []} for f, m in cases
    }
    for rep in range(repeats):
        with stack(f"build-a{rep}") as st, consumer(st.dep, 1, f"a{rep}") as log:
            # worker start-up off the clock, with a function not measured here
            build(st, 3, 16, next_seed(), 1, log)
            for fid, m in cases:
                key = f"{fid_id(fid)} 2^{m}"
                kinds = ("cold", "warm") if m == log2n else ("warm",)
                for temp in kinds:
                    seed = next_seed()
                    run = functools.partial(build, st, fid, m, seed, 1, log)
                    pair = _bracketed(fid, 2**m, seed, run)
                    runs[key][temp].append(pair)
            out.setdefault("loadavg", []).append(os.getloadavg())
    header = (
        f"{'table':<24}{'raw Mpt/s':>10}{'e2e Mpt/s':>10}{'warm ratio':>22}{'cold ratio':>20}"
        f"{'cpu':>6}{'tasks':>6}{'pickup':>7}  goal"
    )
    print(header)
    for (fid, m), (key, temps) in zip(cases, runs.items(), strict=True):
        warm = temps["warm"]
        ratios = [e.rate / r["rate"] for r, e in warm]
        polled = [e.n / e.polled / r["rate"] for r, e in warm]
        cold = [e.rate / r["rate"] for r, e in temps["cold"]]
        goal = GOALS[fid]
        ok = c.median(ratios) >= goal
        cpu = [r["cpu"] / (e.chunk_cpu + e.merge_cpu) for r, e in warm]
        print(
            f"{key:<24}{c.median([r['rate'] for r, _ in warm]) / 1e6:>10.2f}"
            f"{c.median([e.rate for _, e in warm]) / 1e6:>10.2f}{c.spread(ratios):>22}"
            f"{c.spread(cold) if cold else '-':>20}{c.median(cpu):>6.2f}"
            f"{c.median([e.tasks for _, e in warm]):>6.0f}"
            f"{c.median([e.pickup for _, e in warm]):>7.2f}  >= {goal} {c.verdict(ok)}"
        )
        out["cases"][key] = {
            "function_id": fid_id(fid),
            "log2n": m,
            "goal": goal,
            "ratio_median": c.median(ratios),
            "ratios": ratios,
            "polled_ratio_median": c.median(polled),
            "cold_ratio_median": c.median(cold) if cold else None,
            "cold_ratios": cold,
            "cpu_ratios": cpu,
            "goal_met": ok,
            "warm": [{"raw": r, "e2e": asdict(e)} for r, e in warm],
            "cold": [{"raw": r, "e2e": asdict(e)} for r, e in temps["cold"]],
        }
    print(
        "  ratio = (N / wall from the POST sent to the table's finished_at, the same machine's "
        f"clock; GET polled every {POLL} s as a cross-check) / (N / raw batch wall), "
        "median [min-max];"
    )
    print(
        "  cpu = raw CPU seconds / the build's (chunks + merge; the load on a shared machine "
        "weighs on it less);\n  tasks = chunk tasks that did work (warm); pickup = request -> "
        "first chunk claimed (s)"
    )
    print(f"  load average after each repeat: {out['loadavg']}")
    return out


def part_b(log2n: int, repeats: int, fid: int) -> dict[str, Any]:
    n = 2**log2n
    raw_n = max(2**18, n // 4)
    print(
        f"\n(b) two workers vs two raw cocoex processes at once, {fid_id(fid)}, N = 2^{log2n} "
        f"({n // CHUNK} chunks of 2^16), {repeats} repeat(s), 1 and 2 workers alternated"
    )
    builds: dict[int, list[Build]] = {1: [], 2: []}
    ceilings: dict[int, list[float]] = {1: [], 2: []}  # raw points/s with 1 and 2 processes
    loads = []
    with stack("build-b") as st:
        for rep in range(repeats):
            for workers in (1, 2) if rep % 2 == 0 else (2, 1):
                with consumer(st.dep, workers, f"b{rep}w{workers}") as log:
                    warm_up(st, workers, log)
                    time.sleep(SETTLE)
                    before = raw_n / raw_parallel(fid, raw_n, workers)
                    builds[workers].append(build(st, fid, log2n, next_seed(), workers, log))
                    time.sleep(SETTLE)  # the worker's after-ready work stays off the peer's clock
                    after = raw_n / raw_parallel(fid, raw_n, workers)
                    ceilings[workers].append((before + after) / 2)
                loads.append(os.getloadavg())
    ratio = {w: [b.rate / r for b, r in zip(builds[w], ceilings[w], strict=True)] for w in (1, 2)}
    speedups = [one.ready / two.ready for one, two in zip(builds[1], builds[2], strict=True)]
    raw_speedup = [two / one for one, two in zip(ceilings[1], ceilings[2], strict=True)]
    ok = c.median(ratio[2]) >= GOAL_TWO
    for w in (1, 2):
        bs = builds[w]
        print(
            f"  {w} worker(s): POST->ready {c.spread([b.ready for b in bs])} s "
            f"(polled {c.spread([b.polled for b in bs])} s), "
            f"{c.spread([b.rate / 1e6 for b in bs])} Mpt/s; {w} raw process(es) "
            f"{c.spread([r / 1e6 for r in ceilings[w]])} Mpt/s; ratio {c.spread(ratio[w])}; "
            f"tasks {[b.tasks for b in bs]}, chunks per worker "
            f"{[sorted(b.per_worker.values()) for b in bs]}, merge "
            f"{c.spread([b.merge for b in bs])} s"
        )
        tl = [list(b.timeline.values()) for b in bs]
        print(
            f"    timeline (s from the request, per build: one value per worker): POST "
            f"{c.spread([b.post for b in bs])}; first claim "
            f"{[[round(t.first_claim, 2) for t in ts] for ts in tl]}; busy "
            f"{[[round(t.busy, 2) for t in ts] for ts in tl]}; gaps between tasks "
            f"{[[round(t.gaps, 2) for t in ts] for ts in tl]}; waiting for the last task "
            f"{[[round(t.tail, 2) for t in ts] for ts in tl]}; merge (in the last task "
            f"or after) {c.spread([b.merge_seconds for b in bs])} s; idle worker-seconds "
            f"{c.spread([b.idle for b in bs])}"
        )
    print(
        f"  two workers / two raw processes = {c.spread(ratio[2])}  goal >= {GOAL_TWO}  "
        f"{c.verdict(ok)}"
    )
    print(
        f"  speedup wall(1)/wall(2) = {c.spread(speedups)}; the machine's own (raw 2 vs 1 "
        f"processes) = {c.spread(raw_speedup)}; load average {loads}"
    )
    return {
        "function_id": fid_id(fid),
        "log2n": log2n,
        "ratio_two_median": c.median(ratio[2]),
        "ratios_two": ratio[2],
        "ratios_one": ratio[1],
        "goal": GOAL_TWO,
        "goal_met": ok,
        "speedups": speedups,
        "raw_speedups": raw_speedup,
        "ceilings": {str(w): v for w, v in ceilings.items()},
        "loadavg": loads,
        "builds": {str(w): [asdict(b) for b in bs] for w, bs in builds.items()},
    }


# ---------------------------------------------------------------------------- profile


class _NoDispatch:
    def enqueue_span(self, span: Any) -> None:
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
                svc.run_chunk(
                    sm, settings, view.id, index, task_seconds=settings.table_task_seconds
                )
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
    p.add_argument(
        "--quick", action="store_true", help="N = 2^18 (f1 also 2^20), a 2^20 big table, 1 repeat"
    )
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
    results["loadavg_after"] = os.getloadavg()
    name = f"table_build-{results['mode']}" + (f"-{args.only}" if args.only else "")
    name += "-custom" if args.worker_cmd else ""
    path = c.save(name, results)
    print(f"\n(total {results['seconds']:.0f} s; raw results in {path.relative_to(c.ROOT)})")
    return results


if __name__ == "__main__":
    main()
