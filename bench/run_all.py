"""Run every benchmark (quick or full) and print the goals side by side.

Each benchmark runs as its own child process (``bench/table_build.py``, ``bench/ranks_load.py``)
and writes its raw figures to ``bench/results/<name>-<mode>.json`` (git-ignored); this script
then reads them back and prints one summary. Benchmarks report, they do not assert: the exit
status is 0 unless a benchmark crashed (or, with ``--strict``, a goal was missed).

Usage::

    .venv/bin/python bench/run_all.py            # full: about 4 minutes on 2 cores
    .venv/bin/python bench/run_all.py --quick    # about 1 minute
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

import _common as c

SCRIPTS = ("table_build", "ranks_load")


def summary(mode: str) -> list[tuple[str, str, str, bool]]:
    rows: list[tuple[str, str, str, bool]] = []
    tb = json.loads((c.RESULTS / f"table_build-{mode}.json").read_text())
    for fid, r in tb["a"]["functions"].items():
        rows.append(
            (
                f"table build e2e / raw cocoex, {fid}, N=2^{tb['a']['log2n']}",
                f"{r['ratio_median']:.2f}",
                ">= 0.70",
                r["goal_met"],
            )
        )
    b = tb["b"]
    rows.append(
        (
            f"2 workers vs 1, {b['function_id']}, N=2^{b['log2n']}",
            f"{b['speedup_median']:.2f}x (efficiency 1w {b['efficiency_median']['1']:.2f}, "
            f"2w {b['efficiency_median']['2']:.2f})",
            ">= 1.5x",
            b["goal_met"],
        )
    )
    rl = json.loads((c.RESULTS / f"ranks_load-{mode}.json").read_text())
    g = rl["goals_met"]
    rows.append(
        (
            "absolute-ranks / bare throughput, 32 clients",
            f"{rl['throughput_ratio_32']:.2f}",
            ">= 0.50",
            g["throughput_32"],
        )
    )
    rows.append(
        (
            "absolute-ranks / bare p99, 32 clients",
            f"{rl['p99_ratio_32']:.2f}x",
            "<= 2x",
            g["p99_ratio_32"],
        )
    )
    rows.append(
        (
            "absolute-ranks p99, 4 clients",
            f"{rl['p99_4_seconds'] * 1e3:.0f} ms",
            "< 25 ms",
            g["p99_4"],
        )
    )
    return rows


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="short runs of every benchmark")
    p.add_argument("--strict", action="store_true", help="exit 1 if a goal was missed")
    args = p.parse_args()
    c.exit_on_sigterm()
    mode = "quick" if args.quick else "full"
    t0 = time.perf_counter()
    for name in SCRIPTS:
        print(f"\n=== bench/{name}.py ({mode})", flush=True)
        argv = [c.PYTHON, str(c.BENCH / f"{name}.py")] + (["--quick"] if args.quick else [])
        code = subprocess.run(argv, cwd=c.ROOT, check=False).returncode
        if code != 0:
            print(f"bench/{name}.py failed with exit status {code}")
            return code
    rows = summary(mode)
    print(
        f"\n=== summary ({mode}, {time.perf_counter() - t0:.0f} s; ratios against peers "
        "measured side by side in the same run)"
    )
    width = max(len(r[0]) for r in rows)
    for label, value, goal, ok in rows:
        print(f"  {label:<{width}}  {value:<36} goal {goal:<8} {c.verdict(ok)}")
    return 1 if args.strict and not all(r[3] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
