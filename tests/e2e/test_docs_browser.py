"""/docs and /redoc render in a real browser with the network off.

The real app runs under uvicorn on a free loopback port (in a thread the test stops). Headless
Debian Chromium, driven by selenium through the system chromedriver (nothing is downloaded),
gets a proxy that refuses everything and a resolver that resolves nothing but loopback, so any
request that leaves loopback fails. The test asserts that the operation list *rendered*
(Swagger UI's ``.opblock`` elements, ReDoc's menu entries: one per operation of
``/openapi.json``) and, from the browser's performance log, that no request left loopback.
"""

from __future__ import annotations

import time

import httpx
import pytest

from tests.e2e.conftest import TIMEOUT, leaves_loopback, page_requests


def _operation_count(base_url: str) -> int:
    spec = httpx.get(f"{base_url}/openapi.json", timeout=TIMEOUT).json()
    return sum(len(ops) for ops in spec["paths"].values())


def _wait_for_count(driver: object, selector: str, expected: int) -> int:
    """Poll until ``selector`` matches ``expected`` elements (or TIMEOUT); the last count."""
    from selenium.webdriver.common.by import By

    deadline = time.monotonic() + TIMEOUT
    count = -1
    while time.monotonic() < deadline:
        count = len(driver.find_elements(By.CSS_SELECTOR, selector))  # type: ignore[attr-defined]
        if count == expected:
            return count
        time.sleep(0.25)
    return count


@pytest.mark.slow
@pytest.mark.parametrize(
    ("page", "selector"),
    [
        # Swagger UI: one .opblock per operation (every tag is expanded by default)
        ("/docs", "#swagger-ui .opblock"),
        # ReDoc: one menu entry per operation (its id reads tag/{tag}/operation/{operationId})
        ("/redoc", 'li[data-item-id*="/operation/"]'),
    ],
)
def test_docs_render_every_operation_offline(
    base_url: str, browser: object, page: str, selector: str
) -> None:
    expected = _operation_count(base_url)
    assert expected > 30
    browser.get(base_url + page)  # type: ignore[attr-defined]
    rendered = _wait_for_count(browser, selector, expected)
    requests = page_requests(browser)
    urls = [r.url for r in requests]
    assert rendered == expected, f"{page}: {rendered} of {expected} operations rendered"
    # ReDoc's menu footer asks for a logo on its CDN; the page's CSP makes Chromium refuse to
    # send it (blockedReason "csp"): it never leaves the machine. Anything else is a leak.
    outside = [r for r in requests if leaves_loopback(r.url) and r.blocked != "csp"]
    assert outside == [], f"{page} requested outside loopback: {outside}"
    assert any(u.endswith("/openapi.json") for u in urls), urls
    assert any("/static-offline-docs/" in u for u in urls), urls


def test_leaving_loopback_is_detected() -> None:
    assert leaves_loopback("https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css")
    assert leaves_loopback("http://fonts.googleapis.com/css?family=Montserrat")
    assert not leaves_loopback("http://127.0.0.1:8000/static-offline-docs/redoc.standalone.js")
    assert not leaves_loopback("data:image/png;base64,iVBORw0KGgo=")
