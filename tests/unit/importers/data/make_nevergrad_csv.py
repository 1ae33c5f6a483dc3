"""Write the nevergrad benchmark CSVs in this folder with nevergrad's own Experiment class.

nevergrad (1.0.12) is not a test dependency (its benchmark package pulls torch, opencv, ...);
this script ran once in a separate environment with ``pip install nevergrad pillow``:

    python tests/unit/importers/data/make_nevergrad_csv.py tests/unit/importers/data

It writes what ``python -m nevergrad.benchmark`` writes per experiment
(``Experiment.get_description()`` rows through pandas), plus each run's recommendation so the
test can check that ``loss`` is absrank's ``f`` at that point.
"""

from __future__ import annotations

import json
import os
import sys
import types
from pathlib import Path

import nevergrad as ng
import pandas as pd

# import nevergrad.benchmark.xpbase without the package __init__ (which imports every
# experiment family and their heavy dependencies); xpbase seeds torch, which is not needed here
_pkg = types.ModuleType("nevergrad.benchmark")
_pkg.__path__ = [os.path.join(os.path.dirname(ng.__file__), "benchmark")]
sys.modules["nevergrad.benchmark"] = _pkg
from nevergrad.benchmark import xpbase  # noqa: E402
from nevergrad.functions import ArtificialFunction  # noqa: E402

xpbase.torch = types.SimpleNamespace(manual_seed=lambda seed: None)

PLAIN = [("sphere", 2), ("sphere", 2), ("rastrigin", 5), ("griewank", 3), ("rosenbrock", 4)]
TRANSFORMED = [("sphere", 2, True, 0.0), ("rastrigin", 5, False, 1.0)]


def run(name: str, dim: int, rotation: bool, translation: float, seed: int) -> tuple[dict, list]:
    function = ArtificialFunction(
        name, block_dimension=dim, rotation=rotation, translation_factor=translation
    )
    experiment = xpbase.Experiment(function, "RandomSearch", budget=30, num_workers=1, seed=seed)
    experiment.run()
    recommendation = experiment._optimizer.provide_recommendation().value
    return experiment.get_description(), [float(v) for v in recommendation]


def main(folder: Path) -> None:
    rows, points = [], []
    for seed, (name, dim) in enumerate(PLAIN):
        row, x = run(name, dim, False, 0.0, seed)
        rows.append(row)
        points.append(x)
    pd.DataFrame(rows).to_csv(folder / "nevergrad-1.0.12-randomsearch.csv", index=False)
    (folder / "nevergrad-1.0.12-randomsearch.json").write_text(json.dumps(points, indent=1))
    rows = [run(n, d, r, t, 10 + i)[0] for i, (n, d, r, t) in enumerate(TRANSFORMED)]
    pd.DataFrame(rows).to_csv(folder / "nevergrad-1.0.12-transformed.csv", index=False)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
