"""The methods of :class:`absrank_client.Client` for the statistical tests and comparisons."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import httpx

from absrank_client import inputs
from absrank_client._client_base import JSON, TableFormat, _body, _floats
from absrank_client._client_jobs import JobMethods
from absrank_client.errors import InvalidInput, JobFailed
from absrank_client.models import (
    BradleyTerry,
    Comparison,
    FriedmanTests,
    Posthoc,
    Progress,
    ServiceWarning,
    Table,
    TestResult,
)
from absrank_client.progress import JobStatus, ProgressOption

_MATRIX_TESTS = ("friedman", "posthoc", "bradley-terry")
_SAMPLE_TESTS = ("wilcoxon", "sign", "rank-sum", "ks", "permutation")


class StatisticsMethods(JobMethods):
    """The statistical tests and the comparisons of algorithms."""

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

    def test_table(
        self,
        test: str,
        values: Any = None,
        algorithms: Sequence[str] | None = None,
        problems: Sequence[str] | None = None,
        *,
        x: Sequence[float | None] | None = None,
        y: Sequence[float | None] | None = None,
        format: TableFormat = "latex",
        path: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> str:
        """The answer of ``POST /v1/tests/{test}`` as a table for a paper (CSV, Markdown or
        booktabs LaTeX; the server's README, "Tables for papers"), written to ``path`` too.

        ``friedman``, ``posthoc`` and ``bradley-terry`` take ``values`` (rows = problems, as in
        :meth:`friedman`), ``algorithms`` and ``problems``; ``wilcoxon``, ``sign``,
        ``rank-sum``, ``ks`` and ``permutation`` take ``x`` and ``y``. ``options`` are the
        request's other fields (e.g. ``method="holm"``, ``control="DE"``,
        ``alternative="less"``); None leaves the server's default.
        """
        if test in _MATRIX_TESTS:
            body = inputs.matrix_payload(values, algorithms, problems) | _body(**options)
        elif test in _SAMPLE_TESTS:
            body = _body(x=_floats(x), y=_floats(y), **options)
        else:
            known = ", ".join((*_MATRIX_TESTS, *_SAMPLE_TESTS))
            raise ValueError(f"test must be one of {known}, got {test!r}")
        return self._paper_table("POST", f"/v1/tests/{test}", format, path, json=body)

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
        options: dict[str, Any] = {
            "statistic": statistic,
            "alternative": alternative,
            "method": method,
        }
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
        as_job: bool = False,
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
        each problem's ranks are relative to). ``as_job``: the server's workers compute it
        (``Prefer: respond-async``; a job of the server, polled with its progress until done,
        then its stored answer: the same comparison), for requests above the synchronous
        budget.
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
                comparison = self._send_comparison(
                    body, view, as_job=as_job, timeout=timeout, progress=progress
                )
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

    def _send_comparison(
        self,
        body: JSON,
        view: str | None,
        *,
        as_job: bool = False,
        timeout: float | None = None,
        progress: ProgressOption = False,
    ) -> Comparison:
        if as_job:
            return self._viewed(
                view,
                lambda params: self._as_job(
                    "/v1/comparisons", body, params, timeout=timeout, progress=progress
                ),
            )
        return self._viewed(
            view,
            lambda params: self.request("POST", "/v1/comparisons", json=body, params=params),
        )

    def _viewed(
        self, view: str | None, send: Callable[[dict[str, str] | None], httpx.Response]
    ) -> Comparison:
        """The comparison ``send`` answers, asked with ``?view=`` unless this server refused
        the parameter once (servers without views: then asked without it, as from then on)."""
        if view is not None and not self._view_refused:
            try:
                return Comparison.parse(send({"view": view}).json())
            except InvalidInput as exc:
                if exc.field != "view":
                    raise
                self._view_refused = True
        return Comparison.parse(send(None).json())

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
        return self._viewed(view, lambda params: self.request("GET", path, params=params or {}))

    def comparison_table(
        self,
        comparison: Comparison | str,
        *,
        format: TableFormat = "latex",
        path: str | os.PathLike[str] | None = None,
    ) -> str:
        """A comparison as a table for a paper: CSV (RFC 4180, full precision), GitHub
        Markdown, or booktabs LaTeX (best per problem bold, post-hoc marks, log10 v; the
        server's README, "Tables for papers"). With ``path`` the text is also written there."""
        cid = comparison.id if isinstance(comparison, Comparison) else comparison
        return self._paper_table("GET", f"/v1/comparisons/{cid}", format, path)

    def comparison_summary(
        self,
        comparison: Comparison | str,
        *,
        format: Literal["text", "markdown"] = "text",
    ) -> str:
        """The written summary of a comparison (one paragraph: tests and why, significant
        pairs, NIIA flips, what absolute ranks support), as text or Markdown."""
        if format not in ("text", "markdown"):
            raise ValueError(f"format must be text or markdown, got {format!r}")
        cid = comparison.id if isinstance(comparison, Comparison) else comparison
        url = f"/v1/comparisons/{cid}/summary"
        return self.request("GET", url, params={"format": format}).text

    def cd_diagram(
        self,
        comparison: Comparison | str,
        *,
        format: Literal["svg", "pdf", "png"] = "svg",
        dpi: int | None = None,
        width: float | None = None,
        height: float | None = None,
        font_size: float | None = None,
        path: str | os.PathLike[str] | None = None,
        ranks: Literal["relative", "absolute"] = "relative",
    ) -> bytes:
        """The critical-difference diagram of a comparison as SVG, PDF or PNG bytes
        (``width``/``height`` in inches, ``font_size`` in points, ``dpi`` for PNG);
        ``ranks="absolute"``: over mean ``log10 v`` with the Wilcoxon tests' cliques.

        With ``path`` the bytes are also written to that file.
        """
        fmt = self._plot_format(format)
        params = self._figure_params(fmt, dpi=dpi, width=width, height=height, font_size=font_size)
        if ranks != "relative":
            params["ranks"] = ranks
        cid = comparison.id if isinstance(comparison, Comparison) else comparison
        url = f"/v1/comparisons/{cid}/cd-diagram.{fmt}"
        return self._save(self.request("GET", url, params=params or None).content, path)
