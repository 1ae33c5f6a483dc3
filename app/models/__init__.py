"""SQLAlchemy models; importing this package registers every table on ``app.db.Base.metadata``."""

from app.models.comparisons import COMPARISON_STATUSES, Comparison
from app.models.cpus import Cpu
from app.models.crossmachine import CROSS_MACHINE_STATUSES, CrossMachineComparison
from app.models.jobs import JOB_STATUSES, Job
from app.models.pareto import ParetoRanking
from app.models.region_scans import REGION_SCAN_STATUSES, RegionScan
from app.models.result_sets import ResultRun, ResultSet, TrajectoryPoint
from app.models.tables import CHUNK_STATUSES, TABLE_STATUSES, Table, TableChunk

__all__ = [
    "CHUNK_STATUSES",
    "COMPARISON_STATUSES",
    "CROSS_MACHINE_STATUSES",
    "JOB_STATUSES",
    "REGION_SCAN_STATUSES",
    "TABLE_STATUSES",
    "Comparison",
    "Cpu",
    "CrossMachineComparison",
    "Job",
    "ParetoRanking",
    "RegionScan",
    "ResultRun",
    "ResultSet",
    "Table",
    "TableChunk",
    "TrajectoryPoint",
]
