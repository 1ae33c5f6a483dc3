"""Answer size of a 200-algorithm comparison (issue 15: < 2 MB, lossless)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from fastapi.testclient import TestClient

from tests.support import pair_rows

#: 30 problems ranked by their exact form (the sphere), so no table is built.
PROBLEMS = [f"bbob/f1/i{i}/d{d}" for d in (2, 3) for i in range(1, 16)]


def test_a_200_algorithm_answer_is_under_2_mb(client: TestClient, settings: Any) -> None:
    settings.max_algorithms = 200  # the production defaults (the tests' settings are lower)
    settings.max_matrix_cells = max(settings.max_matrix_cells, 6000)
    rng = np.random.default_rng(15)
    k = 200
    lines = ["algorithm,problem,run,value"]
    for p in PROBLEMS:
        values = rng.lognormal(mean=0.0, sigma=2.0, size=k)
        lines += [f"a{a:03d},{p},0,{v!r}" for a, v in enumerate(values.tolist())]
    body = {"csv": "\n".join(lines) + "\n", "values_are": "error", "reduction": "best"}
    assert len(json.dumps(body)) < 256 * 1024  # the tests' max_request_bytes
    r = client.post("/v1/comparisons", json=body)
    assert r.status_code == 201, r.text[:500]
    out = r.json()
    assert out["absolute"]["status"] == "complete"
    assert len(r.content) < 2_000_000, len(r.content)
    rows = pair_rows(out["absolute"]["pairwise"], out["algorithms"])
    assert len(rows) == k * (k - 1) // 2
    post = pair_rows(out["relative"]["posthoc"]["pairs"], out["algorithms"])
    assert (post[-1]["a"], post[-1]["b"]) == ("a198", "a199")
    assert json.loads(json.dumps(rows[0]["wilcoxon"]))["p_value"] is not None
