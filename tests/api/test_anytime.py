"""POST /v1/runtime-distributions and /v1/profiles: hand examples with exact breakpoints, the
anytime absolute rank against the sphere's exact v_c, cocopp on a cocoex archive, refusals,
figures, and the result_sets path on SQLite and PostgreSQL."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Literal

import matplotlib as mpl
import numpy as np
import pytest
from fastapi.testclient import TestClient

from app.domain.anytime import DEFAULT_TARGETS
from app.domain.functions import get_function
from app.domain.importers import UploadLimits, read_upload
from app.main import create_app
from tests.api.conftest import api_settings
from tests.support import migrate, pg_admin_url, pg_databases, require_postgres
from tests.unit.importers.loggers import run_cocoex, zip_folder
from workers.inline import InlineDispatcher

SPHERE = "classic/sphere/d2"
PROBLEM = "application/problem+json"


def hand_body(**overrides: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "algorithms": [
            {
                "algorithm": "DE",
                "runs": [
                    {
                        "function_id": SPHERE,
                        "evaluations": [1, 10, 100],
                        "values": [5.0, 0.5, 1e-3],
                    },
                    {
                        "function_id": SPHERE,
                        "evaluations": [1, 20, 100],
                        "values": [4.0, 0.05, 0.01],
                    },
                ],
            }
        ],
        "targets": [1.0, 0.1, 0.01],
        "budgets": [10, 100],
    }
    out.update(overrides)
    return out


@pytest.fixture(scope="module")
def pg_url_factory() -> Iterator[Callable[[], str]]:
    admin = pg_admin_url()
    require_postgres(admin)
    with pg_databases(admin) as create:
        yield create


@pytest.fixture
def make_client(tmp_path: Path) -> Iterator[Callable[..., TestClient]]:
    stack: list[TestClient] = []

    def make(**overrides: object) -> TestClient:
        where = tmp_path / f"app{len(stack)}"
        where.mkdir()
        settings = api_settings(where, **overrides)
        migrate(settings.database_url)
        dispatcher = InlineDispatcher(settings)
        app = create_app(settings, dispatcher=dispatcher)
        dispatcher.app = app  # type: ignore[assignment]  # as tests/api/conftest.py
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


def post(client: TestClient, path: str, body: Any) -> dict[str, Any]:
    r = client.post(path, json=body)
    assert r.status_code == 200, r.text
    return r.json()  # type: ignore[no-any-return]


def refused(response: Any, status: int, field: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(PROBLEM)
    problem = response.json()
    assert problem["field"] == field, problem
    return problem  # type: ignore[no-any-return]


# --- hand examples ------------------------------------------------------------------------------


def test_ert_successes_and_ecdf_breakpoints_by_hand(client: TestClient) -> None:
    out = post(client, "/v1/runtime-distributions", hand_body())
    (item,) = out["functions"]
    assert (item["algorithm"], item["function_id"], item["runs"]) == ("DE", SPHERE, 2)
    assert item["budgets_used"] == [100, 100]
    # first hits: target 1 → (10, 20); 0.1 → (100, 20); 0.01 → (100, 100)
    assert item["successes"] == [2, 2, 2]
    assert item["ert"] == [15.0, 60.0, 100.0]
    assert item["ecdf"] == {
        "x": [10.0, 20.0, 100.0],
        "counts": [0, 1, 3, 6],
        "total": 6,
        "continuity": "right",
    }
    # best-so-far at c = 10: (0.5, 4.0); at c = 100: (1e-3, 1e-2); numpy's linear quantiles
    q = item["fixed_budget"]
    assert q["levels"] == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert q["values"][0] == [0.5, 1e-3]
    assert q["values"][4] == [4.0, 0.01]
    assert q["values"][2] == pytest.approx([2.25, 0.0055], rel=1e-15)
    assert out["targets"] == [1.0, 0.1, 0.01]
    assert out["budgets"] == [10, 100]
    assert out["warnings"] == []
    assert len(out["provenance"]["request_sha256"]) == 64


def test_an_unsuccessful_run_adds_its_budget_and_no_success_is_null(client: TestClient) -> None:
    body = hand_body()
    body["algorithms"][0]["runs"][1] = {
        "function_id": SPHERE,
        "evaluations": [1, 30],
        "values": [4.0, 0.5],
        "budget": 50,
    }
    body["targets"] = [1.0, 1e-3, 1e-9]
    (item,) = post(client, "/v1/runtime-distributions", body)["functions"]
    # target 1: (10 + 30) / 2; 1e-3: run 0 at 100, run 1 fails after 50: (100 + 50) / 1
    assert item["successes"] == [2, 1, 0]
    assert item["ert"] == [20.0, 150.0, None]
    assert item["ecdf"]["x"] == [10.0, 30.0, 100.0]
    assert item["ecdf"]["counts"] == [0, 1, 2, 3]
    assert item["ecdf"]["total"] == 6


def test_observed_values_and_f_values_are_converted(client: TestClient) -> None:
    f_opt = get_function("bbob/f1/i1/d2").f_opt
    assert f_opt is not None
    body = {
        "algorithms": [
            {
                "algorithm": "A",
                "runs": [
                    {
                        "function_id": "bbob/f1/i1/d2",
                        "evaluations": [1, 2, 3],
                        "values": [f_opt + 2.0, f_opt + 5.0, f_opt + 0.5],
                    }
                ],
            }
        ],
        "values_are": "f",
        "records": "observed",
        "targets": [1.0, 3.0],
        "budgets": [2, 3],
        "absolute_ranks": False,
    }
    (item,) = post(client, "/v1/runtime-distributions", body)["functions"]
    assert item["ert"] == [3.0, 1.0]
    assert item["fixed_budget"]["values"][0] == pytest.approx([2.0, 0.5], abs=1e-12)
    assert item["anytime_rank"] is None


def test_default_targets_and_budgets(client: TestClient) -> None:
    body = hand_body()
    del body["targets"], body["budgets"]
    out = post(client, "/v1/runtime-distributions", body)
    assert out["targets"] == DEFAULT_TARGETS.tolist()
    assert len(out["targets"]) == 51
    assert out["budgets"] == [1, 2, 5, 10, 20, 50, 100]


def test_anytime_rank_is_the_sphere_exact_v_c(client: TestClient) -> None:
    """Sphere d2 on its box: v1(e) = π e / area while the disc of radius √e fits; v_c =
    1 − (1 − v1)^c (best of c uniform points)."""
    fn = get_function(SPHERE)
    area = float(np.prod(np.asarray(fn.upper) - np.asarray(fn.lower)))
    out = post(client, "/v1/runtime-distributions", hand_body())
    rank = out["functions"][0]["anytime_rank"]
    assert rank["methods"] == ["analytic"]
    best = [[0.5, 1e-3], [4.0, 0.01]]
    for row, got in zip(best, rank["per_run"], strict=True):
        for c, e, g in zip((10, 100), row, got, strict=True):
            v1 = math.pi * e / area
            want = math.log10(-math.expm1(c * math.log1p(-v1)))
            assert g == pytest.approx(want, rel=1e-9), (c, e)
    assert rank["quantiles"]["values"][2][1] == pytest.approx(
        (rank["per_run"][0][1] + rank["per_run"][1][1]) / 2, rel=1e-12
    )


def test_a_function_without_a_table_gets_a_typed_warning(client: TestClient) -> None:
    body = hand_body()
    for run in body["algorithms"][0]["runs"]:
        run["function_id"] = "my-own-problem"
    out = post(client, "/v1/runtime-distributions", body)
    assert out["functions"][0]["anytime_rank"] is None
    (w,) = out["warnings"]
    assert w["code"] == "anytime-rank-unavailable"
    assert (w["algorithm"], w["function_id"]) == ("DE", "my-own-problem")


def test_simulated_restarts_are_seeded_and_identical_requests_identical_bytes(
    client: TestClient,
) -> None:
    body = hand_body(simulated_restarts=6, seed=3)
    a = client.post("/v1/runtime-distributions", json=body)
    b = client.post("/v1/runtime-distributions", json=body)
    assert a.status_code == 200
    assert a.content == b.content
    sim = a.json()["functions"][0]["simulated_ecdf"]
    # every run succeeds on every target: the stratified first draw gives the runs' runtimes
    assert sim == {
        "x": [10.0, 20.0, 100.0],
        "counts": [0, 3, 9, 18],
        "total": 18,
        "continuity": "right",
    }
    svg = client.post("/v1/runtime-distributions/plot.svg", json=body)
    assert svg.content == client.post("/v1/runtime-distributions/plot.svg", json=body).content


def test_several_algorithms_and_function_ids(client: TestClient) -> None:
    body = hand_body()
    other = copy.deepcopy(body["algorithms"][0])
    other["algorithm"] = "PSO"
    other["runs"].append(
        {"function_id": "classic/ellipsoid/d2", "evaluations": [5], "values": [1.0]}
    )
    body["algorithms"].append(other)
    body["function_ids"] = [SPHERE]
    body["absolute_ranks"] = False
    out = post(client, "/v1/runtime-distributions", body)
    assert out["algorithms"] == ["DE", "PSO"]
    assert [(f["algorithm"], f["function_id"]) for f in out["functions"]] == [
        ("DE", SPHERE),
        ("PSO", SPHERE),
    ]
    body["function_ids"] = ["classic/rastrigin/d2"]
    refused(client.post("/v1/runtime-distributions", json=body), 422, "function_ids.0")


# --- refusals -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda r: r.update(evaluations=[10, 5, 100]), "algorithms.0.runs.0.evaluations"),
        (lambda r: r.update(values=[5.0, 0.5]), "algorithms.0.runs.0.values"),
        (lambda r: r.update(values=[5.0, 6.0, 1.0]), "algorithms.0.runs.0.values"),
        (lambda r: r.update(values=[5.0, 0.5, -1.0]), "algorithms.0.runs.0.values"),
        (lambda r: r.update(budget=50), "algorithms.0.runs.0.budget"),
        (lambda r: r.update(evaluations=[]), "algorithms.0.runs.0.evaluations"),
    ],
)
def test_bad_trajectories_are_refused_naming_the_field(
    client: TestClient, change: Callable[[dict[str, Any]], None], field: str
) -> None:
    body = hand_body()
    change(body["algorithms"][0]["runs"][0])
    refused(client.post("/v1/runtime-distributions", json=body), 422, field)


def test_nan_empty_runs_and_bad_options_are_refused(client: TestClient) -> None:
    text = json.dumps(hand_body()).replace("0.001", "NaN")
    r = client.post(
        "/v1/runtime-distributions", content=text, headers={"content-type": "application/json"}
    )
    refused(r, 422, "algorithms.0.runs.0.values.2")
    refused(
        client.post(
            "/v1/runtime-distributions", json=hand_body(algorithms=[{"algorithm": "A", "runs": []}])
        ),
        422,
        "algorithms.0.runs",
    )
    refused(
        client.post("/v1/runtime-distributions", json=hand_body(budgets=[100, 10])), 422, "budgets"
    )
    refused(
        client.post("/v1/runtime-distributions", json=hand_body(targets=[-1.0])), 422, "targets.0"
    )
    refused(client.post("/v1/runtime-distributions", json={"targets": [1.0]}), 422, "algorithms")
    body = hand_body()
    body["algorithms"].append(copy.deepcopy(body["algorithms"][0]))
    refused(client.post("/v1/runtime-distributions", json=body), 422, "algorithms.1.algorithm")


def test_limits_are_413_naming_the_field_and_the_setting(
    make_client: Callable[..., TestClient],
) -> None:
    c = make_client(max_anytime_records=5, max_anytime_cells=5, max_anytime_rank_budgets=1)
    p = refused(c.post("/v1/runtime-distributions", json=hand_body()), 413, "algorithms")
    assert p["detail"] == "6 records exceed max_anytime_records = 5"
    c = make_client(max_anytime_cells=5)
    p = refused(c.post("/v1/runtime-distributions", json=hand_body()), 413, "targets")
    assert p["detail"] == "6 runs × targets exceed max_anytime_cells = 5"
    c = make_client(max_anytime_cells=20)
    r = c.post("/v1/runtime-distributions", json=hand_body(simulated_restarts=10))
    assert "max_anytime_cells = 20" in refused(r, 413, "simulated_restarts")["detail"]
    c = make_client(max_anytime_rank_budgets=1)
    p = refused(c.post("/v1/runtime-distributions", json=hand_body()), 413, "budgets")
    assert p["detail"] == "2 budgets exceed max_anytime_rank_budgets = 1"


# --- figures ------------------------------------------------------------------------------------


@pytest.mark.parametrize("figure", ["ecdf", "fixed-budget", "anytime-rank"])
def test_runtime_figures_in_three_formats(client: TestClient, figure: str) -> None:
    body = hand_body()
    svg = client.post(f"/v1/runtime-distributions/plot.svg?figure={figure}", json=body)
    assert svg.status_code == 200, svg.text
    assert svg.headers["content-type"] == "image/svg+xml"
    assert b"<text" in svg.content  # text kept as text
    pdf = client.post(f"/v1/runtime-distributions/plot.pdf?figure={figure}&width=4", json=body)
    assert pdf.status_code == 200
    assert pdf.content.startswith(b"%PDF")
    png = client.post(f"/v1/runtime-distributions/plot.png?figure={figure}&dpi=80", json=body)
    assert png.status_code == 200
    assert png.content.startswith(b"\x89PNG")
    phys = png.content.index(b"pHYs")
    assert round(int.from_bytes(png.content[phys + 4 : phys + 8], "big") * 0.0254) == 80


def test_figure_options_and_body_refused_naming_the_field(client: TestClient) -> None:
    r = client.post("/v1/runtime-distributions/plot.svg?width=21", json=hand_body())
    refused(r, 422, "width")
    r = client.post("/v1/runtime-distributions/plot.svg?figure=pie", json=hand_body())
    refused(r, 422, "figure")
    r = client.post("/v1/profiles/plot.png?dpi=601", json=PERF)
    refused(r, 422, "dpi")


# --- profiles -----------------------------------------------------------------------------------

PERF = {"kind": "performance", "solvers": ["A", "B"], "costs": [[10, 20], [30, 15], [5, None]]}


def brute_profile(values: list[float | None], at: np.ndarray, *, below: bool) -> np.ndarray:
    """The profile by its definition: #{p : value <= t} (or >= t) / |P| at each t."""
    v = np.array([np.nan if x is None else x for x in values], dtype=float)
    ok = ~np.isnan(v)
    if below:
        return np.array([(v[ok] <= t).sum() for t in at]) / v.size
    return np.array([(v[ok] >= t).sum() for t in at]) / v.size


def evaluate(step: dict[str, Any], at: np.ndarray) -> np.ndarray:
    side: Literal["left", "right"] = "right" if step["continuity"] == "right" else "left"
    index = np.searchsorted(np.asarray(step["x"], dtype=float), at, side=side)
    return np.asarray(np.array(step["counts"])[index] / step["total"], dtype=float)


def test_performance_profile_by_hand(client: TestClient) -> None:
    out = post(client, "/v1/profiles", PERF)
    assert out["axis"] == "log2"
    assert out["problems"] == ["p0", "p1", "p2"]
    a, b = out["curves"]
    assert a["step"] == {"x": [1.0, 2.0], "counts": [0, 2, 3], "total": 3, "continuity": "right"}
    assert b["step"] == {"x": [1.0, 2.0], "counts": [0, 1, 2], "total": 3, "continuity": "right"}
    assert b["values"] == [2.0, 1.0, None]  # the failure is r = ∞


def test_data_profile_by_hand(client: TestClient) -> None:
    body = {"kind": "data", "solvers": ["A"], "costs": [[3], [9], [None]], "dims": [2, 2, 5]}
    (curve,) = post(client, "/v1/profiles", body)["curves"]
    assert curve["step"] == {
        "x": [1.0, 3.0],
        "counts": [0, 1, 2],
        "total": 3,
        "continuity": "right",
    }


def test_accuracy_profile_by_hand_is_left_continuous_and_capped(client: TestClient) -> None:
    body = {
        "kind": "accuracy",
        "solvers": ["A", "B"],
        "final_errors": [[1e-3, 0.0], [1.0, 1e-1]],
        "initial_errors": [1.0, 10.0],
    }
    a, b = post(client, "/v1/profiles", body)["curves"]
    assert a["values"] == [3.0, 1.0]
    assert b["values"] == [16.0, 2.0]
    assert a["step"] == {"x": [1.0, 3.0], "counts": [2, 1, 0], "total": 2, "continuity": "left"}
    assert b["step"]["x"] == [2.0, 16.0]
    assert b["step"]["counts"] == [2, 1, 0]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_profiles_agree_with_their_definitions(client: TestClient, seed: int) -> None:
    rng = np.random.default_rng(seed)
    costs = rng.integers(1, 30, size=(12, 3)).astype(float)
    cells: list[list[float | None]] = [
        [None if rng.random() < 0.2 else float(v) for v in row] for row in costs
    ]
    dims = rng.integers(1, 6, size=12).tolist()
    for kind in ("performance", "data"):
        body = {"kind": kind, "solvers": ["a", "b", "c"], "costs": cells, "dims": dims}
        out = post(client, "/v1/profiles", body)
        at = np.linspace(0.0, 40.0, 4001)
        for s, curve in enumerate(out["curves"]):
            column = [row[s] for row in cells]
            if kind == "performance":
                best = [min((v for v in row if v is not None), default=None) for row in cells]
                vals = [
                    None if v is None or m is None else v / m
                    for v, m in zip(column, best, strict=True)
                ]
            else:
                vals = [
                    None if v is None else v / (n + 1) for v, n in zip(column, dims, strict=True)
                ]
            got = np.array([np.nan if v is None else v for v in curve["values"]])
            want = np.array([np.nan if v is None else v for v in vals])
            np.testing.assert_allclose(got, want, rtol=1e-15)
            np.testing.assert_array_equal(
                evaluate(curve["step"], at), brute_profile(vals, at, below=True)
            )


def test_profile_refusals_name_the_field(client: TestClient) -> None:
    refused(client.post("/v1/profiles", json={"kind": "data", "solvers": ["A"]}), 422, "costs")
    body = {"kind": "data", "solvers": ["A"], "costs": [[1.0]]}
    refused(client.post("/v1/profiles", json=body), 422, "dims")
    body = {"kind": "performance", "solvers": ["A", "B"], "costs": [[1.0, 2.0], [1.0]]}
    refused(client.post("/v1/profiles", json=body), 422, "costs.1")
    body = {"kind": "performance", "solvers": ["A", "A"], "costs": [[1.0, 2.0]]}
    refused(client.post("/v1/profiles", json=body), 422, "solvers")
    body = {"kind": "accuracy", "solvers": ["A"], "final_errors": [[0.1]]}
    refused(client.post("/v1/profiles", json=body), 422, "initial_errors")
    body = {"kind": "performance", "solvers": ["A"], "costs": [[0.0]]}
    refused(client.post("/v1/profiles", json=body), 422, "costs.0.0")


@pytest.mark.parametrize("fmt", ["svg", "pdf", "png"])
def test_profile_figures(client: TestClient, fmt: str) -> None:
    r = client.post(f"/v1/profiles/plot.{fmt}", json=PERF | {"solvers": ["A", "粒子群"]})
    assert r.status_code == 200, r.text
    assert len(r.content) > 1000
    if fmt == "svg":
        assert "粒子群" in r.content.decode()


# --- cocopp, through the endpoint ---------------------------------------------------------------

with warnings.catch_warnings(), mpl.rc_context():
    warnings.simplefilter("ignore")
    import cocopp.pproc


@pytest.fixture(scope="module")
def coco(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], dict[str, Any]]:
    """cocopp's data sets and the same runs as an inline body (instances pooled)."""
    folder, _ = run_cocoex(
        tmp_path_factory.mktemp("coco"),
        functions="1,8",
        instances="1-6",
        dimensions="2",
        budget_per_dim=100,
    )
    ours = read_upload("coco", "r.zip", zip_folder(folder), limits=UploadLimits())
    runs = [
        {
            "function_id": r.function_id,
            "evaluations": list(r.trajectory.evaluations),
            "values": list(r.trajectory.best),
            "budget": r.budget,
        }
        for r in ours.runs
        if r.trajectory is not None
    ]
    cocopp.genericsettings.verbose = False
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        datasets = list(cocopp.pproc.DataSetList(str(folder)))
    body = {
        "algorithms": [{"algorithm": "rs", "runs": runs}],
        "pool_instances": True,
        "absolute_ranks": False,
    }
    return datasets, body


def test_ert_and_ecdf_points_equal_cocopps_through_the_endpoint(
    client: TestClient, coco: tuple[list[Any], dict[str, Any]]
) -> None:
    datasets, body = coco
    out = post(client, "/v1/runtime-distributions", body)
    got = {f["function_id"]: f for f in out["functions"]}
    assert len(got) == len(datasets) == 2
    targets = DEFAULT_TARGETS.tolist()
    for d in datasets:
        item = got[f"bbob/f{d.funcId}/d{d.dim}"]
        theirs = np.array(d.detERT(targets), dtype=float)
        ours = np.array([np.inf if v is None else v for v in item["ert"]])
        np.testing.assert_allclose(ours, theirs, rtol=1e-13)
        assert np.isinf(theirs).any()
        assert np.isfinite(theirs).any()
        evals = np.array(d.detEvals(targets), dtype=float).reshape(-1)
        evals = np.where(np.isnan(evals), np.inf, evals)
        finite = np.sort(evals[np.isfinite(evals)])
        assert item["ecdf"]["x"] == np.unique(finite).tolist()
        counts = np.searchsorted(finite, item["ecdf"]["x"], side="right")
        assert item["ecdf"]["counts"] == [0, *counts.tolist()]
        assert item["ecdf"]["total"] == evals.size
        assert (
            item["successes"]
            == np.isfinite(np.array(d.detEvals(targets), dtype=float)).sum(axis=1).tolist()
        )


# --- archived result sets, SQLite and PostgreSQL ------------------------------------------------

BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgres", id="postgres", marks=pytest.mark.postgres),
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_archived_result_sets_give_the_inline_answer(
    request: pytest.FixtureRequest, make_client: Callable[..., TestClient], backend: str
) -> None:
    overrides: dict[str, object] = {}
    if backend == "postgres":
        overrides["database_url"] = request.getfixturevalue("pg_url_factory")()
    c = make_client(**overrides)
    inline = hand_body()
    rows = [
        {
            "function_id": r["function_id"],
            "run": j,
            "value": r["values"][-1],
            "budget": r["evaluations"][-1],
            "trajectory": {"evaluations": r["evaluations"], "best": r["values"]},
        }
        for j, r in enumerate(inline["algorithms"][0]["runs"])
    ]
    made = c.post("/v1/result-sets", json={"name": "DE", "values_are": "error", "results": rows})
    assert made.status_code == 201, made.text
    set_id = made.json()["id"]
    archived = post(
        c,
        "/v1/runtime-distributions",
        {"result_sets": [set_id], "targets": inline["targets"], "budgets": inline["budgets"]},
    )
    direct = post(c, "/v1/runtime-distributions", inline)
    assert archived["functions"] == direct["functions"]
    assert archived["algorithms"] == ["DE"]
    # a set without trajectories, and an unknown one, are refused naming the set
    bare = [{k: v for k, v in row.items() if k != "trajectory"} for row in rows]
    made = c.post("/v1/result-sets", json={"name": "B", "values_are": "error", "results": bare})
    assert made.status_code == 201, made.text
    p = refused(
        c.post("/v1/runtime-distributions", json={"result_sets": [set_id, made.json()["id"]]}),
        422,
        "result_sets.1",
    )
    assert "holds no trajectories" in p["detail"]
    r = c.post("/v1/runtime-distributions", json={"result_sets": ["r0c9e4b1a2f3d5e6a7b8c9d0"]})
    refused(r, 422, "result_sets.0")


def rastrigin_body() -> dict[str, Any]:
    runs = [
        {
            "function_id": "classic/rastrigin/d2",
            "evaluations": [1, 10, 100],
            "values": [30.0, 8.0, 2.5],
        },
        {"function_id": "classic/rastrigin/d2", "evaluations": [3, 50], "values": [12.0, 1.5]},
    ]
    return {"algorithms": [{"algorithm": "A", "runs": runs}], "targets": [3.0], "budgets": [5, 60]}


def test_a_tabled_function_ranks_as_absolute_ranks_does(client: TestClient) -> None:
    """No exact form: the anytime rank is the rank service's answer at budget c (Eq. 28 on
    the default table, built inline here)."""
    out = post(client, "/v1/runtime-distributions", rastrigin_body())
    rank = out["functions"][0]
    used = out["provenance"]["rank_tables"]["classic/rastrigin/d2"]
    assert used["table"].startswith("t")
    assert len(used["data_sha256"]) == 64
    per_run = rank["anytime_rank"]["per_run"]
    assert "analytic" not in rank["anytime_rank"]["methods"]
    for b, (c, values) in enumerate(((5, [30.0, 12.0]), (60, [8.0, 1.5]))):
        direct = post(
            client,
            "/v1/absolute-ranks",
            {
                "function_id": "classic/rastrigin/d2",
                "values": values,
                "values_are": "error",
                "budget": c,
            },
        )
        assert [row[b] for row in per_run] == [r["log10_v"] for r in direct["results"]]


def test_a_table_nobody_may_build_is_a_warning_not_a_failure(
    make_client: Callable[..., TestClient],
) -> None:
    c = make_client(api_keys=["k"])
    out = post(c, "/v1/runtime-distributions", rastrigin_body())
    assert out["functions"][0]["anytime_rank"] is None
    (w,) = out["warnings"]
    assert w["code"] == "anytime-rank-unavailable"
    assert "not built" in w["message"]
    assert out["functions"][0]["ert"] == [75.0]  # (100 + 50) / 2: the rest is answered


def test_an_ecdf_pooled_over_functions(client: TestClient) -> None:
    body = hand_body(absolute_ranks=False)
    runs = body["algorithms"][0]["runs"]
    runs += [dict(r, function_id="classic/ellipsoid/d2") for r in runs]
    out = post(client, "/v1/runtime-distributions", body)
    (pooled,) = out["pooled"]
    assert pooled["source"] == "runs"
    assert pooled["function_ids"] == [SPHERE, "classic/ellipsoid/d2"]
    # the same runtimes twice: the breakpoints of each function, counts doubled
    assert pooled["ecdf"] == {
        "x": [10.0, 20.0, 100.0],
        "counts": [0, 2, 6, 12],
        "total": 12,
        "continuity": "right",
    }
    svg = client.post("/v1/runtime-distributions/plot.svg", json=body)
    assert "3 targets × 2 functions" in svg.text  # one pooled curve per algorithm
    runs.pop()  # the ellipsoid now has one run, the sphere two
    out = post(client, "/v1/runtime-distributions", body)
    assert out["pooled"] == []
    assert [w["code"] for w in out["warnings"]] == ["ecdf-not-pooled"]
    out = post(client, "/v1/runtime-distributions", body | {"simulated_restarts": 5})
    assert out["pooled"][0]["source"] == "simulated-restarts"
    assert out["pooled"][0]["ecdf"]["total"] == 2 * 5 * 3
