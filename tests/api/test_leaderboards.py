"""GET /v1/leaderboards: archived sets by absolute rank, on SQLite and PostgreSQL.

References are independent of the service: the exact v1 of BBOB f1 (a ball inside the box),
``scipy.stats.mannwhitneyu`` for the pairs, ``scipy.stats.friedmanchisquare`` for the suite.
"""

from __future__ import annotations

import math
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
import pytest
from fastapi.testclient import TestClient
from scipy import stats
from sqlalchemy.engine import make_url
from sqlalchemy.orm import Session, sessionmaker

from app.domain.functions import get_function
from app.main import create_app
from tests.api.conftest import InlineDispatcher, api_settings
from tests.archive_support import store_set
from tests.support import migrate

PG_ADMIN = os.environ.get(
    "ABSRANK_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
F = [f"bbob/f1/i{i}/d2" for i in range(1, 6)]  # sphere: exact v1, no table needed
# the suite board of F: instances 1-5 of f1 only
SUITE_F = {"suite": "bbob", "dim": 2, "instances": "1-5", "functions": "f1"}


def _libpq(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
    ]
)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'lb.db'}"
        return
    name = f"absrank_test_{secrets.token_hex(6)}"
    try:
        with psycopg.connect(_libpq(PG_ADMIN), autocommit=True, connect_timeout=3) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL not reachable: {exc}")
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    try:
        yield make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq(PG_ADMIN), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def lb(database_url: str, tmp_path: Path) -> Iterator[tuple[TestClient, InlineDispatcher]]:
    settings = api_settings(tmp_path, database_url=database_url)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        yield c, dispatcher


def _sm(client: TestClient) -> sessionmaker[Session]:
    return client.app.state.sessionmaker  # type: ignore[attr-defined, no-any-return]


def _board(client: TestClient, fid: str, **params: Any) -> dict[str, Any]:
    r = client.get(f"/v1/leaderboards/{fid}", params=params)
    assert r.status_code == 200, r.text
    return r.json()


def _by_id(board: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["set_id"]: e for e in board["entries"]}


def _sphere_v(error: float, budget: int, dim: int = 2) -> float:
    """Exact v_c of BBOB f1 at ``f* + error``: a ball of radius sqrt(error) inside [-5, 5]^d."""
    ball = math.pi ** (dim / 2) / math.gamma(dim / 2 + 1) * error ** (dim / 2)
    v1 = ball / 10.0**dim
    return -math.expm1(budget * math.log1p(-v1))


def test_median_of_three_runs_is_ranked_as_the_exact_order_statistic(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    runs = [1e-3, 4e-3, 2e-3]
    sid = store_set(_sm(client), "DE", {F[0]: runs}, values_are="error", budget=100)
    board = _board(client, F[0])
    (entry,) = board["entries"]
    assert entry["set_id"] == sid
    assert entry["status"] == "final"
    assert entry["runs"] == 3
    assert entry["value"] == 2e-3
    assert entry["budget"] == 100
    p = _sphere_v(2e-3, 100)
    expected = 3 * p**2 * (1 - p) + p**3  # P(2nd smallest of 3 <= t)
    assert entry["absolute"]["log10_v"] == pytest.approx(math.log10(expected), rel=1e-9)
    assert entry["absolute"]["source"] == "analytic"
    assert entry["absolute"]["tables"] == []
    assert entry["relative_rank"] == 1.0
    assert board["significance"]["pairs"] == []


def test_pairs_match_scipy_mannwhitneyu_with_holm(lb: tuple[TestClient, InlineDispatcher]) -> None:
    client, _ = lb
    rng = np.random.default_rng(7)
    samples = {
        "A": rng.uniform(1e-4, 1e-3, 8),
        "B": rng.uniform(5e-4, 5e-3, 6),
        "C": rng.uniform(1e-2, 2e-2, 7),
    }
    ids = {
        name: store_set(_sm(client), name, {F[0]: x.tolist()}, values_are="error")
        for name, x in samples.items()
    }
    board = _board(client, F[0])
    sig = board["significance"]
    assert sig["status"] == "computed"
    assert sig["adjustment"] == "holm"
    f_opt = get_function(F[0]).f_opt
    raw = {}
    for pair in sig["pairs"]:
        a = next(n for n, i in ids.items() if i == pair["a"])
        b = next(n for n, i in ids.items() if i == pair["b"])
        ref = stats.mannwhitneyu(samples[a] + f_opt, samples[b] + f_opt, method="exact")
        assert pair["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
        assert pair["statistic"] == ref.statistic
        assert pair["log10_p_value"] == pytest.approx(math.log10(ref.pvalue), rel=1e-9)
        raw[(a, b)] = ref.pvalue
    # Holm by hand: sorted p times (m - i), cumulative max, capped at 1
    order = sorted(raw, key=raw.get)  # type: ignore[arg-type]
    holm, running = {}, 0.0
    for i, key in enumerate(order):
        running = max(running, min(1.0, (len(order) - i) * raw[key]))
        holm[key] = running
    for pair in sig["pairs"]:
        a = next(n for n, i in ids.items() if i == pair["a"])
        b = next(n for n, i in ids.items() if i == pair["b"])
        assert pair["p_adjusted"] == pytest.approx(holm[(a, b)], rel=1e-9)
        assert pair["significant"] == (holm[(a, b)] < 0.05)
    # ordered by absolute rank: A (smallest median error) first
    assert [e["name"] for e in board["entries"]] == ["A", "B", "C"]
    assert [e["relative_rank"] for e in board["entries"]] == [1.0, 2.0, 3.0]


def _snapshot(client: TestClient) -> dict[str, dict[str, Any]]:
    """Every set's absolute rank on every function and over the suite."""
    out: dict[str, dict[str, Any]] = {}
    for fid in F:
        for sid, e in _by_id(_board(client, fid)).items():
            out.setdefault(sid, {})[fid] = e["absolute"]
    suite = client.get("/v1/leaderboards", params=SUITE_F).json()
    for e in suite["entries"]:
        out[e["set_id"]]["suite"] = e["mean_log10_v"]
    return out


def _order(a: dict[str, Any], b: dict[str, Any]) -> int:
    la = -math.inf if a["log10_v"] is None else a["log10_v"]
    lb_ = -math.inf if b["log10_v"] is None else b["log10_v"]
    return (la > lb_) - (la < lb_)


def test_adding_sets_never_changes_another_sets_absolute_rank_or_order(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    rng = np.random.default_rng(12)
    before: dict[str, dict[str, Any]] = {}
    for k in range(7):
        covered = F if k % 2 == 0 else F[: 2 + k % 3]
        runs = {
            fid: (10.0 ** rng.uniform(-5, -1, size=int(rng.integers(1, 6)))).tolist()
            for fid in covered
        }
        published = k == 5
        store_set(
            _sm(client),
            f"S{k}",
            {f: r[:1] for f, r in runs.items()} if published else runs,
            values_are="error",
            budget=int(rng.choice([10, 100, 1000])),
            value_aggregate="mean" if published else None,
            value_runs=25 if published else None,
        )
        after = _snapshot(client)
        assert len(after) == k + 1  # the new set is never missed (answers are cached by state)
        for sid, ranks in before.items():
            for fid, rank in ranks.items():
                assert after[sid][fid] == rank, (k, sid, fid)  # bit-identical JSON
        for fid in F:
            old = [s for s in before if fid in before[s]]
            for i, a in enumerate(old):
                for b in old[i + 1 :]:
                    assert _order(after[a][fid], after[b][fid]) == _order(
                        before[a][fid], before[b][fid]
                    )
        before = after
    assert len(before) == 7


def _trio(client: TestClient) -> dict[str, Any]:
    """A beats B on f1/i1..i3, B beats A on i4, i5; C sits above both on i1..i3 and between
    them on i4, i5: Friedman's average ranks put A ahead without C and B ahead with it."""
    sm = _sm(client)
    a = {f: [0.01] for f in F[:3]} | {f: [0.03] for f in F[3:]}
    b = {f: [0.02] for f in F[:3]} | {f: [0.01] for f in F[3:]}
    ids = [store_set(sm, "A", a, values_are="error"), store_set(sm, "B", b, values_are="error")]
    suite_before = client.get("/v1/leaderboards", params=SUITE_F).json()
    c = {f: [0.001] for f in F[:3]} | {f: [0.02] for f in F[3:]}
    store_set(sm, "C", c, values_are="error")
    suite_after = client.get("/v1/leaderboards", params=SUITE_F).json()
    return {"ids": ids, "before": suite_before, "after": suite_after}


def test_the_relative_column_flips_where_niia_predicts_the_absolute_does_not(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    got = _trio(client)
    a, b = got["ids"]

    def avg(suite: dict[str, Any]) -> dict[str, float]:
        fam = suite["family"]
        assert fam["status"] == "computed"
        return dict(zip(fam["sets"], fam["average_ranks"], strict=True))

    assert avg(got["before"])[a] < avg(got["before"])[b]  # A ahead of B
    assert avg(got["after"])[a] > avg(got["after"])[b]  # C flipped them
    mean = {
        when: {e["set_id"]: e["mean_log10_v"] for e in got[when]["entries"]}
        for when in ("before", "after")
    }
    assert mean["before"][a] == mean["after"][a]
    assert mean["before"][b] == mean["after"][b]
    # the same Friedman statistic as scipy on the log10 v matrix (functions x sets)
    fam = got["after"]["family"]
    boards = [_by_id(_board(client, f)) for f in F]
    matrix = [[boards[i][s]["absolute"]["log10_v"] for s in fam["sets"]] for i in range(5)]
    ref = stats.friedmanchisquare(*np.array(matrix).T)
    assert fam["friedman"]["statistic"] == pytest.approx(ref.statistic, rel=1e-12)
    assert fam["friedman"]["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert fam["posthoc"]["procedure"] == "nemenyi"


def test_budget_rules_trajectories_and_exclusions(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    sm = _sm(client)
    traj = store_set(
        sm,
        "T",
        {F[0]: [1e-4, 2e-4, 3e-4]},
        values_are="error",
        budget=1000,
        trajectories={
            F[0]: [
                [(1, 5.0), (10, 0.5), (100, 1e-2), (1000, 1e-4)],
                [(1, 4.0), (50, 0.4), (1000, 2e-4)],
                [(3, 3.0), (20, 0.3), (1000, 3e-4)],
            ]
        },
    )
    plain = store_set(sm, "P", {F[0]: [1e-3]}, values_are="error", budget=1000)
    short = store_set(sm, "S", {F[0]: [1e-2]}, values_are="error", budget=50)
    old = store_set(sm, "O", {F[0]: [1.0]}, values_are="error", budget=1000)
    store_set(sm, "O", {F[0]: [0.9]}, values_are="error", budget=1000, supersedes=old)

    final = _board(client, F[0])
    assert {e["set_id"]: e["budget"] for e in final["entries"]}[short] == 50
    assert [x["reason"] for x in final["excluded"]] == ["superseded"]

    at50 = _board(client, F[0], budget=50)
    entries = _by_id(at50)
    assert entries[traj]["budget"] == 50
    assert entries[traj]["value"] == 0.4
    assert short in entries
    reasons = {x["set_id"]: x["reason"] for x in at50["excluded"]}
    assert reasons[plain] == "no-trajectories"
    assert reasons[old] == "superseded"

    at2 = _board(client, F[0], budget=2)
    assert {x["set_id"]: x["reason"] for x in at2["excluded"]}[traj] == "no-record-within-budget"
    at5000 = _board(client, F[0], budget=5000)
    assert {x["set_id"]: x["reason"] for x in at5000["excluded"]}[plain] == "budget-above-final"


def test_published_means_are_ranked_as_means_and_not_tested(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    sm = _sm(client)
    pub = store_set(
        sm, "CEC", {F[0]: [1e-3]}, values_are="error", value_aggregate="mean", value_runs=25
    )
    runs = store_set(sm, "R", {F[0]: [1e-3, 2e-3, 3e-3]}, values_are="error")
    entries = _by_id(_board(client, F[0]))
    assert entries[pub]["published"]
    assert entries[pub]["aggregate"] == "mean"
    assert entries[pub]["runs"] == 25
    assert not entries[pub]["tested"]
    assert entries[pub]["relative_rank"] is None
    assert "not comparable" in entries[pub]["note"]
    assert entries[runs]["relative_rank"] == 1.0
    # the same rank as POST /v1/absolute-ranks of a mean of 25 runs
    r = client.post(
        "/v1/absolute-ranks",
        json={
            "function_id": F[0],
            "values": [1e-3],
            "values_are": "error",
            "runs": 25,
            "aggregate": "mean",
            "budget": 1000,
        },
    )
    assert entries[pub]["absolute"]["log10_v"] == r.json()["results"][0]["log10_v"]
    means = _by_id(_board(client, F[0], aggregate="mean"))
    assert means[pub]["relative_rank"] is not None
    assert means[pub]["note"] is not None


def test_provisional_while_the_default_table_builds_then_final(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, dispatcher = lb
    fid = "bbob/f2/i1/d2"
    sid = store_set(_sm(client), "A", {fid: [1e4, 2e4, 3e4]})
    dispatcher.hold = True
    board = _board(client, fid)
    (entry,) = board["entries"]
    assert entry["status"] == "provisional"
    assert entry["absolute"] is None
    assert entry["awaiting"]["kind"] == "default-table"
    assert entry["awaiting"]["location"].startswith("/v1/tables/t")
    table_id = entry["awaiting"]["table_id"]
    for index in range(4):  # the worker catches up
        dispatcher.hold = False
        client.app.state.dispatcher.enqueue_chunk(table_id, index)  # type: ignore[attr-defined]
    client.app.state.dispatcher.enqueue_merge(table_id)  # type: ignore[attr-defined]
    (entry,) = _board(client, fid)["entries"]
    assert entry["set_id"] == sid
    assert entry["status"] == "final"
    assert entry["absolute"]["source"] == "table"
    assert entry["absolute"]["tables"] == [table_id]


def test_values_below_the_samples_wait_for_the_ladder(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    fid = "bbob/f2/i1/d2"
    shallow = store_set(_sm(client), "shallow", {fid: [1e6]}, values_are="error")
    _board(client, fid)  # builds the domain table; no archived value needs the ladder yet
    # stored behind the archive's back (the repository alone): nothing queues its ladder
    deep = store_set(_sm(client), "deep", {fid: [1e-6]}, values_are="error")
    board = _board(client, fid)
    entries = _by_id(board)
    assert entries[shallow]["status"] == "final"
    assert entries[deep]["status"] == "provisional"
    assert entries[deep]["awaiting"]["kind"] == "ladder"
    assert entries[deep]["awaiting"]["table_request"]["ladder"] is True
    assert entries[deep]["absolute"]["method"].startswith("tail-")  # a bound meanwhile
    assert not any("regions='nested'" in w for w in board["warnings"])


@pytest.mark.parametrize(
    ("url", "status", "field"),
    [
        ("/v1/leaderboards/bbob/f25/i1/d2", 404, "function_id"),
        ("/v1/leaderboards/bbob/f1/i1/d2?budget=0", 422, "budget"),
        ("/v1/leaderboards/bbob/f1/i1/d2?aggregate=order", 422, "aggregate"),
        ("/v1/leaderboards?suite=bbob", 422, "dim"),
        ("/v1/leaderboards?suite=nope&dim=2", 422, "suite"),
        ("/v1/leaderboards?suite=bbob&dim=2&posthoc=li", 422, "posthoc"),
        ("/v1/leaderboards?suite=bbob&dim=7", 422, "dim"),
        ("/v1/leaderboards?suite=bbob&dim=2&functions=f99", 422, "functions"),
        ("/v1/leaderboards?suite=bbob&dim=2&instances=9-1", 422, "instances"),
        ("/v1/leaderboards?suite=bbob&dim=2&instances=x", 422, "instances"),
    ],
)
def test_bad_requests_are_problems(url: str, status: int, field: str, tmp_path: Path) -> None:
    settings = api_settings(tmp_path)
    migrate(settings.database_url)
    with TestClient(create_app(settings, dispatcher=InlineDispatcher(settings))) as client:
        r = client.get(url)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["field"] == field


def test_anonymous_on_a_keyed_deployment_sees_what_is_awaited(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, api_keys=["s3cret"])
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as client:
        fid = "bbob/f2/i1/d2"
        store_set(_sm(client), "A", {fid: [1e4]})
        (entry,) = _board(client, fid)["entries"]
        assert entry["status"] == "provisional"
        assert entry["awaiting"]["status"] == "not-built"
        assert entry["awaiting"]["table_request"] == {"function_id": fid}
        keyed = client.get(f"/v1/leaderboards/{fid}", headers={"X-API-Key": "s3cret"})
        (entry,) = keyed.json()["entries"]  # a key holder queues it (built inline here)
        assert entry["status"] == "final"
        wrong = client.get(f"/v1/leaderboards/{fid}", headers={"X-API-Key": "nope"})
        assert wrong.status_code == 401


def _post_set(client: TestClient, name: str, runs: dict[str, list[float]], **meta: Any) -> str:
    """Store a set through POST /v1/result-sets (what users do)."""
    budget = meta.pop("budget", 1000)
    trajectories = meta.pop("trajectories", {})
    rows = []
    for fid, values in runs.items():
        for i, v in enumerate(values):
            row: dict[str, Any] = {"function_id": fid, "run": i, "value": v, "budget": budget}
            if fid in trajectories:
                evals, best = zip(*trajectories[fid][i], strict=True)
                row["trajectory"] = {"evaluations": list(evals), "best": list(best)}
            rows.append(row)
    r = client.post("/v1/result-sets", json={"name": name, "results": rows, **meta})
    assert r.status_code == 201, r.text
    return str(r.json()["id"])


def test_sets_stored_through_the_api_are_ranked_and_never_missed(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    a = _post_set(client, "A", {F[0]: [1e-3, 2e-3, 3e-3]}, values_are="error")
    first = _board(client, F[0])
    assert [e["set_id"] for e in first["entries"]] == [a]
    b = _post_set(client, "B", {F[0]: [1e-4, 2e-4, 3e-4]}, values_are="error", version="2")
    second = _by_id(_board(client, F[0]))
    assert set(second) == {a, b}  # the cached answer of the first call is not served
    assert second[a]["absolute"] == first["entries"][0]["absolute"]
    assert second[b]["label"] == "B 2"
    assert second[b]["relative_rank"] == 1.0
    c = _post_set(
        client,
        "B",
        {F[0]: [1e-5, 2e-5, 3e-5]},
        values_are="error",
        version="2",
        supersedes=b,
        budget=100,
        trajectories={
            F[0]: [[(1, 1.0), (100, 1e-5)], [(1, 2.0), (100, 2e-5)], [(3, 3.0), (100, 3e-5)]]
        },
    )
    third = _board(client, F[0])
    assert [x["reason"] for x in third["excluded"]] == ["superseded"]
    assert {e["set_id"] for e in third["entries"]} == {a, c}
    at50 = _board(client, F[0], budget=50)
    assert [e["set_id"] for e in at50["entries"]] == [c]
    assert at50["entries"][0]["value"] == 2.0  # median of the best so far: 1.0, 2.0, 3.0
    assert {x["set_id"]: x["reason"] for x in at50["excluded"]}[a] == "no-trajectories"
    at2 = _board(client, F[0], budget=2)  # run 2 records its first value at 3 evaluations
    assert {x["set_id"]: x["reason"] for x in at2["excluded"]}[c] == "no-record-within-budget"


def test_a_deep_set_waits_for_its_ladder_which_storing_queued(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, dispatcher = lb
    fid = "bbob/f2/i1/d2"
    shallow = _post_set(client, "shallow", {fid: [1e6]}, values_are="error")
    before = _by_id(_board(client, fid))[shallow]
    assert before["status"] == "final"
    dispatcher.hold = True  # the ladder the next set needs is queued, not built
    deep = _post_set(client, "deep", {fid: [1e-6]}, values_are="error")
    entries = _by_id(_board(client, fid))
    assert entries[deep]["status"] == "provisional"
    assert entries[deep]["awaiting"]["kind"] == "ladder"
    assert entries[deep]["awaiting"]["location"].startswith("/v1/tables/t")
    assert entries[shallow]["absolute"] == before["absolute"]
    assert entries[shallow]["relative_rank"] == 2.0  # the relative column moved
    dispatcher.hold = False  # the worker catches up: every level, then merges
    held, dispatcher.chunks = dispatcher.chunks, []
    for table_id, index in held:
        dispatcher.enqueue_chunk(table_id, index)
    entries = _by_id(_board(client, fid))
    assert entries[deep]["status"] == "final"
    assert entries[deep]["absolute"]["source"] == "nested"
    assert entries[deep]["absolute"]["curve"] == f"/v1/ladders/{fid}/curve.json"
    assert client.get(entries[deep]["absolute"]["curve"]).status_code == 200
    assert entries[shallow]["absolute"] == before["absolute"]  # it keeps its table rank
    table_curve = client.get(before["absolute"]["curve"])
    assert table_curve.status_code == 200  # the curve the table rank came from
    assert table_curve.json()["table_id"] == before["absolute"]["tables"][0]


def test_a_set_on_other_functions_leaves_a_suite_board_as_it_was(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    sm = _sm(client)
    for name, err in (("P", 1e-3), ("Q", 1e-2), ("R", 1e-1)):
        store_set(sm, name, {f: [err, err * 2, err * 3] for f in F}, values_are="error")
    before = client.get("/v1/leaderboards", params=SUITE_F).json()
    # another instance and another dimension: not functions of this board
    store_set(sm, "S", {"bbob/f1/i6/d2": [1e-9], "bbob/f1/i1/d5": [1e-9]}, values_are="error")
    after = client.get("/v1/leaderboards", params=SUITE_F).json()
    assert after["functions"] == before["functions"] == F
    assert [e["functions_total"] for e in after["entries"]] == [5, 5, 5]
    assert after["family"]["friedman"] == before["family"]["friedman"]
    assert [e["set_id"] for e in after["entries"]] == [e["set_id"] for e in before["entries"]]


def test_suite_instances_outside_the_listing_are_refused_and_v_zero_is_counted(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    r = client.get("/v1/leaderboards", params=SUITE_F | {"instances": "1-100"})
    assert r.status_code == 422
    assert r.json()["field"] == "instances"
    sm = _sm(client)
    store_set(sm, "Z", {f: [0.0] for f in F}, values_are="error")  # at f* everywhere: v = 0
    store_set(sm, "Y", {f: [1e-3] for f in F}, values_are="error")
    entries = {
        e["name"]: e for e in client.get("/v1/leaderboards", params=SUITE_F).json()["entries"]
    }
    assert entries["Z"]["mean_log10_v"] is None
    assert entries["Z"]["functions_at_zero"] == 5
    assert entries["Y"]["functions_at_zero"] == 0
    assert entries["Y"]["mean_log10_v"] < 0


def test_pairs_whose_run_counts_cannot_reach_alpha_stay_out_of_the_holm_family(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    sm = _sm(client)
    fid = F[0]
    # fully separated runs: each pair's p is the smallest its sizes allow, 2 / C(n_a + n_b, n_a)
    sizes = {"one": 1, "two": 2, "four": 4, "five": 5}
    base = {"one": 1e-1, "two": 1e-2, "four": 1e-3, "five": 1e-4}
    ids = {
        name: store_set(
            sm, name, {fid: [base[name] * (1 + k / 10) for k in range(n)]}, values_are="error"
        )
        for name, n in sizes.items()
    }
    by_name = {v: k for k, v in ids.items()}
    pairs = _board(client, fid)["significance"]["pairs"]
    assert len(pairs) == 6
    family = []
    for p in pairs:
        a, b = by_name[p["a"]], by_name[p["b"]]
        x = [base[a] * (1 + k / 10) for k in range(sizes[a])]
        y = [base[b] * (1 + k / 10) for k in range(sizes[b])]
        ref = stats.mannwhitneyu(x, y, alternative="two-sided", method="exact").pvalue
        assert p["p_value"] == pytest.approx(ref, rel=1e-12)
        reachable = bool(ref < 0.05)  # fully separated: ref is the smallest p these sizes allow
        assert p["in_family"] is reachable, (a, b, ref)
        if reachable:
            family.append(p)
        else:
            assert p["p_adjusted"] is None
            assert p["significant"] is False
    # Holm over the family alone (here only four vs five: 2 / C(9, 4) = 0.0159)
    assert [(by_name[p["a"]], by_name[p["b"]]) for p in family] in (
        [("four", "five")],
        [("five", "four")],
    )
    assert family[0]["p_adjusted"] == pytest.approx(family[0]["p_value"], rel=1e-12)
    assert family[0]["significant"] is True


def test_a_value_at_f_star_is_exact_and_every_entry_has_its_error(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    client, _ = lb
    sm = _sm(client)
    fid = "bbob/f2/i1/d2"  # a ladder applies: only values strictly above f* could need it
    f_star = client.get(f"/v1/functions/{fid}").json()["f_opt"]
    at_min = store_set(sm, "at-min", {fid: [0.0]}, values_are="error")
    as_f = store_set(sm, "as-f", {fid: [f_star + 1e6]}, values_are="f")
    entries = _by_id(_board(client, fid))
    assert entries[at_min]["status"] == "final"
    assert entries[at_min]["absolute"]["log10_v"] is None  # v = 0 exactly
    assert entries[at_min]["error"] == 0.0
    assert entries[as_f]["error"] == pytest.approx(1e6, rel=1e-12)


def test_errors_below_the_resolution_of_f_star_keep_their_ranks_apart(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    """bbob/f1/i1/d2 has f* = 79.48 (ulp 1.4e-14): errors 1e-16 and 3e-16 round to f* + 0 as
    values of f, but are ranked as the gaps themselves (absolute and relative)."""
    client, _ = lb
    sm = _sm(client)
    tiny = store_set(sm, "tiny", {F[0]: [1e-16]}, values_are="error", budget=100)
    small = store_set(sm, "small", {F[0]: [3e-16]}, values_are="error", budget=100)
    zero = store_set(sm, "zero", {F[0]: [0.0]}, values_are="error", budget=100)
    entries = _by_id(_board(client, F[0]))
    for sid, e in ((tiny, 1e-16), (small, 3e-16)):
        assert entries[sid]["status"] == "final"
        got = entries[sid]["absolute"]["log10_v"]
        assert got == pytest.approx(math.log10(_sphere_v(e, 100)), rel=1e-9)
    assert entries[zero]["absolute"]["log10_v"] is None  # v = v1(f*) = 0, exact
    ranks = [entries[sid]["relative_rank"] for sid in (zero, tiny, small)]
    assert ranks == [1.0, 2.0, 3.0]  # as f* + e all three would tie at f*


def test_rank_sum_pairs_of_error_sets_compare_the_errors_themselves(
    lb: tuple[TestClient, InlineDispatcher],
) -> None:
    """Runs of 1e-16 … 1e-15 on bbob/f1/i1/d2 (f* = 79.48) are all f* as values of f; as errors
    the two sets are apart: scipy's exact Mann–Whitney on the errors (p = 2/C(10, 5))."""
    client, _ = lb
    a = [1e-16, 2e-16, 3e-16, 4e-16, 5e-16]
    b = [6e-16, 7e-16, 8e-16, 9e-16, 1e-15]
    sm = _sm(client)
    ids = {
        "A": store_set(sm, "A", {F[0]: a}, values_are="error"),
        "B": store_set(sm, "B", {F[0]: b}, values_are="error"),
    }
    sig = _board(client, F[0])["significance"]
    (pair,) = sig["pairs"]
    x, y = (a, b) if pair["a"] == ids["A"] else (b, a)
    ref = stats.mannwhitneyu(x, y, method="exact")
    assert ref.pvalue == pytest.approx(2 / 252, rel=1e-12)
    assert pair["p_value"] == pytest.approx(ref.pvalue, rel=1e-9)
    assert pair["statistic"] == ref.statistic
