"""Answers that pass through their declared response model at run time.

Endpoints that build their answer as plain JSON types (the services' shape) return
``model_response(Model, out)``: the answer is validated by the model's cached
:class:`pydantic.TypeAdapter` and serialized by it, so the OpenAPI schema describes exactly what
is sent. Keys the service leaves out stay out (``exclude_unset``), so an optional field is either
present with its value or absent, as the schema says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import Response

# the serialization itself is the services' (a job stores the bytes a route would send)
from app.services.serialize import adapter, dump

JSON = "application/json"

__all__ = ["JSON", "adapter", "dump", "model_response"]


def model_response(
    model: Any,
    content: object,
    *,
    status_code: int = 200,
    headers: Mapping[str, str] | None = None,
    media_type: str = JSON,
) -> Response:
    """A response whose body is ``content`` validated and serialized by ``model``."""
    return Response(
        dump(model, content),
        status_code=status_code,
        headers=dict(headers) if headers else None,
        media_type=media_type,
    )
