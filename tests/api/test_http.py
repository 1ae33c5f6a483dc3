"""The HTTP layer itself: body limits, media types, malformed JSON, OpenAPI problems."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from starlette.types import Message, Receive, Scope, Send

from app.main import BodySizeLimit

PROBLEM = "application/problem+json"
EVALUATE = "/v1/functions/classic/sphere/d2/evaluate"
POST_BODIES = {
    EVALUATE: {"points": [[0.0, 0.0]]},
    "/v1/tables": {"function_id": "classic/sphere/d2"},
    "/v1/absolute-ranks": {"function_id": "classic/sphere/d2", "values": [1.0]},
}


def _points_body(n: int) -> Iterator[bytes]:
    """A JSON body in pieces: httpx sends it chunked, without a Content-Length."""
    yield b'{"points": ['
    for i in range(n):
        yield (b"," if i else b"") + b"[0.0, 0.0]"
    yield b"]}"


# --- body size without Content-Length --------------------------------------------------------


def test_chunked_body_over_the_limit_is_413(client: TestClient) -> None:
    r = client.post(
        EVALUATE, content=_points_body(40000), headers={"content-type": "application/json"}
    )
    assert r.request.headers["transfer-encoding"] == "chunked"
    assert "content-length" not in r.request.headers
    assert r.status_code == 413
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == "body"
    assert r.json()["type"].endswith("/payload-too-large")


def test_chunked_body_under_the_limit_is_read(client: TestClient) -> None:
    r = client.post(EVALUATE, content=_points_body(3), headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text
    assert r.json()["values"] == [0.0, 0.0, 0.0]


async def _run(
    limit: int, pieces: list[bytes], headers: list[tuple[bytes, bytes]]
) -> tuple[list[Message], list[bytes]]:
    """Drive the middleware with a body in several ASGI messages; return what was sent."""
    incoming: list[Message] = [
        {"type": "http.request", "body": p, "more_body": i < len(pieces) - 1}
        for i, p in enumerate(pieces)
    ]
    received: list[bytes] = []
    sent: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            received.append(message.get("body", b""))
            if not message.get("more_body", False):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive() -> Message:
        return incoming.pop(0) if incoming else {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/x", "headers": headers}
    await BodySizeLimit(app, limit)(scope, receive, send)
    return sent, received


@pytest.mark.anyio
async def test_middleware_replays_a_buffered_body_message_by_message() -> None:
    sent, received = await _run(10, [b"abc", b"def", b"ghij"], headers=[])
    assert sent[0]["status"] == 200
    assert received == [b"abc", b"def", b"ghij"]


@pytest.mark.anyio
async def test_middleware_refuses_one_byte_over_before_the_app_runs() -> None:
    sent, received = await _run(10, [b"abc", b"def", b"ghijk"], headers=[])
    assert sent[0]["status"] == 413
    assert received == []  # the application never saw the body
    assert json.loads(sent[1]["body"])["field"] == "body"


@pytest.mark.anyio
@pytest.mark.parametrize("declared", [b"11", b"9" * 5000])
async def test_middleware_refuses_declared_lengths_over_the_limit(declared: bytes) -> None:
    sent, received = await _run(10, [b"abc"], headers=[(b"content-length", declared)])
    assert sent[0]["status"] == 413
    assert received == []


@pytest.mark.anyio
async def test_middleware_counts_the_body_even_under_a_declared_length() -> None:
    sent, received = await _run(10, [b"abcdef", b"ghijk"], headers=[(b"content-length", b"5")])
    assert sent[0]["status"] == 413
    assert received == []


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --- bodies that are not JSON -----------------------------------------------------------------


@pytest.mark.parametrize("path", list(POST_BODIES))
def test_invalid_json_names_the_body(client: TestClient, path: str) -> None:
    r = client.post(path, content=b"{", headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["field"] == "body"
    assert "character 1" in body["detail"]


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"points": [[0.0, \xff]]}', "UTF-8"),
        (b'{"points": [[0.0, 1' + b"0" * 5000 + b"]]}", "4300 digits"),
    ],
)
def test_unparseable_bodies_are_problems_naming_the_body(
    client: TestClient, content: bytes, needle: str
) -> None:
    r = client.post(EVALUATE, content=content, headers={"content-type": "application/json"})
    assert r.status_code == 422
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == "body"
    assert needle in r.json()["detail"]


@pytest.mark.parametrize("path", list(POST_BODIES))
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/xml",
        "multipart/form-data; boundary=x",
        "application/jsonx",
        None,
    ],
)
def test_other_media_types_are_415(client: TestClient, path: str, content_type: str | None) -> None:
    headers = {} if content_type is None else {"content-type": content_type}
    r = client.post(path, content=json.dumps(POST_BODIES[path]).encode(), headers=headers)
    assert r.status_code == 415, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    body = r.json()
    assert body["field"] == "content-type"
    assert "application/json" in r.headers["accept"]
    assert client.get("/v1/tables").json()["total"] == 0


@pytest.mark.parametrize(
    "content_type",
    [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        "application/vnd.absrank+json",
    ],
)
def test_json_media_types_are_accepted(client: TestClient, content_type: str) -> None:
    r = client.post(
        EVALUATE,
        content=json.dumps(POST_BODIES[EVALUATE]).encode(),
        headers={"content-type": content_type},
    )
    assert r.status_code == 200, r.text


def test_huge_paths_are_not_echoed(client: TestClient) -> None:
    r = client.get("/v1/tables/t" + "0" * 10000)
    assert r.status_code == 404
    assert r.json()["field"] == "table_id"
    assert len(r.json()["instance"]) <= 200
    assert len(r.json()["detail"]) < 100


def test_unknown_routes_are_problems(client: TestClient) -> None:
    r = client.get("/v2/nothing")
    assert r.status_code == 404
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == "path"


# --- OpenAPI -----------------------------------------------------------------------------------


@pytest.fixture
def spec(client: TestClient) -> dict:
    return client.get("/openapi.json").json()


def test_every_problem_is_documented_as_problem_json(spec: dict) -> None:
    assert "HTTPValidationError" not in spec["components"]["schemas"]
    assert "Problem" in spec["components"]["schemas"]
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for code, response in op["responses"].items():
                if int(code) < 400:
                    continue
                assert list(response["content"]) == [PROBLEM], (method, path, code)
                schema = response["content"][PROBLEM]["schema"]
                assert schema == {"$ref": "#/components/schemas/Problem"}, (method, path, code)


def test_get_endpoints_document_their_422_as_problem(spec: dict) -> None:
    for path in ("/v1/functions", "/v1/tables"):
        response = spec["paths"][path]["get"]["responses"]["422"]
        assert PROBLEM in response["content"]


def test_post_endpoints_declare_413_and_415(spec: dict) -> None:
    posts = [(p, ops["post"]) for p, ops in spec["paths"].items() if "post" in ops]
    assert len(posts) >= 13  # evaluate, tables, absolute-ranks, 8 tests, comparisons, cpus
    for path, op in posts:
        assert {"413", "415", "422"} <= set(op["responses"]), path


def test_parameters_have_descriptions_and_examples(spec: dict) -> None:
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            for param in op.get("parameters", []):
                where = (method, path, param["name"])
                assert param.get("description"), where
                if {"type": "null"} in param["schema"].get("anyOf", []):
                    continue  # optional, no default (a CSV comparison's control): no pre-fill
                assert param.get("examples") or param["schema"].get("examples"), where


def test_integer_bounds_stay_integers(client: TestClient) -> None:
    text = client.get("/openapi.json").text
    seed = json.loads(text)["components"]["schemas"]["TableCreate"]["properties"]["seed"]
    assert seed["maximum"] == 2**63 - 1
    assert isinstance(seed["maximum"], int)
    assert '"maximum":9223372036854775807' in text.replace(" ", "")
    budget = json.loads(text)["components"]["schemas"]["RankRequest"]["properties"]["budget"]
    assert budget["maximum"] == 10**15
