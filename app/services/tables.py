"""Use cases of v_f tables: request, inspect, build chunk by chunk, merge, recover.

The database is the source of truth for progress; the queue only carries hints. Every step is
idempotent and decided by a conditional ``UPDATE`` (see ``app.repositories.tables``):

* :func:`request_table` creates the table and one row per chunk, commits, then enqueues the chunks.
* :func:`run_chunk` leases a chunk, evaluates its Sobol points, stores the result once
  (``UPDATE ... WHERE status <> 'done'``); the chunk that completes the set merges.
* :func:`merge` claims ``building -> merging`` with a lease, builds and stores the table data,
  marks it ready and drops the chunk blobs in one transaction.
* :func:`redispatch` (periodic) re-enqueues chunks whose lease expired or whose message was lost,
  and merges that nobody finished.

So a killed worker or a lost message delays a table but never loses or duplicates a chunk, and any
chunking (any number of workers, any chunk size) gives the same bytes.

The code lives by concern: specs in :mod:`app.services._table_specs`, requests and reads in
:mod:`app.services._table_requests`, the worker side in :mod:`app.services.table_build` (its
numerics in :mod:`app.domain.tablebuild`), ladders in :mod:`app.services.ladders`, the caches in
:mod:`app.services.table_cache`; this module re-exports their public names.

Services own their unit of work here (``session_scope``) because a build step is several
transactions with computation in between; enqueueing always happens after the commit.
"""

from __future__ import annotations

from app.repositories.tables import ChunkBlobs
from app.services._table_requests import (
    ChunkCharge,
    ReadyTable,
    Requested,
    TablePage,
    TableView,
    build_clock,
    cached_ready_table,
    get_table,
    list_tables,
    load_table_data,
    not_ready_error,
    recently_missing,
    remember_missing,
    request_spec,
    request_table,
    unstored_chunks,
)
from app.services._table_specs import (
    MAX_LIST_LIMIT,
    MAX_SEED,
    MIN_LOG2N,
    REPRESENTATION_VERSION,
    SM,
    SPEC_PACKAGES,
    SUMMARY_QUANTILES_ARE,
    Dispatcher,
    as_floats,
    chunk_size_for,
    sampler_description,
    spec_hash,
    spec_versions,
    table_id_for,
    table_location,
    table_spec,
    utc_now,
)
from app.services.ladders import (
    LADDER_SETTINGS,
    LadderCurve,
    LadderPlanned,
    describe_ladder,
    kept_provenance,
    ladder_curve,
    ladder_degree,
    ladder_plan,
    ladder_shape_of,
    ladder_specs,
    ladder_table_ids,
    oriented_geometry,
    ready_ladder,
    region_intersected,
    region_ln_volume_fraction,
    request_ladder,
)
from app.services.table_build import (
    NOISE_BLOCK,
    NOISE_STREAM,
    SUMMARY_LEVELS,
    BuiltTable,
    Combined,
    Redispatched,
    SampleSummary,
    combine_chunks,
    compute_chunk,
    compute_table_data,
    merge,
    noise_normals,
    redispatch,
    run_chunk,
    summarize,
)
from app.services.table_cache import (
    LadderCaches,
    TableCaches,
)

__all__ = [
    "LADDER_SETTINGS",
    "MAX_LIST_LIMIT",
    "MAX_SEED",
    "MIN_LOG2N",
    "NOISE_BLOCK",
    "NOISE_STREAM",
    "REPRESENTATION_VERSION",
    "SM",
    "SPEC_PACKAGES",
    "SUMMARY_LEVELS",
    "SUMMARY_QUANTILES_ARE",
    "BuiltTable",
    "ChunkBlobs",
    "ChunkCharge",
    "Combined",
    "Dispatcher",
    "LadderCaches",
    "LadderCurve",
    "LadderPlanned",
    "ReadyTable",
    "Redispatched",
    "Requested",
    "SampleSummary",
    "TableCaches",
    "TablePage",
    "TableView",
    "as_floats",
    "build_clock",
    "cached_ready_table",
    "chunk_size_for",
    "combine_chunks",
    "compute_chunk",
    "compute_table_data",
    "describe_ladder",
    "get_table",
    "kept_provenance",
    "ladder_curve",
    "ladder_degree",
    "ladder_plan",
    "ladder_shape_of",
    "ladder_specs",
    "ladder_table_ids",
    "list_tables",
    "load_table_data",
    "merge",
    "noise_normals",
    "not_ready_error",
    "oriented_geometry",
    "ready_ladder",
    "recently_missing",
    "redispatch",
    "region_intersected",
    "region_ln_volume_fraction",
    "remember_missing",
    "request_ladder",
    "request_spec",
    "request_table",
    "run_chunk",
    "sampler_description",
    "spec_hash",
    "spec_versions",
    "summarize",
    "table_id_for",
    "table_location",
    "table_spec",
    "unstored_chunks",
    "utc_now",
]
