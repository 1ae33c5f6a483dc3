"""Result sets stored straight through the repository (tests that need an archive)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime

from sqlalchemy.orm import Session, sessionmaker

from app.db import session_scope
from app.domain.functions import get_function
from app.models.result_sets import ResultSet
from app.repositories.result_sets import NewRun, PointRow, ResultSetRepository


def store_set(
    sm: sessionmaker[Session],
    name: str,
    runs: Mapping[str, Sequence[float]],
    *,
    version: str | None = None,
    budget: int | Mapping[str, int] = 1000,
    values_are: str = "f",
    value_aggregate: str | None = None,
    value_runs: int | None = None,
    supersedes: str | None = None,
    trajectories: Mapping[str, Sequence[Sequence[tuple[int, float]]]] | None = None,
) -> str:
    """Store one set (``runs``: function id → the runs' final values); return its id."""
    content = {
        "name": name,
        "version": version,
        "runs": {k: list(v) for k, v in runs.items()},
        "budget": budget if isinstance(budget, int) else dict(budget),
        "values_are": values_are,
        "value_aggregate": value_aggregate,
        "value_runs": value_runs,
        "supersedes": supersedes,
        "trajectories": None
        if trajectories is None
        else {k: [list(map(list, t)) for t in v] for k, v in trajectories.items()},
    }
    sha = hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()
    set_id = "r" + sha[:23]
    new_runs = []
    points = []
    for fid, values in runs.items():
        fn = get_function(fid)
        b = budget if isinstance(budget, int) else budget[fid]
        for i, value in enumerate(values):
            new_runs.append(NewRun(set_id, fid, i, fn.suite, fn.dim, float(value), b))
        for i, traj in enumerate((trajectories or {}).get(fid, [])):
            points += [PointRow(set_id, fid, i, int(e), float(v)) for e, v in traj]
    row = ResultSet(
        id=set_id,
        content_sha256=sha,
        name=name,
        version=version,
        description=None,
        reference=None,
        contact=None,
        cpu_id=None,
        cpu_score=None,
        values_are=values_are,
        value_aggregate=value_aggregate,
        value_runs=value_runs,
        supersedes=supersedes,
        source_format="json",
        suites=sorted({get_function(f).suite for f in runs}),
        n_functions=len(runs),
        n_runs=len(new_runs),
        has_trajectories=trajectories is not None,
        notes=[],
        provenance={},
        created_at=datetime.now(UTC),
    )
    with session_scope(sm) as session:
        ResultSetRepository(session).add(row, new_runs, points)
    return set_id
