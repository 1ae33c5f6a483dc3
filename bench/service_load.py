"""The service under the load test's mix (issue 17): /healthz latency loaded vs idle, RSS.

Runs ``tests/e2e/test_load.py``'s load (a real ``absrank serve`` with default limits and no
per-address quotas, :data:`~tests.e2e.test_load.CONCURRENCY` clients, the heaviest requests
the defaults allow beside cheap ones and hostile bodies) and prints, from one run:

- the probe's ``/healthz`` p50/p99/max while loaded, and the same probe on the same server
  idle (measured just before): the ratio is what the load costs a health check;
- the requests, their wall time, and any answer the mix did not intend;
- the server's RSS after the warm-up round and after the load.

    .venv/bin/python bench/service_load.py [--requests N]   # ~1-3 min
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.e2e.test_load import REQUESTS, run_load, running_server  # noqa: E402

IDLE_PROBES = 200


def idle_health(url: str) -> list[float]:
    out = []
    with httpx.Client(base_url=url, timeout=10) as client:
        for _ in range(IDLE_PROBES):
            start = time.perf_counter()
            client.get("/healthz").raise_for_status()
            out.append(time.perf_counter() - start)
    return sorted(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--requests", type=int, default=REQUESTS)
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp, running_server(Path(tmp)) as (url, pid):
        idle = idle_health(url)
        run = run_load(url, pid, requests=args.requests)
    idle_p99 = idle[int(0.99 * len(idle))]
    p50, p99 = run.health_quantile(0.5), run.health_quantile(0.99)
    print(
        f"load average at start {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}, at end "
        + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    print(
        f"requests {run.requests} in {run.seconds:.1f} s ({run.requests / run.seconds:.0f}/s), "
        f"unintended answers {len(run.unexpected)}"
    )
    print(
        f"/healthz loaded: p50 {p50 * 1e3:.1f} ms, p99 {p99 * 1e3:.1f} ms, "
        f"max {max(run.health_seconds) * 1e3:.1f} ms over {len(run.health_seconds)} probes"
    )
    print(
        f"/healthz idle: p50 {idle[len(idle) // 2] * 1e3:.1f} ms, p99 {idle_p99 * 1e3:.1f} ms; "
        f"loaded/idle p99 {p99 / idle_p99:.1f}x (goal: loaded p99 < 100 ms)"
    )
    print(
        f"RSS {run.rss_start / 2**20:.0f} MiB after warm-up, {run.rss_end / 2**20:.0f} MiB "
        f"after the load ({run.rss_end / run.rss_start - 1:+.0%}; goal within +20%)"
    )
    for line in run.unexpected[:20]:
        print("  unintended:", line)


if __name__ == "__main__":
    main()
