"""``POST /v1/absolute-ranks`` under load vs a bare FastAPI endpoint with the same payload.

A temp SQLite database is migrated (``absrank migrate``) and a ready table is built in this
process with the services (``request_table`` + an inline ``run_chunk``: bbob/f15/i1/d10,
N = 2^16). Then, side by side, on 127.0.0.1:

* the real API: ``absrank serve --no-embedded-worker --no-default-tables`` (uvicorn, 1 process);
* the peer: ``bench/bare_app.py``, same uvicorn settings (``uvicorn.run(app, host, port,
  log_level="info")``, 1 process), same request fields, a response of the same shape.

Load: ``wrk`` (closed loop, keep-alive; Debian package ``wrk``), 32 and 4 concurrent
connections, each POST carrying 1,000 values and the table id. Measurements alternate between
the two servers. Printed: throughput ratio and p99 ratio at 32 clients (goals >= 0.5 and
<= 2x), absolute p99 at 4 clients (goal < 25 ms). Without ``wrk`` an asyncio + httpx load
generator is used (``--tool python``; it shares the 2 cores, so its figures are rougher).

Usage::

    .venv/bin/python bench/ranks_load.py            # 10 s per measurement, 2 repeats
    .venv/bin/python bench/ranks_load.py --quick    # 3 s per measurement, 1 repeat
    .venv/bin/python bench/ranks_load.py --profile  # where a request's time goes (py-spy +
                                                    # in-process cProfile / stage timings)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io
import json
import os
import pstats
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _common as c
import httpx
import numpy as np

FUNCTION = "bbob/f15/i1/d10"
LOG2N = 16
N_VALUES = 1000
GOAL_THROUGHPUT = 0.5
GOAL_P99_RATIO = 2.0
GOAL_P99_4 = 0.025
CONCURRENCY = (32, 4)

WRK_SCRIPT = """
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = [==[%s]==]
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'BENCH_JSON {"requests":%%d,"duration_us":%%d,"status_errors":%%d,"connect":%%d,' ..
    '"read":%%d,"write":%%d,"timeout":%%d,"p50_us":%%d,"p90_us":%%d,"p99_us":%%d,' ..
    '"max_us":%%d,"mean_us":%%.1f}\\n',
    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    latency.mean))
end
"""


# ---------------------------------------------------------------------------- set-up


class _Inline:
    """Dispatcher that runs chunks and merges in this process (the table is built here)."""

    def __init__(self, sm: Any, settings: Any) -> None:
        self.sm, self.settings = sm, settings

    def enqueue_chunk(self, table_id: str, index: int) -> None:
        from app.services import tables as svc

        svc.run_chunk(self.sm, self.settings, table_id, index)

    def enqueue_merge(self, table_id: str) -> None:
        from app.services import tables as svc

        svc.merge(self.sm, self.settings, table_id)


def build_table(dep: c.Deployment) -> tuple[Any, Any, Any]:
    """Build bbob/f15/i1/d10 at N = 2^16 in-process; return (view, sessionmaker, engine)."""
    from app.db import make_engine, make_sessionmaker
    from app.services import tables as svc

    settings = dep.settings()
    engine = make_engine(settings.database_url)
    sm = make_sessionmaker(engine)
    from app.services.table_cache import TableCaches

    view, _ = svc.request_table(
        sm,
        settings,
        _Inline(sm, settings),
        function_id=FUNCTION,
        log2n=LOG2N,
        cache=TableCaches.from_settings(settings),
    )
    view = svc.get_table(sm, view.id)
    if view.status != "ready":
        raise RuntimeError(f"table {view.id} is {view.status}: {view.error}")
    return view, sm, engine


def payload(view: Any) -> dict[str, Any]:
    """1,000 values across the table: 900 between y_1 and the median, 100 below y_1 (tail)."""
    from app.domain.functions import get_function

    fn = get_function(view.function_id)
    summary = view.summary
    y1 = summary["y_1"]
    median = next(q["t"] for q in summary["quantiles"] if q["v"] == 0.5)
    rng = np.random.default_rng(2024)
    inside = rng.uniform(y1, median, N_VALUES - 100)
    below = fn.f_opt + (y1 - fn.f_opt) * rng.uniform(1e-3, 1.0, 100)
    values = np.concatenate([inside, below])
    rng.shuffle(values)
    return {"table_id": view.id, "values": [round(float(v), 6) for v in values]}


@contextlib.contextmanager
def servers(
    dep: c.Deployment, absrank_cmd: str | None = None
) -> Iterator[dict[str, dict[str, Any]]]:
    """Start the real API and the bare peer on free ports; stop both (SIGINT, then SIGKILL).

    ``absrank_cmd`` replaces the real API's command line (``{python}`` and ``{port}`` are
    substituted), e.g. to measure a patched build side by side with the same peer.
    """
    import shlex
    import signal

    ports = {"absrank": c.free_port(), "bare": c.free_port()}
    argv = {
        "absrank": [
            c.ABSRANK,
            "serve",
            "--no-embedded-worker",
            "--no-default-tables",
            "--host",
            "127.0.0.1",
            "--port",
            str(ports["absrank"]),
        ],
        "bare": [
            c.PYTHON,
            str(c.BENCH / "bare_app.py"),
            "--host",
            "127.0.0.1",
            "--port",
            str(ports["bare"]),
        ],
    }
    if absrank_cmd:
        argv["absrank"] = shlex.split(absrank_cmd.format(python=c.PYTHON, port=ports["absrank"]))
    with contextlib.ExitStack() as stack:
        out: dict[str, dict[str, Any]] = {}
        for name in ("absrank", "bare"):
            log = dep.root / f"{name}.log"
            proc = stack.enter_context(
                c.child(argv[name], env=dep.env(), log=log, stop_signal=signal.SIGINT)
            )
            out[name] = {
                "proc": proc,
                "port": ports[name],
                "log": log,
                "url": f"http://127.0.0.1:{ports[name]}",
            }
        for name, s in out.items():

            def up(s: dict[str, Any] = s, name: str = name) -> bool:
                if s["proc"].poll() is not None:
                    raise RuntimeError(f"{name} server exited:\n{c.tail(s['log'])}")
                with contextlib.suppress(httpx.HTTPError):
                    return httpx.get(s["url"] + "/healthz", timeout=2).status_code == 200
                return False

            c.wait_until(up, timeout=60, interval=0.2, what=f"{name} server")
        yield out


def check(url: str, body: dict[str, Any]) -> dict[str, Any]:
    r = httpx.post(url + "/v1/absolute-ranks", json=body, timeout=30)
    if r.status_code != 200:
        raise RuntimeError(f"{url}: {r.status_code} {r.text[:500]}")
    data = r.json()
    if len(data["results"]) != N_VALUES:
        raise RuntimeError(f"{url}: {len(data['results'])} results")
    methods: dict[str, int] = {}
    for item in data["results"]:
        methods[item["method"]] = methods.get(item["method"], 0) + 1
    return {"bytes_out": len(r.content), "methods": methods}


# ---------------------------------------------------------------------------- load


def run_wrk(url: str, conns: int, seconds: float, script: Path) -> dict[str, Any]:
    """``wrk -t1 -c<conns> -d<seconds>s`` with the POST script; parsed summary."""
    argv = [
        "wrk",
        "-t1",
        f"-c{conns}",
        f"-d{max(1, round(seconds))}s",
        "--timeout",
        "10s",
        "-s",
        str(script),
        url + "/v1/absolute-ranks",
    ]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60, check=True)
    line = next((x for x in proc.stdout.splitlines() if x.startswith("BENCH_JSON ")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary:\n{proc.stdout}\n{proc.stderr}")
    raw = json.loads(line.removeprefix("BENCH_JSON "))
    errors = sum(raw[k] for k in ("status_errors", "connect", "read", "write", "timeout"))
    return {
        "requests": raw["requests"],
        "seconds": raw["duration_us"] / 1e6,
        "rps": raw["requests"] / (raw["duration_us"] / 1e6),
        "p50": raw["p50_us"] / 1e6,
        "p90": raw["p90_us"] / 1e6,
        "p99": raw["p99_us"] / 1e6,
        "max": raw["max_us"] / 1e6,
        "errors": errors,
    }


async def _python_load(url: str, conns: int, seconds: float, body: bytes) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    stop_at = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=conns, max_keepalive_connections=conns)
    headers = {"content-type": "application/json"}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=10) as client:

        async def worker() -> None:
            nonlocal errors
            while time.perf_counter() < stop_at:
                t0 = time.perf_counter()
                try:
                    r = await client.post("/v1/absolute-ranks", content=body, headers=headers)
                    await r.aread()
                    ok = r.status_code == 200
                except httpx.HTTPError:
                    ok = False
                latencies.append(time.perf_counter() - t0)
                errors += not ok

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(conns)))
        elapsed = time.perf_counter() - t0
    lat = np.sort(np.array(latencies))
    return {
        "requests": len(lat),
        "seconds": elapsed,
        "rps": len(lat) / elapsed,
        "p50": float(np.quantile(lat, 0.5)),
        "p90": float(np.quantile(lat, 0.9)),
        "p99": float(np.quantile(lat, 0.99)),
        "max": float(lat[-1]),
        "errors": errors,
    }


class Load:
    def __init__(self, tool: str, body: dict[str, Any], tmp: Path) -> None:
        self.tool = tool
        self.body = json.dumps(body, separators=(",", ":")).encode()
        self.script = tmp / "post.lua"
        self.script.write_text(WRK_SCRIPT % self.body.decode())

    def __call__(self, url: str, conns: int, seconds: float) -> dict[str, Any]:
        if self.tool == "wrk":
            return run_wrk(url, conns, seconds, self.script)
        return asyncio.run(_python_load(url, conns, seconds, self.body))


# ---------------------------------------------------------------------------- main run


def measure(
    seconds: float, repeats: int, tool: str, absrank_cmd: str | None = None
) -> dict[str, Any]:
    print(
        f"\nPOST /v1/absolute-ranks, {N_VALUES} values, table {FUNCTION} N=2^{LOG2N}, "
        f"vs bare FastAPI peer; load tool {tool}; {seconds:g} s per measurement, "
        f"{repeats} repeat(s), servers alternated"
    )
    runs: dict[tuple[str, int], list[dict[str, Any]]] = {
        (name, k): [] for name in ("absrank", "bare") for k in CONCURRENCY
    }
    with c.deployment("ranks") as dep:
        view, _sm, engine = build_table(dep)
        engine.dispose()
        body = payload(view)
        load = Load(tool, body, dep.root)
        with servers(dep, absrank_cmd) as srv:
            sanity = {name: check(s["url"], body) for name, s in srv.items()}
            print(
                f"  table {view.id}; response bytes absrank {sanity['absrank']['bytes_out']}, "
                f"bare {sanity['bare']['bytes_out']}; methods {sanity['absrank']['methods']}"
            )
            for s in srv.values():  # warm-up (table cache, pydantic, sockets)
                load(s["url"], 8, min(2.0, seconds))
            for rep in range(repeats):
                for k in CONCURRENCY:
                    order = ("absrank", "bare") if rep % 2 == 0 else ("bare", "absrank")
                    for name in order:
                        r = load(srv[name]["url"], k, seconds)
                        if r["errors"]:
                            raise RuntimeError(
                                f"{name} at {k} clients: {r['errors']} errors:\n"
                                f"{c.tail(srv[name]['log'])}"
                            )
                        runs[(name, k)].append(r)
    return {"table_id": view.id, "sanity": sanity, "runs": runs}


def report(m: dict[str, Any]) -> dict[str, Any]:
    runs = m["runs"]

    def med(name: str, k: int, key: str) -> float:
        return c.median([r[key] for r in runs[(name, k)]])

    print(
        f"  {'server':<9}{'clients':>8}{'req/s':>9}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}"
        f"{'max ms':>9}{'requests':>10}"
    )
    for k in CONCURRENCY:
        for name in ("absrank", "bare"):
            print(
                f"  {name:<9}{k:>8}{med(name, k, 'rps'):>9.1f}{med(name, k, 'p50') * 1e3:>9.1f}"
                f"{med(name, k, 'p90') * 1e3:>9.1f}{med(name, k, 'p99') * 1e3:>9.1f}"
                f"{med(name, k, 'max') * 1e3:>9.1f}"
                f"{sum(r['requests'] for r in runs[(name, k)]):>10}"
            )
    pairs32 = list(zip(runs[("absrank", 32)], runs[("bare", 32)], strict=True))
    thr = [a["rps"] / b["rps"] for a, b in pairs32]
    p99r = [a["p99"] / b["p99"] for a, b in pairs32]
    p99_4 = [r["p99"] for r in runs[("absrank", 4)]]
    ok_thr = c.median(thr) >= GOAL_THROUGHPUT
    ok_p99 = c.median(p99r) <= GOAL_P99_RATIO
    ok_4 = c.median(p99_4) < GOAL_P99_4
    print(
        f"  32 clients: throughput absrank/bare = {c.spread(thr)}  goal >= {GOAL_THROUGHPUT}  "
        f"{c.verdict(ok_thr)}"
    )
    print(
        f"  32 clients: p99 absrank/bare = {c.spread(p99r)}  goal <= {GOAL_P99_RATIO}x  "
        f"{c.verdict(ok_p99)}"
    )
    print(
        f"   4 clients: p99 absrank = {c.spread([x * 1e3 for x in p99_4])} ms  goal < "
        f"{GOAL_P99_4 * 1e3:.0f} ms  {c.verdict(ok_4)}  (bare: "
        f"{c.spread([r['p99'] * 1e3 for r in runs[('bare', 4)]])} ms)"
    )
    return {
        "throughput_ratio_32": c.median(thr),
        "throughput_ratios_32": thr,
        "p99_ratio_32": c.median(p99r),
        "p99_ratios_32": p99r,
        "p99_4_seconds": c.median(p99_4),
        "goals_met": {"throughput_32": ok_thr, "p99_ratio_32": ok_p99, "p99_4": ok_4},
        "runs": {f"{name}-{k}": v for (name, k), v in runs.items()},
        "table_id": m["table_id"],
        "sanity": m["sanity"],
        "loadavg_after": os.getloadavg(),
    }


# ---------------------------------------------------------------------------- profile


def _stages(sm: Any, settings: Any, body: dict[str, Any], reps: int = 30) -> None:
    """Per-request CPU of each stage FastAPI runs, in-process, absrank vs the bare peer.

    Mirrors ``fastapi.routing``: the body is validated from JSON, the endpoint runs, its return
    value is validated against ``response_model`` and dumped to JSON bytes by pydantic-core
    (``dump_json``, FastAPI's fast path for a default response class).
    """
    import bare_app
    from pydantic import TypeAdapter

    from app.schemas.ranks import RankRequest, RankResponse
    from app.services.provenance import canonical_sha256
    from app.services.ranks import rank_values
    from app.services.table_cache import AppCaches
    from app.services.tables import load_table_data

    caches = AppCaches.from_settings(settings)  # this run's own, kept across the repetitions
    raw = json.dumps(body).encode()

    def clock(fn: Any) -> float:
        fn()
        t0 = time.process_time()
        for _ in range(reps):
            fn()
        return (time.process_time() - t0) / reps * 1e3

    ta, bta = TypeAdapter(RankResponse), TypeAdapter(bare_app.BareResponse)
    req = RankRequest.model_validate_json(raw)
    out = rank_values(sm, settings, None, req, cache=caches.tables, ladder_cache=caches.ladders)
    resp = RankResponse(**out)
    breq = bare_app.BareRequest.model_validate_json(raw)
    bout = bare_app.absolute_ranks(breq)
    bresp = bta.validate_python(bout)
    rows = [
        (
            "parse + validate request",
            clock(lambda: RankRequest.model_validate_json(raw)),
            clock(lambda: bare_app.BareRequest.model_validate_json(raw)),
        ),
        (
            "  of which load_table_data (2 SQL + cache)",
            clock(lambda: load_table_data(sm, body["table_id"], cache=caches.tables)),
            0.0,
        ),
        (
            "  of which request_sha256 (provenance)",
            clock(lambda: canonical_sha256(req.model_dump(mode="json"))),
            0.0,
        ),
        (
            "endpoint: rank_values",
            clock(
                lambda: rank_values(
                    sm, settings, None, req, cache=caches.tables, ladder_cache=caches.ladders
                )
            ),
            clock(lambda: bare_app.absolute_ranks(breq)),
        ),
        ("endpoint: RankResponse(**out)", clock(lambda: RankResponse(**out)), 0.0),
        (
            "response_model validate",
            clock(lambda: ta.validate_python(resp)),
            clock(lambda: bta.validate_python(bout)),
        ),
        ("dump_json", clock(lambda: ta.dump_json(resp)), clock(lambda: bta.dump_json(bresp))),
    ]
    print(
        f"\n  in-process CPU per request (ms, mean of {reps}; 'of which' rows are inside "
        "rank_values):"
    )
    print(f"  {'stage':<44}{'absrank':>9}{'bare':>9}")
    for label, a, b in rows:
        print(f"  {label:<44}{a:>9.2f}{b:>9.2f}")
    total = [sum(r[i] for r in rows if not r[0].startswith("  ")) for i in (1, 2)]
    print(f"  {'total':<44}{total[0]:>9.2f}{total[1]:>9.2f}")

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(reps):
        rank_values(sm, settings, None, req, cache=caches.tables, ladder_cache=caches.ladders)
    prof.disable()
    buf = io.StringIO()
    pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(20)
    print(f"\n  cProfile of rank_values x {reps} (sorted by own time):")
    print("\n".join(x for x in buf.getvalue().splitlines() if x.strip()))


def _collapse(path: Path, top: int = 25) -> None:
    """Own and inclusive sample shares by function/line from a py-spy raw (collapsed) file."""
    own: dict[str, int] = {}
    incl: dict[str, int] = {}
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count_s = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_s)
        frames = stack.split(";")
        total += count
        own[frames[-1]] = own.get(frames[-1], 0) + count
        seen = set()
        for f in frames:
            name = (
                f.split(" (")[0] + " (" + f.split(" (")[-1].split(":")[0] + ")" if " (" in f else f
            )
            if name not in seen:
                seen.add(name)
                incl[name] = incl.get(name, 0) + count
    print(
        f"\n  py-spy --gil: {total} samples of the absrank server's GIL holder "
        "(where the Python CPU goes; GIL-free numpy/scipy loops are under-represented)"
    )
    print("  own time by line:")
    for f, n in sorted(own.items(), key=lambda x: -x[1])[:top]:
        print(f"    {n / total:6.1%}  {f}")
    print("  inclusive time by function:")
    for f, n in sorted(incl.items(), key=lambda x: -x[1])[:top]:
        print(f"    {n / total:6.1%}  {f}")


def profile(seconds: float, tool: str, py_spy: str | None) -> None:
    with c.deployment("ranks-prof") as dep:
        view, sm, engine = build_table(dep)
        body = payload(view)
        try:
            _stages(sm, dep.settings(), body)
        finally:
            engine.dispose()
        spy = py_spy or shutil.which("py-spy")
        if spy is None:
            print(
                "\n  (py-spy not found: pip install --target /tmp/pyspy py-spy, then "
                "--py-spy /tmp/pyspy/bin/py-spy, for a profile of the live server)"
            )
            return
        load = Load(tool, body, dep.root)
        with servers(dep) as srv:
            url, pid = srv["absrank"]["url"], srv["absrank"]["proc"].pid
            load(url, 8, 2.0)
            out = dep.root / "pyspy.txt"
            with c.child(
                [
                    spy,
                    "record",
                    "--pid",
                    str(pid),
                    "--rate",
                    "100",
                    "--format",
                    "raw",
                    "--nonblocking",
                    "--gil",
                    "--duration",
                    str(int(seconds) + 1),
                    "-o",
                    str(out),
                ],
                env=dict(os.environ),
                log=dep.root / "pyspy.log",
            ) as spy_p:
                time.sleep(0.5)
                r = load(url, 32, seconds)
                spy_p.wait(timeout=seconds + 30)
            print(
                f"\n  load during the profile: {r['rps']:.0f} req/s at 32 clients, "
                f"p99 {r['p99'] * 1e3:.1f} ms"
            )
            if out.exists():
                _collapse(out)
            else:
                print(c.tail(dep.root / "pyspy.log"))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="3 s per measurement, 1 repeat")
    p.add_argument("--seconds", type=float, default=None, help="per measurement (10 / 3)")
    p.add_argument("--repeats", type=int, default=None, help="alternated repeats (2 / 1)")
    p.add_argument(
        "--tool",
        choices=("wrk", "python"),
        default=None,
        help="load generator (default: wrk if installed)",
    )
    p.add_argument("--profile", action="store_true", help="where a request's time goes")
    p.add_argument(
        "--absrank-cmd",
        default=None,
        help="serve the API with this command instead ({python}, {port} substituted)",
    )
    p.add_argument("--py-spy", default=None, help="path of a py-spy binary for --profile")
    args = p.parse_args(argv)
    c.exit_on_sigterm()
    tool = args.tool or ("wrk" if shutil.which("wrk") else "python")
    seconds = args.seconds or (3.0 if args.quick else 10.0)
    repeats = args.repeats or (1 if args.quick else 2)
    if args.profile:
        profile(seconds, tool, args.py_spy)
        return {}
    t0 = time.perf_counter()
    m = measure(seconds, repeats, tool, args.absrank_cmd)
    results = {
        "mode": "quick" if args.quick else "full",
        "tool": tool,
        "seconds_each": seconds,
        "absrank_cmd": args.absrank_cmd,
        "repeats": repeats,
        "machine": c.machine(),
        **report(m),
    }
    results["seconds"] = time.perf_counter() - t0
    name = f"ranks_load-{results['mode']}" + ("-custom" if args.absrank_cmd else "")
    path = c.save(name, results)
    print(f"\n(total {results['seconds']:.0f} s; raw results in {path.relative_to(c.ROOT)})")
    return results


if __name__ == "__main__":
    main()
