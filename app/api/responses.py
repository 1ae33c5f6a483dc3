"""Answers that pass through their declared response model at run time.

Endpoints that build their answer as plain JSON types (the services' shape) return
``model_response(Model, out)``: the answer is validated by the model's cached
:class:`pydantic.TypeAdapter` and serialized by it, so the OpenAPI schema describes exactly what
is sent. Keys the service leaves out stay out (``exclude_unset``), so an optional field is either
present with its value or absent, as the schema says.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from fastapi import Response
from pydantic import TypeAdapter

JSON = "application/json"


@cache
def adapter(model: Any) -> TypeAdapter[Any]:
    """The TypeAdapter of a response model, built once per model (a model is a type)."""
    return TypeAdapter(model)


def dump(model: Any, content: object) -> bytes:
    """``content`` validated by ``model`` and serialized as JSON bytes."""
    ta = adapter(model)
    return ta.dump_json(ta.validate_python(content), exclude_unset=True)


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
