"""A bounded, seeded schemathesis run over the whole OpenAPI document: no answer is a 5xx.

Every operation of ``/openapi.json`` gets :data:`EXAMPLES_PER_OPERATION` generated cases
(positive and negative: schemathesis mutates bodies, parameters and headers away from the
schema), derandomized so that a failure reproduces. The app is the real one on a migrated
SQLite file; table builds are held (queued, never run), so a generated ``POST /v1/tables`` costs
nothing. Beyond "no 5xx", every error answer must be an RFC 9457 problem.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.generation import GenerationMode

from app.main import create_app
from tests.api.conftest import api_settings
from tests.support import migrate
from workers.inline import InlineDispatcher

#: Examples per operation and mode (valid, mutated): about 340 cases over the document
#: (hypothesis stops earlier for an operation whose schema admits fewer distinct inputs).
EXAMPLES_PER_OPERATION = 3


@pytest.fixture(scope="module")
def fuzzed_app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FastAPI]:
    tmp: Path = tmp_path_factory.mktemp("schemathesis")
    config = api_settings(tmp, seed_archive=False, default_tables=False)
    migrate(config.database_url)
    dispatcher = InlineDispatcher(config)
    dispatcher.hold = True  # tables are queued, never built: a generated request costs little
    app = create_app(config, dispatcher=dispatcher)
    dispatcher.app = app
    with TestClient(app):  # runs the lifespan (engine, caches) for the whole module
        yield app


def _operations(app: FastAPI) -> list[Any]:
    loaded = schemathesis.openapi.from_asgi("/openapi.json", app)
    return [result.ok() for result in loaded.get_all_operations()]


@pytest.mark.slow
@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_no_operation_answers_5xx(fuzzed_app: FastAPI, mode: GenerationMode) -> None:
    """Every operation, valid and mutated inputs: never a 5xx; every error a problem."""
    failures: list[str] = []
    calls = 0
    for operation in _operations(fuzzed_app):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            derandomize=True,
            deadline=None,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case: schemathesis.Case) -> None:
            nonlocal calls
            calls += 1
            response = case.call()
            label = f"{case.method} {case.formatted_path} -> {response.status_code}"
            if response.status_code >= 500:
                failures.append(f"{label}: {response.text[:300]}")
            elif response.status_code >= 400:
                media = (response.headers.get("content-type") or [""])[0]
                if not media.startswith("application/problem+json"):
                    failures.append(f"{label} as {media!r}")

        try:
            run()
        except Unsatisfiable:  # nothing to mutate (an operation without inputs)
            continue
    assert calls >= 100, calls
    assert not failures, "\n".join(failures[:20])
