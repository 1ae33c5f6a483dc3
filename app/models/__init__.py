"""SQLAlchemy models; importing this package registers every table on ``app.db.Base.metadata``."""

from app.models.tables import CHUNK_STATUSES, TABLE_STATUSES, Table, TableChunk

__all__ = ["CHUNK_STATUSES", "TABLE_STATUSES", "Table", "TableChunk"]
