"""``POST /v1/absolute-ranks`` against its like-for-like peer and its hardware limit.

Set-up: a temp SQLite database is migrated (``absrank migrate``) and ready tables are built in
this process with the services (``request_table`` + inline chunks: bbob/f15/i1/d10, N = 2^16,
seeds 0..ROTATION-1). Figures, each a ratio against a peer or a limit measured in the same run:

* **in-process, 10^5 values** (this process, the table decoded and cached): the endpoint's work
  (request parsed from its JSON bytes, :func:`app.services.ranks.rank_answer`, the route's
  check and bytes) vs the bare numpy limit on the same stored knots (``np.searchsorted`` +
  ``np.interp`` + ``log10``, then ``orjson.dumps`` of the same columns, the real encoder),
  cold (first call: the table read from the database and decoded) and warm (median of
  repeats). Also the
  per-value implementation it replaced (``tests/unit/services/ranks_reference.py``), and the
  cost of the response check: what the route validates (envelope + typed columns) vs one model
  per value (``TypeAdapter(RankResponse)`` over the plain answer), as shares of the endpoint.
* **over HTTP**, side by side on 127.0.0.1: the real API (``absrank serve
  --no-embedded-worker --no-default-tables``, uvicorn, 1 process; table cache
  ``ABSRANK_TABLE_READY_CACHE_SIZE=CACHE_SIZE``) and ``bench/bare_app.py`` (same uvicorn
  settings, same request model validated the same way from the body's bytes, the same
  answer bytes' shape from the same encoder, no response_model on either side, no work; and
  ``bare_app.py --floor``, the same peer ranking at the numpy limit, ``bench/_floor.py``: the
  same ranks, checked, at 10^3 values and 32 clients only, the ceiling of any implementation):
  cold first calls (the first request per table in a fresh server), one-value requests at 1
  client (the fixed cost of a request), 10^3 values at 32 and 4 clients (throughput and
  p99), and a rotation over more tables than the cache holds (every request reads and decodes
  its table).

Load: ``wrk`` (closed loop, keep-alive; Debian package ``wrk``); without it an asyncio + httpx
load generator (``--tool python``; it shares the 2 cores, so its figures are rougher).
Measurements alternate between the two servers.

Usage::

    .venv/bin/python bench/ranks_load.py            # 10 s per measurement, 2 repeats
    .venv/bin/python bench/ranks_load.py --quick    # 3 s per measurement, 1 repeat
    .venv/bin/python bench/ranks_load.py --profile  # where a request's time goes (py-spy +
                                                    # in-process cProfile)
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import _common as c  # puts the repository on sys.path

# the app's numeric baseline (app.NUMPY_DISABLED) is pinned as numpy loads: import app first,
# so that the in-process figures are those of the served numerics
import app  # noqa: F401

# isort: split
import httpx
import numpy as np

FUNCTION = "bbob/f15/i1/d10"
LOG2N = 16
N_VALUES = 1000
N_LARGE = 100_000
CACHE_SIZE = 2
ROTATION = CACHE_SIZE + 2  # more distinct tables than the cache holds
GOAL_THROUGHPUT = 0.8
GOAL_P99_RATIO = 1.5
GOAL_FIXED_MS = 2.0
GOAL_LARGE_SECONDS = 0.100
GOAL_LARGE_RATIO = 5.0
CONCURRENCY = (32, 4)
SERVERS = ("absrank", "bare", "floor")
"""The real API, the bare peer, and the bare peer ranking at the numpy limit (``--floor``:
measured at 10^3 values and 32 clients only, the ceiling of any implementation's ratio)."""

WRK_SCRIPT = """
local bodies = { %s }
local i = 0
local headers = { ["Content-Type"] = "application/json" }
request = function()
  i = i %% #bodies + 1
  return wrk.format("POST", nil, headers, bodies[i])
end
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

    def enqueue_span(self, span: Any) -> None:
        from app.services import tables as svc

        for index in range(span.first, span.first + span.count):
            svc.run_chunk(self.sm, self.settings, span.table_id, index)

    def enqueue_merge(self, table_id: str) -> None:
        from app.services import tables as svc

        svc.merge(self.sm, self.settings, table_id)


def build_tables(dep: c.Deployment, count: int) -> tuple[list[Any], Any, Any]:
    """Build ``count`` tables of FUNCTION at N = 2^LOG2N (seeds 0, 1, ...) in-process; return
    (views, sessionmaker, engine)."""
    from app.db import make_engine, make_sessionmaker
    from app.services import tables as svc
    from app.services.table_cache import TableCaches

    settings = dep.settings()
    engine = make_engine(settings.database_url)
    sm = make_sessionmaker(engine)
    views = []
    for seed in range(count):
        view, _ = svc.request_table(
            sm,
            settings,
            _Inline(sm, settings),
            function_id=FUNCTION,
            log2n=LOG2N,
            seed=seed,
            cache=TableCaches.from_settings(settings),
        )
        view = svc.get_table(sm, view.id)
        if view.status != "ready":
            raise RuntimeError(f"table {view.id} is {view.status}: {view.error}")
        views.append(view)
    return views, sm, engine


def build_table(dep: c.Deployment) -> tuple[Any, Any, Any]:
    """One table (seed 0): (view, sessionmaker, engine)."""
    views, sm, engine = build_tables(dep, 1)
    return views[0], sm, engine


def payload(view: Any, n: int = N_VALUES, seed: int = 2024) -> dict[str, Any]:
    """``n`` values across the table: 90% between y_1 and the median, 10% below y_1 (tail)."""
    from app.domain.functions import get_function

    fn = get_function(view.function_id)
    summary = view.summary
    y1 = summary["y_1"]
    median = next(q["t"] for q in summary["quantiles"] if q["v"] == 0.5)
    rng = np.random.default_rng(seed)
    below_n = max(n // 10, 0) if n > 1 else 0
    inside = rng.uniform(y1, median, n - below_n)
    below = fn.f_opt + (y1 - fn.f_opt) * rng.uniform(1e-3, 1.0, below_n)
    values = np.concatenate([inside, below])
    rng.shuffle(values)
    return {"table_id": view.id, "values": [round(float(v), 6) for v in values]}


def encoded(body: dict[str, Any]) -> bytes:
    return json.dumps(body, separators=(",", ":")).encode()


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

    ports = {"absrank": c.free_port(), "bare": c.free_port(), "floor": c.free_port()}
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
        # the peer ranking at the numpy limit on the same tables (bench/_floor.py)
        "floor": [
            c.PYTHON,
            str(c.BENCH / "bare_app.py"),
            "--floor",
            "--host",
            "127.0.0.1",
            "--port",
            str(ports["floor"]),
        ],
    }
    if absrank_cmd:
        argv["absrank"] = shlex.split(absrank_cmd.format(python=c.PYTHON, port=ports["absrank"]))
    # no figure preload: the rank route never draws, and matplotlib's import (a few seconds of
    # CPU in a background thread from 2 s after the start) would fall into the first loads
    env = dep.env() | {
        "ABSRANK_TABLE_READY_CACHE_SIZE": str(CACHE_SIZE),
        "ABSRANK_PRELOAD_FIGURES": "false",
    }
    with contextlib.ExitStack() as stack:
        out: dict[str, dict[str, Any]] = {}
        for name in SERVERS:
            log = dep.root / f"{name}.log"
            proc = stack.enter_context(
                c.child(argv[name], env=env, log=log, stop_signal=signal.SIGINT)
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
    if len(data["results"]) != len(body["values"]):
        raise RuntimeError(f"{url}: {len(data['results'])} results")
    methods: dict[str, int] = {}
    for item in data["results"]:
        methods[item["method"]] = methods.get(item["method"], 0) + 1
    return {
        "bytes_out": len(r.content),
        "keys": list(data),
        "methods": methods,
        "results": data["results"],
    }


# ---------------------------------------------------------------------------- load


def run_wrk(url: str, conns: int, seconds: float, script: Path) -> dict[str, Any]:
    """``wrk -t1 -c<conns> -d<seconds>s`` with a POST script; parsed summary."""
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


async def _python_load(url: str, conns: int, seconds: float, bodies: list[bytes]) -> dict[str, Any]:
    latencies: list[float] = []
    errors = 0
    sent = 0
    stop_at = time.perf_counter() + seconds
    limits = httpx.Limits(max_connections=conns, max_keepalive_connections=conns)
    headers = {"content-type": "application/json"}
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=10) as client:

        async def worker() -> None:
            nonlocal errors, sent
            while time.perf_counter() < stop_at:
                body = bodies[sent % len(bodies)]
                sent += 1
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
    """A closed-loop load of POSTs cycling over ``bodies``."""

    def __init__(self, tool: str, bodies: list[dict[str, Any]], tmp: Path, name: str) -> None:
        self.tool = tool
        self.bodies = [encoded(b) for b in bodies]
        self.script = tmp / f"post-{name}.lua"
        lua = ", ".join(f"[==[{b.decode()}]==]" for b in self.bodies)
        self.script.write_text(WRK_SCRIPT % lua)

    def __call__(self, url: str, conns: int, seconds: float) -> dict[str, Any]:
        if self.tool == "wrk":
            return run_wrk(url, conns, seconds, self.script)
        return asyncio.run(_python_load(url, conns, seconds, self.bodies))


# ---------------------------------------------------------------------------- in-process


def _clock(fn: Callable[[], object], reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def inprocess(dep: c.Deployment, view: Any, sm: Any, reps: int) -> dict[str, Any]:
    """10^5 values in this process: the endpoint's work vs the numpy limit, cold and warm; the
    per-value implementation it replaced; the response check's cost at 10^3 and 10^5. This
    process's allocator is set as the API's start sets it (``app.heap.keep_large_blocks``):
    both sides run with it."""
    import orjson

    from app.heap import keep_large_blocks

    keep_large_blocks()
    from pydantic_core import to_json

    from app.api.ranks import rank_response
    from app.schemas.ranks import RankRequest
    from app.services.ranks import RankEnv, rank_answer
    from app.services.table_cache import AppCaches
    from app.services.tables import load_table_data
    from tests.unit.services.ranks_reference import reference_rank_items

    settings = dep.settings()

    def endpoint_of(raw: bytes, caches: Any) -> Callable[[], bytes]:
        def endpoint() -> bytes:
            req = RankRequest.model_validate_json(raw)
            answer = rank_answer(RankEnv(sm, settings, None, caches.tables, caches.ladders), req)
            return bytes(rank_response(answer).body)

        return endpoint

    def limit_of(t: np.ndarray, caches: Any) -> Callable[[], list[bytes]]:
        def limit() -> list[bytes]:
            data = load_table_data(sm, view.id, cache=caches.tables).data
            j = np.searchsorted(data.values, t, side="right")
            lv = np.log10(np.maximum(np.interp(t, data.values, data.counts), 0.5) / (data.n + 1))
            lo, hi = lv - 0.05, np.minimum(lv + 0.05, 0.0)
            method = np.where(j == 0, "tail-power", "interpolated").tolist()
            cols = (t, 10.0**lv, lv, lo, hi, 10.0**lo, 10.0**hi)
            numpy = orjson.OPT_SERIALIZE_NUMPY  # the encoder of the real columns
            return [orjson.dumps(x, option=numpy) for x in cols] + [orjson.dumps(method)]

        return limit

    out: dict[str, Any] = {}
    body = payload(view, N_LARGE, seed=7)
    raw = encoded(body)
    t = np.asarray(body["values"], dtype=np.float64)
    fresh = AppCaches.from_settings(settings)
    endpoint, limit = endpoint_of(raw, fresh), limit_of(t, AppCaches.from_settings(settings))
    # cold: the first call of each (the table read from the database and decoded)
    out["cold_endpoint"] = _clock(endpoint, 1)[0]
    out["cold_limit"] = _clock(limit, 1)[0]
    warm_e, warm_l = [], []
    for _ in range(reps):  # alternated
        warm_e += _clock(endpoint, 1)
        warm_l += _clock(limit, 1)
    out["warm_endpoint"], out["warm_limit"] = c.median(warm_e), c.median(warm_l)
    out["warm_endpoint_all"], out["warm_limit_all"] = warm_e, warm_l
    out["bytes"] = len(endpoint())

    # the per-value implementation it replaced (one dict per value, then to_json)
    def per_value() -> bytes:
        req = RankRequest.model_validate_json(raw)
        answer = rank_answer(RankEnv(sm, settings, None, fresh.tables, fresh.ladders), req)
        cols = answer.results
        assert cols is not None
        res = _result_of(cols)
        answer.envelope()  # the route's check
        return to_json(
            answer.body | {"results": reference_rank_items(cols.value, res, cols.provisional)}
        )

    if per_value() != endpoint():
        raise RuntimeError("the columns' bytes differ from the per-value implementation's")
    out["per_value"] = c.median(_clock(per_value, max(1, reps // 3)))

    # the response check: the route's (envelope + typed columns) vs one model per value
    out["check"] = {}
    for n in (N_VALUES, N_LARGE):
        b = payload(view, n, seed=11)
        req = RankRequest.model_validate(b)
        answer = rank_answer(RankEnv(sm, settings, None, fresh.tables, fresh.ladders), req)
        r = max(3, reps) if n == N_VALUES else max(1, reps // 2)
        e_time = c.median(_clock(endpoint_of(encoded(b), fresh), r * (5 if n == N_VALUES else 1)))
        route, full = _checks(answer, r)
        out["check"][str(n)] = {"endpoint": e_time, "route": route, "full": full}
    return out


def _checks(answer: Any, reps: int) -> tuple[float, float]:
    """Seconds of the route's response check (the envelope by ``RankResponse``, the columns by
    ``RankColumns``) and of one model per value (``RankResponse`` over the plain answer)."""
    from app.api.responses import adapter
    from app.schemas.ranks import RankResponse
    from app.services.ranks import RankColumns

    cols = answer.results
    plain = answer.plain()
    fields = {k: getattr(cols, k) for k in cols.__dataclass_fields__}
    ta = adapter(RankResponse)

    def route_check() -> None:
        answer.envelope()
        RankColumns(**fields)

    route = c.median(_clock(route_check, reps * 5))
    full = c.median(_clock(lambda: ta.validate_python(plain), reps))
    return route, full


def _result_of(cols: Any) -> Any:
    from app.domain import absrank

    return absrank.RankResult(
        log10_v=cols.log10_v,
        v=cols.v,
        method=cols.method,
        log10_lo=cols.log10_lo,
        log10_hi=cols.log10_hi,
        tail=None,  # type: ignore[arg-type]
    )


def report_inprocess(m: dict[str, Any]) -> dict[str, Any]:
    print(f"\n  in-process, {N_LARGE} values, table {FUNCTION} N=2^{LOG2N} (warm: median)")
    print(f"  {'':<10}{'endpoint ms':>13}{'numpy limit ms':>16}{'ratio':>8}")
    rows = {}
    for phase in ("cold", "warm"):
        e, lim = m[f"{phase}_endpoint"], m[f"{phase}_limit"]
        rows[phase] = e / lim
        print(f"  {phase:<10}{e * 1e3:>13.1f}{lim * 1e3:>16.1f}{e / lim:>8.2f}")
    ok_abs = m["warm_endpoint"] < GOAL_LARGE_SECONDS
    ok_ratio = rows["warm"] <= GOAL_LARGE_RATIO
    print(
        f"  warm endpoint {m['warm_endpoint'] * 1e3:.0f} ms  goal < "
        f"{GOAL_LARGE_SECONDS * 1e3:.0f} ms  {c.verdict(ok_abs)};  "
        f"warm / numpy limit {rows['warm']:.2f}x  goal <= {GOAL_LARGE_RATIO:g}x  "
        f"{c.verdict(ok_ratio)}"
    )
    print(
        f"  the per-value implementation it replaced: {m['per_value'] * 1e3:.0f} ms "
        f"({m['per_value'] / m['warm_endpoint']:.1f}x the columns; same {m['bytes']} bytes)"
    )
    print("  response check, share of the endpoint's warm time:")
    for n, row in m["check"].items():
        print(
            f"    {n:>6} values: route (envelope + typed columns) "
            f"{row['route'] / row['endpoint']:+.1%}, one model per value "
            f"{row['full'] / row['endpoint']:+.1%} (full / route = "
            f"{row['full'] / row['route']:.0f}x)"
        )
    return {
        "large_cold_ratio": rows["cold"],
        "large_warm_ratio": rows["warm"],
        "large_warm_seconds": m["warm_endpoint"],
        "large_cold_seconds": m["cold_endpoint"],
        "goals": {"large_seconds": ok_abs, "large_ratio": ok_ratio},
    }


# ---------------------------------------------------------------------------- over HTTP


def _first(url: str, body: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    r = httpx.post(url + "/v1/absolute-ranks", json=body, timeout=60)
    elapsed = time.perf_counter() - t0
    if r.status_code != 200:
        raise RuntimeError(f"{url}: {r.status_code} {r.text[:500]}")
    return elapsed


def measure(
    dep: c.Deployment,
    views: list[Any],
    seconds: float,
    repeats: int,
    tool: str,
    absrank_cmd: str | None = None,
) -> dict[str, Any]:
    print(
        f"\nPOST /v1/absolute-ranks vs the bare FastAPI peer, table {FUNCTION} N=2^{LOG2N}; "
        f"load tool {tool}; {seconds:g} s per measurement, {repeats} repeat(s), servers "
        f"alternated; table cache {CACHE_SIZE}, rotation over {len(views)} tables"
    )
    main_body = payload(views[0])
    one = {"table_id": views[0].id, "values": main_body["values"][:1]}
    loads = {
        "one": Load(tool, [one], dep.root, "one"),
        "main": Load(tool, [main_body], dep.root, "main"),
        "rotation": Load(tool, [payload(v, seed=i) for i, v in enumerate(views)], dep.root, "rot"),
    }
    plan = [("one", 1), *(("main", k) for k in CONCURRENCY), ("rotation", 32)]
    runs: dict[str, list[dict[str, Any]]] = {
        f"{name}-{w}-{k}": [] for name in ("absrank", "bare") for w, k in plan
    }
    runs["floor-main-32"] = []
    with servers(dep, absrank_cmd) as srv:
        # cold: the first request per table in a fresh server (one value each)
        cold = {
            name: [_first(s["url"], {"table_id": v.id, "values": one["values"]}) for v in views]
            for name, s in srv.items()
            if name != "floor"
        }
        sanity = {name: check(s["url"], main_body) for name, s in srv.items()}
        for name in ("bare", "floor"):
            if sanity["absrank"]["keys"] != sanity[name]["keys"]:
                raise RuntimeError(f"the {name} peer's answer has other keys: {sanity}")
        if sanity["floor"].pop("results") != sanity["absrank"]["results"]:
            raise RuntimeError("the floor peer's ranks are not absrank's")
        print(f"  the floor peer's {N_VALUES} ranks: the same as absrank's (checked)")
        for x in sanity.values():
            x.pop("results", None)
        print(
            f"  response bytes for {N_VALUES} values: absrank {sanity['absrank']['bytes_out']}, "
            f"bare {sanity['bare']['bytes_out']}; methods {sanity['absrank']['methods']}"
        )
        for s in srv.values():  # warm-up (table cache, pydantic, sockets)
            loads["main"](s["url"], 8, min(2.0, seconds))
        for rep in range(repeats):
            for what, k in plan:
                names = SERVERS if (what, k) == ("main", 32) else SERVERS[:2]
                order = names if rep % 2 == 0 else names[::-1]
                for name in order:
                    r = loads[what](srv[name]["url"], k, seconds)
                    if r["errors"]:
                        raise RuntimeError(
                            f"{name} {what} at {k} clients: {r['errors']} errors:\n"
                            f"{c.tail(srv[name]['log'])}"
                        )
                    runs[f"{name}-{what}-{k}"].append(r)
    return {"table_id": views[0].id, "sanity": sanity, "runs": runs, "cold": cold, "plan": plan}


def report(m: dict[str, Any]) -> dict[str, Any]:
    runs, plan = m["runs"], m["plan"]

    def med(key: str, field: str) -> float:
        return c.median([r[field] for r in runs[key]])

    print(
        f"  {'server':<9}{'load':<15}{'req/s':>9}{'p50 ms':>9}{'p90 ms':>9}{'p99 ms':>9}"
        f"{'max ms':>9}{'requests':>10}"
    )
    for what, k in plan:
        for name in SERVERS:
            key = f"{name}-{what}-{k}"
            if not runs.get(key):
                continue
            label = f"{what} x{k}"
            print(
                f"  {name:<9}{label:<15}{med(key, 'rps'):>9.1f}{med(key, 'p50') * 1e3:>9.2f}"
                f"{med(key, 'p90') * 1e3:>9.2f}{med(key, 'p99') * 1e3:>9.2f}"
                f"{med(key, 'max') * 1e3:>9.1f}{sum(r['requests'] for r in runs[key]):>10}"
            )

    def ratios(
        what: str, k: int, field: str, top: str = "absrank", bottom: str = "bare"
    ) -> list[float]:
        pairs = zip(runs[f"{top}-{what}-{k}"], runs[f"{bottom}-{what}-{k}"], strict=True)
        return [a[field] / b[field] for a, b in pairs]

    thr, p99r = ratios("main", 32, "rps"), ratios("main", 32, "p99")
    floor_thr, floor_p99 = ratios("main", 32, "rps", "floor"), ratios("main", 32, "p99", "floor")
    over_floor = ratios("main", 32, "rps", bottom="floor")
    fixed = [
        (a["p50"] - b["p50"]) * 1e3
        for a, b in zip(runs["absrank-one-1"], runs["bare-one-1"], strict=True)
    ]
    rot_thr, rot_p99 = ratios("rotation", 32, "rps"), ratios("rotation", 32, "p99")
    ok_thr = c.median(thr) >= GOAL_THROUGHPUT
    ok_p99 = c.median(p99r) <= GOAL_P99_RATIO
    ok_fixed = c.median(fixed) <= GOAL_FIXED_MS
    print(
        f"  {N_VALUES} values, 32 clients: throughput absrank/bare = {c.spread(thr)}  goal >= "
        f"{GOAL_THROUGHPUT}  {c.verdict(ok_thr)}"
    )
    print(
        f"  {N_VALUES} values, 32 clients: p99 absrank/bare = {c.spread(p99r)}  goal <= "
        f"{GOAL_P99_RATIO}x  {c.verdict(ok_p99)}"
    )
    print(
        f"  {N_VALUES} values, 32 clients: the peer ranking at the numpy limit (floor, the same "
        f"ranks) / bare = {c.spread(floor_thr)} (p99 {c.spread(floor_p99)}x): the ceiling of "
        f"any implementation's ratio; absrank / floor = {c.spread(over_floor)}"
    )
    print(
        f"  {N_VALUES} values,  4 clients: throughput {c.spread(ratios('main', 4, 'rps'))}, "
        f"p99 {c.spread(ratios('main', 4, 'p99'))}x"
    )
    print(
        f"  1 value, 1 client: p50 absrank - bare = {c.spread(fixed)} ms (the fixed cost; bare "
        f"p50 {med('bare-one-1', 'p50') * 1e3:.2f} ms)  goal <= +{GOAL_FIXED_MS:g} ms  "
        f"{c.verdict(ok_fixed)}"
    )
    print(
        f"  rotation over {len(m['cold']['absrank'])} tables (cache {CACHE_SIZE}), 32 clients: "
        f"throughput {c.spread(rot_thr)}, p99 {c.spread(rot_p99)}x"
    )
    cold_a, cold_b = m["cold"]["absrank"], m["cold"]["bare"]
    cold_first = cold_a[0] / cold_b[0]
    cold_tables = c.median(cold_a[1:]) / c.median(cold_b[1:])
    print(
        f"  cold (fresh servers, 1 value): first request {cold_a[0] * 1e3:.0f} ms vs bare "
        f"{cold_b[0] * 1e3:.0f} ms ({cold_first:.2f}x); first request of each further table "
        f"{c.median(cold_a[1:]) * 1e3:.1f} ms vs bare's next requests "
        f"{c.median(cold_b[1:]) * 1e3:.1f} ms ({cold_tables:.1f}x)"
    )
    return {
        "throughput_ratio_32": c.median(thr),
        "throughput_ratios_32": thr,
        "p99_ratio_32": c.median(p99r),
        "p99_ratios_32": p99r,
        "floor_throughput_ratio_32": c.median(floor_thr),
        "floor_throughput_ratios_32": floor_thr,
        "floor_p99_ratio_32": c.median(floor_p99),
        "absrank_over_floor_32": c.median(over_floor),
        "fixed_cost_ms": c.median(fixed),
        "fixed_cost_ms_all": fixed,
        "bare_one_p50_ms": med("bare-one-1", "p50") * 1e3,
        "rotation_throughput_ratio": c.median(rot_thr),
        "rotation_p99_ratio": c.median(rot_p99),
        "cold_first_ratio": cold_first,
        "cold_table_ratio": cold_tables,
        "cold_seconds": m["cold"],
        "goals": {"throughput_32": ok_thr, "p99_ratio_32": ok_p99, "fixed_cost": ok_fixed},
        "runs": runs,
        "table_id": m["table_id"],
        "sanity": m["sanity"],
    }


# ---------------------------------------------------------------------------- profile


def _stages(sm: Any, settings: Any, view: Any, reps: int = 30) -> None:
    """cProfile of the endpoint's in-process work, 1 value and 10^3 values (no HTTP)."""
    from app.api.ranks import rank_response
    from app.schemas.ranks import RankRequest
    from app.services.ranks import RankEnv, rank_answer
    from app.services.table_cache import AppCaches

    caches = AppCaches.from_settings(settings)
    for n in (1, N_VALUES):
        raw = encoded(payload(view, n))

        def endpoint(raw: bytes = raw) -> bytes:
            req = RankRequest.model_validate_json(raw)
            answer = rank_answer(RankEnv(sm, settings, None, caches.tables, caches.ladders), req)
            return bytes(rank_response(answer).body)

        endpoint()
        warm = c.median(_clock(endpoint, reps))
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(reps):
            endpoint()
        prof.disable()
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(25)
        print(f"\n  {n} value(s): {warm * 1e3:.2f} ms in-process; cProfile x {reps} (cumulative):")
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
        try:
            _stages(sm, dep.settings(), view)
        finally:
            engine.dispose()
        spy = py_spy or shutil.which("py-spy")
        if spy is None:
            print(
                "\n  (py-spy not found: pip install --target /tmp/pyspy py-spy, then "
                "--py-spy /tmp/pyspy/bin/py-spy, for a profile of the live server)"
            )
            return
        load = Load(tool, [payload(view)], dep.root, "prof")
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
    with c.deployment("ranks") as dep:
        views, sm, engine = build_tables(dep, ROTATION)
        try:
            large = report_inprocess(inprocess(dep, views[0], sm, 5 if args.quick else 15))
        finally:
            engine.dispose()
        http = report(measure(dep, views, seconds, repeats, tool, args.absrank_cmd))
    goals = http.pop("goals") | large.pop("goals")
    results = {
        "mode": "quick" if args.quick else "full",
        "tool": tool,
        "seconds_each": seconds,
        "absrank_cmd": args.absrank_cmd,
        "repeats": repeats,
        "machine": c.machine(),
        "cache_size": CACHE_SIZE,
        **large,
        **http,
        "goals_met": goals,
        "loadavg_after": os.getloadavg(),
    }
    results["seconds"] = time.perf_counter() - t0
    name = f"ranks_load-{results['mode']}" + ("-custom" if args.absrank_cmd else "")
    path = c.save(name, results)
    print(f"\n  load average after: {results['loadavg_after']}")
    print(f"(total {results['seconds']:.0f} s; raw results in {path.relative_to(c.ROOT)})")
    return results


if __name__ == "__main__":
    main()
