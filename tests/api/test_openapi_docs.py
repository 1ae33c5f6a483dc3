"""The OpenAPI document as people read it: summaries, and each declared error's own example.

Every (operation, status) the document declares is provoked by a real request against the app;
the answer's ``type``, ``title``, ``status`` and ``field`` must equal the documented example's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastapi_offline
import httpx
import pytest
from fastapi.testclient import TestClient

from app.api.result_sets import EXAMPLE_CORRECTION, EXAMPLE_SET
from app.api.stattests import ANSWERED_EXAMPLES
from app.main import create_app
from tests.api.conftest import InlineDispatcher, api_settings
from tests.support import migrate

PROBLEM = "application/problem+json"
KEY = "s3cret"


@dataclass(frozen=True)
class Clients:
    """The app three ways: open (no API keys), keyed (keys configured), big samples allowed."""

    open: TestClient
    keyed: TestClient
    big: TestClient


@pytest.fixture(scope="module")
def clients(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Clients]:
    with ExitStack() as stack:

        def start(name: str, **overrides: object) -> TestClient:
            settings = api_settings(tmp_path_factory.mktemp(name), **overrides)
            migrate(settings.database_url)
            dispatcher = InlineDispatcher(settings)
            app = create_app(settings, dispatcher=dispatcher)
            dispatcher.app = app
            return stack.enter_context(TestClient(app))

        yield Clients(
            start("open"), start("keyed", api_keys=[KEY]), start("big", max_sample_size=5000)
        )


@pytest.fixture(scope="module")
def spec(clients: Clients) -> dict[str, Any]:
    return clients.open.get("/openapi.json").json()


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            yield method.upper(), path, op


# --- summaries ----------------------------------------------------------------------------------


def _fastapi_summary(operation_id: str, path: str, method: str) -> str:
    """FastAPI's automatic summary: the endpoint function's name, title-cased."""
    suffix = re.sub(r"\W", "_", f"{path}_{method.lower()}")
    name = operation_id.removesuffix(suffix) if operation_id.endswith(suffix) else operation_id
    return name.replace("_", " ").title()


def test_every_operation_has_a_summary_written_for_people(spec: dict[str, Any]) -> None:
    seen = set()
    for method, path, op in _operations(spec):
        summary = op.get("summary", "")
        assert summary, (method, path)
        assert summary != _fastapi_summary(op["operationId"], path, method), (method, path)
        assert len(summary) <= 80, (method, path, summary)
        seen.add(summary)
    assert len(seen) == sum(1 for _ in _operations(spec)), "two operations share a summary"


def test_the_auto_summary_check_can_fail() -> None:
    assert _fastapi_summary(
        "cd_diagram_svg_v1_comparisons__comparison_id__cd_diagram_svg_get",
        "/v1/comparisons/{comparison_id}/cd-diagram.svg",
        "GET",
    ) == ("Cd Diagram Svg")


# --- each declared error, provoked --------------------------------------------------------------

Provoke = Callable[[Clients], httpx.Response]

RANKS_ROWS = [
    {"algorithm": a, "problem": p, "run": 0, "value": v}
    for p, pair in (("classic/rastrigin/d2", (0.5, 1.0)), ("classic/ellipsoid/d2", (1.0, 0.5)))
    for a, v in zip(("A", "B"), pair, strict=True)
]
CROSS = {
    "published": [
        {"instance": "tai20_5_0", "a": 1278, "t1": 12.0},
        {"instance": "tai20_5_1", "a": 1359, "t1": 12.0},
    ],
    "s1": 1219,
    "s2": 1921,
    "p_gamma": 0.1,
}


def _results_conflict(c: Clients) -> httpx.Response:
    made = c.open.post("/v1/cross-machine-comparisons", json=CROSS)
    assert made.status_code in (200, 201), made.text
    results = [{"instance": "tai20_5_0", "b": 1200}, {"instance": "tai20_5_1", "b": 1300}]
    first = c.open.post(made.json()["location"] + "/results", json={"results": results})
    assert first.status_code == 200, first.text
    results[0]["b"] = 1
    return c.open.post(made.json()["location"] + "/results", json={"results": results})


def _cpu_conflict(c: Clients) -> httpx.Response:
    cpu = {
        "name": "Intel Core i7-8700K",
        "score": 2760,
        "source": "test",
        "source_date": "2026-11-30",
    }
    first = c.open.post("/v1/cpus", json=cpu)
    assert first.status_code in (201, 409), first.text
    return c.open.post("/v1/cpus", json=cpu)


def _post(path: str, body: Any, which: str = "open") -> Provoke:
    return lambda c: getattr(c, which).post(path, json=body)


def _get(url: str) -> Provoke:
    return lambda c: c.open.get(url)


def _second_correction(c: Clients) -> httpx.Response:
    for body in (EXAMPLE_SET, EXAMPLE_CORRECTION):
        made = c.open.post(
            "/v1/result-sets",
            content=body.model_dump_json(exclude_none=True),
            headers={"content-type": "application/json"},
        )
        assert made.status_code in (200, 201), made.text
    again = EXAMPLE_CORRECTION.model_copy(update={"version": "3"})
    return c.open.post(
        "/v1/result-sets",
        content=again.model_dump_json(exclude_none=True),
        headers={"content-type": "application/json"},
    )


def _building(suffix: str) -> Provoke:
    """A GET on a table whose build is held (the documented 409's table)."""

    def provoke(c: Clients) -> httpx.Response:
        dispatcher = c.open.app.state.dispatcher  # type: ignore[attr-defined]
        dispatcher.hold = True
        try:
            made = c.open.post("/v1/tables", json={"function_id": "bbob/f15/i1/d10", "seed": 7})
            assert made.status_code == 202, made.text
        finally:
            dispatcher.hold = False
        return c.open.get(f"{made.headers['location']}/{suffix}")

    return provoke


def _table_publish_cases() -> dict[tuple[str, str, int], Provoke]:
    unknown = "/v1/tables/t3f1c0d9a8b7e6f5a4b3c2d1"
    out: dict[tuple[str, str, int], Provoke] = {}
    for suffix in ("curve.json", "curve.csv", "quantiles", "plot.svg", "plot.pdf", "plot.png"):
        path = "/v1/tables/{table_id}/" + suffix
        query = "?v=0.5" if suffix == "quantiles" else ""
        out[("GET", path, 404)] = _get(f"{unknown}/{suffix}{query}")
        out[("GET", path, 409)] = _building(suffix + query)
        ladder = "/v1/ladders/{function_id}/" + suffix
        if suffix != "quantiles":
            out[("GET", ladder, 404)] = _get(f"/v1/ladders/bbob/f25/i1/d10/{suffix}")
            out[("GET", ladder, 409)] = lambda c, s=suffix: c.keyed.get(
                f"/v1/ladders/classic/sphere/d2/{s}"
            )
            out[("GET", ladder, 422)] = _get(
                "/v1/ladders/classic/sphere/d2/plot.png?dpi=601"
                if suffix == "plot.png"
                else f"/v1/ladders/classic/step/d2/{suffix}"
            )
    out[("GET", "/v1/tables/{table_id}/quantiles", 422)] = _get(
        "/v1/tables/t3f1c0d9a8b7e6f5a4b3c2d1/quantiles?v=0"
    )
    out[("GET", "/v1/tables/{table_id}/plot.png", 422)] = _get(
        "/v1/tables/t3f1c0d9a8b7e6f5a4b3c2d1/plot.png?dpi=601"
    )
    for suffix in ("plot.svg", "plot.pdf"):
        out[("GET", "/v1/tables/{table_id}/" + suffix, 422)] = _get(f"{unknown}/{suffix}?width=21")
    return out


SAMPLE = list(range(500))
SHIFTED = [v + 0.5 for v in SAMPLE]

#: (method, path, status) -> a request that answers it. 401, 413 and 415 are built for every
#: operation that declares them (see _generic).


def _anytime_cases() -> dict[tuple[str, str, int], Provoke]:
    """The anytime routes' 422: an unsorted trajectory; the profiles': data without costs."""
    unsorted = {
        "algorithms": [
            {
                "algorithm": "A",
                "runs": [{"function_id": "x", "evaluations": [10, 5], "values": [1.0, 0.5]}],
            }
        ]
    }
    out: dict[tuple[str, str, int], Provoke] = {}
    for path in ("/v1/runtime-distributions", "/v1/profiles"):
        body: Any = (
            unsorted if path.endswith("distributions") else {"kind": "data", "solvers": ["A"]}
        )
        for suffix in ("", "/plot.svg", "/plot.pdf", "/plot.png"):
            out[("POST", path + suffix, 422)] = _post(path + suffix, body)
    return out


PROVOKED: dict[tuple[str, str, int], Provoke] = {
    ("GET", "/v1/functions", 422): _get("/v1/functions?limit=0"),
    ("POST", "/v1/functions/{function_id}/evaluate", 404): _post(
        "/v1/functions/bbob/f25/i1/d10/evaluate", {"points": [[0.0] * 10]}
    ),
    ("POST", "/v1/functions/{function_id}/evaluate", 422): _post(
        "/v1/functions/bbob/f15/i1/d10/evaluate", {"points": [[0.0, 0.0]]}
    ),
    ("GET", "/v1/functions/{function_id}", 404): _get("/v1/functions/bbob/f25/i1/d10"),
    ("POST", "/v1/tables", 404): _post("/v1/tables", {"function_id": "bbob/f25/i1/d10"}),
    ("POST", "/v1/tables", 422): _post(
        "/v1/tables", {"function_id": "bbob/f15/i1/d10", "log2n": 99}
    ),
    ("GET", "/v1/tables", 422): _get("/v1/tables?status=done"),
    ("GET", "/v1/tables/{table_id}", 404): _get("/v1/tables/t3f1c0d9a8b7e6f5a4b3c2d1"),
    ("POST", "/v1/absolute-ranks", 404): _post(
        "/v1/absolute-ranks", {"function_id": "bbob/f25/i1/d10", "values": [1.0]}
    ),
    ("POST", "/v1/absolute-ranks", 409): _post(
        "/v1/absolute-ranks", {"function_id": "bbob/f15/i1/d10", "values": [1.0]}, "keyed"
    ),
    ("POST", "/v1/absolute-ranks", 422): _post(
        "/v1/absolute-ranks", {"function_id": "bbob/f15/i1/d10", "values": ["1e-3"]}
    ),
    ("POST", "/v1/tests/friedman", 422): _post("/v1/tests/friedman", {"values": [[1.0, 2.0]]}),
    ("POST", "/v1/tests/posthoc", 422): _post(
        "/v1/tests/posthoc", {"values": [[1, 2], [2, 1]], "control": "DE"}
    ),
    ("POST", "/v1/tests/bradley-terry", 422): _post(
        "/v1/tests/bradley-terry", {"values": [[1, 2], [2, 1]], "algorithms": ["DE"]}
    ),
    ("POST", "/v1/tests/wilcoxon", 409): _post(
        "/v1/tests/wilcoxon", {"x": SAMPLE, "y": SHIFTED, "method": "exact"}
    ),
    ("POST", "/v1/tests/wilcoxon", 422): _post("/v1/tests/wilcoxon", {"x": [1, 2], "y": [1]}),
    ("POST", "/v1/tests/sign", 422): _post("/v1/tests/sign", {"x": [1, 2], "y": [1]}),
    ("POST", "/v1/tests/rank-sum", 409): _post(
        "/v1/tests/rank-sum", {"x": SAMPLE, "y": SHIFTED, "method": "exact"}
    ),
    ("POST", "/v1/tests/rank-sum", 422): _post("/v1/tests/rank-sum", {"x": [], "y": [1]}),
    ("POST", "/v1/tests/ks", 409): _post(
        "/v1/tests/ks",
        {"x": list(range(3200)), "y": [v + 0.5 for v in range(3200)], "method": "exact"},
        "big",
    ),
    ("POST", "/v1/tests/ks", 422): _post("/v1/tests/ks", {"x": [], "y": [1]}),
    ("POST", "/v1/tests/permutation", 409): _post(
        "/v1/tests/permutation",
        {"x": SAMPLE[:100], "y": SHIFTED[:100], "method": "exact", "statistic": "mean"},
    ),
    ("POST", "/v1/tests/permutation", 422): _post("/v1/tests/permutation", {"x": [], "y": [1]}),
    ("POST", "/v1/comparisons", 409): _post(
        "/v1/comparisons",
        {"results": RANKS_ROWS, "reduction": "mean", "value_runs": 1000, "values_are": "f"},
    ),
    ("POST", "/v1/comparisons", 422): _post("/v1/comparisons", {"results": RANKS_ROWS[:2]}),
    ("GET", "/v1/comparisons/{comparison_id}", 404): _get(
        "/v1/comparisons/c9b5b14d7503e343dc256353"
    ),
    ("GET", "/v1/comparisons/{comparison_id}", 406): lambda c: c.open.get(
        "/v1/comparisons/c9b5b14d7503e343dc256353", headers={"accept": "image/png"}
    ),
    ("GET", "/v1/comparisons/{comparison_id}/summary", 404): _get(
        "/v1/comparisons/c9b5b14d7503e343dc256353/summary"
    ),
    **{
        ("GET", "/v1/comparisons/{comparison_id}/cd-diagram." + fmt, status): _get(
            f"/v1/comparisons/c9b5b14d7503e343dc256353/cd-diagram.{fmt}{query}"
        )
        for fmt in ("svg", "pdf", "png")
        for status, query in ((404, ""), (422, "?dpi=601" if fmt == "png" else "?width=21"))
    },
    ("GET", "/v1/cpus", 422): _get("/v1/cpus?limit=0"),
    ("POST", "/v1/cpus", 409): _cpu_conflict,
    ("POST", "/v1/cpus", 422): _post(
        "/v1/cpus", {"name": "x", "score": 1000, "source": "test", "source_date": "2026-11-30"}
    ),
    ("GET", "/v1/cpus/{cpu_id}", 404): _get("/v1/cpus/999999"),
    ("GET", "/v1/cpus/{cpu_id}", 422): _get("/v1/cpus/0"),
    ("POST", "/v1/equivalent-runtime", 404): _post(
        "/v1/equivalent-runtime", {"t1": 15.0, "cpu1": "Acme Turbo 9000", "s2": 1643}
    ),
    ("POST", "/v1/equivalent-runtime", 422): _post(
        "/v1/equivalent-runtime", {"t1": 15.0, "s2": 1643}
    ),
    ("POST", "/v1/tests/sign-cross-machine", 422): _post(
        "/v1/tests/sign-cross-machine", {"n": 20, "k": 30, "p_gamma": 0.1}
    ),
    ("POST", "/v1/cross-machine-comparisons", 404): _post(
        "/v1/cross-machine-comparisons",
        {k: v for k, v in CROSS.items() if k != "s1"} | {"cpu1": "Acme Turbo 9000"},
    ),
    ("POST", "/v1/cross-machine-comparisons", 422): _post(
        "/v1/cross-machine-comparisons", {k: v for k, v in CROSS.items() if k != "s1"}
    ),
    ("GET", "/v1/cross-machine-comparisons/{comparison_id}", 404): _get(
        "/v1/cross-machine-comparisons/x4f1c0d9a8b7e6f5a4b3c2d1"
    ),
    ("POST", "/v1/cross-machine-comparisons/{comparison_id}/results", 404): _post(
        "/v1/cross-machine-comparisons/x4f1c0d9a8b7e6f5a4b3c2d1/results",
        {"results": [{"instance": "tai20_5_0", "b": 1297}]},
    ),
    ("POST", "/v1/cross-machine-comparisons/{comparison_id}/results", 409): _results_conflict,
    ("POST", "/v1/cross-machine-comparisons/{comparison_id}/results", 422): _post(
        "/v1/cross-machine-comparisons/x4f1c0d9a8b7e6f5a4b3c2d1/results", {"results": []}
    ),
    ("POST", "/v1/indicators", 422): _post("/v1/indicators", {"indicators": ["hv"]}),
    ("POST", "/v1/pareto-rankings", 422): _post("/v1/pareto-rankings", {}),
    ("GET", "/v1/pareto-rankings/{ranking_id}", 404): _get(
        "/v1/pareto-rankings/p4f1c0d9a8b7e6f5a4b3c2d1"
    ),
    ("POST", "/v1/region-scans", 404): _post(
        "/v1/region-scans",
        {
            "function_id": "bbob/f25/i1/d10",
            "values": [{"algorithm": "DE", "value": 0.01}, {"algorithm": "PSO", "value": 0.8}],
        },
    ),
    ("POST", "/v1/region-scans", 422): _post(
        "/v1/region-scans", {"values": [{"algorithm": "DE", "value": 0.01}]}
    ),
    ("GET", "/v1/region-scans/{scan_id}", 404): _get("/v1/region-scans/r4f1c0d9a8b7e6f5a4b3c2d1"),
    ("GET", "/v1/leaderboards", 422): _get("/v1/leaderboards?suite=bbob"),
    ("GET", "/v1/leaderboards/{function_id}", 404): _get("/v1/leaderboards/bbob/f25/i1/d10"),
    ("GET", "/v1/leaderboards/{function_id}", 422): _get(
        "/v1/leaderboards/bbob/f1/i1/d10?budget=0"
    ),
    ("POST", "/v1/result-sets", 409): _second_correction,
    ("POST", "/v1/result-sets", 422): _post(
        "/v1/result-sets",
        {
            "name": "DE",
            "values_are": "f",
            "results": [{"function_id": "bbob/f25/i1/d10", "run": 0, "value": 1.0, "budget": 1}],
        },
    ),
    ("GET", "/v1/result-sets", 422): _get("/v1/result-sets?limit=0"),
    ("GET", "/v1/result-sets/{set_id}", 404): _get("/v1/result-sets/r0c9e4b1a2f3d5e6a7b8c9d0"),
    ("GET", "/v1/result-sets/{set_id}", 422): _get(
        "/v1/result-sets/r0c9e4b1a2f3d5e6a7b8c9d0?include=everything"
    ),
    ("GET", "/v1/result-sets/{set_id}.csv", 404): _get(
        "/v1/result-sets/r0c9e4b1a2f3d5e6a7b8c9d0.csv"
    ),
    ("POST", "/v1/tables/samples", 415): _post("/v1/tables/samples", {"samples": [1.0, 2.0]}),
    ("POST", "/v1/tables/samples", 422): lambda c: c.open.post(
        "/v1/tables/samples?filename=samples.txt",
        content=b"1\n2\nabc\n",
        headers={"content-type": "text/plain"},
    ),
    ("POST", "/v1/rank-spread", 422): _post("/v1/rank-spread", {"v": [1.5]}),
    **_table_publish_cases(),
    **_anytime_cases(),
}


def _first_example(path: str) -> Any:
    """The first request example of a ``/v1/tests/*`` operation (a valid body)."""
    return ANSWERED_EXAMPLES[path][0].model_json_schema()["examples"][0]


def _not_acceptable(method: str, url: str, body: Any = None) -> Provoke:
    """A valid request whose Accept lists no offered media type (the paper tables' 406)."""
    return lambda c: c.open.request(method, url, json=body, headers={"accept": "image/png"})


PROVOKED |= {
    ("POST", "/v1/tests/sign-cross-machine", 406): lambda c: c.open.post(
        "/v1/tests/sign-cross-machine",
        json={"n": 20, "k": 3, "p_gamma": 0.1},
        headers={"accept": "text/csv"},
    ),
    ("GET", "/v1/leaderboards", 406): _not_acceptable("GET", "/v1/leaderboards?suite=bbob&dim=2"),
    ("GET", "/v1/leaderboards/{function_id}", 406): _not_acceptable(
        "GET", "/v1/leaderboards/bbob/f1/i1/d10"
    ),
    **{
        ("POST", f"/v1/tests/{test}", 406): _not_acceptable(
            "POST", f"/v1/tests/{test}", _first_example(f"/v1/tests/{test}")
        )
        for test in (
            "friedman",
            "posthoc",
            "bradley-terry",
            "wilcoxon",
            "sign",
            "rank-sum",
            "ks",
            "permutation",
        )
    },
}

_JOB = "/v1/jobs/j5d2c1b0a9f8e7d6c5b4a392"
PROVOKED |= {
    ("GET", "/v1/jobs/{job_id}", 404): _get(_JOB),
    ("GET", "/v1/jobs/{job_id}/answer", 404): _get(_JOB + "/answer"),
    ("DELETE", "/v1/jobs/{job_id}", 404): lambda c: c.open.delete(_JOB),
}

_JOB_STATE = (
    "needs the example's job in that state, and a job id is the hash of a request; "
    "tests/api/test_jobs.py provokes it on a real job"
)
#: Declared statuses not provoked here, and why.
NOT_PROVOKED: dict[tuple[str, str, int], str] = {
    ("GET", "/v1/jobs/{job_id}/answer", 409): _JOB_STATE,
    ("DELETE", "/v1/jobs/{job_id}", 409): _JOB_STATE,
}


def _example_url(path: str, op: dict[str, Any]) -> str:
    for param in op.get("parameters", []):
        if param["in"] == "path":
            example = (param.get("examples") or param["schema"].get("examples"))[0]
            path = path.replace("{" + param["name"] + "}", str(example))
    return path


def _generic(method: str, path: str, status: int, op: dict[str, Any]) -> Provoke | None:
    """401 (keys configured: no key, or a wrong one as the example says), 413 (a big body),
    415 (text/plain)."""
    url = _example_url(path, op)
    if status == 401:
        detail = op["responses"]["401"]["content"][PROBLEM]["example"]["detail"]
        headers = {"X-API-Key": "wrong"} if "no valid key" in detail else {}
        return lambda c: c.keyed.request(method, url, json={}, headers=headers)
    if status == 413:
        big = b'{"x": "' + b"0" * (300 * 1024) + b'"}'  # over the test's 256 KiB
        return lambda c: c.open.request(
            method, url, content=big, headers={"content-type": "application/json"}
        )
    if status == 415:
        return lambda c: c.open.request(
            method, url, content=b"1,2", headers={"content-type": "text/plain"}
        )
    return None


def _declared(spec: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [
        (method, path, int(code))
        for method, path, op in _operations(spec)
        for code in op["responses"]
        if code.isdigit() and 400 <= int(code) < 500
    ]


def test_every_declared_error_is_provoked_or_excused(spec: dict[str, Any]) -> None:
    declared = set(_declared(spec))
    specific = {k for k in declared if k[2] not in (401, 413, 415)}
    assert specific - set(PROVOKED) - set(NOT_PROVOKED) == set(), "declared, never provoked"
    assert set(PROVOKED) - declared == set(), "provoked, but not declared"
    assert set(NOT_PROVOKED) <= declared


def test_each_declared_error_answers_its_documented_example(
    clients: Clients, spec: dict[str, Any]
) -> None:
    ops = {(m, p): op for m, p, op in _operations(spec)}
    checked = 0
    for method, path, status in _declared(spec):
        if (method, path, status) in NOT_PROVOKED:
            continue
        op = ops[(method, path)]
        documented = op["responses"][str(status)]["content"][PROBLEM]["example"]
        provoke = PROVOKED.get((method, path, status)) or _generic(method, path, status, op)
        assert provoke is not None, (method, path, status)
        answer = provoke(clients)
        where = f"{method} {path} {status}: {answer.text[:300]}"
        assert answer.status_code == status, where
        assert answer.headers["content-type"].startswith(PROBLEM), where
        body = answer.json()
        for key in ("type", "title", "status", "field", "errors"):
            assert body.get(key) == documented.get(key), (where, key, documented)
        if status != 413:  # the test app's limit is 256 KiB, the documented one the default
            assert body["detail"] == documented["detail"], where
        assert documented["instance"].startswith(path.split("{", 1)[0]), (where, documented)
        assert documented["detail"], where
        checked += 1
    assert checked == len(_declared(spec)) - len(NOT_PROVOKED) > 90


def test_examples_name_the_operation_path(spec: dict[str, Any]) -> None:
    for method, path, op in _operations(spec):
        for code, response in op["responses"].items():
            if int(code) < 400:
                continue
            example = response["content"][PROBLEM]["example"]
            pattern = "^" + re.sub(r"\\\{[^}]+\\\}", "[^ ]+", re.escape(path)) + "$"
            assert re.match(pattern, example["instance"]), (method, path, code, example)
            assert "{" not in example["instance"], (method, path, code)


def test_each_example_is_of_its_own_status(spec: dict[str, Any]) -> None:
    """The old document showed one 422 of another endpoint under every 409, 413 and 415."""
    for method, path, op in _operations(spec):
        for code, response in op["responses"].items():
            if int(code) >= 400:
                example = response["content"][PROBLEM]["example"]
                assert example["status"] == int(code), (method, path, code, example)


# --- /docs and /redoc without a CDN -------------------------------------------------------------

_REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']""")
_CSS_URL = re.compile(r"""url\(\s*["']?([^"')]+)""")
_CSS_IMPORT = re.compile(r"""@import\s+(?:url\()?\s*["']?([^"')\s;]+)""")


def _local(reference: str) -> bool:
    return reference.startswith("data:") or (
        reference.startswith("/") and not reference.startswith("//")
    )


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_docs_pages_load_only_files_the_api_serves(clients: Clients, page: str) -> None:
    html = clients.open.get(page)
    assert html.status_code == 200
    assert html.headers["content-type"].startswith("text/html")
    references = _REFERENCE.findall(html.text)
    assert any(r.endswith(".js") for r in references), references
    assert "http://" not in html.text
    assert "https://" not in html.text
    assert "fonts.googleapis" not in html.text
    assets = Path(fastapi_offline.__file__).parent / "static"
    for reference in references:
        assert _local(reference), (page, reference)
        asset = clients.open.get(reference)
        assert asset.status_code == 200, reference
        # the very files the installed package ships
        assert asset.content == (assets / reference.rsplit("/", 1)[-1]).read_bytes(), reference
        if reference.endswith(".css"):
            urls = _CSS_URL.findall(asset.text) + _CSS_IMPORT.findall(asset.text)
            assert all(_local(u.strip()) for u in urls), [u for u in urls if not _local(u)]


def test_swagger_ui_has_no_validator_badge(clients: Clients) -> None:
    """Swagger UI's default online-validator badge is an image from its public server."""
    assert '"validatorUrl": null' in clients.open.get("/docs").text


@pytest.mark.parametrize("page", ["/docs", "/redoc", "/docs/oauth2-redirect"])
def test_docs_pages_forbid_loading_from_elsewhere(clients: Clients, page: str) -> None:
    """ReDoc's footer logo lives on its CDN: the policy keeps the browser from asking for it."""
    policy = clients.open.get(page).headers["content-security-policy"]
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    for name in ("script-src", "style-src", "img-src", "font-src", "connect-src"):
        sources = set(directives[name].split())
        assert sources <= {"'self'", "'unsafe-inline'", "data:"}, (name, sources)


def test_api_answers_carry_no_docs_policy(clients: Clients) -> None:
    assert "content-security-policy" not in clients.open.get("/healthz").headers
