"""Importing a ~5 MB COCO archive (issue 12, item 6): ``read_upload`` against like-for-like floors.

A seeded (1+1)-ES with the 1/5th success rule runs on ``cocoex.Observer`` ("bbob" logger) over
24 functions × several instances × dimensions 2, 5, 10, 20; the result folder is zipped
(deflate) in memory until the archive is about ``--mb`` megabytes. Then, interleaved, each
``--repeats`` times:

- ``read_upload cold``: ``read_upload("coco", ...)`` in a fresh process (imports done, absrank
  function objects not yet built: the f* checks build them);
- ``read_upload warm``: a second call in the same process;
- ``floor: unzip + numpy``: the same archive's members decompressed with ``zipfile`` and each
  ``.dat``/``.tdat`` parsed with ``numpy.loadtxt(comments="%", usecols=(0, 2))`` (the numeric
  content only: no index, no Fopt check, no runs);
- ``cocopp DataSetList``: cocopp's own reader on the extracted folder (files already on disk,
  extraction not counted), when ``cocopp`` is installed.

Goal: ``read_upload`` cold < 10 s on one core (the process is pinned to one CPU where the OS
allows). Prints a table with the load average; raw figures go to
``bench/results/import_coco-<quick|full>.json``. Benchmarks report, they do not assert::

    .venv/bin/python bench/import_coco.py            # ~5 MB, 5 repeats
    .venv/bin/python bench/import_coco.py --quick    # ~1 MB, 2 repeats
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import time
import warnings
import zipfile
from pathlib import Path
from typing import Any

import _common as c
import numpy as np

GOAL_SECONDS = 10.0
DIMS = (2, 5, 10, 20)


def one_plus_one(problem: Any, rng: np.random.Generator, budget: int) -> None:
    """A (1+1)-ES with the 1/5th success rule: many improvements, so many .dat records."""
    x = rng.uniform(-4, 4, problem.dimension)
    fx, sigma = problem(x), 2.0
    for _ in range(budget - 1):
        y = x + sigma * rng.standard_normal(problem.dimension)
        fy = problem(y)
        if fy <= fx:
            x, fx, sigma = y, fy, sigma * 1.5
        else:
            sigma *= 1.5 ** (-0.25)


def generate(root: Path, megabytes: float, seed: int = 20261202) -> tuple[bytes, Path, int]:
    """Run the observer, one instance block at a time, until the zip reaches ``megabytes``."""
    import cocoex

    rng = np.random.default_rng(seed)
    instances_done = 0
    folder = root / "exdata" / "bench"
    while True:
        instance = instances_done + 1
        suite = cocoex.Suite(
            "bbob", f"instances:{instance}", f"dimensions:{','.join(map(str, DIMS))}"
        )
        with contextlib.chdir(root):
            observer = cocoex.Observer(
                "bbob", f"result_folder:bench_i{instance} algorithm_name:one-plus-one"
            )
            for problem in suite:
                problem.observe_with(observer)
                one_plus_one(problem, rng, 200 * problem.dimension)
                problem.free()
        instances_done += 1
        data = zip_tree(root / "exdata")
        if len(data) >= megabytes * 1e6 or instances_done >= 100:
            return data, folder.parent, instances_done


def zip_tree(folder: Path) -> bytes:
    """All result folders under ``folder`` as one experiment (one algorithm), deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, path.relative_to(folder).as_posix())
    return buffer.getvalue()


def floor_numpy(data: bytes) -> tuple[float, int]:
    t0 = time.perf_counter()
    rows = 0
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        for info in archive.infolist():
            if info.filename.endswith((".dat", ".tdat")):
                text = archive.read(info).decode()
                values = np.loadtxt(io.StringIO(text), comments="%", usecols=(0, 2), ndmin=2)
                rows += len(values)
    return time.perf_counter() - t0, rows


def cocopp_read(folder: Path) -> float | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import cocopp.pproc  # type: ignore[import-untyped]
    except ImportError:
        return None
    cocopp.genericsettings.verbose = False
    t0 = time.perf_counter()
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        datasets = cocopp.pproc.DataSetList(str(folder))
    elapsed = time.perf_counter() - t0
    assert len(datasets) > 0
    return elapsed


_CHILD = """
import sys, time
sys.path.insert(0, {root!r})
from app.domain.importers import UploadLimits, read_upload
data = open({path!r}, "rb").read()
limits = UploadLimits(max_rows=10_000_000)
t0 = time.perf_counter()
result = read_upload("coco", "bench.zip", data, limits=limits)
cold = time.perf_counter() - t0
t0 = time.perf_counter()
read_upload("coco", "bench.zip", data, limits=limits)
warm = time.perf_counter() - t0
points = sum(len(r.trajectory.evaluations) for r in result.runs)
print(cold, warm, len(result.runs), points)
"""


def ours(path: Path) -> tuple[float, float, int, int]:
    """Cold and warm ``read_upload`` in a fresh process pinned to one CPU where possible."""
    code = _CHILD.format(root=str(c.ROOT), path=str(path))
    command = [c.PYTHON, "-c", code]
    if hasattr(os, "sched_getaffinity"):
        cpu = sorted(os.sched_getaffinity(0))[0]
        command = ["taskset", "-c", str(cpu), *command] if _has_taskset() else command
    out = subprocess.run(command, check=True, capture_output=True, text=True, timeout=600)
    cold, warm, runs, points = out.stdout.split()
    return float(cold), float(warm), int(runs), int(points)


def _has_taskset() -> bool:
    return any(Path(p, "taskset").exists() for p in os.environ.get("PATH", "").split(os.pathsep))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="~1 MB archive, 2 repeats")
    p.add_argument("--mb", type=float, default=None, help="archive size (default 5, quick 1)")
    p.add_argument("--repeats", type=int, default=None, help="repeats (default 5 / 2 quick)")
    args = p.parse_args(argv)
    c.exit_on_sigterm()
    repeats = args.repeats or (2 if args.quick else 5)
    megabytes = args.mb or (1.0 if args.quick else 5.0)
    results: dict[str, Any] = {"mode": "quick" if args.quick else "full", "machine": c.machine()}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="absrank-import-") as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        data, folder, instances = generate(root, megabytes)
        archive = root / "bench.zip"
        archive.write_bytes(data)
        unpacked = sum(i.file_size for i in zipfile.ZipFile(archive).infolist())
        print(
            f"archive: {len(data) / 1e6:.2f} MB zip ({unpacked / 1e6:.1f} MB unpacked), "
            f"24 functions × {instances} instances × dims {DIMS}, generated in "
            f"{time.perf_counter() - started:.0f} s"
        )
        cold, warm, floor, peer = [], [], [], []
        for _ in range(repeats):
            a, b, runs, points = ours(archive)
            cold.append(a)
            warm.append(b)
            f, rows = floor_numpy(data)
            floor.append(f)
            t = cocopp_read(folder)
            if t is not None:
                peer.append(t)
    results.update(
        archive_bytes=len(data),
        unpacked_bytes=unpacked,
        runs=runs,
        trajectory_points=points,
        data_rows=rows,
        cold=cold,
        warm=warm,
        floor_numpy=floor,
        cocopp=peer,
        loadavg=os.getloadavg(),
    )
    print(f"{runs} runs, {rows} data rows read, {points} trajectory points kept")
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}\n")
    print(f"{'what':<28} {'seconds (median [min-max])':<30} {'ratio to the numpy floor':>26}")
    rows_out = [
        ("read_upload cold (1 core)", cold),
        ("read_upload warm", warm),
        ("floor: unzip + numpy", floor),
    ] + ([("cocopp DataSetList", peer)] if peer else [("cocopp DataSetList", [])])
    for name, xs in rows_out:
        if not xs:
            print(f"{name:<28} {'(cocopp not installed)':<30}")
            continue
        print(f"{name:<28} {c.spread(xs):<30} {c.median(xs) / c.median(floor):>26.2f}")
    met = c.verdict(c.median(cold) < GOAL_SECONDS)
    print(f"\ngoal read_upload cold < {GOAL_SECONDS:.0f} s: {met}")
    results["seconds"] = time.perf_counter() - t0
    return c.finish("import_coco", results, None, goals)


def goals(results: dict[str, Any]) -> dict[str, bool]:
    return {"cold_under_10s": c.median(results["cold"]) < GOAL_SECONDS}


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
