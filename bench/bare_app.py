"""The peer of ``POST /v1/absolute-ranks``: a bare FastAPI endpoint, the same answer's shape.

Like for like with the real endpoint, minus its work:

* the same request model (:class:`app.schemas.ranks.RankRequest`) validated the same way: from
  the body's bytes by ``RankRequest.model_validate_json``, as the real route's fast path does
  (:class:`app.api.ranks.RankRoute`; FastAPI's own handler, ``json.loads`` then the model, is
  ``/v1/absolute-ranks-framework`` here, for ``bench/ranks_asgi.py``), in an ``async def``
  endpoint like the real one on its warm path (no thread-pool hop; the real one hops only
  when it needs the database);
* the same answer: the same keys in the same order, the per-value items written by the same
  encoder (:class:`app.services.ranks.RankColumns` from columns: one ``orjson.dumps`` of the
  float table and one ``bytes %``; ``pydantic_core.to_json`` for the rest), returned as
  ``Response(bytes)`` — no ``response_model`` on either side;
* no ranking, no table, no database, no provenance hash, no envelope validation, no middleware.

It is the framework's floor for this payload: what absrank costs above it is its own work.

With ``--floor`` (and ``/v1/absolute-ranks-floor`` in any mode, for ``bench/ranks_asgi.py``)
the same endpoint also ranks the values at the numpy limit (``bench/_floor.py``: the table
read from the deployment's database once, then one ``searchsorted`` and one ``interp`` over
its knots per request) and answers those ranks: what absrank would cost if the ranking were
all it did.

Run it exactly as ``absrank serve`` runs the real app (``uvicorn.run(app, host, port,
log_level="info")``, one process)::

    .venv/bin/python bench/bare_app.py --port 8001
    .venv/bin/python bench/bare_app.py --port 8002 --floor  # ABSRANK_DATABASE_URL's tables
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from _floor import Floor

from app.domain import absrank
from app.domain.validation import float64_array
from app.heap import keep_large_blocks
from app.schemas.ranks import RankRequest
from app.services.ranks import RankAnswer, RankColumns

app = FastAPI(title="bare peer")

FloorLoader = Callable[[str], Floor]


@dataclass
class _FloorState:
    """The floor endpoints' tables: ``load(table_id)`` (set by :func:`use_floor`), each kept
    once loaded; ``everywhere``: ``--floor``, ``/v1/absolute-ranks`` ranks at the numpy limit
    too."""

    load: FloorLoader | None = None
    floors: dict[str, Floor] = field(default_factory=dict)
    everywhere: bool = False

    def floor(self, table_id: str) -> Floor:
        got = self.floors.get(table_id)
        if got is None:
            if self.load is None:
                raise RuntimeError("bare_app.use_floor() was not called")
            got = self.floors[table_id] = self.load(table_id)
        return got


FLOOR = _FloorState()


def use_floor(load: FloorLoader, *, everywhere: bool = False) -> None:
    """Rank on the floor endpoints with tables from ``load(table_id)`` (kept per id)."""
    FLOOR.load, FLOOR.everywhere = load, everywhere
    FLOOR.floors.clear()


def floor_loader(sm: Any, settings: Any) -> FloorLoader:
    """Tables read through ``sm`` (a sessionmaker), cached as ``settings`` size the ready
    tables' cache."""
    from app.domain.functions import get_function
    from app.services.table_cache import TableCaches
    from app.services.tables import load_table_data

    caches = TableCaches.from_settings(settings)

    def load(table_id: str) -> Floor:
        ready = load_table_data(sm, table_id, cache=caches)
        return Floor.of(ready.data, float(get_function(ready.view.function_id).f_opt or 0.0))

    return load


def database_floor_loader() -> FloorLoader:
    """Tables read from the database of this process's settings (``ABSRANK_DATABASE_URL``)."""
    from app.config import Settings
    from app.db import make_engine, make_sessionmaker

    settings = Settings()
    return floor_loader(make_sessionmaker(make_engine(settings.database_url)), settings)


@app.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


def answer(body: RankRequest, floor: bool = False) -> RankAnswer:
    """Made-up ranks for ``body.values`` (full-length floats, as real ranks have), in the
    real answer's shape; with ``floor``, the ranks at the numpy limit (``bench/_floor.py``)."""
    values = body.values or []
    n = len(values)
    if floor:
        value64 = float64_array(values)
        res = FLOOR.floor(body.table_id or "").rank(value64)
    else:
        value64 = None
        log10_v = np.log10(np.arange(1, n + 1) / (n + 1.5))
        res = absrank.RankResult(
            log10_v=log10_v,
            v=10.0**log10_v,
            # an object array of method names, as absrank's ranks carry (a fixed-width text
            # array would cost the peer ~28 µs more a request in RankColumns' check)
            method=np.full(n, "interpolated", dtype=object),
            log10_lo=log10_v - 0.1,
            log10_hi=log10_v + 0.1,
            tail=None,  # type: ignore[arg-type]
        )
    return RankAnswer(
        {
            "function_id": body.function_id or body.table_id or "",
            "source": {"kind": "table", "table_id": body.table_id},
            "budget": body.budget,
            "runs": body.runs,
            "aggregate": body.aggregate or "best",
            "results": RankColumns.of(values, res, value64=value64),
            "algorithms": None,
            "tail": {},
            "warnings": [],
            "provenance": {"service": "bare"},
        }
    )


@app.post("/v1/absolute-ranks")
async def absolute_ranks(request: Request) -> Response:
    body = await _request(request)
    return Response(answer(body, FLOOR.everywhere).json(), media_type="application/json")


async def _request(request: Request) -> RankRequest:
    """The body validated from its bytes, as absrank's route does (422 as FastAPI's)."""
    try:
        return RankRequest.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False)) from None


@app.post("/v1/absolute-ranks-floor")
async def absolute_ranks_floor(request: Request) -> Response:
    """``/v1/absolute-ranks`` with the ranking at the numpy limit (after :func:`use_floor`)."""
    body = await _request(request)
    return Response(answer(body, True).json(), media_type="application/json")


@app.post("/v1/absolute-ranks-framework")
async def absolute_ranks_framework(body: RankRequest) -> Response:
    """The same answer, the body parsed and validated by FastAPI (``json.loads``, then the
    model), as every FastAPI endpoint that declares a model parameter."""
    return Response(answer(body).json(), media_type="application/json")


def main() -> None:
    import uvicorn

    p = argparse.ArgumentParser(description="serve the bare peer app")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument(
        "--floor",
        action="store_true",
        help="rank at the numpy limit on the tables of ABSRANK_DATABASE_URL (bench/_floor.py)",
    )
    args = p.parse_args()
    if args.floor:
        use_floor(database_floor_loader(), everywhere=True)
    keep_large_blocks()  # as the real API's start does (app.heap): the same allocator
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")


if __name__ == "__main__":
    main()
