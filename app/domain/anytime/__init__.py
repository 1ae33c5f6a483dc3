"""Anytime analysis of runs with trajectories: runtimes, ERT, ECDFs, fixed budgets, profiles.

Pure numerics (numpy only); results are frozen dataclasses with read-only arrays. Values are
errors ``f − f*`` and targets precisions ``Δf``. Definitions, sources and the choices made
(ties, continuity, failures): docs/METHODS.md, "Anytime analysis and profiles".

- :mod:`.runtimes`: runtimes to targets, success counts, ERT/aRT (COCO);
- :mod:`.restarts`: simulated restarts bootstrapped from the runs (COCO);
- :mod:`.ecdf`: runtime ECDFs over a target set, and the fixed-budget view;
- :mod:`.profiles`: performance (Dolan & Moré), data (Moré & Wild), accuracy (Beiranvand,
  Hare & Lucet) profiles;
- :mod:`.steps`: the exact step functions they return.
"""

from app.domain.anytime.ecdf import DEFAULT_QUANTILES, FixedBudget, fixed_budget, runtime_ecdf
from app.domain.anytime.profiles import (
    MAX_DIGITS,
    Profile,
    ProfileKind,
    accuracy_profile,
    convergence_costs,
    data_profile,
    performance_profile,
)
from app.domain.anytime.restarts import SimulatedRuntimes, default_samples, simulated_restarts
from app.domain.anytime.runtimes import (
    DEFAULT_TARGETS,
    RuntimeTable,
    expected_running_time,
    first_hits,
    group_runs,
    pooled_id,
    runtime_table,
    runtime_tables,
)
from app.domain.anytime.steps import Continuity, StepFunction

__all__ = [
    "DEFAULT_QUANTILES",
    "DEFAULT_TARGETS",
    "MAX_DIGITS",
    "Continuity",
    "FixedBudget",
    "Profile",
    "ProfileKind",
    "RuntimeTable",
    "SimulatedRuntimes",
    "StepFunction",
    "accuracy_profile",
    "convergence_costs",
    "data_profile",
    "default_samples",
    "expected_running_time",
    "first_hits",
    "fixed_budget",
    "group_runs",
    "performance_profile",
    "pooled_id",
    "runtime_ecdf",
    "runtime_table",
    "runtime_tables",
    "simulated_restarts",
]
