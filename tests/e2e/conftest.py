"""Shared by the browser tests: the real app under uvicorn on a free loopback port (in a
thread the test stops), headless Debian Chromium driven by selenium through the system
chromedriver (nothing is downloaded) with the network off — a proxy that refuses everything and
a resolver that resolves nothing but loopback — and the requests a page made, from the
browser's performance log."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

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


def browser_or_skip() -> None:
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


@contextmanager
def serve(app: Any) -> Iterator[str]:
    """``app`` under uvicorn on 127.0.0.1 (its lifespan on); stopped when the block ends."""
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="uvicorn-e2e", daemon=True)
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
def base_url(tmp_path: Path) -> Iterator[str]:
    """The real app (SQLite, in-memory queue) under uvicorn, stopped when the test ends."""
    settings = Settings(
        environment="test",
        database_url=f"sqlite:///{tmp_path / 'docs.db'}",
        queue_url="memory://",
        data_dir=tmp_path / "data",
    )
    migrate(settings.database_url)
    with serve(create_app(settings)) as url:
        yield url


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[object]:
    browser_or_skip()
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


@dataclass(frozen=True)
class Request:
    """One request of the page, from the performance log (DevTools Network events)."""

    url: str
    blocked: str | None  # Chromium's blockedReason when it refused to send it (e.g. "csp")


def page_requests(driver: object) -> list[Request]:
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


def leaves_loopback(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme in LOCAL_SCHEMES:
        return False
    return (parts.hostname or "") not in LOOPBACK
