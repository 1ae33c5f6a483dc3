"""Your own function by its samples, on SQLite and PostgreSQL: user tables, inline samples, Eq. 29.

References are computed here: Jing & Liu's Eq. 28 and its tails (SPEC §3.2) on Fig. 9's
``Y = [1, 3, 4, 6]`` with exact rationals and mpmath, the table bytes with the domain's own
encoder on the sorted values, and Eq. 29 with exact rational products.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Callable, Iterator
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.api import tables as tables_api
from app.domain import absrank
from app.main import create_app
from tests.api.conftest import api_settings
from tests.support import migrate, pg_admin_url, pg_databases, require_postgres
from workers.inline import InlineDispatcher

KEY = "s3cret"
FIG9 = [1.0, 3.0, 4.0, 6.0]
TEXT = {"content-type": "text/plain"}
JSON = {"content-type": "application/json"}


@pytest.fixture(scope="module")
def pg_url_factory() -> Iterator[Callable[[], str]]:
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
    stack: list[TestClient] = []

    def make(**overrides: object) -> TestClient:
        if request.param == "postgres":
            overrides.setdefault("database_url", request.getfixturevalue("pg_url_factory")())
        where = tmp_path / f"app{len(stack)}"
        where.mkdir(exist_ok=True)
        settings = api_settings(where, **overrides)
        migrate(settings.database_url)
        dispatcher = InlineDispatcher(settings)
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


def _ok(response: Any, status: int = 200) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return response.json()  # type: ignore[no-any-return]


def _problem(response: Any, status: int, field: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["field"] == field, body
    return str(body["detail"])


# --- Jing & Liu Fig. 9 ---------------------------------------------------------------------------

#: Query points: below y_1, at and between the samples, above y_N.
T = [-2.0, 0.5, 1.0, 2.0, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 12.0]


def _fig9_reference(t: float) -> mpmath.mpf:
    """SPEC §3.2 on Y = [1, 3, 4, 6], N = 4, with the paper's tails (tail='paper')."""
    y, n = [Fraction(v) for v in FIG9], 4
    tq = Fraction(t)
    if tq < y[0]:
        return mpmath.exp(mpmath.mpf(t) - 1) / (n + 1)  # exp(t - y_1)/(N+1)
    if tq > y[-1]:
        return 1 - mpmath.exp(-mpmath.log(n + 1) * mpmath.mpf(t) / 6)  # 1 - exp(-ln(N+1) t/y_N)
    for i in range(n):  # v = i/(N+1) at y_i (1-based), linear in between
        if tq == y[i]:
            return mpmath.mpf(Fraction(i + 1, n + 1))
        if y[i] < tq < y[i + 1]:
            share = (tq - y[i]) / (y[i + 1] - y[i])
            v = Fraction(i + 1, n + 1) + share * Fraction(1, n + 1)
            return mpmath.mpf(v.numerator) / v.denominator
    raise AssertionError(t)


def test_inline_sample_reproduces_fig9_with_the_papers_tails(client: TestClient) -> None:
    mpmath.mp.dps = 40
    got = _ok(
        client.post("/v1/absolute-ranks", json={"sample": FIG9, "values": T, "tail": "paper"})
    )
    assert got["source"]["kind"] == "sample"
    assert got["source"]["n"] == 4
    for item, t in zip(got["results"], T, strict=True):
        ref = _fig9_reference(t)
        assert item["v"] == pytest.approx(float(ref), rel=1e-14, abs=0), t
        assert item["log10_v"] == pytest.approx(float(mpmath.log10(ref)), rel=1e-13), t
    v = {t: r["v"] for t, r in zip(T, got["results"], strict=True)}
    assert v[2.0] == pytest.approx(0.3)
    assert v[5.0] == pytest.approx(0.7)
    assert got["tail"]["lower"] == "paper"
    assert got["tail"]["upper"] == "paper"


def test_inline_sample_without_f_opt_defaults_to_the_tails_that_need_no_f_opt(
    client: TestClient,
) -> None:
    got = _ok(client.post("/v1/absolute-ranks", json={"sample": FIG9, "values": [0.5, 7.0]}))
    assert got["tail"]["lower"] == "paper"
    assert got["tail"]["upper"] == "flat"  # the paper's upper tail only on request
    below, above = (r["v"] for r in got["results"])
    assert below == pytest.approx(float(_fig9_reference(0.5)), rel=1e-14)
    assert above == pytest.approx(4 / 5, rel=1e-15)
    assert any("f* is unknown" in w for w in got["warnings"])


def test_a_stated_f_opt_gives_the_linear_tail_from_f_opt(client: TestClient) -> None:
    body = {"sample": FIG9, "values": [0.5, 0.0, -1.0], "f_opt": 0.0, "tail": "linear"}
    got = _ok(client.post("/v1/absolute-ranks", json=body))
    half, at, below = (r["v"] for r in got["results"])
    assert half == pytest.approx(float(Fraction(1, 5) * Fraction(1, 2)), rel=1e-15)  # (t/y_1)/5
    assert at == 0.0
    assert below == 0.0
    errors = _ok(
        client.post(
            "/v1/absolute-ranks",
            json={
                "sample": FIG9,
                "values": [2.0],
                "f_opt": -1.0,
                "values_are": "error",
                "tail": "linear",
            },
        )
    )
    assert errors["results"][0]["v"] == pytest.approx(0.2)  # f* + 2 = 1 = y_1


def test_a_user_table_ranks_like_the_inline_sample(client: TestClient) -> None:
    made = client.post("/v1/tables", json={"samples": FIG9, "name": "fig9"})
    table = _ok(made)
    assert table["id"].startswith("user/")
    assert len(table["id"]) == 24
    assert table["function_id"] == "user/fig9"
    assert table["status"] == "ready"
    assert made.headers["location"] == f"/v1/tables/{table['id']}"
    assert _ok(client.get(made.headers["location"]))["data_sha256"] == table["data_sha256"]
    by_table = _ok(
        client.post(
            "/v1/absolute-ranks", json={"table_id": table["id"], "values": T, "tail": "paper"}
        )
    )
    inline = _ok(
        client.post("/v1/absolute-ranks", json={"sample": FIG9, "values": T, "tail": "paper"})
    )
    assert [r["log10_v"] for r in by_table["results"]] == [r["log10_v"] for r in inline["results"]]


# --- ids, bytes, provenance ----------------------------------------------------------------------


def _expected_sha256(values: list[float], k_exact: int = 512, n_knots: int = 1024) -> str:
    """The table bytes from the domain encoder on the sorted values (the test settings)."""
    ys = np.sort(np.asarray(values, dtype=np.float64))
    data = absrank.build_table_data(
        ys, np.empty((min(k_exact, ys.size), 0)), k_exact=k_exact, n_knots=n_knots
    )
    return hashlib.sha256(absrank.encode_table_data(data)).hexdigest()


def test_identical_samples_and_statement_give_the_same_id_and_bytes(client: TestClient) -> None:
    rng = np.random.default_rng(7)
    values = rng.normal(size=3000).tolist()
    stated = {"name": "noise", "sampled_by": "me", "sampling": "N(0,1), default_rng(7)"}
    first = _ok(client.post("/v1/tables", json={"samples": values} | stated))
    again = _ok(client.post("/v1/tables", json={"samples": values} | stated))
    shuffled = _ok(client.post("/v1/tables", json={"samples": values[::-1]} | stated))
    assert first["id"] == again["id"] == shuffled["id"]
    assert first["data_sha256"] == shuffled["data_sha256"] == _expected_sha256(values)
    assert first["max_interp_error"] > 0  # 3000 samples over 1024 knots: the stated bound
    text = "\n".join(repr(v) for v in values).encode()
    query = "name=noise&sampled_by=me&sampling=N(0%2C1)%2C%20default_rng(7)"
    upload = _ok(client.post(f"/v1/tables/samples?{query}", content=text, headers=TEXT))
    assert upload["id"] == first["id"]
    assert upload["data_sha256"] == first["data_sha256"]
    other = _ok(client.post("/v1/tables", json={"samples": values, "name": "noise"}))
    assert other["id"] != first["id"]  # the statement is part of the spec
    assert other["data_sha256"] == first["data_sha256"]  # ... not of the bytes


def test_the_statement_is_recorded_as_stated(client: TestClient) -> None:
    stated = {
        "name": "rocket",
        "f_opt": 0.5,
        "f_max": 9.0,
        "dim": 7,
        "sampled_by": "A. Researcher",
        "sampling": "Latin hypercube",
    }
    table = _ok(client.post("/v1/tables", json={"samples": FIG9} | stated))
    assert table["spec"]["stated"] == stated
    assert table["spec"]["n"] == table["n"] == 4
    assert table["provenance"]["stated"] == stated
    assert "not verify" in table["provenance"]["stated_note"]
    assert table["summary"]["y_1"] == 1.0
    assert table["summary"]["y_N"] == 6.0
    curve = _ok(client.get(f"/v1/tables/{table['id']}/curve.json"))
    assert curve["f_opt"] == 0.5
    assert curve["f_max"] == 9.0
    assert curve["upper_tail"]["kind"] == "linear-to-f_max"
    ranked = _ok(
        client.post("/v1/absolute-ranks", json={"table_id": table["id"], "values": [9.0, 0.5]})
    )
    assert [r["v"] for r in ranked["results"]] == [1.0, 0.0]


def test_a_stated_f_opt_allows_a_power_tail_with_a_hill_beta(
    make_client: Callable[..., TestClient],
) -> None:
    client = make_client(max_request_bytes=4 * 1024 * 1024)
    # f = u^2 with u ~ U(0, 1): v1(t) = sqrt(t) exactly, beta = 1/2
    values = (np.random.default_rng(3).random(20000) ** 2).tolist()
    table = _ok(client.post("/v1/tables", json={"samples": values, "f_opt": 0.0, "f_max": 1.0}))
    t = min(values) / 100
    got = _ok(
        client.post("/v1/absolute-ranks", json={"table_id": table["id"], "values": [t, 0.25]})
    )
    tail = got["tail"]
    assert tail["lower"] == "power"
    assert tail["beta_source"] == "hill"
    assert tail["validity"]["checked"] is False  # no points: no clipping check, said so
    lo, hi = tail["beta_interval"]
    assert lo < 0.5 < hi
    deep, mid = got["results"]
    assert deep["method"] == "tail-power"
    ref = 0.5 * np.log10(t)
    assert deep["interval"]["log10_lo"] <= ref <= deep["interval"]["log10_hi"]
    assert mid["v"] == pytest.approx(0.5, abs=0.01)  # Eq. 28 inside the samples


# --- refusals -------------------------------------------------------------------------------------


def test_refusals_name_the_field(make_client: Callable[..., TestClient]) -> None:
    c = make_client(max_user_samples=10, max_inline_sample=5)
    post = c.post
    _problem(post("/v1/tables", json={"samples": [1.0]}), 422, "samples")
    _problem(post("/v1/tables", json={"samples": list(range(11))}), 422, "samples")
    _problem(
        post(
            "/v1/tables",
            content=b'{"samples": [1, 2, 1e999]}',
            headers={"content-type": "application/json"},
        ),
        422,
        "samples.2",
    )
    _problem(
        post("/v1/tables", json={"samples": FIG9, "function_id": "classic/sphere/d2"}),
        422,
        "function_id",
    )
    _problem(post("/v1/tables", json={"samples": FIG9, "log2n": 8}), 422, "log2n")
    _problem(
        post("/v1/tables", json={"function_id": "classic/sphere/d2", "f_opt": 0}), 422, "f_opt"
    )
    _problem(post("/v1/tables", json={"samples": FIG9, "name": "a b"}), 422, "name")
    assert "below the stated f*" in _problem(
        post("/v1/tables", json={"samples": FIG9, "f_opt": 2.0}), 422, "f_opt"
    )
    _problem(post("/v1/tables", json={"samples": FIG9, "f_max": 5.0}), 422, "f_max")
    _problem(post("/v1/tables", json={"samples": FIG9, "f_opt": 1.0, "f_max": 0.0}), 422, "f_max")
    rank = "/v1/absolute-ranks"
    _problem(post(rank, json={"sample": FIG9 * 2, "values": [1.0]}), 422, "sample")
    _problem(
        post(rank, json={"sample": FIG9, "table_id": "user/x", "values": [1.0]}), 422, "table_id"
    )
    _problem(
        post(rank, json={"function_id": "classic/sphere/d2", "f_opt": 0, "values": [1.0]}),
        422,
        "f_opt",
    )
    _problem(
        post(rank, json={"sample": FIG9, "values": [1.0], "values_are": "error"}), 422, "values_are"
    )
    _problem(post(rank, json={"sample": FIG9, "values": [1.0], "tail": "linear"}), 409, "tail")


def test_file_refusals_name_the_file_and_line(make_client: Callable[..., TestClient]) -> None:
    c = make_client(max_user_samples=10)
    url = "/v1/tables/samples?filename=y.txt"
    detail = _problem(c.post(url, content=b"1\n2\nabc\n", headers=TEXT), 422, "file")
    assert detail == "y.txt line 3: 'abc' is not a number"
    detail = _problem(c.post(url, content=b"# a comment\n1\n\nnan\n", headers=TEXT), 422, "file")
    assert detail.startswith("y.txt line 4: 'nan' is not finite")
    detail = _problem(c.post(url, content=b"1,2\n", headers=TEXT), 422, "file")
    assert detail.startswith("y.txt line 1: 2 fields")
    many = "\n".join(str(i) for i in range(12)).encode()
    assert "line 11: more than 10" in _problem(c.post(url, content=many, headers=TEXT), 422, "file")
    csv = b"x,f\n0.1,6\n0.2,3\n0.3,4\n0.4,1\n"
    missing = _problem(
        c.post(url + "&column=g", content=csv, headers={"content-type": "text/csv"}), 422, "file"
    )
    assert "no column 'g'" in missing
    table = _ok(c.post(url + "&column=f", content=csv, headers={"content-type": "text/csv"}))
    assert table["id"] == _ok(c.post("/v1/tables", json={"samples": FIG9}))["id"]
    _problem(c.post(url, content=b"1\n", headers=TEXT), 422, "file")  # one value is too few
    assert c.post(url, json={"samples": FIG9}).status_code == 415


def test_minus_zero_is_zero_in_the_stated_bounds(client: TestClient) -> None:
    # -0.0 and 0 are the same value of f: the same spec, hence the same id (JSON and file)
    neg = [-3.0, -2.0, -1.0]
    pairs = [
        ({"samples": FIG9, "f_opt": -0.0}, {"samples": FIG9, "f_opt": 0}),
        ({"samples": neg, "f_max": -0.0}, {"samples": neg, "f_max": 0.0}),
    ]
    for minus, plus in pairs:
        a = _ok(client.post("/v1/tables", content=json.dumps(minus), headers=JSON))
        b = _ok(client.post("/v1/tables", json=plus))
        assert a["id"] == b["id"]
        stated = a["spec"]["stated"]
        field = "f_opt" if "f_opt" in minus else "f_max"
        assert stated[field] == 0.0
        assert math.copysign(1.0, stated[field]) == 1.0
    text = "\n".join(map(repr, FIG9)).encode()
    upload = _ok(client.post("/v1/tables/samples?f_opt=-0.0", content=text, headers=TEXT))
    assert upload["id"] == _ok(client.post("/v1/tables", json={"samples": FIG9, "f_opt": 0}))["id"]


def test_inline_sample_contradicting_its_statement_is_422_like_post_tables(
    client: TestClient,
) -> None:
    rank = {"sample": FIG9, "values": [2.0]}
    for field, value, words in [("f_opt", 2.0, "below the stated f*"), ("f_max", 5.0, "above")]:
        inline = _problem(client.post("/v1/absolute-ranks", json=rank | {field: value}), 422, field)
        table = _problem(
            client.post("/v1/tables", json={"samples": FIG9, field: value}), 422, field
        )
        assert words in inline
        assert words in table
        assert "registered" not in inline
    # at the bound itself the statement holds
    ok = _ok(client.post("/v1/absolute-ranks", json=rank | {"f_opt": 1.0, "f_max": 6.0}))
    assert ok["results"][0]["v"] == pytest.approx(float(Fraction(3, 10)), rel=1e-15)  # Eq. 28


def test_sample_upload_refuses_a_duplicated_header_and_unknown_parameters(
    client: TestClient,
) -> None:
    csv = {"content-type": "text/csv"}
    text = b"x,f,f\n0.1,6,6\n0.2,3,3\n"
    detail = _problem(
        client.post("/v1/tables/samples?column=f&filename=d.csv", content=text, headers=csv),
        422,
        "file",
    )
    assert detail.startswith("d.csv line 1: the header names column(s) 'f' more than once")
    body = "\n".join(map(repr, FIG9)).encode()
    detail = _problem(
        client.post("/v1/tables/samples?bogus=1", content=body, headers=TEXT), 422, "bogus"
    )
    assert "unknown query parameter 'bogus'" in detail
    twice = "/v1/tables/samples?f_opt=0&f_opt=1"
    assert "more than once" in _problem(
        client.post(twice, content=body, headers=TEXT), 422, "f_opt"
    )
    # the refused names are exactly those the OpenAPI document does not declare
    spec = client.get("/openapi.json").json()
    declared = {p["name"] for p in spec["paths"]["/v1/tables/samples"]["post"]["parameters"]}
    declared -= {"x-api-key"}
    assert declared == set(tables_api.SAMPLES_QUERY)


@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_get_on_the_upload_path_is_405(client: TestClient, method: str) -> None:
    r = client.request(method, "/v1/tables/samples")
    assert r.status_code == 405
    assert r.headers["allow"] == "POST"
    if method == "GET":
        assert r.headers["content-type"].startswith("application/problem+json")
        assert r.json()["field"] == "method"
    for other in ("PUT", "DELETE"):  # starlette's own 405 for the methods no route takes
        assert client.request(other, "/v1/tables/samples").status_code == 405


def test_summary_quantiles_are_labelled_order_statistics_not_the_curve_inverse(
    client: TestClient,
) -> None:
    table = _ok(client.post("/v1/tables", json={"samples": FIG9}))
    summary = table["summary"]
    assert summary["quantiles_are"].startswith("sample order statistics")
    assert "/quantiles" in summary["quantiles_are"]
    n, ys = 4, sorted(FIG9)
    levels = [q["v"] for q in summary["quantiles"]]
    for q in summary["quantiles"]:  # the r-th smallest sample, r = ceil(v (N + 1)) in [1, N]
        r = min(max(math.ceil(Fraction(q["v"]) * (n + 1)), 1), n)
        assert q["t"] == ys[r - 1]
    curve = _ok(client.get(f"/v1/tables/{table['id']}/quantiles", params={"v": levels}))["items"]
    by_v = {item["v"]: item["t"] for item in curve}
    # the curve's inverse is another thing: Eq. 28 interpolated (v = 1/2 between 2/5 at 3 and
    # 3/5 at 4) and the paper's lower tail below y_1 (exp(t − 1)/5 = 1e-3)
    assert by_v[0.5] == pytest.approx(3.5, rel=1e-15)
    assert by_v[0.001] == pytest.approx(1 + math.log(5e-3), rel=1e-12)
    assert {q["v"]: q["t"] for q in summary["quantiles"]}[0.5] == 4.0
    assert _ok(client.get(f"/v1/tables/{table['id']}"))["summary"] == summary


def test_keyed_deployments_refuse_anonymous_user_tables(
    make_client: Callable[..., TestClient],
) -> None:
    c = make_client(api_keys=[KEY])
    _problem(c.post("/v1/tables", json={"samples": FIG9}), 401, "X-API-Key")
    _problem(c.post("/v1/tables/samples", content=b"1\n2\n", headers=TEXT), 401, "X-API-Key")
    table = _ok(c.post("/v1/tables", json={"samples": FIG9}, headers={"X-API-Key": KEY}))
    # reading and ranking need no key; an inline sample stores nothing
    assert _ok(c.get(f"/v1/tables/{table['id']}"))["id"] == table["id"]
    _ok(c.post("/v1/absolute-ranks", json={"table_id": table["id"], "values": [2.0]}))
    _ok(c.post("/v1/absolute-ranks", json={"sample": FIG9, "values": [2.0]}))


# --- Eq. 29 ---------------------------------------------------------------------------------------


def test_rank_spread_against_exact_rationals(client: TestClient) -> None:
    v = [Fraction(1, 8), Fraction(1, 2), Fraction(3, 4), Fraction(1, 2), Fraction(0)]
    distinct = sorted(set(v))
    product = Fraction(1)
    for a, b in itertools.pairwise(distinct):
        product *= b - a
    k = len(distinct)
    mpmath.mp.dps = 40
    ref = mpmath.power(mpmath.mpf(product.numerator) / product.denominator, mpmath.mpf(1) / (k - 1))
    got = _ok(client.post("/v1/rank-spread", json={"v": [float(x) for x in v]}))
    assert got["k"] == k
    assert got["n"] == 5
    assert got["computable"]
    assert got["e"] == pytest.approx(float(ref), rel=1e-14)
    assert got["log10_e"] == pytest.approx(float(mpmath.log10(ref)), rel=1e-14)
    assert got["log10_v"][0] is None  # v = 0
    logs = _ok(client.post("/v1/rank-spread", json={"log10_v": [-400.0, -300.0, None]}))
    # gaps 1e-400 and 1e-300 - 1e-400: log10 e = (-400 + log10(1e-300 - 1e-400))/2
    assert logs["log10_e"] == pytest.approx(-350.0, abs=1e-12)
    assert logs["e"] == 0.0
    one = _ok(client.post("/v1/rank-spread", json={"v": [0.5, 0.5]}))
    assert not one["computable"]
    assert one["e"] is None
    assert "fewer than 2" in one["reason"]
    _problem(client.post("/v1/rank-spread", json={"v": [1.5]}), 422, "v.0")
    _problem(client.post("/v1/rank-spread", json={"log10_v": [0.5]}), 422, "log10_v.0")
    _problem(client.post("/v1/rank-spread", json={}), 422, "v")
    _problem(client.post("/v1/rank-spread", json={"v": [0.1], "log10_v": [-1.0]}), 422, "log10_v")
