"""/docs and /redoc render in a real browser with the network off.

The real app runs under uvicorn on a free loopback port (in a thread the test stops). Headless
Debian Chromium, driven by selenium through the system chromedriver (nothing is downloaded),
gets a proxy that refuses everything and a resolver that resolves nothing but loopback, so any
request that leaves loopback fails. The test asserts that the operation list *rendered*
(Swagger UI's ``.opblock`` elements, ReDoc's menu entries: one per operation of
``/openapi.json``) and, from the browser's performance log, that no request left loopback.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest
import uvicorn

from app.config import Settings
from app.main import create_app
from tests.support import free_port, migrate

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
#: Upper bound of every wait (server start, page load, rendering).
TIMEOUT = 60.0
LOOPBACK = {"127.0.0.1", "localhost", "[::1]", "::1"}
#: Schemes that never reach the network.
LOCAL_SCHEMES = {"data", "blob", "about", "chrome", "devtools", "chrome-extension"}


def _browser_or_skip() -> None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if not missing:
        return
    message = (
        f"{', '.join(missing)} missing: install Debian's chromium and chromium-driver "
        "(apt-get install -y chromium chromium-driver; .ci/run does)"
    )
    if os.environ.get("CI"):
        pytest.fail(f"CI is set and the browser test cannot run: {message}")
    pytest.skip(message)


@pytest.fixture
def base_url(tmp_path: Path) -> Iterator[str]:
    """The real app under uvicorn on 127.0.0.1, stopped when the test ends."""
    settings = Settings(
        environment="test",
        database_url=f"sqlite:///{tmp_path / 'docs.db'}",
        queue_url="memory://",
        data_dir=tmp_path / "data",
    )
    migrate(settings.database_url)
    port = free_port()
    config = uvicorn.Config(
        create_app(settings), host="127.0.0.1", port=port, log_level="warning", lifespan="on"
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-docs", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + TIMEOUT
        while not server.started:
            assert thread.is_alive(), "uvicorn stopped before it started"
            assert time.monotonic() < deadline, f"uvicorn did not start within {TIMEOUT} s"
            time.sleep(0.05)
        yield url
    finally:
        server.should_exit = True
        thread.join(timeout=TIMEOUT)
        assert not thread.is_alive(), "uvicorn did not stop"


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    _browser_or_skip()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
        "--window-size=1280,2000",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
        # the network is off: every proxied request fails (nothing listens on port 9), and
        # no host name resolves but loopback
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=127.0.0.1",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL", "browser": "ALL"})
    service = Service(
        executable_path=str(CHROMEDRIVER), log_output=str(tmp_path / "chromedriver.log")
    )
    driver = webdriver.Chrome(service=service, options=options)
    try:
        driver.set_page_load_timeout(TIMEOUT)
        driver.set_script_timeout(TIMEOUT)
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(tmp_path / "chromium-profile", ignore_errors=True)


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


@dataclass(frozen=True)
class Request:
    """One request of the page, from the performance log (DevTools Network events)."""

    url: str
    blocked: str | None  # Chromium's blockedReason when it refused to send it (e.g. "csp")


def _requests(driver: object) -> list[Request]:
    sent: dict[str, str] = {}
    blocked: dict[str, str] = {}
    for entry in driver.get_log("performance"):  # type: ignore[attr-defined]
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            sent[params["requestId"]] = params["request"]["url"]
        elif message["method"] == "Network.webSocketCreated":
            sent[params["requestId"]] = params["url"]
        elif message["method"] == "Network.loadingFailed" and params.get("blockedReason"):
            blocked[params["requestId"]] = params["blockedReason"]
    return [Request(url, blocked.get(rid)) for rid, url in sent.items()]


def _leaves_loopback(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return False
    return (parts.hostname or "") not in LOOPBACK


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
    requests = _requests(browser)
    urls = [r.url for r in requests]
    assert rendered == expected, f"{page}: {rendered} of {expected} operations rendered"
    # ReDoc's menu footer asks for a logo on its CDN; the page's CSP makes Chromium refuse to
    # send it (blockedReason "csp"): it never leaves the machine. Anything else is a leak.
    outside = [r for r in requests if _leaves_loopback(r.url) and r.blocked != "csp"]
    assert outside == [], f"{page} requested outside loopback: {outside}"
    assert any(u.endswith("/openapi.json") for u in urls), urls
    assert any("/static-offline-docs/" in u for u in urls), urls


def test_leaving_loopback_is_detected() -> None:
    assert _leaves_loopback("https://cdn.jsdelivr.net/npm/swagger-ui-dist@5/swagger-ui.css")
    assert _leaves_loopback("http://fonts.googleapis.com/css?family=Montserrat")
    assert not _leaves_loopback("http://127.0.0.1:8000/static-offline-docs/redoc.standalone.js")
    assert not _leaves_loopback("data:image/png;base64,iVBORw0KGgo=")
