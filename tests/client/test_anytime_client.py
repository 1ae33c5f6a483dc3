"""Client methods and the ``runtime-distributions`` CLI command of anytime analysis, against
the real app (hand examples with exact breakpoints)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

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


def _profiles(cli_app: object, path: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        cli_app,  # type: ignore[arg-type]
        ["profiles", str(path), *args, "--format", "json"],
    )
    assert result.exit_code == 0, result.output
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def test_cli_profiles_of_a_wide_csv(cli_app: object, tmp_path: Path) -> None:
    """Dolan & Moré and Moré & Wild by hand: ratios to the best per problem; costs / (n_p + 1)."""
    path = tmp_path / "costs.csv"
    path.write_text("problem,A,B,dim\np1,10,20,1\np2,30,15,1\np3,5,,4\n")
    svg = tmp_path / "perf.svg"
    perf = _profiles(cli_app, path, "--kind", "performance", "--plot", str(svg))
    a, b = perf["curves"]
    # A: ratios 1, 2, 1; B: 2, 1, failure
    assert (a["step"]["x"], a["step"]["counts"]) == ([1.0, 2.0], [0, 2, 3])
    assert (b["step"]["x"], b["step"]["counts"]) == ([1.0, 2.0], [0, 1, 2])
    assert perf["problems"] == ["p1", "p2", "p3"]
    assert svg.read_bytes().startswith(b"<?xml")
    data = _profiles(cli_app, path, "--kind", "data")
    a, b = data["curves"]
    # A: 10/2, 30/2, 5/5; B: 20/2, 15/2, failure
    assert (a["step"]["x"], a["step"]["counts"]) == ([1.0, 5.0, 15.0], [0, 1, 2, 3])
    assert (b["step"]["x"], b["step"]["counts"]) == ([7.5, 10.0], [0, 1, 2])
    table = CliRunner().invoke(cli_app, ["profiles", str(path)])  # type: ignore[arg-type]
    assert table.exit_code == 0, table.output
    assert "performance profile" in table.stdout


def test_cli_accuracy_profiles_and_refusals(cli_app: object, tmp_path: Path) -> None:
    path = tmp_path / "errors.csv"
    path.write_text("problem,A,B,initial_error\np1,1e-3,0,1\np2,1,0.1,10\n")
    got = _profiles(cli_app, path, "--kind", "accuracy", "--max-digits", "12")
    a, b = got["curves"]
    # digits gained: A log10(1/1e-3) = 3, log10(10/1) = 1; B capped at 12, log10(10/0.1) = 2
    assert (a["step"]["x"], a["step"]["continuity"]) == ([1.0, 3.0], "left")
    assert b["values"] == [12.0, 2.0]
    runner = CliRunner()
    costs = tmp_path / "costs.csv"
    costs.write_text("problem,A,B\np1,10,20\n")
    no_dims = runner.invoke(cli_app, ["profiles", str(costs), "--kind", "data"])  # type: ignore[arg-type]
    assert no_dims.exit_code == 2
    assert "dims" in no_dims.stderr  # the server's problem names the field
    bad = tmp_path / "bad.csv"
    bad.write_text("problem,A\np1,fast\n")
    unreadable = runner.invoke(cli_app, ["profiles", str(bad)])  # type: ignore[arg-type]
    assert unreadable.exit_code == 2
    assert "'fast'" in unreadable.stderr  # the cell named (line 2, column A)
    bad.write_text("name,A\np1,1\n")
    assert runner.invoke(cli_app, ["profiles", str(bad)]).exit_code == 2  # type: ignore[arg-type]
