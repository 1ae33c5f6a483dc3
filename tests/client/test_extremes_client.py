"""The client parses the typed warnings of issue 13 item 6 (low power, reference-front filter,
hypervolume underflow). References: scipy's studentized range for the Nemenyi CD, and the exact
log10 of a product of powers of ten."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from absrank_client import Client, HvUnderflow, LowPower, ReferenceFrontFilter
from scipy import stats
from typer.testing import CliRunner


def test_posthoc_low_power_is_typed(client: Client) -> None:
    matrix = [[float(j + 0.1 * i) for j in range(11)] for i in range(3)]
    result = client.posthoc(matrix, "nemenyi")
    low = result.low_power
    assert isinstance(low, LowPower)
    q = float(stats.studentized_range.isf(0.05, 11, math.inf))
    cd = q / math.sqrt(2) * math.sqrt(11 * 12 / 18)
    assert low.critical_difference == pytest.approx(cd, rel=1e-9)
    assert (low.n_problems, low.n_algorithms, low.n_needed, low.threshold) == (3, 11, 10, 5.0)
    assert [w.message for w in result.warnings] == [low.message]
    many = client.posthoc([[float((i * j) % 7) for j in range(4)] for i in range(30)], "holm")
    assert many.low_power is None
    assert many.warnings == ()


def test_indicators_filter_and_underflow_are_typed(client: Client) -> None:
    result = client.indicators(
        [[-1e-200, -3e-200]],
        reference_front=[[-1e-200, -1e-200], [-1e-200, -1e-200], [0.0, 0.0]],
        reference_point=[0.0, 0.0],
        indicators=["hv", "igd"],
    )
    assert result.reference_front_filter == ReferenceFrontFilter(3, 1, 1, 1)
    assert result.values["igd"] == pytest.approx(2e-200)
    assert isinstance(result.hv_underflow, HvUnderflow)
    assert result.log10_hv == pytest.approx(math.log10(3.0) - 400.0, abs=1e-12)
    assert result.hv_underflow.log10_hv == result.log10_hv
    assert result.hv_underflow.points_counted == 1


def test_cli_posthoc_prints_the_low_power_warning(cli_app: object, tmp_path: Path) -> None:
    matrix = tmp_path / "matrix.csv"
    names = [f"A{j}" for j in range(11)]
    rows = [[float(j + 0.1 * i) for j in range(11)] for i in range(3)]
    matrix.write_text(
        "problem,"
        + ",".join(names)
        + "\n"
        + "".join(f"p{i},{','.join(map(str, row))}\n" for i, row in enumerate(rows))
    )
    r = CliRunner().invoke(cli_app, ["test", "posthoc", "--matrix", str(matrix)])  # type: ignore[arg-type]
    assert r.exit_code == 0, r.output
    assert "warning: too few problems" in r.stderr
    assert "N = 3 problems, k = 11 algorithms" in r.stderr
