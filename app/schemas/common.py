"""Shared response pieces."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from pydantic_core import InitErrorDetails, PydanticCustomError

from app.config import Settings
from app.errors import (
    AppError,
    InvalidInput,
    NotFound,
    PayloadTooLarge,
    Unauthorized,
    UnsupportedMediaType,
)

PROBLEM_MEDIA_TYPE = "application/problem+json"
PROBLEM_SCHEMA_REF = "#/components/schemas/Problem"
#: Prefix of every problem ``type`` (``app.api.problems`` renders it).
PROBLEM_BASE = "https://absrank.dev/problems/"
#: ``Settings.max_request_bytes`` by default (the 413 examples quote it).
DEFAULT_MAX_REQUEST_BYTES: int = Settings.model_fields["max_request_bytes"].default


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


#: What each problem status means on this API (the response description when an operation's
#: example does not give its own).
PROBLEM_DESCRIPTIONS: dict[int, str] = {
    401: "A valid X-API-Key header is required (the deployment configures keys)",
    404: "Unknown id",
    409: "The request is valid but cannot be answered now, or by the method asked for",
    413: "The request body exceeds max_request_bytes",
    422: "Invalid payload or parameter; `field` names it",
}


@dataclass(frozen=True)
class ProblemExample:
    """One documented error of one operation: the problem the API answers.

    ``instance`` is the request path; by default ``app.api.openapi`` fills it in from the
    operation's path with its parameters' examples. ``errors`` lists the (field, message, type)
    of a 422 that request validation answers (``None`` for a refusal by the service);
    ``extra`` the members an error adds (e.g. the ``table_request`` of a table not built).
    """

    error: type[AppError]
    detail: str
    field: str | None = None
    description: str | None = None
    instance: str | None = None
    errors: tuple[tuple[str, str, str], ...] | None = None
    extra: tuple[tuple[str, object], ...] = ()

    @property
    def status(self) -> int:
        """The HTTP status (the error class's)."""
        return self.error.status

    def body(self, instance: str) -> dict[str, Any]:
        """The problem+json body, as ``app.api.problems`` renders it, at ``instance``."""
        out: dict[str, Any] = {
            "type": PROBLEM_BASE + self.error.type,
            "title": self.error.title,
            "status": self.error.status,
            "detail": self.detail,
            "instance": self.instance or instance,
        }
        if self.field is not None:
            out["field"] = self.field
        out.update(self.extra)
        if self.errors is not None:
            out["errors"] = [{"field": f, "message": m, "type": t} for f, m, t in self.errors]
        return out


def invalid(
    field: str, message: str, kind: str, *, description: str | None = None
) -> ProblemExample:
    """A 422 of request validation: ``detail`` is ``"{field}: {message}"``, ``errors`` holds it."""
    return ProblemExample(
        InvalidInput,
        f"{field}: {message}",
        field,
        description=description,
        errors=((field, message, kind),),
    )


def refused(
    error: type[AppError], detail: str, field: str | None, *, description: str | None = None
) -> ProblemExample:
    """An error the service raises (422 after validation, 404, 409, 401): ``detail`` as sent."""
    return ProblemExample(error, detail, field, description=description)


def unknown_function(function_id: str = "bbob/f25/i1/d10") -> ProblemExample:
    """The 404 of an operation that names a function (the registry's answer for ``bbob/f25``)."""
    return refused(
        NotFound,
        f"no function {function_id!r}; bbob ids read bbob/f{{1..24}}/i{{instance}}/d{{dim}} "
        "with name in " + ", ".join(f"f{i}" for i in range(1, 25)),
        "function_id",
        description="Unknown function id (the detail says which ids exist)",
    )


def unknown_id(field: str, what: str, example_id: str) -> ProblemExample:
    """The 404 of an operation on a stored resource whose id is not known."""
    return refused(
        NotFound, f"no {what} with id {example_id!r}", field, description=f"Unknown {what} id"
    )


#: The 422 of a list operation asked for an empty page.
LIMIT_TOO_SMALL = invalid(
    "limit", "Input should be greater than or equal to 1", "greater_than_equal"
)

#: The 401 of a compute-costly write when the deployment configures keys and none is sent.
KEY_REQUIRED = refused(Unauthorized, Unauthorized.__doc__ or "", "X-API-Key")
#: The 401 of an operation that anyone may call but refuses a wrong key.
WRONG_KEY = refused(
    Unauthorized,
    "the X-API-Key header holds no valid key",
    "X-API-Key",
    description="The X-API-Key header holds no valid key (send none to use what exists)",
)


#: The 413 of every endpoint with a body (``max_request_bytes`` at its default).
TOO_LARGE = ProblemExample(
    PayloadTooLarge,
    f"request body exceeds max_request_bytes = {DEFAULT_MAX_REQUEST_BYTES}",
    "body",
)


def not_accepted(*accepted: str) -> ProblemExample:
    """The 415 of an endpoint that reads ``accepted`` media types (``ContentTypes`` in deps)."""
    return ProblemExample(
        UnsupportedMediaType,
        f"Content-Type 'text/plain' is not accepted here; send {' or '.join(accepted)}",
        "content-type",
        description=f"The request body's Content-Type is not {' or '.join(accepted)}",
    )


JSON_MEDIA_TYPES = ("application/json", "application/*+json")
NOT_JSON = not_accepted(*JSON_MEDIA_TYPES)


def body_problems(invalid_body: ProblemExample) -> tuple[ProblemExample, ...]:
    """The problems of an endpoint with a JSON body: 413, 415 and its own 422."""
    return (TOO_LARGE, NOT_JSON, invalid_body)


def problem_responses(*examples: ProblemExample) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses=`` entries: a :class:`Problem` as ``application/problem+json``.

    One example per status: the operation's own error. The ``Problem`` component itself is
    registered by ``app.api.openapi``, which also fills in each example's ``instance``.
    """
    statuses = [e.status for e in examples]
    if len(set(statuses)) != len(statuses):
        raise ValueError(f"one example per status, got statuses {statuses}")
    return {
        e.status: {
            "description": e.description or PROBLEM_DESCRIPTIONS.get(e.status, e.error.title),
            "content": {
                PROBLEM_MEDIA_TYPE: {
                    "schema": {"$ref": PROBLEM_SCHEMA_REF},
                    "example": e.body(instance=""),
                }
            },
        }
        for e in examples
    }


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
