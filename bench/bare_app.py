"""The peer of ``POST /v1/absolute-ranks``: a bare FastAPI endpoint with the same payload shape.

Same request fields (a list of finite floats plus the same top-level fields, validated the same
way), a sync endpoint like the real one (FastAPI runs it in the thread pool), and a response of
the same shape (one small dict per value, with a nested interval, plus the same top-level
fields), validated through a ``response_model``. It does no ranking, no database and no
hashing: it is the framework's floor for this payload.

Run it exactly as ``absrank serve`` runs the real app (``uvicorn.run(app, host, port,
log_level="info")``, one process)::

    .venv/bin/python bench/bare_app.py --port 8001
"""

from __future__ import annotations

import argparse
from typing import Annotated, Any, Literal

from fastapi import FastAPI
from pydantic import BaseModel, ConfigDict, Field

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]


class BareRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    function_id: str | None = None
    table_id: str | None = None
    values: list[FiniteFloat] = Field(min_length=1)
    values_are: Literal["f", "error"] = "f"
    budget: int = Field(1, ge=1)
    runs: int = Field(1, ge=1, le=10_000)
    aggregate: Literal["best", "worst", "median", "order"] | None = None
    order: int | None = Field(None, ge=1)
    tail: Literal["auto", "power", "linear", "paper"] = "auto"
    tail_k: int = Field(100, ge=2)
    confidence: float = Field(0.95, gt=0.0, lt=1.0)
    use_analytic: bool = True


class BareInterval(BaseModel):
    log10_lo: float | None
    log10_hi: float | None
    v_lo: float
    v_hi: float


class BareItem(BaseModel):
    value: float
    v: float
    log10_v: float | None
    method: str
    interval: BareInterval


class BareResponse(BaseModel):
    function_id: str
    source: dict[str, Any]
    budget: int
    runs: int
    aggregate: str
    results: list[BareItem]
    tail: dict[str, Any]
    warnings: list[str]
    provenance: dict[str, Any]


app = FastAPI(title="bare peer")


@app.get("/healthz")
def healthz() -> dict[str, str]:
    return {"status": "ok"}


@app.post("/v1/absolute-ranks", response_model=BareResponse)
def absolute_ranks(body: BareRequest) -> dict[str, Any]:
    results = [
        {
            "value": value,
            "v": 0.5,
            "log10_v": -0.30103,
            "method": "interpolated",
            "interval": {"log10_lo": -0.4, "log10_hi": -0.2, "v_lo": 0.398, "v_hi": 0.631},
        }
        for value in body.values
    ]
    return {
        "function_id": body.function_id or body.table_id or "",
        "source": {"kind": "table", "table_id": body.table_id},
        "budget": body.budget,
        "runs": body.runs,
        "aggregate": body.aggregate or "best",
        "results": results,
        "tail": {},
        "warnings": [],
        "provenance": {"service": "bare"},
    }


def main() -> None:
    import uvicorn

    p = argparse.ArgumentParser(description="serve the bare peer app")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    args = p.parse_args()
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")


if __name__ == "__main__":
    main()
