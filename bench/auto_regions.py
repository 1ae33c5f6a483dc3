"""``regions="auto"`` on real optimizers' results: how many are served by a linear tail.

Results: scipy's Nelder–Mead, L-BFGS-B, Powell and random-restart L-BFGS-B (uniform starts in
``[-5, 5]^d``, seed 1) on COCO's own BBOB functions (``cocoex``, instance 1) at d = 2, 5, 10,
one run each at budgets 100·d, 1000·d and 10000·d evaluations (an evaluation counter stops a
run at its budget; the run's value is the best ``f`` it evaluated). Nelder–Mead and Powell start
at COCO's ``initial_solution`` (the origin), random-restart draws its starts with
``numpy.random.default_rng(1)``: every figure is deterministic.

Each value is ranked through the service's own ``POST /v1/absolute-ranks`` (in-process app on a
fresh SQLite database; tables built in the request by ``workers.inline.InlineDispatcher``), with
``budget`` = its run's budget, twice:

* **before**: ``regions="domain"`` — the default domain table (what ``auto`` served while no
  ladder existed: the same values, now marked provisional);
* **after**: ``regions="auto"`` — which queues the function's nested-region ladder when a value
  lies below the domain table's lowest sample ``y_1`` (built at once by the inline dispatcher),
  and ranks from it.

A value is "served by the linear tail" when its ``method`` is ``tail-linear`` or
``nested-tail-linear``. The goal is 0 after, on these functions (all have a known ``x*``).

Ladders are the expensive part (each level a table of N points), so the bench takes a subset of
functions (``FUNCTIONS``: separable, ill-conditioned, multi-modal and Gallagher forms) and by
default N = 2^14 samples per table (``--log2n``; the service's default is 2^16). Usage::

    .venv/bin/python bench/auto_regions.py              # 7 functions x 3 dims (a few minutes)
    .venv/bin/python bench/auto_regions.py --dims 2 5 --functions 1 2

Benchmarks report, they do not assert.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import Any

import _common as c
import numpy as np

FUNCTIONS = (1, 2, 8, 10, 12, 16, 21)
DIMS = (2, 5, 10)
BUDGET_FACTORS = (100, 1000, 10_000)
LINEAR = ("tail-linear", "nested-tail-linear")


class _Spent(Exception):
    """The run's budget is used up."""


class _Counted:
    """``f`` with an evaluation budget; remembers the best value evaluated."""

    def __init__(self, f: Callable[[np.ndarray], float], budget: int) -> None:
        self.f, self.budget, self.used, self.best = f, budget, 0, math.inf

    def __call__(self, x: np.ndarray) -> float:
        if self.used >= self.budget:
            raise _Spent
        self.used += 1
        y = float(self.f(np.asarray(x, dtype=np.float64)))
        self.best = min(self.best, y)
        return y


def _nelder_mead(f: _Counted, x0: np.ndarray, rng: np.random.Generator) -> None:
    from scipy.optimize import minimize

    opts = {"maxfev": f.budget, "maxiter": f.budget, "xatol": 0.0, "fatol": 0.0}
    minimize(f, x0, method="Nelder-Mead", options=opts)


def _powell(f: _Counted, x0: np.ndarray, rng: np.random.Generator) -> None:
    from scipy.optimize import minimize

    bounds = [(-5.0, 5.0)] * x0.size
    opts = {"maxfev": f.budget, "xtol": 0.0, "ftol": 0.0}
    minimize(f, x0, method="Powell", bounds=bounds, options=opts)


def _lbfgsb(f: _Counted, x0: np.ndarray, rng: np.random.Generator) -> None:
    from scipy.optimize import minimize

    bounds = [(-5.0, 5.0)] * x0.size
    minimize(f, x0, method="L-BFGS-B", bounds=bounds, options={"maxfun": f.budget})


def _restarts(f: _Counted, x0: np.ndarray, rng: np.random.Generator) -> None:
    while f.used < f.budget:  # L-BFGS-B from uniform starts until the budget is spent
        _lbfgsb(f, rng.uniform(-5.0, 5.0, x0.size), rng)


OPTIMIZERS: dict[str, Callable[[_Counted, np.ndarray, np.random.Generator], None]] = {
    "nelder-mead": _nelder_mead,
    "l-bfgs-b": _lbfgsb,
    "powell": _powell,
    "restarts": _restarts,
}


@dataclass(frozen=True)
class Result:
    """One run's final value and its two ranks."""

    function_id: str
    dim: int
    optimizer: str
    budget: int
    f: float
    error: float
    below_y1: bool = False
    before_method: str = ""
    before_log10_v: float | None = None
    after_method: str = ""
    after_log10_v: float | None = None


def _runs(fids: tuple[int, ...], dims: tuple[int, ...]) -> list[Result]:
    import cocoex

    from app.domain.functions import get_function

    out = []
    for dim in dims:
        for fid in fids:
            suite = cocoex.Suite(
                "bbob", "instances: 1", f"function_indices: {fid} dimensions: {dim}"
            )
            problem = suite.get_problem(0)  # (iterating a Suite frees its problems)
            f_opt = get_function(f"bbob/f{fid}/i1/d{dim}").f_opt  # the service's (COCO's) f*
            assert f_opt is not None
            for name, optimize in OPTIMIZERS.items():
                for factor in BUDGET_FACTORS:
                    budget = factor * dim
                    f = _Counted(problem, budget)
                    with contextlib.suppress(_Spent):
                        optimize(f, np.asarray(problem.initial_solution), np.random.default_rng(1))
                    out.append(
                        Result(f"bbob/f{fid}/i1/d{dim}", dim, name, budget, f.best, f.best - f_opt)
                    )
            problem.free()
            suite.free()
    return out


@contextlib.contextmanager
def _client(log2n: int) -> Iterator[Any]:
    from alembic import command
    from alembic.config import Config
    from fastapi.testclient import TestClient

    from app.config import Settings
    from app.main import create_app
    from workers.inline import InlineDispatcher

    with tempfile.TemporaryDirectory(prefix="absrank-auto-") as tmp:
        settings = Settings(
            environment="test",
            database_url=f"sqlite:///{tmp}/absrank.db",
            queue_url="memory://",
            default_tables=False,
            seed_archive=False,
            table_default_log2n=log2n,
        )
        config = Config(str(c.ROOT / "alembic.ini"))
        config.set_main_option("script_location", str(c.ROOT / "migrations"))
        config.set_main_option("sqlalchemy.url", settings.database_url)
        config.attributes["configure_logger"] = False
        command.upgrade(config, "head")
        dispatcher = InlineDispatcher(settings)  # tables and ladders built in the request
        app = create_app(settings, dispatcher=dispatcher)
        dispatcher.app = app
        with TestClient(app) as client:
            yield client


def _rank(client: Any, group: list[Result], regions: str) -> dict[str, Any]:
    body = {
        "function_id": group[0].function_id,
        "values": [r.f for r in group],
        "budget": group[0].budget,
        "regions": regions,
    }
    r = client.post("/v1/absolute-ranks", json=body)
    r.raise_for_status()
    return dict(r.json())


def _y1(client: Any, source: dict[str, Any]) -> float:
    """``y_1`` of the domain table a rank came from (``-inf`` for an exact v1: no tail)."""
    from app.services import tables

    if source.get("kind") != "table":
        return -math.inf
    _, data = tables.load_table_data(
        client.app.state.sessionmaker, source["table_id"], cache=client.app.state.table_caches
    )
    return float(data.values[0])


def rank_all(results: list[Result], log2n: int) -> tuple[list[Result], dict[str, float]]:
    """Both ranks of every result; the seconds spent before (domain) and after (auto)."""
    groups: dict[tuple[str, int], list[int]] = {}
    for i, r in enumerate(results):
        groups.setdefault((r.function_id, r.budget), []).append(i)
    out = list(results)
    clock = {}
    with _client(log2n) as client:
        start = time.perf_counter()
        for idx in groups.values():
            body = _rank(client, [results[i] for i in idx], "domain")
            y1 = _y1(client, body["source"])
            for i, item in zip(idx, body["results"], strict=True):
                out[i] = Result(
                    **asdict(out[i])
                    | {
                        "below_y1": results[i].f < y1,
                        "before_method": item["method"],
                        "before_log10_v": item["log10_v"],
                    }
                )
        clock["before_s"] = time.perf_counter() - start
        start = time.perf_counter()
        for idx in groups.values():
            items = _rank(client, [out[i] for i in idx], "auto")["results"]
            for i, item in zip(idx, items, strict=True):
                assert not item.get("provisional"), item  # the inline dispatcher built it
                out[i] = Result(
                    **asdict(out[i])
                    | {"after_method": item["method"], "after_log10_v": item["log10_v"]}
                )
        clock["after_s"] = time.perf_counter() - start
    return out, clock


def _decades(a: float | None, b: float | None) -> float:
    if a is None or b is None:
        return math.inf if (a is None) != (b is None) else 0.0
    return abs(a - b)


def table(results: list[Result]) -> str:
    """Per function and dimension: values, below y_1, linear-tail counts, max change."""
    lines = [
        "| function | values | below y_1 | linear tail before | linear tail after | "
        "max change (decades) |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    keys = sorted({(r.dim, int(r.function_id.split("/")[1][1:])) for r in results})
    totals = [0, 0, 0, 0]
    for dim, fid in keys:
        rows = [r for r in results if r.dim == dim and r.function_id == f"bbob/f{fid}/i1/d{dim}"]
        counts = [
            len(rows),
            sum(r.below_y1 for r in rows),
            sum(r.before_method in LINEAR for r in rows),
            sum(r.after_method in LINEAR for r in rows),
        ]
        totals = [t + n for t, n in zip(totals, counts, strict=True)]
        change = max(_decades(r.before_log10_v, r.after_log10_v) for r in rows)
        lines.append(
            f"| bbob/f{fid}/i1/d{dim} | {counts[0]} | {counts[1]} | {counts[2]} | {counts[3]} | "
            f"{change:.2f} |"
        )
    lines.append(f"| all | {totals[0]} | {totals[1]} | {totals[2]} | {totals[3]} | |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--functions", type=int, nargs="+", default=list(FUNCTIONS))
    parser.add_argument("--dims", type=int, nargs="+", default=list(DIMS))
    parser.add_argument("--log2n", type=int, default=14, help="samples per table: 2^log2n")
    args = parser.parse_args()
    start = time.perf_counter()
    runs = _runs(tuple(args.functions), tuple(args.dims))
    optimize_s = time.perf_counter() - start
    ranked, clock = rank_all(runs, args.log2n)
    print(table(ranked))
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=c.ROOT
    ).stdout.strip()
    print(
        f"\nN = 2^{args.log2n}; optimizers {optimize_s:.1f} s, ranks before {clock['before_s']:.1f}"
        f" s, after (ladders built) {clock['after_s']:.1f} s; load {os.getloadavg()}; "
        f"commit {commit}"
    )
    c.RESULTS.mkdir(parents=True, exist_ok=True)
    (c.RESULTS / "auto_regions.json").write_text(
        json.dumps({"results": [asdict(r) for r in ranked], "clock": clock}, indent=1)
    )


if __name__ == "__main__":
    main()
