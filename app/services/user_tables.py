"""Use cases of a user's own function: a table from its samples, ranks against an inline sample.

A user table is stored in the tables store like any other (``GET /v1/tables/{id}``, ranking by
``table_id``), but it is built at once (a sort, no worker) and it carries its own metadata:
the stated ``f*``, ``f_max`` and dimension, and the sample's provenance as stated by the user.
Its function is a stand-in :class:`BenchmarkFunction` (:func:`function_of`) with no formula:
nothing the user sends is ever evaluated.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
from sqlalchemy.exc import IntegrityError

from app.config import Settings
from app.db import session_scope
from app.domain import absrank, usersamples
from app.domain.functions import BenchmarkFunction
from app.domain.functions.registry import LocalStructure
from app.errors import Conflict, InvalidInput
from app.models.tables import Table
from app.repositories.tables import TableRepository
from app.services import tables
from app.services.errors import domain_errors_as_problems
from app.services.functions import find_function
from app.services.provenance import library_versions

#: ``spec["kind"]`` of a user table (hosted tables have no ``kind``).
USER_KIND = "user-samples"
#: Prefix of user table ids and of their function ids.
USER_PREFIX = "user/"
#: Version of the user table spec (part of its hash).
USER_SPEC_VERSION = 1
STATED = (
    "stated by the user who sent the samples and recorded as stated; absrank cannot verify "
    "how the values were sampled (uniform points of the domain are assumed by Eq. 28)"
)


@dataclass(frozen=True)
class UserSampleStatement:
    """What a user states about their samples (recorded, never verified).

    Attributes
    ----------
    name : str or None
        The function's name; its function id is ``user/<name>``.
    f_opt, f_max : float or None
        The stated minimum and maximum of ``f`` over the domain.
    dim : int or None
        The stated dimension of the domain.
    sampled_by, sampling : str or None
        Who sampled the values and how the points were drawn.
    """

    name: str | None = None
    f_opt: float | None = None
    f_max: float | None = None
    dim: int | None = None
    sampled_by: str | None = None
    sampling: str | None = None


def user_table_id(spec_sha256: str) -> str:
    """``user/`` + the first 19 hex digits of the spec hash (24 characters, like ``t…`` ids)."""
    return USER_PREFIX + spec_sha256[:19]


def is_user_table(view: tables.TableView) -> bool:
    """Whether a table was built from a user's samples."""
    return view.spec.get("kind") == USER_KIND


def _function(function_id: str, stated: dict[str, Any]) -> BenchmarkFunction:
    """The stand-in function of a user's samples: metadata only, its kernel refuses to run."""

    def refuse(X: np.ndarray) -> np.ndarray:
        raise InvalidInput(f"{function_id} is known by its samples only", field="function_id")

    return BenchmarkFunction(
        id=function_id,
        suite="user",
        name=function_id.removeprefix(USER_PREFIX),
        title=f"{function_id} (the user's samples)",
        dim=0,  # the points are unknown; a stated dimension is in the spec
        instance=None,
        lower=np.zeros(0),
        upper=np.zeros(0),
        x_opt=None,
        f_opt=stated.get("f_opt"),
        f_max=stated.get("f_max"),
        local=LocalStructure(
            None, "unknown: estimated from the samples (Hill) when f* is stated", 0.0
        ),
        source="the user's samples",
        formula="unknown (values only)",
        analytic=None,
        kernel=refuse,
        flags=(usersamples.USER_FLAG,),
    )


def function_of(view: tables.TableView) -> BenchmarkFunction:
    """The function of a table: the registered one, or a user table's stand-in."""
    if is_user_table(view):
        return _function(view.function_id, view.spec["stated"])
    return find_function(view.function_id)


def sample_function(f_opt: float | None, f_max: float | None) -> BenchmarkFunction:
    """The stand-in function of an inline sample of ``POST /v1/absolute-ranks``."""
    return _function("user/inline-sample", {"f_opt": f_opt, "f_max": f_max})


def _plus_zero(v: float | None) -> float | None:
    """``-0.0`` as ``0.0`` (the same value of ``f``, so the same spec hash); others unchanged."""
    return None if v is None else v + 0.0  # -0.0 + 0.0 == +0.0 (IEEE 754, round to nearest)


def _stated(statement: UserSampleStatement) -> dict[str, Any]:
    return {
        "name": statement.name,
        "f_opt": _plus_zero(statement.f_opt),
        "f_max": _plus_zero(statement.f_max),
        "dim": statement.dim,
        "sampled_by": statement.sampled_by,
        "sampling": statement.sampling,
    }


def user_spec(
    settings: Settings, ys: np.ndarray, statement: UserSampleStatement, *, source: str
) -> dict[str, Any]:
    """The normalized spec of a user table: samples' hash, N, the statement, representation.

    ``source`` (``json`` or ``file``) is recorded in the provenance, not the spec: the same
    values give the same table however they were sent.
    """
    if statement.f_opt is not None and ys[0] < statement.f_opt:
        raise InvalidInput(
            f"the smallest sample {float(ys[0])!r} is below the stated f* {statement.f_opt!r}",
            field="f_opt",
        )
    if statement.f_max is not None and ys[-1] > statement.f_max:
        raise InvalidInput(
            f"the largest sample {float(ys[-1])!r} is above the stated f_max {statement.f_max!r}",
            field="f_max",
        )
    k_exact, n_knots = settings.table_k_exact, settings.table_n_knots
    return {
        "kind": USER_KIND,
        "version": USER_SPEC_VERSION,
        "function_id": None if statement.name is None else USER_PREFIX + statement.name,
        "region": {"kind": "domain", "lower": [], "upper": [], "dim": statement.dim},
        "n": int(ys.size),
        "seed": 0,
        "samples_sha256": usersamples.samples_sha256(ys),
        "sampler": "stated by the user (see stated.sampling); not verified",
        "stated": _stated(statement),
        "representation": {
            "version": tables.REPRESENTATION_VERSION,
            "k_exact": k_exact,
            "n_knots": n_knots,
        },
    }


def create_user_table(
    sm: tables.SM,
    settings: Settings,
    samples: object,
    statement: UserSampleStatement,
    *,
    field: str = "samples",
    source: str = "json",
) -> tables.Requested:
    """Build and store the table of a user's samples at once; the same content, the same table.

    Parameters
    ----------
    sm : sessionmaker
    settings : Settings
        ``max_user_samples`` bounds ``N``; ``table_k_exact``/``table_n_knots`` the representation.
    samples : array_like, shape (N,)
        Values of ``f`` at uniform points of its domain, any order.
    statement : UserSampleStatement
        What the user states about them (recorded, not verified).
    field, source : str
        The request field that carried the samples (named in errors) and how they came
        (``json`` or ``file``, recorded in the provenance).

    Returns
    -------
    Requested
        ``(view, created)``: the ready view, and whether this call stored it (``False``: the
        same samples and statement were sent before).

    Raises
    ------
    app.errors.InvalidInput
        Too few or too many samples, a non-finite one (``samples.i``), a sample below the stated
        ``f*`` or above the stated ``f_max``.
    """
    with domain_errors_as_problems(field):
        ys = usersamples.sorted_samples(samples, field=field, at_most=settings.max_user_samples)
    spec = user_spec(settings, ys, statement, source=source)
    digest = tables.spec_hash(spec)
    table_id = user_table_id(digest)
    rep = spec["representation"]
    data = usersamples.sample_table(ys, k_exact=rep["k_exact"], n_knots=rep["n_knots"])
    blob = absrank.encode_table_data(data)
    now = datetime.now(UTC)
    provenance = {
        "spec_hash": digest,
        "kind": USER_KIND,
        "n": int(ys.size),
        "samples_sha256": spec["samples_sha256"],
        "stated": spec["stated"],
        "stated_note": STATED,
        "received_as": source,
        "method": "Jing & Liu Eq. 28 on the sorted samples: v1(y_(i)) = #{y_j <= y_(i)}/(N+1), "
        "linear in between; nothing evaluated",
        "versions": {"numpy": library_versions().get("numpy", "absent")},
        "representation": rep,
        "n_knots": int(data.values.size),
        "built_at": now.isoformat(),
    }
    function_id = spec["function_id"] or table_id
    try:
        with session_scope(sm) as session:
            repo = TableRepository(session)
            existing = repo.get(table_id)
            if existing is None:
                repo.add(
                    Table(
                        id=table_id,
                        spec_hash=digest,
                        function_id=function_id,
                        spec=spec,
                        n=int(ys.size),
                        seed=0,
                        chunk_size=int(ys.size),
                        n_chunks=0,
                        status="ready",
                        created_at=now,
                        finished_at=now,
                        data=blob,
                        data_sha256=hashlib.sha256(blob).hexdigest(),
                        max_interp_error=float(data.max_interp_error),
                        summary=tables.summarize(ys).as_json(),
                        provenance=provenance,
                    )
                )
                created = True
            elif existing.spec_hash != digest:  # pragma: no cover - 76-bit prefix collision
                raise Conflict(f"table id {table_id} is taken by another spec")
            else:
                created = False
    except IntegrityError:  # a concurrent request stored the same table first
        created = False
    return tables.Requested(tables.get_table(sm, table_id), created)


def inline_sample_data(settings: Settings, sample: list[float]) -> absrank.TableData:
    """The exact Eq. 28 table of an inline sample (every distinct value a knot).

    Raises
    ------
    app.errors.InvalidInput
        More than ``max_inline_sample`` values, fewer than 2, or a non-finite one.
    """
    with domain_errors_as_problems("sample"):
        ys = usersamples.sorted_samples(sample, field="sample", at_most=settings.max_inline_sample)
        return usersamples.sample_table(ys, k_exact=ys.size, n_knots=ys.size)


def sample_file_values(
    settings: Settings, data: bytes, *, filename: str, column: str | None
) -> list[float]:
    """The values of an uploaded sample file (one per line, or a CSV column).

    Raises
    ------
    app.errors.InvalidInput
        ``field="file"``, the message naming the file and the line.
    """
    with domain_errors_as_problems("file"):
        return usersamples.parse_sample_file(
            data, filename=filename, column=column, at_most=settings.max_user_samples
        )
