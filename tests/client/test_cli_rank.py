"""``absrank-client rank`` against a table id, your own sample, and provisional answers
(``--no-wait``; ``--timeout`` running out while the ladder builds), against the real app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from absrank_client import Client
from typer.testing import CliRunner

from app.config import Settings
from tests.api.conftest import InlineDispatcher, api_settings

runner = CliRunner()
FIG9 = [1.0, 3.0, 4.0, 6.0]
FN = "classic/ellipsoid/d2"  # x* known, no atom: ladders apply
DEEP = 1e-9  # an error far below the 2^12 samples of the domain table


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return api_settings(tmp_path, nested_levels=6, nested_factor=4.0)


def invoke(app: object, *args: object) -> object:
    return runner.invoke(app, [str(a) for a in args])  # type: ignore[arg-type]


def _eq28(sample: list[float], t: float) -> float:
    """Eq. 28 as published (tail 'paper'), written here: the mean of the bounds
    #{y < t}/(N+1) and (#{y <= t} + 1)/(N+1)."""
    n = len(sample)
    below = sum(y < t for y in sample)
    at_or_below = sum(y <= t for y in sample)
    return (below / (n + 1) + (at_or_below + 1) / (n + 1)) / 2


def test_rank_against_a_user_table_and_a_sample_file(
    cli_app: object, client: Client, tmp_path: Path
) -> None:
    path = tmp_path / "y.txt"
    path.write_text("# my function\n6\n3\n\n4\n1\n")
    made = invoke(cli_app, "user-table", path, "--name", "fig9", "-f", "json")
    assert made.exit_code == 0, made.output  # type: ignore[attr-defined]
    uid = json.loads(made.stdout)["id"]  # type: ignore[attr-defined]
    assert uid.startswith("user/")
    by_table = invoke(
        cli_app, "rank", "--table-id", uid, "2.0", "5", "--tail", "paper", "-f", "json"
    )
    assert by_table.exit_code == 0, by_table.output  # type: ignore[attr-defined]
    got = [r["v"] for r in json.loads(by_table.stdout)["results"]]  # type: ignore[attr-defined]
    assert got == pytest.approx([_eq28(FIG9, 2.0), _eq28(FIG9, 5.0)], rel=1e-12)
    assert got == [r.v for r in client.ranks(table_id=uid, values=[2.0, 5.0], tail="paper").ranks]
    by_sample = invoke(
        cli_app, "rank", "--sample", path, "2.0", "5", "--tail", "paper", "-f", "json"
    )
    assert by_sample.exit_code == 0, by_sample.output  # type: ignore[attr-defined]
    again = [r["v"] for r in json.loads(by_sample.stdout)["results"]]  # type: ignore[attr-defined]
    assert again == pytest.approx(got, rel=1e-12)
    stated = invoke(cli_app, "rank", "--sample", path, "--f-opt", "0", "--f-max", "7", "2.0")
    assert stated.exit_code == 0, stated.output  # type: ignore[attr-defined]
    assert "absolute ranks on sample y.txt" in stated.stdout  # type: ignore[attr-defined]


def test_rank_input_errors_exit_2(cli_app: object, tmp_path: Path) -> None:
    path = tmp_path / "y.txt"
    path.write_text("1\nnope\n")
    r = invoke(cli_app, "rank", "--sample", path, "2.0")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "y.txt:2" in r.stderr  # type: ignore[attr-defined]
    r = invoke(cli_app, "rank", "--table-id", "user/x", "--sample", path, "2.0")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    r = invoke(cli_app, "rank", FN, "1.0", "--f-opt", "0")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "--f-opt" in r.stderr  # type: ignore[attr-defined]
    r = invoke(cli_app, "rank", "--table-id", "user/0000000000000000000", "2.0")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "404" in r.stderr  # type: ignore[attr-defined]


def test_no_wait_and_timeout_print_the_provisional_ranks(
    cli_app: object, client: Client, dispatcher: InlineDispatcher
) -> None:
    client.ranks(FN, [100.0], values_are="error", regions="domain")  # the domain table, inline
    dispatcher.hold = True  # the ladder is queued, not built
    dispatcher.chunks = []
    args = ("rank", FN, DEEP, 100.0, "--values-are", "error", "--no-progress")
    r = invoke(cli_app, *args, "--no-wait", "-f", "json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    out = json.loads(r.stdout)  # type: ignore[attr-defined]
    assert out["results"][0]["provisional"] is True
    assert "provisional" not in out["results"][1]
    assert out["awaiting"]["kind"] == "ladder"
    assert out["awaiting"]["status"] == "building"
    assert dispatcher.chunks  # the request queued the ladder
    r = invoke(cli_app, *args, "--no-wait")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert "provisional" in r.stdout  # type: ignore[attr-defined]
    assert "awaiting the nested-region ladder (building)" in r.stderr  # type: ignore[attr-defined]
    r = invoke(cli_app, *args, "--timeout", "0.2", "-f", "json")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    assert "timed out" in r.stderr  # type: ignore[attr-defined]
    assert "provisional ranks received" in r.stderr  # type: ignore[attr-defined]
    assert json.loads(r.stdout)["results"][0]["provisional"] is True  # type: ignore[attr-defined]
