"""The permutation test's work limit: a default count is lowered (with a warning), a count the
request sets is refused naming it, and ``method="exact"`` is not limited by it."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from app.main import create_app
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

X = [float(i) for i in range(40)]
Y = [float(i) + 10.5 for i in range(40)]


def _client(tmp_path: Path) -> TestClient:
    settings = api_settings(tmp_path, permutation_max_work=80 * 1000)  # 1000 resamples of 80
    migrate(settings.database_url)
    return TestClient(create_app(settings, dispatcher=InlineDispatcher(settings)))


def test_the_default_count_is_lowered_to_the_work_limit(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        r = client.post("/v1/tests/permutation", json={"x": X, "y": Y, "statistic": "mean"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["result"]["method"] == "monte_carlo"
    assert body["policies"]["n_resamples"] == 1000
    assert body["result"]["n_resamples"] == 1000
    assert any("lowered from the default 100000 to 1000" in w for w in body["warnings"])


def test_a_count_the_request_sets_is_refused_naming_it(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        r = client.post(
            "/v1/tests/permutation",
            json={"x": X, "y": Y, "statistic": "mean", "n_resamples": 5000},
        )
    assert r.status_code == 422
    assert r.json()["field"] == "n_resamples"
    assert "use at most 1000 permutations" in r.json()["detail"]


def test_exact_is_not_limited_by_the_monte_carlo_work(tmp_path: Path) -> None:
    with _client(tmp_path) as client:
        r = client.post(
            "/v1/tests/permutation", json={"x": X, "y": Y, "statistic": "median", "method": "exact"}
        )
    assert r.status_code == 200, r.text
    assert r.json()["result"]["method"] == "exact"
    assert r.json()["warnings"] == []
