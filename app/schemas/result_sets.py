"""Schemas of ``/v1/result-sets``: the archive of algorithms' results."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.config import JsonDict

from app.schemas.common import STRICT_REQUEST, FiniteFloat, FunctionId, field_error

ValuesAreField = Literal["f", "error"]
ValueAggregate = Literal["mean", "median"]
SourceFormat = Literal["json", "csv", "coco", "iohprofiler", "nevergrad"]

MAX_RUN = 10**9
MAX_BUDGET = 10**15

Text200 = Annotated[str, Field(min_length=1, max_length=200)]


class TrajectoryIn(BaseModel):
    """Evaluations → best value so far of one run (same units as ``value``)."""

    model_config = STRICT_REQUEST
    evaluations: list[Annotated[int, Field(ge=1, le=MAX_BUDGET)]] = Field(
        min_length=1, description="strictly increasing evaluation counts", examples=[[1, 10, 100]]
    )
    best: list[FiniteFloat] = Field(
        min_length=1,
        description="best value within that many evaluations (non-increasing; the last is the "
        "run's value)",
        examples=[[50.0, 12.5, 3.25]],
    )


class ResultRunIn(BaseModel):
    """One run: final value and evaluations used on one function, optionally its trajectory."""

    model_config = STRICT_REQUEST
    function_id: FunctionId
    run: int = Field(ge=0, le=MAX_RUN, description="run number (unique per function)")
    value: FiniteFloat = Field(description="final best value: f(x), or f(x) − f* (values_are)")
    budget: int = Field(ge=1, le=MAX_BUDGET, description="evaluations the run used")
    trajectory: TrajectoryIn | None = None


class ResultSetMetadata(BaseModel):
    """What a set says about itself (every field is part of its content hash)."""

    model_config = STRICT_REQUEST
    name: Text200 = Field(description="the algorithm's name", examples=["DE"])
    version: str | None = Field(None, min_length=1, max_length=100, examples=["scipy 1.15"])
    description: str | None = Field(None, min_length=1, max_length=5000)
    reference: str | None = Field(
        None, min_length=1, max_length=500, description="DOI or URL of the source"
    )
    contact: str | None = Field(None, min_length=1, max_length=200)
    cpu_id: int | None = Field(
        None, ge=1, description="the machine: an id of the CPU registry (GET /v1/cpus)"
    )
    cpu_score: float | None = Field(
        None, gt=0, allow_inf_nan=False, description="the machine: a PassMark single-thread score"
    )
    values_are: ValuesAreField = Field(
        description="f: values are f(x); error: they are f(x) − f* (needs a known f*)",
        examples=["f"],
    )
    value_aggregate: ValueAggregate | None = Field(
        None,
        description="published already-reduced values: each stored run is the mean or median "
        "of value_runs runs (e.g. CEC tables of means of 25 runs)",
    )
    value_runs: int | None = Field(None, ge=2, le=10**6, description="with value_aggregate")
    supersedes: str | None = Field(
        None, min_length=1, max_length=64, description="id of an archived set this one corrects"
    )

    @model_validator(mode="after")
    def _pairs(self) -> ResultSetMetadata:
        if (self.value_aggregate is None) != (self.value_runs is None):
            raise field_error("value_runs", "give value_aggregate and value_runs together")
        if self.cpu_id is not None and self.cpu_score is not None:
            raise field_error("cpu_score", "give the machine as cpu_id or cpu_score, not both")
        return self


class UploadMetadata(ResultSetMetadata):
    """The metadata fields of a ``multipart/form-data`` upload.

    ``name`` defaults to the algorithm the files name (COCO ``algId``, IOHprofiler
    ``algorithm``); ``values_are`` to what the format records (needed for csv).
    """

    name: Text200 | None = None  # type: ignore[assignment]  # optional here, required in the base
    values_are: ValuesAreField | None = None  # type: ignore[assignment]  # optional here too


_EXAMPLE: JsonDict = {
    "name": "DE",
    "version": "scipy 1.15",
    "reference": "https://doi.org/10.1023/A:1008202821328",
    "values_are": "f",
    "results": [
        {"function_id": "classic/sphere/d2", "run": 0, "value": 0.0012, "budget": 1000},
        {
            "function_id": "classic/sphere/d2",
            "run": 1,
            "value": 0.0031,
            "budget": 1000,
            "trajectory": {"evaluations": [1, 100, 1000], "best": [8.5, 0.2, 0.0031]},
        },
    ],
}


class ResultSetCreate(ResultSetMetadata):
    """One algorithm's results (JSON body of ``POST /v1/result-sets``)."""

    model_config = STRICT_REQUEST | ConfigDict(json_schema_extra={"examples": [_EXAMPLE]})
    results: list[ResultRunIn] = Field(min_length=1, description="one row per run and function")


class NoteRead(BaseModel):
    """Something the importer reported about the files."""

    code: str
    message: str
    file: str | None = None


class FunctionSummary(BaseModel):
    """A set's runs on one function."""

    function_id: str
    suite: str
    dim: int
    runs: int
    budget_min: int
    budget_max: int
    value_min: float
    value_median: float
    value_max: float
    has_trajectories: bool


class RunRead(BaseModel):
    """One stored run (with ``?include=runs``)."""

    function_id: str
    run: int
    value: float
    budget: int
    trajectory: TrajectoryIn | None = None


class ResultSetItem(BaseModel):
    """A set in a list: its metadata and counts."""

    id: str = Field(examples=["r0c9e4b1a2f3d5e6a7b8c9d0"])
    location: str
    content_sha256: str
    name: str
    version: str | None
    description: str | None
    reference: str | None
    contact: str | None
    cpu_id: int | None
    cpu_score: float | None
    values_are: ValuesAreField
    value_aggregate: ValueAggregate | None
    value_runs: int | None
    supersedes: str | None
    superseded_by: str | None = Field(description="the set that corrects this one, if any")
    source_format: SourceFormat
    suites: list[str]
    n_functions: int
    n_runs: int
    has_trajectories: bool
    created_at: datetime


class QueuedTable(BaseModel):
    """A default domain table the set's ranks need, queued because it did not exist."""

    function_id: str
    table_id: str
    location: str
    status: str


class QueuedLadder(BaseModel):
    """A nested-region ladder queued for a function whose values need it."""

    function_id: str
    reason: Literal["below-samples"] = Field(
        description="below-samples: a value lies below the domain table's smallest sample (a "
        "domain table still building is checked when it is ready: the worker that finishes it "
        "queues the ladder then)"
    )
    levels: int = Field(description="tables of the ladder, the domain first")
    table_ids: list[str]


class Queued(BaseModel):
    """What storing the set queued for its ranks (empty when everything existed)."""

    tables: list[QueuedTable] = Field(default_factory=list)
    ladders: list[QueuedLadder] = Field(default_factory=list)


class ResultSetRead(ResultSetItem):
    """An archived set: metadata, per-function summary, notes, provenance (runs on request)."""

    notes: list[NoteRead]
    functions: list[FunctionSummary]
    runs: list[RunRead] | None = Field(
        None, description="the runs, with ?include=runs (else null; see also the .csv)"
    )
    queued: Queued | None = Field(
        None,
        description="POST of a new set only: the tables and ladders storing it queued (null "
        "when the set was archived already)",
    )
    provenance: dict[str, Any]


class ResultSetList(BaseModel):
    """Archived sets, newest first."""

    items: list[ResultSetItem]
    total: int
    limit: int
    offset: int
