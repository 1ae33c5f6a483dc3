"""Repositories: all SQL lives here; they flush but never commit."""

from app.repositories.comparisons import ComparisonRepository
from app.repositories.cpus import CpuRepository, cpu_key
from app.repositories.crossmachine import CrossMachineRepository
from app.repositories.tables import ChunkBlobs, ChunkKey, ChunkProgress, TableRepository, as_utc

__all__ = [
    "ChunkBlobs",
    "ChunkKey",
    "ChunkProgress",
    "ComparisonRepository",
    "CpuRepository",
    "CrossMachineRepository",
    "TableRepository",
    "as_utc",
    "cpu_key",
]
