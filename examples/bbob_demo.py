"""Run real optimizers on BBOB f1-f24 (d = 10), then rank their results on a running absrank.

Three optimizers get the same budget of ``c`` function evaluations per run, with fixed seeds:
``scipy.optimize.differential_evolution``, ``scipy.optimize.dual_annealing`` and pure random
search. Each run's metric is the best value among its first ``c`` evaluations. The script sends
those values to ``POST /v1/absolute-ranks`` with ``budget = c`` and prints, per function, the
absolute rank ``v_c`` (the probability that random search with the same budget does at least as
well; lower is better) next to the usual relative rank among the three.

Usage::

    make run                               # in another terminal: API + worker + default tables
    .venv/bin/python examples/bbob_demo.py --budget 1000

If a default table is still being built, the script waits for it (``409`` + ``Location``); values
below a table's samples come back ``provisional`` while the function's ladder builds, and the
script waits for their final ranks too.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import time
from collections.abc import Callable

# The server's numerical baseline (README, "One numerical baseline on every x86-64 machine"),
# set before numpy loads: the optimizers' runs then print the README's numbers on AVX-512
# machines too. ABSRANK_NATIVE_SIMD=1 keeps the machine's own loops.
if os.environ.get("ABSRANK_NATIVE_SIMD") != "1" and platform.machine().lower() in (
    "x86_64",
    "amd64",
):
    os.environ.setdefault("NPY_DISABLE_CPU_FEATURES", "X86_V4 AVX512_ICL AVX512_SPR")
    os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")

import cocoex
import httpx
import numpy as np
from scipy.optimize import differential_evolution, dual_annealing
from scipy.stats import rankdata


class BudgetExhausted(Exception):
    """Raised inside the objective once the budget is spent."""


class Budgeted:
    """Objective wrapper: counts evaluations, keeps the best of the first ``budget`` ones."""

    def __init__(self, problem: cocoex.BareProblem, budget: int) -> None:
        self.problem = problem
        self.budget = budget
        self.evaluations = 0
        self.best = np.inf

    def __call__(self, x: np.ndarray) -> float:
        if self.evaluations >= self.budget:
            raise BudgetExhausted
        self.evaluations += 1
        y = float(self.problem(np.ascontiguousarray(x, dtype=np.float64)))
        self.best = min(self.best, y)
        return y


def run_de(f: Budgeted, bounds: list[tuple[float, float]], seed: int) -> None:
    """Differential evolution (scipy defaults, no polishing)."""
    differential_evolution(f, bounds, rng=seed, polish=False, maxiter=10**6, tol=0)


def run_da(f: Budgeted, bounds: list[tuple[float, float]], seed: int) -> None:
    """Dual annealing with the budget as maxfun."""
    dual_annealing(f, bounds, rng=seed, maxfun=f.budget)


def run_rs(f: Budgeted, bounds: list[tuple[float, float]], seed: int) -> None:
    """Pure random search: c uniform points."""
    rng = np.random.default_rng(seed)
    lo, hi = np.array(bounds).T
    for _ in range(f.budget):
        f(rng.uniform(lo, hi))


ALGORITHMS: dict[str, Callable[[Budgeted, list[tuple[float, float]], int], None]] = {
    "DE": run_de,
    "DA": run_da,
    "RS": run_rs,
}


def best_value(fid: int, dim: int, budget: int, algorithm: str, seed: int) -> float:
    """Run one optimizer once and return the best of its first ``budget`` evaluations."""
    problem = cocoex.BareProblem("bbob", fid, dim, 1)
    f = Budgeted(problem, budget)
    try:
        ALGORITHMS[algorithm](f, [(-5.0, 5.0)] * dim, seed)
    except BudgetExhausted:
        pass
    return f.best


def rank(client: httpx.Client, function_id: str, values: list[float], budget: int) -> dict:
    """POST the values; wait for the function's default table if it is still being built, and
    for its ladder while values below the table's samples are ranked ``provisional``."""
    payload = {"function_id": function_id, "values": values, "budget": budget}
    deadline = time.monotonic() + 900
    while True:
        r = client.post("/v1/absolute-ranks", json=payload)
        if r.status_code != 409 or "location" not in r.headers:
            r.raise_for_status()
            body = r.json()
            waiting = any(item.get("provisional") for item in body["results"])
            if not waiting or body.get("awaiting", {}).get("location") is None:
                return body  # final (or a ladder nobody may queue: provisional, as answered)
            detail = f"the ladder of {function_id} is still building"
        else:
            detail = r.json()["detail"]
        if time.monotonic() > deadline:
            raise TimeoutError(f"{function_id} not ready: {detail}")
        time.sleep(2)


def main(argv: list[str] | None = None, http: httpx.Client | None = None) -> None:
    """Run the experiment and print absolute next to relative ranks.

    ``argv`` defaults to the command line; ``http`` (a client with the service as its base URL,
    e.g. one wired to the app in-process) replaces ``--url``.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=os.environ.get("ABSRANK_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--budget", type=int, default=1000, help="evaluations per run (c)")
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--functions", default="1-24", help="e.g. 1-24 or 1,15,21")
    args = parser.parse_args(argv)
    if "-" in args.functions:
        first, last = (int(x) for x in args.functions.split("-"))
        fids = list(range(first, last + 1))
    else:
        fids = [int(x) for x in args.functions.split(",")]

    names = list(ALGORITHMS)
    print(f"BBOB d={args.dim}, instance 1, budget c={args.budget}, seed {args.seed}")
    print(f"{'fun':>4} {'alg':>3} {'f - f*':>11} {'rel.rank':>8} {'log10 v_c':>10}  method")
    rel_sum = dict.fromkeys(names, 0.0)
    log_sum = dict.fromkeys(names, 0.0)
    session = httpx.Client(base_url=args.url, timeout=60) if http is None else http
    with session if http is None else contextlib.nullcontext(session) as client:
        for fid in fids:
            fopt = cocoex.BareProblem("bbob", fid, args.dim, 1).best_value()
            values = [best_value(fid, args.dim, args.budget, a, args.seed) for a in names]
            body = rank(client, f"bbob/f{fid}/i1/d{args.dim}", values, args.budget)
            relative = rankdata(values)
            rows = zip(names, values, relative, body["results"], strict=True)
            for name, value, rel, item in rows:
                log_v = item["log10_v"]
                rel_sum[name] += rel
                log_sum[name] += log_v if log_v is not None else -np.inf
                shown = f"{log_v:10.2f}" if log_v is not None else f"{'-inf':>10}"
                print(
                    f"{fid:>4} {name:>3} {value - fopt:11.3e} {rel:8.1f} {shown}  {item['method']}"
                )
    n = len(fids)
    print("\naverage over functions (lower is better in both):")
    for name in names:
        mean_rel, mean_log = rel_sum[name] / n, log_sum[name] / n
        print(f"  {name}: relative rank {mean_rel:.2f}   mean log10 v_c {mean_log:.2f}")


if __name__ == "__main__":
    main()
