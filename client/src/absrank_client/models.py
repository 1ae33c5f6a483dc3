"""Typed results: frozen dataclasses built from the API's JSON answers.

Every result keeps the answer it was built from in ``raw`` (the parsed JSON, nothing dropped)
and converts to a table: ``rows()`` gives a list of flat dicts, ``to_frame()`` a
``pandas.DataFrame`` of the same rows (needs ``pip install 'absrank-client[pandas]'``).

Pairs, cliques and ranks carry algorithm **names**: where the answer gives indices into its
``algorithms`` list, the names are looked up here (and the server's ``a``/``b`` names are used
when it sends them). Every p-value has its ``log10`` beside it: the server's ``log10_<field>``
when the answer has one, else ``log10(p)`` computed here (``None`` when ``p`` is 0). The
strings ``"Infinity"``/``"-Infinity"`` become ``float('inf')``/``float('-inf')``.

The classes live in private modules by topic, all re-exported here: ``_models_base`` (rows,
warnings, number readers, progress), ``_models_tables`` (functions, tables, ladders, absolute
ranks, region scans), ``_models_stats`` (tests, post-hoc, comparisons), ``_models_machines``
(CPUs, runtimes, cross-machine) and ``_models_fronts`` (multi-objective); the readers of the
compact pairwise families are :mod:`absrank_client.pairs`.
"""

from __future__ import annotations

from absrank_client._models_anytime import (
    AnytimeRank,
    FunctionRuntimes,
    PooledEcdf,
    ProfileCurve,
    Profiles,
    Quantiles,
    RuntimeDistributions,
    Step,
)

# ``X as X``: importable from here as before the split, though not in __all__ (so not in
# the namespace of ``absrank_client``).
from absrank_client._models_base import JSON as JSON
from absrank_client._models_base import Cell as Cell
from absrank_client._models_base import Progress, Row, ServiceWarning
from absrank_client._models_base import log10_of as log10_of
from absrank_client._models_base import num as num
from absrank_client._models_fronts import (
    HvUnderflow,
    Indicators,
    ParetoRanking,
    ReferenceFrontFilter,
)
from absrank_client._models_jobs import Job
from absrank_client._models_machines import (
    Cpu,
    CpuList,
    CrossMachineComparison,
    EquivalentRuntime,
    Runtime,
)
from absrank_client._models_stats import (
    AbsolutePair,
    AlgorithmSummary,
    BradleyTerry,
    Comparison,
    Flip,
    FriedmanTests,
    LowPower,
    OmnibusTest,
    PendingTable,
    Posthoc,
    PosthocPair,
    TestResult,
)
from absrank_client._models_tables import (
    AlgorithmRank,
    AwaitedLadder,
    Evaluation,
    FunctionInfo,
    FunctionList,
    Ladder,
    LadderLevel,
    Rank,
    RankSet,
    RegionScan,
    ScanDelta,
    Table,
    TableList,
)
from absrank_client.pairs import bradley_terry_probabilities as bradley_terry_probabilities
from absrank_client.pairs import pair_columns as pair_columns
from absrank_client.pairs import pair_names as pair_names
from absrank_client.pairs import pair_rows as pair_rows
from absrank_client.pairs import posthoc_matrices as posthoc_matrices

__all__ = [
    "AbsolutePair",
    "AlgorithmRank",
    "AlgorithmSummary",
    "AnytimeRank",
    "AwaitedLadder",
    "BradleyTerry",
    "Comparison",
    "Cpu",
    "CpuList",
    "CrossMachineComparison",
    "EquivalentRuntime",
    "Evaluation",
    "Flip",
    "FriedmanTests",
    "FunctionInfo",
    "FunctionList",
    "FunctionRuntimes",
    "HvUnderflow",
    "Indicators",
    "Job",
    "Ladder",
    "LadderLevel",
    "LowPower",
    "OmnibusTest",
    "ParetoRanking",
    "PendingTable",
    "PooledEcdf",
    "Posthoc",
    "PosthocPair",
    "ProfileCurve",
    "Profiles",
    "Progress",
    "Quantiles",
    "Rank",
    "RankSet",
    "ReferenceFrontFilter",
    "RegionScan",
    "Row",
    "Runtime",
    "RuntimeDistributions",
    "ScanDelta",
    "ServiceWarning",
    "Step",
    "Table",
    "TableList",
    "TestResult",
]
