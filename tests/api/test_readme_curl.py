"""Every curl example in README.md works: sent to the real app, each answers 2xx.

The README's `sh` blocks are read as a user would paste them: line continuations joined, a
`cat > FILE <<'TAG'` heredoc written to a file, and each `curl` parsed into method, path,
headers and body. `<id>` placeholders (in a path or a body) take the id of the previous
answer in the same block (its `Location` header or `id` field), `'<follow_up.table_request>'`
the region scan's follow-up request. Bodies abbreviated with `…` are not sent (the walkthrough
script sends the real one).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.types import ASGIApp

from app.config import Settings
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

README = Path(__file__).resolve().parents[2] / "README.md"
SH_BLOCK = re.compile(r"^```sh\n(?P<body>.*?)^```$", re.DOTALL | re.MULTILINE)
HEREDOC = re.compile(r"^cat > (?P<file>\S+) <<'(?P<tag>\w+)'\n(?P<text>.*?)^(?P=tag)$", re.M | re.S)


@dataclass(frozen=True)
class Curl:
    """One curl command of the README.

    Attributes
    ----------
    line : int
        Its first line in README.md.
    method, path : str
        HTTP method and the path with its query string.
    headers : dict of str to str
    body : str or None
        The raw body (``-d``), or ``@FILE`` for ``--data-binary @FILE``.
    form : tuple of (str, str)
        ``-F name=value`` fields of a ``multipart/form-data`` body (``@FILE`` uploads FILE).
    follow : bool
        ``-L``: follow redirects (curl does not by default, nor does the replay).
    """

    line: int
    method: str
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    form: tuple[tuple[str, str], ...] = ()
    follow: bool = False


def _strip_comment(line: str, quote: str | None) -> tuple[str, str | None]:
    """``line`` without its shell comment (an unquoted ``#``), and the quote still open."""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i], None
    return line, quote


def _commands(block: str) -> list[tuple[int, str]]:
    """Shell commands of a block with continuations joined: ``(line offset, text)``."""
    out: list[tuple[int, str]] = []
    current, start, quote = "", 0, None
    for offset, raw in enumerate(block.splitlines()):
        line, quote = _strip_comment(raw, quote)
        if not current:
            start = offset
        continued = quote is None and line.rstrip().endswith("\\")
        current += (line.rstrip()[:-1] if continued else line) + "\n"
        if quote is None and not continued:
            if current.strip():
                out.append((start, current.strip()))
            current = ""
    return out


def _parse(line: int, command: str) -> Curl | None:
    words = shlex.split(command)
    if not words or words[0] != "curl":
        return None
    method, headers, body, url = "GET", {}, None, None
    follow = False
    form: list[tuple[str, str]] = []
    it = iter(words[1:])
    for word in it:
        if word == "-X":
            method = next(it)
        elif word == "-F":
            name, _, value = next(it).partition("=")
            form.append((name, value))
            method = "POST" if method == "GET" else method
        elif word == "-H":
            name, _, value = next(it).partition(":")
            headers[name.strip().lower()] = value.strip()
        elif word in ("-d", "--data-binary"):
            body = next(it)
            method = "POST" if method == "GET" else method
        elif word in ("-L", "--location"):
            follow = True
        elif word == ">":
            next(it)
        elif not word.startswith("-"):
            url = word
    assert url is not None, f"README line {line}: curl without a URL"
    path = re.sub(r"^(https?://)?(127\.0\.0\.1|localhost):8000", "", url)
    return Curl(line, method, path, headers, body, tuple(form), follow)


def _examples() -> list[tuple[str, list[Curl], dict[str, str]]]:
    text = README.read_text()
    blocks = []
    for m in SH_BLOCK.finditer(text):
        first = text[: m.start("body")].count("\n") + 1
        files = {h["file"]: h["text"] for h in HEREDOC.finditer(m["body"])}
        body = HEREDOC.sub("", m["body"])
        curls = [c for off, cmd in _commands(body) if (c := _parse(first + off, cmd))]
        if curls:
            blocks.append((f"line{first}", curls, files))
    return blocks


EXAMPLES = _examples()


def test_the_readme_has_curl_examples() -> None:
    assert sum(len(c) for _, c, _ in EXAMPLES) >= 30


def _with_id(text: str, last: dict[str, object], line: int) -> str:
    """``text`` with ``<id>`` replaced by the id of the previous answer."""
    if "<id>" not in text:
        return text
    assert "id" in last, f"README line {line}: <id> with no earlier answer"
    return text.replace("<id>", str(last["id"]))


def readme_settings(tmp_path: Path) -> Settings:
    """The API test settings, with room for the README's bigger tables and bodies."""
    return api_settings(
        tmp_path, table_max_log2n=20, table_chunk_log2=16, max_request_bytes=8 * 1024 * 1024
    )


@contextmanager
def fresh_client(
    settings: Settings, wrap: Callable[[ASGIApp], ASGIApp] | None = None
) -> Iterator[TestClient]:
    """A client of the real app on a freshly migrated database, tables built inline; ``wrap``
    wraps the app the client sends to (e.g. to watch the scope)."""
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    from app.main import create_app

    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(wrap(app) if wrap else app) as client:
        yield client


@dataclass(frozen=True)
class Sent:
    """One curl as sent, and its answer.

    Attributes
    ----------
    curl : Curl
    path : str
        The path sent (``<id>`` filled in).
    content : bytes or None
        The body sent (None for none or a ``-F`` form).
    response : httpx.Response
    """

    curl: Curl
    path: str
    content: bytes | None
    response: httpx.Response


def replay(client: TestClient, curls: list[Curl], files: dict[str, str]) -> Iterator[Sent]:
    """Send the curls of one block in order, ``<id>`` and the follow-up filled in from the
    answers before; abbreviated bodies (``…``) are skipped."""
    last: dict[str, object] = {}
    for curl in curls:
        if curl.body is not None and "…" in curl.body:
            continue  # abbreviated in the README; the example script sends the real body
        path = _with_id(curl.path, last, curl.line)
        content: bytes | None = None
        if curl.body is not None and curl.body.startswith("@"):
            content = files[curl.body[1:]].encode()
        elif curl.body == "<follow_up.table_request>":
            content = json.dumps(last["follow_up"]).encode()
        elif curl.body is not None:  # e.g. a comparison naming the set stored before
            content = _with_id(curl.body, last, curl.line).encode()
        response = _send(client, curl, path, content, files)
        yield Sent(curl, path, content, response)
        if response.headers.get("content-type", "").startswith("application/json"):
            answer = response.json()
            if isinstance(answer, dict):
                if "id" in answer:
                    last["id"] = answer["id"]
                follow = answer.get("follow_up") or {}
                if isinstance(follow, dict) and "table_request" in follow:
                    last["follow_up"] = follow["table_request"]
        location = response.headers.get("location")
        if location:
            last["id"] = location.rstrip("/").rsplit("/", 1)[-1]


@pytest.mark.parametrize(("where", "curls", "files"), EXAMPLES, ids=[e[0] for e in EXAMPLES])
def test_readme_curl_examples_answer_2xx(
    tmp_path: Path, where: str, curls: list[Curl], files: dict[str, str]
) -> None:
    with fresh_client(readme_settings(tmp_path)) as client:
        for sent in replay(client, curls, files):
            curl, path, response = sent.curl, sent.path, sent.response
            assert response.status_code < 400, (
                f"README line {curl.line}: {curl.method} {path} answered "
                f"{response.status_code}: {response.text[:500]}"
            )
            assert "SPEC" not in response.text, (  # answers stand alone, like the docs
                f"README line {curl.line}: the answer cites the internal spec"
            )


def _send(
    client: TestClient, curl: Curl, path: str, content: bytes | None, files: dict[str, str]
) -> Any:
    """Send one README curl: its body, or its ``-F`` form (``@FILE`` from the block's files)."""
    headers = {k: v for k, v in curl.headers.items() if k != "x-api-key"}
    follow = curl.follow
    if not curl.form:
        return client.request(
            curl.method, path, content=content, headers=headers, follow_redirects=follow
        )
    uploads = {k: (v[1:], files[v[1:]].encode()) for k, v in curl.form if v[:1] == "@"}
    fields = {k: v for k, v in curl.form if v[:1] != "@"}
    return client.request(
        curl.method, path, files=uploads, data=fields, headers=headers, follow_redirects=follow
    )


def test_the_openapi_document_stands_alone(client: TestClient) -> None:
    text = client.get("/openapi.json").text
    assert "SPEC" not in text  # the product spec is not part of what users have
    assert "../shared" not in text
