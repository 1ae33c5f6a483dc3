"""API keys (issue 17 §3): stored as SHA-256, compared in constant time, each with a role; writes
follow the deployment's write policy; ``absrank key new`` makes a key."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import ValidationError
from typer.testing import CliRunner

from app.api import keys
from app.cli import app as cli
from app.config import Settings, key_sha256
from tests.api.conftest import api_app, api_settings

READ, SUBMIT, OPERATOR = "r-key-1", "s-key-2", "o-key-3"
KEYS = [
    {"sha256": key_sha256(READ), "role": "read", "name": "reader"},
    {"sha256": key_sha256(SUBMIT), "role": "submit", "name": "lab-a"},
    {"sha256": key_sha256(OPERATOR), "role": "operator", "name": "ops"},
]
TABLE = {"function_id": "classic/sphere/d2", "log2n": 10}
CPU = {
    "name": "Test CPU 9000",
    "score": 1234,
    "source": "a made-up rating",
    "source_date": "2026-11-30",
}
RANKING = {
    "scores": [
        {"problem": p, "algorithm": a, "run": r, "indicator": "igd", "value": v + r + 2 * i}
        for i, p in enumerate(("p1", "p2"))
        for a, v in (("A", 1.0), ("B", 2.0))
        for r in range(2)
    ]
}


def _client(tmp_path: Path, **overrides: object) -> TestClient:
    return TestClient(api_app(tmp_path, **overrides))


@pytest.fixture
def keyed(tmp_path: Path) -> Iterator[TestClient]:
    with _client(tmp_path, api_keys=KEYS) as c:
        yield c


def test_the_stored_hash_is_sha256_of_the_utf8_key() -> None:
    # references: `printf 's3cret' | sha256sum`, `printf 'clé' | sha256sum` (UTF-8 shell)
    assert (
        key_sha256("s3cret") == "1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0"
    )
    assert key_sha256("clé") == "51cbcf30514d0802eb5c60a018f384ea3fb9b69307c554ee63ecb43177594de4"


def test_only_digests_are_kept(tmp_path: Path) -> None:
    access = keys.Access(api_settings(tmp_path, api_keys=KEYS))
    assert [k.digest for k in access.keys] == [hashlib.sha256(k.encode()).digest() for k in
                                               (READ, SUBMIT, OPERATOR)]  # fmt: skip
    assert all(SUBMIT not in repr(k) for k in access.keys)


@pytest.mark.parametrize("presented", [READ, OPERATOR, "wrong"])
def test_every_configured_digest_is_compared_in_constant_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, presented: str
) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(keys.hmac, "compare_digest", counting)
    access = keys.Access(api_settings(tmp_path, api_keys=KEYS))
    found = access.lookup(presented)
    # the first key matching does not stop the loop: every digest is compared, whatever matched
    assert len(calls) == len(KEYS)
    assert {b for _, b in calls} == {bytes.fromhex(k["sha256"]) for k in KEYS}
    assert all(a == hashlib.sha256(presented.encode()).digest() for a, _ in calls)
    assert (found.name if found else None) == {READ: "reader", OPERATOR: "ops"}.get(presented)


def test_keys_come_from_the_environment_as_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABSRANK_API_KEYS", json.dumps(KEYS[:2]))
    monkeypatch.setenv("ABSRANK_WRITE_POLICY", '{"comparisons": "submit"}')
    monkeypatch.setenv("ABSRANK_ENVIRONMENT", "production")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    assert [(k.name, k.role) for k in settings.api_keys] == [
        ("reader", "read"),
        ("lab-a", "submit"),
    ]  # type: ignore[union-attr]
    assert settings.write_policy.comparisons == "submit"
    assert settings.write_policy.result_sets == "submit"  # the other defaults stay


@pytest.mark.parametrize(
    ("api_keys", "message"),
    [
        (["plain"], "plain API keys are accepted only in dev and test"),
        ([KEYS[0], {**KEYS[1], "name": "reader"}], "two API keys have the same name"),
        ([KEYS[0], {**KEYS[1], "sha256": KEYS[0]["sha256"]}], "two API keys have the same sha256"),
        ([{**KEYS[0], "sha256": "ABC"}], "String should match pattern"),
        ([{**KEYS[0], "role": "admin"}], "Input should be 'read', 'submit' or 'operator'"),
    ],
)
def test_bad_key_settings_are_refused(api_keys: list[object], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        Settings(environment="production", api_keys=api_keys)  # type: ignore[arg-type]


def test_plain_keys_stay_accepted_in_dev_and_test_as_operators(tmp_path: Path) -> None:
    access = keys.Access(api_settings(tmp_path, api_keys=["s3cret"]))
    key = access.lookup("s3cret")
    assert key is not None
    assert key.role == "operator"
    assert key.name == "plain-" + key_sha256("s3cret")[:8]


def test_tables_need_a_submit_key(keyed: TestClient) -> None:
    assert keyed.post("/v1/tables", json=TABLE).status_code == 401
    wrong = keyed.post("/v1/tables", json=TABLE, headers={"X-API-Key": "nope"})
    assert wrong.status_code == 401
    assert wrong.json()["detail"] == "the X-API-Key header holds no valid key"
    lesser = keyed.post("/v1/tables", json=TABLE, headers={"X-API-Key": READ})
    assert lesser.status_code == 403
    assert lesser.headers["content-type"] == "application/problem+json"
    problem = lesser.json()
    assert problem["type"].endswith("/forbidden")
    assert problem["field"] == "X-API-Key"
    assert "role read" in problem["detail"]
    assert "write_policy.tables" in problem["detail"]
    for key in (SUBMIT, OPERATOR):
        assert keyed.post("/v1/tables", json=TABLE, headers={"X-API-Key": key}).status_code in (
            200,
            202,
        )


def test_the_cpu_registry_needs_an_operator(keyed: TestClient) -> None:
    assert keyed.post("/v1/cpus", json=CPU, headers={"X-API-Key": SUBMIT}).status_code == 403
    assert keyed.post("/v1/cpus", json=CPU, headers={"X-API-Key": OPERATOR}).status_code == 201


def test_anonymous_reads_are_always_allowed(keyed: TestClient) -> None:
    assert keyed.get("/v1/functions?limit=1").status_code == 200
    assert keyed.get("/v1/tables").status_code == 200


def test_only_keys_the_policy_allows_queue_builds_from_rank_requests(keyed: TestClient) -> None:
    body = {"function_id": "classic/rastrigin/d2", "values": [1.0]}  # no exact form: a table
    read = keyed.post("/v1/absolute-ranks", json=body, headers={"X-API-Key": READ})
    assert read.status_code == 409
    assert read.json()["type"].endswith("/table-not-built")  # nothing queued for a read key
    submit = keyed.post("/v1/absolute-ranks", json=body, headers={"X-API-Key": SUBMIT})
    assert submit.status_code in (200, 409)
    assert not submit.json().get("type", "").endswith("/table-not-built")


def test_the_write_policy_is_the_deployments(tmp_path: Path) -> None:
    policy = {"comparisons": "submit", "pareto_rankings": "operator", "tables": "read"}
    ranking = RANKING
    comparison = {
        "results": [
            {"algorithm": a, "problem": p, "run": 0, "value": v}
            for p in ("p1", "p2", "p3")
            for a, v in (("A", 1.0), ("B", 2.0))
        ]
    }
    with _client(tmp_path, api_keys=KEYS, write_policy=policy) as c:
        assert c.post("/v1/comparisons", json=comparison).status_code == 401
        by_reader = c.post("/v1/comparisons", json=comparison, headers={"X-API-Key": READ})
        assert by_reader.status_code == 403
        by_lab = c.post("/v1/comparisons", json=comparison, headers={"X-API-Key": SUBMIT})
        assert by_lab.status_code == 201, by_lab.text
        assert (
            c.post("/v1/pareto-rankings", json=ranking, headers={"X-API-Key": SUBMIT}).status_code
            == 403
        )
        assert (
            c.post("/v1/pareto-rankings", json=ranking, headers={"X-API-Key": OPERATOR}).status_code
            == 201
        )
        # tables: "read" — any valid key
        assert c.post("/v1/tables", json=TABLE, headers={"X-API-Key": READ}).status_code in (
            200,
            202,
        )


def test_the_public_defaults_leave_comparisons_and_rankings_open(keyed: TestClient) -> None:
    ranking = RANKING
    assert keyed.post("/v1/pareto-rankings", json=ranking).status_code == 201
    assert keyed.post("/v1/result-sets", json={}).status_code == 401  # result sets: submit


def test_without_keys_every_write_is_open(tmp_path: Path) -> None:
    with _client(tmp_path) as c:
        assert c.post("/v1/cpus", json=CPU).status_code == 201
        # a key sent to a deployment without keys is ignored
        assert c.post("/v1/tables", json=TABLE, headers={"X-API-Key": "x"}).status_code in (
            200,
            202,
        )


def test_key_new_prints_a_key_once_and_its_settings_entry(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["key", "new", "--role", "submit", "--name", "lab-b"])
    assert result.exit_code == 0, result.output
    key = re.search(r"^key: (\S+)$", result.output, re.MULTILINE)
    line = re.search(r"^ABSRANK_API_KEYS='(.+)'$", result.output, re.MULTILINE)
    assert key is not None
    assert line is not None
    entries = json.loads(line[1])
    assert entries == [{"sha256": key_sha256(key[1]), "role": "submit", "name": "lab-b"}]
    assert len(key[1]) >= 40  # 32 random bytes
    with _client(tmp_path, api_keys=entries) as c:
        assert c.post("/v1/tables", json=TABLE, headers={"X-API-Key": key[1]}).status_code in (
            200,
            202,
        )
    again = CliRunner().invoke(cli, ["key", "new"])
    assert key[1] not in again.output  # a fresh key each time
    assert '"role": "submit"' in again.output  # the default role
