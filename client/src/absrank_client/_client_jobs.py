"""The methods of :class:`absrank_client.Client` for jobs: heavy requests the server's workers
run (``Prefer: respond-async``), polled, fetched and cancelled."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import httpx

from absrank_client._client_base import JSON, _Session
from absrank_client.errors import JobFailed
from absrank_client.models import Job
from absrank_client.progress import JobStatus, ProgressOption

PREFER_ASYNC = {"prefer": "respond-async"}
"""The header that asks a heavy route for a job (RFC 7240)."""


class JobMethods(_Session):
    """Jobs: submit a heavy request as a job, poll it, wait for it, cancel it."""

    def submit_job(self, path: str, body: JSON, *, params: Mapping[str, Any] | None = None) -> Job:
        """Send ``body`` to a route that runs as a job (``/v1/comparisons``,
        ``/v1/pareto-rankings``, ``/v1/absolute-ranks``) with ``Prefer: respond-async``.

        The identical request finds the same job (and its stored answer)."""
        response = self.request("POST", path, json=body, params=params, headers=PREFER_ASYNC)
        if response.status_code != 202:  # a server without jobs answered at once
            raise JobFailed(self._url(path), f"the server answered {response.status_code}, not 202")
        return Job.parse(response.json())

    def job(self, job_id: str) -> Job:
        """A job's status, progress and ETA (``GET /v1/jobs/{id}``)."""
        return Job.parse(self._get(f"/v1/jobs/{job_id}"))

    def wait_job(
        self, job_id: str, *, timeout: float | None = None, progress: ProgressOption = False
    ) -> Job:
        """Poll a job until it is done (``Retry-After`` first, then backoff).

        Raises
        ------
        ProblemError
            The job failed: its problem, as the synchronous route would have raised it.
        JobFailed
            The job was cancelled.
        JobTimeout
            Not done within ``timeout`` seconds (the job keeps running: wait again later).
        """

        def fetch() -> tuple[Job, JobStatus | None, str | None]:
            response = self.request("GET", f"/v1/jobs/{job_id}")
            job = Job.parse(response.json())
            if job.status == "failed":
                self.request("GET", job.answer)  # raises the job's problem
            if job.status == "cancelled":
                raise JobFailed(self._url(job.location), "the job was cancelled")
            if job.done:
                return job, None, None
            status = JobStatus(self._url(job.location), job.status, job.progress, job.eta_seconds)
            return job, status, response.headers.get("retry-after")

        return self._wait(fetch, timeout=timeout, progress=progress, label=f"job {job_id}")

    def job_answer(self, job_id: str, path: str | os.PathLike[str] | None = None) -> Any:
        """A done job's answer, as JSON (the synchronous route's answer); its bytes are also
        written to ``path`` when given."""
        response = self._job_answer(job_id)
        self._save(response.content, path)
        return response.json()

    def _followed_job(self, job_id: str) -> httpx.Response:
        """A request the server answered with a job (above its synchronous budget): wait for
        it (``wait_timeout``), then its answer, as if it had been answered at once."""
        job = self.wait_job(job_id)
        return self._job_answer(job.id)

    def _job_answer(self, job_id: str) -> httpx.Response:
        return self.request("GET", f"/v1/jobs/{job_id}/answer")

    def cancel_job(self, job_id: str) -> Job:
        """Cancel a queued or running job (``DELETE /v1/jobs/{id}``; the computation stops at
        its next check) and return its status. A done or failed job keeps its answer: the
        server refuses with a 409 (:class:`~absrank_client.errors.Conflict`)."""
        response = self.request("DELETE", f"/v1/jobs/{job_id}")
        if response.status_code == 204:  # cancelled before
            return self.job(job_id)
        return Job.parse(response.json())

    def _as_job(
        self,
        path: str,
        body: JSON,
        params: Mapping[str, Any] | None,
        *,
        timeout: float | None,
        progress: ProgressOption,
    ) -> httpx.Response:
        """Run a request as a job, wait for it, and return its answer's response."""
        job = self.submit_job(path, body, params=params)
        if not job.done:
            job = self.wait_job(job.id, timeout=timeout, progress=progress)
        return self._job_answer(job.id)
