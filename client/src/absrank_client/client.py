"""The absrank client: one method per capability of the API, typed results, waits on jobs."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx

from absrank_client import inputs
from absrank_client.archive import ArchiveMethods
from absrank_client.curves import LadderCurve, QuantileList, TableCurve
from absrank_client.errors import (
    ConnectionFailed,
    InvalidInput,
    JobFailed,
    JobTimeout,
    RequestTimedOut,
    TableNotReady,
    problem_from_response,
)
from absrank_client.leaderboards import Leaderboard, SuiteLeaderboard
from absrank_client.models import (
    BradleyTerry,
    Comparison,
    Cpu,
    CpuList,
    CrossMachineComparison,
    EquivalentRuntime,
    Evaluation,
    FriedmanTests,
    FunctionInfo,
    FunctionList,
    Indicators,
    Ladder,
    ParetoRanking,
    Posthoc,
    Progress,
    RankSet,
    RegionScan,
    ServiceWarning,
    Table,
    TableList,
    TestResult,
)
from absrank_client.progress import JobStatus, Poller, ProgressOption

__all__ = ["DEFAULT_URL", "Client"]

DEFAULT_URL = "http://127.0.0.1:8000"
DEFAULT_HTTP_TIMEOUT = 300.0
"""Seconds one HTTP request may take: above the heaviest synchronous request the default limits
allow (a comparison of 200 means over 25 runs takes about a minute on two cores)."""
"""Where ``absrank serve`` listens by default."""

T = TypeVar("T")
_Job = TypeVar("_Job", Table, RegionScan)
JSON = dict[str, Any]


def _body(**fields: Any) -> JSON:
    """A request body without the fields left at None (the server's defaults apply)."""
    return {k: v for k, v in fields.items() if v is not None}


def _floats(xs: Iterable[Any] | None) -> list[float | None] | None:
    return None if xs is None else [inputs._value(x) for x in xs]


@dataclass
class _Polled:
    """What :meth:`Client._wait_resource` knows of a job between polls."""

    job: Table | RegionScan
    retry_after: str | None = None
    fresh: bool = True  # the job as given has not been shown yet: no GET before the first look


class Client(ArchiveMethods):
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

    def __init__(
        self,
        url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_HTTP_TIMEOUT,
        http: httpx.Client | None = None,
        wait_timeout: float = 1800.0,
        poll_interval: float = 0.5,
        poll_max: float = 10.0,
    ) -> None:
        base = url
        if base is None and http is not None and str(http.base_url):
            base = str(http.base_url)
        self.url = (base or os.environ.get("ABSRANK_URL") or DEFAULT_URL).rstrip("/")
        self.api_key = api_key if api_key is not None else os.environ.get("ABSRANK_API_KEY")
        self.timeout = timeout
        self.wait_timeout = wait_timeout
        self.poll_interval = poll_interval
        self.poll_max = poll_max
        self._owns_http = http is None
        self._http = http if http is not None else httpx.Client(timeout=timeout)
        self._view_refused = False

    # ------------------------------------------------------------ plumbing

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def close(self) -> None:
        """Close the HTTP connections (not those of an injected ``http`` client)."""
        if self._owns_http:
            self._http.close()

    def __repr__(self) -> str:
        return f"Client(url={self.url!r})"

    def _url(self, path: str) -> str:
        return path if path.startswith(("http://", "https://")) else self.url + path

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        content: bytes | None = None,
        content_type: str | None = None,
        files: Mapping[str, Any] | None = None,
        data: Mapping[str, Any] | None = None,
    ) -> httpx.Response:
        """Send one request; a non-2xx answer raises its typed :class:`ProblemError`.

        ``content`` (with ``content_type``) is a raw body; ``files`` and ``data`` a
        ``multipart/form-data`` one.
        """
        headers = {"accept": "application/json, application/problem+json, */*"}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        if content_type is not None:
            headers["content-type"] = content_type
        url = self._url(path)
        try:
            response = self._http.request(
                method,
                url,
                json=json,
                params=params,
                headers=headers,
                content=content,
                files=files,
                data=data,
            )
        except (httpx.ReadTimeout, httpx.WriteTimeout) as exc:
            raise RequestTimedOut(self.url, self.timeout) from exc
        except httpx.TransportError as exc:
            raise ConnectionFailed(self.url, str(exc) or type(exc).__name__) from None
        if response.status_code >= 400:
            try:
                body = response.json()
            except ValueError:
                body = None
            raise problem_from_response(
                response.status_code, response.reason_phrase, body, response.headers
            )
        return response

    def _get(self, path: str, params: Mapping[str, Any] | None = None) -> Any:
        return self.request("GET", path, params=_body(**(params or {}))).json()

    def _post(self, path: str, body: Mapping[str, Any]) -> Any:
        return self.request("POST", path, json=body).json()

    def _poller(self, timeout: float | None, progress: ProgressOption, label: str) -> Poller:
        return Poller(
            timeout=self.wait_timeout if timeout is None else timeout,
            initial=self.poll_interval,
            maximum=self.poll_max,
            progress=progress,
            label=label,
        )

    def _wait(
        self,
        fetch: Callable[[], tuple[T, JobStatus | None, str | None]],
        *,
        timeout: float | None,
        progress: ProgressOption,
        label: str,
    ) -> T:
        """Poll ``fetch`` until it reports no status (done): ``(result, status, retry_after)``.

        On :class:`JobTimeout` the last answer received (if any) is its ``last``."""
        last: T | None = None
        with self._poller(timeout, progress, label) as poller:
            while True:
                result, status, retry_after = fetch()
                if status is None:
                    poller.finish()
                    return result
                if result is not None:
                    last = result
                poller.report(status)
                try:
                    poller.wait(retry_after)
                except JobTimeout as exc:
                    if exc.last is None:
                        exc.last = last
                    raise

    def _wait_resource(
        self,
        job: _Job,
        parse: Callable[[Any], _Job],
        *,
        timeout: float | None,
        progress: ProgressOption,
        label: str,
    ) -> _Job:
        """GET a job's ``location`` until its status is ready (JobFailed if it fails)."""
        state = _Polled(job)

        def fetch() -> tuple[_Job, JobStatus | None, str | None]:
            if not state.fresh:
                response = self.request("GET", state.job.location)
                state.job = parse(response.json())
                state.retry_after = response.headers.get("retry-after")
            state.fresh = False
            current = state.job
            if current.ready:
                return current, None, None
            url = self._url(current.location)
            if current.status == "failed":
                raise JobFailed(url, current.failure)
            status = JobStatus(url, current.status, current.progress, current.eta_seconds)
            return current, status, state.retry_after

        return self._wait(fetch, timeout=timeout, progress=progress, label=label)

    # ------------------------------------------------------------ health and functions

    def health(self) -> dict[str, str]:
        """``GET /healthz``: ``{"status": "ok", "version": ...}`` once the API and db are up."""
        return dict(self._get("/healthz"))

    def list_functions(
        self,
        suite: str | None = None,
        dim: int | None = None,
        *,
        limit: int | None = None,
        offset: int | None = None,
    ) -> FunctionList:
        """List hosted functions, filtered by suite and dimension."""
        raw = self._get(
            "/v1/functions", {"suite": suite, "dim": dim, "limit": limit, "offset": offset}
        )
        return FunctionList.parse(raw)

    def get_function(self, function_id: str) -> FunctionInfo:
        """Describe one function: domain, optimum, local structure at x*, source."""
        return FunctionInfo.parse(self._get(f"/v1/functions/{function_id}"))

    def evaluate(
        self, function_id: str, points: Sequence[Sequence[float]], *, seed: int | None = None
    ) -> Evaluation:
        """Evaluate points (shape (n, d)) on a hosted function (noisy ones need ``seed``)."""
        body = _body(points=[[float(x) for x in p] for p in points], seed=seed)
        return Evaluation.parse(self._post(f"/v1/functions/{function_id}/evaluate", body))

    # ------------------------------------------------------------ tables

    def get_table(self, table_id: str) -> Table:
        """Show a table: status, progress (chunks), ETA, spec, quantiles, provenance."""
        return Table.parse(self._get(f"/v1/tables/{self._table_id(table_id)}"))

    def list_tables(
        self,
        function_id: str | None = None,
        status: str | None = None,
        *,
        limit: int | None = None,
        offset: int | None = None,
    ) -> TableList:
        """List tables, newest first (status: building, merging, ready or failed)."""
        params = {"function_id": function_id, "status": status, "limit": limit, "offset": offset}
        return TableList.parse(self._get("/v1/tables", params))

    def create_table(
        self,
        function_id: str,
        *,
        delta: float | Sequence[float] | None = None,
        log2n: int | None = None,
        seed: int | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> Table:
        """Request a table (the whole domain, or the box ``[x* - delta, x* + delta]``).

        Asking twice returns the same table. With ``wait`` (default) the call returns once it
        is ready; :class:`JobTimeout` after ``timeout`` s, :class:`JobFailed` if it fails.
        """
        if delta is not None and not isinstance(delta, int | float):
            delta = [float(d) for d in delta]
        body = _body(function_id=function_id, delta=delta, log2n=log2n, seed=seed)
        table = Table.parse(self._post("/v1/tables", body))
        if not wait:
            return table
        return self.wait_table(table, timeout=timeout, progress=progress)

    def user_table(
        self,
        samples: Sequence[float] | None = None,
        *,
        file: str | os.PathLike[str] | None = None,
        column: str | None = None,
        name: str | None = None,
        f_opt: float | None = None,
        f_max: float | None = None,
        dim: int | None = None,
        sampled_by: str | None = None,
        sampling: str | None = None,
    ) -> Table:
        """A table of your own function from its samples (ready at once, id ``user/…``).

        Give ``samples`` (values of f at uniform points of its domain) or a ``file`` of them
        (one value per line, or the CSV ``column``). ``name``, ``f_opt``, ``f_max``, ``dim``,
        ``sampled_by`` and ``sampling`` are recorded as stated (not verified); a stated
        ``f_opt`` enables the tails that need f*. The same values and statement give the same
        table.
        """
        stated = _body(
            name=name, f_opt=f_opt, f_max=f_max, dim=dim, sampled_by=sampled_by, sampling=sampling
        )
        if (samples is None) == (file is None):
            raise ValueError("give one of samples and file")
        if samples is not None:
            return Table.parse(self._post("/v1/tables", {"samples": _floats(samples)} | stated))
        path = Path(file)  # type: ignore[arg-type]
        params = stated | _body(column=column, filename=path.name)
        response = self.request(
            "POST",
            "/v1/tables/samples",
            params=params,
            content=path.read_bytes(),
            content_type="text/csv" if column is not None else "text/plain",
        )
        return Table.parse(response.json())

    def rank_spread(
        self, v: Sequence[float] | None = None, *, log10_v: Sequence[float | None] | None = None
    ) -> dict[str, Any]:
        """Spread ``e`` of absolute ranks (Jing & Liu Eq. 29): the geometric mean of the gaps
        between the ordered distinct ranks (``v``, or ``log10_v`` with ``None`` for v = 0)."""
        body = _body(v=_floats(v), log10_v=None if log10_v is None else list(log10_v))
        return dict(self._post("/v1/rank-spread", body))

    def wait_table(
        self,
        table: Table | str,
        *,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> Table:
        """Wait until a table (a :class:`Table` or its id) is ready, and return it."""
        job = table if isinstance(table, Table) else self.get_table(table)
        return self._wait_resource(
            job, Table.parse, timeout=timeout, progress=progress, label=f"table {job.id}"
        )

    def create_ladder(
        self,
        function_id: str,
        *,
        log2n: int | None = None,
        seed: int | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> Ladder:
        """Request the ladder of nested regions around x* (SPEC §3.4) and wait for every level."""
        body = _body(function_id=function_id, ladder=True, log2n=log2n, seed=seed)

        def fetch() -> tuple[Ladder, JobStatus | None, str | None]:
            response = self.request("POST", "/v1/tables", json=body)
            ladder = Ladder.parse(response.json())
            if ladder.ready or not wait:
                return ladder, None, None
            if ladder.status == "failed":
                failed = next((lv for lv in ladder.levels if lv.status == "failed"), None)
                raise JobFailed(self._url(failed.location if failed else "/v1/tables"), None)
            where = response.headers.get("location") or "/v1/tables"
            status = JobStatus(self._url(where), ladder.status, ladder.progress, None)
            return ladder, status, response.headers.get("retry-after")

        return self._wait(fetch, timeout=timeout, progress=progress, label=f"ladder {function_id}")

    # ------------------------------------------------------------ absolute ranks

    def ranks(
        self,
        function_id: str | None = None,
        values: Sequence[float] | None = None,
        *,
        table_id: str | None = None,
        sample: Sequence[float] | None = None,
        f_opt: float | None = None,
        f_max: float | None = None,
        runs_by_algorithm: Mapping[str, Sequence[float]] | None = None,
        results: inputs.ResultsInput | None = None,
        budget: int | None = None,
        runs: int | None = None,
        aggregate: str | None = None,
        order: int | None = None,
        values_are: Literal["f", "error"] | None = None,
        tail: str | None = None,
        tail_k: int | None = None,
        confidence: float | None = None,
        regions: Literal["auto", "domain", "nested"] | None = None,
        use_analytic: bool | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> RankSet:
        """Absolute ranks ``v`` of metric values (``POST /v1/absolute-ranks``).

        Give ``values`` (each the best of ``budget`` evaluations, or an ``aggregate`` of
        ``runs`` such runs), or the runs themselves: ``runs_by_algorithm`` ``{name: [values]}``
        or ``results`` in long format (a DataFrame, CSV path or rows ``algorithm, problem, run,
        value`` on one problem, which is the function id unless ``function_id`` is given).
        While the function's table or ladder builds (409 ``table-not-ready``) the call waits.
        ``sample`` (your own function's values at uniform points, with an optional stated
        ``f_opt``/``f_max``) ranks against that sample by Eq. 28 directly.
        With ``regions='auto'`` (the default) values below the domain table's samples queue the
        function's ladder and come back ``provisional`` meanwhile (``RankSet.awaiting``); with
        ``wait`` the call sends the request again until they are final (unless the ladder is
        not built and this caller may not queue it: then the provisional answer is returned).
        """
        if results is not None:
            if runs_by_algorithm is not None or values is not None:
                raise ValueError("give one of values, runs_by_algorithm and results")
            problem, runs_by_algorithm = inputs.runs_by_algorithm(results, function_id)
            function_id = function_id or (None if table_id else problem)
        body = _body(
            function_id=function_id,
            table_id=table_id,
            sample=_floats(sample),
            f_opt=f_opt,
            f_max=f_max,
            values=_floats(values),
            runs_by_algorithm=(
                None
                if runs_by_algorithm is None
                else {str(k): _floats(v) for k, v in runs_by_algorithm.items()}
            ),
            budget=budget,
            runs=runs,
            aggregate=aggregate,
            order=order,
            values_are=values_are,
            tail=tail,
            tail_k=tail_k,
            confidence=confidence,
            regions=regions,
            use_analytic=use_analytic,
        )
        return self._post_waiting_on_tables(
            "/v1/absolute-ranks",
            body,
            RankSet.parse,
            wait=wait,
            timeout=timeout,
            progress=progress,
            label=f"tables of {function_id or table_id or 'the sample'}",
            pending=self._awaited_ladder,
        )

    def _awaited_ladder(self, ranks: RankSet) -> JobStatus | None:
        """While provisional ranks wait for a ladder that is queued or building: its status."""
        awaited = ranks.awaiting
        if not ranks.provisional or awaited is None or awaited.location is None:
            return None  # final, or a ladder nobody queued (the warning says who may)
        table = self.get_table(awaited.location)
        return JobStatus(self._url(awaited.location), "building", table.progress, table.eta_seconds)

    def _post_waiting_on_tables(
        self,
        path: str,
        body: JSON,
        parse: Callable[[Any], T],
        *,
        wait: bool,
        timeout: float | None,
        progress: ProgressOption,
        label: str,
        pending: Callable[[T], JobStatus | None] | None = None,
    ) -> T:
        """POST; while the answer is 409 ``table-not-ready`` (or, with ``pending``, an answer
        that ``pending`` says still waits), wait and send it again."""

        def fetch() -> tuple[Any, JobStatus | None, str | None]:
            try:
                answer = parse(self._post(path, body))
                status = pending(answer) if wait and pending is not None else None
                return answer, status, None
            except TableNotReady as exc:
                if not wait:
                    raise
                where = exc.location or path
                prog = Progress.parse(exc.extra.get("progress") if exc.extra else None)
                eta = None
                if exc.location:  # the table's own view has the server's ETA
                    table = self.get_table(exc.location)
                    prog, eta = table.progress or prog, table.eta_seconds
                status = JobStatus(self._url(where), "building", prog, eta)
                return None, status, (exc.headers or {}).get("retry-after")

        return self._wait(fetch, timeout=timeout, progress=progress, label=label)

    # ------------------------------------------------------------ statistical tests

    def _test(self, name: str, body: JSON) -> Any:
        return self._post(f"/v1/tests/{name}", body)

    def friedman(
        self,
        values: Any,
        algorithms: Sequence[str] | None = None,
        problems: Sequence[str] | None = None,
        *,
        missing: str | None = None,
        par_k: float | None = None,
        rtol: float | None = None,
    ) -> FriedmanTests:
        """Friedman (tie-corrected), Iman–Davenport, aligned ranks and Quade on a matrix.

        ``values``: rows = problems, columns = algorithms (a list of rows or a DataFrame whose
        columns name the algorithms); None/NaN = missing (see ``missing``).
        """
        body = inputs.matrix_payload(values, algorithms, problems) | _body(
            missing=missing, par_k=par_k, rtol=rtol
        )
        return FriedmanTests.parse(self._test("friedman", body))

    def posthoc(
        self,
        values: Any,
        method: str = "nemenyi",
        *,
        algorithms: Sequence[str] | None = None,
        problems: Sequence[str] | None = None,
        alpha: float | None = None,
        control: str | None = None,
        missing: str | None = None,
        par_k: float | None = None,
        rtol: float | None = None,
        cd_convention: str | None = None,
    ) -> Posthoc:
        """Post-hoc comparisons of Friedman ranks (nemenyi, shaffer, holm, ..., or vs control).

        ``cd_convention="jing-liu"``: the CD of Jing & Liu's Table I (z at 1 − α/(2k)).
        """
        body = inputs.matrix_payload(values, algorithms, problems) | _body(
            method=method,
            alpha=alpha,
            control=control,
            missing=missing,
            par_k=par_k,
            rtol=rtol,
            cd_convention=cd_convention,
        )
        raw = self._test("posthoc", body)
        names = (raw.get("policies") or {}).get("algorithms") or body.get("algorithms") or ()
        posthoc = Posthoc.parse(raw.get("result") or {}, names)
        warnings = tuple(ServiceWarning.parse(w) for w in raw.get("warnings") or ())
        return Posthoc(**(posthoc.__dict__ | {"raw": raw, "warnings": warnings}))

    def bradley_terry(
        self,
        values: Any,
        algorithms: Sequence[str] | None = None,
        problems: Sequence[str] | None = None,
        *,
        missing: str | None = None,
        par_k: float | None = None,
        rtol: float | None = None,
    ) -> BradleyTerry:
        """Bradley–Terry strengths from pairwise wins over problems (ties count 1/2)."""
        body = inputs.matrix_payload(values, algorithms, problems) | _body(
            missing=missing, par_k=par_k, rtol=rtol
        )
        raw = self._test("bradley-terry", body)
        names = (raw.get("policies") or {}).get("algorithms") or body.get("algorithms") or ()
        return BradleyTerry.parse((raw.get("result") or {}).get("model") or {}, names, raw)

    def _sample_test(self, name: str, x: Any, y: Any, options: dict[str, Any]) -> TestResult:
        body = _body(x=_floats(x), y=_floats(y), **options)
        return TestResult.parse(self._test(name, body))

    def wilcoxon(
        self,
        x: Sequence[float | None],
        y: Sequence[float | None] | None = None,
        *,
        alternative: str | None = None,
        zero_method: str | None = None,
        zero_tol: float | None = None,
        method: str | None = None,
        missing: str | None = None,
    ) -> TestResult:
        """Wilcoxon signed-rank test of paired values (omit ``y`` to test ``x`` as differences)."""
        options = {"alternative": alternative, "zero_method": zero_method, "zero_tol": zero_tol}
        return self._sample_test("wilcoxon", x, y, options | {"method": method, "missing": missing})

    def sign(
        self,
        x: Sequence[float | None],
        y: Sequence[float | None] | None = None,
        *,
        alternative: str | None = None,
        zero_tol: float | None = None,
        missing: str | None = None,
    ) -> TestResult:
        """Exact sign test of paired values (ties dropped and counted)."""
        options = {"alternative": alternative, "zero_tol": zero_tol, "missing": missing}
        return self._sample_test("sign", x, y, options)

    def rank_sum(
        self,
        x: Sequence[float | None],
        y: Sequence[float | None],
        *,
        alternative: str | None = None,
        method: str | None = None,
        rtol: float | None = None,
        missing: str | None = None,
        convention: str | None = None,
    ) -> TestResult:
        """Wilcoxon rank-sum / Mann–Whitney U test of two samples, with A12."""
        options = {"alternative": alternative, "method": method, "rtol": rtol, "missing": missing}
        if convention is not None:
            options["convention"] = convention
        return self._sample_test("rank-sum", x, y, options)

    def ks(
        self,
        x: Sequence[float | None],
        y: Sequence[float | None],
        *,
        alternative: str | None = None,
        method: str | None = None,
        rtol: float | None = None,
        missing: str | None = None,
        convention: str | None = None,
    ) -> TestResult:
        """Two-sample Kolmogorov–Smirnov test (exact, conditional on ties, when feasible)."""
        options = {"alternative": alternative, "method": method, "rtol": rtol, "missing": missing}
        if convention is not None:
            options["convention"] = convention
        return self._sample_test("ks", x, y, options)

    def permutation(
        self,
        x: Sequence[float | None],
        y: Sequence[float | None],
        *,
        statistic: Literal["median", "mean"] | None = None,
        alternative: str | None = None,
        method: str | None = None,
        n_resamples: int | None = None,
        seed: int | None = None,
        rtol: float | None = None,
        missing: str | None = None,
    ) -> TestResult:
        """Permutation test of the difference of medians (default) or means of two samples."""
        options = {"statistic": statistic, "alternative": alternative, "method": method}
        options |= {"n_resamples": n_resamples, "seed": seed, "rtol": rtol, "missing": missing}
        return self._sample_test("permutation", x, y, options)

    def sign_cross_machine(
        self,
        a: Sequence[float] | None = None,
        b: Sequence[float] | None = None,
        *,
        n: int | None = None,
        k: int | None = None,
        p_gamma: float,
        alpha: float | None = None,
        rtol: float | None = None,
    ) -> TestResult:
        """The one-sided sign test of "B better than A", corrected for ``p_gamma`` (Arza et al.).

        Give A's and B's results per instance (``a``, ``b``), or ``n`` and ``k`` directly.
        ``result['p_value_corrected']`` and ``result['decision']`` hold the conclusion.
        """
        body = _body(a=_floats(a), b=_floats(b), n=n, k=k, p_gamma=p_gamma, alpha=alpha, rtol=rtol)
        return TestResult.parse(self._post("/v1/tests/sign-cross-machine", body))

    # ------------------------------------------------------------ comparisons

    def compare(
        self,
        results: inputs.ResultsInput,
        *,
        reduction: Literal["mean", "median", "best"] | None = None,
        budget: int | None = None,
        values_are: Literal["f", "error"] | None = None,
        value_runs: int | None = None,
        posthoc: str | None = None,
        control: str | None = None,
        alpha: float | None = None,
        cd_convention: str | None = None,
        missing: str | None = None,
        par_k: float | None = None,
        rtol: float | None = None,
        regions: Literal["auto", "domain", "nested"] | None = None,
        absolute: Literal["auto", "off"] | None = None,
        zero_method: str | None = None,
        niia_subsets: Sequence[Sequence[str]] | None = None,
        result_sets: Sequence[str] | None = None,
        tables: Mapping[str, str] | None = None,
        view: Literal["summary", "full"] | None = "summary",
        wait: bool = True,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> Comparison:
        """Compare algorithms over problems: relative and absolute ranks, post-hoc, NIIA report.

        ``results`` in long format: a DataFrame, a CSV path or rows ``algorithm, problem, run,
        value``. While the problems' tables build the comparison is ``partial``; with ``wait``
        (default) the client waits for those tables and sends the request again (it is
        idempotent) until it is complete. ``view="summary"`` (default) leaves out the per-cell
        detail (rank matrix, each cell's v, method and table); ``"full"`` keeps it (what
        ``cmp.raw`` then holds for every cell). Servers without views get it dropped silently.
        ``result_sets``: ids of archived result sets whose runs on these problems join as
        more algorithms. ``tables``: ``{problem: table_id}``, each problem's absolute ranks
        from that (ready) table, e.g. the δ-box table a region scan chose (Jing & Liu Table
        VI); a box's ranks are relative to the box (``cmp.absolute_regions`` says which region
        each problem's ranks are relative to).
        """
        body = inputs.results_payload(results) | _body(
            reduction=reduction,
            budget=budget,
            values_are=values_are,
            value_runs=value_runs,
            posthoc=posthoc,
            control=control,
            alpha=alpha,
            cd_convention=cd_convention,
            missing=missing,
            par_k=par_k,
            rtol=rtol,
            regions=regions,
            absolute=absolute,
            zero_method=zero_method,
            niia_subsets=None if niia_subsets is None else [list(s) for s in niia_subsets],
            result_sets=None if result_sets is None else list(result_sets),
            tables=None if tables is None else {str(p): str(t) for p, t in tables.items()},
        )

        with self._poller(timeout, progress, "comparison: tables") as poller:
            while True:
                comparison = self._send_comparison(body, view)
                if comparison.complete or not wait:
                    poller.finish()
                    return comparison
                # wait for the pending tables themselves (cheap GETs), then send it again
                while True:
                    status, retry_after = self._pending_status(comparison)
                    if status is None:
                        break
                    poller.report(status)
                    poller.wait(retry_after)
                    if status.status == "pending":  # nothing to watch: send it again
                        break

    def _send_comparison(self, body: JSON, view: str | None) -> Comparison:
        if view is not None and not self._view_refused:
            try:
                response = self.request("POST", "/v1/comparisons", json=body, params={"view": view})
                return Comparison.parse(response.json())
            except InvalidInput as exc:
                if exc.field != "view":
                    raise
                self._view_refused = True
        return Comparison.parse(self._post("/v1/comparisons", body))

    def _pending_status(self, comparison: Comparison) -> tuple[JobStatus | None, str | None]:
        """The progress of the tables a partial comparison waits for (None when all ready)."""
        done = total = 0
        eta: float | None = None
        first: str | None = None
        retry_after = None
        for pending in comparison.pending:
            if pending.location is None:
                continue
            response = self.request("GET", pending.location)
            table = Table.parse(response.json())
            if table.status == "failed":
                raise JobFailed(self._url(table.location), table.error)
            if table.progress:
                done, total = done + table.progress.done, total + table.progress.total
            if not table.ready:
                first = first or self._url(table.location)
                retry_after = retry_after or response.headers.get("retry-after")
                if table.eta_seconds is not None:
                    eta = max(eta or 0.0, table.eta_seconds)
        if first is None:
            if not any(p.location for p in comparison.pending):
                # nothing to watch: pause, then send the request again
                return JobStatus(self._url(comparison.location), "pending", None, None), None
            return None, None
        return JobStatus(first, "building", Progress(done, total, done / max(total, 1)), eta), (
            retry_after
        )

    def get_comparison(
        self, comparison_id: str, *, view: Literal["summary", "full"] | None = "summary"
    ) -> Comparison:
        """Show a stored comparison again (``view`` as in :meth:`compare`)."""
        path = f"/v1/comparisons/{comparison_id}"
        if view is not None and not self._view_refused:
            try:
                return Comparison.parse(self._get(path, {"view": view}))
            except InvalidInput as exc:
                if exc.field != "view":
                    raise
                self._view_refused = True
        return Comparison.parse(self._get(path))

    def cd_diagram(
        self,
        comparison: Comparison | str,
        *,
        format: Literal["svg", "png"] = "svg",
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """The critical-difference diagram of a comparison as SVG or PNG bytes.

        With ``path`` the bytes are also written to that file.
        """
        if format not in ("svg", "png"):
            raise ValueError(f"format must be 'svg' or 'png', got {format!r}")
        cid = comparison.id if isinstance(comparison, Comparison) else comparison
        data = self.request("GET", f"/v1/comparisons/{cid}/cd-diagram.{format}").content
        if path is not None:
            Path(path).write_bytes(data)
        return data

    # ------------------------------------------------------------ published curves

    @staticmethod
    def _table_id(table: Table | str) -> str:
        """The table id of a :class:`Table`, an id or a location.

        Ids may contain slashes (user tables are ``user/<hash>``; the server routes them
        as ``{table_id:path}``), so a location keeps everything after ``/v1/tables/``
        rather than only its last path segment."""
        table_id = table.id if isinstance(table, Table) else table
        table_id = table_id.strip().rstrip("/")
        marker = "/v1/tables/"
        if marker in table_id:
            table_id = table_id.split(marker, 1)[1]
        return table_id.lstrip("/")

    @staticmethod
    def _save(data: bytes, path: str | os.PathLike[str] | None) -> bytes:
        if path is not None:
            Path(path).write_bytes(data)
        return data

    @staticmethod
    def _plot_format(format: str) -> str:
        if format not in ("svg", "png"):
            raise ValueError(f"format must be 'svg' or 'png', got {format!r}")
        return format

    def table_curve(self, table: Table | str) -> TableCurve:
        """A ready table's curve: knots with exact counts and the default tail models
        (:meth:`TableCurve.v1` recomputes ``v1(t)`` offline); 409 while it builds."""
        tid = self._table_id(table)
        return TableCurve.parse(self._get(f"/v1/tables/{tid}/curve.json"))

    def table_curve_csv(
        self, table: Table | str, *, path: str | os.PathLike[str] | None = None
    ) -> str:
        """The curve as CSV text (``# key: value`` header lines, then ``value,count``)."""
        tid = self._table_id(table)
        data = self.request("GET", f"/v1/tables/{tid}/curve.csv").content
        return self._save(data, path).decode()

    def table_quantiles(self, table: Table | str, v: Sequence[float] | float) -> QuantileList:
        """``t = q(v) = inf{t : v1(t) >= v}`` of the table's curve at each level ``v`` in (0, 1]."""
        levels = [float(v)] if isinstance(v, int | float) else [float(x) for x in v]
        tid = self._table_id(table)
        answer = self.request("GET", f"/v1/tables/{tid}/quantiles", params={"v": levels})
        return QuantileList.parse(answer.json())

    def table_plot(
        self,
        table: Table | str,
        *,
        format: Literal["svg", "png"] = "svg",
        dpi: int | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """``log10 v1`` against ``t − f*`` as SVG or PNG bytes (also written to ``path``)."""
        fmt = self._plot_format(format)
        params = {"dpi": dpi} if dpi is not None and fmt == "png" else None
        tid = self._table_id(table)
        data = self.request("GET", f"/v1/tables/{tid}/plot.{fmt}", params=params).content
        return self._save(data, path)

    @staticmethod
    def _ladder_params(log2n: int | None, seed: int | None) -> dict[str, Any]:
        return {k: v for k, v in (("log2n", log2n), ("seed", seed)) if v is not None}

    def ladder_curve(
        self, function_id: str, *, log2n: int | None = None, seed: int | None = None
    ) -> LadderCurve:
        """The combined nested-region curve of a ready ladder (pieces, levels; 409 while a
        level builds)."""
        params = self._ladder_params(log2n, seed)
        return LadderCurve.parse(self._get(f"/v1/ladders/{function_id}/curve.json", params))

    def ladder_curve_csv(
        self,
        function_id: str,
        *,
        log2n: int | None = None,
        seed: int | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> str:
        """The ladder's curve as CSV text (``piece,value,count`` rows)."""
        params = self._ladder_params(log2n, seed)
        data = self.request("GET", f"/v1/ladders/{function_id}/curve.csv", params=params).content
        return self._save(data, path).decode()

    def ladder_plot(
        self,
        function_id: str,
        *,
        format: Literal["svg", "png"] = "svg",
        dpi: int | None = None,
        log2n: int | None = None,
        seed: int | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """The ladder's combined ``log10 v1`` plot as SVG or PNG bytes."""
        fmt = self._plot_format(format)
        params = self._ladder_params(log2n, seed)
        if dpi is not None and fmt == "png":
            params["dpi"] = dpi
        data = self.request("GET", f"/v1/ladders/{function_id}/plot.{fmt}", params=params).content
        return self._save(data, path)

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

    # ------------------------------------------------------------ region scans

    def region_scan(
        self,
        function_id: str,
        values: Mapping[str, float] | Iterable[Mapping[str, Any]],
        *,
        deltas: Sequence[float] | Mapping[str, Any] | None = None,
        values_are: Literal["f", "error"] | None = None,
        log2n: int | None = None,
        follow_up_log2n: int | None = None,
        seed: int | None = None,
        budget: int | None = None,
        tail: Literal["auto", "power", "linear", "paper"] | None = None,
        wait: bool = True,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> RegionScan:
        """Scan box half-widths δ and choose the one that spreads the algorithms' ranks best.

        ``values``: ``{algorithm: value}`` or ``{algorithm, value}`` rows; ``deltas``: a list,
        or ``{"min", "max", "count"}`` (geometric). Waits for the scan's tables by default.
        ``tail``: the tail model on every box (server default ``auto``); ``"paper"`` is Eq. 28
        as published, the literal computation of Jing & Liu's Table V.
        """
        vals: Any = (
            {str(k): float(v) for k, v in values.items()}
            if isinstance(values, Mapping)
            else [dict(v) for v in values]
        )
        grid = (
            None
            if deltas is None
            else (dict(deltas) if isinstance(deltas, Mapping) else [float(d) for d in deltas])
        )
        body = _body(
            function_id=function_id,
            values=vals,
            deltas=grid,
            values_are=values_are,
            log2n=log2n,
            follow_up_log2n=follow_up_log2n,
            seed=seed,
            budget=budget,
            tail=tail,
        )
        scan = RegionScan.parse(self._post("/v1/region-scans", body))
        if not wait:
            return scan
        return self.wait_region_scan(scan, timeout=timeout, progress=progress)

    def get_region_scan(self, scan_id: str) -> RegionScan:
        """Show a region scan: progress while it builds, then e per δ and the choice."""
        path = scan_id if scan_id.startswith("/") else f"/v1/region-scans/{scan_id}"
        return RegionScan.parse(self._get(path))

    def wait_region_scan(
        self,
        scan: RegionScan | str,
        *,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> RegionScan:
        """Wait until a region scan (a :class:`RegionScan` or its id) is ready."""
        job = scan if isinstance(scan, RegionScan) else self.get_region_scan(scan)
        return self._wait_resource(
            job, RegionScan.parse, timeout=timeout, progress=progress, label=f"scan {job.id}"
        )

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
        names = (
            functions if functions is None or isinstance(functions, str) else ",".join(functions)
        )
        params = {
            "suite": suite,
            "dim": dim,
            "budget": budget,
            "aggregate": aggregate,
            "posthoc": posthoc,
            "alpha": alpha,
            "instances": instances,
            "functions": names,
        }
        return SuiteLeaderboard.parse(self._get("/v1/leaderboards", params))
