"""Rank tests in process: absrank's Friedman + Nemenyi vs scipy + scikit-posthocs.

Data: 100 algorithms × 500 problems, seeded (``numpy.random.default_rng(SEED)``): normal noise
plus a per-algorithm shift (so that the cliques are neither all nor nothing) plus rounding to
2 decimals (ties, as in real tables).

(a) Pipeline: ranks + Friedman (χ², Iman–Davenport) + Nemenyi (CD, all p-values, cliques):
    ``friedman(x)`` then ``nemenyi(x)``; goal < 50 ms both COLD and warm. Cold = the first call
    in a FRESH process after its imports: each repeat is a child Python process
    (``--child``) that imports ``app.domain.ranktests``, settles the heap as the API and the
    workers do at startup (``app.heap.settle_after_imports``), builds the data and times the first
    pipeline call (and a second one, for information); the verdict takes the median over the
    children. Warm = the in-process repeats below. Peer: ``scipy.stats.friedmanchisquare``
    + ``scikit_posthocs.posthoc_nemenyi_friedman`` (p-values only: no CD, no cliques).
(b) All 4,950 pairwise Nemenyi p-values: ``studentized_range_sf(√2 |z|, k)`` alone; goal < 1 s.
    From 512 values on it interpolates a per-k Chebyshev interpolant of the quadrature, cached:
    reported warm (cached) and as the first call of a new k (the interpolant built again).
    Peers: ``scikit_posthocs.posthoc_nemenyi_friedman`` (the whole call) and
    ``scipy.stats.studentized_range.sf(√2 |z|, k, inf)`` on the same values.
(c) Agreement with scikit-posthocs: max |Δp|, max relative Δp where p > 1e-8, and the number of
    pairs whose verdict at α = 0.05 differs; our CD against autorank's (statsmodels' qsturng).

Warm times are medians [min–max] over repeats, in this process, after one warm-up call.
Ratios are peer / absrank, so > 1 means absrank is faster. Raw figures (every repeat,
medians, load average, library versions of absrank and of the peers, goal flags) go to
``bench/results/ranktests-<mode>.json``.
Benchmarks print; they do not assert.

Usage::

    .venv/bin/python bench/ranktests.py            # 7 repeats
    .venv/bin/python bench/ranktests.py --quick    # 3 repeats
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

import _common as c
import numpy as np

N_PROBLEMS = 500
N_ALGORITHMS = 100
SEED = 20240501
ALPHA = 0.05
GOAL_PIPELINE_S = 0.050
GOAL_PVALUES_S = 1.0
PEERS = ("scikit-posthocs", "autorank", "statsmodels")  # versions recorded with the figures


def data() -> np.ndarray:
    rng = np.random.default_rng(SEED)
    shift = np.linspace(0.0, 1.5, N_ALGORITHMS)
    return np.round(rng.normal(size=(N_PROBLEMS, N_ALGORITHMS)) + shift, 2)


def timed(fn: Callable[[], Any], repeats: int) -> tuple[list[float], Any]:
    out = None
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return times, out


def child() -> None:
    """Runs in a fresh process: import, build the data, time the first and second pipeline."""
    t0 = time.perf_counter()
    from app.domain import ranktests as rt
    from app.heap import settle_after_imports

    # what the API's startup and the worker consumer do after their imports (app.heap)
    settle_after_imports()
    imported = time.perf_counter() - t0
    x = data()
    out: dict[str, float] = {"import": imported}
    for name in ("first", "second"):
        t1, cpu1 = time.perf_counter(), time.process_time()
        rt.friedman(x)
        rt.nemenyi(x, alpha=ALPHA)
        out[name] = time.perf_counter() - t1
        out[f"cpu_{name}"] = time.process_time() - cpu1
    print(json.dumps(out))


def measure_cold(repeats: int) -> dict[str, list[float]]:
    runs = []
    for _ in range(repeats):
        proc = subprocess.run(
            [c.PYTHON, __file__, "--child"],
            cwd=c.ROOT,
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        runs.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    keys = ("import", "first", "second", "cpu_first", "cpu_second")
    return {key: [r[key] for r in runs] for key in keys}


def measure(repeats: int) -> dict[str, Any]:
    import scikit_posthocs as sp
    from scipy import stats

    from app.domain import ranktests as rt

    x = data()
    k = x.shape[1]

    # first call in this process (after scipy.stats and scikit-posthocs were imported here)
    t0 = time.perf_counter()
    rt.friedman(x)
    cold_result = rt.nemenyi(x, alpha=ALPHA)
    cold = time.perf_counter() - t0

    def ours_pipeline() -> Any:
        return rt.friedman(x), rt.nemenyi(x, alpha=ALPHA)

    def peer_pipeline() -> Any:
        return stats.friedmanchisquare(*x.T), sp.posthoc_nemenyi_friedman(x)

    from app.domain.ranktests import _studentized

    def new_k(q: np.ndarray, k: int) -> np.ndarray:
        # as the first call of a new k: the per-k interpolant (>= 512 values) built again
        _studentized._range_interpolant.cache_clear()
        return rt.studentized_range_sf(q, k)

    _, average = rt.rank_matrix(x)
    iu = np.triu_indices(k, 1)
    q = np.abs(average[iu[0]] - average[iu[1]]) / math.sqrt(k * (k + 1) / (6.0 * x.shape[0]))
    q *= math.sqrt(2.0)

    runs = {
        "pipeline_absrank": ours_pipeline,
        "pipeline_peer": peer_pipeline,
        "pvalues_absrank": lambda: rt.studentized_range_sf(q, k),
        "pvalues_absrank_new_k": lambda: new_k(q, k),
        "pvalues_scipy": lambda: stats.studentized_range.sf(q, k, np.inf),
        "pvalues_scikit_posthocs": lambda: sp.posthoc_nemenyi_friedman(x),
    }
    times: dict[str, list[float]] = {}
    outputs: dict[str, Any] = {}
    for fn in runs.values():
        fn()  # warm-up
    for _ in range(repeats):  # interleave the candidates, one run each per round
        for name, fn in runs.items():
            t, out = timed(fn, 1)
            times.setdefault(name, []).extend(t)
            outputs[name] = out

    friedman, nem = outputs["pipeline_absrank"]
    peer_p = outputs["pvalues_scikit_posthocs"].to_numpy()
    ours_p = nem.p_matrix
    big = peer_p > 1e-8
    relative = np.abs(ours_p[big] / peer_p[big] - 1.0)
    verdicts = int(np.sum((ours_p < ALPHA) != (peer_p < ALPHA)) // 2)
    cd_autorank = None
    try:  # autorank's private helper: statsmodels' qsturng table interpolation
        from autorank._util import _critical_distance

        cd_autorank = float(_critical_distance(ALPHA, k, x.shape[0]))
    except ImportError:  # pragma: no cover - autorank is a test extra
        pass
    return {
        "shape": list(x.shape),
        "seed": SEED,
        "repeats": repeats,
        "times": times,
        "cold_pipeline_s": cold,
        "friedman_statistic": friedman.statistic,
        "iman_davenport_statistic": friedman.iman_davenport_statistic,
        "critical_difference": nem.critical_difference,
        "critical_difference_autorank": cd_autorank,
        "n_cliques": len(cold_result.cliques),
        "n_significant_pairs": sum(p.significant for p in nem.pairs),
        "max_abs_diff_vs_scikit_posthocs": float(np.max(np.abs(ours_p - peer_p))),
        "max_rel_diff_vs_scikit_posthocs_p_gt_1e-8": float(relative.max()),
        "smallest_p": float(ours_p.min()),
        "peer_p_below_1e-15": int(np.sum(peer_p < 1e-15) // 2),
        "peer_p_zero": int(np.sum(peer_p == 0.0) // 2),
        "verdicts_differing": verdicts,
    }


def report(m: dict[str, Any]) -> dict[str, Any]:
    t = {name: c.median(v) for name, v in m["times"].items()}
    spread = {name: c.spread([x * 1e3 for x in v]) for name, v in m["times"].items()}
    ratio_pipeline = t["pipeline_peer"] / t["pipeline_absrank"]
    ratio_sp = t["pvalues_scikit_posthocs"] / t["pvalues_absrank"]
    ratio_scipy = t["pvalues_scipy"] / t["pvalues_absrank"]
    cold = m["cold_fresh_process"]
    cold_median = c.median(cold["first"])
    goal_a = t["pipeline_absrank"] < GOAL_PIPELINE_S and cold_median < GOAL_PIPELINE_S
    goal_b = max(t["pvalues_absrank"], t["pvalues_absrank_new_k"]) < GOAL_PVALUES_S
    agree = m["verdicts_differing"] == 0
    n, k = m["shape"]
    print(f"\nRank tests, {k} algorithms x {n} problems (seed {m['seed']}), ms, median [min-max]")
    print(f"(a) ranks + Friedman + Nemenyi CD/p/cliques: {spread['pipeline_absrank']} ms")
    print(
        f"    cold, 1st call in a fresh process ({len(cold['first'])} processes): "
        f"{c.spread([v * 1e3 for v in cold['first']])} ms (2nd call there "
        f"{c.spread([v * 1e3 for v in cold['second']])} ms; import "
        f"{c.spread(cold['import'])} s)"
    )
    print(
        f"    CPU time there (less sensitive to load): 1st "
        f"{c.spread([v * 1e3 for v in cold['cpu_first']])} ms, 2nd "
        f"{c.spread([v * 1e3 for v in cold['cpu_second']])} ms"
    )
    print(f"    1st call in this process: {m['cold_pipeline_s'] * 1e3:.1f} ms")
    print(
        f"    goal < {GOAL_PIPELINE_S * 1e3:.0f} ms cold and warm (load "
        f"{m['loadavg'][0]:.2f}): {c.verdict(goal_a)}"
    )
    print(f"    peer friedmanchisquare + posthoc_nemenyi_friedman: {spread['pipeline_peer']} ms")
    print(f"    ratio peer / absrank: {ratio_pipeline:.1f}x")
    print(f"(b) 4,950 Nemenyi p-values, studentized_range_sf: {spread['pvalues_absrank']} ms")
    print(
        f"    same, as the first call of a new k (per-k interpolant built): "
        f"{spread['pvalues_absrank_new_k']} ms"
    )
    print(f"    goal < {GOAL_PVALUES_S * 1e3:.0f} ms: {c.verdict(goal_b)}")
    print(f"    scikit-posthocs posthoc_nemenyi_friedman: {spread['pvalues_scikit_posthocs']} ms")
    print(f"    ratio scikit-posthocs / absrank: {ratio_sp:.1f}x")
    print(f"    scipy studentized_range.sf (same q): {spread['pvalues_scipy']} ms")
    print(f"    ratio scipy / absrank: {ratio_scipy:.1f}x")
    print("(c) agreement with scikit-posthocs (scipy's sf):")
    print(f"    max |dp| = {m['max_abs_diff_vs_scikit_posthocs']:.2e}")
    rel = m["max_rel_diff_vs_scikit_posthocs_p_gt_1e-8"]
    print(f"    max relative dp where p > 1e-8 = {rel:.2e}")
    pairs = k * (k - 1) // 2
    print(
        f"    verdicts differing at alpha {ALPHA}: {m['verdicts_differing']} of {pairs}  "
        f"{'agree' if agree else 'DISAGREE'}"
    )
    print(
        f"    smallest p = {m['smallest_p']:.3e}; pairs where scikit-posthocs has p < 1e-15 "
        f"(no correct digit: it forms 1 - cdf): {m['peer_p_below_1e-15']}, "
        f"of which p = 0: {m['peer_p_zero']}"
    )
    print(
        f"    CD = {m['critical_difference']:.6f}; autorank (qsturng) "
        f"{m['critical_difference_autorank']}"
    )
    print(
        f"    {m['n_significant_pairs']} significant pairs, {m['n_cliques']} cliques; "
        f"Friedman chi2 = {m['friedman_statistic']:.1f}, "
        f"Iman-Davenport F = {m['iman_davenport_statistic']:.2f}"
    )
    return {
        "median_s": t,
        "cold_fresh_median_s": cold_median,
        "ratio_pipeline_peer_over_absrank": ratio_pipeline,
        "ratio_scikit_posthocs_over_absrank": ratio_sp,
        "ratio_scipy_sf_over_absrank": ratio_scipy,
        "goals_met": {
            "pipeline_50ms": goal_a,
            "pvalues_1s": goal_b,
            "same_verdicts_as_scikit_posthocs": agree,
        },
    }


def peer_versions() -> dict[str, str]:
    from importlib import metadata

    out = {}
    for name in PEERS:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "absent"
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="3 repeats")
    p.add_argument("--repeats", type=int, default=None, help="repeats (7 / 3)")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child()
        return {}
    c.exit_on_sigterm()
    repeats = args.repeats or (3 if args.quick else 7)
    machine = {**c.machine(), "peer_versions": peer_versions()}
    t0 = time.perf_counter()
    m = {"cold_fresh_process": measure_cold(max(repeats, 3)), **measure(repeats)}
    m["loadavg"] = os.getloadavg()
    results = {"mode": "quick" if args.quick else "full", "machine": machine, **m, **report(m)}
    results["seconds"] = time.perf_counter() - t0
    results["loadavg_after"] = os.getloadavg()
    path = c.save(f"ranktests-{results['mode']}", results)
    print(f"\n(total {results['seconds']:.0f} s; raw results in {path.relative_to(c.ROOT)})")
    return results


if __name__ == "__main__":
    main()
