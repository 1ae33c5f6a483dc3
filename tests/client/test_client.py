"""absrank_client.Client against the real app (SQLite, tables built inline): every method."""

from __future__ import annotations

import math
from pathlib import Path

import httpx
import pandas as pd
import pytest
from absrank_client import (
    Client,
    Comparison,
    Conflict,
    ConnectionFailed,
    InvalidInput,
    JobStatus,
    JobTimeout,
    NotFound,
    ProblemError,
    RequestTimedOut,
    ServiceWarning,
    TableNotReady,
    Unauthorized,
)
from absrank_client.errors import problem_from_response
from absrank_client.models import log10_of
from scipy import stats

from tests.api.conftest import InlineDispatcher as Dispatcher
from tests.client.conftest import release

PROBLEMS = ("classic/sphere/d2", "classic/rastrigin/d2", "classic/griewank/d2")
VALUES = {  # per problem: A, B, C (errors f - f*)
    "classic/sphere/d2": (0.2, 0.3, 0.1),
    "classic/rastrigin/d2": (2.0, 3.0, 1.0),
    "classic/griewank/d2": (0.3, 0.1, 0.2),
}
ROWS = [
    {"algorithm": a, "problem": p, "run": 0, "value": v}
    for p, row in VALUES.items()
    for a, v in zip("ABC", row, strict=True)
]
CSV = "algorithm,problem,run,value\n" + "".join(
    f"{r['algorithm']},{r['problem']},{r['run']},{r['value']}\n" for r in ROWS
)
MATRIX = [[0.12, 0.40, 0.05], [1.1, 2.3, 0.9], [5.5, 4.9, 4.8], [0.02, 0.08, 0.01]]
NAMES = ["DE", "PSO", "CMA"]


# ---------------------------------------------------------------- construction


def test_url_comes_from_the_argument_then_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("ABSRANK_URL", raising=False)
    with Client() as c:
        assert c.url == "http://127.0.0.1:8000"
    monkeypatch.setenv("ABSRANK_URL", "http://example.test:9000/")
    with Client() as c:
        assert c.url == "http://example.test:9000"
    with Client("http://other.test:1") as c:
        assert c.url == "http://other.test:1"


def test_the_api_key_is_sent_as_x_api_key() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"status": "ok", "version": "x"})

    http = httpx.Client(transport=httpx.MockTransport(handler))
    with Client("http://k.test", "s3cret", http=http) as c:
        assert c.health() == {"status": "ok", "version": "x"}
    with Client("http://k.test", http=http) as c:
        c.health()
    assert seen[0].headers["x-api-key"] == "s3cret"
    assert "x-api-key" not in seen[1].headers
    assert str(seen[0].url) == "http://k.test/healthz"


def test_a_refused_connection_is_connection_failed() -> None:
    with Client("http://127.0.0.1:9", timeout=2) as c, pytest.raises(ConnectionFailed) as info:
        c.health()
    assert "127.0.0.1:9" in str(info.value)


def test_health(client: Client) -> None:
    assert client.health()["status"] == "ok"


# ---------------------------------------------------------------- errors


def test_a_404_is_not_found_with_its_field(client: Client) -> None:
    with pytest.raises(NotFound) as info:
        client.get_table("tnope")
    err = info.value
    assert (err.status, err.kind, err.field) == (404, "not-found", "table_id")
    assert err.title == "Not found"
    assert "tnope" in err.detail
    assert err.raw is not None
    assert err.raw["instance"] == "/v1/tables/tnope"
    assert "404 Not found" in str(err)
    assert "(field: table_id)" in str(err)


def test_a_422_is_invalid_input_with_every_error(client: Client) -> None:
    with pytest.raises(InvalidInput) as info:
        client.sign([1.0, 2.0, 3.0], [1.0, 2.0])
    assert info.value.status == 422
    assert info.value.kind == "invalid-input"
    assert info.value.field == "y"
    with pytest.raises(InvalidInput) as info:
        client.evaluate("classic/sphere/d2", [[0.0, 0.0, 0.0]])
    assert info.value.field == "points.0"
    with pytest.raises(InvalidInput) as info:
        client.request("POST", "/v1/tests/sign", json={"x": [1, "a", True]})
    assert [e["field"] for e in info.value.errors] == ["x.1", "x.2"]


def test_a_401_is_unauthorized(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from app.main import create_app
    from tests.api.conftest import api_settings
    from tests.support import migrate

    settings = api_settings(tmp_path, api_keys=["good"])
    migrate(settings.database_url)
    dispatcher = Dispatcher(settings)
    app = create_app(settings, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app) as http:
        with Client(http=http, api_key="bad") as c, pytest.raises(Unauthorized) as info:
            c.create_table("classic/sphere/d2")
        assert info.value.field == "X-API-Key"
        with Client(http=http, api_key="good") as c:
            assert c.create_table("classic/sphere/d2", log2n=10).ready


def test_a_non_problem_answer_is_still_a_typed_error() -> None:
    err = problem_from_response(502, "Bad Gateway", None, {"content-type": "text/html"})
    assert isinstance(err, ProblemError)
    assert err.status == 502
    assert err.title == "Bad Gateway"
    assert err.kind == "about:blank"
    assert type(err).__name__ == "ServerError"


# ---------------------------------------------------------------- functions


def test_functions_list_get_evaluate(client: Client) -> None:
    page = client.list_functions("classic", 2, limit=3)
    assert page.total >= 9
    assert len(page.items) == 3
    assert all(f.dim == 2 and f.suite == "classic" for f in page.items)
    sphere = client.get_function("classic/sphere/d2")
    assert sphere.f_opt == 0.0
    assert sphere.x_opt == (0.0, 0.0)
    assert sphere.analytic == "sphere"
    assert sphere.raw["id"] == "classic/sphere/d2"
    ev = client.evaluate("classic/sphere/d2", [[0, 0], [1, 2]])
    assert ev.values == (0.0, 5.0)
    assert list(page.to_frame()["id"]) == [f.id for f in page.items]


# ---------------------------------------------------------------- tables and waiting


def test_create_table_returns_a_ready_table(client: Client) -> None:
    table = client.create_table("classic/griewank/d2")
    assert table.ready
    assert table.n == 4096
    assert table.progress is not None
    assert table.progress.done == table.progress.total == table.n_chunks
    assert client.get_table(table.id).data_sha256 == table.data_sha256
    listed = client.list_tables(function_id="classic/griewank/d2", status="ready")
    assert [t.id for t in listed.items] == [table.id]
    frame = listed.to_frame()
    assert frame.loc[0, "y_1"] == table.summary["y_1"]  # type: ignore[index]


def test_create_table_waits_while_it_builds_and_reports_progress(
    client: Client, dispatcher: Dispatcher
) -> None:
    dispatcher.hold = True
    seen: list[JobStatus] = []

    def progress(status: JobStatus) -> None:
        seen.append(status)
        if len(seen) == 2:
            release(dispatcher)  # the workers get to it while the client polls

    table = client.create_table("classic/rastrigin/d2", progress=progress)
    assert table.ready
    assert [s.status for s in seen[:2]] == ["building", "building"]
    assert seen[0].progress is not None
    assert seen[0].progress.done == 0
    assert seen[0].url.endswith(table.location)
    assert seen[-1].status == "ready"
    assert seen[-1].progress.done == seen[-1].progress.total


def test_a_table_that_never_finishes_raises_job_timeout(
    client: Client, dispatcher: Dispatcher
) -> None:
    dispatcher.hold = True
    with pytest.raises(JobTimeout) as info:
        client.create_table("classic/ackley/d2", timeout=0.2)
    err = info.value
    assert err.url.startswith("http://testserver/v1/tables/t")
    assert err.progress is not None
    assert (err.progress.done, err.progress.total) == (0, 4)
    assert err.waited >= 0.2
    assert "0/4 chunks" in str(err)
    building = client.create_table("classic/ackley/d2", wait=False)
    assert building.status == "building"
    assert not building.ready


def test_progress_true_draws_a_bar_on_stderr(
    client: Client, dispatcher: Dispatcher, capsys: pytest.CaptureFixture[str]
) -> None:
    dispatcher.hold = True
    with pytest.raises(JobTimeout):
        client.create_table("classic/step/d2", timeout=0.1, progress=True)
    captured = capsys.readouterr()
    assert "chunks" in captured.err
    assert "0/4" in captured.err
    assert captured.out == ""


def test_retry_after_is_respected() -> None:
    from absrank_client.progress import Poller, retry_after_seconds

    slept: list[float] = []
    poller = Poller(
        timeout=60, initial=0.5, maximum=10, progress=None, label="x", sleep=slept.append
    )
    poller.wait("3")
    poller.wait(None)
    poller.wait(None)
    assert slept == [3.0, 0.75, 1.125]  # the hint, then the backoff (0.5 was used by the hint)
    assert retry_after_seconds("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert retry_after_seconds("soon") is None


def test_create_ladder_waits_for_every_level(client: Client, dispatcher: Dispatcher) -> None:
    dispatcher.hold = True
    seen: list[JobStatus] = []

    def progress(status: JobStatus) -> None:
        seen.append(status)
        release(dispatcher)

    ladder = client.create_ladder("classic/ellipsoid/d2", log2n=10, progress=progress)
    assert ladder.ready
    assert len(ladder.levels) > 1
    assert ladder.levels[0].kind == "domain"
    assert all(lv.status == "ready" for lv in ladder.levels)
    assert seen
    assert seen[0].status == "building"
    assert len(ladder.to_frame()) == len(ladder.levels)


# ---------------------------------------------------------------- absolute ranks


def test_ranks_of_values_on_the_exact_sphere(client: Client) -> None:
    ranks = client.ranks("classic/sphere/d2", [0.5], values_are="error")
    # v1 of the sphere on [-5.12, 5.12]^2: the disc of radius sqrt(0.5) over the square's area
    expected = math.pi * 0.5 / 10.24**2
    (rank,) = ranks.ranks
    assert rank.method == "analytic"
    assert rank.v == pytest.approx(expected, rel=1e-9)
    assert rank.log10_v == pytest.approx(math.log10(expected), rel=1e-9)
    assert ranks.to_frame().loc[0, "log10_v"] == rank.log10_v


def test_ranks_wait_while_the_default_table_builds(client: Client, dispatcher: Dispatcher) -> None:
    dispatcher.hold = True
    with pytest.raises(TableNotReady) as info:
        client.ranks("classic/griewank/d2", [1.0], wait=False)
    assert info.value.location is not None
    assert info.value.field == "function_id"
    seen: list[JobStatus] = []

    def progress(status: JobStatus) -> None:
        seen.append(status)
        release(dispatcher)

    ranks = client.ranks("classic/griewank/d2", [0.01, 1.0], budget=10, progress=progress)
    assert [r.value for r in ranks.ranks] == [0.01, 1.0]
    assert ranks.ranks[0].log10_v < ranks.ranks[1].log10_v  # type: ignore[operator]
    assert seen[0].status == "building"
    assert seen[0].url == client.url + info.value.location


def test_ranks_timeout_names_the_table(client: Client, dispatcher: Dispatcher) -> None:
    dispatcher.hold = True
    with pytest.raises(JobTimeout) as info:
        client.ranks("classic/schwefel226/d2", [1.0], timeout=0.1)
    assert "/v1/tables/t" in info.value.url


def test_ranks_from_long_rows_a_frame_and_a_csv_agree(client: Client, tmp_path: Path) -> None:
    rows = [
        ("DE", "classic/sphere/d2", 0, 0.01),
        ("DE", "classic/sphere/d2", 1, 0.02),
        ("RS", "classic/sphere/d2", 0, 0.5),
    ]
    by_dict = client.ranks(
        "classic/sphere/d2",
        runs_by_algorithm={"DE": [0.01, 0.02], "RS": [0.5]},
        values_are="error",
        budget=10,
        aggregate="best",
    )
    by_rows = client.ranks(results=rows, values_are="error", budget=10, aggregate="best")
    frame = pd.DataFrame(rows, columns=["algorithm", "problem", "run", "value"])
    by_frame = client.ranks(results=frame, values_are="error", budget=10, aggregate="best")
    path = tmp_path / "runs.csv"
    frame.to_csv(path, index=False)
    by_csv = client.ranks(results=path, values_are="error", budget=10, aggregate="best")
    assert by_rows.raw == by_dict.raw == by_frame.raw == by_csv.raw
    de = by_rows.by_algorithm()["DE"]
    assert de.runs == 2
    assert len(de.per_run) == 2
    assert de.value == 0.01
    assert list(by_rows.to_frame()["algorithm"]) == ["DE", "RS"]


def test_ranks_from_rows_of_several_problems_need_a_function_id(client: Client) -> None:
    with pytest.raises(ValueError, match="name the function_id"):
        client.ranks(results=ROWS)
    ranks = client.ranks("classic/sphere/d2", results=ROWS, values_are="error")
    assert [a.algorithm for a in ranks.algorithms] == ["A", "B", "C"]


# ---------------------------------------------------------------- statistical tests


def test_friedman_family_matches_scipy(client: Client) -> None:
    result = client.friedman(MATRIX, NAMES)
    friedman = result.test("friedman")
    ref = stats.friedmanchisquare(*zip(*MATRIX, strict=True))
    assert friedman.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert friedman.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert friedman.log10_p_value == pytest.approx(math.log10(ref.pvalue), rel=1e-9)
    assert {t.name for t in result.tests} == {
        "friedman",
        "iman-davenport",
        "aligned-ranks",
        "quade",
    }
    assert result.algorithms == tuple(NAMES)
    assert result.average_ranks == (2.25, 2.75, 1.0)
    assert set(result.to_frame()["test"]) == {t.name for t in result.tests}


def test_a_dataframe_matrix_names_algorithms_and_problems(client: Client) -> None:
    frame = pd.DataFrame(MATRIX, columns=NAMES, index=["p1", "p2", "p3", "p4"])
    result = client.friedman(frame)
    assert result.raw["policies"]["problems"] == ["p1", "p2", "p3", "p4"]
    assert result.raw == client.friedman(MATRIX, NAMES, ["p1", "p2", "p3", "p4"]).raw


def test_posthoc_pairs_and_cliques_carry_names(client: Client) -> None:
    result = client.posthoc(MATRIX, "nemenyi", algorithms=NAMES)
    assert [(p.a, p.b) for p in result.pairs] == [("DE", "PSO"), ("DE", "CMA"), ("PSO", "CMA")]
    assert result.cliques == (("CMA", "DE"), ("DE", "PSO"))
    significant = [(p.a, p.b) for p in result.pairs if p.significant]
    assert significant == [("PSO", "CMA")]
    for p in result.pairs:
        assert p.log10_p_adjusted == pytest.approx(math.log10(p.p_adjusted))  # type: ignore[arg-type]
    frame = result.to_frame()
    assert list(frame.columns[:2]) == ["a", "b"]
    assert len(frame) == 3
    vs = client.posthoc(MATRIX, "holm", algorithms=NAMES, control="CMA")
    assert vs.control == "CMA"
    assert {(p.a, p.b) for p in vs.pairs} == {("CMA", "DE"), ("CMA", "PSO")}


def test_bradley_terry_strengths_by_name(client: Client) -> None:
    result = client.bradley_terry(MATRIX, NAMES)
    strengths = dict(zip(result.algorithms, result.strengths, strict=True))
    assert strengths["CMA"] == math.inf  # never loses
    assert strengths["DE"] / strengths["PSO"] == pytest.approx(3.0)  # 3 wins to 1
    assert result.components == (("CMA",), ("DE", "PSO"))
    assert result.degenerate


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        # x < y on all five pairs: exact two-sided p = 2 / 2^5
        ("wilcoxon", 0.0625),
        ("sign", 0.0625),
    ],
)
def test_paired_tests(client: Client, name: str, expected: float) -> None:
    result = getattr(client, name)([1, 2, 3, 4, 5], [2, 3, 4, 5, 7])
    assert result.test == name
    assert result.p_value == pytest.approx(expected)
    assert result.log10_p_value == pytest.approx(math.log10(expected))
    assert result.method == "exact"
    assert result.to_frame().loc[0, "p_value"] == result.p_value


def test_two_sample_tests_match_scipy(client: Client) -> None:
    x, y = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24]
    rank_sum = client.rank_sum(x, y)
    ref = stats.mannwhitneyu(x, y, method="exact")  # ties make scipy's "exact" approximate
    assert rank_sum.statistic == ref.statistic
    assert 0 < rank_sum.p_value < 1
    assert rank_sum.a12 == pytest.approx(ref.statistic / (len(x) * len(y)))
    ks = client.ks([1, 1.01, 3, 4], [1.01, 0.5, 0.25])
    assert ks.p_value == pytest.approx(12 / 35)  # exact, conditional on the tie (README)
    perm = client.permutation([76, 72], [70, 75], statistic="mean", alternative="greater")
    assert perm.p_value == pytest.approx(2 / 6)
    assert perm.result["n_splits"] == 6


def test_sign_cross_machine_reproduces_the_paper(client: Client) -> None:
    result = client.sign_cross_machine(n=20, k=3, p_gamma=0.1)
    assert result.p_value == pytest.approx(stats.binom.cdf(3, 20, 0.5), rel=1e-12)
    assert result.result["p_value_corrected"] == pytest.approx(0.043596, abs=5e-7)
    row = result.rows()[0]
    assert row["decision"] == "B is significantly better than A"
    assert row["log10_p_value_corrected"] == pytest.approx(math.log10(0.04359600010346089))


def test_log10_companions_are_used_when_present_and_computed_otherwise() -> None:
    assert log10_of({"p_value": 0.01, "log10_p_value": -2.5}, "p_value") == -2.5
    assert log10_of({"p_value": 0.01}, "p_value") == pytest.approx(-2.0)
    assert log10_of({"p_value": 0.0}, "p_value") is None
    assert log10_of({"p_value": None}, "p_value") is None


# ---------------------------------------------------------------- comparisons


def test_compare_names_everything(client: Client) -> None:
    cmp = client.compare(ROWS, reduction="best", values_are="error", budget=100, posthoc="nemenyi")
    assert isinstance(cmp, Comparison)
    assert cmp.complete
    assert cmp.algorithms == ("A", "B", "C")
    by_name = {s.algorithm: s for s in cmp.summary}
    assert by_name["C"].average_rank == pytest.approx(4 / 3)
    assert by_name["A"].average_rank == by_name["B"].average_rank == pytest.approx(7 / 3)
    assert all(s.mean_log10_v is not None and s.mean_log10_v < 0 for s in cmp.summary)
    friedman = cmp.friedman
    assert friedman is not None
    assert friedman.p_value == pytest.approx(math.exp(-1))
    assert friedman.log10_p_value == pytest.approx(-1 / math.log(10))
    assert cmp.posthoc is not None
    assert cmp.posthoc.cliques == (("C", "A", "B"),)
    # with C present A and B tie on average rank; alone, A is better (README)
    assert cmp.relative_flipped_pairs == (("A", "B"),)
    assert [(f.scale, f.a, f.b, f.kinds) for f in cmp.flips] == [("relative", "A", "B", ("order",))]
    assert cmp.absolute_flipped_pairs == ()
    assert {(p.a, p.b) for p in cmp.absolute_pairs} == {("A", "B"), ("A", "C"), ("B", "C")}
    frame = cmp.to_frame()
    assert list(frame["algorithm"]) == ["A", "B", "C"]
    assert frame.set_index("algorithm").loc["C", "average_rank"] == pytest.approx(4 / 3)
    assert client.get_comparison(cmp.id).raw == cmp.raw


def test_compare_accepts_a_frame_a_csv_path_and_rows_alike(client: Client, tmp_path: Path) -> None:
    path = tmp_path / "results.csv"
    path.write_text(CSV)
    options = {"reduction": "best", "absolute": "off"}
    by_rows = client.compare(ROWS, **options)  # type: ignore[arg-type]
    by_csv = client.compare(path, **options)  # type: ignore[arg-type]
    by_frame = client.compare(pd.DataFrame(ROWS).drop(columns="run"), **options)  # type: ignore[arg-type]
    tuples = client.compare([tuple(r.values()) for r in ROWS], **options)  # type: ignore[arg-type]
    assert by_rows.id == by_csv.id == by_frame.id == tuples.id  # the id hashes the request
    assert by_rows.absolute_status == "unavailable"
    assert by_rows.absolute_pairs == ()


def test_compare_waits_for_pending_tables(client: Client, dispatcher: Dispatcher) -> None:
    dispatcher.hold = True
    partial = client.compare(ROWS, reduction="best", values_are="error", wait=False)
    assert partial.status == "partial"
    assert partial.absolute_status == "pending"
    assert {p.problem for p in partial.pending} == {"classic/rastrigin/d2", "classic/griewank/d2"}
    seen: list[JobStatus] = []

    def progress(status: JobStatus) -> None:
        seen.append(status)
        if len(seen) == 2:
            release(dispatcher)

    cmp = client.compare(ROWS, reduction="best", values_are="error", progress=progress)
    assert cmp.complete
    assert len(cmp.absolute_pairs) == 3
    assert seen[0].progress is not None
    assert seen[0].progress.total == 8
    dispatcher.hold = True
    in_3d = [dict(r, problem=r["problem"].replace("d2", "d3")) for r in ROWS]
    with pytest.raises(JobTimeout) as info:
        client.compare(in_3d, timeout=0.1)
    assert "/v1/tables/t" in info.value.url


def test_view_is_used_when_accepted_and_dropped_when_refused(client: Client) -> None:
    cmp = client.compare(ROWS, absolute="off", view="summary")
    assert cmp.algorithms == ("A", "B", "C")
    again = client.get_comparison(cmp.id, view="summary")
    assert again.id == cmp.id


def test_cd_diagram_svg_png_and_file(client: Client, tmp_path: Path) -> None:
    cmp = client.compare(ROWS, absolute="off")
    svg = client.cd_diagram(cmp, path=tmp_path / "cd.svg")
    assert svg.lstrip().startswith(b"<?xml")
    assert b"<svg" in svg
    assert (tmp_path / "cd.svg").read_bytes() == svg
    png = client.cd_diagram(cmp.id, format="png")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    with pytest.raises(NotFound):
        client.cd_diagram("cnope")


# ---------------------------------------------------------------- machines


def test_cpus_search_get_register(client: Client) -> None:
    found = client.search_cpus("xeon e5440", limit=3)
    assert found.items[0].name == "Intel Xeon E5440"
    assert found.items[0].score == 1219.0
    again = client.get_cpu(found.items[0].id)
    assert again.name == "Intel Xeon E5440"
    added = client.register_cpu("Test CPU 9000", 2000, source="by hand", source_date="2024-01")
    assert added.id > 0
    assert client.get_cpu(added.id).score == 2000.0
    assert "Intel Xeon E5440" in list(found.to_frame()["name"])


def test_equivalent_runtime_reproduces_the_readme(client: Client) -> None:
    result = client.equivalent_runtime(15.0, s1=1540, s2=1643, p_gamma=0.1)
    alpha = 3223.49
    assert result.t2[0] == pytest.approx(result.gamma * 15.0 * (alpha - 1643) / (alpha - 1540))
    assert result.t2[0] == pytest.approx(10.1017, abs=5e-5)
    many = client.equivalent_runtime([10, 60], cpu1="Intel Xeon E5440", s2=1921)
    assert len(many.t2) == 2
    assert many.gamma == 1.0
    assert list(many.to_frame()["t1"]) == [10, 60]


def test_cross_machine_create_results_get(client: Client) -> None:
    cmp = client.create_cross_machine(
        [("tai20_5_0", 1278, 12), {"instance": "tai20_5_1", "a": 1359, "t1": 12}],
        cpu1="Intel Xeon E5440",
        s2=1921,
        p_gamma=0.1,
    )
    assert cmp.status == "awaiting-results"
    assert cmp.test is None
    assert [r.instance for r in cmp.runtimes] == ["tai20_5_0", "tai20_5_1"]
    done = client.submit_cross_machine_results(cmp, {"tai20_5_0": 1270, "tai20_5_1": 1350})
    assert done.status == "complete"
    assert done.test is not None
    # B better on both: k = 0 of n = 2, p = 1/4
    assert done.test.p_value == pytest.approx(0.25)
    assert [r.b for r in done.runtimes] == [1270, 1350]
    assert client.get_cross_machine(cmp.id).raw == done.raw
    assert list(done.to_frame()["instance"]) == ["tai20_5_0", "tai20_5_1"]


# ---------------------------------------------------------------- multi-objective


def test_pareto_ranking_create_get(client: Client, tmp_path: Path) -> None:
    scores = [
        {"problem": "z", "algorithm": a, "run": 0, "indicator": i, "value": v}
        for a, i, v in [("N", "hv", 0.65), ("N", "igd", 0.02), ("M", "hv", 0.6), ("M", "igd", 0.05)]
    ]
    ranking = client.create_pareto_ranking(scores, orientation={"hv": "max"})
    assert ranking.algorithms == ("N", "M")
    assert ranking.ranks["olympic"] == (1.0, 2.0)
    assert client.get_pareto_ranking(ranking.id).raw == ranking.raw
    path = tmp_path / "scores.csv"
    pd.DataFrame(scores).to_csv(path, index=False)
    from_csv = client.create_pareto_ranking(path, orientation={"hv": "max"})
    assert from_csv.ranks == ranking.ranks
    frame = ranking.to_frame()
    assert list(frame["algorithm"]) == ["N", "M"]
    assert "average_rank" in frame.columns


def test_indicators(client: Client) -> None:
    result = client.indicators(
        [[0.1, 0.9], [0.4, 0.5], [0.9, 0.1]],
        reference_front=[[0, 1], [0.5, 0.25], [1, 0]],
        reference_point=[1.1, 1.1],
        indicators=["hv"],
    )
    # the union of the boxes [x, 1.1] x [y, 1.1] of the three points, by inclusion-exclusion
    hv = 1.0 * 0.2 + 0.7 * 0.6 + 0.2 * 1.0 - 0.7 * 0.2 - 0.2 * 0.2 - 0.2 * 0.6 + 0.2 * 0.2
    assert result.values["hv"] == pytest.approx(hv)
    assert result.to_frame().loc[0, "indicator"] == "hv"


# ---------------------------------------------------------------- region scans


def test_region_scan_waits_and_chooses(client: Client, dispatcher: Dispatcher) -> None:
    dispatcher.hold = True
    seen: list[JobStatus] = []

    def progress(status: JobStatus) -> None:
        seen.append(status)
        release(dispatcher)

    scan = client.region_scan(
        "classic/sphere/d3",
        {"DE": 0.01, "PSO": 0.8, "X": 2.0},
        deltas=[0.1, 1.0],
        log2n=10,
        progress=progress,
    )
    assert scan.ready
    assert [d.delta for d in scan.deltas] == [0.1, 1.0]
    assert scan.chosen == 0.1
    assert scan.chosen_separating == 1.0
    assert scan.follow_up is not None
    assert scan.follow_up["table_request"]["delta"] == 0.1
    assert seen
    assert seen[0].status == "building"
    assert client.get_region_scan(scan.id).raw == scan.raw
    frame = scan.to_frame()
    assert list(frame["chosen"]) == [True, False]


def test_region_scan_paper_tail(client: Client) -> None:
    values = {"below": -1.0, "low": 1e-9, "mid": 2.0}
    scan = client.region_scan("classic/rastrigin/d2", values, deltas=[0.5], log2n=10, tail="paper")
    assert scan.ready
    assert scan.tail == "paper"
    assert client.region_scan("classic/rastrigin/d2", values, deltas=[0.5], log2n=10).tail == "auto"
    (entry,) = scan.deltas
    table = client.get_table(entry.table_id)
    assert table.summary is not None
    y_1, n = table.summary["y_1"], 1024
    ranks = {r["algorithm"]: r for r in entry.ranks}
    for name in ("below", "low"):  # Eq. 28's lower tail, as published
        assert ranks[name]["v"] == pytest.approx(math.exp(values[name] - y_1) / (n + 1), rel=1e-12)


def test_compare_on_given_tables(client: Client) -> None:
    box = client.create_table("classic/rastrigin/d2", delta=0.5, log2n=10)
    cmp = client.compare(
        ROWS, reduction="best", tables={"classic/rastrigin/d2": box.id}, view="full"
    )
    assert cmp.complete
    region = cmp.absolute_regions["classic/rastrigin/d2"]
    assert region["region"] == "box"
    assert region["table_id"] == box.id
    assert cmp.absolute_regions["classic/sphere/d2"]["region"] == "domain"
    direct = client.ranks(table_id=box.id, values=[2.0, 3.0, 1.0])
    i = cmp.problems.index("classic/rastrigin/d2")
    assert cmp.raw["absolute"]["log10_v"][i] == [r["log10_v"] for r in direct.raw["results"]]
    assert client.compare(ROWS, reduction="best").absolute_regions == {}


def test_region_scan_timeout(client: Client, dispatcher: Dispatcher) -> None:
    dispatcher.hold = True
    with pytest.raises(JobTimeout) as info:
        client.region_scan(
            "classic/rastrigin/d2", {"A": 0.1, "B": 1.0}, deltas=[0.5], log2n=10, timeout=0.1
        )
    assert "/v1/region-scans/r" in info.value.url


# ---------------------------------------------------------------- pandas is optional


def test_to_frame_without_pandas_says_how_to_install_it(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    result = client.sign([1, 2], [2, 3])
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=r"absrank-client\[pandas\]"):
        result.to_frame()
    assert result.rows()[0]["p_value"] == result.p_value


def test_warnings_come_once_with_their_count_and_problems(client: Client) -> None:
    # B has two runs on every problem, A one: the service warns once about the run counts
    rows = [*ROWS, *({**r, "run": 1} for r in ROWS if r["algorithm"] == "B")]
    cmp = client.compare(rows, reduction="mean", values_are="error", absolute="off")
    messages = [w.message for w in cmp.warnings]
    assert len(messages) == len(set(messages))
    assert any("different numbers of runs" in m for m in messages)
    for w in cmp.warnings:
        assert isinstance(w, ServiceWarning)
        assert w.count >= 1
        assert str(w).endswith(w.message if w.count == 1 else f"(x{w.count})")
    raw = cmp.raw["warnings"]
    assert [ServiceWarning.parse(item) for item in raw] == list(cmp.warnings)
    assert ServiceWarning.parse("plain text") == ServiceWarning("plain text")


def test_a_read_timeout_says_the_server_did_not_answer_in_time() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("timed out", request=request)

    http = httpx.Client(base_url="http://x.test", transport=httpx.MockTransport(slow))
    with Client(http=http, timeout=3) as c, pytest.raises(RequestTimedOut) as info:
        c.health()
    assert "did not answer within 3 s" in str(info.value)
    assert isinstance(info.value, ConnectionFailed)  # still a transport failure (CLI exit 1)


def test_cd_diagram_over_absolute_ranks(client: Client) -> None:
    cmp = client.compare(ROWS)
    svg = client.cd_diagram(cmp, ranks="absolute")
    assert b"mean log10 v" in svg
    assert svg != client.cd_diagram(cmp)
    off = client.compare(ROWS, absolute="off")
    with pytest.raises(Conflict):
        client.cd_diagram(off, ranks="absolute")
