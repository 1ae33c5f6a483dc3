"""Published tables over HTTP: curve.json/.csv, quantiles, plots, ladders, caching headers.

The central check recomputes ``v1(t)`` offline from the downloaded CSV alone — plain Python and
numpy here, no app code — and compares it with what ``POST /v1/absolute-ranks`` answers for the
same table (budget 1, one run) at many ``t``: below ``f*``, in the lower tail, at knots, between
knots and above ``y_N``. It runs on SQLite and PostgreSQL.
"""

from __future__ import annotations

import io
import json
import math
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import psycopg
import pytest
from fastapi.testclient import TestClient
from PIL import Image
from sqlalchemy.engine import make_url

from app.main import create_app
from app.services import table_publish
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PG_ADMIN = os.environ.get(
    "ABSRANK_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
)
TABLES = {
    # tail=auto picks: power (registered beta = d/2), linear (power refused), linear with the
    # plateau's atom and the upper tail to f_max, and a δ-box (flat upper tail, box-relative v)
    "power": {"function_id": "bbob/f1/i1/d2"},
    "power-fmax": {"function_id": "classic/rastrigin/d2"},
    "linear": {"function_id": "bbob/f7/i1/d2"},
    "atom": {"function_id": "classic/step/d2"},
    "box": {"function_id": "classic/sphere/d2", "delta": 0.5},
}
LADDER = "classic/sphere/d2"


@dataclass
class App:
    client: TestClient
    dispatcher: InlineDispatcher
    ids: dict[str, str]


def _pg_url() -> str:
    libpq = make_url(PG_ADMIN).set(drivername="postgresql").render_as_string(hide_password=False)
    try:
        with psycopg.connect(libpq, connect_timeout=3, autocommit=True) as conn:
            name = f"absrank_test_{secrets.token_hex(6)}"
            conn.execute(f'CREATE DATABASE "{name}"')
    except psycopg.OperationalError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"PostgreSQL not reachable: {exc}")
        pytest.skip(f"PostgreSQL not reachable: {exc}")
    return make_url(PG_ADMIN).set(database=name).render_as_string(hide_password=False)


def _drop(url: str) -> None:
    admin = make_url(PG_ADMIN).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)')


@pytest.fixture(
    scope="module",
    params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)],
)
def app(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[App]:
    overrides: dict[str, object] = {"nested_levels": 3, "nested_factor": 2.0}
    url = _pg_url() if request.param == "postgres" else None
    if url is not None:
        overrides["database_url"] = url
    settings = api_settings(tmp_path_factory.mktemp(request.param), **overrides)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    application = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = application
    try:
        with TestClient(application) as client:
            ids = {}
            for name, body in TABLES.items():
                made = client.post("/v1/tables", json=body)
                assert made.status_code == 200, made.text
                ids[name] = made.json()["id"]
            yield App(client, dispatcher, ids)
    finally:
        if url is not None:
            _drop(url)


# ---------------------------------------------------------------- the offline reader ----


def split_csv(text: str) -> tuple[dict[str, object], list[list[str]]]:
    """The header fields (``# key: JSON`` lines) and the data rows (after the column line)."""
    header: dict[str, object] = {}
    lines = text.splitlines()
    for line in lines:
        key, _, value = line[2:].partition(": ")
        if line.startswith("# ") and key.replace(".", "").replace("_", "").isalnum():
            header[key] = json.loads(value)
    data = [line.split(",") for line in lines if line and not line.startswith("#")]
    return header, data[1:]


def read_csv(text: str) -> tuple[dict[str, object], np.ndarray, np.ndarray]:
    """The header fields and the knots of a table's curve.csv."""
    header, data = split_csv(text)
    rows = [(float(value), int(count)) for value, count in data]
    values = np.array([r[0] for r in rows])
    counts = np.array([r[1] for r in rows], dtype=np.int64)
    return header, values, counts


def offline_ln_v1(h: dict[str, object], values: np.ndarray, counts: np.ndarray, t: float) -> float:
    """``ln v1(t)`` from the published fields alone (docs/METHODS.md, "Published tables")."""
    n = int(h["n"])  # type: ignore[arg-type]
    ln_n1 = math.log(n + 1.0)
    kind, limit = h["lower_tail.kind"], float(h["lower_tail.limit"])  # type: ignore[arg-type]
    f_opt = h["lower_tail.f_opt"]
    atom = float(h["atom"])  # type: ignore[arg-type]
    y_n = float(h["upper_tail.y_n"])  # type: ignore[arg-type]
    if f_opt is not None and kind != "paper":
        f_opt = float(f_opt)  # type: ignore[arg-type]
        if t < f_opt or (t == f_opt and atom == 0.0):
            return -math.inf
        if t == f_opt:
            return math.log(atom)
    if t < limit:
        if kind == "power":
            beta = float(h["lower_tail.beta"])  # type: ignore[arg-type]
            ln_top = math.log(int(h["lower_tail.anchor_count"])) - ln_n1  # type: ignore[arg-type]
            ln_v = ln_top + beta * (math.log(t - f_opt) - math.log(limit - f_opt))  # type: ignore[operator]
        elif kind == "linear":
            top = float(h["lower_tail.v_top"])  # type: ignore[arg-type]
            ln_v = math.log(atom + (top - atom) * (t - f_opt) / (limit - f_opt))  # type: ignore[operator]
        else:
            ln_v = (t - float(values[0])) - ln_n1
    elif t <= y_n:
        ln_v = math.log(float(np.interp(t, values, counts))) - ln_n1
    elif h["upper_tail.kind"] == "flat":
        ln_v = math.log(n / (n + 1.0))
    else:
        f_max = float(h["upper_tail.f_max"])  # type: ignore[arg-type]
        share = min(max((t - y_n) / (f_max - y_n), 0.0), 1.0) if f_max > y_n else 1.0
        ln_v = math.log((n + share) / (n + 1.0))
    return max(ln_v, math.log(atom)) if atom > 0 else ln_v


def probe_points(h: dict[str, object], values: np.ndarray) -> list[float]:
    """``t`` below f*, at f*, in the lower tail, at and between knots, above y_N."""
    f_opt = float(h["f_opt"])  # type: ignore[arg-type]
    limit = float(h["lower_tail.limit"])  # type: ignore[arg-type]
    y_n = float(values[-1])
    pick = np.unique(np.linspace(0, values.size - 1, 60).astype(int))
    between = (values[pick[:-1]] + values[pick[:-1] + 1]) / 2.0
    tail = f_opt + np.geomspace(1e-6, 1.0, 25) * (limit - f_opt)
    above = [y_n + 1e-9 * abs(y_n), y_n * 1.01 + 0.01, y_n + 1e6]
    out = [f_opt - 1.0, f_opt, *tail, *values[:40], *values[pick], *between, *above]
    return [float(t) for t in out]


def service_log10(client: TestClient, table_id: str, t: list[float]) -> list[float | None]:
    body = {"table_id": table_id, "values": t, "budget": 1, "runs": 1}
    answer = client.post("/v1/absolute-ranks", json=body)
    assert answer.status_code == 200, answer.text
    return [item["log10_v"] for item in answer.json()["results"]]


def assert_same(offline: list[float], service: list[float | None], t: list[float]) -> None:
    for x, mine, theirs in zip(t, offline, service, strict=True):
        if theirs is None:
            assert mine == -math.inf, x
        else:
            assert abs(mine - theirs) <= 1e-12 * max(1.0, abs(theirs)), (x, mine, theirs)


@pytest.mark.parametrize("name", list(TABLES))
def test_v1_recomputed_offline_from_the_csv_equals_the_service(app: App, name: str) -> None:
    table_id = app.ids[name]
    csv = app.client.get(f"/v1/tables/{table_id}/curve.csv")
    assert csv.status_code == 200
    assert csv.headers["content-type"].startswith("text/csv")
    h, values, counts = read_csv(csv.text)
    assert values.size == h["n_knots"]
    assert counts[-1] == h["n"]
    t = probe_points(h, values)
    offline = [offline_ln_v1(h, values, counts, x) / math.log(10.0) for x in t]
    assert_same(offline, service_log10(app.client, table_id, t), t)


def test_the_tables_cover_each_tail(app: App) -> None:
    kinds = {}
    for name, table_id in app.ids.items():
        body = app.client.get(f"/v1/tables/{table_id}/curve.json").json()
        kinds[name] = (body["lower_tail"]["kind"], body["upper_tail"]["kind"], body["relative_to"])
    assert kinds["power"][0] == kinds["power-fmax"][0] == "power"
    assert kinds["power-fmax"][1] == "linear-to-f_max"
    assert kinds["linear"][0] == "linear"
    assert kinds["atom"][0] == "linear"
    assert kinds["box"] == ("power", "flat", "box")


def test_curve_json_has_the_stored_representation(app: App) -> None:
    table_id = app.ids["power"]
    body = app.client.get(f"/v1/tables/{table_id}/curve.json").json()
    table = app.client.get(f"/v1/tables/{table_id}").json()
    assert (body["table_id"], body["spec"], body["spec_hash"]) == (
        table_id,
        table["spec"],
        table["spec_hash"],
    )
    assert body["data_sha256"] == table["data_sha256"]
    assert body["max_interp_error"] == table["max_interp_error"]
    assert body["n"] == 4096
    assert body["k_exact"] == 512
    knots = body["knots"]
    assert len(knots["value"]) == len(knots["count"]) == body["n_knots"]
    assert np.all(np.diff(knots["value"]) > 0)
    assert np.all(np.diff(knots["count"]) > 0)
    assert knots["count"][-1] == 4096
    assert body["y_1"] == knots["value"][0]
    # the 512 lowest samples are all knots: counts 1..512 one by one (no ties on f1)
    assert knots["count"][:512] == list(range(1, 513))
    low = body["lower_tail"]
    assert (low["beta"], low["beta_source"], low["beta_se"]) == (1.0, "registered", 0.0)
    assert low["k"] == 100
    assert low["anchor_count"] == 100
    assert low["limit"] == knots["value"][99]
    assert low["v_top"] == pytest.approx(100 / 4097, rel=1e-15)
    assert low["validity"]["ok"] is True
    assert low["obtained"].startswith("tail='auto'")
    assert body["options"] == {"tail": "auto", "k_anchor": 100, "confidence": 0.95}
    assert body["f_opt"] == 79.48
    assert body["low_points"] == 512


def test_etag_cache_control_and_304(app: App) -> None:
    table_id = app.ids["box"]
    sha = app.client.get(f"/v1/tables/{table_id}").json()["data_sha256"]
    for suffix in ("curve.json", "curve.csv", "plot.svg"):
        first = app.client.get(f"/v1/tables/{table_id}/{suffix}")
        assert first.status_code == 200
        assert first.headers["etag"] == f'"{sha}"'
        assert first.headers["cache-control"] == "public, max-age=31536000, immutable"
        again = app.client.get(
            f"/v1/tables/{table_id}/{suffix}", headers={"If-None-Match": first.headers["etag"]}
        )
        assert again.status_code == 304
        assert again.content == b""
        assert again.headers["etag"] == first.headers["etag"]
        other = app.client.get(f"/v1/tables/{table_id}/{suffix}", headers={"If-None-Match": '"x"'})
        assert other.status_code == 200
        assert other.content == first.content


def test_unknown_table_is_404_and_a_building_one_409_with_location(app: App) -> None:
    missing = app.client.get("/v1/tables/t3f1c0d9a8b7e6f5a4b3c2d1/curve.json")
    assert missing.status_code == 404
    assert missing.json()["field"] == "table_id"
    app.dispatcher.hold = True
    try:
        made = app.client.post("/v1/tables", json={"function_id": "classic/sphere/d3", "seed": 3})
        assert made.status_code == 202
        for suffix in ("curve.json", "curve.csv", "quantiles?v=0.5", "plot.svg", "plot.png"):
            answer = app.client.get(f"{made.headers['location']}/{suffix}")
            assert answer.status_code == 409, suffix
            assert answer.json()["type"].endswith("/table-not-ready")
            assert answer.headers["location"] == made.headers["location"]
            assert answer.headers["cache-control"] == "no-store"  # never cached (issue 17)
    finally:
        app.dispatcher.hold = False


# ---------------------------------------------------------------- quantiles ----


@pytest.mark.parametrize("name", ["power", "linear", "atom", "box"])
def test_quantiles_invert_the_curve(app: App, name: str) -> None:
    table_id = app.ids[name]
    levels = [1e-9, 1e-6, 1e-4, 1e-3, 0.01, 0.02, 0.05, 0.1, 0.3, 0.5, 0.9, 0.99]
    answer = app.client.get(f"/v1/tables/{table_id}/quantiles", params={"v": levels})
    assert answer.status_code == 200, answer.text
    assert (
        answer.headers["etag"]
        == app.client.get(f"/v1/tables/{table_id}/curve.json").headers["etag"]
    )
    items = answer.json()["items"]
    assert [i["v"] for i in items] == levels
    t = [i["t"] for i in items]
    assert t == sorted(t)
    ranked = service_log10(app.client, table_id, t)
    for item, got in zip(items, ranked, strict=True):
        if item["method"] == "atom":  # the jump at f*: q(v) = f*, v1(f*) = atom >= v
            assert got is not None
            assert 10**got >= item["v"]
        else:  # t = f* + error is rounded to float: log v1 moves by about beta·ulp(t)/error
            tol = 1e-9 + 10.0 * float(np.spacing(abs(item["t"]))) / item["error"]
            assert got == pytest.approx(math.log10(item["v"]), abs=tol), item


def test_quantiles_above_the_flat_maximum_have_no_t(app: App) -> None:
    table_id = app.ids["box"]
    items = app.client.get(f"/v1/tables/{table_id}/quantiles?v=1&v=0.99999").json()["items"]
    assert [(i["t"], i["method"]) for i in items] == [(None, "above-maximum")] * 2


@pytest.mark.parametrize(
    ("query", "field"),
    [("v=0", "v"), ("v=1.5", "v"), ("", "v"), ("v=nan", "v"), ("v=x", "v.0")],
)
def test_quantile_levels_are_checked(app: App, query: str, field: str) -> None:
    answer = app.client.get(f"/v1/tables/{app.ids['power']}/quantiles?{query}")
    assert answer.status_code == 422, answer.text
    assert answer.json()["field"] == field


def test_quantile_count_is_bounded(app: App) -> None:
    query = "&".join(["v=0.5"] * (table_publish.MAX_QUANTILES + 1))
    answer = app.client.get(f"/v1/tables/{app.ids['power']}/quantiles?{query}")
    assert answer.status_code == 422
    assert "at most" in answer.json()["detail"]


# ---------------------------------------------------------------- plots ----


def test_plots_are_deterministic_and_keep_text(app: App) -> None:
    table_id = app.ids["power"]
    svg = app.client.get(f"/v1/tables/{table_id}/plot.svg")
    assert svg.status_code == 200
    assert svg.headers["content-type"] == "image/svg+xml"
    assert b"<text" in svg.content
    assert b"log10 v1(t)" in svg.content
    assert b"lower tail" in svg.content
    assert b"samples [y_1, y_N]" in svg.content
    assert b"<dc:date>" not in svg.content
    app.client.app.state.table_caches.published.clear()  # draw again from scratch
    assert app.client.get(f"/v1/tables/{table_id}/plot.svg").content == svg.content
    png = app.client.get(f"/v1/tables/{table_id}/plot.png?dpi=60")
    assert png.content.startswith(b"\x89PNG")
    assert png.headers["etag"].endswith('-60"')
    app.client.app.state.table_caches.published.clear()
    assert app.client.get(f"/v1/tables/{table_id}/plot.png?dpi=60").content == png.content
    big = app.client.get(f"/v1/tables/{table_id}/plot.png")  # 300 dpi by default
    assert len(big.content) > len(png.content)
    assert app.client.get(f"/v1/tables/{table_id}/plot.png?dpi=601").status_code == 422
    pdf = app.client.get(f"/v1/tables/{table_id}/plot.pdf")
    assert pdf.status_code == 200
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.content.startswith(b"%PDF")
    assert b"DejaVuSans" in pdf.content  # fonts embedded (pdf.fonttype 42)
    assert b"/CreationDate" not in pdf.content
    assert pdf.headers["etag"] == svg.headers["etag"]  # the table's data_sha256
    app.client.app.state.table_caches.published.clear()  # type: ignore[attr-defined]
    assert app.client.get(f"/v1/tables/{table_id}/plot.pdf").content == pdf.content


def test_plot_options_change_the_figure_and_its_etag(app: App) -> None:
    table_id = app.ids["power"]
    base = f"/v1/tables/{table_id}/plot"
    svg = app.client.get(base + ".svg")
    sized = app.client.get(base + ".svg?width=3.5&height=2.5&font_size=12")
    assert sized.status_code == 200
    assert sized.headers["etag"] == svg.headers["etag"][:-1] + '-w3.5-h2.5-f12"'
    assert b"font-size: 12px" in sized.content
    assert b"font-size: 12px" not in svg.content
    # the axes span 86 % x 78 % of the 3.5 x 2.5 in figure (72 pt per inch)
    assert b'width="216.72" height="140.4"' in sized.content
    png = app.client.get(base + ".png?dpi=100&width=3.5")
    assert png.headers["etag"].endswith('-100-w3.5"')
    assert Image.open(io.BytesIO(png.content)).info["dpi"] == pytest.approx((100, 100), abs=0.01)
    for query, field in (
        ("width=0.5", "width"),
        ("height=21", "height"),
        ("font_size=4", "font_size"),
    ):
        for suffix in (".svg", ".pdf", ".png"):
            r = app.client.get(f"{base}{suffix}?{query}")
            assert r.status_code == 422, (suffix, query)
            assert r.json()["field"] == field


# ---------------------------------------------------------------- ladders ----


def offline_ladder_ln_v1(text: str, t: float) -> float:
    """``ln v1(t)`` of a ladder from its CSV alone: find the piece, evaluate it, scale."""
    header, data = split_csv(text)
    rows: dict[int, list[tuple[float, int]]] = {}
    for piece, value, count in data:
        rows.setdefault(int(piece), []).append((float(value), int(count)))
    for i in sorted(rows):
        lo, hi = header[f"pieces.{i}.t_from"], header[f"pieces.{i}.t_below"]
        if (lo is None or t >= lo) and (hi is None or t < hi):  # type: ignore[operator]
            h = {k.removeprefix(f"pieces.{i}."): v for k, v in header.items()}
            values = np.array([r[0] for r in rows[i]])
            counts = np.array([r[1] for r in rows[i]])
            frac = float(h["ln_volume_fraction"])  # type: ignore[arg-type]
            return offline_ln_v1(h, values, counts, t) + frac
    raise AssertionError(f"no piece serves {t}")


def test_ladder_curve_recomputed_offline_equals_the_nested_ranks(app: App) -> None:
    url = f"/v1/ladders/{LADDER}/curve.json"
    assert app.client.get(url).status_code == 409  # not built yet
    made = app.client.post("/v1/tables", json={"function_id": LADDER, "ladder": True})
    assert made.status_code == 200, made.text
    body = app.client.get(url).json()
    assert [lv["table_id"] for lv in body["levels"]] == [lv["id"] for lv in made.json()["levels"]]
    assert body["pieces"][0]["level"] == 0
    assert body["pieces"][0]["t_below"] is None
    assert len(body["pieces"]) >= 2  # deeper levels serve the low t
    csv = app.client.get(f"/v1/ladders/{LADDER}/curve.csv")
    assert csv.status_code == 200
    deepest = body["pieces"][-1]
    e = [1e-12, 1e-9, 1e-7, 1e-5, 1e-4, 1e-3, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 20.0, 49.0, 60.0]
    t = e + [p["t_from"] for p in body["pieces"] if p["t_from"] is not None]
    t += [deepest["lower_tail"]["limit"], -1.0, 0.0]
    offline = [offline_ladder_ln_v1(csv.text, x) / math.log(10.0) for x in t]
    ranks = app.client.post(
        "/v1/absolute-ranks",
        json={
            "function_id": LADDER,
            "values": t,
            "regions": "nested",
            "use_analytic": False,
        },
    )
    assert ranks.status_code == 200, ranks.text
    assert ranks.json()["source"]["kind"] == "nested"
    assert_same(offline, [r["log10_v"] for r in ranks.json()["results"]], t)
    # caching: the ETag hashes the levels' data_sha256
    etag = app.client.get(url).headers["etag"]
    assert app.client.get(url, headers={"If-None-Match": etag}).status_code == 304
    svg = app.client.get(f"/v1/ladders/{LADDER}/plot.svg")
    assert svg.status_code == 200
    assert b"level 1" in svg.content
    assert app.client.get(f"/v1/ladders/{LADDER}/plot.png?dpi=50").content.startswith(b"\x89PNG")
    pdf = app.client.get(f"/v1/ladders/{LADDER}/plot.pdf")
    assert pdf.content.startswith(b"%PDF")
    assert b"DejaVuSans" in pdf.content
    assert pdf.headers["etag"] == svg.headers["etag"]
    assert app.client.get(f"/v1/ladders/{LADDER}/plot.pdf?width=30").json()["field"] == "width"


def test_ladder_errors(app: App) -> None:
    assert app.client.get("/v1/ladders/bbob/f25/i1/d10/curve.json").status_code == 404
    plateau = app.client.get("/v1/ladders/classic/step/d2/curve.json")
    assert plateau.status_code == 422
    assert plateau.json()["field"] == "function_id"
    missing = app.client.get("/v1/ladders/classic/ellipsoid/d2/curve.csv")
    assert missing.status_code == 409
    assert missing.json()["type"].endswith("/table-not-built")


# ---------------------------------------------------------------- size ----


def test_a_16384_knot_curve_is_served_fast(tmp_path: Path) -> None:
    import time

    settings = api_settings(tmp_path, table_n_knots=16384, table_k_exact=4096)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    application = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = application
    with TestClient(application) as client:
        made = client.post("/v1/tables", json={"function_id": "classic/sphere/d2", "log2n": 16})
        table_id = made.json()["id"]
        t0 = time.perf_counter()
        answer = client.get(f"/v1/tables/{table_id}/curve.json")
        first = time.perf_counter() - t0
        t0 = time.perf_counter()
        client.get(f"/v1/tables/{table_id}/curve.json")
        warm = time.perf_counter() - t0
    assert answer.status_code == 200
    assert answer.json()["n_knots"] > 16384
    assert first < 2.0, first
    assert warm < 0.5, warm


def test_the_csv_header_holds_every_field_of_the_json(app: App) -> None:
    table_id = app.ids["power"]
    body = app.client.get(f"/v1/tables/{table_id}/curve.json").json()
    header, values, counts = read_csv(app.client.get(f"/v1/tables/{table_id}/curve.csv").text)
    expected = {}
    for key, value in body.items():
        if key in ("options", "lower_tail", "upper_tail"):
            expected |= {f"{key}.{k}": v for k, v in value.items()}
        elif key != "knots":
            expected[key] = value
    assert header == expected
    assert values.tolist() == body["knots"]["value"]  # repr round-trips every float exactly
    assert counts.tolist() == body["knots"]["count"]
