"""What a leaderboard reads: archived sets, their runs grouped per function, the budget rules.

The archive's runs arrive column by column (one indexed query); each set's runs on a function
become one :class:`RunGroup`; :func:`candidate` applies the budget rules and the published-values
rules and returns a :class:`Candidate` to rank, or a typed :class:`Exclusion`.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from app.domain.functions import BenchmarkFunction
from app.domain.results import Trajectory
from app.repositories.result_sets import PointRow, ResultSetRepository, RunColumns
from app.services.ranks import AGGREGATE_VALUE


@dataclass(frozen=True)
class ArchivedSet:
    """What a leaderboard needs of a stored set (read inside the session)."""

    id: str
    name: str
    version: str | None
    values_are: str
    value_aggregate: str | None
    value_runs: int | None
    has_trajectories: bool


@dataclass(frozen=True)
class RunGroup:
    """One set's runs on one function, by run: run numbers, final values, budgets used."""

    runs: tuple[int, ...]
    values: tuple[float, ...]
    budgets: tuple[int, ...]


@dataclass(frozen=True)
class Archive:
    """Sets, runs and trajectory points read for one leaderboard.

    Attributes
    ----------
    sets : dict
        Set id → :class:`ArchivedSet`, every set with a run read.
    superseded : dict
        Set id → id of the set that corrects it.
    runs : dict
        ``(function_id, set_id)`` → :class:`RunGroup`, its runs there.
    points : dict
        ``(function_id, set_id, run)`` → the trajectory points of that run, by evaluations
        (only read when a ``budget`` is asked for).
    """

    sets: dict[str, ArchivedSet]
    superseded: dict[str, str]
    runs: dict[tuple[str, str], RunGroup]
    points: dict[tuple[str, str, int], list[PointRow]]


@dataclass(frozen=True)
class Exclusion:
    """A typed refusal to rank a set (``reason`` is an ``ExclusionReason``)."""

    reason: str
    detail: str


@dataclass(frozen=True)
class Candidate:
    """A set to rank on one function: its values at the budget, in ``f`` units.

    Attributes
    ----------
    set : ArchivedSet
    budget : int
        Budget ``c`` of its rank.
    values : tuple of float
        The runs' values at ``budget`` in the set's own units.
    offset : float
        Added to a value to get ``f`` (``f*`` for errors, else 0).
    runs, aggregate
        ``r`` and the aggregate its rank is of (``value_runs``/``value_aggregate`` for
        published values).
    value : float
        The aggregate in the set's units (computed).
    """

    set: ArchivedSet
    budget: int
    values: tuple[float, ...]
    offset: float
    runs: int
    aggregate: str
    value: float = field(init=False)

    def __post_init__(self) -> None:
        # the aggregate in the set's units, as ``runs_by_algorithm`` computes it
        # ranks.AGGREGATE_VALUE mixes builtins and lambdas: mypy infers builtins.function
        reduce = AGGREGATE_VALUE[self.aggregate]
        value = (
            self.values[0]
            if self.published or len(self.values) == 1
            else float(reduce(list(self.values)))
        )
        object.__setattr__(self, "value", value)

    @property
    def published(self) -> bool:
        """Its values are published reductions, not runs."""
        return self.set.value_aggregate is not None

    @property
    def value_f(self) -> float:
        """The aggregate in ``f`` units, ``value + f*`` for errors (rounded to ``ulp(f*)/2``:
        never ranked for errors, which are ranked as the gaps themselves, see :attr:`sent`)."""
        return self.value + self.offset

    @property
    def errors(self) -> bool:
        """Its values are errors ``f − f*``."""
        return self.set.values_are == "error"

    @property
    def sent(self) -> float:
        """The aggregate as the rank request receives it: the error itself for errors (ranked
        as the gap ``t − f*``, ``values_are='error'``), else the value of ``f``."""
        return self.value if self.errors else self.value_f


# ---------------------------------------------------------------------------------------------
# reading the archive


def read_archive(
    repo: ResultSetRepository,
    cols: RunColumns,
    *,
    with_points: bool,
    function_ids: Sequence[str] | None = None,
) -> Archive:
    """Group the runs ``cols`` (ordered by set, function, run) and read their sets (and,
    ``with_points``, the trajectories of ``function_ids``, or of all)."""
    groups: dict[tuple[str, str], RunGroup] = {}
    n = len(cols.run)
    start = 0
    for i in range(1, n + 1):
        if (
            i == n
            or cols.set_id[i] != cols.set_id[i - 1]
            or cols.function_id[i] != cols.function_id[i - 1]
        ):
            groups[(cols.function_id[start], cols.set_id[start])] = RunGroup(
                cols.run[start:i], cols.value[start:i], cols.budget[start:i]
            )
            start = i
    ids = sorted(set(cols.set_id))
    sets = {
        s.id: ArchivedSet(
            s.id,
            s.name,
            s.version,
            s.values_are,
            s.value_aggregate,
            s.value_runs,
            bool(s.has_trajectories),
        )
        for s in repo.sets(ids)
    }
    points: dict[tuple[str, str, int], list[PointRow]] = defaultdict(list)
    traj = [i for i in ids if sets[i].has_trajectories]
    if with_points and traj:
        only = function_ids[0] if function_ids is not None and len(function_ids) == 1 else None
        wanted = None if function_ids is None else set(function_ids)
        for p in repo.points(set_ids=traj, function_id=only):
            if wanted is None or p.function_id in wanted:
                points[(p.function_id, p.set_id, p.run)].append(p)
    return Archive(sets, repo.superseded_by(ids), groups, dict(points))


def labels(sets: Sequence[ArchivedSet]) -> dict[str, str]:
    """``name version`` per set; with `` [id]`` appended where two sets share it."""
    plain = {s.id: s.name if not s.version else f"{s.name} {s.version}" for s in sets}
    count: dict[str, int] = defaultdict(int)
    for text in plain.values():
        count[text] += 1
    return {i: t if count[t] == 1 else f"{t} [{i}]" for i, t in plain.items()}


# ---------------------------------------------------------------------------------------------
# one set on one function


def values_at_budget(
    s: ArchivedSet,
    function_id: str,
    group: RunGroup,
    points: dict[tuple[str, str, int], list[PointRow]],
    budget: int | None,
) -> tuple[int, tuple[float, ...]] | Exclusion:
    """The budget of a set's rank and its runs' values there (the budget rules, METHODS).

    Without ``budget``: its final budget (the most evaluations a run used) and final values.
    With ``budget``: the final values when it equals the final budget; below it, each run's
    best so far within ``budget`` (:meth:`Trajectory.best_at`) when the set has trajectories
    (a run without points that stopped within ``budget`` keeps its final value).
    """
    final = max(group.budgets)
    if budget is None or budget == final:
        return final, group.values
    if budget > final:
        return Exclusion(
            "budget-above-final", f"budget {budget} exceeds the {final} evaluations it used"
        )
    if not s.has_trajectories:
        return Exclusion(
            "no-trajectories",
            f"budget {budget} is below its final budget {final}, and it stored no trajectories",
        )
    out = []
    for run, value, used in zip(group.runs, group.values, group.budgets, strict=True):
        pts = points.get((function_id, s.id, run))
        best = (
            Trajectory(tuple(p.evaluations for p in pts), tuple(p.best for p in pts)).best_at(
                budget
            )
            if pts
            else (value if used <= budget else None)
        )
        if best is None:
            return Exclusion(
                "no-record-within-budget", f"run {run} has no record within {budget} evaluations"
            )
        out.append(best)
    return budget, tuple(out)


def candidate(
    s: ArchivedSet,
    fn: BenchmarkFunction,
    group: RunGroup,
    points: dict[tuple[str, str, int], list[PointRow]],
    budget: int | None,
    aggregate: str,
) -> Candidate | Exclusion:
    """A set ready to rank on ``fn``, or why not."""
    picked = values_at_budget(s, fn.id, group, points, budget)
    if isinstance(picked, Exclusion):
        return picked
    at, values = picked
    if s.values_are == "error" and fn.f_opt is None:
        return Exclusion(
            "errors-without-f-star", f"{fn.id} has no known f*: errors cannot be ranked"
        )
    offset = float(fn.f_opt) if s.values_are == "error" and fn.f_opt is not None else 0.0
    if s.value_aggregate is not None:
        if len(values) > 1:
            return Exclusion(
                "several-published-values",
                f"{len(values)} published {s.value_aggregate}s on {fn.id}; a published set "
                "holds one reduced value per function",
            )
        r = s.value_runs or 1
        return Candidate(s, at, values, offset, r, s.value_aggregate if r > 1 else "best")
    r = len(values)
    return Candidate(s, at, values, offset, r, aggregate if r > 1 else "best")
