"""Settings, validated once and injected everywhere (environment prefix ``ABSRANK_``)."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Role = Literal["read", "submit", "operator"]
"""What an API key may do: ``read`` (its own quotas), ``submit`` (also writes that store rows and
queue builds, as the write policy says), ``operator`` (everything, no quotas)."""
Need = Literal["anyone", "read", "submit", "operator"]
"""The least a write needs: ``anyone`` (also anonymous requests) or a key of at least this role."""


def key_sha256(key: str) -> str:
    """The SHA-256 (hex) under which an API key is configured (``absrank key new`` prints it)."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class ApiKey(BaseModel):
    """One API key of the deployment, stored as its SHA-256, never in clear."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the key, hex")
    role: Role = Field(description="read | submit | operator")
    name: str = Field(
        min_length=1,
        max_length=64,
        pattern=r"^[A-Za-z0-9._-]+$",
        description="who holds the key (its quotas are counted under this name)",
    )


class WritePolicy(BaseModel):
    """The least each write needs once the deployment configures keys (public defaults).

    Without any configured key every write is open (a local instance). Anonymous reads are
    always allowed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tables: Need = Field(
        "submit",
        description="POST /v1/tables, /v1/tables/samples, /v1/region-scans, and rank requests "
        "that queue a missing default table or ladder",
    )
    result_sets: Need = Field("submit", description="POST /v1/result-sets")
    comparisons: Need = Field("anyone", description="POST /v1/comparisons")
    pareto_rankings: Need = Field("anyone", description="POST /v1/pareto-rankings")
    cross_machine_comparisons: Need = Field(
        "anyone", description="POST /v1/cross-machine-comparisons (and its results)"
    )
    cpus: Need = Field("operator", description="POST /v1/cpus (the CPU registry)")


WriteKind = Literal[
    "tables", "result_sets", "comparisons", "pareto_rankings", "cross_machine_comparisons", "cpus"
]


EVALUATE_BYTES_PER_VALUE = 28
"""Bytes of the longest JSON float64 coordinate with its comma, and a point's brackets at d = 1
("[-1.2345678901234567e-100],"; 27)."""


class Settings(BaseSettings):
    """All configuration of absrank. Every field can be set as ``ABSRANK_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="ABSRANK_", env_file=".env", extra="ignore")

    environment: str = Field("dev", description="dev | test | production")
    database_url: str = Field(
        "sqlite:///var/absrank.db",
        description="SQLAlchemy URL; SQLite by default, postgresql+psycopg://... in production",
    )
    queue_url: str = Field(
        "sqlite:///var/queue.db",
        description="huey storage: sqlite:///path (embedded), redis://host:port/db (distributed), "
        "or memory:// (tasks run inline; tests only)",
    )
    queue_name: str = "absrank"
    # tables
    table_default_log2n: int = Field(16, ge=4, le=30)
    table_max_log2n: int = Field(24, ge=4, le=30)
    table_chunk_log2: int = Field(16, ge=4, le=24, description="log2 of the Sobol points per chunk")
    table_k_exact: int = Field(4096, ge=16)
    table_n_knots: int = Field(16384, ge=16)
    chunk_lease_seconds: float = Field(300.0, gt=0)
    table_task_seconds: float = Field(
        2.0,
        ge=0,
        le=60,
        allow_inf_nan=False,
        description="work a worker's chunk task aims at: it also claims the next chunks of a "
        "cheap function, as many as its measured cost per point fits (0: one chunk per task)",
    )
    table_ready_cache_size: int = Field(
        32, ge=0, description="ready tables (decoded data) kept per process; 0 disables"
    )
    table_missing_ttl_seconds: float = Field(
        5.0,
        ge=0,
        allow_inf_nan=False,
        description="seconds a table found missing is taken to stay missing (regions='auto' "
        "looks for a ladder on every rank request); requesting it forgets at once",
    )
    table_missing_cache_size: int = Field(
        4096, ge=1, description="missing table ids remembered before all are forgotten"
    )
    table_publish_cache_size: int = Field(
        64,
        ge=0,
        description="answers derived from ready tables and ladders (curves, CSV, plots) kept per "
        "process; 0 disables",
    )
    # nested regions: R_0 = domain ⊃ R_1 ⊃ … ⊃ R_L around x*, one table each; the
    # boxes are shaped like the local sublevel sets (app.domain.nested.ladder_shape) and level j
    # has half-widths min(R, sigma_j·a_i), sigma_j = sigma_0 / nested_factor^j
    nested_levels: int = Field(
        32,
        ge=1,
        le=64,
        description="hard cap on the boxes L below the domain in a ladder of nested regions (a "
        "ladder stops earlier at nested_min_log10_volume, or before a box narrower than 1e-8 of "
        "the domain)",
    )
    nested_factor: float = Field(
        2.0,
        gt=1.0,
        le=1000.0,
        allow_inf_nan=False,
        description="divisor of the ladder's scale sigma per level: every side of a box that does "
        "not span the domain shrinks by this factor per level, d·log10(factor) decades of volume "
        "per level once no side spans it (2 halves them; in d >= 8 about 1.25-1.4 keeps level "
        "handovers inside the samples, at more levels)",
    )
    nested_min_log10_volume: float = Field(
        -60.0,
        lt=0.0,
        ge=-1000.0,
        allow_inf_nan=False,
        description="a ladder ends at the first box whose volume fraction Leb(R_j)/Leb(domain) "
        "is at most 10^this (60 decades: 25 levels for the 10-D condition-1e6 ellipsoid, 20 for "
        "the 10-D sphere, at nested_factor 2)",
    )
    ladder_plan_cache_size: int = Field(
        256, ge=0, description="ladder plans (boxes) kept per process; 0 disables"
    )
    ladder_ids_cache_size: int = Field(
        4096,
        ge=0,
        description="ladders' table-id lists kept per process (regions='auto' asks for them on "
        "every rank request); 0 disables",
    )
    redispatch_interval_seconds: float = Field(
        30.0, ge=0, description="API-side re-dispatch of expired chunk leases; 0 disables"
    )
    preload_figures: bool = Field(
        True,
        description="import matplotlib and draw one tiny figure in a background thread 2 s "
        "after the API starts, so that a first figure request does not wait for them (~0.5 s); "
        "the API answers meanwhile, and waits for the thread when it stops",
    )
    # request limits
    max_rank_values: int = Field(100_000, ge=1)
    max_numerical_aggregates: int = Field(
        200,
        ge=1,
        le=100_000,
        description="ranks per request (or comparison) that need a convolution or an integral: "
        "means of r > 1 runs and medians of an even r, about 1-150 ms each",
    )
    max_evaluate_points: int = Field(
        10_000, ge=1, description="points of one evaluate request (see max_evaluate_values)"
    )
    max_user_samples: int = Field(
        2_000_000,
        ge=2,
        description="values of f in one user table (POST /v1/tables with samples, or "
        "POST /v1/tables/samples); a sort, built at once",
    )
    max_inline_sample: int = Field(
        100_000,
        ge=2,
        description="values of an inline sample of POST /v1/absolute-ranks (ranked by Eq. 28 "
        "directly, nothing stored)",
    )
    max_request_bytes: int = Field(8 * 1024 * 1024, ge=1024)
    # results archive (POST /v1/result-sets)
    max_upload_bytes: int = Field(
        64 * 1024 * 1024,
        ge=1024,
        description="body of a text/csv or multipart/form-data POST /v1/result-sets (JSON "
        "bodies keep max_request_bytes); also the uploaded file itself",
    )
    max_upload_decompressed_bytes: int = Field(
        256 * 1024 * 1024, ge=1024, description="files inside an uploaded .zip/.tgz together"
    )
    max_upload_files: int = Field(10_000, ge=1, description="members of an uploaded archive")
    max_upload_rows: int = Field(
        2_000_000, ge=1, description="runs plus trajectory points of one result set"
    )
    max_inline_rows: int = Field(
        100_000,
        ge=1,
        description="runs plus points GET /v1/result-sets/{id}?include=runs answers (the .csv "
        "has any number)",
    )
    # anytime analysis (POST /v1/runtime-distributions, POST /v1/profiles)
    max_anytime_records: int = Field(
        2_000_000, ge=1, description="trajectory records (evaluations, value) of one request"
    )
    max_anytime_cells: int = Field(
        2_000_000,
        ge=1,
        description="runs × targets of one request (runtimes to targets; simulated restarts "
        "count their samples instead of the runs)",
    )
    max_anytime_rank_budgets: int = Field(
        64,
        ge=1,
        le=1000,
        description="budgets c of the fixed-budget view and of the anytime absolute rank (one "
        "rank request per algorithm, function and budget)",
    )
    max_region_scan_deltas: int = Field(
        32, ge=1, le=1000, description="δ values (cheap tables) per region scan"
    )
    # statistical tests and comparisons
    max_algorithms: int = Field(
        200,
        ge=2,
        le=5000,
        description="algorithms (columns) per matrix (all-pairs post-hoc "
        "families grow as k²: Hommel at k = 200 takes about 1.5 s)",
    )
    max_problems: int = Field(10_000, ge=2, description="problems (rows, blocks) per matrix")
    max_matrix_cells: int = Field(1_000_000, ge=4, description="problems × algorithms")
    max_sample_size: int = Field(100_000, ge=2, description="values per sample or paired test")
    max_result_rows: int = Field(
        1_000_000, ge=1, description="rows (algorithm, problem, run, value) of a comparison"
    )
    max_niia_subsets: int = Field(100, ge=1, description="subsets in a comparison's NIIA report")
    leaderboard_max_tested_sets: int = Field(
        40,
        ge=2,
        le=1000,
        description="a function leaderboard runs the pairwise rank-sum tests (k(k-1)/2 pairs) "
        "up to this many sets with runs; above, it lists the ranks without the tests",
    )
    leaderboard_cache_size: int = Field(
        64,
        ge=0,
        le=10_000,
        description="leaderboard answers kept per process, keyed by the request and the "
        "archive's state (a stored set changes the key); answers with provisional entries are "
        "never kept; 0 disables",
    )
    max_niia_default_pairs: int = Field(
        1225,
        ge=1,
        description="the default NIIA report (every pair alone) is computed up to this many pairs "
        "(k = 50); above, name niia_subsets",
    )
    wilcoxon_exact_max_n: int = Field(
        400, ge=1, le=1000, description="exact signed-rank distribution up to this many pairs"
    )
    permutation_exact_max_splits: int = Field(
        1_000_000,
        ge=1,
        le=10**9,
        description="exact mean permutation test while C(nA+nB, nA) <= this",
    )
    permutation_max_resamples: int = Field(
        2_000_000, ge=1, le=10**7, description="Monte Carlo permutations per request"
    )
    permutation_max_work: int = Field(
        500_000_000,
        ge=1,
        description="Monte Carlo work limit: n_resamples × (n_A + n_B) (about 2 s at the default)",
    )
    # cost of a request (issue 17; app.domain.cost)
    sync_cpu_limit_seconds: float = Field(
        2.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="estimated CPU-seconds (one core) up to which a request runs synchronously, "
        "under a wall-clock deadline; above it, it becomes a job (or is refused without workers)",
    )
    sync_deadline_factor: float = Field(
        5.0,
        ge=1,
        le=100,
        allow_inf_nan=False,
        description="a synchronous request is stopped after this many times its limit "
        "(sync_cpu_limit_seconds) of wall-clock time: the estimate's margin on a busy machine",
    )
    job_cpu_limit_seconds: float = Field(
        600.0,
        gt=0,
        le=86400,
        allow_inf_nan=False,
        description="estimated CPU-seconds beyond which a request is refused (422 with the "
        "estimate and how to split it) even as a job",
    )
    # processes (issue 17)
    api_shutdown_seconds: int = Field(
        5,
        ge=0,
        le=3600,
        description="a stopping API (SIGTERM, Ctrl-C) waits this long for requests in flight, "
        "then cancels them and exits even if a computation still runs in a thread",
    )
    worker_shutdown_seconds: float = Field(
        5.0,
        ge=0,
        le=3600,
        allow_inf_nan=False,
        description="a worker stopped by SIGTERM lets its tasks in flight finish this long, "
        "then interrupts them (their chunks are re-sent when their lease expires)",
    )
    # HTTP headers and CORS (issue 17; app.api.http_hygiene)
    cors_allow_origins: list[str] = Field(
        default_factory=list,
        description="origins (https://host[:port], or * for any) whose browser pages may call "
        "the API (CORS); empty: CORS off, browsers keep other sites' pages from reading answers",
    )
    cors_allow_methods: list[str] = Field(
        default_factory=lambda: ["GET", "HEAD", "POST", "DELETE"],
        description="methods a CORS preflight allows (with cors_allow_origins)",
    )
    cors_allow_headers: list[str] = Field(
        default_factory=lambda: ["Content-Type", "Accept", "X-API-Key", "If-None-Match"],
        description="request headers a CORS preflight allows (with cors_allow_origins)",
    )
    cors_expose_headers: list[str] = Field(
        default_factory=lambda: [
            "ETag",
            "Location",
            "Retry-After",
            "Absrank-Warnings",
            "Absrank-Missing-Glyphs",
            "X-Absrank-Provenance",
        ],
        description="response headers a page of an allowed origin may read",
    )
    cors_max_age_seconds: int = Field(
        600, ge=0, le=86400, description="how long a browser may reuse a CORS preflight answer"
    )
    # keys, roles and quotas (issue 17; app.api.keys, app.api.quotas)
    api_keys: list[ApiKey | str] = Field(
        default_factory=list,
        description='JSON list of {"sha256": hex, "role": "read|submit|operator", "name": ...} '
        "(absrank key new prints one); a plain string is a key in clear with role operator, "
        "accepted only in dev and test. Empty: every write is open",
    )
    write_policy: WritePolicy = Field(
        default_factory=WritePolicy,
        description="JSON object: the least each write needs (anyone, read, submit, operator) "
        "when keys are configured; keys tables, result_sets, comparisons, pareto_rankings, "
        "cross_machine_comparisons, cpus",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="IP addresses or networks (CIDR) of reverse proxies whose X-Forwarded-For "
        "names the client; from any other peer the header is ignored",
    )
    rate_limit_storage_url: str = Field(
        "memory://",
        description="where quotas are counted: memory:// (per process) or redis://host:port/db "
        "(shared by every API process)",
    )
    rate_limit_key_prefix: str = Field(
        "absrank", min_length=1, description="prefix of the quota counters' Redis keys"
    )
    rate_limit_strategy: Literal["moving-window", "fixed-window", "sliding-window-counter"] = Field(
        "moving-window",
        description="window of the requests-per-minute limit (CPU-seconds and chunks are "
        "counted in fixed windows)",
    )
    anonymous_requests_per_minute: int = Field(
        600,
        ge=0,
        description="requests per minute of one client address without a key; 0: no limit",
    )
    key_requests_per_minute: int = Field(
        6000, ge=0, description="requests per minute of one read or submit key; 0: no limit"
    )
    anonymous_cpu_seconds_per_hour: float = Field(
        600.0,
        ge=0,
        allow_inf_nan=False,
        description="handler seconds (an upper bound of CPU) per hour of one client address; "
        "0: no limit",
    )
    key_cpu_seconds_per_hour: float = Field(
        3600.0,
        ge=0,
        allow_inf_nan=False,
        description="handler seconds (an upper bound of CPU) per hour of one key; 0: no limit",
    )
    anonymous_chunks_per_hour: int = Field(
        1024,
        ge=0,
        description="table chunks (of 2^table_chunk_log2 points) one client address may queue "
        "per hour, where the write policy lets anonymous requests queue builds; 0: no limit",
    )
    key_chunks_per_hour: int = Field(
        4096,
        ge=0,
        description="table chunks (of 2^table_chunk_log2 points) one key may queue per hour; "
        "0: no limit",
    )
    # failure answers (issue 17; app.db, app.api.problems, app.services.health)
    database_busy_timeout_seconds: float = Field(
        30.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="a statement waits this long for another connection's lock (SQLite's busy "
        "timeout, PostgreSQL's lock_timeout), then the request is answered 503 with Retry-After",
    )
    database_connect_timeout_seconds: float = Field(
        5.0,
        gt=0,
        le=600,
        allow_inf_nan=False,
        description="PostgreSQL: opening a connection, or waiting for a pooled one, takes at "
        "most this long, then the request is answered 503 (database unavailable)",
    )
    queue_timeout_seconds: float = Field(
        5.0,
        gt=0,
        le=600,
        allow_inf_nan=False,
        description="the queue (Redis sockets, PostgreSQL connect, the SQLite queue's busy "
        "timeout: huey's own default) answers within this long, or the request is answered 503 "
        "and nothing is queued (the re-dispatcher sends the work once the queue is back)",
    )
    retry_after_seconds: int = Field(
        30,
        ge=1,
        le=86400,
        description="Retry-After of a 503 (database or queue unavailable) and of /healthz "
        "when a dependency is down",
    )
    redispatch_workers: int = Field(
        0,
        ge=0,
        description="worker processes the re-dispatcher counts on when it bounds what it "
        "re-sends to the chunks they can work within one lease (0: the processes seen "
        "claiming chunks in the last lease, at least 1)",
    )
    # jobs (issue 17; app.services.jobs)
    job_lease_seconds: float = Field(
        60.0,
        gt=0,
        le=3600,
        allow_inf_nan=False,
        description="a running job's lease: its worker renews it while it works (every third "
        "of it); a job whose lease expired (its worker died) is run again by the re-dispatcher",
    )
    job_check_seconds: float = Field(
        1.0,
        ge=0,
        le=60,
        allow_inf_nan=False,
        description="a running job reads its row (was it cancelled?) and writes its progress at "
        "most once per this many seconds",
    )
    # cost model (issue 17; app.services.costs)
    max_region_scan_chunks: int = Field(
        1024,
        ge=1,
        description="chunks one region scan may queue: its δ tables, 2^(log2n - "
        "table_chunk_log2) chunks each (32 δ at log2n 24 would be 8,192)",
    )
    max_evaluate_values: int = Field(
        200_000,
        ge=1,
        description="coordinates (points × d) of one POST /v1/functions/{id}/evaluate, and at "
        "most max_request_bytes / 28 (the longest JSON coordinate): 200,000 fit 8 MiB",
    )
    request_threads: int = Field(
        default_factory=lambda: max(1, (os.cpu_count() or 2) - 1),
        ge=1,
        le=1000,
        description="threads that run requests' synchronous work at once (the computations, "
        "database reads; default: the machine's cores less one, at least 1: the event loop keeps "
        "a core); more requests wait their "
        "turn without holding Python's interpreter lock, so the event loop and /healthz (its "
        "own threads) keep answering under load",
    )
    # serve
    host: str = "127.0.0.1"
    port: int = 8000
    embedded_worker: bool = Field(True, description="absrank serve also runs a worker process")
    embedded_workers: int = Field(1, ge=1, description="worker processes started by absrank serve")
    default_tables: bool = Field(True, description="absrank serve queues the default tables")
    seed_archive: bool = Field(
        True,
        description="absrank serve seeds the results archive (CEC 2005 F15-F17, the BBOB demo; "
        "idempotent)",
    )

    @field_validator("database_url")
    @classmethod
    def _normalize_postgres(cls, v: str) -> str:
        if v.startswith("postgresql://") or v.startswith("postgres://"):
            return "postgresql+psycopg://" + v.split("://", 1)[1]
        return v

    @model_validator(mode="after")
    def _check_limits(self) -> Settings:
        if self.table_default_log2n > self.table_max_log2n:
            raise ValueError("table_default_log2n must not exceed table_max_log2n")
        if self.environment == "production" and any(k in {"", "changeme"} for k in self.api_keys):
            raise ValueError("placeholder API key in production")
        if self.environment == "production" and any(isinstance(k, str) for k in self.api_keys):
            raise ValueError(
                "plain API keys are accepted only in dev and test: configure "
                '{"sha256": ..., "role": ..., "name": ...} (absrank key new prints one)'
            )
        keys = [k for k in self.api_keys if isinstance(k, ApiKey)]
        for attribute in ("name", "sha256"):
            values = [getattr(k, attribute) for k in keys]
            if len(set(values)) != len(values):
                raise ValueError(f"two API keys have the same {attribute}")
        return self

    def ensure_dirs(self) -> None:
        """Create the folders of SQLite files named in the URLs."""
        for url in (self.database_url, self.queue_url):
            if url.startswith("sqlite:///"):
                path = Path(url.removeprefix("sqlite:///"))
                if str(path) not in ("", ":memory:"):
                    path.parent.mkdir(parents=True, exist_ok=True)


@lru_cache
def get_settings() -> Settings:
    """Return the process-wide settings (tests override via ``app.dependency_overrides``)."""
    return Settings()


def evaluate_values_limit(settings: Settings) -> int:
    """Coordinates one evaluate request may carry: ``max_evaluate_values``, and no more than a
    body of ``max_request_bytes`` holds at :data:`EVALUATE_BYTES_PER_VALUE` each."""
    return min(settings.max_evaluate_values, settings.max_request_bytes // EVALUATE_BYTES_PER_VALUE)
