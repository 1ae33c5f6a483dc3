"""``app.serving.StopAnswer``: a request cut off by a stopping server is told so (503)."""

from __future__ import annotations

import asyncio
import json

import pytest
from starlette.types import Message, Receive, Scope, Send

from app.serving import STOPPING_RETRY_AFTER_SECONDS, StopAnswer

SCOPE: Scope = {"type": "http", "method": "POST", "path": "/v1/indicators", "headers": []}


async def _cancelled(scope: Scope, receive: Receive, send: Send) -> None:
    raise asyncio.CancelledError


async def _receive() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


def _run(answer: StopAnswer) -> list[Message]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    asyncio.run(answer(SCOPE, _receive, send))
    return sent


def test_a_request_cancelled_while_the_server_stops_answers_503_problem() -> None:
    answer = StopAnswer(_cancelled)
    answer.stopping = True
    start, body = _run(answer)
    assert start["status"] == 503
    headers = {k.decode(): v.decode() for k, v in start["headers"]}
    assert headers["content-type"] == "application/problem+json"
    assert headers["retry-after"] == str(STOPPING_RETRY_AFTER_SECONDS)
    problem = json.loads(body["body"])
    assert problem["type"].endswith("/server-stopping")
    assert (problem["status"], problem["instance"]) == (503, "/v1/indicators")


def test_any_other_cancellation_propagates() -> None:
    with pytest.raises(asyncio.CancelledError):
        _run(StopAnswer(_cancelled))  # not stopping

    async def started_then_cancelled(scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        raise asyncio.CancelledError

    answer = StopAnswer(started_then_cancelled)
    answer.stopping = True
    with pytest.raises(asyncio.CancelledError):  # too late for another status line
        _run(answer)
