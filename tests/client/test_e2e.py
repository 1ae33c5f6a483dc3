"""The installed ``absrank-client`` console script against a real ``absrank serve`` process."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import served

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "cec2005_d10_mean_errors_f15_f17.csv"
SCRIPT = Path(sys.executable).with_name("absrank-client")


def _long_csv(path: Path) -> dict[str, list[float]]:
    """Write the wide CEC 2005 table (algorithm,f15,f16,f17) as long rows; return it."""
    lines = [line for line in DATA.read_text().splitlines() if not line.startswith("#")]
    wide = {r["algorithm"]: r for r in csv.DictReader(lines)}
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["algorithm", "problem", "run", "value"])
        for algorithm, row in wide.items():
            for f in ("f15", "f16", "f17"):
                writer.writerow([algorithm, f"cec2005/{f}/d10", 0, row[f]])
    return {a: [float(r[f]) for f in ("f15", "f16", "f17")] for a, r in wide.items()}


def _average_ranks(values: dict[str, list[float]]) -> dict[str, float]:
    """Friedman average ranks with midranks, computed here (the reference)."""
    names = list(values)
    totals = dict.fromkeys(names, 0.0)
    for j in range(3):
        column = sorted(values[a][j] for a in names)
        for a in names:
            v = values[a][j]
            first = column.index(v) + 1
            totals[a] += first + (column.count(v) - 1) / 2
    return {a: t / 3 for a, t in totals.items()}


@pytest.mark.slow
def test_the_console_script_compares_cec2005_results_on_a_real_server(tmp_path: Path) -> None:
    assert SCRIPT.exists(), f"{SCRIPT} is missing: pip install -e ./client"
    with served(tmp_path) as running:
        url = running.url
        results = tmp_path / "cec2005.csv"
        values = _long_csv(results)
        client_env = {k: v for k, v in os.environ.items() if not k.startswith("ABSRANK_")}
        client_env["ABSRANK_URL"] = url
        args = [
            str(SCRIPT),
            "compare",
            str(results),
            "--budget",
            "100000",
            "--values-are",
            "error",
            "--reduction",
            "mean",
            "--value-runs",
            "25",
            "--regions",
            "domain",
            "--posthoc",
            "nemenyi",
            "--cd-diagram",
            str(tmp_path / "cd.svg"),
        ]
        out = subprocess.run(
            args, env=client_env, cwd=tmp_path, capture_output=True, text=True, timeout=600
        )
        assert out.returncode == 0, out.stderr
        expected = _average_ranks(values)
        rows = [line for line in out.stdout.splitlines() if "│" in line]
        shown = {line.split("│")[0].strip(): float(line.split("│")[1]) for line in rows[:11]}
        assert shown.keys() == expected.keys()
        for name, rank in expected.items():
            assert shown[name] == pytest.approx(rank, abs=5e-5)
        assert next(iter(shown)) == "DMS-L-PSO"  # best average rank first: 2.333
        assert "friedman: statistic" in out.stdout
        assert "log10_p = " in out.stdout
        assert "clique (no significant difference):" in out.stdout
        assert "pairwise Wilcoxon tests on absolute ranks (holm): 0 of 55 pairs" in out.stdout
        assert "NIIA" in out.stdout
        assert "absolute ranks: pending" not in out.stdout
        assert (tmp_path / "cd.svg").read_bytes().lstrip().startswith(b"<?xml")
        # the same request again answers from the stored comparison, as JSON
        again = subprocess.run(
            [*args[:-2], "--format", "json"],
            env=client_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert again.returncode == 0, again.stderr
        body = json.loads(again.stdout)
        assert body["status"] == "complete"
        assert body["absolute"]["status"] == "complete"
        assert len(body["absolute"]["mean_log10_v"]) == 11
        bad = subprocess.run(
            [str(SCRIPT), "function", "cec2005/f99/d10"],
            env=client_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert bad.returncode == 2
        assert "404" in bad.stderr
        assert "Traceback" not in bad.stderr
        csv_out = subprocess.run(
            [str(SCRIPT), "cpus", "xeon", "-f", "csv"],
            env=client_env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert "Intel Xeon E5440" in {
            r["name"] for r in csv.DictReader(io.StringIO(csv_out.stdout))
        }
