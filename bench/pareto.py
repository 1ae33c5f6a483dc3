"""Pareto-optimal ranking (SPEC §7): whole-study ranking time, and non-dominated sorting vs pymoo.

(a) A study of 10 algorithms × 31 runs × 10 indicators on 45 problems (seeded random indicator
    values, algorithm ``a`` shifted by ``0.05·a`` so the ranking is not a pure tie): time of
    per-problem ``nondominated_levels`` + ``level_counts``, then ``sum_counts`` and
    ``rank_algorithms`` over all problems. Goal: < 0.5 s for the whole study.
(b) Non-dominated sorting of 10^4 points × 5 objectives (seeded uniform):
    ``app.domain.pareto.nondominated_levels`` vs pymoo ``NonDominatedSorting().do(F)`` on the
    same data in the same process, interleaved; prints both times and the RATIO (pymoo / ours),
    and checks that the levels agree point by point. Note: pymoo 0.6.2's default
    ``NonDominatedSorting`` itself calls ``moocore.pareto_rank``, as ours does, so a ratio near 1
    is expected; the comparison checks the levels and that our wrapper adds no overhead.

Raw figures go to ``bench/results/pareto-<quick|full>.json``. Benchmarks report, they do not
assert. Usage::

    .venv/bin/python bench/pareto.py            # full: 5 repeats each
    .venv/bin/python bench/pareto.py --quick    # 2 repeats each
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import _common as c
import numpy as np

GOAL_STUDY_SECONDS = 0.5
N_ALGORITHMS, N_RUNS, N_INDICATORS, N_PROBLEMS = 10, 31, 10, 45
N_POINTS, N_OBJECTIVES = 10_000, 5


def study(seed: int = 20241127) -> list[np.ndarray]:
    """One (A·R, M) indicator matrix per problem, all minimized."""
    rng = np.random.default_rng(seed)
    shift = np.repeat(0.05 * np.arange(N_ALGORITHMS), N_RUNS)[:, None]
    return [rng.random((N_ALGORITHMS * N_RUNS, N_INDICATORS)) + shift for _ in range(N_PROBLEMS)]


def part_a(repeats: int) -> dict[str, Any]:
    from app.domain.pareto import level_counts, nondominated_levels, rank_algorithms, sum_counts

    print(
        f"(a) study: {N_ALGORITHMS} algorithms × {N_RUNS} runs × {N_INDICATORS} indicators × "
        f"{N_PROBLEMS} problems (levels + counts per problem, sum, rank)"
    )
    problems = study()
    labels = [f"alg{a}" for a in range(N_ALGORITHMS) for _ in range(N_RUNS)]
    times, levels_t = [], []
    result = rank_algorithms([[1]])
    for _ in range(repeats):
        t0 = time.perf_counter()
        matrices = [level_counts(nondominated_levels(f), labels)[0] for f in problems]
        t1 = time.perf_counter()
        result = rank_algorithms(sum_counts(matrices))
        times.append(time.perf_counter() - t0)
        levels_t.append(t1 - t0)
    total = c.median(times)
    row = {
        "seconds": times,
        "levels_and_counts_seconds": levels_t,
        "median": total,
        "goal_seconds": GOAL_STUDY_SECONDS,
        "goal_met": total < GOAL_STUDY_SECONDS,
        "n_levels_summed": int(result.counts.shape[1]),
        "ranks_average": result.ranks["average"].tolist(),
    }
    print(
        f"  whole study {c.spread(times)} s (levels + counts {c.spread(levels_t)} s), "
        f"time/goal {total / GOAL_STUDY_SECONDS:.2f} {c.verdict(row['goal_met'])}; "
        f"{row['n_levels_summed']} summed levels; average ranks {row['ranks_average']}"
    )
    return row


def part_b(repeats: int) -> dict[str, Any]:
    from pymoo.util.nds.non_dominated_sorting import NonDominatedSorting

    from app.domain.pareto import nondominated_levels

    print(f"(b) non-dominated sorting, {N_POINTS} points × {N_OBJECTIVES} objectives vs pymoo")
    f = np.random.default_rng(7).random((N_POINTS, N_OBJECTIVES))
    nondominated_levels(f[:100])  # warm up both
    NonDominatedSorting().do(f[:100])
    ours_t, peer_t = [], []
    ours = peer_levels = np.zeros(N_POINTS, dtype=np.int64)
    for _ in range(repeats):
        t0 = time.perf_counter()
        ours = nondominated_levels(f)
        ours_t.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        fronts = NonDominatedSorting().do(f)
        peer_t.append(time.perf_counter() - t0)
        peer_levels = np.zeros(N_POINTS, dtype=np.int64)
        for level, idx in enumerate(fronts, start=1):
            peer_levels[idx] = level
    agree = bool(np.array_equal(ours, peer_levels))
    ratio = c.median(peer_t) / c.median(ours_t)
    row = {
        "ours_seconds": ours_t,
        "pymoo_seconds": peer_t,
        "ours_median": c.median(ours_t),
        "pymoo_median": c.median(peer_t),
        "speedup_pymoo_over_ours": ratio,
        "n_levels": int(ours.max()),
        "levels_agree": agree,
    }
    print(
        f"  ours {c.spread(ours_t)} s, pymoo {c.spread(peer_t)} s: ratio pymoo/ours "
        f"{ratio:.2f}x; {row['n_levels']} levels; levels {'agree' if agree else 'DISAGREE'} "
        "(both call moocore.pareto_rank)"
    )
    return row


def goals(results: dict[str, Any]) -> dict[str, bool]:
    """Every goal flag of the parts that ran, in one place."""
    out: dict[str, bool] = {}
    if "a" in results:
        out["study_under_0.5s"] = results["a"]["goal_met"]
    if "b" in results:
        out["levels_agree_with_pymoo"] = results["b"]["levels_agree"]
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2 repeats per part")
    p.add_argument("--repeats", type=int, default=None, help="repeats (default 5 / 2 quick)")
    p.add_argument("--only", choices=("a", "b"), default=None)
    args = p.parse_args(argv)
    c.exit_on_sigterm()
    repeats = args.repeats or (2 if args.quick else 5)
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": c.machine()}
    t0 = time.perf_counter()
    if args.only in (None, "a"):
        results["a"] = part_a(repeats)
    if args.only in (None, "b"):
        results["b"] = part_b(repeats)
    results["seconds"] = time.perf_counter() - t0
    return c.finish("pareto", results, args.only, goals)


if __name__ == "__main__":
    main()
