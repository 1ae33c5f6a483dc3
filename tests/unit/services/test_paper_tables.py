"""Paper tables: exact bytes of hand cases, escaping, parse-back, content negotiation."""

from __future__ import annotations

import csv
import io

import pytest

from app.errors import InvalidInput
from app.services import paper_tables as pt
from app.services.paper_tables import Cell, PaperTable, Row

HAND = PaperTable(
    stub="problem",
    columns=("A_1", "B|x"),
    blocks=(
        (Row("p%1", (Cell(1.5, bold=True), Cell(2.0))),),
        (Row("average rank", (Cell(1.0, bold=True), Cell(2.0, mark=pt.DAGGER))),),
    ),
    legend=("†: worse & more",),
    provenance="absrank test",
)


def test_latex_exact_bytes() -> None:
    assert pt.render(HAND, "latex").decode() == (
        "% provenance: absrank test\n"
        "\\begin{tabular}{lrr}\n"
        "\\toprule\n"
        "problem & A\\_1 & B|x \\\\\n"
        "\\midrule\n"
        "p\\%1 & \\textbf{1.5} & 2 \\\\\n"
        "\\midrule\n"
        "average rank & \\textbf{1} & 2$^\\dagger$ \\\\\n"
        "\\bottomrule\n"
        "\\multicolumn{3}{l}{\\footnotesize $^\\dagger$: worse \\& more} \\\\\n"
        "\\end{tabular}\n"
    )


def test_markdown_exact_bytes() -> None:
    assert pt.render(HAND, "markdown").decode() == (
        "<!-- provenance: absrank test -->\n"
        "| problem | A_1 | B\\|x |\n"
        "| --- | ---: | ---: |\n"
        "| p%1 | **1.5** | 2 |\n"
        "| average rank | **1** | 2† |\n"
        "\n"
        "†: worse & more\n"
    )


def test_csv_exact_bytes_and_parse_back() -> None:
    raw = pt.render(HAND, "csv")
    assert raw == (
        b"problem,A_1,B|x\r\np%1,1.5,2.0\r\naverage rank,1.0,2.0\r\n"
        b"average rank \xe2\x80\xa0,0,1\r\n"
    )
    rows = list(csv.reader(io.StringIO(raw.decode(), newline="")))
    assert rows[0] == ["problem", "A_1", "B|x"]
    assert [float(x) for x in rows[1][1:]] == [1.5, 2.0]


@pytest.mark.parametrize(
    ("name", "escaped"),
    [
        ("a_b", r"a\_b"),
        ("50%", r"50\%"),
        ("R&D", r"R\&D"),
        ("#1", r"\#1"),
        ("{x}", r"\{x\}"),
        ("a~b^c", r"a\textasciitilde{}b\textasciicircum{}c"),
        ("back\\slash", r"back\textbackslash{}slash"),
        ("粒子群 αβ", "粒子群 αβ"),
        ("$x$", r"\$x\$"),
    ],
)
def test_latex_escape(name: str, escaped: str) -> None:
    assert pt.latex_escape(name) == escaped


def _balanced(text: str) -> bool:
    depth = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "%" and (i == 0 or text[i - 1] == "\n"):
            i = text.find("\n", i)
            if i < 0:
                break
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth < 0:
            return False
        i += 1
    return depth == 0


def test_latex_structure_with_hostile_names() -> None:
    names = ("a_b", "50%", "R&D", "#1", "{x}", "}{", "粒子群")
    table = PaperTable(
        "problem", names, ((Row("p_1", tuple(Cell(float(i)) for i in range(7))),),), (), "x"
    )
    text = pt.render(table, "latex").decode()
    assert _balanced(text)
    lines = text.splitlines()
    assert lines.index("\\toprule") < lines.index("\\midrule") < lines.index("\\bottomrule")
    header = lines[lines.index("\\toprule") + 1]
    # unescaped & separate the columns: one per column boundary
    assert header.replace("\\&", "").count("&") == len(names)


def test_markdown_parse_back() -> None:
    text = pt.render(HAND, "markdown").decode()
    rows = [ln for ln in text.splitlines() if ln.startswith("| ")]
    cells = [[c.strip().replace("\\|", "|") for c in _split(r)] for r in rows]
    assert cells[0] == ["problem", "A_1", "B|x"]
    assert cells[2] == ["p%1", "**1.5**", "2"]


def _split(row: str) -> list[str]:
    out, cur, i = [], "", 1
    while i < len(row) - 1:
        if row[i] == "\\" and row[i + 1] == "|":
            cur += "\\|"
            i += 2
            continue
        if row[i] == "|":
            out.append(cur)
            cur = ""
        else:
            cur += row[i]
        i += 1
    out.append(cur)
    return out


@pytest.mark.parametrize(
    ("accept", "fmt", "want"),
    [
        (None, None, "json"),
        ("*/*", None, "json"),
        ("application/json", None, "json"),
        ("text/csv", None, "csv"),
        ("text/markdown; q=0.5, application/x-latex", None, "latex"),
        ("application/x-latex;q=0, text/csv", None, "csv"),
        ("text/csv", "markdown", "markdown"),
        ("image/png", "json", "json"),
    ],
)
def test_negotiate(accept: str | None, fmt: str | None, want: str) -> None:
    assert pt.negotiate(accept, fmt) == want


def test_negotiate_refuses() -> None:
    with pytest.raises(pt.NotAcceptable) as err:
        pt.negotiate("image/png", None)
    assert err.value.status == 406
    assert "text/csv" in str(err.value.detail)
    with pytest.raises(InvalidInput) as bad:
        pt.negotiate(None, "docx")
    assert bad.value.field == "format"


def test_best_ties_highest_and_eligible() -> None:
    assert pt.best([2.0, 1.0, 1.0, None]) == (False, True, True, False)
    assert pt.best([2.0, 3.0, float("nan")], highest=True) == (False, True, False)
    assert pt.best([0.5, 1.0, 2.0], among=[False, True, True]) == (False, True, False)
    assert pt.best([0.5, 1.0], among=[False, False]) == (False, False)
    assert pt.best([None, None]) == (False, False)


def test_competition_ranks_share_ties_and_skip() -> None:
    from app.services.leaderboard_tables import competition_ranks

    keys = [(False, -2.0), (False, -1.0), (False, -1.0), (True, -5.0), None]
    assert competition_ranks(keys) == (1, 2, 2, 4, None)


def test_columns_transpose_and_counts_stay_integers() -> None:
    cols = [
        pt.Column("rank", (1, 2)),
        pt.Column("log10 v", (-3.25, -1.0), pt.best((-3.25, -1.0)), ("", pt.DAGGER)),
        pt.Column("budget", (100000, 100000)),
    ]
    table = PaperTable(
        "set", ("rank", "log10 v", "budget"), (pt.column_rows(["a", "b"], cols),), (), "x"
    )
    assert (
        pt.render(table, "csv")
        == (
            "set,rank,log10 v,budget\r\na,1,-3.25,100000\r\nb,2,-1.0,100000\r\nb †,0,1,0\r\n"
        ).encode()
    )
    assert pt.render(table, "latex").decode().splitlines()[5:7] == [
        "a & 1 & \\textbf{$-$3.25} & 100000 \\\\",
        "b & 2 & $-$1$^\\dagger$ & 100000 \\\\",
    ]


def test_json_only_answers_refuse_tables() -> None:
    assert pt.negotiate("text/*, application/json;q=0.5", None, offered=()) == "json"
    with pytest.raises(pt.NotAcceptable, match=r"offered: application/json$"):
        pt.negotiate("text/*", None, offered=())


def test_names_are_text_in_markdown_and_latex() -> None:
    from app.services.paper_tables import latex_escape, markdown_escape

    assert markdown_escape("<script>a|b</script>") == "&lt;script&gt;a\\|b&lt;/script&gt;"
    assert latex_escape("a<b>c") == r"a\textless{}b\textgreater{}c"
