"""Client methods and the ``runtime-distributions`` CLI command of anytime analysis, against
the real app (hand examples with exact breakpoints)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from absrank_client import Client, ProblemError, Profiles, RuntimeDistributions
from absrank_client._client_anytime import trajectory_run
from typer.testing import CliRunner

SPHERE = "classic/sphere/d2"
RUNS = {
    "DE": [
        trajectory_run(SPHERE, [1, 10, 100], [5.0, 0.5, 1e-3]),
        trajectory_run(SPHERE, [1, 20, 100], [4.0, 0.05, 0.01]),
    ]
}


def test_runtime_distributions_are_typed(client: Client) -> None:
    got = client.runtime_distributions(RUNS, targets=[1.0, 0.1, 1e-9], budgets=[10, 100])
    assert isinstance(got, RuntimeDistributions)
    (f,) = got.functions
    assert f.ert[:2] == (15.0, 60.0)
    assert math.isinf(f.ert[2])  # never reached: inf, not None
    assert f.successes == (2, 2, 0)
    assert f.ecdf.x == (10.0, 20.0, 100.0)
    assert f.ecdf.counts == (0, 1, 3, 4)
    assert f.ecdf(20.0) == 3 / 6
    assert f.ecdf(19.999) == 1 / 6
    assert f.fixed_budget.at(0.0) == (0.5, 1e-3)
    assert f.anytime_rank is not None
    assert f.anytime_rank.methods == ("analytic",)
    assert [r["ert"] for r in got.rows()][:2] == [15.0, 60.0]
    assert got.pooled == ()  # one function: nothing to pool


def test_figures_from_an_answer(client: Client, tmp_path: Path) -> None:
    got = client.runtime_distributions(RUNS, targets=[1.0, 0.1], budgets=[10, 100])
    out = tmp_path / "rank.pdf"
    data = client.runtime_plot(got, figure="anytime-rank", format="pdf", width=4, path=out)
    assert data.startswith(b"%PDF")
    assert out.read_bytes() == data
    png = client.profile_plot("performance", ["A", "B"], [[1, 2], [3, None]], format="png", dpi=60)
    assert png.startswith(b"\x89PNG")


def test_profiles_are_exact_steps(client: Client) -> None:
    got = client.profiles(
        "accuracy", ["A", "B"], [[1e-3, 0.0], [1.0, 0.1]], initial_errors=[1.0, 10.0]
    )
    assert isinstance(got, Profiles)
    a, b = got.curves
    assert a.step.x == (1.0, 3.0)
    assert a.step.continuity == "left"
    assert a.step(3.0) == 0.5  # γ >= 3 holds for one problem of two
    assert a.step(3.0001) == 0.0
    assert b.values == (16.0, 2.0)
    assert got.rows()[0] == {"solver": "A", "x": 1.0, "fraction": 1.0}


def test_refusals_are_problem_errors_naming_the_field(client: Client) -> None:
    bad = {"DE": [trajectory_run(SPHERE, [10, 5], [1.0, 0.5])]}
    with pytest.raises(ProblemError) as caught:
        client.runtime_distributions(bad)
    assert caught.value.field == "algorithms.0.runs.0.evaluations"


def test_cli_reads_a_long_csv_and_draws(cli_app: object, tmp_path: Path) -> None:
    csv = tmp_path / "runs.csv"
    lines = ["algorithm,function_id,run,evaluations,value"]
    for run, r in enumerate(RUNS["DE"]):
        lines += [
            f"DE,{SPHERE},{run},{e},{v!r}"
            for e, v in zip(r["evaluations"], r["values"], strict=True)
        ]
    csv.write_text("\n".join(lines) + "\n")
    svg = tmp_path / "ecdf.svg"
    result = CliRunner().invoke(
        cli_app,  # type: ignore[arg-type]
        [
            "runtime-distributions",
            str(csv),
            "--target",
            "1",
            "--target",
            "0.1",
            "--budget",
            "10",
            "--budget",
            "100",
            "--plot",
            str(svg),
            "--format",
            "json",
        ],
    )
    assert result.exit_code == 0, result.output
    (item,) = json.loads(result.stdout)["functions"]  # --format json: the answer as sent
    assert item["ert"] == [15.0, 60.0]
    assert svg.read_bytes().startswith(b"<?xml")
    bad = CliRunner().invoke(cli_app, ["runtime-distributions"])  # type: ignore[arg-type]
    assert bad.exit_code == 2
