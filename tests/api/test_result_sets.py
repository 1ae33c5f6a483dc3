"""POST/GET /v1/result-sets on SQLite and PostgreSQL: storing, ids, refusals, reading back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.main import create_app
from tests.api.conftest import api_settings
from tests.support import migrate, pg_admin_url, pg_databases, require_postgres
from workers.inline import InlineDispatcher

KEY = "s3cret"
SPHERE = "classic/sphere/d2"
ELLIPSOID = "classic/ellipsoid/d2"  # a ladder applies, no exact v1


@pytest.fixture(scope="module")
def pg_url_factory() -> Iterator[Callable[[], str]]:
    """Fresh PostgreSQL databases (dropped at the end); skip when the server is down."""
    admin = pg_admin_url()
    require_postgres(admin)
    with pg_databases(admin) as create:
        yield create


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.fixture(params=BACKENDS)
def make_client(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[Callable[..., TestClient]]:
    """``make_client(hold=True, **settings)``: the app on a fresh database of the backend."""
    stack: list[Any] = []

    def make(*, hold: bool = True, **overrides: object) -> TestClient:
        if request.param == "postgres":
            overrides.setdefault("database_url", request.getfixturevalue("pg_url_factory")())
        settings = api_settings(tmp_path / f"app{len(stack)}", **overrides)
        (tmp_path / f"app{len(stack)}").mkdir(exist_ok=True)
        migrate(settings.database_url)
        dispatcher = InlineDispatcher(settings)
        dispatcher.hold = hold
        app = create_app(settings, dispatcher=dispatcher)
        dispatcher.app = app
        client = TestClient(app)
        client.__enter__()
        stack.append(client)
        return client

    yield make
    for client in stack:
        client.__exit__(None, None, None)


@pytest.fixture
def client(make_client: Callable[..., TestClient]) -> TestClient:
    return make_client()


def body(**overrides: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "name": "DE",
        "version": "1.0",
        "description": "a test, with commas & ünïcode",
        "reference": "https://doi.org/10.1023/A:1008202821328",
        "contact": "me@example.org",
        "cpu_score": 2345.5,
        "values_are": "f",
        "results": [
            {"function_id": SPHERE, "run": 0, "value": 0.5, "budget": 1000},
            {
                "function_id": SPHERE,
                "run": 1,
                "value": 0.25,
                "budget": 1000,
                "trajectory": {"evaluations": [1, 50, 900], "best": [3.0, 1.0, 0.25]},
            },
            {"function_id": "classic/rastrigin/d2", "run": 0, "value": 1.5, "budget": 500},
        ],
    }
    out.update(overrides)
    return out


def total(client: TestClient) -> int:
    return int(client.get("/v1/result-sets").json()["total"])


def problem(r: Any, status: int, field: str) -> dict[str, Any]:
    assert r.status_code == status, r.text
    assert r.headers["content-type"] == "application/problem+json"
    out: dict[str, Any] = r.json()
    assert out["field"] == field, out
    return out


# ---------------------------------------------------------------------------- storing


def test_a_set_is_stored_once_and_named_by_its_content(client: TestClient) -> None:
    r = client.post("/v1/result-sets", json=body())
    assert r.status_code == 201, r.text
    out = r.json()
    assert r.headers["location"] == out["location"] == f"/v1/result-sets/{out['id']}"
    assert out["id"] == "r" + out["content_sha256"][:23]
    assert (out["n_runs"], out["n_functions"], out["suites"]) == (3, 2, ["classic"])
    assert out["has_trajectories"]
    assert out["source_format"] == "json"
    sphere = next(f for f in out["functions"] if f["function_id"] == SPHERE)
    assert sphere | {} == {
        "function_id": SPHERE,
        "suite": "classic",
        "dim": 2,
        "runs": 2,
        "budget_min": 1000,
        "budget_max": 1000,
        "value_min": 0.25,
        "value_median": 0.375,
        "value_max": 0.5,
        "has_trajectories": True,
    }
    assert out["provenance"]["service"] == "absrank"
    again = client.post("/v1/result-sets", json=body())
    assert again.status_code == 200
    assert again.json()["id"] == out["id"]
    assert again.json()["created_at"] == out["created_at"]
    # the order of the rows is not content; any metadata change is
    shuffled = body(results=list(reversed(body()["results"])))
    assert client.post("/v1/result-sets", json=shuffled).json()["id"] == out["id"]
    other = client.post("/v1/result-sets", json=body(version="1.1"))
    assert other.status_code == 201
    assert other.json()["id"] != out["id"]
    assert total(client) == 2


def test_the_same_runs_as_csv_are_the_same_set(client: TestClient) -> None:
    meta = {k: v for k, v in body().items() if k != "results"}
    rows = body(trajectory=None)["results"]
    rows[1].pop("trajectory")
    json_id = client.post("/v1/result-sets", json=body(results=rows)).json()["id"]
    csv = "function_id,run,value,budget\n" + "".join(
        f"{r['function_id']},{r['run']},{r['value']},{r['budget']}\n" for r in rows
    )
    r = client.post(
        "/v1/result-sets", params=meta, content=csv, headers={"content-type": "text/csv"}
    )
    assert r.status_code == 200, r.text
    assert r.json()["id"] == json_id


def test_the_csv_download_posted_back_is_the_same_set(client: TestClient) -> None:
    created = client.post("/v1/result-sets", json=body()).json()
    r = client.get(f"/v1/result-sets/{created['id']}.csv")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/csv")
    assert r.headers["etag"] == f'"{created["content_sha256"]}"'
    assert "immutable" in r.headers["cache-control"]
    lines = r.text.splitlines()
    assert lines[0] == f"# absrank result set {created['id']} (content sha256 " + (
        f"{created['content_sha256']})"
    )
    query = next(line for line in lines if "re-post" in line).split("?", 1)[1].split(" ")[0]
    back = client.post(
        f"/v1/result-sets?{query}", content=r.content, headers={"content-type": "text/csv"}
    )
    assert back.status_code == 200, back.text
    assert back.json()["id"] == created["id"]
    assert (
        client.get(
            f"/v1/result-sets/{created['id']}.csv", headers={"if-none-match": r.headers["etag"]}
        ).status_code
        == 304
    )


def test_runs_and_trajectories_come_back_exactly(client: TestClient) -> None:
    rows = body()["results"]
    rows[0]["value"] = 0.1 + 0.2
    sid = client.post("/v1/result-sets", json=body(results=rows)).json()["id"]
    out = client.get(f"/v1/result-sets/{sid}", params={"include": "runs"}).json()
    got = {(r["function_id"], r["run"]): r for r in out["runs"]}
    assert got[(SPHERE, 0)]["value"] == 0.30000000000000004
    assert got[(SPHERE, 1)]["trajectory"] == {"evaluations": [1, 50, 900], "best": [3.0, 1.0, 0.25]}
    assert client.get(f"/v1/result-sets/{sid}").json()["runs"] is None


def test_include_runs_is_bounded(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_inline_rows=4)
    sid = client.post("/v1/result-sets", json=body()).json()["id"]  # 3 runs + 3 points
    r = client.get(f"/v1/result-sets/{sid}", params={"include": "runs"})
    assert f"/v1/result-sets/{sid}.csv" in problem(r, 422, "include")["detail"]


def test_a_value_within_the_rounding_tolerance_of_f_star_is_accepted(client: TestClient) -> None:
    rows = [{"function_id": "cec2005/f15/d10", "run": 0, "value": 120 - 1e-9, "budget": 10}]
    assert client.post("/v1/result-sets", json=body(results=rows)).status_code == 201


# ---------------------------------------------------------------------------- refusals


def _row(**kw: Any) -> dict[str, Any]:
    return {"function_id": SPHERE, "run": 0, "value": 1.0, "budget": 10} | kw


REFUSALS = [
    (
        [_row(), _row(run=1, function_id="bbob/f25/i1/d2")],
        {},
        "results.1.function_id",
        "no function",
    ),
    ([_row(value=-0.5)], {}, "results.0.value", "below f* = 0.0"),
    ([_row(value=-0.5)], {"values_are": "error"}, "results.0.value", "below 0"),
    ([_row(budget=0)], {}, "results.0.budget", "greater than or equal to 1"),
    ([_row(), _row(value=2.0)], {}, "results.1.run", "duplicate run 0"),
    (
        [_row(trajectory={"evaluations": [1, 5], "best": [3.0, 2.0]})],
        {},
        "results.0.trajectory",
        "is not the run's value",
    ),
    (
        [_row(trajectory={"evaluations": [1, 11], "best": [3.0, 1.0]})],
        {},
        "results.0.trajectory",
        "beyond the budget",
    ),
    (
        [_row(trajectory={"evaluations": [5, 2], "best": [3.0, 1.0]})],
        {},
        "results.0.trajectory",
        "strictly increasing",
    ),
    (
        [_row(trajectory={"evaluations": [1, 2], "best": [1.0, 3.0]})],
        {},
        "results.0.trajectory",
        "must not increase",
    ),
    ([_row()], {"supersedes": "r" + "0" * 23}, "supersedes", "no result set"),
    ([_row()], {"cpu_id": 999_999, "cpu_score": None}, "cpu_id", "no CPU with id 999999"),
    ([_row()], {"cpu_id": 1}, "cpu_score", "not both"),
    ([_row()], {"value_aggregate": "mean"}, "value_runs", "together"),
]


@pytest.mark.parametrize(("rows", "meta", "field", "words"), REFUSALS)
def test_refusals_name_the_field_and_store_nothing(
    client: TestClient, rows: list[Any], meta: dict[str, Any], field: str, words: str
) -> None:
    out = problem(client.post("/v1/result-sets", json=body(results=rows, **meta)), 422, field)
    assert words in out["detail"]
    assert total(client) == 0


def test_non_finite_values_are_refused(client: TestClient) -> None:
    raw = f'{{"name": "A", "values_are": "f", "results": [{{"function_id": "{SPHERE}", "run": 0, '
    raw += '"value": 1e999, "budget": 10}]}'
    r = client.post("/v1/result-sets", content=raw, headers={"content-type": "application/json"})
    problem(r, 422, "results.0.value")


def test_a_csv_fault_names_the_body_and_line(client: TestClient) -> None:
    csv = "function_id,run,value,budget\nclassic/sphere/d2,0,1,10\nclassic/sphere/d2,1,nan,10\n"
    r = client.post(
        "/v1/result-sets",
        params={"name": "A", "values_are": "f"},
        content=csv,
        headers={"content-type": "text/csv"},
    )
    assert problem(r, 422, "body")["detail"].startswith("body, line 3: value 'nan'")
    r = client.post(
        "/v1/result-sets",
        params={"name": "A", "values_are": "f", "colour": "red"},
        content=csv,
        headers={"content-type": "text/csv"},
    )
    problem(r, 422, "colour")
    r = client.post(
        "/v1/result-sets", params={"name": "A"}, content=csv, headers={"content-type": "text/csv"}
    )
    problem(r, 422, "values_are")
    assert total(client) == 0


def test_too_many_rows_are_refused_before_anything_is_stored(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(max_upload_rows=5)
    many = [_row(run=i) for i in range(6)]
    assert (
        "max_upload_rows = 5"
        in problem(client.post("/v1/result-sets", json=body(results=many)), 413, "results")[
            "detail"
        ]
    )
    points = [_row(trajectory={"evaluations": [1, 2, 3, 4, 5], "best": [1.0] * 5})]
    problem(client.post("/v1/result-sets", json=body(results=points)), 413, "results")
    csv = "function_id,run,value,budget\n" + "".join(
        f"classic/sphere/d2,{i},1,10\n" for i in range(100_000)
    )
    r = client.post(
        "/v1/result-sets",
        params={"name": "A", "values_are": "f"},
        content=csv,
        headers={"content-type": "text/csv"},
    )
    assert "body, line 7: more than 5 rows" in problem(r, 413, "body")["detail"]
    assert total(client) == 0


def _asgi_post(
    app: Any, path: str, chunks: Iterator[bytes], content_type: str
) -> tuple[int, bytes]:
    """POST a body of unknown length (chunked) straight to the ASGI app; return status, body."""
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        chunk = next(chunks, None)
        return {"type": "http.request", "body": chunk or b"", "more_body": chunk is not None}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"name=A&values_are=f",
        "root_path": "",
        "headers": [(b"content-type", content_type.encode()), (b"transfer-encoding", b"chunked")],
        "client": ("127.0.0.1", 1),
        "server": ("testserver", 80),
    }
    asyncio.run(app(scope, receive, send))
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    return status, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def test_a_ten_million_row_csv_is_refused_early_and_nothing_is_stored(
    make_client: Callable[..., TestClient],
) -> None:
    """Sent without a length: the body limit stops reading after max_upload_bytes."""
    limit = 1024 * 1024
    client = make_client(max_upload_bytes=limit)
    produced = 0

    def rows() -> Iterator[bytes]:
        nonlocal produced
        yield b"function_id,run,value,budget\n"
        for start in range(0, 10**7, 1000):
            produced += 1000
            yield "".join(
                f"classic/sphere/d2,{i},1.0,10\n" for i in range(start, start + 1000)
            ).encode()

    status, raw = _asgi_post(client.app, "/v1/result-sets", rows(), "text/csv")
    assert status == 413
    assert f"max_upload_bytes = {limit}".encode() in raw
    assert produced < 10**5  # stopped after about 1 MiB of the 230 MB
    # declared up front: refused before a byte of the body is read
    r = client.post(
        "/v1/result-sets?name=A&values_are=f",
        content=b"x",
        headers={"content-type": "text/csv", "content-length": str(23 * 10**7)},
    )
    assert r.status_code == 413
    assert total(client) == 0


def test_csv_bodies_get_the_upload_limit_json_bodies_the_request_limit(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(max_request_bytes=2048, max_upload_bytes=64 * 1024)
    csv = "function_id,run,value,budget\n" + "".join(
        f"classic/sphere/d2,{i},1.5,10\n" for i in range(500)
    )
    assert 2048 < len(csv) < 64 * 1024
    r = client.post(
        "/v1/result-sets?name=A&values_are=f", content=csv, headers={"content-type": "text/csv"}
    )
    assert r.status_code == 201, r.text
    big = body(results=[_row(run=i) for i in range(100)])
    out = problem(client.post("/v1/result-sets", json=big), 413, "body")
    assert out["detail"] == "request body exceeds max_request_bytes = 2048"


# ---------------------------------------------------------------------------- corrections, keys


def test_a_correction_names_the_set_it_supersedes(client: TestClient) -> None:
    old = client.post("/v1/result-sets", json=body()).json()["id"]
    new = client.post("/v1/result-sets", json=body(version="1.0.1", supersedes=old))
    assert new.status_code == 201
    new_id = new.json()["id"]
    assert new.json()["supersedes"] == old
    read = client.get(f"/v1/result-sets/{old}")
    assert read.json()["superseded_by"] == new_id
    assert read.headers["etag"] == f'"{read.json()["content_sha256"]}.{new_id}"'
    again = client.post("/v1/result-sets", json=body(version="1.0.2", supersedes=old))
    assert new_id in problem(again, 409, "supersedes")["detail"]
    listed = {i["id"]: i["superseded_by"] for i in client.get("/v1/result-sets").json()["items"]}
    assert listed == {old: new_id, new_id: None}


def test_sets_are_immutable(client: TestClient) -> None:
    sid = client.post("/v1/result-sets", json=body()).json()["id"]
    for method in ("PUT", "PATCH", "DELETE"):
        assert client.request(method, f"/v1/result-sets/{sid}", json=body()).status_code == 405
    assert client.get(f"/v1/result-sets/{sid}").status_code == 200


def test_writes_need_a_key_where_keys_exist_reads_do_not(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(api_keys=[KEY])
    problem(client.post("/v1/result-sets", json=body()), 401, "X-API-Key")
    problem(
        client.post("/v1/result-sets", json=body(), headers={"X-API-Key": "no"}), 401, "X-API-Key"
    )
    r = client.post("/v1/result-sets", json=body(), headers={"X-API-Key": KEY})
    assert r.status_code == 201
    assert client.get(r.headers["location"]).status_code == 200
    assert client.get(r.headers["location"] + ".csv").status_code == 200
    assert client.get("/v1/result-sets").json()["total"] == 1


# ---------------------------------------------------------------------------- listing


def test_lists_filter_page_and_put_the_newest_first(client: TestClient) -> None:
    ids = []
    for name, fid in (("A", SPHERE), ("B", "bbob/f1/i1/d2"), ("A", "cec2005/f15/d10")):
        value = 100.0 if fid.startswith("bbob") else 200.0
        rows = [{"function_id": fid, "run": 0, "value": value, "budget": 10}]
        ids.append(client.post("/v1/result-sets", json=body(name=name, results=rows)).json()["id"])
    out = client.get("/v1/result-sets").json()
    assert [i["id"] for i in out["items"]] == ids[::-1]
    assert out["total"] == 3

    def listed(**params: Any) -> list[str]:
        return [i["id"] for i in client.get("/v1/result-sets", params=params).json()["items"]]

    assert listed(algorithm="A") == [ids[2], ids[0]]
    assert listed(suite="bbob") == [ids[1]]
    assert listed(function_id=SPHERE) == [ids[0]]
    assert listed(suite="cec2005", algorithm="B") == []
    page = client.get("/v1/result-sets", params={"limit": 1, "offset": 1}).json()
    assert [i["id"] for i in page["items"]] == [ids[1]]
    assert page["total"] == 3
    problem(client.get("/v1/result-sets", params={"limit": 0}), 422, "limit")
    problem(client.get("/v1/result-sets/r0000000000000000000000a"), 404, "set_id")


def test_a_set_answers_its_etag_with_304(client: TestClient) -> None:
    sid = client.post("/v1/result-sets", json=body()).json()["id"]
    r = client.get(f"/v1/result-sets/{sid}")
    etag = r.headers["etag"]
    assert etag == f'"{r.json()["content_sha256"]}"'
    assert client.get(f"/v1/result-sets/{sid}", headers={"if-none-match": etag}).status_code == 304
    with_runs = client.get(f"/v1/result-sets/{sid}", params={"include": "runs"})
    assert with_runs.headers["etag"] != etag


# ---------------------------------------------------------------------------- queued builds


def test_storing_queues_the_default_table_then_a_ladder_for_values_below_its_samples(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(hold=False)  # tables build inline
    first = client.post(
        "/v1/result-sets", json=body(results=[_row(function_id=ELLIPSOID, value=5.0)])
    ).json()
    assert [t["function_id"] for t in first["queued"]["tables"]] == [ELLIPSOID]
    table = client.get(first["queued"]["tables"][0]["location"]).json()
    assert table["status"] == "ready"
    y_1 = table["summary"]["y_1"]
    assert first["queued"]["ladders"] == []  # 5.0 is above the smallest sample
    below = body(name="B", results=[_row(function_id=ELLIPSOID, value=y_1 / 10)])
    second = client.post("/v1/result-sets", json=below).json()
    assert second["queued"]["tables"] == []
    (ladder,) = second["queued"]["ladders"]
    assert ladder["function_id"] == ELLIPSOID
    assert ladder["reason"] == "below-samples"
    assert ladder["table_ids"][0] == table["id"]
    assert ladder["levels"] == len(ladder["table_ids"])
    third = client.post(
        "/v1/result-sets",
        json=body(name="C", results=[_row(function_id=ELLIPSOID, value=y_1 / 100)]),
    )
    assert third.json()["queued"] == {"tables": [], "ladders": []}  # it exists now


def test_a_table_not_ready_is_decided_when_the_worker_finishes_it(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(hold=True)  # chunks wait, as behind a busy queue
    rows = [
        _row(function_id=ELLIPSOID, value=1e-30),  # far below any sample
        _row(function_id="classic/step/d2", value=1.0),  # a plateau at f*: no ladder
        _row(value=1e-30),  # the sphere: its exact v1 ranks, no ladder is needed
    ]
    out = client.post("/v1/result-sets", json=body(results=rows)).json()
    assert sorted(t["function_id"] for t in out["queued"]["tables"]) == sorted(
        [ELLIPSOID, SPHERE, "classic/step/d2"]
    )
    assert out["queued"]["ladders"] == []  # not knowable yet: the tables are building
    dispatcher = client.app.state.dispatcher  # type: ignore[attr-defined]
    held = list(dispatcher.chunks)
    dispatcher.hold = False
    for table_id, index in held:  # the worker finishes the tables
        dispatcher.enqueue_chunk(table_id, index)
    ladders = {
        fid: client.get(f"/v1/ladders/{fid}/curve.json").status_code
        for fid in (ELLIPSOID, SPHERE, "classic/step/d2")
    }
    assert ladders[ELLIPSOID] == 200  # queued when its domain table became ready, built inline
    assert ladders[SPHERE] != 200
    assert ladders["classic/step/d2"] != 200
    again = client.post("/v1/result-sets", json=body(name="B", results=rows[:1])).json()
    assert again["queued"] == {"tables": [], "ladders": []}


def test_errors_are_compared_with_the_samples_as_f(make_client: Callable[..., TestClient]) -> None:
    client = make_client(hold=False)
    fid = "cec2005/f15/d10"  # f* = 120: an error of 5 is f = 125
    rows = [{"function_id": fid, "run": 0, "value": 5000.0, "budget": 10}]
    out = client.post("/v1/result-sets", json=body(values_are="error", results=rows)).json()
    table = client.get(out["queued"]["tables"][0]["location"]).json()
    y_1 = table["summary"]["y_1"]
    assert out["queued"]["ladders"] == []
    assert y_1 < 120 + 5000
    just_above = [{"function_id": fid, "run": 0, "value": y_1 - 120 + 1e-6, "budget": 10}]
    out = client.post(
        "/v1/result-sets", json=body(name="B", values_are="error", results=just_above)
    )
    assert out.json()["queued"]["ladders"] == []


# ---------------------------------------------------------------------------- uploads


def test_a_csv_upload_is_the_same_set_as_the_csv_body(client: TestClient) -> None:
    csv = (
        "function_id,run,evaluations,value,budget\n"
        f"{SPHERE},0,,0.5,100\n{SPHERE},1,1,2.0,100\n{SPHERE},1,10,0.25,100\n"
    )
    meta = {"name": "PSO", "values_are": "f", "version": "2"}
    body_id = client.post(
        "/v1/result-sets", params=meta, content=csv, headers={"content-type": "text/csv"}
    ).json()["id"]
    r = client.post(
        "/v1/result-sets", data={**meta, "format": "csv"}, files={"file": ("runs.csv", csv)}
    )
    assert r.status_code == 200, r.text
    assert r.json()["id"] == body_id


def test_a_cocoex_archive_is_imported_and_round_trips(client: TestClient, tmp_path: Path) -> None:
    from tests.unit.importers.loggers import run_cocoex, zip_folder

    folder, seen = run_cocoex(tmp_path, functions="1,8", instances="1", dimensions="2")
    data = zip_folder(folder)
    r = client.post(
        "/v1/result-sets",
        data={"format": "coco", "version": "1"},
        files={"file": ("exdata.zip", data, "application/zip")},
    )
    assert r.status_code == 201, r.text
    out = r.json()
    assert (out["name"], out["values_are"], out["source_format"]) == ("seeded-rs", "error", "coco")
    assert sorted(f["function_id"] for f in out["functions"]) == ["bbob/f1/i1/d2", "bbob/f8/i1/d2"]
    runs = client.get(f"/v1/result-sets/{out['id']}", params={"include": "runs"}).json()["runs"]
    for run, want in zip(sorted(runs, key=lambda r: r["function_id"]), seen, strict=True):
        assert run["function_id"] == want.function_id
        assert run["budget"] == len(want.values)
        assert run["value"] == pytest.approx(want.best_after(len(want.values)), rel=1e-9, abs=1e-12)
    csv = client.get(f"/v1/result-sets/{out['id']}.csv")
    again = client.post(
        "/v1/result-sets",
        params={"name": "seeded-rs", "values_are": "error", "version": "1"},
        content=csv.content,
        headers={"content-type": "text/csv"},
    )
    assert again.status_code == 200, again.text
    assert again.json()["id"] == out["id"]


def test_bad_uploads_are_refused_and_store_nothing(client: TestClient) -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("../../etc/evil.info", "x")
    r = client.post(
        "/v1/result-sets",
        data={"format": "coco", "name": "X"},
        files={"file": ("evil.zip", buffer.getvalue())},
    )
    problem(r, 422, "file")
    csv = f"function_id,run,value,budget\n{SPHERE},0,1,10\n"
    problem(
        client.post("/v1/result-sets", data={"format": "xls"}, files={"file": ("a.csv", csv)}),
        422,
        "format",
    )
    no_file = {"format": (None, "csv"), "name": (None, "X")}  # multipart without a file
    problem(client.post("/v1/result-sets", files=no_file), 422, "file")
    problem(
        client.post(
            "/v1/result-sets",
            data={"format": "csv", "name": "X", "values_are": "f", "colour": "red"},
            files={"file": ("a.csv", csv)},
        ),
        422,
        "colour",
    )
    problem(
        client.post(
            "/v1/result-sets", data={"format": "csv", "name": "X"}, files={"file": ("a.csv", csv)}
        ),
        422,
        "values_are",
    )
    assert total(client) == 0


def test_an_upload_over_max_upload_bytes_is_413(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_upload_bytes=4096)
    big = "function_id,run,value,budget\n" + "".join(f"{SPHERE},{i},1.5,10\n" for i in range(400))
    r = client.post(
        "/v1/result-sets",
        data={"format": "csv", "name": "X", "values_are": "f"},
        files={"file": ("a.csv", big)},
    )
    assert problem(r, 413, "body")["detail"] == "request body exceeds max_upload_bytes = 4096"
    assert total(client) == 0


def _zip(members: dict[str, bytes]) -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def test_each_upload_limit_maps_to_its_setting() -> None:
    from dataclasses import fields

    from app.domain.importers import UploadLimits
    from app.services.result_sets import UPLOAD_SETTINGS, upload_limits

    settings = api_settings(
        Path("/nonexistent"),
        max_upload_bytes=10_001,
        max_upload_decompressed_bytes=10_002,
        max_upload_files=10_003,
        max_upload_rows=10_004,
    )
    limits = upload_limits(settings)
    assert set(UPLOAD_SETTINGS) == {f.name for f in fields(UploadLimits)}
    for f in fields(UploadLimits):
        assert getattr(limits, f.name) == getattr(settings, UPLOAD_SETTINGS[f.name])


def test_upload_413s_name_the_setting(make_client: Callable[..., TestClient]) -> None:
    client = make_client(max_upload_decompressed_bytes=4096, max_upload_files=3, max_upload_rows=5)
    meta = {"format": "csv", "name": "X", "values_are": "f"}
    rows = "function_id,run,value,budget\n" + "".join(f"{SPHERE},{i},1,10\n" for i in range(9))
    cases = [
        (_zip({"a.csv": b"0" * 5000}), "max_upload_decompressed_bytes = 4096"),
        (_zip({f"{i}.csv": b"x" for i in range(4)}), "max_upload_files = 3"),
        (rows.encode(), "max_upload_rows = 5"),
    ]
    for data, setting in cases:
        r = client.post("/v1/result-sets", data=meta, files={"file": ("up.zip", data)})
        assert setting in problem(r, 413, "file")["detail"]
    r = client.post(
        "/v1/result-sets",
        params={"name": "X", "values_are": "f"},
        content=rows,
        headers={"content-type": "text/csv"},
    )
    assert "the limit is the setting max_upload_rows = 5" in problem(r, 413, "body")["detail"]
    assert total(client) == 0


def test_a_cut_cocoex_upload_is_refused_naming_file_and_line(
    client: TestClient, tmp_path: Path
) -> None:
    from tests.unit.importers.loggers import run_cocoex

    folder, _ = run_cocoex(tmp_path, functions="1", instances="1", dimensions="2")
    members = {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()
    }
    dat = "data_f1/bbobexp_f1_DIM2.dat"
    lines = members[dat].decode().splitlines()
    e, g, best, *_ = lines[-1].split()
    members[dat] = "\n".join([*lines[:-1], f"{e} {g} {best[:5]}"]).encode()  # +1.83 for +1.83e+02
    r = client.post(
        "/v1/result-sets", data={"format": "coco"}, files={"file": ("exdata.zip", _zip(members))}
    )
    detail = problem(r, 422, "file")["detail"]
    assert detail.startswith(f"{dat}, line {len(lines)}: the last line has no line end")
    assert total(client) == 0


def test_a_nevergrad_value_below_f_star_names_file_and_line(client: TestClient) -> None:
    data = b"loss,optimizer_name,budget,function_id\n0.5,NGOpt,200,classic/sphere/d2\n"
    bad = data + b"-1.0,NGOpt,200,classic/sphere/d2\n"
    r = client.post(
        "/v1/result-sets", data={"format": "nevergrad"}, files={"file": ("ng.csv", bad)}
    )
    detail = problem(r, 422, "file")["detail"]
    assert detail.startswith("ng.csv, line 3: classic/sphere/d2: value -1.0 is below f* = 0.0")
    assert total(client) == 0


def test_a_csv_upload_without_a_name_is_refused_before_it_is_read(client: TestClient) -> None:
    r = client.post(
        "/v1/result-sets",
        data={"format": "csv", "values_are": "f"},
        files={"file": ("runs.csv", "not even a header")},  # never parsed
    )
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "name"
    assert "long CSV does not name" in r.json()["detail"]
