"""Annotated dependencies shared by the routers."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends, Header, Request
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings, get_settings
from app.errors import Unauthorized

SettingsDep = Annotated[Settings, Depends(get_settings)]


def get_sessionmaker(request: Request) -> sessionmaker[Session]:
    """The sessionmaker opened by the application's lifespan."""
    sm: sessionmaker[Session] = request.app.state.sessionmaker
    return sm


def get_dispatcher(request: Request) -> Any:
    """The task dispatcher (huey in production, inline in tests)."""
    return request.app.state.dispatcher


SessionmakerDep = Annotated[sessionmaker[Session], Depends(get_sessionmaker)]
DispatcherDep = Annotated[Any, Depends(get_dispatcher)]


def require_api_key(
    settings: SettingsDep,
    x_api_key: Annotated[
        str | None, Header(description="needed when the deployment sets keys")
    ] = None,
) -> None:
    """Refuse compute-costly writes without a valid key when the deployment configures keys."""
    if settings.api_keys and x_api_key not in settings.api_keys:
        raise Unauthorized(field="X-API-Key")


ApiKeyDep = Depends(require_api_key)
