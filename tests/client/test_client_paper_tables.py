"""The client's paper tables and written summary, against the real app."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from absrank_client import Client

ROWS = [
    {"algorithm": a, "problem": p, "run": 0, "value": v}
    for p, vals in (
        ("classic/sphere/d2", (0.2, 0.3, 0.1)),
        ("classic/rastrigin/d2", (2.0, 3.0, 1.0)),
    )
    for a, v in zip("ABC", vals, strict=True)
]


def test_tables_and_summary(client: Client, tmp_path: Path) -> None:
    cmp = client.compare(ROWS, values_are="error")
    latex = client.comparison_table(cmp, format="latex", path=tmp_path / "t.tex")
    assert latex.startswith("% provenance: absrank ")
    assert (tmp_path / "t.tex").read_text() == latex
    table = list(csv.reader(io.StringIO(client.comparison_table(cmp.id, format="csv"), newline="")))
    assert table[0] == ["problem", "A", "B", "C"]
    assert [float(x) for x in table[1][1:]] == [0.2, 0.3, 0.1]
    assert "| problem | A | B | C |" in client.comparison_table(cmp, format="markdown")
    text = client.comparison_summary(cmp)
    assert text.startswith(f"Comparison {cmp.id}: 3 algorithms on 2 problems")
    assert "## Comparison" in client.comparison_summary(cmp, format="markdown")
    with pytest.raises(ValueError, match="format"):
        client.comparison_table(cmp, format="docx")  # type: ignore[arg-type]


def test_cli_writes_the_paper_table_and_summary(
    cli_app: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    rows = tmp_path / "r.csv"
    rows.write_text(
        "algorithm,problem,run,value\n"
        + "".join(f"{r['algorithm']},{r['problem']},0,{r['value']}\n" for r in ROWS)
    )
    monkeypatch.chdir(tmp_path)
    args = ["compare", str(rows), "--values-are", "error", "--no-progress"]
    result = CliRunner().invoke(
        cli_app,  # type: ignore[arg-type]
        [*args, "--paper-table", "t.tex", "--summary", "s.md"],
    )
    assert result.exit_code == 0, result.output
    assert "\\toprule" in (tmp_path / "t.tex").read_text()
    assert "## Comparison" in (tmp_path / "s.md").read_text()
    bad = CliRunner().invoke(cli_app, [*args, "--paper-table", "t.docx"])  # type: ignore[arg-type]
    assert bad.exit_code == 2


F = [f"bbob/f1/i{i}/d2" for i in range(1, 4)]
MATRIX = [[1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [1.0, 2.0, 3.0]]


@pytest.fixture
def archived(http: object) -> None:
    from tests.archive_support import store_set

    sm = http.app.state.sessionmaker  # type: ignore[attr-defined]
    store_set(sm, "A_1 & B%", {f: [1e-3, 2e-3, 3e-3] for f in F}, values_are="error")
    store_set(sm, "B", {f: [1e-2, 2e-2, 3e-2] for f in F}, values_are="error")


def test_leaderboard_and_test_tables(client: Client, archived: None, tmp_path: Path) -> None:
    board = client.leaderboard(F[0])
    md = client.leaderboard_table(F[0], format="markdown")
    assert md.splitlines()[1] == "| result set | rank | log10 v | error | runs | budget |"
    assert md.splitlines()[3].startswith(f"| A_1 & B% | 1 | **{board.entries[0].log10_v:.4g}** |")
    latex = client.leaderboard_table(F[0], path=tmp_path / "lb.tex")
    assert "A\\_1 \\& B\\% & 1 &" in latex
    assert (tmp_path / "lb.tex").read_text() == latex
    suite = client.suite_leaderboard_table(
        "bbob", 2, instances="1-3", functions=["f1"], format="csv"
    )
    rows = list(csv.reader(io.StringIO(suite, newline="")))
    assert rows[0] == ["result set", "rank", "mean log10 v", "average rank", "functions (of 3)"]
    assert [r[0] for r in rows[1:3]] == ["A_1 & B%", "B"]
    posthoc = client.test_table("posthoc", MATRIX, ["A", "B", "C"], format="csv", method="holm")
    ref = client.posthoc(MATRIX, "holm", algorithms=["A", "B", "C"])
    table = list(csv.reader(io.StringIO(posthoc, newline="")))
    assert table[0] == ["algorithm", "average rank", "A", "B", "C"]
    assert [float(r[1]) for r in table[1:] if "†" not in r[0]] == list(ref.average_ranks)
    ks = client.test_table("ks", x=[1, 2, 3.5], y=[2, 2.5, 5], format="markdown")
    assert ks.splitlines()[1] == "| test | n_x | n_y | D | p | log10 p | A12 |"
    with pytest.raises(ValueError, match="test must be one of"):
        client.test_table("sign-cross-machine")
    with pytest.raises(ValueError, match="format"):
        client.test_table("ks", x=[1], y=[2], format="docx")  # type: ignore[arg-type]


def test_cli_writes_leaderboard_and_test_tables(
    cli_app: object, archived: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    monkeypatch.chdir(tmp_path)
    run = CliRunner().invoke
    r = run(cli_app, ["leaderboard", F[0], "--paper-table", "lb.md"])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert "| A_1 & B% | 1 |" in (tmp_path / "lb.md").read_text()
    args = ["leaderboard", "--suite", "bbob", "--dim", "2", "--instances", "1-3"]
    r = run(cli_app, [*args, "--functions", "f1", "--paper-table", "s.tex"])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert "\\toprule" in (tmp_path / "s.tex").read_text()
    (tmp_path / "m.csv").write_text(
        "problem,A,B,C\n"
        + "".join(f"p{i},{','.join(map(str, row))}\n" for i, row in enumerate(MATRIX))
    )
    r = run(cli_app, ["test", "friedman", "--matrix", "m.csv", "--paper-table", "f.csv"])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert (tmp_path / "f.csv").read_text().startswith("algorithm,Friedman,aligned ranks,Quade")
    r = run(
        cli_app,  # type: ignore[arg-type]
        ["test", "posthoc", "--matrix", "m.csv", "--method", "holm", "--paper-table", "p.md"],
    )
    assert r.exit_code == 0, r.output
    assert "holm-adjusted" in (tmp_path / "p.md").read_text()
    r = run(
        cli_app,  # type: ignore[arg-type]
        ["test", "rank-sum", "--x", "1,2,3.5", "--y", "2,2.5,5", "--paper-table", "r.tex"],
    )
    assert r.exit_code == 0, r.output
    assert "rank-sum (Mann-Whitney U) & 3 & 3 &" in (tmp_path / "r.tex").read_text()
    bad = run(cli_app, ["test", "ks", "--x", "1", "--y", "2", "--paper-table", "t.docx"])  # type: ignore[arg-type]
    assert bad.exit_code == 2
