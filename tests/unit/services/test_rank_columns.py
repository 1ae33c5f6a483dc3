"""The absolute-ranks items as columns write the bytes of the per-value implementation.

:class:`app.services.ranks.RankColumns` replaced one dict per value (kept in
:mod:`tests.unit.services.ranks_reference`); these property tests compare the two, on random
columns and on the endpoint's answers (values below f*, at sample values and their ties, on
plateaus, in both tails, mixed, as errors).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic_core import to_json

from app.domain import absrank
from app.domain.absrank import METHODS
from app.main import create_app
from app.services.ranks import RankAnswer, RankColumns, _columns, rank_answer
from app.services.table_cache import AppCaches
from tests.api.conftest import api_settings
from tests.support import migrate
from tests.unit.services.ranks_reference import reference_bytes, reference_rank_items
from workers.inline import InlineDispatcher

_METHODS = [*METHODS, *(f"nested-{m}" for m in METHODS)]

finite = st.floats(allow_nan=False, allow_infinity=False)
log10 = st.one_of(
    st.floats(min_value=-400.0, max_value=0.0),
    st.just(-np.inf),
    st.just(np.nan),
    st.just(0.0),
    st.just(-0.0),
    st.sampled_from([-1e-300, -5e-324, -1e-5, -1e16, -307.9, -323.5]),
)


@st.composite
def results(draw: Any) -> tuple[list[float], absrank.RankResult, np.ndarray | None]:
    n = draw(st.integers(1, 40))
    values = draw(st.lists(finite, min_size=n, max_size=n))
    if draw(st.booleans()):  # ties
        values = [values[0]] * n
    cols = [np.array(draw(st.lists(log10, min_size=n, max_size=n))) for _ in range(3)]
    log10_v, lo, hi = cols
    v = np.where(np.isfinite(log10_v), 10.0 ** np.nan_to_num(log10_v), 0.0)
    method = np.array(draw(st.lists(st.sampled_from(_METHODS), min_size=n, max_size=n)))
    provisional = draw(
        st.one_of(st.none(), st.lists(st.booleans(), min_size=n, max_size=n).map(np.array))
    )
    res = absrank.RankResult(
        log10_v=log10_v,
        v=v,
        method=method,
        log10_lo=lo,
        log10_hi=hi,
        tail=None,  # type: ignore[arg-type]
    )
    return values, res, provisional


@given(results())
@settings(max_examples=300, deadline=None)
def test_columns_write_the_reference_bytes(
    case: tuple[list[float], absrank.RankResult, np.ndarray | None],
) -> None:
    values, res, provisional = case
    cols = RankColumns.of(values, res, provisional)
    reference = reference_rank_items(values, res, provisional)
    assert cols.json() == to_json(reference)
    assert cols.items() == reference


def test_many_columns_write_the_reference_bytes() -> None:
    """A large answer (10^5 values), with every kind of entry mixed."""
    rng = np.random.default_rng(5)
    n = 100_017
    log10_v = rng.uniform(-330.0, 0.0, n)
    log10_v[rng.random(n) < 0.05] = -np.inf
    lo = np.where(rng.random(n) < 0.05, -np.inf, log10_v - rng.exponential(1.0, n))
    hi = np.where(rng.random(n) < 0.01, np.nan, np.minimum(log10_v + rng.exponential(1.0, n), 0))
    res = absrank.RankResult(
        log10_v=log10_v,
        v=10.0**log10_v,
        method=np.array(_METHODS)[rng.integers(0, len(_METHODS), n)],
        log10_lo=lo,
        log10_hi=hi,
        tail=None,  # type: ignore[arg-type]
    )
    values = (rng.standard_cauchy(n) * 10.0 ** rng.integers(-20, 20, n)).tolist()
    provisional = rng.random(n) < 0.1
    for mask in (None, provisional):
        reference = to_json(reference_rank_items(values, res, mask))
        assert RankColumns.of(values, res, mask).json() == reference


def test_columns_refuse_what_is_not_a_column() -> None:
    res = absrank.RankResult(
        log10_v=np.zeros(2),
        v=np.ones(2),
        method=np.array(["interpolated", "Bad,"]),
        log10_lo=np.zeros(2),
        log10_hi=np.zeros(2),
        tail=None,  # type: ignore[arg-type]
    )
    with pytest.raises(TypeError, match="method"):
        RankColumns.of([1.0, 2.0], res)
    with pytest.raises(TypeError, match="value"):
        RankColumns.of([float("nan"), 2.0], res)


def test_an_empty_answer_is_an_empty_list() -> None:
    res = absrank.RankResult(
        log10_v=np.zeros(0),
        v=np.zeros(0),
        method=np.array([], dtype=str),
        log10_lo=np.zeros(0),
        log10_hi=np.zeros(0),
        tail=None,  # type: ignore[arg-type]
    )
    assert RankColumns.of([], res).json() == b"[]"


# ------------------------------------------------------------------ the endpoint, end to end


@pytest.fixture(scope="module")
def served(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[TestClient, str, dict[str, Any]]]:
    tmp: Path = tmp_path_factory.mktemp("columns")
    s = api_settings(tmp)
    migrate(s.database_url)
    dispatcher = InlineDispatcher(s)
    application = create_app(s, dispatcher=dispatcher)
    dispatcher.app = application  # type: ignore[assignment]
    with TestClient(application) as client:
        table = client.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"}).json()
        view = client.get(f"/v1/tables/{table['id']}").json()
        yield client, table["id"], view["summary"]


def _sent_and_reference(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, payload: dict[str, Any]
) -> tuple[bytes, bytes]:
    """The endpoint's bytes, and the reference bytes of the same answer."""
    seen: list[RankAnswer] = []
    real = rank_answer

    def spy(*args: Any, **kwargs: Any) -> RankAnswer:
        seen.append(real(*args, **kwargs))
        return seen[-1]

    monkeypatch.setattr("app.api.ranks.rank_answer", spy)
    r = client.post("/v1/absolute-ranks", json=payload)
    assert r.status_code == 200, r.text
    (answer,) = seen
    cols = answer.results
    assert cols is not None
    res = absrank.RankResult(
        log10_v=cols.log10_v,
        v=cols.v,
        method=cols.method,
        log10_lo=cols.log10_lo,
        log10_hi=cols.log10_hi,
        tail=None,  # type: ignore[arg-type]
    )
    body = answer.body | {"results": reference_rank_items(cols.value, res, cols.provisional)}
    return r.content, reference_bytes(body)


@st.composite
def table_values(draw: Any, summary: dict[str, Any]) -> list[float]:
    y1 = summary["y_1"]
    quantiles = [q["t"] for q in summary["quantiles"]]
    top = max(quantiles)
    region = st.one_of(
        st.floats(-5.0, y1),  # below f* = 0 and in the lower tail
        st.floats(y1, top),  # interpolated
        st.floats(top, 2 * top + 10),  # the upper tail
        st.sampled_from([0.0, y1, *quantiles]),  # at f*, at samples (ties, plateaus)
    )
    out: list[float] = draw(st.lists(region, min_size=1, max_size=30))
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_the_endpoint_sends_the_reference_bytes_for_a_table(
    served: tuple[TestClient, str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    data: st.DataObject,
) -> None:
    client, table_id, summary = served
    values = data.draw(table_values(summary))
    payload: dict[str, Any] = {"table_id": table_id, "values": values}
    payload |= data.draw(
        st.sampled_from([{}, {"tail": "linear"}, {"tail": "paper"}, {"budget": 100}])
    )
    sent, reference = _sent_and_reference(client, monkeypatch, payload)
    assert sent == reference


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    values=st.lists(st.floats(-1.0, 50.0), min_size=1, max_size=20),
    are=st.sampled_from(["f", "error"]),
    runs=st.sampled_from(
        [{}, {"runs": 3, "aggregate": "median"}, {"runs": 2, "aggregate": "mean"}]
    ),
)
def test_the_endpoint_sends_the_reference_bytes_analytic(
    served: tuple[TestClient, str, dict[str, Any]],
    monkeypatch: pytest.MonkeyPatch,
    values: list[float],
    are: str,
    runs: dict[str, Any],
) -> None:
    client, _, _ = served
    if are == "error":
        values = [abs(v) for v in values]
    payload = {"function_id": "classic/sphere/d2", "values": values, "values_are": are} | runs
    sent, reference = _sent_and_reference(client, monkeypatch, payload)
    assert sent == reference


def test_warnings_locate_values(
    served: tuple[TestClient, str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value below f* is named by its index, as before; the bytes are the reference's."""
    client, table_id, _ = served
    payload = {"table_id": table_id, "values": [1.0, -3.0, 2.0, -3.0]}
    sent, reference = _sent_and_reference(client, monkeypatch, payload)
    assert sent == reference
    warnings = client.post("/v1/absolute-ranks", json=payload).json()["warnings"]
    assert any("(first: values[1])" in w for w in warnings), warnings


@pytest.mark.parametrize("token", [b"NaN", b"Infinity", b"-Infinity", b"1e999"])
def test_non_finite_values_are_refused(
    served: tuple[TestClient, str, dict[str, Any]], token: bytes
) -> None:
    client, table_id, _ = served
    body = b'{"table_id": "%s", "values": [1.0, %s]}' % (table_id.encode(), token)
    r = client.post(
        "/v1/absolute-ranks", content=body, headers={"content-type": "application/json"}
    )
    assert r.status_code == 422, r.text
    assert r.json()["errors"][0]["field"].startswith("values"), r.text


def test_a_warm_request_runs_on_the_event_loop(
    served: tuple[TestClient, str, dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first request for a table needs the database (a thread); once its table and curve
    are cached the same request opens no session and runs on the loop, with the same bytes;
    a request above ON_LOOP_UP_TO values always runs in a thread."""
    import anyio
    import anyio.to_thread

    from app.api import ranks as route

    client, table_id, _ = served
    hops: list[object] = []
    real = anyio.to_thread.run_sync

    async def counted(fn: Any, *args: Any) -> Any:
        hops.append(fn)
        return await real(fn, *args)

    monkeypatch.setattr(anyio.to_thread, "run_sync", counted)
    state = client.app.state  # type: ignore[attr-defined]
    kept = state.table_caches, state.ladder_caches
    fresh = AppCaches.from_settings(state.settings)  # nothing cached: the table is read
    # (set and put back by hand: monkeypatch would delete State's attributes on undo)
    state.table_caches, state.ladder_caches = fresh.tables, fresh.ladders
    try:
        payload = {"table_id": table_id, "values": [0.5, 3.0], "tail": "paper", "tail_k": 7}
        first = client.post("/v1/absolute-ranks", json=payload)
        assert first.status_code == 200, first.text
        assert len(hops) == 1  # the table's rows read from the database, in a thread
        again = client.post("/v1/absolute-ranks", json=payload)
        assert again.content == first.content
        assert len(hops) == 1
    finally:
        state.table_caches, state.ladder_caches = kept
    monkeypatch.setattr(route, "ON_LOOP_UP_TO", 1)
    assert client.post("/v1/absolute-ranks", json=payload).content == first.content
    assert len(hops) == 2
    monkeypatch.setattr(route, "ON_LOOP_UP_TO", 10_000)
    # a mean of r runs (convolutions per value) never holds up the loop, warm or not
    mean = payload | {"values": [3.0], "runs": 8, "aggregate": "mean", "tail": "power"}
    mean.pop("tail_k")
    r = client.post("/v1/absolute-ranks", json=mean)
    assert len(hops) == 3, r.text
    # nor does an order statistic of r runs (up to r terms per value), warm or not
    order = payload | {"values": [3.0], "runs": 9, "aggregate": "order", "order": 3}
    r = client.post("/v1/absolute-ranks", json=order)
    assert r.status_code == 200, r.text
    assert len(hops) == 4, r.text


# ------------------------------------------------------------------ the rewritten encoder's parts


@given(st.lists(st.floats(min_value=-400.0, max_value=308.0), min_size=1, max_size=200))
@settings(max_examples=300, deadline=None)
def test_the_vectorized_power_is_pythons(exponents: list[float]) -> None:
    """``_pow10`` gives Python's ``10.0**x`` bit for bit (the digits of v_lo/v_hi are sent)."""
    x = np.array(exponents)
    got = _columns._pow10(x)
    assert got.tobytes() == np.array([10.0**e for e in exponents]).tobytes()


def test_the_vectorized_power_is_pythons_on_many_exponents() -> None:
    rng = np.random.default_rng(15)
    x = np.concatenate([rng.uniform(-330.0, 0.0, 1_000_000), -rng.exponential(1e-3, 100_000)])
    assert _columns.VECTOR_POW  # the app's numeric pin holds in the test process
    assert np.power(10.0, x).tobytes() == _columns._exact_pow10(x).tobytes()


def test_an_overflowing_power_raises_as_python_does() -> None:
    with pytest.raises(OverflowError):
        _columns._pow10(np.array([0.0, 400.0]))


@given(
    results(),
    st.text(alphabet=',%s"{}:ab1', max_size=12),
    st.text(alphabet=',%s"{}:ab1', max_size=12),
    st.booleans(),
)
@settings(max_examples=200, deadline=None)
def test_prefix_and_suffix_go_around_the_items(
    case: tuple[list[float], absrank.RankResult, np.ndarray | None],
    prefix: str,
    suffix: str,
    exact: bool,
) -> None:
    """Commas and ``%`` in the prefix and suffix are sent as they are; the exact power gives
    the same bytes as the vectorized one."""
    values, res, provisional = case
    cols = RankColumns.of(values, res, provisional)
    head, tail = prefix.encode(), suffix.encode()
    expected = head + to_json(reference_rank_items(values, res, provisional)) + tail
    with pytest.MonkeyPatch.context() as mp:
        if exact:
            mp.setattr(_columns, "VECTOR_POW", False)
        assert cols.json(head, tail) == expected
