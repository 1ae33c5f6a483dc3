"""Jobs on a real huey consumer (SQLite queue, worker processes): the message runs the job, and
a job whose worker died (its lease expired) runs again when the re-dispatcher sends it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy.orm import Session, sessionmaker

from app.config import Settings
from app.db import make_engine, make_sessionmaker, session_scope
from app.repositories.jobs import JobRepository
from app.schemas.pareto import ParetoRankingCreate, ParetoRankingRead
from app.services import jobs, pareto
from app.services.job_kinds import PARETO_RANKINGS
from app.services.serialize import dump
from tests.support import process_group
from workers.app import make_huey
from workers.tasks import HueyDispatcher

pytestmark = pytest.mark.slow

CONSUMER = [sys.executable, "-c", "from workers.app import run_consumer; run_consumer(1)"]
FIELDS = ("environment", "database_url", "queue_url", "queue_name", "job_lease_seconds")
BODY = ParetoRankingCreate.model_validate(
    {
        "scores": [
            {"problem": "zdt1", "algorithm": alg, "run": r, "indicator": ind, "value": v + r}
            for alg, hv, igd in (("NSGA-II", 0.65, 0.02), ("MOEA/D", 0.60, 0.05))
            for r in range(3)
            for ind, v in (("hv", hv), ("igd", igd))
        ],
        "orientation": {"hv": "max"},
    }
)


class Silent:
    """A dispatcher whose messages are lost."""

    def enqueue_job(self, job_id: str) -> None:
        pass


def _wait(sm: sessionmaker[Session], job_id: str, log: Path) -> jobs.JobStatus:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = jobs.status(sm, job_id)
        if job.status == "done":
            return job
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
    pytest.fail(f"job {job_id} not done: {jobs.status(sm, job_id)}\n{tail}")


def test_a_consumer_runs_jobs_and_runs_again_those_whose_worker_died(
    make_settings: Callable[..., Settings], migrate_db: Callable[[str], None], tmp_path: Path
) -> None:
    settings = make_settings(queue_url=f"sqlite:///{tmp_path / 'queue.db'}", job_lease_seconds=30)
    migrate_db(settings.database_url)
    engine = make_engine(settings.database_url)
    sm = make_sessionmaker(engine)
    queue = make_huey(settings)
    dispatcher = HueyDispatcher(queue)
    env = dict(os.environ) | {f"ABSRANK_{k.upper()}": str(getattr(settings, k)) for k in FIELDS}
    request = jobs.canonical_request(BODY)
    log = tmp_path / "consumer.log"
    try:
        with process_group(CONSUMER, env=env, log=log):
            submitted = jobs.submit(
                sm, dispatcher, PARETO_RANKINGS, request, owner=None, may_queue_builds=False
            )
            assert submitted.queued
            done = _wait(sm, submitted.job.id, log)
            assert done.attempt == 1
            content, final = jobs.answer(sm, done.id)
            assert final
            out, created = pareto.create(sm, settings, BODY)
            assert not created  # the worker stored the ranking, as the route would have
            assert content == dump(ParetoRankingRead, out)

            # another job: stored without a message, claimed by a worker that died 31 s ago
            other = jobs.canonical_request(BODY.model_copy(update={"dominance": "epsilon"}))
            lost = jobs.submit(
                sm, Silent(), PARETO_RANKINGS, other, owner=None, may_queue_builds=False
            )
            start = jobs.status(sm, lost.job.id).created_at - timedelta(seconds=31)
            with session_scope(sm) as session:
                claimed = JobRepository(session).claim(
                    lost.job.id, now=start, lease_until=start + timedelta(seconds=30)
                )
            assert claimed == 1
            assert jobs.redispatch_jobs(sm, settings, dispatcher) == 1
            again = _wait(sm, lost.job.id, log)
            assert again.attempt == 2
    finally:
        queue.storage.close()
        engine.dispose()
