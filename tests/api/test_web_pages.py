"""The web page's server side (app/web): the form makes the API's own comparison, refusals name
the form's field, the report's figures are the API's figures (the browser test, in
tests/e2e/test_web_page.py, checks what a person sees)."""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from app.config import Settings
from app.services import results_input

MEANS = (
    "# mean errors over 25 runs of 1,000 evaluations\n"
    "algorithm,sphere,rastrigin,rosenbrock\n"
    "DE,0.001,0.5,0.01\nPSO,0.005,0.9,0.002\nRS,0.02,1.5,0.3\nCMA,0.0004,1.1,0.05\n"
)
MEANS_FORM = {
    "problem_template": "classic/{column}/d2",
    "value_runs": "25",
    "budget": "1000",
    "values_are": "error",
    "reduction": "mean",
    "posthoc": "nemenyi",
    "alpha": "0.05",
}
SMALL = "algorithm,p1,p2,p3\nA,1.0,2.0,0.5\nB,2.0,1.0,0.9\nC,3.0,4.0,0.7\n"


def _long_rows(text: str, template: str = "{column}") -> list[dict[str, object]]:
    """The wide table as JSON rows, read independently with the csv module."""
    lines = [line for line in text.splitlines() if not line.startswith("#")]
    return [
        {
            "algorithm": rec["algorithm"],
            "problem": template.format(column=p),
            "run": 0,
            "value": float(v),
        }
        for rec in csv.DictReader(lines)
        for p, v in rec.items()
        if p != "algorithm"
    ]


def _report_id(response: object) -> str:
    location = response.headers["location"]  # type: ignore[attr-defined]
    match = re.fullmatch(r"/report/(c[0-9a-f]{23})", location)
    assert match, location
    return match.group(1)


def test_pages_are_html_with_their_policy_and_no_cdn(client: TestClient) -> None:
    for path in ("/", "/functions", "/functions?suite=cec2005&dim=10", "/leaderboards"):
        r = client.get(path)
        assert r.status_code == 200, (path, r.text[:300])
        assert r.headers["content-type"].startswith("text/html")
        assert "default-src 'none'" in r.headers["content-security-policy"]
        assert r.headers["x-content-type-options"] == "nosniff"
        assert "https://" not in r.text, path
        assert "http://" not in r.text, path
    css = client.get("/static/absrank.css")
    assert css.status_code == 200
    assert css.headers["content-type"].startswith("text/css")
    assert client.get("/").text.count("<label") >= 8
    assert "/" not in client.get("/openapi.json").json()["paths"]


def test_the_form_makes_the_apis_comparison_of_a_wide_table(client: TestClient) -> None:
    made = client.post(
        "/report",
        files={"csv_file": ("means.csv", MEANS.encode(), "text/csv")},
        data=MEANS_FORM,
        follow_redirects=False,
    )
    assert made.status_code == 303, made.text[:2000]
    cid = _report_id(made)
    body = {
        "results": _long_rows(MEANS, "classic/{column}/d2"),
        "reduction": "mean",
        "value_runs": 25,
        "budget": 1000,
        "values_are": "error",
        "posthoc": "nemenyi",
        "alpha": 0.05,
    }
    api = client.post("/v1/comparisons", json=body)
    assert api.status_code == 200, api.text[:500]  # the identical request, answered before
    assert api.json()["id"] == cid
    page = client.get(f"/report/{cid}")
    assert page.status_code == 200
    html = page.text
    assert "Report: 4 algorithms × 3 problems" in html
    assert html.count("<strong>") >= 3  # the best of each problem
    assert "mean log10 v" in html
    assert 'id="cd-absolute"' in html
    assert 'id="profile"' in html
    # every link of the page answers, and the figures are the API's own
    links = sorted(set(re.findall(r'href="(/[^"#]*)"', html)))
    assert len(links) >= 20
    for link in links:
        r = client.get(link.replace("&amp;", "&"))
        assert r.status_code == 200, (link, r.text[:300])
    table = client.get(f"/v1/comparisons/{cid}?format=latex").text
    assert r"\toprule" in table


def test_the_performance_profile_is_post_v1_profiles_of_the_cells(client: TestClient) -> None:
    made = client.post("/report", data={"csv": SMALL, "budget": "1"}, follow_redirects=False)
    assert made.status_code == 303, made.text[:2000]
    cid = _report_id(made)
    costs = [[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [0.5, 0.9, 0.7]]
    body = {"kind": "performance", "solvers": ["A", "B", "C"], "problems": ["p1", "p2", "p3"]}
    direct = client.post("/v1/profiles/plot.svg", json=body | {"costs": costs})
    assert direct.status_code == 200, direct.text
    assert client.get(f"/report/{cid}/profile.svg").content == direct.content
    png = client.get(f"/report/{cid}/profile.png?dpi=100")
    assert png.content.startswith(b"\x89PNG")
    # a report without absolute ranks or trajectories says why, instead of a figure
    html = client.get(f"/report/{cid}").text
    assert "No absolute CD diagram" in html
    assert "need runs with trajectories" in html


def test_a_zero_cell_has_no_performance_profile_and_says_why(client: TestClient) -> None:
    made = client.post(
        "/report", data={"csv": SMALL.replace("0.5", "0"), "budget": "1"}, follow_redirects=False
    )
    cid = _report_id(made)
    assert "needs positive costs" in client.get(f"/report/{cid}").text
    refused = client.get(f"/report/{cid}/profile.svg")
    assert refused.status_code == 409
    assert refused.json()["field"] == "comparison_id"


@pytest.mark.parametrize(
    ("data", "files", "label", "needle"),
    [
        ({"budget": "1"}, None, "Results (CSV)", "paste or upload"),
        ({"csv": SMALL}, None, "Evaluations per run", "required"),
        ({"csv": "algorithm,p1\nA,x\nB,1\n", "budget": "1"}, None, "Results (CSV)", "line 2"),
        (
            {"csv": SMALL, "problem_template": "cec2005/f1", "budget": "1"},
            None,
            "Problem id template",
            "{column}",
        ),
        ({"csv": SMALL, "alpha": "2", "budget": "1"}, None, "Significance level", "less than 1"),
        ({"csv": SMALL, "alpha": "nan", "budget": "1"}, None, "Significance level", "finite"),
        ({"csv": SMALL, "budget": "zero"}, None, "Evaluations per run", "integer"),
        ({"csv": SMALL, "budget": "1", "posthoc": "li"}, None, "Post-hoc family", "nemenyi"),
        ({"csv": SMALL, "budget": "1", "zzz": "1"}, None, "Results (CSV)", "unknown form field"),
        (
            {"budget": "1"},
            {"csv_file": ("x.csv", b"algorithm,p\xff\n", "text/csv")},
            "Results (CSV)",
            "UTF-8",
        ),
        (
            {"csv": SMALL},
            {"budget": ("b.csv", b"1", "text/csv")},
            "Evaluations per run",
            "not a file",
        ),
        ({"csv": "algorithm,p1,p1\nA,1,2\n", "budget": "1"}, None, "Results (CSV)", "repeated"),
        (
            {"csv": "algorithm,problem,run,value\nA,p1,0,1\n", "budget": "1"},
            None,
            "Results (CSV)",
            "2 algorithms",
        ),
        (
            {"csv": "algorithm,problem,run,value\nA,p1,0,1\nB,p1,0,2\n", "budget": "1"},
            None,
            "Results (CSV)",
            "2 problems",
        ),
    ],
)
def test_a_refused_form_comes_back_with_the_field_named(
    client: TestClient,
    data: dict[str, str],
    files: dict[str, tuple[str, bytes, str]] | None,
    label: str,
    needle: str,
) -> None:
    r = client.post("/report", data=data, files=files, follow_redirects=False)
    assert r.status_code in (409, 413, 422), r.status_code
    alert = re.search(r'<div class="problem" role="alert".*?</div>', r.text, re.S)
    assert alert, r.text[:1500]
    assert label in alert.group(0)
    assert needle in alert.group(0), alert.group(0)
    if "csv" in data and files is None:  # what was typed is kept
        assert data["csv"].split("\n")[0] in r.text


def test_unknown_reports_and_functions_are_404_pages(client: TestClient) -> None:
    for path in ("/report/c0123456789abcdef0123456", "/functions/nope/f1"):
        r = client.get(path)
        assert r.status_code == 404
        assert r.headers["content-type"].startswith("text/html")
    assert client.get("/report/c0123456789abcdef0123456/profile.svg").status_code == 404


FUNCTIONS = ("classic/sphere/d2", "classic/rastrigin/d2")


def test_archived_sets_with_trajectories_get_runtime_figures(client: TestClient) -> None:
    ids = []
    rng = np.random.default_rng(7)
    for name in ("DE", "PSO"):
        rows = []
        for fid in FUNCTIONS:
            for run in range(3):
                best = np.sort(rng.uniform(1e-4, 5.0, 4))[::-1]
                rows.append(
                    {
                        "function_id": fid,
                        "run": run,
                        "value": float(best[-1]),
                        "budget": 1000,
                        "trajectory": {"evaluations": [1, 10, 100, 1000], "best": best.tolist()},
                    }
                )
        made = client.post(
            "/v1/result-sets", json={"name": name, "values_are": "error", "results": rows}
        )
        assert made.status_code == 201, made.text
        ids.append(made.json()["id"])
    home = client.get("/").text
    assert all(f'value="{i}"' in home for i in ids)
    made = client.post(
        "/report",
        data={"result_sets": ids, "budget": "1000", "reduction": "median"},
        follow_redirects=False,
    )
    assert made.status_code == 303, made.text[:2000]
    cid = _report_id(made)
    html = client.get(f"/report/{cid}").text
    for figure in ("ecdf", "fixed-budget", "anytime-rank"):
        assert f'id="runtime-{figure}"' in html
        page = client.get(f"/report/{cid}/{figure}.svg")
        assert page.status_code == 200, page.text
        direct = client.post(
            f"/v1/runtime-distributions/plot.svg?figure={figure}",
            json={"result_sets": ids, "function_ids": sorted(FUNCTIONS)},
        )
        assert page.content == direct.content


def test_wide_tables_are_read_with_lines_named(settings: Settings) -> None:
    rows = results_input.parse_wide_csv(
        "# comment\nalgorithm,f1,f2\nA,1,NA\n\nB,2,3\n", template="s/{column}/d2", max_rows=10
    )
    assert rows == [
        ("A", "s/f1/d2", 0, 1.0),
        ("A", "s/f2/d2", 0, None),
        ("B", "s/f1/d2", 0, 2.0),
        ("B", "s/f2/d2", 0, 3.0),
    ]
    assert results_input.is_wide(io.StringIO("\ufeffalgorithm,f1\n").read())
    assert not results_input.is_wide("algorithm,problem,run,value\n")
    with pytest.raises(Exception, match="line 3: expected 3 fields"):
        results_input.parse_wide_csv(
            "algorithm,a,b\nA,1,2\nB,1\n", template="{column}", max_rows=9
        )
    with pytest.raises(Exception, match="more than 3 cells"):
        results_input.parse_wide_csv(
            "algorithm,a,b\nA,1,2\nB,1,2\n", template="{column}", max_rows=3
        )


def test_two_cocoex_archives_uploaded_on_the_page_make_a_report(
    client: TestClient, tmp_path: Path
) -> None:
    from tests.unit.importers.loggers import run_cocoex, zip_folder

    ids = []
    for i, (algorithm, nelder_mead) in enumerate((("seeded-rs", False), ("nelder-mead", True))):
        folder, _ = run_cocoex(
            tmp_path / algorithm,
            functions="1,8",
            instances="1",
            dimensions="2",
            algorithm=algorithm,
            nelder_mead=nelder_mead,
            seed=i + 1,
        )
        made = client.post(
            "/archive",
            data={"archive_format": "coco", "archive_version": "1"},
            files={"archive_file": ("exdata.zip", zip_folder(folder), "application/zip")},
            follow_redirects=False,
        )
        assert made.status_code == 303, made.text[:1500]
        match = re.fullmatch(r"/\?archived=(r[0-9a-f]{23})#sets", made.headers["location"])
        assert match, made.headers["location"]
        ids.append(match.group(1))
        home = client.get(made.headers["location"]).text
        assert f"as <code>{ids[-1]}</code>" in home
        assert f'value="{ids[-1]}" checked' in home
        stored = client.get(f"/v1/result-sets/{ids[-1]}").json()
        assert (stored["name"], stored["source_format"]) == (algorithm, "coco")
    made = client.post(
        "/report", data={"result_sets": ids, "budget": "80"}, follow_redirects=False
    )
    assert made.status_code == 303, made.text[:2000]
    cid = _report_id(made)
    answer = client.get(f"/v1/comparisons/{cid}").json()
    assert answer["problems"] == ["bbob/f1/i1/d2", "bbob/f8/i1/d2"]
    assert answer["algorithms"] == ["seeded-rs 1", "nelder-mead 1"]
    html = client.get(f"/report/{cid}").text
    assert 'id="runtime-ecdf"' in html
    assert client.get(f"/report/{cid}/ecdf.svg").status_code == 200


@pytest.mark.parametrize(
    ("fmt", "content", "label", "needle"),
    [
        ("coco", None, "Results file to archive", "choose a file"),
        ("tar", b"PK", "Its format", "coco"),
        ("coco", b"not a zip", "Results file to archive", "zip"),
    ],
)
def test_the_archive_form_names_its_fields(
    client: TestClient, fmt: str, content: bytes | None, label: str, needle: str
) -> None:
    files = None if content is None else {"archive_file": ("x.zip", content, "application/zip")}
    r = client.post("/archive", data={"archive_format": fmt}, files=files)
    assert r.status_code == 422
    alert = re.search(r'<div class="problem" role="alert".*?</div>', r.text, re.S)
    assert alert, r.text[:1500]
    assert label in alert.group(0)
    assert needle in alert.group(0)


def test_every_warning_is_on_the_report_and_the_budget_is_said(client: TestClient) -> None:
    # an error below 0 is impossible: absolute ranks say so in absolute.warnings
    csv_text = MEANS.replace("DE,0.001", "DE,-0.001")
    made = client.post(
        "/report", data={"csv": csv_text, **MEANS_FORM}, follow_redirects=False
    )
    assert made.status_code == 303, made.text[:1500]
    cid = _report_id(made)
    answer = client.get(f"/v1/comparisons/{cid}").json()
    messages = [w["message"] for w in answer["warnings"] + answer["absolute"]["warnings"]]
    assert messages
    html = client.get(f"/report/{cid}").text
    section = html[html.index('id="warnings"') :]
    for message in messages:
        assert escape(message) in section, message
    assert "budget c = 1000 evaluations per run" in html
    assert "mean of 25 runs" in html


def test_report_figures_take_the_apis_size_options(client: TestClient) -> None:
    made = client.post("/report", data={"csv": SMALL, "budget": "1"}, follow_redirects=False)
    cid = _report_id(made)
    plain = client.get(f"/report/{cid}/profile.svg").content
    wide = client.get(f"/report/{cid}/profile.svg?width=9&font_size=14")
    assert wide.status_code == 200
    assert wide.content != plain
    direct = client.post(
        "/v1/profiles/plot.svg?width=9&font_size=14",
        json={
            "kind": "performance",
            "solvers": ["A", "B", "C"],
            "problems": ["p1", "p2", "p3"],
            "costs": [[1.0, 2.0, 3.0], [2.0, 1.0, 4.0], [0.5, 0.9, 0.7]],
        },
    )
    assert wide.content == direct.content
    refusals = (("width=0.1", "width"), ("font_size=100", "font_size"), ("dpi=5000", "dpi"))
    for query, field in refusals:
        refused = client.get(f"/report/{cid}/profile.svg?{query}")
        assert refused.status_code == 422, query
        assert refused.json()["field"] == field
    assert client.get(f"/report/{cid}/profile.png?dpi=5000").status_code == 422


@pytest.mark.parametrize(
    "path",
    ["/functions?dim=abc", "/leaderboards?suite=bbob&dim=-1", "/leaderboards?functions=%3Cb%3E"],
)
def test_bad_page_queries_are_html_pages_naming_the_parameter(
    client: TestClient, path: str
) -> None:
    r = client.get(path)
    assert r.status_code == 422
    assert r.headers["content-type"].startswith("text/html")
    assert "dim:" in r.text or "functions:" in r.text
    assert client.get("/?archived=%3Cb%3Ex").status_code == 200


def test_a_report_whose_tables_build_asks_again_with_the_same_form(tmp_path: Path) -> None:
    from app.main import create_app
    from tests.api.conftest import api_settings
    from tests.support import migrate

    # the app's own queue (nothing consumes it here): the tables stay queued
    settings = api_settings(tmp_path)
    migrate(settings.database_url)
    with TestClient(create_app(settings)) as c:
        r = c.post("/report", data={"csv": MEANS, **MEANS_FORM}, follow_redirects=False)
        assert r.status_code == 202, r.text[:1500]
        html = r.text
        assert "Absolute ranks wait for tables" in html
        for problem in ("classic/rastrigin/d2", "classic/rosenbrock/d2"):  # sphere: exact
            assert problem in html
        assert '<script src="/static/absrank.js" defer></script>' in html
        assert 'data-again-after="10"' in html
        for key, value in MEANS_FORM.items():
            assert f'name="{key}" value="{escape(value)}"' in html
        assert escape(MEANS) in html  # the CSV goes back as it was sent
        cid = re.search(r'href="/report/(c[0-9a-f]{23})"', html)
        assert cid
        assert "status partial" in c.get(f"/report/{cid.group(1)}").text
        assert c.get("/static/absrank.js").status_code == 200
