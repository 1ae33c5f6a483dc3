"""Run every benchmark (quick or full) and print the goals side by side.

Each benchmark runs as its own child process (``bench/<name>.py`` for every name in
``SCRIPTS``) and writes its raw figures to ``bench/results/<name>-<mode>.json`` (git-ignored);
this script then reads them back and prints one summary. Benchmarks report, they do not assert:
the exit status is 0 unless a benchmark crashed (or, with ``--strict``, a goal was missed).

Usage::

    .venv/bin/python bench/run_all.py            # full: about 4-5 minutes on 2 cores (+ ~10
    #                                              for report_cost: cocopp reads for minutes)
    .venv/bin/python bench/run_all.py --quick    # about 70 s (+ ~2 min for report_cost)
    .venv/bin/python bench/run_all.py --quick --only permutation,ranktests
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import _common as c

SCRIPTS = (
    "table_build",
    "ranks_load",
    "permutation",
    "ranktests",
    "pareto",
    "cec",
    "tail_quality",
    "comparisons",
    "aggregates",
    "report_cost",
)

Row = tuple[str, str, str, bool]  # label, figure, goal, met


def load(name: str, mode: str) -> dict[str, Any]:
    return json.loads((c.RESULTS / f"{name}-{mode}.json").read_text())


def _table_build(mode: str) -> list[Row]:
    """P1: POST /v1/tables -> ready (real API, SQLite queue, workers) vs raw cocoex."""
    rows: list[Row] = []
    tb = load("table_build", mode)
    for r in tb["a"]["cases"].values():
        cold = r["cold_ratio_median"]
        rows.append(
            (
                f"table build POST->ready / raw cocoex, {r['function_id']}, N=2^{r['log2n']}, "
                "1 worker, warm",
                f"{r['ratio_median']:.2f}"
                + (f" (cold {cold:.2f})" if cold is not None else "")
                + f" [{min(r['ratios']):.2f}-{max(r['ratios']):.2f}]"
                + (
                    f"; polled {r['polled_ratio_median']:.2f}" if "polled_ratio_median" in r else ""
                ),
                f">= {r['goal']}",
                r["goal_met"],
            )
        )
    b = tb["b"]
    two = b["ratios_two"]
    rows.append(
        (
            f"2 workers / 2 raw cocoex processes at once, {b['function_id']}, N=2^{b['log2n']}",
            f"{b['ratio_two_median']:.2f} [{min(two):.2f}-{max(two):.2f}] "
            f"(speedup {c.median(b['speedups']):.2f}x, "
            f"machine's {c.median(b['raw_speedups']):.2f}x)",
            f">= {b['goal']}",
            b["goal_met"],
        )
    )
    return rows


def _ranks_load(mode: str) -> list[Row]:
    rl = load("ranks_load", mode)
    g = rl["goals_met"]
    return [
        (
            "absolute-ranks / like-for-like bare peer throughput, 10^3 values, 32 clients",
            f"{rl['throughput_ratio_32']:.2f} [{min(rl['throughput_ratios_32']):.2f}-"
            f"{max(rl['throughput_ratios_32']):.2f}] (the peer ranking at the numpy limit: "
            f"{rl['floor_throughput_ratio_32']:.2f}; absrank / it "
            f"{rl['absrank_over_floor_32']:.2f})",
            ">= 0.80",
            g["throughput_32"],
        ),
        (
            "absolute-ranks / bare peer p99, 10^3 values, 32 clients",
            f"{rl['p99_ratio_32']:.2f}x [{min(rl['p99_ratios_32']):.2f}-"
            f"{max(rl['p99_ratios_32']):.2f}] (the numpy-limit peer: "
            f"{rl['floor_p99_ratio_32']:.2f}x)",
            "<= 1.5x",
            g["p99_ratio_32"],
        ),
        (
            "absolute-ranks fixed cost: 1-value p50 - bare peer's, 1 client",
            f"{rl['fixed_cost_ms']:+.2f} ms (bare {rl['bare_one_p50_ms']:.2f} ms)",
            "<= +2 ms",
            g["fixed_cost"],
        ),
        (
            "absolute-ranks 10^5 values in-process, warm table",
            f"{rl['large_warm_seconds'] * 1e3:.0f} ms "
            f"(cold {rl['large_cold_seconds'] * 1e3:.0f} ms)",
            "< 100 ms",
            g["large_seconds"],
        ),
        (
            "absolute-ranks 10^5 values / numpy limit (searchsorted+interp+to_json), warm",
            f"{rl['large_warm_ratio']:.2f}x (cold {rl['large_cold_ratio']:.2f}x)",
            "<= 5x",
            g["large_ratio"],
        ),
    ]


def _permutation(mode: str) -> list[Row]:
    pm = load("permutation", mode)
    a, b, g = pm["a"], pm["b"], pm["goals_met"]
    rows: list[Row] = []
    for size, goal in (("50v50", 0.5), ("100v100", 1.0), ("200v200", 10.0)):
        cont, ties = a[f"{size}-continuous"], a[f"{size}-ties"]
        old = (
            f", old counter / new {cont['speedup_vs_old']:.0f}x" if "speedup_vs_old" in cont else ""
        )
        rows.append(
            (
                f"exact median p, {size.replace('v', ' vs ')}, cold (fresh process) / warm",
                f"{cont['first_median']:.3f} / {cont['second_median']:.3f} s (ties "
                f"{ties['first_median']:.3f} / {ties['second_median']:.3f} s){old}",
                f"<= {goal:g} s",
                g[f"exact_{size}"],
            )
        )
    if "c" in pm:
        growth = pm["c"]
        rows.append(
            (
                "exact median count growth, time ~ n^e (n = n_A = n_B, even)",
                f"new e = {growth['new']['exponent']:.2f} (n {growth['new']['n'][0]}-"
                f"{growth['new']['n'][-1]}), old e = {growth['old']['exponent']:.2f}",
                "counts agree with old",
                g["exact_equals_old"],
            )
        )
    for name, row in b.items():
        rows.append(
            (
                f"permutation MC, {name}, N=10^{math.log10(row['n_resamples']):.0f}: scipy / ours",
                f"{row['speedup']:.1f}x ({row['scipy_median']:.2f} s / {row['ours_median']:.3f} s)",
                ">= 5x",
                g[f"mc_{name}_speedup"],
            )
        )
    z = [row["z_ours_vs_scipy"] for row in b.values()] + [
        row["z_ours_vs_exact"] for row in b.values() if "z_ours_vs_exact" in row
    ]
    rows.append(
        (
            "permutation MC p vs scipy (and exact median p)",
            f"max |z| = {max(z):.2f}",
            "|z| <= 4",
            g["mc_p_agree"],
        )
    )
    return rows


def _ranktests(mode: str) -> list[Row]:
    rt = load("ranktests", mode)
    t, g = rt["median_s"], rt["goals_met"]
    n, k = rt["shape"]
    pairs = k * (k - 1) // 2
    return [
        (
            f"ranks + Friedman + Nemenyi CD/p/cliques, {k} x {n}",
            f"cold {rt['cold_fresh_median_s'] * 1e3:.1f} ms (fresh process), warm "
            f"{t['pipeline_absrank'] * 1e3:.1f} ms "
            f"(scipy + scikit-posthocs {rt['ratio_pipeline_peer_over_absrank']:.1f}x slower)",
            "< 50 ms cold and warm",
            g["pipeline_50ms"],
        ),
        (
            f"{pairs:,} pairwise Nemenyi p-values",
            f"{t['pvalues_absrank'] * 1e3:.1f} ms "
            f"(scikit-posthocs {rt['ratio_scikit_posthocs_over_absrank']:.1f}x slower)",
            "< 1 s",
            g["pvalues_1s"],
        ),
        (
            "Nemenyi p vs scikit-posthocs, alpha 0.05",
            f"{rt['verdicts_differing']} of {pairs:,} verdicts differ, "
            f"max |dp| {rt['max_abs_diff_vs_scikit_posthocs']:.1e}",
            "same",
            g["same_verdicts_as_scikit_posthocs"],
        ),
    ]


def _pareto(mode: str) -> list[Row]:
    pr = load("pareto", mode)
    a, b, g = pr["a"], pr["b"], pr["goals_met"]
    return [
        (
            "Pareto ranking, 10 algs x 31 runs x 10 indicators x 45 problems",
            f"{a['median'] * 1e3:.1f} ms",
            "< 0.5 s",
            g["study_under_0.5s"],
        ),
        (
            "non-dominated sorting 10^4 x 5 vs pymoo (both moocore)",
            f"pymoo/ours {b['speedup_pymoo_over_ours']:.2f}x, {b['n_levels']} levels",
            "agree",
            g["levels_agree_with_pymoo"],
        ),
    ]


def _cec(mode: str) -> list[Row]:
    pairs = load("cec", mode)["pairs"]
    rows: list[Row] = []
    for suite in dict.fromkeys(fid.split("/")[0] for fid in pairs):
        mine = {fid: r for fid, r in pairs.items() if fid.startswith(f"{suite}/")}
        worst = min(mine, key=lambda fid: mine[fid]["ratio"])
        ratios = [r["ratio"] for r in mine.values()]
        lowest = min(r.get("ratio_min", r["ratio"]) for r in mine.values())
        rows.append(
            (
                f"{suite} kernels (batch) / opfunu (per point), {len(mine)} function-dims",
                f"median of interleaved repeats: min {min(ratios):.1f}x ({worst}), median "
                f"{c.median(ratios):.1f}x; lowest repeat {lowest:.1f}x",
                ">= 30x",
                all(r["goal_met"] for r in mine.values()),
            )
        )
    return rows


def _comparisons(mode: str) -> list[Row]:
    cm = load("comparisons", mode)
    g = cm["goals_met"]
    w20, w200 = c.median(cm["warm_20_s"]), c.median(cm["warm_200_s"])
    c20 = c.median([x["first_request_s"] for x in cm["cold_20"]])
    p20 = c.median(cm["peer_20_s"])
    o20 = cm["old_vs_new_20"]
    return [
        (
            "POST /v1/comparisons 20 x 30, absolute ranks + NIIA, warm",
            f"{w20:.2f} s ({w20 / p20:.1f}x bare scipy stats; NIIA {o20['niia_speedup']:.0f}x "
            "faster than before, identical)",
            "< 0.5 s",
            g["warm_20"] and g["niia_identical"],
        ),
        (
            "POST /v1/comparisons 20 x 30, cold (first request, fresh process)",
            f"{c20:.2f} s",
            "< 2 s",
            g["cold_20"],
        ),
        (
            f"POST /v1/comparisons 200 x 30 (NIIA {cm['niia_200']}), warm",
            f"{w200:.2f} s",
            "< 5 s",
            g["warm_200"],
        ),
        (
            "comparison answer size, 200 algorithms",
            f"{cm['bytes_200'] / 1e6:.1f} MB",
            "< 2 MB",
            g["size_200"],
        ),
    ]


def _tail_quality(mode: str) -> list[Row]:
    tq = load("tail_quality", mode)
    goal = tq["accuracy"]["goal_decades"]

    def worst(xs: list[float | None]) -> str:
        vals = [abs(x) for x in xs if x is not None]
        return f"{max(vals):.2f}" if vals else "-"

    rows: list[Row] = []
    for fid, r in tq["accuracy"]["functions"].items():
        power = "refused" if r["power"]["refused"] else worst(r["power"]["decades"])
        rows.append(
            (
                f"deep tail k=2..8, {fid}: max |log10 error|, nested",
                f"{worst(r['nested']['decades'])} dec (1 table: power {power}, "
                f"auto {worst(r['auto']['decades'])})",
                f"<= {goal:g} dec",
                tq["goals_met"][f"nested_{fid}"],
            )
        )
    return rows


def _aggregates(mode: str) -> list[Row]:
    ag = load("aggregates", mode)
    a, b, b1, g = ag["a"], ag["b"], ag["b1"], ag["goals_met"]
    total_200 = c.median(a["ours_total_s"]) * 200 / a["values"]
    runs = (a, b, b1)
    same = max(x["agreement_same_lattice_direct"]["max_abs_delta_log10"] for x in runs)
    other = max(x["agreement"]["max_abs_delta_log10"] for x in runs)
    return [
        (
            "mean of 25 runs, 200 values (shared lattices vs per-value lattices, direct)",
            f"{total_200:.2f} s (cold {a['cold_total_s']:.2f} s); "
            f"{a['speedup_over_before']:.1f}x per-value lattices, "
            f"{a['speedup_per_value']:.1f}x direct, "
            f"{a['ours_over_fft_limit']:.2f}x numpy FFT limit",
            "< 1 s",
            g["200_values_r25_under_1s"],
        ),
        (
            "mean of 256 runs, per value (alone / 4 together)",
            f"{b1['ours_per_value_s'] * 1e3:.0f} / {b['ours_per_value_s'] * 1e3:.0f} ms; "
            f"{b['speedup_per_value']:.1f}x direct",
            "< 50 ms",
            g["r256_under_50ms_per_value"],
        ),
        (
            "mean: answers vs the same lattices convolved directly / vs direct per value",
            f"max |d log10 v| {same:.1g} / {other:.1g} (each inside the other's bracket)",
            "<= 1e-9, in bracket",
            g["answers_within_error_and_bracket"],
        ),
    ]


def _report_cost(mode: str) -> list[Row]:
    rc = load("report_cost", mode)
    g, ag = rc["goals_met"], rc["agreement"]
    k, f, r, m = rc["shape"]
    cold, warm = c.median(rc["cold_s"]["absrank"]), c.median(rc["warm_s"]["absrank"])
    return [
        (
            f"anytime report {k} algs x {f} functions x {r} runs x {m} records (runtimes, ERT, "
            "ECDFs, SVG), cold (fresh process, 1 core) / warm",
            f"{cold:.2f} / {warm:.2f} s; absrank/cocopp {rc['cold_ratio']:.3f} cold, "
            f"{rc['warm_ratio']:.3f} warm (cocopp {c.median(rc['cold_s']['cocopp']):.0f} s)",
            "< 3 s cold",
            g["cold_under_3s"],
        ),
        (
            "anytime report: pooled ECDFs and ERT vs cocopp on the same data",
            f"ECDFs identical: {ag['ecdf_identical']}, ERT max rel diff "
            f"{ag['ert_max_rel_diff']:.1e} ({ag['ert_cells']} cells)",
            "same",
            g["same_ecdfs_and_ert"],
        ),
    ]


SUMMARIES: dict[str, Callable[[str], list[Row]]] = {
    "table_build": _table_build,
    "ranks_load": _ranks_load,
    "permutation": _permutation,
    "ranktests": _ranktests,
    "pareto": _pareto,
    "cec": _cec,
    "tail_quality": _tail_quality,
    "comparisons": _comparisons,
    "aggregates": _aggregates,
    "report_cost": _report_cost,
}


def summary(mode: str, names: Sequence[str] = SCRIPTS) -> list[Row]:
    """The goal rows of the benchmarks ``names``, from their JSON of ``mode``."""
    return [row for name in names for row in SUMMARIES[name](mode)]


def _commit() -> str:
    """The checkout's short commit, ``+dirty`` when tracked files differ from it."""
    git = ["git", "-C", str(c.ROOT)]
    head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run([*git, "diff", "--quiet", "HEAD"], check=False).returncode != 0
    return head.stdout.strip() + ("+dirty" if dirty else "")


def markdown(
    rows: Sequence[Row],
    *,
    mode: str,
    seconds: float,
    load: tuple[tuple[float, ...], tuple[float, ...]],
) -> str:
    """The summary as the Markdown table bench/README.md keeps (one run, one commit)."""

    def fmt(avg: tuple[float, ...]) -> str:
        return " ".join(f"{x:.2f}" for x in avg)

    lines = [
        f"One `bench/run_all.py` run ({mode}, {seconds:.0f} s) on commit `{_commit()}`, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; load average (1, 5, 15 min) "
        f"{fmt(load[0])} at the start, {fmt(load[1])} at the end.",
        "",
        "| goal | figure | target | verdict |",
        "|---|---|---|---|",
    ]
    for label, value, goal, ok in rows:
        cells = (x.replace("|", "\\|") for x in (label, value, goal))
        lines.append("| " + " | ".join(cells) + f" | {'met' if ok else '**missed**'} |")
    return "\n".join(lines) + "\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="short runs of every benchmark")
    p.add_argument("--strict", action="store_true", help="exit 1 if a goal was missed")
    p.add_argument(
        "--only",
        default=None,
        metavar="NAME[,NAME]",
        help=f"run and summarize only these benchmarks (of: {', '.join(SCRIPTS)})",
    )
    p.add_argument(
        "--markdown",
        default=None,
        metavar="PATH",
        help="also write the summary as a Markdown table (commit, load averages) to PATH",
    )
    args = p.parse_args()
    names = SCRIPTS
    if args.only:
        names = tuple(dict.fromkeys(x.strip() for x in args.only.split(",") if x.strip()))
        unknown = [x for x in names if x not in SCRIPTS]
        if unknown or not names:
            p.error(f"--only: {args.only!r}: name one or more of {', '.join(SCRIPTS)}")
    c.exit_on_sigterm()
    mode = "quick" if args.quick else "full"
    load_before = os.getloadavg()
    t0 = time.perf_counter()
    for name in names:
        print(f"\n=== bench/{name}.py ({mode})", flush=True)
        argv = [c.PYTHON, str(c.BENCH / f"{name}.py")] + (["--quick"] if args.quick else [])
        code = subprocess.run(argv, cwd=c.ROOT, check=False).returncode
        if code != 0:
            print(f"bench/{name}.py failed with exit status {code}")
            return code
    rows = summary(mode, names)
    print(
        f"\n=== summary ({mode}, {time.perf_counter() - t0:.0f} s; ratios against peers "
        "measured side by side in the same run)"
    )
    width = max(len(r[0]) for r in rows)
    value_width = max(36, *(len(r[1]) for r in rows))
    for label, value, goal, ok in rows:
        print(f"  {label:<{width}}  {value:<{value_width}} goal {goal:<8} {c.verdict(ok)}")
    if args.markdown:
        seconds = time.perf_counter() - t0
        Path(args.markdown).write_text(
            markdown(rows, mode=mode, seconds=seconds, load=(load_before, os.getloadavg()))
        )
    return 1 if args.strict and not all(r[3] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
