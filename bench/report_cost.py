"""The cost of an anytime report (issue 16, item 7): 20 algorithms × 24 functions × 15 runs.

Data: best-so-far trajectories of 10^3 records each (7.2 million records), generated from an
explicit seed (``numpy.random.default_rng(SEED)``): per (algorithm, function) a rate and a start,
per run 10^3 distinct evaluations log-uniform in ``[1, 10^5]`` (the first one 1) and errors
``10^(start − rate·log10 e + 0.3·N(0, 1))`` floored at 1e-9, as their running minimum. Some
targets are reached by every run, some by a few, some by none. The same numbers are written

* for **cocopp** as a COCO ``bbob`` archive, one folder per algorithm (``.info`` index files,
  ``.dat`` and ``.tdat`` data files holding every record, 15 instances pooled per function and
  dimension, as ``cocoex.Observer`` writes them; values as ``repr`` floats, so both sides read
  the same binary64 numbers), and
* for **absrank** as the JSON body of ``POST /v1/runtime-distributions`` (inline algorithms,
  ``pool_instances``, ``absolute_ranks: false``: cocopp has no absolute rank).

The report is what both compute from the data: the runtimes to COCO's 51 default targets, the
ERT per (algorithm, function, target), the per-function runtime ECDFs, and the figure of the 20
algorithms' runtime ECDFs pooled over the 24 functions as SVG.

* **absrank**: ``RuntimeDistributionRequest.model_validate_json`` of the body (the request
  model the route validates; FastAPI itself parses with ``json.loads`` then validates, which is
  slower: printed for information), :func:`app.services.anytime.runtime_distributions`
  (runtimes, ERT, ECDFs, the fixed-budget view: the service layer of the route) and
  :func:`~app.services.anytime.runtime_figure` (``figure=ecdf``, SVG: what ``…/plot.svg``
  answers);
* **cocopp**: ``pproc.DataSetList`` per algorithm folder (its reader), ``DataSet.detEvals`` and
  ``detERT`` at the same targets, the per-function ECDFs (``numpy.sort`` of the runtimes), and the
  pooled ECDF of each algorithm drawn by ``compall.pprldmany.plotdata`` (what
  ``pprldmany.main`` draws each algorithm's curve with), saved by matplotlib as SVG.

Both sides are checked to give the same ECDFs (every pooled breakpoint and count) and the same
ERT (relative 1e-13). Each side runs in its own fresh child process, pinned to one CPU where the
OS allows, one thread: **cold** is the first report of that process (the imports of the side's
modules are timed separately and not counted; absrank's matplotlib is warmed as the API's start
warms it in a background thread — ``ABSRANK_PRELOAD_FIGURES``, on by default —, timed apart as
``preload``), **warm** the next ones in the same process (cocopp
keeps nothing between two reads of a folder: it makes one report per child, the peer of both).
The ratio printed is absrank / cocopp (below 1: absrank is faster). Goal: absrank's cold report
< 3 s. cocopp needs minutes for the whole data (a Python loop per line of 14.4 million lines):
``--quick`` lets it read 4 of the 20 algorithm folders and scales its time by 5 (its cost is
linear in the folders), and checks the agreement on those 4.

Note: the report exceeds two default limits of the HTTP route: the body is ~190 MB against
``max_request_bytes`` = 8 MiB, and 7.2 million records against ``max_anytime_records`` = 2·10^6;
the service is called with ``max_anytime_records`` raised to 8·10^6.

Usage::

    .venv/bin/python bench/report_cost.py            # 2 children per side, ~8 min
    .venv/bin/python bench/report_cost.py --quick    # 1 each, cocopp on 4 folders, ~2 min

Benchmarks report, they do not assert.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import _common as c
import numpy as np
from numpy.typing import NDArray

SEED = 20261204
ALGORITHMS, FUNCTIONS, RUNS, RECORDS = 20, 24, 15, 1000
DIM = 10
LARGEST_BUDGET = 100_000
GOAL_SECONDS = 3.0
MAX_RECORDS = 8_000_000  # the service's limit for this bench (default 2·10^6)
QUICK_ALGORITHMS = 4  # --quick: cocopp reads this many folders, its time scaled to 20


# --- the data -------------------------------------------------------------------------------


def generate(seed: int = SEED) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
    """Evaluations and best-so-far errors, shape (algorithms, functions, runs, records)."""
    rng = np.random.default_rng(seed)
    shape = (ALGORITHMS, FUNCTIONS, RUNS, RECORDS)
    evals = np.empty(shape, np.int64)
    best = np.empty(shape)
    log_top = np.log(LARGEST_BUDGET)
    for a in range(ALGORITHMS):
        for f in range(FUNCTIONS):
            rate, start = rng.uniform(0.3, 2.0), rng.uniform(1.0, 3.5)
            for r in range(RUNS):
                pool = np.unique(np.rint(np.exp(rng.uniform(np.log(2), log_top, 4 * RECORDS))))
                e = np.sort(rng.choice(pool.astype(np.int64), RECORDS - 1, replace=False))
                e = np.concatenate(([1], e))
                lg = start - rate * np.log10(e) + 0.3 * rng.standard_normal(RECORDS)
                evals[a, f, r] = e
                best[a, f, r] = np.minimum.accumulate(np.maximum(10.0**lg, 1e-9))
    return evals, best


def name(a: int) -> str:
    return f"A{a:02d}"


def write_coco(root: Path, evals: NDArray[np.int64], best: NDArray[np.float64]) -> Path:
    """One COCO ``bbob`` folder per algorithm (``root/<name>``); returns ``root``."""
    header = (
        "% f evaluations | g evaluations | best noise-free fitness - Fopt (0.000000000000e+00) "
        "+ sum g_i+ | measured fitness | best measured fitness or single-digit g-values\n"
    )
    for a in range(ALGORITHMS):
        folder = root / name(a)
        for f in range(FUNCTIONS):
            fid = f + 1
            data = folder / f"data_f{fid}"
            data.mkdir(parents=True, exist_ok=True)
            stem = f"bbobexp_f{fid}_DIM{DIM}"
            parts, runs = [], []
            for r in range(RUNS):
                e, b = evals[a, f, r].tolist(), best[a, f, r].tolist()
                parts.append(header)
                parts.append(
                    "".join(f"{x} 0 {y!r} {y!r} {y!r}\n" for x, y in zip(e, b, strict=True))
                )
                runs.append(f"{r + 1}:{e[-1]}|{b[-1]:.1e}")
            text = "".join(parts)
            (data / f"{stem}.dat").write_text(text)
            (data / f"{stem}.tdat").write_text(text)
            (folder / f"bbobexp_f{fid}.info").write_text(
                f"suite = 'bbob', funcId = {fid}, DIM = {DIM}, Precision = 1.000e-08, "
                f"algId = '{name(a)}', coco_version = '2.8.2', logger = 'bbob', "
                "data_format = 'bbob-new2'\n% \n"
                f"data_f{fid}/{stem}.dat, " + ", ".join(runs) + "\n"
            )
    return root


def write_body(path: Path, evals: NDArray[np.int64], best: NDArray[np.float64]) -> int:
    """The JSON body of ``POST /v1/runtime-distributions``; returns its size in bytes."""
    import orjson

    body = {
        "algorithms": [
            {
                "algorithm": name(a),
                "runs": [
                    {
                        "function_id": f"bbob/f{f + 1}/i{r + 1}/d{DIM}",
                        "evaluations": evals[a, f, r],
                        "values": best[a, f, r],
                    }
                    for f in range(FUNCTIONS)
                    for r in range(RUNS)
                ],
            }
            for a in range(ALGORITHMS)
        ],
        "pool_instances": True,
        "absolute_ranks": False,
    }
    raw = orjson.dumps(body, option=orjson.OPT_SERIALIZE_NUMPY)
    path.write_bytes(raw)
    return len(raw)


# --- the two sides (each in a child process) ------------------------------------------------


def one_core() -> None:
    """Pin this process to one CPU (where the OS allows)."""
    with contextlib.suppress(AttributeError, OSError):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def absrank_side(body_path: Path, out: Path, warm: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    from app.config import Settings
    from app.schemas.anytime import RuntimeDistributionRequest
    from app.services import anytime as service
    from app.services import plots
    from app.services.ranks import RankEnv
    from app.services.table_cache import AppCaches

    imports = time.perf_counter() - t0
    # what the API's start does in a background thread (ABSRANK_PRELOAD_FIGURES, default on):
    # matplotlib imported and warmed before the first request; timed apart, not in the report
    t0 = time.perf_counter()
    plots.preload()
    preload = time.perf_counter() - t0
    settings = Settings(
        _env_file=None,
        environment="bench",
        database_url=f"sqlite:///{out.with_suffix('.db')}",
        queue_url="memory://",
        max_anytime_records=MAX_RECORDS,
    )
    caches = AppCaches.from_settings(settings)
    env = RankEnv(None, settings, None, caches.tables, caches.ladders)  # type: ignore[arg-type]
    raw = body_path.read_bytes()  # the bytes a route receives (not timed)
    reports = []
    analysis = None
    for _ in range(1 + warm):
        t0 = time.perf_counter()
        body = RuntimeDistributionRequest.model_validate_json(raw)
        t1 = time.perf_counter()
        analysis = service.runtime_distributions(env, body)
        t2 = time.perf_counter()
        drawn = service.runtime_figure(analysis, "ecdf", "svg", plots.FigureOptions())
        t3 = time.perf_counter()
        out.with_suffix(".svg").write_bytes(drawn.content)
        reports.append(
            {"read_s": t1 - t0, "analysis_s": t2 - t1, "figure_s": t3 - t2, "total_s": t3 - t0}
        )
        del body
    assert analysis is not None
    t0 = time.perf_counter()  # for information: FastAPI's way (json.loads, then validation)
    RuntimeDistributionRequest.model_validate(json.loads(raw))
    route_read = time.perf_counter() - t0
    read = analysis.read
    arrays: dict[str, Any] = {}
    for p in read.pooled:
        arrays[f"x_{p.algorithm}"] = np.asarray(p.ecdf.x)
        arrays[f"counts_{p.algorithm}"] = np.asarray(p.ecdf.counts)
        arrays[f"total_{p.algorithm}"] = np.asarray(p.ecdf.total)
    for item in read.functions:
        key = f"{item.algorithm}_{item.function_id}"
        arrays[f"ert_{key}"] = np.array([np.inf if v is None else v for v in item.ert])
    np.savez(out, **arrays)
    return {
        "imports_s": imports,
        "preload_s": preload,
        "reports": reports,
        "route_read_s": route_read,
        "svg_bytes": len(drawn.content),
    }


def cocopp_side(root: Path, out: Path, warm: int, algorithms: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    import matplotlib as mpl

    mpl.use("Agg")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import cocopp
        import cocopp.compall.pprldmany as pprldmany
        import cocopp.pproc
        import matplotlib.pyplot as plt

    from app.domain.anytime import DEFAULT_TARGETS

    imports = time.perf_counter() - t0
    cocopp.genericsettings.verbose = False
    targets = DEFAULT_TARGETS.tolist()
    reports = []
    pooled: dict[str, NDArray[np.float64]] = {}
    erts: dict[str, NDArray[np.float64]] = {}
    for _ in range(1 + warm):
        t0 = time.perf_counter()
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            sets = {
                name(a): list(cocopp.pproc.DataSetList(str(root / name(a))))
                for a in range(algorithms)
            }
        t1 = time.perf_counter()
        per_function = {}
        for alg, datasets in sets.items():
            runtimes = []
            for ds in datasets:
                rt = np.array(ds.detEvals(targets), dtype=float)
                rt = np.where(np.isnan(rt), np.inf, rt)
                per_function[(alg, ds.funcId)] = np.sort(rt[np.isfinite(rt)])
                erts[f"{alg}_bbob/f{ds.funcId}/d{ds.dim}"] = np.array(ds.detERT(targets))
                runtimes.append(rt.reshape(-1))
            pooled[alg] = np.concatenate(runtimes)
        t2 = time.perf_counter()
        fig = plt.figure()
        for data in pooled.values():
            pprldmany.plotdata(data, maxval=float(LARGEST_BUDGET))
        plt.xscale("log")
        buffer = io.BytesIO()
        fig.savefig(buffer, format="svg")
        plt.close(fig)
        t3 = time.perf_counter()
        out.with_suffix(".svg").write_bytes(buffer.getvalue())
        reports.append(
            {"read_s": t1 - t0, "analysis_s": t2 - t1, "figure_s": t3 - t2, "total_s": t3 - t0}
        )
    arrays: dict[str, Any] = {f"pooled_{alg}": v for alg, v in pooled.items()}
    arrays.update({f"ert_{k}": v for k, v in erts.items()})
    np.savez(out, **arrays)
    return {"imports_s": imports, "reports": reports, "svg_bytes": len(buffer.getvalue())}


def run_child(
    side: str, data: Path, out: Path, warm: int, algorithms: int = ALGORITHMS
) -> dict[str, Any]:
    """One fresh child process of ``side``: its imports, a cold report and ``warm`` more."""
    argv = [c.PYTHON, __file__, "--child", side, str(data), str(out), "--warm", str(warm)]
    argv += ["--algorithms", str(algorithms)]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
    done = subprocess.run(
        argv, cwd=c.ROOT, env=env, capture_output=True, text=True, check=False, timeout=1800
    )
    if done.returncode != 0:
        raise SystemExit(f"{side} child failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --- agreement and the run ------------------------------------------------------------------


def agreement(ours: Path, theirs: Path, algorithms: int) -> dict[str, Any]:
    """Pooled ECDFs (breakpoints, counts, total) and ERT of both sides (the algorithms that
    cocopp read)."""
    a, b = np.load(ours), np.load(theirs)
    ecdf_same = True
    for k in range(algorithms):
        alg = name(k)
        data = b[f"pooled_{alg}"]
        finite = np.sort(data[np.isfinite(data)])
        x, first = np.unique(finite, return_index=True)
        counts = np.concatenate(([0], np.append(first[1:], finite.size)))
        ecdf_same &= bool(
            np.array_equal(a[f"x_{alg}"], x)
            and np.array_equal(a[f"counts_{alg}"], counts)
            and int(a[f"total_{alg}"]) == data.size
        )
    worst, ert_same = 0.0, True
    keys = [k for k in b.files if k.startswith("ert_")]
    for key in keys:
        mine, cocos = a[key], b[key]
        ert_same &= bool(np.array_equal(np.isinf(mine), np.isinf(cocos)))
        hit = np.isfinite(cocos)
        if hit.any():
            worst = max(worst, float(np.max(np.abs(mine[hit] / cocos[hit] - 1))))
    return {
        "ecdf_identical": ecdf_same,
        "ert_cells": len(keys),
        "ert_max_rel_diff": worst,
        "ert_agree": ert_same and worst <= 1e-13 and len(keys) == algorithms * FUNCTIONS,
    }


def measure(quick: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="absrank-bench-report-") as tmp:  # ~1.2 GB
        return _measure(Path(tmp), quick)


def _measure(root: Path, quick: bool) -> dict[str, Any]:
    children, warm, read = (1, 1, QUICK_ALGORITHMS) if quick else (2, 2, ALGORITHMS)
    scale = ALGORITHMS / read  # cocopp's cost is linear in the folders it reads
    t0 = time.perf_counter()
    evals, best = generate()
    coco = write_coco(root / "coco", evals, best)
    body_bytes = write_body(root / "body.json", evals, best)
    del evals, best
    res: dict[str, Any] = {
        "shape": [ALGORITHMS, FUNCTIONS, RUNS, RECORDS],
        "seed": SEED,
        "body_bytes": body_bytes,
        "setup_s": time.perf_counter() - t0,
        "absrank": [],
        "cocopp": [],
        "cocopp_algorithms": read,
    }
    for i in range(children):  # interleaved, so drift on the shared machine hits both sides
        res["absrank"].append(run_child("absrank", root / "body.json", root / f"ours{i}.npz", warm))
        res["cocopp"].append(run_child("cocopp", coco, root / f"theirs{i}.npz", 0, read))
    res["agreement"] = agreement(root / "ours0.npz", root / "theirs0.npz", read)
    ours_cold = [x["reports"][0]["total_s"] for x in res["absrank"]]
    theirs_cold = [x["reports"][0]["total_s"] * scale for x in res["cocopp"]]
    ours_warm = [r["total_s"] for x in res["absrank"] for r in x["reports"][1:]]
    theirs_warm = theirs_cold  # cocopp keeps nothing between reports: one report per child
    res["cold_s"] = {"absrank": ours_cold, "cocopp": theirs_cold}
    res["warm_s"] = {"absrank": ours_warm, "cocopp": theirs_warm}
    res["cold_ratio"] = c.median(ours_cold) / c.median(theirs_cold)
    res["warm_ratio"] = c.median(ours_warm) / c.median(theirs_warm)
    return res


def report(res: dict[str, Any]) -> None:
    k, f, r, m = res["shape"]
    print(
        f"{k} algorithms x {f} functions x {r} runs x {m} records (seed {res['seed']}); "
        f"body {res['body_bytes'] / 1e6:.0f} MB; data written in {res['setup_s']:.0f} s"
    )
    if res["cocopp_algorithms"] != k:
        print(
            f"  (cocopp read {res['cocopp_algorithms']} of the {k} algorithms: its phases are "
            f"as measured, its totals scaled by {k / res['cocopp_algorithms']:g})"
        )
    for side in ("absrank", "cocopp"):
        first = [x["reports"][0] for x in res[side]]
        phases = ", ".join(
            f"{p.removesuffix('_s')} {c.median([x[p] for x in first]):.2f}"
            for p in ("read_s", "analysis_s", "figure_s")
        )
        print(
            f"  {side:<8} cold {c.spread(res['cold_s'][side])} s ({phases}; imports "
            f"{c.median([x['imports_s'] for x in res[side]]):.2f} s not counted), warm "
            f"{c.spread(res['warm_s'][side])} s"
        )
    route = c.median([x["route_read_s"] for x in res["absrank"]])
    print(f"  (absrank read as FastAPI does it, json.loads + validation: {route:.2f} s)")
    ag = res["agreement"]
    print(
        f"  absrank / cocopp: cold {res['cold_ratio']:.3f}, warm {res['warm_ratio']:.3f}; "
        f"pooled ECDFs identical: {ag['ecdf_identical']}, ERT max rel diff "
        f"{ag['ert_max_rel_diff']:.1e} over {ag['ert_cells']} (algorithm, function) cells"
    )
    print(f"  goal: absrank cold < {GOAL_SECONDS:g} s")


def goals(res: dict[str, Any]) -> dict[str, bool]:
    return {
        "cold_under_3s": c.median(res["cold_s"]["absrank"]) < GOAL_SECONDS,
        "same_ecdfs_and_ert": bool(
            res["agreement"]["ecdf_identical"] and res["agreement"]["ert_agree"]
        ),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--child", nargs=3, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--warm", type=int, default=1, help=argparse.SUPPRESS)
    ap.add_argument("--algorithms", type=int, default=ALGORITHMS, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        one_core()
        side, data, out = args.child
        if side == "absrank":
            got = absrank_side(Path(data), Path(out), args.warm)
        else:
            got = cocopp_side(Path(data), Path(out), args.warm, args.algorithms)
        print(json.dumps(got))
        return 0
    c.exit_on_sigterm()
    t0 = time.perf_counter()
    before = c.machine()  # the load average at the start
    res = measure(args.quick)
    res.update({"mode": "quick" if args.quick else "full", "machine": before})
    report(res)
    res["seconds"] = time.perf_counter() - t0
    c.finish("report_cost", res, None, goals)
    for goal, ok in res["goals_met"].items():
        print(f"  {goal}: {c.verdict(ok)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
