"""All SQL of δ-region scans. No commits here: the caller owns the transaction."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from app.models.region_scans import RegionScan


class RegionScanRepository:
    """Create, read and complete region scans; a ``ready`` scan is never changed."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def get(self, scan_id: str) -> RegionScan | None:
        """The scan with this id, or ``None``."""
        stmt = select(RegionScan).where(RegionScan.id == scan_id)
        return self.session.scalars(stmt).one_or_none()

    def add(
        self,
        *,
        scan_id: str,
        request_sha256: str,
        function_id: str,
        request: dict[str, Any],
        table_ids: list[str],
    ) -> bool:
        """Insert a ``building`` scan; ``False`` when the id exists (a savepoint keeps the
        caller's transaction usable after a concurrent insert of the same request)."""
        now = datetime.now(UTC)
        try:
            with self.session.begin_nested():
                self.session.execute(
                    insert(RegionScan).values(
                        id=scan_id,
                        request_sha256=request_sha256,
                        function_id=function_id,
                        status="building",
                        request=request,
                        table_ids=table_ids,
                        result=None,
                        error=None,
                        created_at=now,
                        updated_at=now,
                    )
                )
        except IntegrityError:
            return False
        return True

    def set_status(self, scan_id: str, status: str, *, error: str | None = None) -> bool:
        """Record ``building`` or ``failed`` (with its error) unless the scan is ready or already
        in that state; returns whether a row changed."""
        if status not in ("building", "failed"):
            raise ValueError(f"set_status records building or failed, not {status!r}")
        done = self.session.execute(
            update(RegionScan)
            .where(
                RegionScan.id == scan_id,
                RegionScan.status != "ready",
                (RegionScan.status != status) | (RegionScan.error.is_distinct_from(error)),
            )
            .values(status=status, error=error, updated_at=datetime.now(UTC))
        )
        return bool(getattr(done, "rowcount", 0))

    def finish(self, scan_id: str, result: dict[str, Any]) -> bool:
        """Store the answer and mark the scan ``ready``, once: ``False`` when it already was
        (the first answer stays, so every reader gets the same bytes)."""
        done = self.session.execute(
            update(RegionScan)
            .where(RegionScan.id == scan_id, RegionScan.status != "ready")
            .values(status="ready", result=result, error=None, updated_at=datetime.now(UTC))
        )
        return bool(getattr(done, "rowcount", 0))
