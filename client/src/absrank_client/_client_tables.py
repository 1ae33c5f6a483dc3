"""The methods of :class:`absrank_client.Client` on functions and their tables: functions,
tables, ladders, absolute ranks, the published curves and region scans."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from absrank_client import inputs
from absrank_client._client_base import JSON, T, _body, _floats, _Session
from absrank_client.curves import LadderCurve, QuantileList, TableCurve
from absrank_client.errors import JobFailed, TableNotReady
from absrank_client.models import (
    Evaluation,
    FunctionInfo,
    FunctionList,
    Ladder,
    Progress,
    RankSet,
    RegionScan,
    Table,
    TableList,
)
from absrank_client.progress import JobStatus, ProgressOption


class TableMethods(_Session):
    """Functions, tables, ladders, absolute ranks, curves and region scans."""

    # ------------------------------------------------------------ health and functions

    def health(self) -> dict[str, Any]:
        """``GET /healthz``: ``{"status": "ok", "version": ..., "database": {"status": "ok"},
        "queue": {"status": "ok"}}`` once the API, its database and its queue answer (a 503
        names the dependency that is down)."""
        return dict(self._get("/healthz"))

    def live(self) -> dict[str, Any]:
        """``GET /healthz/live``: ``{"status": "ok", "version": ...}`` once the API process
        answers (no database or queue asked: what a liveness probe wants)."""
        return dict(self._get("/healthz/live"))

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

        answer: T = self._wait(fetch, timeout=timeout, progress=progress, label=label)
        return answer

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
        format: Literal["svg", "pdf", "png"] = "svg",
        dpi: int | None = None,
        width: float | None = None,
        height: float | None = None,
        font_size: float | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """``log10 v1`` against ``t − f*`` as SVG, PDF or PNG bytes (also written to ``path``);
        ``width``/``height`` in inches, ``font_size`` in points, ``dpi`` for PNG."""
        fmt = self._plot_format(format)
        params = (
            self._figure_params(fmt, dpi=dpi, width=width, height=height, font_size=font_size)
            or None
        )
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
        format: Literal["svg", "pdf", "png"] = "svg",
        dpi: int | None = None,
        log2n: int | None = None,
        seed: int | None = None,
        width: float | None = None,
        height: float | None = None,
        font_size: float | None = None,
        path: str | os.PathLike[str] | None = None,
    ) -> bytes:
        """The ladder's combined ``log10 v1`` plot as SVG, PDF or PNG bytes (options as
        :meth:`table_plot`)."""
        fmt = self._plot_format(format)
        params = self._ladder_params(log2n, seed) | self._figure_params(
            fmt, dpi=dpi, width=width, height=height, font_size=font_size
        )
        data = self.request("GET", f"/v1/ladders/{function_id}/plot.{fmt}", params=params).content
        return self._save(data, path)

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
