"""Measure the constants of the cost model (app/services/costs.py) on this machine.

Each piece of work a request can ask for is timed with ``time.process_time`` (CPU of this
process, one thread: run it with ``OPENBLAS_NUM_THREADS=1``), at a few sizes, and its
constant fitted by least squares on the model's own feature (the same formula
``app.services.costs`` uses); the script prints the fitted constants beside those in
``costs.py``. Copy them there when they move by more than the model's stated factor.

* hypervolume: ``moocore.hypervolume`` of n points on the positive unit sphere (all
  non-dominated: the worst case) in m = 2..10 objectives; per m, ``log t = log A + E log n``;
* post-hoc families: ``ranktests.posthoc`` on 30 problems × k algorithms, per method,
  ``t = lin·m + quad·m²`` with m = k(k-1)/2 pairs;
* mean and median aggregates: ``aggregates.aggregate_ranks`` of 16 values on a smooth table
  curve (the 3-D sphere), per value ``a + b·r``;
* Pareto sorting: ``pareto.nondominated_levels`` of N random runs × m indicators, ``N²·m``;
* comparison rows: ``results_input.group_rows`` + ``reduce_runs`` per row.

Usage::

    OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/fit_cost_model.py [--quick]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.services import costs  # noqa: E402


def cpu(work: Callable[[], Any], repeats: int = 3) -> float:
    """The least CPU-seconds of ``repeats`` runs of ``work``."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        work()
        best = min(best, time.process_time() - t0)
    return best


def sphere_front(n: int, m: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).random((n, m)) + 1e-3
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def fit_hv(quick: bool) -> dict[int, tuple[float, float]]:
    import moocore

    out = {}
    for m in range(2, 11):
        ns, ts = [], []
        n = 25
        while n <= 20_000:
            f = sphere_front(n, m)
            t = cpu(lambda f=f, m=m: moocore.hypervolume(f, ref=np.full(m, 1.1)), 1 if quick else 2)
            if t > 2e-3:
                ns.append(n)
                ts.append(t)
            if t > (0.3 if quick else 1.5):
                break
            n = int(n * 1.6)
        if len(ns) >= 2:
            e, log_a = np.polyfit(np.log(ns), np.log(ts), 1)
            out[m] = (float(np.exp(log_a)), float(e))
        print(f"hv m={m}: points {ns} seconds {[round(t, 4) for t in ts]} -> {out.get(m)}")
    return out


def fit_posthoc() -> dict[str, tuple[float, float]]:
    from app.domain import ranktests

    rng = np.random.default_rng(0)
    out = {}
    for method in ranktests.POSTHOC_METHODS:
        control = 0 if method in ("bonferroni-dunn", "li") else None
        rows = []
        for k in (50, 100, 150, 200):
            x = rng.random((30, k))
            t = cpu(
                lambda x=x, method=method, control=control: ranktests.posthoc(
                    x, method=method, control=control
                )
            )
            m = k - 1 if control is not None else k * (k - 1) // 2
            rows.append((m, t))
        a = np.array([[m, m * m] for m, _ in rows], dtype=float)
        b = np.array([t for _, t in rows])
        if method == "hommel":
            lin, quad = np.linalg.lstsq(a, b, rcond=None)[0]
        else:
            lin, quad = float(np.dot(a[:, 0], b) / np.dot(a[:, 0], a[:, 0])), 0.0
        out[method] = (float(lin), float(max(quad, 0.0)))
        print(f"posthoc {method}: {rows} -> {out[method]}")
    return out


def smooth_curve() -> Any:
    """The smooth table curve of ``bench/aggregates.py`` (the 3-D sphere, power tail off, so
    every value is convolved)."""
    sys.path.insert(0, str(ROOT / "bench"))
    import aggregates as bench_aggregates

    return bench_aggregates._curve()


def fit_aggregates() -> dict[str, tuple[float, float]]:
    """a + b · r per value on a smooth table curve: the median's constants. The mean's are the
    envelope of its worst case instead (costs.MEAN_AGGREGATE_SECONDS: a value in v's
    transition refines its convolutions most); its fit here is a floor, printed to compare."""
    from app.domain.aggregates import aggregate_ranks

    curve = smooth_curve()
    rng = np.random.default_rng(1)
    out = {}
    for aggregate in ("mean", "median"):
        rows = []
        for r in (2, 8, 32, 64, 128, 256):
            t = np.sort(rng.uniform(0.01, 1.5, 16))
            s = cpu(
                lambda t=t, r=r, a=aggregate: aggregate_ranks(
                    t, curve, budget=1, runs=r, aggregate=a
                ),
                2,
            )
            rows.append((r, s / 16))
        b, a = np.polyfit([r for r, _ in rows], [s for _, s in rows], 1)
        out[aggregate] = (float(max(a, 1e-4)), float(max(b, 0.0)))
        print(f"aggregate {aggregate}: per value {rows} -> {out[aggregate]}")
    return out


def fit_pareto_sort() -> float:
    from app.domain import pareto

    rng = np.random.default_rng(2)
    feats, ts = [], []
    for n in (2000, 5000, 10_000, 20_000):
        for m in (2, 5, 10):
            x = rng.random((n, m))
            t = cpu(lambda x=x: pareto.nondominated_levels(x), 1)
            feats.append(n * n * m)
            ts.append(t)
    c = float(np.dot(feats, ts) / np.dot(feats, feats))
    print(f"pareto sort: {list(zip(feats, [round(t, 4) for t in ts], strict=True))} -> {c:.3g}")
    return c


def fit_rows() -> float:
    from app.config import Settings
    from app.services import results_input

    settings = Settings(environment="test", max_result_rows=10**7)
    feats, ts = [], []
    for n_rows in (50_000, 200_000):
        rows = [(f"a{i % 50}", f"p{(i // 50) % 400}", i // 20_000, float(i)) for i in range(n_rows)]

        def work(rows: list[Any] = rows) -> None:
            table = results_input.group_rows(rows, settings, field="results")
            results_input.reduce_runs(table, "mean", policy="reject", field="results")

        feats.append(n_rows)
        ts.append(cpu(work, 1))
    c = float(np.dot(feats, ts) / np.dot(feats, feats))
    print(f"comparison rows (group + reduce): {list(zip(feats, ts, strict=True))} -> {c:.3g}")
    return c


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--quick", action="store_true", help="fewer sizes and repeats")
    args = parser.parse_args()
    print("current HV_POWER", costs.HV_POWER)
    fit_hv(args.quick)
    print("current POSTHOC_SECONDS", costs.POSTHOC_SECONDS)
    fit_posthoc()
    print("current MEAN/MEDIAN", costs.MEAN_AGGREGATE_SECONDS, costs.MEDIAN_AGGREGATE_SECONDS)
    fit_aggregates()
    print("current PARETO_SORT_SECONDS", costs.PARETO_SORT_SECONDS)
    fit_pareto_sort()
    print("current ROW_SECONDS (group + reduce only)", costs.ROW_SECONDS)
    fit_rows()


if __name__ == "__main__":
    main()
