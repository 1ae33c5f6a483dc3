"""HTTP side of the tables for papers: the ``format`` query, the media types, the 406, the answer.

Every route that offers paper tables (comparisons, leaderboards, ``/v1/tests/*``) takes the same
:data:`FormatQuery`, negotiates with :func:`negotiated` (``?format=`` over Accept,
:func:`app.services.paper_tables.negotiate`), documents :data:`TABLE_CONTENT` and
:data:`NOT_ACCEPTABLE`, and answers a built :class:`~app.services.paper_tables.PaperTable` with
:func:`table_response`; so the formats, the headers and the 406 cannot differ between routes.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Query, Request, Response

from app.schemas.common import ProblemExample
from app.services import paper_tables

#: The paper tables' media types in a 200's OpenAPI content (README, "Tables for papers").
TABLE_CONTENT: dict[str, Any] = {
    media: {"schema": {"type": "string"}} for media in paper_tables.MEDIA_TYPES.values()
}

#: The 200 of a route offered as JSON and as paper tables (merge it into ``responses=``).
TABLE_RESPONSE: dict[int | str, dict[str, Any]] = {200: {"content": TABLE_CONTENT}}

FormatQuery = Annotated[
    Literal["json", "csv", "markdown", "latex"] | None,
    Query(
        description="json (default), or a paper table: csv, markdown, latex (booktabs); the "
        "same as Accept: text/csv, text/markdown, application/x-latex, and it wins over Accept "
        "(README, Tables for papers)",
        examples=["latex"],
    ),
]

#: The 406 of a resource offered as JSON and as paper tables.
NOT_ACCEPTABLE = ProblemExample(
    paper_tables.NotAcceptable,
    "Accept 'image/png' lists no media type offered here; offered: application/json, "
    "text/csv, text/markdown, application/x-latex",
    "accept",
)


#: The 406 of an answer that is no table (``POST /v1/tests/sign-cross-machine``: a decision
#: with its caveat), which asks for a table by Accept.
NOT_ACCEPTABLE_JSON_ONLY = ProblemExample(
    paper_tables.NotAcceptable,
    "Accept 'text/csv' lists no media type offered here; offered: application/json",
    "accept",
    description="The Accept header lists no offered type: this answer is offered as JSON only "
    "(a one-sided decision with its caveat is no table for a paper)",
)


def json_only(request: Request) -> None:
    """Check that Accept allows JSON, for an answer offered as JSON only.

    Raises
    ------
    app.services.paper_tables.NotAcceptable
        Accept lists none of ``application/json``, ``application/*``, ``*/*`` (e.g. a table).
    """
    paper_tables.negotiate(request.headers.get("accept"), None, offered=())


def negotiated(request: Request, format: str | None) -> str:
    """``"json"`` or the paper table's format asked for (``format`` wins over Accept).

    Raises
    ------
    app.services.paper_tables.NotAcceptable
        Without ``format``, an Accept header that lists none of the offered media types (406).
    """
    return paper_tables.negotiate(request.headers.get("accept"), format)


def table_response(
    table: paper_tables.PaperTable,
    fmt: str,
    status_code: int = 200,
    headers: dict[str, str] | None = None,
) -> Response:
    """``table`` rendered in ``fmt``, with its media type, provenance header and ``Vary``."""
    return Response(
        paper_tables.render(table, fmt),
        status_code=status_code,
        media_type=paper_tables.MEDIA_TYPES[fmt],
        headers=(headers or {}) | paper_tables.headers(table) | {"Vary": "Accept"},
    )
