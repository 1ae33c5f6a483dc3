"""Paper tables of the leaderboards and of ``/v1/tests/*`` over HTTP.

Leaderboards: sets stored on BBOB f1 at d = 2, whose v is exact (a ball inside the box), so
every number of the expected text is computed here (the sphere's v, the order statistic of the
median, scipy's rank-sum, Friedman and Nemenyi). Tests: the route answers the bytes the table
module renders from the JSON answer, ``format`` wins over Accept, and an Accept that lists no
offered type is a 406 naming what is offered.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scikit_posthocs as sp
from fastapi.testclient import TestClient
from scipy import stats
from sqlalchemy.orm import Session, sessionmaker
from statsmodels.stats.multitest import multipletests

from app.main import create_app
from tests.api.conftest import InlineDispatcher, api_settings
from tests.archive_support import store_set
from tests.support import migrate

F = [f"bbob/f1/i{i}/d2" for i in range(1, 6)]
SUITE = {"suite": "bbob", "dim": 2, "instances": "1-5", "functions": "f1"}
NAME = "A_1 & B%"


def g(x: float) -> str:
    return f"{x:.4g}"


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    settings = api_settings(tmp_path)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        yield c


def _sm(client: TestClient) -> sessionmaker[Session]:
    return client.app.state.sessionmaker  # type: ignore[attr-defined, no-any-return]


def _v(error: float, budget: int = 1000) -> float:
    """Exact v_c of BBOB f1 (d = 2) at ``f* + error``: a disc of radius sqrt(error) in [-5, 5]²."""
    v1 = math.pi * error / 100.0
    return -math.expm1(budget * math.log1p(-v1))


def _log10_median7(runs: list[float]) -> float:
    """log10 P(median of 7 runs <= the set's median): Binomial(7, v) >= 4."""
    return math.log10(stats.binom.sf(3, 7, _v(float(np.median(runs)))))


def _provenance(answer: dict[str, Any], what: str) -> str:
    prov = answer["provenance"]
    return f"absrank {prov['service_version']} {what} request_sha256 {prov['request_sha256']}"


RUNS = {
    NAME: [1e-3, 2e-3, 3e-3, 1.5e-3, 2.5e-3, 1.2e-3, 1.8e-3],
    "B": [1.1e-3, 2.2e-3, 3.5e-3, 1.4e-3, 2.6e-3, 1.9e-3, 2.1e-3],
    "C": [0.05, 0.055, 0.045, 0.06, 0.04, 0.0525, 0.0475],
}


def test_function_leaderboard_markdown_exact_with_marks(client: TestClient) -> None:
    for name, runs in RUNS.items():
        store_set(_sm(client), name, {F[0]: runs}, values_are="error")
    url = f"/v1/leaderboards/{F[0]}"
    answer = client.get(url).json()
    logs = {name: _log10_median7(runs) for name, runs in RUNS.items()}
    # Holm over the three exact two-sided rank-sum tests (scipy), against the best (NAME)
    raw = {b: stats.mannwhitneyu(RUNS[NAME], RUNS[b], method="exact").pvalue for b in ("B", "C")}
    raw["B-C"] = stats.mannwhitneyu(RUNS["B"], RUNS["C"], method="exact").pvalue
    holm = dict(zip(raw, multipletests(list(raw.values()), method="holm")[1], strict=True))
    mark = {b: "†" if holm[b] < 0.05 else "" for b in ("B", "C")}
    assert mark == {"B": "", "C": "†"}
    medians = {name: float(np.median(runs)) for name, runs in RUNS.items()}
    expected = (
        f"<!-- provenance: {_provenance(answer, f'leaderboard {F[0]}')} -->\n"
        "| result set | rank | log10 v | error | runs | budget |\n"
        "| --- | ---: | ---: | ---: | ---: | ---: |\n"
        f"| A_1 & B% | 1 | **{g(logs[NAME])}** | **{g(medians[NAME])}** | 7 | 1000 |\n"
        f"| B | 2 | {g(logs['B'])} | {g(medians['B'])} | 7 | 1000 |\n"
        f"| C | 3 | {g(logs['C'])}† | {g(medians['C'])} | 7 | 1000 |\n"
        "\n"
        "log10 v: absolute rank of each set's median of its runs at its budget (lower is "
        "better; -inf: v = 0); error: that aggregate as f − f*; bold: the lowest.  \n"
        "†: differs significantly from the best-ranked set (two-sided rank-sum tests on the "
        "runs, holm-adjusted, alpha = 0.05).\n"
    )
    r = client.get(url, params={"format": "markdown"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/markdown")
    assert r.headers["vary"] == "Accept"
    assert r.text == expected
    # LaTeX: the name escaped, the best bold; Accept gives the same bytes as ?format=
    latex = client.get(url, headers={"accept": "application/x-latex"})
    assert latex.content == client.get(url, params={"format": "latex"}).content
    assert f"A\\_1 \\& B\\% & 1 & \\textbf{{{g(logs[NAME]).replace('-', '$-$')}}}" in latex.text
    assert f"{g(logs['C']).replace('-', '$-$')}$^\\dagger$" in latex.text
    # CSV: the JSON's floats, full precision, and the mark row
    rows = client.get(url, headers={"accept": "text/csv"}).text.split("\r\n")
    assert rows[0] == "result set,rank,log10 v,error,runs,budget"
    entry = answer["entries"][0]
    assert rows[1] == f"{NAME},1,{entry['absolute']['log10_v']!r},{entry['error']!r},7,1000"
    assert rows[4] == "C †,0,1,0,0,0"


def test_suite_leaderboard_markdown_exact(client: TestClient) -> None:
    errors = {
        NAME: [1e-3, 2e-3, 3e-3, 4e-3, 5e-3],
        "B": [2e-3, 3e-3, 4e-3, 6e-3, 1e-3],
        "C": [1e-1] * 5,
    }
    for name, errs in errors.items():
        store_set(
            _sm(client), name, {f: [e] for f, e in zip(F, errs, strict=True)}, values_are="error"
        )
    answer = client.get("/v1/leaderboards", params=SUITE).json()
    logv = np.array([[math.log10(_v(e)) for e in errors[n]] for n in errors]).T  # functions × sets
    means = logv.mean(axis=0)
    ranks = stats.rankdata(logv, axis=1).mean(axis=0)
    fr = stats.friedmanchisquare(*logv.T)
    n, k = logv.shape
    f_id = (n - 1) * fr.statistic / (n * (k - 1) - fr.statistic)
    p_id = stats.f.sf(f_id, k - 1, (k - 1) * (n - 1))
    nemenyi = sp.posthoc_nemenyi_friedman(logv)
    marks = ["", *("†" if nemenyi.iloc[0, j] < 0.05 else "" for j in (1, 2))]
    assert marks == ["", "", "†"]
    q = stats.studentized_range.ppf(0.95, k, np.inf) / math.sqrt(2)
    cd = q * math.sqrt(k * (k + 1) / (6 * n))
    n_needed = math.ceil(q**2 * k * (k + 1) / (6 * ((k - 1) / 2) ** 2))
    rows = "".join(
        f"| {name} | {i + 1} | {'**' + g(means[i]) + '**' if i == 0 else g(means[i])} | "
        f"{'**' + g(ranks[i]) + '**' if i == 0 else g(ranks[i])}{marks[i]} | 5 |\n"
        for i, name in enumerate(errors)
    )
    expected = (
        f"<!-- provenance: {_provenance(answer, 'suite leaderboard bbob d2')} -->\n"
        "| result set | rank | mean log10 v | average rank | functions (of 5) |\n"
        "| --- | ---: | ---: | ---: | ---: |\n" + rows + "\n"
        "mean log10 v: over the functions each set covers (lower is better; -inf: v = 0 on "
        "some function); bold: the lowest among the sets covering every function; rank: full "
        "coverage first, then mean log10 v.  \n"
        f"average rank: Friedman over the 3 sets covering all 5 functions (log10 v per "
        f"function): chi2 = {g(fr.statistic)}, p = {g(fr.pvalue)}; Iman-Davenport F = "
        f"{g(f_id)}, p = {g(p_id)}; bold: the lowest.  \n"
        "†: differs significantly from the best-ranked set (nemenyi post-hoc, alpha = 0.05).  \n"
        f"Low power: CD = {g(cd)} > (k - 1)/2 = 1; N >= {n_needed} functions are needed.\n"
    )
    r = client.get("/v1/leaderboards", params=SUITE | {"format": "markdown"})
    assert r.status_code == 200, r.text
    assert r.text == expected


MATRIX = {
    "values": [[1.0, 2.0, 3.0], [1.0, 3.0, 2.0], [2.0, 1.0, 3.0], [1.0, 2.0, 3.0]],
    "algorithms": [NAME, "B", "C"],
}


def test_test_routes_answer_the_rendered_table_format_first(client: TestClient) -> None:
    url = "/v1/tests/posthoc"
    body = MATRIX | {"method": "holm"}
    answer = client.post(url, json=body).json()
    assert answer["test"] == "posthoc"  # JSON stays the default
    csv_text = client.post(url, json=body, headers={"accept": "text/csv"})
    assert csv_text.headers["content-type"].startswith("text/csv")
    assert csv_text.headers["x-absrank-provenance"] == _provenance(answer, "test posthoc")
    assert csv_text.text.split("\r\n")[0] == f"algorithm,average rank,{NAME},B,C"
    # format wins over Accept, whichever Accept
    for accept in ("text/csv", "image/png", "application/json"):
        r = client.post(f"{url}?format=latex", json=body, headers={"accept": accept})
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("application/x-latex")
        assert r.text.startswith("% provenance: absrank ")
    # q-values: the highest listed type that is offered
    r = client.post(url, json=body, headers={"accept": "text/csv;q=0.2, text/markdown;q=0.9"})
    assert r.headers["content-type"].startswith("text/markdown")
    assert "| A_1 & B% | **1.25** |" in r.text
    r = client.post(url, json=body, headers={"accept": "image/png, */*;q=0.1"})
    assert r.headers["content-type"] == "application/json"


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/v1/tests/friedman", MATRIX),
        ("/v1/tests/bradley-terry", MATRIX),
        ("/v1/tests/wilcoxon", {"x": [1, 2, 3.5], "y": [2, 2.5, 5]}),
        ("/v1/tests/sign", {"x": [1, 2, 3.5], "y": [2, 2.5, 5]}),
        ("/v1/tests/rank-sum", {"x": [1, 2, 3.5], "y": [2, 2.5, 5]}),
        ("/v1/tests/ks", {"x": [1, 2, 3.5], "y": [2, 2.5, 5]}),
        ("/v1/tests/permutation", {"x": [1, 2, 3.5], "y": [2, 2.5, 5], "method": "exact"}),
    ],
)
def test_every_test_offers_tables_and_refuses_other_types(
    client: TestClient, path: str, body: dict[str, Any]
) -> None:
    for fmt, media in (
        ("csv", "text/csv"),
        ("markdown", "text/markdown"),
        ("latex", "application/x-latex"),
    ):
        by_query = client.post(f"{path}?format={fmt}", json=body)
        by_accept = client.post(path, json=body, headers={"accept": media})
        assert by_query.status_code == by_accept.status_code == 200, by_query.text
        assert by_query.content == by_accept.content
    refused = client.post(path, json=body, headers={"accept": "image/png"})
    assert refused.status_code == 406
    assert refused.headers["content-type"] == "application/problem+json"
    assert refused.json()["field"] == "accept"
    assert refused.json()["detail"].endswith(
        "offered: application/json, text/csv, text/markdown, application/x-latex"
    )
    assert client.post(f"{path}?format=docx", json=body).status_code == 422


def test_leaderboards_refuse_other_types(client: TestClient) -> None:
    for url in (f"/v1/leaderboards/{F[0]}", "/v1/leaderboards?suite=bbob&dim=2"):
        r = client.get(url, headers={"accept": "application/pdf"})
        assert r.status_code == 406, r.text
        assert r.json()["field"] == "accept"
        assert client.get(url, params={"format": "docx"}).status_code == 422


def test_the_cross_machine_decision_is_json_only(client: TestClient) -> None:
    body = {"n": 20, "k": 3, "p_gamma": 0.1}
    url = "/v1/tests/sign-cross-machine"
    assert client.post(url, json=body).json()["test"] == "sign-cross-machine"
    assert client.post(url, json=body, headers={"accept": "text/*, */*;q=0.1"}).status_code == 200
    for accept in ("text/csv", "application/x-latex", "text/*"):
        r = client.post(url, json=body, headers={"accept": accept})
        assert r.status_code == 406, r.text
        assert r.json()["detail"].endswith("offered: application/json")
