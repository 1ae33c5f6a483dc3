"""Write the BBOB demo's results (app/data/archive/bbob_demo_*.csv) for ``absrank seed-archive``.

The three optimizers of ``examples/bbob_demo.py`` (scipy's differential evolution and dual
annealing, and random search) run on BBOB f1-f24, instance 1, d = 10, with the demo's budget of
1000 evaluations, seeds 1..RUNS (run ``r`` uses seed ``r + 1``; run 0 is the demo's own run).
Each run's trajectory holds the best value so far at the evaluation counts of a grid of ten per
decade (``round(10^(i/10))``, and the run's last evaluation), where it improved since the previous
grid point. The files are the
archive's long CSV (``function_id,run,evaluations,value,budget``; values are ``f``).

Usage::

    .venv/bin/python scripts/generate_bbob_seed.py           # rewrites the three files

``tests/test_seed_archive.py`` re-runs a few cells with :func:`run_cell` and compares them with
the committed files.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "examples"))

import bbob_demo  # noqa: E402

OUT = ROOT / "app" / "data" / "archive"
DIM = 10
BUDGET = 1000
RUNS = 5
FUNCTIONS = range(1, 25)


GRID = sorted({round(10 ** (i / 10)) for i in range(31)})
"""Evaluation counts 1, 2, 3, 4, 5, 6, 8, 10, 13, ..., 1000 (ten per decade)."""


class Recording(bbob_demo.Budgeted):
    """The demo's budgeted objective, also recording the best value after each evaluation."""

    def __init__(self, problem: object, budget: int) -> None:
        super().__init__(problem, budget)  # type: ignore[arg-type]
        self.history: list[float] = []

    def __call__(self, x: np.ndarray) -> float:
        y = super().__call__(x)
        self.history.append(self.best)
        return y


def run_cell(fid: int, algorithm: str, run: int) -> tuple[list[tuple[int, float]], int]:
    """One run of ``algorithm`` on BBOB ``fid`` (instance 1, d = DIM): its points and budget.

    The points are ``(e, best of the first e evaluations)`` for ``e`` in :data:`GRID` (and
    the last evaluation), where the best improved since the previous such ``e``.
    """
    problem = bbob_demo.cocoex.BareProblem("bbob", fid, DIM, 1)
    f = Recording(problem, BUDGET)
    try:
        bbob_demo.ALGORITHMS[algorithm](f, [(-5.0, 5.0)] * DIM, run + 1)
    except bbob_demo.BudgetExhausted:
        pass
    used = f.evaluations
    points: list[tuple[int, float]] = []
    for e in sorted({g for g in GRID if g <= used} | {used}):
        best = f.history[e - 1]
        if not points or best < points[-1][1]:
            points.append((e, best))
    return points, used


def header() -> list[str]:
    """The comment lines naming what produced the file."""
    versions = ", ".join(
        f"{name} {metadata.version(name)}" for name in ("scipy", "numpy", "coco-experiment")
    )
    return [
        f"examples/bbob_demo.py optimizers on BBOB f1-f24, instance 1, d = {DIM}, budget {BUDGET}, "
        f"seeds 1..{RUNS} (run r uses seed r + 1); values are f",
        f"written by scripts/generate_bbob_seed.py with {versions}",
    ]


def write(algorithm: str) -> Path:
    """Run every cell of ``algorithm`` and write its file."""
    lines = [f"# {c}" for c in header()]
    lines.append("function_id,run,evaluations,value,budget")
    for fid in FUNCTIONS:
        for run in range(RUNS):
            points, used = run_cell(fid, algorithm, run)
            lines += [f"bbob/f{fid}/i1/d{DIM},{run},{e},{b!r},{used}" for e, b in points]
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"bbob_demo_{algorithm}.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


if __name__ == "__main__":
    for name in bbob_demo.ALGORITHMS:
        print(write(name))
