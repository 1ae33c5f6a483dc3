"""The plumbing of :class:`absrank_client.Client`: requests, problem answers, waits on jobs.

``_Session`` is the base of the client's method groups (``_client_tables``,
``_client_stats``, and :mod:`absrank_client.client` itself)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Literal, Self, TypeVar

import httpx

from absrank_client import inputs
from absrank_client.errors import (
    ConnectionFailed,
    JobFailed,
    JobTimeout,
    RequestTimedOut,
    problem_from_response,
)
from absrank_client.models import RegionScan, Table
from absrank_client.progress import JobStatus, Poller, ProgressOption

TableFormat = Literal["csv", "markdown", "latex"]
PAPER_TABLE_FORMATS: tuple[TableFormat, ...] = ("csv", "markdown", "latex")
"""The formats of the server's tables for papers (RFC 4180 CSV, GitHub Markdown, booktabs)."""

DEFAULT_URL = "http://127.0.0.1:8000"
"""Where ``absrank serve`` listens by default."""
DEFAULT_HTTP_TIMEOUT = 300.0
"""Seconds one HTTP request may take: above the heaviest synchronous request the default limits
allow (a comparison of 200 means over 25 runs takes about a minute on two cores)."""

T = TypeVar("T")
_Job = TypeVar("_Job", Table, RegionScan)
JSON = dict[str, Any]


def _body(**fields: Any) -> JSON:
    """A request body without the fields left at None (the server's defaults apply)."""
    return {k: v for k, v in fields.items() if v is not None}


def _floats(xs: Iterable[Any] | None) -> list[float | None] | None:
    return None if xs is None else [inputs._value(x) for x in xs]


@dataclass
class _Polled(Generic[_Job]):
    """What :meth:`Client._wait_resource` knows of a job between polls."""

    job: _Job
    retry_after: str | None = None
    fresh: bool = True  # the job as given has not been shown yet: no GET before the first look


class _Session:
    """A connection to one server: the requests and waits every method group shares
    (:class:`absrank_client.Client` documents the parameters)."""

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

    def __enter__(self) -> Self:
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
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send one request; a non-2xx answer raises its typed :class:`ProblemError`.

        ``content`` (with ``content_type``) is a raw body; ``files`` and ``data`` a
        ``multipart/form-data`` one; ``headers`` more request headers.
        """
        sent = {"accept": "application/json, application/problem+json, */*", **(headers or {})}
        if self.api_key:
            sent["x-api-key"] = self.api_key
        if content_type is not None:
            sent["content-type"] = content_type
        url = self._url(path)
        try:
            response = self._http.request(
                method,
                url,
                json=json,
                params=params,
                headers=sent,
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
        location = response.headers.get("location", "")
        asked = "respond-async" in sent.get("prefer", sent.get("Prefer", "")).lower()
        if response.status_code == 202 and location.startswith("/v1/jobs/") and not asked:
            # the server made a job of a request above its synchronous budget: its answer
            return self._followed_job(location.rsplit("/", 1)[1])
        return response

    def _followed_job(self, job_id: str) -> httpx.Response:
        """The answer of a job the server made of a request (the jobs' methods wait for it)."""
        raise NotImplementedError(f"this client cannot wait for job {job_id}")

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

    @staticmethod
    def _save(data: bytes, path: str | os.PathLike[str] | None) -> bytes:
        if path is not None:
            Path(path).write_bytes(data)
        return data

    def _paper_table(
        self,
        method: str,
        url: str,
        format: str,
        path: str | os.PathLike[str] | None,
        *,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
    ) -> str:
        """A paper table of the server (``?format=`` csv, markdown or latex; the server's
        README, "Tables for papers"), also written to ``path`` when given."""
        if format not in PAPER_TABLE_FORMATS:
            raise ValueError(f"format must be csv, markdown or latex, got {format!r}")
        query = {**_body(**(params or {})), "format": format}
        content = self.request(method, url, params=query, json=json).content
        return self._save(content, path).decode()

    @staticmethod
    def _plot_format(format: str) -> str:
        if format not in ("svg", "pdf", "png"):
            raise ValueError(f"format must be 'svg', 'pdf' or 'png', got {format!r}")
        return format

    @staticmethod
    def _figure_params(
        fmt: str,
        *,
        dpi: int | None,
        width: float | None,
        height: float | None,
        font_size: float | None,
    ) -> dict[str, Any]:
        """A figure's query options (the server validates them: 422 naming the field); ``dpi``
        only for PNG."""
        given = {"width": width, "height": height, "font_size": font_size}
        if fmt == "png":
            given["dpi"] = dpi
        return {k: v for k, v in given.items() if v is not None}
