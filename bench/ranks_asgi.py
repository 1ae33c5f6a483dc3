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
FLOOR = "/v1/absolute-ranks-floor"
"""The bare peer's endpoint that ranks at the numpy limit (``bench/_floor.py``)."""


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
    import bare_app
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
            # and bare+floor: the peer ranking at the numpy limit (bench/_floor.py)
            bare_app.use_floor(bare_app.floor_loader(sm, settings))
            apps: dict[str, tuple[Asgi, str]] = {
                "absrank": (app, RANKS),
                "bare": (bare, RANKS),
                "bare-framework": (bare, FRAMEWORK),
                "bare+floor": (bare, FLOOR),
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
        print(f"  {k:<14} {v:8.0f} CPU µs/request, fastest block (median {mid:.0f}, max {hi:.0f})")
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


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--blocks", type=int, default=30)
    p.add_argument("--per-block", type=int, default=50)
    p.add_argument("--profile", action="store_true")
    args = p.parse_args()
    asyncio.run(run(args.blocks, args.per_block, args.profile))


if __name__ == "__main__":
    main()
