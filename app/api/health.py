"""Liveness."""

from __future__ import annotations

from fastapi import APIRouter

from app.api.deps import SessionmakerDep
from app.services.health import health

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="Check that the API and its database answer")
def healthz(sm: SessionmakerDep) -> dict[str, str]:
    """Report that the API is up and its database answers."""
    return health(sm)
