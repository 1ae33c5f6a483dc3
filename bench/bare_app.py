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

Run it exactly as ``absrank serve`` runs the real app (``uvicorn.run(app, host, port,
log_level="info")``, one process)::

    .venv/bin/python bench/bare_app.py --port 8001
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from pydantic import ValidationError

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.domain import absrank
from app.heap import keep_large_blocks
from app.schemas.ranks import RankRequest
from app.services.ranks import RankAnswer, RankColumns

app = FastAPI(title="bare peer")


@app.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


def answer(body: RankRequest) -> RankAnswer:
    """Made-up ranks for ``body.values`` (full-length floats, as real ranks have), in the
    real answer's shape."""
    values = body.values or []
    n = len(values)
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
            "results": RankColumns.of(values, res),
            "algorithms": None,
            "tail": {},
            "warnings": [],
            "provenance": {"service": "bare"},
        }
    )


@app.post("/v1/absolute-ranks")
async def absolute_ranks(request: Request) -> Response:
    try:
        body = RankRequest.model_validate_json(await request.body())
    except ValidationError as exc:
        raise RequestValidationError(exc.errors(include_url=False)) from None
    return Response(answer(body).json(), media_type="application/json")


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
    args = p.parse_args()
    keep_large_blocks()  # as the real API's start does (app.heap): the same allocator
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")


if __name__ == "__main__":
    main()
