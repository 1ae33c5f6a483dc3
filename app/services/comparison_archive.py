"""``result_sets`` of ``POST /v1/comparisons``: archived sets' runs as extra algorithms.

Each named set contributes its runs on the problems of the request's own rows, as one more
algorithm named by its leaderboard label (``name version``; `` [id]`` appended when two sets,
or a set and an algorithm of the request, share it). Runs enter at the comparison's
``budget`` by the leaderboard's budget rules (final values at the final budget, best so far
from trajectories below it) and in the request's ``values_are`` (converted through ``f*``).
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session, sessionmaker

from app import errors
from app.db import session_scope
from app.repositories.result_sets import ResultSetRepository
from app.schemas.comparisons import ComparisonCreate
from app.services.functions import find_function
from app.services.leaderboard_inputs import (
    ArchivedSet,
    Exclusion,
    labels,
    read_archive,
    values_at_budget,
)
from app.services.results_input import Row


def _names(sets: Sequence[ArchivedSet], taken: set[str]) -> dict[str, str]:
    """Leaderboard labels, with the id appended where one clashes with a request algorithm."""
    out = labels(sets)
    return {
        i: f"{t} [{i}]" if t in taken and not t.endswith(f"[{i}]") else t for i, t in out.items()
    }


def _check_published(s: ArchivedSet, body: ComparisonCreate, field: str) -> None:
    """Published reductions join only a comparison of the same reduction of as many runs."""
    if s.value_aggregate is None:
        if body.value_runs is not None:
            raise errors.InvalidInput(
                f"set {s.id} holds runs, but value_runs = {body.value_runs} says every value is "
                f"already a {body.reduction} of runs",
                field=field,
            )
        return
    if body.value_runs != s.value_runs or body.reduction != s.value_aggregate:
        raise errors.InvalidInput(
            f"set {s.id} holds published {s.value_aggregate}s of {s.value_runs} runs: send "
            f"reduction={s.value_aggregate!r} and value_runs={s.value_runs} (and one such value "
            "per cell of your own)",
            field=field,
        )


def _offset(s: ArchivedSet, problem: str, values_are: str, field: str) -> float:
    """What to add to the set's values on ``problem`` to get the request's ``values_are``."""
    if s.values_are == values_are:
        return 0.0
    f_opt = find_function(problem).f_opt
    if f_opt is None:
        raise errors.InvalidInput(
            f"set {s.id} holds {s.values_are} values, the request {values_are} values, and "
            f"{problem} has no known f* to convert them",
            field=field,
        )
    return float(f_opt) if s.values_are == "error" else -float(f_opt)


def archived_rows(
    sm: sessionmaker[Session], body: ComparisonCreate, rows: Sequence[Row]
) -> list[Row]:
    """The rows of ``body.result_sets`` on the problems of ``rows`` — or, when ``rows`` is
    empty (``results: []``, the sets alone), on every function all the sets have runs on.

    Raises
    ------
    app.errors.InvalidInput
        An unknown or repeated id, a set that cannot join this comparison (budget, published
        values, values_are without f*) or that has no run on these problems, sets alone that
        share no function; ``field`` is ``result_sets.<i>`` (``result_sets``).
    """
    ids = list(body.result_sets or [])
    problems: list[str] | None = sorted({r[1] for r in rows}) or None
    with session_scope(sm) as session:
        repo = ResultSetRepository(session)
        archive = read_archive(
            repo, repo.run_columns(set_ids=ids), with_points=True, function_ids=problems
        )
        known = {s.id for s in repo.sets(ids)}
    if problems is None:
        shared = [{p for (p, sid) in archive.runs if sid == s} for s in ids if s in known]
        problems = sorted(set.intersection(*shared)) if shared else []
        if not problems and len(shared) == len(ids):
            raise errors.InvalidInput(
                "the result sets share no function: send results on the problems to compare",
                field="result_sets",
            )
    for i, sid in enumerate(ids):
        if sid not in known:
            raise errors.InvalidInput(
                f"no result set with id {sid[:40]!r}", field=f"result_sets.{i}"
            )
        if sid in ids[:i]:
            raise errors.InvalidInput(f"set {sid} is named twice", field=f"result_sets.{i}")
    names = _names([archive.sets[s] for s in ids if s in archive.sets], {r[0] for r in rows})
    out: list[Row] = []
    for i, sid in enumerate(ids):
        field = f"result_sets.{i}"
        if not any((p, sid) in archive.runs for p in problems):
            raise errors.InvalidInput(
                f"set {sid} has no run on the request's problems", field=field
            )
        s = archive.sets[sid]
        _check_published(s, body, field)
        for problem in problems:
            got = archive.runs.get((problem, sid))
            if not got:
                continue
            picked = values_at_budget(s, problem, got, archive.points, body.budget)
            if isinstance(picked, Exclusion):
                raise errors.InvalidInput(
                    f"set {sid} on {problem}: {picked.detail} (budget is the comparison's)",
                    field=field,
                )
            offset = _offset(s, problem, body.values_are, field)
            out += [
                (names[sid], problem, run, value + offset)
                for run, value in zip(got.runs, picked[1], strict=True)
            ]
    return out
