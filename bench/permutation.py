"""Permutation test (SPEC §5, Omran et al.): exact median count and Monte Carlo vs scipy.

(a) Exact median p-value, 50 vs 50 runs (both even: the largest configuration count at this
    size), timed as the FIRST call in a FRESH process after the imports: each repeat runs in
    its own child Python process (``--child CASE``) that imports ``app.domain.permutation``,
    builds the seeded data, then times ``permutation_test(x, y, method="exact")`` once (and a
    second call, for information). Cases: continuous data (normal, shift 0.3), many ties
    (integers 0..5), and for orientation 51 vs 51 (odd) and 100 vs 100 (the largest balanced
    even size inside the exact limit). Goal: <= 0.5 s for the two 50 vs 50 cases.
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
import subprocess
import time
from typing import Any

import _common as c
import numpy as np

GOAL_EXACT_SECONDS = 0.5
GOAL_MC_SPEEDUP = 5.0
MAX_Z = 4.0  # p-values agree when within this many combined standard errors
CASES: dict[str, tuple[int, int, str]] = {
    "50v50-continuous": (50, 50, "normal"),
    "50v50-ties": (50, 50, "ties"),
    "51v51-continuous": (51, 51, "normal"),
    "100v100-continuous": (100, 100, "normal"),
}
GOAL_CASES = ("50v50-continuous", "50v50-ties")


def data(n_a: int, n_b: int, kind: str, seed: int = 20220624) -> tuple[np.ndarray, np.ndarray]:
    """Seeded runs of two algorithms: normal with a 0.3 shift, or integers 0..5 (many ties)."""
    rng = np.random.default_rng(seed)
    if kind == "ties":
        return rng.integers(0, 6, n_a).astype(float), rng.integers(1, 7, n_b).astype(float)
    return rng.normal(size=n_a), rng.normal(0.3, size=n_b)


# ---------------------------------------------------------------------------- (a) exact, fresh


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
    print(json.dumps({"import": imported, "first": first, "second": second, "p": r.p_value}))


def part_a(repeats: int) -> dict[str, Any]:
    print("(a) exact median p, first call in a fresh process (after imports)")
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
                timeout=300,
            )
            runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
        first = [r["first"] for r in runs]
        row = {
            "first": first,
            "second": [r["second"] for r in runs],
            "import": [r["import"] for r in runs],
            "p": runs[0]["p"],
            "first_median": c.median(first),
        }
        if case in GOAL_CASES:
            row["goal_met"] = row["first_median"] <= GOAL_EXACT_SECONDS
            goal = (
                f"  first/goal {row['first_median'] / GOAL_EXACT_SECONDS:.2f} "
                f"{c.verdict(row['goal_met'])}"
            )
        else:
            goal = "  (information)"
        print(
            f"  {case:20s} first {c.spread(first)} s, second {c.spread(row['second'])} s, "
            f"import {c.spread(row['import'])} s, p = {row['p']:.6f}{goal}"
        )
        out[case] = row
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
        out["exact_50v50"] = all(results["a"][case]["goal_met"] for case in GOAL_CASES)
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
    p.add_argument("--only", choices=("a", "b"), default=None)
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
    if args.only in (None, "b"):
        n_resamples = 10**5 if args.quick else 10**6
        results["b"] = part_b(n_resamples, args.repeats or (1 if args.quick else 2))
    results["seconds"] = time.perf_counter() - t0
    return c.finish("permutation", results, args.only, goals)


if __name__ == "__main__":
    main()
