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
