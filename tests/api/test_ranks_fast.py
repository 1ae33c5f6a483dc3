"""``POST /v1/absolute-ranks`` parses a JSON body itself (:class:`app.api.ranks.RankRoute`):
every answer must be the one FastAPI's own handler sends, byte for byte.

The same app answers each request twice: through the route's fast path, and with the fast path
switched off (``FAST_CONTENT_TYPES`` emptied: FastAPI's handler parses, validates and solves
the dependency). Valid bodies, bodies that fail in the parser or the model, service problems,
the 401 and 415 of the dependency. The property test checks the premise the route relies on:
a body that ``RankRequest.model_validate_json`` accepts is accepted by
``model_validate(json.loads(...))`` (FastAPI's way) as the same model, the same float bits.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from app.api import ranks
from app.main import create_app
from app.schemas.ranks import RankRequest
from tests.api.conftest import api_settings
from tests.support import migrate
from workers.inline import InlineDispatcher

KEY = "s3cret"
JSON_TYPE = {"content-type": "application/json"}


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[TestClient]:
    """The app with an API key configured (a wrong key is a 401 of the rank dependency)."""
    s = api_settings(tmp_path, api_keys=[KEY])
    migrate(s.database_url)
    dispatcher = InlineDispatcher(s)
    app = create_app(s, dispatcher=dispatcher)
    dispatcher.app = app  # type: ignore[assignment]
    with TestClient(app) as c:
        yield c


def _answer(client: TestClient, raw: bytes, headers: dict[str, str]) -> tuple[int, str, bytes]:
    r = client.post("/v1/absolute-ranks", content=raw, headers=headers)
    return r.status_code, r.headers.get("content-type", ""), r.content


def _both(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, raw: bytes, headers: dict[str, str]
) -> tuple[tuple[int, str, bytes], tuple[int, str, bytes]]:
    fast = _answer(client, raw, headers)
    with monkeypatch.context() as m:
        m.setattr(ranks, "FAST_CONTENT_TYPES", frozenset())
        framework = _answer(client, raw, headers)
    return fast, framework


VALID = [
    {"function_id": "classic/sphere/d2", "values": [0.5, 1, 2.0e-3, 1e-300, 5e-324, -0.0]},
    {"function_id": "classic/sphere/d2", "values": [0.25], "budget": 10, "values_are": "error"},
    {"function_id": "classic/rastrigin/d2", "values": [0.5, 3.0, 30.0], "confidence": 0.9},
    {"function_id": "classic/rastrigin/d2", "values": [1.5, 2.5], "runs": 5, "aggregate": "best"},
    {
        "function_id": "classic/rastrigin/d2",
        "runs_by_algorithm": {"A": [1.0, 2.0], "B": [3.0]},
        "aggregate": "median",
    },
    {"sample": [1.0, 2.0, 3.0, 4.0], "values": [2.5, 0.5]},
]

TEXTS = [
    b'{"function_id":"classic/sphere/d2","values":[9007199254740993, 1e22, 0.1e1, 1E-5]}',
    b'{"function_id":"classic/sphere/d2","values":[12345678901234567890123456789, 1.5]}',
    b'{"function_id":"classic/nosuch/d2","function_id":"classic/sphere/d2","values":[1]}',
    b' \n{"function_id" : "classic/sphere/d2" , "values" : [ 1 ] }\r\n',
]

INVALID = [
    b"",
    b"{",
    b'{"function_id":"classic/sphere/d2","values":[1,]}',
    b'{"function_id":"classic/sphere/d2","values":[NaN]}',
    b'{"function_id":"classic/sphere/d2","values":[Infinity]}',
    b'{"function_id":"classic/sphere/d2","values":[1e400]}',
    b'{"function_id":"classic/sphere/d2","values":["1.5"]}',
    b'{"function_id":"classic/sphere/d2","values":[true]}',
    b'{"function_id":"classic/sphere/d2","values":[1' + b"0" * 400 + b"]}",
    b'{"function_id":"classic/sphere/d2","values":[1],"budget":"3"}',
    b'{"function_id":"classic/sphere/d2","values":[1],"extra":1}',
    b'{"function_id":"\\ud800","values":[1]}',
    b'{"function_id":"classic/sph\xe9re/d2","values":[1]}',
    b'\xef\xbb\xbf{"function_id":"classic/sphere/d2","values":[1]}',
    '{"function_id":"classic/sphere/d2","values":[1]}'.encode("utf-16"),
    b'{"function_id":"classic/sphere/d2"}',
    b"[" * 300 + b"]" * 300,
    b'{"function_id":"classic/nosuch/d2","values":[1]}',  # valid body, a 404 of the service
    b'{"function_id":"classic/sphere/d2","values":[1],"tail":"power","tail_k":0}',
]


@pytest.mark.parametrize("body", VALID)
def test_valid_bodies_answer_as_the_framework(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, body: dict[str, object]
) -> None:
    raw = json.dumps(body).encode()
    fast, framework = _both(client, monkeypatch, raw, JSON_TYPE)
    assert fast[0] == 200, fast[2][:500]
    assert fast == framework


@pytest.mark.parametrize("raw", TEXTS + INVALID)
def test_every_body_answers_as_the_framework(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, raw: bytes
) -> None:
    fast, framework = _both(client, monkeypatch, raw, JSON_TYPE)
    assert fast == framework


@pytest.mark.parametrize(
    "content_type",
    ["application/json; charset=utf-8", "application/json; charset=UTF-8", "text/plain", ""],
)
def test_media_types_answer_as_the_framework(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, content_type: str
) -> None:
    raw = b'{"function_id":"classic/sphere/d2","values":[1.5]}'
    headers = {"content-type": content_type} if content_type else {}
    fast, framework = _both(client, monkeypatch, raw, headers)
    assert fast == framework


@pytest.mark.parametrize("key", [None, KEY, "wrong"])
@pytest.mark.parametrize(
    "raw",
    [
        b'{"function_id":"classic/sphere/d2","values":[1.5]}',
        b'{"function_id":"classic/rastrigin/d2","values":[1.5]}',  # no table: anonymous 409
        b'{"function_id":"classic/sphere/d2","values":["x"]}',
        b"{",
    ],
)
def test_keys_answer_as_the_framework(
    keyed: TestClient, monkeypatch: pytest.MonkeyPatch, key: str | None, raw: bytes
) -> None:
    headers = JSON_TYPE | ({} if key is None else {"x-api-key": key})
    fast, framework = _both(keyed, monkeypatch, raw, headers)
    assert fast == framework


def test_the_fast_path_is_taken(client: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    """A JSON body is validated from its bytes, not by FastAPI's handler."""
    calls: list[bytes] = []
    validate = RankRequest.model_validate_json

    def spy(raw: bytes) -> RankRequest:
        calls.append(raw)
        return validate(raw)

    monkeypatch.setattr(RankRequest, "model_validate_json", spy)
    raw = b'{"function_id":"classic/sphere/d2","values":[1.5]}'
    assert _answer(client, raw, JSON_TYPE)[0] == 200
    assert calls == [raw]


_FLOAT_TEXT = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(min_value=-(10**40), max_value=10**40).map(str),
    st.from_regex(r"-?(0|[1-9][0-9]{0,25})(\.[0-9]{1,25})?([eE][+-]?[0-9]{1,3})?", fullmatch=True),
)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(_FLOAT_TEXT, max_size=6), budget=st.sampled_from(["", ',"budget":7']))
def test_a_body_the_fast_parser_accepts_is_the_frameworks_model(
    values: list[str], budget: str
) -> None:
    raw = '{"function_id":"classic/sphere/d2","values":[' + ",".join(values) + "]" + budget + "}"
    raw_bytes = raw.encode()
    try:
        fast = RankRequest.model_validate_json(raw_bytes)
    except ValidationError:
        return  # FastAPI's handler answers these
    framework = RankRequest.model_validate(json.loads(raw_bytes))
    assert fast.model_dump() == framework.model_dump()
    assert fast.model_fields_set == framework.model_fields_set
    assert fast.values is not None
    assert framework.values is not None
    bits = [struct.pack("<d", x) for x in fast.values]
    assert bits == [struct.pack("<d", x) for x in framework.values]
