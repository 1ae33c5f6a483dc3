"""Seed the results archive with real results (``absrank seed-archive``; idempotent).

Two sources, shipped in the package (``app/data/archive``):

- the CEC 2005 table of Garcia et al. [1]_ for F15-F17 at d = 10 (as reprinted by Jing & Liu):
  per-cell **means** of 25 runs of 11 published algorithms, errors ``f − f*``, budget
  100,000 evaluations. One set per algorithm, ``value_aggregate="mean"``, ``value_runs=25``.
- the BBOB demo's three optimizers (``examples/bbob_demo.py``: scipy's differential evolution
  and dual annealing, random search) on BBOB f1-f24, instance 1, d = 10, budget 1000, five runs
  with trajectories, written by ``scripts/generate_bbob_seed.py`` (a test re-runs some cells).

Each set goes through the archive's own checks and content hash, so seeding twice stores
nothing new; storing queues the tables and ladders their ranks need.

References
----------
.. [1] S. García, D. Molina, M. Lozano, F. Herrera, "A study on the use of non-parametric tests
   for analyzing the evolutionary algorithms' behaviour: a case study on the CEC'2005 Special
   Session on Real Parameter Optimization", J. Heuristics 15 (2009) 617-644, Table 13.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from app.config import Settings
from app.domain import csvrows
from app.errors import InvalidInput
from app.schemas.result_sets import ResultRunIn, ResultSetCreate, ResultSetMetadata
from app.services import result_sets
from app.services.result_sets import SM
from app.services.table_cache import LadderCaches, TableCaches

CEC_FILE = "cec2005_d10_mean_errors_f15_f17.csv"
CEC_FUNCTIONS = ("f15", "f16", "f17")
CEC_DIM = 10
CEC_RUNS = 25
CEC_BUDGET = 100_000
CEC_REFERENCE = "https://doi.org/10.1007/s10732-008-9080-4"
CEC_DESCRIPTION = (
    "Mean error f(x_best) − f(x*) over 25 runs, CEC 2005 special session, D = 10, budget "
    "100,000 evaluations; S. García, D. Molina, M. Lozano, F. Herrera, J. Heuristics 15 (2009), "
    "Table 13, as reprinted for F15-F17 by Y. Jing and Q. Liu (Absolute Ranking), Table IV"
)

BBOB_ALGORITHMS: dict[str, tuple[str, str | None]] = {
    "DE": (
        "scipy.optimize.differential_evolution (defaults, no polishing), as in "
        "examples/bbob_demo.py",
        "https://docs.scipy.org/doc/scipy/reference/generated/"
        "scipy.optimize.differential_evolution.html",
    ),
    "DA": (
        "scipy.optimize.dual_annealing with maxfun = budget, as in examples/bbob_demo.py",
        "https://docs.scipy.org/doc/scipy/reference/generated/scipy.optimize.dual_annealing.html",
    ),
    "RS": ("pure random search: uniform points in [-5, 5]^d, as in examples/bbob_demo.py", None),
}


def data_file(name: str) -> bytes:
    """A file of ``app/data/archive`` (works from an installed package)."""
    return (resources.files("app") / "data" / "archive" / name).read_bytes()


def cec_sets() -> list[ResultSetCreate]:
    """One set per algorithm of the CEC 2005 table: one "run" per function, the mean of 25."""

    def fail(message: str, line: int | None) -> InvalidInput:
        return InvalidInput(f"{CEC_FILE} line {line}: {message}", field=CEC_FILE)

    text = data_file(CEC_FILE).decode()
    out = []
    for _, fields in csvrows.read_rows(
        text, ("algorithm", *CEC_FUNCTIONS), max_rows=100, fail=fail, comments=True
    ):
        name, *values = (f.strip() for f in fields)
        out.append(
            ResultSetCreate(
                name=name,
                description=CEC_DESCRIPTION,
                reference=CEC_REFERENCE,
                values_are="error",
                value_aggregate="mean",
                value_runs=CEC_RUNS,
                results=[
                    ResultRunIn(
                        function_id=f"cec2005/{fid}/d{CEC_DIM}",
                        run=0,
                        value=float(v),
                        budget=CEC_BUDGET,
                    )
                    for fid, v in zip(CEC_FUNCTIONS, values, strict=True)
                ],
            )
        )
    return out


def bbob_sets() -> list[tuple[ResultSetMetadata, bytes]]:
    """The demo's three optimizers: metadata and the long CSV of each."""
    out = []
    for name, (description, reference) in BBOB_ALGORITHMS.items():
        data = data_file(f"bbob_demo_{name}.csv")
        match = re.search(r"with (scipy [^,\n]+)", data.decode())
        out.append(
            (
                ResultSetMetadata(
                    name=name,
                    version=match.group(1) if match else None,
                    description=f"{description}; BBOB f1-f24, instance 1, d = 10, budget 1000, "
                    "5 runs (seeds 1-5)",
                    reference=reference,
                    values_are="f",
                ),
                data,
            )
        )
    return out


@dataclass(frozen=True)
class SeedReport:
    """What a seeding stored."""

    created: tuple[str, ...]
    existing: tuple[str, ...]
    queued_tables: int
    queued_ladders: int


def seed_archive(
    sm: SM, settings: Settings, dispatcher: Any, *, cache: TableCaches, ladder_cache: LadderCaches
) -> SeedReport:
    """Store the seed sets (those already archived are left as they are); ``cache`` and
    ``ladder_cache`` are the caller's table and ladder caches (for the builds queued)."""
    created: list[str] = []
    existing: list[str] = []
    tables = ladders = 0
    stored = [
        result_sets.create_from_json(
            sm, settings, dispatcher, body, cache=cache, ladder_cache=ladder_cache
        )
        for body in cec_sets()
    ]
    stored += [
        result_sets.create_from_csv(
            sm, settings, dispatcher, meta, data, cache=cache, ladder_cache=ladder_cache
        )
        for meta, data in bbob_sets()
    ]
    for s in stored:
        (created if s.created else existing).append(s.read.id)
        if s.read.queued is not None:
            tables += len(s.read.queued.tables)
            ladders += len(s.read.queued.ladders)
    return SeedReport(tuple(created), tuple(existing), tables, ladders)
