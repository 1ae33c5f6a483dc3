"""HTTP hygiene (issue 17 §6): nosniff, Cache-Control, HEAD, complete Allow, CORS, no server
banner, malformed Content-Length (in the app and through a real uvicorn on loopback)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI, Response
from fastapi.routing import iter_route_contexts
from fastapi.testclient import TestClient
from starlette.types import Message, Scope

from app.api.http_hygiene import METHOD_ORDER, HttpHygiene
from app.main import create_app
from app.services.table_publish import IMMUTABLE
from tests.api.conftest import api_settings
from tests.support import migrate
from workers.inline import InlineDispatcher

PROBLEM = "application/problem+json"
ORIGIN = "https://bench.example"
FUNCTION = "classic/sphere/d2"
#: The sample value of each path parameter when every GET route is called.
PATH_VALUES = {"function_id": FUNCTION, "fmt": "svg", "figure": "cd-diagram"}


def _app(tmp_path: Path, **overrides: object) -> tuple[FastAPI, InlineDispatcher]:
    settings = api_settings(tmp_path, **overrides)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    return app, dispatcher


@pytest.fixture
def cors_client(tmp_path: Path) -> Iterator[TestClient]:
    app, _ = _app(tmp_path, cors_allow_origins=[ORIGIN])
    with TestClient(app) as c:
        yield c


def _fill(path_format: str) -> str:
    return re.sub(r"{(\w+)}", lambda m: PATH_VALUES.get(m.group(1), "x0"), path_format)


# --- X-Content-Type-Options and Cache-Control --------------------------------------------------


def test_nosniff_and_no_store_on_answers_that_set_no_cache_control(client: TestClient) -> None:
    for path in ("/v1/functions", f"/v1/functions/{FUNCTION}", "/", "/openapi.json"):
        r = client.get(path)
        assert r.status_code == 200, path
        assert r.headers["x-content-type-options"] == "nosniff"
        assert r.headers["cache-control"] == "no-store"


def test_every_error_is_no_store_even_when_the_route_says_otherwise(tmp_path: Path) -> None:
    app, _ = _app(tmp_path)

    def cached_error() -> Response:
        return Response(b"teapot", status_code=418, headers={"Cache-Control": IMMUTABLE})

    def broken() -> None:
        raise RuntimeError("boom")

    app.add_api_route("/test/cached-error", cached_error)
    app.add_api_route("/test/broken", broken)
    with TestClient(app, raise_server_exceptions=False) as c:
        r = c.get("/test/cached-error")
        assert r.status_code == 418
        assert r.headers.get_list("cache-control") == ["no-store"]
        assert r.headers["x-content-type-options"] == "nosniff"
        # Starlette's ServerErrorMiddleware answers the 500: the hygiene wraps it too
        r = c.get("/test/broken")
        assert r.status_code == 500
        assert r.headers["cache-control"] == "no-store"
        assert r.headers["x-content-type-options"] == "nosniff"
        for r in (
            c.get("/v1/functions/nope/x/d2"),  # 404 problem
            c.post("/v1/absolute-ranks", json={}),  # 422 problem
            c.put("/v1/tables"),  # 405 problem
        ):
            assert r.status_code >= 400
            assert r.headers["content-type"].startswith(PROBLEM)
            assert r.headers["cache-control"] == "no-store"
            assert r.headers["x-content-type-options"] == "nosniff"


def test_ready_tables_are_immutable_building_ones_are_not_cached(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    made = client.post("/v1/tables", json={"function_id": FUNCTION, "log2n": 12, "seed": 7})
    assert made.status_code == 202
    location = made.headers["location"]
    building = client.get(location)
    assert building.json()["status"] == "building"
    assert building.headers["cache-control"] == "no-store"
    not_ready = client.get(location + "/curve.json")
    assert not_ready.status_code == 409
    assert not_ready.headers["cache-control"] == "no-store"
    dispatcher.hold = False
    for table_id, index in list(dispatcher.chunks):
        dispatcher.enqueue_chunk(table_id, index)
    assert client.get(location).json()["status"] == "ready"
    assert client.get(location).headers["cache-control"] == "no-store"  # the status page
    curve = client.get(location + "/curve.csv")
    assert curve.status_code == 200
    assert curve.headers.get_list("cache-control") == [IMMUTABLE]
    assert curve.headers["x-content-type-options"] == "nosniff"
    etag = curve.headers["etag"]
    again = client.get(location + "/curve.csv", headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.headers["cache-control"] == IMMUTABLE
    head = client.head(location + "/curve.csv")
    assert head.status_code == 200
    assert head.content == b""
    assert head.headers["etag"] == etag
    assert head.headers["content-length"] == str(len(curve.content))


def _comparison_rows() -> list[dict[str, Any]]:
    values = {
        "classic/rastrigin/d2": {"A": 2.0, "B": 3.0},
        "classic/sphere/d2": {"A": 1.0, "B": 0.5},
    }
    return [
        {"algorithm": alg, "problem": prob, "run": 0, "value": v}
        for prob, cells in values.items()
        for alg, v in cells.items()
    ]


def test_a_comparison_is_immutable_once_complete(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    body = {"results": _comparison_rows(), "reduction": "best"}
    dispatcher.hold = True  # absolute ranks wait for tables: partial
    partial = client.post("/v1/comparisons", json=body).json()
    assert partial["status"] == "partial"
    r = client.get(partial["location"])
    assert r.headers["cache-control"] == "no-store"
    assert client.get(partial["location"] + "/summary").headers["cache-control"] == "no-store"
    dispatcher.hold = False
    for table_id, index in list(dispatcher.chunks):
        dispatcher.enqueue_chunk(table_id, index)
    for table_id in {t for t, _ in dispatcher.chunks}:
        dispatcher.enqueue_merge(table_id)
    complete = client.post("/v1/comparisons", json=body).json()
    assert complete["status"] == "complete"
    for suffix in ("", "?view=summary", "?format=csv", "/summary"):
        r = client.get(complete["location"] + suffix)
        assert r.status_code == 200, suffix
        assert r.headers["cache-control"] == IMMUTABLE, suffix
        assert "Accept" in r.headers["vary"], suffix  # the format follows Accept


def test_a_pareto_ranking_is_immutable(client: TestClient) -> None:
    scores = [
        {"algorithm": a, "problem": "p", "run": r, "indicator": "hv", "value": float(i + r)}
        for i, a in enumerate("AB")
        for r in range(3)
    ]
    made = client.post("/v1/pareto-rankings", json={"scores": scores})
    assert made.status_code == 201, made.text
    assert made.headers["cache-control"] == "no-store"  # the POST's answer
    r = client.get(made.headers["location"])
    assert r.status_code == 200
    assert r.headers["cache-control"] == IMMUTABLE


def test_a_cross_machine_comparison_is_immutable_once_complete(client: TestClient) -> None:
    setup = {
        "published": [{"instance": f"i{j}", "a": float(100 + j), "t1": 10.0 + j} for j in range(8)],
        "cpu1": "intel xeon E5440",
        "s2": 1921,
        "p_gamma": 0.1,
    }
    made = client.post("/v1/cross-machine-comparisons", json=setup).json()
    assert made["status"] == "awaiting-results"
    assert client.get(made["location"]).headers["cache-control"] == "no-store"
    results = [{"instance": f"i{j}", "b": float(99 + j)} for j in range(8)]
    r = client.post(made["location"] + "/results", json={"results": results})
    assert r.json()["status"] == "complete", r.text
    assert client.get(made["location"]).headers["cache-control"] == IMMUTABLE


# --- HEAD ---------------------------------------------------------------------------------------


def test_head_answers_on_every_get_route_as_get_does(client: TestClient) -> None:
    routes = [r for r in iter_route_contexts(client.app.routes) if "GET" in (r.methods or ())]  # type: ignore[attr-defined]
    assert len(routes) > 40
    for route in routes:
        path = _fill(route.path_format or "")
        got = client.get(path)
        head = client.head(path)
        assert head.status_code == got.status_code, path
        if got.status_code == 405:  # only the routes that refuse GET
            assert path in ("/v1/tables/samples", f"/v1/functions/{FUNCTION}/evaluate")
        assert head.content == b"", path
        for name in ("content-type", "content-length", "cache-control", "etag", "allow"):
            assert head.headers.get(name) == got.headers.get(name), (path, name)
    # a mount's static file (a FileResponse) too
    got = client.get("/static-offline-docs/redoc.standalone.js")
    head = client.head("/static-offline-docs/redoc.standalone.js")
    assert got.status_code == head.status_code == 200
    assert head.content == b""
    assert head.headers["content-length"] == got.headers["content-length"] == str(len(got.content))


def test_head_where_get_is_refused_is_405(client: TestClient) -> None:
    r = client.head("/v1/absolute-ranks")
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    assert r.content == b""


# --- Allow -------------------------------------------------------------------------------------


def _allow_cases(client: TestClient, *, options: bool) -> list[tuple[str, str]]:
    """(a concrete path, its Allow) for every path of the OpenAPI document: the reference."""
    cases = []
    for template, operations in client.get("/openapi.json").json()["paths"].items():
        methods = {m.upper() for m in operations}
        if "GET" in methods:
            methods.add("HEAD")
        if options:
            methods.add("OPTIONS")
        cases.append((_fill(template), ", ".join(m for m in METHOD_ORDER if m in methods)))
    return cases


def test_405_names_every_method_the_path_accepts(client: TestClient) -> None:
    cases = _allow_cases(client, options=False)
    assert len(cases) > 40
    for path, allow in cases:
        r = client.request("PATCH", path)
        assert r.status_code == 405, path
        assert r.headers["content-type"].startswith(PROBLEM)
        assert r.json()["field"] == "method"
        assert r.headers["allow"] == allow, path
    # routes that only refuse (they keep an id parameter from taking the path) are not in Allow
    for path in ("/v1/tables/samples", f"/v1/functions/{FUNCTION}/evaluate"):
        r = client.get(path)
        assert r.status_code == 405
        assert r.headers["allow"] == "POST"
        assert r.json()["type"].endswith("/method-not-allowed")
    r = client.delete("/")  # the web page
    assert r.headers["allow"] == "GET, HEAD"


def test_with_cors_allow_has_options_and_a_plain_options_answers_it(
    cors_client: TestClient,
) -> None:
    for path, allow in _allow_cases(cors_client, options=True):
        assert cors_client.request("PATCH", path).headers["allow"] == allow, path
    r = cors_client.options("/v1/tables")
    assert r.status_code == 204
    assert r.headers["allow"] == "GET, HEAD, POST, OPTIONS"
    assert r.content == b""
    assert "content-length" not in r.headers  # RFC 9110 §8.6: not in a 204
    assert cors_client.options("/v1/nothing-here").status_code == 404


# --- CORS ---------------------------------------------------------------------------------------

PREFLIGHT = {
    "Origin": ORIGIN,
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "content-type, x-api-key",
}


def test_cors_is_off_by_default(client: TestClient) -> None:
    r = client.options("/v1/absolute-ranks", headers=PREFLIGHT)
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    assert not any(k.startswith("access-control-") for k in r.headers)
    r = client.get("/v1/functions", headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in r.headers


def test_cors_preflight_of_an_allowed_origin(cors_client: TestClient) -> None:
    r = cors_client.options("/v1/absolute-ranks", headers=PREFLIGHT)
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert "POST" in r.headers["access-control-allow-methods"].split(", ")
    allowed = {h.lower() for h in r.headers["access-control-allow-headers"].split(", ")}
    assert {"content-type", "x-api-key"} <= allowed
    assert r.headers["access-control-max-age"] == "600"
    assert r.headers["x-content-type-options"] == "nosniff"
    got = cors_client.get("/v1/functions", headers={"Origin": ORIGIN})
    assert got.headers["access-control-allow-origin"] == ORIGIN
    assert "ETag" in got.headers["access-control-expose-headers"].split(", ")


def test_cors_preflight_of_another_origin_is_refused(cors_client: TestClient) -> None:
    r = cors_client.options(
        "/v1/absolute-ranks", headers=PREFLIGHT | {"Origin": "https://elsewhere.example"}
    )
    assert r.status_code == 400
    assert "access-control-allow-origin" not in r.headers
    r = cors_client.options(
        "/v1/absolute-ranks", headers=PREFLIGHT | {"Access-Control-Request-Method": "PUT"}
    )
    assert r.status_code == 400  # a method the setting does not allow
    got = cors_client.get("/v1/functions", headers={"Origin": "https://elsewhere.example"})
    assert got.status_code == 200
    assert "access-control-allow-origin" not in got.headers


# --- Content-Length, at the ASGI level (any server) -------------------------------------------


def _call(headers: list[tuple[bytes, bytes]]) -> tuple[list[Message], bool]:
    reached = False

    async def app(scope: Scope, receive: Any, send: Any) -> None:
        nonlocal reached
        reached = True
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/v1/x", "headers": headers}
    asyncio.run(HttpHygiene(app, routes=list, cors=False)(scope, receive, send))
    return sent, reached


@pytest.mark.parametrize(
    "values",
    [[b"abc"], [b"-5"], [b"+5"], [b"0x10"], [b""], [b"\xd9\xa3"], [b"5, 6"], [b"5", b"6"]],
    ids=["letters", "negative", "plus", "hex", "empty", "arabic-digit", "list", "two-headers"],
)
def test_a_malformed_content_length_is_a_400_problem_naming_it(values: list[bytes]) -> None:
    sent, reached = _call([(b"content-length", v) for v in values])
    assert not reached
    start = sent[0]
    assert start["status"] == 400
    headers = dict(start["headers"])
    assert headers[b"content-type"].startswith(PROBLEM.encode())
    assert headers[b"cache-control"] == b"no-store"
    body = json.loads(b"".join(m.get("body", b"") for m in sent[1:]))
    assert body["field"] == "Content-Length"
    assert body["type"].endswith("/invalid-header")


@pytest.mark.parametrize("values", [[b"2"], [b"2", b"2"], [b"2, 2"], [b"1" * 25]])
def test_a_well_formed_content_length_reaches_the_app(values: list[bytes]) -> None:
    # equal repeated values are one (RFC 9110 §8.6); a huge number is BodySizeLimit's 413
    _, reached = _call([(b"content-length", v) for v in values])
    assert reached


# --- a real uvicorn on loopback: what the server stack does itself ----------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _exchange(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send raw bytes, read one response (its status, headers and body)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        conn.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.lower().split(": ", 1) for line in lines[1:] if ": " in line)
        # without a Content-Length (uvicorn's own 400 under h11) the body ends with the
        # connection
        length = int(headers["content-length"]) if "content-length" in headers else None
        while length is None or len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                break
            body += chunk
    return int(lines[0].split()[1]), headers, body


@pytest.fixture(params=["httptools", "h11"])
def uvicorn_port(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[int]:
    """``uvicorn`` serving the app (no embedded worker) as ``absrank serve`` does; stopped by
    its PID."""
    env = os.environ | {
        "ABSRANK_DATABASE_URL": f"sqlite:///{tmp_path / 'api.db'}",
        "ABSRANK_QUEUE_URL": "memory://",
        "ABSRANK_ENVIRONMENT": "test",
        "ABSRANK_PRELOAD_FIGURES": "false",
        "ABSRANK_MAX_REQUEST_BYTES": str(256 * 1024),
    }
    migrate(env["ABSRANK_DATABASE_URL"])
    port = _free_port()
    command = [sys.executable, "-c", _SERVE, str(port), request.param]
    proc = subprocess.Popen(command, env=env, cwd=Path(__file__).parents[2])
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert proc.poll() is None, "uvicorn exited"
                assert time.monotonic() < deadline, "uvicorn did not start within 60 s"
                time.sleep(0.1)
        yield port
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


#: The server, with the options ``absrank serve`` gives uvicorn (tests/api/test_http_hygiene).
_SERVE = """
import sys, uvicorn
from app.main import create_app
uvicorn.run(create_app(), host="127.0.0.1", port=int(sys.argv[1]), http=sys.argv[2],
            log_level="error", server_header=False)
"""

MALFORMED = {
    "letters": [b"abc"],
    "negative": [b"-5"],
    "plus": [b"+5"],
    "hex": [b"0x5"],
    "list": [b"5, 6"],
    "two-headers": [b"5", b"6"],
    "25-digits": [b"1" * 25],
}


def _post(lengths: list[bytes], body: bytes = b"{}") -> bytes:
    headers = b"".join(b"Content-Length: " + v + b"\r\n" for v in lengths)
    return (
        b"POST /v1/absolute-ranks HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\n" + headers + b"Connection: close\r\n\r\n" + body
    )


def test_through_uvicorn_a_malformed_content_length_is_400(uvicorn_port: int) -> None:
    for name, lengths in MALFORMED.items():
        status, headers, body = _exchange(uvicorn_port, _post(lengths))
        assert status == 400, name
        if headers.get("content-type", "").startswith(PROBLEM):  # reached the app
            assert json.loads(body)["field"] == "Content-Length", name
        else:  # h11 and httptools refuse it themselves, as plain text (README)
            assert body == b"Invalid HTTP request received.", name
    # 19 digits parse: BodySizeLimit's 413 problem
    status, headers, body = _exchange(uvicorn_port, _post([b"1" * 19]))
    assert status == 413
    assert headers["content-type"].startswith(PROBLEM)
    assert json.loads(body)["field"] == "body"


def _bodyless(method: str, path: str) -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode()


def test_through_uvicorn_no_server_banner(uvicorn_port: int) -> None:
    status, headers, _ = _exchange(uvicorn_port, _bodyless("GET", f"/v1/functions/{FUNCTION}"))
    assert status == 200
    assert "server" not in headers
    assert "date" in headers
    assert headers["x-content-type-options"] == "nosniff"
    status, headers, body = _exchange(uvicorn_port, _bodyless("HEAD", f"/v1/functions/{FUNCTION}"))
    assert status == 200
    assert body == b""


def test_absrank_serve_runs_uvicorn_without_the_server_header(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from app import cli, serving
    from app.config import get_settings

    seen: dict[str, Any] = {}
    # the server absrank serve builds, taken instead of run (and no exit after it)
    monkeypatch.setattr(serving, "run_server", lambda server: seen.update(vars(server.config)))
    monkeypatch.setattr(serving, "exit_leaving_threads", lambda status: None)
    monkeypatch.setenv("ABSRANK_DATABASE_URL", f"sqlite:///{tmp_path / 'api.db'}")
    monkeypatch.setenv("ABSRANK_QUEUE_URL", "memory://")
    get_settings.cache_clear()
    previous = signal.getsignal(signal.SIGTERM)
    try:
        cli.serve(embedded_worker=False, default_tables=False, seed=False)
    finally:
        signal.signal(signal.SIGTERM, previous)
        get_settings.cache_clear()
    assert seen["server_header"] is False
    assert seen.get("date_header", True) is True
