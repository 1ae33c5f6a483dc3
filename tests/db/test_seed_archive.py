"""``absrank seed-archive``: the published CEC 2005 table and the BBOB demo, stored once."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.models.result_sets import ResultSet
from app.services import archive_seed, result_sets
from app.services.table_cache import AppCaches
from workers.inline import InlineDispatcher

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "examples"))

import bbob_demo  # noqa: E402
import generate_bbob_seed  # noqa: E402

pytestmark = pytest.mark.db


def _caches(settings: Settings) -> dict[str, Any]:
    """Fresh table and ladder caches for a service called directly (no app)."""
    caches = AppCaches.from_settings(settings)
    return {"cache": caches.tables, "ladder_cache": caches.ladders}


@pytest.fixture
def clean(engine: Engine) -> Iterator[None]:
    yield
    with engine.begin() as conn:
        conn.execute(delete(ResultSet))


def held(settings: Settings) -> InlineDispatcher:
    dispatcher = InlineDispatcher(settings)
    dispatcher.hold = True  # queue, build nothing
    return dispatcher


SETTINGS = Settings(environment="test", table_default_log2n=12, queue_url="memory://")


def test_seeding_stores_14_sets_once(sm: sessionmaker[Session], clean: None) -> None:
    first = archive_seed.seed_archive(sm, SETTINGS, held(SETTINGS), **_caches(SETTINGS))
    assert (len(first.created), len(first.existing)) == (14, 0)
    assert first.queued_tables == 3 + 24  # cec2005 f15-f17 and bbob f1-f24, d = 10
    again = archive_seed.seed_archive(sm, SETTINGS, held(SETTINGS), **_caches(SETTINGS))
    assert (again.created, sorted(again.existing)) == ((), sorted(first.created))
    assert (again.queued_tables, again.queued_ladders) == (0, 0)
    listed = result_sets.list_result_sets(
        sm, suite=None, function_id=None, algorithm=None, limit=100, offset=0
    )
    assert listed.total == 14
    cec = result_sets.list_result_sets(
        sm, suite="cec2005", function_id=None, algorithm=None, limit=100, offset=0
    )
    assert sorted(i.name for i in cec.items) == sorted(
        ["BLX-GL50", "BLX-MA", "CoEVO", "DE", "DMS-L-PSO", "EDA", "G-CMA-ES", "K-PCX",
         "L-CMA-ES", "L-SaDE", "SPC-PNX"]
    )  # fmt: skip
    assert all(
        (i.values_are, i.value_aggregate, i.value_runs, i.n_runs) == ("error", "mean", 25, 3)
        for i in cec.items
    )


def test_seeded_values_are_the_published_ones(sm: sessionmaker[Session], clean: None) -> None:
    archive_seed.seed_archive(sm, SETTINGS, held(SETTINGS), **_caches(SETTINGS))
    (dms,) = result_sets.list_result_sets(
        sm, suite=None, function_id=None, algorithm="DMS-L-PSO", limit=5, offset=0
    ).items
    read = result_sets.get_result_set(sm, dms.id, include_runs=True)
    assert {r.function_id: r.value for r in read.runs or []} == {
        "cec2005/f15/d10": 4.854,
        "cec2005/f16/d10": 94.76,
        "cec2005/f17/d10": 110.1,
    }  # tests/data/cec2005_d10_mean_errors_f15_f17.csv, row DMS-L-PSO
    assert {r.budget for r in read.runs or []} == {100_000}
    (de,) = result_sets.list_result_sets(
        sm, suite="bbob", function_id=None, algorithm="DE", limit=5, offset=0
    ).items
    assert (de.n_functions, de.n_runs, de.has_trajectories) == (24, 120, True)
    runs = {(r.function_id, r.run): r for r in result_sets.get_result_set(
        sm, de.id, include_runs=True
    ).runs or []}  # fmt: skip
    # run 0 is the demo's own run (seed 1): the same number examples/bbob_demo.py prints
    assert runs[("bbob/f3/i1/d10", 0)].value == bbob_demo.best_value(3, 10, 1000, "DE", 1)


def test_the_package_copy_of_the_cec_table_is_the_tests_copy() -> None:
    shipped = archive_seed.data_file(archive_seed.CEC_FILE)
    assert shipped == (ROOT / "tests" / "data" / archive_seed.CEC_FILE).read_bytes()


@pytest.mark.parametrize(("fid", "algorithm", "run"), [(1, "DE", 0), (15, "RS", 2), (21, "DA", 4)])
def test_the_bbob_files_are_what_the_demo_code_computes(fid: int, algorithm: str, run: int) -> None:
    """Re-run cells with scripts/generate_bbob_seed.py and compare with the committed file."""
    text = archive_seed.data_file(f"bbob_demo_{algorithm}.csv").decode()
    rows = [
        r
        for r in csv.DictReader(io.StringIO("".join(
            line + "\n" for line in text.splitlines() if not line.startswith("#")
        )))
        if r["function_id"] == f"bbob/f{fid}/i1/d10" and int(r["run"]) == run
    ]  # fmt: skip
    points, used = generate_bbob_seed.run_cell(fid, algorithm, run)
    assert [(int(r["evaluations"]), float(r["value"])) for r in rows] == points
    assert {int(r["budget"]) for r in rows} == {used}


def test_the_cli_has_the_command_and_serve_seeds() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "--help"], capture_output=True, text=True, cwd=ROOT
    )
    assert "seed-archive" in out.stdout
    assert Settings(environment="test").seed_archive is True
