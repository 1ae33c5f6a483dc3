"""The bad-input catalogue: hostile and broken requests are refused cleanly, and store nothing.

Each case is a request a careless or hostile client sends: non-finite and huge numbers, deep
nesting, invalid UTF-8, truncated or duplicated JSON, path traversal, injection strings, wrong
content types, and upload bombs (a zip whose member inflates past the limit, a zip nested in a
zip, members that climb out of the archive, a gzip bomb). Every answer must be a 4xx RFC 9457
problem (``application/problem+json`` with ``status``, ``title`` and ``detail``), never a 5xx,
and the archive and the stored comparisons must be unchanged afterwards.
"""

from __future__ import annotations

import gzip
import io
import tarfile
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from tests.api.conftest import api_settings
from tests.support import migrate
from workers.inline import InlineDispatcher

SPHERE = "classic/sphere/d2"
CSV_HEAD = "function_id,run,value,budget\n"


@dataclass(frozen=True)
class Bad:
    """One hostile request: ``method path`` with a body (JSON text, bytes, or a multipart)."""

    name: str
    method: str
    path: str
    content: bytes | None = None
    content_type: str = "application/json"
    files: dict[str, tuple[str, bytes]] | None = None
    data: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] = field(default_factory=dict)
    statuses: tuple[int, ...] = (400, 404, 405, 409, 413, 415, 422)


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _tar(members: dict[str, bytes], *, symlink: str | None = None) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        if symlink is not None:
            link = tarfile.TarInfo("link.csv")
            link.type = tarfile.SYMTYPE
            link.linkname = symlink
            archive.addfile(link)
    return buffer.getvalue()


RANKS = "/v1/absolute-ranks"
FRIEDMAN = "/v1/tests/friedman"
COMPARISONS = "/v1/comparisons"
SETS = "/v1/result-sets"
UPLOAD = {"format": "coco", "name": "X", "values_are": "error"}
CSV_UPLOAD = {"format": "csv", "name": "X", "values_are": "f"}
ROWS = f"{SPHERE},0,1.5,10\n"


def _upload(name: str, filename: str, data: bytes, meta: dict[str, str] = UPLOAD) -> Bad:
    return Bad(name, "POST", SETS, files={"file": (filename, data)}, data=meta)


def _json(name: str, path: str, text: str | bytes, **kw: object) -> Bad:
    body = text if isinstance(text, bytes) else text.encode()
    return Bad(name, "POST", path, content=body, **kw)  # type: ignore[arg-type]


CATALOGUE: tuple[Bad, ...] = (
    # numbers
    _json("NaN token", RANKS, f'{{"function_id": "{SPHERE}", "values": [NaN]}}'),
    _json("Infinity token", RANKS, f'{{"function_id": "{SPHERE}", "values": [Infinity]}}'),
    _json("-Infinity token", FRIEDMAN, '{"values": [[1, -Infinity], [2, 3], [4, 5]]}'),
    _json("1e400", RANKS, f'{{"function_id": "{SPHERE}", "values": [1e400]}}'),
    _json("400-digit integer", RANKS, f'{{"function_id": "{SPHERE}", "values": [{"9" * 400}]}}'),
    _json("5000-digit integer", RANKS, f'{{"function_id": "{SPHERE}", "values": [{"9" * 5000}]}}'),
    _json(
        "huge budget",
        RANKS,
        f'{{"function_id": "{SPHERE}", "values": [1.0], "budget": 1e308}}',
    ),
    _json("negative runs", RANKS, f'{{"function_id": "{SPHERE}", "values": [1.0], "runs": -1}}'),
    # structure
    _json("deep nesting 10^5", RANKS, "[" * 100_000 + "]" * 100_000),
    _json("deep object nesting", COMPARISONS, '{"a":' * 20_000 + "1" + "}" * 20_000),
    _json("nested values", RANKS, f'{{"function_id": "{SPHERE}", "values": [[[[1.0]]]]}}'),
    _json("truncated JSON", COMPARISONS, '{"results": [{"algorithm": "A", "prob'),
    _json("empty body", COMPARISONS, b""),
    _json("a JSON string", COMPARISONS, '"results"'),
    _json("null", RANKS, "null"),
    _json("trailing garbage", RANKS, f'{{"function_id": "{SPHERE}", "values": [1.0]}} xyz'),
    _json("wrong types", FRIEDMAN, '{"values": "[[1, 2], [3, 4]]"}'),
    _json("10^4 element matrix row", FRIEDMAN, '{"values": [[' + ",".join(["1"] * 10_000) + "]]}"),
    # encodings
    _json("invalid UTF-8", RANKS, b'{"function_id": "\xff\xfe\xfa", "values": [1.0]}'),
    _json("lone surrogate escape", RANKS, b'{"function_id": "\\ud800", "values": [1.0]}'),
    _json("NUL in a string", RANKS, b'{"function_id": "classic/sphere\\u0000/d2", "values": [1]}'),
    # decoded as JSON text, not refused: json.loads detects UTF-16/32 and a BOM (RFC 8259 §8.1
    # lets a parser ignore the BOM); the answer is the same as for the UTF-8 body
    _json(
        "UTF-16 body",
        RANKS,
        f'{{"function_id": "{SPHERE}", "values": [1.0]}}'.encode("utf-16"),
        statuses=(200,),
    ),
    _json(
        "BOM",
        RANKS,
        b"\xef\xbb\xbf" + f'{{"function_id": "{SPHERE}", "values": [1]}}'.encode(),
        statuses=(200,),
    ),
    # ids: traversal and injection
    Bad("traversal in a path id", "GET", "/v1/tables/..%2F..%2Fetc%2Fpasswd"),
    Bad("dot segments", "GET", "/v1/functions/../../../etc/passwd"),
    Bad("SQL injection in an id", "GET", "/v1/comparisons/' OR '1'='1"),
    Bad("SQL injection in a query", "GET", "/v1/functions", params={"suite": "bbob' OR 1=1 --"}),
    _json(
        "SQL injection in a function id", RANKS, '{"function_id": "x\' OR 1=1 --", "values": [1]}'
    ),
    _json("script in a name", SETS, '{"name": "<script>alert(1)</script>", "runs": []}'),
    _json("template injection", RANKS, '{"function_id": "${jndi:ldap://x}{{7*7}}", "values": [1]}'),
    _json("very long id", RANKS, '{"function_id": "' + "a" * 100_000 + '", "values": [1]}'),
    # media types
    _json(
        "text/plain JSON",
        RANKS,
        f'{{"function_id": "{SPHERE}", "values": [1]}}',
        content_type="text/plain",
    ),
    _json("XML", COMPARISONS, "<results/>", content_type="application/xml"),
    _json(
        "form body on a JSON route",
        FRIEDMAN,
        "values=1",
        content_type="application/x-www-form-urlencoded",
    ),
    _json(
        "no content type", RANKS, f'{{"function_id": "{SPHERE}", "values": [1]}}', content_type=""
    ),
    # uploads
    _upload(
        "zip bomb (one member inflates past the limit)",
        "bomb.zip",
        _zip({"a.csv": b"0" * 3_000_000}),
    ),
    _upload("zip in a zip", "nested.zip", _zip({"inner.zip": _zip({"a.csv": b"0" * 3_000_000})})),
    _upload("zip member climbing out", "evil.zip", _zip({"../../etc/evil.info": b"x"})),
    _upload("absolute member path", "abs.zip", _zip({"/etc/evil.info": b"x"})),
    _upload("tar member climbing out", "evil.tgz", _tar({"../evil.info": b"x"})),
    _upload("tar symlink out", "link.tgz", _tar({}, symlink="/etc/passwd")),
    _upload("gzip bomb", "bomb.tgz", gzip.compress(b"\0" * 3_000_000)),
    _upload("not a zip", "fake.zip", b"PK\x03\x04 this is not a zip at all"),
    _upload("too many members", "many.zip", _zip({f"{i}.csv": b"x" for i in range(60)})),
    _upload("CSV with a NUL", "a.csv", (CSV_HEAD + ROWS + "\0\n").encode(), CSV_UPLOAD),
    _upload(
        "CSV with invalid UTF-8", "a.csv", (CSV_HEAD).encode() + b"\xff\xfe,0,1,10\n", CSV_UPLOAD
    ),
    _upload(
        "CSV with a NaN value", "a.csv", (CSV_HEAD + f"{SPHERE},0,nan,10\n").encode(), CSV_UPLOAD
    ),
    _upload(
        "CSV formula injection name",
        "a.csv",
        (CSV_HEAD + "=cmd|' /C calc'!A0,0,1,10\n").encode(),
        CSV_UPLOAD,
    ),
)


@pytest.fixture(scope="module")
def hostile_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    from app.main import create_app

    tmp = tmp_path_factory.mktemp("bad-inputs")
    config = api_settings(
        tmp,
        max_request_bytes=4 * 1024 * 1024,
        max_upload_decompressed_bytes=1024 * 1024,
        max_upload_files=50,
    )
    migrate(config.database_url)
    dispatcher = InlineDispatcher(config)
    dispatcher.hold = True
    app = create_app(config, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app, raise_server_exceptions=False) as client:
        yield client


def _stored(client: TestClient) -> dict[str, int]:
    """Rows of every table of the app's database (nothing half written shows here too)."""
    engine = client.app.state.engine  # type: ignore[attr-defined]
    with engine.connect() as connection:
        return {
            name: connection.execute(
                sa.select(sa.func.count()).select_from(sa.table(name))
            ).scalar_one()
            for name in sa.inspect(connection).get_table_names()
            if name != "alembic_version"
        }


def _send(client: TestClient, bad: Bad) -> object:
    headers = {"content-type": bad.content_type} if bad.content is not None else {}
    if bad.content is not None and not bad.content_type:
        headers = {}
    send: Callable[..., object] = getattr(client, bad.method.lower())
    if bad.files is not None:
        return send(bad.path, files=bad.files, data=bad.data, params=bad.params)
    if bad.content is not None:
        return client.request(
            bad.method, bad.path, content=bad.content, headers=headers, params=bad.params
        )
    return send(bad.path, params=bad.params)


@pytest.mark.parametrize("bad", CATALOGUE, ids=[b.name for b in CATALOGUE])
def test_a_bad_request_is_a_4xx_problem_and_stores_nothing(
    hostile_client: TestClient, bad: Bad
) -> None:
    before = _stored(hostile_client)
    response = _send(hostile_client, bad)
    status = response.status_code  # type: ignore[attr-defined]
    assert status in bad.statuses, f"{bad.name}: {status} {response.text[:300]}"  # type: ignore[attr-defined]
    if status < 400:  # an accepted encoding: the same answer as the plain request's
        assert _stored(hostile_client) == before
        return
    assert response.headers["content-type"].startswith("application/problem+json"), bad.name  # type: ignore[attr-defined]
    problem = response.json()  # type: ignore[attr-defined]
    assert problem["status"] == status
    assert problem["title"]
    assert problem["detail"]
    assert _stored(hostile_client) == before, f"{bad.name} stored something"


def test_the_stored_counts_see_a_stored_set(hostile_client: TestClient) -> None:
    """The check above can fail: a good upload changes what :func:`_stored` counts."""
    before = _stored(hostile_client)
    assert before, "no tables seen"
    response = hostile_client.post(
        SETS,
        files={"file": ("a.csv", (CSV_HEAD + f"{SPHERE},0,0.75,10\n").encode())},
        data={**CSV_UPLOAD, "name": "control"},
    )
    assert response.status_code == 201, response.text
    assert _stored(hostile_client) != before
