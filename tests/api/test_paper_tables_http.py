"""Paper tables over HTTP: the README's comparison as CSV, Markdown and LaTeX; 406."""

from __future__ import annotations

import csv
import io

import pandas as pd
from fastapi.testclient import TestClient

CSV = (
    "algorithm,problem,run,value\n"
    "A,classic/sphere/d2,0,0.2\nB,classic/sphere/d2,0,0.3\nC,classic/sphere/d2,0,0.1\n"
    "A,classic/rastrigin/d2,0,2.0\nB,classic/rastrigin/d2,0,3.0\nC,classic/rastrigin/d2,0,1.0\n"
    "A,classic/rosenbrock/d2,0,3.0\nB,classic/rosenbrock/d2,0,1.0\nC,classic/rosenbrock/d2,0,2.0\n"
)
URL = "/v1/comparisons?reduction=best&values_are=error&posthoc=nemenyi"


def _post(client: TestClient, url: str = URL, **headers: str) -> object:
    return client.post(url, content=CSV, headers={"content-type": "text/csv", **headers})


def test_csv_equals_the_json(client: TestClient) -> None:
    answer = _post(client).json()  # type: ignore[attr-defined]
    r = client.get(answer["location"], headers={"accept": "text/csv"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/csv")
    assert answer["id"] in r.headers["x-absrank-provenance"]
    rows = list(csv.reader(io.StringIO(r.text, newline="")))
    assert rows[0] == ["problem", *answer["algorithms"]]
    by_label = {row[0]: [float(x) for x in row[1:]] for row in rows[1:]}
    for p, values in zip(answer["problems"], answer["matrix"], strict=True):
        assert by_label[p] == values
        assert (
            by_label[f"log10 v {p}"] == answer["absolute"]["log10_v"][answer["problems"].index(p)]
        )
    assert by_label["average rank"] == answer["relative"]["average_ranks"]
    frame = pd.read_csv(io.StringIO(r.text), index_col=0)
    assert frame.loc["mean log10 v"].tolist() == answer["absolute"]["mean_log10_v"]


def test_formats_deterministic_and_query_equals_accept(client: TestClient) -> None:
    loc = _post(client).json()["location"]  # type: ignore[attr-defined]
    for fmt, media in (("markdown", "text/markdown"), ("latex", "application/x-latex")):
        a = client.get(f"{loc}?format={fmt}")
        b = client.get(loc, headers={"accept": media})
        assert a.status_code == b.status_code == 200
        assert a.content == b.content
    latex = client.get(f"{loc}?format=latex").text
    assert latex.startswith("% provenance: absrank ")
    assert "\\toprule" in latex
    assert "\\bottomrule" in latex
    assert "\\textbf{1.333}" in latex  # C has the best average rank
    # POST answers the table too (201 the first time, then 200), JSON unchanged by default
    r = _post(client, URL + "&format=latex")
    assert r.status_code == 200  # type: ignore[attr-defined]
    assert r.text == latex  # type: ignore[attr-defined]
    assert client.get(loc).headers["content-type"] == "application/json"


def test_not_acceptable(client: TestClient) -> None:
    loc = _post(client).json()["location"]  # type: ignore[attr-defined]
    r = client.get(loc, headers={"accept": "image/png"})
    assert r.status_code == 406
    assert r.headers["content-type"] == "application/problem+json"
    assert r.json()["detail"].endswith(
        "offered: application/json, text/csv, text/markdown, application/x-latex"
    )
    bad = client.get(f"{loc}?format=docx")
    assert bad.status_code == 422


def test_summary_quotes_the_json(client: TestClient) -> None:
    answer = _post(client).json()  # type: ignore[attr-defined]
    r = client.get(answer["location"] + "/summary")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    text = r.text
    fr = answer["relative"]["friedman"]
    assert f"p = {fr['p_value']:.4g}" in text
    assert (
        f"F = {fr['iman_davenport_statistic']:.4g}, p = {fr['iman_davenport_p_value']:.4g}" in text
    )
    assert f"N = {len(answer['problems'])} problems (k = {len(answer['algorithms'])}" in text
    assert f"CD = {answer['relative']['posthoc']['critical_difference']:.4g}" in text
    # the NIIA flip of the README's example, and what the absolute ranks say of it
    assert answer["niia"]["relative"]["flipped_pairs"] == [["A", "B"]]
    assert "conclusions on A vs B flip" in text
    assert "A after B" in text  # mean log10 v: B -2.451 < A -2.41
    for name, m in zip(answer["algorithms"], answer["absolute"]["mean_log10_v"], strict=True):
        assert f"{name} {m:.4g}" in text
    md = client.get(answer["location"] + "/summary", headers={"accept": "text/markdown"})
    assert md.headers["content-type"].startswith("text/markdown")
    assert md.text.splitlines()[1].startswith("## Comparison ")
    assert client.get(answer["location"] + "/summary?format=markdown").content == md.content


def test_summary_does_not_read_a_degenerate_iman_davenport_as_a_rejection(
    client: TestClient,
) -> None:
    # every problem ranks A before B: chi2 = N(k - 1) = 2, Friedman p = 0.157 (scipy's
    # friedmanchisquare needs k >= 3; for k = 2 the statistic is the sign test's), and
    # Iman–Davenport's F = (N - 1) chi2 / (N(k - 1) - chi2) divides by zero
    rows = "algorithm,problem,run,value\nA,p1,0,1\nB,p1,0,2\nA,p2,0,1\nB,p2,0,3\n"
    answer = client.post(
        "/v1/comparisons?reduction=best", content=rows, headers={"content-type": "text/csv"}
    ).json()
    fr = answer["relative"]["friedman"]
    assert fr["statistic"] == 2.0
    assert abs(fr["p_value"] - 0.15729920705028513) < 1e-12  # chi2(1) upper tail at 2
    text = client.get(answer["location"] + "/summary").text
    assert "p = 0.1573) does not reject equal average ranks" in text
    assert "Iman–Davenport's F is not informative here (perfect concordance" in text
    assert "reject equal average ranks." not in text.replace("does not reject", "")
    # every problem ties both algorithms: F = 0, p = 1, said as such
    ties = "algorithm,problem,run,value\nA,p1,0,1\nB,p1,0,1\nA,p2,0,2\nB,p2,0,2\n"
    tied = client.post(
        "/v1/comparisons?reduction=best", content=ties, headers={"content-type": "text/csv"}
    ).json()
    assert tied["relative"]["friedman"]["degenerate"] is True
    text = client.get(tied["location"] + "/summary").text
    assert "not informative here (" + tied["relative"]["friedman"]["reason"] in text
