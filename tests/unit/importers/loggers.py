"""Files written by the real loggers (cocoex.Observer, ioh.logger.Analyzer) into tmp_path.

Each helper runs a seeded optimizer and records what it saw: per run, every f value in
evaluation order, so tests check the importer against the optimizer itself.
"""

from __future__ import annotations

import contextlib
import io
import tarfile
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import cocoex
import ioh
import numpy as np
from scipy.optimize import minimize

from app.domain.functions import get_function
from app.domain.results import ImportedResults, RunResult


@dataclass(frozen=True)
class SeenRun:
    """What the optimizer saw in one run: the absrank id and every f value, in order."""

    function_id: str
    values: tuple[float, ...]

    @property
    def errors(self) -> np.ndarray:
        return np.asarray(self.values) - get_function(self.function_id).f_opt

    def best_after(self, evaluations: int) -> float:
        return float(np.min(self.errors[:evaluations]))


def pair_runs(result: ImportedResults, seen: list[SeenRun]) -> Iterator[tuple[RunResult, SeenRun]]:
    """Each imported run with the optimizer's run it must be: k-th seen on an id = run k."""
    got = {(r.function_id, r.run): r for r in result.runs}
    assert len(got) == len(result.runs) == len(seen)
    counts: dict[str, int] = {}
    for want in seen:
        k = counts.get(want.function_id, 0)
        counts[want.function_id] = k + 1
        run = got[(want.function_id, k)]
        assert run.budget == len(want.values)
        assert run.trajectory is not None
        assert run.trajectory.evaluations[-1] == run.budget
        yield run, want


def run_cocoex(
    root: Path,
    *,
    functions: str = "1,3,8",
    instances: str = "1-3",
    dimensions: str = "2,5",
    budget_per_dim: int = 40,
    seed: int = 1,
    algorithm: str = "seeded-rs",
    nelder_mead: bool = False,
) -> tuple[Path, list[SeenRun]]:
    """Run cocoex.Observer ('bbob' logger) with random search (or Nelder-Mead) into root."""
    suite = cocoex.Suite(
        "bbob",
        "",
        f"function_indices:{functions} instance_indices:{instances} dimensions:{dimensions}",
    )
    folder = root / "exdata"  # cocoex writes to ./exdata/<result_folder>
    root.mkdir(parents=True, exist_ok=True)
    with contextlib.chdir(root):
        observer = cocoex.Observer("bbob", f"result_folder:run algorithm_name:{algorithm}")
        seen = _observed(suite, observer, budget_per_dim, seed, nelder_mead)
    (written,) = [p for p in folder.iterdir() if p.is_dir()]
    return written, seen


def _observed(
    suite: cocoex.Suite,
    observer: cocoex.Observer,
    budget_per_dim: int,
    seed: int,
    nelder_mead: bool,
) -> list[SeenRun]:
    rng = np.random.default_rng(seed)
    seen = []
    for problem in suite:
        problem.observe_with(observer)
        values: list[float] = []

        def f(
            x: np.ndarray, problem: cocoex.Problem = problem, values: list[float] = values
        ) -> float:
            y = float(problem(x))
            values.append(y)
            return y

        budget = budget_per_dim * problem.dimension
        if nelder_mead:
            minimize(
                f,
                rng.uniform(-4, 4, problem.dimension),
                method="Nelder-Mead",
                options={"maxfev": budget, "xatol": 1e-12, "fatol": 1e-14},
            )
        else:
            for _ in range(budget):
                f(rng.uniform(-5, 5, problem.dimension))
        assert problem.evaluations == len(values)
        seen.append(
            SeenRun(
                f"bbob/f{problem.id_function}/i{problem.id_instance}/d{problem.dimension}",
                tuple(values),
            )
        )
        problem.free()
    return seen


def run_ioh(
    root: Path,
    *,
    functions: tuple[int, ...] = (1, 3, 8),
    instances: tuple[int, ...] = (1, 2),
    dims: tuple[int, ...] = (2, 5),
    runs_per_instance: int = 2,
    budget_per_dim: int = 30,
    seed: int = 2,
    algorithm: str = "seeded-rs",
) -> tuple[Path, list[SeenRun]]:
    """Run ioh.logger.Analyzer with random search on BBOB problems into root/ioh_data."""
    logger = ioh.logger.Analyzer(root=str(root), folder_name="ioh_data", algorithm_name=algorithm)
    rng = np.random.default_rng(seed)
    seen = []
    for fid in functions:
        for dim in dims:
            for instance in instances:
                problem = ioh.get_problem(fid, instance, dim, ioh.ProblemClass.BBOB)
                problem.attach_logger(logger)
                for _ in range(runs_per_instance):
                    values = [
                        float(problem(rng.uniform(-5, 5, dim))) for _ in range(budget_per_dim * dim)
                    ]
                    assert problem.state.evaluations == len(values)
                    seen.append(SeenRun(f"bbob/f{fid}/i{instance}/d{dim}", tuple(values)))
                    problem.reset()
                problem.detach_logger()
    logger.close()
    return root / "ioh_data", seen


def zip_folder(folder: Path, *, prefix: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(folder.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(folder).as_posix())
    return buffer.getvalue()


def tgz_folder(folder: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        archive.add(folder, arcname=folder.name)
    return buffer.getvalue()
