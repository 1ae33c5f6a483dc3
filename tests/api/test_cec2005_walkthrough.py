"""The README's walkthrough: published CEC 2005 mean errors (F15–F17, d = 10), relative next to
absolute ranks, with the NIIA report (examples/cec2005_walkthrough.py against the real app)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import numpy as np
from fastapi.testclient import TestClient
from scipy import stats

ROOT = Path(__file__).resolve().parents[2]
CSV = ROOT / "tests" / "data" / "cec2005_d10_mean_errors_f15_f17.csv"


def _walkthrough() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "cec2005_walkthrough", ROOT / "examples" / "cec2005_walkthrough.py"
    )
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_published_cec2005_means_get_absolute_ranks_next_to_relative_ranks(
    client: TestClient,
) -> None:
    walk = _walkthrough()
    rows = walk.long_rows(CSV)
    assert len(rows) == 33
    assert {r["problem"] for r in rows} == {"cec2005/f15/d10", "cec2005/f16/d10", "cec2005/f17/d10"}
    out = walk.compare(client, rows, wait=0.0)  # tables build inline in the test app
    assert out["status"] == "complete"
    algorithms = out["algorithms"]
    assert len(algorithms) == 11
    # relative ranks: Friedman average ranks of the published table, recomputed independently
    matrix = np.array([[r["value"] for r in rows if r["problem"] == p] for p in out["problems"]])
    expected = stats.rankdata(matrix, axis=1).mean(axis=0)
    np.testing.assert_allclose(out["relative"]["average_ranks"], expected, rtol=1e-12)
    # absolute ranks: a mean over 25 runs of best-of-1e5, per cell; lower error, lower v
    absolute = out["absolute"]
    assert absolute["status"] == "complete"
    assert out["n_runs"] == [[25] * 11] * 3
    log10_v = np.array(absolute["log10_v"], dtype=float)
    assert np.all(np.isfinite(log10_v))
    assert np.all(log10_v <= 0)
    for i in range(3):
        order = np.argsort(matrix[i], kind="stable")
        assert np.all(np.diff(log10_v[i][order]) >= 0), out["problems"][i]
    assert all(m.startswith("mean") for row in absolute["method"] for m in row)
    # the NIIA report: absolute ranks never change order when other algorithms are removed
    absolute_kinds = [
        k for s in out["niia"]["absolute"]["subsets"] for f in s["flips"] for k in f["kinds"]
    ]
    assert "order" not in absolute_kinds
    text = walk.report(out)
    assert "NIIA, relative ranks" in text
    assert "NIIA, absolute ranks" in text
    assert "DMS-L-PSO" in text
