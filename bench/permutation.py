"""Permutation test (SPEC §5, Omran et al.): exact median count and Monte Carlo vs scipy.

(a) Exact median p-value, timed COLD (the first call in a FRESH process after the imports: each
    repeat runs in its own child Python process, ``--child CASE``, that imports
    ``app.domain.permutation``, builds the seeded data and times
    ``permutation_test(x, y, method="exact")`` once) and WARM (a second call in that process).
    Cases: continuous data (normal, shift 0.3) and many ties (integers 0..5) at 50 vs 50,
    100 vs 100 and 200 vs 200 (both groups even: the most configurations at each size), and
    51 vs 51 for orientation. Goals (cold and warm): <= 0.5 s at 50 vs 50, <= 1 s at 100 vs 100,
    <= 10 s at 200 vs 200. The child of a 50 vs 50 or 100 vs 100 case also times the
    configuration-pair counter this one replaced (issue 15; kept as the test oracle
    ``tests/unit/domain/reference_permutation_median.py``) on the same problem, warm, and
    checks that the counts agree (the old float64 count rounds above 2^53: relative difference
    <= 1e-12); the ratio old / new warm is printed (the old counter
    refused 200 vs 200: 4.1·10^8 configuration pairs > 3·10^7).
(c) Growth: warm time (best of a few calls) of the exact count against the balanced even size
    n = n_A = n_B, new counter at n = 50..400 and old counter at n = 16..64 in the same process;
    the exponent is the least-squares slope of log(time) on log(n).
(b) Monte Carlo, 10^6 random splits, 50 vs 50, mean and median statistic, against
    ``scipy.stats.permutation_test((x, y), stat, permutation_type="independent",
    vectorized=True, n_resamples=10**6, batch=10_000, alternative="greater", rng=...)`` on the
    same data in the same process, interleaved (ours, scipy, ours, scipy...). scipy gets the
    statistic ``|stat(x) − stat(y)|`` with ``alternative="greater"``, which is exactly our
    ``alternative="two-sided"`` (``|s_i| >= |s|``, p = (c + 1)/(N + 1) on both sides). Goal:
    ours >= 5x faster; the two p-values must agree within 4 combined standard errors (and
    with the exact p for the median).

Raw figures (every repeat, medians, load average, library versions, goal flags) go to
``bench/results/permutation-<quick|full>.json``. Benchmarks report, they do not assert. Usage::

    .venv/bin/python bench/permutation.py            # full: 3 processes per case, 2 x 10^6
    .venv/bin/python bench/permutation.py --quick    # 1 process per case, 10^5 resamples
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import time
from typing import Any

import _common as c
import numpy as np

GOAL_MC_SPEEDUP = 5.0
MAX_Z = 4.0  # p-values agree when within this many combined standard errors
CASES: dict[str, tuple[int, int, str]] = {
    "50v50-continuous": (50, 50, "normal"),
    "50v50-ties": (50, 50, "ties"),
    "51v51-continuous": (51, 51, "normal"),
    "100v100-continuous": (100, 100, "normal"),
    "100v100-ties": (100, 100, "ties"),
    "200v200-continuous": (200, 200, "normal"),
    "200v200-ties": (200, 200, "ties"),
}
#: goal (seconds, cold and warm) of each size's cases
GOALS = {"50v50": 0.5, "100v100": 1.0, "200v200": 10.0}
OLD_MAX_N = 100  # the old counter is timed up to 100 vs 100 (200 vs 200: refused, minutes)
GROWTH_NEW = (50, 70, 100, 140, 200, 280, 400)
GROWTH_OLD = (16, 24, 32, 44, 64)


def data(n_a: int, n_b: int, kind: str, seed: int = 20220624) -> tuple[np.ndarray, np.ndarray]:
    """Seeded runs of two algorithms: normal with a 0.3 shift, or integers 0..5 (many ties)."""
    rng = np.random.default_rng(seed)
    if kind == "ties":
        return rng.integers(0, 6, n_a).astype(float), rng.integers(1, 7, n_b).astype(float)
    return rng.normal(size=n_a), rng.normal(0.3, size=n_b)


def _goal(case: str) -> float | None:
    return GOALS.get(case.split("-")[0])


# ---------------------------------------------------------------------------- (a) exact, fresh


def _old_vs_new(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Seconds of the old configuration-pair counter on this problem, and the relative
    difference of its (float64) count from the new exact one (0 below 2^53; rounding above)."""
    from app.domain.permutation import _permutation_test_iv
    from app.domain.permutation._median import median_exact_count
    from tests.unit.domain.reference_permutation_median import reference_median_exact_count

    prob = _permutation_test_iv(x, y, "median", "two-sided", "exact", 1e-9)
    t0 = time.perf_counter()
    selected, _total = reference_median_exact_count(prob.pooled, prob.n_a, prob.n_b, prob.extreme)
    seconds = time.perf_counter() - t0
    new = median_exact_count(prob.pooled, prob.n_a, prob.n_b, prob.extreme, "two-sided")
    return seconds, abs(int(selected) - new) / new


def child(case: str) -> None:
    """Runs in a fresh process: import, build data, time the first and second exact call."""
    t0 = time.perf_counter()
    from app.domain.permutation import permutation_test

    imported = time.perf_counter() - t0
    n_a, n_b, kind = CASES[case]
    x, y = data(n_a, n_b, kind)
    t1 = time.perf_counter()
    r = permutation_test(x, y, method="exact")
    first = time.perf_counter() - t1
    t2 = time.perf_counter()
    permutation_test(x, y, method="exact")
    second = time.perf_counter() - t2
    out: dict[str, Any] = {"import": imported, "first": first, "second": second, "p": r.p_value}
    if max(n_a, n_b) <= OLD_MAX_N:
        out["old"], out["old_rel_diff"] = _old_vs_new(x, y)
    print(json.dumps(out))


def part_a(repeats: int) -> dict[str, Any]:
    print("(a) exact median p: cold = 1st call in a fresh process (after imports), warm = 2nd")
    out: dict[str, Any] = {}
    for case in CASES:
        runs = []
        for _ in range(repeats):
            proc = subprocess.run(
                [c.PYTHON, __file__, "--child", case],
                cwd=c.ROOT,
                capture_output=True,
                text=True,
                check=True,
                timeout=900,
            )
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        first, second = [r["first"] for r in runs], [r["second"] for r in runs]
        row: dict[str, Any] = {
            "first": first,
            "second": second,
            "import": [r["import"] for r in runs],
            "p": runs[0]["p"],
            "first_median": c.median(first),
            "second_median": c.median(second),
            "loadavg": os.getloadavg(),
        }
        line = (
            f"  {case:20s} cold {c.spread(first)} s, warm {c.spread(second)} s, "
            f"import {c.spread(row['import'])} s, p = {row['p']:.6g}"
        )
        if "old" in runs[0]:
            old = [r["old"] for r in runs]
            row["old"], row["old_median"] = old, c.median(old)
            row["old_rel_diff"] = max(r["old_rel_diff"] for r in runs)
            row["old_equal"] = row["old_rel_diff"] <= 1e-12
            row["speedup_vs_old"] = row["old_median"] / row["second_median"]
            line += (
                f"; old counter {c.spread(old)} s = {row['speedup_vs_old']:.2g}x warm, "
                f"counts {'agree' if row['old_equal'] else 'DIFFER'} "
                f"(rel {row['old_rel_diff']:.1e})"
            )
        goal = _goal(case)
        if goal is not None:
            row["goal_seconds"] = goal
            row["goal_met"] = max(row["first_median"], row["second_median"]) <= goal
            line += f"; cold/goal {row['first_median'] / goal:.2f} {c.verdict(row['goal_met'])}"
        print(f"{line}  (load {row['loadavg'][0]:.2f})")
        out[case] = row
    return out


# ---------------------------------------------------------------------------- (c) growth


def _best_seconds(fn: Any, args: tuple[Any, ...], calls: int) -> float:
    best = math.inf
    for _ in range(calls):
        t0 = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t0)
    return best


def _exponent(ns: tuple[int, ...], seconds: list[float]) -> float:
    slope, _ = np.polyfit(np.log(ns), np.log(seconds), 1)
    return float(slope)


def part_c(calls: int) -> dict[str, Any]:
    from app.domain.permutation import _permutation_test_iv
    from app.domain.permutation._median import median_exact_count
    from tests.unit.domain.reference_permutation_median import reference_median_exact_count

    print(f"(c) growth of the warm exact median count with n = n_A = n_B (best of {calls})")
    out: dict[str, Any] = {}
    for name, ns in (("new", GROWTH_NEW), ("old", GROWTH_OLD)):
        seconds = []
        for n in ns:
            x, y = data(n, n, "normal")
            prob = _permutation_test_iv(x, y, "median", "two-sided", "exact", 1e-9)
            args = (prob.pooled, n, n, prob.extreme)
            if name == "new":
                seconds.append(_best_seconds(median_exact_count, (*args, "two-sided"), calls))
            else:
                seconds.append(_best_seconds(reference_median_exact_count, args, calls))
        exponent = _exponent(ns, seconds)
        out[name] = {"n": list(ns), "seconds": seconds, "exponent": exponent}
        figures = ", ".join(f"{n}: {t:.3g}" for n, t in zip(ns, seconds, strict=True))
        print(f"  {name} counter: time ~ n^{exponent:.2f}  ({figures} s)")
    out["loadavg"] = os.getloadavg()
    print(f"  (load {out['loadavg'][0]:.2f})")
    return out


# ---------------------------------------------------------------------------- (b) MC vs scipy


def _scipy_stat(name: str) -> Any:
    f = np.mean if name == "mean" else np.median

    def stat(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
        return np.abs(f(a, axis=axis) - f(b, axis=axis))

    return stat


def part_b(n_resamples: int, repeats: int) -> dict[str, Any]:
    from scipy import stats

    from app.domain.permutation import permutation_test

    print(f"(b) Monte Carlo, 50 vs 50, N = {n_resamples:.0e}, two-sided |d|, vs scipy (same data)")
    x, y = data(50, 50, "normal")
    permutation_test(x, y, method="monte_carlo", n_resamples=1000)  # warm up both paths
    out: dict[str, Any] = {}
    for name in ("mean", "median"):
        ours_t, peer_t = [], []
        for rep in range(repeats):
            t0 = time.perf_counter()
            ours = permutation_test(
                x, y, statistic=name, method="monte_carlo", n_resamples=n_resamples, seed=rep
            )
            ours_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            peer = stats.permutation_test(
                (x, y),
                _scipy_stat(name),
                permutation_type="independent",
                vectorized=True,
                n_resamples=n_resamples,
                batch=10_000,
                alternative="greater",
                rng=rep,
            )
            peer_t.append(time.perf_counter() - t0)
        se_peer = math.sqrt(peer.pvalue * (1 - peer.pvalue) / n_resamples)
        z = abs(ours.p_value - peer.pvalue) / math.hypot(ours.standard_error or 0.0, se_peer)
        ratio = c.median(peer_t) / c.median(ours_t)
        row: dict[str, Any] = {
            "n_resamples": n_resamples,
            "ours_seconds": ours_t,
            "scipy_seconds": peer_t,
            "ours_median": c.median(ours_t),
            "scipy_median": c.median(peer_t),
            "speedup": ratio,
            "goal_met": ratio >= GOAL_MC_SPEEDUP,
            "p_ours": ours.p_value,
            "se_ours": ours.standard_error,
            "p_scipy": float(peer.pvalue),
            "z_ours_vs_scipy": z,
        }
        line = (
            f"  {name:6s} ours {c.spread(ours_t)} s, scipy {c.spread(peer_t)} s: "
            f"{ratio:.1f}x {c.verdict(row['goal_met'])}; p ours {ours.p_value:.5f} "
            f"± {ours.standard_error:.5f}, scipy {peer.pvalue:.5f} (|z| = {z:.2f}"
        )
        z_max = z
        if name == "median":
            exact = permutation_test(x, y, method="exact")
            row["p_exact"] = exact.p_value
            row["z_ours_vs_exact"] = abs(ours.p_value - exact.p_value) / (ours.standard_error or 1)
            z_max = max(z, row["z_ours_vs_exact"])
            line += f"; exact {exact.p_value:.5f}, |z| = {row['z_ours_vs_exact']:.2f}"
        row["p_agree"] = z_max <= MAX_Z
        print(f"{line}; |z| <= {MAX_Z:g}: {'agree' if row['p_agree'] else 'DISAGREE'})")
        out[name] = row
    return out


def goals(results: dict[str, Any]) -> dict[str, bool]:
    """Every goal flag of the parts that ran, in one place (read by ``run_all.py``)."""
    out: dict[str, bool] = {}
    if "a" in results:
        for size in GOALS:
            rows = [row for case, row in results["a"].items() if case.startswith(f"{size}-")]
            out[f"exact_{size}"] = all(row["goal_met"] for row in rows)
        out["exact_equals_old"] = all(
            row["old_equal"] for row in results["a"].values() if "old_equal" in row
        )
    if "b" in results:
        for name, row in results["b"].items():
            out[f"mc_{name}_speedup"] = row["goal_met"]
        out["mc_p_agree"] = all(row["p_agree"] for row in results["b"].values())
    return out


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1 fresh process per case, N = 10^5")
    p.add_argument("--repeats", type=int, default=None, help="repeats (default 3 / 2 full)")
    p.add_argument("--only", choices=("a", "b", "c"), default=None)
    p.add_argument("--child", choices=tuple(CASES), default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child)
        return {}
    c.exit_on_sigterm()
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": c.machine()}
    t0 = time.perf_counter()
    if args.only in (None, "a"):
        results["a"] = part_a(args.repeats or (1 if args.quick else 3))
    if args.only in (None, "c"):
        results["c"] = part_c(2 if args.quick else 3)
    if args.only in (None, "b"):
        n_resamples = 10**5 if args.quick else 10**6
        results["b"] = part_b(n_resamples, args.repeats or (1 if args.quick else 2))
    results["seconds"] = time.perf_counter() - t0
    return c.finish("permutation", results, args.only, goals)


if __name__ == "__main__":
    main()
