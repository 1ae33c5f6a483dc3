"""Annotated dependencies shared by the routers.

A dependency that does no I/O is an ``async def``: FastAPI runs it on the event loop, where a
plain ``def`` costs a hop to the thread pool and back on every request (a few of them were
most of the fixed cost of a small ``POST /v1/absolute-ranks``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Path, Query, Request
from sqlalchemy.orm import Session, sessionmaker

from app.api.keys import Identity, access_of
from app.config import Settings, WriteKind
from app.errors import NotFound, UnsupportedMediaType
from app.schemas.common import JSON_MEDIA_TYPES
from app.services.ranks import RankEnv
from app.services.table_cache import LadderCaches, TableCaches


async def get_app_settings(request: Request) -> Settings:
    """The application's settings (``create_app`` keeps them in ``app.state.settings``).

    Not an entry of ``app.dependency_overrides``: while that dict is not empty FastAPI
    rebuilds the dependency graph of every route on every request (``get_dependant`` per
    sub-dependency, with ``inspect.signature`` and a ``TypeAdapter``: ~5 ms of CPU a request).
    """
    settings: Settings = request.app.state.settings
    return settings


SettingsDep = Annotated[Settings, Depends(get_app_settings)]


async def get_sessionmaker(request: Request) -> sessionmaker[Session]:
    """The sessionmaker opened by the application's lifespan."""
    sm: sessionmaker[Session] = request.app.state.sessionmaker
    return sm


async def get_dispatcher(request: Request) -> Any:
    """The task dispatcher (huey in production, inline in tests)."""
    return request.app.state.dispatcher


async def get_table_caches(request: Request) -> TableCaches:
    """The application's table caches (ready tables, missing ids, derived answers), made by
    its lifespan."""
    caches: TableCaches = request.app.state.table_caches
    return caches


async def get_ladder_caches(request: Request) -> LadderCaches:
    """The application's ladder caches (plans and table ids), made by its lifespan."""
    caches: LadderCaches = request.app.state.ladder_caches
    return caches


SessionmakerDep = Annotated[sessionmaker[Session], Depends(get_sessionmaker)]
DispatcherDep = Annotated[Any, Depends(get_dispatcher)]
TableCachesDep = Annotated[TableCaches, Depends(get_table_caches)]
LadderCachesDep = Annotated[LadderCaches, Depends(get_ladder_caches)]

MAX_TABLE_ID_LENGTH = 64


async def table_id_path(
    table_id: Annotated[
        str,
        Path(
            description="a table id (t + 23 hex digits), as in the Location of POST /v1/tables",
            examples=["t3f1c0d9a8b7e6f5a4b3c2d1"],
        ),
    ],
) -> str:
    """The table id of a path; an over-long one is unknown (404) and not echoed in full."""
    if len(table_id) > MAX_TABLE_ID_LENGTH:
        raise NotFound(
            f"no table with id {table_id[:30]!r}... ({len(table_id)} characters)", field="table_id"
        )
    return table_id


TableIdPath = Annotated[str, Depends(table_id_path)]


def stored_id_path(name: str, description: str, example: str) -> Any:
    """An ``Annotated`` path parameter ``{name}`` for the id of a stored resource.

    An over-long id is unknown (404 naming ``name``) and is not echoed in full.
    """

    async def check(value: str) -> str:
        if len(value) > MAX_TABLE_ID_LENGTH:
            raise NotFound(f"no such id {value[:30]!r}... ({len(value)} characters)", field=name)
        return value

    # real objects, not strings: this module's annotations are postponed (PEP 563), and the
    # parameter's metadata is only known here
    check.__annotations__ = {
        "value": Annotated[str, Path(alias=name, description=description, examples=[example])],
        "return": str,
    }
    return Annotated[str, Depends(check)]


MAX_OFFSET = 10**9
OffsetQuery = Annotated[
    int, Query(ge=0, le=MAX_OFFSET, description="items to skip (paging)", examples=[0])
]

ApiKeyHeader = Annotated[
    str | None,
    Header(
        description="an API key of the deployment (needed for writes that cost compute when "
        "the deployment configures keys)",
        examples=["s3cret"],
    ),
]


def _identity(request: Request) -> Identity:
    # late import: app.api.quotas imports the problem rendering, which imports nothing of ours
    from app.api.quotas import identity_of

    return identity_of(request)


def may_queue_builds_for(settings: Settings, x_api_key: str | None) -> bool:
    """:func:`may_queue_builds` outside a route's dependencies (the web page's form)."""
    access = access_of(settings)
    return access.may_queue_builds(access.identify(x_api_key, "", None))


def may_write_for(settings: Settings, x_api_key: str | None, write: WriteKind) -> bool:
    """Whether ``write_policy`` allows ``write`` with this key, outside a route's dependencies
    (the web page's forms); a wrong key is a 401."""
    access = access_of(settings)
    need = getattr(access.policy, write)
    return access.may(access.identify(x_api_key, "", None), need)


async def may_queue_builds(request: Request, x_api_key: ApiKeyHeader = None) -> bool:
    """Whether this request may queue table builds: no keys configured, or a valid key whose
    role ``write_policy.tables`` allows (``submit`` by default).

    An anonymous request (or a lesser key) is allowed, but only uses what exists; a wrong key
    is a 401. ``x_api_key`` documents the header (the identity has read it).
    """
    return access_of(request.app.state.settings).may_queue_builds(_identity(request))


def requires(write: WriteKind) -> Any:
    """A route dependency refusing ``write`` unless ``Settings.write_policy`` allows it to
    the request's key (401 without a key, 403 for a lesser role, 401 for a wrong key);
    without configured keys every write is open. No I/O: runs on the event loop."""

    async def check(request: Request, x_api_key: ApiKeyHeader = None) -> None:
        access_of(request.app.state.settings).authorize(_identity(request), write)

    check.__name__ = f"requires_{write}"
    return Depends(check)


ApiKeyDep = requires("tables")
"""The policy of the writes that queue table builds (``write_policy.tables``)."""
MayQueueBuildsDep = Annotated[bool, Depends(may_queue_builds)]


class ContentTypes:
    """Refuse a request body whose media type is not one of ``accepted`` (415 problem).

    Patterns are ``type/subtype`` or ``type/*+suffix`` (``application/*+json`` accepts
    ``application/merge-patch+json``). Parameters such as ``charset`` are ignored. Use one
    instance per set of types, as a route dependency::

        @router.post("", dependencies=[Depends(ContentTypes("application/json", "text/csv"))])
    """

    def __init__(self, *accepted: str) -> None:
        self.accepted = tuple(a.lower() for a in accepted)

    async def __call__(self, request: Request) -> None:
        self.check(request)

    def check(self, request: Request) -> None:
        """Raise :class:`UnsupportedMediaType` unless the body's media type is accepted."""
        raw = request.headers.get("content-type", "")
        media_type = raw.split(";", 1)[0].strip().lower()
        if not any(_matches(media_type, pattern) for pattern in self.accepted):
            shown = repr(media_type[:80]) if media_type else "none"
            raise UnsupportedMediaType(
                f"Content-Type {shown} is not accepted here; send {' or '.join(self.accepted)}",
                field="content-type",
                headers={"Accept": ", ".join(self.accepted)},
            )


def _matches(media_type: str, pattern: str) -> bool:
    kind, _, subtype = media_type.partition("/")
    p_kind, _, p_subtype = pattern.partition("/")
    if kind != p_kind or not subtype:
        return False
    if p_subtype.startswith("*+"):
        return subtype.endswith(p_subtype[1:]) and len(subtype) > len(p_subtype) - 1
    return subtype == p_subtype


JSON_TYPES = JSON_MEDIA_TYPES
JSON_BODY = ContentTypes(*JSON_TYPES)
JsonBody = Depends(JSON_BODY)
"""Route dependency of every endpoint that reads a JSON body."""


async def rank_env(request: Request, x_api_key: ApiKeyHeader = None) -> RankEnv:
    """The application's state for a rank request, and whether it may queue table builds
    (:func:`may_queue_builds`: a wrong key is a 401), as one dependency (FastAPI solves each
    dependency separately: one instead of six is ~a third of a small request's framework
    cost). It is also the route's :data:`JsonBody` check (415 first, as the route dependency
    it replaces answered before any parameter's dependency), to save one more dependency."""
    JSON_BODY.check(request)
    return app_rank_env(request, await may_queue_builds(request))


def app_rank_env(request: Request, may_queue_builds: bool) -> RankEnv:
    """The application's :class:`RankEnv` (its database, settings, dispatcher and caches)."""
    state = request.app.state
    return RankEnv(
        state.sessionmaker,
        state.settings,
        state.dispatcher,
        state.table_caches,
        state.ladder_caches,
        may_queue_builds,
    )


RankEnvDep = Annotated[RankEnv, Depends(rank_env)]
"""The JSON body check and the rank environment (a route using it needs no :data:`JsonBody`)."""
