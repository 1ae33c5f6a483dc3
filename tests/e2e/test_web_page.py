"""The web page in a real browser: a researcher uploads the published CEC 2005 mean errors
(F15–F17, d = 10) with the keyboard and reads the report.

Headless Debian Chromium (tests/e2e/conftest.py: the network off, nothing downloaded) drives
the real app under uvicorn, whose tables build inline (small tables, as the API tests build
them). The test checks what is rendered — the paper table with its bold best values, the CD
diagrams and the profile drawn, the NIIA section, the summary —, that every download link
answers, that the form is reachable and usable by keyboard with every control labelled, that
the text's contrast is at least WCAG AA's 4.5:1, and that no request left loopback.
Screenshots of the form, the report and a refusal are saved under the test's tmp dir.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from app.main import create_app
from tests.api.conftest import api_settings
from tests.e2e.conftest import TIMEOUT, leaves_loopback, page_requests, serve
from tests.support import migrate
from workers.inline import InlineDispatcher

ROOT = Path(__file__).resolve().parents[2]
CEC = ROOT / "tests" / "data" / "cec2005_d10_mean_errors_f15_f17.csv"
#: The wide table's algorithms, read independently of the app.
ALGORITHMS = [
    line.split(",")[0]
    for line in CEC.read_text().splitlines()
    if line and not line.startswith("#") and not line.startswith("algorithm,")
]


@pytest.fixture
def page_url(tmp_path: Path) -> Iterator[str]:
    settings = api_settings(tmp_path, max_request_bytes=8 * 1024 * 1024)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with serve(app) as url:
        yield url


def _luminance(rgb: tuple[float, ...]) -> float:
    def channel(c: float) -> float:
        c = c / 255.0
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def _rgb(css: str) -> tuple[float, ...]:
    return tuple(float(x) for x in re.findall(r"[\d.]+", css)[:3])


def contrast(fg: str, bg: str) -> float:
    """WCAG 2 contrast ratio of two CSS ``rgb(...)`` colours."""
    hi, lo = sorted((_luminance(_rgb(fg)), _luminance(_rgb(bg))), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_contrast_formula_matches_wcag_reference_values() -> None:
    assert contrast("rgb(0, 0, 0)", "rgb(255, 255, 255)") == pytest.approx(21.0)
    assert contrast("rgb(118, 118, 118)", "rgb(255, 255, 255)") == pytest.approx(4.54, abs=0.01)


def _wait(driver: object, condition: str, what: str) -> object:
    """Poll a JavaScript expression until it is truthy (or TIMEOUT)."""
    deadline = time.monotonic() + TIMEOUT * 5
    while time.monotonic() < deadline:
        value = driver.execute_script(f"return ({condition});")  # type: ignore[attr-defined]
        if value:
            return value
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")


UNLABELLED = """
return Array.from(document.querySelectorAll('input, select, textarea'))
  .filter(e => e.type !== 'hidden' && !e.hidden)
  .filter(e => !(e.labels && e.labels.length) && !e.getAttribute('aria-label'))
  .map(e => e.name || e.id);
"""
COLOURS = """
const out = [];
for (const e of document.querySelectorAll('p, label, a, td, th, legend, button, figcaption')) {
  if (!e.offsetParent) continue;
  let bg = 'rgba(0, 0, 0, 0)', n = e;
  while (n && (bg === 'rgba(0, 0, 0, 0)' || bg === 'transparent')) {
    bg = getComputedStyle(n).backgroundColor; n = n.parentElement;
  }
  const opaque = bg === 'rgba(0, 0, 0, 0)' ? 'rgb(255, 255, 255)' : bg;
  out.push([e.tagName, getComputedStyle(e).color, opaque]);
}
return out;
"""


@pytest.mark.slow
def test_upload_the_cec2005_table_and_read_the_report(
    page_url: str, browser: object, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    d = browser
    d.get(page_url + "/")  # type: ignore[attr-defined]
    assert d.find_element(By.TAG_NAME, "h1").text.startswith("Compare optimizers")  # type: ignore[attr-defined]
    assert d.execute_script(UNLABELLED) == []  # type: ignore[attr-defined]
    for tag, fg, bg in d.execute_script(COLOURS):  # type: ignore[attr-defined]
        assert contrast(fg, bg) >= 4.5, (tag, fg, bg)

    # a refusal first: a bad value comes back named, with what was typed kept (the budget has
    # no default: the browser itself asks for it first)
    d.find_element(By.ID, "field-budget").send_keys("100000")  # type: ignore[attr-defined]
    d.find_element(By.ID, "field-csv").send_keys("algorithm,f15\nA,not-a-number\nB,1\n")  # type: ignore[attr-defined]
    d.find_element(By.ID, "make-report").click()  # type: ignore[attr-defined]
    alert = _wait(d, "document.querySelector('[role=alert]')", "the refusal")
    assert "Results (CSV)" in alert.text
    assert "line 2" in alert.text
    d.save_screenshot(str(tmp_path / "refused.png"))  # type: ignore[attr-defined]
    assert "not-a-number" in d.find_element(By.ID, "field-csv").get_attribute("value")  # type: ignore[attr-defined]
    d.find_element(By.ID, "field-csv").clear()  # type: ignore[attr-defined]

    # the upload, by keyboard: the file input takes the path, the rest is typed and tabbed
    d.find_element(By.ID, "field-csv_file").send_keys(str(CEC))  # type: ignore[attr-defined]
    template = d.find_element(By.ID, "field-problem_template")  # type: ignore[attr-defined]
    template.clear()
    template.send_keys("cec2005/{column}/d10")
    d.find_element(By.ID, "field-value_runs").send_keys("25")  # type: ignore[attr-defined]
    budget = d.find_element(By.ID, "field-budget")  # type: ignore[attr-defined]
    budget.clear()
    budget.send_keys("100000")
    Select(d.find_element(By.ID, "field-values_are")).select_by_value("error")  # type: ignore[attr-defined]
    Select(d.find_element(By.ID, "field-reduction")).select_by_value("mean")  # type: ignore[attr-defined]
    d.save_screenshot(str(tmp_path / "form.png"))  # type: ignore[attr-defined]
    # Tab from the last field reaches the button; Enter submits
    alpha = d.find_element(By.ID, "field-alpha")  # type: ignore[attr-defined]
    alpha.send_keys(Keys.TAB)
    focused = d.switch_to.active_element  # type: ignore[attr-defined]
    assert focused.get_attribute("id") == "make-report"
    # the tables build inline, inside this request (a deployment's worker builds them while the
    # page asks again): give the navigation the time of three builds
    d.set_page_load_timeout(TIMEOUT * 8)  # type: ignore[attr-defined]
    focused.send_keys(Keys.ENTER)

    report = "location.pathname.startsWith('/report/') && document.querySelector('#table')"
    _wait(d, report, "the report")
    h1 = d.find_element(By.TAG_NAME, "h1").text  # type: ignore[attr-defined]
    assert h1 == "Report: 11 algorithms × 3 problems"
    table = d.find_element(By.CSS_SELECTOR, "table.paper")  # type: ignore[attr-defined]
    header = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    assert header == ["problem", *ALGORITHMS]
    labels = [th.text for th in table.find_elements(By.CSS_SELECTOR, "tbody th")]
    assert labels[:3] == ["cec2005/f15/d10", "cec2005/f16/d10", "cec2005/f17/d10"]
    assert "average rank" in labels
    assert "mean log10 v" in labels
    # the best of each problem in bold: DMS-L-PSO on F15 (4.854), G-CMA-ES on F16, K-PCX on F17
    first_rows = table.find_elements(By.CSS_SELECTOR, "tbody:first-of-type tr")
    bold = [row.find_element(By.TAG_NAME, "strong").text for row in first_rows]
    assert bold == ["4.854", "91.3", "97.3"]
    # the figures were drawn (an image that failed has no natural width)
    for figure in ("cd-relative", "cd-absolute", "profile"):
        _wait(
            d,
            f"document.getElementById('{figure}').complete && "
            f"document.getElementById('{figure}').naturalWidth > 0",
            figure,
        )
    niia = d.find_element(By.ID, "niia").text  # type: ignore[attr-defined]
    assert "Relative ranks" in niia
    assert "Absolute ranks" in niia
    summary = d.find_element(By.CSS_SELECTOR, "#summary p").text  # type: ignore[attr-defined]
    assert "Friedman" in summary
    assert d.execute_script(UNLABELLED) == []  # type: ignore[attr-defined]
    for tag, fg, bg in d.execute_script(COLOURS):  # type: ignore[attr-defined]
        assert contrast(fg, bg) >= 4.5, (tag, fg, bg)
    d.save_screenshot(str(tmp_path / "report.png"))  # type: ignore[attr-defined]
    d.execute_script("document.getElementById('cd').scrollIntoView()")  # type: ignore[attr-defined]
    d.save_screenshot(str(tmp_path / "report-figures.png"))  # type: ignore[attr-defined]

    # every download link answers with its media type
    links = [
        a.get_attribute("href")
        for a in d.find_elements(By.CSS_SELECTOR, "#downloads a")  # type: ignore[attr-defined]
    ]
    assert len(links) >= 14
    kinds = set()
    for link in links:
        r = httpx.get(link, timeout=TIMEOUT)
        assert r.status_code == 200, (link, r.text[:200])
        kinds.add(r.headers["content-type"].split(";")[0])
    assert {
        "application/json",
        "text/csv",
        "text/markdown",
        "application/x-latex",
        "text/plain",
        "image/svg+xml",
        "application/pdf",
        "image/png",
    } <= kinds
    outside = [r for r in page_requests(d) if leaves_loopback(r.url)]
    assert outside == []
    for shot in ("refused.png", "form.png", "report.png", "report-figures.png"):
        assert (tmp_path / shot).stat().st_size > 10_000
