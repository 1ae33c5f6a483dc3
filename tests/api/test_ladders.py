"""Ladders of nested regions over HTTP (SPEC §3.4): POST /v1/tables with ``"ladder": true``.

Also the per-coordinate box tables the ladders are made of (``delta`` as a list).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.domain import absrank, nested
from app.domain.functions import get_function
from app.errors import InvalidInput, TableNotBuilt, TableNotReady
from app.main import create_app
from app.services import ladder_levels, ladders
from app.services import tables as table_service
from app.services.provenance import canonical_sha256
from app.services.table_cache import LadderCaches
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PROBLEM = "application/problem+json"
LEVELS = 3
LADDER = {"function_id": "classic/sphere/d2", "ladder": True, "log2n": 10}
ELLIPSOID = "classic/ellipsoid/d10"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return api_settings(tmp_path, nested_levels=LEVELS, nested_factor=2.0)


def _ellipsoid_shape() -> np.ndarray:
    """``1/sqrt(w_i)`` normalized to max 1 for ``Σ w_i x_i²``, ``w_i = f(e_i)``."""
    w = get_function(ELLIPSOID).evaluate(np.eye(10))
    a = 1.0 / np.sqrt(w)
    return a / a.max()


# ---------------------------------------------------------------- cube-shaped (sphere) ----


def test_ladder_is_queued_then_ready(client: TestClient, dispatcher: InlineDispatcher) -> None:
    dispatcher.hold = True
    first = client.post("/v1/tables", json=LADDER)
    assert first.status_code == 202, first.text
    body = first.json()
    assert body["ladder"] is True
    assert body["status"] == "building"
    assert (body["nested_factor"], body["nested_levels"], body["n"]) == (2.0, LEVELS, 1024)
    assert (body["nested_levels_cap"], body["stop"]) == (LEVELS, "levels")
    assert body["nested_min_log10_volume"] == -60.0
    # the sphere's sublevel sets are balls: the boxes are cubes, as in Jing & Liu §V
    shape = body["shape"]
    assert shape["half_widths"] == [1.0, 1.0]
    assert (shape["model"], shape["degree"], shape["fallback"]) == ("quadratic-form", 2.0, None)
    assert shape["fit_residual"] < 1e-9
    levels = body["levels"]
    assert [lv["level"] for lv in levels] == list(range(LEVELS + 1))
    assert [lv["sigma"] for lv in levels] == [None, 2.56, 1.28, 0.64]
    assert [lv["delta"] for lv in levels] == [None, [2.56] * 2, [1.28] * 2, [0.64] * 2]
    assert levels[2]["log10_volume_fraction"] == pytest.approx(-4 * math.log10(2.0))
    assert body["deepest_log10_volume_fraction"] == levels[-1]["log10_volume_fraction"]
    assert all(lv["status"] == "building" for lv in levels)
    assert first.headers["location"] == levels[0]["location"]
    assert body["progress"] == {"done": 0, "total": 4, "fraction": 0.0}
    # asking again returns the same tables and queues nothing new
    again = client.post("/v1/tables", json=LADDER).json()
    assert [lv["id"] for lv in again["levels"]] == [lv["id"] for lv in levels]
    queued = list(dispatcher.chunks)
    assert len(queued) == LEVELS + 1  # one chunk of 2^10 per level
    # a level samples the box asked for directly, but its spec also records the ladder's shape
    box = client.post(
        "/v1/tables", json={"function_id": "classic/sphere/d2", "delta": [1.28, 1.28], "log2n": 10}
    ).json()
    level2 = client.get(levels[2]["location"]).json()
    assert box["id"] != levels[2]["id"]
    for key in ("kind", "delta", "lower", "upper"):
        assert box["spec"]["region"][key] == level2["spec"]["region"][key]
    assert level2["spec"]["region"]["ladder"] == {"sigma": 1.28, "shape": _spec_shape(shape)}
    dispatcher.hold = False
    for table_id, index in queued:
        dispatcher.enqueue_chunk(table_id, index)
    ready = client.post("/v1/tables", json=LADDER)
    assert ready.status_code == 200
    assert ready.json()["status"] == "ready"
    assert "location" not in ready.headers
    assert ready.json()["progress"]["fraction"] == 1.0
    for lv in ready.json()["levels"]:
        table = client.get(lv["location"]).json()
        assert table["status"] == "ready"
        assert table["spec"]["region"].get("delta") == lv["delta"]


def _spec_shape(described: dict) -> dict:
    keys = ("method", "model", "half_widths", "degree", "fit_residual", "fallback")
    return {k: described[k] for k in keys}


def test_level_zero_is_the_default_table(client: TestClient, settings: Settings) -> None:
    plain = client.post("/v1/tables", json={"function_id": "classic/sphere/d2"}).json()
    ladder = client.post("/v1/tables", json={"function_id": "classic/sphere/d2", "ladder": True})
    assert ladder.status_code == 200
    assert ladder.json()["levels"][0]["id"] == plain["id"]
    ids = table_service.ladder_table_ids(
        settings, "classic/sphere/d2", cache=LadderCaches.from_settings(settings)
    )
    assert ids == [lv["id"] for lv in ladder.json()["levels"]]


def test_sphere_d10_ladder_is_cubic_down_to_the_volume_target(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, nested_levels=64, nested_min_log10_volume=-30.0)
    specs = table_service.ladder_specs(
        settings, "classic/sphere/d10", log2n=8, cache=LadderCaches.from_settings(settings)
    )
    # 3 decades per level in 10-D at factor 2: level 10 is the first at <= 1e-30
    assert len(specs) == 11
    for j, spec in enumerate(specs[1:], start=1):
        region = spec["region"]
        assert region["delta"] == [5.12 / 2**j] * 10
        assert region["ladder"]["shape"]["half_widths"] == [1.0] * 10
        assert region["ladder"]["sigma"] == 5.12 / 2**j
    _, shape, plan = table_service.ladder_plan(
        settings, "classic/sphere/d10", cache=LadderCaches.from_settings(settings)
    )
    assert shape.is_cube
    assert plan.stop == "volume"
    assert plan.log10_volume_fraction == pytest.approx(-100 * math.log10(2.0))


# ---------------------------------------------------------------- shaped (ellipsoid) ------


def test_shaped_ladder_on_the_ellipsoid(tmp_path: Path) -> None:
    # factor 10: sigma_0 = 5.12/a_min = 5120, so level 3 (sigma = 5.12) is the bounding box of
    # the ellipsoid {f <= 5.12^2} and level 4 the same box / 10; levels 1-2 still span the
    # domain along the long axes while the short ones shrink
    settings = api_settings(tmp_path, nested_levels=4, nested_factor=10.0)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        r = c.post("/v1/tables", json={"function_id": ELLIPSOID, "ladder": True, "log2n": 10})
        assert r.status_code == 200, r.text
        body = r.json()
        tables = [c.get(lv["location"]).json() for lv in body["levels"]]
    a = _ellipsoid_shape()
    shape = body["shape"]
    np.testing.assert_allclose(shape["half_widths"], a, rtol=5e-3)  # 3 significant digits
    assert shape["condition"] == pytest.approx(1e6, rel=1e-3)
    assert shape["log10_fill_share"] == pytest.approx(-2.6, abs=0.01)  # axis-aligned: V_d/2^d
    assert shape["fit_residual"] < 1e-6
    assert shape["fallback"] is None
    assert body["stop"] == "levels"
    assert [lv["sigma"] for lv in body["levels"]] == pytest.approx([None, 512, 51.2, 5.12, 0.512])
    half = np.asarray(shape["half_widths"])
    for lv, table in zip(body["levels"][1:], tables[1:], strict=True):
        h = np.asarray(lv["delta"])
        np.testing.assert_allclose(h, np.minimum(5.12, lv["sigma"] * half), rtol=1e-12)
        region = table["spec"]["region"]
        assert region["kind"] == "box"
        np.testing.assert_array_equal(region["upper"], np.minimum(5.12, h))
        np.testing.assert_array_equal(region["lower"], -np.minimum(5.12, h))
        assert region["ladder"]["shape"] == _spec_shape(shape)
        assert table["status"] == "ready"
    # the two deepest boxes have the aspect ratios of the sublevel ellipsoids, 1/sqrt(w_i)
    for lv in body["levels"][3:]:
        h = np.asarray(lv["delta"])
        np.testing.assert_allclose(h / h.max(), a, rtol=5e-3)
    # level 1 (sigma = 512) spans the domain along the long axes (a_i >= 0.01), the short ones
    # shrink first; 10 decades of volume per level once no side spans the domain (3 -> 4)
    assert np.sum(np.asarray(body["levels"][1]["delta"]) < 5.12) == np.sum(a < 0.01) == 3
    fractions = [lv["log10_volume_fraction"] for lv in body["levels"]]
    assert fractions[4] - fractions[3] == pytest.approx(-10.0)
    assert fractions[3] == pytest.approx(float(np.sum(np.log10(half))), abs=1e-9)
    # every ladder table lies inside the previous one
    for outer, inner in itertools.pairwise(t["spec"]["region"] for t in tables):
        assert np.all(np.asarray(inner["lower"]) >= outer["lower"])
        assert np.all(np.asarray(inner["upper"]) <= outer["upper"])


def test_the_shape_enters_every_level_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = api_settings(tmp_path, nested_levels=3)
    ids = table_service.ladder_table_ids(
        settings, ELLIPSOID, log2n=8, cache=LadderCaches.from_settings(settings)
    )
    fn = get_function(ELLIPSOID)
    fitted = table_service.ladder_shape_of(fn)
    other = dataclasses.replace(fitted, fit_residual=0.5)  # same half-widths, another fit
    monkeypatch.setattr(ladders, "ladder_shape_of", lambda _fn: other)
    changed = table_service.ladder_table_ids(
        settings, ELLIPSOID, log2n=8, cache=LadderCaches.from_settings(settings)
    )
    assert changed[0] == ids[0]  # the domain table has no shape
    assert all(a != b for a, b in zip(ids[1:], changed[1:], strict=True))


def test_whitened_shape_is_served_and_enters_the_specs(
    client: TestClient, dispatcher: InlineDispatcher
) -> None:
    # BBOB f10 (rotated ellipsoid, condition 1e6, T_osz): the first fit is indefinite, the
    # whitening passes give an oriented shape, recorded in the answer and in every level's spec
    dispatcher.hold = True
    r = client.post(
        "/v1/tables", json={"function_id": "bbob/f10/i1/d5", "ladder": True, "log2n": 8}
    )
    assert r.status_code == 202, r.text
    body = r.json()
    shape = body["shape"]
    assert shape["fallback"] is None
    assert shape["whitened"] >= 1
    assert shape["oriented"] is True
    assert shape["condition"] == pytest.approx(1e6, rel=0.5)
    fn = get_function("bbob/f10/i1/d5")
    level = client.get(body["levels"][1]["location"]).json()
    assert level["spec"]["region"]["ladder"]["shape"]["whitened"] == shape["whitened"]
    assert table_service.ladder_shape_of(fn).whitened == shape["whitened"]


def test_failed_fit_falls_back_to_cubes_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fn = get_function("classic/sphere/d2")
    flat = dataclasses.replace(fn, kernel=lambda X: np.maximum(np.abs(X[:, 0]) - 1.0, 0.0))
    monkeypatch.setattr(ladders, "get_function", lambda _id: flat)
    settings = api_settings(tmp_path, nested_levels=2)
    _, shape, plan = table_service.ladder_plan(
        settings, "classic/sphere/d2", cache=LadderCaches.from_settings(settings)
    )
    assert shape.is_cube
    assert "plateau" in (shape.fallback or "")
    specs = table_service.ladder_specs(
        settings, "classic/sphere/d2", log2n=8, cache=LadderCaches.from_settings(settings)
    )
    assert specs[1]["region"]["ladder"]["shape"]["fallback"] == shape.fallback
    assert specs[1]["region"]["delta"] == [2.56, 2.56]
    assert len(plan.boxes) == 3


# ---------------------------------------------------------------- curves and errors -------


def test_nested_curve_from_the_stored_ladder(
    client: TestClient, settings: Settings, dispatcher: InlineDispatcher
) -> None:
    sm = dispatcher._sm()
    state = client.app.state
    assert (
        table_service.ready_ladder(
            sm,
            settings,
            "classic/sphere/d2",
            log2n=10,
            cache=state.table_caches,
            ladder_cache=state.ladder_caches,
        )
        is None
    )
    with pytest.raises(TableNotBuilt) as missing:
        ladders.ladder_curve(
            sm,
            settings,
            "classic/sphere/d2",
            log2n=10,
            cache=state.table_caches,
            ladder_cache=state.ladder_caches,
        )
    assert missing.value.extra["table_request"]["ladder"] is True
    assert client.post("/v1/tables", json=LADDER).status_code == 200
    ready = table_service.ready_ladder(
        sm,
        settings,
        "classic/sphere/d2",
        log2n=10,
        cache=state.table_caches,
        ladder_cache=state.ladder_caches,
    )
    assert ready is not None
    assert len(ready) == LEVELS + 1
    assert (
        table_service.cached_ready_table(sm, ready[-1][0].id, cache=state.table_caches) is not None
    )
    curve, views = ladders.ladder_curve(
        sm,
        settings,
        "classic/sphere/d2",
        log2n=10,
        cache=state.table_caches,
        ladder_cache=state.ladder_caches,
    )
    assert [v.id for v in views] == [v.id for v, _ in ready]
    assert curve.info["method"] == "nested"
    assert [lv["table_id"] for lv in curve.info["levels"]] == [v.id for v in views]
    assert [lv["sigma"] for lv in curve.info["levels"]] == [None, 2.56, 1.28, 0.64]
    assert curve.info["levels"][1]["delta"] == [2.56, 2.56]
    t = np.array([1e-4, 1e-8, 1e-12])  # v1 = π t / 10.24²: down to 3e-14, far below 1/N = 1e-3
    res = absrank.ranks_from_curve(t, curve)
    exact = np.log10(math.pi * t / 10.24**2)
    np.testing.assert_allclose(res.log10_v, exact, atol=0.15)
    assert all(m.startswith("nested-") for m in res.method)
    again = ladder_levels.nested_curve_for(get_function("classic/sphere/d2"), ready)
    assert again.evaluate(t)[0].tobytes() == curve.evaluate(t)[0].tobytes()


def test_a_building_level_is_409_with_its_location(
    client: TestClient, settings: Settings, dispatcher: InlineDispatcher
) -> None:
    dispatcher.hold = True
    body = client.post("/v1/tables", json=LADDER).json()
    state = client.app.state
    with pytest.raises(TableNotReady) as building:
        ladders.ladder_curve(
            dispatcher._sm(),
            settings,
            "classic/sphere/d2",
            log2n=10,
            cache=state.table_caches,
            ladder_cache=state.ladder_caches,
        )
    assert building.value.field == "function_id"
    assert building.value.extra["level"] == 0
    assert building.value.headers["Location"] == body["levels"][0]["location"]


@pytest.mark.parametrize(
    ("payload", "status", "field"),
    [
        ({"function_id": "classic/sphere/d2", "ladder": True, "delta": 1.0}, 422, "delta"),
        ({"function_id": "classic/sphere/d2", "ladder": True, "delta": [1.0, 1.0]}, 422, "delta"),
        ({"function_id": "classic/sphere/d2", "ladder": "yes"}, 422, "ladder"),
        ({"function_id": "classic/step/d2", "ladder": True}, 422, "function_id"),
        ({"function_id": "classic/nothing/d2", "ladder": True}, 404, "function_id"),
        ({"function_id": "classic/sphere/d2", "ladder": True, "log2n": 30}, 422, "log2n"),
    ],
)
def test_bad_ladder_requests(client: TestClient, payload: dict, status: int, field: str) -> None:
    r = client.post("/v1/tables", json=payload)
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == field
    assert client.get("/v1/tables").json()["total"] == 0  # no level half requested


def test_function_without_minimiser_is_refused(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    blind = dataclasses.replace(get_function("classic/sphere/d2"), x_opt=None)
    monkeypatch.setattr(ladders, "get_function", lambda _id: blind)
    with pytest.raises(InvalidInput) as info:
        table_service.ladder_specs(
            settings, "classic/sphere/d2", cache=LadderCaches.from_settings(settings)
        )
    assert info.value.field == "function_id"
    assert "x*" in info.value.detail


def test_ladder_specs_follow_the_settings(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, nested_levels=4, nested_factor=4.0)
    specs = table_service.ladder_specs(
        settings, "bbob/f1/i1/d2", log2n=8, seed=5, cache=LadderCaches.from_settings(settings)
    )
    fn = get_function("bbob/f1/i1/d2")
    assert fn.x_opt is not None
    delta0 = float(np.max(np.maximum(fn.x_opt - fn.lower, fn.upper - fn.x_opt)))
    assert specs[0]["region"]["kind"] == "domain"
    sigmas = [delta0 / 4.0**j for j in range(1, 5)]
    assert [s["region"]["ladder"]["sigma"] for s in specs[1:]] == sigmas
    assert [s["region"]["delta"] for s in specs[1:]] == [[v, v] for v in sigmas]
    for spec, sigma in zip(specs[1:], sigmas, strict=True):  # off-centre x*: clipped by Ω
        lo, hi = np.asarray(spec["region"]["lower"]), np.asarray(spec["region"]["upper"])
        np.testing.assert_array_equal(lo, np.maximum(fn.lower, fn.x_opt - sigma))
        np.testing.assert_array_equal(hi, np.minimum(fn.upper, fn.x_opt + sigma))
    assert {s["n"] for s in specs} == {256}
    assert {s["seed"] for s in specs} == {5}
    # a volume target stops the ladder early: level 3 is at 10^-3.4 (clipped by Ω)
    early = api_settings(tmp_path, nested_levels=9, nested_factor=4.0, nested_min_log10_volume=-2.5)
    assert (
        len(
            table_service.ladder_specs(
                early, "bbob/f1/i1/d2", log2n=8, cache=LadderCaches.from_settings(early)
            )
        )
        == 4
    )
    assert (
        table_service.ladder_plan(early, "bbob/f1/i1/d2", cache=LadderCaches.from_settings(early))[
            2
        ].stop
        == "volume"
    )


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"nested_factor": 1.0}, "greater than 1"),
        ({"nested_levels": 0}, "greater than or equal to 1"),
        ({"nested_levels": 65}, "less than or equal to 64"),
        ({"nested_min_log10_volume": 0.0}, "less than 0"),
        ({"nested_min_log10_volume": float("nan")}, "finite number"),
    ],
)
def test_nested_settings_are_validated(tmp_path: Path, overrides: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        api_settings(tmp_path, **overrides)


def test_ladder_needs_the_api_key_when_configured(tmp_path: Path) -> None:
    settings = api_settings(tmp_path, api_keys=["s3cret"], nested_levels=2)
    migrate(settings.database_url)
    dispatcher = InlineDispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as c:
        assert c.post("/v1/tables", json=LADDER).status_code == 401
        ok = c.post("/v1/tables", json=LADDER, headers={"X-API-Key": "s3cret"})
        assert ok.status_code == 200
        assert len(ok.json()["levels"]) == 3


def test_openapi_documents_the_ladder(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    create = spec["paths"]["/v1/tables"]["post"]
    assert "ladder" in create["description"]
    assert "shape" in create["description"]
    schemas = spec["components"]["schemas"]
    assert "ladder" in schemas["TableCreate"]["properties"]
    assert "LadderRead" in schemas
    assert "shape" in schemas["LadderRead"]["properties"]
    delta = schemas["TableCreate"]["properties"]["delta"]
    assert "array" in str(delta)  # a number or a list


# ---------------------------------------------------------------- per-coordinate boxes ----


def test_per_coordinate_box_table(client: TestClient, settings: Settings) -> None:
    r = client.post(
        "/v1/tables", json={"function_id": "classic/ellipsoid/d2", "delta": [2.0, 0.002]}
    )
    assert r.status_code == 200, r.text
    region = r.json()["spec"]["region"]
    assert region == {
        "kind": "box",
        "delta": [2.0, 0.002],
        "lower": [-2.0, -0.002],
        "upper": [2.0, 0.002],
    }
    # clipped per coordinate by the domain
    fn = get_function("bbob/f1/i1/d2")
    assert fn.x_opt is not None
    half = np.array([10.0, 0.5])
    spec = table_service.table_spec(settings, function_id=fn.id, delta=half.tolist())
    np.testing.assert_array_equal(spec["region"]["lower"], np.maximum(fn.lower, fn.x_opt - half))
    np.testing.assert_array_equal(spec["region"]["upper"], np.minimum(fn.upper, fn.x_opt + half))


def test_scalar_delta_spec_is_unchanged(settings: Settings) -> None:
    spec = table_service.table_spec(settings, function_id="classic/sphere/d3", delta=0.5)
    region = spec["region"]
    assert list(region) == ["kind", "delta", "lower", "upper"]
    assert region == {"kind": "box", "delta": 0.5, "lower": [-0.5] * 3, "upper": [0.5] * 3}
    assert isinstance(region["delta"], float)
    assert table_service.spec_hash(spec) == canonical_sha256(spec)
    # the same box as a list is another spec (the list is recorded as given)
    as_list = table_service.table_spec(settings, function_id="classic/sphere/d3", delta=[0.5] * 3)
    assert as_list["region"]["lower"] == region["lower"]
    assert table_service.spec_hash(as_list) != table_service.spec_hash(spec)


@pytest.mark.parametrize(
    ("delta", "field", "message"),
    [
        ([1.0], "delta", "2 numbers"),
        ([1.0, 1.0, 1.0], "delta", "2 numbers"),
        ([], "delta", "at least 1"),
        ([1.0, 0.0], "delta.1", "greater than 0"),
        ([-1.0, 1.0], "delta.0", "greater than 0"),
        ([1.0, "1"], "delta.1", "valid number"),
        ([True, 1.0], "delta.0", "valid number"),
        ([1.0, 1e-12], "delta.1", "too small"),
        ([1.0, 1e300], None, None),  # clipped to the domain: fine
    ],
)
def test_bad_per_coordinate_delta(
    client: TestClient, delta: list, field: str | None, message: str | None
) -> None:
    r = client.post("/v1/tables", json={"function_id": "classic/sphere/d2", "delta": delta})
    if field is None:
        assert r.status_code == 200, r.text
        return
    assert r.status_code == 422, r.text
    assert r.headers["content-type"].startswith(PROBLEM)
    assert r.json()["field"] == field
    assert message in r.json()["detail"]
    assert client.get("/v1/tables").json()["total"] == 0


def test_non_finite_delta_entry_is_422(client: TestClient) -> None:
    body = '{"function_id": "classic/sphere/d2", "delta": [1.0, NaN]}'
    r = client.post("/v1/tables", content=body, headers={"content-type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["field"] == "delta.1"


@pytest.mark.parametrize(
    ("delta", "field"),
    [([1.0, math.inf], "delta.1"), ([1.0, -0.5], "delta.1"), (["a", 1.0], "delta.0")],
)
def test_table_spec_names_the_bad_coordinate(settings: Settings, delta: list, field: str) -> None:
    with pytest.raises(InvalidInput) as info:
        table_service.table_spec(settings, function_id="classic/sphere/d2", delta=delta)
    assert info.value.field == field


def test_service_plan_is_the_domain_plan(settings: Settings) -> None:
    caches = LadderCaches.from_settings(settings)
    fn, shape, plan = table_service.ladder_plan(settings, ELLIPSOID, cache=caches)
    want_shape = nested.ladder_shape(fn.evaluate, fn.x_opt, fn.f_opt, fn.lower, fn.upper)
    assert shape.describe() == want_shape.describe()
    want = nested.plan_ladder(
        fn.lower,
        fn.upper,
        fn.x_opt,
        factor=settings.nested_factor,
        max_levels=settings.nested_levels,
        min_log10_volume=settings.nested_min_log10_volume,
        shape=np.asarray(want_shape),
    )
    assert [b.lower.tobytes() for b in plan.boxes] == [b.lower.tobytes() for b in want.boxes]
    assert table_service.ladder_plan(settings, ELLIPSOID, cache=caches)[2] is plan  # cached


def test_ladder_boxes_are_region_boxes(settings: Settings) -> None:
    """The service's level boxes are exactly the box tables of their half-widths."""
    fn = get_function("bbob/f21/i1/d5")
    plan = nested.plan_ladder(
        fn.lower,
        fn.upper,
        fn.x_opt,
        factor=2.0,
        max_levels=6,
        min_log10_volume=-60.0,
        shape=np.array([1.0, 0.5, 0.25, 0.125, 0.0625]),
    )
    for box in plan.boxes[1:]:
        assert box.half_widths is not None
        spec = table_service.table_spec(settings, function_id=fn.id, delta=list(box.half_widths))
        assert np.asarray(spec["region"]["lower"]).tobytes() == box.lower.tobytes()
        assert np.asarray(spec["region"]["upper"]).tobytes() == box.upper.tobytes()
