"""Shared response pieces."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_SCHEMA_REF = "#/components/schemas/Problem"

#: What each problem status means on this API (the OpenAPI response descriptions).
PROBLEM_DESCRIPTIONS: dict[int, str] = {
    401: "A valid X-API-Key header is required (the deployment configures keys)",
    404: "Unknown id (function, table or comparison)",
    405: "Method not allowed (see the Allow header)",
    409: "A table is not ready, or the method asked for does not apply to this data (e.g. an "
    "exact test out of reach)",
    413: "The request body exceeds max_request_bytes",
    415: "The request body is not JSON (send Content-Type: application/json)",
    422: "Invalid payload or parameter; `field` names it",
}


class Problem(BaseModel):
    """RFC 9457 problem details (``application/problem+json``)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "type": "https://absrank.dev/problems/invalid-input",
                    "title": "Invalid input",
                    "status": 422,
                    "detail": "values.0: Input should be a finite number",
                    "instance": "/v1/absolute-ranks",
                    "field": "values.0",
                }
            ]
        }
    )
    type: str = Field(examples=["https://absrank.dev/problems/not-found"])
    title: str
    status: int
    detail: str
    instance: str
    field: str | None = Field(None, description="the offending request field, when there is one")
    errors: list[dict[str, Any]] | None = Field(
        None, description="every validation error (422): field, message, type"
    )


def problem_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries: a :class:`Problem` as ``application/problem+json``.

    The ``Problem`` component itself is registered by ``app.api.openapi``.
    """
    return {
        code: {
            "description": PROBLEM_DESCRIPTIONS.get(code, "Problem"),
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": PROBLEM_SCHEMA_REF}}},
        }
        for code in codes
    }


#: Problems every endpoint with a JSON request body can answer.
BODY_PROBLEMS = (413, 415, 422)

FiniteFloat = Annotated[float, Field(allow_inf_nan=False)]
"""A float that rejects NaN and ±inf with a 422 naming the field."""

STRICT_REQUEST = ConfigDict(extra="forbid", strict=True)
"""Request models: unknown fields and lax coercions (``"5"`` or ``true`` for a number) are 422.

JSON integers are still accepted where a float is expected."""

MAX_FUNCTION_ID_LENGTH = 200
FunctionId = Annotated[
    str,
    Field(
        min_length=1,
        max_length=MAX_FUNCTION_ID_LENGTH,
        description="a hosted function: classic/{name}/d{dim} or bbob/f{1..24}/i{instance}/d{dim}",
        examples=["bbob/f15/i1/d10"],
    ),
]
"""A function id in a request body (the registry checks the grammar; 404 if unknown)."""


def field_error(field: str, message: str) -> ValidationError:
    """A validation error located at ``field``, for model validators (whose own errors have no
    location, so FastAPI would report them as ``body``)."""
    return ValidationError.from_exception_data(
        "Request",
        [
            InitErrorDetails(
                type=PydanticCustomError("cross_field", message), loc=(field,), input=None
            )
        ],
    )
