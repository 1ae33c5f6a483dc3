"""``absrank-client test --convention/--cd-convention`` and the non-standard CD named in the
posthoc line of ``test posthoc`` and ``compare``; references: scipy and the CD formula."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from tests.client.test_client import CSV, MATRIX, NAMES

runner = CliRunner()
X = [1.0, 1.01, 3.0, 4.0, 2.5, 7.0]
Y = [1.01, 0.5, 0.25, 2.5, 0.1]


def invoke(app: object, *args: object) -> object:
    return runner.invoke(app, [str(a) for a in args])  # type: ignore[arg-type]


def _csv(values: list[float]) -> str:
    return ",".join(repr(v) for v in values)


def _jing_liu_cd(k: int, n: int, alpha: float = 0.05) -> float:
    """Jing & Liu's Table I: z at 1 - alpha/(2k) times sqrt(k(k+1)/(6N))."""
    return float(stats.norm.ppf(1 - alpha / (2 * k))) * math.sqrt(k * (k + 1) / (6 * n))


def _cd_line(text: str) -> tuple[float, str]:
    match = re.search(r"critical difference ([0-9.]+)(.*)", text)
    assert match, text
    return float(match.group(1)), match.group(2)


@pytest.fixture
def matrix(tmp_path: Path) -> Path:
    path = tmp_path / "m.csv"
    rows = [f"P{i + 1}," + ",".join(str(v) for v in row) for i, row in enumerate(MATRIX)]
    path.write_text("problem," + ",".join(NAMES) + "\n" + "\n".join(rows) + "\n")
    return path


def test_rank_sum_and_ks_conventions_are_scipys(cli_app: object) -> None:
    r = invoke(cli_app, "test", "rank-sum", "--x", _csv(X), "--y", _csv(Y), "--convention",
               "scipy-ranksums", "-f", "json")  # fmt: skip
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    got = json.loads(r.stdout)["result"]["rank_sum"]["p_value"]  # type: ignore[attr-defined]
    assert got == pytest.approx(stats.ranksums(X, Y).pvalue, rel=1e-12)
    r = invoke(cli_app, "test", "rank-sum", "--x", _csv(X), "--y", _csv(Y), "-f", "json")
    standard = json.loads(r.stdout)["result"]["rank_sum"]["p_value"]  # type: ignore[attr-defined]
    assert standard != pytest.approx(got, rel=1e-6)  # the option reached the server
    r = invoke(cli_app, "test", "ks", "--x", _csv(X), "--y", _csv(Y), "--convention",
               "scipy-exact", "-f", "json")  # fmt: skip
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    got = json.loads(r.stdout)["result"]["ks"]["p_value"]  # type: ignore[attr-defined]
    assert got == pytest.approx(stats.ks_2samp(X, Y, method="exact").pvalue, rel=1e-12)
    r = invoke(cli_app, "test", "ks", "--x", _csv(X), "--y", _csv(Y), "-f", "json")
    standard = json.loads(r.stdout)["result"]["ks"]["p_value"]  # type: ignore[attr-defined]
    assert standard != pytest.approx(got, rel=1e-6)  # ties: the conditional law differs


def test_conventions_are_refused_where_they_do_not_apply(cli_app: object, matrix: Path) -> None:
    r = invoke(cli_app, "test", "wilcoxon", "--x", "1,2,3", "--y", "2,3,5", "--convention", "x")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "--convention" in r.stderr  # type: ignore[attr-defined]
    r = invoke(cli_app, "test", "friedman", "--matrix", matrix, "--cd-convention", "jing-liu")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    r = invoke(cli_app, "test", "ks", "--x", "1,2", "--y", "3,4", "--convention", "nope")
    assert r.exit_code == 2  # type: ignore[attr-defined]
    assert "convention" in r.stderr  # type: ignore[attr-defined]


def test_posthoc_cd_convention_is_applied_and_named(cli_app: object, matrix: Path) -> None:
    args = ("test", "posthoc", "--matrix", matrix, "--method", "nemenyi")
    standard = invoke(cli_app, *args)
    assert standard.exit_code == 0, standard.output  # type: ignore[attr-defined]
    _, named = _cd_line(standard.stdout)  # type: ignore[attr-defined]
    assert "Jing" not in named
    r = invoke(cli_app, *args, "--cd-convention", "jing-liu")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    cd, named = _cd_line(r.stdout)  # type: ignore[attr-defined]
    assert cd == pytest.approx(_jing_liu_cd(len(NAMES), len(MATRIX)), abs=1e-4)
    assert "Jing & Liu's CD" in named


def test_compare_names_the_jing_liu_cd(cli_app: object, tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(CSV)
    rows = [line.split(",") for line in CSV.splitlines()[1:]]
    k, n = len({r[0] for r in rows}), len({r[1] for r in rows})
    args = ("compare", path, "--posthoc", "nemenyi", "--absolute", "off")
    r = invoke(cli_app, *args, "--cd-convention", "jing-liu")
    assert r.exit_code == 0, r.output  # type: ignore[attr-defined]
    cd, named = _cd_line(r.stdout)  # type: ignore[attr-defined]
    assert cd == pytest.approx(_jing_liu_cd(k, n), abs=1e-4)
    assert "Jing & Liu's CD" in named
    r = invoke(cli_app, *args)
    assert "Jing" not in _cd_line(r.stdout)[1]  # type: ignore[attr-defined]


def test_a_csv_that_is_not_utf8_is_named_with_its_byte(tmp_path: Path) -> None:
    from absrank_client.inputs import read_text, results_payload

    path = tmp_path / "latin1.csv"
    path.write_bytes("algorithm,problem,run,value\nAé,p1,0,1\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1\.csv: not UTF-8 \(byte 29\)"):
        read_text(path)
    with pytest.raises(ValueError, match="not UTF-8"):
        results_payload(str(path))
