"""The results archive from the client: upload one algorithm's results, list and read sets.

:class:`ArchiveMethods` is mixed into :class:`absrank_client.Client`; its results are the
frozen dataclasses below (``raw`` keeps the answer).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx

from absrank_client._models_base import JSON, Row, _Page, _Row, _Tabular

__all__ = [
    "ArchiveMethods",
    "ArchivedRun",
    "QueuedBuilds",
    "ResultSet",
    "ResultSetFunction",
    "ResultSetList",
]

UploadFormat = Literal["coco", "iohprofiler", "nevergrad", "csv"]
METADATA = (
    "name",
    "version",
    "description",
    "reference",
    "contact",
    "cpu_id",
    "cpu_score",
    "values_are",
    "value_aggregate",
    "value_runs",
    "supersedes",
)


@dataclass(frozen=True)
class ResultSetFunction:
    """A set's runs on one function: counts, budgets and the spread of the final values."""

    function_id: str
    runs: int
    budget_min: int
    budget_max: int
    value_min: float
    value_median: float
    value_max: float
    has_trajectories: bool

    @classmethod
    def parse(cls, raw: JSON) -> ResultSetFunction:
        return cls(**{k: raw[k] for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class ArchivedRun:
    """One stored run (``result_set(id, runs=True)``); ``trajectory`` is (evaluations, best)."""

    function_id: str
    run: int
    value: float
    budget: int
    trajectory: tuple[tuple[int, ...], tuple[float, ...]] | None

    @classmethod
    def parse(cls, raw: JSON) -> ArchivedRun:
        t = raw.get("trajectory")
        return cls(
            raw["function_id"],
            int(raw["run"]),
            float(raw["value"]),
            int(raw["budget"]),
            None if t is None else (tuple(t["evaluations"]), tuple(t["best"])),
        )


@dataclass(frozen=True)
class QueuedBuilds:
    """What storing a set queued: default tables and ladders (function ids)."""

    tables: tuple[str, ...]
    ladders: tuple[str, ...]

    @classmethod
    def parse(cls, raw: JSON | None) -> QueuedBuilds | None:
        if raw is None:
            return None
        return cls(
            tuple(t["function_id"] for t in raw.get("tables", ())),
            tuple(x["function_id"] for x in raw.get("ladders", ())),
        )


@dataclass(frozen=True)
class ResultSet(_Row):
    """An archived result set (``GET /v1/result-sets/{id}``; also an item of a list)."""

    id: str
    location: str
    name: str
    version: str | None
    values_are: str
    value_aggregate: str | None
    value_runs: int | None
    supersedes: str | None
    superseded_by: str | None
    source_format: str
    suites: tuple[str, ...]
    n_functions: int
    n_runs: int
    has_trajectories: bool
    created_at: str
    functions: tuple[ResultSetFunction, ...]
    runs: tuple[ArchivedRun, ...] | None
    queued: QueuedBuilds | None
    created: bool | None
    raw: JSON = field(repr=False)

    @classmethod
    def parse(cls, raw: JSON, created: bool | None = None) -> ResultSet:
        runs = raw.get("runs")
        return cls(
            id=raw["id"],
            location=raw.get("location", f"/v1/result-sets/{raw['id']}"),
            name=raw["name"],
            version=raw.get("version"),
            values_are=raw.get("values_are", "f"),
            value_aggregate=raw.get("value_aggregate"),
            value_runs=raw.get("value_runs"),
            supersedes=raw.get("supersedes"),
            superseded_by=raw.get("superseded_by"),
            source_format=raw.get("source_format", ""),
            suites=tuple(raw.get("suites", ())),
            n_functions=int(raw.get("n_functions", 0)),
            n_runs=int(raw.get("n_runs", 0)),
            has_trajectories=bool(raw.get("has_trajectories")),
            created_at=raw.get("created_at", ""),
            functions=tuple(ResultSetFunction.parse(f) for f in raw.get("functions", ())),
            runs=None if runs is None else tuple(ArchivedRun.parse(r) for r in runs),
            queued=QueuedBuilds.parse(raw.get("queued")),
            created=created,
            raw=raw,
        )

    def row(self) -> Row:
        return {
            "id": self.id,
            "name": self.name,
            "version": self.version,
            "values_are": self.values_are,
            "suites": ",".join(self.suites),
            "functions": self.n_functions,
            "runs": self.n_runs,
            "trajectories": self.has_trajectories,
            "superseded_by": self.superseded_by,
            "created_at": self.created_at,
        }

    def function_rows(self) -> list[Row]:
        """One row per function (the per-function summary)."""
        return [dict(vars(f)) for f in self.functions]


@dataclass(frozen=True)
class ResultSetList(_Page):
    """A page of archived sets, newest first."""

    items: tuple[ResultSet, ...]
    _item = staticmethod(ResultSet.parse)


class _FunctionTable(_Tabular):
    """``rows()`` of a set's per-function summary (the CLI's table)."""

    def __init__(self, result_set: ResultSet) -> None:
        self.raw = result_set.raw
        self._rows = result_set.function_rows()

    def rows(self) -> list[Row]:
        return self._rows


_ARCHIVE_MAGIC = (b"PK\x03\x04", b"PK\x05\x06", b"\x1f\x8b", b"BZh", b"\xfd7zXZ\x00")
"""First bytes of zip, gzip (``.tgz``), bzip2 and xz files: archives the API reads by format."""


def _is_frame(obj: object) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "to_csv")


def _json_row(rec: Mapping[str, Any]) -> dict[str, Any]:
    row: dict[str, Any] = {
        "function_id": str(rec["function_id"]),
        "run": int(rec["run"]),
        "value": float(rec["value"]),
        "budget": int(rec["budget"]),
    }
    if rec.get("trajectory") is not None:
        row["trajectory"] = dict(rec["trajectory"])
    return row


class ArchiveMethods:
    """The archive's methods of :class:`absrank_client.Client`."""

    request: Callable[..., httpx.Response]  # Client.request

    def create_result_set(
        self,
        results: Any,
        *,
        name: str | None = None,
        values_are: Literal["f", "error"] | None = None,
        format: UploadFormat | None = None,
        version: str | None = None,
        description: str | None = None,
        reference: str | None = None,
        contact: str | None = None,
        cpu_id: int | None = None,
        cpu_score: float | None = None,
        value_aggregate: Literal["mean", "median"] | None = None,
        value_runs: int | None = None,
        supersedes: str | None = None,
    ) -> ResultSet:
        """Archive one algorithm's results (``POST /v1/result-sets``); the same content again
        returns the existing set (``created`` tells which).

        Parameters
        ----------
        results
            A path to a file with ``format`` (``coco``/``iohprofiler`` archives, a nevergrad
            CSV, or the archive's long CSV; sent as ``multipart/form-data``); a path to a long
            CSV without ``format`` (sent as ``text/csv``); a ``pandas.DataFrame`` with columns
            ``function_id, run, value, budget`` (and optionally ``evaluations``: trajectory
            points), sent as its CSV; or rows (mappings with those keys and optionally
            ``trajectory = {"evaluations": [...], "best": [...]}``), sent as JSON.
        name, values_are, ...
            The set's metadata (see the API); ``name`` and ``values_are`` are required except
            for uploads whose files say them.
        """
        meta = {
            "name": name,
            "version": version,
            "description": description,
            "reference": reference,
            "contact": contact,
            "cpu_id": cpu_id,
            "cpu_score": cpu_score,
            "values_are": values_are,
            "value_aggregate": value_aggregate,
            "value_runs": value_runs,
            "supersedes": supersedes,
        }
        meta = {k: v for k, v in meta.items() if v is not None}
        if isinstance(results, str | os.PathLike):
            path = Path(results)
            if format is not None:
                files = {"file": (path.name, path.read_bytes())}
                data = {"format": format, **{k: str(v) for k, v in meta.items()}}
                response = self.request("POST", "/v1/result-sets", files=files, data=data)
            else:
                body = path.read_bytes()
                if body.startswith(_ARCHIVE_MAGIC):
                    raise ValueError(
                        f"{path} is an archive (zip/gzip/bz2/xz), not a long CSV: give its "
                        "format (format='coco' or 'iohprofiler' ..., --format on the command line)"
                    )
                response = self._post_csv(body, meta)
        elif _is_frame(results):
            response = self._post_csv(results.to_csv(index=False).encode(), meta)
        else:
            rows = [_json_row(r) for r in _records(results)]
            response = self.request("POST", "/v1/result-sets", json={**meta, "results": rows})
        return ResultSet.parse(response.json(), created=response.status_code == 201)

    def _post_csv(self, data: bytes, meta: Mapping[str, Any]) -> httpx.Response:
        return self.request(
            "POST", "/v1/result-sets", params=meta, content=data, content_type="text/csv"
        )

    def result_sets(
        self,
        *,
        suite: str | None = None,
        function_id: str | None = None,
        algorithm: str | None = None,
        limit: int | None = None,
        offset: int | None = None,
    ) -> ResultSetList:
        """Archived sets, newest first, filtered by suite, function and algorithm name."""
        params = {
            "suite": suite,
            "function_id": function_id,
            "algorithm": algorithm,
            "limit": limit,
            "offset": offset,
        }
        params = {k: v for k, v in params.items() if v is not None}
        return ResultSetList.parse(self.request("GET", "/v1/result-sets", params=params).json())

    def result_set(self, set_id: str, *, runs: bool = False) -> ResultSet:
        """One archived set: metadata and per-function summary (and its runs with ``runs``)."""
        params = {"include": "runs"} if runs else None
        return ResultSet.parse(
            self.request("GET", f"/v1/result-sets/{set_id}", params=params).json()
        )

    def result_set_csv(self, set_id: str, path: str | os.PathLike[str] | None = None) -> str:
        """A set's runs as the archive's long CSV (written to ``path`` when given).

        Posting it back with the metadata of its comment lines gives the same set.
        """
        text = self.request("GET", f"/v1/result-sets/{set_id}.csv").text
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text


def _records(results: Iterable[Any]) -> list[Mapping[str, Any]]:
    rows = list(results)
    if not rows:
        raise ValueError("results hold no rows")
    if not all(isinstance(r, Mapping) for r in rows):
        raise ValueError("rows must be mappings with function_id, run, value, budget")
    return rows
