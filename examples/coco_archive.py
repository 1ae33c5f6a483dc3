"""Archive a COCO experiment on a running absrank and see it on the leaderboards.

A new user's path through the public archive, end to end:

1. run scipy's Nelder–Mead on BBOB functions (instance 1) with ``cocoex.Observer`` writing the
   standard COCO folder (``exdata/...``: ``.info``, ``.dat``, ``.tdat``), ``--runs`` runs per
   function from seeded starting points, at most ``--budget`` evaluations each;
2. zip that folder and upload it: ``POST /v1/result-sets`` with ``format=coco``;
3. print each function's leaderboard (``GET /v1/leaderboards/{function_id}``): the new set
   next to the archived ones (``make run`` seeds the BBOB demo's DE, dual annealing and random
   search at d = 10), by absolute rank, with the relative rank beside it;
4. save the published v1 curve each function's ranks came from (``curve.json``), which
   recomputes them offline.

Usage::

    make run                                  # in another terminal: API + worker + archive
    .venv/bin/python examples/coco_archive.py --functions 1,5,15,21 --out nm-archive

Ranks that need a ladder of nested regions are ``provisional`` until its tables are built
(the upload queues them); ``--wait`` polls until every entry of the new set is final.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import time
from pathlib import Path

import cocoex
import numpy as np
import scipy
from absrank_client import Client
from absrank_client.leaderboards import Leaderboard
from scipy.optimize import minimize

ALGORITHM = "NelderMead"


class BudgetExhausted(Exception):
    """Raised inside the objective once the budget is spent."""


def nelder_mead(problem: cocoex.Problem, budget: int, seed: int) -> None:
    """One Nelder–Mead run from a seeded uniform start in [-4, 4]^d, at most ``budget`` calls."""
    calls = 0

    def f(x: np.ndarray) -> float:
        nonlocal calls
        if calls >= budget:
            raise BudgetExhausted
        calls += 1
        return float(problem(x))

    x0 = np.random.default_rng(seed).uniform(-4.0, 4.0, problem.dimension)
    try:
        minimize(f, x0, method="Nelder-Mead", options={"maxfev": budget, "xatol": 0, "fatol": 0})
    except BudgetExhausted:
        pass


def run_experiment(out: Path, functions: list[int], dim: int, runs: int, budget: int) -> Path:
    """Run the experiment with the COCO observer in ``out``; return the zipped result folder.

    COCO writes below ``exdata/`` of the working directory, so the run happens inside ``out``.
    """
    shutil.rmtree(out / "exdata", ignore_errors=True)
    selection = f"dimensions: {dim} function_indices: {','.join(map(str, functions))}"
    with contextlib.chdir(out):
        observer = cocoex.Observer(
            "bbob", f"result_folder: {ALGORITHM} algorithm_name: {ALGORITHM}"
        )
        for run in range(runs):  # one pass over the suite per run: COCO appends each run
            suite = cocoex.Suite("bbob", "instances: 1", selection)
            for problem in suite:
                problem.observe_with(observer)
                nelder_mead(problem, budget, seed=1000 * run + problem.id_function)
                problem.free()
        folder = out / observer.result_folder
        del observer  # closes the logger's files
    return Path(shutil.make_archive(str(out / ALGORITHM), "zip", root_dir=folder))


def show(board: Leaderboard, mine: str) -> None:
    """One function's leaderboard: absolute rank (log10 v), its interval, the relative rank."""
    print(f"\n{board.function_id}  (aggregate: {board.aggregate} of each set's runs)")
    print(
        f"  {'set':<24} {'budget':>6} {'runs':>4} {'f - f*':>10} {'log10 v':>8} "
        f"{'interval':>17} {'rel.':>4}  status"
    )
    for e in board.entries:
        mark = "*" if e.set_id == mine else " "
        log_v = "-inf" if e.log10_v is None else f"{e.log10_v:.2f}"
        lo = "-inf" if e.log10_lo is None else f"{e.log10_lo:.2f}"
        hi = "-inf" if e.log10_hi is None else f"{e.log10_hi:.2f}"
        err = "?" if e.error is None else f"{e.error:.3g}"
        rel = "-" if e.relative_rank is None else f"{e.relative_rank:g}"
        print(
            f"{mark} {e.label[:24]:<24} {e.budget:>6} {e.runs:>4} {err:>10} {log_v:>8} "
            f"{'[' + lo + ', ' + hi + ']':>17} {rel:>4}  {e.status}"
        )
    significant = [p for p in board.pairs if p.significant]
    family = [p for p in board.pairs if p.in_family]
    print(
        f"  significantly different pairs (rank-sum on the runs, Holm): {len(significant)}"
        f" of {len(family)}"
    )


def main(argv: list[str] | None = None, client: Client | None = None) -> None:
    """Run, upload, print the leaderboards, save the curves.

    ``client`` (e.g. one wired to the app in-process) replaces ``--url``.
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default=None, help="default: ABSRANK_URL or 127.0.0.1:8000")
    parser.add_argument("--functions", default="1,5,15,21", help="BBOB function numbers")
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget", type=int, default=1000, help="evaluations per run")
    parser.add_argument("--out", type=Path, default=Path("nm-archive"), help="working folder")
    parser.add_argument("--wait", type=float, default=0.0, help="seconds to wait for final ranks")
    args = parser.parse_args(argv)
    functions = [int(x) for x in args.functions.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)

    archive = run_experiment(args.out, functions, args.dim, args.runs, args.budget)
    print(f"COCO archive: {archive.name}, {archive.stat().st_size} bytes")
    own = client is None
    client = Client(args.url) if client is None else client
    try:
        result_set = client.create_result_set(
            archive, format="coco", name=ALGORITHM, version=f"scipy {scipy.__version__}"
        )
        print(
            f"result set {result_set.id}: {result_set.n_runs} runs on "
            f"{result_set.n_functions} functions, values are {result_set.values_are}"
        )
        ids = [f"bbob/f{n}/i1/d{args.dim}" for n in functions]
        deadline = time.monotonic() + args.wait
        boards = [client.leaderboard(fid) for fid in ids]
        while time.monotonic() < deadline and any(
            e.status != "final" for b in boards for e in b.entries if e.set_id == result_set.id
        ):
            time.sleep(5)
            boards = [client.leaderboard(fid) for fid in ids]
        for board in boards:
            show(board, result_set.id)
            entry = next(e for e in board.entries if e.set_id == result_set.id)
            if entry.curve is not None:
                path = args.out / f"{board.function_id.replace('/', '_')}.curve.json"
                path.write_bytes(client.request("GET", entry.curve).content)
                print(f"  its v1 curve: {entry.curve} -> {path.name}")
    finally:
        if own:
            client.close()


if __name__ == "__main__":
    main()
