"""Client and CLI of the leaderboards, against the real app with sets stored in its archive."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from absrank_client import Client, Leaderboard, SuiteLeaderboard
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from tests.archive_support import store_set

F = [f"bbob/f1/i{i}/d2" for i in range(1, 4)]
runner = CliRunner()


@pytest.fixture
def archived(http: TestClient) -> dict[str, str]:
    sm = http.app.state.sessionmaker  # type: ignore[attr-defined]
    return {
        "A": store_set(sm, "A", {f: [1e-3, 2e-3, 3e-3] for f in F}, values_are="error"),
        "B": store_set(sm, "B", {f: [1e-2, 2e-2, 3e-2] for f in F}, values_are="error"),
        "C": store_set(sm, "C", {F[0]: [0.5]}, values_are="error", version="2"),
    }


def test_leaderboard_is_typed_and_ordered(client: Client, archived: dict[str, str]) -> None:
    board = client.leaderboard(F[0])
    assert isinstance(board, Leaderboard)
    assert [e.label for e in board.entries] == ["A", "B", "C 2"]
    assert board.final
    a = board.entries[0]
    assert a.set_id == archived["A"]
    assert a.value == 2e-3
    assert a.log10_v == board.raw["entries"][0]["absolute"]["log10_v"]
    assert a.relative_rank == 1.0
    assert a.curve is None  # exact v1 (sphere)
    assert [(p.a, p.b) for p in board.pairs] == [("A", "B"), ("A", "C 2"), ("B", "C 2")]
    assert board.pairs[0].log10_p_value is not None
    assert [r["label"] for r in board.rows()] == ["A", "B", "C 2"]
    best = client.leaderboard(F[0], aggregate="best")
    assert best.entries[0].value == 1e-3


def test_suite_leaderboard(client: Client, archived: dict[str, str]) -> None:
    suite = client.suite_leaderboard("bbob", 2, instances="1-3", functions=["f1"])
    assert isinstance(suite, SuiteLeaderboard)
    assert suite.functions == tuple(F)
    covered = {e.label: (e.functions_covered, e.full_coverage) for e in suite.entries}
    assert covered == {"A": (3, True), "B": (3, True), "C 2": (1, False)}
    assert suite.posthoc is not None
    assert suite.posthoc.algorithms == ("A", "B")
    assert suite.friedman_p is not None


def test_compare_with_result_sets(client: Client, archived: dict[str, str]) -> None:
    rows = [
        {"algorithm": "mine", "problem": f, "run": r, "value": 1e-4 * (r + 1)}
        for f in F
        for r in range(3)
    ]
    cmp = client.compare(
        rows,
        values_are="error",
        budget=1000,
        result_sets=[archived["A"], archived["B"]],
    )
    assert cmp.algorithms == ("mine", "A", "B")


def test_cli_leaderboard(cli_app: object, archived: dict[str, str], tmp_path: Path) -> None:
    r = runner.invoke(cli_app, ["leaderboard", F[0]])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert "leaderboard of bbob/f1/i1/d2" in r.stdout
    rows = [line for line in r.stdout.splitlines() if "│" in line]
    assert [line.split("│")[0].strip() for line in rows] == ["A", "B", "C 2"]
    r = runner.invoke(
        cli_app,
        [
            "leaderboard",
            "--suite",
            "bbob",
            "--dim",
            "2",
            "--instances",
            "1-3",
            "--functions",
            "f1",
            "-f",
            "json",
        ],
    )  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["functions"] == F
    r = runner.invoke(cli_app, ["leaderboard", "--suite", "bbob"])  # type: ignore[arg-type]
    assert r.exit_code == 2
    r = runner.invoke(cli_app, ["leaderboard", "bbob/f25/i1/d2"])  # type: ignore[arg-type]
    assert r.exit_code == 2
    assert "function_id" in r.output
