"""Per-request cost of ``POST /v1/absolute-ranks`` through ASGI, in this process, vs the peers.

No sockets, no load generator: the real app (:func:`app.main.create_app`, its lifespan run,
the table built and cached) and ``bench/bare_app.py`` (the framework's floor: same request
model validated the same way, same encoder, no work; and its ``bare-framework`` endpoint, the
body parsed by FastAPI's own handler, a diagnostic) are called as ASGI applications with a
prepared scope and the same 10^3-value body, alternating, many requests each; the figure is
the fastest block's CPU µs/request (the least disturbed by the other processes; the median
is printed too) and the ratio absrank/bare per pair of blocks (what ``bench/ranks_load.py``
measures over HTTP, without the server's and wrk's share of the 2 cores, so much less noisy).

Usage::

    .venv/bin/python bench/ranks_asgi.py                 # 30 blocks of 50 requests
    .venv/bin/python bench/ranks_asgi.py --profile       # + cProfile of absrank's requests
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import math
import pstats
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import _common as c
import ranks_load as rl

Asgi = Callable[..., Awaitable[None]]


def _scope(path: str, body: bytes) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0", "spec_version": "2.3"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 8000),
        "state": {},
    }


async def call(app: Asgi, body: bytes, path: str = "/v1/absolute-ranks") -> tuple[int, bytes]:
    """One request through ``app``: (status, body)."""
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))

    await app(_scope(path, body), receive, send)
    return status, b"".join(chunks)


RANKS = "/v1/absolute-ranks"
FRAMEWORK = "/v1/absolute-ranks-framework"
"""The bare peer's endpoint whose body FastAPI parses (``json.loads``, then the model)."""


async def block(app: Asgi, body: bytes, n: int, path: str = RANKS) -> float:
    """Mean CPU seconds of this thread per request over ``n`` requests (``thread_time``: the
    time the other processes hold the cores is not counted, their share of the caches is)."""
    t0 = time.thread_time()
    for _ in range(n):
        status, out = await call(app, body, path)
        if status != 200:  # a refusal (a quota, a limit) would be a fast non-answer
            raise RuntimeError(f"{path}: {status} {out[:300]!r}")
    return (time.thread_time() - t0) / n


async def run(blocks: int, per_block: int, profile: bool) -> dict[str, Any]:
    from bare_app import app as bare

    from app.main import create_app

    with c.deployment("ranks-asgi") as dep:
        views, sm, engine = rl.build_tables(dep, 1)
        engine.dispose()
        settings = dep.settings()
        app = create_app(settings, dispatcher=rl._Inline(sm, settings))
        body = rl.encoded(rl.payload(views[0]))
        async with app.router.lifespan_context(app):
            # the peers: bare (the body validated from its bytes, as absrank's route does) and
            # bare-framework (FastAPI's own body handling: what absrank's route did before)
            floor = ranking_floor(views[0], sm, settings, rl.payload(views[0])["values"])

            async def bare_plus_floor(scope: Any, receive: Any, send: Any) -> None:
                floor()  # the ranking at the numpy limit, then the peer's whole request
                await bare(scope, receive, send)

            apps: dict[str, tuple[Asgi, str]] = {
                "absrank": (app, RANKS),
                "bare": (bare, RANKS),
                "bare-framework": (bare, FRAMEWORK),
                "bare+floor": (bare_plus_floor, RANKS),
            }
            for name, (a, path) in apps.items():
                status, out = await call(a, body, path)
                if status != 200:
                    raise RuntimeError(f"{name}: {status} {out[:300]!r}")
                await block(a, body, 20, path)
            times: dict[str, list[float]] = {k: [] for k in apps}
            for i in range(blocks):
                names = list(apps) if i % 2 == 0 else list(reversed(apps))
                for name in names:
                    a, path = apps[name]
                    times[name].append(await block(a, body, per_block, path))
            if profile:
                prof = cProfile.Profile()
                prof.enable()
                await block(app, body, per_block)
                prof.disable()
                buf = io.StringIO()
                pstats.Stats(prof, stream=buf).sort_stats("tottime").print_stats(40)
                print(buf.getvalue())
    # the fastest block of each: the least disturbed by the other processes on the machine
    med = {k: min(v) * 1e6 for k, v in times.items()}
    ratios = [a / b for a, b in zip(times["absrank"], times["bare"], strict=True)]
    print(
        f"ASGI in-process, {rl.N_VALUES} values, {blocks} blocks x {per_block} requests "
        f"(alternated):"
    )
    for k, v in med.items():
        hi = max(times[k]) * 1e6
        mid = statistics.median(times[k]) * 1e6
        print(f"  {k:<11} {v:8.0f} CPU µs/request, fastest block (median {mid:.0f}, max {hi:.0f})")
    print(
        f"  absrank - bare = {med['absrank'] - med['bare']:.0f} µs; absrank/bare time "
        f"{c.spread(ratios)} (throughput ratio at saturation ~ "
        f"{med['bare'] / med['absrank']:.2f}; goal 0.8 needs the extra <= "
        f"{med['bare'] * 0.25:.0f} µs)"
    )
    print(
        f"  FastAPI's body handling (bare-framework - bare) = "
        f"{med['bare-framework'] - med['bare']:.0f} µs"
    )
    print(
        f"  the ranking at the numpy limit (bare+floor - bare) = "
        f"{med['bare+floor'] - med['bare']:.0f} µs: with nothing else to do, absrank's "
        f"throughput would be {med['bare'] / med['bare+floor']:.2f} of the peer's"
    )
    return {"us": med, "ratios": ratios}


def ranking_floor(view: Any, sm: Any, settings: Any, values: list[float]) -> Callable[[], None]:
    """The least numpy work that ranks ``values`` on the table as absrank does: sorted, one
    ``searchsorted`` and one ``interp`` over the stored knots, ``log``, the interval ends read
    per knot (arrays of the table's size), the linear tail below ``y_1``, ``exp`` and
    ``log10`` of the three columns, put back in the order sent. No checks, no provenance, no
    warnings, no object per value: a floor, not an implementation."""
    import numpy as np

    from app.domain.functions import get_function
    from app.services.table_cache import AppCaches
    from app.services.tables import load_table_data

    data = load_table_data(sm, view.id, cache=AppCaches.from_settings(settings).tables).data
    knots, counts = data.values, data.counts.astype(np.float64)
    lower = np.log(np.maximum(counts - 1.0, 0.5) / (data.n + 1.0))
    upper = np.log(np.minimum(counts + 1.0, data.n) / (data.n + 1.0))
    f_opt = float(get_function(view.function_id).f_opt or 0.0)
    y_1, ln_n1 = float(knots[0]), math.log(data.n + 1.0)
    ln_top, ln_span = math.log(float(counts[0]) / (data.n + 1.0)), math.log(y_1 - f_opt)
    t = np.asarray(values, dtype=np.float64)
    ln10 = math.log(10.0)

    def floor() -> None:
        order = np.argsort(t)
        x = t[order]
        a = int(x.searchsorted(y_1))
        j = knots.searchsorted(x, side="right") - 1
        np.maximum(j, 0, out=j)
        ln_v = np.log(np.interp(x, knots, counts)) - ln_n1
        lo = np.minimum(lower[j], ln_v)
        hi = np.maximum(upper[j], ln_v)
        if a:
            ln_v[:a] = ln_top + (np.log(x[:a] - f_opt) - ln_span)
            lo[:a] = -np.inf
            hi[:a] = ln_v[:a]
        cols = np.empty((4, x.size))
        cols[:, order] = (ln_v / ln10, np.exp(ln_v), lo / ln10, hi / ln10)

    return floor


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--blocks", type=int, default=30)
    p.add_argument("--per-block", type=int, default=50)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    asyncio.run(run(args.blocks, args.per_block, args.profile))


if __name__ == "__main__":
    main()
