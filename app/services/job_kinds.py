"""The kinds of job and their executors: the same service calls the synchronous routes make.

Each executor validates its request's canonical bytes with the route's request model, runs
the use case and returns the bytes the route would send (``app.services.serialize.dump`` of
the route's response model, or the rank route's own bytes), so a job's answer is the
synchronous answer byte for byte. The job's control goes into the use case, which checks it
between its steps (problems, NIIA subsets, fronts, aggregates' refinements): a cancelled job
stops there, and its progress is reported from there.
"""

from __future__ import annotations

from collections.abc import Mapping

from app.schemas.comparisons import ComparisonRead
from app.schemas.jobs import ComparisonJob
from app.schemas.pareto import ParetoRankingCreate, ParetoRankingRead
from app.schemas.ranks import RankRequest
from app.services import comparisons, pareto
from app.services.jobs import Executor, JobAnswer, JobRun
from app.services.ranks import RankEnv, rank_answer
from app.services.serialize import adapter, dump

COMPARISONS = "comparisons"
PARETO_RANKINGS = "pareto-rankings"
ABSOLUTE_RANKS = "absolute-ranks"


def run_comparison(run: JobRun) -> JobAnswer:
    """``POST /v1/comparisons`` (JSON answer): final once no table is pending."""
    job = ComparisonJob.model_validate_json(run.request)
    env = run.env
    run.control.check(0, 1)
    out, _created = comparisons.create_comparison(
        env.sm,
        env.settings,
        env.dispatcher,
        job.comparison,
        may_queue_builds=run.may_queue_builds,
        view=job.view,
        cache=env.cache,
        ladder_cache=env.ladder_cache,
        control=run.control,
    )
    run.control.check(1, 1)
    ta = adapter(ComparisonRead)  # dump(ComparisonRead, out), keeping the validated model
    read: ComparisonRead = ta.validate_python(out)
    return JobAnswer(ta.dump_json(read, exclude_unset=True), final=read.status == "complete")


def run_pareto_ranking(run: JobRun) -> JobAnswer:
    """``POST /v1/pareto-rankings``."""
    body = ParetoRankingCreate.model_validate_json(run.request)
    run.control.check(0, 1)
    out, _created = pareto.create(run.env.sm, run.env.settings, body, control=run.control)
    run.control.check(1, 1)
    return JobAnswer(dump(ParetoRankingRead, out))


def run_absolute_ranks(run: JobRun) -> JobAnswer:
    """``POST /v1/absolute-ranks``: final unless a table it needs is still building (the
    answer says ``awaiting``)."""
    body = RankRequest.model_validate_json(run.request)
    env = run.env
    rank_env = RankEnv(
        env.sm,
        env.settings,
        env.dispatcher,
        env.cache,
        env.ladder_cache,
        run.may_queue_builds,
        control=run.control,
    )
    run.control.check(0, 1)
    ranked = rank_answer(rank_env, body)
    run.control.check(1, 1)
    envelope = ranked.envelope()  # the route's check of the answer's shape
    return JobAnswer(ranked.json(), final=envelope.awaiting is None)


EXECUTORS: Mapping[str, Executor] = {
    COMPARISONS: run_comparison,
    PARETO_RANKINGS: run_pareto_ranking,
    ABSOLUTE_RANKS: run_absolute_ranks,
}
"""The executor of each kind of job (what ``workers.tasks.run_job`` runs)."""
