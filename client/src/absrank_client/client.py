"""The absrank client: one method per capability of the API, typed results, waits on jobs.

:class:`Client` gathers the method groups by topic: ``_client_tables`` (functions, tables,
ladders, absolute ranks, curves, region scans), ``_client_stats`` (tests, comparisons),
:mod:`absrank_client.archive` (result sets), ``_client_anytime`` (runtime distributions,
profiles) and, here, machines, multi-objective and
leaderboards; ``_client_base`` holds the requests and waits they share.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from absrank_client._client_anytime import AnytimeMethods

# ``X as X``: importable from here as before the split, though not in __all__.
from absrank_client._client_base import DEFAULT_HTTP_TIMEOUT as DEFAULT_HTTP_TIMEOUT
from absrank_client._client_base import DEFAULT_URL, JSON, TableFormat, _body
from absrank_client._client_stats import StatisticsMethods
from absrank_client._client_tables import TableMethods
from absrank_client.archive import ArchiveMethods
from absrank_client.leaderboards import Leaderboard, SuiteLeaderboard
from absrank_client.models import (
    Cpu,
    CpuList,
    CrossMachineComparison,
    EquivalentRuntime,
    Indicators,
    ParetoRanking,
)

__all__ = ["DEFAULT_URL", "Client"]


class Client(TableMethods, StatisticsMethods, ArchiveMethods, AnytimeMethods):
    """A client of one absrank server.

    Parameters
    ----------
    url : str, optional
        The server's base URL; default the ``ABSRANK_URL`` environment variable, else
        ``http://127.0.0.1:8000`` (with ``http`` given and no ``url``: its ``base_url``).
    api_key : str, optional
        Sent as ``X-API-Key`` (needed for writes that cost compute when the deployment
        configures keys); default the ``ABSRANK_API_KEY`` environment variable.
    timeout : float
        Seconds one HTTP request may take (default 300); past it :class:`RequestTimedOut`.
    http : httpx.Client, optional
        The HTTP client to use (e.g. FastAPI's ``TestClient``); it is not closed by
        :meth:`close`.
    wait_timeout : float
        Default seconds to wait for a job (table build, ladder, region scan, partial
        comparison) before :class:`~absrank_client.errors.JobTimeout`.
    poll_interval, poll_max : float
        First and longest pause between two polls (backoff factor 1.5; a ``Retry-After``
        header wins).

    Every method raises :class:`~absrank_client.errors.ProblemError` (a subclass per status)
    for a problem answer and :class:`~absrank_client.errors.ConnectionFailed` when the server
    cannot be reached. Methods that may wait take ``wait`` (False: return at once, possibly
    unfinished), ``timeout`` (seconds, default ``wait_timeout``) and ``progress`` (True: a
    progress bar on stderr; or a callable receiving every
    :class:`~absrank_client.progress.JobStatus`).
    """

    # ------------------------------------------------------------ machines

    def search_cpus(self, q: str | None = None, *, limit: int | None = None) -> CpuList:
        """Find registered CPUs by name (fuzzy, best first); all of them without ``q``."""
        return CpuList.parse(self._get("/v1/cpus", {"q": q, "limit": limit}))

    def get_cpu(self, cpu_id: int) -> Cpu:
        """One CPU of the registry."""
        return Cpu.parse(self._get(f"/v1/cpus/{int(cpu_id)}"))

    def register_cpu(self, name: str, score: float, *, source: str, source_date: str) -> Cpu:
        """Register a CPU and its PassMark single-thread score (``source_date``: YYYY[-MM[-DD]])."""
        body = {"name": name, "score": float(score), "source": source, "source_date": source_date}
        return Cpu.parse(self._post("/v1/cpus", body))

    def equivalent_runtime(
        self,
        t1: float | Sequence[float],
        *,
        s1: float | None = None,
        cpu1: str | None = None,
        s2: float | None = None,
        cpu2: str | None = None,
        p_gamma: float | None = None,
    ) -> EquivalentRuntime:
        """Runtimes on machine M1 -> equivalent runtimes on M2 (scores ``s`` or CPU names)."""
        t = float(t1) if isinstance(t1, int | float) else [float(x) for x in t1]
        body = _body(t1=t, s1=s1, cpu1=cpu1, s2=s2, cpu2=cpu2, p_gamma=p_gamma)
        return EquivalentRuntime.parse(self._post("/v1/equivalent-runtime", body))

    def create_cross_machine(
        self,
        published: Iterable[Mapping[str, Any] | Sequence[Any]],
        *,
        s1: float | None = None,
        cpu1: str | None = None,
        s2: float | None = None,
        cpu2: str | None = None,
        p_gamma: float | None = None,
        alpha: float | None = None,
        rtol: float | None = None,
    ) -> CrossMachineComparison:
        """Start a cross-machine comparison from A's published table (``instance, a, t1`` rows):
        the answer's ``runtimes`` give the time ``t2`` to run B for on each instance."""
        rows = [
            dict(r)
            if isinstance(r, Mapping)
            else dict(zip(("instance", "a", "t1"), r, strict=True))
            for r in published
        ]
        body = _body(
            published=rows,
            s1=s1,
            cpu1=cpu1,
            s2=s2,
            cpu2=cpu2,
            p_gamma=p_gamma,
            alpha=alpha,
            rtol=rtol,
        )
        return CrossMachineComparison.parse(self._post("/v1/cross-machine-comparisons", body))

    def get_cross_machine(self, comparison_id: str) -> CrossMachineComparison:
        """Show a cross-machine comparison (and its test once B's results are in)."""
        raw = self._get(f"/v1/cross-machine-comparisons/{comparison_id}")
        return CrossMachineComparison.parse(raw)

    def submit_cross_machine_results(
        self,
        comparison: CrossMachineComparison | str,
        results: Mapping[str, float] | Iterable[Mapping[str, Any] | Sequence[Any]],
    ) -> CrossMachineComparison:
        """Give B's result per instance (``{instance: b}`` or ``instance, b`` rows): the
        corrected sign test is stored with the comparison (results are final)."""
        cid = comparison.id if isinstance(comparison, CrossMachineComparison) else comparison
        if isinstance(results, Mapping):
            rows = [{"instance": str(k), "b": float(v)} for k, v in results.items()]
        else:
            rows = [
                dict(r) if isinstance(r, Mapping) else dict(zip(("instance", "b"), r, strict=True))
                for r in results
            ]
        raw = self._post(f"/v1/cross-machine-comparisons/{cid}/results", {"results": rows})
        return CrossMachineComparison.parse(raw)

    # ------------------------------------------------------------ multi-objective

    def create_pareto_ranking(
        self,
        scores: Any = None,
        *,
        fronts: Iterable[Mapping[str, Any]] | None = None,
        references: Mapping[str, Mapping[str, Any]] | None = None,
        indicators: Sequence[str] | None = None,
        orientation: Mapping[str, Literal["min", "max"]] | None = None,
        dominance: Literal["pareto", "epsilon"] | None = None,
    ) -> ParetoRanking:
        """Pareto-optimal ranking of multi-objective algorithms (Ibrahim et al.).

        ``scores``: rows ``problem, algorithm, run, indicator, value`` (mappings, a DataFrame,
        or a CSV path, sent as ``csv``); or ``fronts`` with per-problem ``references``.
        """
        body: JSON = {}
        if scores is not None:
            if isinstance(scores, str | os.PathLike):
                body["csv"] = Path(scores).read_text(encoding="utf-8")
            elif hasattr(scores, "to_dict"):
                body["scores"] = scores.to_dict(orient="records")
            else:
                body["scores"] = [dict(r) for r in scores]
        body |= _body(
            fronts=None if fronts is None else [dict(f) for f in fronts],
            references=None if references is None else {k: dict(v) for k, v in references.items()},
            indicators=None if indicators is None else list(indicators),
            orientation=None if orientation is None else dict(orientation),
            dominance=dominance,
        )
        return ParetoRanking.parse(self._post("/v1/pareto-rankings", body))

    def get_pareto_ranking(self, ranking_id: str) -> ParetoRanking:
        """Show a stored Pareto ranking."""
        return ParetoRanking.parse(self._get(f"/v1/pareto-rankings/{ranking_id}"))

    def indicators(
        self,
        front: Sequence[Sequence[float]],
        *,
        reference_front: Sequence[Sequence[float]] | None = None,
        reference_point: Sequence[float] | None = None,
        indicators: Sequence[str] | None = None,
        p: float | None = None,
    ) -> Indicators:
        """Quality indicators (HV, IGD, IGD+, GD, GD+, spacing, spread, Δp) of one front."""
        body = _body(
            front=[list(map(float, pt)) for pt in front],
            reference_front=(
                None
                if reference_front is None
                else [list(map(float, pt)) for pt in reference_front]
            ),
            reference_point=None
            if reference_point is None
            else [float(x) for x in reference_point],
            indicators=None if indicators is None else list(indicators),
            p=p,
        )
        return Indicators.parse(self._post("/v1/indicators", body))

    # ------------------------------------------------------------ leaderboards

    def leaderboard(
        self,
        function_id: str,
        budget: int | None = None,
        aggregate: Literal["best", "worst", "median", "lower-median", "mean"] = "median",
        *,
        alpha: float | None = None,
    ) -> Leaderboard:
        """Archived result sets on one function by absolute rank (relative rank and pairs
        beside it). Without ``budget`` each set is ranked at its own final budget."""
        params = {"budget": budget, "aggregate": aggregate, "alpha": alpha}
        return Leaderboard.parse(self._get(f"/v1/leaderboards/{function_id}", params))

    def suite_leaderboard(
        self,
        suite: str,
        dim: int,
        *,
        budget: int | None = None,
        aggregate: Literal["best", "worst", "median", "lower-median", "mean"] = "median",
        posthoc: str | None = None,
        alpha: float | None = None,
        instances: str | None = None,
        functions: str | Sequence[str] | None = None,
    ) -> SuiteLeaderboard:
        """Archived result sets over a suite at one dimension: mean log10 v, coverage, and the
        Friedman family with a post-hoc over the sets that cover every function.

        The board's functions are the suite's registered functions at ``dim``: of
        ``instances`` (e.g. ``"1-5"``; the server's default is instance 1) for suites with
        instances, and only ``functions`` (names as in the ids, e.g. ``["f15", "f16"]``)
        when given."""
        params = _suite_params(suite, dim, budget, aggregate, posthoc, alpha, instances, functions)
        return SuiteLeaderboard.parse(self._get("/v1/leaderboards", params))

    def leaderboard_table(
        self,
        function_id: str,
        budget: int | None = None,
        aggregate: Literal["best", "worst", "median", "lower-median", "mean"] = "median",
        *,
        alpha: float | None = None,
        format: TableFormat = "latex",
        path: str | os.PathLike[str] | None = None,
    ) -> str:
        """A function's leaderboard (as :meth:`leaderboard`) as a table for a paper: a row per
        set in the board's order with its rank, log10 v (best bold, † where its rank-sum test
        against the best-ranked set is significant), aggregate, runs and budget; CSV, Markdown
        or booktabs LaTeX (the server's README, "Tables for papers"), written to ``path`` too."""
        params = {"budget": budget, "aggregate": aggregate, "alpha": alpha}
        url = f"/v1/leaderboards/{function_id}"
        return self._paper_table("GET", url, format, path, params=params)

    def suite_leaderboard_table(
        self,
        suite: str,
        dim: int,
        *,
        budget: int | None = None,
        aggregate: Literal["best", "worst", "median", "lower-median", "mean"] = "median",
        posthoc: str | None = None,
        alpha: float | None = None,
        instances: str | None = None,
        functions: str | Sequence[str] | None = None,
        format: TableFormat = "latex",
        path: str | os.PathLike[str] | None = None,
    ) -> str:
        """A suite leaderboard (as :meth:`suite_leaderboard`) as a table for a paper: a row per
        set with its rank, mean log10 v, Friedman average rank (post-hoc marks) and coverage."""
        params = _suite_params(suite, dim, budget, aggregate, posthoc, alpha, instances, functions)
        return self._paper_table("GET", "/v1/leaderboards", format, path, params=params)


def _suite_params(
    suite: str,
    dim: int,
    budget: int | None,
    aggregate: str,
    posthoc: str | None,
    alpha: float | None,
    instances: str | None,
    functions: str | Sequence[str] | None,
) -> dict[str, Any]:
    """The query of ``GET /v1/leaderboards`` (``functions`` joined by commas)."""
    names = functions if functions is None or isinstance(functions, str) else ",".join(functions)
    return {
        "suite": suite,
        "dim": dim,
        "budget": budget,
        "aggregate": aggregate,
        "posthoc": posthoc,
        "alpha": alpha,
        "instances": instances,
        "functions": names,
    }
