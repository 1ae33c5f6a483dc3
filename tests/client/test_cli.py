"""The ``absrank-client`` CLI (typer.testing.CliRunner) against the real app."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import httpx
import pytest
from absrank_client import Client, cli
from typer.testing import CliRunner

from tests.api.conftest import InlineDispatcher as Dispatcher
from tests.client.test_client import CSV, MATRIX, NAMES

runner = CliRunner()


@pytest.fixture
def results_csv(tmp_path: Path) -> Path:
    path = tmp_path / "results.csv"
    path.write_text(CSV)
    return path


def invoke(app: object, *args: str) -> object:
    return runner.invoke(app, [str(a) for a in args])  # type: ignore[arg-type]


def test_compare_prints_a_readable_table_and_writes_the_cd_diagram(
    cli_app: object, results_csv: Path, tmp_path: Path
) -> None:
    svg = tmp_path / "cd.svg"
    r = invoke(
        cli_app,
        "compare",
        results_csv,
        "--budget",
        "100000",
        "--values-are",
        "error",
        "--posthoc",
        "nemenyi",
        "--cd-diagram",
        svg,
    )
    assert r.exit_code == 0, r.output
    out = r.stdout
    lines = out.splitlines()
    header = next(line for line in lines if "average rank" in line)
    assert "average log10 v" in header
    # algorithms by name, best average rank first
    body = [line for line in lines if line.strip()[:1] in ("A", "B", "C") and "│" in line]
    assert [line.split()[0] for line in body[:3]] == ["C", "A", "B"]
    assert "C         │ 1.3333" in out or "1.3333" in body[0]
    assert "friedman: statistic 2, df 2, p = 0.3679, log10_p = -0.4343" in out
    assert "clique (no significant difference): C, A, B" in out
    assert "pairwise Wilcoxon tests on absolute ranks (holm): 0 of 3 pairs significant" in out
    flip = next(line for line in lines if line.strip().startswith("relative"))
    assert flip.split("│")[1:4] == [" A ", " B ", " order "]
    assert svg.read_bytes().lstrip().startswith(b"<?xml")
    assert b"<svg" in svg.read_bytes()
    assert "written to" in r.stderr


def test_compare_formats(cli_app: object, results_csv: Path) -> None:
    args = ("compare", results_csv, "--absolute", "off", "--reduction", "best")
    as_json = json.loads(invoke(cli_app, *args, "--format", "json").stdout)
    assert as_json["algorithms"] == ["A", "B", "C"]
    assert as_json["status"] == "complete"
    rows = list(csv.DictReader(io.StringIO(invoke(cli_app, *args, "--format", "csv").stdout)))
    assert [r["algorithm"] for r in rows] == ["A", "B", "C"]
    assert float(rows[2]["average_rank"]) == pytest.approx(4 / 3)
    markdown = invoke(cli_app, *args, "-f", "markdown").stdout
    assert "| algorithm | average rank |" in markdown
    assert "| C | 1.3333 |" in markdown


def test_a_422_exits_2_with_title_detail_and_field(cli_app: object, tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("algorithm,problem,run,value\nA,p1,0,1\n")  # one algorithm
    r = invoke(cli_app, "compare", path)
    assert r.exit_code == 2
    assert "422 Invalid input" in r.stderr
    assert "field:" in r.stderr
    assert "Traceback" not in r.output


def test_a_404_exits_2(cli_app: object) -> None:
    r = invoke(cli_app, "function", "classic/nosuch/d2")
    assert r.exit_code == 2
    assert "404 Not found" in r.stderr
    assert "field: function_id" in r.stderr


def test_usage_errors_and_missing_files_exit_2(cli_app: object, tmp_path: Path) -> None:
    assert invoke(cli_app, "compare").exit_code == 2
    r = invoke(cli_app, "compare", tmp_path / "nope.csv")
    assert r.exit_code == 2
    assert "no such file" in r.stderr
    r = invoke(cli_app, "test", "nosuch")
    assert r.exit_code == 2
    assert "unknown test" in r.stderr


def test_a_timeout_exits_1_after_a_progress_bar(
    cli_app: object, results_csv: Path, dispatcher: Dispatcher
) -> None:
    dispatcher.hold = True
    r = invoke(cli_app, "compare", results_csv, "--timeout", "0.2")
    assert r.exit_code == 1
    assert "comparison: tables" in r.stderr
    assert "0/8 chunks" in r.stderr
    assert "was not ready after" in r.stderr
    assert "Traceback" not in r.output


def test_connection_errors_exit_1() -> None:
    r = runner.invoke(cli.app, ["--url", "http://127.0.0.1:9", "functions"])
    assert r.exit_code == 1
    assert "cannot reach http://127.0.0.1:9" in r.stderr


def test_server_errors_exit_1(monkeypatch: pytest.MonkeyPatch) -> None:
    problem = {
        "type": "about:blank",
        "title": "Internal Server Error",
        "status": 500,
        "detail": "boom",
        "instance": "/v1/functions",
    }
    http = httpx.Client(
        transport=httpx.MockTransport(lambda request: httpx.Response(500, json=problem))
    )
    monkeypatch.setattr(
        cli, "client_factory", lambda url, key, timeout: Client("http://x.test", http=http)
    )
    r = runner.invoke(cli.app, ["functions"])
    assert r.exit_code == 1
    assert "500 Internal Server Error" in r.stderr
    assert "boom" in r.stderr


def test_rank_values_and_runs(cli_app: object, tmp_path: Path) -> None:
    r = invoke(cli_app, "rank", "classic/sphere/d2", "0.5", "--values-are", "error", "-f", "csv")
    assert r.exit_code == 0, r.output
    (row,) = csv.DictReader(io.StringIO(r.stdout))
    assert row["method"] == "analytic"
    assert float(row["value"]) == 0.5
    runs = tmp_path / "runs.csv"
    runs.write_text(
        "algorithm,problem,run,value\nDE,classic/sphere/d2,0,0.01\nDE,classic/sphere/d2,1,0.02\n"
        "RS,classic/sphere/d2,0,0.5\n"
    )
    r = invoke(
        cli_app,
        "rank",
        "classic/sphere/d2",
        "--results",
        runs,
        "--aggregate",
        "best",
        "--values-are",
        "error",
        "--budget",
        "10",
    )
    assert r.exit_code == 0, r.output
    assert "DE" in r.stdout
    assert "RS" in r.stdout
    assert "log10_v" in r.stdout
    assert invoke(cli_app, "rank", "classic/sphere/d2").exit_code == 2


def test_rank_takes_negative_values(cli_app: object) -> None:
    """f of many functions is negative: ``rank F -300`` ranks -300 (no ``--`` needed); a
    mistyped option is an invalid value, not a silent one."""
    r = invoke(cli_app, "rank", "classic/sphere/d2", "-0.5", "0.25", "-f", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert [float(row["value"]) for row in rows] == [-0.5, 0.25]
    assert invoke(cli_app, "rank", "classic/sphere/d2", "1.0", "--tabel-id", "x").exit_code == 2


def test_test_commands(cli_app: object, tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.csv"
    matrix.write_text(
        "problem,"
        + ",".join(NAMES)
        + "\n"
        + "".join(f"p{i},{','.join(map(str, row))}\n" for i, row in enumerate(MATRIX))
    )
    r = invoke(cli_app, "test", "friedman", "--matrix", matrix, "-f", "csv")
    assert r.exit_code == 0, r.output
    tests = {row["test"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
    assert set(tests) == {"friedman", "iman-davenport", "aligned-ranks", "quade"}
    r = invoke(cli_app, "test", "posthoc", "--matrix", matrix, "--method", "nemenyi")
    assert r.exit_code == 0
    assert "clique (no significant difference): CMA, DE" in r.stdout
    assert "significant pairs: PSO vs CMA" in r.stdout
    r = invoke(cli_app, "test", "bradley-terry", "--matrix", matrix, "-f", "json")
    assert json.loads(r.stdout)["test"] == "bradley-terry"
    r = invoke(cli_app, "test", "sign", "--x", "1,2,3,4,5", "--y", "2,3,4,5,7", "-f", "json")
    assert json.loads(r.stdout)["result"]["p_value"] == 0.0625
    r = invoke(cli_app, "test", "rank-sum", "--x", "1,2,3", "--y", "4,5,6")
    assert r.exit_code == 0
    assert "a12" in r.stdout
    r = invoke(cli_app, "test", "sign-cross-machine", "--n", "20", "--k", "3", "--p-gamma", "0.1")
    assert r.exit_code == 0
    assert "B is significantly better than A" in r.stdout
    assert invoke(cli_app, "test", "friedman").exit_code == 2


def test_table_tables_functions(cli_app: object) -> None:
    r = invoke(cli_app, "table", "classic/rastrigin/d2", "--log2n", "10", "-f", "json")
    assert r.exit_code == 0, r.output
    table = json.loads(r.stdout)
    assert table["status"] == "ready"
    r = invoke(cli_app, "table", table["id"], "-f", "csv")
    assert next(csv.DictReader(io.StringIO(r.stdout)))["id"] == table["id"]
    r = invoke(cli_app, "tables", "--status", "ready", "-f", "csv")
    assert table["id"] in r.stdout
    r = invoke(cli_app, "table", "classic/ellipsoid/d2", "--ladder", "--log2n", "10")
    assert r.exit_code == 0
    assert "domain" in r.stdout
    r = invoke(cli_app, "functions", "--suite", "classic", "--dim", "2", "-f", "csv")
    ids = [row["id"] for row in csv.DictReader(io.StringIO(r.stdout))]
    assert "classic/sphere/d2" in ids
    r = invoke(cli_app, "function", "classic/sphere/d2")
    assert r.exit_code == 0
    assert "sphere" in r.stdout


def test_machine_commands(cli_app: object, tmp_path: Path) -> None:
    r = invoke(cli_app, "cpus", "xeon e5440", "-f", "csv")
    assert next(csv.DictReader(io.StringIO(r.stdout)))["name"] == "Intel Xeon E5440"
    r = invoke(
        cli_app,
        "cpu-register",
        "Test CPU 1",
        "1500",
        "--source",
        "by hand",
        "--source-date",
        "2024",
    )
    assert r.exit_code == 0
    assert "Test CPU 1" in r.stdout
    r = invoke(
        cli_app,
        "equivalent-runtime",
        "15",
        "--s1",
        "1540",
        "--s2",
        "1643",
        "--p-gamma",
        "0.1",
        "-f",
        "json",
    )
    assert json.loads(r.stdout)["t2"] == pytest.approx(10.1017, abs=5e-5)
    published, results = tmp_path / "a.csv", tmp_path / "b.csv"
    published.write_text("instance,a,t1\ntai20_5_0,1278,12\ntai20_5_1,1359,12\n")
    results.write_text("instance,b\ntai20_5_0,1270\ntai20_5_1,1350\n")
    r = invoke(
        cli_app,
        "cross-machine",
        published,
        "--cpu1",
        "Intel Xeon E5440",
        "--s2",
        "1921",
        "--p-gamma",
        "0.1",
        "--results",
        results,
    )
    assert r.exit_code == 0, r.output
    assert "tai20_5_1" in r.stdout
    assert "no evidence that B is better" in r.stdout


def test_pareto_and_region_scan(cli_app: object, tmp_path: Path) -> None:
    scores = tmp_path / "scores.csv"
    scores.write_text(
        "problem,algorithm,run,indicator,value\nz,N,0,hv,0.65\nz,N,0,igd,0.02\n"
        "z,M,0,hv,0.6\nz,M,0,igd,0.05\n"
    )
    r = invoke(cli_app, "pareto", scores, "--max", "hv", "-f", "csv")
    assert r.exit_code == 0, r.output
    rows = {row["algorithm"]: row for row in csv.DictReader(io.StringIO(r.stdout))}
    assert float(rows["N"]["olympic_rank"]) == 1.0
    r = invoke(
        cli_app,
        "region-scan",
        "classic/sphere/d3",
        "DE=0.01",
        "PSO=0.8",
        "X=2",
        "--deltas",
        "0.1,1",
        "--log2n",
        "10",
    )
    assert r.exit_code == 0, r.output
    assert "chosen δ = 0.1000" in r.stdout
    assert invoke(cli_app, "region-scan", "classic/sphere/d3", "DE").exit_code == 2
    r = invoke(
        cli_app, "region-scan", "classic/sphere/d3", "DE=0.01", "PSO=0.8", "--deltas", "0.1,1",
        "--log2n", "10", "--tail", "paper", "-f", "json",
    )  # fmt: skip
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["tail"] == "paper"


def test_compare_on_a_given_table(cli_app: object, results_csv: Path) -> None:
    table = invoke(
        cli_app, "table", "classic/rastrigin/d2", "--delta", "0.5", "--log2n", "10",
        "-f", "json",
    )  # fmt: skip
    assert table.exit_code == 0, table.output
    table_id = json.loads(table.stdout)["id"]
    r = invoke(cli_app, "compare", results_csv, "--table", f"classic/rastrigin/d2={table_id}")
    assert r.exit_code == 0, r.output
    assert "relative to their own δ-box" in r.stdout
    assert "classic/rastrigin/d2 (box δ = 0.5000)" in r.stdout
    bad = invoke(cli_app, "compare", results_csv, "--table", "classic/rastrigin/d2")
    assert bad.exit_code != 0
