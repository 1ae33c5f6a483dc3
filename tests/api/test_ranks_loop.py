"""The rank route asks the caches up front whether a request needs the database
(:func:`app.services.ranks.reads_database`): a request it answers ``False`` for must open no
session (it runs on the event loop), across the sources and the states of their tables."""

from __future__ import annotations

from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy.orm import Session, sessionmaker

from app.errors import AppError
from app.schemas.ranks import RankRequest
from app.services import tables
from app.services.ranks import RankEnv, rank_answer, reads_database
from workers.inline import InlineDispatcher

FN = "classic/ellipsoid/d2"  # ladders apply, no exact form
DEEP = 1e-9  # an error below the domain table's samples
WITHIN = [100.0, 1e4]


class _NoSession:
    """A sessionmaker that fails the test when called."""

    def __call__(self, *args: object, **kwargs: object) -> Session:
        raise AssertionError("a session was opened for a request said to need none")


def _env(client: TestClient, sm: Any, *, may_queue: bool) -> RankEnv:
    state = client.app.state  # type: ignore[attr-defined]
    return RankEnv(
        sm, state.settings, state.dispatcher, state.table_caches, state.ladder_caches, may_queue
    )


def _needs_database(client: TestClient, body: dict[str, Any], *, may_queue: bool = True) -> bool:
    """``reads_database`` of ``body``; when ``False``, the answer (or its problem) is made
    without a session."""
    req = RankRequest.model_validate(body)
    state = client.app.state  # type: ignore[attr-defined]
    if reads_database(_env(client, state.sessionmaker, may_queue=may_queue), req):
        return True
    refuse: sessionmaker[Session] = _NoSession()  # type: ignore[assignment]
    try:
        rank_answer(_env(client, refuse, may_queue=may_queue), req)
    except AppError:
        pass  # a problem found without the database is an answer too
    return False


def _errors(values: list[float], **extra: Any) -> dict[str, Any]:
    return {"function_id": FN, "values": values, "values_are": "error"} | extra


def test_default_table_and_ladder_states(client: TestClient, dispatcher: InlineDispatcher) -> None:
    domain = _errors(WITHIN, regions="domain")
    assert _needs_database(client, domain)  # nothing built, nothing cached
    assert client.post("/v1/absolute-ranks", json=domain).status_code == 200  # builds it
    assert not _needs_database(client, domain)
    # 'auto': the first look for the ladder reads the database; then its levels are known
    # missing and values within the samples need nothing more
    auto = _errors(WITHIN)
    assert _needs_database(client, auto)
    assert client.post("/v1/absolute-ranks", json=auto).status_code == 200
    assert not _needs_database(client, auto)
    # deep values queue the ladder (a write) when the caller may, else wait for it as they are
    deep = _errors([DEEP, *WITHIN])
    assert not _needs_database(client, deep, may_queue=False)
    assert _needs_database(client, deep, may_queue=True)
    nested = _errors(WITHIN, regions="nested")
    assert not _needs_database(client, nested, may_queue=False)  # refused at once (409)
    assert _needs_database(client, nested, may_queue=True)
    dispatcher.hold = False
    assert client.post("/v1/absolute-ranks", json=deep).status_code == 200  # builds the ladder
    for body in (deep, auto, nested, domain):
        assert not _needs_database(client, body)


def test_table_ids_exact_forms_and_errors(client: TestClient) -> None:
    table = client.post("/v1/tables", json={"function_id": "classic/rastrigin/d2"}).json()
    by_id = {"table_id": table["id"], "values": [0.5, 3.0]}
    state = client.app.state  # type: ignore[attr-defined]
    state.table_caches.clear()
    assert _needs_database(client, by_id)
    tables.load_table_data(state.sessionmaker, table["id"], cache=state.table_caches)
    assert not _needs_database(client, by_id)
    assert not _needs_database(client, {"function_id": "classic/sphere/d2", "values": [1.0]})
    assert not _needs_database(client, {"function_id": "classic/nosuch/d2", "values": [1.0]})
    assert not _needs_database(client, {"sample": [1.0, 2.0, 3.0], "values": [1.5]})


@pytest.mark.parametrize("regions", ["auto", "nested", "domain"])
def test_a_warm_request_on_the_loop_sends_the_threads_bytes(
    client: TestClient, regions: str
) -> None:
    body = _errors([DEEP, *WITHIN], regions=regions)
    first = client.post("/v1/absolute-ranks", json=body)  # cold: in a thread
    assert first.status_code == 200, first.text
    assert not _needs_database(client, body)
    assert client.post("/v1/absolute-ranks", json=body).content == first.content
