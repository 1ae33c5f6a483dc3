"""The CD diagram over absolute ranks (``?ranks=absolute``): mean log10 v on a decade axis,
the cliques of the comparison's adjusted Wilcoxon tests on v, and the low-power warning when
N is too small for any pair to be significant."""

from __future__ import annotations

import math

import numpy as np
import pytest
from fastapi.testclient import TestClient
from scipy import stats
from statsmodels.stats.multitest import multipletests

from app.domain import ranktests
from app.services.comparison_pairs import stored_absolute_family

DIMS = (2, 3, 4, 5, 6, 7, 8)


def _rows(values: dict[str, dict[str, float]]) -> list[dict[str, object]]:
    return [
        {"algorithm": a, "problem": p, "run": 0, "value": v}
        for p, row in values.items()
        for a, v in row.items()
    ]


def _create(client: TestClient, values: dict[str, dict[str, float]]) -> dict[str, object]:
    r = client.post("/v1/comparisons", json={"results": _rows(values), "values_are": "error"})
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["absolute"]["status"] == "complete", out["absolute"]
    return out


def _svg_texts(svg: bytes) -> str:
    return svg.decode()


@pytest.mark.parametrize(
    ("n", "m", "adjustment"),
    [(n, m, a) for n in range(1, 12) for m in (1, 3, 10, 45) for a in ("holm", "hommel")],
)
def test_the_floor_is_scipy_exact_wilcoxon_adjusted_by_statsmodels(
    n: int, m: int, adjustment: str
) -> None:
    # the smallest exact two-sided p over N differences: all of one sign
    floor = stats.wilcoxon(np.arange(1.0, n + 1), method="exact").pvalue
    assert floor == pytest.approx(min(1.0, 2.0 ** (1 - n)), rel=1e-12)
    best = multipletests(np.full(m, floor), method=adjustment)[1].min()
    w = ranktests.wilcoxon_floor_warning(n, m, alpha=0.05, adjustment=adjustment)
    assert (w is not None) == (best >= 0.05)
    if w is not None:
        assert w.floor_adjusted == pytest.approx(best, rel=1e-12)
        later = multipletests(np.full(m, 2.0 ** (1 - w.n_needed)), method=adjustment)[1]
        assert later.min() < 0.05
        before = multipletests(np.full(m, 2.0 ** (2 - w.n_needed)), method=adjustment)[1]
        assert before.min() >= 0.05
        assert w.kind == "low-power"
        assert f"N = {n} problems" in w.message


def test_absolute_cd_places_mean_log10_v_and_warns_at_small_n(client: TestClient) -> None:
    values = {
        "classic/sphere/d2": {"A": 1e-6, "B": 1e-3, "C": 0.5},
        "classic/sphere/d3": {"A": 1e-5, "B": 1e-2, "C": 0.4},
    }
    out = _create(client, values)
    r = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg?ranks=absolute")
    assert r.status_code == 200, r.text
    assert r.headers["absrank-warnings"] == "low-power"
    text = _svg_texts(r.content)
    assert "mean log10 v" in text
    assert "too few problems" in text
    for name, mean in zip(out["algorithms"], out["absolute"]["mean_log10_v"], strict=True):
        assert f"{name} ({mean:.2f})" in text
    # deterministic, and the relative diagram is unchanged by the option's existence
    again = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg?ranks=absolute")
    assert again.content == r.content
    rel = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg")
    assert (
        rel.content
        == client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg?ranks=relative").content
    )
    assert "absrank-warnings" not in rel.headers
    assert "mean log10 v" not in rel.text
    for fmt, magic in (("pdf", b"%PDF"), ("png", b"\x89PNG")):
        got = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.{fmt}?ranks=absolute")
        assert got.status_code == 200
        assert got.content.startswith(magic)


def test_absolute_cliques_follow_the_stored_wilcoxon_family(client: TestClient) -> None:
    # 7 problems: Holm over 3 pairs can reach alpha (floor 2^-6 * 3 < 0.05); A always best,
    # B and C interleaved, so A differs from both and B, C form a clique
    values = {
        f"classic/sphere/d{d}": {"A": 1e-8, "B": 1e-2 * (1 + (d % 2)), "C": 1e-2 * (2 - (d % 2))}
        for d in DIMS
    }
    out = _create(client, values)
    absolute = out["absolute"]
    k = len(out["algorithms"])
    family = stored_absolute_family(absolute["pairwise"], k)
    sig = np.zeros((k, k), dtype=bool)
    sig[family.i, family.j] = sig[family.j, family.i] = family.fields["significant"]
    a, b, c = (out["algorithms"].index(x) for x in "ABC")
    assert sig[a, b]
    assert sig[a, c]
    assert not sig[b, c]
    mean = [-math.inf if x is None else x for x in absolute["mean_log10_v"]]
    assert ranktests.rank_cliques(sig, mean) == (tuple(sorted((b, c), key=lambda x: mean[x])),)
    r = client.get(f"/v1/comparisons/{out['id']}/cd-diagram.svg?ranks=absolute")
    assert r.status_code == 200
    assert "absrank-warnings" not in r.headers
    assert "too few problems" not in r.text


def test_absolute_cd_refused_without_complete_absolute_ranks(client: TestClient) -> None:
    values = {f"p{i}": {"A": 1.0 + i, "B": 2.0 + i} for i in range(3)}
    r = client.post("/v1/comparisons", json={"results": _rows(values)})
    assert r.status_code == 201
    got = client.get(f"/v1/comparisons/{r.json()['id']}/cd-diagram.svg?ranks=absolute")
    assert got.status_code == 409
    assert got.headers["content-type"].startswith("application/problem+json")
    assert got.json()["field"] == "ranks"
    bad = client.get(f"/v1/comparisons/{r.json()['id']}/cd-diagram.svg?ranks=sideways")
    assert bad.status_code == 422
    assert "ranks" in bad.text
